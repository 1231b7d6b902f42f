// The scheduler, the proxies and the reports, and the model's answers to bad input.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"

using namespace hopper::model;

namespace {

TEST(ModelScheduler, SameSeedSameInterleavingOtherSeedsDiffer) {
  auto order_for = [](uint64_t seed) {
    auto order = std::make_shared<std::string>();
    program p = [order](world& w) {
      barrier& b = w.make_barrier("b");
      named_barrier& start = w.make_named_barrier("start", 3);
      for (int t = 0; t < 3; ++t)
        w.spawn("t" + std::to_string(t), [&b, &start, order, t] {
          if (t == 0) b.init(3);
          start.sync();
          for (int k = 0; k < 4; ++k) {
            *order += char('a' + t);
            b.arrive();
            b.wait_phase(uint64_t(k));
          }
        });
    };
    run_options o;
    o.seed = seed;
    EXPECT_TRUE(run_once(p, o).ok);
    return *order;
  };
  EXPECT_EQ(order_for(7), order_for(7));
  std::set<std::string> seen;
  for (uint64_t s = 1; s <= 50; ++s) seen.insert(order_for(s));
  EXPECT_GT(seen.size(), 5u);
}

TEST(ModelScheduler, DeadlockNamesEveryTaskBarrierParityAndCounts) {
  program p = [](world& w) {
    barrier& a = w.make_barrier("a");
    barrier& b = w.make_barrier("b");
    w.spawn("left", [&] {
      a.init(1);
      b.init(2);
      w.fence_mbarrier_init();
      a.wait(0);
    });
    w.spawn("right", [&] { b.wait(0); });  // may also see b before its init: both are reports
  };
  const outcome o = run_once(p, {});
  ASSERT_FALSE(o.ok);
  if (o.kind == error_kind::deadlock) {
    EXPECT_NE(o.message.find("task 'left'"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("parity 0 of barrier a"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("pending 1/1"), std::string::npos) << o.message;
  } else {
    EXPECT_EQ(o.kind, error_kind::undefined_behavior) << o.message;
  }
}

// A loop that keeps doing something (here: counting in shared memory) but never ends.
TEST(ModelScheduler, StepLimitReportsWhereTasksStopped) {
  program p = [](world& w) {
    barrier& b = w.make_barrier("spin");
    buffer& n = w.make_shared("n", 1, 16);
    w.spawn("spinner", [&] {
      b.init(1);
      n.store<uint32_t>(0, 0);
      while (!b.test_wait(0)) n.store<uint32_t>(0, n.load<uint32_t>(0) + 1);
    });
  };
  run_options o;
  o.step_limit = 500;
  const outcome r = run_once(p, o);
  EXPECT_EQ(r.kind, error_kind::step_limit) << r.message;
  EXPECT_NE(r.message.find("spinner"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("mbarrier.test_wait.parity spin"), std::string::npos) << r.message;
}

// A try_wait loop on a phase nothing can complete, beside a thread blocked on another: no task
// can make progress, a deadlock naming both and the barriers' state (not a step limit).
TEST(ModelScheduler, PollingLoopWithNoProgressIsADeadlock) {
  program p = [](world& w) {
    barrier& a = w.make_barrier("a");
    barrier& b = w.make_barrier("b");
    named_barrier& cta = w.make_named_barrier("bar.sync 0", 2);
    w.spawn("poller", [&] {
      a.init(1);
      b.init(2);
      cta.sync();
      while (!a.try_wait(0)) {
      }
    });
    w.spawn("waiter", [&] {
      cta.sync();
      b.arrive();
      b.wait(0);
    });
  };
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    run_options o;
    o.seed = seed;
    const outcome r = run_once(p, o);
    ASSERT_EQ(r.kind, error_kind::deadlock) << r.message;
    EXPECT_NE(r.message.find("task 'poller' (CTA 0): poll (try_wait loop) parity 0 of barrier a phase 0"),
              std::string::npos)
        << r.message;
    EXPECT_NE(r.message.find("task 'waiter' (CTA 0): wait on parity 0 of barrier b phase 0 (parity 0), pending 1/2"),
              std::string::npos)
        << r.message;
    EXPECT_LT(r.steps, 100u) << r.message;
  }
}

TEST(ModelScheduler, ApiMisuseIsReported) {
  world w;
  EXPECT_THROW(w.find_barrier("nope"), model_error);
  barrier& b = w.make_barrier("b");
  try {
    b.init(1);  // outside any task
    FAIL() << "no report";
  } catch (const model_error& e) {
    EXPECT_EQ(e.kind(), error_kind::api_misuse);
    EXPECT_NE(std::string(e.what()).find("outside any task"), std::string::npos);
  }
  world other;
  barrier& foreign = other.make_barrier("foreign");
  EXPECT_THROW(w.checked(foreign), model_error);
  EXPECT_THROW(w.spawn("empty", nullptr), model_error);
  EXPECT_THROW(w.make_shared("bad", 0, 64), model_error);
  buffer& s = w.make_shared("s", 2, 64);
  EXPECT_THROW(s.stage_offset(2), model_error);
}

TEST(ModelScheduler, TaskExceptionsStopTheRunAndUnwind) {
  auto alive = std::make_shared<int>(0);
  program p = [alive](world& w) {
    barrier& b = w.make_barrier("b");
    w.spawn("a", [&b, alive] {
      struct guard {
        std::shared_ptr<int> n;
        ~guard() { --*n; }
      } g{alive};
      ++*alive;
      b.init(1);
      b.wait(0);  // blocked when the other task misbehaves
    });
    w.spawn("b", [&b] { b.arrive(5); });  // 5 > pending: undefined (or before init)
  };
  const outcome o = run_once(p, {});
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(*alive, 0) << "blocked task not unwound";
}

TEST(ModelScheduler, ExhaustiveExplorationCoversEveryInterleaving) {
  // Two tasks, two synchronising operations each after a start: the schedules are enumerated
  // and every one is run once.
  auto orders = std::make_shared<std::set<std::string>>();
  program p = [orders](world& w) {
    auto order = std::make_shared<std::string>();
    barrier& b = w.make_barrier("b");
    w.spawn("x", [&b, order, orders] {
      b.init(4);
      b.arrive();
      *order += 'x';
      b.arrive();
      *order += 'x';
      b.wait(0);
      orders->insert(*order);
    });
    w.spawn("y", [&w, &b, order] {
      w.fence_proxy_async();  // a synchronising point that needs no barrier
      w.fence_proxy_async();
      *order += 'y';
      w.fence_proxy_async();
      *order += 'y';
      (void)b;
    });
  };
  // y may arrive... y does not arrive: b never completes unless x's 2 + nothing = deadlock.
  const exploration e = explore_all(p, 10000);
  EXPECT_TRUE(e.complete);
  EXPECT_GT(e.runs, 10u);
  EXPECT_EQ(e.failures, e.runs);  // every schedule deadlocks: count 4, only 2 arrivals
}

TEST(ModelScheduler, ExhaustiveCleanProgram) {
  program p = [](world& w) {
    barrier& b = w.make_barrier("b");
    named_barrier& start = w.make_named_barrier("start", 2);
    buffer& s = w.make_shared("s", 1, 16);
    w.spawn("writer", [&] {
      b.init(1);
      start.sync();
      s.store<int>(0, 42);
      b.arrive();  // release
    });
    w.spawn("reader", [&] {
      start.sync();
      b.wait(0);  // acquire
      if (s.load<int>(0) != 42) throw model_error(error_kind::raw_hazard, "wrong value");
    });
  };
  const exploration e = explore_all(p, 100000);
  EXPECT_TRUE(e.complete);
  EXPECT_TRUE(e.clean()) << e.summary();
  EXPECT_GT(e.runs, 3u);
}

TEST(ModelMemory, GenericReadWithoutAcquireIsRaw) {
  program p = [](world& w) {
    barrier& b = w.make_barrier("b");
    named_barrier& start = w.make_named_barrier("start", 2);
    buffer& s = w.make_shared("s", 1, 16);
    w.spawn("writer", [&] {
      b.init(1);
      start.sync();
      s.store<int>(0, 42);
      b.arrive(1, sem::relaxed);  // relaxed: publishes nothing
    });
    w.spawn("reader", [&] {
      start.sync();
      b.wait(0);
      (void)s.load<int>(0);
    });
  };
  const outcome o = run_once(p, {});
  EXPECT_EQ(o.kind, error_kind::raw_hazard) << o.message;
  EXPECT_NE(o.message.find("task 'writer'"), std::string::npos) << o.message;
}

TEST(ModelMemory, ReadOfCopyBeforeFullIsRaw) {
  program p = [](world& w) {
    barrier& full = w.make_barrier("full");
    buffer& g = w.make_global("g", 64);
    buffer& s = w.make_shared("s", 1, 64);
    w.spawn("t", [&] {
      full.init(1);
      w.fence_mbarrier_init();
      full.arrive_expect_tx(64);
      w.cp_async_bulk_shared_global(s, 0, g, 0, 64, full);
      (void)s.load<int>(0);  // no wait
    });
  };
  const outcome o = run_once(p, {});
  EXPECT_EQ(o.kind, error_kind::raw_hazard) << o.message;
  EXPECT_NE(o.message.find("'s'"), std::string::npos) << o.message;
}

TEST(ModelMemory, CopyCarriesRealBytesAndMulticastCountsEveryCta) {
  program p = [](world& w) {
    buffer& g = w.make_global("g", 32);
    for (int i = 0; i < 32; ++i) g.host_data()[i] = uint8_t(3 * i);
    buffer& s0 = w.make_shared("s", 1, 32, 0);
    buffer& s1 = w.make_shared("s", 1, 32, 1);
    barrier& f0 = w.make_barrier("full", 0);
    barrier& f1 = w.make_barrier("full", 1);
    named_barrier& cl = w.make_named_barrier("cluster", 2);
    w.spawn(
        "cta0",
        [&] {
          f0.init(1);
          w.fence_mbarrier_init();
          cl.sync();
          f0.arrive_expect_tx(32);
          f1.arrive_expect_tx(32);  // remote arrive on CTA 1's barrier
          w.cp_async_bulk_shared_global_multicast({{&s0, &f0}, {&s1, &f1}}, 0, g, 0, 32);
          f0.wait(0);
          if (s0.load<uint8_t>(31) != 93) throw model_error(error_kind::raw_hazard, "bad byte in CTA 0");
          cl.sync();
        },
        0);
    w.spawn(
        "cta1",
        [&] {
          f1.init(1);
          w.fence_mbarrier_init();
          cl.sync();
          f1.wait(0);
          if (s1.load<uint8_t>(5) != 15) throw model_error(error_kind::raw_hazard, "bad byte in CTA 1");
          cl.sync();
        },
        1);
  };
  const exploration e = explore_seeds(p, 1, 300);
  EXPECT_TRUE(e.clean()) << e.summary();
}

TEST(ModelTrace, ChromeTraceHasTasksAndEvents) {
  run_options o;
  o.trace = true;
  world w(o);
  barrier& b = w.make_barrier("b");
  w.spawn("solo", [&] {
    b.init(1);
    b.arrive();
    b.wait(0);
  });
  w.run();
  ASSERT_GE(w.trace().size(), 3u);
  std::ostringstream js;
  w.write_chrome_trace(js);
  EXPECT_NE(js.str().find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(js.str().find("mbarrier.arrive"), std::string::npos);
  EXPECT_NE(js.str().find("\"solo\""), std::string::npos);
}

// A producer in CTA 1 copies round k into CTA 0, whose consumer arms its own full barrier, waits
// for the bytes and arrives (remotely) on CTA 1's empty barrier. With
// `producer_waits` the producer waits for each release before the next copy; without, it copies
// every round at once into its own stage and waits for the releases at the end.
program copy_relay(bool producer_waits) {
  return [producer_waits](world& w) {
    constexpr int R = 3;
    buffer& g = w.make_global("g", 16 * R);
    buffer& s = w.make_shared("s", R, 16, 0);
    std::vector<barrier*> full;
    full.reserve(R);
    for (int k = 0; k < R; ++k) full.push_back(&w.make_barrier("full[" + std::to_string(k) + "]", 0));
    barrier& empty = w.make_barrier("empty", 1);
    named_barrier& cluster = w.make_named_barrier("barrier.cluster", 2);
    w.spawn(
        "producer",
        [&w, &g, &s, &empty, &cluster, full, producer_waits] {
          empty.init(1);
          w.fence_mbarrier_init();
          cluster.sync();
          for (int k = 0; k < R; ++k) {
            if (producer_waits && k > 0) empty.wait_phase(uint64_t(k - 1));
            w.cp_async_bulk_shared_global(s, s.stage_offset(size_t(k)), g, 16 * size_t(k), 16, *full[size_t(k)]);
          }
          for (int k = producer_waits ? R - 1 : 0; k < R; ++k) empty.wait_phase(uint64_t(k));  // drain: CTA 1 lives on
        },
        1);
    w.spawn(
        "consumer",
        [&w, &s, &empty, &cluster, full] {
          for (barrier* f : full) f->init(1);
          w.fence_mbarrier_init();
          cluster.sync();
          for (int k = 0; k < R; ++k) {
            full[size_t(k)]->arrive_expect_tx(16);
            full[size_t(k)]->wait(0);
            (void)s.load<uint32_t>(s.stage_offset(size_t(k)) / 4);
            empty.arrive();  // remote: CTA 1's barrier
          }
        },
        0);
  };
}

// The consumer is the empty barrier's only arriver (count 1): each of its arrivals completes a
// phase, so arriving again without waiting in between is correct (PTX ISA, mbarrier: an arrival
// is counted on the current phase, here fixed by the counts) as long as its waiter keeps up.
// Without the producer's waits the consumer can complete two phases before the producer waits
// for the first: its parity then names another phase, which is reported.
TEST(ModelOrder, SingleArriverAheadOfItsWaiterIsCleanWhileTheWaiterKeepsUp) {
  const exploration seeds = explore_seeds(copy_relay(true), 1, 2000);
  EXPECT_TRUE(seeds.clean()) << seeds.summary();

  const exploration bad = explore_seeds(copy_relay(false), 1, 300);
  EXPECT_GT(bad.failures, 0u) << bad.summary();
  for (const outcome& o : bad.failed) {
    EXPECT_EQ(o.kind, error_kind::undefined_behavior) << o.message;
    EXPECT_NE(o.message.find("barrier empty"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("phases old"), std::string::npos) << o.message;
  }
}

// ... but no memory ordering of the issuer's earlier accesses (PTX ISA: the implicit complete-tx
// does not transitively order the issuing thread's prior instructions): a generic store by the
// producer before the copy is not visible to the consumer that waited for the copy, unless the
// producer also releases it (here: its own arrive.expect_tx on the consumer's full barrier).
program store_then_copy(bool producer_arms) {
  return [producer_arms](world& w) {
    buffer& g = w.make_global("g", 16);
    buffer& note = w.make_global("note", 16);
    buffer& s = w.make_shared("s", 1, 16, 0);
    barrier& full = w.make_barrier("full", 0);
    named_barrier& cluster = w.make_named_barrier("barrier.cluster", 2);
    w.spawn(
        "producer",
        [&w, &g, &s, &full, &note, &cluster, producer_arms] {
          cluster.sync();
          note.store<int>(0, 42);
          if (producer_arms) full.arrive_expect_tx(16);  // release: the store is published
          w.cp_async_bulk_shared_global(s, 0, g, 0, 16, full);
          cluster.sync();
        },
        1);
    w.spawn(
        "consumer",
        [&w, &s, &full, &note, &cluster, producer_arms] {
          full.init(1);
          w.fence_mbarrier_init();
          cluster.sync();
          if (!producer_arms) full.arrive_expect_tx(16);
          full.wait(0);
          (void)s.load<int>(0);
          if (note.load<int>(0) != 42) throw model_error(error_kind::raw_hazard, "the note is not there");
          cluster.sync();
        },
        0);
  };
}

TEST(ModelOrder, CopyCompletionOrdersNoMemoryOfItsIssuer) {
  const exploration bad = explore_seeds(store_then_copy(false), 1, 200);
  EXPECT_EQ(bad.failures, bad.runs) << bad.summary();
  ASSERT_FALSE(bad.failed.empty());
  EXPECT_EQ(bad.failed[0].kind, error_kind::raw_hazard) << bad.failed[0].message;
  EXPECT_NE(bad.failed[0].message.find("'note'"), std::string::npos) << bad.failed[0].message;
  const exploration good = explore_seeds(store_then_copy(true), 1, 1000);
  EXPECT_TRUE(good.clean()) << good.summary();
}

// explore_all makes a spurious try_wait failure a choice point where the program calls try_wait:
// a program that takes "false" to mean "not complete yet, so the other parity" deadlocks on that
// branch only. The wait loops' own polls are no choice points, and the number of spurious
// failures per run is bounded (run_options::explore_spurious_failures), so the tree is finite.
TEST(ModelScheduler, ExhaustiveExplorationFailsTryWaitSpuriously) {
  program misread = [](world& w) {
    barrier& b = w.make_barrier("b");
    w.spawn("t", [&b] {
      b.init(1);
      b.arrive();
      if (!b.try_wait(0)) b.wait(1);  // bug: false does not mean phase 0 is pending
    });
  };
  const exploration e = explore_all(misread, 100);
  EXPECT_TRUE(e.complete);
  EXPECT_EQ(e.runs, 2u);
  EXPECT_EQ(e.failures, 1u) << e.summary();
  ASSERT_FALSE(e.failed.empty());
  EXPECT_EQ(e.failed[0].kind, error_kind::deadlock) << e.failed[0].message;
  run_options none;
  none.explore_spurious_failures = 0;
  EXPECT_TRUE(explore_all(misread, 100, none).clean());
  run_options never;
  never.spurious_fail_percent = 0;
  EXPECT_TRUE(explore_all(misread, 100, never).clean());

  program polls = [](world& w) {
    barrier& b = w.make_barrier("b");
    w.spawn("t", [&b] {
      b.init(1);
      b.arrive();
      while (!b.try_wait(0)) {
      }
    });
  };
  for (unsigned k = 0; k <= 3; ++k) {  // k spurious failures allowed: k + 1 runs, all clean
    run_options o;
    o.explore_spurious_failures = k;
    const exploration p = explore_all(polls, 100, o);
    EXPECT_TRUE(p.complete && p.clean()) << p.summary();
    EXPECT_EQ(p.runs, k + 1) << "budget " << k;
  }
}

TEST(ModelScheduler, ExhaustiveWaitLoopsAreNoSpuriousChoicePoints) {
  program p = [](world& w) {
    barrier& b = w.make_barrier("b");
    named_barrier& start = w.make_named_barrier("start", 2);
    w.spawn("a", [&] {
      b.init(1);
      start.sync();
      b.arrive();
    });
    w.spawn("z", [&] {
      start.sync();
      b.wait(0);
      b.wait_phase(0);
    });
  };
  run_options none;
  none.explore_spurious_failures = 0;
  run_options many;
  many.explore_spurious_failures = 5;
  const exploration a = explore_all(p, 10000, none), z = explore_all(p, 10000, many);
  EXPECT_TRUE(a.complete && z.complete);
  EXPECT_TRUE(a.clean() && z.clean()) << z.summary();
  EXPECT_EQ(a.runs, z.runs);
}

// CI stress: thousands of seeds of a 3-stage, 2-consumer pipeline in a few seconds.
TEST(ModelScheduler, StressThousandsOfSeeds) {
  program p = [](world& w) {
    constexpr int S = 3, N = 9, C = 2;
    buffer& g = w.make_global("g", 16 * N);
    buffer& s = w.make_shared("ring", S, 16);
    std::vector<barrier*> full, empty;
    for (int i = 0; i < S; ++i) {
      full.push_back(&w.make_barrier("full[" + std::to_string(i) + "]"));
      empty.push_back(&w.make_barrier("empty[" + std::to_string(i) + "]"));
    }
    named_barrier& start = w.make_named_barrier("start", 1 + C);
    w.spawn("producer", [&w, &g, &s, &start, full, empty] {
      for (int i = 0; i < S; ++i) {
        full[size_t(i)]->init(1);
        empty[size_t(i)]->init(C);
      }
      w.fence_mbarrier_init();
      start.sync();
      for (int k = 0; k < N; ++k) {
        if (k >= S) empty[size_t(k % S)]->wait_phase(uint64_t(k / S - 1));  // released round k/S-1
        full[size_t(k % S)]->arrive_expect_tx(16);
        w.cp_async_bulk_shared_global(s, s.stage_offset(size_t(k % S)), g, 16 * size_t(k), 16, *full[size_t(k % S)]);
      }
    });
    for (int c = 0; c < C; ++c)
      w.spawn("consumer " + std::to_string(c), [&s, &start, full, empty] {
        start.sync();
        for (int k = 0; k < N; ++k) {
          full[size_t(k % S)]->wait_phase(uint64_t(k / S));
          (void)s.load<uint32_t>(s.stage_offset(size_t(k % S)) / 4);
          empty[size_t(k % S)]->arrive();
        }
      });
  };
  const exploration e = explore_seeds(p, 1, 3000);
  EXPECT_TRUE(e.clean()) << e.summary();
  EXPECT_EQ(e.runs, 3000u);
}

}  // namespace
