// Cluster barrier, mapa and distributed shared memory (PTX ISA: barrier.cluster, mapa, the
// .shared::cluster state space). Every asm is volatile with a
// "memory" clobber: the barrier orders the cluster's memory accesses, and DSMEM loads and stores
// are memory accesses the compiler cannot see through a 32-bit cluster address.
#pragma once
#include <cstdint>

#include "common.cuh"

namespace hopper::ptx {

// barrier.cluster.arrive{.release,.relaxed}.aligned: this thread arrives on the
// cluster barrier; .aligned: every thread of the warp executes it together (the fast form).
// .release (default) publishes this thread's prior writes, shared::cluster included, to threads
// that later complete barrier.cluster.wait.
template <sem S = sem::release>
__device__ __forceinline__ void barrier_cluster_arrive_aligned() {
  HOPPER_PTX_NEEDS_SM90(barrier_cluster_arrive_aligned);
  static_assert(S == sem::release || S == sem::relaxed, "barrier.cluster.arrive: .sem must be release or relaxed");
  if constexpr (S == sem::release) {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  } else {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  }
}

// barrier.cluster.arrive{.release,.relaxed}: the same without .aligned: threads of a
// warp may arrive from divergent code.
template <sem S = sem::release>
__device__ __forceinline__ void barrier_cluster_arrive() {
  HOPPER_PTX_NEEDS_SM90(barrier_cluster_arrive);
  static_assert(S == sem::release || S == sem::relaxed, "barrier.cluster.arrive: .sem must be release or relaxed");
  if constexpr (S == sem::release) {
    asm volatile("barrier.cluster.arrive.release;" ::: "memory");
  } else {
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
  }
}

// barrier.cluster.wait.acquire.aligned: waits until every non-exited thread of the
// cluster has arrived; acquire: their released writes are visible afterwards.
__device__ __forceinline__ void barrier_cluster_wait_aligned() {
  HOPPER_PTX_NEEDS_SM90(barrier_cluster_wait_aligned);
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// barrier.cluster.wait.acquire: the same, callable from divergent code.
__device__ __forceinline__ void barrier_cluster_wait() {
  HOPPER_PTX_NEEDS_SM90(barrier_cluster_wait);
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

// mapa.shared::cluster.u32 d, a, rank: the .shared::cluster address of the variable at
// the same offset as this CTA's `p` in the shared memory of CTA `rank` of the cluster. Pure
// address arithmetic: no memory clobber.
__device__ __forceinline__ uint32_t mapa_shared_cluster(const void* p, uint32_t rank) {
  HOPPER_PTX_NEEDS_SM90(mapa_shared_cluster);
  uint32_t d;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(smem_addr(p)), "r"(rank));
  return d;
}

// mapa.shared::cluster.u32 d, a, rank: from a .shared::cta/.shared::cluster address.
__device__ __forceinline__ uint32_t mapa_shared_cluster(uint32_t smem, uint32_t rank) {
  HOPPER_PTX_NEEDS_SM90(mapa_shared_cluster);
  uint32_t d;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(smem), "r"(rank));
  return d;
}

// mapa.u64 d, a, rank: a generic pointer to the same variable in CTA `rank`: ordinary
// C++ loads and stores through it reach the peer's shared memory (DSMEM).
template <class T>
__device__ __forceinline__ T* mapa(T* p, uint32_t rank) {
  HOPPER_PTX_NEEDS_SM90(mapa);
  uint64_t d;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(d) : "l"(p), "r"(rank));
  return reinterpret_cast<T*>(d);
}

// ld.shared::cluster.u32 d, [a]: a DSMEM load from any CTA of the cluster.
__device__ __forceinline__ uint32_t ld_shared_cluster_u32(uint32_t cluster_addr) {
  HOPPER_PTX_NEEDS_SM90(ld_shared_cluster_u32);
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(cluster_addr) : "memory");
  return v;
}

// ld.shared::cluster.u64 d, [a]
__device__ __forceinline__ uint64_t ld_shared_cluster_u64(uint32_t cluster_addr) {
  HOPPER_PTX_NEEDS_SM90(ld_shared_cluster_u64);
  uint64_t v;
  asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(cluster_addr) : "memory");
  return v;
}

// ld.shared::cluster.f32 d, [a]
__device__ __forceinline__ float ld_shared_cluster_f32(uint32_t cluster_addr) {
  HOPPER_PTX_NEEDS_SM90(ld_shared_cluster_f32);
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(cluster_addr) : "memory");
  return v;
}

// st.shared::cluster.u32 [a], v: a DSMEM store into any CTA of the cluster.
__device__ __forceinline__ void st_shared_cluster_u32(uint32_t cluster_addr, uint32_t v) {
  HOPPER_PTX_NEEDS_SM90(st_shared_cluster_u32);
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(cluster_addr), "r"(v) : "memory");
}

// st.shared::cluster.u64 [a], v
__device__ __forceinline__ void st_shared_cluster_u64(uint32_t cluster_addr, uint64_t v) {
  HOPPER_PTX_NEEDS_SM90(st_shared_cluster_u64);
  asm volatile("st.shared::cluster.u64 [%0], %1;" ::"r"(cluster_addr), "l"(v) : "memory");
}

// st.shared::cluster.f32 [a], v
__device__ __forceinline__ void st_shared_cluster_f32(uint32_t cluster_addr, float v) {
  HOPPER_PTX_NEEDS_SM90(st_shared_cluster_f32);
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(cluster_addr), "f"(v) : "memory");
}

}  // namespace hopper::ptx
