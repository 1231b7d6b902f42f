// The GEMM on the shapes models run (gemm_corpus.hpp: C = A . W^T, A of M tokens) against cuBLAS
// in the same process, sustained: operand sets rotated past L2, warm-up, then repeats of
// back-to-back launches between one pair of CUDA events (as many launches as make about 2 ms,
// 1 to 20), ours and cuBLAS interleaved repeat by repeat; the median of the repeats. Each batch is
// one CUDA graph of its launches, replayed: a launch of a few microseconds (few tokens) is
// otherwise timed at the rate the host issues it, which differs between the libraries and
// between host machines. HOPPER_GEMM_LAUNCH=stream times the launches issued one by one instead.
//
// One benchmark per entry, gemm_model/{model}/{layer}/M{m}, with the counters `ratio` (ours /
// cuBLAS, by time), both TFLOP/s, the configuration the tile rule chose and, for the decode
// regime, `w_bandwidth`: bytes of W over our time, as a fraction of 4.3 TB/s.
//
// HOPPER_GEMM_CANDIDATES=1 also times every configuration of gemm::candidates() in the same
// repeats and prints one line per configuration,
//   CAND <entry> M N K bm bn stages cluster_m cluster_n splits pingpong stream_k <ms> <cublas ms> <config>
// the data the tile rule's cost model is calibrated on (apps/gemm_rule.cpp reads these lines);
// `best_ratio` is then the fastest one's. The rule's own choice is timed first.
// HOPPER_GEMM_MODELS_M=64,1024 keeps only those token counts; HOPPER_GEMM_OFFGRID=1, 2, 3, 4 or a
// combination ("1234") adds those sets of off-grid shapes of gemm_corpus.hpp (gemm_offgrid/MxNxK).
//
// Prints per entry:  RATIO <entry> <ours/cublas> ours=<TFLOP/s> cublas=<TFLOP/s> config=<name>
// and at the end:    SUMMARY gemm_model prefill geomean <x> over <n> entries (min <y> at <entry>)
//                    SUMMARY gemm_model decode ...
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "gemm_bench.cuh"
#include "gemm_corpus.hpp"
#include "kernels/gemm/gemm.cuh"
#include "kernels/gemm/tile_rule.hpp"

