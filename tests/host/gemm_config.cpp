// Host side of the GEMM without a GPU: the validator names each bad value, the tile rule picks the
// documented configurations within the shared-memory budget, and the persistent tile order
// visits every output tile exactly once whatever the number of clusters.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/tile_scheduler.hpp"

using namespace hopper::gemm;

namespace {

problem make(int64_t M, int64_t N, int64_t K) {
  problem p;
  p.M = M, p.N = N, p.K = K;
  return p;
}

// The message of the std::invalid_argument that validate() throws, or "" when it accepts.
std::string rejection(const problem& p, const void* A, const void* B, const void* C) {
  try {
    validate(p, A, B, C);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

alignas(16) char buf[64];
const void* ok = buf;
const void* odd = buf + 8;

}  // namespace

TEST(GemmValidate, AcceptsAlignedShapes) {
  EXPECT_EQ(rejection(make(1, 8, 8), ok, ok, ok), "");
  EXPECT_EQ(rejection(make(8192, 8192, 8192), ok, ok, ok), "");
  problem p = make(3, 5, 7);  // odd extents are fine with padded leading dimensions
  p.lda = 8, p.ldb = 8, p.ldc = 8;
  EXPECT_EQ(rejection(p, ok, ok, ok), "");
}

TEST(GemmValidate, NamesTheBadValue) {
  EXPECT_NE(rejection(make(0, 8, 8), ok, ok, ok).find("M = 0"), std::string::npos);
  EXPECT_NE(rejection(make(8, -1, 8), ok, ok, ok).find("N = -1"), std::string::npos);
  EXPECT_NE(rejection(make(8, 8, 0), ok, ok, ok).find("K = 0"), std::string::npos);
  EXPECT_NE(rejection(make(64, 64, 12), ok, ok, ok).find("lda = 12 (packed: K)"), std::string::npos);
  EXPECT_NE(rejection(make(64, 60, 64), ok, ok, ok).find("ldc = 60"), std::string::npos);
  problem p = make(64, 64, 64);
  p.ldb = 32;
  EXPECT_NE(rejection(p, ok, ok, ok).find("ldb = 32 is smaller"), std::string::npos);
  p = make(64, 64, 64);
  p.b_major = major::mn;
  p.N = 20, p.ldc = 24;
  EXPECT_NE(rejection(p, ok, ok, ok).find("ldb = 20 (packed: N)"), std::string::npos);
  EXPECT_NE(rejection(make(64, 64, 64), odd, ok, ok).find("A is not 16-byte aligned"), std::string::npos);
  EXPECT_NE(rejection(make(64, 64, 64), ok, odd, ok).find("B is not 16-byte aligned"), std::string::npos);
  EXPECT_NE(rejection(make(64, 64, 64), ok, ok, nullptr).find("C is null"), std::string::npos);
  EXPECT_NE(rejection(make(int64_t(1) << 31, 8, 8), ok, ok, ok).find("exceeds 2^31-1"), std::string::npos);
  p = make(64, 4, 64);  // f32 output: a 16-byte pitch needs ldc % 4 == 0 only
  p.out = out_type::f32;
  EXPECT_EQ(rejection(p, ok, ok, ok), "");
  p.N = 6;
  EXPECT_NE(rejection(p, ok, ok, ok).find("ldc = 6 (packed: N) of C (f32) gives a row pitch of 24 bytes"),
            std::string::npos);
}

// Sizes derived from the problem are computed without wrapping: each extreme value is rejected
// naming the argument, before anything derived from it is used.
TEST(GemmValidate, HugeValuesAreRejectedNotWrapped) {
  problem p = make(64, 64, 64);
  p.lda = int64_t(1) << 62;  // x 2 bytes overflows int64
  std::string m = rejection(p, ok, ok, ok);
  EXPECT_NE(m.find("lda = 4611686018427387904 of A (K-major) gives a row pitch of more than 2^63"), std::string::npos)
      << m;
  p.lda = int64_t(1) << 40;  // fits, but no tensor map takes a pitch of 2^41 bytes
  m = rejection(p, ok, ok, ok);
  EXPECT_NE(m.find("lda = 1099511627776 of A (K-major) gives a row pitch of 2199023255552 bytes; TMA takes row "
                   "pitches below 2^40"),
            std::string::npos)
      << m;
  p.lda = (int64_t(1) << 39) - 8;  // the largest pitch a tensor map takes
  EXPECT_EQ(rejection(p, ok, ok, ok), "");
  p = make(64, 64, 64);
  p.ldc = INT64_MAX;
  EXPECT_NE(rejection(p, ok, ok, ok).find("ldc = 9223372036854775807"), std::string::npos);
  p = make(64, 64, 64);
  p.ldb = -8;
  EXPECT_NE(rejection(p, ok, ok, ok).find("ldb = -8 is smaller"), std::string::npos);
  // M = N = 2^31-1: packed C has an odd row pitch. M = N = 2^31-8 fits every rule of the shape
  // (C spans just under 2^63 bytes), but not the scheduler's 32-bit tile indices.
  p = make((int64_t(1) << 31) - 1, (int64_t(1) << 31) - 1, 64);
  EXPECT_NE(rejection(p, ok, ok, ok).find("ldc = 2147483647 (packed: N)"), std::string::npos);
  p = make((int64_t(1) << 31) - 8, (int64_t(1) << 31) - 8, 64);
  EXPECT_EQ(rejection(p, ok, ok, ok), "");
  m = "";
  try {
    validate(choose_config(p, 132), p);
  } catch (const std::invalid_argument& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("M x N = 2147483640 x 2147483640 gives"), std::string::npos) << m;
  EXPECT_NE(m.find("2^30 work units"), std::string::npos) << m;
  p.out = out_type::f32;  // 4-byte elements: C would span more than 2^63 bytes
  EXPECT_NE(rejection(p, ok, ok, ok).find("spans more than 2^63 bytes"), std::string::npos) << rejection(p, ok, ok, ok);
}

TEST(GemmConfig, ChooseConfigChecksItsArguments) {
  const auto choice_rejection = [](const problem& p, int sms) {
    try {
      (void)choose_config(p, sms);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(choice_rejection(make(-128, 64, 64), 132).find("M = -128"), std::string::npos);
  EXPECT_NE(choice_rejection(make(64, 64, 64), 0).find("num_sms = 0"), std::string::npos);
  EXPECT_NE(choice_rejection(make(64, 64, 64), -5).find("num_sms = -5"), std::string::npos);
  // K = 0 is a bad K, whatever else is checked after it.
  config c;
  std::string m;
  try {
    validate(c, make(128, 256, 0));
  } catch (const std::invalid_argument& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("K = 0 must be >= 1"), std::string::npos) << m;
  c.group_m = 1 << 30;
  m = "";
  try {
    validate(c, make(128, 8192, 64));
  } catch (const std::invalid_argument& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("group_m = 1073741824"), std::string::npos) << m;
  m = "";
  try {
    (void)make_schedule(make(128, 256, 64), config{}, 0);
  } catch (const std::invalid_argument& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("resident = 0"), std::string::npos) << m;
  // A stream-K tail over 2^27 clusters would multiply past 64 bits in the walk; at the bound it
  // does not (98304 cluster tiles of 2^24 k-blocks, the last 32768 shared by 65536 clusters).
  m = "";
  config sk{};
  sk.stream_k = true;
  const problem huge = make(98304, 65536, int64_t(1) << 30);
  try {
    (void)make_schedule(huge, sk, 1 << 27);
  } catch (const std::invalid_argument& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("resident = 134217728 clusters must be 1..65536"), std::string::npos) << m;
  const launch_schedule big = make_schedule(huge, sk, max_resident_clusters);
  EXPECT_EQ(big.work.clusters, max_resident_clusters);
  EXPECT_EQ(big.work.dp_tiles, 65536);
  EXPECT_EQ(big.fixup_tiles, 32768);
  EXPECT_EQ(big.work.sk_begin(max_resident_clusters), big.work.sk_iters());
}

TEST(GemmConfig, RuleAndBudget) {
  const int sms = 132;
  config c = choose_config(make(4096, 4096, 4096), sms);  // 256 cluster tiles: under 8 ping-pong rounds
  EXPECT_EQ(c.bn, 256);
  EXPECT_EQ(c.stages, 4);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_FALSE(c.pingpong);
  c = choose_config(make(2048, 2048, 2048), sms);  // 128 tiles of 128 x 256: >= half the SMs
  EXPECT_EQ(c.bn, 256);
  EXPECT_FALSE(c.pingpong);
  c = choose_config(make(256, 8192, 8192), sms);  // 64 tiles of 128 x 256: too few
  EXPECT_EQ(c.bn, 128);
  EXPECT_EQ(c.stages, 6);
  EXPECT_EQ(c.cluster_m, 2);  // two M tiles share B
  EXPECT_EQ(c.splits, 1);     // 64 cluster tiles on 66 clusters
  for (auto [m, n, k] :
       std::vector<std::tuple<int, int, int>>{{8192, 8192, 8192}, {16384, 16384, 4096}, {4096, 14336, 4096}}) {
    c = choose_config(make(m, n, k), sms);  // enough tiles, long K: cooperative 128 x 256, no split
    EXPECT_EQ(c.bn, 256) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.splits, 1) << m << "x" << n << "x" << k;
    EXPECT_FALSE(c.pingpong) << m << "x" << n << "x" << k;
  }
  c = choose_config(make(8192, 8192, 1024), sms);  // short tiles, 32 rounds: ping-pong hides the epilogue
  EXPECT_TRUE(c.pingpong);
  EXPECT_EQ(c.bn, 128);
  EXPECT_EQ(c.stages, 6);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_FALSE(c.stream_k);
  c = choose_config(make(1024, 1024, 1024), sms);  // 32 cluster tiles of 256 x 128, K too short to split:
  EXPECT_EQ(c.bm, 64);                             // 64 pairs of 64 x 128 tiles instead
  EXPECT_EQ(c.bn, 128);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_EQ(c.splits, 1);
  c = choose_config(make(256, 512, 56), sms);  // one k-block: nothing to split
  EXPECT_EQ(c.splits, 1);
  c = choose_config(make(1, 8, 8), sms);
  EXPECT_EQ(c.cluster_m, 1);
}

TEST(GemmConfig, RuleOnlyPicksInstantiatedKernels) {
  for (int64_t m : {1, 64, 128, 129, 256, 1000, 2048, 3072, 4096, 8192, 16384})
    for (int64_t n : {8, 128, 200, 1024, 4096, 8192, 14336})
      for (int64_t k : {8, 64, 1024, 8192})
        for (int sms : {132, 114, 8, 1}) {
          const config c = choose_config(make(m, n, k), sms);
          EXPECT_TRUE(instantiated(c)) << m << "x" << n << "x" << k << " on " << sms << " SMs: bn " << c.bn
                                       << ", cluster " << c.cluster_m << " x " << c.cluster_n;
          EXPECT_LE(c.cluster_m, std::max<int64_t>(1, (m + c.bm - 1) / c.bm)) << "a cluster row of CTAs without rows";
          EXPECT_LE(c.cluster_n, std::max<int64_t>(1, (n + c.bn - 1) / c.bn))
              << "a cluster column of CTAs without columns";
          EXPECT_GE(c.splits, 1);
          EXPECT_LE(c.splits, max_splits);
          EXPECT_NO_THROW(validate(c, make(m, n, k))) << m << "x" << n << "x" << k << " on " << sms << " SMs";
        }
}

// A narrow problem never gets a tile wider than itself where a narrower instance exists: M <= 64
// takes 64-row tiles, N <= 64 64-column tiles, N <= 128 tiles of at most 128 columns, whatever the
// other sides.
TEST(GemmConfig, NarrowProblemsTakeTheNarrowerTile) {
  const int sms = 132;
  for (int64_t big : {4096, 8192, 16384})
    for (int64_t k : {4096, 8192, 16384}) {
      for (int64_t narrow : {64, 128, 256, 512}) {
        const config wide_m = choose_config(make(narrow, big, k), sms);  // narrow M
        const config wide_n = choose_config(make(big, narrow, k), sms);  // narrow N
        EXPECT_TRUE(instantiated(wide_m) && instantiated(wide_n)) << narrow << " x " << big << " x " << k;
        EXPECT_LE(wide_m.bm, std::max<int64_t>(64, narrow)) << "M = " << narrow << ", N = " << big << ", K = " << k;
        EXPECT_LE(wide_n.bn, std::max<int64_t>(64, narrow)) << "M = " << big << ", N = " << narrow << ", K = " << k;
        EXPECT_LE(int64_t(wide_m.cluster_m) * wide_m.bm, std::max<int64_t>(wide_m.bm, narrow))
            << "a cluster along M wider than M = " << narrow;
        EXPECT_LE(int64_t(wide_n.cluster_n) * wide_n.bn, std::max<int64_t>(wide_n.bn, narrow))
            << "a cluster along N wider than N = " << narrow;
      }
      EXPECT_EQ(choose_config(make(64, big, k), sms).bm, 64);
      EXPECT_EQ(choose_config(make(big, 64, k), sms).bn, 64);
      EXPECT_LE(choose_config(make(big, 128, k), sms).bn, 128);
    }
}

TEST(GemmConfig, EveryInstanceFitsSharedMemory) {
  for (const instance& in : instances) {
    config c;
    c.bm = in.bm, c.bn = in.bn, c.stages = in.stages, c.cluster_m = in.cluster_m, c.cluster_n = in.cluster_n;
    c.pingpong = in.pingpong;
    EXPECT_TRUE(instantiated(c));
    EXPECT_LE(smem_bytes(c), max_smem_per_block) << "bn " << in.bn << ", " << in.stages << " stages";
    c.stages += 1;  // the stage counts are the largest that fit
    EXPECT_GT(smem_bytes(c), max_smem_per_block) << "bn " << in.bn << ", " << in.stages << " stages";
  }
}

TEST(GemmConfig, Tile192WhereWideTilesQuantizeBadly) {
  const int sms = 132;
  // 3072^3: 144 cluster tiles of 256 x 256 on 66 clusters (73% busy) against 192 of 128 x 384
  // (97%): 128 x 192 tiles, A multicast along N.
  for (auto [m, n, k] :
       std::vector<std::tuple<int, int, int>>{{3072, 3072, 3072}, {3072, 3072, 1024}, {2304, 2304, 1024}}) {
    const config c = choose_config(make(m, n, k), sms);
    EXPECT_EQ(c.bn, 192) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.stages, 4) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.cluster_m, 1) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.cluster_n, 2) << m << "x" << n << "x" << k;
    EXPECT_FALSE(c.pingpong) << m << "x" << n << "x" << k;
  }
  // Equal quantization keeps 128 x 256; N <= 192 has no second tile along N for the cluster.
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{
           {8192, 8192, 8192}, {4096, 4096, 4096}, {6144, 6144, 6144}, {4096, 14336, 4096}, {16384, 192, 4096}})
    EXPECT_NE(choose_config(make(m, n, k), sms).bn, 192) << m << "x" << n << "x" << k;
}

