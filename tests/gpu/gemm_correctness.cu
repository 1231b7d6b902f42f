// The persistent bf16 GEMM against a float64 CPU reference (small shapes) and cuBLAS (large ones),
// with fresh random inputs (normal and uniform), the output poisoned with NaN before each run.
// The first tests are single tiles, so that a failure points at the smallest broken piece:
// one k-block, then the ring, then the cluster, then edges, layouts and sizes.
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "kernels/gemm/gemm.cuh"

namespace {

using hopper::gemm::config;
using hopper::gemm::major;
using hopper::gemm::out_type;
using hopper::gemm::problem;

enum class dist { normal, uniform };

struct host_operands {
  std::vector<__nv_bfloat16> a, b;  // stored as the layouts say
};

// Element counts of the stored operands (leading dimension x the other extent).
size_t a_elems(const problem& p) { return size_t(p.lda_or_packed()) * size_t(p.a_major == major::k ? p.M : p.K); }
size_t b_elems(const problem& p) { return size_t(p.ldb_or_packed()) * size_t(p.b_major == major::k ? p.N : p.K); }
size_t c_elems(const problem& p) { return size_t(p.ldc_or_packed()) * size_t(p.M); }

float a_at(const problem& p, const host_operands& h, int64_t m, int64_t k) {
  return __bfloat162float(p.a_major == major::k ? h.a[m * p.lda_or_packed() + k] : h.a[k * p.lda_or_packed() + m]);
}
float b_at(const problem& p, const host_operands& h, int64_t n, int64_t k) {
  return __bfloat162float(p.b_major == major::k ? h.b[n * p.ldb_or_packed() + k] : h.b[k * p.ldb_or_packed() + n]);
}

void fill(std::vector<__nv_bfloat16>& v, dist d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::uniform_real_distribution<float> ud(-1.f, 1.f);
  for (auto& x : v) x = __float2bfloat16(d == dist::normal ? nd(rng) : ud(rng));
}

// Device copies of the operands, the output poisoned with all-ones bytes (NaN in bf16 and f32).
struct device_problem {
  problem p;
  host_operands h;
  __nv_bfloat16 *a = nullptr, *b = nullptr;
  void* c = nullptr;
  ~device_problem() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};

::testing::AssertionResult setup(device_problem& d, const problem& p, dist dd, uint64_t salt) {
  d.p = p;
  d.h.a.resize(a_elems(p));
  d.h.b.resize(b_elems(p));
  const uint64_t seed = hopper_test::fresh_seed() ^ (salt * 0x9E3779B97F4A7C15ull);
  fill(d.h.a, dd, seed);
  fill(d.h.b, dd, seed + 1);
  if (cudaMalloc(&d.a, d.h.a.size() * 2) != cudaSuccess || cudaMalloc(&d.b, d.h.b.size() * 2) != cudaSuccess ||
      cudaMalloc(&d.c, c_elems(p) * hopper::gemm::out_bytes(p.out)) != cudaSuccess)
    return ::testing::AssertionFailure() << "cudaMalloc failed";
  if (cudaMemcpy(d.a, d.h.a.data(), d.h.a.size() * 2, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(d.b, d.h.b.data(), d.h.b.size() * 2, cudaMemcpyHostToDevice) != cudaSuccess)
    return ::testing::AssertionFailure() << "cudaMemcpy failed";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult poison(const device_problem& d) {
  if (cudaMemset(d.c, 0xFF, c_elems(d.p) * hopper::gemm::out_bytes(d.p.out)) != cudaSuccess)
    return ::testing::AssertionFailure() << "cudaMemset failed";
  return ::testing::AssertionSuccess();
}

std::vector<double> download(const device_problem& d) {
  const problem& p = d.p;
  std::vector<double> out(size_t(p.M) * p.N);
  const int64_t ldc = p.ldc_or_packed();
  if (p.out == out_type::bf16) {
    std::vector<__nv_bfloat16> c(c_elems(p));
    if (cudaMemcpy(c.data(), d.c, c.size() * 2, cudaMemcpyDeviceToHost) != cudaSuccess) return {};
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t n = 0; n < p.N; ++n) out[m * p.N + n] = __bfloat162float(c[m * ldc + n]);
  } else {
    std::vector<float> c(c_elems(p));
    if (cudaMemcpy(c.data(), d.c, c.size() * 4, cudaMemcpyDeviceToHost) != cudaSuccess) return {};
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t n = 0; n < p.N; ++n) out[m * p.N + n] = c[m * ldc + n];
  }
  return out;
}

std::vector<double> cpu_reference(const device_problem& d) {
  const problem& p = d.p;
  std::vector<double> at(size_t(p.M) * p.K), bt(size_t(p.N) * p.K);
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t k = 0; k < p.K; ++k) at[m * p.K + k] = a_at(p, d.h, m, k);
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t k = 0; k < p.K; ++k) bt[n * p.K + k] = b_at(p, d.h, n, k);
  std::vector<double> r(size_t(p.M) * p.N);
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n) {
      double s = 0;
      const double* x = &at[m * p.K];
      const double* y = &bt[n * p.K];
      for (int64_t k = 0; k < p.K; ++k) s += x[k] * y[k];
      r[m * p.N + n] = s;
    }
  return r;
}

