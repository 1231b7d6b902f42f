// Bugs planted in the attention kernel as it runs on the executable model (run_options::faults,
// hopper/model/fault.hpp): the kernel's source carries none. Each must be reported with the kind
// of error it is and a message that names the barrier or buffer; the numerics catch the one the
// protocol cannot (a causal mask off by one); the unplanted kernel runs clean on the same seeds.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "attention_reference.hpp"
#include "hopper/model/error.hpp"
#include "kernels/attention/attention_on_model.hpp"

namespace {

namespace ha = hopper::attention;
namespace hm = hopper::model;
using namespace attention_ref;
using hm::error_kind;
using hm::fault_kind;

constexpr float range = 2.0f;

ha::on_model::inputs random_inputs(const ha::problem& p, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 7);
  const tensors t = attention_ref::random_inputs(p, range, rng);
  return ha::on_model::inputs{t.q, t.k, t.v};
}

struct expectation {
  std::vector<error_kind> kinds;      // any of these
  std::vector<std::string> mentions;  // every one of these in the message
};

bool kind_is(const std::string& msg, const std::vector<error_kind>& kinds) {
  for (error_kind k : kinds)
    if (msg.find(hm::to_string(k)) != std::string::npos) return true;
  return false;
}

// Runs `p` with `f` planted over several seeds: every run must be reported as `e` says.
// resident > 0: on a persistent grid of that many CTAs.
template <int D, class T = ha::attention_traits<D>>
void expect_reported(const ha::problem& p, const hm::fault& f, const expectation& e, int seeds = 3, int resident = 0) {
  for (uint64_t seed = 1; seed <= uint64_t(seeds); ++seed) {
    const auto in = random_inputs(p, seed);
    const auto clean = ha::on_model::run<T>(p, in, seed, -1, nullptr, {}, resident);
    ASSERT_EQ(clean.error, "") << "the unplanted kernel must run clean, seed " << seed;
    const auto r = ha::on_model::run<T>(p, in, seed, -1, nullptr, {f}, resident);
    const std::string what = std::string(hm::to_string(f.kind)) + " '" + f.where + "' seed " + std::to_string(seed);
    ASSERT_NE(r.error, "") << what << ": not reported";
    EXPECT_TRUE(kind_is(r.error, e.kinds)) << what << ": reported as\n" << r.error;
    for (const std::string& m : e.mentions)
      EXPECT_NE(r.error.find(m), std::string::npos) << what << ": the report does not name '" << m << "':\n" << r.error;
    if (seed == 1) std::printf("%s:\n  %s\n", what.c_str(), r.error.substr(0, r.error.find('\n')).c_str());
  }
}

// Six kv blocks through three stages: every stage is refilled.
const ha::problem small = ha::problem::packed(1, 1, 1, 200, 700, 64);

// A stage released while the wgmma group reading it is in flight: wgmma.wait_group retires one
// group fewer than the kernel asks, so the release comes before the reads are done and the next
// load overwrites data the tensor cores still read.
TEST(AttentionMutants, StageReleasedBeforeItsWgmmaRetired) {
  expect_reported<64>(small, {fault_kind::wgmma_wait_short, ""}, {{error_kind::war_hazard}, {"wgmma"}});
}

// The consumers wait for the other parity of K's full barriers: a fresh barrier's first wait passes
// at once, reading a stage that may not have landed, and after the ring wraps the consumers wait
// for a phase that has already completed or never comes.
TEST(AttentionMutants, WrongInitialParity) {
  expect_reported<64>(small, {fault_kind::parity_flipped, "K full"},
                      {{error_kind::raw_hazard, error_kind::wrong_phase, error_kind::deadlock}, {"K full"}});
}

// V's full barriers are armed 16 bytes short: the boxes' complete_tx carry the tx-count past zero
// without meeting it, so the phase never completes (or, with a box of 16 bytes, early).
TEST(AttentionMutants, ExpectTxShort) {
  expect_reported<64>(small, {fault_kind::expect_tx_short, "V full"},
                      {{error_kind::deadlock, error_kind::raw_hazard, error_kind::undefined_behavior}, {"V full"}});
}

// No fence.proxy.async between the consumers' generic writes of O and the TMA store that reads
// them.
TEST(AttentionMutants, NoFenceBeforeTheStoreOfO) {
  expect_reported<64>(small, {fault_kind::proxy_fence_dropped, ""}, {{error_kind::raw_hazard}, {"'Q'", "fence"}});
}

// A consumer warpgroup's release of a V stage never arrives: the producer waits for it forever.
TEST(AttentionMutants, MissingRelease) {
  expect_reported<64>(small, {fault_kind::arrive_dropped, "V empty"}, {{error_kind::deadlock}, {"V empty"}});
}

// A consumer warpgroup never gives the other its turn at the tensor cores (ping-pong's order
// barrier of warpgroup 1): the other waits for it forever.
TEST(AttentionMutants, MissingPingPongArrive) {
  expect_reported<64>(small, {fault_kind::bar_arrive_dropped, "bar 4"}, {{error_kind::deadlock}, {"bar 4"}});
}

