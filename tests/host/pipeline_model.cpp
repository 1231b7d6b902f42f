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

#include "apps/pipeline_stream_model.hpp"

namespace {

using namespace hopper::model;
using namespace hopper::apps;

uint64_t base_seed() {
  if (const char* s = std::getenv("HOPPER_SEED")) return std::strtoull(s, nullptr, 0);
  static const uint64_t seed = std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32);
  return seed;
}

void expect_clean(const host_case& c) {
  const stream_outcome o = run_case(c);
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
      // .relaxed releases are for reads already retired by the async proxy; generic reads
      // released that way are not ordered before the producer's next copy into the stage (WAR),
      // nor is the producer's wait on empty ordered after them, so its next arrive.expect_tx may
      // be one it makes before observing the full phase it completed (undefined behaviour).
      {mutant::relaxed_release, 1, {error_kind::war_hazard, error_kind::undefined_behavior}, false},
      {mutant::relaxed_release, 2, {error_kind::war_hazard, error_kind::undefined_behavior}, false},
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
      const stream_outcome o = run_case(c);
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
  const stream_outcome o = run_case(c, true);
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
