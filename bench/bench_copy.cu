// The streaming copies of kernels/copy/stream_copy.cuh against cudaMemcpyAsync device-to-device, both
// measured in this process by the same method: buffers rotated through a region of at least
// 512 MiB (10x the L2), warm-up, then runs of ours and of memcpy interleaved one by one, each
// between its own pair of CUDA events; the median of each. Bandwidth counts bytes read + written.
//
// Order: first a sweep at 1 GiB (pipeline shapes x store lag for 1-D, then L2 prefetch distance x
// L2 eviction priority x chunk order on a few shapes for each variant; for the st_global store
// path, shapes x store warps x st.global / st.global.cs, and load-side knobs and store hints),
// then every size from 1 MiB to 8 GiB for each variant with the default configuration and with
// the best configuration the sweep found. Variants: 1d, 2d, axpb_bf16 (bulk stores from the TMA
// unit), 1d_st, axpb_st (bulk loads, ordinary st.global from the store warps); 1d_tile,
// axpb_tile: the per-tile schedule (one short-lived CTA per tile of 1-4 chunks of 4-16 KiB),
// swept over chunk bytes x chunks per CTA x stages x store path at 1 GiB, then 256 MiB-8 GiB
// with its default and with its sweep best.
//
// Prints:  RATIO copy <variant> <size> <ours/memcpy> ours=<GB/s> memcpy=<GB/s>
//          SWEEP copy <variant> stages=.. stage_bytes=.. blocks_per_sm=.. store_lag=.. prefetch=..
//                    load_evict=.. store_evict=.. order=.. [warps=..] <ratio>
//          SUMMARY copy <variant> min_ratio_256MiB_up=<x> (and the tuned configuration)
//
// The `why/` probes (bench/copy_probes.cuh) are registered only when --benchmark_filter names
// `why`: the copy taken apart (a plain register copy with no shared memory or TMA, the bulk-load
// read side alone, the bulk-store write side alone, several smaller bulk copies per stage) at
// 256 MiB, 1 GiB and 4 GiB, each interleaved with memcpy like the rest. A probe's bandwidth counts
// what it moves (rw: read + written, r: read, w: written); its ratio is that bandwidth over
// memcpy's read + written bandwidth in the same measurement.
//          RATIO why <probe> <size> <ratio> ours=<GB/s> memcpy=<GB/s> counted=rw|r|w
//          SUMMARY why <size> copy|read|write|split ... (best of each group, side by side)
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/pipeline_stream.cuh"
#include "bench_support.hpp"
#include "copy_presets.hpp"
#include "copy_probes.cuh"
#include "hopper/objects/limits.hpp"
#include "kernels/copy/stream_copy.cuh"

