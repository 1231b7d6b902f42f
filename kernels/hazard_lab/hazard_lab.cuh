// The hazard lab: each hazard of asynchronous copies (a stale read across proxies, a refill or a
// reuse while the data is still being read) as a kernel that runs
// many independent trials, once without its protection and once with it, and counts the trials
// whose data came out wrong. A trial is one (block, run) pair (one (cluster, run) pair for the
// DSMEM case); blocks run concurrently on every SM, runs follow each other inside a block. A trial
// fails once however many of its words are wrong (a block-wide OR decides it, one thread counts
// it); the wrong words are counted apart, so the size of a failure is seen as well as its rate.
//
// Cases (hazard_case):
//   raw_proxy_bulk_store      ordinary st.shared fills a tile, bar.sync, one thread bulk-stores it
//                             (cp.async.bulk.global.shared::cta). Protection: every writer issues
//                             fence.proxy.async.shared::cta before the bar.sync.
//   raw_proxy_dsmem_copy      the same tile sent to the peer CTA of a cluster of 2 with
//                             cp.async.bulk.shared::cluster.shared::cta, same fence.
//   war_refill_before_release a producer bulk-loads a stage, then refills it at once while the
//                             consumer warps still read it. Protection: the refill waits for the
//                             consumers' arrivals on the stage's empty barrier.
//   war_store_source_reuse    a tile is bulk-stored, then rewritten for the next run. Protection:
//                             cp.async.bulk.wait_group.read 0 before the rewrite.
//   release_acquire_mbarrier  a warp writes data, arrives on an mbarrier; another warp waits and
//                             reads the data. Unprotected: arrive.relaxed + try_wait.relaxed;
//                             protected: arrive.release + try_wait.acquire.
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

#include "hopper/device_target.cuh"
#include "hopper/views.cuh"
#include "kernels/hazard_lab/hazard_lab_body.hpp"

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
    case hazard_case::raw_proxy_bulk_store:
      return "raw_proxy_bulk_store";
    case hazard_case::raw_proxy_dsmem_copy:
      return "raw_proxy_dsmem_copy";
    case hazard_case::war_refill_before_release:
      return "war_refill_before_release";
    case hazard_case::war_store_source_reuse:
      return "war_store_source_reuse";
    case hazard_case::release_acquire_mbarrier:
      return "release_acquire_mbarrier";
  }
  return "?";
}

struct config {
  bool protect = true;     // with the protection (fence, wait, release/acquire) or without
  int blocks = 264;        // concurrent trials per run (2 per SM on an H200); even for dsmem
  int runs = 64;           // runs per block; trials = blocks * runs
  int tile_bytes = 4096;   // bytes per tile, multiple of 16, 16..16384
  int consumer_delay = 0;  // war_refill: spin cycles between a consumer's reads (work on data)
  uint64_t seed = 1;
  bool plant_fault = false;  // the checker expects the complement of every word: every trial fails
                             // and every word of it is counted wrong
};

struct result {
  uint64_t trials = 0;
  uint64_t failures = 0;     // trials with at least one wrong word: never more than trials
  uint64_t words = 0;        // words each trial checks (tile_bytes / 4)
  uint64_t wrong_words = 0;  // wrong words over all trials: never more than trials * words
};

