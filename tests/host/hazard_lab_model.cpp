// The hazard lab's cases (kernels/hazard_lab.cuh, seed §7, §8, §9, §16, §17, §19) as model
// programs. Where the GPU can only count what it happened to see, the model must flag every
// unprotected case in every schedule (every seed, and every interleaving of the small ones), with
// the hazard's kind, and find every protected case clean.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"

using namespace hopper::model;

namespace {

constexpr size_t kTile = 64;  // bytes per tile (4 chunks of 16)
constexpr int kRuns = 3;      // runs per program (the GPU kernels run hundreds)

uint8_t value(int run, size_t i, int salt = 0) { return uint8_t(run * 37 + int(i) * 3 + salt + 1); }

// raw_proxy_bulk_store: two warps fill the tile with st.shared, bar.sync, warp 0 bulk-stores it.
program raw_proxy_bulk_store(bool protect, std::shared_ptr<int> bad) {
  return [protect, bad](world& w) {
    buffer& tile = w.make_shared("tile", 1, kTile, 0, 16);
    buffer& out = w.make_global("out", kTile * kRuns, 16);
    named_barrier& bar = w.make_named_barrier("bar.sync 0", 2);
    for (int t = 0; t < 2; ++t)
      w.spawn("warp " + std::to_string(t), [&w, &tile, &out, &bar, protect, t, bad] {
        for (int r = 0; r < kRuns; ++r) {
          uint8_t half[kTile / 2];
          for (size_t i = 0; i < sizeof half; ++i) half[i] = value(r, size_t(t) * sizeof half + i);
          tile.write(size_t(t) * sizeof half, half, sizeof half);
          if (protect) w.fence_proxy_async();  // each writer, before the sync (seed §9.3)
          bar.sync();
          if (t == 0) {
            w.cp_async_bulk_global_shared(out, size_t(r) * kTile, tile, 0, kTile);
            w.cp_async_bulk_commit_group();
            w.cp_async_bulk_wait_group_read(0);
          }
          bar.sync();
        }
        if (t == 0) {
          w.cp_async_bulk_wait_group(0);
          for (int r = 0; r < kRuns; ++r)
            for (size_t i = 0; i < kTile; ++i)
              if (out.load<uint8_t>(size_t(r) * kTile + i) != value(r, i)) ++*bad;
        }
      });
  };
}

// raw_proxy_multicast: a warp writes the global source with ordinary stores, then a multicast
// bulk copy sends it to both CTAs of a cluster of 2. Protection: fence.proxy.async by the writer.
program raw_proxy_multicast(bool protect, std::shared_ptr<int> bad) {
  return [protect, bad](world& w) {
    buffer& src = w.make_global("src", kTile, 16);
    std::vector<buffer*> tiles;
    std::vector<barrier*> full;
    for (int c = 0; c < 2; ++c) {
      tiles.push_back(&w.make_shared("tile", 1, kTile, c, 16));
      full.push_back(&w.make_barrier("full", c));
    }
    named_barrier& cluster = w.make_named_barrier("barrier.cluster", 2);
    w.spawn("producer", [&w, &src, &cluster, tiles, full, protect, bad] {
      full[0]->init(1);
      w.fence_mbarrier_init();
      uint8_t v[kTile];
      for (size_t i = 0; i < kTile; ++i) v[i] = value(0, i);
      src.write(0, v, kTile);
      if (protect) w.fence_proxy_async();  // fence.proxy.async.global: the copy reads src
      cluster.sync();
      for (int c = 0; c < 2; ++c) full[size_t(c)]->arrive_expect_tx(kTile);
      w.cp_async_bulk_shared_global_multicast({{tiles[0], full[0]}, {tiles[1], full[1]}}, 0, src, 0, kTile);
      full[0]->wait_phase(0);  // CTA 0 is a destination too: it must not exit before the bytes land
      uint8_t got[kTile];
      tiles[0]->read(0, got, kTile);
      for (size_t i = 0; i < kTile; ++i)
        if (got[i] != value(0, i)) ++*bad;
      cluster.sync();
    }, 0);
    w.spawn("consumer of CTA 1", [&w, &cluster, tiles, full, bad] {
      full[1]->init(1);
      w.fence_mbarrier_init();
      cluster.sync();
      full[1]->wait_phase(0);
      uint8_t v[kTile];
      tiles[1]->read(0, v, kTile);
      for (size_t i = 0; i < kTile; ++i)
        if (v[i] != value(0, i)) ++*bad;
      cluster.sync();
    }, 1);
  };
}

// war_refill_before_release: the producer bulk-loads the stage, then refills it (a second
// barrier) while the consumers read it. Protection: the refill waits on the empty barrier.
program war_refill_before_release(bool protect, std::shared_ptr<int> bad, int consumers = 2) {
  return [protect, bad, consumers](world& w) {
    buffer& first = w.make_global("first", kTile, 16);
    buffer& refill = w.make_global("refill", kTile, 16);
    for (size_t i = 0; i < kTile; ++i) {
      first.host_data()[i] = value(0, i);
      refill.host_data()[i] = uint8_t(~value(0, i));
    }
    buffer& stage = w.make_shared("stage", 1, kTile, 0, 16);
    barrier& full = w.make_barrier("full");
    barrier& empty = w.make_barrier("empty");
    barrier& refilled = w.make_barrier("refilled");
    named_barrier& block = w.make_named_barrier("__syncthreads", unsigned(1 + consumers));
    w.spawn("producer", [&, protect] {
      full.init(1);
      empty.init(unsigned(consumers));
      refilled.init(1);
      w.fence_mbarrier_init();
      block.sync();
      for (int r = 0; r < kRuns; ++r) {
        full.arrive_expect_tx(kTile);
        w.cp_async_bulk_shared_global(stage, 0, first, 0, kTile, full);
        full.wait_phase(uint64_t(r));
        if (protect) empty.wait_phase(uint64_t(r));
        refilled.arrive_expect_tx(kTile);
        w.cp_async_bulk_shared_global(stage, 0, refill, 0, kTile, refilled);
        refilled.wait_phase(uint64_t(r));
        block.sync();
      }
    });
    for (int j = 0; j < consumers; ++j)
      w.spawn("consumer " + std::to_string(j), [&, bad] {
        block.sync();
        for (int r = 0; r < kRuns; ++r) {
          full.wait_phase(uint64_t(r));
          uint8_t v[kTile];
          stage.read(0, v, kTile);
          for (size_t i = 0; i < kTile; ++i)
            if (v[i] != value(0, i)) ++*bad;
          empty.arrive();  // release after the last read (seed §16)
          block.sync();
        }
      });
  };
}

// war_store_source_reuse: a tile bulk-stored, then rewritten by the next run. Protection:
// cp.async.bulk.wait_group.read 0 by the issuer before the block sync that precedes the rewrite.
program war_store_source_reuse(bool protect, std::shared_ptr<int> bad) {
  return [protect, bad](world& w) {
    buffer& tile = w.make_shared("tile", 1, kTile, 0, 16);
    buffer& out = w.make_global("out", kTile * kRuns, 16);
    named_barrier& bar = w.make_named_barrier("bar.sync 0", 2);
    for (int t = 0; t < 2; ++t)
      w.spawn("warp " + std::to_string(t), [&w, &tile, &out, &bar, protect, t, bad] {
        for (int r = 0; r < kRuns; ++r) {
          uint8_t half[kTile / 2];
          for (size_t i = 0; i < sizeof half; ++i) half[i] = value(r, size_t(t) * sizeof half + i);
          tile.write(size_t(t) * sizeof half, half, sizeof half);
          w.fence_proxy_async();  // the RAW side is protected in both variants
          bar.sync();
          if (t == 0) {
            w.cp_async_bulk_global_shared(out, size_t(r) * kTile, tile, 0, kTile);
            w.cp_async_bulk_commit_group();
            if (protect) w.cp_async_bulk_wait_group_read(0);
          }
          bar.sync();
        }
        if (t == 0) {
          w.cp_async_bulk_wait_group(0);
          for (int r = 0; r < kRuns; ++r)
            for (size_t i = 0; i < kTile; ++i)
              if (out.load<uint8_t>(size_t(r) * kTile + i) != value(r, i)) ++*bad;
        }
      });
  };
}

// release_acquire_mbarrier: warp 1 writes data and arrives; warp 2 waits and reads. Unprotected:
// mbarrier.arrive.relaxed (the model's waits always acquire, so the relaxed arrive alone removes
// the ordering: nothing was released into the phase).
program release_acquire_mbarrier(bool protect, std::shared_ptr<int> bad) {
  return [protect, bad](world& w) {
    buffer& data = w.make_shared("data", 1, kTile, 0, 16);
    barrier& flag = w.make_barrier("flag");
    named_barrier& block = w.make_named_barrier("__syncthreads", 2);
    w.spawn("writer warp", [&, protect] {
      flag.init(1);
      block.sync();
      for (int r = 0; r < kRuns; ++r) {
        uint8_t v[kTile];
        for (size_t i = 0; i < kTile; ++i) v[i] = value(r, i);
        data.write(0, v, kTile);
        flag.arrive(1, protect ? sem::release : sem::relaxed);
        block.sync();
      }
    });
    w.spawn("reader warp", [&, bad] {
      block.sync();
      for (int r = 0; r < kRuns; ++r) {
        flag.wait_phase(uint64_t(r));
        uint8_t v[kTile];
        data.read(0, v, kTile);
        for (size_t i = 0; i < kTile; ++i)
          if (v[i] != value(r, i)) ++*bad;
        block.sync();
      }
    });
  };
}

constexpr uint64_t kSeeds = 400;

void expect_clean(const program& p, const std::shared_ptr<int>& bad) {
  const exploration e = explore_seeds(p, 1, kSeeds);
  EXPECT_TRUE(e.clean()) << e.summary();
  EXPECT_EQ(e.runs, kSeeds);
  EXPECT_EQ(*bad, 0) << "a protected run read wrong data";
}

// Every seed must report the hazard, with one of these kinds and these words in the message.
void expect_flagged_always(const char* name, const program& p, std::vector<error_kind> kinds,
                           std::vector<std::string> words) {
  const exploration e = explore_seeds(p, 1, kSeeds);
  EXPECT_EQ(e.failures, e.runs) << name << ": flagged in only " << e.failures << " of " << e.runs << " seeds";
  ASSERT_FALSE(e.failed.empty()) << name << " was never flagged";
  for (const outcome& o : e.failed) {
    bool kind_ok = false;
    for (auto k : kinds) kind_ok = kind_ok || o.kind == k;
    EXPECT_TRUE(kind_ok) << name << ": " << o.message;
    for (auto& wd : words) EXPECT_NE(o.message.find(wd), std::string::npos) << "missing '" << wd << "' in: " << o.message;
  }
  std::printf("SUMMARY hazard_model %s unprotected %llu/%llu: %s\n", name, (unsigned long long)e.failures,
              (unsigned long long)e.runs, e.failed[0].message.c_str());
}

// Every interleaving (up to a bound) of the unprotected program must report the hazard.
void expect_flagged_in_every_interleaving(const char* name, const program& p, uint64_t max_runs) {
  const exploration e = explore_all(p, max_runs);
  EXPECT_EQ(e.failures, e.runs) << name << ": " << e.runs - e.failures << " interleavings passed unflagged";
  std::printf("    %s: %llu interleavings%s, all flagged\n", name, (unsigned long long)e.runs,
              e.complete ? " (all of them)" : " (bounded)");
}

TEST(HazardLabModel, RawAcrossProxiesBulkStore) {
  auto bad = std::make_shared<int>(0);
  expect_clean(raw_proxy_bulk_store(true, bad), bad);
  expect_flagged_always("raw_proxy_bulk_store", raw_proxy_bulk_store(false, bad), {error_kind::raw_hazard},
                        {"fence.proxy.async", "tile"});
  expect_flagged_in_every_interleaving("raw_proxy_bulk_store", raw_proxy_bulk_store(false, bad), 3000);
}

TEST(HazardLabModel, RawAcrossProxiesMulticast) {
  auto bad = std::make_shared<int>(0);
  expect_clean(raw_proxy_multicast(true, bad), bad);
  expect_flagged_always("raw_proxy_multicast", raw_proxy_multicast(false, bad), {error_kind::raw_hazard},
                        {"fence.proxy.async", "src"});
  expect_flagged_in_every_interleaving("raw_proxy_multicast", raw_proxy_multicast(false, bad), 3000);
}

TEST(HazardLabModel, WarRefillBeforeConsumersRelease) {
  auto bad = std::make_shared<int>(0);
  expect_clean(war_refill_before_release(true, bad), bad);
  expect_clean(war_refill_before_release(true, bad, 4), bad);
  // Depending on the schedule the refill is issued after a consumer's read (WAR) or lands
  // before it (the read sees bytes of a phase it never waited for: RAW); never silently.
  expect_flagged_always("war_refill_before_release", war_refill_before_release(false, bad),
                        {error_kind::war_hazard, error_kind::raw_hazard}, {"stage", "consumer"});
  expect_flagged_in_every_interleaving("war_refill_before_release", war_refill_before_release(false, bad, 1), 3000);
}

TEST(HazardLabModel, WarBulkStoreSourceReusedBeforeWaitGroupRead) {
  auto bad = std::make_shared<int>(0);
  expect_clean(war_store_source_reuse(true, bad), bad);
  expect_flagged_always("war_store_source_reuse", war_store_source_reuse(false, bad), {error_kind::war_hazard},
                        {"wait_group.read", "tile"});
  expect_flagged_in_every_interleaving("war_store_source_reuse", war_store_source_reuse(false, bad), 3000);
}

TEST(HazardLabModel, ReleaseAcquireThroughMbarrier) {
  auto bad = std::make_shared<int>(0);
  expect_clean(release_acquire_mbarrier(true, bad), bad);
  expect_flagged_always("release_acquire_mbarrier", release_acquire_mbarrier(false, bad), {error_kind::raw_hazard},
                        {"reader warp", "writer warp", "no synchronisation"});
  expect_flagged_in_every_interleaving("release_acquire_mbarrier", release_acquire_mbarrier(false, bad), 3000);
}

}  // namespace
