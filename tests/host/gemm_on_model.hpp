// The GEMM's own kernel body (kernels/gemm/gemm_body.hpp) launched on the executable model, every
// thread a task: its operands and output as model buffers laid out as the plan lays them out on
// the GPU (the same tensor-map boxes, gemm_traits.hpp), its work schedule from make_schedule, its
// shared memory as the CTA's buffers. Used by the GEMM's model tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hopper/model/target.hpp"
#include "hopper/pipeline.cuh"
#include "kernels/gemm/gemm_body.hpp"

namespace gemm_model {

using namespace hopper::model;
namespace hg = hopper::gemm;

// bf16 bits of x, rounded to nearest even.
inline uint16_t to_bf16(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
inline float from_bf16(uint16_t h) {
  const uint32_t b = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

struct operands {
  std::vector<uint16_t> a, b;  // as stored: A M x K (K-major) or K x M, B N x K or K x N
};

inline operands random_operands(const hg::problem& p, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  operands o;
  o.a.resize(size_t(p.M * p.K));
  o.b.resize(size_t(p.N * p.K));
  for (auto& x : o.a) x = to_bf16(nd(g));
  for (auto& x : o.b) x = to_bf16(nd(g));
  return o;
}

inline float a_at(const hg::problem& p, const operands& o, int64_t m, int64_t k) {
  return from_bf16(o.a[size_t(p.a_major == hg::major::k ? m * p.K + k : k * p.M + m)]);
}
inline float b_at(const hg::problem& p, const operands& o, int64_t n, int64_t k) {
  return from_bf16(o.b[size_t(p.b_major == hg::major::k ? n * p.K + k : k * p.N + n)]);
}

struct outcome {
  std::string error;     // the model's report, or empty
  std::vector<float> c;  // C as floats (bf16 widened)
  uint64_t steps = 0;
  size_t tasks = 0;
  size_t padding_written = 0;  // bytes of C's rows between N and ldc that were written
};

// One launch of instance T on `resident` clusters (the grid the plan would pick on a device of
// that many clusters).
template <class T>
outcome run(const hg::problem& p, const hg::config& cf, int resident, const operands& o, uint64_t seed,
            int slow_cta = -1, step_chooser* chooser = nullptr) {
  run_options opt;
  opt.seed = seed;
  opt.chooser = chooser;
  opt.slow_cta = slow_cta;
  opt.stack_bytes = 64 * 1024;
  opt.step_limit = 50000000;
  world w(opt);
  const hg::launch_schedule ls = hg::make_schedule(p, cf, resident);
  constexpr uint32_t out = sizeof(typename T::OutT);
  buffer& A = w.make_global("A", o.a.size() * 2);
  buffer& B = w.make_global("B", o.b.size() * 2);
  buffer& C = w.make_global("C", size_t(p.M * p.ldc_or_packed()) * out);
  buffer& partial = w.make_global("partial", std::max<size_t>(ls.partial_bytes(cf), 16));
  buffer& counters = w.make_global("counters", std::max<size_t>(ls.counter_bytes(cf), 4));
  std::memcpy(A.host_data(), o.a.data(), o.a.size() * 2);
  std::memcpy(B.host_data(), o.b.data(), o.b.size() * 2);
  std::memset(C.host_data(), 0xFF, C.bytes());  // poison: NaN in bf16 and fp32
  std::memset(counters.host_data(), 0, counters.bytes());
  auto view = [](buffer& b, uint32_t elem, uint64_t inner, uint64_t outer, uint64_t stride, hg::operand_box box) {
    tensor_view v;
    v.mem = &b;
    v.elem_bytes = elem;
    v.dims = {inner, outer};
    v.strides = {stride};
    v.box = {box.inner, box.outer};
    v.sw = hopper::swizzle::b128;
    return v;
  };
  const bool a_mn = p.a_major == hg::major::mn, b_mn = p.b_major == hg::major::mn;
  const tensor_view va = a_mn ? view(A, 2, p.M, p.K, p.M * 2, T::A_BOX) : view(A, 2, p.K, p.M, p.K * 2, T::A_BOX);
  const tensor_view vb = b_mn ? view(B, 2, p.N, p.K, p.N * 2, T::B_BOX) : view(B, 2, p.K, p.N, p.K * 2, T::B_BOX);
  const int64_t ldc = p.ldc_or_packed();
  const tensor_view vc =
      view(C, out, uint64_t(hg::c_map_columns(p.N, int(out))), p.M, ldc * out, hg::c_box_of(int(out)));
  const hg::body_params<target> bp{int(p.M),
                                   int(p.N),
                                   int(p.K),
                                   ls.work,
                                   ls.slot_stride,
                                   gmem<f32x4>(partial),
                                   gmem<int>(counters),
                                   gmem<uint8_t>(C),
                                   ldc * out,
                                   int(hg::c_tma_columns(p.N, int(out)))};
  launch(w, {uint32_t(ls.work.clusters * T::CLUSTER), uint32_t(T::THREADS), uint32_t(T::CLUSTER)}, [&](target& t) {
    auto& ring = cta_shared<hopper::pipeline_storage<T::STAGES, mbarrier_slot>>(t, "ring");
    const hg::body_smem<T, target> sm{
        shared_buffer(t, "A", T::STAGES, T::A_BYTES), shared_buffer(t, "B", T::STAGES, T::B_BYTES),
        shared_buffer(t, "epi", T::CONSUMERS, T::EPI_WG_BYTES), ring, shared_buffer(t, "last_flag", 1, 16).as<int>()};
    hg::gemm_body<T>(t, sm, va, vb, vc, bp);
  });
  outcome r;
  try {
    w.run();
  } catch (const model_error& e) {
    r.error = e.what();
  }
  r.steps = w.steps();
  r.tasks = w.task_count();
  r.c.resize(size_t(p.M * p.N));
  for (int64_t m = 0; m < p.M; ++m) {
    const uint8_t* row = C.host_data() + size_t(m * ldc) * out;
    for (int64_t n = 0; n < p.N; ++n) {
      float& v = r.c[size_t(m * p.N + n)];
      if (out == 2) {
        uint16_t h;
        std::memcpy(&h, row + n * 2, 2);
        v = from_bf16(h);
      } else {
        std::memcpy(&v, row + n * 4, 4);
      }
    }
    for (size_t b = size_t(p.N) * out; b < size_t(ldc) * out; ++b) r.padding_written += row[b] != 0xFF;
  }
  return r;
}

// Elements of C outside tolerance of a double-precision reference (relative to the sum of the
// products' magnitudes; bf16 output rounds to 8 bits), and unwritten ones (still the NaN poison).
struct check {
  size_t wrong = 0, unwritten = 0;
  std::string first;
};
inline check compare(const hg::problem& p, const operands& o, const std::vector<float>& c, bool bf16_out) {
  check k;
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n) {
      double ref = 0, mag = 0;
      for (int64_t kk = 0; kk < p.K; ++kk) {
        const double x = double(a_at(p, o, m, kk)) * double(b_at(p, o, n, kk));
        ref += x;
        mag += std::fabs(x);
      }
      const float got = c[size_t(m * p.N + n)];
      if (std::isnan(got)) {
        if (!k.unwritten++ && k.first.empty())
          k.first = "C[" + std::to_string(m) + "][" + std::to_string(n) + "] unwritten";
        continue;
      }
      const double tol = (bf16_out ? 1.0 / 128 : 1e-5) * (mag + 1e-6);
      if (std::fabs(double(got) - ref) > tol && !k.wrong++)
        k.first = "C[" + std::to_string(m) + "][" + std::to_string(n) + "] = " + std::to_string(got) + ", reference " +
                  std::to_string(ref);
    }
  return k;
}

}  // namespace gemm_model