// cuBLAS computes the same C (column-major view: C^T = B . A^T), fp32 compute.
::testing::AssertionResult cublas_reference(const device_problem& d, std::vector<double>& ref) {
  const problem& p = d.p;
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return ::testing::AssertionFailure() << "cublasCreate failed";
  void* c = nullptr;
  const size_t bytes = c_elems(p) * hopper::gemm::out_bytes(p.out);
  if (cudaMalloc(&c, bytes) != cudaSuccess) return ::testing::AssertionFailure() << "cudaMalloc failed";
  const float alpha = 1.f, beta = 0.f;
  const cudaDataType ct = p.out == out_type::bf16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasStatus_t st = cublasGemmEx(
      h, p.b_major == major::k ? CUBLAS_OP_T : CUBLAS_OP_N, p.a_major == major::k ? CUBLAS_OP_N : CUBLAS_OP_T, int(p.N),
      int(p.M), int(p.K), &alpha, d.b, CUDA_R_16BF, int(p.ldb_or_packed()), d.a, CUDA_R_16BF, int(p.lda_or_packed()),
      &beta, c, ct, int(p.ldc_or_packed()), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  cublasDestroy(h);
  if (st != CUBLAS_STATUS_SUCCESS) {
    cudaFree(c);
    return ::testing::AssertionFailure() << "cublasGemmEx returned " << int(st);
  }
  device_problem tmp;  // reuse download() on cuBLAS's C
  tmp.p = p;
  tmp.c = c;
  ref = download(tmp);
  return ::testing::AssertionSuccess();
}

// Max |C - ref| over max |ref|: bf16 output rounds each element by up to 2^-9 of itself, and the
// fp32 sums of different orders differ far less; 1e-2 leaves room for both, while a wrong tile,
// a stale stage or a swapped fragment gives errors of order 1. Every element must be written
// (the NaN poison must be gone).
::testing::AssertionResult close(const std::vector<double>& c, const std::vector<double>& ref, const problem& p) {
  if (c.size() != ref.size() || c.empty()) return ::testing::AssertionFailure() << "size mismatch / download failed";
  double max_ref = 0, max_err = 0;
  size_t worst = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (std::isnan(c[i]))
      return ::testing::AssertionFailure() << "C(" << i / p.N << ", " << i % p.N << ") is NaN: never written";
    max_ref = std::max(max_ref, std::fabs(ref[i]));
    const double e = std::fabs(c[i] - ref[i]);
    if (e > max_err) max_err = e, worst = i;
  }
  const double tol = p.out == out_type::bf16 ? 1e-2 : 2e-3;
  const double rel = max_err / std::max(max_ref, 1e-30);
  if (max_ref == 0) return ::testing::AssertionFailure() << "reference is all zeros";
  if (rel > tol)
    return ::testing::AssertionFailure() << "max |C - ref| / max |ref| = " << rel << " > " << tol << " at C("
                                         << worst / p.N << ", " << worst % p.N << "): " << c[worst] << " vs "
                                         << ref[worst];
  return ::testing::AssertionSuccess();
}

problem make(int64_t M, int64_t N, int64_t K, major a = major::k, major b = major::k, out_type o = out_type::bf16) {
  problem p;
  p.M = M, p.N = N, p.K = K, p.a_major = a, p.b_major = b, p.out = o;
  return p;
}

// cluster_m x cluster_n CTAs per cluster (B multicast along M, A multicast along N).
config forced(int bn, int cluster_m, int splits = 1, int cluster_n = 1) {
  config c;
  c.bn = bn;
  c.stages = bn >= 192 ? 4 : bn == 128 ? 6 : 8;
  c.cluster_m = cluster_m;
  c.cluster_n = cluster_n;
  c.splits = splits;
  return c;
}

// 64 x 128 tiles: the two consumer warpgroups split the columns (64 each).
config rows64(int cluster_m, int splits = 1) {
  config c = forced(128, cluster_m, splits);
  c.bm = 64;
  c.stages = 8;
  return c;
}

config pingpong(int cluster_m, int cluster_n = 1) {
  config c = forced(128, cluster_m, 1, cluster_n);
  c.pingpong = true;
  return c;
}

// Every cluster shape the kernels are instantiated for: {cluster_m, cluster_n}.
constexpr int cluster_shapes[][2] = {{1, 1}, {2, 1}, {1, 2}};

// Odd extents with leading dimensions padded to the next multiple of 8 elements (16-byte row
// pitch, what TMA needs), so the edge handling is tested rather than the validator.
problem padded(problem p) {
  const auto up8 = [](int64_t v) { return (v + 7) / 8 * 8; };
  p.lda = up8(p.a_major == major::k ? p.K : p.M);
  p.ldb = up8(p.b_major == major::k ? p.K : p.N);
  p.ldc = up8(p.N);
  return p;
}

// Runs the GEMM (twice, re-poisoning: a second launch must not depend on leftovers) and compares.
void check(const problem& p, dist dd, const config* cfg, bool use_cublas, uint64_t salt) {
  device_problem d;
  ASSERT_TRUE(setup(d, p, dd, salt));
  std::vector<double> ref;
  if (use_cublas) {
    ASSERT_TRUE(cublas_reference(d, ref));
  } else {
    ref = cpu_reference(d);
  }
  hopper::gemm::plan g(p, d.a, d.b, d.c, cfg);
  for (int rep = 0; rep < 2; ++rep) {
    ASSERT_TRUE(poison(d));
    CUDA_OK(g.run());
    CUDA_LAUNCH_OK();
    ASSERT_TRUE(close(download(d), ref, p))
        << "M x N x K = " << p.M << " x " << p.N << " x " << p.K << ", A " << name(p.a_major) << ", B "
        << name(p.b_major) << ", out " << name(p.out) << ", tile 128 x " << g.cfg().bn << ", cluster "
        << g.cfg().cluster_m << " x " << g.cfg().cluster_n << (g.cfg().pingpong ? " ping-pong" : "") << ", splits "
        << g.cfg().splits << ", grid " << g.grid() << ", run " << rep << ", seed " << hopper_test::fresh_seed();
  }
}

}  // namespace

