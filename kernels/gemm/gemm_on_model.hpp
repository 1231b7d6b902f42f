// The GEMM's own kernel body (kernels/gemm/gemm_body.hpp) launched on the executable model, every
// thread a task: the launch plan the CUDA launcher makes (gemm_plan.hpp: grid, roles, shared
// memory, tensor maps, work schedule, workspace), its operands and output as model buffers laid
// out as the plan's tensor specs say, its shared memory as the CTA's buffers. Needs hopper::model.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "hopper/model/target.hpp"
#include "hopper/objects/numerics.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "kernels/gemm/gemm_body.hpp"
#include "kernels/gemm/gemm_plan.hpp"

namespace hopper::gemm::on_model {

namespace hm = hopper::model;

struct operands {
  std::vector<uint16_t> a, b;  // as stored: A M x K (K-major) or K x M, B N x K or K x N
};

struct outcome {
  std::string error;     // the model's report, or empty
  std::vector<float> c;  // C as floats (bf16 widened)
  uint64_t steps = 0;
  size_t tasks = 0;
  size_t padding_written = 0;  // bytes of C's rows between N and ldc that were written
};

// The tensor view of a plan's tensor spec over buffer `b`.
inline hm::tensor_view view_of(const tensor_spec& s, hm::buffer& b) {
  hm::tensor_view v;
  v.mem = &b;
  v.elem_bytes = s.elem_bytes;
  v.dims = {s.inner, s.outer};
  v.strides = {s.pitch_bytes};
  v.box = {s.box.inner, s.box.outer};
  v.sw = s.sw;
  return v;
}

// One launch of instance T on `resident` clusters (the grid the plan would pick on a device of
// that many clusters), with the faults `faults` planted (hopper/model/fault.hpp); T must be the
// kernel the plan of (p, cf) launches.
template <class T>
outcome run(const problem& p, const config& cf, int resident, const operands& o, uint64_t seed, int slow_cta = -1,
            hm::step_chooser* chooser = nullptr, const std::vector<hm::fault>& faults = {}) {
  const launch_plan lp = make_launch_plan(p, cf, resident);
  if (!launches<T>(lp))
    throw std::invalid_argument("hopper::gemm::on_model::run: the instance is not the plan's kernel");
  hm::run_options opt;
  opt.seed = seed;
  opt.chooser = chooser;
  opt.slow_cta = slow_cta;
  opt.stack_bytes = 64 * 1024;
  opt.step_limit = 50000000;
  opt.faults = faults;
  hm::world w(opt);
  const uint32_t out = lp.c.elem_bytes;
  hm::buffer& A = w.make_global("A", o.a.size() * 2);
  hm::buffer& B = w.make_global("B", o.b.size() * 2);
  hm::buffer& C = w.make_global("C", size_t(p.M) * size_t(lp.ldc_bytes));
  hm::buffer& partial = w.make_global("partial", std::max<size_t>(lp.partial_bytes, 16));
  hm::buffer& counters = w.make_global("counters", std::max<size_t>(lp.counter_bytes, 4));
  std::memcpy(A.host_data(), o.a.data(), o.a.size() * 2);
  std::memcpy(B.host_data(), o.b.data(), o.b.size() * 2);
  std::memset(C.host_data(), 0xFF, C.bytes());  // poison: NaN in bf16 and fp32
  std::memset(counters.host_data(), 0, counters.bytes());
  const hm::tensor_view va = view_of(lp.a, A), vb = view_of(lp.b, B), vc = view_of(lp.c, C);
  const body_params<hm::target> bp =
      params_of<hm::target>(lp, hm::gmem<hm::f32x4>(partial), hm::gmem<int>(counters), hm::gmem<uint8_t>(C));
  hm::launch(w, {uint32_t(lp.grid), uint32_t(lp.threads), uint32_t(lp.cluster)}, [&](hm::target& t) {
    auto& ring = hm::cta_shared<hopper::pipeline_storage<T::STAGES, hm::mbarrier_slot>>(t, "ring");
    const body_smem<T, hm::target> sm{hm::shared_buffer(t, "A", T::STAGES, sizeof(typename T::A_TILE)),
                                      hm::shared_buffer(t, "B", T::STAGES, sizeof(typename T::B_TILE)),
                                      hm::shared_buffer(t, "epi", T::CONSUMERS, T::EPI_WG_BYTES), ring,
                                      hm::shared_buffer(t, "last_flag", 1, 16).as<int>()};
    gemm_body<T>(t, sm, va, vb, vc, bp);
  });
  outcome r;
  try {
    w.run();
  } catch (const hm::model_error& e) {
    r.error = e.what();
  }
  r.steps = w.steps();
  r.tasks = w.task_count();
  r.c.resize(size_t(p.M * p.N));
  for (int64_t m = 0; m < p.M; ++m) {
    const uint8_t* row = C.host_data() + size_t(m) * size_t(lp.ldc_bytes);
    for (int64_t n = 0; n < p.N; ++n) {
      float& v = r.c[size_t(m * p.N + n)];
      if (out == 2) {
        uint16_t h;
        std::memcpy(&h, row + n * 2, 2);
        v = hopper::bf16_value(h);
      } else {
        std::memcpy(&v, row + n * 4, 4);
      }
    }
    for (size_t b = size_t(p.N) * out; b < size_t(lp.ldc_bytes); ++b) r.padding_written += row[b] != 0xFF;
  }
  return r;
}

}  // namespace hopper::gemm::on_model
