// The GEMM's own kernel body (kernels/gemm/gemm_body.hpp) on the executable model, every thread a
// task, numerics included: every instance of the instances table (cooperative and ping-pong,
// 128- and 64-row tiles, clusters 1x1, 2x1, 1x2 with A/B multicast), every operand major, bf16
// and fp32 output, on small problems with edges in M, N and K, through whole tiles, split-K and
// the stream-K tail. C must match a double-precision reference with every element written, and
// no run may deadlock or show a hazard, over several scheduler seeds.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

#include "gemm_reference.hpp"
#include "hopper/model/explore.hpp"

namespace {

using namespace gemm_model;
using gemm_model::outcome;  // not the model's (explore.hpp)

std::string describe(const hg::problem& p, const hg::config& cf, int resident, uint64_t seed) {
  return std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K) + " " +
         (p.a_major == hg::major::k ? "A:k" : "A:mn") + (p.b_major == hg::major::k ? " B:k" : " B:mn") +
         (p.out == hg::out_type::bf16 ? " bf16" : " f32") + " | bm " + std::to_string(cf.bm) + " bn " +
         std::to_string(cf.bn) + " stages " + std::to_string(cf.stages) + " cluster " + std::to_string(cf.cluster_m) +
         "x" + std::to_string(cf.cluster_n) + (cf.pingpong ? " ping-pong" : "") + " splits " +
         std::to_string(cf.splits) + (cf.stream_k ? " stream-K" : "") + " | " + std::to_string(resident) +
         " clusters, seed " + std::to_string(seed);
}

double g_seconds = 0;
int g_runs = 0;

template <class T>
void expect_clean(const hg::problem& p, const hg::config& cf, int resident, uint64_t seed) {
  const operands o = random_operands(p, seed);
  const auto t0 = std::chrono::steady_clock::now();
  const outcome r = run<T>(p, cf, resident, o, seed);
  g_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++g_runs;
  const std::string what = describe(p, cf, resident, seed);
  ASSERT_EQ(r.error, "") << what;
  const check k = compare(p, o, r.c, p.out == hg::out_type::bf16);
  EXPECT_EQ(k.unwritten, 0u) << what << ": " << k.first;
  EXPECT_EQ(k.wrong, 0u) << what << ": " << k.first;
}

// f(std::integral_constant<size_t, I>) for every entry of the instances table.
template <class F, size_t... I>
void for_each_instance(F&& f, std::index_sequence<I...>) {
  (f(std::integral_constant<size_t, I>{}), ...);
}
template <class F>
void for_each_instance(F&& f) {
  for_each_instance(f, std::make_index_sequence<sizeof(hg::instances) / sizeof(hg::instances[0])>{});
}

template <size_t I, class OutT, bool A_MN, bool B_MN>
using traits_of =
    hg::kernel_traits<hg::instances[I].bm, hg::instances[I].bn, hg::instances[I].stages, hg::instances[I].cluster_m,
                      hg::instances[I].cluster_n, OutT, A_MN, B_MN, hg::instances[I].pingpong>;

hg::config config_of(const hg::instance& in) {
  hg::config c;
  c.bm = in.bm, c.bn = in.bn, c.stages = in.stages, c.cluster_m = in.cluster_m, c.cluster_n = in.cluster_n;
  c.pingpong = in.pingpong;
  c.group_m = 2;
  return c;
}

struct bf16 {
  using type = uint16_t;
};
struct f32 {
  using type = float;
};

// Every instance, every major and output: two CTA tiles per cluster along M and N (the second
// one partial: edges in M and N), K = 200 (four k-blocks, the last one partial), two clusters.
TEST(GemmModel, EveryInstanceEveryMajorAndOutput) {
  for_each_instance([](auto idx) {
    constexpr size_t I = decltype(idx)::value;
    auto one = [](auto out_tag, auto a_mn, auto b_mn) {
      const hg::instance in = hg::instances[I];
      using OutT = typename decltype(out_tag)::type;
      using T = traits_of<I, OutT, decltype(a_mn)::value, decltype(b_mn)::value>;
      hg::problem p;
      p.M = int64_t(in.bm) * in.cluster_m + in.bm / 2 + 8;
      p.N = int64_t(in.bn) * in.cluster_n + in.bn / 2 + 8;
      p.K = 200;
      p.a_major = decltype(a_mn)::value ? hg::major::mn : hg::major::k;
      p.b_major = decltype(b_mn)::value ? hg::major::mn : hg::major::k;
      p.out = sizeof(OutT) == 2 ? hg::out_type::bf16 : hg::out_type::f32;
      expect_clean<T>(p, config_of(in), 2, 11 + I);
    };
    one(bf16{}, std::false_type{}, std::false_type{});
    one(bf16{}, std::false_type{}, std::true_type{});
    one(bf16{}, std::true_type{}, std::false_type{});
    one(bf16{}, std::true_type{}, std::true_type{});
    one(f32{}, std::false_type{}, std::false_type{});
  });
  std::printf("  %d runs, %.1f s on the model\n", g_runs, g_seconds);
}