TEST(GemmConfig, StreamKOnlyForLongPartialLastRounds) {
  const int sms = 132;                                                 // 66 clusters of 2
  EXPECT_FALSE(choose_config(make(4096, 4096, 4096), sms).stream_k);   // 58 of 66: saves 8 k-blocks
  EXPECT_FALSE(choose_config(make(2048, 2048, 2048), sms).stream_k);   // one partial round only
  EXPECT_FALSE(choose_config(make(128, 8192, 8192), sms).stream_k);    // one round of pairs
  EXPECT_TRUE(choose_config(make(8192, 8192, 8192), sms).stream_k);    // 34 of 66, 128 k-blocks
  EXPECT_TRUE(choose_config(make(4096, 14336, 4096), sms).stream_k);   // 38 of 66, 64 k-blocks
  EXPECT_TRUE(choose_config(make(16384, 16384, 4096), sms).stream_k);  // a tail of 4: joins the round before
  // Ping-pong takes whole tiles: where it is chosen there is no stream-K tail.
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{8192, 8192, 1024}, {1792, 3584, 1024}})
    EXPECT_FALSE(choose_config(make(m, n, k), sms).stream_k) << m << "x" << n << "x" << k;
}

// Few tokens on 64-row tiles: the whole problem is stream-K where the split tiles leave more than a
// tenth of the SMs idle and every cluster's share is at least 24 k-blocks.
TEST(GemmConfig, WholeProblemStreamKForFewTokensOnIdleSMs) {
  const int sms = 132;
  for (int m : {1, 8, 32, 64}) {
    const config c = choose_config(make(m, 10240, 8192), sms);  // 80 tiles, 128 k-blocks: shares of 77
    EXPECT_EQ(c.bm, 64) << m;
    EXPECT_TRUE(c.stream_k) << m;
    EXPECT_EQ(c.splits, 1) << m;
    const launch_schedule ls = make_schedule(make(m, 10240, 8192), c, sms);
    EXPECT_EQ(ls.work.dp_tiles, 0) << m;
    EXPECT_EQ(ls.work.clusters, sms) << m;
  }
  EXPECT_TRUE(choose_config(make(1, 7168, 16384), sms).stream_k);   // 56 tiles x 2 splits: 112 of 132
  EXPECT_FALSE(choose_config(make(1, 4096, 14336), sms).stream_k);  // 32 tiles x 4 splits: 128 of 132
  EXPECT_FALSE(choose_config(make(8, 4608, 3584), sms).stream_k);   // 36 tiles x 56 k-blocks: shares of 15
  EXPECT_FALSE(choose_config(make(1, 576, 7168), sms).stream_k);    // 5 tiles: shares of 4
  // 128-row tiles too where they are at most 128 wide and in clusters of 1: 80 of 128 x 128.
  const config rows128 = choose_config(make(128, 10240, 8192), sms);
  EXPECT_TRUE(rows128.stream_k);
  EXPECT_EQ(rows128.bm, 128);
  EXPECT_EQ(rows128.bn, 128);
  EXPECT_EQ(rows128.cluster_size(), 1);
  // Never 256-wide tiles: 96 of 128 x 256 (deepseek_v3/q_b) stay whole.
  EXPECT_FALSE(choose_config(make(128, 24576, 2048), sms).stream_k);
}

