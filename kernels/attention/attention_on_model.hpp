// The attention kernel's body (attention_body.hpp) launched on the executable model, every thread a
// task: the launch plan the CUDA launcher makes (attention_plan.hpp: grid, roles, shared memory,
// the four tensor maps), Q, K, V, O and the LSE as model buffers laid out as the problem says,
// its shared memory as the CTA's buffers. Needs hopper::model.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "kernels/attention/attention_body.hpp"
#include "kernels/attention/attention_plan.hpp"
#include "kernels/attention/attention_traits.hpp"

namespace hopper::attention::on_model {

namespace hm = hopper::model;

// The inputs as stored (bf16 bits), each as long as its layout's span.
struct inputs {
  std::vector<uint16_t> q, k, v;
};

struct outcome {
  std::string error;        // the model's report, or empty
  std::vector<uint16_t> o;  // O as stored (its layout's span; untouched elements keep the poison)
  std::vector<float> lse;   // [batch][heads][seq_q]
  uint64_t steps = 0;
};

// The tensor view of a plan's map over buffer `b`.
inline hm::tensor_view view_of(const map_spec& s, hm::buffer& b) {
  hm::tensor_view v;
  v.mem = &b;
  v.elem_bytes = 2;
  v.dims = {s.dims[0], s.dims[1], s.dims[2], s.dims[3]};
  v.strides = {s.strides[0], s.strides[1], s.strides[2]};
  v.box = {s.box[0], s.box[1], s.box[2], s.box[3]};
  v.sw = gemm::tile_swizzle;
  return v;
}

// The poison O starts as: a bf16 NaN, so that an element never written cannot pass for a value.
inline constexpr uint16_t poison = 0x7fff;

// One launch of instance T (T::HEAD_DIM must be the problem's head dimension), with the faults
// `faults` planted (hopper/model/fault.hpp), on the grid make_launch_plan makes for `resident` CTAs
// (0: the reference machine's SMs, the grid the device gets; one_cta_per_tile).
template <class T>
outcome run(const problem& p, const inputs& in, uint64_t seed, int slow_cta = -1, hm::step_chooser* chooser = nullptr,
            const std::vector<hm::fault>& faults = {}, int resident = 0) {
  const launch_plan lp = make_launch_plan(p, T::SHAPE, resident);
  if (!launches<T>(lp)) throw std::invalid_argument("hopper::attention::on_model::run: the instance is not the plan's");
  hm::run_options opt;
  opt.seed = seed;
  opt.chooser = chooser;
  opt.slow_cta = slow_cta;
  opt.stack_bytes = 64 * 1024;
  opt.step_limit = 200000000;
  opt.faults = faults;
  hm::world w(opt);
  const size_t nq = span_elements(p.q, p.seq_q, p.heads, p.batch, p.head_dim);
  const size_t nk = span_elements(p.k, p.seq_k, p.kv_heads, p.batch, p.head_dim);
  const size_t nv = span_elements(p.v, p.seq_k, p.kv_heads, p.batch, p.head_dim);
  const size_t no = span_elements(p.o, p.seq_q, p.heads, p.batch, p.head_dim);
  if (in.q.size() < nq || in.k.size() < nk || in.v.size() < nv)
    throw std::invalid_argument("hopper::attention::on_model::run: an input is shorter than its layout's span");
  hm::buffer& Q = w.make_global("Q", nq * 2);
  hm::buffer& K = w.make_global("K", nk * 2);
  hm::buffer& V = w.make_global("V", nv * 2);
  hm::buffer& O = w.make_global("O", no * 2);
  const size_t nl = size_t(p.batch * p.heads * p.seq_q);
  hm::buffer& L = w.make_global("LSE", nl * 4);
  std::memcpy(Q.host_data(), in.q.data(), nq * 2);
  std::memcpy(K.host_data(), in.k.data(), nk * 2);
  std::memcpy(V.host_data(), in.v.data(), nv * 2);
  for (size_t i = 0; i < no; ++i) std::memcpy(O.host_data() + 2 * i, &poison, 2);
  std::memset(L.host_data(), 0xFF, L.bytes());  // NaN
  const hm::tensor_view vq = view_of(lp.q, Q), vk = view_of(lp.k, K), vv = view_of(lp.v, V), vo = view_of(lp.o, O);
  const body_params<hm::target> bp = params_of<hm::target>(lp, hm::gmem<float>(L), true);
  hm::launch(w, {uint32_t(lp.grid), uint32_t(lp.threads), 1u}, [&](hm::target& t) {
    auto& k_ring = hm::cta_shared<hopper::pipeline_storage<T::STAGES, hm::mbarrier_slot>>(t, "K ring");
    auto& v_ring = hm::cta_shared<hopper::pipeline_storage<T::STAGES, hm::mbarrier_slot>>(t, "V ring");
    auto& q_ring = hm::cta_shared<q_ring_storage<T::Q_STAGES, hm::mbarrier_slot>>(t, "Q ring");
    const body_smem<T, hm::target> sm{hm::shared_buffer(t, "Q", T::Q_STAGES, sizeof(typename T::q_tiles)),
                                      hm::shared_buffer(t, "K", T::STAGES, sizeof(typename T::k_stage)),
                                      hm::shared_buffer(t, "V", T::STAGES, sizeof(typename T::v_stage)),
                                      hm::shared_buffer(t, "Q tile", T::Q_STAGES, sizeof(tile_place)),
                                      k_ring,
                                      v_ring,
                                      q_ring};
    attention_body<T>(t, sm, vq, vk, vv, vo, bp);
  });
  outcome r;
  try {
    w.run();
  } catch (const hm::model_error& e) {
    r.error = e.what();
  }
  r.steps = w.steps();
  r.o.resize(no);
  std::memcpy(r.o.data(), O.host_data(), no * 2);
  r.lse.resize(nl);
  std::memcpy(r.lse.data(), L.host_data(), nl * 4);
  return r;
}

}  // namespace hopper::attention::on_model