// ---- smallest first: one tile, one k-block ---------------------------------------------------

TEST(GemmSingleTile, OneKBlock128x256NoCluster) {
  HOPPER_REQUIRE_SM90();
  config c = forced(256, 1);
  check(make(128, 256, 64), dist::uniform, &c, false, 1);
}

TEST(GemmSingleTile, OneKBlock128x128NoCluster) {
  HOPPER_REQUIRE_SM90();
  config c = forced(128, 1);
  check(make(128, 128, 64), dist::uniform, &c, false, 2);
}

TEST(GemmSingleTile, RingWrapsSeveralTimes) {  // 20 k-blocks through 4 stages: parity flips
  HOPPER_REQUIRE_SM90();
  config c = forced(256, 1);
  check(make(128, 256, 64 * 20), dist::normal, &c, false, 3);
}

TEST(GemmSingleTile, ClusterPairMulticast) {  // two CTAs, B multicast, 9 k-blocks
  HOPPER_REQUIRE_SM90();
  config c = forced(256, 2);
  check(make(256, 256, 64 * 9), dist::normal, &c, false, 4);
}

TEST(GemmSingleTile, ClusterPairMulticast128) {
  HOPPER_REQUIRE_SM90();
  config c = forced(128, 2);
  check(make(256, 128, 64 * 7), dist::normal, &c, false, 5);
}

TEST(GemmSingleTile, OneKBlock128x64NoCluster) {
  HOPPER_REQUIRE_SM90();
  config c = forced(64, 1);
  check(make(128, 64, 64), dist::uniform, &c, false, 3);
}

TEST(GemmSingleTile, ClusterRowAMulticast) {  // two CTAs side by side along N share A
  HOPPER_REQUIRE_SM90();
  for (int bn : {64, 128, 192, 256}) {
    config c = forced(bn, 1, 1, 2);
    SCOPED_TRACE(bn);
    check(make(128, 2 * bn, 64 * 9), dist::normal, &c, false, 6 + bn);
    if (HasFatalFailure()) return;
  }
}

// ---- persistent loop, edges, every instantiated configuration --------------------------------

TEST(GemmEdges, OddShapesEveryConfig) {
  HOPPER_REQUIRE_SM90();
  const int64_t shapes[][3] = {{200, 264, 136}, {300, 520, 1000}, {129, 257, 72}, {1000, 8, 8}, {8, 1000, 24}};
  int salt = 10;
  for (int bn : {128, 256})
    for (const auto& cl : cluster_shapes)
      for (const auto& s : shapes) {
        config c = forced(bn, cl[0], 1, cl[1]);
        SCOPED_TRACE(::testing::Message()
                     << s[0] << "x" << s[1] << "x" << s[2] << " bn " << bn << " cluster " << cl[0] << " x " << cl[1]);
        check(padded(make(s[0], s[1], s[2])), salt % 2 ? dist::normal : dist::uniform, &c, false, salt);
        ++salt;
        if (HasFatalFailure()) return;
      }
  for (int cn : {1, 2})  // 128 x 192 tiles: clusters along N only; with 2 splits as well
    for (int splits : {1, 2})
      for (const auto& s : shapes) {
        config c = forced(192, 1, splits, cn);
        SCOPED_TRACE(::testing::Message()
                     << s[0] << "x" << s[1] << "x" << s[2] << " bn 192 cluster 1 x " << cn << " splits " << splits);
        if (splits > (s[2] + 63) / 64) continue;
        check(padded(make(s[0], s[1], s[2])), salt % 2 ? dist::normal : dist::uniform, &c, false, salt);
        ++salt;
        if (HasFatalFailure()) return;
      }
  for (int cn : {1, 2})  // 128 x 64 tiles: clusters along N only (one 64-wide B box per tile)
    for (const auto& s : shapes) {
      config c = forced(64, 1, 1, cn);
      SCOPED_TRACE(::testing::Message() << s[0] << "x" << s[1] << "x" << s[2] << " bn 64 cluster 1 x " << cn);
      check(padded(make(s[0], s[1], s[2])), salt % 2 ? dist::normal : dist::uniform, &c, false, salt);
      ++salt;
      if (HasFatalFailure()) return;
    }
}

TEST(GemmEdges, KSmallerThanOneStage) {
  HOPPER_REQUIRE_SM90();
  for (int64_t k : {8, 16, 24, 40, 56}) {
    SCOPED_TRACE(k);
    check(make(256, 512, k), dist::normal, nullptr, false, 100 + k);
    if (HasFatalFailure()) return;
  }
}

TEST(GemmEdges, SkinnyM1To128) {
  HOPPER_REQUIRE_SM90();
  for (int64_t m : {1, 2, 3, 7, 8, 31, 64, 65, 100, 127, 128}) {
    SCOPED_TRACE(m);
    check(make(m, 1024, 256), dist::normal, nullptr, false, 200 + m);
    if (HasFatalFailure()) return;
  }
}

TEST(GemmEdges, ManyTilesPerCta) {  // more tiles than SMs: the persistent loop and the store overlap
  HOPPER_REQUIRE_SM90();
  check(make(1536, 1536, 256), dist::uniform, nullptr, false, 300);
  // The cooperative kernels with several tiles per CTA: each tile's deferred epilogue half is
  // stored under the next tile's first k-block, the last one after the loop; with edge tiles.
  int salt = 301;
  for (const config& c : {forced(256, 2, 1, 1), forced(128, 1, 1, 2), forced(128, 1, 1, 1)})
    for (const auto& s : {std::array<int64_t, 3>{3000, 2000, 200}, std::array<int64_t, 3>{4096, 4096, 64}}) {
      SCOPED_TRACE(::testing::Message() << s[0] << "x" << s[1] << "x" << s[2] << " bn " << c.bn << " cluster "
                                        << c.cluster_m << " x " << c.cluster_n);
      check(padded(make(s[0], s[1], s[2])), dist::normal, &c, true, salt++);
      if (HasFatalFailure()) return;
    }
}

