// The GPU backend of hopper::pipeline: the hardware mbarrier in shared memory, driven through the
// PTX layer. Each function is the single PTX form the pipeline needs at that point; nothing else
// is emitted (tests/host/pipeline_trace_sass.cpp compares the SASS with and without tracing).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "hopper/mbarrier.cuh"
#include "hopper/pipeline.cuh"
#include "hopper/ptx/cluster.cuh"
#include "hopper/ptx/common.cuh"
#include "hopper/ptx/fence.cuh"
#include "hopper/ptx/mbarrier.cuh"
#include "hopper/ptx/special_registers.cuh"
#include "hopper/trace.cuh"

namespace hopper {

namespace detail {

// Per-warp trace state: the sink when tracing is compiled in, nothing otherwise.
template <bool Traced>
struct pipe_trace_state {
  pipe_trace_state() = default;
  __host__ __device__ explicit pipe_trace_state(const trace::sink&) {}
};
template <>
struct pipe_trace_state<true> {
  pipe_trace_state() = default;
  __host__ __device__ explicit pipe_trace_state(const trace::sink& s) : sink(s) {}
  trace::sink sink{};
};

}  // namespace detail

// Traced = true records every pipeline event into the sink (see hopper/trace.cuh). The default
// follows the HOPPER_TRACE switch, so a kernel written with `device_backend` is traced or not by
// one compile flag.
template <bool Traced = (HOPPER_TRACE != 0)>
struct basic_device_backend : detail::pipe_trace_state<Traced> {
  using barrier_type = uint64_t;  // the 8-byte mbarrier object (64-bit aligned by its type)
  static constexpr bool traced = Traced;

  template <release_sem S>
  __host__ __device__ static constexpr ptx::sem ptx_sem() {
    return S == release_sem::relaxed ? ptx::sem::relaxed : ptx::sem::release;
  }

  basic_device_backend() = default;
  __host__ __device__ explicit basic_device_backend(const trace::sink& s)
      : detail::pipe_trace_state<Traced>(s) {}

  __device__ __forceinline__ bool init_thread() const {
    return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  }
  // mbarrier.init.shared::cta.b64 (seed §12)
  __device__ __forceinline__ void init(barrier_type& b, uint32_t count) { ptx::mbarrier_init(&b, count); }
  // fence.mbarrier_init.release.cluster (seed §12): the inits become visible to peers' arrives.
  __device__ __forceinline__ void fence_init() { ptx::fence_mbarrier_init_release_cluster(); }
  // bar.sync 0 (seed §12): no thread of the CTA uses a barrier before it is initialised.
  __device__ __forceinline__ void sync_cta() { __syncthreads(); }
  // barrier.cluster.arrive.release + wait.acquire (seed §18): every peer CTA is running and
  // its barriers initialised before anyone multicasts into it or arrives on it.
  __device__ __forceinline__ void sync_cluster() {
    ptx::barrier_cluster_arrive_aligned();  // .release: our barrier inits are published
    ptx::barrier_cluster_wait_aligned();    // .acquire: the peers' are visible to us
  }
  // mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 (seed §12.2)
  __device__ __forceinline__ void arrive_expect_tx(barrier_type& b, uint32_t bytes) {
    (void)ptx::mbarrier_arrive_expect_tx<ptx::sem::release, ptx::scope::cta>(&b, bytes);
  }
  // mbarrier.arrive{.release,.relaxed}.cta.shared::cta.b64 (seed §16.1, §17.3)
  template <release_sem S = release_sem::release>
  __device__ __forceinline__ void arrive(barrier_type& b) {
    (void)ptx::mbarrier_arrive<ptx_sem<S>(), ptx::scope::cta>(&b);
  }
  // mapa + mbarrier.arrive{.release,.relaxed}.cluster.shared::cluster.b64 (seed §18): lane r < n
  // arrives on the barrier at the same offset in CTA r, so the n arrivals go out side by side.
  template <release_sem S = release_sem::release>
  __device__ __forceinline__ void arrive_each_cta(barrier_type& b, uint32_t n) {
    const uint32_t lane = threadIdx.x & 31u;
    if (lane < n)
      ptx::mbarrier_arrive_shared_cluster<ptx_sem<S>(), ptx::scope::cluster>(ptx::mapa_shared_cluster(&b, lane));
  }
  // mbarrier.try_wait.parity.acquire.{cta,cluster}.shared::cta.b64 in a loop (seed §13.1,
  // §13.3), through the objects layer so that HOPPER_DEBUG_WAITS bounds and reports it. Cluster
  // scope where the arrivals came from peer CTAs (release.cluster).
  __device__ __forceinline__ void wait(barrier_type& b, uint32_t p, bool cluster_scope) {
    if (cluster_scope)
      mbarrier(&b).wait<ptx::sem::acquire, ptx::scope::cluster>(parity(p));
    else
      mbarrier(&b).wait<ptx::sem::acquire, ptx::scope::cta>(parity(p));
  }
  __device__ __forceinline__ void warp_sync() { __syncwarp(); }
  __device__ __forceinline__ bool warp_leader() const { return (threadIdx.x & 31u) == 0; }

  // One record per event and warp, by lane 0 (only compiled when Traced).
  __device__ __forceinline__ void record(trace::event e, uint32_t stage, uint32_t iter, uint32_t role) {
    if constexpr (Traced) {
      if ((threadIdx.x & 31u) != 0) return;
      const uint32_t warps_per_cta = (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u;
      const uint32_t cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
      const uint32_t warp = threadIdx.x / 32u;
      trace::put(this->sink, cta * warps_per_cta + warp, e, stage, iter, role, cta, warp);
    }
  }
};

using device_backend = basic_device_backend<>;

// A pipeline on the GPU: `device_pipeline<4>` is four stages of hardware mbarriers.
template <int Stages, bool Traced = (HOPPER_TRACE != 0)>
using device_pipeline = pipeline<Stages, basic_device_backend<Traced>>;

// ---- host: what this device allows ------------------------------------------------------------

// The limits validate() checks against, read from device `device`. Throws naming the call that
// failed. The cluster limit is the portable 8 where the device can launch clusters at all, 1 where
// it cannot (cluster_limit_for() asks the driver about one kernel).
inline pipeline_limits query_limits(int device = 0) {
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
  };
  int smem = 0, threads = 0, cluster = 0;
  check(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        "cudaDevAttrMaxSharedMemoryPerBlockOptin");
  check(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerBlock, device),
        "cudaDevAttrMaxThreadsPerBlock");
  check(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, device), "cudaDevAttrClusterLaunch");
  pipeline_limits lim;
  lim.smem_per_block = size_t(smem);
  lim.max_threads_per_block = uint32_t(threads);
  lim.max_cluster_size = cluster ? 8u : 1u;
  return lim;
}

// The largest cluster the driver can co-schedule for `kernel` with this block and shared memory
// (cudaOccupancyMaxPotentialClusterSize). Set the kernel's dynamic shared-memory attribute first.
template <class Kernel>
inline uint32_t cluster_limit_for(Kernel* kernel, uint32_t block_threads, size_t smem_bytes) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(1, 1, 1);
  cfg.blockDim = dim3(block_threads, 1, 1);
  cfg.dynamicSmemBytes = smem_bytes;
  int n = 0;
  const cudaError_t e = cudaOccupancyMaxPotentialClusterSize(&n, kernel, &cfg);
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cudaOccupancyMaxPotentialClusterSize: ") + cudaGetErrorString(e));
  return uint32_t(n);
}

}  // namespace hopper
