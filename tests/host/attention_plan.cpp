// The attention launch plan and its validation (kernels/attention/attention_plan.hpp): every bad
// argument is rejected with a message naming it and its value; the tensor maps are ordered by
// stride with boxes the tile types give; the plan is the one the model runner launches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hopper/model/target.hpp"
#include "hopper/objects/limits.hpp"
#include "kernels/attention/attention_plan.hpp"

namespace {

namespace ha = hopper::attention;

void expect_rejected(const std::function<void()>& f, const std::string& mention) {
  try {
    f();
    ADD_FAILURE() << "accepted; expected a rejection naming '" << mention << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
  }
}

ha::problem base() { return ha::problem::packed(2, 8, 2, 1000, 1200, 128, true); }

TEST(AttentionPlan, RejectsBadShapesByName) {
  const auto with = [](auto edit) {
    ha::problem p = base();
    edit(p);
    return [p] { ha::validate(p); };
  };
  expect_rejected(with([](ha::problem& p) { p.head_dim = 96; }), "head_dim 96");
  expect_rejected(with([](ha::problem& p) { p.head_dim = 0; }), "head_dim 0");
  expect_rejected(with([](ha::problem& p) { p.seq_q = 0; }), "seq_q 0");
  expect_rejected(with([](ha::problem& p) { p.seq_k = -3; }), "seq_k -3");
  expect_rejected(with([](ha::problem& p) { p.batch = 0; }), "batch 0");
  expect_rejected(with([](ha::problem& p) { p.kv_heads = 3; }), "kv_heads 3 does not divide heads 8");
  expect_rejected(with([](ha::problem& p) { p.kv_heads = 0; }), "kv_heads 0");
  expect_rejected(with([](ha::problem& p) { p.seq_q = int64_t(1) << 31; }), "seq_q 2147483648");
  expect_rejected(with([](ha::problem& p) { p.scale = -0.5f; }), "scale -0.5");
  expect_rejected(with([](ha::problem& p) { p.q.seq = 1004; }), "q's seq stride 1004");
  expect_rejected(with([](ha::problem& p) { p.k.head = 0; }), "k's head stride 0");
  expect_rejected(with([](ha::problem& p) { p.o.batch = int64_t(1) << 40; }), "o's batch stride");
  expect_rejected(with([](ha::problem& p) { p.batch = 1 << 16, p.heads = 1 << 10, p.kv_heads = 1, p.seq_q = 1 << 12; }),
                  "the grid of");
}

// Overlapping dimensions: a head stride smaller than the head dimension.
TEST(AttentionPlan, RejectsOverlappingStrides) {
  ha::problem p = base();
  p.v.head = 64;
  expect_rejected([&] { (void)ha::make_launch_plan(p); }, "v's head stride 64");
}

TEST(AttentionPlan, RejectsBadPointersByName) {
  const ha::problem p = ha::problem::packed(1, 2, 1, 100, 100, 64);
  alignas(16) static uint8_t mem[4][64 * 1024];
  float* lse = reinterpret_cast<float*>(mem[3]);
  expect_rejected([&] { ha::validate(p, nullptr, mem[1], mem[2], mem[3]); }, "q is null");
  expect_rejected([&] { ha::validate(p, mem[0] + 2, mem[1], mem[2], mem[3]); }, "not 16-byte aligned");
  expect_rejected([&] { ha::validate(p, mem[0], mem[1], mem[2], mem[0] + 64); }, "o overlaps q");
  expect_rejected([&] { ha::validate(p, mem[0], mem[1], mem[2], mem[2]); }, "o overlaps v");
  expect_rejected([&] { ha::validate(p, mem[0], mem[1], mem[2], mem[3], reinterpret_cast<float*>(mem[1])); },
                  "lse overlaps k");
  EXPECT_NO_THROW(ha::validate(p, mem[0], mem[1], mem[2], mem[3] + 32 * 1024, lse));
}

// Packed (batch, seq, heads, dim): the maps run {dim, heads, seq, batch} by stride, the box takes
// the tile's rows along the sequence, and the body is told where each coordinate goes.
TEST(AttentionPlan, MapsAreOrderedByStride) {
  const ha::launch_plan lp = ha::make_launch_plan(base());
  EXPECT_EQ(lp.q_tiles, 8);
  EXPECT_EQ(lp.grid, 8 * 8 * 2);
  EXPECT_EQ(lp.q.dims[0], 128u);
  EXPECT_EQ(lp.q.dims[1], 8u);     // heads
  EXPECT_EQ(lp.q.dims[2], 1000u);  // seq
  EXPECT_EQ(lp.q.dims[3], 2u);     // batch
  EXPECT_EQ(lp.q.strides[0], 128u * 2);
  EXPECT_EQ(lp.q.strides[1], 8u * 128 * 2);
  EXPECT_EQ(lp.q.box[2], uint32_t(ha::attention_traits<128>::BM));
  EXPECT_EQ(lp.q.box[1], 1u);
  EXPECT_EQ(lp.q.order.head, 1);
  EXPECT_EQ(lp.q.order.seq, 2);
  EXPECT_EQ(lp.q.order.batch, 3);
  EXPECT_EQ(lp.k.box[2], uint32_t(ha::attention_traits<128>::BN));
  EXPECT_EQ(lp.v.box[2], uint32_t(ha::attention_traits<128>::BN));
  EXPECT_EQ(lp.o.box[2], uint32_t(ha::wgmma_m));
  EXPECT_FLOAT_EQ(lp.scale_log2, float(1.0 / std::sqrt(128.0) * 1.4426950408889634));
}

// An instance other than shape_of's (three consumer warpgroups): the tile of Q, the grid and the
// block follow it; an instance of another head dimension or out of range is refused by name.
TEST(AttentionPlan, InstanceShapesTheLaunch) {
  using wide = ha::attention_traits<64, true, 128, 3, 3>;
  const ha::problem p = ha::problem::packed(2, 8, 8, 1000, 1000, 64);
  const ha::launch_plan lp = ha::make_launch_plan(p, wide::SHAPE);
  EXPECT_EQ(wide::BM, 192);
  EXPECT_EQ(lp.q_tiles, 6);  // ceil(1000 / 192)
  EXPECT_EQ(lp.grid, 6 * 8 * 2);
  EXPECT_EQ(lp.threads, 512);
  EXPECT_EQ(lp.q.box[2], 192u);
  EXPECT_TRUE(ha::launches<wide>(lp));
  EXPECT_FALSE(ha::launches<ha::attention_traits<64>>(lp));
  EXPECT_FALSE(ha::launches<wide>(ha::make_launch_plan(p)));
  EXPECT_EQ(wide::CONSUMER_REGS, 160u);
  // Two consumers beside the producer's least 32 share the 168 registers per thread that 384
  // threads hold at launch: 232 each (240 would leave one setmaxnreg.inc waiting for ever), and
  // the producer takes the 40 they leave. Three beside 32 take 160 and leave it none.
  EXPECT_EQ(ha::attention_traits<64>::CONSUMER_REGS, 232u);
  EXPECT_EQ(ha::attention_traits<64>::PRODUCER_REGS, 40u);
  EXPECT_EQ(wide::PRODUCER_REGS, 32u);
  EXPECT_TRUE(hopper::limits::register_split_fits(1, 40, 2, 232));
  EXPECT_FALSE(hopper::limits::register_split_fits(1, 48, 2, 232));
  EXPECT_FALSE(hopper::limits::register_split_fits(1, ha::least_producer_regs, 2, 240));
  EXPECT_TRUE(hopper::limits::register_split_fits(1, 32, 3, wide::CONSUMER_REGS));
  EXPECT_FALSE(hopper::limits::register_split_fits(1, 40, 3, wide::CONSUMER_REGS));
  expect_rejected([&] { (void)ha::make_launch_plan(p, ha::attention_traits<128>::SHAPE); }, "head_dim 128");
  expect_rejected([&] { (void)ha::make_launch_plan(p, ha::head_dim_shape{64, 128, 3, 4}); }, "consumers 4");
  expect_rejected([&] { (void)ha::make_launch_plan(p, ha::head_dim_shape{64, 96, 3, 2}); }, "block_n 96");
  expect_rejected([&] { (void)ha::make_launch_plan(p, ha::head_dim_shape{64, 128, 0, 2}); }, "stages 0");
}

// A persistent grid, fewer CTAs than the tiles: `resident` of them, or with a causal mask
// min(resident, ceil(tiles / 2)), a pair of tiles each a round; by default the SMs'; the body's
// parameters carry the tiles and the grid it strides by. one_cta_per_tile at any size.
TEST(AttentionPlan, ResidentCtasMakeAPersistentGrid) {
  for (bool causal : {false, true}) {
    const ha::problem p = ha::problem::packed(2, 8, 8, 1000, 1000, 64, causal);  // 8 tiles x 8 heads x 2
    const ha::launch_plan one_each = ha::make_launch_plan(p);
    EXPECT_EQ(one_each.tiles, 128);
    EXPECT_EQ(one_each.grid, 128);  // fewer tiles than SMs
    const ha::launch_plan walked = ha::make_launch_plan(p, {}, 132 / 2);
    EXPECT_EQ(walked.tiles, 128);
    EXPECT_EQ(walked.grid, causal ? 64 : 66);  // causal: ceil(128 / 2), a pair of tiles each
    const auto bp = ha::params_of<hopper::model::target>(walked, {}, false);
    EXPECT_EQ(bp.tiles, 128);
    EXPECT_EQ(bp.ctas, walked.grid);
    EXPECT_EQ(ha::make_launch_plan(p, {}, 50).grid, 50);
    EXPECT_EQ(ha::make_launch_plan(p, {}, 1000).grid, 128);                                // never more CTAs than tiles
    EXPECT_EQ(ha::make_launch_plan(p, ha::shape_of(64), 0, 100).grid, causal ? 64 : 100);  // the SMs by default
    EXPECT_EQ(ha::make_launch_plan(p, ha::shape_of(64), ha::one_cta_per_tile, 100).grid, 128);
    expect_rejected([&] { (void)ha::make_launch_plan(p, {}, -1); }, "resident CTAs -1");
    expect_rejected([&] { (void)ha::make_launch_plan(p, ha::attention_traits<64>::SHAPE, 0, 0); }, "sms 0");
  }
}

// The tile walk (cta_tile, place_of): every tile of every (batch, head) computed once, each CTA's
// last tile marked; with a causal mask the kv blocks shared out within `most_over_mean` of even
// (tiles in order within a head, strided, left one CTA 1.57 times the mean at 16k); and each
// round's tiles (the CTAs' tiles running at once) from the fewest heads they can fill, so that
// those CTAs share K and V in L2 (the tiles in order of length over every head balanced the work
// within 1.03 of even but took a round's tiles from up to 132 heads).
template <class T>
void expect_walk(const ha::problem& p, int resident, double most_over_mean) {
  const ha::launch_plan lp = ha::make_launch_plan(p, T::SHAPE, resident);
  const auto bp = ha::params_of<hopper::model::target>(lp, {}, false);
  std::vector<int> seen(size_t(lp.tiles), 0);
  std::vector<std::set<int>> heads_of_round;  // (batch, head) pairs each round n / 2 reads
  double most = 0, all = 0;
  for (int b = 0; b < lp.grid; ++b) {
    double mine = 0;
    int n = 0;
    for (; ha::detail::cta_tile(b, n, lp.grid, lp.tiles, p.causal) < lp.tiles; ++n) {
      const ha::tile_place at = ha::detail::place_of<T>(b, n, bp);
      ASSERT_EQ(at.n, n);
      ASSERT_EQ(at.m0 % T::BM, 0);
      ASSERT_LT(at.m0, p.seq_q);
      const int pair = int(at.batch) * int(p.heads) + at.head;
      ++seen.at(size_t(pair) * size_t(lp.q_tiles) + size_t(at.m0 / T::BM));
      EXPECT_EQ(at.last != 0, ha::detail::cta_tile(b, n + 1, lp.grid, lp.tiles, p.causal) >= lp.tiles);
      if (heads_of_round.size() <= size_t(n / 2)) heads_of_round.resize(size_t(n / 2) + 1);
      heads_of_round[size_t(n / 2)].insert(pair);
      mine += at.blocks;
    }
    EXPECT_GE(n, 1) << "CTA " << b << " of " << lp.grid << " has no tile";
    most = std::max(most, mine), all += mine;
  }
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "tile " << i;
  EXPECT_LE(most / (all / lp.grid), most_over_mean) << p.batch << " x " << p.seq_q << ", " << lp.grid << " CTAs";
  if (lp.grid < lp.tiles) {
    const size_t fewest = size_t(2 * lp.grid + lp.q_tiles - 1) / size_t(lp.q_tiles) + 1;
    for (size_t r = 0; r < heads_of_round.size(); ++r)
      EXPECT_LE(heads_of_round[r].size(), fewest) << "round " << r << " of " << lp.grid << " CTAs, " << p.batch << " x "
                                                  << p.seq_q << (p.causal ? " causal" : "");
  }
}

// first_masked_block: block j needs the mask exactly when it reaches past seq_k or, causal, past
// the first row, for every kv block width, row and length.
TEST(AttentionPlan, FirstMaskedBlockIsWhereMaskingStarts) {
  for (int bn : {64, 128, 192, 256})
    for (bool causal : {false, true})
      for (int seq_k = 1; seq_k <= 700; seq_k += 7)
        for (int first_row = 0; first_row <= 700; first_row += 64) {
          const int from = ha::detail::first_masked_block(first_row, seq_k, causal, bn);
          for (int j = 0; j * bn < seq_k + bn; ++j) {
            const int end = (j + 1) * bn;
            const bool masked = end > seq_k || (causal && end - 1 > first_row);
            ASSERT_EQ(j >= from, masked) << "bn " << bn << " seq_k " << seq_k << " row " << first_row << " block " << j;
          }
        }
}

TEST(AttentionPlan, PersistentWalkCoversEveryTileOnceAndEvensCausalWork) {
  using three = ha::attention_traits<64, true, 128, 3, 3>;
  for (bool causal : {false, true})
    for (int resident : {0, 1, 2, 3, 7, 132}) {
      expect_walk<ha::attention_traits<64>>(ha::problem::packed(2, 3, 1, 1000, 900, 64, causal), resident, 8.0);
      expect_walk<three>(ha::problem::packed(1, 5, 5, 777, 777, 64, causal), resident, 8.0);
    }
  // 16 heads x 16k tokens as batch x sequence, the benchmark's causal shapes. Pairs of tiles of
  // equal work (BM = BN: a pair is the last and first tile of Q's rows and so on) leave only the
  // quantization of the pairs over the grid, ceil(pairs / grid) / (pairs / grid): 1.031 on every
  // shape here. The 192-row tile's pairs differ by up to a kv block, and its quantization is
  // 1.03-1.15 (688 pairs over 132 CTAs at 16k).
  const auto quantization = [](const ha::problem& p, const ha::head_dim_shape& sh) {
    const ha::launch_plan lp = ha::make_launch_plan(p, sh, 132);
    const int pairs_of_tiles = (lp.tiles + 1) / 2;
    const double pairs = pairs_of_tiles;
    return std::ceil(pairs / lp.grid) / (pairs / lp.grid);
  };
  for (const auto& [batch, seq] : {std::pair<int64_t, int64_t>{1, 16384}, {4, 4096}, {16, 1024}}) {
    for (int d : {64, 128, 256}) {
      const ha::problem p = ha::problem::packed(batch, 16, 16, seq, seq, d, true);
      EXPECT_NEAR(quantization(p, ha::shape_of(d)), 1.031, 0.001) << d << " " << seq;
    }
    const ha::problem p = ha::problem::packed(batch, 16, 16, seq, seq, 64, true);
    expect_walk<ha::attention_traits<64>>(p, 132, 1.0 + 1e-9 + (quantization(p, ha::shape_of(64)) - 1.0));
    expect_walk<three>(p, 132, 1.04 * quantization(p, three::SHAPE));
    const ha::problem p128 = ha::problem::packed(batch, 16, 16, seq, seq, 128, true);
    expect_walk<ha::attention_traits<128>>(p128, 132, 1.0 + 1e-9 + (quantization(p128, ha::shape_of(128)) - 1.0));
  }
}

// The instance rule (attention_rule.hpp). On the benchmark's shapes (16 heads x 16k tokens as
// batch x sequence) at head dimension 64: three consumer warpgroups wherever their rate (1.15)
// pays for the rows and diagonal blocks a 192-row tile computes past the mask and for its rounds
// on the persistent grid (not at 1k and 4k causal: 6 rounds of pairs of 1.78 and 1.59 times the
// work of two's 8); two where one wave holds every tile, so that the longest tile decides, and
// where seq_q is one tile of either. Head dimensions 128 and 256 take their wider kv block (160,
// 80; rate 1.035) where its last block wastes little: not at 1k at head dimension 128 (7 blocks
// of 160 for 8 of 128: 1.094 times the work), nor at 1k causal at 256.
TEST(AttentionRule, ChoosesByPredictedTime) {
  const auto consumers = [](const ha::problem& p, int sms = 132) {
    const ha::head_dim_shape s = ha::choose_shape(p, sms);
    EXPECT_EQ(s.head_dim, p.head_dim);
    EXPECT_EQ(ha::make_launch_plan(p, {}, 0, sms).shape, s);
    return s.consumers;
  };
  for (int64_t seq : {1024, 4096, 16384})
    for (bool causal : {false, true}) {
      const ha::problem p = ha::problem::packed(16384 / seq, 16, 16, seq, seq, 64, causal);
      EXPECT_EQ(consumers(p), causal && seq < 16384 ? 2 : 3)
          << seq << (causal ? " causal\n" : " full\n") << ha::explain(p, 132);
      EXPECT_EQ(consumers(ha::problem::packed(16384 / seq, 16, 16, seq, seq, 128, causal)), 2);
      EXPECT_EQ(ha::choose_shape(ha::problem::packed(16384 / seq, 16, 16, seq, seq, 128, causal), 132).block_n,
                seq == 1024 ? 128 : 160);
      EXPECT_EQ(ha::choose_shape(ha::problem::packed(16384 / seq, 16, 16, seq, seq, 256, causal), 132).block_n,
                seq == 1024 && causal ? 64 : 80);
    }
  const ha::problem one_wave = ha::problem::packed(1, 4, 4, 4096, 4096, 64);  // 128 tiles of 128 rows
  EXPECT_EQ(consumers(one_wave), 2) << ha::explain(one_wave, 132);
  EXPECT_EQ(consumers(one_wave, 8), 3) << ha::explain(one_wave, 8);         // 16 tiles per SM
  EXPECT_EQ(consumers(ha::problem::packed(64, 16, 16, 100, 8192, 64)), 2);  // decode-like: seq_q one tile
  EXPECT_EQ(ha::make_launch_plan(one_wave).shape, ha::choose_shape(one_wave, ha::reference_sms));
  expect_rejected([&] { (void)ha::choose_shape(one_wave, 0); }, "sms 0");
  expect_rejected([&] { (void)ha::predict(one_wave, ha::instances[2], 132); }, "no candidate for head_dim 64");
}

// The rule's work is the body's: BM x BN x the kv blocks of every tile the walk hands out, and
// its rounds the walk's (without a causal mask the busiest CTA's work exactly; with one its pairs
// of tiles); with every tile at once the longest decides. The explanation has one line per
// candidate and marks the chosen one.
TEST(AttentionRule, WorkIsTheWalksAndExplainNamesEachCandidate) {
  using three = ha::attention_traits<64, true, 128, 3, 3>;
  for (bool causal : {false, true}) {
    const ha::problem p = ha::problem::packed(2, 6, 3, 1000, 1300, 64, causal);
    const ha::launch_plan lp = ha::make_launch_plan(p, three::SHAPE, 7);
    const auto bp = ha::params_of<hopper::model::target>(lp, {}, false);
    double work = 0, longest = 0, busiest = 0;
    int64_t most_tiles = 0;
    for (int b = 0; b < lp.grid; ++b) {
      double mine = 0;
      int n = 0;
      for (; ha::detail::cta_tile(b, n, lp.grid, lp.tiles, p.causal) < lp.tiles; ++n) {
        const double w = double(three::BM) * three::BN * ha::detail::place_of<three>(b, n, bp).blocks;
        work += w, longest = std::max(longest, w), mine += w;
      }
      busiest = std::max(busiest, mine), most_tiles = std::max<int64_t>(most_tiles, n);
    }
    const ha::prediction r = ha::predict(p, ha::instances[1], 7);
    EXPECT_EQ(r.shape, three::SHAPE);
    EXPECT_EQ(r.tiles, lp.tiles);
    EXPECT_DOUBLE_EQ(r.work, work);
    EXPECT_DOUBLE_EQ(r.longest, longest);
    if (causal) {
      EXPECT_EQ(r.rounds, (most_tiles + 1) / 2);
      const int64_t pairs = (lp.tiles + 1) / 2;  // the walk's pairs of tiles
      EXPECT_DOUBLE_EQ(r.round, work / double(pairs));
    } else {
      EXPECT_EQ(r.rounds, most_tiles);
      EXPECT_DOUBLE_EQ(double(r.rounds) * r.round, busiest);
    }
    EXPECT_DOUBLE_EQ(r.time, std::max(double(r.rounds) * r.round, longest) / ha::instances[1].rate);
    const ha::prediction all = ha::predict(p, ha::instances[1], 132);  // 72 tiles at once
    EXPECT_EQ(all.rounds, 1);
    EXPECT_DOUBLE_EQ(all.time, longest / ha::instances[1].rate);
    const std::string e = ha::explain(p, 132);
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 2) << e;
    EXPECT_EQ(std::count(e.begin(), e.end(), '*'), 1) << e;
    EXPECT_NE(e.find("consumers 3"), std::string::npos) << e;
  }
}

// A dimension of extent 1 is never stepped: any stride the caller has for it is accepted.
TEST(AttentionPlan, ExtentOneDimensionsTakeAnyStride) {
  ha::problem p = ha::problem::packed(1, 1, 1, 300, 300, 64);
  p.q.batch = 8, p.q.head = 8;
  const ha::launch_plan lp = ha::make_launch_plan(p);
  EXPECT_EQ(lp.q.dims[1], 300u);
  EXPECT_EQ(lp.q.order.seq, 1);
}

}  // namespace
