// cp.async.bulk (PTX ISA: cp.async.bulk, cp.async.bulk.prefetch, cp.async.bulk.commit_group,
// cp.async.bulk.wait_group): non-tensor bulk copies performed by the async proxy (the
// TMA unit). Sizes are multiples of 16 bytes, addresses 16-byte aligned (PTX requirement; the
// host validators in hopper/objects/limits.hpp check sizes). Every asm is volatile with a "memory"
// clobber: the copy reads or writes memory behind the compiler's back, so the stores that fill a
// source and the loads that read a destination must stay on their side of the issue.
#pragma once
#include <cstdint>

#include "common.cuh"

namespace hopper::ptx {

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar];
// global -> this CTA's shared memory; on arrival the bytes complete_tx on `bar`.
__device__ __forceinline__ void cp_async_bulk_shared_cluster_global(void* dst_smem, const void* src_gmem,
                                                                    uint32_t bytes, uint64_t* bar) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_shared_cluster_global);
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(dst_smem)),
               "l"(src_gmem), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint
// [dst], [src], size, [mbar], policy: the same with an L2 eviction policy.
__device__ __forceinline__ void cp_async_bulk_shared_cluster_global(void* dst_smem, const void* src_gmem,
                                                                    uint32_t bytes, uint64_t* bar, uint64_t l2_policy) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_shared_cluster_global);
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1], %2, [%3], %4;" ::"r"(smem_addr(dst_smem)),
      "l"(src_gmem), "r"(bytes), "r"(smem_addr(bar)), "l"(l2_policy)
      : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
// [dst], [src], size, [mbar], ctaMask: one read of global memory lands at the same
// shared offset in every CTA whose bit is set in cta_mask, completing the barrier at the same
// offset in each of them.
__device__ __forceinline__ void cp_async_bulk_shared_cluster_global_multicast(void* dst_smem, const void* src_gmem,
                                                                              uint32_t bytes, uint64_t* bar,
                                                                              uint16_t cta_mask) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_shared_cluster_global_multicast);
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1], %2, [%3], %4;" ::"r"(smem_addr(dst_smem)),
      "l"(src_gmem), "r"(bytes), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}

// cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size: this CTA's shared
// memory -> global; tracked by the bulk async-group of the thread (commit_group / wait_group).
// The source must have been made visible to the async proxy (fence_proxy_async_shared_cta).
__device__ __forceinline__ void cp_async_bulk_global_shared_cta(void* dst_gmem, const void* src_smem, uint32_t bytes) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_global_shared_cta);
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst_gmem), "r"(smem_addr(src_smem)),
               "r"(bytes)
               : "memory");
}

// cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [dst], [src], size, policy
__device__ __forceinline__ void cp_async_bulk_global_shared_cta(void* dst_gmem, const void* src_smem, uint32_t bytes,
                                                                uint64_t l2_policy) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_global_shared_cta);
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(dst_gmem),
               "r"(smem_addr(src_smem)), "r"(bytes), "l"(l2_policy)
               : "memory");
}

// cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar];
// this CTA's shared memory -> a peer CTA's shared memory (DSMEM); dst and the barrier
// are .shared::cluster addresses in the destination CTA (from mapa).
__device__ __forceinline__ void cp_async_bulk_shared_cluster_shared_cta(uint32_t dst_cluster, const void* src_smem,
                                                                        uint32_t bytes, uint32_t bar_cluster) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_shared_cluster_shared_cta);
  asm volatile(
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst_cluster),
      "r"(smem_addr(src_smem)), "r"(bytes), "r"(bar_cluster)
      : "memory");
}

// cp.async.bulk.commit_group: closes the current bulk async-group of this thread.
__device__ __forceinline__ void cp_async_bulk_commit_group() {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_commit_group);
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// cp.async.bulk.wait_group N: returns when at most N of this thread's most recent
// bulk groups are pending: the others have completed, writes included.
template <int N>
__device__ __forceinline__ void cp_async_bulk_wait_group() {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_wait_group);
  static_assert(N >= 0, "cp.async.bulk.wait_group: N must be a non-negative immediate");
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// cp.async.bulk.wait_group.read N: returns when at most N groups still have to read
// their source: the source buffers of the others may be overwritten, though their writes may
// still be in flight.
template <int N>
__device__ __forceinline__ void cp_async_bulk_wait_group_read() {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_wait_group_read);
  static_assert(N >= 0, "cp.async.bulk.wait_group.read: N must be a non-negative immediate");
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// cp.async.bulk.prefetch.L2.global [src], size: a hint to bring global data into L2.
// No "memory" clobber would be needed for correctness (it writes nothing visible); it is kept so
// that the prefetch is issued where the author placed it.
__device__ __forceinline__ void cp_async_bulk_prefetch_L2_global(const void* src_gmem, uint32_t bytes) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_prefetch_L2_global);
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src_gmem), "r"(bytes) : "memory");
}

}  // namespace hopper::ptx
