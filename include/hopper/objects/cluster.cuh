// Cluster helpers: where this CTA is, the cluster-wide barrier as the pair PTX defines
// (barrier.cluster.arrive.release, then barrier.cluster.wait.acquire), and pointers into a peer
// CTA's shared memory (mapa).
#pragma once
#include <cstdint>

#include "hopper/ptx/cluster.cuh"
#include "hopper/ptx/special_registers.cuh"

namespace hopper::cluster {

// %cluster_ctarank: this CTA's rank, 0..size()-1.
__device__ __forceinline__ uint32_t rank() { return ptx::cluster_ctarank(); }
// %cluster_nctarank: CTAs in the cluster.
__device__ __forceinline__ uint32_t size() { return ptx::cluster_nctarank(); }

// barrier.cluster.arrive.release.aligned: publish this thread's writes (DSMEM too).
__device__ __forceinline__ void arrive() { ptx::barrier_cluster_arrive_aligned<ptx::sem::release>(); }
// barrier.cluster.arrive.relaxed.aligned: only "I am here": orders nothing.
__device__ __forceinline__ void arrive_relaxed() { ptx::barrier_cluster_arrive_aligned<ptx::sem::relaxed>(); }
// barrier.cluster.wait.acquire.aligned: wait for every thread of the cluster.
__device__ __forceinline__ void wait() { ptx::barrier_cluster_wait_aligned(); }
// arrive.release + wait.acquire: every thread of the cluster meets, and writes made before
// are visible after (all threads of each warp must call it together).
__device__ __forceinline__ void sync() {
  arrive();
  wait();
}

// mapa.u64: the generic address of `*p` (in this CTA's shared memory) in CTA `peer`'s shared
// memory; plain loads and stores through it are DSMEM accesses.
template <class T>
__device__ __forceinline__ T* map_shared_rank(T* p, uint32_t peer) {
  return ptx::mapa(p, peer);
}

// mapa.shared::cluster.u32: the .shared::cluster address of `*p` in CTA `peer`, for remote
// mbarrier operations, ld/st.shared::cluster and cp.async.bulk into a peer.
__device__ __forceinline__ uint32_t map_shared_cluster(const void* p, uint32_t peer) {
  return ptx::mapa_shared_cluster(p, peer);
}

}  // namespace hopper::cluster
