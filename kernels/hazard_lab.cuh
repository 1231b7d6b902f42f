// The hazard lab (seed §7, §8, §9, §16, §19): each of the seed's hazards as a kernel that runs
// many independent trials, once without its protection and once with it, and counts the trials
// whose data came out wrong. A trial is one (block, run) pair (one (cluster, run) pair for the
// DSMEM case); blocks run concurrently on every SM, runs follow each other inside a block. A trial
// fails once however many of its words are wrong (a block-wide OR decides it, one thread counts
// it); the wrong words are counted apart, so the size of a failure is seen as well as its rate.
//
// Cases (hazard_case):
//   raw_proxy_bulk_store      ordinary st.shared fills a tile, bar.sync, one thread bulk-stores it
//                             (cp.async.bulk.global.shared::cta). Protection: every writer issues
//                             fence.proxy.async.shared::cta before the bar.sync (seed §9.3).
//   raw_proxy_dsmem_copy      the same tile sent to the peer CTA of a cluster of 2 with
//                             cp.async.bulk.shared::cluster.shared::cta (seed §18), same fence.
//   war_refill_before_release a producer bulk-loads a stage, then refills it at once while the
//                             consumer warps still read it. Protection: the refill waits for the
//                             consumers' arrivals on the stage's empty barrier (seed §16).
//   war_store_source_reuse    a tile is bulk-stored, then rewritten for the next run. Protection:
//                             cp.async.bulk.wait_group.read 0 before the rewrite (seed §19.4).
//   release_acquire_mbarrier  a warp writes data, arrives on an mbarrier; another warp waits and
//                             reads the data. Unprotected: arrive.relaxed + try_wait.relaxed;
//                             protected: arrive.release + try_wait.acquire (seed §17.3).
//
// Every trial's expected bytes are a hash of (seed, block, run, word), so a stale or foreign
// value is always a mismatch; results are checked by a second kernel after the first has ended
// (a kernel boundary makes every write visible), or in the kernel where the read itself is the
// hazard. Only the protected runs are expected to be clean: an unprotected run that shows no
// failure means only that this hardware did not show one in that many trials.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hopper/ptx.cuh"

