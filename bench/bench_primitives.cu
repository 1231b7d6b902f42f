// What each asynchronous primitive costs on this GPU: mbarrier arrive/wait round
// trips, try_wait vs test_wait, the suspend-time hint, arrive with a count, arrive_drop, remote
// arrives across a cluster, many warps on one barrier; barrier.cluster by cluster size; bar.sync
// by thread count vs __syncthreads; fences at each scope; cp.async.bulk and TMA load latency by
// size vs an ordinary load; wait_group / wait_group.read; DSMEM latency and bandwidth vs shared
// memory and L2.
//
// A CUDA event is far too coarse for one operation of 20-2000 cycles, so every figure is taken
// inside the kernel: one thread reads clock64 (SM cycles) and %globaltimer (ns) around a loop of
// `reps` operations, and the per-operation figure is the loop's time / reps. Each benchmark
// launches its kernel `kSamples` times after a warm-up launch and reports the median, min and
// max over those launches (Google Benchmark counters; the manual time is the median loop time).
// Anchors measured in this same process: an ordinary dependent load from shared memory, L2 and
// DRAM (the figures a copy is compared with), __syncthreads (for bar.sync).
//
// Prints:  SUMMARY prim <name> <cycles> cycles <ns> ns   (median per operation)
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "hopper/objects/tensor_map.hpp"
#include "hopper/ptx.cuh"

namespace {

namespace ptx = hopper::ptx;
using ptx::scope;
using ptx::sem;

constexpr int kSamples = 31;  // launches per benchmark (after one warm-up launch)

// What the timed thread writes: the loop's SM cycles and nanoseconds, plus a sink that keeps the
// measured results alive (the compiler may not drop a load whose value is stored).
struct timing {
  long long cycles;
  unsigned long long ns;
  unsigned long long sink;
};

struct clock_pair {
  long long c;
  unsigned long long t;
};

__device__ __forceinline__ clock_pair now() { return {clock64(), ptx::globaltimer()}; }

__device__ __forceinline__ void record(timing* out, clock_pair a, clock_pair b, unsigned long long sink = 0) {
  out->cycles = b.c - a.c;
  out->ns = b.t - a.t;
  out->sink = sink;
}

__device__ __forceinline__ void init_fenced(uint64_t* bar, uint32_t count) {
  ptx::mbarrier_init(bar, count);
  ptx::fence_mbarrier_init_release_cluster();
}

// ---- waits used by the round-trip kernels ------------------------------------------------
enum wait_kind : int { try_wait = 0, test_wait = 1, try_wait_hint = 2 };

template <int W, scope SC = scope::cta>
__device__ __forceinline__ void wait_parity(uint64_t* bar, uint32_t parity, uint32_t hint_ns) {
  if constexpr (W == try_wait) {
    while (!ptx::mbarrier_try_wait_parity<sem::acquire, SC>(bar, parity)) {
    }
  } else if constexpr (W == test_wait) {
    while (!ptx::mbarrier_test_wait_parity<sem::acquire, SC>(bar, parity)) {
    }
  } else {
    while (!ptx::mbarrier_try_wait_parity<sem::acquire, SC>(bar, parity, hint_ns)) {
    }
  }
}

// ---- mbarrier kernels ----------------------------------------------------------------------

// One thread: arrive, then wait for the phase it completed (count 1).
__global__ void k_mbar_self(timing* out, int reps) {
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x != 0) return;
  ptx::mbarrier_init(&bar, 1);
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) {
    ptx::mbarrier_arrive(&bar);
    wait_parity<try_wait>(&bar, uint32_t(i & 1), 0);
  }
  record(out, a, now());
}

// Ping-pong between lane 0 of warp 0 and lane 0 of warp 1: one round trip = two hand-offs.
template <int W>
__global__ void k_mbar_pingpong(timing* out, int reps, uint32_t hint_ns) {
  __shared__ __align__(8) uint64_t ping, pong;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&ping, 1);
    ptx::mbarrier_init(&pong, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const clock_pair a = now();
    for (int i = 0; i < reps; ++i) {
      ptx::mbarrier_arrive(&ping);
      wait_parity<W>(&pong, uint32_t(i & 1), hint_ns);
    }
    record(out, a, now());
  } else if (threadIdx.x == 32) {
    for (int i = 0; i < reps; ++i) {
      wait_parity<W>(&ping, uint32_t(i & 1), hint_ns);
      ptx::mbarrier_arrive(&pong);
    }
  }
}