TEST(GemmWorkSchedule, ShortLastRoundJoinsTheRoundBefore) {
  EXPECT_EQ(stream_k_region(132, 66), 0);  // even rounds
  EXPECT_EQ(stream_k_region(40, 66), 40);  // less than one round: all of it
  EXPECT_EQ(stream_k_region(1, 132), 1);
  EXPECT_EQ(stream_k_region(896, 66), 38);       // 4096 x 14336: 38 >= 66 / 3
  EXPECT_EQ(stream_k_region(4096, 66), 4 + 66);  // 16384^2: a tail of 4
  EXPECT_EQ(stream_k_region(144, 66), 12 + 66);  // 3072^3
  EXPECT_EQ(stream_k_region(88, 66), 22);        // 22 = 66 / 3
  EXPECT_EQ(stream_k_region(87, 66), 21 + 66);
  // With the round before, every share is at least one tile long: no tile has more than 2 pieces.
  for (int total : {67, 70, 87, 144, 4096})
    for (int kb : {1, 3, 16, 64}) {
      const int sk = stream_k_region(total, 66);
      tile_scheduler order{1, total, 8};
      work_schedule w{order, kb, 66, 1, total - sk};
      for (int c = 0; c < 66; ++c) {
        work_item it;
        for (auto cur = w.start(c); w.next(cur, it);)
          EXPECT_LE(it.slots, 2) << total << " tiles, " << kb << " k-blocks";
      }
    }
}