namespace {

using hopper::kernels::chunk_order;
using hopper::kernels::l2_evict;
using hopper::kernels::stream_copy_config;

constexpr size_t MiB = size_t(1) << 20;
constexpr size_t kMinRegion = 512 * MiB;

// One source and one destination region, grown on demand; run i uses slot i % slots of both.
struct regions {
  uint8_t* src = nullptr;
  uint8_t* dst = nullptr;
  size_t bytes = 0;
  void ensure(size_t need) {
    need = std::max(need, kMinRegion);
    if (need <= bytes) return;
    if (src) BENCH_CUDA(cudaFree(src));
    if (dst) BENCH_CUDA(cudaFree(dst));
    BENCH_CUDA(cudaMalloc(&src, need));
    BENCH_CUDA(cudaMalloc(&dst, need));
    BENCH_CUDA(cudaMemset(src, 0x3f, need));  // bf16 0x3f3f: a finite value for the fused kernel
    BENCH_CUDA(cudaMemset(dst, 0, need));
    bytes = need;
  }
} g_regions;

using launcher = std::function<cudaError_t(uint8_t* dst, const uint8_t* src, size_t bytes)>;

struct result {
  double ours_ms, memcpy_ms;
  double ours_gbps(size_t b) const { return 2.0 * double(b) / (ours_ms * 1e6); }
  double memcpy_gbps(size_t b) const { return 2.0 * double(b) / (memcpy_ms * 1e6); }
  double ratio() const { return memcpy_ms / ours_ms; }
};

// Warm-up, then `runs` of ours and of memcpy interleaved, each timed alone; medians.
result measure(size_t bytes, int runs, const launcher& ours) {
  g_regions.ensure(bytes);
  const size_t slots = std::max<size_t>(1, g_regions.bytes / bytes);
  std::vector<cudaEvent_t> ev(4 * size_t(runs));
  for (auto& e : ev) BENCH_CUDA(cudaEventCreate(&e));
  for (int i = 0; i < 3; ++i) {
    const size_t at = (size_t(i) % slots) * bytes;
    BENCH_CUDA(ours(g_regions.dst + at, g_regions.src + at, bytes));
    BENCH_CUDA(cudaMemcpyAsync(g_regions.dst + at, g_regions.src + at, bytes, cudaMemcpyDeviceToDevice));
  }
  for (int i = 0; i < runs; ++i) {
    const size_t at = (size_t(i + 3) % slots) * bytes;
    cudaEvent_t* e = &ev[4 * size_t(i)];
    BENCH_CUDA(cudaEventRecord(e[0]));
    BENCH_CUDA(ours(g_regions.dst + at, g_regions.src + at, bytes));
    BENCH_CUDA(cudaEventRecord(e[1]));
    const size_t at2 = (size_t(i + 4) % slots) * bytes;
    BENCH_CUDA(cudaEventRecord(e[2]));
    BENCH_CUDA(cudaMemcpyAsync(g_regions.dst + at2, g_regions.src + at2, bytes, cudaMemcpyDeviceToDevice));
    BENCH_CUDA(cudaEventRecord(e[3]));
  }
  BENCH_CUDA(cudaDeviceSynchronize());
  std::vector<float> a(runs), m(runs);
  for (int i = 0; i < runs; ++i) {
    BENCH_CUDA(cudaEventElapsedTime(&a[i], ev[4 * size_t(i)], ev[4 * size_t(i) + 1]));
    BENCH_CUDA(cudaEventElapsedTime(&m[i], ev[4 * size_t(i) + 2], ev[4 * size_t(i) + 3]));
  }
  for (auto& e : ev) BENCH_CUDA(cudaEventDestroy(e));
  return {hopper_bench::median(a), hopper_bench::median(m)};
}

int runs_for(size_t bytes) { return bytes <= 64 * MiB ? 100 : (bytes <= 1024 * MiB ? 40 : 20); }

// d1 / axpb: bulk stores from the TMA unit; d1_st / axpb_st: bulk loads, st.global from warps.
enum class variant { d1, d2, axpb, d1_st, axpb_st, d1_tile, axpb_tile };
const char* name(variant v) {
  switch (v) {
    case variant::d1:
      return "1d";
    case variant::d2:
      return "2d";
    case variant::axpb:
      return "axpb_bf16";
    case variant::d1_st:
      return "1d_st";
    case variant::d1_tile:
      return "1d_tile";
    case variant::axpb_tile:
      return "axpb_tile";
    default:
      return "axpb_st";
  }
}
bool st_path(variant v) { return v == variant::d1_st || v == variant::axpb_st; }

launcher make_launcher(variant v, const stream_copy_config& c) {
  switch (v) {
    case variant::d1:
    case variant::d1_st:
    case variant::d1_tile:
      return [c](uint8_t* d, const uint8_t* s, size_t n) { return hopper::kernels::stream_copy_1d(d, s, n, c); };
    case variant::d2:
      // The maps are encoded on the host before the start event is recorded: not timed.
      return [c](uint8_t* d, const uint8_t* s, size_t n) {
        return hopper::kernels::stream_copy_2d_plan::make(d, s, n, c).launch();
      };
    default:
      return [c](uint8_t* d, const uint8_t* s, size_t n) {
        return hopper::kernels::stream_axpb_bf16(reinterpret_cast<__nv_bfloat16*>(d),
                                                 reinterpret_cast<const __nv_bfloat16*>(s), n / 2, 1.5f, -0.25f, c);
      };
  }
}

const char* evict_name(l2_evict e) {
  switch (e) {
    case l2_evict::first:
      return "first";
    case l2_evict::normal:
      return "normal";
    case l2_evict::last:
      return "last";
    default:
      return "none";
  }
}

std::string cfg_str(const stream_copy_config& c, variant v) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "stages=%u stage_bytes=%u blocks_per_sm=%u store_lag=%u prefetch=%u load_evict=%s store_evict=%s "
                "order=%s",
                c.stages, c.stage_bytes, c.blocks_per_sm, c.store_lag, c.prefetch_chunks, evict_name(c.load_policy),
                evict_name(c.store_policy), c.order == chunk_order::contiguous ? "contiguous" : "interleaved");
  std::string s = buf;
  const bool st = c.path == hopper::kernels::store_path::st_global;
  if ((v == variant::axpb || v == variant::axpb_tile) && !st) s += " warps=" + std::to_string(c.transform_warps);
  if (c.sched == hopper::kernels::schedule::per_tile)
    s += " sched=per_tile tile_chunks=" + std::to_string(c.tile_chunks) + (st ? " path=st" : " path=bulk");
  if (st) s += " store_warps=" + std::to_string(c.store_warps) + (c.streaming_store ? " st=cs" : " st=wb");
  return s;
}

// Best sweep configuration per variant (default until the sweep ran) and the worst ratio from
// 256 MiB up per series.
std::map<variant, std::pair<stream_copy_config, double>> g_best;
std::map<std::string, double> g_min_ratio;