// Rows of C that end inside a 16-byte chunk (N * out bytes not a multiple of 16, C padded to a
// 16-byte pitch): a TMA store writes whole chunks, so the last columns go out as plain stores and
// nothing between N and ldc may be written. Narrow (N below one chunk: no TMA store at all), wide,
// split, ping-pong, both outputs.
TEST(GemmModel, RowsEndingInsideAChunkWriteNothingPastN) {
  const auto one = [](auto traits, int64_t N, hg::config cf, int resident) {
    using T = typename decltype(traits)::type;
    hg::problem p;
    p.M = 72;
    p.N = N;
    p.K = 136;
    p.out = sizeof(typename T::OutT) == 2 ? hg::out_type::bf16 : hg::out_type::f32;
    p.a_major = T::A_MN ? hg::major::mn : hg::major::k;
    p.b_major = T::B_MN ? hg::major::mn : hg::major::k;
    const int64_t per_chunk = 16 / int64_t(sizeof(typename T::OutT));
    p.ldc = (N + per_chunk - 1) / per_chunk * per_chunk + per_chunk;  // a padded pitch
    const operands o = random_operands(p, 5);
    const outcome r = run<T>(p, cf, resident, o, 41);
    const std::string what = describe(p, cf, resident, 41);
    ASSERT_EQ(r.error, "") << what;
    const check k = compare(p, o, r.c, p.out == hg::out_type::bf16);
    EXPECT_EQ(k.unwritten + k.wrong, 0u) << what << ": " << k.first;
    EXPECT_EQ(r.padding_written, 0u) << what << ": bytes past column N written";
  };
  struct wide {
    using type = traits_of<0, uint16_t, false, false>;  // 128 x 256, no cluster
  };
  struct narrow {
    using type = traits_of<11, uint16_t, false, false>;  // 128 x 64
  };
  struct pingpong {
    using type = traits_of<8, float, true, false>;  // 128 x 128 ping-pong, f32, MN-major A
  };
  struct coop128 {
    using type = traits_of<5, float, false, false>;  // 128 x 128, f32
  };
  static_assert(hg::instances[0].bn == 256 && hg::instances[11].bn == 64 && hg::instances[8].pingpong &&
                hg::instances[5].bn == 128 && !hg::instances[5].pingpong);
  one(wide{}, 5, config_of(hg::instances[0]), 1);    // no whole chunk: no TMA store
  one(wide{}, 267, config_of(hg::instances[0]), 1);  // two tiles, the second ends mid-chunk
  one(narrow{}, 61, config_of(hg::instances[11]), 1);
  one(pingpong{}, 131, config_of(hg::instances[8]), 1);
  hg::config split = config_of(hg::instances[5]);
  split.splits = 2;
  one(coop128{}, 130, split, 2);
}

// Split-K, the stream-K tail and the all-stream-K schedule on the cooperative instances: the
// pieces of a tile meet in the fp32 workspace and the last one sums them in slot order.
TEST(GemmModel, SplitKAndStreamK) {
  for_each_instance([](auto idx) {
    constexpr size_t I = decltype(idx)::value;
    constexpr hg::instance in = hg::instances[I];
    if constexpr (!in.pingpong) {
      using T = traits_of<I, float, false, false>;
      hg::problem p;
      p.M = int64_t(in.bm) * in.cluster_m;
      p.N = int64_t(in.bn) * in.cluster_n;
      p.K = 256;
      p.out = hg::out_type::f32;
      hg::config split = config_of(in);
      split.splits = 3;  // 4 k-blocks in pieces of 1, 1, 2
      expect_clean<T>(p, split, 3, 21 + I);
      // Three cluster tiles on two clusters: the last round is partial, its k-blocks shared.
      p.M = int64_t(in.bm) * in.cluster_m * 3;
      hg::config sk = config_of(in);
      sk.stream_k = true;
      expect_clean<T>(p, sk, 2, 31 + I);
      // Fewer cluster tiles than clusters: the whole problem is shared. One tile's 4 k-blocks on 3
      // clusters (pieces of 1, 1, 2), then two tiles on 3 (the middle share crosses the tiles).
      p.M = int64_t(in.bm) * in.cluster_m;
      ASSERT_EQ(hg::make_schedule(p, sk, 3).work.dp_tiles, 0);
      expect_clean<T>(p, sk, 3, 41 + I);
      p.M = int64_t(in.bm) * in.cluster_m * 2;
      expect_clean<T>(p, sk, 3, 51 + I);
    }
  });
}

