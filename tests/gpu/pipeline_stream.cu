// hopper::pipeline on the H200: real cp.async.bulk copies (multicast in clusters) through 1 to 10
// stages, 1 to 4 consumer warpgroups, clusters of 1 to 4 CTAs; every tile each CTA's consumers
// wrote out is compared with the source tile of that iteration. A traced run checks the timeline.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "apps/pipeline_stream.cuh"
#include "gpu_test.hpp"
#include "kernels/dispatch.hpp"

namespace {

using hopper::pipeline_config;

// Dispatch the runtime stage count to the kernel's template parameter.
template <bool Traced>
cudaError_t launch(uint32_t stages, const uint4* src, uint4* dst, uint32_t ctas, uint32_t tiles,
                   const pipeline_config& cfg, hopper::trace::sink sink = {}) {
  static_assert(!Traced, "the traced kernel is instantiated once, in TraceIsCompleteAndCausal");
  using namespace hopper::apps;
  if (!hopper::kernels::one_of<1, 2, 3, 4, 5, 6, 7, 8, 9, 10>(stages))
    throw std::invalid_argument("stages = " + std::to_string(stages) + " not instantiated (1..10)");
  return hopper::kernels::with_value<1, 2, 3, 4, 5, 6, 7, 8, 9, 10>(stages, [&](auto s) {
    return launch_pipeline_stream<decltype(s)::value, Traced>(src, dst, ctas, tiles, cfg, sink);
  });
}

struct case_t {
  uint32_t stages, warpgroups, cluster, ctas, tiles;
  size_t stage_bytes;
  bool multicast;
  hopper::release_by releaser = hopper::release_by::automatic;
};

const char* name_of(hopper::release_by r) {
  return r == hopper::release_by::each_lane     ? "each_lane"
         : r == hopper::release_by::warp_leader ? "warp_leader"
                                                : "automatic";
}

std::string describe(const case_t& c) {
  return "stages=" + std::to_string(c.stages) + " warpgroups=" + std::to_string(c.warpgroups) +
         " cluster=" + std::to_string(c.cluster) + (c.multicast ? " multicast" : "") +
         " ctas=" + std::to_string(c.ctas) + " tiles=" + std::to_string(c.tiles) +
         " stage_bytes=" + std::to_string(c.stage_bytes) + " releaser=" + name_of(c.releaser);
}

pipeline_config config_of(const case_t& c) {
  pipeline_config cfg;
  cfg.stages = c.stages;
  cfg.stage_bytes = c.stage_bytes;
  cfg.consumer_warps = 4 * c.warpgroups;
  cfg.block_warps = 1 + 4 * c.warpgroups;
  cfg.cluster_size = c.cluster;
  cfg.multicast = c.multicast;
  cfg.releaser = c.releaser;
  return cfg;
}

// What dst must hold: see apps/pipeline_stream.cuh for the layout.
std::vector<uint32_t> expected(const case_t& c, const std::vector<uint32_t>& src) {
  const size_t words = c.stage_bytes / 4;
  std::vector<uint32_t> out(size_t(c.ctas) * c.tiles * words);
  for (uint32_t b = 0; b < c.ctas; ++b)
    for (uint32_t t = 0; t < c.tiles; ++t) {
      const size_t from = c.multicast ? size_t(b / c.cluster) * c.tiles + t : size_t(b) * c.tiles + t;
      std::copy_n(src.begin() + long(from * words), words, out.begin() + long((size_t(b) * c.tiles + t) * words));
    }
  return out;
}

// One run: fresh random source, poisoned destination, compare.
void run_case(const case_t& c, std::mt19937_64& rng) {
  SCOPED_TRACE(describe(c));
  const size_t words = c.stage_bytes / 4;
  const size_t src_tiles = c.multicast ? size_t(c.ctas / c.cluster) * c.tiles : size_t(c.ctas) * c.tiles;
  std::vector<uint32_t> src(src_tiles * words);
  for (auto& w : src) w = uint32_t(rng());
  const std::vector<uint32_t> want = expected(c, src);

  uint32_t *d_src = nullptr, *d_dst = nullptr;
  CUDA_OK(cudaMalloc(&d_src, src.size() * 4));
  CUDA_OK(cudaMalloc(&d_dst, want.size() * 4));
  CUDA_OK(cudaMemcpy(d_src, src.data(), src.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_dst, 0xA5, want.size() * 4));  // poison
  CUDA_OK(launch<false>(c.stages, reinterpret_cast<const uint4*>(d_src), reinterpret_cast<uint4*>(d_dst), c.ctas,
                        c.tiles, config_of(c)));
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> got(want.size());
  CUDA_OK(cudaMemcpy(got.data(), d_dst, got.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(d_src));
  CUDA_OK(cudaFree(d_dst));
  size_t bad = 0, first = SIZE_MAX;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      if (first == SIZE_MAX) first = i;
      ++bad;
    }
  ASSERT_EQ(bad, 0u) << "first mismatch at word " << first << " (CTA " << first / (c.tiles * words) << ", iteration "
                     << (first / words) % c.tiles << "): got " << got[first] << ", want " << want[first];
}

case_t random_case(std::mt19937_64& rng, uint32_t stages, uint32_t warpgroups, uint32_t cluster, bool mc) {
  case_t c{};
  c.stages = stages;
  c.warpgroups = warpgroups;
  c.cluster = cluster;
  c.multicast = mc;
  c.ctas = cluster * uint32_t(1 + rng() % 6);
  c.tiles = uint32_t(1 + rng() % 60);
  // A stage of 1 to 32 units of 16 * cluster bytes, within ~200 KiB of shared memory in total.
  const size_t unit = 16u * cluster;
  const size_t max_units = std::min<size_t>(32 * 1024 / unit, (200u * 1024u / stages) / unit);
  c.stage_bytes = unit * (1 + rng() % max_units);
  return c;
}

TEST(PipelineGpu, StagesByWarpgroupsSingleCta) {
  HOPPER_REQUIRE_SM90();
  std::mt19937_64 rng(hopper_test::fresh_seed());
  std::printf("seed %llu\n", (unsigned long long)hopper_test::fresh_seed());
  for (uint32_t stages = 1; stages <= 10; ++stages)
    for (uint32_t wg = 1; wg <= 4; ++wg) {
      run_case(random_case(rng, stages, wg, 1, false), rng);
      if (HasFatalFailure()) return;
    }
}

TEST(PipelineGpu, ClustersWithMulticast) {
  HOPPER_REQUIRE_SM90();
  std::mt19937_64 rng(hopper_test::fresh_seed() + 1);
  for (uint32_t cluster : {2u, 3u, 4u})
    for (uint32_t stages : {1u, 2u, 4u, 7u, 10u})
      for (uint32_t wg : {1u, 2u, 4u}) {
        run_case(random_case(rng, stages, wg, cluster, true), rng);
        if (HasFatalFailure()) return;
      }
}

TEST(PipelineGpu, ClustersWithoutMulticast) {
  HOPPER_REQUIRE_SM90();
  std::mt19937_64 rng(hopper_test::fresh_seed() + 2);
  for (uint32_t cluster : {2u, 4u})
    for (uint32_t stages : {1u, 3u, 8u}) {
      run_case(random_case(rng, stages, 2, cluster, false), rng);
      if (HasFatalFailure()) return;
    }
}

// Both release forms, named explicitly, with and without multicast (automatic picks each_lane
// without multicast and warp_leader with it; the tests above cover it). Under compute-sanitizer
// racecheck this is the clean case: every consumer thread releases its own reads.
void run_release_form(hopper::release_by by, uint64_t salt) {
  std::mt19937_64 rng(hopper_test::fresh_seed() + salt);
  for (uint32_t cluster : {1u, 2u, 4u})
    for (uint32_t stages : {1u, 3u, 6u}) {
      case_t c = random_case(rng, stages, 1 + uint32_t(rng() % 2), cluster, cluster > 1);
      c.releaser = by;
      run_case(c, rng);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(PipelineGpu, EachLaneReleases) {
  HOPPER_REQUIRE_SM90();
  run_release_form(hopper::release_by::each_lane, 5);
}

TEST(PipelineGpu, WarpLeaderReleases) {
  HOPPER_REQUIRE_SM90();
  run_release_form(hopper::release_by::warp_leader, 6);
}

// Large runs: many CTAs (several per SM) and many iterations, so that stages wrap thousands of
// times and any phase error shows.
TEST(PipelineGpu, ManyIterationsManyCtas) {
  HOPPER_REQUIRE_SM90();
  std::mt19937_64 rng(hopper_test::fresh_seed() + 3);
  run_case(case_t{4, 2, 1, 264, 2000, 8192, false}, rng);
  if (HasFatalFailure()) return;
  run_case(case_t{3, 1, 2, 264, 1500, 4096, true}, rng);
  if (HasFatalFailure()) return;
  run_case(case_t{6, 4, 4, 132, 1000, 8192, true}, rng);
}

// Bad input is rejected before launch, naming the limit.
TEST(PipelineGpu, RejectsWhatTheDeviceCannotLaunch) {
  HOPPER_REQUIRE_SM90();
  const hopper::pipeline_limits lim = hopper::query_limits(0);
  EXPECT_GE(lim.smem_per_block, 200u * 1024u);
  case_t c{4, 1, 1, 1, 4, 64 * 1024, false};  // 4 x 64 KiB > 227 KiB
  try {
    (void)launch<false>(c.stages, nullptr, nullptr, c.ctas, c.tiles, config_of(c));
    FAIL() << "4 x 64 KiB stages were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("shared-memory limit of " + std::to_string(lim.smem_per_block)),
              std::string::npos)
        << e.what();
  }
  case_t big{2, 1, 16, 16, 4, 1024, true};  // a cluster of 16 without the non-portable opt-in
  try {
    (void)launch<false>(big.stages, nullptr, nullptr, big.ctas, big.tiles, config_of(big));
    FAIL() << "a cluster of 16 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cluster_size = 16"), std::string::npos) << e.what();
  }
}