// Whether the launcher of variant v takes c: its own checks (kernels/copy/stream_copy_args.hpp).
bool fits(const stream_copy_config& c, variant v) {
  try {
    if (v == variant::d2)
      hopper::kernels::detail::check_copy_2d_args(nullptr, nullptr, 0, c);
    else if (v == variant::axpb)
      hopper::kernels::detail::check_axpb_args(nullptr, nullptr, 0, c);
    else
      hopper::kernels::detail::check_copy_1d_args(nullptr, nullptr, 0, c);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

void sweep_one(benchmark::State& st, variant v, stream_copy_config c) {
  const size_t bytes = 1024 * MiB;
  result r{};
  for (auto _ : st) {
    r = measure(bytes, 20, make_launcher(v, c));
    st.SetIterationTime(r.ours_ms * 1e-3);
  }
  st.counters["GBps"] = r.ours_gbps(bytes);
  st.counters["memcpy_GBps"] = r.memcpy_gbps(bytes);
  st.counters["ratio"] = r.ratio();
  st.counters["bytes"] = double(bytes);
  st.counters["stages"] = c.stages;
  st.counters["stage_bytes"] = c.stage_bytes;
  st.counters["blocks_per_sm"] = c.blocks_per_sm;
  st.counters["store_lag"] = c.store_lag;
  st.counters["transform_warps"] = c.transform_warps;
  st.counters["prefetch_chunks"] = c.prefetch_chunks;
  st.counters["load_evict"] = double(static_cast<unsigned>(c.load_policy));
  st.counters["store_evict"] = double(static_cast<unsigned>(c.store_policy));
  st.counters["contiguous"] = c.order == chunk_order::contiguous ? 1 : 0;
  st.counters["store_warps"] = c.path == hopper::kernels::store_path::st_global ? c.store_warps : 0;
  st.counters["streaming_store"] = c.streaming_store ? 1 : 0;
  st.counters["per_tile"] = c.sched == hopper::kernels::schedule::per_tile ? 1 : 0;
  st.counters["tile_chunks"] = c.tile_chunks;
  st.SetLabel(cfg_str(c, v));
  std::printf("SWEEP copy %s %s %.4f\n", name(v), cfg_str(c, v).c_str(), r.ratio());
  auto it = g_best.find(v);
  if (it == g_best.end() || r.ratio() > it->second.second) g_best[v] = {c, r.ratio()};
}

void size_one(benchmark::State& st, variant v, size_t bytes, bool tuned) {
  const stream_copy_config dflt = v == variant::d1 ? hopper::kernels::stream_copy_1d_bulk_default()
                                  : st_path(v)     ? hopper::kernels::stream_copy_st_global_default()
                                  : v == variant::d1_tile || v == variant::axpb_tile
                                      ? hopper::kernels::stream_copy_per_tile_default()
                                      : stream_copy_config{};
  const stream_copy_config c = tuned && g_best.count(v) ? g_best[v].first : dflt;
  const std::string series = std::string(name(v)) + (tuned ? "_tuned" : "");
  result r{};
  for (auto _ : st) {
    r = measure(bytes, runs_for(bytes), make_launcher(v, c));
    st.SetIterationTime(r.ours_ms * 1e-3);
  }
  st.counters["GBps"] = r.ours_gbps(bytes);
  st.counters["memcpy_GBps"] = r.memcpy_gbps(bytes);
  st.counters["ratio"] = r.ratio();
  st.counters["bytes"] = double(bytes);
  st.SetLabel(series + " " + cfg_str(c, v));
  std::printf("RATIO copy %s %zuMiB %.4f ours=%.1f memcpy=%.1f\n", series.c_str(), bytes / MiB, r.ratio(),
              r.ours_gbps(bytes), r.memcpy_gbps(bytes));
  if (bytes >= 256 * MiB) {
    auto it = g_min_ratio.find(series);
    if (it == g_min_ratio.end() || r.ratio() < it->second) g_min_ratio[series] = r.ratio();
  }
}

// ---- why/: the copy taken apart ----------------------------------------------------------------

bool g_why = false;  // set by main when the filter names why/

struct why_result {
  std::string probe;
  char counted;  // 'c': read + written, 'r': read, 'w': written
  double gbps, ratio;
};
std::map<size_t, std::vector<why_result>> g_why_results;

int sm_count() {
  static int sms = [] {
    int dev = 0, n = 0;
    BENCH_CUDA(cudaGetDevice(&dev));
    BENCH_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
  }();
  return sms;
}

uint32_t* why_sink() {  // one word per block of the plain read kernel
  static uint32_t* p = [] {
    uint32_t* q = nullptr;
    BENCH_CUDA(cudaMalloc(&q, sizeof(uint32_t) * 64 * 1024));
    return q;
  }();
  return p;
}

// Runs f(std::integral_constant<int, S>) for the stage counts the probes instantiate.
template <class F>
cudaError_t by_stages(uint32_t stages, F&& f) {
  return hopper::kernels::with_value<4, 8, 16>(stages, f);
}

template <class F>
cudaError_t by_lag(uint32_t lag, F&& f) {
  return hopper::kernels::with_value<1, 7>(lag, f);
}

template <int U>
launcher plain_copy(uint32_t bpsm) {
  return [bpsm](uint8_t* d, const uint8_t* s, size_t n) {
    copy_probe::plain_copy_kernel<U><<<sm_count() * bpsm, copy_probe::plain_threads>>>(
        reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), n / 16);
    return cudaGetLastError();
  };
}
template <int U>
launcher plain_copy_tiles() {
  return [](uint8_t* d, const uint8_t* s, size_t n) {
    const uint64_t per = uint64_t(copy_probe::plain_threads) * U;
    copy_probe::plain_copy_tiles_kernel<U><<<uint32_t((n / 16 + per - 1) / per), copy_probe::plain_threads>>>(
        reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), n / 16);
    return cudaGetLastError();
  };
}
template <int U>
launcher plain_read(uint32_t bpsm) {
  return [bpsm](uint8_t*, const uint8_t* s, size_t n) {
    copy_probe::plain_read_kernel<U>
        <<<sm_count() * bpsm, copy_probe::plain_threads>>>(reinterpret_cast<const uint4*>(s), n / 16, why_sink());
    return cudaGetLastError();
  };
}
template <int U>
launcher plain_write(uint32_t bpsm) {
  return [bpsm](uint8_t* d, const uint8_t*, size_t n) {
    copy_probe::plain_write_kernel<U>
        <<<sm_count() * bpsm, copy_probe::plain_threads>>>(reinterpret_cast<uint4*>(d), n / 16);
    return cudaGetLastError();
  };
}

