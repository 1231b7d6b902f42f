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
#include <optional>
#include <stdexcept>
#include <string>

#include "hopper/objects/checked.hpp"
#include "hopper/objects/limits.hpp"
#include "kernels/gemm/gemm_tiles.hpp"
#include "kernels/gemm/tile_scheduler.hpp"

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
  int bm = 128;           // 128: two consumer warpgroups of 64 rows each; 64: of BN / 2 columns each
  int bn = 256;           // 256, 192, 128 or 64: the n of wgmma.m64nNk16
  int bk = k_block;       // one 128-byte swizzle row of bf16
  int stages = 4;         // ring depth
  int cluster_m = 2;      // CTAs along M sharing (multicasting) the B tile
  int cluster_n = 1;      // CTAs along N sharing (multicasting) the A tile
  int group_m = 8;        // cluster-rows per group of the grouped tile order
  int splits = 1;         // split-K: k-ranges per tile, reduced in an fp32 workspace (1..max_splits)
  bool pingpong = false;  // each consumer warpgroup owns whole 128 x 128 tiles (bn 128, 6 stages, splits 1)
  bool stream_k = false;  // share the k-blocks of the last, partial round of tiles among all clusters

  int cluster_size() const { return cluster_m * cluster_n; }
};

// The kernels the library compiles (kernels/gemm/gemm.cuh instantiates exactly these, in every
// layout and output type): the tile and ring shape, the cluster shape, the consumer schedule.
struct instance {
  int bm, bn, stages, cluster_m, cluster_n;
  bool pingpong;
};
// Clusters are 1 x 1, 2 x 1 or 1 x 2: every CTA's producer writes into every CTA of its cluster,
// which is what orders a consumer's release of a stage after the previous phase of every empty
// barrier it arrives on. In a 2 x 2 cluster the diagonal CTA writes nothing into a CTA, so a
// release to all four is not ordered that way (docs/gemm.md, "No 2 x 2 clusters", has the model's
// report), and releasing only to the row and column would need per-CTA release masks in
// hopper::pipeline. 2 x 2 was also slower (docs/gemm.md: only 30 clusters of 4 fit). 128 x 192
// tiles come in clusters of 1 x 1 and 1 x 2 only: an MN-major B tile is three 64-wide boxes,
// which do not split over a cluster column of 2.
inline constexpr instance instances[] = {
    {128, 256, 4, 1, 1, false}, {128, 256, 4, 2, 1, false}, {128, 256, 4, 1, 2, false}, {128, 192, 4, 1, 1, false},
    {128, 192, 4, 1, 2, false}, {128, 128, 6, 1, 1, false}, {128, 128, 6, 2, 1, false}, {128, 128, 6, 1, 2, false},
    {128, 128, 6, 1, 1, true},  {128, 128, 6, 2, 1, true},  {128, 128, 6, 1, 2, true},  {128, 64, 8, 1, 1, false},
    {128, 64, 8, 1, 2, false},  {64, 128, 8, 1, 1, false},  {64, 128, 8, 2, 1, false},
};
inline bool matches(const config& c, const instance& i) {
  return c.bm == i.bm && c.bk == k_block && c.bn == i.bn && c.stages == i.stages && c.cluster_m == i.cluster_m &&
         c.cluster_n == i.cluster_n && c.pingpong == i.pingpong;
}
inline bool instantiated(const config& c) {
  for (const instance& i : instances)
    if (matches(c, i)) return true;
  return false;
}

namespace detail {
[[noreturn]] inline void fail(const std::string& what) { throw std::invalid_argument("hopper::gemm: " + what); }
inline int64_t ceil_div(int64_t a, int64_t b) { return checked::ceil_div(a, b); }
}  // namespace detail

