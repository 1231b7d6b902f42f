// hopper::pipeline on the executable model (issue 5 item 2): the same class as on the GPU, with
// the model's barriers; every warp is a task under the seeded scheduler. Over 1 to 10 stages, 1 to
// 4 consumer warpgroups, clusters of 1 to 4 CTAs with multicast, random iteration counts and many
// seeds: no deadlock, no hazard, and every consumer reads exactly the bytes its producer copied for
// that iteration. Mutants (wrong initial parity, a skipped release, counts off by one, no drain,
// release before the last read) must be reported by the model: the checks can fail.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/pipeline_backend.hpp"
#include "hopper/pipeline.cuh"

namespace {

using namespace hopper::model;

enum class mutant {
  none,
  producer_parity_0,    // the producer starts on parity 0, as if every stage were full
  consumer_parity_1,    // the consumer starts on parity 1: reads before the first copy lands
  skip_release,         // one consumer warp skips one release
  empty_count_minus_1,  // empty barrier expects one consumer warp fewer than there are
  empty_count_plus_1,   // ... one more
  bytes_minus_16,       // full barrier armed with 16 bytes fewer than the copies deliver
  bytes_plus_16,        // ... 16 more
  no_drain,             // the producer exits without draining (peers still arrive)
  release_before_read,  // a consumer releases the stage before its last read of it
};

const char* name(mutant m) {
  switch (m) {
    case mutant::none: return "none";
    case mutant::producer_parity_0: return "producer_parity_0";
    case mutant::consumer_parity_1: return "consumer_parity_1";
    case mutant::skip_release: return "skip_release";
    case mutant::empty_count_minus_1: return "empty_count_minus_1";
    case mutant::empty_count_plus_1: return "empty_count_plus_1";
    case mutant::bytes_minus_16: return "bytes_minus_16";
    case mutant::bytes_plus_16: return "bytes_plus_16";
    case mutant::no_drain: return "no_drain";
    case mutant::release_before_read: return "release_before_read";
  }
  return "?";
}

struct host_case {
  uint32_t stages = 2, warpgroups = 1, cluster = 1, tiles = 4;
  uint32_t stage_bytes = 64;
  bool multicast = false;
  uint32_t warps_per_group = 4;  // consumer warps per warpgroup (tasks)
  uint64_t seed = 1;
  mutant m = mutant::none;
};

std::string describe(const host_case& c) {
  return "stages=" + std::to_string(c.stages) + " warpgroups=" + std::to_string(c.warpgroups) + "x" +
         std::to_string(c.warps_per_group) + " cluster=" + std::to_string(c.cluster) +
         (c.multicast ? " multicast" : "") + " tiles=" + std::to_string(c.tiles) +
         " stage_bytes=" + std::to_string(c.stage_bytes) + " seed=" + std::to_string(c.seed) +
         " mutant=" + name(c.m);
}

// The word at position i of source tile t: distinct across tiles and positions.
uint32_t word_of(size_t tile, size_t i) {
  uint64_t z = (uint64_t(tile) << 32) ^ (i * 0x9E3779B97F4A7C15ull) ^ 0x5bd1e995u;
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
  return uint32_t(z ^ (z >> 29));
}

struct outcome {
  bool reported = false;
  error_kind kind{};
  std::string message;
  uint64_t bad_words = 0, checked_words = 0;
  std::vector<hopper::trace::record> timeline;
};

// One run of the streaming program (the model twin of apps/pipeline_stream.cuh).
template <int S>
outcome run_once(const host_case& c, bool keep_timeline = false) {
  using pipe_t = hopper::pipeline<S, pipeline_backend>;
  run_options o;
  o.seed = c.seed;
  outcome out;
  world w(o);
  const uint32_t ctas = c.cluster;  // one cluster: its CTAs are the interesting part
  const uint32_t cw = c.warpgroups * c.warps_per_group;
  const bool mc = c.multicast && c.cluster > 1;
  const uint32_t slice = mc ? c.stage_bytes / c.cluster : c.stage_bytes;
  const size_t words = c.stage_bytes / 4;
  const size_t src_tiles = mc ? c.tiles : size_t(ctas) * c.tiles;

  buffer& src = w.make_global("src", src_tiles * c.stage_bytes, 16);
  for (size_t t = 0; t < src_tiles; ++t)
    for (size_t i = 0; i < words; ++i) {
      const uint32_t v = word_of(t, i);
      std::memcpy(src.host_data() + t * c.stage_bytes + i * 4, &v, 4);
    }

  std::vector<typename pipe_t::storage> st(ctas);
  std::vector<buffer*> stage_buf(ctas);
  pipeline_host host;
  host.w = &w;
  host.cluster_size = c.cluster;
  host.timeline = keep_timeline ? &out.timeline : nullptr;
  for (uint32_t b = 0; b < ctas; ++b) {
    for (int s = 0; s < S; ++s) {
      st[b].full[s] = &w.make_barrier("full[" + std::to_string(s) + "]", int(b));
      st[b].empty[s] = &w.make_barrier("empty[" + std::to_string(s) + "]", int(b));
      // With multicast a consumer arrives on a peer's empty barrier again one round later. It
      // cannot be counted on the old phase: its wait on its own full barrier needed the peer
      // producer's slice, issued only after that phase completed. The model does not carry the
      // issuer's clock through the copy engine's complete_tx, so it cannot see this order; its
      // repeated-arrival check is turned off for these barriers only (counts and hazards stay).
      if (mc) st[b].empty[s]->allow_repeated_arrivals();
    }
    host.storage.push_back(&st[b].full[0]);
    stage_buf[b] = &w.make_shared("stages", S, c.stage_bytes, int(b), slice);
    host.cta_sync.push_back(&w.make_named_barrier("bar.sync 0 of CTA " + std::to_string(b), 1 + cw));
  }
  host.cluster_sync.push_back(&w.make_named_barrier("barrier.cluster", ctas * (1 + cw)));

  hopper::pipeline_params p{cw, c.cluster, mc};
  if (c.m == mutant::empty_count_minus_1) p.consumer_warps = cw - 1;
  if (c.m == mutant::empty_count_plus_1) p.consumer_warps = cw + 1;
  uint64_t& bad = out.bad_words;
  uint64_t& checked = out.checked_words;

  for (uint32_t b = 0; b < ctas; ++b) {
    const uint32_t rank = b % c.cluster;
    w.spawn("producer", [&, b, rank] {
      pipeline_backend be(host, int(b), 0, true);
      pipe_t pipe = pipe_t::init(st[b], p, be);
      auto s = c.m == mutant::producer_parity_0 ? typename pipe_t::state(0, 0, 0) : pipe.producer_start();
      for (; s.iter() < c.tiles; ++s) {
        uint32_t bytes = c.stage_bytes;
        if (c.m == mutant::bytes_minus_16 && s.iter() == c.tiles / 2) bytes -= 16;
        if (c.m == mutant::bytes_plus_16 && s.iter() == c.tiles / 2) bytes += 16;
        pipe.acquire(s, bytes);
        const size_t off = size_t(s.index()) * c.stage_bytes;
        if (mc) {
          std::vector<world::target> all;
          for (uint32_t r = 0; r < c.cluster; ++r) {
            const uint32_t peer = b - rank + r;
            all.push_back({stage_buf[peer], st[peer].full[s.index()]});
          }
          w.cp_async_bulk_shared_global_multicast(all, off + size_t(rank) * slice, src,
                                                  size_t(s.iter()) * c.stage_bytes + size_t(rank) * slice, slice);
        } else {
          w.cp_async_bulk_shared_global(*stage_buf[b], off, src, (size_t(b) * c.tiles + s.iter()) * c.stage_bytes,
                                        c.stage_bytes, *pipe.full(s));
        }
        pipe.commit(s);
      }
      if (c.m != mutant::no_drain) pipe.drain(s);
    }, int(b));
    for (uint32_t k = 0; k < cw; ++k) {
      w.spawn("consumer " + std::to_string(k), [&, b, k] {
        pipeline_backend be(host, int(b), 1 + k, false);
        pipe_t pipe = pipe_t::init(st[b], p, be);
        auto s = c.m == mutant::consumer_parity_1 ? typename pipe_t::state(0, 1, 0) : pipe.consumer_start();
        std::vector<uint32_t> got(words);
        for (; s.iter() < c.tiles; ++s) {
          pipe.wait(s);
          const size_t off = size_t(s.index()) * c.stage_bytes;
          const bool early = c.m == mutant::release_before_read && k == 0 && s.iter() == 0;
          if (early) pipe.release(s);
          stage_buf[b]->read(off, got.data(), c.stage_bytes);
          const size_t tile = mc ? s.iter() : size_t(b) * c.tiles + s.iter();
          for (size_t i = 0; i < words; ++i) bad += got[i] != word_of(tile, i);
          checked += words;
          const bool skip = c.m == mutant::skip_release && k == cw - 1 && s.iter() == c.tiles / 2;
          if (!early && !skip) pipe.release(s);
        }
      }, int(b));
    }
  }
  try {
    w.run();
  } catch (const model_error& e) {
    out.reported = true;
    out.kind = e.kind();
    out.message = e.what();
  }
  return out;
}

outcome run_case(const host_case& c, bool keep_timeline = false) {
  switch (c.stages) {
    case 1: return run_once<1>(c, keep_timeline);
    case 2: return run_once<2>(c, keep_timeline);
    case 3: return run_once<3>(c, keep_timeline);
    case 4: return run_once<4>(c, keep_timeline);
    case 5: return run_once<5>(c, keep_timeline);
    case 6: return run_once<6>(c, keep_timeline);
    case 7: return run_once<7>(c, keep_timeline);
    case 8: return run_once<8>(c, keep_timeline);
    case 9: return run_once<9>(c, keep_timeline);
    case 10: return run_once<10>(c, keep_timeline);
  }
  throw std::invalid_argument("stages = " + std::to_string(c.stages) + " not instantiated (1..10)");
}

uint64_t base_seed() {
  if (const char* s = std::getenv("HOPPER_SEED")) return std::strtoull(s, nullptr, 0);
  static const uint64_t seed = std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32);
  return seed;
}

