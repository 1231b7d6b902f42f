// Host side of the GEMM: validate the problem, choose the tile configuration (gemm_config.hpp),
// make the launch plan (gemm_plan.hpp: the persistent grid, the work schedule with its split-K /
// stream-K workspace, the tensor maps' specs; the model runner makes the same), encode the three
// tensor maps once, and launch on a cluster grid with programmatic dependent launch.
//
//   hopper::gemm::plan g(problem, A, B, C);   // throws std::invalid_argument on bad input
//   g.run(stream);                            // any number of times
//
// A caller with its own allocator (PyTorch's caching allocator) plans without a workspace and
// brings one to each run, and may rebind the plan to other buffers of the same problem:
//   hopper::gemm::plan g(problem, A, B, C, hopper::gemm::external_workspace);
//   g.bind(A2, B2, C2);                       // re-encodes the three tensor maps only
//   g.run(stream, ws);                        // ws: g.workspace_bytes(), counters zeroed
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "hopper/objects/tensor_map.hpp"
#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/gemm_kernel.cuh"
#include "kernels/gemm/gemm_plan.hpp"
#include "kernels/gemm/tile_scheduler.hpp"

namespace hopper::gemm {

namespace detail {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("hopper::gemm: ") + what + ": " + cudaGetErrorString(e));
}

// How a plan launches, beyond the kernel's parameters.
struct launch_options {
  cudaStream_t stream;
  bool programmatic;  // programmatic dependent launch (griddepcontrol, see the kernel)
};

// The launch of `clusters` clusters of `cluster` CTAs of `threads` threads and `smem` bytes of
// dynamic shared memory: its cluster shape (1-D: rank = CLUSTER_M * rn + rm) and whether it may
// start under the tail of the previous grid in the stream.
inline cudaLaunchConfig_t launch_config_of(cudaLaunchAttribute (&attr)[2], int clusters, int cluster, int threads,
                                           uint32_t smem, const launch_options& o) {
  cudaLaunchConfig_t cfg{};
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = unsigned(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = o.programmatic ? 1 : 0;
  cfg.gridDim = dim3(unsigned(clusters * cluster));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = o.stream;
  cfg.attrs = attr;
  cfg.numAttrs = 2;
  return cfg;
}

// How many clusters of instantiation T fit on the device at once (GPCs need not split evenly into
// clusters), after opting in to its shared memory. The persistent grid is at most this.
template <class T>
int resident_clusters(int num_sms) {
  auto kern = gemm_kernel<T>;
  cuda_check(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(T::SMEM)),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  cudaLaunchAttribute attr[2];
  cudaLaunchConfig_t cfg =
      launch_config_of(attr, num_sms / T::CLUSTER, T::CLUSTER, T::THREADS, T::SMEM, launch_options{0, false});
  cfg.numAttrs = 1;  // the query takes the cluster shape
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    n = num_sms / T::CLUSTER;
  }
  return n;
}

// Launches instantiation T as plan `lp` says (the plan checked that T is its kernel).
template <class T>
cudaError_t launch(const launch_plan& lp, const hopper::tensor_map& a, const hopper::tensor_map& b,
                   const hopper::tensor_map& c, const kernel_params& kp, const launch_options& o) {
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = launch_config_of(attr, lp.clusters, lp.cluster, lp.threads, lp.smem, o);
  return cudaLaunchKernelEx(&cfg, gemm_kernel<T>, a, b, c, kp);
}

// The tensor map `s` describes, over the tensor at device address `base`.
inline hopper::tensor_map encode(const tensor_spec& s, const void* base) {
  auto m = tensor_map::tiled(s.elem_bytes == 4 ? element::f32 : element::bf16, base);
  m.dims({s.inner, s.outer}).strides({s.pitch_bytes}).box({s.box.inner, s.box.outer}).swizzle(s.sw);
  if (s.l2_promote_256) m.l2_promotion(l2_promotion::b256);
  return m.build();
}

template <class T>
struct type_tag {
  using type = T;
};

