// Phases on the model: which arrival is counted on which phase, and which phase a wait observes.
// The PTX ISA counts every arrive-on operation on the barrier's current phase (mbarrier), so an
// arrival's phase is the program's business only where it depends on the schedule (a phase race),
// and a wait's parity names the current phase or the one before it (mbarrier.test_wait/try_wait).
// Correct protocols in which a thread arrives more than once per phase, or runs ahead of its
// waiter, are clean in every interleaving; the races are reported in every interleaving.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"

using namespace hopper::model;

namespace {

// Every interleaving must be run (a complete exploration) and clean; and so every class of
// the partial-order exploration.
void expect_clean_everywhere(const program& p, uint64_t max_runs = 200000) {
  const exploration e = explore_all(p, max_runs);
  EXPECT_TRUE(e.complete) << "not every interleaving was run in " << e.runs << " runs";
  EXPECT_TRUE(e.clean()) << e.summary();
  const exploration r = explore_por(p, max_runs);
  EXPECT_TRUE(r.complete && r.clean()) << r.summary();
  std::printf("    clean in every interleaving: %llu runs (%llu classes)\n", (unsigned long long)e.runs,
              (unsigned long long)r.classes());
}

// Every interleaving must be run, and every one reported as `kind` with `words`.
void expect_reported_everywhere(const program& p, error_kind kind, const std::vector<std::string>& words,
                                uint64_t max_runs = 200000) {
  const exploration e = explore_all(p, max_runs);
  EXPECT_TRUE(e.complete) << "not every interleaving was run in " << e.runs << " runs";
  EXPECT_EQ(e.failures, e.runs) << e.summary();
  for (const outcome& o : e.failed) {
    EXPECT_EQ(o.kind, kind) << o.message;
    for (const auto& w : words) EXPECT_NE(o.message.find(w), std::string::npos) << "no '" << w << "' in: " << o.message;
  }
  const exploration r = explore_por(p, max_runs);
  EXPECT_TRUE(r.complete) << r.summary();
  EXPECT_EQ(r.failures, r.classes()) << r.summary();
  for (const outcome& o : r.failed) EXPECT_EQ(o.kind, kind) << o.message;
  if (!e.failed.empty())
    std::printf("    reported in all %llu interleavings (%llu classes): %s\n", (unsigned long long)e.runs,
                (unsigned long long)r.classes(), e.failed[0].message.c_str());
}

// A count-1 completion barrier whose single arriver runs ahead of its waiter: the arriver
// publishes x[0] and completes phase 0, meets the waiter at a CTA barrier, publishes x[1] and
// completes phase 1 (its second arrival without a wait in between); the waiter waits for phase 1
// after the meeting and reads both.
program single_arriver_runs_ahead() {
  return [](world& w) {
    barrier& b = w.make_barrier("done");
    buffer& x = w.make_shared("x", 2, 16, 0);
    named_barrier& cta = w.make_named_barrier("bar.sync 0", 2);
    w.spawn("arriver", [&] {
      b.init(1);
      x.store<uint32_t>(0, 7);
      b.arrive();  // completes phase 0
      cta.sync();
      x.store<uint32_t>(4, 9);
      b.arrive();  // completes phase 1
    });
    w.spawn("waiter", [&] {
      cta.sync();
      b.wait(1);  // phase 1: parity 1 (the barrier is in phase 1 or 2 here)
      EXPECT_EQ(x.load<uint32_t>(0), 7u);
      EXPECT_EQ(x.load<uint32_t>(4), 9u);
    });
  };
}

TEST(ModelPhase, SingleArriverRunningAheadOfItsWaiterIsClean) { expect_clean_everywhere(single_arriver_runs_ahead()); }

// Count 3: per round, thread t arrives twice and thread u once, each after waiting for the
// previous round's phase: no other arrivals can complete the phase between t's two.
program twice_in_a_phase(int rounds) {
  return [rounds](world& w) {
    barrier& b = w.make_barrier("round");
    named_barrier& cta = w.make_named_barrier("bar.sync 0", 2);
    w.spawn("t", [&b, &cta, rounds] {
      b.init(3);
      cta.sync();
      for (int r = 0; r < rounds; ++r) {
        b.arrive();
        b.arrive();
        b.wait(uint32_t(r & 1));
      }
    });
    w.spawn("u", [&b, &cta, rounds] {
      cta.sync();
      for (int r = 0; r < rounds; ++r) {
        b.arrive();
        b.wait(uint32_t(r & 1));
      }
    });
  };
}

TEST(ModelPhase, TwoArrivalsOfOneThreadInAPhaseOfCountThreeAreClean) { expect_clean_everywhere(twice_in_a_phase(2)); }

// A leader that arrives for phase n+1 while the others have not yet arrived for phase n: count 2
// (leader + worker). Whichever arrival lands first, one of them is counted on a phase that
// depends on the schedule: reported in every interleaving, naming both tasks.
program leader_arrives_ahead() {
  return [](world& w) {
    barrier& b = w.make_barrier("step");
    named_barrier& cta = w.make_named_barrier("bar.sync 0", 2);
    w.spawn("leader", [&] {
      b.init(2);
      cta.sync();
      b.arrive();  // for phase 0
      b.arrive();  // for phase 1, without waiting for phase 0
      b.wait(1);
    });
    w.spawn("worker", [&] {
      cta.sync();
      b.arrive();
      b.wait(0);
      b.arrive();
      b.wait(1);
    });
  };
}

TEST(ModelPhase, LeaderArrivingForTheNextPhaseIsReportedInEveryInterleaving) {
  expect_reported_everywhere(leader_arrives_ahead(), error_kind::wrong_phase,
                             {"phase race on barrier step", "is counted on phase 1", "counted on phase 0"});
}

// Two threads meet at a barrier of count 2 each round, but t never flips its parity: in round 1
// it arrives on phase 1 and waits on parity 0, which names the completed phase 0. Reported where
// the wait returns on phase 0 while t's history (its arrival) says it waits for phase 1.
program parity_not_flipped() {
  return [](world& w) {
    barrier& b = w.make_barrier("meet");
    named_barrier& cta = w.make_named_barrier("bar.sync 0", 2);
    w.spawn("t", [&] {
      b.init(2);
      cta.sync();
      for (int r = 0; r < 2; ++r) {
        b.arrive();
        b.wait(0);  // bug: parity r & 1
      }
    });
    w.spawn("u", [&] {
      cta.sync();
      for (int r = 0; r < 2; ++r) {
        b.arrive();
        b.wait(uint32_t(r & 1));
      }
    });
  };
}

TEST(ModelPhase, WaitOnAStaleParityIsReportedAtTheWait) {
  const exploration e = explore_all(parity_not_flipped(), 200000);
  EXPECT_TRUE(e.complete);
  ASSERT_GT(e.failures, 0u) << e.summary();
  uint64_t stale = 0;
  for (const outcome& o : e.failed) {
    EXPECT_TRUE(o.kind == error_kind::wrong_phase || o.kind == error_kind::deadlock) << o.message;
    if (o.kind == error_kind::wrong_phase) {
      ++stale;
      EXPECT_NE(o.message.find("stale parity on barrier meet"), std::string::npos) << o.message;
      EXPECT_NE(o.message.find("task 't'"), std::string::npos) << o.message;
      EXPECT_NE(o.message.find("its arrival was counted on phase 1"), std::string::npos) << o.message;
    }
  }
  EXPECT_GT(stale, 0u);
  std::printf("    %llu of %llu interleavings reported (the rest: t's wait blocks on phase 2 and never returns)\n",
              (unsigned long long)e.failures, (unsigned long long)e.runs);
}

// A reader that waits on the full barrier by parity but is not counted on the empty barrier: the
// producer can run two phases ahead of it, and its wait then observes a newer phase of the same
// parity. Reported where that happens, as parity aliasing naming the reader.
program uncounted_reader(int rounds) {
  return [rounds](world& w) {
    barrier& full = w.make_barrier("full");
    barrier& empty = w.make_barrier("empty");
    named_barrier& cta = w.make_named_barrier("bar.sync 0", 3);
    w.spawn("producer", [&, rounds] {
      full.init(1);
      empty.init(1);
      cta.sync();
      for (int r = 0; r < rounds; ++r) {
        empty.wait(uint32_t((r & 1) ^ 1));
        full.arrive();
      }
    });
    w.spawn("consumer", [&, rounds] {
      cta.sync();
      for (int r = 0; r < rounds; ++r) {
        full.wait(uint32_t(r & 1));
        empty.arrive();
      }
    });
    w.spawn("reader", [&, rounds] {
      cta.sync();
      for (int r = 0; r < rounds; ++r) full.wait(uint32_t(r & 1));
    });
  };
}

TEST(ModelPhase, WaiterTheProducerRunsAheadOfIsReportedAsParityAliasing) {
  const exploration e = explore_seeds(uncounted_reader(4), 1, 400);
  ASSERT_GT(e.failures, 0u) << e.summary();
  for (const outcome& o : e.failed) {
    EXPECT_TRUE(o.kind == error_kind::wrong_phase || o.kind == error_kind::deadlock) << o.message;
    EXPECT_NE(o.message.find("reader"), std::string::npos) << o.message;
  }
  std::printf("    reported on %llu of %llu seeds: %s\n", (unsigned long long)e.failures, (unsigned long long)e.runs,
              e.failed[0].message.c_str());
}

// A one-sided cluster multicast, as DeepGEMM's: CTA 0's producer loads the A half of every stage
// into both CTAs (multicast), each CTA's producer loads its own B half; each consumer warp releases
// the stage on both CTAs' empty barriers through the pipeline's multicast release (lane r arrives
// on CTA r's, one instruction). CTA 1's empty barrier then receives CTA 0's consumers' arrivals,
// ordered after CTA 1's own only through CTA 0's barriers: correct, and clean over seeds.
constexpr uint32_t kHalf = 64;  // bytes of A and of B in one stage

struct one_sided_run {
  bool reported = false;
  std::string message;
  size_t bad = 0;
};

one_sided_run run_one_sided(uint64_t seed, uint32_t tiles) {
  using pipe_t = hopper::pipeline<2, target>;
  run_options o;
  o.seed = seed;
  world w(o);
  buffer& a = w.make_global("A", size_t(tiles) * kHalf);
  buffer& b = w.make_global("B", 2 * size_t(tiles) * kHalf);
  buffer& out = w.make_global("out", 2 * size_t(tiles) * 2 * kHalf);
  for (size_t i = 0; i < a.bytes(); ++i) a.host_data()[i] = uint8_t(i * 13 + 5);
  for (size_t i = 0; i < b.bytes(); ++i) b.host_data()[i] = uint8_t(i * 7 + 3);
  std::memset(out.host_data(), 0xA5, out.bytes());
  const hopper::pipeline_params p{1u, 2u, true, hopper::release_by::warp_leader};
  launch(w, {2, 64, 2}, [&, tiles](target& t) {
    auto& ring = cta_shared<pipe_t::storage>(t, "ring");
    const smem<uint8_t> stages = shared_buffer(t, "stages", 2, 2 * kHalf);
    pipe_t pipe = pipe_t::init(ring, p, t);
    const uint32_t rank = t.cluster_rank();
    if (t.warp() == 0) {
      if (t.lane() != 0) return;
      auto s = pipe.producer_start();
      for (; s.iter() < tiles; ++s) {
        pipe.acquire(s, 2 * kHalf);
        const smem<uint8_t> stage = stages + size_t(s.index()) * 2 * kHalf;
        if (rank == 0)
          t.cp_async_bulk_shared_cluster_global_multicast(stage, gmem<const uint8_t>(a) + size_t(s.iter()) * kHalf,
                                                          kHalf, pipe.full(s), uint16_t(0x3));
        t.cp_async_bulk_shared_cluster_global(
            stage + kHalf, gmem<const uint8_t>(b) + (size_t(rank) * tiles + s.iter()) * kHalf, kHalf, pipe.full(s));
      }
      pipe.drain(s);
      return;
    }
    for (auto s = pipe.consumer_start(); s.iter() < tiles; ++s) {
      pipe.wait(s);
      const smem<const uint32_t> stage = (stages + size_t(s.index()) * 2 * kHalf).as<const uint32_t>();
      const gmem<uint32_t> to = (gmem<uint8_t>(out) + (size_t(rank) * tiles + s.iter()) * 2 * kHalf).as<uint32_t>();
      for (uint32_t i = t.lane(); i < 2 * kHalf / 4; i += 32) to.store(i, stage.load(i));
      pipe.release(s);
    }
  });
  one_sided_run r;
  try {
    w.run();
  } catch (const model_error& e) {
    r.reported = true;
    r.message = e.what();
  }
  for (uint32_t c = 0; c < 2; ++c)
    for (uint32_t k = 0; k < tiles; ++k)
      for (uint32_t i = 0; i < 2 * kHalf; ++i) {
        const uint8_t want =
            i < kHalf ? a.host_data()[k * kHalf + i] : b.host_data()[(c * tiles + k) * kHalf + i - kHalf];
        r.bad += out.host_data()[(c * tiles + k) * 2 * kHalf + i] != want;
      }
  return r;
}

TEST(ModelPhase, OneSidedClusterMulticastIsClean) {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    const one_sided_run r = run_one_sided(seed, 5);
    ASSERT_FALSE(r.reported) << "seed " << seed << ": " << r.message;
    ASSERT_EQ(r.bad, 0u) << "seed " << seed;
  }
}

}  // namespace
