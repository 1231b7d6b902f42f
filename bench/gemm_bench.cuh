// What the GEMM benchmarks share: random bf16 operands, the cuBLAS handle, the SM clock as
// nvidia-smi reports it, and a configuration's short name.
#pragma once
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/gemm/gemm_config.hpp"

namespace hopper_bench {

// Counter-based normal / uniform samples (SplitMix64 + Box-Muller): full 24-bit mantissas
// before the one rounding to bf16, so the data is not a few repeated levels.
static __device__ __forceinline__ uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
static __global__ void fill_random(__nv_bfloat16* p, size_t n, uint64_t seed, bool normal) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t r = splitmix(seed ^ (i * 0xD1B54A32D192ED03ull));
    const float u1 = (float((r >> 40) & 0xFFFFFF) + 0.5f) * (1.f / 16777216.f);
    const float u2 = float((r >> 16) & 0xFFFFFF) * (1.f / 16777216.f);
    const float v = normal ? sqrtf(-2.f * logf(u1)) * cospif(2.f * u2) : 2.f * u2 - 1.f;
    p[i] = __float2bfloat16(v);
  }
}

inline std::string sm_clock() {
  std::string out;
  if (FILE* f = popen("nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits 2>/dev/null", "r")) {
    char buf[64];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  const size_t nl = out.find('\n');
  return nl == std::string::npos ? out : out.substr(0, nl);
}

inline cublasHandle_t cublas() {
  static cublasHandle_t h = [] {
    cublasHandle_t x;
    if (cublasCreate(&x) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasCreate failed\n");
      std::exit(1);
    }
    return x;
  }();
  return h;
}

// "bn256_c2x1_s1", "bn128_c1x2_s1_pp": tile width, cluster shape, splits, ping-pong.
inline std::string config_name(const hopper::gemm::config& c) {
  return (c.bm != 128 ? "bm" + std::to_string(c.bm) + "_" : std::string()) + "bn" + std::to_string(c.bn) + "_c" +
         std::to_string(c.cluster_m) + "x" + std::to_string(c.cluster_n) + "_s" + std::to_string(c.splits) +
         (c.pingpong ? "_pp" : "") + (c.stream_k ? "_sk" : "") +
         (c.group_m != hopper::gemm::config{}.group_m ? "_g" + std::to_string(c.group_m) : "");
}

}  // namespace hopper_bench
