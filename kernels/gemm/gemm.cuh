// Host side of the GEMM: validate the problem, choose the tile configuration (gemm_config.hpp),
// encode the three tensor maps once, size the persistent grid and the work schedule (split-K,
// stream-K tail, their workspace), and launch on a cluster grid with programmatic dependent launch.
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

#include "hopper/tensor_map.hpp"
#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/gemm_kernel.cuh"
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

// The launch attributes of instantiation T: its cluster shape (1-D: rank = CLUSTER_M * rn + rm)
// and whether it may start under the tail of the previous grid in the stream.
template <class T>
cudaLaunchConfig_t launch_config_of(cudaLaunchAttribute (&attr)[2], int clusters, const launch_options& o) {
  cudaLaunchConfig_t cfg{};
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = T::CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = o.programmatic ? 1 : 0;
  cfg.gridDim = dim3(clusters * T::CLUSTER);
  cfg.blockDim = dim3(T::THREADS);
  cfg.dynamicSmemBytes = T::SMEM;
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
  cudaLaunchConfig_t cfg = launch_config_of<T>(attr, num_sms / T::CLUSTER, launch_options{0, false});
  cfg.numAttrs = 1;  // the query takes the cluster shape
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    n = num_sms / T::CLUSTER;
  }
  return n;
}

// Launches instantiation T on kp.work.clusters clusters.
template <class T>
cudaError_t launch(const hopper::tensor_map& a, const hopper::tensor_map& b, const hopper::tensor_map& c,
                   const kernel_params& kp, const launch_options& o) {
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = launch_config_of<T>(attr, kp.work.clusters, o);
  return cudaLaunchKernelEx(&cfg, gemm_kernel<T>, a, b, c, kp);
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
    bind(A, B, C);
    kp_.M = int(p.M);
    kp_.N = int(p.N);
    kp_.K = int(p.K);
    const int resident = detail::visit_instance(
        cfg_, p, [&](auto tag) { return detail::resident_clusters<typename decltype(tag)::type>(sms_); });
    const launch_schedule ls = make_schedule(p, cfg_, resident);
    kp_.work = ls.work;
    kp_.slot_stride = ls.slot_stride;
    grid_ = ls.work.clusters * cfg_.cluster_size();
    // The fixup workspace: one fp32 partial per slot of every shared CTA tile, then one counter
    // per consumer warpgroup of it (zero before a run; the kernel leaves them zero).
    if (ls.fixup_tiles > 0) {
      partial_bytes_ = ls.partial_bytes(cfg_);
      counter_bytes_ = ls.counter_bytes(cfg_);
    }
    kp_.partial = gmem<float4>(nullptr);
    kp_.counters = gmem<int>(nullptr);
  }

  // Points the plan at other buffers of the same problem (same shape, layout and leading
  // dimensions): validates them and re-encodes the three tensor maps; nothing else changes.
  void bind(const void* A, const void* B, void* C) {
    validate(p_, A, B, C);
    const problem& p = p_;
    const auto u = [](int64_t v) { return uint64_t(v); };
    // The boxes the kernel's producer loads and its epilogue stores (gemm_traits.hpp).
    const operand_box ab = operand_box_of(p.a_major == major::mn, cfg_.bm, cfg_.cluster_n);
    const operand_box bb = operand_box_of(p.b_major == major::mn, cfg_.bn, cfg_.cluster_m);
    const operand_box cb = c_box_of(int(out_bytes(p.out)));
    const int64_t lda = p.lda_or_packed(), ldb = p.ldb_or_packed(), ldc = p.ldc_or_packed();
    // A: K-major boxes are 64 (K) x 128 / cluster_n (M): each CTA of a cluster row loads its
    // share; MN-major boxes are 64 (M) x 64 (K), two per tile.
    if (p.a_major == major::k)
      a_ = tensor_map::tiled(element::bf16, A)
               .dims({u(p.K), u(p.M)})
               .strides({u(lda * 2)})
               .box({ab.inner, ab.outer})
               .swizzle(swizzle::b128)
               .l2_promotion(l2_promotion::b256)
               .build();
    else
      a_ = tensor_map::tiled(element::bf16, A)
               .dims({u(p.M), u(p.K)})
               .strides({u(lda * 2)})
               .box({ab.inner, ab.outer})
               .swizzle(swizzle::b128)
               .l2_promotion(l2_promotion::b256)
               .build();
    // B: K-major boxes are 64 (K) x bn / cluster_m (N): each CTA of a cluster column loads its
    // share; MN-major boxes are 64 (N) x 64 (K).
    if (p.b_major == major::k)
      b_ = tensor_map::tiled(element::bf16, B)
               .dims({u(p.K), u(p.N)})
               .strides({u(ldb * 2)})
               .box({bb.inner, bb.outer})
               .swizzle(swizzle::b128)
               .l2_promotion(l2_promotion::b256)
               .build();
    else
      b_ = tensor_map::tiled(element::bf16, B)
               .dims({u(p.N), u(p.K)})
               .strides({u(ldb * 2)})
               .box({bb.inner, bb.outer})
               .swizzle(swizzle::b128)
               .l2_promotion(l2_promotion::b256)
               .build();
    // C: boxes of 16 rows (one warp's share of a wgmma's 64) x 128 bytes, written from
    // 128B-swizzled shared memory.
    const element ce = p.out == out_type::bf16 ? element::bf16 : element::f32;
    const int ob = int(out_bytes(p.out));
    c_ = tensor_map::tiled(ce, C)
             .dims({u(c_map_columns(p.N, ob)), u(p.M)})
             .strides({u(ldc * out_bytes(p.out))})
             .box({cb.inner, cb.outer})
             .swizzle(swizzle::b128)
             .build();
    kp_.c = gmem<uint8_t>(static_cast<uint8_t*>(C));
    kp_.ldc_bytes = ldc * ob;
    kp_.n_tma = int(c_tma_columns(p.N, ob));
  }

  // Bytes of workspace a run needs (0: none): the fp32 partials, then the counters, which must be
  // zero when a run starts (at counters_offset(); a run leaves them zero).
  size_t workspace_bytes() const { return partial_bytes_ + counter_bytes_; }
  size_t counters_offset() const { return partial_bytes_; }

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
  int grid() const { return grid_; }  // CTAs of every launch
  int stream_k_tiles() const {
    return kp_.work.order.total() - kp_.work.dp_tiles;
  }  // cluster tiles in the stream-K region

 private:
  problem p_;
  config cfg_;
  int sms_ = 0;
  int grid_ = 0;
  bool programmatic_ = true;
  hopper::tensor_map a_{}, b_{}, c_{};
  kernel_params kp_{};
  size_t partial_bytes_ = 0, counter_bytes_ = 0;
  std::shared_ptr<void> workspace_;  // split-K partials and counters when the plan owns them

  void with_workspace(kernel_params& kp, void* ws) const {
    if (workspace_bytes() == 0) return;
    kp.partial = gmem<float4>(static_cast<float4*>(ws));
    kp.counters = gmem<int>(reinterpret_cast<int*>(static_cast<char*>(ws) + partial_bytes_));
  }
  cudaError_t launch(cudaStream_t stream, const kernel_params& kp) const {
    const detail::launch_options o{stream, programmatic_};
    return detail::visit_instance(
        cfg_, p_, [&](auto tag) { return detail::launch<typename decltype(tag)::type>(a_, b_, c_, kp, o); });
  }
};

}  // namespace hopper::gemm