TEST(GemmEdges, LeadingDimensionsLargerThanExtents) {
  HOPPER_REQUIRE_SM90();
  problem p = make(130, 200, 72);
  p.lda = 88, p.ldb = 96, p.ldc = 216;
  check(p, dist::normal, nullptr, false, 400);
}

// ---- ping-pong: each consumer warpgroup owns whole tiles, ordered by named barriers ---------------

TEST(GemmPingPong, OneTileOnlyWarpgroupZeroWorks) {  // warpgroup 1 has no unit: no order barrier used
  HOPPER_REQUIRE_SM90();
  for (const auto& cl : cluster_shapes) {
    config c = pingpong(cl[0], cl[1]);
    SCOPED_TRACE(::testing::Message() << "cluster " << cl[0] << " x " << cl[1]);
    check(make(128 * cl[0], 128 * cl[1], 64 * 9), dist::normal, &c, false, 1000 + 2 * cl[0] + cl[1]);
    if (HasFatalFailure()) return;
  }
}

TEST(GemmPingPong, SomeCtasTwoUnits) {  // 144 tiles on <= 132 CTAs: warpgroup 1 runs on some only
  HOPPER_REQUIRE_SM90();
  config c = pingpong(1);
  check(make(1536, 1536, 64 * 7), dist::uniform, &c, false, 1010);  // 7 k-blocks through 6 stages
}

TEST(GemmPingPong, ManyTilesPerCtaEveryLayout) {  // more units than clusters: alternation, skips, order
  HOPPER_REQUIRE_SM90();
  int salt = 1020;
  for (const auto& cl : cluster_shapes)
    for (major a : {major::k, major::mn})
      for (major b : {major::k, major::mn}) {
        config c = pingpong(cl[0], cl[1]);
        SCOPED_TRACE(::testing::Message()
                     << "cluster " << cl[0] << " x " << cl[1] << " A " << name(a) << " B " << name(b));
        // 24 x 23 tiles of 128 x 128 = 552 units (odd per-CTA counts), 5 k-blocks: ring wraps
        // at a different stage for every unit.
        check(make(3072, 2944, 320, a, b), salt % 2 ? dist::normal : dist::uniform, &c, false, salt);
        ++salt;
        if (HasFatalFailure()) return;
      }
}

TEST(GemmPingPong, OddShapesAndShortK) {
  HOPPER_REQUIRE_SM90();
  const int64_t shapes[][3] = {{200, 264, 136}, {1000, 1000, 1000}, {129, 2570, 72},
                               {2000, 8, 8},    {8, 1000, 24},      {4100, 1030, 40}};
  int salt = 1040;
  for (const auto& cl : cluster_shapes)
    for (const auto& s : shapes) {
      config c = pingpong(cl[0], cl[1]);
      SCOPED_TRACE(::testing::Message() << s[0] << "x" << s[1] << "x" << s[2] << " cluster " << cl[0] << " x "
                                        << cl[1]);
      check(padded(make(s[0], s[1], s[2])), salt % 2 ? dist::normal : dist::uniform, &c, false, salt);
      ++salt;
      if (HasFatalFailure()) return;
    }
}

TEST(GemmPingPong, Float32OutputAndLargeVsCublas) {
  HOPPER_REQUIRE_SM90();
  config c = pingpong(2);
  check(make(1024, 768, 512, major::k, major::k, out_type::f32), dist::normal, &c, false, 1060);
  if (HasFatalFailure()) return;
  check(make(4096, 4096, 1024), dist::uniform, &c, true, 1061);
  if (HasFatalFailure()) return;
  check(make(2048, 6144, 4096), dist::normal, &c, true, 1062);
  if (HasFatalFailure()) return;
  c = pingpong(1, 2);
  check(make(8192, 8192, 1024), dist::normal, &c, true, 1063);
}

// ---- split-K: partials in the workspace, the last split of a tile sums them ---------------------

TEST(GemmSplitK, EverySplitCountAndConfig) {
  HOPPER_REQUIRE_SM90();
  // Ragged k-ranges (K not a multiple of splits x 64), edge tiles, rows beyond M in a cluster pair.
  const int64_t shapes[][3] = {{128, 256, 64 * 9}, {300, 520, 1000}, {200, 136, 456}};
  int salt = 900;
  for (int bn : {128, 256})
    for (const auto& cl : cluster_shapes)
      for (int splits : {2, 3, 4})
        for (const auto& s : shapes) {
          config c = forced(bn, cl[0], splits, cl[1]);
          SCOPED_TRACE(::testing::Message() << s[0] << "x" << s[1] << "x" << s[2] << " bn " << bn << " cluster "
                                            << cl[0] << " x " << cl[1] << " splits " << splits);
          check(make(s[0], s[1], s[2]), salt % 2 ? dist::normal : dist::uniform, &c, false, salt);
          ++salt;
          if (HasFatalFailure()) return;
        }
}

