// The attention kernel's own body (kernels/attention/attention_body.hpp) on the executable model,
// every thread a task, numerics included: every head dimension, causal and not, grouped-query
// heads (one K/V head for several Q heads, and one for all), sequences that are not multiples of
// the tiles (Q and K/V tails), cross attention (seq_q != seq_k) and strided layouts. O and the LSE
// must match a double-precision reference on every row with every element written, and no run may
// deadlock or show a hazard, over several scheduler seeds and with a slow CTA.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "attention_reference.hpp"
#include "kernels/attention/attention_on_model.hpp"

namespace {

namespace ha = hopper::attention;
using namespace attention_ref;

constexpr float range = 2.0f;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

std::string describe(const ha::problem& p, uint64_t seed, int slow, int resident) {
  return "b " + std::to_string(p.batch) + " heads " + std::to_string(p.heads) + "/" + std::to_string(p.kv_heads) +
         " seq " + std::to_string(p.seq_q) + "x" + std::to_string(p.seq_k) + " d " + std::to_string(p.head_dim) +
         (p.causal ? " causal" : "") + " seed " + std::to_string(seed) +
         (slow >= 0 ? " slow CTA " + std::to_string(slow) : "") +
         (resident > 0 ? " persistent " + std::to_string(resident) + " CTAs" : "");
}

ha::on_model::inputs random_inputs(const ha::problem& p, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 1);
  const tensors t = attention_ref::random_inputs(p, range, rng);
  return ha::on_model::inputs{t.q, t.k, t.v};
}

// resident > 0: a persistent grid of that many CTAs walking the tiles.
template <int D, class T = ha::attention_traits<D>>
void expect_clean(const ha::problem& p, uint64_t seed, int slow = -1, int resident = 0) {
  const auto in = random_inputs(p, seed);
  const auto t0 = std::chrono::steady_clock::now();
  const ha::on_model::outcome r = ha::on_model::run<T>(p, in, seed, slow, nullptr, {}, resident);
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string what = describe(p, seed, slow, resident);
  ASSERT_EQ(r.error, "") << what;
  const check c = check_all(p, in.q, in.k, in.v, r.o, r.lse, range);
  EXPECT_EQ(c.unwritten, 0u) << what << ": " << c.first;
  EXPECT_EQ(c.wrong, 0u) << what << ": " << c.first;
  EXPECT_EQ(c.lse_wrong, 0u) << what << ": " << c.first;
  std::printf("%s: %zu rows, max |err| O %.2e LSE %.2e, %llu steps, %.1f s\n", what.c_str(), c.rows, c.max_err,
              c.max_lse_err, static_cast<unsigned long long>(r.steps), sec);
}

// Every head dimension, causal and not, over several seeds and with each CTA slow in turn: tails
// in both sequences (seq_q 129-320 against seq_k 129-333), cross attention both ways.
template <int D>
void shapes_of_one_head_dim() {
  const ha::problem shapes[] = {
      ha::problem::packed(1, 2, 2, 129, 200, D),       ha::problem::packed(1, 2, 2, 320, 320, D, true),
      ha::problem::packed(1, 1, 1, 200, 129, D, true), ha::problem::packed(2, 1, 1, 130, 333, D),
      ha::problem::packed(1, 1, 1, 300, 150, D),       ha::problem::packed(1, 1, 1, 64, 257, D, true)};
  uint64_t seed = uint64_t(D);
  for (const ha::problem& p : shapes) {
    expect_clean<D>(p, ++seed);
    // Under ASan (ten times slower) one run a shape: the plain build runs the other schedules.
    if (sanitized) continue;
    expect_clean<D>(p, ++seed);
    const int ctas = ha::make_launch_plan(p).grid;
    expect_clean<D>(p, ++seed, 0);
    expect_clean<D>(p, ++seed, ctas - 1);
  }
}

TEST(AttentionModel, HeadDim64) { shapes_of_one_head_dim<64>(); }
TEST(AttentionModel, HeadDim128) { shapes_of_one_head_dim<128>(); }
TEST(AttentionModel, HeadDim256) { shapes_of_one_head_dim<256>(); }

// Grouped-query heads: K/V heads dividing the Q heads, down to one K/V head for all.
TEST(AttentionModel, GroupedQueryHeads) {
  expect_clean<64>(ha::problem::packed(1, 4, 2, 150, 200, 64), 11);
  expect_clean<128>(ha::problem::packed(1, 3, 1, 140, 140, 128, true), 12);
  expect_clean<256>(ha::problem::packed(2, 2, 1, 129, 129, 256), 13);
}

