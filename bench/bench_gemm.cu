// The persistent bf16 GEMM against cuBLAS (cublasGemmEx, bf16 in/out, CUBLAS_COMPUTE_32F), both
// measured in this process by the same method: full-precision random inputs (normal(0,1) rounded
// once to bf16; a uniform run of 8192^3 beside it), operand sets rotated so that together they
// exceed L2 several times, warm-up, then repeats of 20 back-to-back launches between one pair of
// CUDA events, ours and cuBLAS interleaved repeat by repeat; median and spread of the repeats.
// The SM clock (nvidia-smi) before and after each shape goes into the JSON with the results.
//
// Two regimes. Sustained (gemm/...): the batches above keep the card at its power limit, as a
// training loop does. Burst (gemm_burst/...): each launch alone, between its own pair of events
// and a synchronize, ours and cuBLAS alternating launch by launch, kBurstRuns each after the same
// warm-up; the clock stays near its boost, as in inference that calls one GEMM at a time.
//
// Prints per shape:  RATIO gemm MxNxK <ours/cublas> ours=<TFLOP/s> cublas=<TFLOP/s>
// and at the end:    SUMMARY gemm geomean <x> over the seven named shapes (and min), per regime.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "gemm_bench.cuh"
#include "gemm_corpus.hpp"
#include "kernels/gemm/gemm.cuh"