namespace hopper::kernels::hazard_lab {

enum class hazard_case {
  raw_proxy_bulk_store,
  raw_proxy_dsmem_copy,
  war_refill_before_release,
  war_store_source_reuse,
  release_acquire_mbarrier,
};

inline const char* case_name(hazard_case c) {
  switch (c) {
    case hazard_case::raw_proxy_bulk_store: return "raw_proxy_bulk_store";
    case hazard_case::raw_proxy_dsmem_copy: return "raw_proxy_dsmem_copy";
    case hazard_case::war_refill_before_release: return "war_refill_before_release";
    case hazard_case::war_store_source_reuse: return "war_store_source_reuse";
    case hazard_case::release_acquire_mbarrier: return "release_acquire_mbarrier";
  }
  return "?";
}

struct config {
  bool protect = true;         // with the protection (fence, wait, release/acquire) or without
  int blocks = 264;            // concurrent trials per run (2 per SM on an H200); even for dsmem
  int runs = 64;               // runs per block; trials = blocks * runs
  int tile_bytes = 4096;       // bytes per tile, multiple of 16, 16..16384
  int consumer_delay = 0;      // war_refill: spin cycles between a consumer's reads (work on data)
  uint64_t seed = 1;
  bool plant_fault = false;    // the checker expects the complement of every word: every trial fails
                               // and every word of it is counted wrong
};

struct result {
  uint64_t trials = 0;
  uint64_t failures = 0;        // trials with at least one wrong word: never more than trials
  uint64_t words = 0;           // words each trial checks (tile_bytes / 4)
  uint64_t wrong_words = 0;     // wrong words over all trials: never more than trials * words
};

// The two counters a case's kernels add to (one allocation, zeroed before the launch).
struct counters {
  unsigned long long failed_trials;
  unsigned long long wrong_words;
};

constexpr int kThreads = 128;  // 4 warps per block in every case

// The expected 32-bit word i of run `run` in block `block`: a hash, never equal for nearby inputs.
__host__ __device__ inline uint32_t pattern(uint64_t seed, uint32_t block, uint32_t run, uint32_t i) {
  uint64_t x = seed ^ (uint64_t(block) << 40) ^ (uint64_t(run) << 20) ^ uint64_t(i);
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return uint32_t(x ^ (x >> 31));
}

namespace detail {

__device__ __forceinline__ void spin_cycles(int cycles) {
  if (cycles <= 0) return;
  const long long until = clock64() + cycles;
  while (clock64() < until) {
  }
}

// Adds this thread's wrong words to the total (no atomic when there are none).
__device__ __forceinline__ void count_words(counters* c, int wrong) {
  if (wrong != 0) atomicAdd(&c->wrong_words, (unsigned long long)wrong);
}

// Counts each (block, run) slot of `out` that differs from pattern(seed, block, run, .) ^ expect_xor
// in any word as one failed trial, and every differing word. One CTA per slot; blockIdx.x =
// block * runs + run.
__global__ void check_slots(const uint32_t* out, int runs, int words, uint64_t seed, uint32_t expect_xor,
                            counters* c) {
  const uint32_t slot = blockIdx.x;
  const uint32_t block = slot / uint32_t(runs), run = slot % uint32_t(runs);
  const uint32_t* s = out + size_t(slot) * size_t(words);
  int wrong = 0;
  for (int i = threadIdx.x; i < words; i += blockDim.x)
    wrong += s[i] != (pattern(seed, block, run, uint32_t(i)) ^ expect_xor);
  count_words(c, wrong);
  if (__syncthreads_or(wrong) && threadIdx.x == 0) atomicAdd(&c->failed_trials, 1ull);
}

// raw_proxy_bulk_store: generic writes of a tile, then an async-proxy read of it (bulk store).
template <bool Protect>
__global__ void __launch_bounds__(kThreads) raw_proxy_bulk_store(uint32_t* out, int runs, int words, uint64_t seed) {
  extern __shared__ __align__(128) uint32_t tile[];
  for (int r = 0; r < runs; ++r) {
    for (int i = threadIdx.x; i < words; i += blockDim.x) tile[i] = pattern(seed, blockIdx.x, uint32_t(r), uint32_t(i));
    if constexpr (Protect) ptx::fence_proxy_async_shared_cta();  // each writer, before the sync
    __syncthreads();
    if (threadIdx.x == 0) {
      ptx::cp_async_bulk_global_shared_cta(out + (size_t(blockIdx.x) * runs + r) * size_t(words), tile,
                                           uint32_t(words) * 4u);
      ptx::cp_async_bulk_commit_group();
      ptx::cp_async_bulk_wait_group_read<0>();  // the next run's writes must not be the hazard here
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) ptx::cp_async_bulk_wait_group<0>();
}

// raw_proxy_dsmem_copy: the same with a bulk copy into the peer CTA's shared memory (cluster of
// 2: CTA 0 sends to CTA 1, which copies what it received to global memory for the check).
template <bool Protect>
__global__ void __launch_bounds__(kThreads) raw_proxy_dsmem_copy(uint32_t* out, int runs, int words, uint64_t seed) {
  extern __shared__ __align__(128) uint32_t smem[];
  uint32_t* tile = smem;           // CTA 0: the source
  uint32_t* inbox = smem + words;  // CTA 1: the destination
  __shared__ __align__(8) uint64_t landed;
  const uint32_t rank = ptx::cluster_ctarank();
  const uint32_t pair = blockIdx.x / 2;
  const uint32_t bytes = uint32_t(words) * 4u;
  if (rank == 1 && threadIdx.x == 0) {
    ptx::mbarrier_init(&landed, 1);
    ptx::mbarrier_arrive_expect_tx(&landed, bytes);  // armed for run 0
    ptx::fence_mbarrier_init_release_cluster();      // the peer's copy engine signals it
  }
  ptx::barrier_cluster_arrive_aligned();
  ptx::barrier_cluster_wait_aligned();
  const uint32_t peer_inbox = ptx::mapa_shared_cluster(inbox, 1);
  const uint32_t peer_landed = ptx::mapa_shared_cluster(&landed, 1);
  for (int r = 0; r < runs; ++r) {
    if (rank == 0) {
      for (int i = threadIdx.x; i < words; i += blockDim.x) tile[i] = pattern(seed, pair, uint32_t(r), uint32_t(i));
      if constexpr (Protect) ptx::fence_proxy_async_shared_cta();
      __syncthreads();
      if (threadIdx.x == 0) ptx::cp_async_bulk_shared_cluster_shared_cta(peer_inbox, tile, bytes, peer_landed);
    } else {
      if (threadIdx.x == 0) {
        while (!ptx::mbarrier_try_wait_parity(&landed, uint32_t(r & 1))) {
        }
      }
      __syncthreads();
      uint32_t* o = out + (size_t(pair) * runs + r) * size_t(words);
      for (int i = threadIdx.x; i < words; i += blockDim.x) o[i] = inbox[i];
      __syncthreads();  // inbox read before the next copy is armed
      if (threadIdx.x == 0 && r + 1 < runs) ptx::mbarrier_arrive_expect_tx(&landed, bytes);
    }
    // CTA 0 rewrites its tile only after CTA 1 saw the copy complete (source read included).
    ptx::barrier_cluster_arrive_aligned();
    ptx::barrier_cluster_wait_aligned();
  }
}

// war_refill_before_release: warp 0 lane 0 is the producer, warps 1..3 the consumers.
template <bool Protect>
__global__ void __launch_bounds__(kThreads) war_refill_before_release(const uint32_t* first, const uint32_t* refill,
                                                                      const uint32_t* reference, int runs, int words, int delay,
                                                                      counters* c) {
  extern __shared__ __align__(128) uint32_t stage[];
  __shared__ __align__(8) uint64_t full, empty, refilled;
  constexpr int kConsumers = kThreads - 32;
  const uint32_t bytes = uint32_t(words) * 4u;
  const uint32_t* a = first + size_t(blockIdx.x) * words;
  const uint32_t* b = refill + size_t(blockIdx.x) * words;
  const uint32_t* ref = reference + size_t(blockIdx.x) * words;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::mbarrier_init(&empty, kConsumers);
    ptx::mbarrier_init(&refilled, 1);
    ptx::fence_mbarrier_init_release_cluster();  // the copy engine signals full and refilled
  }
  __syncthreads();
  for (int r = 0; r < runs; ++r) {
    const uint32_t parity = uint32_t(r & 1);
    if (threadIdx.x == 0) {
      ptx::mbarrier_arrive_expect_tx(&full, bytes);
      ptx::cp_async_bulk_shared_cluster_global(stage, a, bytes, &full);
      while (!ptx::mbarrier_try_wait_parity(&full, parity)) {
      }
      if constexpr (Protect) {
        while (!ptx::mbarrier_try_wait_parity(&empty, parity)) {
        }
      }
      ptx::mbarrier_arrive_expect_tx(&refilled, bytes);
      ptx::cp_async_bulk_shared_cluster_global(stage, b, bytes, &refilled);
      while (!ptx::mbarrier_try_wait_parity(&refilled, parity)) {
      }
    }
    int wrong = 0;  // the producer warp checks nothing
    if (threadIdx.x >= 32) {
      while (!ptx::mbarrier_try_wait_parity(&full, parity)) {
      }
      for (int i = int(threadIdx.x) - 32; i < words; i += kConsumers) {
        wrong += stage[i] != ref[i];  // read-only global data: what the first copy brought
        detail::spin_cycles(delay);
      }
      ptx::mbarrier_arrive(&empty);  // release: the reads above happen before the refill
      count_words(c, wrong);
    }
    // The run is over (the refill has landed, every read is done); the trial failed if any of the
    // 96 consumers saw a wrong word, and it is counted once.
    if (__syncthreads_or(wrong) && threadIdx.x == 0) atomicAdd(&c->failed_trials, 1ull);
  }
}

// war_store_source_reuse: a tile bulk-stored per run, rewritten by the next run.
template <bool Protect>
__global__ void __launch_bounds__(kThreads) war_store_source_reuse(uint32_t* out, int runs, int words, uint64_t seed) {
  extern __shared__ __align__(128) uint32_t tile[];
  for (int r = 0; r < runs; ++r) {
    for (int i = threadIdx.x; i < words; i += blockDim.x) tile[i] = pattern(seed, blockIdx.x, uint32_t(r), uint32_t(i));
    ptx::fence_proxy_async_shared_cta();  // the RAW side is protected in both variants
    __syncthreads();
    if (threadIdx.x == 0) {
      ptx::cp_async_bulk_global_shared_cta(out + (size_t(blockIdx.x) * runs + r) * size_t(words), tile,
                                           uint32_t(words) * 4u);
      ptx::cp_async_bulk_commit_group();
      if constexpr (Protect) ptx::cp_async_bulk_wait_group_read<0>();
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) ptx::cp_async_bulk_wait_group<0>();
}

// release_acquire_mbarrier: warp 1 writes `words` words, arrives (32 lanes); warp 2 waits and
// reads. The data lives in shared memory; every run writes new values. The reader expects
// pattern ^ expect_xor (all ones for a planted fault).
template <bool Protect>
__global__ void __launch_bounds__(kThreads) release_acquire_mbarrier(int runs, int words, uint64_t seed,
                                                                     uint32_t expect_xor, counters* c) {
  extern __shared__ __align__(128) uint32_t data[];
  __shared__ __align__(8) uint64_t flag;
  constexpr auto kArrive = Protect ? ptx::sem::release : ptx::sem::relaxed;
  constexpr auto kWait = Protect ? ptx::sem::acquire : ptx::sem::relaxed;
  if (threadIdx.x == 0) ptx::mbarrier_init(&flag, 32);
  __syncthreads();
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  for (int r = 0; r < runs; ++r) {
    if (warp == 1) {
      volatile uint32_t* d = data;  // each store issued as written, not merged or delayed
      for (int i = lane; i < words; i += 32) d[i] = pattern(seed, blockIdx.x, uint32_t(r), uint32_t(i));
      ptx::mbarrier_arrive<kArrive, ptx::scope::cta>(&flag);
    }
    int wrong = 0;  // only warp 2 checks
    if (warp == 2) {
      while (!ptx::mbarrier_try_wait_parity<kWait, ptx::scope::cta>(&flag, uint32_t(r & 1))) {
      }
      volatile const uint32_t* d = data;
      for (int i = lane; i < words; i += 32)
        wrong += d[i] != (pattern(seed, blockIdx.x, uint32_t(r), uint32_t(i)) ^ expect_xor);
      count_words(c, wrong);
    }
    // Next run: the reads are over before the next writes. The trial failed if any of the 32
    // reading lanes saw a wrong word, and it is counted once.
    if (__syncthreads_or(wrong) && threadIdx.x == 0) atomicAdd(&c->failed_trials, 1ull);
  }
}

inline void validate(hazard_case c, const config& k) {
  auto bad = [&](const std::string& what) {
    throw std::invalid_argument(std::string("hazard_lab ") + case_name(c) + ": " + what);
  };
  if (k.blocks < 1 || k.blocks > 65535) bad("blocks " + std::to_string(k.blocks) + " not in 1..65535");
  if (c == hazard_case::raw_proxy_dsmem_copy && k.blocks % 2 != 0)
    bad("blocks " + std::to_string(k.blocks) + " is odd (clusters of 2)");
  if (k.runs < 1 || k.runs > 100000) bad("runs " + std::to_string(k.runs) + " not in 1..100000");
  if (k.tile_bytes < 16 || k.tile_bytes > 16384 || k.tile_bytes % 16 != 0)
    bad("tile_bytes " + std::to_string(k.tile_bytes) + " not a multiple of 16 in 16..16384");
  if (k.consumer_delay < 0 || k.consumer_delay > 100000)
    bad("consumer_delay " + std::to_string(k.consumer_delay) + " not in 0..100000");
  const double out_bytes = double(k.blocks) * k.runs * k.tile_bytes;
  if (out_bytes > double(1u << 30)) bad("blocks*runs*tile_bytes = " + std::to_string(out_bytes) + " bytes > 1 GiB");
}

}  // namespace detail

// Runs one case (protected or not) and counts its failures. Throws std::invalid_argument on a
// bad config; returns the first CUDA error (result left partial) otherwise cudaSuccess.
inline cudaError_t run(hazard_case c, const config& k, result* res) {
  detail::validate(c, k);
  *res = result{};
  // A dsmem trial is one cluster of 2 (one copy) per run.
  res->trials = uint64_t(c == hazard_case::raw_proxy_dsmem_copy ? k.blocks / 2 : k.blocks) * uint64_t(k.runs);
  int words = k.tile_bytes / 4;
  res->words = uint64_t(words);
  const size_t slot_bytes = size_t(k.tile_bytes);
  // A planted fault: the checker expects the complement, so every word of every trial is wrong.
  const uint32_t expect_xor = k.plant_fault ? 0xFFFFFFFFu : 0u;
  counters* d_fail = nullptr;
  uint32_t* d_out = nullptr;
  uint32_t* d_src = nullptr;
  cudaError_t e = cudaMalloc(&d_fail, sizeof(counters));
  auto finish = [&](cudaError_t err) {
    if (err == cudaSuccess) err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    counters f{0, 0};
    if (err == cudaSuccess) err = cudaMemcpy(&f, d_fail, sizeof f, cudaMemcpyDeviceToHost);
    res->failures = f.failed_trials;
    res->wrong_words = f.wrong_words;
    if (d_fail) cudaFree(d_fail);
    if (d_out) cudaFree(d_out);
    if (d_src) cudaFree(d_src);
    return err;
  };
  if (e != cudaSuccess) return finish(e);
  if ((e = cudaMemset(d_fail, 0, sizeof(counters))) != cudaSuccess) return finish(e);
  const size_t smem = slot_bytes;
  auto prep = [&](const void* fn, size_t bytes) { return cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)); };
  switch (c) {
    case hazard_case::raw_proxy_bulk_store:
    case hazard_case::war_store_source_reuse: {
      const size_t out_bytes = size_t(k.blocks) * k.runs * slot_bytes;
      if ((e = cudaMalloc(&d_out, out_bytes)) != cudaSuccess) return finish(e);
      if ((e = cudaMemset(d_out, 0xA5, out_bytes)) != cudaSuccess) return finish(e);  // poison
      const void* fn;
      if (c == hazard_case::raw_proxy_bulk_store)
        fn = k.protect ? (const void*)detail::raw_proxy_bulk_store<true> : (const void*)detail::raw_proxy_bulk_store<false>;
      else
        fn = k.protect ? (const void*)detail::war_store_source_reuse<true> : (const void*)detail::war_store_source_reuse<false>;
      if ((e = prep(fn, smem)) != cudaSuccess) return finish(e);
      int runs = k.runs;
      uint64_t seed = k.seed;
      void* args[] = {&d_out, &runs, &words, &seed};
      if ((e = cudaLaunchKernel(fn, dim3(k.blocks), dim3(kThreads), args, smem, 0)) != cudaSuccess) return finish(e);
      if ((e = cudaGetLastError()) != cudaSuccess) return finish(e);
      detail::check_slots<<<unsigned(k.blocks) * unsigned(k.runs), 128>>>(d_out, k.runs, words, k.seed, expect_xor, d_fail);
      return finish(cudaSuccess);
    }
    case hazard_case::raw_proxy_dsmem_copy: {
      const int pairs = k.blocks / 2;
      const size_t out_bytes = size_t(pairs) * k.runs * slot_bytes;
      if ((e = cudaMalloc(&d_out, out_bytes)) != cudaSuccess) return finish(e);
      if ((e = cudaMemset(d_out, 0xA5, out_bytes)) != cudaSuccess) return finish(e);
      const void* fn = k.protect ? (const void*)detail::raw_proxy_dsmem_copy<true>
                                 : (const void*)detail::raw_proxy_dsmem_copy<false>;
      if ((e = prep(fn, 2 * smem)) != cudaSuccess) return finish(e);
      cudaLaunchConfig_t lc{};
      lc.gridDim = dim3(unsigned(k.blocks));
      lc.blockDim = dim3(kThreads);
      lc.dynamicSmemBytes = 2 * smem;
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = 2;
      at[0].val.clusterDim.y = 1;
      at[0].val.clusterDim.z = 1;
      lc.attrs = at;
      lc.numAttrs = 1;
      int runs = k.runs;
      uint64_t seed = k.seed;
      void* args[] = {&d_out, &runs, &words, &seed};
      if ((e = cudaLaunchKernelExC(&lc, fn, args)) != cudaSuccess) return finish(e);
      if ((e = cudaGetLastError()) != cudaSuccess) return finish(e);
      detail::check_slots<<<unsigned(pairs) * unsigned(k.runs), 128>>>(d_out, k.runs, words, k.seed, expect_xor, d_fail);
      return finish(cudaSuccess);
    }
    case hazard_case::war_refill_before_release: {
      const size_t src_bytes = size_t(k.blocks) * slot_bytes;
      if ((e = cudaMalloc(&d_src, 2 * src_bytes)) != cudaSuccess) return finish(e);
      // first[] = pattern(seed, block, 0, i), refill[] = its complement: every word differs.
      std::vector<uint32_t> h(2 * src_bytes / 4);
      for (int b = 0; b < k.blocks; ++b)
        for (int i = 0; i < words; ++i) {
          const uint32_t v = pattern(k.seed, uint32_t(b), 0, uint32_t(i));
          h[size_t(b) * words + i] = v;
          h[src_bytes / 4 + size_t(b) * words + i] = ~v;
        }
      if ((e = cudaMemcpy(d_src, h.data(), 2 * src_bytes, cudaMemcpyHostToDevice)) != cudaSuccess) return finish(e);
      const void* fn = k.protect ? (const void*)detail::war_refill_before_release<true>
                                 : (const void*)detail::war_refill_before_release<false>;
      if ((e = prep(fn, smem)) != cudaSuccess) return finish(e);
      const uint32_t* first = d_src;
      const uint32_t* refill = d_src + src_bytes / 4;
      int runs = k.runs, delay = k.consumer_delay;
      // The consumers expect first[] ^ expect_xor: for a planted fault that is refill[].
      const uint32_t* reference = k.plant_fault ? refill : first;
      void* args[] = {&first, &refill, &reference, &runs, &words, &delay, &d_fail};
      if ((e = cudaLaunchKernel(fn, dim3(k.blocks), dim3(kThreads), args, smem, 0)) != cudaSuccess) return finish(e);
      return finish(cudaSuccess);
    }
    case hazard_case::release_acquire_mbarrier: {
      const void* fn = k.protect ? (const void*)detail::release_acquire_mbarrier<true>
                                 : (const void*)detail::release_acquire_mbarrier<false>;
      if ((e = prep(fn, smem)) != cudaSuccess) return finish(e);
      int runs = k.runs;
      uint64_t seed = k.seed;
      uint32_t xor_mask = expect_xor;
      void* args[] = {&runs, &words, &seed, &xor_mask, &d_fail};
      if ((e = cudaLaunchKernel(fn, dim3(k.blocks), dim3(kThreads), args, smem, 0)) != cudaSuccess) return finish(e);
      return finish(cudaSuccess);
    }
  }
  return finish(cudaErrorInvalidValue);
}

}  // namespace hopper::kernels::hazard_lab