// The bulk probes' shape: stages x kib KiB, CTAs per SM, pieces per stage, store lag (write
// only), and the copy's L2 knobs off or as in stream_copy_1d_bulk_default() (prefetch 2, evict_first).
struct bulk_shape {
  uint32_t stages, kib, bpsm, pieces, store_pieces, lag;
  bool dflt_knobs;
};
hopper::kernels::stream_knobs knobs_for(const bulk_shape& b) {
  return hopper::kernels::knobs_of(b.dflt_knobs ? hopper::kernels::stream_copy_1d_bulk_default()
                                                : stream_copy_config{});
}

launcher bulk_read(bulk_shape b) {
  return [b](uint8_t*, const uint8_t* s, size_t n) {
    return by_stages(b.stages, [&](auto st) {
      auto kernel = &copy_probe::bulk_read_kernel<decltype(st)::value>;
      const uint32_t sb = b.kib * 1024, smem = b.stages * sb;
      uint32_t grid = 0;
      cudaError_t e = hopper::kernels::detail::persistent_grid(
          kernel, 64, smem, b.bpsm, hopper::kernels::detail::pieces(uint64_t(n), uint64_t(sb)), grid);
      if (e != cudaSuccess) return e;
      kernel<<<grid, 64, smem>>>(s, n, sb, b.pieces, knobs_for(b));
      return cudaGetLastError();
    });
  };
}
launcher bulk_write(bulk_shape b) {
  return [b](uint8_t* d, const uint8_t*, size_t n) {
    return by_lag(b.lag, [&](auto lag) {
      auto kernel = &copy_probe::bulk_write_kernel<decltype(lag)::value>;
      const uint32_t sb = b.kib * 1024, smem = b.stages * sb;
      uint32_t grid = 0;
      cudaError_t e = hopper::kernels::detail::persistent_grid(
          kernel, 32, smem, b.bpsm, hopper::kernels::detail::pieces(uint64_t(n), uint64_t(sb)), grid);
      if (e != cudaSuccess) return e;
      kernel<<<grid, 32, smem>>>(d, n, b.stages, sb, b.pieces, knobs_for(b));
      return cudaGetLastError();
    });
  };
}
launcher split_copy(bulk_shape b) {
  return [b](uint8_t* d, const uint8_t* s, size_t n) {
    return by_stages(b.stages, [&](auto st) {
      auto kernel = &copy_probe::split_copy_kernel<decltype(st)::value>;
      const uint32_t sb = b.kib * 1024, smem = b.stages * sb;
      uint32_t grid = 0;
      cudaError_t e = hopper::kernels::detail::persistent_grid(
          kernel, 64, smem, b.bpsm, hopper::kernels::detail::pieces(uint64_t(n), uint64_t(sb)), grid);
      if (e != cudaSuccess) return e;
      kernel<<<grid, 64, smem>>>(d, s, n, sb, b.pieces, b.store_pieces, knobs_for(b));
      return cudaGetLastError();
    });
  };
}

std::string shape_name(const bulk_shape& b, bool write) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%ux%uK_b%u_p%u%s%s", b.stages, b.kib, b.bpsm, b.pieces,
                write ? ("_lag" + std::to_string(b.lag)).c_str() : "", b.dflt_knobs ? "_pf2ef" : "");
  std::string s = buf;
  if (b.store_pieces > 1) s += "_sp" + std::to_string(b.store_pieces);
  return s;
}