// A plan made with hopper::gemm::external_workspace allocates nothing; each run brings a
// workspace (here a fresh cudaMalloc, its counters zeroed), and bind() moves the plan to another
// problem's buffers of the same shape. Both problems must come out right, twice each.
TEST(GemmSplitK, ExternalWorkspaceAndRebind) {
  HOPPER_REQUIRE_SM90();
  for (int splits : {1, 3}) {
    const config c = forced(128, 2, splits);
    const problem p = make(300, 520, 1000);
    device_problem d1, d2;
    ASSERT_TRUE(setup(d1, p, dist::normal, 1200 + uint64_t(splits)));
    ASSERT_TRUE(setup(d2, p, dist::uniform, 1300 + uint64_t(splits)));
    const std::vector<double> r1 = cpu_reference(d1), r2 = cpu_reference(d2);
    hopper::gemm::plan g(p, d1.a, d1.b, d1.c, hopper::gemm::external_workspace, &c);
    EXPECT_EQ(g.workspace_bytes() > 0, splits > 1) << "splits " << splits;
    if (splits > 1) EXPECT_THROW((void)g.run(nullptr, nullptr), std::invalid_argument);
    if (splits > 1) EXPECT_THROW((void)g.run(nullptr), std::invalid_argument);  // it owns no workspace
    for (int rep = 0; rep < 4; ++rep) {
      device_problem& d = rep % 2 ? d2 : d1;
      g.bind(d.a, d.b, d.c);
      void* ws = nullptr;
      if (g.workspace_bytes() > 0) {
        CUDA_OK(cudaMalloc(&ws, g.workspace_bytes()));
        CUDA_OK(cudaMemset(ws, 0xFF, g.counters_offset()));  // partials: garbage the kernel overwrites
        CUDA_OK(cudaMemset(static_cast<char*>(ws) + g.counters_offset(), 0, g.workspace_bytes() - g.counters_offset()));
      }
      ASSERT_TRUE(poison(d));
      CUDA_OK(g.run(nullptr, ws));
      CUDA_LAUNCH_OK();
      CUDA_OK(cudaFree(ws));
      ASSERT_TRUE(close(download(d), rep % 2 ? r2 : r1, p)) << "splits " << splits << ", run " << rep;
    }
  }
}

TEST(GemmSplitK, MoreUnitsThanClustersAndLayouts) {  // persistent loop over split units; counters reset
  HOPPER_REQUIRE_SM90();
  config c = forced(128, 2, 3);
  check(make(2048, 1024, 1536), dist::normal, &c, false, 950);  // 16 x 8 tiles x 3 splits = 384 units
  c = forced(256, 2, 2);
  check(make(520, 264, 600, major::mn, major::mn), dist::uniform, &c, false, 951);
  check(make(264, 320, 200, major::k, major::mn, out_type::f32), dist::normal, &c, false, 952);
  c = forced(128, 1, 2, 2);  // A multicast along N, 64 tiles x 2 splits: the skinny case
  check(make(128, 8192, 2048), dist::uniform, &c, true, 953);
  c = forced(256, 1, 3, 2);
  check(make(1000, 1040, 1536, major::mn, major::k), dist::normal, &c, false, 954);
  c = forced(64, 1, 2, 2);  // 128 x 64 tiles, A multicast, 2 splits, B MN-major
  check(make(256, 1000, 1536, major::k, major::mn), dist::uniform, &c, false, 955);
}

TEST(GemmSplitK, ChosenForFewTilesVsCublas) {  // the rule picks pairs of half tiles here, with 2 splits at K = 8192
  HOPPER_REQUIRE_SM90();
  check(make(1024, 1024, 1024), dist::normal, nullptr, true, 960);
  check(make(128, 4096, 8192), dist::uniform, nullptr, true, 961);
}

// Few tokens and long K in up to max_splits pieces per tile: only the warps holding rows below M
// leave partials, and the last piece spreads the sum over its warpgroup (one or two live warps)
// or sums per thread (three or four). More work units than SMs in some cases (the persistent loop).
TEST(GemmSplitK, ManySplitsFewTokens) {
  HOPPER_REQUIRE_SM90();
  struct cs {
    int64_t m, n, k;
    config c;
    major b;
    out_type o;
  };
  config narrow = forced(64, 1, 14);  // 128 x 64 tiles: 9 tiles x 14 splits of 576 x 7168
  const cs cases[] = {{1, 576, 7168, narrow, major::k, out_type::bf16},
                      {16, 576, 7168, rows64(1, 14), major::k, out_type::bf16},
                      {24, 1536, 7168, rows64(1, 16), major::mn, out_type::f32},
                      {40, 4096, 4096, rows64(1, 12), major::k, out_type::bf16},
                      {64, 4096, 7000, rows64(1, 6), major::k, out_type::f32},
                      {80, 600, 3000, forced(64, 1, 16), major::mn, out_type::bf16},
                      {100, 256, 2048, forced(256, 1, 8), major::k, out_type::bf16},
                      {8, 3584, 1100, rows64(2, 5), major::k, out_type::bf16}};
  int salt = 970;
  for (const cs& t : cases) {
    const problem p = padded(make(t.m, t.n, t.k, major::k, t.b, t.o));
    SCOPED_TRACE(::testing::Message() << t.m << "x" << t.n << "x" << t.k << " bm " << t.c.bm << " bn " << t.c.bn
                                      << " cluster " << t.c.cluster_m << " splits " << t.c.splits);
    check(p, salt % 2 ? dist::normal : dist::uniform, &t.c, true, salt);
    ++salt;
    if (HasFatalFailure()) return;
  }
}

// ---- stream-K: the last partial round's k-blocks (with the round before, if short) shared by every cluster