// Calls f(type_tag<kernel_traits<...>>{}) for the instantiation that computes `cf` with these
// layouts and output type: the instances table (gemm_config.hpp) is the only list of kernels.
// The plan has already rejected configurations that are not in the table.
template <class OutT, class F, size_t I = 0>
auto visit_instance(const config& cf, bool a_mn, bool b_mn, F&& f) {
  constexpr size_t count = sizeof(instances) / sizeof(instances[0]);
  constexpr instance in = instances[I < count ? I : 0];
  if constexpr (I + 1 < count) {
    if (!matches(cf, in)) return visit_instance<OutT, F, I + 1>(cf, a_mn, b_mn, std::forward<F>(f));
  }  // else: the last entry, which matches (the plan accepts only instantiated configurations)
  const auto with = [&](auto a, auto b) {  // std::bool_constant: the operand majors
    return f(type_tag<kernel_traits<in.bm, in.bn, in.stages, in.cluster_m, in.cluster_n, OutT, decltype(a)::value,
                                    decltype(b)::value, in.pingpong>>{});
  };
  if (!a_mn && !b_mn) return with(std::false_type{}, std::false_type{});
  if (!a_mn && b_mn) return with(std::false_type{}, std::true_type{});
  if (a_mn && !b_mn) return with(std::true_type{}, std::false_type{});
  return with(std::true_type{}, std::true_type{});
}

template <class F>
auto visit_instance(const config& cf, const problem& p, F&& f) {
  const bool a_mn = p.a_major == major::mn, b_mn = p.b_major == major::mn;
  if (p.out == out_type::bf16) return visit_instance<__nv_bfloat16>(cf, a_mn, b_mn, std::forward<F>(f));
  return visit_instance<float>(cf, a_mn, b_mn, std::forward<F>(f));
}

}  // namespace detail

// Tag: the plan allocates no workspace; each run() is given one (plan::workspace_bytes()).
struct external_workspace_t {};
inline constexpr external_workspace_t external_workspace{};

class plan {
 public:
  // Validates (std::invalid_argument naming the bad value), chooses the configuration for this
  // device (or takes `forced`, checked by validate(config, problem)) and encodes the tensor maps;
  // allocates the split-K / stream-K workspace the schedule needs, if any (cudaMalloc).
  plan(const problem& p, const void* A, const void* B, void* C, const config* forced = nullptr)
      : plan(p, A, B, C, external_workspace, forced) {
    if (workspace_bytes() == 0) return;
    void* ws = nullptr;
    detail::cuda_check(cudaMalloc(&ws, workspace_bytes()), "cudaMalloc(split-K workspace)");
    workspace_ = std::shared_ptr<void>(ws, [](void* q) { cudaFree(q); });
    detail::cuda_check(cudaMemset(static_cast<char*>(ws) + counters_offset(), 0, workspace_bytes() - counters_offset()),
                       "cudaMemset(split-K counters)");
    detail::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    with_workspace(kp_, ws);
  }