// The same ping-pong between thread 0 of CTA 0 and thread 0 of CTA 1 of a cluster of 2: each
// arrives on the other's barrier through its .shared::cluster address (remote arrive).
__global__ void k_mbar_remote_pingpong(timing* out, int reps) {
  __shared__ __align__(8) uint64_t inbox;
  const uint32_t rank = ptx::cluster_ctarank();
  if (threadIdx.x == 0) init_fenced(&inbox, 1);
  ptx::barrier_cluster_arrive_aligned();
  ptx::barrier_cluster_wait_aligned();
  const uint32_t peer = ptx::mapa_shared_cluster(&inbox, rank ^ 1u);
  if (threadIdx.x == 0) {
    const clock_pair a = now();
    for (int i = 0; i < reps; ++i) {
      if (rank == 0) {
        ptx::mbarrier_arrive_shared_cluster<sem::release, scope::cluster>(peer);
        wait_parity<try_wait, scope::cluster>(&inbox, uint32_t(i & 1), 0);
      } else {
        wait_parity<try_wait, scope::cluster>(&inbox, uint32_t(i & 1), 0);
        ptx::mbarrier_arrive_shared_cluster<sem::release, scope::cluster>(peer);
      }
    }
    if (rank == 0) record(out, a, now());
  }
  ptx::barrier_cluster_arrive_aligned();  // no CTA exits while its peer may still arrive on it
  ptx::barrier_cluster_wait_aligned();
}

// Count arrivals in one instruction (one thread, count 32) vs 32 lanes arriving once each.
template <bool WholeWarp>
__global__ void k_mbar_count(timing* out, int reps) {
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) ptx::mbarrier_init(&bar, 32);
  __syncwarp();
  __syncthreads();
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) {
    if constexpr (WholeWarp) {
      ptx::mbarrier_arrive(&bar);
    } else {
      if (threadIdx.x == 0) ptx::mbarrier_arrive(&bar, 32u);
    }
    wait_parity<try_wait>(&bar, uint32_t(i & 1), 0);
  }
  if (threadIdx.x == 0) record(out, a, now());
}

// Back-to-back arrivals by one thread on a barrier that never completes (count reps + 1):
// the issue cost of mbarrier.arrive vs mbarrier.arrive_drop (which also lowers later counts).
template <bool Drop>
__global__ void k_mbar_arrive_stream(timing* out, int reps) {
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x != 0) return;
  ptx::mbarrier_init(&bar, uint32_t(reps) + 1u);
  unsigned long long x = 0;
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) x ^= Drop ? ptx::mbarrier_arrive_drop(&bar) : ptx::mbarrier_arrive(&bar);
  const clock_pair b = now();
  record(out, a, b, x);
}

// Every thread of `blockDim.x / 32` warps arrives once per phase, then all wait: the cost of one
// phase as the number of arriving warps grows (throughput of arrivals on one barrier).
__global__ void k_mbar_many(timing* out, int reps) {
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) ptx::mbarrier_init(&bar, blockDim.x);
  __syncthreads();
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) {
    ptx::mbarrier_arrive(&bar);
    wait_parity<try_wait>(&bar, uint32_t(i & 1), 0);
  }
  if (threadIdx.x == 0) record(out, a, now());
}

// ---- barriers -------------------------------------------------------------------------------

// barrier.cluster.arrive.release + wait.acquire by every thread of every CTA of the cluster.
__global__ void k_cluster_barrier(timing* out, int reps) {
  ptx::barrier_cluster_arrive_aligned();
  ptx::barrier_cluster_wait_aligned();
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) {
    ptx::barrier_cluster_arrive_aligned();
    ptx::barrier_cluster_wait_aligned();
  }
  const clock_pair b = now();
  if (threadIdx.x == 0 && ptx::cluster_ctarank() == 0 && blockIdx.x == 0) record(out, a, b);
}

