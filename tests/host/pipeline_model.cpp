// The streaming kernel of apps/pipeline_stream.cuh on the executable model: its
// own body (apps/pipeline_stream_body.hpp) instantiated with the model's target, every thread of
// the launch a task under the seeded scheduler, hopper::pipeline over the model's barriers. Over 1
// to 10 stages, 1 to 4 consumer warpgroups, clusters of 2 and 4 CTAs with and without multicast,
// random iteration counts and many seeds: no deadlock, no hazard, and every word the consumers
// stored to dst is the word of the source tile the layout says (dst is poisoned before the run,
// so a tile never written shows). Mutants planted in the body itself (wrong initial parity, a
// skipped release, counts off by one, wrong transaction bytes, no drain, release before the last
// read, a .relaxed release of generic reads) must be reported by the model, as the kind named and
// naming the barrier or buffer and its CTA: the checks can fail.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "apps/pipeline_stream_on_model.hpp"

namespace {

using namespace hopper::apps;
using hopper::model::error_kind;

uint64_t base_seed() {
  if (const char* s = std::getenv("HOPPER_SEED")) return std::strtoull(s, nullptr, 0);
  static const uint64_t seed = std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32);
  return seed;
}

// Wall time of a test body, printed so that the cost of the thread-per-task model stays visible.
struct timed {
  const char* what;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  int runs = 0;
  uint64_t steps = 0;
  size_t max_tasks = 0;
  void note(const stream_outcome& o) {
    ++runs;
    steps += o.steps;
    max_tasks = o.tasks > max_tasks ? o.tasks : max_tasks;
  }
  ~timed() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %d runs, %llu scheduler steps, up to %zu thread tasks, %.2f s\n", what, runs,
                (unsigned long long)steps, max_tasks, s);
  }
};

void expect_clean(const host_case& c, timed& tm) {
  const stream_outcome o = run_case(c);
  tm.note(o);
  ASSERT_FALSE(o.reported) << describe(c) << "\n" << o.message;
  ASSERT_EQ(o.checked_words, uint64_t(c.ctas()) * c.tiles * (c.stage_bytes / 4))
      << describe(c) << ": every word of dst must be checked";
  ASSERT_EQ(o.bad_words, 0u) << describe(c) << ": " << o.first_bad;
}

TEST(PipelineModel, StagesByWarpgroups) {
  std::printf("base seed %llu (HOPPER_SEED replays)\n", (unsigned long long)base_seed());
  std::mt19937_64 rng(base_seed());
  timed tm{"StagesByWarpgroups"};
  for (uint32_t stages = 1; stages <= 10; ++stages)
    for (uint32_t wg = 1; wg <= 4; ++wg)
      for (int rep = 0; rep < 4; ++rep) {
        host_case c;
        c.stages = stages;
        c.warpgroups = wg;
        c.tiles = uint32_t(1 + rng() % 12);
        // Up to 16 vectors a stage: with 4 to 16 consumer warps most lanes read nothing, so some
        // cases put a stage's vectors across several warps (a warp reads lanes 0..31 of a slice).
        c.stage_bytes = 16u * uint32_t(1 + rng() % 4) * (rep % 2 ? 1u : 4u);
        c.seed = rng();
        expect_clean(c, tm);
        if (HasFatalFailure()) return;
      }
}

// A stage wider than one warp's 32 vectors: every consumer warp reads, strided.
TEST(PipelineModel, EveryConsumerWarpReads) {
  std::mt19937_64 rng(base_seed() + 5);
  timed tm{"EveryConsumerWarpReads"};
  for (uint32_t wg = 1; wg <= 2; ++wg) {
    host_case c;
    c.stages = 2 + wg;
    c.warpgroups = wg;
    c.tiles = 3;
    c.stage_bytes = 16u * 32u * 4u * wg + 16u * 32u;  // every warp one vector, some two
    c.seed = rng();
    expect_clean(c, tm);
    if (HasFatalFailure()) return;
  }
}

