// The mbarrier state machine against the PTX ISA's definition (mbarrier: "Contents of the mbarrier
// object", "Phase Completion of the mbarrier object", and each instruction's rules).
#include <gtest/gtest.h>

#include <random>

#include "hopper/model/mbarrier.hpp"

using namespace hopper::model;

namespace {

error_kind kind_of(const std::function<void()>& f, std::string* msg = nullptr) {
  try {
    f();
  } catch (const model_error& e) {
    if (msg) *msg = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error reported";
  return error_kind::api_misuse;
}

TEST(ModelMbarrier, InitSetsPhaseZeroAndCounts) {
  mbarrier_state b("b");
  b.init(3);
  EXPECT_EQ(b.phase(), 0u);
  EXPECT_EQ(b.expected(), 3u);
  EXPECT_EQ(b.pending(), 3u);
  EXPECT_EQ(b.tx_count(), 0);
  EXPECT_FALSE(b.test_wait_parity(0));
  EXPECT_TRUE(b.test_wait_parity(1));  // "the phase before 0" reads as complete: producers start at 1
}

TEST(ModelMbarrier, PhaseCompletesOnLastArrivalAndReloads) {
  mbarrier_state b("b");
  b.init(2);
  auto t0 = b.arrive();
  EXPECT_EQ(t0.pending, 2u);
  EXPECT_EQ(b.phase(), 0u);
  auto t1 = b.arrive();
  EXPECT_EQ(t1.phase, 0u);
  EXPECT_EQ(b.phase(), 1u);
  EXPECT_EQ(b.pending(), 2u);
  EXPECT_TRUE(b.test_wait_parity(0));
  EXPECT_FALSE(b.test_wait_parity(1));
  EXPECT_TRUE(b.test_wait_token(t1));
  b.arrive(2);
  EXPECT_EQ(b.phase(), 2u);
}

TEST(ModelMbarrier, TransactionBytesHoldThePhase) {
  mbarrier_state b("full");
  b.init(1);
  b.arrive_expect_tx(4096);
  EXPECT_EQ(b.phase(), 0u);
  EXPECT_EQ(b.tx_count(), 4096);
  b.complete_tx(1024);
  EXPECT_EQ(b.phase(), 0u);
  b.complete_tx(3072);
  EXPECT_EQ(b.phase(), 1u);
  EXPECT_EQ(b.tx_count(), 0);
  // Accumulates: two expect_tx of 4096 wait for 8192 bytes.
  b.expect_tx(4096);
  b.arrive_expect_tx(4096);
  b.complete_tx(4096);
  EXPECT_EQ(b.phase(), 1u);
  b.complete_tx(4096);
  EXPECT_EQ(b.phase(), 2u);
}

TEST(ModelMbarrier, BytesMayLandBeforeTheyAreExpected) {
  mbarrier_state b("full");
  b.init(1);
  b.complete_tx(256);  // tx-count may go negative
  EXPECT_EQ(b.tx_count(), -256);
  b.arrive_expect_tx(256);
  EXPECT_EQ(b.phase(), 1u);
}

TEST(ModelMbarrier, ArriveDropLowersLaterPhases) {
  mbarrier_state b("b");
  b.init(3);
  b.arrive_drop();
  EXPECT_EQ(b.expected(), 2u);
  b.arrive(2);
  EXPECT_EQ(b.phase(), 1u);
  EXPECT_EQ(b.pending(), 2u);
  b.arrive_drop_expect_tx(64);
  EXPECT_EQ(b.expected(), 1u);
  EXPECT_EQ(b.tx_count(), 64);
  b.arrive();
  EXPECT_EQ(b.phase(), 1u);
  b.complete_tx(64);
  EXPECT_EQ(b.phase(), 2u);
  EXPECT_EQ(b.pending(), 1u);
}

TEST(ModelMbarrier, NoCompleteArrivesWithoutCompleting) {
  mbarrier_state b("b");
  b.init(3);
  auto t = b.arrive(2, true);
  EXPECT_EQ(mbarrier_state::pending_count(t), 3u);
  EXPECT_EQ(b.pending(), 1u);
  std::string msg;
  EXPECT_EQ(kind_of([&] { b.arrive(1, true); }, &msg), error_kind::undefined_behavior);
  EXPECT_NE(msg.find(".noComplete"), std::string::npos) << msg;
  EXPECT_EQ(b.pending(), 1u);  // rejected operations change nothing
  b.expect_tx(16);
  b.arrive(1, true);  // pending reaches 0 but tx-count holds the phase: defined
  EXPECT_EQ(b.phase(), 0u);
  b.complete_tx(16);
  EXPECT_EQ(b.phase(), 1u);
}

TEST(ModelMbarrier, UndefinedCasesAreReportedWithValues) {
  std::string msg;
  mbarrier_state b("empty[2]");
  EXPECT_EQ(kind_of([&] { b.arrive(); }, &msg), error_kind::undefined_behavior);  // before init
  EXPECT_NE(msg.find("empty[2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mbarrier.arrive"), std::string::npos) << msg;
  EXPECT_EQ(kind_of([&] { b.init(0); }, &msg), error_kind::undefined_behavior);
  EXPECT_EQ(kind_of([&] { b.init(1u << 20); }, &msg), error_kind::undefined_behavior);
  EXPECT_NE(msg.find("1048576"), std::string::npos) << msg;
  b.init(2);
  EXPECT_EQ(kind_of([&] { b.init(2); }), error_kind::undefined_behavior);  // live barrier
  EXPECT_EQ(kind_of([&] { b.arrive(3); }, &msg), error_kind::undefined_behavior);
  EXPECT_NE(msg.find("below zero"), std::string::npos) << msg;
  EXPECT_EQ(kind_of([&] { b.arrive_drop(2); }, &msg), error_kind::undefined_behavior);
  EXPECT_NE(msg.find("zero expected"), std::string::npos) << msg;
  EXPECT_EQ(kind_of([&] { b.expect_tx(1u << 20); }), error_kind::undefined_behavior);
  b.expect_tx(mbarrier_state::max_tx);
  EXPECT_EQ(kind_of([&] { b.expect_tx(1); }, &msg), error_kind::undefined_behavior);
  EXPECT_NE(msg.find("1048575"), std::string::npos) << msg;
  EXPECT_EQ(kind_of([&] { b.test_wait_parity(2); }), error_kind::undefined_behavior);
  b.complete_tx(mbarrier_state::max_tx);
  b.complete_tx(mbarrier_state::max_tx);
  EXPECT_EQ(kind_of([&] { b.complete_tx(1); }), error_kind::undefined_behavior);  // below -(2^20-1)
  b.inval();
  EXPECT_EQ(kind_of([&] { b.test_wait_parity(0); }), error_kind::undefined_behavior);  // after inval
  b.init(1);                                                                           // init after inval is defined
  EXPECT_EQ(b.phase(), 0u);
}

TEST(ModelMbarrier, WaitsOnStalePhasesAreReported) {
  mbarrier_state b("b");
  b.init(1);
  auto t0 = b.arrive();
  b.arrive();
  b.check_wait_phase(2);  // the current phase
  b.check_wait_phase(1);  // the previous one
  std::string msg;
  EXPECT_EQ(kind_of([&] { b.check_wait_phase(0); }, &msg), error_kind::undefined_behavior);
  EXPECT_NE(msg.find("2 phases old"), std::string::npos) << msg;
  EXPECT_EQ(kind_of([&] { b.check_wait_phase(3); }), error_kind::undefined_behavior);
  EXPECT_EQ(kind_of([&] { b.test_wait_token(t0); }), error_kind::undefined_behavior);
}

TEST(ModelMbarrier, RandomOperationsKeepInvariants) {
  std::mt19937_64 rng(12345);
  for (int run = 0; run < 2000; ++run) {
    mbarrier_state b("r");
    const uint32_t count = 1 + uint32_t(rng() % 5);
    b.init(count);
    uint64_t completions = 0;
    for (int k = 0; k < 40; ++k) {
      const uint64_t before = b.phase();
      try {
        switch (rng() % 5) {
          case 0:
            b.arrive(1 + uint32_t(rng() % 3));
            break;
          case 1:
            b.arrive_expect_tx(uint32_t(rng() % 4) * 16);
            break;
          case 2:
            b.complete_tx(uint32_t(rng() % 4) * 16);
            break;
          case 3:
            b.expect_tx(uint32_t(rng() % 4) * 16);
            break;
          default:
            b.arrive_drop();
            break;
        }
      } catch (const model_error& e) {
        ASSERT_EQ(e.kind(), error_kind::undefined_behavior);
        ASSERT_EQ(b.phase(), before);
      }
      completions += b.phase() - before;
      ASSERT_LE(b.phase() - before, 1u);
      ASSERT_LE(b.pending(), b.expected());
      ASSERT_GE(b.expected(), 1u);
      ASSERT_LE(std::abs(b.tx_count()), mbarrier_state::max_tx);
      ASSERT_FALSE(b.pending() == 0 && b.tx_count() == 0);  // such a phase would have completed
      ASSERT_EQ(b.test_wait_parity(uint32_t(b.phase() & 1)), false);
    }
    ASSERT_EQ(completions, b.phase());
  }
}

}  // namespace
