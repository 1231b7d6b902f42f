// The bug zoo: small programs that reproduce mbarrier bugs met in real
// kernels, each beside its fixed twin. The model must report every buggy one with a precise
// message and find every fixed one clean over at least 1000 seeds.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"

using namespace hopper::model;

namespace {

constexpr size_t kStage = 64;  // bytes per stage tile

// A TMA-style ring of stages: one producer in CTA 0 issuing bulk copies
// (multicast to every CTA of the cluster when ctas > 1), consumers in every CTA waiting on their
// CTA's full barrier and releasing CTA 0's empty barrier. Each knob plants one bug.
struct pipe_cfg {
  int stages = 2, iters = 6, consumers = 1, ctas = 1;
  bool producer_starts_at_parity_0 = false;  // bug: empty waited with the wrong initial parity
  int tx_extra = 0;                          // bug: expect_tx that does not match the bytes
  bool split_copy_expect_half = false;       // bug: two copies per stage, bytes of one expected
  bool empty_ignores_consumers = false;      // bug: empty count 1 with several consumer warpgroups
  bool empty_ignores_ctas = false;           // bug: empty count ignores the multicast cluster
  bool release_before_read = false;          // bug: consumer releases before its last read
  bool no_final_cluster_sync = false;        // bug: CTA exits while peers still arrive
  bool fence_init_by_other = false;          // bug: fence.mbarrier_init by a non-initialising thread
  bool observer = false;                     // a reader in CTA 0 that also waits on full
  bool observer_counted = true;              // bug when false: its lag is unbounded
};

program make_pipeline(pipe_cfg c, std::shared_ptr<int> bad) {
  return [c, bad](world& w) {
    buffer& g = w.make_global("src", kStage * size_t(c.iters));
    for (size_t i = 0; i < g.bytes(); ++i) g.host_data()[i] = uint8_t(i * 7 + 1);
    struct cta_objs {
      buffer* tile;
      std::vector<barrier*> full, empty;
    };
    auto ctas = std::make_shared<std::vector<cta_objs>>(size_t(c.ctas));
    for (int cc = 0; cc < c.ctas; ++cc) {
      auto& o = (*ctas)[size_t(cc)];
      o.tile = &w.make_shared("tile", size_t(c.stages), kStage, cc);
      for (int s = 0; s < c.stages; ++s) {
        o.full.push_back(&w.make_barrier("full[" + std::to_string(s) + "]", cc));
        o.empty.push_back(&w.make_barrier("empty[" + std::to_string(s) + "]", cc));
      }
    }
    const int observers = c.observer ? 1 : 0;
    const unsigned empty_count =
        unsigned((c.empty_ignores_consumers ? 1 : c.consumers) * (c.empty_ignores_ctas ? 1 : c.ctas) +
                 (c.observer && c.observer_counted ? 1 : 0));
    named_barrier& cluster = w.make_named_barrier("cluster", unsigned(1 + c.ctas * c.consumers + observers));

    w.spawn("producer", [&w, &g, &cluster, c, ctas, empty_count] {
      auto& me = (*ctas)[0];
      for (int s = 0; s < c.stages; ++s) {
        me.full[size_t(s)]->init(1);
        me.empty[size_t(s)]->init(empty_count);
      }
      if (!c.fence_init_by_other) w.fence_mbarrier_init();
      cluster.sync();
      for (int k = 0; k < c.iters; ++k) {
        const int s = k % c.stages, r = k / c.stages;
        // The producer's first wait must pass at once: the phase "before 0" reads as complete.
        me.empty[size_t(s)]->wait(c.producer_starts_at_parity_0 ? uint32_t(r & 1) : uint32_t((r & 1) ^ 1));
        const uint32_t expect = c.split_copy_expect_half ? kStage / 2 : uint32_t(int(kStage) + c.tx_extra);
        for (auto& o : *ctas) o.full[size_t(s)]->arrive_expect_tx(expect);
        const size_t off = me.tile->stage_offset(size_t(s));
        std::vector<world::target> targets;
        for (auto& o : *ctas) targets.push_back({o.tile, o.full[size_t(s)]});
        auto copy = [&](size_t at, size_t n) {
          if (c.ctas == 1)
            w.cp_async_bulk_shared_global(*me.tile, off + at, g, size_t(k) * kStage + at, n, *me.full[size_t(s)]);
          else
            w.cp_async_bulk_shared_global_multicast(targets, off + at, g, size_t(k) * kStage + at, n);
        };
        if (c.split_copy_expect_half) {
          copy(0, kStage / 2);
          copy(kStage / 2, kStage / 2);
        } else {
          copy(0, kStage);
        }
      }
      if (!c.no_final_cluster_sync) cluster.sync();
    });

    auto consume = [&w, &g, &cluster, c, ctas, bad](int cc, int j, bool counted) {
      auto& mine = (*ctas)[size_t(cc)];
      auto& home = (*ctas)[0];
      if (cc > 0 && j == 0) {
        for (int s = 0; s < c.stages; ++s) mine.full[size_t(s)]->init(1);
        w.fence_mbarrier_init();
      }
      if (cc == 0 && j == 0 && c.fence_init_by_other) w.fence_mbarrier_init();
      cluster.sync();
      uint8_t data[kStage];
      for (int k = 0; k < c.iters; ++k) {
        const int s = k % c.stages, r = k / c.stages;
        mine.full[size_t(s)]->wait_phase(uint64_t(r));
        if (counted && c.release_before_read) home.empty[size_t(s)]->arrive();
        mine.tile->read(mine.tile->stage_offset(size_t(s)), data, kStage);
        for (size_t i = 0; i < kStage; ++i)
          if (data[i] != g.host_data()[size_t(k) * kStage + i]) ++*bad;
        if (counted && !c.release_before_read) home.empty[size_t(s)]->arrive();
      }
      if (!c.no_final_cluster_sync) cluster.sync();
    };
    for (int cc = 0; cc < c.ctas; ++cc)
      for (int j = 0; j < c.consumers; ++j)
        w.spawn(
            "consumer " + std::to_string(j) + " of CTA " + std::to_string(cc),
            [consume, cc, j] { consume(cc, j, true); }, cc);
    if (c.observer)
      w.spawn(
          "observer", [consume, c] { consume(0, 99, c.observer_counted); }, 0);
  };
}

// An epilogue: two warps write a tile with ordinary stores, one thread sends it
// to global memory with a bulk store, and the tile is rewritten for the next output.
struct store_cfg {
  int iters = 3;
  bool fence = true;                  // bug when false: no fence.proxy.async by the writers
  bool fence_by_issuer_only = false;  // bug: the issuing thread fences, the writers do not
  bool wait_read = true;              // bug when false: tile rewritten before wait_group.read
};

program make_store(store_cfg c, std::shared_ptr<int> bad) {
  return [c, bad](world& w) {
    buffer& tile = w.make_shared("out tile", 1, kStage, 0);
    buffer& out = w.make_global("dst", kStage * size_t(c.iters));
    named_barrier& bar = w.make_named_barrier("epilogue bar", 2);
    for (int t = 0; t < 2; ++t) {
      w.spawn("epilogue warp " + std::to_string(t), [&w, &tile, &out, &bar, c, t, bad] {
        for (int k = 0; k < c.iters; ++k) {
          uint8_t half[kStage / 2];
          for (size_t i = 0; i < sizeof half; ++i) half[i] = uint8_t(k * 31 + t * 100 + int(i));
          tile.write(size_t(t) * (kStage / 2), half, sizeof half);
          if (c.fence && (!c.fence_by_issuer_only || t == 0)) w.fence_proxy_async();
          bar.sync();
          if (t == 0) {
            w.cp_async_bulk_global_shared(out, size_t(k) * kStage, tile, 0, kStage);
            w.cp_async_bulk_commit_group();
            if (c.wait_read) w.cp_async_bulk_wait_group_read(0);
          }
          bar.sync();
        }
        if (t == 0) {
          w.cp_async_bulk_wait_group(0);
          for (int k = 0; k < c.iters; ++k)
            for (int h = 0; h < 2; ++h)
              for (size_t i = 0; i < kStage / 2; ++i)
                if (out.load<uint8_t>(size_t(k) * kStage + size_t(h) * (kStage / 2) + i) !=
                    uint8_t(k * 31 + h * 100 + int(i)))
                  ++*bad;
        }
      });
    }
  };
}

constexpr uint64_t kFixedSeeds = 1000;
constexpr uint64_t kBuggySeeds = 1000;

void expect_clean(const program& p, const std::shared_ptr<int>& bad) {
  const exploration e = explore_seeds(p, 1, kFixedSeeds);
  EXPECT_TRUE(e.clean()) << e.summary();
  EXPECT_EQ(e.runs, kFixedSeeds);
  EXPECT_EQ(*bad, 0) << "wrong data read in a clean run";
}

// The buggy twin must be reported, with this kind and these words in the message.
outcome expect_reported(const program& p, std::vector<error_kind> kinds, std::vector<std::string> words) {
  const exploration e = explore_seeds(p, 1, kBuggySeeds, run_options{}, true);
  EXPECT_EQ(e.failures, 1u) << "the bug was not reported in " << e.runs << " seeds";
  if (e.failed.empty()) return {};
  const outcome& o = e.failed[0];
  bool kind_ok = false;
  for (auto k : kinds) kind_ok = kind_ok || o.kind == k;
  EXPECT_TRUE(kind_ok) << o.message;
  for (auto& wd : words) EXPECT_NE(o.message.find(wd), std::string::npos) << "missing '" << wd << "' in: " << o.message;
  std::printf("    reported (seed %llu): %s\n", (unsigned long long)o.seed, o.message.c_str());
  return o;
}

const std::vector<error_kind> kHazard = {error_kind::raw_hazard, error_kind::war_hazard,
                                         error_kind::undefined_behavior};
const std::vector<error_kind> kHazardOrDeadlock = {error_kind::raw_hazard, error_kind::war_hazard,
                                                   error_kind::undefined_behavior, error_kind::deadlock};

// The buggy twin must be reported in every one of `seeds` schedules, as `kind` naming `words`:
// the cause, whatever the interleaving.
void expect_reported_every_seed(const program& p, error_kind kind, std::vector<std::string> words,
                                uint64_t seeds = 300) {
  const exploration e = explore_seeds(p, 1, seeds);
  EXPECT_EQ(e.failures, e.runs) << e.summary();
  for (const outcome& o : e.failed) {
    EXPECT_EQ(o.kind, kind) << o.message;
    for (auto& wd : words)
      EXPECT_NE(o.message.find(wd), std::string::npos) << "missing '" << wd << "' in: " << o.message;
  }
  if (!e.failed.empty())
    std::printf("    reported in %llu of %llu seeds: %s\n", (unsigned long long)e.failures, (unsigned long long)e.runs,
                e.failed[0].message.c_str());
}

TEST(BugZoo, BaselinePipelineIsClean) {
  auto bad = std::make_shared<int>(0);
  expect_clean(make_pipeline({}, bad), bad);
  pipe_cfg deep;
  deep.stages = 4;
  deep.iters = 12;
  deep.consumers = 2;
  expect_clean(make_pipeline(deep, bad), bad);
}

// 1. The empty barrier waited with parity 0 in round 0: phase 0 has not completed, the consumers
// wait for data that never comes. (CUTLASS #2404 "Deadlock in producer consumer loop"; the
// producer-starts-at-phase-1 rule discussed in rchardx/hopper-gemm #3 and NVIDIA/Fuser #3155.)
TEST(BugZoo, EmptyBarrierWrongInitialParity) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.producer_starts_at_parity_0 = true;
  expect_reported(make_pipeline(b, bad), {error_kind::deadlock}, {"producer", "empty[0]", "parity 0", "full[0]"});
  expect_clean(make_pipeline({}, bad), bad);
}