namespace detail {

// The __global__ entries: each declares its shared memory as the hand-written kernel did (the
// dynamic tile, each mbarrier its own __shared__ variable) and runs its body
// (kernels/hazard_lab/hazard_lab_body.hpp) with the device target. Their SASS is the hand-written kernels',
// byte for byte but for release_acquire_mbarrier (docs/hazard_lab.md, "The model").

// Counts each (block, run) slot of `out` that differs from pattern(seed, block, run, .) ^ expect_xor
// in any word as one failed trial, and every differing word. One CTA per slot; blockIdx.x =
// block * runs + run.
__global__ void check_slots(const uint32_t* out, int runs, int words, uint64_t seed, uint32_t expect_xor, counters* c) {
  device_target t;
  check_slots_body(t, hopper::gmem<const uint32_t>(out), runs, words, seed, expect_xor, hopper::gmem<counters>(c));
}

// raw_proxy_bulk_store: generic writes of a tile, then an async-proxy read of it (bulk store).
template <bool Protect>
__global__ void __launch_bounds__(kThreads) raw_proxy_bulk_store(uint32_t* out, int runs, int words, uint64_t seed) {
  extern __shared__ __align__(128) uint32_t tile[];
  device_target t;
  raw_proxy_bulk_store_body<device_target, Protect>(t, hopper::smem<uint32_t>(tile), hopper::gmem<uint32_t>(out), runs,
                                                    words, seed);
}

// raw_proxy_dsmem_copy: the same with a bulk copy into the peer CTA's shared memory (cluster of
// 2: CTA 0 sends to CTA 1, which copies what it received to global memory for the check).
template <bool Protect>
__global__ void __launch_bounds__(kThreads) raw_proxy_dsmem_copy(uint32_t* out, int runs, int words, uint64_t seed) {
  extern __shared__ __align__(128) uint32_t smem[];  // CTA 0: the tile; CTA 1: the inbox after it
  __shared__ __align__(8) uint64_t landed;
  device_target t;
  raw_proxy_dsmem_copy_body<device_target, Protect>(t, hopper::smem<uint32_t>(smem), {landed},
                                                    hopper::gmem<uint32_t>(out), runs, words, seed);
}

// war_refill_before_release: warp 0 lane 0 is the producer, warps 1..3 the consumers.
template <bool Protect>
__global__ void __launch_bounds__(kThreads)
    war_refill_before_release(const uint32_t* first, const uint32_t* refill, const uint32_t* reference, int runs,
                              int words, int delay, counters* c) {
  extern __shared__ __align__(128) uint32_t stage[];
  __shared__ __align__(8) uint64_t full, empty, refilled;
  device_target t;
  war_refill_before_release_body<device_target, Protect>(
      t, hopper::smem<uint32_t>(stage), {full, empty, refilled}, hopper::gmem<const uint32_t>(first),
      hopper::gmem<const uint32_t>(refill), hopper::gmem<const uint32_t>(reference), runs, words, delay,
      hopper::gmem<counters>(c));
}

// war_store_source_reuse: a tile bulk-stored per run, rewritten by the next run.
template <bool Protect>
__global__ void __launch_bounds__(kThreads) war_store_source_reuse(uint32_t* out, int runs, int words, uint64_t seed) {
  extern __shared__ __align__(128) uint32_t tile[];
  device_target t;
  war_store_source_reuse_body<device_target, Protect>(t, hopper::smem<uint32_t>(tile), hopper::gmem<uint32_t>(out),
                                                      runs, words, seed);
}

// release_acquire_mbarrier: warp 1 writes `words` words, arrives (32 lanes); warp 2 waits and
// reads. The data lives in shared memory; every run writes new values. The reader expects
// pattern ^ expect_xor (all ones for a planted fault).
template <bool Protect>
__global__ void __launch_bounds__(kThreads)
    release_acquire_mbarrier(int runs, int words, uint64_t seed, uint32_t expect_xor, counters* c) {
  extern __shared__ __align__(128) uint32_t data[];
  __shared__ __align__(8) uint64_t flag;
  device_target t;
  release_acquire_mbarrier_body<device_target, Protect>(t, hopper::smem<uint32_t>(data), {flag}, runs, words, seed,
                                                        expect_xor, hopper::gmem<counters>(c));
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
  auto prep = [&](const void* fn, size_t bytes) {
    return cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  };
  switch (c) {
    case hazard_case::raw_proxy_bulk_store:
    case hazard_case::war_store_source_reuse: {
      const size_t out_bytes = size_t(k.blocks) * k.runs * slot_bytes;
      if ((e = cudaMalloc(&d_out, out_bytes)) != cudaSuccess) return finish(e);
      if ((e = cudaMemset(d_out, 0xA5, out_bytes)) != cudaSuccess) return finish(e);  // poison
      const void* fn;
      if (c == hazard_case::raw_proxy_bulk_store)
        fn = k.protect ? (const void*)detail::raw_proxy_bulk_store<true>
                       : (const void*)detail::raw_proxy_bulk_store<false>;
      else
        fn = k.protect ? (const void*)detail::war_store_source_reuse<true>
                       : (const void*)detail::war_store_source_reuse<false>;
      if ((e = prep(fn, smem)) != cudaSuccess) return finish(e);
      int runs = k.runs;
      uint64_t seed = k.seed;
      void* args[] = {&d_out, &runs, &words, &seed};
      if ((e = cudaLaunchKernel(fn, dim3(k.blocks), dim3(kThreads), args, smem, 0)) != cudaSuccess) return finish(e);
      if ((e = cudaGetLastError()) != cudaSuccess) return finish(e);
      detail::check_slots<<<unsigned(k.blocks) * unsigned(k.runs), 128>>>(d_out, k.runs, words, k.seed, expect_xor,
                                                                          d_fail);
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
      detail::check_slots<<<unsigned(pairs) * unsigned(k.runs), 128>>>(d_out, k.runs, words, k.seed, expect_xor,
                                                                       d_fail);
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