// A copy probe must copy: once per probe, 64 MiB + 4144 bytes (tails past every stage size) of
// distinct 16-byte values into a poisoned destination, compared on the host.
void why_check(const std::string& probe, const launcher& l) {
  const size_t n = 64 * MiB + 4144;
  static uint8_t *src = nullptr, *dst = nullptr;
  if (src == nullptr) {
    BENCH_CUDA(cudaMalloc(&src, n));
    BENCH_CUDA(cudaMalloc(&dst, n));
    copy_probe::plain_write_kernel<1>
        <<<sm_count() * 4, copy_probe::plain_threads>>>(reinterpret_cast<uint4*>(src), n / 16);
    BENCH_CUDA(cudaGetLastError());
  }
  BENCH_CUDA(cudaMemset(dst, 0xff, n));
  BENCH_CUDA(l(dst, src, n));
  BENCH_CUDA(cudaDeviceSynchronize());
  std::vector<uint8_t> a(n), b(n);
  BENCH_CUDA(cudaMemcpy(a.data(), src, n, cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaMemcpy(b.data(), dst, n, cudaMemcpyDeviceToHost));
  const auto bad = std::mismatch(a.begin(), a.end(), b.begin());
  if (bad.first == a.end())
    std::printf("CHECK why %s ok (%zu bytes)\n", probe.c_str(), n);
  else
    std::printf("CHECK why %s FAILED: first wrong byte at %zu of %zu\n", probe.c_str(), size_t(bad.first - a.begin()),
                n);
}

void why_one(benchmark::State& st, const std::string& probe, char counted, size_t bytes, const launcher& l) {
  if (counted == 'c' && bytes == 256 * MiB) why_check(probe, l);
  result r{};
  for (auto _ : st) {
    r = measure(bytes, 30, l);
    st.SetIterationTime(r.ours_ms * 1e-3);
  }
  const double moved = counted == 'c' ? 2.0 * double(bytes) : double(bytes);
  const double gbps = moved / (r.ours_ms * 1e6);
  const double ratio = gbps / r.memcpy_gbps(bytes);
  st.counters["GBps"] = gbps;
  st.counters["memcpy_GBps"] = r.memcpy_gbps(bytes);
  st.counters["ratio"] = ratio;
  st.counters["bytes"] = double(bytes);
  st.SetLabel(probe);
  std::printf("RATIO why %s %zuMiB %.4f ours=%.1f memcpy=%.1f counted=%s\n", probe.c_str(), bytes / MiB, ratio, gbps,
              r.memcpy_gbps(bytes), counted == 'c' ? "rw" : (counted == 'r' ? "r" : "w"));
  g_why_results[bytes].push_back({probe, counted, gbps, ratio});
}

void register_why() {
  struct probe {
    std::string name;
    char counted;
    launcher run;
  };
  std::vector<probe> probes;
  probes.push_back({"memcpy_self", 'c', [](uint8_t* d, const uint8_t* s, size_t n) {
                      return cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice);
                    }});
  // (1) A plain register copy: no shared memory, no TMA.
  for (uint32_t bpsm : {4u, 8u}) {
    const std::string b = "_b" + std::to_string(bpsm);
    probes.push_back({"plain_copy/u1" + b, 'c', plain_copy<1>(bpsm)});
    probes.push_back({"plain_copy/u2" + b, 'c', plain_copy<2>(bpsm)});
    probes.push_back({"plain_copy/u4" + b, 'c', plain_copy<4>(bpsm)});
    probes.push_back({"plain_copy/u8" + b, 'c', plain_copy<8>(bpsm)});
  }
  probes.push_back({"plain_copy_tiles/u1", 'c', plain_copy_tiles<1>()});
  probes.push_back({"plain_copy_tiles/u4", 'c', plain_copy_tiles<4>()});
  // (2) The read side: bulk loads into stages, nothing stored, against plain 16-byte loads.
  for (uint32_t bpsm : {4u, 8u}) {
    const std::string b = "_b" + std::to_string(bpsm);
    probes.push_back({"plain_read/u1" + b, 'r', plain_read<1>(bpsm)});
    probes.push_back({"plain_read/u4" + b, 'r', plain_read<4>(bpsm)});
    probes.push_back({"plain_read/u8" + b, 'r', plain_read<8>(bpsm)});
  }
  const bulk_shape reads[] = {{8, 24, 1, 1, 1, 1, false}, {8, 24, 1, 1, 1, 1, true},  {8, 24, 1, 4, 1, 1, false},
                              {4, 48, 1, 1, 1, 1, false}, {4, 48, 1, 8, 1, 1, false}, {16, 12, 1, 1, 1, 1, false},
                              {4, 24, 2, 1, 1, 1, false}};
  for (const bulk_shape& b : reads) probes.push_back({"bulk_read/" + shape_name(b, false), 'r', bulk_read(b)});
  // (3) The write side: bulk stores of resident stages, nothing loaded, against plain 16-byte
  // stores and cudaMemsetAsync.
  probes.push_back({"memset", 'w', [](uint8_t* d, const uint8_t*, size_t n) { return cudaMemsetAsync(d, 0x5a, n); }});
  for (uint32_t bpsm : {4u, 8u}) {
    const std::string b = "_b" + std::to_string(bpsm);
    probes.push_back({"plain_write/u1" + b, 'w', plain_write<1>(bpsm)});
    probes.push_back({"plain_write/u4" + b, 'w', plain_write<4>(bpsm)});
  }
  const bulk_shape writes[] = {{8, 24, 1, 1, 1, 1, false},
                               {8, 24, 1, 1, 1, 7, false},
                               {8, 24, 1, 4, 1, 1, false},
                               {8, 24, 1, 1, 1, 1, true},
                               {4, 24, 2, 1, 1, 1, false}};
  for (const bulk_shape& b : writes) probes.push_back({"bulk_write/" + shape_name(b, true), 'w', bulk_write(b)});
  // (4) The 1-D bulk copy with several smaller bulk copies per stage (p: loads, sp: stores).
  const bulk_shape splits[] = {{8, 24, 1, 1, 1, 1, false}, {8, 24, 1, 1, 1, 1, true},  {8, 24, 1, 2, 1, 1, false},
                               {8, 24, 1, 4, 1, 1, false}, {8, 24, 1, 4, 4, 1, false}, {8, 24, 1, 4, 1, 1, true},
                               {4, 48, 1, 8, 1, 1, false}, {16, 12, 1, 1, 1, 1, false}};
  for (const bulk_shape& b : splits) probes.push_back({"split_copy/" + shape_name(b, false), 'c', split_copy(b)});

  for (size_t bytes : {256 * MiB, 1024 * MiB, 4096 * MiB})
    for (const probe& p : probes)
      benchmark::RegisterBenchmark(("why/" + p.name + "/" + std::to_string(bytes / MiB) + "MiB").c_str(),
                                   [p, bytes](benchmark::State& s) { why_one(s, p.name, p.counted, bytes, p.run); })
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
}