// bar.sync 1, n by the first n threads of the block (the others skip it).
__global__ void k_bar_sync(timing* out, int reps, int n) {
  if (int(threadIdx.x) >= n) return;
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) ptx::bar_sync(1, uint32_t(n));
  if (threadIdx.x == 0) record(out, a, now());
}

// __syncthreads() (bar.sync 0) by the whole block.
__global__ void k_syncthreads(timing* out, int reps) {
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) __syncthreads();
  if (threadIdx.x == 0) record(out, a, now());
}

// ---- fences ---------------------------------------------------------------------------------
enum fence_kind : int {
  f_none,
  f_proxy_async,
  f_proxy_async_shared_cta,
  f_proxy_async_global,
  f_acq_rel_cta,
  f_acq_rel_cluster,
  f_acq_rel_gpu,
  f_acq_rel_sys,
  f_sc_cta,
  f_sc_cluster,
  f_sc_gpu,
  f_sc_sys,
  f_count
};
const char* kFenceNames[f_count] = {"store_only",
                                    "fence.proxy.async",
                                    "fence.proxy.async.shared::cta",
                                    "fence.proxy.async.global",
                                    "fence.acq_rel.cta",
                                    "fence.acq_rel.cluster",
                                    "fence.acq_rel.gpu",
                                    "fence.acq_rel.sys",
                                    "fence.sc.cta",
                                    "fence.sc.cluster",
                                    "fence.sc.gpu",
                                    "fence.sc.sys"};

template <int F>
__device__ __forceinline__ void fence() {
  if constexpr (F == f_proxy_async)
    ptx::fence_proxy_async();
  else if constexpr (F == f_proxy_async_shared_cta)
    ptx::fence_proxy_async_shared_cta();
  else if constexpr (F == f_proxy_async_global)
    ptx::fence_proxy_async_global();
  else if constexpr (F == f_acq_rel_cta)
    ptx::fence_acq_rel<scope::cta>();
  else if constexpr (F == f_acq_rel_cluster)
    ptx::fence_acq_rel<scope::cluster>();
  else if constexpr (F == f_acq_rel_gpu)
    ptx::fence_acq_rel<scope::gpu>();
  else if constexpr (F == f_acq_rel_sys)
    ptx::fence_acq_rel<scope::sys>();
  else if constexpr (F == f_sc_cta)
    ptx::fence_sc<scope::cta>();
  else if constexpr (F == f_sc_cluster)
    ptx::fence_sc<scope::cluster>();
  else if constexpr (F == f_sc_gpu)
    ptx::fence_sc<scope::gpu>();
  else if constexpr (F == f_sc_sys)
    ptx::fence_sc<scope::sys>();
}

// One thread: a shared and a global store (what a fence has to order), then the fence.
template <int F>
__global__ void k_fence(timing* out, unsigned* gbuf, int reps) {
  __shared__ unsigned sbuf[64];
  if (threadIdx.x != 0) return;
  volatile unsigned* s = sbuf;
  volatile unsigned* g = gbuf;
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) {
    s[i & 63] = unsigned(i);
    g[i & 63] = unsigned(i);
    fence<F>();
  }
  record(out, a, now());
}

// ---- loads and copies -----------------------------------------------------------------------

// One thread follows a chain of dependent 4-byte loads: the latency of one load.
// where: 0 shared memory (ld.shared), 1 global through L2 only (ld.global.cg), 2 DSMEM (the
// same chain in the peer CTA of a cluster of 2, ld.shared::cluster).
template <int Where>
__global__ void k_chase(timing* out, const unsigned* gchain, unsigned start, int reps, int n) {
  extern __shared__ unsigned schain[];
  if constexpr (Where != 1) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) schain[i] = unsigned((i + 33) % n);
  }
  if constexpr (Where == 2) {
    ptx::barrier_cluster_arrive_aligned();
    ptx::barrier_cluster_wait_aligned();
  } else {
    __syncthreads();
  }
  if (threadIdx.x == 0 && (Where != 2 || ptx::cluster_ctarank() == 0)) {
    unsigned idx = start % unsigned(n);
    const uint32_t peer = Where == 2 ? ptx::mapa_shared_cluster(schain, 1) : 0u;
    volatile unsigned* vs = schain;
    const clock_pair a = now();
    for (int i = 0; i < reps; ++i) {
      if constexpr (Where == 0)
        idx = vs[idx];
      else if constexpr (Where == 1)
        idx = __ldcg(gchain + idx);
      else
        idx = ptx::ld_shared_cluster_u32(peer + idx * 4u);
    }
    record(out, a, now(), idx);
  }
  if constexpr (Where == 2) {
    ptx::barrier_cluster_arrive_aligned();  // the peer's chain stays until the reader is done
    ptx::barrier_cluster_wait_aligned();
  }
}