TEST(PipelineModel, ClustersWithMulticast) {
  std::mt19937_64 rng(base_seed() + 1);
  timed tm{"ClustersWithMulticast"};
  for (uint32_t cluster : {2u, 4u})
    for (uint32_t stages = 1; stages <= 10; ++stages)
      for (int rep = 0; rep < 2; ++rep) {
        host_case c;
        c.stages = stages;
        c.warpgroups = cluster == 2 ? 1 + (stages + rep) % 2 : 1;
        c.warps_per_group = cluster == 2 ? 4 : 2 + stages % 3;
        c.cluster = cluster;
        c.clusters = stages % 3 == 0 ? 2 : 1;  // a second cluster: its own source tiles
        c.multicast = true;
        c.tiles = uint32_t(1 + rng() % 8);
        c.stage_bytes = 16u * cluster * uint32_t(1 + rng() % 2);
        c.seed = rng();
        expect_clean(c, tm);
        if (HasFatalFailure()) return;
      }
  // Four consumer warpgroups in clusters of 4: the widest launch (2176 thread tasks).
  host_case c;
  c.stages = 3;
  c.warpgroups = 4;
  c.cluster = 4;
  c.multicast = true;
  c.tiles = 4;
  c.stage_bytes = 64;
  c.seed = rng();
  expect_clean(c, tm);
}

TEST(PipelineModel, ClustersWithoutMulticast) {
  std::mt19937_64 rng(base_seed() + 2);
  timed tm{"ClustersWithoutMulticast"};
  for (uint32_t cluster : {2u, 4u})
    for (uint32_t stages : {1u, 2u, 5u}) {
      host_case c;
      c.stages = stages;
      c.warpgroups = 1;
      c.warps_per_group = cluster == 2 ? 4 : 2;
      c.cluster = cluster;
      c.clusters = stages == 2 ? 2 : 1;
      c.tiles = uint32_t(1 + rng() % 10);
      c.stage_bytes = 16u * uint32_t(1 + rng() % 4);
      c.seed = rng();
      expect_clean(c, tm);
      if (HasFatalFailure()) return;
    }
}

// Many scheduler seeds on small programs, where the interleavings differ most.
TEST(PipelineModel, ManySeeds) {
  std::mt19937_64 rng(base_seed() + 3);
  timed tm{"ManySeeds"};
  for (int i = 0; i < 1500; ++i) {
    host_case c;
    c.stages = uint32_t(1 + rng() % 4);
    c.warpgroups = 1;
    c.warps_per_group = uint32_t(1 + rng() % 3);
    c.cluster = uint32_t(1 + rng() % 2);
    c.multicast = c.cluster > 1 && rng() % 4 != 0;
    c.tiles = uint32_t(1 + rng() % 8);
    c.stage_bytes = 32;
    c.seed = rng();
    expect_clean(c, tm);
    if (HasFatalFailure()) return;
  }
}

// Every mutant must be reported (as a kind named) on every seed tried, or on some seeds for a race
// that only some interleavings expose; the report names the barrier or buffer and the CTA.
struct mutant_case {
  mutant m;
  uint32_t cluster;
  std::vector<error_kind> kinds;
  std::vector<std::string> names;  // the report names one of these
  bool every_seed = true;
  std::string also = {};  // the report must contain this too
  uint32_t stage_bytes = 64;
};