TEST(GemmConfig, ForcedConfigurationsAreCheckedByName) {
  const auto why = [](const config& c, const problem& p) {
    try {
      validate(c, p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const problem p = make(1024, 1024, 1024);
  EXPECT_EQ(why(choose_config(p, 132), p), "");
  config c;
  c.bn = 96;
  EXPECT_NE(why(c, p).find("bm x bn x bk = 128 x 96 x 64"), std::string::npos) << why(c, p);
  EXPECT_NE(why(c, p).find("one of: 128 x 256 / 4 stages / cluster 1 x 1"), std::string::npos) << why(c, p);
  c = config{};
  c.cluster_m = 4;
  EXPECT_NE(why(c, p).find("cluster 4 x 1"), std::string::npos) << why(c, p);
  c.cluster_m = 2, c.cluster_n = 2;  // no 2 x 2 clusters (docs/gemm.md says why)
  EXPECT_NE(why(c, p).find("cluster 2 x 2"), std::string::npos) << why(c, p);
  c = config{};
  c.bn = 128, c.stages = 6, c.pingpong = true, c.stream_k = true;
  EXPECT_NE(why(c, p).find("ping-pong runs whole 128 x 128 tiles"), std::string::npos) << why(c, p);
  c = config{};
  c.splits = hopper::gemm::max_splits + 1;
  EXPECT_NE(why(c, p).find("splits = 17 must be 1..16"), std::string::npos) << why(c, p);
  c.splits = 0;
  EXPECT_NE(why(c, p).find("splits = 0 must be 1..16"), std::string::npos) << why(c, p);
  c.splits = 3;
  EXPECT_NE(why(c, make(64, 64, 128)).find("at most the 2 k-blocks of K = 128"), std::string::npos);
  c.splits = 2, c.stream_k = true;
  EXPECT_NE(why(c, p).find("stream_k with splits = 2"), std::string::npos) << why(c, p);
  c = config{};
  c.bm = 64, c.bn = 128, c.stages = 8, c.cluster_m = 2;
  EXPECT_EQ(why(c, p), "");
  c.pingpong = true;  // 64-row tiles have no ping-pong kernel
  EXPECT_NE(why(c, p).find("is not instantiated"), std::string::npos) << why(c, p);
  for (const instance& in : instances) {  // every table entry is accepted and matches only itself
    config k;
    k.bm = in.bm, k.bn = in.bn, k.stages = in.stages, k.cluster_m = in.cluster_m, k.cluster_n = in.cluster_n;
    k.pingpong = in.pingpong;
    EXPECT_EQ(why(k, p), "") << in.bm << " x " << in.bn;
    int matching = 0;
    for (const instance& other : instances) matching += matches(k, other) ? 1 : 0;
    EXPECT_EQ(matching, 1) << in.bm << " x " << in.bn << " cluster " << in.cluster_m << " x " << in.cluster_n;
  }
}

TEST(GemmTileScheduler, EveryTileOnceForAnyClusterCount) {
  for (auto [rows, cols, group] :
       std::vector<std::tuple<int, int, int>>{{32, 32, 8}, {1, 64, 8}, {7, 5, 8}, {33, 3, 8}, {16, 17, 4}, {5, 9, 1}}) {
    tile_scheduler s{rows, cols, group};
    for (int clusters : {1, 2, 7, 66, 200}) {
      std::set<std::pair<int, int>> seen;
      for (int c = 0; c < clusters; ++c)
        for (int t = c; t < s.total(); t += clusters) {
          int r, n;
          s.coords(t, r, n);
          ASSERT_GE(r, 0);
          ASSERT_LT(r, rows);
          ASSERT_GE(n, 0);
          ASSERT_LT(n, cols);
          ASSERT_TRUE(seen.insert({r, n}).second) << "tile (" << r << ", " << n << ") visited twice";
        }
      EXPECT_EQ(int(seen.size()), rows * cols) << rows << " x " << cols << ", " << clusters << " clusters";
    }
  }
}

// Walks every cluster's items of a schedule and checks that they cover every (tile, k-block) once,
// that a shared tile's pieces carry slots 0..slots-1 of one slot count, in k order, and that the
// stream-K shares are balanced to one k-block.
void check_schedule(const work_schedule& w) {
  const int total = w.order.total();
  std::vector<std::vector<int>> owner(total, std::vector<int>(w.k_blocks, -1));
  std::vector<std::vector<std::pair<int, int>>> pieces(total);  // (k begin, slot) per tile
  std::vector<int> slots_of(total, 0);
  int64_t sk_min = INT64_MAX, sk_max = 0;
  for (int c = 0; c < w.clusters; ++c) {
    int64_t sk = 0;
    work_item it;
    for (auto cur = w.start(c); w.next(cur, it);) {
      ASSERT_GE(it.tile, 0);
      ASSERT_LT(it.tile, total);
      ASSERT_LT(it.k.begin, it.k.end) << "empty item";
      ASSERT_GE(it.k.begin, 0);
      ASSERT_LE(it.k.end, w.k_blocks);
      ASSERT_GE(it.slot, 0);
      ASSERT_LT(it.slot, it.slots);
      if (slots_of[it.tile] == 0) slots_of[it.tile] = it.slots;
      ASSERT_EQ(slots_of[it.tile], it.slots) << "tile " << it.tile << ": pieces disagree on the slot count";
      if (it.tile >= w.dp_tiles) {
        ASSERT_EQ(it.fixup, it.tile - w.dp_tiles);
        sk += it.k.end - it.k.begin;
      } else if (it.slots > 1) {
        ASSERT_EQ(it.fixup, it.tile);
      } else {
        ASSERT_EQ(it.k.begin, 0);
        ASSERT_EQ(it.k.end, w.k_blocks);
      }
      pieces[it.tile].push_back({it.k.begin, it.slot});
      for (int kb = it.k.begin; kb < it.k.end; ++kb) {
        ASSERT_EQ(owner[it.tile][kb], -1) << "tile " << it.tile << " k-block " << kb << " twice";
        owner[it.tile][kb] = c;
      }
    }
    if (w.dp_tiles < total) sk_min = std::min(sk_min, sk), sk_max = std::max(sk_max, sk);
  }
  for (int t = 0; t < total; ++t) {
    for (int kb = 0; kb < w.k_blocks; ++kb)
      ASSERT_NE(owner[t][kb], -1) << "tile " << t << " k-block " << kb << " never";
    std::sort(pieces[t].begin(), pieces[t].end());
    ASSERT_EQ(int(pieces[t].size()), slots_of[t]) << "tile " << t;
    for (int j = 0; j < int(pieces[t].size()); ++j)
      ASSERT_EQ(pieces[t][j].second, j) << "tile " << t << ": slots out of k order";
  }
  if (w.dp_tiles < total) {
    EXPECT_LE(sk_max - sk_min, 1) << "stream-K shares differ by more than one k-block";
  }
}

TEST(GemmWorkSchedule, WholeSplitAndStreamKCoverEverythingOnce) {
  for (auto [rows, cols, kb] : std::vector<std::tuple<int, int, int>>{
           {32, 32, 128}, {12, 12, 16}, {8, 16, 64}, {64, 28, 64}, {7, 5, 3}, {1, 64, 128}, {32, 16, 16}}) {
    for (int clusters : {1, 7, 66, 132}) {
      tile_scheduler order{rows, cols, 8};
      const int total = order.total();
      for (int splits : {1, 2, 3}) {
        if (splits > kb) continue;
        work_schedule w{order, kb, std::min(clusters, total * splits), splits, total};
        SCOPED_TRACE(::testing::Message() << rows << " x " << cols << " tiles, " << kb << " k-blocks, " << w.clusters
                                          << " clusters, " << splits << " splits");
        check_schedule(w);
        if (HasFatalFailure()) return;
      }
      const int sk = stream_k_region(total, clusters);
      if (sk > 0 && int64_t(sk) * kb >= clusters) {
        work_schedule w{order, kb, clusters, 1, total - sk};
        SCOPED_TRACE(::testing::Message() << rows << " x " << cols << " tiles, " << kb << " k-blocks, " << clusters
                                          << " clusters, stream-K region of " << sk);
        check_schedule(w);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Ping-pong's consumer warpgroups each walk every other item of the cluster's walk of a
// whole-tile schedule (start_tiles): together they take exactly the producer's items, in its order.
TEST(GemmWorkSchedule, StridedTileWalksShareTheClustersWalk) {
  for (auto [rows, cols] : std::vector<std::pair<int, int>>{{32, 32}, {12, 12}, {7, 5}, {1, 64}, {3, 1}}) {
    for (int clusters : {1, 2, 7, 66, 132}) {
      tile_scheduler order{rows, cols, 8};
      const work_schedule w{order, 16, std::min(clusters, order.total()), 1, order.total()};
      for (int c = 0; c < w.clusters; ++c) {
        std::vector<int> producer;
        work_item item;
        for (auto cur = w.start(c); w.next(cur, item);) producer.push_back(item.tile);
        for (int every : {1, 2}) {
          for (int first = 0; first < every; ++first) {
            std::vector<int> mine;
            for (auto cur = w.start_tiles(c, first, every); !w.done(cur); ++cur) {
              const size_t at = size_t(first) + mine.size() * size_t(every);  // its index in the producer's walk
              mine.push_back(cur.tile);
              EXPECT_EQ(w.has_tile_after(cur.tile), at + 1 < producer.size()) << "cluster " << c << ", item " << at;
            }
            std::vector<int> expected;
            for (size_t i = size_t(first); i < producer.size(); i += size_t(every)) expected.push_back(producer[i]);
            EXPECT_EQ(mine, expected) << rows << " x " << cols << " tiles, " << w.clusters << " clusters, cluster " << c
                                      << ", items " << first << " + " << every << " i";
          }
        }
      }
    }
  }
}

TEST(GemmSplitK, RangesCoverEveryKBlockOnceAndNeverEmpty) {
  for (int k_blocks : {1, 2, 3, 4, 5, 7, 8, 9, 16, 127, 128, 129})
    for (int splits = 1; splits <= hopper::gemm::max_splits && splits <= k_blocks; ++splits) {
      int next = 0;
      for (int s = 0; s < splits; ++s) {
        const k_range r = split_k_range(k_blocks, splits, s);
        EXPECT_EQ(r.begin, next) << k_blocks << " k-blocks, split " << s << " of " << splits;
        EXPECT_GT(r.end, r.begin) << k_blocks << " k-blocks, split " << s << " of " << splits;
        EXPECT_LE(r.end - r.begin, (k_blocks + splits - 1) / splits);
        next = r.end;
      }
      EXPECT_EQ(next, k_blocks);
    }
}

// Two CTAs of a cluster on one 128 x 128 tile (64 x 128 each, sharing B by multicast; 128 x 64
// each sharing A where N is one tile): instead of one halving of K (fewer k-ranges to meet in the
// fixup), or where K is too short to split and the tiles leave more than half the clusters idle.
TEST(GemmConfig, PairsOfHalfTilesInsteadOfOneHalvingOfKOrIdleClusters) {
  const int sms = 132;
  // 128 x 8192 x 8192: 64 tiles of 128 x 128 would take 2 splits; 64 clusters of two 64 x 128
  // tiles take none.
  // Where K is too short to split and the tiles leave most clusters idle, the pairs double the
  // CTAs: 1024^3, 128 x 8192 x 2048.
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{
           {128, 8192, 8192}, {100, 8192, 8192}, {128, 8192, 4096}, {1024, 1024, 1024}, {128, 8192, 2048}}) {
    const config c = choose_config(make(m, n, k), sms);
    EXPECT_EQ(c.bm, 64) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.bn, 128) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.stages, 8) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.cluster_m, 2) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.cluster_n, 1) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.splits, 1) << m << "x" << n << "x" << k;
    EXPECT_TRUE(instantiated(c)) << m << "x" << n << "x" << k;
  }
  // 128 x 4096 x 8192: 4 splits become 2 of 32 pairs.
  config c = choose_config(make(128, 4096, 8192), sms);
  EXPECT_EQ(c.bm, 64);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_EQ(c.splits, 2);
  // The same along N: 8192 x 128 x 8192 runs 64 clusters of two 128 x 64 tiles (A multicast).
  c = choose_config(make(8192, 128, 8192), sms);
  EXPECT_EQ(c.bm, 128);
  EXPECT_EQ(c.bn, 64);
  EXPECT_EQ(c.stages, 8);
  EXPECT_EQ(c.cluster_m, 1);
  EXPECT_EQ(c.cluster_n, 2);
  EXPECT_EQ(c.splits, 1);
  EXPECT_TRUE(instantiated(c));
  // Enough tiles for the machine: no pairs. An odd split count stays.
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{
           {128, 16384, 4096}, {16384, 128, 4096}, {256, 8192, 8192}, {8192, 256, 8192}, {2048, 2048, 2048}}) {
    const config d = choose_config(make(m, n, k), sms);
    EXPECT_FALSE(d.bm == 64 || d.bn == 64) << m << "x" << n << "x" << k;
  }
  // One row of 128 x 128 tiles whose pairs fit in the wave: pairs, whatever K.
  c = choose_config(make(128, 5120, 8192), sms);  // 40 tiles: 80 CTAs
  EXPECT_EQ(c.bm, 64);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_EQ(c.splits, 1);
}