// Shared memory one CTA of `c` uses: stages of A (bm x bk) and B (bn x bk) bf16 tiles, two
// double-buffered 16-row x 128-byte epilogue boxes per consumer warp, the barriers and a flag word
// per consumer warpgroup. For the configurations the host checks before any kernel exists; every
// instantiated kernel's shared_storage struct is asserted to take exactly this (gemm_traits.hpp).
constexpr int64_t smem_bytes(const config& c) {
  const int64_t stage = int64_t(c.bm + c.bn) * c.bk * operand_elem_bytes;
  const int64_t epilogue = consumer_warpgroups * int64_t(epilogue_box<2>::warpgroup_bytes);  // any output type's
  const int64_t barriers = 2 * int64_t(sizeof(uint64_t)) * c.stages;                         // full and empty
  return c.stages * stage + epilogue + barriers + consumer_warpgroups * int64_t(sizeof(int));
}

inline constexpr int64_t max_smem_per_block = int64_t(hopper::limits::max_smem_per_block);  // 227 KiB, sm_90 opt-in

// The largest row pitch a tensor map takes (cuTensorMapEncodeTiled: globalStrides below 2^40).
inline constexpr int64_t max_row_pitch_bytes = int64_t(1) << 40;
// Work units (tiles x splits) the tile scheduler indexes in 32-bit ints, with room for its cursor
// to step past the last one by a grid's worth.
inline constexpr int64_t max_work_units = int64_t(1) << 30;
// The most k-ranges split-K cuts a tile into: enough for a tile of few tokens and long K to cover
// every SM (576 x 7168 in 64-wide tiles: 9 tiles x 14 splits on 132 SMs); the last piece reads
// the partials of all of them back.
inline constexpr int max_splits = 16;

// Split-K's count where `units` work units leave `resident` clusters idle: as many splits as fill
// the wave, at most max_splits, each at least `min_kblocks` of the `k_blocks` long (at least 1).
constexpr int wave_splits(int64_t units, int64_t resident, int64_t k_blocks, int64_t min_kblocks) {
  const int64_t fill = resident / units, longest = k_blocks / min_kblocks;
  const int64_t s = fill < longest ? fill : longest;
  return int(s < 1 ? 1 : s > max_splits ? max_splits : s);
}
// The most clusters a schedule is walked by, far above what any device holds at once. The stream-K
// walk multiplies an iteration (below 2 x 2^16 tiles x 2^25 k-blocks) by the clusters: below 2^59.
inline constexpr int max_resident_clusters = 1 << 16;

namespace detail {
// The bytes an operand of `rows` rows of `row` contiguous elements at pitch `ld` spans
// ((rows - 1) x ld + row elements), or nullopt when that does not fit int64.
inline std::optional<int64_t> span_bytes(int64_t rows, int64_t ld, int64_t row, int64_t elem) {
  return checked::mul(checked::add(checked::mul(rows - 1, ld), row), elem);
}
}  // namespace detail

// Rejects a problem the kernel cannot compute exactly, naming the bad value: the shape, the
// layouts and the leading dimensions, each derived size computed without wrapping. TMA needs every
// global row pitch to be a multiple of 16 bytes below 2^40; coordinates are int32.
inline void validate_shape(const problem& p) {
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
  struct operand {
    const char* ld_name;
    int64_t ld_given, ld, row, rows, elem;
    const char* row_what;  // the dimension along the contiguous row
    std::string layout;
  };
  const operand ops[] = {
      {"lda", p.lda, p.lda_or_packed(), p.a_major == major::k ? p.K : p.M, p.a_major == major::k ? p.M : p.K, 2,
       p.a_major == major::k ? "K" : "M", std::string("of A (") + name(p.a_major) + ")"},
      {"ldb", p.ldb, p.ldb_or_packed(), p.b_major == major::k ? p.K : p.N, p.b_major == major::k ? p.N : p.K, 2,
       p.b_major == major::k ? "K" : "N", std::string("of B (") + name(p.b_major) + ")"},
      {"ldc", p.ldc, p.ldc_or_packed(), p.N, p.M, out_bytes(p.out), "N", std::string("of C (") + name(p.out) + ")"},
  };
  for (const operand& o : ops) {
    const std::string ld = std::string(o.ld_name) + " = " + s(o.ld) +
                           (o.ld_given ? "" : std::string(" (packed: ") + o.row_what + ")") + " " + o.layout;
    if (o.ld < o.row)
      fail(std::string(o.ld_name) + " = " + s(o.ld) + " is smaller than the contiguous extent " + o.row_what + " = " +
           s(o.row) + " " + o.layout);
    const std::optional<int64_t> pitch = checked::mul(o.ld, o.elem);
    if (!pitch || *pitch >= max_row_pitch_bytes)
      fail(ld + " gives a row pitch of " + (pitch ? s(*pitch) : std::string("more than 2^63")) +
           " bytes; TMA takes row pitches below 2^40 bytes");
    if (*pitch % 16 != 0)
      fail(ld + " gives a row pitch of " + s(*pitch) + " bytes; TMA needs a multiple of 16 (" + o.ld_name + " % " +
           s(16 / o.elem) + " == 0)");
    if (!detail::span_bytes(o.rows, o.ld, o.row, o.elem))
      fail(ld + " over " + s(o.rows) + " rows spans more than 2^63 bytes");
  }
}