TEST(PipelineModel, MutantsAreReported) {
  std::mt19937_64 rng(base_seed() + 4);
  timed tm{"MutantsAreReported"};
  const auto raw = error_kind::raw_hazard, war = error_kind::war_hazard, ub = error_kind::undefined_behavior,
             dl = error_kind::deadlock, wp = error_kind::wrong_phase;
  const std::vector<error_kind> any = {raw, war, ub, dl, wp};
  const std::vector<std::string> barrier = {"full[", "empty["}, buffer = {"'stages'"},
                                 either = {"full[", "empty[", "'stages'"};
  const std::vector<mutant_case> all = {
      {mutant::producer_parity_0, 1, {dl}, barrier},
      {mutant::consumer_parity_1, 1, any, either},
      {mutant::skip_release, 1, {dl}, barrier},
      // One arrival short: the last warp's arrival races the phase (counted on it or on the next
      // one, by the schedule), unless the stage is refilled while that warp still reads (WAR).
      {mutant::empty_count_minus_1, 1, {wp, war}, either},
      {mutant::empty_count_plus_1, 1, {dl}, barrier},
      {mutant::bytes_minus_16, 1, any, either},  // tx-count ends at -16: the phase never completes
      {mutant::bytes_plus_16, 1, {dl}, barrier},
      // A CTA exits only when all its threads are done, so the missing drain shows only where a
      // peer's consumer arrives after that: a race, reported on the seeds that schedule it.
      {mutant::no_drain, 2, {ub}, barrier, false},
      {mutant::release_before_read, 1, {war, raw}, buffer},
      // .relaxed releases are for reads already retired by the async proxy; generic reads released
      // that way are not ordered before the producer's next copy into the stage: a WAR at that
      // copy, naming the reader's .relaxed arrive. (With multicast, 16-byte slices: lane r reads
      // slice r and is the lane that arrives on CTA r, whose producer copies that slice.)
      {mutant::relaxed_release, 1, {war}, buffer, true, ".relaxed"},
      {mutant::relaxed_release, 2, {war}, buffer, true, ".relaxed", 32},
      {mutant::empty_count_minus_1, 2, {wp, war}, either},
      {mutant::skip_release, 2, {dl}, barrier},
  };
  for (const mutant_case& mc : all) {
    int reported = 0;
    const int reps = 100;
    std::map<error_kind, int> by_kind;
    for (int rep = 0; rep < reps; ++rep) {
      host_case c;
      c.m = mc.m;
      c.stages = uint32_t(1 + rng() % 4);
      c.warpgroups = 1;
      c.warps_per_group = uint32_t(2 + rng() % 3);
      c.cluster = mc.cluster;
      c.multicast = mc.cluster > 1;
      c.tiles = uint32_t(c.stages + 2 + rng() % 6);  // the ring wraps at least once
      c.stage_bytes = mc.stage_bytes;
      c.seed = rng();
      const stream_outcome o = run_case(c);
      tm.note(o);
      if (!o.reported) {
        ASSERT_FALSE(mc.every_seed) << describe(c) << ": the mutant ran clean ("
                                    << (o.bad_words ? o.first_bad : std::string("dst as expected")) << ")";
        continue;
      }
      ++reported;
      ++by_kind[o.kind];
      bool expected_kind = false;
      for (error_kind k : mc.kinds) expected_kind = expected_kind || k == o.kind;
      ASSERT_TRUE(expected_kind) << describe(c) << ": reported as another kind:\n" << o.message;
      bool named = false;
      for (const std::string& n : mc.names) named = named || o.message.find(n) != std::string::npos;
      EXPECT_TRUE(named) << describe(c) << ": the report names no barrier or buffer of the pipeline:\n"
                         << o.message.substr(0, 2000);
      EXPECT_NE(o.message.find("CTA "), std::string::npos) << describe(c) << ": the report names no CTA";
      if (!mc.also.empty()) {
        EXPECT_NE(o.message.find(mc.also), std::string::npos)
            << describe(c) << ": the report does not say '" << mc.also << "':\n"
            << o.message;
      }
      if (reported == 1) std::printf("[%s] %s\n", name(c.m), o.message.substr(0, 300).c_str());
    }
    std::string kinds;
    for (const auto& [k, n] : by_kind)
      kinds += std::string(kinds.empty() ? "" : ", ") + to_string(k) + " " + std::to_string(n);
    std::printf("mutant %s (cluster %u): reported on %d of %d seeds (%s)\n", name(mc.m), mc.cluster, reported, reps,
                kinds.c_str());
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
  ASSERT_EQ(o.bad_words, 0u) << o.first_bad;
  size_t producer = 0, consumer = 0;
  for (const auto& r : o.timeline) (r.role == 0 ? producer : consumer) += 1;
  // Lane 0 of each warp records: the producer acquire_begin/end and issued per tile plus the drain's
  // two; each consumer warp wait_begin/end and release per tile.
  EXPECT_EQ(producer, size_t(c.cluster) * (3 * c.tiles + 2));
  EXPECT_EQ(consumer, size_t(c.cluster) * c.warps_per_group * 3 * c.tiles);
  for (const auto& r : o.timeline) {
    EXPECT_LT(r.cta, c.cluster);
    EXPECT_EQ(r.role == 0, r.warp == 0) << "warp 0 produces, warps 1.. consume";
  }
  const std::string json = hopper::trace::chrome_json(o.timeline, "model", "model steps");
  EXPECT_NE(json.find("\"name\":\"acquire\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"compute\""), std::string::npos);
  EXPECT_NE(json.find("CTA 1"), std::string::npos);
}

}  // namespace

