// Cluster and named barriers on the hardware: DSMEM writes published by barrier.cluster
// arrive.release / wait.acquire for cluster sizes 2, 4, 8 (16 where the device allows), a remote
// arrive through mapa completing a peer's barrier, and two disjoint warp sets on their own named
// barriers, bar.arrive producers with bar.sync consumers (PTX ISA, bar/barrier).
#include <vector>

#include <hopper/async.cuh>
#include "gpu_test.hpp"

namespace {

using hopper::arrival_count;
using hopper::mbarrier;
using hopper::parity;
namespace cluster = hopper::cluster;

using hopper_test::mix;

constexpr int kMaxCluster = 16;
constexpr int kRounds = 64;

// Each round every CTA writes one word into slot[my rank] of every CTA (DSMEM), the cluster
// meets (release/acquire), and each CTA records its slots. A second meeting guards the slots
// against the next round's writes (WAR across CTAs). Then the remote-arrive check: each CTA's
// barrier expects one arrival from every peer, which arrive through mapa after writing a word.
__global__ void cluster_kernel(uint32_t seed, uint32_t* out, uint32_t* remote_seen) {
  __shared__ uint32_t slot[kMaxCluster];
  __shared__ uint32_t note[kMaxCluster];
  __shared__ uint64_t bar_w;
  const uint32_t rank = cluster::rank(), size = cluster::size();
  const uint32_t cl = blockIdx.x / size;
  mbarrier bar(bar_w);
  if (threadIdx.x == 0) {
    bar.init(arrival_count(size - 1));
    mbarrier::fence_init();
  }
  for (int r = 0; r < kRounds; ++r) {
    if (threadIdx.x < size) {
      uint32_t* peer_slot = cluster::map_shared_rank(&slot[rank], threadIdx.x);
      *peer_slot = mix(seed, r, (cl * kMaxCluster + threadIdx.x) * kMaxCluster + rank);
    }
    __syncwarp();     // .aligned: the whole warp executes the cluster barrier together
    cluster::sync();  // arrive.release + wait.acquire
    if (threadIdx.x < size)
      out[((size_t(cl) * kMaxCluster + rank) * kRounds + r) * kMaxCluster + threadIdx.x] = slot[threadIdx.x];
    __syncwarp();
    cluster::sync();  // nobody writes the next round before everyone has read this one
  }
  // Remote arrive: tell every peer, through its barrier, that my note to it is written.
  if (threadIdx.x < size && threadIdx.x != rank) {
    const uint32_t peer = threadIdx.x;
    hopper::ptx::st_shared_cluster_u32(cluster::map_shared_cluster(&note[rank], peer),
                                       mix(seed, 999, rank * 64 + peer));
    bar.remote(peer).arrive();  // mbarrier.arrive.release.cluster.shared::cluster
  }
  if (threadIdx.x == 0) {
    bar.wait<hopper::ptx::sem::acquire, hopper::ptx::scope::cluster>(parity(0));
    for (uint32_t p = 0; p < size; ++p)
      remote_seen[size_t(cl) * kMaxCluster * kMaxCluster + rank * kMaxCluster + p] = p == rank ? 0u : note[p];
  }
  __syncwarp();
  cluster::sync();  // no CTA leaves while a peer may still touch its shared memory
}

// Launches cluster_kernel with `size` CTAs per cluster; false (with a reason) if it cannot run.
bool run_cluster(int size, int clusters, std::string* why) {
  const uint32_t seed = uint32_t(hopper_test::fresh_seed()) + size;
  const size_t out_n = size_t(clusters) * kMaxCluster * kRounds * kMaxCluster;
  const size_t seen_n = size_t(clusters) * kMaxCluster * kMaxCluster;
  uint32_t *d_out, *d_seen;
  EXPECT_EQ(cudaMalloc(&d_out, out_n * 4), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_seen, seen_n * 4), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_out, 0xef, out_n * 4), cudaSuccess);
  EXPECT_EQ(cudaMemset(d_seen, 0xef, seen_n * 4), cudaSuccess);
  if (size > 8)
    EXPECT_EQ(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), cudaSuccess);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(size * clusters);
  cfg.blockDim = dim3(64);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = size;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int active = 0;
  EXPECT_EQ(cudaOccupancyMaxActiveClusters(&active, cluster_kernel, &cfg), cudaSuccess);
  if (active < 1) {
    *why = "cudaOccupancyMaxActiveClusters reports no cluster of " + std::to_string(size) + " fits";
    cudaFree(d_out);
    cudaFree(d_seen);
    return false;
  }
  EXPECT_EQ(cudaLaunchKernelEx(&cfg, cluster_kernel, seed, d_out, d_seen), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint32_t> out(out_n), seen(seen_n);
  EXPECT_EQ(cudaMemcpy(out.data(), d_out, out_n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(seen.data(), d_seen, seen_n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  size_t bad = 0, bad_remote = 0;
  for (int cl = 0; cl < clusters; ++cl)
    for (int rank = 0; rank < size; ++rank) {
      for (int r = 0; r < kRounds; ++r)
        for (int src = 0; src < size; ++src)
          bad += out[((size_t(cl) * kMaxCluster + rank) * kRounds + r) * kMaxCluster + src] !=
                 mix(seed, r, (cl * kMaxCluster + rank) * kMaxCluster + src);
      for (int p = 0; p < size; ++p)
        bad_remote += seen[size_t(cl) * kMaxCluster * kMaxCluster + rank * kMaxCluster + p] !=
                      (p == rank ? 0u : mix(seed, 999, p * 64 + rank));
    }
  EXPECT_EQ(bad, 0u) << "cluster size " << size << ": DSMEM words not seen after barrier.cluster (seed " << seed << ")";
  EXPECT_EQ(bad_remote, 0u) << "cluster size " << size
                            << ": a remote arrive completed before the peer's write was visible";
  cudaFree(d_out);
  cudaFree(d_seen);
  return true;
}

TEST(ConformanceCluster, DsmemAndRemoteArrivePortableSizes_S18) {
  HOPPER_REQUIRE_SM90();
  for (int size : {2, 4, 8}) {
    std::string why;
    EXPECT_TRUE(run_cluster(size, 16, &why)) << why;
  }
}

TEST(ConformanceCluster, DsmemAndRemoteArriveSize16_S18) {
  HOPPER_REQUIRE_SM90();
  std::string why;
  if (!run_cluster(16, 4, &why)) GTEST_SKIP() << why;
}

// ---- named barriers: two warp sets, two pairs of barriers, different iteration counts ---------
// Set s (s = 0, 1) is warps 4s..4s+3: warps 4s, 4s+1 produce, 4s+2, 4s+3 consume. Producers
// write, bar.arrive(full_s); consumers bar.sync(full_s), read, bar.arrive(empty_s); producers
// bar.sync(empty_s) before rewriting. 128 threads per barrier.
__global__ void named_kernel(uint32_t seed, int iters0, int iters1, uint32_t* out) {
  __shared__ uint32_t data[2][64];
  const int warp = threadIdx.x / 32;
  const int set = warp / 4;
  const bool producer = (warp % 4) < 2;
  const uint32_t t = threadIdx.x % 64;  // index within the producers / consumers of the set
  const hopper::dynamic_named_barrier full(1 + 2 * set, 128), empty(2 + 2 * set, 128);
  const int iters = set == 0 ? iters0 : iters1;
  for (int i = 0; i < iters; ++i) {
    if (producer) {
      if (i > 0) empty.sync();
      data[set][t] = mix(seed, set * 100000 + i, t);  // racecheck-known: bar-arrive-release
      full.arrive();
    } else {
      full.sync();
      const uint32_t j = (t * 5 + i) % 64;
      out[(size_t(set) * 4096 + i) * 64 + j] = data[set][j];  // racecheck-known: bar-arrive-release
      empty.arrive();
    }
  }
  // Consumers' last empty.arrive has no matching sync: a completed barrier needs one more sync.
  if (producer && iters > 0) empty.sync();
}

TEST(ConformanceNamedBarrier, TwoSetsArriveSync_S20) {
  HOPPER_REQUIRE_SM90();
  const uint32_t seed = uint32_t(hopper_test::fresh_seed());
  std::mt19937_64 rng(seed);
  const int iters0 = 1000 + int(rng() % 3000), iters1 = 500 + int(rng() % 1500);
  const size_t n = size_t(2) * 4096 * 64;
  uint32_t* d_out;
  CUDA_OK(cudaMalloc(&d_out, n * 4));
  CUDA_OK(cudaMemset(d_out, 0xef, n * 4));
  named_kernel<<<1, 256>>>(seed, iters0, iters1, d_out);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> out(n);
  CUDA_OK(cudaMemcpy(out.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0, untouched = 0;
  for (int set = 0; set < 2; ++set) {
    const int iters = set == 0 ? iters0 : iters1;
    for (int i = 0; i < 4096; ++i)
      for (uint32_t t = 0; t < 64; ++t) {
        const uint32_t v = out[(size_t(set) * 4096 + i) * 64 + t];
        if (i < iters)
          bad += v != mix(seed, set * 100000 + i, t);
        else
          untouched += v != 0xefefefefu;
      }
  }
  EXPECT_EQ(bad, 0u) << "a consumer read a word not yet (or no longer) written for its iteration";
  EXPECT_EQ(untouched, 0u) << "writes beyond a set's iteration count";
}

}  // namespace