TEST(GemmStreamK, TailSharedByAllClusters) {
  HOPPER_REQUIRE_SM90();
  struct cs {
    int64_t m, n, k;
    int bn, cm, cn;
    major a, b;
    out_type o;
  };
  // Cluster tiles just above one round (tails of several tiles per cluster share), tiles over
  // M / N edges, every cluster shape of 128 x 256 and 128 x 128, MN-major layouts, fp32 output.
  const cs cases[] = {{3000, 3000, 1000, 256, 2, 1, major::k, major::k, out_type::bf16},
                      {1544, 1544, 1536, 128, 1, 1, major::k, major::k, out_type::bf16},
                      {2056, 4104, 520, 256, 1, 2, major::mn, major::k, out_type::bf16},
                      {4100, 2000, 776, 128, 2, 1, major::k, major::mn, out_type::f32},
                      {3000, 3000, 1000, 256, 1, 1, major::mn, major::mn, out_type::bf16},
                      {4096, 4096, 4096, 256, 2, 1, major::k, major::k, out_type::bf16},
                      // A short last round (4, 14 and 12 tiles) joined with the round before it:
                      // every tile in the stream-K region, in at most two pieces.
                      {1792, 2560, 1000, 256, 2, 1, major::k, major::k, out_type::bf16},
                      {1800, 2500, 600, 256, 2, 1, major::mn, major::k, out_type::f32},
                      {1536, 1504, 704, 128, 1, 1, major::k, major::mn, out_type::bf16}};
  int salt = 1300;
  for (const cs& t : cases) {
    config c = forced(t.bn, t.cm, 1, t.cn);
    c.stream_k = true;
    const problem p = make(t.m, t.n, t.k, t.a, t.b, t.o);
    SCOPED_TRACE(::testing::Message() << t.m << "x" << t.n << "x" << t.k << " bn " << t.bn << " cluster " << t.cm
                                      << " x " << t.cn);
    device_problem d;
    ASSERT_TRUE(setup(d, p, salt % 2 ? dist::normal : dist::uniform, salt));
    hopper::gemm::plan g(p, d.a, d.b, d.c, &c);
    EXPECT_GT(g.stream_k_tiles(), 0) << "the case should have a stream-K tail";
    check(p, salt % 2 ? dist::normal : dist::uniform, &c, true, salt);
    ++salt;
    if (HasFatalFailure()) return;
  }
}

// Fewer cluster tiles than resident clusters: with stream_k the whole problem is shared, every
// cluster taking an equal share of all k-blocks (tiles in 2 to about 35 pieces, shares crossing tiles).
TEST(GemmStreamK, WholeProblemSharedBelowOneWave) {
  HOPPER_REQUIRE_SM90();
  struct cs {
    int64_t m, n, k;
    config c;
    major a, b;
    out_type o;
  };
  const cs cases[] = {{1, 6144, 4096, rows64(1), major::k, major::k, out_type::bf16},
                      {8, 4608, 3584, rows64(1), major::k, major::mn, out_type::f32},
                      {64, 10240, 8192, forced(256, 1), major::k, major::k, out_type::bf16},
                      {256, 4608, 3584, forced(128, 2), major::mn, major::k, out_type::bf16},
                      {4096, 576, 7168, forced(192, 1), major::k, major::k, out_type::bf16},
                      {1000, 600, 2000, forced(128, 1, 1, 2), major::k, major::mn, out_type::f32},
                      {136, 72, 3000, forced(64, 1), major::mn, major::mn, out_type::bf16}};
  int salt = 1400;
  for (const cs& t : cases) {
    config c = t.c;
    c.stream_k = true;
    const problem p = make(t.m, t.n, t.k, t.a, t.b, t.o);
    SCOPED_TRACE(::testing::Message() << t.m << "x" << t.n << "x" << t.k << " bm " << c.bm << " bn " << c.bn
                                      << " cluster " << c.cluster_m << " x " << c.cluster_n);
    device_problem d;
    ASSERT_TRUE(setup(d, p, salt % 2 ? dist::normal : dist::uniform, salt));
    hopper::gemm::plan g(p, d.a, d.b, d.c, &c);
    const hopper::gemm::work_schedule& w = g.layout().schedule.work;
    EXPECT_EQ(w.dp_tiles, 0) << "the case should share the whole problem";
    EXPECT_GT(w.clusters, w.order.total()) << "more clusters than tiles";
    check(p, salt % 2 ? dist::normal : dist::uniform, &c, true, salt);
    ++salt;
    if (HasFatalFailure()) return;
  }
}

// ---- layouts and output type -------------------------------------------------------------------

TEST(GemmLayouts, EveryMajorCombination) {
  HOPPER_REQUIRE_SM90();
  int salt = 500;
  for (major a : {major::k, major::mn})
    for (major b : {major::k, major::mn})
      for (const auto& cl : cluster_shapes) {
        config c = forced(256, cl[0], 1, cl[1]);
        SCOPED_TRACE(::testing::Message()
                     << "A " << name(a) << " B " << name(b) << " cluster " << cl[0] << " x " << cl[1]);
        check(make(264, 320, 200, a, b), dist::normal, &c, false, salt++);
        if (HasFatalFailure()) return;
      }
}

TEST(GemmLayouts, EveryMajorCombination192) {  // 128 x 192 tiles: clusters along N only
  HOPPER_REQUIRE_SM90();
  int salt = 540;
  for (major a : {major::k, major::mn})
    for (major b : {major::k, major::mn})
      for (int cn : {1, 2})
        for (const auto& s : {std::array<int64_t, 3>{264, 520, 200}, std::array<int64_t, 3>{1000, 1160, 136}}) {
          config c = forced(192, 1, 1, cn);
          SCOPED_TRACE(::testing::Message() << "A " << name(a) << " B " << name(b) << " cluster 1 x " << cn << " "
                                            << s[0] << "x" << s[1] << "x" << s[2]);
          check(padded(make(s[0], s[1], s[2], a, b)), dist::normal, &c, false, salt++);
          if (HasFatalFailure()) return;
        }
}