// Side by side per size: the best of each probe group (by its own bandwidth).
void print_why_summary() {
  auto best = [](const std::vector<why_result>& v, const std::string& prefix) {
    const why_result* b = nullptr;
    for (const auto& r : v)
      if (r.probe.rfind(prefix, 0) == 0 && (b == nullptr || r.gbps > b->gbps)) b = &r;
    return b;
  };
  for (const auto& kv : g_why_results) {
    const std::vector<why_result>& v = kv.second;
    const size_t mib = kv.first / MiB;
    auto line = [&](const char* group, const char* a, const char* b) {
      const why_result *x = best(v, a), *y = best(v, b);
      if (x == nullptr || y == nullptr) return;
      std::printf("SUMMARY why %zuMiB %s %s=%.1fGB/s(%.4f) %s=%.1fGB/s(%.4f) first/second=%.4f\n", mib, group,
                  x->probe.c_str(), x->gbps, x->ratio, y->probe.c_str(), y->gbps, y->ratio, x->gbps / y->gbps);
    };
    line("copy", "plain_copy", "split_copy/8x24K_b1_p1_pf2ef");
    line("read", "bulk_read", "plain_read");
    line("write", "bulk_write", "plain_write");
    line("write_memset", "bulk_write", "memset");
    line("split", "split_copy", "split_copy/8x24K_b1_p1_pf2ef");
  }
}

// ---- pipeline/: the showcase's ring (apps/pipeline_stream.cuh), by who releases a stage ---------
// Each CTA streams `tiles` stages through its ring; with multicast a cluster's CTAs share their
// source tiles, so only the release forms compare, not the ratio to cudaMemcpy. Sustained: 40
// launches of about 1 GiB each, interleaved with cudaMemcpyAsync of the same bytes.
void pipeline_one(benchmark::State& st, hopper::pipeline_config cfg, uint32_t ctas) {
  const uint32_t tiles = uint32_t((1024 * MiB) / (size_t(ctas) * cfg.stage_bytes));
  const size_t bytes = size_t(ctas) * tiles * cfg.stage_bytes;
  const launcher run = [cfg, ctas, tiles](uint8_t* d, const uint8_t* s, size_t) {
    return hopper::apps::launch_pipeline_stream<4>(reinterpret_cast<const uint4*>(s), reinterpret_cast<uint4*>(d), ctas,
                                                   tiles, cfg);
  };
  result r{};
  for (auto _ : st) {
    r = measure(bytes, runs_for(bytes), run);
    st.SetIterationTime(r.ours_ms * 1e-3);
  }
  const char* by = cfg.releaser == hopper::release_by::each_lane ? "each_lane" : "warp_leader";
  st.counters["GBps"] = r.ours_gbps(bytes);
  st.counters["memcpy_GBps"] = r.memcpy_gbps(bytes);
  st.counters["ratio"] = r.ratio();
  std::printf("RATIO pipeline %s w%u_c%u%s %zuMiB %.4f ours=%.1f memcpy=%.1f\n", by, cfg.consumer_warps,
              cfg.cluster_size, cfg.multicast ? "m" : "", bytes / MiB, r.ratio(), r.ours_gbps(bytes),
              r.memcpy_gbps(bytes));
}