// 2. expect_tx larger than the bytes delivered: the phase never completes (tx-count stays 16).
// (triton-lang/triton #9046: deadlocks from a wrong transfer size in expect.)
TEST(BugZoo, TransactionCountLargerThanBytes) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.tx_extra = 16;
  expect_reported(make_pipeline(b, bad), {error_kind::deadlock}, {"full[0]", "tx-count 16"});
  expect_clean(make_pipeline({}, bad), bad);
}

// 2b. Two copies fill a stage but only one copy's bytes are expected: the phase completes with
// the second copy in flight, whose bytes are counted on the next phase (the consumer reads stale
// bytes). The cause, in every schedule: the second copy's complete_tx races the first phase.
TEST(BugZoo, TransactionCountSmallerThanBytes) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.split_copy_expect_half = true;
  expect_reported_every_seed(make_pipeline(b, bad), error_kind::wrong_phase,
                             {"phase race on barrier full[0]", "complete_tx of bulk copy 'src'+32", "phase 0"});
  expect_clean(make_pipeline({}, bad), bad);
}

// 3. The empty barrier counts one arrival although two consumer warpgroups release it: the
// producer overwrites a stage the second one still reads.
TEST(BugZoo, EmptyCountIgnoresConsumerWarpgroups) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.consumers = 2;
  b.empty_ignores_consumers = true;
  // The second consumer's arrival is counted on the next phase in some schedules, on this one in
  // others: a phase race, whatever the interleaving (before any hazard or drift shows).
  expect_reported_every_seed(make_pipeline(b, bad), error_kind::wrong_phase,
                             {"phase race on barrier empty[0]", "consumer", "mbarrier.arrive"});
  pipe_cfg f;
  f.consumers = 2;
  expect_clean(make_pipeline(f, bad), bad);
}

