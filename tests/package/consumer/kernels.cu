// A separate project calling the library's kernels from the package: one GEMM through
// hopper::gemm::plan against a host reference, and one stream_copy_1d, byte for byte. Without an
// sm_90 device it prints why and succeeds (the build is the test there).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/copy/stream_copy.cuh"
#include "kernels/gemm/gemm.cuh"

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::printf("FAILED %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

// C = A . B^T for 200 x 136 x 264 (edges in every dimension), bf16 in and out.
bool gemm_matches() {
  const int M = 200, N = 136, K = 264;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> small(-3, 3);  // exact in bf16, sums exact in fp32
  std::vector<__nv_bfloat16> a(size_t(M) * K), b(size_t(N) * K), c(size_t(M) * N);
  for (auto& v : a) v = __float2bfloat16(float(small(rng)));
  for (auto& v : b) v = __float2bfloat16(float(small(rng)));
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  if (!ok(cudaMalloc(&da, a.size() * 2), "cudaMalloc") || !ok(cudaMalloc(&db, b.size() * 2), "cudaMalloc") ||
      !ok(cudaMalloc(&dc, c.size() * 2), "cudaMalloc"))
    return false;
  bool good = ok(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice), "cudaMemcpy") &&
              ok(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice), "cudaMemcpy") &&
              ok(cudaMemset(dc, 0xFF, c.size() * 2), "cudaMemset");
  hopper::gemm::problem p;
  p.M = M, p.N = N, p.K = K;
  hopper::gemm::plan g(p, da, db, dc);
  good = good && ok(g.run(), "plan::run") && ok(cudaDeviceSynchronize(), "the GEMM");
  good = good && ok(cudaMemcpy(c.data(), dc, c.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  int wrong = 0;
  for (int m = 0; good && m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float ref = 0;
      for (int k = 0; k < K; ++k)
        ref += __bfloat162float(a[size_t(m) * K + k]) * __bfloat162float(b[size_t(n) * K + k]);
      const float got = __bfloat162float(c[size_t(m) * N + n]);
      wrong += !(std::fabs(got - ref) <= std::fabs(ref) / 128);
    }
  std::printf("gemm %d x %d x %d: %d of %d elements wrong\n", M, N, K, wrong, M * N);
  cudaFree(da), cudaFree(db), cudaFree(dc);
  return good && wrong == 0;
}

bool copy_matches() {
  const size_t bytes = (size_t(3) << 20) + 5;
  std::vector<uint8_t> src(bytes), dst(bytes);
  std::mt19937 rng(std::random_device{}());
  for (auto& v : src) v = uint8_t(rng());
  void *ds = nullptr, *dd = nullptr;
  if (!ok(cudaMalloc(&ds, bytes), "cudaMalloc") || !ok(cudaMalloc(&dd, bytes), "cudaMalloc")) return false;
  bool good = ok(cudaMemcpy(ds, src.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy") &&
              ok(cudaMemset(dd, 0xA5, bytes), "cudaMemset") &&
              ok(hopper::kernels::stream_copy_1d(dd, ds, bytes), "stream_copy_1d") &&
              ok(cudaDeviceSynchronize(), "the copy") &&
              ok(cudaMemcpy(dst.data(), dd, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  size_t wrong = 0;
  for (size_t i = 0; good && i < bytes; ++i) wrong += dst[i] != src[i];
  std::printf("stream_copy_1d %zu bytes: %zu wrong\n", bytes, wrong);
  cudaFree(ds), cudaFree(dd);
  return good && wrong == 0;
}

}  // namespace

int main() {
  int count = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
      prop.major != 9 || prop.minor != 0) {
    std::printf("kernels consumer: built; not run (no sm_90 device)\n");
    return 0;
  }
  const bool g = gemm_matches(), c = copy_matches();
  std::printf("kernels consumer on %s: %s\n", prop.name, g && c ? "ok" : "FAILED");
  return g && c ? 0 : 1;
}