// The variants the GPU measures against the kernel (A/B): without ping-pong, head dim 64 with a
// 192-wide kv block, three consumer warpgroups (a 192-row tile of Q, the turns passed round the
// three; with and without ping-pong), and kv blocks that are not whole k-blocks of 64: head dim
// 128 with 160 (one Q buffer, and two on one CTA so that both are refilled), head dim 256 with 80.
TEST(AttentionModel, Variants) {
  for (bool causal : {false, true}) {
    const ha::problem p = ha::problem::packed(1, 2, 1, 200, 450, 64, causal);
    expect_clean<64, ha::attention_traits<64, false>>(p, causal ? 31 : 32);
    expect_clean<64, ha::attention_traits<64, true, 192, 3>>(p, causal ? 33 : 34);
    expect_clean<128, ha::attention_traits<128, false>>(ha::problem::packed(1, 1, 1, 150, 300, 128, causal), 35);
    expect_clean<128, ha::attention_traits<128, true, 192, 2, 2, 1>>(
        ha::problem::packed(1, 1, 1, 150, 400, 128, causal), 36);
    expect_clean<128, ha::attention_traits<128, true, 160, 2, 2, 1>>(
        ha::problem::packed(1, 1, 1, 300, 400, 128, causal), 37);
    expect_clean<128, ha::attention_traits<128, true, 160, 2, 2, 2>>(
        ha::problem::packed(2, 1, 1, 257, 370, 128, causal), 38, -1, 1);
    expect_clean<256, ha::attention_traits<256, true, 80, 2, 2, 1>>(ha::problem::packed(1, 1, 1, 140, 250, 256, causal),
                                                                    39);
  }
}

// Three consumer warpgroups: tiles of 192 rows, tails on both sequences, several seeds and each
// CTA slow in turn, with ping-pong round the three and without.
TEST(AttentionModel, ThreeConsumerWarpgroups) {
  using three = ha::attention_traits<64, true, 128, 3, 3>;
  using three_flat = ha::attention_traits<64, false, 128, 3, 3>;
  const ha::problem shapes[] = {ha::problem::packed(1, 2, 1, 200, 450, 64),
                                ha::problem::packed(1, 1, 1, 420, 420, 64, true),
                                ha::problem::packed(2, 1, 1, 100, 257, 64, true)};
  uint64_t seed = 40;
  for (const ha::problem& p : shapes) {
    expect_clean<64, three>(p, ++seed);
    if (sanitized) continue;
    expect_clean<64, three_flat>(p, ++seed);
    const int ctas = ha::make_launch_plan(p, three::SHAPE).grid;
    expect_clean<64, three>(p, ++seed, 0);
    expect_clean<64, three>(p, ++seed, ctas - 1);
  }
}

// A persistent grid: fewer CTAs than tiles, each walking tiles b, b + grid, .. with its rings
// running on from one tile into the next and Q reloaded once the last tile's O has left. One CTA
// for every tile, two and three (tiles of unequal length under causal), slow CTAs, ping-pong on
// and off, three consumer warpgroups, GQA, every head dimension.
TEST(AttentionModel, PersistentGrid) {
  uint64_t seed = 60;
  for (bool causal : {false, true}) {
    const ha::problem p = ha::problem::packed(1, 3, 1, 300, 280, 64, causal);  // 3 tiles x 3 heads
    for (int resident : {1, 2, 4}) {
      expect_clean<64>(p, ++seed, -1, resident);
      if (sanitized) continue;
      expect_clean<64>(p, ++seed, 0, resident);
      expect_clean<64>(p, ++seed, resident - 1, resident);
    }
    if (sanitized) continue;
    expect_clean<64, ha::attention_traits<64, false>>(p, ++seed, -1, 2);
    expect_clean<64, ha::attention_traits<64, true, 128, 3, 3>>(ha::problem::packed(1, 2, 2, 400, 300, 64, causal),
                                                                ++seed, -1, 2);
    expect_clean<128>(ha::problem::packed(2, 1, 1, 257, 200, 128, causal), ++seed, -1, 2);
    expect_clean<256>(ha::problem::packed(1, 2, 1, 140, 130, 256, causal), ++seed, 1, 3);
    // Two Q buffers: a CTA's third tile refills its first buffer (9 tiles on 1 and 2 CTAs).
    using two_q = ha::attention_traits<64, true, 128, 3, 2, 2>;
    expect_clean<64, two_q>(p, ++seed, -1, 1);
    expect_clean<64, two_q>(p, ++seed, 0, 2);
    expect_clean<128, ha::attention_traits<128, true, 128, 2, 2, 2>>(
        ha::problem::packed(2, 1, 1, 257, 200, 128, causal), ++seed, 1, 1);
  }
}

// Strided layouts: Q and O in (batch, heads, seq, dim) order, K and V slices of one packed
// (batch, seq, 2, heads, dim) projection, and the caller's softmax scale.
TEST(AttentionModel, StridedLayouts) {
  for (bool causal : {false, true}) {
    ha::problem p = ha::problem::packed(2, 2, 1, 150, 190, 128, causal);
    p.q = p.o = ha::tensor_layout{p.heads * p.seq_q * 128, 128, p.seq_q * 128};
    p.k = p.v = ha::tensor_layout{p.seq_k * 2 * p.kv_heads * 128, 2 * p.kv_heads * 128, 128};
    p.scale = 0.3f;
    expect_clean<128>(p, causal ? 21 : 22);
  }
}

}  // namespace
