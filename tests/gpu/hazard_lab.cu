// The hazard lab on the H200: every protected case must show zero
// failures over many thousands of trials; every unprotected case is run as often and its
// observed failure count is printed (SUMMARY hazard ...), never asserted: the hardware may not
// show a hazard that the memory model allows. A trial counts once however many of its words are
// wrong; wrong words are counted apart. A planted fault (the checker expecting the complement of
// every word) proves that both counters count, and count a trial only once.
#include <cstdio>

#include "gpu_test.hpp"
#include "kernels/hazard_lab/hazard_lab.cuh"

namespace {

namespace hl = hopper::kernels::hazard_lab;
using hl::hazard_case;

constexpr int kRuns = 256;  // per block; 264 blocks -> 67584 trials per variant

hl::config base(hazard_case c) {
  hl::config k;
  k.blocks = 264;
  k.runs = kRuns;
  k.tile_bytes = 4096;
  k.seed = hopper_test::fresh_seed() ^ uint64_t(c) * 0x1000193ull;
  if (c == hazard_case::war_refill_before_release) k.consumer_delay = 200;  // consumers "compute" on the stage
  return k;
}

uint64_t expected_trials(hazard_case c, const hl::config& k) {
  return uint64_t(c == hazard_case::raw_proxy_dsmem_copy ? k.blocks / 2 : k.blocks) * uint64_t(k.runs);
}

// What holds for any run: a trial fails at most once, a failed trial has at least one wrong word,
// and no more words are wrong than were checked.
void expect_consistent(const char* what, const hl::result& r) {
  EXPECT_LE(r.failures, r.trials) << what;
  EXPECT_GE(r.wrong_words, r.failures) << what;
  EXPECT_LE(r.wrong_words, r.trials * r.words) << what;
  if (r.failures == 0) EXPECT_EQ(r.wrong_words, 0u) << what;
}

// Protected: zero failures. Unprotected: recorded. Planted: every trial failed, every word wrong.
void lab(hazard_case c) {
  std::printf("seed %llu (HOPPER_SEED to replay)\n", (unsigned long long)hopper_test::fresh_seed());
  hl::config k = base(c);
  hl::result with{}, without{}, planted{};

  k.protect = true;
  CUDA_OK(hl::run(c, k, &with));
  EXPECT_EQ(with.trials, expected_trials(c, k));
  EXPECT_EQ(with.words, uint64_t(k.tile_bytes / 4));
  EXPECT_EQ(with.failures, 0u) << hl::case_name(c) << " with its protection failed " << with.failures << " of "
                               << with.trials << " trials";
  EXPECT_EQ(with.wrong_words, 0u) << hl::case_name(c) << " with its protection";

  k.protect = false;
  CUDA_OK(hl::run(c, k, &without));
  EXPECT_EQ(without.trials, expected_trials(c, k));
  expect_consistent("unprotected", without);
  std::printf("SUMMARY hazard %s unprotected %llu/%llu protected %llu/%llu wrong_words %llu/%llu\n", hl::case_name(c),
              (unsigned long long)without.failures, (unsigned long long)without.trials,
              (unsigned long long)with.failures, (unsigned long long)with.trials,
              (unsigned long long)without.wrong_words, (unsigned long long)(without.trials * without.words));

  k.protect = true;
  k.plant_fault = true;
  k.runs = 8;
  CUDA_OK(hl::run(c, k, &planted));
  EXPECT_EQ(planted.trials, expected_trials(c, k));
  expect_consistent("planted", planted);
  EXPECT_EQ(planted.failures, planted.trials)
      << "the checker of " << hl::case_name(c) << " missed a planted fault or counted a trial twice";
  EXPECT_EQ(planted.wrong_words, planted.trials * planted.words)
      << "the word counter of " << hl::case_name(c) << " missed planted wrong words or counted one twice";
}

TEST(HazardLab, RawAcrossProxiesBulkStore) {
  HOPPER_REQUIRE_SM90();
  lab(hazard_case::raw_proxy_bulk_store);
}

TEST(HazardLab, RawAcrossProxiesDsmemBulkCopy) {
  HOPPER_REQUIRE_SM90();
  lab(hazard_case::raw_proxy_dsmem_copy);
}

TEST(HazardLab, WarRefillBeforeConsumersRelease) {
  HOPPER_REQUIRE_SM90();
  lab(hazard_case::war_refill_before_release);
}

TEST(HazardLab, WarBulkStoreSourceReusedBeforeWaitGroupRead) {
  HOPPER_REQUIRE_SM90();
  lab(hazard_case::war_store_source_reuse);
}

TEST(HazardLab, ReleaseAcquireThroughMbarrier) {
  HOPPER_REQUIRE_SM90();
  lab(hazard_case::release_acquire_mbarrier);
}

// The WAR refill window grows with the consumers' work per word: record the unprotected rate
// for a few amounts of work, and that the protected run stays clean at each.
TEST(HazardLab, WarRefillByConsumerWork) {
  HOPPER_REQUIRE_SM90();
  for (int delay : {0, 50, 1000}) {
    hl::config k = base(hazard_case::war_refill_before_release);
    k.runs = 64;
    k.consumer_delay = delay;
    hl::result with{}, without{};
    k.protect = true;
    CUDA_OK(hl::run(hazard_case::war_refill_before_release, k, &with));
    EXPECT_EQ(with.failures, 0u) << "delay " << delay;
    EXPECT_EQ(with.wrong_words, 0u) << "delay " << delay;
    k.protect = false;
    CUDA_OK(hl::run(hazard_case::war_refill_before_release, k, &without));
    expect_consistent("unprotected", without);
    std::printf("SUMMARY hazard war_refill_before_release_delay%d unprotected %llu/%llu wrong_words %llu/%llu\n", delay,
                (unsigned long long)without.failures, (unsigned long long)without.trials,
                (unsigned long long)without.wrong_words, (unsigned long long)(without.trials * without.words));
  }
}

// A bad configuration is rejected before any launch, naming the value (no GPU needed): run()
// runs only what hazard_lab::plan::make accepts (tests/host/hazard_lab_plan.cpp: every refusal).
TEST(HazardLab, RejectsBadConfig) {
  hl::result r{};
  hl::config k;
  k.blocks = 3;
  try {
    (void)hl::run(hazard_case::raw_proxy_dsmem_copy, k, &r);
    ADD_FAILURE() << "accepted an odd number of blocks for clusters of 2";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("blocks 3 is odd"), std::string::npos) << e.what();
  }
}

}  // namespace