void expect_clean(const host_case& c) {
  const outcome o = run_case(c);
  ASSERT_FALSE(o.reported) << describe(c) << "\n" << o.message;
  ASSERT_EQ(o.bad_words, 0u) << describe(c);
  const uint32_t ctas = c.cluster;
  ASSERT_EQ(o.checked_words, uint64_t(ctas) * c.warpgroups * c.warps_per_group * c.tiles * (c.stage_bytes / 4))
      << describe(c) << ": every consumer must read every tile";
}

TEST(PipelineModel, StagesByWarpgroups) {
  std::mt19937_64 rng(base_seed());
  std::printf("base seed %llu (HOPPER_SEED replays)\n", (unsigned long long)base_seed());
  for (uint32_t stages = 1; stages <= 10; ++stages)
    for (uint32_t wg = 1; wg <= 4; ++wg)
      for (int rep = 0; rep < 10; ++rep) {
        host_case c;
        c.stages = stages;
        c.warpgroups = wg;
        c.tiles = uint32_t(1 + rng() % 24);
        c.stage_bytes = 16u * uint32_t(1 + rng() % 4);
        c.seed = rng();
        expect_clean(c);
        if (HasFatalFailure()) return;
      }
}

TEST(PipelineModel, ClustersWithMulticast) {
  std::mt19937_64 rng(base_seed() + 1);
  for (uint32_t cluster = 2; cluster <= 4; ++cluster)
    for (uint32_t stages = 1; stages <= 10; ++stages)
      for (uint32_t wg = 1; wg <= 4; ++wg)
        for (int rep = 0; rep < 3; ++rep) {
        host_case c;
        c.stages = stages;
        c.warpgroups = wg;
        c.cluster = cluster;
        c.multicast = true;
        c.tiles = uint32_t(1 + rng() % 16);
        c.stage_bytes = 16u * cluster * uint32_t(1 + rng() % 2);
        c.seed = rng();
        expect_clean(c);
        if (HasFatalFailure()) return;
      }
}