// Few rows in many pieces: only the warps whose rows start below M leave partials, and the last
// piece spreads the sum over its warpgroup (one or two live warps) or sums per thread (three or
// four); the rows past M are never stored. 64-row tiles (M of 1 to 50: 1, 1, 2, 3 and 4 live
// warps) in 8 splits of one k-block and as the whole problem on 5 clusters, and 128-row tiles
// whose second warpgroup has 16 or 36 rows (1 and 3 live warps).
TEST(GemmModel, SplitKFewRowsManyPieces) {
  using T64 = traits_of<13, uint16_t, false, false>;  // 64 x 128, cluster 1
  using T128 = traits_of<11, float, false, true>;     // 128 x 64, f32 out, B MN-major
  static_assert(hg::instances[13].bm == 64 && hg::instances[13].cluster_m == 1 && hg::instances[11].bn == 64);
  hg::problem p;
  p.N = 128, p.K = 7 * 64 + 16;  // 8 k-blocks, the last ragged
  for (int64_t m : {1, 9, 17, 33, 50}) {
    p.M = m;
    hg::config cf = config_of(hg::instances[13]);
    cf.splits = 8;
    expect_clean<T64>(p, cf, 8, 60 + uint64_t(m));
    cf.splits = 1, cf.stream_k = true;
    ASSERT_EQ(hg::make_schedule(p, cf, 5).work.dp_tiles, 0);
    expect_clean<T64>(p, cf, 5, 70 + uint64_t(m));
  }
  p.N = 104, p.K = 5 * 64, p.out = hg::out_type::f32, p.b_major = hg::major::mn;
  for (int64_t m : {80, 100}) {
    p.M = m;
    hg::config cf = config_of(hg::instances[11]);
    cf.splits = 5;
    expect_clean<T128>(p, cf, 3, 80 + uint64_t(m));
  }
}

// The smallest cluster case under many scheduler seeds, and under the schedules in which one of
// its two CTAs runs only when the other cannot (a peer far behind or far ahead).
TEST(GemmModel, ClusterOf2ManySeedsAndSlowPeers) {
  using T = traits_of<1, uint16_t, false, false>;  // 128 x 256, 4 stages, cluster 2 x 1
  static_assert(hg::instances[1].cluster_m == 2 && hg::instances[1].cluster_n == 1, "the 2 x 1 instance");
  hg::problem p;
  p.M = 256, p.N = 256, p.K = 320;
  for (uint64_t seed = 1; seed <= 20; ++seed) expect_clean<T>(p, config_of(hg::instances[1]), 1, seed);
  for (int slow : {0, 1})
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const operands o = random_operands(p, seed);
      const outcome r = run<T>(p, config_of(hg::instances[1]), 1, o, seed, slow);
      ASSERT_EQ(r.error, "") << "slow CTA " << slow << ", seed " << seed;
      const check k = compare(p, o, r.c, true);
      EXPECT_EQ(k.wrong + k.unwritten, 0u) << "slow CTA " << slow << ": " << k.first;
    }
}

// One GEMM tile (128 x 64, one k-block: the producer, two consumer warpgroups, the epilogue)
// under explore_por, the search over every schedule up to the order of independent steps, for at
// most kTileRuns runs (200 in CI): each explored run is clean with every element right. The count printed
// says how many classes were covered and whether that was all of them.
TEST(GemmModel, OneTileExplored) {
  using T = traits_of<11, uint16_t, false, false>;  // 128 x 64, no cluster
  static_assert(hg::instances[11].bm == 128 && hg::instances[11].bn == 64, "the 128 x 64 instance");
  // HOPPER_TILE_RUNS raises the bound outside CI.
  const char* env = std::getenv("HOPPER_TILE_RUNS");
  const uint64_t kTileRuns = env ? std::strtoull(env, nullptr, 10) : 200;
  hg::problem p;
  p.M = 128, p.N = 64, p.K = 64;
  const operands o = random_operands(p, 3);
  uint64_t wrong = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const exploration e = explore_por(
      [&](const run_options& opt) {
        const outcome r = run<T>(p, config_of(hg::instances[11]), 1, o, 1, -1, opt.chooser);
        hopper::model::outcome m;
        m.ok = r.error.empty();
        m.message = r.error;
        if (m.ok && !opt.chooser->ended_early()) {
          const check k = compare(p, o, r.c, true);
          wrong += k.wrong + k.unwritten;
        }
        return m;
      },
      kTileRuns);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(e.clean()) << e.summary();
  EXPECT_EQ(wrong, 0u);
  std::printf("  one tile: %llu classes (%llu runs, %llu redundant)%s, %.1f s\n", (unsigned long long)e.classes(),
              (unsigned long long)e.runs, (unsigned long long)e.sleep_blocked,
              e.complete ? ", every class" : ", not every class", s);
}

}  // namespace
