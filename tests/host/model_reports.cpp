// What the model's reports say: the cause, the call sites of the operations involved (file:line
// and function, taken by the target's members), the owning CTA of a barrier, and deadlocks grouped
// by what the threads wait on, readable for warpgroups.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "model_tensor.hpp"

using namespace hopper::model;

namespace {

// "host/model_reports.cpp:N" for the line of this file that carries `marker` (a comment).
std::string site(const std::string& marker) {
  std::ifstream f(std::string(HOPPER_SOURCE_DIR) + "/tests/host/model_reports.cpp");
  std::string line;
  for (unsigned n = 1; std::getline(f, line); ++n)
    if (line.find(marker) != std::string::npos && line.find("site(") == std::string::npos)
      return "host/model_reports.cpp:" + std::to_string(n);
  ADD_FAILURE() << "no line marked " << marker;
  return "?";
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

outcome run_launch(launch_shape shape, std::function<void(target&)> body, uint64_t seed = 1) {
  const program p = [shape, body](world& w) { launch(w, shape, body); };
  run_options o;
  o.seed = seed;
  return run_once(p, o);
}

// Four consumer warps wait on a full barrier nobody arms: one line for the 128 threads.
TEST(ModelReports, DeadlockGroupsThreadsByWhatTheyWaitOn) {
  const outcome o = run_launch({1, 160, 1}, [](target& t) {
    auto& full = cta_shared<mbarrier_slot>(t, "full");
    if (t.thread() == 0) t.mbarrier_init(full, 1, "full", 0);
    t.syncthreads();
    if (t.warp() > 0) t.mbarrier_wait(full, hopper::parity(0));  // [wait on full]
  });
  ASSERT_EQ(o.kind, error_kind::deadlock) << o.message;
  EXPECT_NE(o.message.find("threads 32-159 (warps 1-4, 128 threads) of CTA 0: wait on parity 0 of barrier full[0] "
                           "phase 0 (parity 0), pending 1/1, tx-count 0 of CTA 0 at " +
                           site("[wait on full]")),
            std::string::npos)
      << o.message;
  EXPECT_EQ(count(o.message, "\n"), 1u) << o.message;
  std::printf("    %s\n", o.message.c_str());
}

// A warp that returns after the first round never arrives on the second phase: the report names
// it beside the threads that wait.
TEST(ModelReports, DeadlockNamesThreadsThatExitedWithoutArriving) {
  const outcome o = run_launch({1, 128, 1}, [](target& t) {
    auto& step = cta_shared<mbarrier_slot>(t, "step");
    if (t.thread() == 0) t.mbarrier_init(step, 4, "step", 0);
    t.syncthreads();
    for (uint32_t r = 0; r < 2; ++r) {
      if (t.lane() == 0) (void)t.mbarrier_arrive(step);
      t.mbarrier_wait(step, hopper::parity(r & 1u));
      if (t.warp() == 3) return;  // bug: leaves after round 0
    }
  });
  ASSERT_EQ(o.kind, error_kind::deadlock) << o.message;
  EXPECT_NE(o.message.find("exited without arriving on phase 1: thread 96 (warp 3) of CTA 0"), std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("threads 0-95 (warps 0-2, 96 threads) of CTA 0: wait on parity 1 of barrier step[0]"),
            std::string::npos)
      << o.message;
  std::printf("    %s\n", o.message.c_str());
}

TEST(ModelReports, AnExceptionFromAKernelBodyNamesItsThread) {
  const outcome o = run_launch({1, 32, 1}, [](target& t) {
    t.syncwarp();
    if (t.lane() == 5) throw std::runtime_error("index 40 out of range");
  });
  ASSERT_EQ(o.kind, error_kind::api_misuse) << o.message;
  EXPECT_NE(o.message.find("task 'thread 5 (warp 0 lane 5)' (CTA 0) at host/model_reports.cpp:"), std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("threw index 40 out of range"), std::string::npos) << o.message;
}

// A stage read before its full wait: the report names the read's line in the kernel body.
TEST(ModelReports, ReadBeforeWaitNamesTheReadAndTheCopy) {
  using pipe_t = hopper::pipeline<1, target>;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const program p = [](world& w) {
      buffer& g = w.make_global("g", 64);
      launch(w, {1, 64, 1}, [&g](target& t) {
        auto& ring = cta_shared<pipe_t::storage>(t, "ring");
        const smem<uint8_t> stage = shared_buffer(t, "stage", 1, 64);
        pipe_t pipe = pipe_t::init(ring, {1u}, t);
        if (t.warp() == 0) {
          if (t.lane() != 0) return;
          auto s = pipe.producer_start();
          pipe.acquire(s, 64);
          t.cp_async_bulk_shared_cluster_global(stage, gmem<const uint8_t>(g), 64, pipe.full(s));
          pipe.drain(++s);
          return;
        }
        auto s = pipe.consumer_start();
        const uint32_t v = stage.as<const uint32_t>().load(t.lane() % 16);  // [read] bug: before pipe.wait
        pipe.wait(s);
        (void)v;
        pipe.release(s);
      });
    };
    run_options o;
    o.seed = seed;
    const outcome r = run_once(p, o);
    ASSERT_EQ(r.kind, error_kind::raw_hazard) << r.message;
    EXPECT_NE(r.message.find("at " + site("[read]")), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("shared buffer 'stage' of CTA 0"), std::string::npos) << r.message;
  }
}

// Two threads update one word with no ordering: both call sites are named.
TEST(ModelReports, HazardNamesBothCallSites) {
  const outcome o = run_launch({1, 64, 1}, [](target& t) {
    const smem<uint32_t> x = shared_buffer(t, "x", 1, 16).as<uint32_t>();
    if (t.thread() == 0) x.store(0, 1);
    t.syncthreads();
    if (t.thread() == 32) x.store(0, 2);  // [store 2]
    if (t.thread() == 0) x.store(0, 3);   // [store 3]
  });
  ASSERT_EQ(o.kind, error_kind::waw_hazard) << o.message;
  EXPECT_NE(o.message.find(site("[store 2]")), std::string::npos) << o.message;
  EXPECT_NE(o.message.find(site("[store 3]")), std::string::npos) << o.message;
}

// A tensor copy over bytes its thread wrote with a generic store and no fence.proxy.async: the
// report names the copy's line, though a tensor copy's parameters end with its coordinates.
TEST(ModelReports, TensorCopyNamesItsCallSite) {
  const program p = [](world& w) {
    const tensor_view v = hopper_test::small_tensor(w.make_global("g", 4096));
    launch(w, {1, 32, 1}, [v](target& t) {
      auto& b = cta_shared<mbarrier_slot>(t, "b");
      const smem<uint8_t> s = shared_buffer(t, "s", 1, 1024);
      if (t.thread() != 0) return;
      t.mbarrier_init(b, 1, "b", 0);
      t.fence_mbarrier_init_release_cluster();
      s.as<uint32_t>().store(0, 7);  // [generic store]
      (void)t.mbarrier_arrive_expect_tx(b, 1024);
      t.cp_async_bulk_tensor_shared_cluster_global(s, v, b, 0, 0);  // [tensor copy] bug: no fence.proxy.async
      t.mbarrier_wait(b, hopper::parity(0));
    });
  };
  const outcome o = run_once(p, {});
  ASSERT_FALSE(o.ok);
  EXPECT_NE(o.message.find(site("[tensor copy]")), std::string::npos) << o.message;
  EXPECT_NE(o.message.find(site("[generic store]")), std::string::npos) << o.message;
}

// A thread of CTA 0 arrives twice, remotely, on a barrier of CTA 1 that counts one arrival of
// each CTA per phase: the phase race names the barrier's CTA, not the arriving thread's.
TEST(ModelReports, RemoteArrivalNamesTheBarriersCta) {
  const outcome o = run_launch({2, 32, 2}, [](target& t) {
    auto& b = cta_shared<mbarrier_slot>(t, "b");
    if (t.thread() == 0) {
      t.mbarrier_init(b, 2, "b", 0);
      t.fence_mbarrier_init_release_cluster();
    }
    t.barrier_cluster_arrive_aligned();
    t.barrier_cluster_wait_aligned();
    if (t.thread() != 0) return;
    if (t.cluster_rank() == 0) {
      t.mbarrier_arrive(t.mapa(b, 1));
      t.mbarrier_arrive(t.mapa(b, 1));  // for the next phase, without waiting
    } else {
      (void)t.mbarrier_arrive(b);
      t.mbarrier_wait(b, hopper::parity(0));
    }
  });
  ASSERT_EQ(o.kind, error_kind::wrong_phase) << o.message;
  EXPECT_NE(o.message.find("phase race on barrier b[0] phase 1"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("of CTA 1:"), std::string::npos) << o.message;
}

// The fault plan's arrive_dropped reaches every arrive form: a remote arrive (mapa +
// mbarrier.arrive.shared::cluster) and a warp's lanes arriving on their CTAs' barriers, as well as
// the local one. Each CTA's barrier "b" counts one arrival; with the fault the waiters deadlock on
// it, without it they pass.
TEST(ModelReports, ArriveDroppedReachesRemoteAndLaneArrives) {
  enum class form { local, remote, lanes };
  for (form f : {form::local, form::remote, form::lanes})
    for (bool dropped : {false, true}) {
      const program p = [f](world& w) {
        launch(w, {2, 32, 2}, [f](target& t) {
          auto& b = cta_shared<mbarrier_slot>(t, "b");
          if (t.thread() == 0) {
            t.mbarrier_init(b, 1, "b", 0);
            t.fence_mbarrier_init_release_cluster();
          }
          t.barrier_cluster_arrive_aligned();
          t.barrier_cluster_wait_aligned();
          // CTA 1's barrier: arrived on by CTA 1 itself (local), or from CTA 0 (remote, or lane 1 of
          // CTA 0's warp, whose lane 0 arrives on CTA 0's own).
          const bool first = t.cluster_rank() == 0, lead = t.thread() == 0;
          if (f == form::local && !first && lead) (void)t.mbarrier_arrive(b);
          if (f == form::remote && first && lead) t.mbarrier_arrive(t.mapa(b, 1));
          if (f == form::lanes && first) t.mbarrier_arrive_shared_cluster_lanes(b, 2);
          if (!first && lead) t.mbarrier_wait(b, hopper::parity(0));
          t.barrier_cluster_arrive_aligned();  // neither CTA exits while a peer may still arrive
          t.barrier_cluster_wait_aligned();
        });
      };
      run_options o;
      if (dropped) o.faults = {{fault_kind::arrive_dropped, "b"}};
      const outcome r = run_once(p, o);
      const std::string what = std::string(f == form::local    ? "local"
                                           : f == form::remote ? "remote"
                                                               : "lanes") +
                               (dropped ? " dropped" : "");
      if (!dropped) {
        EXPECT_TRUE(r.ok) << what << ": " << r.message;
      } else {
        ASSERT_FALSE(r.ok) << what << ": the dropped arrive still counted";
        EXPECT_EQ(r.kind, error_kind::deadlock) << what << ": " << r.message;
        EXPECT_NE(r.message.find("barrier b[0]"), std::string::npos) << what << ": " << r.message;
      }
    }
}

// A one-stage ring, producer thread 0 and a consumer warp, each round's value written with a
// generic store and read with a generic load. `flipped`: the producer's waits on the empty barrier
// use the other parity. `relaxed_go`: in round 2 the producer waits, instead of on the empty
// barrier, on a barrier 'go' the consumer arrives on with .relaxed after its release of round 1.
outcome run_ring(bool flipped, bool relaxed_go, uint64_t seed) {
  return run_launch(
      {1, 64, 1},
      [flipped, relaxed_go](target& t) {
        auto& full = cta_shared<mbarrier_slot>(t, "full");
        auto& empty = cta_shared<mbarrier_slot>(t, "empty");
        auto& go = cta_shared<mbarrier_slot>(t, "go");
        const smem<uint32_t> x = shared_buffer(t, "x", 1, 16).as<uint32_t>();
        if (t.thread() == 0) {
          t.mbarrier_init(full, 1, "full", 0);
          t.mbarrier_init(empty, 1, "empty", 0);
          t.mbarrier_init(go, 1, "go", 0);
        }
        t.syncthreads();
        for (int r = 0; r < 3; ++r) {
          if (t.thread() == 0) {
            if (relaxed_go && r == 2)
              t.mbarrier_wait(go, hopper::parity(0));  // [wait go]
            else if (r > 0)
              t.mbarrier_wait(empty, hopper::parity(uint32_t(r - 1 + flipped) & 1u));  // [wait empty]
            x.store(0, uint32_t(r));                                                   // [store x]
            (void)t.mbarrier_arrive(full);
          } else if (t.thread() == 32) {
            t.mbarrier_wait(full, hopper::parity(uint32_t(r) & 1u));
            (void)x.load(0);                                                                   // [load x]
            (void)t.mbarrier_arrive(empty);                                                    // [release x]
            if (relaxed_go && r == 1) (void)t.mbarrier_arrive<hopper::ptx::sem::relaxed>(go);  // [arrive go]
          }
        }
      },
      seed);
}

// The producer's first wait on the empty barrier uses the other parity: on the fresh barrier it
// returns at once and the store overwrites a value the consumer may still read. The WAR report
// names the wait that let the store through (its barrier, parity and line), not only the two
// accesses; in the schedules where the consumer released first, the flipped wait never returns.
TEST(ModelReports, WarNamesTheWaitThatLetTheWriteThrough) {
  int war = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const outcome o = run_ring(true, false, seed);
    ASSERT_FALSE(o.ok) << "seed " << seed;
    if (o.kind != error_kind::war_hazard) {
      EXPECT_TRUE(o.kind == error_kind::deadlock || o.kind == error_kind::raw_hazard) << o.message;
      continue;
    }
    ++war;
    EXPECT_NE(o.message.find(site("[store x]")), std::string::npos) << o.message;
    EXPECT_NE(o.message.find(site("[load x]")), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("last wait before the write, on barrier empty[0] at " + site("[wait empty]")),
              std::string::npos)
        << o.message;
    EXPECT_NE(o.message.find("(parity 1), returned at once on the fresh barrier"), std::string::npos) << o.message;
    if (war == 1) std::printf("    %s\n", o.message.c_str());
  }
  EXPECT_GT(war, 0) << "no schedule of 40 let the producer's store overtake the read";
}

// The producer's round-2 store is held back by a barrier the consumer arrives on after its read,
// but with .relaxed: the store follows the read in execution order only. Of the arrives after the
// read (the consumer's .release on 'empty', which the producer does not wait for, and the .relaxed
// one on 'go', whose phase its wait observed), the report names the one that should have ordered
// the read before the store.
TEST(ModelReports, WarNamesTheRelaxedArriveTheWriterWaitedFor) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const outcome o = run_ring(false, true, seed);
    ASSERT_EQ(o.kind, error_kind::war_hazard) << "seed " << seed << ": " << o.message;
    EXPECT_NE(o.message.find("the mbarrier.arrive on barrier go[0] by task 'thread 32 (warp 1 lane 0)' (CTA 0) at " +
                             site("[arrive go]")),
              std::string::npos)
        << o.message;
    EXPECT_NE(o.message.find("the phase this writer's wait at " + site("[wait go]") +
                             " (operator()) observed, was "
                             ".relaxed"),
              std::string::npos)
        << o.message;
    if (seed == 1) std::printf("    %s\n", o.message.c_str());
  }
}

}  // namespace