// One thread: arrive.expect_tx, cp.async.bulk global -> shared of `bytes`, wait for the phase:
// the latency from issue to completion on the mbarrier. Source offsets step by `stride` bytes
// (0: the same bytes every time, L2-resident) through a region of `span` bytes.
__global__ void k_bulk_load(timing* out, const uint8_t* src, uint32_t bytes, size_t stride, size_t span, size_t start,
                            int reps) {
  extern __shared__ __align__(128) uint8_t dst[];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x != 0) return;
  init_fenced(&bar, 1);
  // Offsets stay in [0, span - bytes). The step is an add and a compare-subtract (stride < span -
  // bytes), not a modulo: a division's few dozen dependent cycles would sit between one copy's
  // completion and the next issue and be counted as latency.
  const size_t limit = span - bytes;
  size_t off = (start % span) % limit;
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) {
    ptx::mbarrier_arrive_expect_tx(&bar, bytes);
    ptx::cp_async_bulk_shared_cluster_global(dst, src + off, bytes, &bar);
    wait_parity<try_wait>(&bar, uint32_t(i & 1), 0);
    off += stride;
    if (off >= limit) off -= limit;
    off &= ~size_t(15);
  }
  const clock_pair b = now();
  record(out, a, b, reinterpret_cast<volatile uint8_t*>(dst)[0]);
}

// One thread: a 2-D TMA box load (cp.async.bulk.tensor.2d) of the same L2-resident box, issue
// to completion on the mbarrier.
__global__ void k_tma_load(timing* out, const __grid_constant__ hopper::tensor_map map, int reps) {
  extern __shared__ __align__(128) uint8_t raw[];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x != 0) return;
  // The box must be 128-byte aligned in shared memory; the launch gives 1 KiB of slack.
  uint8_t* box = raw + ((128u - (ptx::smem_addr(raw) & 127u)) & 127u);
  init_fenced(&bar, 1);
  const uint32_t bytes = map.box_bytes();
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) {
    ptx::mbarrier_arrive_expect_tx(&bar, bytes);
    ptx::cp_async_bulk_tensor_shared_cluster_global(box, map, &bar, 0, 0);
    wait_parity<try_wait>(&bar, uint32_t(i & 1), 0);
  }
  const clock_pair b = now();
  record(out, a, b, reinterpret_cast<volatile uint8_t*>(box)[0]);
}

// One thread: bulk store shared -> global of `bytes`, commit, then wait_group 0 (Mode 0: until
// the writes are done) or wait_group.read 0 (Mode 1: until the source was read); Mode 2: a
// wait_group 0 with nothing pending.
template <int Mode>
__global__ void k_bulk_store_wait(timing* out, uint8_t* dst, uint32_t bytes, int reps) {
  extern __shared__ __align__(128) uint8_t src[];
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) src[i] = uint8_t(i);
  ptx::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x != 0) return;
  const clock_pair a = now();
  for (int i = 0; i < reps; ++i) {
    if constexpr (Mode != 2) {
      ptx::cp_async_bulk_global_shared_cta(dst, src, bytes);
      ptx::cp_async_bulk_commit_group();
    }
    if constexpr (Mode == 1)
      ptx::cp_async_bulk_wait_group_read<0>();
    else
      ptx::cp_async_bulk_wait_group<0>();
  }
  const clock_pair b = now();
  ptx::cp_async_bulk_wait_group<0>();
  record(out, a, b);
}