// The same, and the three pointers: non-null and 16-byte aligned (TMA's global address rule).
inline void validate(const problem& p, const void* A, const void* B, const void* C) {
  using detail::fail;
  validate_shape(p);
  const auto misaligned = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 != 0; };
  if (!A) fail("A is null");
  if (!B) fail("B is null");
  if (!C) fail("C is null");
  if (misaligned(A)) fail("A is not 16-byte aligned");
  if (misaligned(B)) fail("B is not 16-byte aligned");
  if (misaligned(C)) fail("C is not 16-byte aligned");
}

// Rejects a configuration no kernel computes for this problem, naming what is wrong: one that is
// not in the instances table, ping-pong with split-K or a stream-K tail (it runs whole tiles),
// splits outside 1..max_splits or beyond the k-blocks, split-K together with a stream-K tail (each cuts
// the k-blocks its own way). A stream-K tail the grid turns out not to need is simply not used.
inline void validate(const config& c, const problem& p) {
  using detail::fail;
  const auto s = [](int64_t v) { return std::to_string(v); };
  validate_shape(p);
  if (!instantiated(c) || c.group_m < 1) {
    std::string list;
    for (const instance& in : instances)
      list += std::string(list.empty() ? "" : ", ") + s(in.bm) + " x " + s(in.bn) + " / " + s(in.stages) +
              " stages / cluster " + s(in.cluster_m) + " x " + s(in.cluster_n) + (in.pingpong ? " ping-pong" : "");
    fail("config bm x bn x bk = " + s(c.bm) + " x " + s(c.bn) + " x " + s(c.bk) + ", stages " + s(c.stages) +
         ", cluster " + s(c.cluster_m) + " x " + s(c.cluster_n) + (c.pingpong ? ", ping-pong" : "") + ", group_m " +
         s(c.group_m) + " is not instantiated (bk 64, group_m >= 1, and one of: " + list + ")");
  }
  if (c.pingpong && (c.splits != 1 || c.stream_k))
    fail("config pingpong with splits = " + s(c.splits) + (c.stream_k ? ", stream_k" : "") +
         " is not instantiated (ping-pong runs whole 128 x 128 tiles: no split-K, no stream-K)");
  const int64_t k_blocks = detail::ceil_div(p.K, c.bk);
  if (c.splits < 1 || c.splits > max_splits || c.splits > k_blocks)
    fail("config splits = " + s(c.splits) + " must be 1.." + s(max_splits) + " and at most the " + s(k_blocks) +
         " k-blocks of K = " + s(p.K));
  if (c.stream_k && c.splits != 1)
    fail("config stream_k with splits = " + s(c.splits) +
         ": the stream-K tail and split-K each cut the k-blocks their own way; choose one");
  const int64_t tiles = detail::ceil_div(p.M, c.bm) * detail::ceil_div(p.N, c.bn);  // < 2^31 x 2^31
  if (tiles * c.splits > max_work_units)
    fail("M x N = " + s(p.M) + " x " + s(p.N) + " gives " + s(tiles) + " tiles of " + s(c.bm) + " x " + s(c.bn) +
         (c.splits > 1 ? " x " + s(c.splits) + " splits" : std::string()) +
         ", more than the 2^30 work units the tile scheduler indexes");
  const int64_t cluster_cols = detail::ceil_div(detail::ceil_div(p.N, c.bn), c.cluster_n);
  if (c.group_m > max_work_units / cluster_cols)
    fail("config group_m = " + s(c.group_m) + " x " + s(cluster_cols) +
         " cluster columns exceeds the 2^30 tiles a group of the tile order may hold");
}

