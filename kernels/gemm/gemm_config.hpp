// The GEMM as the host sees it: the problem, its validation and the rule that picks tile shape,
// stage count and cluster size. Plain C++ (no CUDA), so that host tests exercise it without a GPU.
//
//   C[M x N] = A[M x K] . B[N x K]^T   (fp32 accumulation, bf16 inputs, bf16 or fp32 output)
//
// A is "K-major" when A(m, k) sits at A[m * lda + k] (row-major M x K) and "MN-major" when it sits
// at A[k * lda + m]. B likewise: K-major B(n, k) = B[n * ldb + k] (the "TN" GEMM, both operands
// contiguous along K) and MN-major B(n, k) = B[k * ldb + n] (B stored row-major K x N, the plain
// C = A . B). C is row-major: C(m, n) = C[m * ldc + n].
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace hopper::gemm {

enum class major { k, mn };
enum class out_type { bf16, f32 };

inline const char* name(major m) { return m == major::k ? "K-major" : "MN-major"; }
inline const char* name(out_type o) { return o == out_type::bf16 ? "bf16" : "f32"; }
inline int64_t out_bytes(out_type o) { return o == out_type::bf16 ? 2 : 4; }

struct problem {
  int64_t M = 0, N = 0, K = 0;
  major a_major = major::k;
  major b_major = major::k;
  out_type out = out_type::bf16;
  // Leading dimensions in elements; 0 means packed (the contiguous extent).
  int64_t lda = 0, ldb = 0, ldc = 0;

  int64_t lda_or_packed() const { return lda ? lda : (a_major == major::k ? K : M); }
  int64_t ldb_or_packed() const { return ldb ? ldb : (b_major == major::k ? K : N); }
  int64_t ldc_or_packed() const { return ldc ? ldc : N; }
  double flops() const { return 2.0 * double(M) * double(N) * double(K); }
};

// The kernel's compile-time shape, chosen per problem by choose_config().
struct config {
  int bm = 128;      // two consumer warpgroups of 64 rows each
  int bn = 256;      // 256 or 128: the n of wgmma.m64nNk16
  int bk = 64;       // one 128-byte swizzle row of bf16
  int stages = 4;    // ring depth
  int cluster = 2;   // CTAs along M sharing (multicasting) the B tile
  int group_m = 8;   // cluster-rows per group of the grouped tile order
  int splits = 1;    // split-K: k-ranges per tile, reduced in an fp32 workspace (1..4)
};

namespace detail {
[[noreturn]] inline void fail(const std::string& what) {
  throw std::invalid_argument("hopper::gemm: " + what);
}
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace detail

// Shared memory one CTA of `c` uses: stages of A (bm x bk) and B (bn x bk) bf16 tiles, two
// double-buffered 64 x 128-byte epilogue boxes per consumer warpgroup, the barriers, and 1 KiB
// of slack to align the 128B-swizzle atoms to 1024 bytes.
inline int64_t smem_bytes(const config& c) {
  const int64_t stage = int64_t(c.bm + c.bn) * c.bk * 2;
  const int64_t epilogue = 2 /*warpgroups*/ * 2 /*buffers*/ * 64 * 128;
  return c.stages * stage + epilogue + 2 * 8 * c.stages + 1024;
}

inline constexpr int64_t max_smem_per_block = 232448;  // 227 KiB, sm_90 opt-in limit

// Rejects what the kernel cannot compute exactly, naming the bad value. TMA needs every global
// row pitch to be a multiple of 16 bytes and every base 16-byte aligned; coordinates are int32.
inline void validate(const problem& p, const void* A, const void* B, const void* C) {
  using detail::fail;
  const auto s = [](int64_t v) { return std::to_string(v); };
  if (p.M < 1) fail("M = " + s(p.M) + " must be >= 1");
  if (p.N < 1) fail("N = " + s(p.N) + " must be >= 1");
  if (p.K < 1) fail("K = " + s(p.K) + " must be >= 1");
  const int64_t lim = int64_t(1) << 31;
  if (p.M >= lim || p.N >= lim || p.K >= lim)
    fail("M x N x K = " + s(p.M) + " x " + s(p.N) + " x " + s(p.K) + " exceeds 2^31-1 in a dimension");
  if (p.a_major != major::k && p.a_major != major::mn) fail("a_major is not a hopper::gemm::major");
  if (p.b_major != major::k && p.b_major != major::mn) fail("b_major is not a hopper::gemm::major");
  if (p.out != out_type::bf16 && p.out != out_type::f32) fail("out is not a hopper::gemm::out_type");
  const int64_t lda = p.lda_or_packed(), ldb = p.ldb_or_packed(), ldc = p.ldc_or_packed();
  const int64_t a_row = p.a_major == major::k ? p.K : p.M;
  const int64_t b_row = p.b_major == major::k ? p.K : p.N;
  const char* a_what = p.a_major == major::k ? "K" : "M";
  const char* b_what = p.b_major == major::k ? "K" : "N";
  if (lda < a_row) fail("lda = " + s(lda) + " is smaller than the contiguous extent " + a_what + " = " + s(a_row) + " of A (" + name(p.a_major) + ")");
  if (ldb < b_row) fail("ldb = " + s(ldb) + " is smaller than the contiguous extent " + b_what + " = " + s(b_row) + " of B (" + name(p.b_major) + ")");
  if (ldc < p.N) fail("ldc = " + s(ldc) + " is smaller than N = " + s(p.N));
  if ((lda * 2) % 16 != 0)
    fail("lda = " + s(lda) + (p.lda ? "" : std::string(" (packed: ") + a_what + ")") +
         " gives a row pitch of " + s(lda * 2) + " bytes; TMA needs a multiple of 16 (lda % 8 == 0)");
  if ((ldb * 2) % 16 != 0)
    fail("ldb = " + s(ldb) + (p.ldb ? "" : std::string(" (packed: ") + b_what + ")") +
         " gives a row pitch of " + s(ldb * 2) + " bytes; TMA needs a multiple of 16 (ldb % 8 == 0)");
  if ((ldc * out_bytes(p.out)) % 16 != 0)
    fail("ldc = " + s(ldc) + (p.ldc ? "" : " (packed: N)") + " gives a " + name(p.out) + " row pitch of " +
         s(ldc * out_bytes(p.out)) + " bytes; TMA needs a multiple of 16");
  const auto misaligned = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 != 0; };
  if (!A) fail("A is null");
  if (!B) fail("B is null");
  if (!C) fail("C is null");
  if (misaligned(A)) fail("A is not 16-byte aligned");
  if (misaligned(B)) fail("B is not 16-byte aligned");
  if (misaligned(C)) fail("C is not 16-byte aligned");
}

// The tile rule: the configuration with the least estimated time, where
//   time = rounds x (k-blocks per work unit x cost of a k-block + epilogue + split-K fixup),
//   rounds = ceil(work units / clusters resident at once), work units = cluster tiles x splits.
// Costs are in units of one 128 x 256 x 64 k-block (m64n256k16 x 4 per warpgroup): a 128 x 128
// k-block does half the work at ~88% of the efficiency (0.57); the epilogue writes the tile (0.4
// per 256 columns); each split adds one fp32 partial of the tile written to and read back from L2
// by the reducing CTA (0.76 per split per 128 columns). Splits need >= 4 k-blocks each. So large
// problems keep 128 x 256 tiles and no split; problems with fewer tiles than SMs (M = 128 with
// large K, 1024^3) split K so that every SM has work. Clusters of 2 CTAs along M multicast the B
// tile whenever there are at least two M tiles. Ties keep the earlier candidate (256, then fewer
// splits).
struct config_cost {
  double rounds = 0, per_unit = 0;
  double total() const { return rounds * per_unit; }
};

inline config_cost estimate(const problem& p, const config& c, int num_sms) {
  using detail::ceil_div;
  const int64_t tiles_m = ceil_div(p.M, c.bm);
  const int64_t units = ceil_div(tiles_m, c.cluster) * ceil_div(p.N, c.bn) * c.splits;
  const int64_t resident = std::max<int64_t>(1, num_sms / c.cluster);
  const int64_t k_blocks = ceil_div(p.K, c.bk);
  const double kb_cost = c.bn == 256 ? 1.0 : 0.57;
  config_cost r;
  r.rounds = double(ceil_div(units, resident));
  r.per_unit = double(ceil_div(k_blocks, c.splits)) * kb_cost + 0.4 * c.bn / 256.0 +
               (c.splits > 1 ? 0.76 * c.splits * c.bn / 128.0 : 0.0);
  return r;
}

inline config choose_config(const problem& p, int num_sms) {
  const int64_t tiles_m = detail::ceil_div(p.M, 128);
  const int64_t k_blocks = detail::ceil_div(p.K, 64);
  config best;
  double best_cost = -1;
  for (int bn : {256, 128})
    for (int splits = 1; splits <= 4; ++splits) {
      if (splits > 1 && k_blocks < 4 * splits) break;
      config c;
      c.bn = bn;
      c.stages = bn == 256 ? 4 : 6;
      c.cluster = tiles_m >= 2 ? 2 : 1;
      c.splits = splits;
      const double cost = estimate(p, c, num_sms).total();
      if (best_cost < 0 || cost < best_cost) best = c, best_cost = cost;
    }
  return best;
}

}  // namespace hopper::gemm