// Where 128 x 128 tiles cover N in two and M in more, the cluster pairs them along N: one cluster
// spans N and reads each A tile once. With two M tiles, or 256-wide tiles, the pair stays along M.
TEST(GemmConfig, ClusterAlongNWhereTwoTilesCoverN) {
  const int sms = 132;
  config c = choose_config(make(8192, 256, 8192), sms);
  EXPECT_EQ(c.bn, 128);
  EXPECT_EQ(c.cluster_m, 1);
  EXPECT_EQ(c.cluster_n, 2);
  EXPECT_TRUE(instantiated(c));
  c = choose_config(make(8192, 200, 8192), sms);
  EXPECT_EQ(c.cluster_n, 2);
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{
           {256, 8192, 8192}, {256, 256, 4096}, {16384, 256, 4096}, {8192, 512, 8192}}) {
    c = choose_config(make(m, n, k), sms);
    EXPECT_EQ(c.cluster_n, 1) << m << "x" << n << "x" << k;
    EXPECT_EQ(c.cluster_m, 2) << m << "x" << n << "x" << k;
  }
}

TEST(GemmConfig, PingPongWhereItHasManyRoundsOrBigTilesQuantizeBadly) {
  const int sms = 132;
  // 1792 x 3584 x 1024: 98 cluster tiles of 256 x 256 on 66 clusters (2 rounds, 74% busy)
  // against 196 of 256 x 128 (3 rounds, 99% busy); 128 x 192 tiles would be 98 cluster tiles too.
  config c = choose_config(make(1792, 3584, 1024), sms);
  EXPECT_TRUE(c.pingpong);
  EXPECT_EQ(c.bn, 128);
  EXPECT_EQ(c.stages, 6);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_EQ(c.splits, 1);
  // K <= 1024 with at least 8 x 66 cluster tiles of 256 x 128, or the same quantization gap.
  EXPECT_TRUE(choose_config(make(16384, 16384, 1024), sms).pingpong);
  // Long K at equal quantization (slower where power sets the clock), few rounds (slower), split-K,
  // narrow tiles, tiny problems.
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{8192, 8192, 8192},
                                                               {6144, 6144, 6144},
                                                               {16384, 16384, 16384},
                                                               {4096, 4096, 4096},
                                                               {2048, 2048, 2048},
                                                               {16384, 512, 4096},
                                                               {512, 8192, 8192},
                                                               {1024, 1024, 1024},
                                                               {512, 512, 512},
                                                               {128, 8192, 8192},
                                                               {16384, 64, 4096},
                                                               {64, 16384, 4096},
                                                               {1, 8, 8}})
    EXPECT_FALSE(choose_config(make(m, n, k), sms).pingpong) << m << "x" << n << "x" << k;
}