// The tile rule (calibrated on the H200 by the HOPPER_GEMM_SWEEP configurations of bench_gemm):
// 1. 128 x 256 x 64 tiles, 4 stages (48 KiB each), when they fill at least half of the SMs in the
//    first wave: the best ratio of tensor work to shared-memory traffic (m64n256k16). Otherwise
//    128 x 128 tiles with 6 stages (32 KiB each) double the number of tiles (1024^3: 0.97x of
//    cuBLAS against 0.72x with 128 x 256; 2048^3 keeps 128 x 256: 0.95x against 0.86x).
// 2. Clusters of 2 CTAs along M multicast the B tile whenever there are at least two M tiles (but
//    not an odd number below 7)
//    (along N, multicasting A, where 128-wide tiles cover N in two and M in more).
//    (Step 0 in the code: narrow problems, one side at most 64 or 128, take the narrower tile.)
// 3. Split-K only when the tiles still leave more than half of the SMs idle and K is long enough
//    that every split keeps >= 16 k-blocks: the fixup (an fp32 partial written, a fence, a count,
//    the partials read back by the last split) costs several microseconds per tile, which only a
//    long main loop hides. Splits: the most (<= max_splits) whose work units still fit in one
//    wave. 1024^3, 3072^3 and 8192 x 8192 x 1024 do not split (2 splits measured 0.78x, 0.76x
//    and 0.37x of the unsplit kernel there). With 4 splits of at least 32 k-blocks the limit,
//    deepseek_v3/q_a/M256 (12 cluster tiles, 112 k-blocks) ran 3 splits, 1.12x slower than 5,
//    deepseek_v3/kv_a/M256 (5) 1.18x slower than 6 (docs/gpu_runs.md).
// 3b. Pairs of half tiles (64 x 128 in clusters of 2 x 1, or 128 x 64 in 1 x 2) on 128 x 128
//    tiles, instead of one halving of K or where the tiles leave half the machine idle.
// 4. A stream-K region where the last round is partial and long (below), for what step 5 leaves
//    cooperative; 4a. all of the problem as stream-K for few tokens whose tiles leave SMs idle.
// 5. Ping-pong (128 x 128 tiles, one per consumer warpgroup) when K <= 1024 with at least 8
//    rounds of work, or when its wave efficiency (units over rounds x resident clusters) beats
//    the cooperative tiles' by more than 1 / 0.95 (checked before step 4 in the code).
// 6. Few tokens (M <= 128: one row of tiles) whose 64-row CTAs all fit in one wave: they are
//    bound by streaming W, so they spread it over the SMs (below, before the steps above).
// The rule assumes num_sms / cluster size resident clusters; the plan measures the real number
// (cudaOccupancyMaxActiveClusters) and drops the stream-K tail where it no longer fits.
inline config choose_config(const problem& p, int num_sms) {
  using detail::ceil_div;
  validate_shape(p);
  if (num_sms < 1) detail::fail("num_sms = " + std::to_string(num_sms) + " must be >= 1");
  config c;
  const int64_t tiles_m = ceil_div(p.M, 128);
  // 4a. The whole problem as stream-K (every cluster an equal share of all k-blocks) for one row
  //    of tiles at most 128 wide, clusters of 1, where the tiles with their splits still leave
  //    more than a tenth of the SMs idle and every share is at least 24 k-blocks: the split-K
  //    kernel cannot use those SMs, and few tokens are bound by reading B, which every SM then
  //    streams. H200 candidate sweep (docs/gemm.md, "The whole problem as stream-K"):
  //    llama3_70b/qkv (80 tiles, 128 k-blocks) 1.22-1.40x at M 1-64, deepseek_v3/o and
  //    qwen2.5_7b/down 1.03-1.08x; shorter shares went either way (deepseek_v3/kv_a, 4 k-blocks:
  //    0.87-0.89x; qwen2.5_7b/qkv, 15: 0.96-0.97x; deepseek_v3/q_a, 10: 1.04-1.10x). 256-wide
  //    tiles shared so ran 1.41x slower than whole ones (deepseek_v3/q_b at M 128).
  const auto all_stream_k = [&](const config& t, int64_t units, int64_t k_blocks, int64_t resident) {
    return tiles_m == 1 && t.bn <= 128 && t.cluster_size() == 1 && 10 * units * t.splits <= 9 * resident &&
           units * k_blocks >= 24 * resident;
  };
  // 6. Few tokens: 64 x 128 tiles (M <= 64), or pairs of them on each 128 x 128 tile (clusters of
  //    2 x 1 multicasting B), when every CTA fits in the first wave. The tiles leave SMs idle, and
  //    time is the bytes of W over the rate of the SMs that read it: split K over more of them,
  //    as many splits as fill the wave (<= max_splits), each at least one ring's depth plus one
  //    k-block long, so that a split streams. Split only where the tiles alone fill at most a
  //    third of the wave (a half for pairs): with 48 to 66 single tiles 2 splits ran 1-9% slower
  //    than none or all-stream-K, while pairs of 28 to 32 gained 20-25% from 2 (H200 candidate
  //    sweep, docs/gemm.md "Few tokens"). Step 4a may then take all-stream-K instead.
  if (p.M <= 128) {
    const int pair = p.M > 64 ? 2 : 1;
    const int64_t tiles = ceil_div(p.N, 128);
    if (tiles * pair <= num_sms) {
      c.bm = 64, c.bn = 128, c.stages = 8, c.cluster_m = pair, c.cluster_n = 1;
      const int64_t resident = std::max<int64_t>(1, num_sms / pair), k_blocks = ceil_div(p.K, c.bk);
      if (resident / tiles >= 4 - pair) c.splits = wave_splits(tiles, resident, k_blocks, c.stages + 1);
      if (all_stream_k(c, tiles, k_blocks, resident)) c.splits = 1, c.stream_k = true;
      return c;
    }
  }
  const int64_t tiles_256 = tiles_m * ceil_div(p.N, 256);
  if (2 * tiles_256 < num_sms || p.N <= 128) {
    c.bn = 128;
    c.stages = 6;
  }
  // Clusters of 2 along M, except for an odd number of tile rows where the last cluster row's
  //    CTA with no rows is more than an eighth of all CTAs (below 7 rows) or makes a second round
  //    of work out of tiles that fit in one wave (the off-grid sweeps of docs/gemm.md:
  //    384 x 5120 x 13824 ran 1.83x, 384 x 11008 x 4096 1.67x, 832 x 2112 x 2048 1.59x and
  //    384 x 2880 x 2880 1.26x slower in 2 x 1 clusters than in clusters of 1).
  {
    const int64_t tiles_n = ceil_div(p.N, c.bn);
    const bool one_wave = tiles_m * tiles_n <= num_sms;
    const bool second_round = one_wave && ceil_div(tiles_m, 2) * tiles_n > num_sms / 2;
    const bool idle_row = tiles_m % 2 == 1 && (tiles_m < 7 || second_round);
    c.cluster_m = tiles_m >= 2 && !idle_row ? 2 : 1;
  }
  c.cluster_n = 1;
  // 0. Never a tile wider than a narrow problem where a narrower instance exists: M <= 64 takes
  //    64 x 128 tiles, else N <= 64 takes 128 x 64 (N <= 128 takes 128 x 128 above). One tile
  //    spans the narrow side, so no cluster along it.
  if (p.M <= 64) {
    c.bm = 64, c.bn = 128, c.stages = 8, c.cluster_m = 1;
  } else if (p.N <= 64) {
    c.bn = 64, c.stages = 8;
    c.cluster_m = 1;  // 128 x 64 tiles come in clusters of 1 x 1 or 1 x 2 only
  }
  // 0b. Half-empty edges: where the last 128-wide tile along N (else along M) would be at most
  //     half full, its waste at least a twelfth of the tiles' columns (rows), and the 64-wide
  //     tiles that cover that edge exactly take at most half of the wave, 128 x 64 (64 x 128)
  //     tiles in clusters of 1, which then split K over the wave (step 3). Off-grid sweep
  //     (docs/gemm.md): 384 x 704 x 5120 1.33x, 640 x 448 x 3072 1.29x, 1536 x 320 x 2880 1.27x,
  //     320 x 960 x 6144 1.13x and deepseek_v3/kv_a/M256-512 (N = 576) 1.13-1.39x faster than
  //     the 128 x 128 choice of step 3; N = 960 (a sixteenth wasted) keeps 128 x 128 tiles.
  if (c.bm == 128 && c.bn == 128) {
    const auto half_edge = [](int64_t x) {
      const int64_t r = x % 128;
      return r > 0 && r <= 64 && 12 * (128 - r) >= ceil_div(x, 128) * 128;
    };
    if (half_edge(p.N) && 2 * tiles_m * ceil_div(p.N, 64) <= num_sms)
      c.bn = 64, c.stages = 8, c.cluster_m = 1, c.cluster_n = 1;
    else if (half_edge(p.M) && 2 * ceil_div(p.M, 64) * ceil_div(p.N, 128) <= num_sms)
      c.bm = 64, c.stages = 8, c.cluster_m = 1, c.cluster_n = 1;
  }
  // 128 x 128 tiles where N spans exactly two of them (and M more than two): the pair goes along N
  // (A multicast), so that a cluster covers all of N and each A tile is read once. 8192 x 256 x
  // 8192, one launch, 2 x 1 / 1 x 2: 69.4 / 66.9 us at the base clock (docs/gemm.md, step 3).
  if (c.bm == 128 && c.bn == 128 && ceil_div(p.N, 128) == 2 && tiles_m > 2) c.cluster_m = 1, c.cluster_n = 2;
  // Cluster tiles of (cluster_m x 128) x (cluster_n x bn).
  const auto cluster_tiles = [&](int bn) {
    return ceil_div(ceil_div(p.M, c.bm), c.cluster_m) * ceil_div(ceil_div(p.N, bn), c.cluster_n);
  };
  int64_t units = cluster_tiles(c.bn);
  const int64_t resident = std::max<int64_t>(1, num_sms / c.cluster_size());
  const int64_t k_blocks = ceil_div(p.K, c.bk);
  if (2 * units <= resident) c.splits = wave_splits(units, resident, k_blocks, 16);
  // 3b. Pairs of half tiles: a 128 x 128 tile computed by two CTAs of a cluster, 64 x 128 each
  //     in a cluster of 2 x 1 (the pair multicasts B), or 128 x 64 each in 1 x 2 (A) where N is
  //     a single 128-wide tile. Twice the CTAs on the same tiles, reading the same bytes. Taken
  //     instead of one halving of K (splits even: half as many k-ranges meet in the fixup, none
  //     for 2) where the halved splits would be shorter than 48 k-blocks (64-row pairs; 128 x 64
  //     pairs at any length, as measured before), or where the tiles leave more than half of the
  //     clusters idle and K is too short to split. 1024^3, one launch: 10.4 us split, 8.8
  //     paired. With 2 rows of tiles or more, a 64-row CTA's k-block is slower than half of a
  //     128-row one's, and the 128 x 128 clusters of 2 x 1 already multicast B: 2 splits of
  //     56-148 k-blocks ran 1.11-1.34x faster than pairs (deepseek_v3/expert_gate_up and
  //     q_a, llama3_8b/down, qwen2.5_7b/down at M 256-512), while halves of 28-32 k-blocks
  //     (llama3_8b/o, qwen2.5_7b/o at M 256) ran 1.02x slower than pairs (docs/gemm.md, "Off the grid").
  const bool pairs_along_n = ceil_div(p.N, 128) == 1 && tiles_m > 1;
  if (c.bm == 128 && c.bn == 128 &&
      ((c.splits % 2 == 0 && (pairs_along_n || ceil_div(k_blocks, c.splits) < 48)) ||
       (c.splits == 1 && 2 * units <= resident))) {
    if (pairs_along_n)
      c.bn = 64, c.cluster_m = 1, c.cluster_n = 2;
    else
      c.bm = 64, c.cluster_m = 2, c.cluster_n = 1;
    c.stages = 8;
    if (c.splits > 1) c.splits /= 2;
    return c;
  }
  const auto efficiency = [&](int64_t u, int64_t on = 0) {
    const int64_t r = on > 0 ? on : resident;  // clusters resident (default: this config's)
    return double(u) / double(ceil_div(u, r) * r);
  };
  // 128 x 192 tiles in clusters of 1 x 2 (A multicast) where 128 x 256 tiles quantize much worse
  // (wave efficiency below 0.95 of theirs): 3072^3 has 144 cluster tiles of 256 x 256 on 66
  // clusters (73% busy) against 192 of 128 x 384 (97%). Same cluster size, so the same clusters.
  if (c.bn == 256 && c.splits == 1 && c.cluster_size() <= 2 && ceil_div(p.N, 192) >= 2) {
    const int64_t units_192 = ceil_div(p.M, c.bm) * ceil_div(ceil_div(p.N, 192), 2);
    if (0.95 * efficiency(units_192, std::max(1, num_sms / 2)) > efficiency(units)) {
      c.bn = 192, c.stages = 4, c.cluster_m = 1, c.cluster_n = 2;
      units = units_192;
    }
  }
  // 5. Ping-pong (128 x 128 tiles, one per consumer warpgroup in turn, so that one warpgroup's
  //    epilogue runs under the other's main loop) instead of the cooperative kernel where a tile
  //    is short (K <= 1024: the epilogue is a large share of it) and there are at least 8
  //    rounds of work, or where the cooperative tiles quantize much worse (wave efficiency below
  //    0.95 of ping-pong's). Base clock (ncu), ping-pong against cooperative: 8192^2 x 1024
  //    -5.7%, 3072^3 -4.6%, 4096 x 14336 x 4096 -3.2%, 16384^2 x 4096 -0.7%, 8192^3 and 6144^3
  //    equal; fewer rounds lose (16384 x 512 x 4096 +3.2%). But ping-pong issues 15-18% more
  //    instructions, and where the clock is set by power it loses the longer shapes: each launch
  //    alone, 8192^3 0.961 against 1.02-1.04 of cuBLAS and 4096 x 14336 x 4096 0.946 against
  //    1.02-1.03; sustained, 16384^3 0.917 against 1.00-1.02. So K > 1024 stays cooperative.
  if (c.bm == 128 && c.bn >= 128 && c.splits == 1) {
    const int64_t pp_units = cluster_tiles(128);
    if ((k_blocks <= 16 && pp_units >= 8 * resident) || 0.95 * efficiency(pp_units) > efficiency(units)) {
      c.bn = 128;
      c.stages = 6;
      c.pingpong = true;
      return c;
    }
  }
  // 4a. (all_stream_k above)
  if (all_stream_k(c, units, k_blocks, resident)) {
    c.splits = 1;
    c.stream_k = true;
    return c;
  }
  // 4. Stream-K when the last round of whole tiles is partial and long enough to be worth
  //    sharing: it must save >= 24 k-blocks of every cluster's time ((1 - tail / clusters) x
  //    k-blocks), since every piece costs an fp32 partial out and back. A short last round joins
  //    the round before it (stream_k_region in tile_scheduler.hpp), so no tile is cut into more
  //    than about three pieces. Measured against whole tiles: 8192^3 +2.8% (34 of 66 clusters in
  //    the last round, 128 k-blocks), 4096 x 14336 x 4096 +1.5%; and where the rule says no:
  //    4096^3 -5% (58 of 66: saves 8 k-blocks), 8192^2 x 1024 -12% (16 k-blocks).
  if (c.splits == 1) {
    const int64_t tail = units % resident;
    const double saved = (1.0 - double(tail) / double(resident)) * double(k_blocks);
    if (units >= resident && tail > 0 && saved >= 24.0) c.stream_k = true;
  }
  return c;
}

