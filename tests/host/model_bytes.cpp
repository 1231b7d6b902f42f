// Memory on the model, tracked to the byte: the verdict depends on the bytes a program touches,
// never on how the host set the buffers up; and the two proxies' writes of the same bytes are
// ordered the way reads are (PTX ISA, memory consistency model: proxies; async proxy).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"

using namespace hopper::model;

namespace {

// Each lane of a warp updates its own 4-byte word of a shared tile in place (load, add, store),
// four lanes to a 16-byte granule, then the warp meets and lane 0 reads every word.
program own_words(bool overlap) {
  return [overlap](world& w) {
    launch(w, {1, 32, 1}, [overlap](target& t) {
      const smem<uint32_t> tile = shared_buffer(t, "tile", 1, 32 * 4).as<uint32_t>();
      const uint32_t mine = overlap ? t.lane() / 2 : t.lane();  // bug: two lanes share a word
      tile.store(t.lane(), 0);
      t.syncwarp();
      tile.store(mine, tile.load(mine) + t.lane());
      t.syncwarp();
      if (t.lane() == 0)
        for (uint32_t i = 0; i < 32; ++i) (void)tile.load(i);
    });
  };
}

TEST(ModelBytes, LanesUpdatingTheirOwnWordsOfOneGranuleAreClean) {
  const exploration e = explore_seeds(own_words(false), 1, 300);
  EXPECT_TRUE(e.clean()) << e.summary();
}

TEST(ModelBytes, LanesUpdatingOneWordAreReportedWithItsBytes) {
  const exploration e = explore_seeds(own_words(true), 1, 300);
  EXPECT_EQ(e.failures, e.runs) << e.summary();
  for (const outcome& o : e.failed) {
    EXPECT_TRUE(o.kind == error_kind::raw_hazard || o.kind == error_kind::war_hazard ||
                o.kind == error_kind::waw_hazard)
        << o.message;
    EXPECT_NE(o.message.find("shared buffer 'tile' of CTA 0 (bytes "), std::string::npos) << o.message;
  }
  std::printf("    %s\n", e.failed.empty() ? "" : e.failed[0].message.c_str());
}

// A stage transformed in place with generic stores, then refilled by a bulk copy: the copy's
// write (async proxy) must be ordered after the stores through a fence.proxy.async of the
// writer, then the release the producer waits on (cross-proxy WAW).
program transform_then_refill(bool fence) {
  return [fence](world& w) {
    buffer& g = w.make_global("g", 2 * 64);
    buffer& s = w.make_shared("stage", 1, 64, 0);
    barrier& full = w.make_barrier("full");
    barrier& empty = w.make_barrier("empty");
    named_barrier& cta = w.make_named_barrier("bar.sync 0", 2);
    w.spawn("producer", [&] {
      full.init(1);
      empty.init(1);
      w.fence_mbarrier_init();
      cta.sync();
      for (int r = 0; r < 2; ++r) {
        empty.wait(uint32_t((r & 1) ^ 1));
        full.arrive_expect_tx(64);
        w.cp_async_bulk_shared_global(s, 0, g, size_t(r) * 64, 64, full);
      }
      empty.wait(1);  // the last release
    });
    w.spawn("consumer", [&, fence] {
      cta.sync();
      for (int r = 0; r < 2; ++r) {
        full.wait(uint32_t(r & 1));
        for (size_t i = 0; i < 16; ++i) s.store<uint32_t>(i, s.load<uint32_t>(i) * 3u);  // in place
        if (fence) w.fence_proxy_async();
        empty.arrive();
      }
    });
  };
}

TEST(ModelBytes, GenericWriteRefilledByACopyNeedsTheWritersProxyFence) {
  const exploration ok = explore_all(transform_then_refill(true), 100000);
  EXPECT_TRUE(ok.complete);
  EXPECT_TRUE(ok.clean()) << ok.summary();
  const exploration bad = explore_all(transform_then_refill(false), 100000);
  EXPECT_TRUE(bad.complete);
  EXPECT_EQ(bad.failures, bad.runs) << bad.summary();
  for (const outcome& o : bad.failed) {
    EXPECT_EQ(o.kind, error_kind::waw_hazard) << o.message;
    EXPECT_NE(o.message.find("no fence.proxy.async by that task"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("task 'consumer'"), std::string::npos) << o.message;
  }
  std::printf("    clean in all %llu interleavings with the fence; without, reported in all %llu: %s\n",
              (unsigned long long)ok.runs, (unsigned long long)bad.runs,
              bad.failed.empty() ? "" : bad.failed[0].message.c_str());
}

// A thread writes into a stage before waiting on its full barrier: the copy's bytes may land
// after the write, whether the copy is still in flight or has already landed in this schedule.
// Judged by happens-before, it is reported in every interleaving.
program write_before_full(bool waits_first) {
  return [waits_first](world& w) {
    buffer& g = w.make_global("g", 64);
    buffer& s = w.make_shared("stage", 1, 64, 0);
    barrier& full = w.make_barrier("full");
    named_barrier& cta = w.make_named_barrier("bar.sync 0", 2);
    w.spawn("producer", [&] {
      full.init(1);
      w.fence_mbarrier_init();
      cta.sync();
      full.arrive_expect_tx(64);
      w.cp_async_bulk_shared_global(s, 0, g, 0, 64, full);
    });
    w.spawn("consumer", [&, waits_first] {
      cta.sync();
      if (waits_first) full.wait(0);
      s.store<uint32_t>(0, 1);
      if (!waits_first) full.wait(0);
    });
  };
}

TEST(ModelBytes, WriteIntoAStageBeforeItsFullWaitIsReportedInEveryInterleaving) {
  const exploration ok = explore_all(write_before_full(true), 100000);
  EXPECT_TRUE(ok.complete && ok.clean()) << ok.summary();
  const exploration bad = explore_all(write_before_full(false), 100000);
  EXPECT_TRUE(bad.complete);
  EXPECT_EQ(bad.failures, bad.runs) << bad.summary();
  for (const outcome& o : bad.failed) {
    EXPECT_EQ(o.kind, error_kind::waw_hazard) << o.message;
    EXPECT_NE(o.message.find("bulk copy 'g'+0 -> 'stage'+0"), std::string::npos) << o.message;
  }
  std::printf("    reported in all %llu interleavings\n", (unsigned long long)bad.runs);
}

}  // namespace