// The timeline: every warp's records are present, in time order, and causal across warps.
TEST(PipelineGpu, TraceIsCompleteAndCausal) {
  HOPPER_REQUIRE_SM90();
  std::mt19937_64 rng(hopper_test::fresh_seed() + 4);
  const case_t c{3, 1, 2, 4, 24, 4096, true};
  const pipeline_config cfg = config_of(c);
  const uint32_t warps = c.ctas * cfg.block_warps, per_warp = 4 * c.tiles + 8;
  hopper::trace::record* d_rec = nullptr;
  uint32_t* d_cnt = nullptr;
  uint32_t *d_src = nullptr, *d_dst = nullptr;
  const size_t words = c.stage_bytes / 4;
  std::vector<uint32_t> src(size_t(c.ctas / c.cluster) * c.tiles * words);
  for (auto& w : src) w = uint32_t(rng());
  const auto want = expected(c, src);
  CUDA_OK(cudaMalloc(&d_rec, size_t(warps) * per_warp * sizeof(hopper::trace::record)));
  CUDA_OK(cudaMalloc(&d_cnt, warps * 4));
  CUDA_OK(cudaMemset(d_cnt, 0, warps * 4));
  CUDA_OK(cudaMemset(d_rec, 0xFF, size_t(warps) * per_warp * sizeof(hopper::trace::record)));
  CUDA_OK(cudaMalloc(&d_src, src.size() * 4));
  CUDA_OK(cudaMalloc(&d_dst, want.size() * 4));
  CUDA_OK(cudaMemcpy(d_src, src.data(), src.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_dst, 0xA5, want.size() * 4));
  CUDA_OK((hopper::apps::launch_pipeline_stream<3, true>(reinterpret_cast<const uint4*>(d_src),
                                                         reinterpret_cast<uint4*>(d_dst), c.ctas, c.tiles, cfg,
                                                         hopper::trace::sink{d_rec, d_cnt, per_warp, warps})));
  CUDA_LAUNCH_OK();
  std::vector<hopper::trace::record> slots(size_t(warps) * per_warp);
  std::vector<uint32_t> counts(warps);
  std::vector<uint32_t> got(want.size());
  CUDA_OK(cudaMemcpy(slots.data(), d_rec, slots.size() * sizeof(slots[0]), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(counts.data(), d_cnt, warps * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(got.data(), d_dst, got.size() * 4, cudaMemcpyDeviceToHost));
  for (void* p : {(void*)d_rec, (void*)d_cnt, (void*)d_src, (void*)d_dst}) CUDA_OK(cudaFree(p));
  ASSERT_EQ(got, want) << "the traced kernel must compute the same result";

  for (uint32_t w = 0; w < warps; ++w) {
    const bool producer = w % cfg.block_warps == 0;
    // Producer: acquire_begin, acquire_end, issued per tile, then drain_begin, drain_end.
    // Consumer: wait_begin, wait_end, release per tile.
    EXPECT_EQ(counts[w], producer ? 3 * c.tiles + 2 : 3 * c.tiles) << "warp slot " << w;
  }
  std::vector<hopper::trace::record> recs;
  ASSERT_EQ(hopper::trace::gather(slots, counts, per_warp, recs), 0u);
  using hopper::trace::event;
  // Per (cta, iter): when the producer's copy was armed, and the latest consumer release.
  std::map<std::pair<int, int>, uint64_t> armed, released_last;
  std::map<std::pair<int, int>, uint64_t> waited;  // earliest wait_end
  uint64_t prev = 0;
  int prev_key = -1;
  for (const auto& r : recs) {
    const int key = r.cta * 256 + r.warp;
    if (key == prev_key)
      EXPECT_GE(r.time_ns, prev) << "time goes backwards on CTA " << r.cta << " warp " << int(r.warp);
    prev = r.time_ns;
    prev_key = key;
    EXPECT_EQ(r.stage, r.iter % c.stages);
    const auto k = std::make_pair(int(r.cta), int(r.iter));
    if (r.kind == uint8_t(event::acquire_end)) armed[k] = r.time_ns;
    if (r.kind == uint8_t(event::release)) released_last[k] = std::max(released_last[k], r.time_ns);
    if (r.kind == uint8_t(event::wait_end)) waited[k] = waited.count(k) ? std::min(waited[k], r.time_ns) : r.time_ns;
  }
  for (uint32_t b = 0; b < c.ctas; ++b)
    for (uint32_t t = 0; t < c.tiles; ++t) {
      const auto k = std::make_pair(int(b), int(t));
      ASSERT_TRUE(armed.count(k) && waited.count(k) && released_last.count(k)) << "CTA " << b << " iteration " << t;
      // No consumer of this CTA saw iteration t before its own producer armed the stage.
      EXPECT_LE(armed[k], waited[k]) << "CTA " << b << " iteration " << t;
      // The stage is re-armed only after every local consumer released it.
      if (t + c.stages < c.tiles)
        EXPECT_LE(released_last[k], armed[std::make_pair(int(b), int(t + c.stages))])
            << "CTA " << b << " iteration " << t;
    }
  const std::string json = hopper::trace::chrome_json(recs, "pipeline test", "globaltimer");
  EXPECT_NE(json.find("\"compute\""), std::string::npos);
}

}  // namespace