// 3b. Multicast into a cluster of 2: the empty barrier of the issuing CTA must count the
// consumers of every CTA it writes into.
TEST(BugZoo, EmptyCountIgnoresMulticastCluster) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.ctas = 2;
  b.empty_ignores_ctas = true;
  expect_reported_every_seed(make_pipeline(b, bad), error_kind::wrong_phase,
                             {"phase race on barrier empty[0]", "of CTA 1"});
  pipe_cfg f;
  f.ctas = 2;
  expect_clean(make_pipeline(f, bad), bad);
}

// 4. Ordinary shared-memory writes read by a bulk store with no fence.proxy.async by the writers
// (MoonshotAI/FlashKDA #24, sgl-project/sglang #39124, NVIDIA/cutlass #2960). The conservative
// rule also rejects a fence by the issuing thread alone.
TEST(BugZoo, GenericWritesReadByBulkCopyWithoutProxyFence) {
  auto bad = std::make_shared<int>(0);
  store_cfg b;
  b.fence = false;
  expect_reported(make_store(b, bad), {error_kind::raw_hazard}, {"fence.proxy.async", "epilogue warp"});
  store_cfg b2;
  b2.fence_by_issuer_only = true;
  expect_reported(make_store(b2, bad), {error_kind::raw_hazard}, {"fence.proxy.async", "epilogue warp 1"});
  expect_clean(make_store({}, bad), bad);
}

