// The main job (README, tools/main.sh):  showcase [OUT_DIR]
//
// On an sm_90 GPU: the kernels users call, each checked, then measured beside its anchor in the
// same process: the default streaming copy (hopper::kernels::stream_copy_1d) of 1 GiB against
// cudaMemcpyAsync, the bf16 GEMM (hopper::gemm::plan) on 8192^3 against cuBLAS; then the
// pipeline kernel traced, and its timeline written (Chrome/Perfetto JSON, and a PNG through
// tools/trace_png.py where Python and matplotlib exist).
// Without one: runs the same kernel body (apps/pipeline_stream_body.hpp) on the executable model,
// every thread a task (clusters with multicast, many scheduler seeds, bugs planted at run time
// through the model's fault plan), checks every word it wrote, prints what it checked, and writes the
// model's timeline in the same format. Either way it says which it did and where the files are.
#include <cuda_runtime.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cmath>
#include <utility>

#include "apps/pipeline_stream.cuh"
#include "apps/showcase.hpp"
#include "hopper/trace/trace.hpp"
#include "kernels/copy/stream_copy.cuh"
#include "kernels/gemm/gemm.cuh"

namespace {

std::string gpu_missing_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device (") + cudaGetErrorString(e) + ")";
  if (n == 0) return "no CUDA device";
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "cudaGetDeviceProperties failed";
  if (p.major != 9 || p.minor != 0) return std::string(p.name) + " is not sm_90";
  return {};
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "showcase: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median of `runs` timed calls of each of two bodies, interleaved one by one after a warm-up, each
// between its own pair of events (both in this process, so both see the same clocks).
template <class Ours, class Theirs>
std::pair<float, float> time_pair(Ours&& ours, Theirs&& theirs, int runs = 15) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  auto once = [&](auto&& body) {
    check(cudaEventRecord(a), "record");
    body();
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "elapsed");
    return t;
  };
  for (int i = 0; i < 3; ++i) once(ours), once(theirs);  // warm-up
  std::vector<float> t_ours, t_theirs;
  for (int i = 0; i < runs; ++i) {
    t_ours.push_back(once(ours));
    t_theirs.push_back(once(theirs));
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return {median(t_ours), median(t_theirs)};
}

// The library's default copy (hopper::kernels::stream_copy_1d: per-tile, bulk loads, st.global)
// against cudaMemcpyAsync on 1 GiB: every byte checked, then bandwidth (bytes read + written).
int run_copy_gpu() {
  const size_t bytes = size_t(1) << 30;
  uint8_t *src = nullptr, *dst = nullptr;
  check(cudaMalloc(&src, bytes), "cudaMalloc src");
  check(cudaMalloc(&dst, bytes), "cudaMalloc dst");
  std::vector<uint32_t> host(bytes / 4);
  std::mt19937_64 rng(std::random_device{}());
  for (auto& w : host) w = uint32_t(rng());
  check(cudaMemcpy(src, host.data(), bytes, cudaMemcpyHostToDevice), "upload");
  check(cudaMemset(dst, 0xA5, bytes), "poison");
  check(hopper::kernels::stream_copy_1d(dst, src, bytes), "stream_copy_1d");
  check(cudaDeviceSynchronize(), "copy run");
  std::vector<uint32_t> back(bytes / 4);
  check(cudaMemcpy(back.data(), dst, bytes, cudaMemcpyDeviceToHost), "download");
  const bool same = back == host;
  std::printf("default copy (hopper::kernels::stream_copy_1d) of 1 GiB: %s\n",
              same ? "every byte verified" : "MISMATCH");
  if (!same) return 1;
  const auto [t_ours, t_memcpy] =
      time_pair([&] { check(hopper::kernels::stream_copy_1d(dst, src, bytes), "stream_copy_1d"); },
                [&] { check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice), "memcpy"); });
  const double gb_ours = 2.0 * double(bytes) / (t_ours * 1e6), gb_memcpy = 2.0 * double(bytes) / (t_memcpy * 1e6);
  std::printf("SUMMARY showcase copy %.0f GB/s, cudaMemcpyAsync %.0f GB/s\n", gb_ours, gb_memcpy);
  std::printf("RATIO showcase copy/memcpy %.3f\n", gb_ours / gb_memcpy);
  cudaFree(src);
  cudaFree(dst);
  return 0;
}