namespace {

// Two consumer warps and 2 stages: 3 tiles in one CTA (the ring wraps), 2 in a cluster of 2 with
// multicast.
host_case two_warps(uint32_t cluster, mutant m = mutant::none) {
  host_case c;
  c.m = m;
  c.stages = 2;
  c.tiles = cluster > 1 ? 2 : 3;
  c.warpgroups = 1;
  c.warps_per_group = 2;
  c.cluster = cluster;
  c.multicast = cluster > 1;
  c.stage_bytes = 64;
  return c;
}

// One run of case c under explore_por's chooser; `wrong` counts complete clean runs with wrong words.
hopper::model::outcome explored(host_case c, const hopper::model::run_options& o, uint64_t* wrong = nullptr) {
  c.chooser = o.chooser;
  const stream_outcome s = run_case(c);
  hopper::model::outcome r;
  r.ok = !s.reported;
  r.kind = s.kind;
  r.message = s.message;
  if (wrong && r.ok && !o.chooser->ended_early() && s.bad_words) ++*wrong;
  return r;
}

}  // namespace

// Every schedule of the pipeline with two consumer warps (two_warps), up to the order of
// independent steps (explore_por), in one CTA and in a cluster of 2 with multicast: clean in
// every class, with every word right, and the exploration complete. Then the mutants: each is
// reported in the exploration, and the runs it needs to the first report are set beside the
// seeds a random search needs.
TEST(PipelineModel, CleanInEverySchedule) {
  for (uint32_t cluster : {1u, 2u}) {
    const host_case c = two_warps(cluster);
    uint64_t wrong = 0;
    const hopper::model::exploration e =
        hopper::model::explore_por([&](const hopper::model::run_options& o) { return explored(c, o, &wrong); }, 20000);
    EXPECT_TRUE(e.complete) << describe(c) << ": " << e.summary();
    EXPECT_TRUE(e.clean()) << describe(c) << ": " << e.summary();
    EXPECT_EQ(wrong, 0u) << describe(c);
    std::printf("    %s: clean in all %llu schedule classes (%llu runs ended early as redundant)\n",
                describe(c).c_str(), (unsigned long long)e.classes(), (unsigned long long)e.sleep_blocked);
  }
}

TEST(PipelineModel, MutantsFoundByTheExploration) {
  struct found {
    mutant m;
    uint32_t cluster;
  };
  for (const found& f :
       {found{mutant::producer_parity_0, 1}, found{mutant::consumer_parity_1, 1}, found{mutant::skip_release, 1},
        found{mutant::empty_count_minus_1, 1}, found{mutant::empty_count_plus_1, 1}, found{mutant::bytes_minus_16, 1},
        found{mutant::bytes_plus_16, 1}, found{mutant::no_drain, 2}, found{mutant::release_before_read, 1},
        found{mutant::relaxed_release, 1}}) {
    const host_case c = two_warps(f.cluster, f.m);
    // Runs of the exploration to the first report.
    const hopper::model::exploration e = hopper::model::explore_por(
        [&](const hopper::model::run_options& o) { return explored(c, o); }, 20000, {}, true);
    ASSERT_GT(e.first_failure, 0u) << describe(c) << ": no class of the exploration reports the mutant";
    const uint64_t por_runs = e.first_failure;
    // Seeds of a random search to the first report (at most 1000).
    uint64_t seeds = 0;
    for (uint64_t s = 1; s <= 1000; ++s) {
      host_case k = c;
      k.seed = s;
      seeds = s;
      if (run_case(k).reported) break;
    }
    std::printf("    %-22s first reported in run %llu of the exploration, at seed %llu of a random search\n", name(f.m),
                (unsigned long long)por_runs, (unsigned long long)seeds);
  }
}