  // The same without allocating: run(stream, workspace) brings the workspace.
  plan(const problem& p, const void* A, const void* B, void* C, external_workspace_t, const config* forced = nullptr)
      : p_(p) {
    validate(p, A, B, C);
    int dev = 0;
    detail::cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
    detail::cuda_check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev),
                       "cudaDeviceGetAttribute(MultiProcessorCount)");
    cfg_ = forced ? *forced : choose_config(p, sms_);
    validate(cfg_, p);
    const int resident = detail::visit_instance(
        cfg_, p, [&](auto tag) { return detail::resident_clusters<typename decltype(tag)::type>(sms_); });
    lp_ = make_launch_plan(p, cfg_, resident);
    if (!detail::visit_instance(cfg_, p, [&](auto tag) { return launches<typename decltype(tag)::type>(lp_); }))
      throw std::logic_error("hopper::gemm::plan: the launch plan does not match its kernel");
    kp_ = params_of<hopper::basic_device_target<false>>(lp_, gmem<float4>(nullptr), gmem<int>(nullptr),
                                                        gmem<uint8_t>(nullptr));
    bind(A, B, C);
  }

  // Points the plan at other buffers of the same problem (same shape, layout and leading
  // dimensions): validates them and re-encodes the three tensor maps; nothing else changes.
  void bind(const void* A, const void* B, void* C) {
    validate(p_, A, B, C);
    a_ = detail::encode(lp_.a, A);
    b_ = detail::encode(lp_.b, B);
    c_ = detail::encode(lp_.c, C);
    kp_.c = gmem<uint8_t>(static_cast<uint8_t*>(C));
  }

  // Bytes of workspace a run needs (0: none): the fp32 partials, then the counters, which must be
  // zero when a run starts (at counters_offset(); a run leaves them zero).
  size_t workspace_bytes() const { return lp_.workspace_bytes(); }
  size_t counters_offset() const { return lp_.partial_bytes; }

  // Launches on `stream` with `workspace` (16-byte aligned, workspace_bytes() long, counters zero).
  // The plan is not changed: several host threads may run one plan at once, each with its own
  // workspace (every run writes the plan's C; for other buffers, copy the plan and bind the copy).
  cudaError_t run(cudaStream_t stream, void* workspace) const {
    if (workspace_bytes() > 0 && workspace == nullptr)
      throw std::invalid_argument("hopper::gemm::plan::run: this schedule needs " + std::to_string(workspace_bytes()) +
                                  " bytes of workspace, got none");
    kernel_params kp = kp_;
    with_workspace(kp, workspace);
    return launch(stream, kp);
  }

  // Launches the GEMM on `stream` with the plan's own workspace, if it needs one; returns the
  // launch error (asynchronous errors appear later). With split-K or stream-K that workspace is
  // reused: one run of such a plan at a time.
  cudaError_t run(cudaStream_t stream = 0) const {
    if (workspace_bytes() > 0 && !workspace_)
      throw std::invalid_argument(
          "hopper::gemm::plan::run: the plan was made with external_workspace and this "
          "schedule needs " +
          std::to_string(workspace_bytes()) + " bytes of workspace: call run(stream, workspace)");
    return launch(stream, kp_);
  }

  // Programmatic dependent launch (on by default): the kernel may be scheduled while the previous
  // kernel in the stream finishes, runs its prologue, and waits (griddepcontrol.wait) for that
  // kernel's completion and memory before it reads A and B or writes C. The result is the same
  // as with plain stream order; back-to-back launches lose the gap between kernels.
  plan& programmatic_launch(bool on) {
    programmatic_ = on;
    return *this;
  }
  bool programmatic_launch() const { return programmatic_; }

  const config& cfg() const { return cfg_; }
  const problem& prob() const { return p_; }
  int grid() const { return lp_.grid; }              // CTAs of every launch
  const launch_plan& layout() const { return lp_; }  // what every launch is (gemm_plan.hpp)
  int stream_k_tiles() const {
    return kp_.work.order.total() - kp_.work.dp_tiles;
  }  // cluster tiles in the stream-K region

 private:
  problem p_;
  config cfg_;
  int sms_ = 0;
  launch_plan lp_{};
  bool programmatic_ = true;
  hopper::tensor_map a_{}, b_{}, c_{};
  kernel_params kp_{};
  std::shared_ptr<void> workspace_;  // split-K partials and counters when the plan owns them

  void with_workspace(kernel_params& kp, void* ws) const {
    if (workspace_bytes() == 0) return;
    kp.partial = gmem<float4>(static_cast<float4*>(ws));
    kp.counters = gmem<int>(reinterpret_cast<int*>(static_cast<char*>(ws) + lp_.partial_bytes));
  }
  cudaError_t launch(cudaStream_t stream, const kernel_params& kp) const {
    const detail::launch_options o{stream, programmatic_};
    return detail::visit_instance(
        cfg_, p_, [&](auto tag) { return detail::launch<typename decltype(tag)::type>(lp_, a_, b_, c_, kp, o); });
  }
};

}  // namespace hopper::gemm
