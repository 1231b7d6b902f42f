// Calling the GEMM from C++: C (M x N, bf16) = A (M x K) . B^T with B as N x K (the layout of a
// linear layer's weight), both bf16, fp32 accumulation. The plan validates the problem, picks the
// tile configuration for this device and encodes the tensor maps once; run() launches it.
// Checks 64 sampled elements against a CPU sum.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/gemm/gemm.cuh"

int main() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) || major != 9 || minor != 0) {
    std::printf("gemm example: needs an sm_90 GPU (H100, H200)\n");
    return 0;
  }
  hopper::gemm::problem p;
  p.M = 2048, p.N = 1536, p.K = 1024;  // A and B K-major, bf16 out: the defaults
  std::vector<__nv_bfloat16> a(size_t(p.M * p.K)), b(size_t(p.N * p.K)), c(size_t(p.M * p.N));
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  for (auto& v : a) v = __float2bfloat16(nd(rng));
  for (auto& v : b) v = __float2bfloat16(nd(rng));
  __nv_bfloat16 *da = nullptr, *db = nullptr, *dc = nullptr;
  if (cudaMalloc(&da, a.size() * 2) || cudaMalloc(&db, b.size() * 2) || cudaMalloc(&dc, c.size() * 2) ||
      cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice) ||
      cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice)) {
    std::printf("gemm example: CUDA setup failed\n");
    return 1;
  }
  try {
    const hopper::gemm::plan g(p, da, db, dc);  // throws std::invalid_argument naming a bad value
    std::printf("tile 128 x %d, cluster %d x %d, %d CTAs\n", g.cfg().bn, g.cfg().cluster_m, g.cfg().cluster_n,
                g.grid());
    if (g.run() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
      std::printf("gemm example: the launch failed\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::printf("gemm example: %s\n", e.what());
    return 1;
  }
  cudaMemcpy(c.data(), dc, c.size() * 2, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < 64; ++i) {
    const int64_t m = int64_t(rng() % uint32_t(p.M)), n = int64_t(rng() % uint32_t(p.N));
    double ref = 0;
    for (int64_t k = 0; k < p.K; ++k)
      ref += double(__bfloat162float(a[size_t(m * p.K + k)])) * double(__bfloat162float(b[size_t(n * p.K + k)]));
    wrong += std::fabs(double(__bfloat162float(c[size_t(m * p.N + n)])) - ref) > 0.02 * std::fabs(ref) + 0.1;
  }
  std::printf("gemm example: %lld x %lld x %lld, %d of 64 sampled elements off\n", (long long)p.M, (long long)p.N,
              (long long)p.K, wrong);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return wrong == 0 ? 0 : 1;
}
