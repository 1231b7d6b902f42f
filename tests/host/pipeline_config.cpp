// Host validation of a pipeline launch: each configuration beyond what the hardware allows is
// rejected before launch with a message naming the value and the limit; the stage/phase state
// (the parity flips each time the stage index wraps) and the byte counts derived from tile types.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "hopper/pipeline/pipeline.hpp"

namespace {

using hopper::pipeline_config;
using hopper::pipeline_limits;

pipeline_config good() {
  pipeline_config c;
  c.stages = 4;
  c.stage_bytes = 32 * 1024;
  c.consumer_warps = 8;
  c.block_warps = 9;
  c.cluster_size = 2;
  c.multicast = true;
  return c;
}

std::string rejection(const pipeline_config& c, const pipeline_limits& lim = {}) {
  try {
    hopper::validate(c, lim);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PipelineConfig, AcceptsAnH200Configuration) {
  EXPECT_NO_THROW(hopper::validate(good()));
  EXPECT_EQ(good().smem_bytes(), 4u * 32768u + 4u * 16u);
}

TEST(PipelineConfig, RejectsStagesOverSharedMemory) {
  pipeline_config c = good();
  c.stages = 8;  // 8 x 32 KiB = 256 KiB > 227 KiB
  const std::string m = rejection(c);
  EXPECT_NE(m.find("stages x stage_bytes = 8 x 32768"), std::string::npos) << m;
  EXPECT_NE(m.find("shared-memory limit of 232448 bytes"), std::string::npos) << m;
  // The same against a smaller device limit: the message names that limit.
  pipeline_limits small;
  small.smem_per_block = 100 * 1024;
  c.stages = 4;
  const std::string m2 = rejection(c, small);
  EXPECT_NE(m2.find("limit of 102400 bytes"), std::string::npos) << m2;
  // Other shared memory counts too.
  c = good();
  c.extra_smem = 100 * 1024;
  EXPECT_NE(rejection(c).find("102400 other bytes"), std::string::npos) << rejection(c);
}

TEST(PipelineConfig, RejectsMoreConsumersThanWarps) {
  pipeline_config c = good();
  c.consumer_warps = 9;  // 9 consumers + 1 producer > 9 warps
  const std::string m = rejection(c);
  EXPECT_NE(m.find("consumer_warps = 9"), std::string::npos) << m;
  EXPECT_NE(m.find("block's 9 warps"), std::string::npos) << m;
  c.consumer_warps = 0;
  EXPECT_NE(rejection(c).find("consumer_warps = 0"), std::string::npos);
  c = good();
  c.block_warps = 33;
  c.consumer_warps = 32;
  const std::string m2 = rejection(c);
  EXPECT_NE(m2.find("block_warps = 33 is outside 1..32 warps (1024 threads per block)"), std::string::npos) << m2;
}

// Derived quantities are computed without wrapping: a value whose product or sum would wrap into
// the limits is rejected by name.
TEST(PipelineConfig, HugeValuesAreRejectedNotWrapped) {
  pipeline_config c = good();
  c.block_warps = 1u << 27;  // x 32 threads wraps to 0 in 32 bits
  std::string m = rejection(c);
  EXPECT_NE(m.find("block_warps = 134217728 is outside 1..32"), std::string::npos) << m;
  c = good();
  c.extra_smem = SIZE_MAX - 100;  // the shared-memory total wraps in 64 bits
  m = rejection(c);
  EXPECT_NE(m.find("extra_smem = " + std::to_string(SIZE_MAX - 100)), std::string::npos) << m;
  EXPECT_NE(m.find("overflows 64 bits"), std::string::npos) << m;
  c = good();
  c.extra_smem = 227 * 1024;  // does not wrap, still too much
  EXPECT_NE(rejection(c).find("exceeds the shared-memory limit"), std::string::npos) << rejection(c);
  c = good();
  c.consumer_warps = UINT32_MAX;  // + 1 producer warp wraps to 0
  m = rejection(c);
  EXPECT_NE(m.find("consumer_warps = 4294967295 plus the producer warp"), std::string::npos) << m;
  c = good();
  c.stages = UINT32_MAX;
  EXPECT_NE(rejection(c).find("stages = 4294967295, must be 1 to 64"), std::string::npos) << rejection(c);
  c = good();
  c.block_warps = 0;
  EXPECT_NE(rejection(c).find("block_warps = 0 is outside"), std::string::npos) << rejection(c);
}

TEST(PipelineConfig, RejectsAReleaserThatIsNotAnEnumerator) {
  pipeline_config c = good();
  c.releaser = static_cast<hopper::release_by>(9);
  const std::string m = rejection(c);
  EXPECT_NE(m.find("releaser = release_by(9) is not a release_by"), std::string::npos) << m;
}

// The limits are an argument too: larger than sm_90's they are rejected, naming the field.
TEST(PipelineConfig, RejectsLimitsBeyondTheMachine) {
  pipeline_limits lim;
  lim.smem_per_block = 300 * 1024;
  std::string m = rejection(good(), lim);
  EXPECT_NE(m.find("pipeline_limits: smem_per_block = 307200 is outside 1..232448"), std::string::npos) << m;
  lim = {};
  lim.max_threads_per_block = 4096;
  m = rejection(good(), lim);
  EXPECT_NE(m.find("max_threads_per_block = 4096"), std::string::npos) << m;
  lim = {};
  lim.max_cluster_size = 0;
  m = rejection(good(), lim);
  EXPECT_NE(m.find("max_cluster_size = 0"), std::string::npos) << m;
}

// The arrival count of the empty barriers is computed in 64 bits: 2^27 releasing warps x 32 lanes
// is 2^32, which wraps to 0 in 32 bits.
TEST(PipelineParams, FaultNamesTheField) {
  using hopper::params_fault;
  using hopper::pipeline_params;
  EXPECT_EQ(params_fault(pipeline_params{}), nullptr);
  EXPECT_NE(std::string(params_fault(pipeline_params{0})).find("releases_per_cta = 0"), std::string::npos);
  EXPECT_NE(std::string(params_fault(pipeline_params{1, 0})).find("cluster_size"), std::string::npos);
  EXPECT_NE(std::string(params_fault(pipeline_params{1, 17})).find("cluster_size"), std::string::npos);
  pipeline_params wraps{1u << 27, 1, false, hopper::release_by::each_lane};
  EXPECT_EQ(hopper::empty_arrivals(wraps), 0u);  // what 32 bits would give
  EXPECT_NE(std::string(params_fault(wraps)).find("arrival count"), std::string::npos);
  pipeline_params bad_releaser{1, 1, false, static_cast<hopper::release_by>(7)};
  EXPECT_NE(std::string(params_fault(bad_releaser)).find("releaser"), std::string::npos);
}

TEST(PipelineConfig, RejectsClusterTheDeviceCannotLaunch) {
  pipeline_config c = good();
  c.cluster_size = 16;
  const std::string m = rejection(c);
  EXPECT_NE(m.find("cluster_size = 16"), std::string::npos) << m;
  EXPECT_NE(m.find("clusters of 1 to 8 CTAs"), std::string::npos) << m;
  pipeline_limits no_clusters;
  no_clusters.max_cluster_size = 1;
  c.cluster_size = 2;
  EXPECT_NE(rejection(c, no_clusters).find("clusters of 1 to 1 CTAs"), std::string::npos);
  c.cluster_size = 0;
  EXPECT_NE(rejection(c).find("cluster_size = 0"), std::string::npos);
}

TEST(PipelineConfig, RejectsBadStageSizes) {
  pipeline_config c = good();
  c.stage_bytes = 1000;  // not a multiple of 16
  EXPECT_NE(rejection(c).find("stage_bytes = 1000, must be a positive multiple of 16"), std::string::npos);
  c.stage_bytes = 0;
  EXPECT_NE(rejection(c).find("stage_bytes = 0"), std::string::npos);
  c.stage_bytes = 48;  // 3 x 16 cannot be split into 2 multicast slices of 16 x k bytes
  EXPECT_NE(rejection(c).find("2 multicast slices"), std::string::npos) << rejection(c);
  c = good();
  c.stages = 0;
  EXPECT_NE(rejection(c).find("stages = 0, must be 1 to 64"), std::string::npos);
  c.stages = 1;
  c.stage_bytes = size_t(1) << 20;  // beyond the tx-count range
  EXPECT_NE(rejection(c).find("tx-count limit"), std::string::npos) << rejection(c);
}

TEST(PipelineState, WrapsAndFlipsParity) {
  hopper::stage_state<3> s(0, hopper::parity(1));  // a producer's start
  const uint32_t want_index[] = {0, 1, 2, 0, 1, 2, 0};
  const uint32_t want_phase[] = {1, 1, 1, 0, 0, 0, 1};
  for (int i = 0; i < 7; ++i, ++s) {
    EXPECT_EQ(s.iter(), uint32_t(i));
    EXPECT_EQ(s.index(), want_index[i]);
    EXPECT_EQ(s.parity().value(), want_phase[i]);
  }
  hopper::stage_state<1> one(0, hopper::parity(0));  // one stage: the parity flips every iteration
  ++one;
  EXPECT_EQ(one.index(), 0u);
  EXPECT_EQ(one.parity().value(), 1u);
}

// s += n lands where n single steps land (index, parity and iteration), for every start and n.
TEST(PipelineState, StepsAtOnceEqualSingleSteps) {
  std::mt19937 rng(std::random_device{}());
  for (int t = 0; t < 2000; ++t) {
    const uint32_t start = uint32_t(rng() % 7), par = uint32_t(rng() % 2), n = uint32_t(rng() % 40);
    hopper::stage_state<7> one_by_one(start, hopper::parity(par), 5), at_once = one_by_one;
    for (uint32_t i = 0; i < n; ++i) ++one_by_one;
    at_once += n;
    ASSERT_EQ(at_once.index(), one_by_one.index()) << "start " << start << " n " << n;
    ASSERT_EQ(at_once.parity().value(), one_by_one.parity().value()) << "start " << start << " n " << n;
    ASSERT_EQ(at_once.iter(), one_by_one.iter());
  }
  hopper::stage_state<4> s(3, hopper::parity(0));
  s += 1;  // wraps once: parity flips
  EXPECT_EQ(s.index(), 0u);
  EXPECT_EQ(s.parity().value(), 1u);
  s += 8;  // wraps twice: parity back
  EXPECT_EQ(s.index(), 0u);
  EXPECT_EQ(s.parity().value(), 1u);
}

TEST(PipelineState, BytesFromTileTypes) {
  struct a_tile {
    float v[64][32];
  };
  struct b_tile {
    uint16_t v[128][64];
  };
  static_assert(hopper::stage_bytes_of<a_tile, b_tile> == 64 * 32 * 4 + 128 * 64 * 2);
  EXPECT_EQ(hopper::stage_bytes_of<a_tile>, 8192u);
}

TEST(PipelineParams, EmptyArrivalsFollowTheReleaseForm) {
  using hopper::release_by;
  hopper::pipeline_params p{8, 4, true};  // automatic: warp_leader with multicast
  EXPECT_EQ(hopper::release_form(p), release_by::warp_leader);
  EXPECT_EQ(hopper::empty_arrivals(p), 32u);  // every receiving CTA's consumer warps
  p.multicast = false;                        // automatic: each_lane without
  EXPECT_EQ(hopper::release_form(p), release_by::each_lane);
  EXPECT_EQ(hopper::empty_arrivals(p), 8u * 32u);
  p.releaser = release_by::warp_leader;
  EXPECT_EQ(hopper::empty_arrivals(p), 8u);
  p.multicast = true, p.releaser = release_by::each_lane;  // each lane arrives on all 4 CTAs
  EXPECT_EQ(hopper::empty_arrivals(p), 8u * 32u * 4u);
  p.cluster_size = 1;  // multicast within one CTA is no multicast: automatic is each_lane
  p.releaser = release_by::automatic;
  EXPECT_EQ(hopper::release_form(p), release_by::each_lane);
}

}  // namespace