TEST(PipelineModel, ClustersWithoutMulticast) {
  std::mt19937_64 rng(base_seed() + 2);
  for (uint32_t cluster = 2; cluster <= 4; ++cluster)
    for (uint32_t stages : {1u, 2u, 5u}) {
      host_case c;
      c.stages = stages;
      c.warpgroups = 1;
      c.cluster = cluster;
      c.tiles = uint32_t(1 + rng() % 16);
      c.seed = rng();
      expect_clean(c);
      if (HasFatalFailure()) return;
    }
}

// Many scheduler seeds on small programs, where the interleavings differ most.
TEST(PipelineModel, ManySeeds) {
  std::mt19937_64 rng(base_seed() + 3);
  for (int i = 0; i < 3000; ++i) {
    host_case c;
    c.stages = uint32_t(1 + rng() % 4);
    c.warpgroups = 1;
    c.warps_per_group = uint32_t(1 + rng() % 4);
    c.cluster = uint32_t(1 + rng() % 2);
    c.multicast = c.cluster > 1;
    c.tiles = uint32_t(1 + rng() % 10);
    c.stage_bytes = 32;
    c.seed = rng();
    expect_clean(c);
    if (HasFatalFailure()) return;
  }
}

// Every mutant must be reported (as the kind named) on every seed tried.
struct mutant_case {
  mutant m;
  uint32_t cluster;
  std::vector<error_kind> kinds;
  bool every_seed = true;  // false: a race that only some interleavings expose
};

