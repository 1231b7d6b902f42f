// Host side of attention forward: validate the problem and the pointers (std::invalid_argument
// naming the bad value), make the launch plan for the instance the rule chooses
// (attention_plan.hpp, attention_rule.hpp; the model runner makes the same), encode the four
// tensor maps once, and launch one CTA per tile of Q per head.
//
//   hopper::attention::plan a(problem, q, k, v, o, lse);   // lse may be null
//   a.run(stream);                                         // any number of times
//   a.bind(q2, k2, v2, o2, lse2);                          // other buffers, same problem
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "hopper/objects/tensor_map.hpp"
#include "kernels/attention/attention_kernel.cuh"
#include "kernels/attention/attention_plan.hpp"
#include "kernels/attention/attention_rule.hpp"

namespace hopper::attention {

namespace detail {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("hopper::attention: ") + what + ": " + cudaGetErrorString(e));
}

inline hopper::tensor_map encode(const map_spec& s, const void* base) {
  auto m = tensor_map::tiled(element::bf16, base);
  m.dims({s.dims[0], s.dims[1], s.dims[2], s.dims[3]})
      .strides({s.strides[0], s.strides[1], s.strides[2]})
      .box({s.box[0], s.box[1], s.box[2], s.box[3]})
      .swizzle(gemm::tile_swizzle)
      .l2_promotion(l2_promotion::b256);
  return m.build();
}

// The kernel of instances[I] (attention_rule.hpp).
template <size_t I>
using instance_traits =
    attention_traits<instances[I].shape.head_dim, true, instances[I].shape.block_n, instances[I].shape.stages,
                     instances[I].shape.consumers, instances[I].shape.q_stages>;

// f(instance_traits<I>{}) for the compiled instance I of shape `s`; false where none is `s`.
template <class F, size_t... I>
bool visit_instance(const head_dim_shape& s, F&& f, std::index_sequence<I...>) {
  return ((instances[I].shape == s ? (f(instance_traits<I>{}), true) : false) || ...);
}
template <class F>
bool visit_instance(const head_dim_shape& s, F&& f) {
  return visit_instance(s, f, std::make_index_sequence<size_t(instance_count)>{});
}

inline std::string shape_name(const head_dim_shape& s) {
  return "{head_dim " + std::to_string(s.head_dim) + ", block_n " + std::to_string(s.block_n) + ", stages " +
         std::to_string(s.stages) + ", consumers " + std::to_string(s.consumers) + ", q_stages " +
         std::to_string(s.q_stages) + "}";
}

inline int device_sms() {
  int dev = 0, sms = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
             "cudaDeviceGetAttribute(MultiProcessorCount)");
  return sms;
}

}  // namespace detail

// The CTAs of instance T the current device holds at once (its SMs times the CTAs of T one SM
// holds): the size of a persistent grid for T.
template <class T>
int resident_ctas() {
  int per_sm = 0;
  detail::cuda_check(
      cudaFuncSetAttribute(attention_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(T::SMEM)),
      "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  detail::cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attention_kernel<T>, T::THREADS, T::SMEM),
                     "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (per_sm < 1) throw std::runtime_error("hopper::attention: no CTA of the instance fits an SM of this device");
  return detail::device_sms() * per_sm;
}
// The same for the instance the rule chooses for `p` on this device.
inline int resident_ctas(const problem& p) {
  validate(p);
  int n = 0;
  detail::visit_instance(choose_shape(p, detail::device_sms()), [&](auto tr) { n = resident_ctas<decltype(tr)>(); });
  return n;
}

class plan {
 public:
  // The instance the rule chooses for this device (choose_shape), or `instance`: another of the
  // head dimension, for A/B measurements, launched with run_as where it is not compiled for run
  // (attention_rule.hpp's instances). `resident`: the CTAs a persistent grid may have (0: one per SM
  // of this device, every CTA it holds at once; one_cta_per_tile for a CTA per tile).
  plan(const problem& p, const void* q, const void* k, const void* v, void* o, float* lse = nullptr,
       head_dim_shape instance = {}, int resident = 0)
      : lp_(make_launch_plan(p, instance, resident, detail::device_sms())) {
    const bool compiled = detail::visit_instance(lp_.shape, [&](auto tr) {
      using T = decltype(tr);
      if (!launches<T>(lp_))
        throw std::logic_error("hopper::attention::plan: the launch plan does not match its kernel");
      lp_.smem = T::SMEM;  // another instance's is its run_as's
      detail::cuda_check(
          cudaFuncSetAttribute(attention_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(T::SMEM)),
          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    });
    if (instance.head_dim == 0 && !compiled)
      throw std::logic_error("hopper::attention::plan: the rule chose " + detail::shape_name(lp_.shape) +
                             ", which is not compiled");
    bind(q, k, v, o, lse);
  }
  // Points the plan at other buffers of the same problem: validates them, re-encodes the maps.
  void bind(const void* q, const void* k, const void* v, void* o, float* lse = nullptr) {
    validate(lp_.prob, q, k, v, o, lse);
    q_ = detail::encode(lp_.q, q);
    k_ = detail::encode(lp_.k, k);
    v_ = detail::encode(lp_.v, v);
    o_ = detail::encode(lp_.o, o);
    kp_ = params_of<hopper::basic_device_target<false>>(lp_, gmem<float>(lse), lse != nullptr);
  }
  // Launches on `stream`; returns the launch error (asynchronous errors appear later).
  cudaError_t run(cudaStream_t stream = 0) const {
    cudaError_t e = cudaSuccess;
    if (!detail::visit_instance(lp_.shape, [&](auto tr) {
          using T = decltype(tr);
          attention_kernel<T><<<unsigned(lp_.grid), unsigned(lp_.threads), T::SMEM, stream>>>(q_, k_, v_, o_, kp_);
          e = cudaGetLastError();
        }))
      throw std::invalid_argument("hopper::attention::plan::run: the plan's instance " + detail::shape_name(lp_.shape) +
                                  " is not one run launches; launch it with run_as");
    return e;
  }
  // The launch with instance T instead of the one the rule chose: for A/B measurements of a
  // kernel variant. The plan must have been made for T's shape (T::SHAPE).
  template <class T>
  cudaError_t run_as(cudaStream_t stream = 0) const {
    if (!launches<T>(lp_))
      throw std::invalid_argument("hopper::attention::plan::run_as: instance of head_dim " +
                                  std::to_string(T::HEAD_DIM) + ", block " + std::to_string(T::BN) + ", " +
                                  std::to_string(T::CONSUMERS) + " consumer warpgroups is not this plan's");
    static const bool opted_in = [] {  // once per instance, not per launch
      detail::cuda_check(
          cudaFuncSetAttribute(attention_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(T::SMEM)),
          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
      return true;
    }();
    (void)opted_in;
    attention_kernel<T><<<unsigned(lp_.grid), unsigned(lp_.threads), T::SMEM, stream>>>(q_, k_, v_, o_, kp_);
    return cudaGetLastError();
  }
  const launch_plan& launch() const { return lp_; }
  // Floating-point operations of one run: 4 seq_q seq_k head_dim per head (two GEMMs), halved
  // (about) by the causal mask; the figure FlashAttention and cuDNN report TFLOP/s against.
  double flops() const {
    const problem& p = lp_.prob;
    const double f = 4.0 * double(p.batch) * double(p.heads) * double(p.seq_q) * double(p.seq_k) * double(p.head_dim);
    return p.causal ? f / 2 : f;
  }

 private:
  launch_plan lp_;
  hopper::tensor_map q_, k_, v_, o_;
  kernel_params kp_{};
};

}  // namespace hopper::attention
