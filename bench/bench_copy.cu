// The streaming copies of kernels/stream_copy.cuh against cudaMemcpyAsync device-to-device, both
// measured in this process by the same method: buffers rotated through a region of at least
// 512 MiB (10x the L2), warm-up, then runs of ours and of memcpy interleaved one by one, each
// between its own pair of CUDA events; the median of each. Bandwidth counts bytes read + written.
//
// Order: first a sweep of stages x stage bytes x blocks per SM x store lag at 1 GiB (1-D, then a
// subset for 2-D and for the fused kernel), then every size from 1 MiB to 8 GiB for each variant
// with the default configuration and with the best configuration the sweep found.
//
// Prints:  RATIO copy <variant> <size> <ours/memcpy> ours=<GB/s> memcpy=<GB/s>
//          SWEEP copy <variant> stages=.. stage_bytes=.. blocks_per_sm=.. store_lag=.. [warps=..] <ratio>
//          SUMMARY copy <variant> min_ratio_256MiB_up=<x> (and the tuned configuration)
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/stream_copy.cuh"

namespace {

using hopper::kernels::stream_copy_config;

#define BENCH_CUDA(x)                                                                         \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

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

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + v[n / 2]);
}

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
  return {median(a), median(m)};
}

int runs_for(size_t bytes) { return bytes <= 64 * MiB ? 100 : (bytes <= 1024 * MiB ? 40 : 20); }

enum class variant { d1, d2, axpb };
const char* name(variant v) { return v == variant::d1 ? "1d" : v == variant::d2 ? "2d" : "axpb_bf16"; }

launcher make_launcher(variant v, const stream_copy_config& c) {
  switch (v) {
    case variant::d1:
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

std::string cfg_str(const stream_copy_config& c, variant v) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "stages=%u stage_bytes=%u blocks_per_sm=%u store_lag=%u", c.stages, c.stage_bytes,
                c.blocks_per_sm, c.store_lag);
  std::string s = buf;
  if (v == variant::axpb) s += " warps=" + std::to_string(c.transform_warps);
  return s;
}

// Best sweep configuration per variant (default until the sweep ran) and the worst ratio from
// 256 MiB up per series.
std::map<variant, std::pair<stream_copy_config, double>> g_best;
std::map<std::string, double> g_min_ratio;

bool fits(const stream_copy_config& c, variant v) {
  const size_t smem = size_t(c.stages) * c.stage_bytes;
  if (c.store_lag >= c.stages || smem > 227 * 1024) return false;
  if (c.blocks_per_sm * (smem + 1536) > 228 * 1024) return false;
  if (v == variant::d2 && c.stage_bytes % 1024) return false;
  return true;
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
  st.SetLabel(cfg_str(c, v));
  std::printf("SWEEP copy %s %s %.4f\n", name(v), cfg_str(c, v).c_str(), r.ratio());
  auto it = g_best.find(v);
  if (it == g_best.end() || r.ratio() > it->second.second) g_best[v] = {c, r.ratio()};
}

void size_one(benchmark::State& st, variant v, size_t bytes, bool tuned) {
  const stream_copy_config c = tuned && g_best.count(v) ? g_best[v].first : stream_copy_config{};
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

void register_all() {
  auto reg = [](const std::string& n, auto fn) {
    benchmark::RegisterBenchmark(n.c_str(), fn)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  };
  // Sweep: 1-D broadly, then the most promising region for 2-D and the fused kernel.
  for (uint32_t stages : {2u, 3u, 4u, 6u, 8u, 12u, 16u})
    for (uint32_t kib : {8u, 16u, 24u, 32u, 48u, 64u, 96u})
      for (uint32_t bpsm : {1u, 2u, 3u, 4u})
        for (uint32_t lag : {0u, 1u, 2u}) {
          stream_copy_config c;
          c.stages = stages, c.stage_bytes = kib * 1024, c.blocks_per_sm = bpsm, c.store_lag = lag;
          if (!fits(c, variant::d1)) continue;
          for (variant v : {variant::d1, variant::d2}) {
            if (v == variant::d2 && lag == 2) continue;  // 2-D: a smaller grid of the same knobs
            reg("sweep/" + std::string(name(v)) + "/" + cfg_str(c, v), [v, c](benchmark::State& s) { sweep_one(s, v, c); });
          }
        }
  for (uint32_t stages : {4u, 6u, 8u})
    for (uint32_t kib : {16u, 24u, 32u})
      for (uint32_t bpsm : {1u, 2u})
        for (uint32_t warps : {2u, 4u, 8u}) {
          stream_copy_config c;
          c.stages = stages, c.stage_bytes = kib * 1024, c.blocks_per_sm = bpsm, c.store_lag = 1, c.transform_warps = warps;
          if (!fits(c, variant::axpb)) continue;
          reg("sweep/axpb_bf16/" + cfg_str(c, variant::axpb), [c](benchmark::State& s) { sweep_one(s, variant::axpb, c); });
        }
  const size_t sizes[] = {1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1024 * MiB, 2048 * MiB, 4096 * MiB, 8192 * MiB};
  for (bool tuned : {false, true})
    for (variant v : {variant::d1, variant::d2, variant::axpb})
      for (size_t b : sizes)
        reg("size/" + std::string(name(v)) + (tuned ? "_tuned/" : "/") + std::to_string(b / MiB) + "MiB",
            [v, b, tuned](benchmark::State& s) { size_one(s, v, b, tuned); });
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SUMMARY copy skipped: no CUDA device\n");
    return 0;
  }
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const auto& [v, best] : g_best)
    std::printf("SUMMARY copy %s best_sweep_1GiB ratio=%.4f %s\n", name(v), best.second, cfg_str(best.first, v).c_str());
  for (const auto& [series, r] : g_min_ratio)
    std::printf("SUMMARY copy %s min_ratio_256MiB_up=%.4f %s\n", series.c_str(), r, r >= 1.0 ? "(meets 1.00x)" : "(below 1.00x)");
  return 0;
}