TEST(GemmConfig, SplitKOnlyForFewTilesWithLongK) {
  const int sms = 132;
  EXPECT_EQ(choose_config(make(256, 8192, 2048), sms).splits, 1);  // 32 k-blocks: too short to split
  const config c = choose_config(make(256, 2560, 8192), sms);      // 20 cluster tiles: 3 splits fit in 66, 4 do not
  EXPECT_EQ(c.bm, 128);
  EXPECT_EQ(c.splits, 3);
  // Splits of at least 16 k-blocks, as many as fill the wave: 12 cluster tiles of 112 k-blocks, 5.
  EXPECT_EQ(choose_config(make(256, 1536, 7168), sms).splits, 5);
  // Two rows of tiles: 2 long splits stay on 128 x 128 (halves of 112 k-blocks); 2 short ones
  // (halves of 32) become pairs of 64 x 128 tiles.
  const config long_halves = choose_config(make(256, 4096, 14336), sms);
  EXPECT_EQ(long_halves.bm, 128);
  EXPECT_EQ(long_halves.cluster_m, 2);
  EXPECT_EQ(long_halves.splits, 2);
  const config short_halves = choose_config(make(256, 4096, 4096), sms);
  EXPECT_EQ(short_halves.bm, 64);
  EXPECT_EQ(short_halves.cluster_m, 2);
  EXPECT_EQ(short_halves.splits, 1);
  EXPECT_EQ(choose_config(make(512, 512, 512), sms).splits, 1);
  EXPECT_EQ(choose_config(make(3072, 3072, 3072), sms).splits, 1);  // 3 waves already
  EXPECT_EQ(choose_config(make(8192, 8192, 1024), sms).splits, 1);
}