TEST(PipelineModel, MutantsAreReported) {
  std::mt19937_64 rng(base_seed() + 4);
  const std::vector<error_kind> any = {error_kind::raw_hazard, error_kind::war_hazard,
                                       error_kind::undefined_behavior, error_kind::deadlock};
  const std::vector<mutant_case> all = {
      {mutant::producer_parity_0, 1, {error_kind::deadlock}},
      {mutant::consumer_parity_1, 1, any},
      {mutant::skip_release, 1, {error_kind::deadlock}},
      // One arrival short: the stage is refilled while a warp reads (WAR) or before it reads (RAW),
      // or that warp's late arrival is counted on the next phase and the phases drift until a
      // wait never completes. Which one shows first depends on the interleaving.
      {mutant::empty_count_minus_1, 1, any},
      {mutant::empty_count_plus_1, 1, {error_kind::deadlock}},
      {mutant::bytes_minus_16, 1, any},  // tx-count ends at -16: the phase never completes
      {mutant::bytes_plus_16, 1, {error_kind::deadlock}},
      // A CTA exits only when all its warps are done, so the missing drain shows only where a
      // peer's consumer arrives after that: a race, reported on the seeds that schedule it.
      {mutant::no_drain, 2, {error_kind::undefined_behavior}, false},
      {mutant::release_before_read, 1, {error_kind::war_hazard}},
      {mutant::empty_count_minus_1, 2, any},
      {mutant::skip_release, 2, {error_kind::deadlock}},
  };
  for (const mutant_case& mc : all) {
    int reported = 0;
    const int reps = 100;
    for (int rep = 0; rep < reps; ++rep) {
      host_case c;
      c.m = mc.m;
      c.stages = uint32_t(1 + rng() % 4);
      c.warpgroups = 1;
      c.warps_per_group = uint32_t(2 + rng() % 3);
      c.cluster = mc.cluster;
      c.multicast = mc.cluster > 1;
      c.tiles = uint32_t(c.stages + 2 + rng() % 8);  // the ring wraps at least once
      c.stage_bytes = 64;
      c.seed = rng();
      const outcome o = run_case(c);
      if (!o.reported) {
        ASSERT_FALSE(mc.every_seed) << describe(c) << ": the mutant ran clean (" << o.bad_words << " bad words)";
        continue;
      }
      ++reported;
      bool expected_kind = false;
      for (error_kind k : mc.kinds) expected_kind = expected_kind || k == o.kind;
      ASSERT_TRUE(expected_kind) << describe(c) << ": reported as another kind:\n" << o.message;
      if (reported == 1) std::printf("[%s] %s\n", name(c.m), o.message.substr(0, 300).c_str());
    }
    std::printf("mutant %s (cluster %u): reported on %d of %d seeds\n", name(mc.m), mc.cluster, reported, reps);
    EXPECT_GE(reported, mc.every_seed ? reps : reps / 20) << name(mc.m);
  }
}

// The model's timeline has the same format as the GPU's: per warp, in order, complete.
TEST(PipelineModel, TimelineFromTheModel) {
  host_case c;
  c.stages = 3;
  c.warpgroups = 1;
  c.warps_per_group = 2;
  c.cluster = 2;
  c.multicast = true;
  c.tiles = 7;
  c.seed = base_seed();
  const outcome o = run_case(c, true);
  ASSERT_FALSE(o.reported) << o.message;
  size_t producer = 0, consumer = 0;
  for (const auto& r : o.timeline) (r.role == 0 ? producer : consumer) += 1;
  EXPECT_EQ(producer, size_t(c.cluster) * (3 * c.tiles + 2));
  EXPECT_EQ(consumer, size_t(c.cluster) * c.warps_per_group * 3 * c.tiles);
  const std::string json = hopper::trace::chrome_json(o.timeline, "model", "model steps");
  EXPECT_NE(json.find("\"name\":\"acquire\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"compute\""), std::string::npos);
  EXPECT_NE(json.find("CTA 1"), std::string::npos);
}

}  // namespace
