// The hazard lab's kernels (kernels/hazard_lab/hazard_lab.cuh) on the model, planned as on the
// GPU and run by kernels/hazard_lab/hazard_lab_on_model.hpp: the very bodies the GPU runs,
// instantiated with the model's target, one task per thread of 128-thread blocks. Where the GPU can only count what it
// happened to see, the model must report every unprotected case, as the hazard it demonstrates, in every seed, naming
// the buffer and the CTA; and every protected case must run clean with the data the kernels' own checks expect (their
// counters find no failure). A planted fault proves that those counters count, through the model as on the GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "kernels/hazard_lab/hazard_lab_on_model.hpp"
#include "kernels/hazard_lab/hazard_lab_plan.hpp"

using namespace hopper::model;
namespace hl = hopper::kernels::hazard_lab;
using hl::hazard_case;
using hl::on_model::lab_run;

namespace {

const char* name_of(hazard_case c) { return hl::case_name(c); }

// hazard_lab::config at the model's scale (the GPU runs 264 blocks x 256 runs of 4 KiB tiles).
hl::config model_scale() {
  hl::config k;
  k.blocks = 2;          // 2 CTAs: one cluster of 2 for the DSMEM case
  k.runs = 3;            // a WAR on reuse needs a second run; a third reuses parity 0
  k.tile_bytes = 256;    // 64 words: half the block writes one word each
  k.consumer_delay = 0;  // war_refill: clock64 polls between a consumer's reads
  return k;
}

// The trial data's seed, per model seed (hazard_lab::config::seed on the GPU).
uint64_t data_seed(uint64_t seed) { return 0x5eed000000ull ^ (seed * 0x100000001b3ull); }

// One case, planned as hazard_lab::run plans it, on the model with scheduler seed `seed` (or,
// under explore_por, the steps `chooser` picks).
lab_run run_case(hazard_case c, hl::config k, uint64_t seed, step_chooser* chooser = nullptr) {
  k.seed = data_seed(seed);
  run_options opt{seed};
  opt.chooser = chooser;
  return hl::on_model::run(hl::plan::make(c, k), opt);
}

constexpr uint64_t kSeeds = 100;  // scheduler seeds per variant

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Protected: clean in every seed, every trial's data as the kernels' checks expect.
void expect_clean(hazard_case c, hl::config k) {
  k.protect = true;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t steps = 0;
  for (uint64_t s = 1; s <= kSeeds; ++s) {
    const lab_run r = run_case(c, k, s);
    steps += r.steps;
    ASSERT_TRUE(r.clean) << name_of(c) << " with its protection, seed " << s << ": " << r.message;
    EXPECT_EQ(r.counted.failures, 0u) << name_of(c) << " with its protection, seed " << s << ": failed trials";
    EXPECT_EQ(r.counted.wrong_words, 0u) << name_of(c) << " with its protection, seed " << s << ": wrong words";
  }
  std::printf("SUMMARY hazard_model %s protected: %llu/%llu seeds clean, 0 failed trials (%.2f s, %llu steps)\n",
              name_of(c), (unsigned long long)kSeeds, (unsigned long long)kSeeds, seconds_since(t0),
              (unsigned long long)steps);
}

// The number after the first "of CTA " in `m` (-1: none).
int cta_named(const std::string& m) {
  const auto at = m.find("of CTA ");
  return at == std::string::npos ? -1 : std::atoi(m.c_str() + at + 7);
}

// Unprotected: every seed reports `kind`, on shared buffer `buf` of one of `ctas`, with `words`.
void expect_flagged_always(hazard_case c, hl::config k, error_kind kind, const std::string& buf,
                           const std::vector<int>& ctas, const std::vector<std::string>& words) {
  k.protect = false;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t flagged = 0;
  std::string first;
  for (uint64_t s = 1; s <= kSeeds; ++s) {
    const lab_run r = run_case(c, k, s);
    if (r.clean) {
      ADD_FAILURE() << name_of(c) << " unprotected, seed " << s << ": not flagged (" << r.counted.failures
                    << " failed trials)";
      continue;
    }
    ++flagged;
    if (first.empty()) first = r.message;
    EXPECT_EQ(r.kind, kind) << name_of(c) << " unprotected, seed " << s << ": " << r.message;
    const std::string at = "shared buffer '" + buf + "' of CTA ";
    EXPECT_NE(r.message.find(at), std::string::npos) << "missing \"" << at << "\" in: " << r.message;
    const int cta = cta_named(r.message);
    bool cta_ok = false;
    for (int x : ctas) cta_ok = cta_ok || x == cta;
    EXPECT_TRUE(cta_ok) << name_of(c) << ": CTA " << cta << " named in: " << r.message;
    for (const auto& wd : words)
      EXPECT_NE(r.message.find(wd), std::string::npos) << "missing '" << wd << "' in: " << r.message;
  }
  std::printf("SUMMARY hazard_model %s unprotected %llu/%llu seeds flagged (%.2f s): %s\n", name_of(c),
              (unsigned long long)flagged, (unsigned long long)kSeeds, seconds_since(t0), first.c_str());
}

// Protected with a planted fault: every trial failed exactly once and every word counted wrong.
void expect_planted_fault_counted(hazard_case c, hl::config k) {
  k.protect = true;
  k.plant_fault = true;
  for (uint64_t s = 1; s <= 3; ++s) {
    const lab_run r = run_case(c, k, s);
    ASSERT_TRUE(r.clean) << name_of(c) << " planted fault, seed " << s << ": " << r.message;
    EXPECT_EQ(r.counted.failures, r.counted.trials) << name_of(c) << " planted fault, seed " << s;
    EXPECT_EQ(r.counted.wrong_words, r.counted.trials * r.counted.words) << name_of(c) << " planted fault, seed " << s;
  }
}

TEST(HazardLabModel, RawAcrossProxiesBulkStore) {
  const hl::config k = model_scale();
  expect_clean(hazard_case::raw_proxy_bulk_store, k);
  expect_flagged_always(hazard_case::raw_proxy_bulk_store, k, error_kind::raw_hazard, "tile", {0, 1},
                        {"fence.proxy.async", "bulk store 'tile'", "(async proxy) reads the generic write"});
  expect_planted_fault_counted(hazard_case::raw_proxy_bulk_store, k);
}

TEST(HazardLabModel, RawAcrossProxiesDsmemCopy) {
  const hl::config k = model_scale();
  expect_clean(hazard_case::raw_proxy_dsmem_copy, k);
  // The source tile is in CTA 0 of the cluster; the copy lands in CTA 1's inbox.
  expect_flagged_always(
      hazard_case::raw_proxy_dsmem_copy, k, error_kind::raw_hazard, "smem", {0},
      {"fence.proxy.async", "bulk copy 'smem'+0 (CTA 0) -> 'smem'+" + std::to_string(k.tile_bytes) + " (CTA 1)"});
  expect_planted_fault_counted(hazard_case::raw_proxy_dsmem_copy, k);
}

TEST(HazardLabModel, WarRefillBeforeConsumersRelease) {
  const hl::config k = model_scale();
  expect_clean(hazard_case::war_refill_before_release, k);
  // The refill is issued while consumers have read the stage and not released it.
  expect_flagged_always(hazard_case::war_refill_before_release, k, error_kind::war_hazard, "stage", {0, 1},
                        {"bulk copy 'refill'", "may still be reading it", "released after its last read"});
  expect_planted_fault_counted(hazard_case::war_refill_before_release, k);
}

TEST(HazardLabModel, WarRefillWithConsumerWork) {
  // Consumers that poll clock64 between reads (the GPU test's 200 cycles of work per word) yield
  // to the scheduler there, so the refill may land in the middle of their reads: still a WAR
  // first, when the refill is issued.
  hl::config k = model_scale();
  k.consumer_delay = 3;
  k.tile_bytes = 512;  // 128 words: more than one read per consumer
  expect_clean(hazard_case::war_refill_before_release, k);
  expect_flagged_always(hazard_case::war_refill_before_release, k, error_kind::war_hazard, "stage", {0, 1},
                        {"bulk copy 'refill'", "may still be reading it"});
}

TEST(HazardLabModel, WarBulkStoreSourceReusedBeforeWaitGroupRead) {
  const hl::config k = model_scale();
  expect_clean(hazard_case::war_store_source_reuse, k);
  expect_flagged_always(hazard_case::war_store_source_reuse, k, error_kind::war_hazard, "tile", {0, 1},
                        {"generic write", "bulk store 'tile'", "wait_group.read"});
  expect_planted_fault_counted(hazard_case::war_store_source_reuse, k);
}

TEST(HazardLabModel, ReleaseAcquireThroughMbarrier) {
  const hl::config k = model_scale();
  expect_clean(hazard_case::release_acquire_mbarrier, k);
  // A relaxed arrive releases nothing and a relaxed wait acquires nothing: warp 2's reads are not
  // ordered after warp 1's writes.
  expect_flagged_always(hazard_case::release_acquire_mbarrier, k, error_kind::raw_hazard, "data", {0, 1},
                        {"(warp 2 lane", "reads the write of task 'thread", "(warp 1 lane", "no synchronisation"});
  expect_planted_fault_counted(hazard_case::release_acquire_mbarrier, k);
}

// Every schedule, up to the order of independent steps (explore_por), of each case with two
// trials (a reuse), in one CTA (two for the DSMEM copy, a cluster): protected, clean in every
// class with every trial's data right; unprotected, reported as the hazard its seeds report.
exploration explore_case(hazard_case c, hl::config k, uint64_t& failed_trials, uint64_t max_runs) {
  k.runs = 2;
  k.blocks = c == hazard_case::raw_proxy_dsmem_copy ? 2 : 1;
  failed_trials = 0;
  return explore_por(
      [&](const run_options& o) {
        const lab_run r = run_case(c, k, 1, o.chooser);
        outcome out;
        out.ok = r.clean;
        out.kind = r.kind;
        out.message = r.message;
        if (r.clean && !o.chooser->ended_early()) failed_trials += r.counted.failures;
        return out;
      },
      max_runs);
}

TEST(HazardLabModel, EveryScheduleOfEachCase) {
  struct expected {
    hazard_case c;
    error_kind kind;
  };
  for (const expected& x : {expected{hazard_case::raw_proxy_bulk_store, error_kind::raw_hazard},
                            expected{hazard_case::raw_proxy_dsmem_copy, error_kind::raw_hazard},
                            expected{hazard_case::war_refill_before_release, error_kind::war_hazard},
                            expected{hazard_case::war_store_source_reuse, error_kind::war_hazard}}) {
    hl::config k = model_scale();
    k.protect = true;
    uint64_t failed = 0;
    const exploration ok = explore_case(x.c, k, failed, 20000);
    EXPECT_TRUE(ok.complete) << name_of(x.c) << ": " << ok.summary();
    EXPECT_TRUE(ok.clean()) << name_of(x.c) << ": " << ok.summary();
    EXPECT_EQ(failed, 0u) << name_of(x.c) << ": failed trials in a clean class";
    k.protect = false;
    // Unprotected, a run ends at its report, so the classes are those of the prefixes up to it:
    // the first 20 runs of the exploration, each reported.
    const exploration bad = explore_case(x.c, k, failed, 20);
    EXPECT_EQ(bad.failures, bad.runs) << name_of(x.c) << " unprotected: " << bad.summary();
    for (const outcome& o : bad.failed) EXPECT_EQ(o.kind, x.kind) << o.message;
    std::printf(
        "SUMMARY hazard_model %s: protected clean in all %llu schedule classes; unprotected reported in "
        "%llu of %llu runs%s\n",
        name_of(x.c), (unsigned long long)ok.classes(), (unsigned long long)bad.failures, (unsigned long long)bad.runs,
        bad.complete ? " (every class)" : "");
  }
}

}  // namespace
