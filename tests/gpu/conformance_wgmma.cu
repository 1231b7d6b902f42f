// wgmma.mma_async with A in registers on the hardware (PTX ISA, "Matrix Fragments for wgmma
// .m64nNk16"): each thread gives its A fragment, element e at the place of d[e] in the
// accumulator fragment (the layout the model takes, model/include/hopper/model/wgmma.hpp), B comes
// from shared memory in the canonical K-major layout without swizzle. Fresh random bf16 every
// run, D poisoned, every element against a CPU reference in double.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <hopper/async.cuh>
#include "gpu_test.hpp"

namespace {

namespace ptx = hopper::ptx;
constexpr int kK = 64;  // four k-steps of 16

__device__ __host__ inline uint32_t frag_row(uint32_t t, uint32_t i) {
  return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
}
__device__ __host__ inline uint32_t frag_col(uint32_t t, uint32_t i) { return 8 * (i / 4) + 2 * (t % 4) + (i % 2); }

// B (N x kK, K-major, b[n * kK + k]) into shared memory as core matrices of 8 rows x 16 bytes:
// (n, k) at (k / 8) * (N * 16) + n * 16 + (k % 8) * 2 bytes; per k-step, LBO = N * 16 (the next 8
// of K), SBO = 128 (the next 8 rows). A (64 x kK, a[m * kK + k]) from registers, fragment by
// fragment. ScaleA = -1 and a given C (c) test the immediates and scale-d.
template <int N, int ScaleA>
__global__ void __launch_bounds__(128)
    register_a_kernel(const uint16_t* a, const uint16_t* b, const float* c, float* d) {
  __shared__ alignas(128) uint16_t sb[N * kK];
  const uint32_t t = threadIdx.x;
  for (uint32_t i = t; i < uint32_t(N * kK); i += 128) {
    const uint32_t n = i / kK, k = i % kK;
    sb[((k / 8) * (N * 16) + n * 16 + (k % 8) * 2) / 2] = b[n * kK + k];
  }
  ptx::fence_proxy_async_shared_cta();  // generic writes, read by the async proxy
  __syncthreads();
  float acc[N / 2];
  for (int i = 0; i < N / 2; ++i) acc[i] = c ? c[frag_row(t, i) * N + frag_col(t, i)] : 0.f;
  const uint32_t base = ptx::smem_addr(sb);
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    uint32_t fa[4] = {0, 0, 0, 0};
#pragma unroll
    for (uint32_t e = 0; e < 8; ++e)
      fa[e / 2] |= uint32_t(a[frag_row(t, e) * kK + 16 * kk + frag_col(t, e)]) << (16 * (e % 2));
    const uint64_t desc_b = ptx::make_wgmma_desc(base + 2 * kk * N * 16, N * 16, 128, ptx::wgmma_swizzle::none);
    ptx::wgmma_m64nNk16_f32_bf16_bf16<N, ScaleA>(acc, fa, desc_b, c != nullptr || kk > 0);
  }
  ptx::wgmma_commit_group();
  ptx::wgmma_wait_group<0>();
  ptx::wgmma_fence_operand(acc);
  for (int i = 0; i < N / 2; ++i) d[frag_row(t, i) * N + frag_col(t, i)] = acc[i];
}

float bf16_value(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

template <int N, int ScaleA>
void check(bool with_c) {
  std::mt19937_64 g(hopper_test::fresh_seed());
  std::vector<uint16_t> a(64 * kK), b(size_t(N) * kK);
  for (auto* v : {&a, &b})
    for (auto& h : *v) h = uint16_t(((g() & 1u) << 15) | ((124u + g() % 6u) << 7) | (g() & 0x7Fu));
  std::vector<float> c(64 * N);
  for (auto& x : c) x = float(int(g() % 17) - 8) * 0.25f;
  uint16_t *da, *db;
  float *dc, *dd;
  CUDA_OK(cudaMalloc(&da, a.size() * 2));
  CUDA_OK(cudaMalloc(&db, b.size() * 2));
  CUDA_OK(cudaMalloc(&dc, c.size() * 4));
  CUDA_OK(cudaMalloc(&dd, c.size() * 4));
  CUDA_OK(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dd, 0xff, c.size() * 4));  // NaN everywhere until written
  register_a_kernel<N, ScaleA><<<1, 128>>>(da, db, with_c ? dc : nullptr, dd);
  CUDA_LAUNCH_OK();
  std::vector<float> got(c.size());
  CUDA_OK(cudaMemcpy(got.data(), dd, got.size() * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = with_c ? double(c[size_t(m) * N + n]) : 0.0, mag = std::fabs(ref);
      for (int k = 0; k < kK; ++k) {
        const double x = double(ScaleA) * bf16_value(a[size_t(m) * kK + k]) * bf16_value(b[size_t(n) * kK + k]);
        ref += x, mag += std::fabs(x);
      }
      const double v = got[size_t(m) * N + n];
      if (!(std::fabs(v - ref) <= 1e-5 * mag + 1e-30) && ++bad <= 5)
        ADD_FAILURE() << "N=" << N << " D(" << m << ", " << n << ") = " << v << ", expected " << ref;
    }
  EXPECT_EQ(bad, 0) << "N=" << N << " of " << 64 * N;
  for (void* p : {static_cast<void*>(da), static_cast<void*>(db), static_cast<void*>(dc), static_cast<void*>(dd)})
    CUDA_OK(cudaFree(p));
}

TEST(ConformanceWgmma, AFromRegistersIsTheAccumulatorsFragmentLayout) {
  HOPPER_REQUIRE_SM90();
  check<64, 1>(false);
  check<128, 1>(false);
  check<256, 1>(false);
}

TEST(ConformanceWgmma, AFromRegistersNegatedAndAccumulating) {
  HOPPER_REQUIRE_SM90();
  check<128, -1>(true);
  check<64, -1>(false);
}

}  // namespace
