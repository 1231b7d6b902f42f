// Ordering rules on the hardware: release/acquire through an mbarrier (PTX ISA, "Memory
// Consistency Model" and mbarrier.arrive/try_wait), generic writes made visible to the async
// proxy by fence.proxy.async ("Proxies", membar/fence), the write-after-read guard of an empty
// barrier, and bulk async-groups (cp.async.bulk.commit_group, cp.async.bulk.wait_group). Fresh
// random data every run, outputs poisoned, every value compared with a CPU reference.
#include <vector>

#include <hopper/async.cuh>
#include "gpu_test.hpp"

namespace {

using hopper::arrival_count;
using hopper::mbarrier;
using hopper::parity;
using hopper::tx_bytes;
namespace ptx = hopper::ptx;

using hopper_test::mix;

// ---- release/acquire: writes before arrive.release are seen after wait.acquire ----------------
// Warp 0 produces 64 words per iteration and arrives (release) on `full`; warp 1 waits
// (acquire), reads words written by other lanes, records them, and arrives on `empty`.
__global__ void message_kernel(uint32_t seed, int iters, uint32_t* seen) {
  __shared__ uint32_t data[64];
  __shared__ uint64_t full_w, empty_w;
  mbarrier full(full_w), empty(empty_w);
  if (threadIdx.x == 0) {
    full.init(arrival_count(32));
    empty.init(arrival_count(32));
  }
  __syncthreads();
  const uint32_t lane = threadIdx.x % 32;
  hopper::phase ph;  // producer waits empty with the flipped parity: a fresh barrier lets it in
  for (int i = 0; i < iters; ++i, ++ph) {
    if (threadIdx.x < 32) {
      empty.wait(ph.parity().flipped());
      data[lane] = mix(seed, i, lane);
      data[lane + 32] = mix(seed, i, lane + 32);
      (void)full.arrive();  // .release.cta
    } else {
      full.wait(ph.parity());  // .acquire.cta
      const uint32_t j = (lane * 7 + i) % 64;
      seen[size_t(i) * 64 + j] = data[j];
      seen[size_t(i) * 64 + (j + 32) % 64] = data[(j + 32) % 64];
      (void)empty.arrive();
    }
  }
}

TEST(ConformanceOrdering, ReleaseAcquireMessagePassing_S9_S17_3) {
  HOPPER_REQUIRE_SM90();
  const uint32_t seed = uint32_t(hopper_test::fresh_seed());
  const int iters = 20000;
  uint32_t* d_seen;
  CUDA_OK(cudaMalloc(&d_seen, size_t(iters) * 64 * 4));
  CUDA_OK(cudaMemset(d_seen, 0xef, size_t(iters) * 64 * 4));
  message_kernel<<<1, 64>>>(seed, iters, d_seen);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> seen(size_t(iters) * 64);
  CUDA_OK(cudaMemcpy(seen.data(), d_seen, seen.size() * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (int i = 0; i < iters; ++i)
    for (uint32_t w = 0; w < 64; ++w) bad += seen[size_t(i) * 64 + w] != mix(seed, i, w);
  EXPECT_EQ(bad, 0u) << "stale or torn values seen after wait.acquire (seed " << seed << ")";
  cudaFree(d_seen);
}

// ---- proxies: generic writes + fence.proxy.async + barrier, then a bulk store -----------------
constexpr int kWords = 4096;  // 16 KiB per iteration
__global__ void proxy_fence_kernel(uint32_t seed, int iters, uint32_t* out) {
  __shared__ alignas(128) uint32_t buf[kWords];
  for (int it = 0; it < iters; ++it) {
    for (int j = threadIdx.x; j < kWords; j += blockDim.x) buf[j] = mix(seed, it, j);
    ptx::fence_proxy_async_shared_cta();  // my generic writes, before the async proxy reads them
    __syncthreads();                      // everyone's writes and fences, before the issue
    if (threadIdx.x == 0) {
      ptx::cp_async_bulk_global_shared_cta(out + size_t(it) * kWords, buf, kWords * 4);
      hopper::bulk_group::commit();
      hopper::bulk_group::wait_read<0>();  // the source may be rewritten after this
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) hopper::bulk_group::wait<0>();
}

TEST(ConformanceOrdering, ProxyFenceThenBulkStore_S8_1_S9_3) {
  HOPPER_REQUIRE_SM90();
  const uint32_t seed = uint32_t(hopper_test::fresh_seed());
  const int iters = 256;
  uint32_t* d_out;
  CUDA_OK(cudaMalloc(&d_out, size_t(iters) * kWords * 4));
  CUDA_OK(cudaMemset(d_out, 0xef, size_t(iters) * kWords * 4));
  proxy_fence_kernel<<<1, 256>>>(seed, iters, d_out);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> out(size_t(iters) * kWords);
  CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (int it = 0; it < iters; ++it)
    for (int j = 0; j < kWords; ++j) bad += out[size_t(it) * kWords + j] != mix(seed, it, j);
  EXPECT_EQ(bad, 0u) << "the bulk store did not carry what the generic proxy wrote (seed " << seed << ")";
  cudaFree(d_out);
}

// ---- write after read: the producer refills a stage only after the consumers released it -----
// 2 stages of 4 KiB; warp 0 lane 0 produces with cp.async.bulk; 4 consumer warps read each
// tile twice with a random pause between, and sum it. A refill before the release would make
// the two reads differ or the sum wrong. Two release forms (hopper::release_by): every consumer
// thread arrives for its own reads (empty counts 128), or __syncwarp and lane 0 arrives for its
// warp (empty counts 4).
constexpr int kStages = 2;
constexpr int kTile = 1024;  // floats
template <bool EachLane>
__global__ void war_kernel(const uint32_t* in, int tiles, uint32_t pause_seed, uint32_t* sums, uint32_t* torn) {
  __shared__ alignas(128) uint32_t tile[kStages][kTile];
  __shared__ uint64_t full_w[kStages], empty_w[kStages];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier(full_w[s]).init(arrival_count(1));
      mbarrier(empty_w[s]).init(arrival_count(EachLane ? 128 : 4));  // per consumer thread, or warp
    }
    mbarrier::fence_init();
  }
  __syncthreads();
  hopper::stage_state<kStages> st;
  if (warp == 0) {
    if (lane == 0) {
      for (int t = 0; t < tiles; ++t, ++st) {
        mbarrier empty(empty_w[st.index()]), full(full_w[st.index()]);
        empty.wait(st.parity().flipped());
        (void)full.arrive_expect_tx(tx_bytes(kTile * 4));
        ptx::cp_async_bulk_shared_cluster_global(tile[st.index()], in + size_t(t) * kTile, kTile * 4, full.native());
      }
    }
    return;
  }
  for (int t = 0; t < tiles; ++t, ++st) {
    mbarrier full(full_w[st.index()]), empty(empty_w[st.index()]);
    full.wait(st.parity());
    uint32_t sum = 0, first = 0;
    for (int j = lane; j < kTile; j += 32) first += tile[st.index()][j] * uint32_t(j + 1);
    __nanosleep(mix(pause_seed, t, warp) % 2000);
    uint32_t again = 0;
    for (int j = lane; j < kTile; j += 32) again += tile[st.index()][j] * uint32_t(j + 1);
    sum = again;
    for (int o = 16; o > 0; o /= 2) {
      sum += __shfl_xor_sync(0xffffffffu, sum, o);
      first += __shfl_xor_sync(0xffffffffu, first, o);
    }
    if constexpr (EachLane) {
      (void)empty.arrive();  // release: this thread's reads are done
    } else {
      __syncwarp();
      if (lane == 0) (void)empty.arrive();  // release: the warp's reads are done
    }
    if (lane == 0) {
      sums[size_t(t) * 4 + (warp - 1)] = sum;
      if (first != sum) atomicAdd(torn, 1u);
    }
  }
}

template <bool EachLane>
void run_war() {
  std::mt19937_64 rng(hopper_test::fresh_seed());
  const int tiles = 2000;
  std::vector<uint32_t> in(size_t(tiles) * kTile);
  for (auto& v : in) v = uint32_t(rng());
  uint32_t *d_in, *d_sums, *d_torn;
  CUDA_OK(cudaMalloc(&d_in, in.size() * 4));
  CUDA_OK(cudaMalloc(&d_sums, size_t(tiles) * 4 * 4));
  CUDA_OK(cudaMalloc(&d_torn, 4));
  CUDA_OK(cudaMemcpy(d_in, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_sums, 0xef, size_t(tiles) * 4 * 4));
  CUDA_OK(cudaMemset(d_torn, 0, 4));
  war_kernel<EachLane><<<1, 160>>>(d_in, tiles, uint32_t(rng()), d_sums, d_torn);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> sums(size_t(tiles) * 4);
  uint32_t torn = 1;
  CUDA_OK(cudaMemcpy(sums.data(), d_sums, sums.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(&torn, d_torn, 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(torn, 0u) << "a stage changed while consumers were still reading it";
  for (int t = 0; t < tiles; ++t) {
    uint32_t ref = 0;
    for (int j = 0; j < kTile; ++j) ref += in[size_t(t) * kTile + j] * uint32_t(j + 1);
    for (int w = 0; w < 4; ++w) ASSERT_EQ(sums[size_t(t) * 4 + w], ref) << "tile " << t << " consumer warp " << w;
  }
  cudaFree(d_in);
  cudaFree(d_sums);
  cudaFree(d_torn);
}

TEST(ConformanceOrdering, WarGuardedByEmptyBarrierEachLane_S16) {
  HOPPER_REQUIRE_SM90();
  run_war<true>();
}

TEST(ConformanceOrdering, WarGuardedByEmptyBarrierWarpLeader_S16) {
  HOPPER_REQUIRE_SM90();
  run_war<false>();
}

// ---- cp.async.bulk.wait_group N leaves at most N groups pending ------------------------------
// One thread issues G groups (one 4 KiB bulk store each), then wait_group<N>: the G-N oldest
// groups must have landed in global memory, as this thread reads it back.
constexpr int kGroups = 8;
constexpr int kGroupWords = 1024;
template <int N>
__global__ void wait_group_kernel(uint32_t seed, uint32_t* out, uint32_t* missing) {
  __shared__ alignas(128) uint32_t src[kGroups][kGroupWords];
  for (int j = threadIdx.x; j < kGroups * kGroupWords; j += blockDim.x)
    src[j / kGroupWords][j % kGroupWords] = mix(seed, N, j);
  ptx::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int g = 0; g < kGroups; ++g) {
    ptx::cp_async_bulk_global_shared_cta(out + g * kGroupWords, src[g], kGroupWords * 4);
    hopper::bulk_group::commit();
  }
  hopper::bulk_group::wait<N>();
  uint32_t miss = 0;
  for (int j = 0; j < (kGroups - N) * kGroupWords; ++j)
    miss += __ldcg(out + j) != src[j / kGroupWords][j % kGroupWords];
  *missing = miss;
  hopper::bulk_group::wait<0>();
}

template <int N>
void run_wait_group(uint32_t seed) {
  uint32_t *d_out, *d_missing;
  CUDA_OK(cudaMalloc(&d_out, kGroups * kGroupWords * 4));
  CUDA_OK(cudaMalloc(&d_missing, 4));
  CUDA_OK(cudaMemset(d_out, 0xef, kGroups * kGroupWords * 4));
  CUDA_OK(cudaMemset(d_missing, 0xef, 4));
  wait_group_kernel<N><<<1, 256>>>(seed, d_out, d_missing);
  CUDA_LAUNCH_OK();
  uint32_t missing = 0;
  std::vector<uint32_t> out(kGroups * kGroupWords);
  CUDA_OK(cudaMemcpy(&missing, d_missing, 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(missing, 0u) << "after wait_group " << N << ", words of the " << (kGroups - N)
                         << " oldest groups had not landed";
  for (int j = 0; j < kGroups * kGroupWords; ++j) ASSERT_EQ(out[j], mix(seed, N, j)) << "N " << N << " word " << j;
  cudaFree(d_out);
  cudaFree(d_missing);
}

TEST(ConformanceOrdering, WaitGroupLeavesAtMostNPending_S19_3) {
  HOPPER_REQUIRE_SM90();
  const uint32_t seed = uint32_t(hopper_test::fresh_seed());
  run_wait_group<0>(seed);
  run_wait_group<1>(seed);
  run_wait_group<3>(seed);
  run_wait_group<7>(seed);
}

// ---- wait_group.read lets the source be overwritten while the write is in flight -------------
__global__ void wait_read_kernel(uint32_t seed, int rounds, uint32_t* out) {
  __shared__ alignas(128) uint32_t buf[kGroupWords];
  for (int r = 0; r < rounds; ++r) {
    for (int j = threadIdx.x; j < kGroupWords; j += blockDim.x) buf[j] = mix(seed, r, j);
    ptx::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
      ptx::cp_async_bulk_global_shared_cta(out + size_t(r) * kGroupWords, buf, kGroupWords * 4);
      hopper::bulk_group::commit();
      hopper::bulk_group::wait_read<0>();  // not wait<0>: the global write may still be in flight
    }
    __syncthreads();  // only now may anyone overwrite buf
  }
  if (threadIdx.x == 0) hopper::bulk_group::wait<0>();
}

TEST(ConformanceOrdering, WaitGroupReadFreesTheSource_S19_4) {
  HOPPER_REQUIRE_SM90();
  const uint32_t seed = uint32_t(hopper_test::fresh_seed());
  const int rounds = 512;
  uint32_t* d_out;
  CUDA_OK(cudaMalloc(&d_out, size_t(rounds) * kGroupWords * 4));
  CUDA_OK(cudaMemset(d_out, 0xef, size_t(rounds) * kGroupWords * 4));
  wait_read_kernel<<<1, 256>>>(seed, rounds, d_out);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> out(size_t(rounds) * kGroupWords);
  CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (int r = 0; r < rounds; ++r)
    for (int j = 0; j < kGroupWords; ++j) bad += out[size_t(r) * kGroupWords + j] != mix(seed, r, j);
  EXPECT_EQ(bad, 0u) << "a round's store carried a later round's data: the source was read after wait_group.read";
  cudaFree(d_out);
}

}  // namespace