// Q's barrier armed short: its phase never completes.
TEST(AttentionMutants, QBarrierShort) {
  expect_reported<128>(ha::problem::packed(1, 1, 1, 130, 129, 128, true), {fault_kind::expect_tx_short, "Q full"},
                       {{error_kind::deadlock, error_kind::raw_hazard, error_kind::undefined_behavior}, {"Q full"}});
}

// The causal mask lets each row see one key too many: the protocol is intact, the numbers are not.
TEST(AttentionMutants, CausalMaskOffByOne) {
  const ha::problem p = ha::problem::packed(1, 2, 1, 150, 150, 64, true);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const auto in = random_inputs(p, seed);
    const auto r = ha::on_model::run<ha::attention_traits<64>>(p, in, seed, -1, nullptr,
                                                               {{fault_kind::kernel_hook, "causal mask off by one"}});
    ASSERT_EQ(r.error, "") << "a numerics fault leaves the protocol clean";
    const check c = check_all(p, in.q, in.k, in.v, r.o, r.lse, range);
    EXPECT_GT(c.wrong, 0u) << "seed " << seed << ": the off-by-one mask went unnoticed";
    EXPECT_GT(c.lse_wrong, 0u) << "seed " << seed;
    if (seed == 1)
      std::printf("causal mask off by one: %zu of %zu elements wrong; %s\n", c.wrong, c.rows * 64, c.first.c_str());
  }
}

// On a persistent grid with one Q buffer (the instances of head dimension 256 and of three
// consumer warpgroups), the next tile's Q lands in the place the last tile's O left from: the
// producer waits on Q's empty barrier, which each consumer warpgroup arrives on once its TMA store
// has read O. An arrival that never comes: deadlock naming the barrier.
const ha::problem walked = ha::problem::packed(1, 2, 1, 200, 300, 64);  // 4 tiles on 2 CTAs
using one_q = ha::attention_traits<64, true, 128, 3, 2, 1>;

TEST(AttentionMutants, PersistentQEmptyNeverArrives) {
  expect_reported<64, one_q>(walked, {fault_kind::arrive_dropped, "Q empty"}, {{error_kind::deadlock}, {"Q empty"}}, 3,
                             2);
}

// The producer waits for the other parity of Q's empty barrier: its first wait passes at once, so
// it writes the next tile's place over the one the consumers read (before the next tile's Q
// overwrites rows they still read or store from): a WAR hazard on the buffer 'Q tile', naming the
// wait on Q's empty barrier that let the write through.
TEST(AttentionMutants, PersistentQReloadedTooEarly) {
  expect_reported<64, one_q>(walked, {fault_kind::parity_flipped, "Q empty"},
                             {{error_kind::war_hazard}, {"'Q tile'", "last wait before the write, on barrier Q empty"}},
                             3, 2);
}

// The store's cp.async.bulk.wait_group.read does not wait: the consumers say Q's place is free
// while the TMA store of O may still read it, and the next tile's Q load overwrites it.
TEST(AttentionMutants, PersistentStoreNotWaitedFor) {
  expect_reported<64, one_q>(walked, {fault_kind::bulk_wait_dropped, "cp.async.bulk.wait_group.read"},
                             {{error_kind::war_hazard}, {"'Q'"}}, 3, 2);
}

// With two Q buffers a CTA's tile n + 2 loads Q into tile n's buffer: one CTA walks all 4 tiles,
// so each buffer is refilled once, after its empty barrier's first phase. The same three faults.
using two_q = ha::attention_traits<64>;
static_assert(two_q::Q_STAGES == 2, "two Q buffers by default at head dimension 64");
TEST(AttentionMutants, TwoQBuffersEmptyNeverArrives) {
  expect_reported<64, two_q>(walked, {fault_kind::arrive_dropped, "Q empty"}, {{error_kind::deadlock}, {"Q empty"}}, 3,
                             1);
}
// The flipped wait: by the time the producer reaches tile 2's Q (behind its K loads, which wait
// for the consumers' releases of tile 1), tile 0's warpgroups have completed the buffer's first
// phase, so the flipped wait is for a phase that never comes: a deadlock naming the barrier.
TEST(AttentionMutants, TwoQBuffersReloadedTooEarly) {
  expect_reported<64, two_q>(
      walked, {fault_kind::parity_flipped, "Q empty"},
      {{error_kind::war_hazard, error_kind::raw_hazard, error_kind::wrong_phase, error_kind::deadlock}, {"Q empty"}}, 3,
      1);
}
TEST(AttentionMutants, TwoQBuffersStoreNotWaitedFor) {
  expect_reported<64, two_q>(walked, {fault_kind::bulk_wait_dropped, "cp.async.bulk.wait_group.read"},
                             {{error_kind::war_hazard}, {"'Q'"}}, 3, 1);
}

}  // namespace
