// The release of a stage, .release or .relaxed, as the PTX memory model orders it (PTX ISA,
// mbarrier.arrive: .release and .relaxed), through hopper::pipeline on the model's target, every thread a task:
//   - a consumer that reads a stage only through the async proxy (a bulk store of it), retires
//     that read (cp.async.bulk.wait_group.read) and then releases the stage .relaxed is correct:
//     the refill comes after the read in execution order, and nothing it wrote is read;
//   - both release forms (hopper::release_by: every lane arrives, or lane 0 after __syncwarp)
//     order generic reads when the arrive is .release;
//   - a consumer that reads the stage with generic loads and releases it .relaxed is a WAR: the
//     producer's refill is not ordered after those loads. The report names the consumer thread,
//     the stage, the buffer's CTA, and the .relaxed arrive on the empty barrier.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"

using namespace hopper::model;

namespace {

constexpr int kStages = 2;
constexpr uint32_t kTiles = 6, kBytes = 64;
using pipe_t = hopper::pipeline<kStages, target>;

// Warp 0 lane 0 produces; warp 1 consumes each stage either by a bulk store (async read) or by
// generic loads, then releases it with release semantics S, every lane arriving or lane 0 after
// __syncwarp (`by`).
template <hopper::release_sem S>
std::string run(bool async_read, uint64_t seed, bool* data_ok, hopper::release_by by) {
  run_options o;
  o.seed = seed;
  o.stack_bytes = 64 * 1024;
  world w(o);
  buffer& src = w.make_global("src", kTiles * kBytes);
  buffer& dst = w.make_global("dst", kTiles * kBytes);
  for (uint32_t i = 0; i < kTiles * kBytes; ++i) src.host_data()[i] = uint8_t(i * 7 + 1);
  launch(w, {1, 64, 1}, [&](target& t) {
    auto& ring = cta_shared<pipe_t::storage>(t, "ring");
    auto stages = shared_buffer(t, "stages", kStages, kBytes);
    auto pipe = pipe_t::init(ring, hopper::pipeline_params{1, 1, false, by}, t);
    if (t.warp() == 0) {
      if (t.lane() != 0) return;
      auto s = pipe.producer_start();
      for (; s.iter() < kTiles; ++s) {
        pipe.acquire(s, kBytes);
        t.cp_async_bulk_shared_cluster_global(stages + s.index() * kBytes, gmem<const uint8_t>(src) + s.iter() * kBytes,
                                              kBytes, pipe.full(s));
      }
      pipe.drain(s);
      return;
    }
    for (auto s = pipe.consumer_start(); s.iter() < kTiles; ++s) {
      pipe.wait(s);
      const auto stage = stages + s.index() * kBytes;
      if (async_read) {
        if (t.lane() == 0) {
          t.cp_async_bulk_global_shared_cta(gmem<uint8_t>(dst) + s.iter() * kBytes, stage, kBytes);
          t.cp_async_bulk_commit_group();
          t.cp_async_bulk_wait_group_read<0>();
        }
      } else {
        const auto words = stage.as<uint32_t>();
        const auto out = gmem<uint8_t>(dst).as<uint32_t>() + s.iter() * (kBytes / 4);
        for (uint32_t i = t.lane(); i < kBytes / 4; i += 32) out.store(i, words.load(i));
      }
      pipe.template release<S>(s);
    }
    if (async_read && t.lane() == 0) t.cp_async_bulk_wait_group<0>();
  });
  try {
    w.run();
  } catch (const model_error& e) {
    return e.what();
  }
  *data_ok = std::memcmp(src.host_data(), dst.host_data(), kTiles * kBytes) == 0;
  return "";
}

constexpr hopper::release_by kForms[] = {hopper::release_by::each_lane, hopper::release_by::warp_leader};
hopper::release_by form_of(uint64_t seed) { return kForms[seed % 2]; }

TEST(ModelRelaxedRelease, AsyncProxyReadsRetiredThenRelaxedReleaseIsClean) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    bool ok = false;
    EXPECT_EQ(run<hopper::release_sem::relaxed>(true, seed, &ok, form_of(seed)), "") << "seed " << seed;
    EXPECT_TRUE(ok) << "seed " << seed;
  }
}

TEST(ModelRelaxedRelease, GenericReadsWithReleaseAreClean) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    bool ok = false;
    EXPECT_EQ(run<hopper::release_sem::release>(false, seed, &ok, form_of(seed)), "") << "seed " << seed;
    EXPECT_TRUE(ok) << "seed " << seed;
  }
}

TEST(ModelRelaxedRelease, GenericReadsThenRelaxedReleaseIsAWarNamingTheArrive) {
  int reported = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    bool ok = false;
    const std::string m = run<hopper::release_sem::relaxed>(false, seed, &ok, form_of(seed));
    ASSERT_NE(m, "") << "seed " << seed << ": a generic read released .relaxed went unreported";
    ASSERT_NE(m.find("WAR hazard"), std::string::npos) << m;
    EXPECT_NE(m.find("shared buffer 'stages' of CTA 0 stage "), std::string::npos) << m;
    EXPECT_NE(m.find("(warp 1 lane "), std::string::npos) << "names the consumer thread: " << m;
    EXPECT_NE(m.find("barrier empty["), std::string::npos) << "names the empty barrier: " << m;
    EXPECT_NE(m.find(".relaxed"), std::string::npos) << m;
    EXPECT_EQ(m.find("arrives again"), std::string::npos) << "not the producer's misreport: " << m;
    ++reported;
  }
  EXPECT_EQ(reported, 200);
}

}  // namespace