// 4b. The tile is rewritten before cp.async.bulk.wait_group.read retired the store reading it.
TEST(BugZoo, BulkStoreSourceRewrittenBeforeWaitGroupRead) {
  auto bad = std::make_shared<int>(0);
  store_cfg b;
  b.wait_read = false;
  expect_reported(make_store(b, bad), {error_kind::war_hazard}, {"wait_group.read"});
  expect_clean(make_store({}, bad), bad);
}

// 5. A consumer releases the stage (arrive on empty) before its last read of it
// (the empty barrier's guard against a write after read; Dao-AILab/flash-attention #2462 on
// releasing a stage too early).
TEST(BugZoo, ConsumerReleasesBeforeLastRead) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.release_before_read = true;
  expect_reported(make_pipeline(b, bad), kHazard, {"tile"});
  expect_clean(make_pipeline({}, bad), bad);
}

// 6. CTA 0 exits while the consumers of CTA 1 still arrive on its empty barriers (the final
// cluster wait in DeepGEMM's sm90 kernels, discussed in rchardx/hopper-gemm #3).
TEST(BugZoo, CtaExitsWhilePeersStillArrive) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.ctas = 2;
  b.no_final_cluster_sync = true;
  expect_reported(make_pipeline(b, bad), {error_kind::undefined_behavior}, {"has exited", "CTA 0"});
  pipe_cfg f;
  f.ctas = 2;
  expect_clean(make_pipeline(f, bad), bad);
}

// 7. fence.mbarrier_init issued by a thread that did not initialise the barriers: the copy
// engine (async proxy) completes bytes on a barrier whose init it may not see
// (MoonshotAI/FlashKDA #24 item 3: mbarrier.init used by TMA complete_tx without the fence).
TEST(BugZoo, FenceMbarrierInitByAnotherThread) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.fence_init_by_other = true;
  expect_reported(make_pipeline(b, bad), {error_kind::undefined_behavior},
                  {"fence.mbarrier_init was issued by task 'consumer 0 of CTA 0'", "producer"});
  expect_clean(make_pipeline({}, bad), bad);
}

// 8. A reader that waits on the full barrier but is not counted on the empty barrier: the
// producer runs ahead of it, and its wait names a phase two phases old (the parity aliases).
// (tile-ai/tilelang #3087: a wait on a parity that had already completed let the next copies
// overwrite a stage still being read.)
TEST(BugZoo, WaitOnParityTwoPhasesOld) {
  auto bad = std::make_shared<int>(0);
  pipe_cfg b;
  b.stages = 1;
  b.iters = 8;
  b.observer = true;
  b.observer_counted = false;
  expect_reported(make_pipeline(b, bad), kHazard, {"observer"});
  pipe_cfg f = b;
  f.observer_counted = true;
  expect_clean(make_pipeline(f, bad), bad);
}

// 8b. The same misuse seen directly: a wait on a phase two phases old.
TEST(BugZoo, StaleWaitReportedDirectly) {
  auto prog = [](world& w) {
    barrier& b = w.make_barrier("b");
    w.spawn("t", [&b] {
      b.init(1);
      b.arrive();
      b.wait_phase(0);
      b.arrive();  // phase 0 and 1 complete: the current phase is 2
      b.wait_phase(0);
    });
  };
  const outcome o = run_once(prog, {});
  EXPECT_EQ(o.kind, error_kind::undefined_behavior);
  EXPECT_NE(o.message.find("2 phases old"), std::string::npos) << o.message;
}

}  // namespace
