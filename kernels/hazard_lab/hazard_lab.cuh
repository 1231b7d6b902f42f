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

#include "hopper/objects/views.cuh"
#include "hopper/target/device_target.cuh"
#include "kernels/hazard_lab/hazard_lab_body.hpp"
#include "kernels/hazard_lab/hazard_lab_plan.hpp"

namespace hopper::kernels::hazard_lab {

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

}  // namespace detail

// Runs one case (protected or not) and counts its failures. Throws std::invalid_argument on a
// bad config; returns the first CUDA error (result left partial) otherwise cudaSuccess.
inline cudaError_t run(hazard_case c, const config& k, result* res) {
  const plan p = plan::make(c, k);
  *res = p.empty_result();
  int words = p.words;
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
  if (p.out_bytes != 0) {
    if ((e = cudaMalloc(&d_out, p.out_bytes)) != cudaSuccess) return finish(e);
    if ((e = cudaMemset(d_out, out_poison, p.out_bytes)) != cudaSuccess) return finish(e);
  }
  // The case's kernel with the plan's grid, block, cluster and shared memory.
  auto launch = [&](const void* fn, void** args) {
    cudaError_t err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.smem_bytes));
    if (err != cudaSuccess) return err;
    cudaLaunchConfig_t lc{};
    lc.gridDim = dim3(p.grid);
    lc.blockDim = dim3(p.block);
    lc.dynamicSmemBytes = p.smem_bytes;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = p.cluster;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    lc.attrs = at;
    lc.numAttrs = p.cluster > 1 ? 1 : 0;
    if ((err = cudaLaunchKernelExC(&lc, fn, args)) != cudaSuccess) return err;
    return cudaGetLastError();
  };
  // check_slots over the kernel's output, after it.
  auto check = [&]() {
    detail::check_slots<<<p.check_grid, kThreads>>>(d_out, k.runs, words, k.seed, p.expect_xor, d_fail);
    return finish(cudaSuccess);
  };
  int runs = k.runs;
  uint64_t seed = k.seed;
  switch (c) {
    case hazard_case::raw_proxy_bulk_store:
    case hazard_case::war_store_source_reuse: {
      const void* fn;
      if (c == hazard_case::raw_proxy_bulk_store)
        fn = k.protect ? (const void*)detail::raw_proxy_bulk_store<true>
                       : (const void*)detail::raw_proxy_bulk_store<false>;
      else
        fn = k.protect ? (const void*)detail::war_store_source_reuse<true>
                       : (const void*)detail::war_store_source_reuse<false>;
      void* args[] = {&d_out, &runs, &words, &seed};
      if ((e = launch(fn, args)) != cudaSuccess) return finish(e);
      return check();
    }
    case hazard_case::raw_proxy_dsmem_copy: {
      const void* fn = k.protect ? (const void*)detail::raw_proxy_dsmem_copy<true>
                                 : (const void*)detail::raw_proxy_dsmem_copy<false>;
      void* args[] = {&d_out, &runs, &words, &seed};
      if ((e = launch(fn, args)) != cudaSuccess) return finish(e);
      return check();
    }
    case hazard_case::war_refill_before_release: {
      if ((e = cudaMalloc(&d_src, 2 * p.src_bytes)) != cudaSuccess) return finish(e);
      std::vector<uint32_t> h(2 * p.src_bytes / 4);
      p.fill_sources(h.data(), h.data() + p.src_bytes / 4);
      if ((e = cudaMemcpy(d_src, h.data(), 2 * p.src_bytes, cudaMemcpyHostToDevice)) != cudaSuccess) return finish(e);
      const void* fn = k.protect ? (const void*)detail::war_refill_before_release<true>
                                 : (const void*)detail::war_refill_before_release<false>;
      const uint32_t* first = d_src;
      const uint32_t* refill = d_src + p.src_bytes / 4;
      int delay = k.consumer_delay;
      // The consumers expect first[] ^ expect_xor: for a planted fault that is refill[].
      const uint32_t* reference = k.plant_fault ? refill : first;
      void* args[] = {&first, &refill, &reference, &runs, &words, &delay, &d_fail};
      return finish(launch(fn, args));
    }
    case hazard_case::release_acquire_mbarrier: {
      const void* fn = k.protect ? (const void*)detail::release_acquire_mbarrier<true>
                                 : (const void*)detail::release_acquire_mbarrier<false>;
      uint32_t xor_mask = p.expect_xor;
      void* args[] = {&runs, &words, &seed, &xor_mask, &d_fail};
      return finish(launch(fn, args));
    }
  }
  return finish(cudaErrorInvalidValue);
}

}  // namespace hopper::kernels::hazard_lab