namespace {

using hopper_bench::config_name;
using hopper_bench::cublas;
using hopper_bench::fill_random;
using hopper_bench::sm_clock;

constexpr int kLaunchesPerEvent = 20;
constexpr int kRepeats = 9;
constexpr int kBurstRuns = 21;
constexpr double kRotateBytes = 200e6;  // > 3x the 60 MB L2 (50 MB on H100)

struct stats {
  double median_ms, min_ms, max_ms;
};
stats summarize(const std::vector<double>& v) {
  return {hopper_bench::median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

std::map<std::string, double> g_named_ratio, g_named_burst;  // the seven named shapes, per regime

void bench_shape(benchmark::State& state, int64_t M, int64_t N, int64_t K, bool normal, bool named,
                 const hopper::gemm::config* forced = nullptr, bool programmatic = true, bool burst = false) {
  using hopper::gemm::problem;
  problem p;
  p.M = M, p.N = N, p.K = K;
  const size_t a_n = size_t(M) * K, b_n = size_t(N) * K, c_n = size_t(M) * N;
  const double set_bytes = 2.0 * double(a_n + b_n + c_n);
  const int sets = int(std::clamp<double>(std::ceil(kRotateBytes / set_bytes), 2, 64));
  std::vector<__nv_bfloat16*> A(sets), B(sets), C(sets);
  std::vector<std::unique_ptr<hopper::gemm::plan>> plans;
  for (int s = 0; s < sets; ++s) {
    BENCH_CUDA(cudaMalloc(&A[s], a_n * 2));
    BENCH_CUDA(cudaMalloc(&B[s], b_n * 2));
    BENCH_CUDA(cudaMalloc(&C[s], c_n * 2));
    fill_random<<<1024, 256>>>(A[s], a_n, 0x1234 + 2 * s, normal);
    fill_random<<<1024, 256>>>(B[s], b_n, 0x9876 + 2 * s, normal);
    BENCH_CUDA(cudaGetLastError());
    plans.push_back(std::make_unique<hopper::gemm::plan>(p, A[s], B[s], C[s], forced));
    plans.back()->programmatic_launch(programmatic);
  }
  BENCH_CUDA(cudaDeviceSynchronize());
  const float alpha = 1.f, beta = 0.f;
  auto ours = [&](int i) { BENCH_CUDA(plans[i % sets]->run(0)); };
  auto theirs = [&](int i) {
    const int s = i % sets;
    // Column-major view of row-major C: C^T (N x M) = B (N x K, stored K-contiguous) . A^T.
    if (cublasGemmEx(cublas(), CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &alpha, B[s], CUDA_R_16BF, int(K),
                     A[s], CUDA_R_16BF, int(K), &beta, C[s], CUDA_R_16BF, int(N), CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasGemmEx failed\n");
      std::exit(1);
    }
  };
  cudaEvent_t e0, e1;
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  const int per_event = burst ? 1 : kLaunchesPerEvent;
  int next_set = 0;  // burst: every launch takes the next operand set
  auto time_batch = [&](auto&& launch) {
    BENCH_CUDA(cudaEventRecord(e0));
    for (int i = 0; i < per_event; ++i) launch(burst ? next_set++ : i);
    BENCH_CUDA(cudaEventRecord(e1));
    BENCH_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    return double(ms) / per_event;
  };
  // Warm-up: clocks, caches, cuBLAS heuristics, our kernels' first-launch attributes.
  for (int i = 0; i < 3; ++i) {
    time_batch(ours);
    time_batch(theirs);
  }
  const std::string clock_before = sm_clock();
  std::vector<double> t_ours, t_cublas;
  for (auto _ : state) {
    t_ours.clear();
    t_cublas.clear();
    for (int r = 0; r < (burst ? kBurstRuns : kRepeats); ++r) {
      t_ours.push_back(time_batch(ours));
      t_cublas.push_back(time_batch(theirs));
    }
    state.SetIterationTime(summarize(t_ours).median_ms * 1e-3);
  }
  const std::string clock_after = sm_clock();
  const stats so = summarize(t_ours), sc = summarize(t_cublas);
  const double tf = p.flops() * 1e-9;  // TFLOP/s = flops * 1e-12 / (ms * 1e-3)
  const double ours_tflops = tf / so.median_ms, cublas_tflops = tf / sc.median_ms;
  const double ratio = ours_tflops / cublas_tflops;
  state.counters["M"] = double(M);
  state.counters["N"] = double(N);
  state.counters["K"] = double(K);
  state.counters["ours_tflops"] = ours_tflops;
  state.counters["cublas_tflops"] = cublas_tflops;
  state.counters["ratio"] = ratio;
  state.counters["ours_ms_min"] = so.min_ms;
  state.counters["ours_ms_max"] = so.max_ms;
  state.counters["cublas_ms_min"] = sc.min_ms;
  state.counters["cublas_ms_max"] = sc.max_ms;
  state.counters["tile_m"] = plans[0]->cfg().bm;
  state.counters["tile_n"] = plans[0]->cfg().bn;
  state.counters["cluster_m"] = plans[0]->cfg().cluster_m;
  state.counters["cluster_n"] = plans[0]->cfg().cluster_n;
  state.counters["splits"] = plans[0]->cfg().splits;
  state.counters["stream_k_tiles"] = plans[0]->stream_k_tiles();
  state.counters["pingpong"] = plans[0]->cfg().pingpong ? 1 : 0;
  state.counters["grid"] = plans[0]->grid();
  state.counters["operand_sets"] = sets;
  state.counters["programmatic_launch"] = programmatic ? 1 : 0;
  state.counters["burst"] = burst ? 1 : 0;
  state.SetLabel(std::string(normal ? "normal(0,1)" : "uniform(-1,1)") + " bf16 inputs; " +
                 (burst ? "burst" : "sustained") + "; sm clock MHz " + clock_before + " -> " + clock_after +
                 (named ? "; named" : ""));
  const auto& cf = plans[0]->cfg();
  const std::string tag =
      (forced ? "_" + config_name(cf) : "") + (programmatic ? "" : "_no_pdl") + (burst ? "_burst" : "");
  std::printf(
      "RATIO gemm %lldx%lldx%lld%s%s %.3f ours=%.1f cublas=%.1f (spread ours %.1f-%.1f, cublas %.1f-%.1f; "
      "sm clock %s -> %s MHz)\n",
      (long long)M, (long long)N, (long long)K, normal ? "" : "_uniform", tag.c_str(), ratio, ours_tflops,
      cublas_tflops, tf / so.max_ms, tf / so.min_ms, tf / sc.max_ms, tf / sc.min_ms, clock_before.c_str(),
      clock_after.c_str());
  std::fflush(stdout);
  if (named && !forced && programmatic)
    (burst ? g_named_burst : g_named_ratio)[std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K)] =
        ratio;
  BENCH_CUDA(cudaEventDestroy(e0));
  BENCH_CUDA(cudaEventDestroy(e1));
  plans.clear();
  for (int s = 0; s < sets; ++s) {
    cudaFree(A[s]);
    cudaFree(B[s]);
    cudaFree(C[s]);
  }
}

using hopper_bench::shape;

std::string shape_name(const shape& s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
}

hopper::gemm::config rule_for(const shape& s) {
  hopper::gemm::problem p;
  p.M = s.M, p.N = s.N, p.K = s.K;
  return hopper::gemm::choose_config(p, 132);
}

// Registers one timed case: the rule's configuration or `forced`, normal or uniform inputs, with or
// without programmatic dependent launch. `named`: counts towards the geomean of the named shapes.
void add(const std::string& name, const shape& s, std::optional<hopper::gemm::config> forced, bool normal = true,
         bool named = false, bool programmatic = true, bool burst = false) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [s, forced, normal, named, programmatic, burst](benchmark::State& st) {
                                 bench_shape(st, s.M, s.N, s.K, normal, named, forced ? &*forced : nullptr,
                                             programmatic, burst);
                               })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

void register_all() {
  const std::vector<shape>& shapes = hopper_bench::benchmark_shapes();
  for (const shape& s : shapes) add("gemm/" + shape_name(s), s, std::nullopt, true, s.named);
  // The named shapes once more with plain stream order (no programmatic dependent launch): what
  // overlapping a launch's prologue with the previous launch's tail is worth, in the same run.
  for (const shape& s : shapes)
    if (s.named) add("gemm_no_pdl/" + shape_name(s), s, std::nullopt, true, false, false);
  // Burst: the named shapes and 1024^3, 3072^3, each launch alone.
  for (const shape& s : shapes)
    if (s.named || s.M == 1024 || s.M == 3072)
      add("gemm_burst/" + shape_name(s), s, std::nullopt, true, s.named, true, true);
  // HOPPER_GEMM_SK=1: the rule's choice with and without the stream-K tail on the named shapes and
  // the square sweep.
  if (const char* e = std::getenv("HOPPER_GEMM_SK"); e && e[0] == '1')
    for (const shape& s : shapes)
      for (bool sk : {false, true}) {
        hopper::gemm::config c = rule_for(s);
        if (c.pingpong || c.splits > 1) continue;
        c.stream_k = sk;
        add("gemm_sk/" + shape_name(s) + "/" + config_name(c), s, c);
      }
  // HOPPER_GEMM_SWEEP=1: also every instantiated configuration (gemm_config.hpp's instances, with
  // 1, 2 and 4 splits where the splits still fit in one wave, and the rule's stream-K tail where
  // it takes one) on the named shapes and on shapes that quantize badly, each against cuBLAS in
  // the same run: the data behind the tile rule.
  // HOPPER_GEMM_NARROW=1: the same over narrow shapes (one of M, N in 64..512, the others 8192 or
  // 16384 x 4096), in both orientations, one split: the data behind the narrow step of the rule.
  std::vector<shape> sweep;
  if (const char* e = std::getenv("HOPPER_GEMM_SWEEP"); e && e[0] == '1')
    sweep = {{8192, 8192, 8192, false},   {4096, 4096, 4096, false}, {2048, 2048, 2048, false},
             {16384, 16384, 4096, false}, {8192, 8192, 1024, false}, {4096, 14336, 4096, false},
             {128, 8192, 8192, false},    {1024, 1024, 1024, false}, {3072, 3072, 3072, false},
             {128, 4096, 8192, false},    {256, 8192, 8192, false}};
  const char* narrow_env = std::getenv("HOPPER_GEMM_NARROW");
  const bool narrow = narrow_env && narrow_env[0] == '1';
  if (narrow)
    for (int64_t n : {64, 128, 256, 512})
      for (const auto& [big, k] : {std::pair<int64_t, int64_t>{8192, 8192}, {16384, 4096}}) {
        sweep.push_back({n, big, k, false});
        sweep.push_back({big, n, k, false});
      }
  {
    for (const shape& s : sweep) {
      if (narrow) add("gemm_rule/" + shape_name(s) + "/" + config_name(rule_for(s)), s, std::nullopt);
      const hopper::gemm::config rule = rule_for(s);
      for (const hopper::gemm::instance& in : hopper::gemm::instances)
        for (int splits : {1, 2, 4}) {
          if (narrow && splits > 1) continue;
          hopper::gemm::config c;
          c.bm = in.bm, c.bn = in.bn, c.stages = in.stages, c.cluster_m = in.cluster_m, c.cluster_n = in.cluster_n;
          c.pingpong = in.pingpong, c.splits = splits;
          const int64_t tiles_m = (s.M + c.bm - 1) / c.bm, tiles_n = (s.N + c.bn - 1) / c.bn;
          const int64_t units =
              (tiles_m + c.cluster_m - 1) / c.cluster_m * ((tiles_n + c.cluster_n - 1) / c.cluster_n) * splits;
          if (splits > 1 && (c.pingpong || units * c.cluster_size() > 132)) continue;
          if (c.cluster_m > tiles_m || c.cluster_n > tiles_n) continue;  // a cluster of idle CTAs
          // The rule's stream-K tail wherever the rule takes one for this tile shape.
          c.stream_k = rule.stream_k && splits == 1 && !c.pingpong && c.bm == rule.bm && c.bn == rule.bn;
          add("gemm_cfg/" + shape_name(s) + "/" + config_name(c), s, c);
        }
    }
  }
  // HOPPER_GEMM_GROUP=1: the rule's choice on the named shapes with every tile-order group height
  // (cluster-rows swept column by column before moving on: what the clusters running at one time
  // share in L2).
  if (const char* e = std::getenv("HOPPER_GEMM_GROUP"); e && e[0] == '1')
    for (const shape& s : shapes)
      if (s.named)
        for (int g : {1, 2, 4, 16, 32}) {
          hopper::gemm::config c = rule_for(s);
          c.group_m = g;
          add("gemm_group/" + shape_name(s) + "/" + config_name(c), s, c);
        }
  add("gemm/8192x8192x8192_uniform", {8192, 8192, 8192, false}, std::nullopt, false);
}

}  // namespace

int main(int argc, char** argv) {
  if (!hopper_bench::run_benchmarks(argc, argv, "gemm", register_all)) return 0;
  for (const auto* regime : {&g_named_ratio, &g_named_burst}) {
    if (regime->empty()) continue;
    double log_sum = 0, worst = 1e30;
    std::string worst_name;
    for (const auto& [k, r] : *regime) {
      log_sum += std::log(r);
      if (r < worst) worst = r, worst_name = k;
    }
    std::printf("SUMMARY gemm%s geomean %.3f over %zu named shapes (min %.3f at %s)\n",
                regime == &g_named_burst ? "_burst" : "", std::exp(log_sum / double(regime->size())), regime->size(),
                worst, worst_name.c_str());
  }
  return 0;
}
