// PTX forms the GEMM needs that the PTX layer (include/hopper/ptx/) does not offer yet:
// cp.async.bulk.tensor 2d loads (plain and multicast) and stores, barrier.cluster, mapa,
// setmaxnreg and bar.sync with a count. Each is one instruction, spelled as in the PTX ISA, and
// moves to include/hopper/ptx/ once the layer has it; the GEMM then includes that instead.
#pragma once
#include <cstdint>

#include "hopper/ptx/common.cuh"

namespace hopper::gemm::ptx {

using hopper::ptx::smem_addr;

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// [dst], [tmap, {c0, c1}], [mbar]; (seed §10, §11) one TMA box into this CTA's shared memory;
// its bytes complete_tx on `bar`. c0 is the innermost (contiguous) coordinate.
__device__ __forceinline__ void cp_async_bulk_tensor_2d_global_to_shared(void* dst, const void* tmap,
                                                                         int32_t c0, int32_t c1,
                                                                         uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];"
      ::"r"(smem_addr(dst)), "l"(tmap), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
// [dst], [tmap, {c0, c1}], [mbar], ctaMask; (seed §18) one read of the box lands at the same
// shared offset in every CTA of cta_mask and completes the barrier at the same offset in each.
__device__ __forceinline__ void cp_async_bulk_tensor_2d_global_to_shared_multicast(
    void* dst, const void* tmap, int32_t c0, int32_t c1, uint64_t* bar, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
      ::"r"(smem_addr(dst)), "l"(tmap), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [tmap, {c0, c1}], [src]; (seed §19)
// one box from shared to global, clipped at the tensor's bounds; tracked by the bulk group.
// The source must have been made visible with fence.proxy.async.shared::cta.
__device__ __forceinline__ void cp_async_bulk_tensor_2d_shared_to_global(const void* tmap, int32_t c0,
                                                                         int32_t c1, const void* src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
               ::"l"(tmap), "r"(c0), "r"(c1), "r"(smem_addr(src))
               : "memory");
}

// prefetch.tensormap [tmap]; brings the descriptor into the TMA unit's cache before first use.
__device__ __forceinline__ void prefetch_tensormap(const void* tmap) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(tmap) : "memory");
}

// barrier.cluster.arrive.release.aligned; (seed §18.1) this thread's prior writes are released
// to the cluster; pairs with barrier_cluster_wait_acquire.
__device__ __forceinline__ void barrier_cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

// barrier.cluster.wait.acquire.aligned; (seed §18.1) returns when every thread of every CTA of
// the cluster has arrived; their released writes are visible.
__device__ __forceinline__ void barrier_cluster_wait_acquire() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// mapa.shared::cluster.u32 d, a, rank; (seed §18) the .shared::cluster address of the variable
// at the same offset in CTA `rank` of the cluster.
__device__ __forceinline__ uint32_t mapa_shared_cluster(const void* p, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
  return r;
}

// setmaxnreg.inc.sync.aligned.u32 N; the warpgroup asks for N registers per thread (consumers).
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// setmaxnreg.dec.sync.aligned.u32 N; the warpgroup gives registers back (the producer).
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

// bar.sync id, count; (seed §20) named barrier over `count` threads (a multiple of 32); the
// "memory" clobber keeps shared-memory accesses on their side of it, as __syncthreads does.
__device__ __forceinline__ void bar_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

}  // namespace hopper::gemm::ptx