TEST(GemmLayouts, EveryMajorCombination64) {
  HOPPER_REQUIRE_SM90();
  int salt = 560;
  for (major a : {major::k, major::mn})
    for (major b : {major::k, major::mn})
      for (int cn : {1, 2}) {
        config c = forced(64, 1, 1, cn);
        SCOPED_TRACE(::testing::Message() << "A " << name(a) << " B " << name(b) << " cluster 1 x " << cn);
        check(make(264, 328, 200, a, b), dist::uniform, &c, false, salt++);
        if (HasFatalFailure()) return;
      }
}

TEST(GemmLayouts, MnMajor128Tiles) {
  HOPPER_REQUIRE_SM90();
  for (const auto& cl : cluster_shapes) {
    config c = forced(128, cl[0], 1, cl[1]);
    SCOPED_TRACE(::testing::Message() << "cluster " << cl[0] << " x " << cl[1]);
    check(padded(make(300, 200, 136, major::mn, major::mn)), dist::uniform, &c, false, 600 + 2 * cl[0] + cl[1]);
    if (HasFatalFailure()) return;
  }
}

TEST(GemmOutput, Float32Output) {
  HOPPER_REQUIRE_SM90();
  for (int bn : {64, 128, 256}) {
    config c = forced(bn, bn == 64 ? 1 : 2);
    check(make(300, 520, 264, major::k, major::k, out_type::f32), dist::normal, &c, false, 700 + bn);
    if (HasFatalFailure()) return;
  }
  check(padded(make(100, 136, 64, major::mn, major::k, out_type::f32)), dist::uniform, nullptr, false, 701);
}

// ---- large shapes against cuBLAS ------------------------------------------------------------------

TEST(GemmVsCublas, Square2048Normal) {
  HOPPER_REQUIRE_SM90();
  check(make(2048, 2048, 2048), dist::normal, nullptr, true, 800);
}

TEST(GemmVsCublas, Square4096Uniform) {
  HOPPER_REQUIRE_SM90();
  check(make(4096, 4096, 4096), dist::uniform, nullptr, true, 801);
}

TEST(GemmVsCublas, Skinny128x8192x8192) {  // the rule pairs 64 x 128 tiles (B multicast) here
  HOPPER_REQUIRE_SM90();
  check(make(128, 8192, 8192), dist::normal, nullptr, true, 802);
}

TEST(GemmVsCublas, Narrow8192x128x8192) {  // the rule pairs 128 x 64 tiles (A multicast) here
  HOPPER_REQUIRE_SM90();
  check(make(8192, 128, 8192), dist::normal, nullptr, true, 805);
  check(make(8192, 120, 4096, major::mn, major::mn), dist::uniform, nullptr, true, 806);
}

TEST(GemmVsCublas, RowMajorBAndOddEdges) {
  HOPPER_REQUIRE_SM90();
  check(make(3000, 2056, 1032, major::k, major::mn), dist::normal, nullptr, true, 803);
  check(make(2056, 3000, 1032, major::mn, major::k, out_type::f32), dist::uniform, nullptr, true, 804);
}

// ---- 64-row tiles: the consumer warpgroups split the columns ------------------------------------

TEST(GemmRows64, SingleTileEdgesLayoutsSplitsAndOutput) {
  HOPPER_REQUIRE_SM90();
  int salt = 1400;
  for (int cm : {1, 2}) {
    config c = rows64(cm);
    SCOPED_TRACE(::testing::Message() << "cluster " << cm << " x 1");
    check(make(64 * cm, 128, 64 * 9), dist::normal, &c, false, salt++);  // one tile per CTA, ring wraps
    if (HasFatalFailure()) return;
    const int64_t shapes[][3] = {{200, 264, 136}, {129, 257, 72}, {1000, 8, 8}, {8, 1000, 24}, {64, 72, 40}};
    for (const auto& s : shapes) {
      SCOPED_TRACE(::testing::Message() << s[0] << "x" << s[1] << "x" << s[2]);
      check(padded(make(s[0], s[1], s[2])), salt % 2 ? dist::normal : dist::uniform, &c, false, salt);
      ++salt;
      if (HasFatalFailure()) return;
    }
    for (major a : {major::k, major::mn})
      for (major b : {major::k, major::mn}) {
        SCOPED_TRACE(::testing::Message() << "A " << name(a) << " B " << name(b));
        check(make(264, 328, 200, a, b), dist::uniform, &c, false, salt++);
        if (HasFatalFailure()) return;
      }
    check(make(300, 520, 264, major::k, major::k, out_type::f32), dist::normal, &c, false, salt++);
    if (HasFatalFailure()) return;
    for (int splits : {2, 3}) {
      config cs = rows64(cm, splits);
      SCOPED_TRACE(::testing::Message() << splits << " splits");
      check(make(200, 264, 64 * 11), dist::normal, &cs, false, salt++);
      if (HasFatalFailure()) return;
    }
  }
  config c = rows64(2);  // the streaming skinny case, against cuBLAS
  check(make(128, 8192, 8192), dist::uniform, &c, true, salt);
}

// ---- programmatic dependent launch: back-to-back kernels overlap only where that is safe ----------