// Bandwidth: every thread loads 8-byte words in a loop from (0) its own CTA's shared memory,
// (1) L2 (ld.global.cg over a per-CTA 256 KiB window), (2) the peer CTA's shared memory (DSMEM,
// cluster of 2). CTA 0's thread 0 times the loop between two block barriers.
template <int Where>
__global__ void k_bandwidth(timing* out, const unsigned long long* g, int reps) {
  constexpr int kWords = 4096;  // 32 KiB of shared memory
  __shared__ __align__(16) unsigned long long s[kWords];
  for (int i = threadIdx.x; i < kWords; i += blockDim.x) s[i] = 0x0101010101010101ull * unsigned(i);
  if constexpr (Where == 2) {
    ptx::barrier_cluster_arrive_aligned();
    ptx::barrier_cluster_wait_aligned();
  } else {
    __syncthreads();
  }
  const uint32_t peer = Where == 2 ? ptx::mapa_shared_cluster(s, ptx::cluster_ctarank() ^ 1u) : 0u;
  const unsigned long long* gw = g + size_t(blockIdx.x % 64) * (256 * 1024 / 8);
  volatile unsigned long long* vs = s;
  unsigned long long x = 0;
  __syncthreads();
  const clock_pair a = now();
  for (int r = 0; r < reps; ++r) {
    const int i = (int(threadIdx.x) + r * 32) & (kWords - 1);
    if constexpr (Where == 0)
      x += vs[i];
    else if constexpr (Where == 1)
      x += __ldcg(gw + ((int(threadIdx.x) + r * int(blockDim.x)) & (32 * 1024 - 1)));
    else
      x += ptx::ld_shared_cluster_u64(peer + uint32_t(i) * 8u);
  }
  __syncthreads();
  const clock_pair b = now();
  if (blockIdx.x == 0 && threadIdx.x == 0)
    record(out, a, b, x);
  else if (x == 0x1234567)
    out->sink = x;  // keeps x alive; never true for these data
  if constexpr (Where == 2) {
    ptx::barrier_cluster_arrive_aligned();
    ptx::barrier_cluster_wait_aligned();
  }
}

// ---- host side ------------------------------------------------------------------------------

struct figures {
  double cycles = 0, cycles_min = 0, cycles_max = 0, ns = 0, ns_min = 0, ns_max = 0;
};

timing* g_timing = nullptr;  // device slot the timed thread writes

// Launches `launch` once to warm up, then kSamples times; per-operation figures = loop / per.
figures sample(const std::function<void(int)>& launch, double per) {
  std::vector<double> c, t;
  for (int s = -1; s < kSamples; ++s) {
    BENCH_CUDA(cudaMemset(g_timing, 0, sizeof(timing)));
    launch(s + 1);
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaDeviceSynchronize());
    timing h{};
    BENCH_CUDA(cudaMemcpy(&h, g_timing, sizeof h, cudaMemcpyDeviceToHost));
    if (s < 0) continue;
    c.push_back(double(h.cycles) / per);
    t.push_back(double(h.ns) / per);
  }
  figures f;
  f.cycles = hopper_bench::median(c);
  f.ns = hopper_bench::median(t);
  f.cycles_min = *std::min_element(c.begin(), c.end());
  f.cycles_max = *std::max_element(c.begin(), c.end());
  f.ns_min = *std::min_element(t.begin(), t.end());
  f.ns_max = *std::max_element(t.begin(), t.end());
  return f;
}

void report(benchmark::State& st, const std::string& name, const figures& f, double per, double bytes_per_op) {
  st.SetIterationTime(std::max(f.ns * per, 1.0) * 1e-9);
  st.counters["cycles"] = f.cycles;
  st.counters["ns"] = f.ns;
  st.counters["cycles_min"] = f.cycles_min;
  st.counters["cycles_max"] = f.cycles_max;
  st.counters["ns_min"] = f.ns_min;
  st.counters["ns_max"] = f.ns_max;
  if (bytes_per_op > 0) {  // bandwidth of CTA 0's SM
    st.counters["bytes_per_cycle_per_SM"] = bytes_per_op / f.cycles;
    st.counters["GBps_per_SM"] = bytes_per_op / f.ns;
  }
  st.SetLabel(name);
  std::printf("SUMMARY prim %s %.1f cycles %.1f ns\n", name.c_str(), f.cycles, f.ns);
}

// Registers one benchmark: `launch(sample_index)` runs the kernel, `per` operations per loop.
void add(const std::string& name, std::function<void(int)> launch, double per, double bytes_per_op = 0) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [name, launch, per, bytes_per_op](benchmark::State& st) {
                                 for (auto _ : st) report(st, name, sample(launch, per), per, bytes_per_op);
                               })
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kNanosecond);
}