// The GEMM (hopper::gemm::plan, bf16 in and out, fp32 accumulation) against cublasGemmEx on
// 8192^3 with B stored N x K: 256 sampled elements checked against a double-precision reference,
// then TFLOP/s of each, interleaved (burst: one launch per event pair).
int run_gemm_gpu() {
  const int64_t M = 8192, N = 8192, K = 8192;
  std::vector<__nv_bfloat16> a(size_t(M) * K), b(size_t(N) * K);
  std::mt19937_64 rng(std::random_device{}());
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& x : a) x = __float2bfloat16(nd(rng));
  for (auto& x : b) x = __float2bfloat16(nd(rng));
  __nv_bfloat16 *dA = nullptr, *dB = nullptr, *dC = nullptr;
  check(cudaMalloc(&dA, a.size() * 2), "cudaMalloc A");
  check(cudaMalloc(&dB, b.size() * 2), "cudaMalloc B");
  check(cudaMalloc(&dC, size_t(M) * N * 2), "cudaMalloc C");
  check(cudaMemcpy(dA, a.data(), a.size() * 2, cudaMemcpyHostToDevice), "upload A");
  check(cudaMemcpy(dB, b.data(), b.size() * 2, cudaMemcpyHostToDevice), "upload B");
  check(cudaMemset(dC, 0xFF, size_t(M) * N * 2), "poison C");
  hopper::gemm::problem p;
  p.M = M, p.N = N, p.K = K;
  const hopper::gemm::plan plan(p, dA, dB, dC);
  check(plan.run(), "gemm");
  check(cudaDeviceSynchronize(), "gemm run");
  std::vector<__nv_bfloat16> c(size_t(M) * N);
  check(cudaMemcpy(c.data(), dC, c.size() * 2, cudaMemcpyDeviceToHost), "download C");
  int bad = 0;
  double worst = 0;
  for (int i = 0; i < 256; ++i) {
    const int64_t r = int64_t(rng() % uint64_t(M)), col = int64_t(rng() % uint64_t(N));
    double ref = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) {
      const double x =
          double(__bfloat162float(a[size_t(r * K + k)])) * double(__bfloat162float(b[size_t(col * K + k)]));
      ref += x, mag += std::fabs(x);
    }
    const double got = double(__bfloat162float(c[size_t(r * N + col)]));
    const double err = std::fabs(got - ref) / (mag + 1e-30);
    worst = std::max(worst, err);
    bad += !(err <= 1e-2);  // bf16 output: 8 bits of mantissa, relative to the sum of |products|
  }
  std::printf(
      "GEMM 8192^3 (hopper::gemm::plan, bf16, B as N x K): %d of 256 sampled elements outside tolerance "
      "(worst relative error %.2e)\n",
      bad, worst);
  if (bad) return 1;
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "showcase: cublasCreate failed\n");
    return 1;
  }
  const float alpha = 1.f, beta = 0.f;
  auto theirs = [&] {
    // Column-major view of row-major C: C^T (N x M) = B (N x K, K-contiguous) . A^T.
    if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &alpha, dB, CUDA_R_16BF, int(K), dA,
                     CUDA_R_16BF, int(K), &beta, dC, CUDA_R_16BF, int(N), CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "showcase: cublasGemmEx failed\n");
      std::exit(1);
    }
  };
  const auto [t_ours, t_cublas] = time_pair([&] { check(plan.run(), "gemm"); }, theirs);
  const double tf = p.flops() * 1e-9;
  std::printf("SUMMARY showcase gemm 8192^3 %.0f TFLOP/s, cuBLAS %.0f TFLOP/s\n", tf / t_ours, tf / t_cublas);
  std::printf("RATIO showcase gemm/cublas %.3f\n", t_cublas / t_ours);
  cublasDestroy(h);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  return 0;
}