// Three launches in one stream, each allowed to start under the previous one's tail:
//   g1: C1 = A1 . B1^T (long K, so its tail is long);
//   g3: writes E . F^T over B1's memory, which g1 reads (WAR: must not start storing before g1 is done);
//   g2: C2 = C1 . D^T reads g1's output (RAW across two launches).
// C1 against cuBLAS computed beforehand, C2 against the float64 product of the C1 that was
// downloaded, B1's memory against E . F^T. A kernel that read or wrote before griddepcontrol.wait
// returned would see NaN poison or corrupt C1.
TEST(GemmProgrammaticLaunch, BackToBackRawAndWar) {
  HOPPER_REQUIRE_SM90();
  const problem p1 = make(1024, 512, 8192), p2 = make(1024, 256, 512), p3 = make(512, 8192, 64);
  for (int rep = 0; rep < 3; ++rep) {
    SCOPED_TRACE(rep);
    device_problem d1, d2, d3;
    ASSERT_TRUE(setup(d1, p1, dist::normal, 1100 + rep));
    ASSERT_TRUE(setup(d2, p2, dist::uniform, 1110 + rep));  // d2.b is D; d2.a is unused (A = C1)
    ASSERT_TRUE(setup(d3, p3, dist::normal, 1120 + rep));   // d3.a, d3.b are E, F; C3 goes to B1
    std::vector<double> ref1;
    ASSERT_TRUE(cublas_reference(d1, ref1));
    const std::vector<double> ref3 = cpu_reference(d3);
    hopper::gemm::plan g1(p1, d1.a, d1.b, d1.c), g2(p2, d1.c, d2.b, d2.c), g3(p3, d3.a, d3.b, d1.b);
    ASSERT_TRUE(g1.programmatic_launch() && g2.programmatic_launch() && g3.programmatic_launch());
    ASSERT_TRUE(poison(d1));
    ASSERT_TRUE(poison(d2));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(g1.run());
    CUDA_OK(g3.run());
    CUDA_OK(g2.run());
    CUDA_LAUNCH_OK();
    const std::vector<double> c1 = download(d1);
    ASSERT_TRUE(close(c1, ref1, p1)) << "g1's result: g3 overwrote B1 while g1 still read it?";
    // C2's reference from the C1 the GPU produced (as bf16) and D.
    device_problem r2;
    r2.p = p2;
    r2.h.a.resize(c1.size());
    for (size_t i = 0; i < c1.size(); ++i) r2.h.a[i] = __float2bfloat16(float(c1[i]));
    r2.h.b = d2.h.b;
    ASSERT_TRUE(close(download(d2), cpu_reference(r2), p2)) << "g2 read C1 before g1 finished?";
    device_problem out3;  // B1's memory as g3's output
    out3.p = p3;
    out3.c = d1.b;
    const std::vector<double> c3 = download(out3);
    out3.c = nullptr;  // owned by d1
    ASSERT_TRUE(close(c3, ref3, p3)) << "g3's result in B1's memory";
  }
}

// ---- bad input is refused before anything runs -----------------------------------------------

TEST(GemmValidation, PlanRejectsBadInput) {
  HOPPER_REQUIRE_SM90();
  void* buf = nullptr;
  CUDA_OK(cudaMalloc(&buf, 1 << 20));
  auto* b16 = static_cast<__nv_bfloat16*>(buf);
  EXPECT_THROW(hopper::gemm::plan(make(64, 64, 12), b16, b16, b16), std::invalid_argument);  // K % 8
  EXPECT_THROW(hopper::gemm::plan(make(64, 60, 64), b16, b16, b16), std::invalid_argument);  // N % 8
  EXPECT_THROW(hopper::gemm::plan(make(64, 64, 64), b16 + 1, b16, b16), std::invalid_argument);
  EXPECT_THROW(hopper::gemm::plan(make(0, 64, 64), b16, b16, b16), std::invalid_argument);
  config bad = forced(96, 1);
  EXPECT_THROW(hopper::gemm::plan(make(64, 64, 64), b16, b16, b16, &bad), std::invalid_argument);
  bad = forced(256, 2);
  bad.pingpong = true;  // ping-pong tiles are 128 x 128
  EXPECT_THROW(hopper::gemm::plan(make(256, 256, 1024), b16, b16, b16, &bad), std::invalid_argument);
  bad = forced(128, 2, 2);
  bad.pingpong = true;  // no split-K in ping-pong
  EXPECT_THROW(hopper::gemm::plan(make(256, 256, 1024), b16, b16, b16, &bad), std::invalid_argument);
  bad = forced(128, 1, hopper::gemm::max_splits + 1);  // splits 1..max_splits (K has 64 k-blocks)
  EXPECT_THROW(hopper::gemm::plan(make(64, 64, 4096), b16, b16, b16, &bad), std::invalid_argument);
  bad = forced(128, 1, 3);  // more splits than the 2 k-blocks of K = 128
  EXPECT_THROW(hopper::gemm::plan(make(64, 64, 128), b16, b16, b16, &bad), std::invalid_argument);
  bad = forced(256, 2, 1, 2);  // no 2 x 2 clusters (docs/gemm.md says why)
  EXPECT_THROW(hopper::gemm::plan(make(1024, 1024, 1024), b16, b16, b16, &bad), std::invalid_argument);
  bad = forced(256, 4);  // clusters are 1 or 2 CTAs along each of M and N
  EXPECT_THROW(hopper::gemm::plan(make(1024, 1024, 1024), b16, b16, b16, &bad), std::invalid_argument);
  bad = forced(256, 1, 1, 3);
  EXPECT_THROW(hopper::gemm::plan(make(1024, 1024, 1024), b16, b16, b16, &bad), std::invalid_argument);
  bad = pingpong(2);
  bad.stream_k = true;  // ping-pong runs whole tiles
  EXPECT_THROW(hopper::gemm::plan(make(1024, 1024, 1024), b16, b16, b16, &bad), std::invalid_argument);
  CUDA_OK(cudaFree(buf));
}
