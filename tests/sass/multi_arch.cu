// Compiled by tests/host/multi_arch.cpp for several architectures at once (80;90a): every public
// header, and the calls a portable kernel makes on every architecture, build for all of them.
// With -DHOPPER_CALL=<n> the kernel also calls one Hopper-only operation, which must fail to build
// for an architecture without it, with one error that names the operation and the architecture.
#include <cstdint>

#include "hopper/async.cuh"
#include "hopper/hd.hpp"
#include "hopper/objects/bulk_group.cuh"
#include "hopper/objects/cluster.cuh"
#include "hopper/objects/counts.hpp"
#include "hopper/objects/limits.hpp"
#include "hopper/objects/mbarrier.cuh"
#include "hopper/objects/named_barrier.cuh"
#include "hopper/objects/phase.hpp"
#include "hopper/objects/swizzle.hpp"
#include "hopper/objects/tensor_map.hpp"
#include "hopper/objects/views.cuh"
#include "hopper/objects/wait_debug.cuh"
#include "hopper/pipeline/pipeline.hpp"
#include "hopper/pipeline/pipeline_backend_device.cuh"
#include "hopper/ptx.cuh"
#include "hopper/target/device_target.cuh"
#include "hopper/trace/trace.hpp"
#include "hopper/version.hpp"

#ifndef HOPPER_CALL
#define HOPPER_CALL 0
#endif

__global__ void portable(uint4* out, const uint4* in, uint32_t n) {
  __shared__ uint64_t bar;
  __shared__ uint4 tile[128];
  namespace ptx = hopper::ptx;
  if (threadIdx.x == 0) ptx::mbarrier_init(&bar, 1);  // mbarrier.init: sm_80 has it
  ptx::bar_sync(1, blockDim.x);                       // bar.sync: every architecture
  const uint64_t policy = ptx::createpolicy_fractional_L2_evict_first();
  for (uint32_t i = threadIdx.x; i < n && i < 128; i += blockDim.x) tile[i] = ptx::ld_global_nc_v4_u32(in + i);
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < n && i < 128; i += blockDim.x)
    ptx::st_global_L2_cache_hint_v4_u32(out + i, ptx::ld_shared_v4_u32(&tile[i]), policy);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The Hopper path, compiled only where it exists: the usual way to write a multi-arch kernel.
  if (threadIdx.x == 0) (void)hopper::mbarrier(bar).arrive();
#endif
#if HOPPER_CALL == 1  // cp.async.bulk (sm_90)
  if (threadIdx.x == 0) ptx::cp_async_bulk_shared_cluster_global(tile, in, 16u * 128u, &bar);
#elif HOPPER_CALL == 2  // an object's member: hopper::mbarrier::arrive (mbarrier.arrive.release.cta, sm_90)
  if (threadIdx.x == 0) (void)hopper::mbarrier(bar).arrive();
#elif HOPPER_CALL == 3  // wgmma.fence (sm_90a only)
  ptx::wgmma_fence();
#elif HOPPER_CALL == 4  // the cluster's special registers (sm_90)
  out[0].x = ptx::cluster_ctarank();
#endif
}