TEST(GemmTileScheduler, GroupsSweepColumnsWithinAGroupOfRows) {
  tile_scheduler s{16, 10, 8};
  int r, n;
  s.coords(0, r, n);
  EXPECT_EQ(r, 0);
  EXPECT_EQ(n, 0);
  s.coords(7, r, n);  // still column 0, last row of the group
  EXPECT_EQ(r, 7);
  EXPECT_EQ(n, 0);
  s.coords(8, r, n);  // next column, first row of the group
  EXPECT_EQ(r, 0);
  EXPECT_EQ(n, 1);
  s.coords(80, r, n);  // second group
  EXPECT_EQ(r, 8);
  EXPECT_EQ(n, 0);
}

// Few tokens (one row of tiles whose 64-row CTAs fit in the wave): as many splits as fill the wave,
// each at least the ring's 8 stages plus one k-block long, where the tiles alone fill at most a
// third of it (a half for pairs of 64 x 128 tiles on 128 x 128); else whole tiles or all-stream-K.
TEST(GemmConfig, FewTokensSplitKOverTheWave) {
  const int sms = 132;
  struct want {
    int64_t m, n, k;
    int bm, cluster_m, splits;
    bool stream_k;
  };
  for (const want& w :
       std::vector<want>{{1, 576, 7168, 64, 1, 12, false},      // 5 tiles: 26 fit, 112 / 9 = 12 long enough
                         {16, 1536, 7168, 64, 1, 11, false},    // 12 tiles: 11 fill the wave
                         {8, 4096, 4096, 64, 1, 4, false},      // 32 tiles: 4 fill 128 SMs
                         {1, 3584, 3584, 64, 1, 4, false},      // 28 tiles: 4 (shares of 14 k-blocks)
                         {32, 4608, 3584, 64, 1, 3, false},     // 36 tiles: 3
                         {64, 6144, 4096, 64, 1, 1, false},     // 48 tiles fill more than a third: whole
                         {1, 8192, 8192, 64, 1, 1, true},       // 64 tiles, 128 k-blocks: all-stream-K
                         {1, 3584, 18944, 64, 1, 1, true},      // 28 x 4 splits fill 112 of 132: all-stream-K
                         {128, 4096, 4096, 64, 2, 2, false},    // 32 pairs: 2 splits
                         {100, 1536, 7168, 64, 2, 5, false},    // 12 pairs: 5
                         {128, 576, 7168, 64, 2, 12, false},    // 5 pairs: 13 fit, 12 long enough
                         {128, 6144, 4096, 64, 2, 1, false},    // 48 pairs: whole
                         {128, 3584, 448, 64, 2, 1, false}}) {  // 7 k-blocks: shorter than one ring
    const config c = choose_config(make(w.m, w.n, w.k), sms);
    const std::string at = std::to_string(w.m) + "x" + std::to_string(w.n) + "x" + std::to_string(w.k);
    EXPECT_EQ(c.bm, w.bm) << at;
    EXPECT_EQ(c.bn, 128) << at;
    EXPECT_EQ(c.cluster_m, w.cluster_m) << at;
    EXPECT_EQ(c.splits, w.splits) << at;
    EXPECT_EQ(c.stream_k, w.stream_k) << at;
    EXPECT_NO_THROW(validate(c, make(w.m, w.n, w.k))) << at;
  }
  // Fewer SMs: the same rule on the wave there (5 tiles on 16 SMs: 3 splits).
  EXPECT_EQ(choose_config(make(1, 576, 7168), 16).splits, 3);
}