// The work schedule of one launch and the fixup workspace it needs, for `resident` clusters that
// fit on the device at once (the plan asks the driver; the model tests choose). Stream-K tail
// (config::stream_k): after the full rounds, the remaining tiles' k-blocks are shared by all
// resident clusters (stream_k_region says how many tiles; every share is at least one k-block).
// Otherwise every tile is whole (or split), and the grid is no larger than the work.
struct launch_schedule {
  work_schedule work;
  int fixup_tiles = 0;  // cluster tiles whose pieces meet in the workspace
  int slot_stride = 1;  // partial slots per fixup tile (>= the slots of any item)
  size_t partial_bytes(const config& c) const {
    return size_t(fixup_tiles) * size_t(c.cluster_size()) * size_t(slot_stride) * size_t(c.bm) * size_t(c.bn) * 4;
  }
  size_t counter_bytes(const config& c) const {
    return size_t(fixup_tiles) * size_t(c.cluster_size()) * size_t(consumer_warpgroups) * sizeof(int);
  }
};

inline launch_schedule make_schedule(const problem& p, const config& cf, int resident) {
  validate(cf, p);
  if (resident < 1 || resident > max_resident_clusters)
    detail::fail("resident = " + std::to_string(resident) + " clusters must be 1.." +
                 std::to_string(max_resident_clusters));
  using detail::ceil_div;
  launch_schedule ls;
  work_schedule& w = ls.work;
  const int64_t k_blocks = ceil_div(p.K, cf.bk);
  const int tiles_m = int(ceil_div(p.M, cf.bm));
  w.order.cluster_rows = int(ceil_div(tiles_m, cf.cluster_m));
  w.order.cluster_cols = int(ceil_div(ceil_div(p.N, cf.bn), cf.cluster_n));
  w.order.group = cf.group_m;
  w.k_blocks = int(k_blocks);
  w.splits = cf.splits;
  const int total = w.order.total();
  const int sk_tiles = cf.stream_k && cf.splits == 1 ? stream_k_region(total, resident) : 0;
  if (sk_tiles > 0 && int64_t(sk_tiles) * k_blocks >= resident) {
    w.clusters = resident;
    w.dp_tiles = total - sk_tiles;
  } else {
    w.clusters = std::min(resident, total * cf.splits);
    w.dp_tiles = total;
  }
  if (cf.splits > 1) {
    ls.fixup_tiles = total;
    ls.slot_stride = cf.splits;
  } else if (w.dp_tiles < total) {
    ls.fixup_tiles = total - w.dp_tiles;
    for (int t = 0; t < ls.fixup_tiles; ++t)
      ls.slot_stride =
          std::max(ls.slot_stride, w.sk_owner(int64_t(t + 1) * k_blocks - 1) - w.sk_owner(int64_t(t) * k_blocks) + 1);
  }
  return ls;
}

}  // namespace hopper::gemm
