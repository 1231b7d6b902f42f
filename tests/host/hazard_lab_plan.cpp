// The hazard lab's launch plan (kernels/hazard_lab/hazard_lab_plan.hpp), which hazard_lab::run
// and the model runner both run: each case's grid, cluster, shared memory, buffers and checker as
// the case needs them, every trial's slot read by exactly one checker CTA, and a bad config
// refused before anything is planned, naming the value.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/hazard_lab/hazard_lab_on_model.hpp"
#include "kernels/hazard_lab/hazard_lab_plan.hpp"

namespace hl = hopper::kernels::hazard_lab;
using hl::hazard_case;

namespace {

const hazard_case kCases[] = {hazard_case::raw_proxy_bulk_store, hazard_case::raw_proxy_dsmem_copy,
                              hazard_case::war_refill_before_release, hazard_case::war_store_source_reuse,
                              hazard_case::release_acquire_mbarrier};

TEST(HazardLabPlan, EachCaseLaunchesWhatItNeeds) {
  hl::config k;  // the GPU's: 264 blocks x 64 runs of 4 KiB
  for (hazard_case c : kCases) {
    const hl::plan p = hl::plan::make(c, k);
    const bool dsmem = c == hazard_case::raw_proxy_dsmem_copy;
    SCOPED_TRACE(hl::case_name(c));
    EXPECT_EQ(p.grid, uint32_t(k.blocks));
    EXPECT_EQ(p.block, uint32_t(hl::kThreads));
    EXPECT_EQ(p.cluster, dsmem ? 2u : 1u);
    EXPECT_EQ(p.smem_bytes, size_t(k.tile_bytes) * (dsmem ? 2 : 1));  // the tile (DSMEM: and the inbox)
    EXPECT_EQ(p.words, k.tile_bytes / 4);
    EXPECT_EQ(p.trials, uint64_t(dsmem ? k.blocks / 2 : k.blocks) * uint64_t(k.runs));
    EXPECT_EQ(p.expect_xor, 0u);
    // One slot per trial, one checker CTA per slot; the other cases count in their kernel.
    EXPECT_EQ(p.out_bytes, p.checked_after() ? size_t(p.trials) * size_t(k.tile_bytes) : 0u);
    EXPECT_EQ(p.check_grid, p.checked_after() ? uint32_t(p.trials) : 0u);
    EXPECT_EQ(p.src_bytes, c == hazard_case::war_refill_before_release ? size_t(k.blocks) * size_t(k.tile_bytes) : 0u);
    const hl::result r = p.empty_result();
    EXPECT_EQ(r.trials, p.trials);
    EXPECT_EQ(r.words, uint64_t(p.words));
  }
  k.plant_fault = true;
  EXPECT_EQ(hl::plan::make(hazard_case::war_store_source_reuse, k).expect_xor, 0xFFFFFFFFu);
}

TEST(HazardLabPlan, RefillSourcesDifferInEveryWord) {
  hl::config k;
  k.blocks = 3;
  k.tile_bytes = 64;
  const hl::plan p = hl::plan::make(hazard_case::war_refill_before_release, k);
  std::vector<uint32_t> first(p.src_bytes / 4), refill(p.src_bytes / 4);
  p.fill_sources(first.data(), refill.data());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(refill[i], ~first[i]) << "word " << i;
    EXPECT_EQ(first[i], hl::pattern(k.seed, uint32_t(i / 16), 0, uint32_t(i % 16))) << "word " << i;
  }
}

TEST(HazardLabPlan, BadConfigIsRefusedByName) {
  auto expect_refused = [](hazard_case c, hl::config k, const std::string& says) {
    try {
      (void)hl::plan::make(c, k);
      ADD_FAILURE() << "planned: " << says;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("hazard_lab ") + hl::case_name(c) + ": " + says),
                std::string::npos)
          << e.what();
    }
  };
  hl::config k;
  k.blocks = 0;
  expect_refused(hazard_case::raw_proxy_bulk_store, k, "blocks 0");
  k = {};
  k.blocks = 3;
  expect_refused(hazard_case::raw_proxy_dsmem_copy, k, "blocks 3 is odd");
  k = {};
  k.tile_bytes = 24;
  expect_refused(hazard_case::war_store_source_reuse, k, "tile_bytes 24");
  k = {};
  k.runs = 0;
  expect_refused(hazard_case::release_acquire_mbarrier, k, "runs 0");
  k = {};
  k.consumer_delay = -1;
  expect_refused(hazard_case::war_refill_before_release, k, "consumer_delay -1");
  k = {};
  k.blocks = 65535, k.runs = 100000;
  expect_refused(hazard_case::raw_proxy_bulk_store, k, "blocks*runs*tile_bytes");
}

// The model runs the plan it is given: its counters count every planned trial once.
TEST(HazardLabPlan, TheModelRunsThePlan) {
  hl::config k;
  k.blocks = 2, k.runs = 2, k.tile_bytes = 64, k.plant_fault = true;
  for (hazard_case c : kCases) {
    const hl::plan p = hl::plan::make(c, k);
    const hl::on_model::lab_run r = hl::on_model::run(p, hopper::model::run_options{7});
    ASSERT_TRUE(r.clean) << hl::case_name(c) << ": " << r.message;
    EXPECT_EQ(r.counted.trials, p.trials) << hl::case_name(c);
    EXPECT_EQ(r.counted.failures, p.trials) << hl::case_name(c);
    EXPECT_EQ(r.counted.wrong_words, p.trials * uint64_t(p.words)) << hl::case_name(c);
  }
}

}  // namespace