namespace {

namespace g = hopper::gemm;
using hopper_bench::model_layer;

constexpr int kRepeats = 5;
constexpr double kBatchMs = 2.0;
constexpr int kMaxLaunchesPerEvent = 20;
constexpr double kRotateBytes = 200e6;  // > 3x the 60 MB L2
constexpr double kHbmBytesPerS = 4.3e12;

std::map<std::string, double> g_prefill, g_decode, g_named, g_offgrid, g_best;  // entry -> ratio

bool same(const g::config& a, const g::config& b) {
  return a.bm == b.bm && a.bn == b.bn && a.stages == b.stages && a.cluster_m == b.cluster_m &&
         a.cluster_n == b.cluster_n && a.splits == b.splits && a.pingpong == b.pingpong && a.stream_k == b.stream_k &&
         a.group_m == b.group_m;
}

// Rotated operand sets of one problem, filled with normal(0, 1) samples rounded to bf16.
struct operand_sets {
  std::vector<__nv_bfloat16*> A, B, C;
  operand_sets(const g::problem& p) {
    const size_t a_n = size_t(p.M) * size_t(p.K), b_n = size_t(p.N) * size_t(p.K), c_n = size_t(p.M) * size_t(p.N);
    const double set_bytes = 2.0 * double(a_n + b_n + c_n);
    const int sets = int(std::clamp<double>(std::ceil(kRotateBytes / set_bytes), 2, 64));
    for (int s = 0; s < sets; ++s) {
      A.push_back(nullptr), B.push_back(nullptr), C.push_back(nullptr);
      BENCH_CUDA(cudaMalloc(&A.back(), a_n * 2));
      BENCH_CUDA(cudaMalloc(&B.back(), b_n * 2));
      BENCH_CUDA(cudaMalloc(&C.back(), c_n * 2));
      hopper_bench::fill_random<<<1024, 256>>>(A.back(), a_n, 0x1234 + 2 * s, true);
      hopper_bench::fill_random<<<1024, 256>>>(B.back(), b_n, 0x9876 + 2 * s, true);
      BENCH_CUDA(cudaGetLastError());
    }
    BENCH_CUDA(cudaDeviceSynchronize());
  }
  operand_sets(const operand_sets&) = delete;
  operand_sets& operator=(const operand_sets&) = delete;
  ~operand_sets() {
    for (size_t s = 0; s < A.size(); ++s) cudaFree(A[s]), cudaFree(B[s]), cudaFree(C[s]);
  }
  int size() const { return int(A.size()); }
};

// One configuration's plans, one per operand set (copies of the first, re-bound).
struct timed_config {
  g::config cfg;
  std::vector<g::plan> plans;
  std::vector<double> ms;
};

// Times the entry `entry` (M x N x K) and records its ratio in `ratios`.
void bench_entry(benchmark::State& state, const std::string& entry, int64_t M, int64_t N, int64_t K,
                 bool all_candidates, std::map<std::string, double>& ratios) {
  g::problem p;
  p.M = M, p.N = N, p.K = K;
  int dev = 0, sms = 0;
  BENCH_CUDA(cudaGetDevice(&dev));
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const operand_sets ops(p);
  std::vector<timed_config> configs;
  const auto add = [&](const g::config& c) {
    for (const timed_config& t : configs)
      if (same(t.cfg, c)) return;
    try {
      timed_config t{c, {}, {}};
      t.plans.reserve(size_t(ops.size()));
      t.plans.emplace_back(p, ops.A[0], ops.B[0], ops.C[0], &c);
      for (int s = 1; s < ops.size(); ++s) {
        t.plans.push_back(t.plans[0]);
        t.plans.back().bind(ops.A[s], ops.B[s], ops.C[s]);
      }
      configs.push_back(std::move(t));
    } catch (const std::exception& e) {
      std::printf("SKIP %s %s: %s\n", entry.c_str(), hopper_bench::config_name(c).c_str(), e.what());
    }
  };
  add(g::choose_config(p, sms));  // configs[0]: the rule's choice
  if (all_candidates)
    for (const g::config& c : g::candidates(p, sms)) add(c);

  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (cublasSetStream(hopper_bench::cublas(), stream) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasSetStream failed on %s\n", entry.c_str());
    std::exit(1);
  }
  const float alpha = 1.f, beta = 0.f;
  const auto cublas_run = [&](int s) {
    // Column-major view of row-major C: C^T (N x M) = W (N x K, K-contiguous) . A^T.
    if (cublasGemmEx(hopper_bench::cublas(), CUBLAS_OP_T, CUBLAS_OP_N, int(p.N), int(p.M), int(p.K), &alpha, ops.B[s],
                     CUDA_R_16BF, int(p.K), ops.A[s], CUDA_R_16BF, int(p.K), &beta, ops.C[s], CUDA_R_16BF, int(p.N),
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasGemmEx failed on %s\n", entry.c_str());
      std::exit(1);
    }
  };
  cudaEvent_t e0, e1;
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  const char* how = std::getenv("HOPPER_GEMM_LAUNCH");
  const bool graphs = !(how && std::string(how) == "stream");
  // A batch: `n` launches rotating the operand sets, one graph (or issued one by one).
  struct batch {
    std::function<void(int)> launch;
    int n = 1;
    cudaGraphExec_t exec = nullptr;
  };
  const auto make_batch = [&](std::function<void(int)> launch, int n) {
    batch b{std::move(launch), n, nullptr};
    if (!graphs) return b;
    cudaGraph_t graph;
    BENCH_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < n; ++i) b.launch(i % ops.size());
    BENCH_CUDA(cudaStreamEndCapture(stream, &graph));
    BENCH_CUDA(cudaGraphInstantiate(&b.exec, graph, 0));
    BENCH_CUDA(cudaGraphDestroy(graph));
    return b;
  };
  const auto time_batch = [&](const batch& b) {
    BENCH_CUDA(cudaEventRecord(e0, stream));
    if (b.exec)
      BENCH_CUDA(cudaGraphLaunch(b.exec, stream));
    else
      for (int i = 0; i < b.n; ++i) b.launch(i % ops.size());
    BENCH_CUDA(cudaEventRecord(e1, stream));
    BENCH_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    return double(ms) / b.n;
  };
  const auto ours = [&](const timed_config& t) {
    return [&t, stream](int s) { BENCH_CUDA(t.plans[size_t(s)].run(stream)); };
  };
  // Warm-up (clocks, caches, cuBLAS's heuristics, first-launch attributes), then the batch size.
  const batch cublas_one = make_batch(cublas_run, 1), rule_one = make_batch(ours(configs[0]), 1);
  for (int i = 0; i < 2; ++i) time_batch(cublas_one), time_batch(rule_one);
  const int launches = std::clamp(int(kBatchMs / time_batch(rule_one)), 1, kMaxLaunchesPerEvent);
  const batch cublas_batch = make_batch(cublas_run, launches);
  std::vector<batch> batches;
  for (const timed_config& t : configs) batches.push_back(make_batch(ours(t), launches));
  for (const batch& b : batches) time_batch(b);
  std::vector<double> t_cublas;
  for (auto _ : state) {
    for (int r = 0; r < kRepeats; ++r) {
      t_cublas.push_back(time_batch(cublas_batch));
      for (size_t i = 0; i < configs.size(); ++i) configs[i].ms.push_back(time_batch(batches[i]));
    }
    state.SetIterationTime(hopper_bench::median(configs[0].ms) * 1e-3);
  }
  for (const batch* b : {&cublas_one, &rule_one, &cublas_batch})
    BENCH_CUDA(b->exec ? cudaGraphExecDestroy(b->exec) : cudaSuccess);
  for (const batch& b : batches) BENCH_CUDA(b.exec ? cudaGraphExecDestroy(b.exec) : cudaSuccess);
  const double cublas_ms = hopper_bench::median(t_cublas);
  const double tf = p.flops() * 1e-9;  // TFLOP/s = flops * 1e-12 / (ms * 1e-3)
  const timed_config& rule = configs[0];
  const double rule_ms = hopper_bench::median(rule.ms);
  const timed_config* best = &rule;
  for (const timed_config& t : configs) {
    const double ms = hopper_bench::median(t.ms);
    if (ms < hopper_bench::median(best->ms)) best = &t;
    if (all_candidates)
      std::printf("CAND %s %lld %lld %lld %d %d %d %d %d %d %d %d %.5f %.5f %s\n", entry.c_str(), (long long)p.M,
                  (long long)p.N, (long long)p.K, t.cfg.bm, t.cfg.bn, t.cfg.stages, t.cfg.cluster_m, t.cfg.cluster_n,
                  t.cfg.splits, int(t.cfg.pingpong), int(t.cfg.stream_k), ms, cublas_ms,
                  hopper_bench::config_name(t.cfg).c_str());
  }
  const double ratio = cublas_ms / rule_ms, best_ratio = cublas_ms / hopper_bench::median(best->ms);
  const double w_bytes = 2.0 * double(p.N) * double(p.K);
  state.counters["M"] = double(p.M);
  state.counters["N"] = double(p.N);
  state.counters["K"] = double(p.K);
  state.counters["ratio"] = ratio;
  state.counters["ours_tflops"] = tf / rule_ms;
  state.counters["cublas_tflops"] = tf / cublas_ms;
  state.counters["ours_ms"] = rule_ms;
  state.counters["cublas_ms"] = cublas_ms;
  state.counters["tile_m"] = rule.cfg.bm;
  state.counters["tile_n"] = rule.cfg.bn;
  state.counters["cluster_m"] = rule.cfg.cluster_m;
  state.counters["cluster_n"] = rule.cfg.cluster_n;
  state.counters["splits"] = rule.cfg.splits;
  state.counters["stream_k_tiles"] = rule.plans[0].stream_k_tiles();
  state.counters["pingpong"] = rule.cfg.pingpong ? 1 : 0;
  state.counters["launches_per_event"] = launches;
  state.counters["w_bandwidth"] = w_bytes / (rule_ms * 1e-3) / kHbmBytesPerS;
  state.counters["cublas_w_bandwidth"] = w_bytes / (cublas_ms * 1e-3) / kHbmBytesPerS;
  if (all_candidates) {
    state.counters["best_ratio"] = best_ratio;
    state.counters["candidates"] = double(configs.size());
  }
  state.SetLabel(std::string(graphs ? "sustained, graphs" : "sustained, stream") + "; config " +
                 hopper_bench::config_name(rule.cfg) +
                 (all_candidates ? "; best " + hopper_bench::config_name(best->cfg) : std::string()));
  std::printf("RATIO %s %.3f ours=%.1f cublas=%.1f config=%s", entry.c_str(), ratio, tf / rule_ms, tf / cublas_ms,
              hopper_bench::config_name(rule.cfg).c_str());
  if (all_candidates) std::printf(" best=%s %.3f", hopper_bench::config_name(best->cfg).c_str(), best_ratio);
  if (M <= 32)
    std::printf(" w_bandwidth=%.3f cublas_w_bandwidth=%.3f", w_bytes / (rule_ms * 1e-3) / kHbmBytesPerS,
                w_bytes / (cublas_ms * 1e-3) / kHbmBytesPerS);
  std::printf("\n");
  std::fflush(stdout);
  ratios[entry] = ratio;
  if (all_candidates) g_best[entry] = best_ratio;
  BENCH_CUDA(cudaEventDestroy(e0));
  BENCH_CUDA(cudaEventDestroy(e1));
  cublasSetStream(hopper_bench::cublas(), nullptr);
  BENCH_CUDA(cudaStreamDestroy(stream));
}

std::vector<int64_t> token_counts() {
  std::vector<int64_t> all = hopper_bench::prefill_tokens();
  for (int64_t m : hopper_bench::decode_tokens()) all.push_back(m);
  const char* only = std::getenv("HOPPER_GEMM_MODELS_M");
  if (!only || !*only) return all;
  std::vector<int64_t> kept;
  std::stringstream list(only);
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) kept.push_back(std::stoll(item));
  return kept;
}

