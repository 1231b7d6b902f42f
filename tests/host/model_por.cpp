// explore_por: every schedule up to the order of independent steps. It runs one schedule per
// class (orders of dependent steps), which is the number a reader can count by hand on small
// programs, and it finds what the exploration of every interleaving finds.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"

using namespace hopper::model;

namespace {

// The error kinds of every failing run of an exploration (all of them, not only the first few).
std::set<error_kind> kinds_all(const program& p, uint64_t max_runs, bool& complete) {
  std::set<error_kind> k;
  std::vector<size_t> prefix;
  std::vector<std::pair<size_t, size_t>> made;
  uint64_t runs = 0;
  complete = false;
  while (runs++ < max_runs) {
    const outcome r = run_once(p, {}, &prefix, &made);
    if (!r.ok) k.insert(r.kind);
    long i = long(made.size()) - 1;
    while (i >= 0 && made[size_t(i)].first + 1 >= made[size_t(i)].second) --i;
    if (i < 0) {
      complete = true;
      break;
    }
    prefix.clear();
    for (long j = 0; j < i; ++j) prefix.push_back(made[size_t(j)].first);
    prefix.push_back(made[size_t(i)].first + 1);
  }
  return k;
}

// explore_por's failing kinds, over every class.
std::set<error_kind> kinds_por(const program& p, uint64_t max_runs, exploration& e) {
  std::set<error_kind> k;
  e = explore_por(
      [&](const run_options& o) {
        outcome r = run_once(p, o);
        if (!r.ok) k.insert(r.kind);
        return r;
      },
      max_runs);
  return k;
}

// Both explorations complete; the reduced one runs no more schedules and sees the same kinds.
void expect_agree(const char* what, const program& p, uint64_t max_runs = 200000) {
  bool all_complete = false;
  const std::set<error_kind> all = kinds_all(p, max_runs, all_complete);
  exploration e;
  const std::set<error_kind> por = kinds_por(p, max_runs, e);
  ASSERT_TRUE(all_complete) << what;
  EXPECT_TRUE(e.complete) << what;
  EXPECT_EQ(all, por) << what;
  const exploration a = explore_all(p, max_runs);
  EXPECT_LE(e.classes(), a.runs) << what;
  std::printf("    %s: %llu interleavings, %llu classes (%llu redundant runs), %zu error kinds\n", what,
              (unsigned long long)a.runs, (unsigned long long)e.classes(), (unsigned long long)e.sleep_blocked,
              all.size());
}

TEST(ModelPor, IndependentTasksAreOneClass) {
  // Four tasks, each writing its own 16-byte granule three times with scheduling points between.
  program q = [](world& w) {
    buffer& b = w.make_shared("b", 1, 64, 0);
    for (int t = 0; t < 4; ++t)
      w.spawn("t" + std::to_string(t), [&w, &b, t] {
        for (int k = 0; k < 3; ++k) {
          b.store<uint32_t>(size_t(t) * 4, uint32_t(k));
          w.fence_proxy_async();  // a scheduling point
        }
      });
  };
  const exploration e = explore_por(q, 1000);
  EXPECT_TRUE(e.complete);
  EXPECT_TRUE(e.clean()) << e.summary();
  EXPECT_EQ(e.classes(), 1u) << e.summary();
  // The runs it ends early order the tasks' exits otherwise (the CTA's last one).
  EXPECT_LE(e.sleep_blocked, 3u) << e.summary();
  const exploration a = explore_all(q, 2000);
  EXPECT_EQ(a.runs, 2000u);  // the interleavings of 4 x 4 steps are many more
}

TEST(ModelPor, AtomicsOnOneWordAreOrderedEveryWay) {
  // Three tasks each adding once to one word: 3! orders of dependent steps.
  program p = [](world& w) {
    buffer& b = w.make_global("g", 16);
    for (int t = 0; t < 3; ++t) w.spawn("t" + std::to_string(t), [&b] { (void)b.atomic_add<uint32_t>(0, 1u); });
  };
  const exploration e = explore_por(p, 1000);
  EXPECT_TRUE(e.complete);
  EXPECT_EQ(e.classes(), 6u) << e.summary();
}

TEST(ModelPor, ArrivalsThatLeavePendingArrivalsCommute) {
  // Four tasks arrive once on a count-4 barrier and then wait for it. Arrivals that leave the
  // phase pending commute (either order reaches the same state); only the completing arrival
  // and the polls that find the phase complete or not are ordered.
  program p = [](world& w) {
    barrier& b = w.make_barrier("b");
    named_barrier& start = w.make_named_barrier("start", 4);
    for (int t = 0; t < 4; ++t)
      w.spawn("t" + std::to_string(t), [&, t] {
        if (t == 0) {
          b.init(4);
          w.fence_mbarrier_init();
        }
        start.sync();
        b.arrive();
        b.wait(0);
      });
  };
  const exploration e = explore_por(p, 100000);
  EXPECT_TRUE(e.complete);
  EXPECT_TRUE(e.clean()) << e.summary();
  EXPECT_LE(e.classes(), 4u * 8u) << e.summary();  // at most: the last arriver, the others' polls
  const exploration a = explore_all(p, 20000);
  EXPECT_FALSE(a.complete);  // more than 20000 interleavings
  std::printf("    more than %llu interleavings, %llu classes\n", (unsigned long long)a.runs,
              (unsigned long long)e.classes());
}

// A deadlock in some schedules only: the tester arrives on `c` only if its single test_wait on
// `b` finds the phase complete.
program deadlock_in_some_schedules() {
  return [](world& w) {
    barrier& b = w.make_barrier("b");
    barrier& c = w.make_barrier("c");
    named_barrier& start = w.make_named_barrier("start", 2);
    w.spawn("tester", [&] {
      b.init(1);
      c.init(1);
      w.fence_mbarrier_init();
      start.sync();
      if (b.test_wait(0)) c.arrive();
    });
    w.spawn("waiter", [&] {
      start.sync();
      b.arrive();
      c.wait(0);
    });
  };
}

TEST(ModelPor, FindsTheScheduleOfADeadlock) {
  const exploration e = explore_por(deadlock_in_some_schedules(), 1000);
  EXPECT_TRUE(e.complete);
  EXPECT_GE(e.failures, 1u) << e.summary();
  ASSERT_FALSE(e.failed.empty());
  EXPECT_EQ(e.failed[0].kind, error_kind::deadlock) << e.failed[0].message;
  expect_agree("deadlock in some schedules", deadlock_in_some_schedules());
}

// A copy in two halves lands while the consumer polls once with try_wait (a program's poll: its
// result is the consumer's, so the poll before or after the completion is its own class);
// `early` reads the stage before the wait: a RAW in some classes.
program copy_and_poll(bool early) {
  return [early](world& w) {
    buffer& src = w.make_global("src", 64);
    buffer& tile = w.make_shared("tile", 1, 64, 0);
    barrier& landed = w.make_barrier("landed");
    named_barrier& go = w.make_named_barrier("go", 2);
    w.spawn("issuer", [&] {
      landed.init(1);
      w.fence_mbarrier_init();
      go.sync();
      landed.arrive_expect_tx(64);
      for (size_t half = 0; half < 2; ++half)
        w.cp_async_bulk_shared_global(tile, half * 32, src, half * 32, 32, landed);
    });
    w.spawn("poller", [&, early] {
      go.sync();
      if (early) (void)tile.load<uint32_t>(3);
      if (!landed.try_wait(0)) landed.wait(0);
      (void)tile.load<uint32_t>(0);
    });
  };
}

TEST(ModelPor, AgreesWithEveryInterleaving) {
  expect_agree("copy and poll", copy_and_poll(false));
  expect_agree("read before the wait", copy_and_poll(true));
}

TEST(ModelPor, ASpuriousFailureIsExploredInsideItsStep) {
  // try_wait's spurious failure is a choice inside the consumer's step: both values are run.
  const exploration e = explore_por(copy_and_poll(false), 1000);
  EXPECT_TRUE(e.complete);
  EXPECT_TRUE(e.clean()) << e.summary();
  run_options none;
  none.explore_spurious_failures = 0;
  const exploration n = explore_por(copy_and_poll(false), 1000, none);
  EXPECT_TRUE(n.complete);
  EXPECT_GT(e.classes(), n.classes());
}

}  // namespace