// The pipeline's timeline on the GPU: a short traced run of the showcase's pipeline kernel.
int run_timeline_gpu(const std::string& out) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const size_t tbytes = size_t(8) * 48 * 16 * 1024;
  uint8_t *src = nullptr, *dst = nullptr;
  check(cudaMalloc(&src, tbytes), "cudaMalloc src");
  check(cudaMalloc(&dst, tbytes), "cudaMalloc dst");
  check(cudaMemset(src, 0x3C, tbytes), "fill src");
  // The timeline: a short traced run (8 CTAs, 3 stages, 2 consumer warpgroups, cluster of 2).
  hopper::pipeline_config tc;
  tc.stages = 3;
  tc.stage_bytes = 16 * 1024;
  tc.consumer_warps = 8;
  tc.block_warps = 9;
  tc.cluster_size = 2;
  tc.multicast = true;
  const uint32_t tctas = 8, ttiles = 48;
  const uint32_t warps = tctas * tc.block_warps, per_warp = 4 * ttiles + 8;
  hopper::trace::record* rec = nullptr;
  uint32_t* cnt = nullptr;
  check(cudaMalloc(&rec, size_t(warps) * per_warp * sizeof(hopper::trace::record)), "cudaMalloc trace");
  check(cudaMalloc(&cnt, warps * 4), "cudaMalloc counts");
  check(cudaMemset(cnt, 0, warps * 4), "memset counts");
  check(
      hopper::apps::launch_pipeline_stream<3, true>(reinterpret_cast<const uint4*>(src), reinterpret_cast<uint4*>(dst),
                                                    tctas, ttiles, tc, hopper::trace::sink{rec, cnt, per_warp, warps}),
      "traced launch");
  check(cudaDeviceSynchronize(), "traced run");
  std::vector<hopper::trace::record> slots(size_t(warps) * per_warp), recs;
  std::vector<uint32_t> counts(warps);
  check(cudaMemcpy(slots.data(), rec, slots.size() * sizeof(slots[0]), cudaMemcpyDeviceToHost), "trace download");
  check(cudaMemcpy(counts.data(), cnt, warps * 4, cudaMemcpyDeviceToHost), "counts download");
  const size_t dropped = hopper::trace::gather(slots, counts, per_warp, recs);
  const std::string json = out + "/pipeline_trace_gpu.json";
  hopper::trace::write_file(
      json, hopper::trace::chrome_json(recs,
                                       "hopper::pipeline on " + std::string(prop.name) +
                                           ": 8 CTAs, clusters of 2 with multicast, 3 stages, 8 consumer warps",
                                       "globaltimer ns"));
  const std::string png = hopper::apps::render_png(json);
  std::printf("ran on the GPU (%s). timeline: %zu events (%zu dropped) in %s%s%s\n", prop.name, recs.size(), dropped,
              json.c_str(), png.empty() ? "" : ", PNG ", png.c_str());
  cudaFree(rec);
  cudaFree(cnt);
  cudaFree(src);
  cudaFree(dst);
  return 0;
}

int run_gpu(const std::string& out) {
  if (int rc = run_copy_gpu()) return rc;
  if (int rc = run_gemm_gpu()) return rc;
  return run_timeline_gpu(out);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "out";
  if (std::system(("mkdir -p '" + out + "'").c_str()) != 0) {
    std::fprintf(stderr, "showcase: cannot create %s\n", out.c_str());
    return 1;
  }
  try {
    const std::string why = gpu_missing_reason();
    return why.empty() ? run_gpu(out) : hopper::apps::run_model(out, why);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "showcase: %s\n", e.what());
    return 1;
  }
}