// `grid` CTAs of `block` threads in clusters of `cluster` along x. Not copyable: lc.attrs points
// into the object itself.
struct cluster_launch {
  cudaLaunchConfig_t lc{};
  cudaLaunchAttribute at[1]{};
  cluster_launch(int grid, int cluster, int block, size_t smem) {
    lc.gridDim = dim3(unsigned(grid));
    lc.blockDim = dim3(unsigned(block));
    lc.dynamicSmemBytes = smem;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = unsigned(cluster);
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    lc.attrs = at;
    lc.numAttrs = 1;
  }
  cluster_launch(const cluster_launch&) = delete;
  cluster_launch& operator=(const cluster_launch&) = delete;
};

void launch_cluster(const void* fn, int grid, int cluster, int block, size_t smem, void** args) {
  cluster_launch c(grid, cluster, block, smem);
  BENCH_CUDA(cudaLaunchKernelExC(&c.lc, fn, args));
}

// Whether `cluster` CTAs of `block` threads fit at once (16 needs the non-portable attribute).
bool cluster_fits(const void* fn, int cluster, int block) {
  if (cluster > 8 && cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  cluster_launch c(cluster, cluster, block, 0);
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, fn, &c.lc) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

constexpr size_t MiB = size_t(1) << 20;
constexpr size_t kColdSpan = 1024 * MiB;  // > 20x the 50 MiB L2: a fresh offset misses it
uint8_t* g_big = nullptr;                 // kColdSpan bytes
unsigned* g_chain_l2 = nullptr;           // 16 Ki entries (64 KiB): L2-resident
unsigned* g_chain_dram = nullptr;         // in g_big, as 4-byte words
unsigned* g_gbuf = nullptr;
uint8_t* g_store = nullptr;  // bulk store destination (kept apart from the chains)
hopper::tensor_map g_map_small, g_map_large;

// One benchmark per fence kind, in fence_kind order.
template <int... F>
void add_fences(std::integer_sequence<int, F...>) {
  (add(
       std::string("fence/") + kFenceNames[F], [](int) { k_fence<F><<<1, 32>>>(g_timing, g_gbuf, 1000); }, 1000),
   ...);
}

void register_all() {
  // mbarrier
  add(
      "mbarrier/arrive_wait_same_thread", [](int) { k_mbar_self<<<1, 32>>>(g_timing, 2000); }, 2000);
  add(
      "mbarrier/pingpong_across_warps_try_wait", [](int) { k_mbar_pingpong<try_wait><<<1, 64>>>(g_timing, 2000, 0); },
      2000);
  add(
      "mbarrier/pingpong_across_warps_test_wait", [](int) { k_mbar_pingpong<test_wait><<<1, 64>>>(g_timing, 2000, 0); },
      2000);
  for (unsigned hint : {32u, 1000u, 100000u})
    add(
        "mbarrier/pingpong_across_warps_try_wait_hint_" + std::to_string(hint) + "ns",
        [hint](int) { k_mbar_pingpong<try_wait_hint><<<1, 64>>>(g_timing, 500, hint); }, 500);
  add(
      "mbarrier/pingpong_remote_arrive_cluster2",
      [](int) {
        int reps = 2000;
        void* args[] = {&g_timing, &reps};
        launch_cluster((const void*)k_mbar_remote_pingpong, 2, 2, 32, 0, args);
      },
      2000);
  add(
      "mbarrier/arrive_count32_one_thread_then_wait", [](int) { k_mbar_count<false><<<1, 32>>>(g_timing, 2000); },
      2000);
  add(
      "mbarrier/arrive_32_lanes_then_wait", [](int) { k_mbar_count<true><<<1, 32>>>(g_timing, 2000); }, 2000);
  add(
      "mbarrier/arrive_issue", [](int) { k_mbar_arrive_stream<false><<<1, 32>>>(g_timing, 4000); }, 4000);
  add(
      "mbarrier/arrive_drop_issue", [](int) { k_mbar_arrive_stream<true><<<1, 32>>>(g_timing, 4000); }, 4000);
  for (int warps : {1, 2, 4, 8, 16, 32})
    add(
        "mbarrier/phase_all_threads_arrive_warps_" + std::to_string(warps),
        [warps](int) { k_mbar_many<<<1, 32 * warps>>>(g_timing, 1000); }, 1000);

  // barrier.cluster
  for (int n : {1, 2, 4, 8, 16}) {
    const std::string name = "cluster/barrier_cluster_arrive_wait_size_" + std::to_string(n);
    if (!cluster_fits((const void*)k_cluster_barrier, n, 128)) {
      std::printf("SUMMARY prim %s not launchable on this device\n", name.c_str());
      continue;
    }
    add(
        name,
        [n](int) {
          int reps = 1000;
          void* args[] = {&g_timing, &reps};
          launch_cluster((const void*)k_cluster_barrier, n, n, 128, 0, args);
        },
        1000);
  }

  // named barriers
  for (int n : {32, 64, 128, 256, 512, 1024})
    add(
        "named/bar_sync_threads_" + std::to_string(n), [n](int) { k_bar_sync<<<1, 1024>>>(g_timing, 1000, n); }, 1000);
  for (int n : {32, 128, 512, 1024})
    add(
        "named/syncthreads_block_" + std::to_string(n), [n](int) { k_syncthreads<<<1, n>>>(g_timing, 1000); }, 1000);

  // fences
  add_fences(std::make_integer_sequence<int, f_count>{});

  // ordinary dependent loads: the anchors
  add(
      "load/ld_shared_chase", [](int) { k_chase<0><<<1, 128, 4096 * 4>>>(g_timing, nullptr, 0, 2000, 4096); }, 2000);
  add(
      "load/ld_global_cg_chase_L2", [](int) { k_chase<1><<<1, 128>>>(g_timing, g_chain_l2, 0, 2000, 16 * 1024); },
      2000);
  add(
      "load/ld_global_cg_chase_DRAM",
      [](int s) {
        k_chase<1><<<1, 128>>>(g_timing, g_chain_dram, unsigned(s) * 7919u * 1024u, 500, int(kColdSpan / 4));
      },
      500);
  add(
      "load/ld_shared_cluster_chase_DSMEM",
      [](int) {
        int reps = 2000, n = 4096;
        unsigned start = 0;
        const unsigned* none = nullptr;
        void* args[] = {&g_timing, &none, &start, &reps, &n};
        launch_cluster((const void*)k_chase<2>, 2, 2, 128, 4096 * 4, args);
      },
      2000);

  // cp.async.bulk load latency by size: L2-resident and from DRAM
  for (uint32_t bytes = 16; bytes <= 64 * 1024; bytes *= 4) {
    for (int cold = 0; cold < 2; ++cold) {
      const int reps = cold ? 200 : 1000;
      add(
          "bulk/cp_async_bulk_load_" + std::string(cold ? "DRAM_" : "L2_") + std::to_string(bytes) + "B",
          [bytes, cold, reps](int s) {
            const size_t stride = cold ? 4 * MiB + 4096 : 0;
            // Each size starts its walk elsewhere: with one start for all sizes, a cold run met the
            // lines the previous size's cold run had just left in L2 (on the H200 the 64 B cold row,
            // run right after the 16 B one, came out at 619 cycles, minimum 511, near the L2 row).
            const size_t start = size_t(s) * 37 * MiB + size_t(bytes) * 3 * 1024;
            k_bulk_load<<<1, 32, bytes>>>(g_timing, g_big, bytes, stride, kColdSpan, start, reps);
          },
          reps);
    }
  }

  // TMA tensor load latency: 2-D f32 boxes of 32x32 (4 KiB) and 64x64 (16 KiB)
  add(
      "tma/tensor_2d_load_L2_4096B", [](int) { k_tma_load<<<1, 32, 4096 + 1024>>>(g_timing, g_map_small, 1000); },
      1000);
  add(
      "tma/tensor_2d_load_L2_16384B", [](int) { k_tma_load<<<1, 32, 16384 + 1024>>>(g_timing, g_map_large, 1000); },
      1000);

  // bulk groups
  for (uint32_t bytes : {256u, 4096u, 16384u}) {
    add(
        "bulk/store_wait_group_" + std::to_string(bytes) + "B",
        [bytes](int) { k_bulk_store_wait<0><<<1, 128, bytes>>>(g_timing, g_store, bytes, 500); }, 500);
    add(
        "bulk/store_wait_group_read_" + std::to_string(bytes) + "B",
        [bytes](int) { k_bulk_store_wait<1><<<1, 128, bytes>>>(g_timing, g_store, bytes, 500); }, 500);
  }
  add(
      "bulk/wait_group_nothing_pending", [](int) { k_bulk_store_wait<2><<<1, 128, 16>>>(g_timing, g_store, 16, 2000); },
      2000);

  // bandwidth per SM, bytes per cycle: shared, L2, DSMEM. Reported as cycles and ns
  // per 8-byte load per thread-iteration; bytes/cycle/SM = 1024 threads * 8 B / cycles.
  int sms = 0;
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int grid = sms / 2 * 2;
  add(
      "bandwidth/ld_shared_u64_per_iteration_1024_threads",
      [grid](int) {
        k_bandwidth<0><<<grid, 1024>>>(g_timing, reinterpret_cast<const unsigned long long*>(g_big), 2000);
      },
      2000, 1024 * 8);
  add(
      "bandwidth/ld_global_cg_L2_u64_per_iteration_1024_threads",
      [grid](int) {
        k_bandwidth<1><<<grid, 1024>>>(g_timing, reinterpret_cast<const unsigned long long*>(g_big), 2000);
      },
      2000, 1024 * 8);
  add(
      "bandwidth/ld_shared_cluster_u64_per_iteration_1024_threads",
      [grid](int) {
        int reps = 2000;
        const unsigned long long* gp = reinterpret_cast<const unsigned long long*>(g_big);
        void* args[] = {&g_timing, &gp, &reps};
        launch_cluster((const void*)k_bandwidth<2>, grid, 2, 1024, 0, args);
      },
      2000, 1024 * 8);
}

void setup() {
  BENCH_CUDA(cudaMalloc(&g_timing, sizeof(timing)));
  BENCH_CUDA(cudaMalloc(&g_big, kColdSpan));
  BENCH_CUDA(cudaMemset(g_big, 1, kColdSpan));
  BENCH_CUDA(cudaMalloc(&g_gbuf, 64 * sizeof(unsigned)));
  BENCH_CUDA(cudaMalloc(&g_store, MiB));
  BENCH_CUDA(cudaFuncSetAttribute(k_bulk_load, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  BENCH_CUDA(cudaFuncSetAttribute(k_tma_load, cudaFuncAttributeMaxDynamicSharedMemorySize, 16384 + 1024));
  // Chains: next = (i + stride) mod n; the DRAM stride (4 MiB + 4 KiB) lands on a new page each time.
  const int n_l2 = 16 * 1024;
  std::vector<unsigned> h(static_cast<size_t>(n_l2));
  for (int i = 0; i < n_l2; ++i) h[size_t(i)] = unsigned((i + 33 * 32 + 1) % n_l2);
  BENCH_CUDA(cudaMalloc(&g_chain_l2, h.size() * 4));
  BENCH_CUDA(cudaMemcpy(g_chain_l2, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  const size_t n_dram = kColdSpan / 4, step = (4 * MiB + 4096) / 4;
  std::vector<unsigned> d(n_dram);
  for (size_t i = 0; i < n_dram; ++i) d[i] = unsigned((i + step) % n_dram);
  g_chain_dram = reinterpret_cast<unsigned*>(g_big);
  BENCH_CUDA(cudaMemcpy(g_chain_dram, d.data(), kColdSpan, cudaMemcpyHostToDevice));
  // TMA: a 1024 x 1024 f32 tensor over the start of g_big.
  g_map_small = hopper::tensor_map::tiled(hopper::element::f32, g_big).dims({1024, 1024}).box({32, 32}).build();
  g_map_large = hopper::tensor_map::tiled(hopper::element::f32, g_big).dims({1024, 1024}).box({64, 64}).build();
}

}  // namespace

int main(int argc, char** argv) {
  hopper_bench::run_benchmarks(argc, argv, "prim", [] {
    cudaDeviceProp p{};
    BENCH_CUDA(cudaGetDeviceProperties(&p, 0));
    std::printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
    setup();
    register_all();
  });
  return 0;
}