// An odd number of tile rows below 7 runs in clusters of 1 along M (a 2 x 1 cluster row would hold
// an idle CTA, more than an eighth of them); even counts and 7 or more keep a pair of CTAs (along
// M, or along N with 128 x 192 tiles).
TEST(GemmConfig, NoClusterRowOfIdleCtas) {
  const int sms = 132;
  for (int64_t n : {5120, 11008}) {
    for (int64_t m : {257, 384, 640}) {
      const config c = choose_config(make(m, n, 4096), sms);
      EXPECT_EQ(c.cluster_m, 1) << m << " x " << n;
      EXPECT_EQ(c.cluster_size(), 1) << m << " x " << n;
    }
    for (int64_t m : {256, 512, 768, 896, 1536, 8192})
      EXPECT_EQ(choose_config(make(m, n, 4096), sms).cluster_size(), 2) << m << " x " << n;
  }
  // 7 rows of 17 tiles fit in one wave of 132 SMs as clusters of 1, not as 4 x 17 clusters of 2.
  EXPECT_EQ(choose_config(make(832, 2112, 2048), sms).cluster_size(), 1);
  EXPECT_EQ(choose_config(make(896, 17920, 3072), sms).cluster_size(), 2);  // many rounds either way
}

// Half-empty edges: a last 128-wide tile at most half full, wasting at least a twelfth of the
// columns (rows), takes 64-wide tiles in clusters of 1 where they fit in half of the wave.
TEST(GemmConfig, HalfEmptyEdgesTakeTheNarrowerTile) {
  const int sms = 132;
  struct want {
    int64_t m, n, k;
    int bm, bn, splits;
  };
  for (const want& w :
       std::vector<want>{{384, 704, 5120, 128, 64, 4},    // N: 64 of 768 columns wasted; 33 tiles of 128 x 64, 4 splits
                         {256, 576, 7168, 128, 64, 7},    // deepseek_v3/kv_a/M256: 18 tiles, 7 splits of 16 k-blocks
                         {1536, 320, 2880, 128, 64, 2},   // 60 tiles of 128 x 64
                         {320, 960, 6144, 64, 128, 3},    // M: 64 of 384 rows wasted (N wastes a sixteenth: kept)
                         {640, 960, 6144, 128, 128, 3},   // neither edge
                         {2304, 448, 3072, 128, 128, 1},  // 126 tiles of 128 x 64 would fill the wave: kept
                         {1024, 576, 7168, 128, 128, 3}}) {
    const config c = choose_config(make(w.m, w.n, w.k), sms);
    const std::string at = std::to_string(w.m) + "x" + std::to_string(w.n) + "x" + std::to_string(w.k);
    EXPECT_EQ(c.bm, w.bm) << at;
    EXPECT_EQ(c.bn, w.bn) << at;
    EXPECT_EQ(c.splits, w.splits) << at;
    if (c.bm == 64 || c.bn == 64) {
      EXPECT_EQ(c.cluster_size(), 1) << at;
    }
    EXPECT_NO_THROW(validate(c, make(w.m, w.n, w.k))) << at;
  }
}
