// Fences (PTX ISA: membar/fence; "Memory Consistency Model": proxies, release and acquire): proxy
// fences between the generic and the async proxy, the barrier-init
// fence, and the acq_rel / sc memory fences at each scope. Every asm is volatile with a "memory"
// clobber: a fence exists only to order the memory accesses around it, so the compiler must not
// move loads or stores across it either.
#pragma once
#include "common.cuh"

namespace hopper::ptx {

// fence.proxy.async: orders this thread's generic-proxy accesses with async-proxy
// accesses (cp.async.bulk, TMA, wgmma operands) in all state spaces.
__device__ __forceinline__ void fence_proxy_async() {
  HOPPER_PTX_NEEDS_SM90(fence_proxy_async);
  asm volatile("fence.proxy.async;" ::: "memory");
}

// fence.proxy.async.shared::cta: the same, restricted to this CTA's shared memory:
// the fence to use after writing a tile with st.shared before a TMA store reads it.
__device__ __forceinline__ void fence_proxy_async_shared_cta() {
  HOPPER_PTX_NEEDS_SM90(fence_proxy_async_shared_cta);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// fence.proxy.async.shared::cluster: restricted to the cluster's shared memory.
__device__ __forceinline__ void fence_proxy_async_shared_cluster() {
  HOPPER_PTX_NEEDS_SM90(fence_proxy_async_shared_cluster);
  asm volatile("fence.proxy.async.shared::cluster;" ::: "memory");
}

// fence.proxy.async.global: restricted to global memory: e.g. generic writes to a
// buffer that a later TMA load of this thread reads.
__device__ __forceinline__ void fence_proxy_async_global() {
  HOPPER_PTX_NEEDS_SM90(fence_proxy_async_global);
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

// fence.mbarrier_init.release.cluster: makes prior mbarrier.init visible to the
// async proxy and to the other CTAs of the cluster (a light release fence for inits only).
__device__ __forceinline__ void fence_mbarrier_init_release_cluster() {
  HOPPER_PTX_NEEDS_SM90(fence_mbarrier_init_release_cluster);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// fence.acq_rel{.cta,.cluster,.gpu,.sys}: a release and acquire fence at the
// scope; default .gpu. (__threadfence() is membar.gl, i.e. the dearer fence.sc.gpu below.)
template <scope SC = scope::gpu>
__device__ __forceinline__ void fence_acq_rel() {
  HOPPER_PTX_NEEDS_SM90(fence_acq_rel);
  if constexpr (SC == scope::cta) {
    asm volatile("fence.acq_rel.cta;" ::: "memory");
  } else if constexpr (SC == scope::cluster) {
    asm volatile("fence.acq_rel.cluster;" ::: "memory");
  } else if constexpr (SC == scope::gpu) {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
  } else {
    asm volatile("fence.acq_rel.sys;" ::: "memory");
  }
}

// fence.sc{.cta,.cluster,.gpu,.sys}: sequentially consistent fence at the scope.
template <scope SC = scope::gpu>
__device__ __forceinline__ void fence_sc() {
  HOPPER_PTX_NEEDS_SM90(fence_sc);
  if constexpr (SC == scope::cta) {
    asm volatile("fence.sc.cta;" ::: "memory");
  } else if constexpr (SC == scope::cluster) {
    asm volatile("fence.sc.cluster;" ::: "memory");
  } else if constexpr (SC == scope::gpu) {
    asm volatile("fence.sc.gpu;" ::: "memory");
  } else {
    asm volatile("fence.sc.sys;" ::: "memory");
  }
}

}  // namespace hopper::ptx