void register_pipeline() {
  struct shape {
    uint32_t warps, cluster;
  };
  for (shape sh : {shape{4, 1}, shape{8, 1}, shape{4, 2}})
    for (hopper::release_by by : {hopper::release_by::each_lane, hopper::release_by::warp_leader}) {
      hopper::pipeline_config cfg;
      cfg.stages = 4, cfg.stage_bytes = 32 * 1024, cfg.consumer_warps = sh.warps, cfg.block_warps = sh.warps + 1;
      cfg.cluster_size = sh.cluster, cfg.multicast = sh.cluster > 1, cfg.releaser = by;
      const std::string n =
          std::string("pipeline/") + (by == hopper::release_by::each_lane ? "each_lane" : "warp_leader") + "/4x32K_w" +
          std::to_string(sh.warps) + "_c" + std::to_string(sh.cluster) + (cfg.multicast ? "m" : "") + "/1GiB";
      benchmark::RegisterBenchmark(n.c_str(),
                                   [cfg](benchmark::State& s) { pipeline_one(s, cfg, uint32_t(sm_count()) & ~1u); })
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
}

void register_all() {
  if (g_why) register_why();
  register_pipeline();
  auto reg = [](const std::string& n, auto fn) {
    benchmark::RegisterBenchmark(n.c_str(), fn)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  };
  // Sweep at 1 GiB: the shape alone moves the ratio little (docs/copy.md, "Benchmark"), so the
  // shapes are a compact set around the best points of the first sweep, and the other knobs (L2
  // prefetch distance, L2 eviction priority of loads and stores, chunk order) are crossed with a
  // few shapes.
  struct shape {
    uint32_t stages, kib, bpsm;
  };
  auto make = [](shape sh, uint32_t lag, uint32_t prefetch, l2_evict ld, l2_evict stv, chunk_order o) {
    stream_copy_config c;
    c.stages = sh.stages, c.stage_bytes = sh.kib * 1024, c.blocks_per_sm = sh.bpsm, c.store_lag = lag;
    c.prefetch_chunks = prefetch, c.load_policy = ld, c.store_policy = stv, c.order = o;
    return c;
  };
  auto add = [&](variant v, const stream_copy_config& c) {
    if (!fits(c, v)) return;
    reg("sweep/" + std::string(name(v)) + "/" + cfg_str(c, v), [v, c](benchmark::State& s) { sweep_one(s, v, c); });
  };
  const l2_evict none = l2_evict::none, first = l2_evict::first;
  const chunk_order inter = chunk_order::interleaved, contig = chunk_order::contiguous;
  const shape shapes[] = {{2, 96, 1},  {3, 64, 1}, {4, 48, 1}, {8, 24, 1}, {6, 32, 1},
                          {12, 16, 1}, {4, 24, 2}, {2, 48, 2}, {4, 16, 3}, {2, 24, 4}};
  for (shape sh : shapes)
    for (uint32_t lag : {0u, 1u, 2u}) add(variant::d1, make(sh, lag, 0, none, none, inter));
  const shape knob_shapes[] = {{2, 96, 1}, {4, 48, 1}, {8, 24, 1}, {4, 24, 2}};
  for (shape sh : knob_shapes)
    for (uint32_t pf : {0u, 2u, 4u, 8u, 16u})
      for (l2_evict ld : {none, first})
        for (l2_evict stv : {none, first})
          for (chunk_order o : {inter, contig}) {
            if (pf == 0 && ld == none && stv == none && o == inter) continue;  // in the shape sweep
            add(variant::d1, make(sh, 1, pf, ld, stv, o));
          }
  for (shape sh : {shape{2, 96, 1}, shape{4, 48, 1}, shape{8, 24, 1}})
    for (uint32_t pf : {0u, 4u})
      for (l2_evict pol : {none, first})
        for (chunk_order o : {inter, contig}) add(variant::d2, make(sh, 1, pf, pol, pol, o));
  for (shape sh : {shape{4, 32, 1}, shape{6, 24, 1}, shape{8, 24, 1}, shape{4, 16, 2}})
    for (uint32_t warps : {4u, 8u})
      for (uint32_t pf : {0u, 4u})
        for (l2_evict pol : {none, first})
          for (chunk_order o : {inter, contig}) {
            stream_copy_config c = make(sh, 1, pf, pol, pol, o);
            c.transform_warps = warps;
            add(variant::axpb, c);
          }
  // The st_global path: pipeline shape x store warps x store form, then the load-side knobs and
  // store hints on a few shapes; the fused kernel over shapes x warps x store form.
  const shape st_shapes[] = {{2, 96, 1}, {3, 64, 1}, {4, 48, 1}, {4, 32, 1}, {8, 24, 1}, {6, 32, 1}, {12, 16, 1},
                             {8, 16, 1}, {4, 24, 2}, {2, 48, 2}, {4, 16, 2}, {2, 32, 3}, {4, 8, 4}};
  for (variant v : {variant::d1_st, variant::axpb_st})
    for (shape sh : st_shapes)
      for (uint32_t w : {2u, 4u, 8u, 16u})
        for (bool cs : {false, true}) {
          if (v == variant::axpb_st && w == 2) continue;
          stream_copy_config c = make(sh, 1, 0, none, none, inter);
          c.path = hopper::kernels::store_path::st_global, c.store_warps = w, c.streaming_store = cs;
          if (c.blocks_per_sm * (32 + 32 * w) > 2048) continue;
          add(v, c);
        }
  for (shape sh : {shape{4, 32, 1}, shape{4, 48, 1}, shape{8, 24, 1}, shape{4, 24, 2}})
    for (uint32_t pf : {0u, 2u})
      for (l2_evict ld : {none, first})
        for (int stk : {0, 1, 2}) {  // st.global, st.global.cs, st.global.L2::cache_hint evict_first
          if (pf == 0 && ld == none && stk < 2) continue;  // in the shape sweep
          stream_copy_config c = make(sh, 1, pf, ld, stk == 2 ? first : none, inter);
          c.path = hopper::kernels::store_path::st_global, c.store_warps = 8, c.streaming_store = stk == 1;
          add(variant::d1_st, c);
        }
  // The per-tile schedule: chunk bytes x chunks per CTA x stages (the ring holds
  // min(stages, tile_chunks) chunks, so stages matter only when it wraps) x store path (bulk
  // stores, or st.global from 4 or 8 store warps). No L2 knobs: the persistent sweep found them
  // useful only with prefetch, which a tile of 1-4 chunks has no room for.
  for (variant v : {variant::d1_tile, variant::axpb_tile})
    for (uint32_t kib : {4u, 8u, 16u})
      for (uint32_t tc : {1u, 2u, 4u})
        for (uint32_t stages : {2u, 4u}) {
          if (stages > 2 && tc < 4) continue;  // the ring would not wrap: same kernel as stages 2
          for (uint32_t sw : {0u, 4u, 8u}) {   // 0: bulk stores
            stream_copy_config c = make(shape{stages, kib, 1}, 1, 0, none, none, inter);
            c.sched = hopper::kernels::schedule::per_tile, c.tile_chunks = tc;
            if (sw != 0) c.path = hopper::kernels::store_path::st_global, c.store_warps = sw;
            add(v, c);
          }
        }
  const size_t sizes[] = {1 * MiB,    4 * MiB,    16 * MiB,   64 * MiB,  256 * MiB,
                          1024 * MiB, 2048 * MiB, 4096 * MiB, 8192 * MiB};
  for (bool tuned : {false, true})
    for (variant v : {variant::d1, variant::d2, variant::axpb, variant::d1_st, variant::axpb_st})
      for (size_t b : sizes)
        reg("size/" + std::string(name(v)) + (tuned ? "_tuned/" : "/") + std::to_string(b / MiB) + "MiB",
            [v, b, tuned](benchmark::State& s) { size_one(s, v, b, tuned); });
  for (bool tuned : {false, true})
    for (variant v : {variant::d1_tile, variant::axpb_tile})
      for (size_t b : {256 * MiB, 1024 * MiB, 2048 * MiB, 4096 * MiB, 8192 * MiB})
        reg("size/" + std::string(name(v)) + (tuned ? "_tuned/" : "/") + std::to_string(b / MiB) + "MiB",
            [v, b, tuned](benchmark::State& s) { size_one(s, v, b, tuned); });
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--benchmark_filter=", 0) == 0 &&
        std::string(argv[i]).find("why") != std::string::npos)
      g_why = true;
  if (!hopper_bench::run_benchmarks(argc, argv, "copy", register_all)) return 0;
  print_why_summary();
  for (const auto& [v, best] : g_best)
    std::printf("SUMMARY copy %s best_sweep_1GiB ratio=%.4f %s\n", name(v), best.second,
                cfg_str(best.first, v).c_str());
  for (const auto& [series, r] : g_min_ratio)
    std::printf("SUMMARY copy %s min_ratio_256MiB_up=%.4f %s\n", series.c_str(), r,
                r >= 1.0 ? "(meets 1.00x)" : "(below 1.00x)");
  return 0;
}