void register_all() {
  const char* e = std::getenv("HOPPER_GEMM_CANDIDATES");
  const bool all_candidates = e && e[0] == '1';
  const auto add = [all_candidates](const std::string& name, int64_t M, int64_t N, int64_t K,
                                    std::map<std::string, double>* ratios) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [=](benchmark::State& st) { bench_entry(st, name, M, N, K, all_candidates, *ratios); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  };
  for (const int64_t M : token_counts())
    for (const model_layer& l : hopper_bench::model_layers())
      add(hopper_bench::corpus_name(l, M), M, l.N, l.K, M <= 32 ? &g_decode : &g_prefill);
  // HOPPER_GEMM_OFFGRID=1, 2, 3, 4 or any of them together ("1234"): those off-grid sets too.
  if (const char* o = std::getenv("HOPPER_GEMM_OFFGRID"))
    for (int set : {1, 2, 3, 4})
      if (std::string(o).find(char('0' + set)) != std::string::npos)
        for (const hopper_bench::shape& s : hopper_bench::offgrid_shapes(set))
          add("gemm_offgrid/" + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K), s.M, s.N,
              s.K, &g_offgrid);
  // With the candidates, bench_gemm's shapes too: the rule must keep them.
  if (all_candidates)
    for (const hopper_bench::shape& s : hopper_bench::benchmark_shapes())
      add("gemm_named/" + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K), s.M, s.N, s.K,
          &g_named);
}

void summary(const char* what, const std::map<std::string, double>& ratios) {
  if (ratios.empty()) return;
  double log_sum = 0, worst = 1e30;
  std::string worst_name;
  for (const auto& [k, r] : ratios) {
    log_sum += std::log(r);
    if (r < worst) worst = r, worst_name = k;
  }
  std::printf("SUMMARY gemm_model %s geomean %.3f over %zu entries (min %.3f at %s)\n", what,
              std::exp(log_sum / double(ratios.size())), ratios.size(), worst, worst_name.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (!hopper_bench::run_benchmarks(argc, argv, "gemm_model", register_all)) return 0;
  summary("prefill", g_prefill);
  summary("decode", g_decode);
  summary("bench_gemm shapes", g_named);
  summary("off-grid shapes", g_offgrid);
  summary("best candidate (all M)", g_best);
  return 0;
}
