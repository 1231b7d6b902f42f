// Setting the model up wrong, or writing a kernel body that breaks a rule the hardware leaves
// undefined, ends in a model_error that names what is missing: never a crash, a hang or a
// standard-library exception from deep inside. One test per mistake.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"

using namespace hopper::model;

namespace {

constexpr int kStages = 2;
using pipe_t = hopper::pipeline<kStages, target>;

// Runs `body` on a fresh world with the given shape; returns the report ("" when it ran clean).
std::string report_of(launch_shape shape, const std::function<void(target&)>& body, uint64_t seed = 1) {
  run_options o;
  o.seed = seed;
  o.stack_bytes = 64 * 1024;
  try {
    world w(o);
    launch(w, shape, body);
    w.run();
  } catch (const model_error& e) {
    return e.what();
  }
  return "";
}

void expect_report(const std::string& m, std::initializer_list<const char*> fragments) {
  ASSERT_NE(m, "") << "ran clean; expected a report mentioning " << *fragments.begin();
  for (const char* f : fragments) EXPECT_NE(m.find(f), std::string::npos) << "'" << f << "' not in: " << m;
}

TEST(ModelMisuse, LaunchShapesNameTheBadValue) {
  auto nothing = [](target&) {};
  expect_report(report_of({0, 32, 1}, nothing), {"grid 0", "at least 1"});
  expect_report(report_of({1, 2048, 1}, nothing), {"block of 2048 threads", "at most 1024"});
  expect_report(report_of({3, 32, 2}, nothing), {"3 CTAs in clusters of 2", "multiple of the cluster size"});
  expect_report(report_of({32, 32, 32}, nothing), {"clusters of 32 CTAs", "at most 16"});
}

// A launch the host could not hold (every thread is a task with a stack) and run options the
// model cannot run are rejected by name, not by exhausting memory or overflowing a stack.
TEST(ModelMisuse, RunOptionsAndHugeLaunchesNameTheBadValue) {
  auto nothing = [](target&) {};
  expect_report(report_of({1u << 31, 1024, 1}, nothing),
                {"2147483648 CTAs of 1024 threads", "run_options::max_threads = 16384"});
  const auto options_report = [](run_options o) {
    try {
      world w(o);
    } catch (const model_error& e) {
      EXPECT_EQ(e.kind(), error_kind::api_misuse);
      return std::string(e.what());
    }
    return std::string();
  };
  run_options o;
  o.stack_bytes = 100;
  expect_report(options_report(o), {"stack_bytes = 100 is outside 32768.."});
  o = {};
  o.spurious_fail_percent = 101;
  expect_report(options_report(o), {"spurious_fail_percent = 101"});
  o = {};
  o.max_threads = 0;
  expect_report(options_report(o), {"max_threads = 0"});
  EXPECT_EQ(options_report(run_options{}), "");
}

TEST(ModelMisuse, WaitOnABarrierNoThreadInitialised) {
  const std::string m = report_of({1, 32, 1}, [](target& t) {
    auto& ring = cta_shared<pipe_t::storage>(t, "ring");
    t.mbarrier_wait(ring.full[0], hopper::parity(0u));
  });
  expect_report(m, {"mbarrier", "no thread has initialised", "CTA 0", "model_misuse.cpp:"});
}

TEST(ModelMisuse, PipelineUsedWithoutItsInit) {
  // The ring's barriers exist only once pipeline::init ran; a consumer that skips it waits on an
  // uninitialised barrier.
  const std::string m = report_of({1, 64, 1}, [](target& t) {
    auto& ring = cta_shared<pipe_t::storage>(t, "ring");
    t.mbarrier_wait(ring.empty[1], hopper::parity(1u));
  });
  expect_report(m, {"no thread has initialised"});
}

TEST(ModelMisuse, ArriveNotOrderedAfterTheInitIsReported) {
  // Thread 0 initialises, thread 32 arrives without the CTA barrier that orders the init first.
  // Whichever comes first in a seed's interleaving, it is reported: an arrive on a barrier not yet
  // initialised, or an arrive that the init is not ordered before.
  int before = 0, unordered = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const std::string m = report_of(
        {1, 64, 1},
        [](target& t) {
          auto& ring = cta_shared<pipe_t::storage>(t, "ring");
          if (t.thread() == 0) t.mbarrier_init(ring.full[0], 2u, "full", 0u);
          if (t.thread() == 32) (void)t.mbarrier_arrive(ring.full[0]);
        },
        seed);
    ASSERT_NE(m, "") << "seed " << seed << ": an unordered init went unreported";
    EXPECT_NE(m.find("thread 32 (warp 1 lane 0)"), std::string::npos) << m;
    if (m.find("is not ordered before this use") != std::string::npos) {
      EXPECT_NE(m.find("full[0]"), std::string::npos) << m;
      EXPECT_NE(m.find("mbarrier.init by task 'thread 0 (warp 0 lane 0)'"), std::string::npos) << m;
      ++unordered;
    } else {
      EXPECT_NE(m.find("initialised"), std::string::npos) << m;
      ++before;
    }
  }
  EXPECT_GT(before, 0);
  EXPECT_GT(unordered, 0);
}

TEST(ModelMisuse, SharedObjectAskedForWithAnotherType) {
  const std::string m = report_of({1, 32, 1}, [](target& t) {
    (void)cta_shared<pipe_t::storage>(t, "ring");
    (void)cta_shared<uint64_t>(t, "ring");
  });
  expect_report(m, {"shared object 'ring' of CTA 0", "another type"});
}

TEST(ModelMisuse, SharedBufferAskedForWithAnotherShape) {
  const std::string m = report_of({1, 32, 1}, [](target& t) {
    (void)shared_buffer(t, "stages", 2, 256);
    (void)shared_buffer(t, "stages", 4, 256);
  });
  expect_report(m, {"shared buffer 'stages' of CTA 0", "4 x 256", "2 x 256"});
}

TEST(ModelMisuse, AViewOfNoBuffer) {
  const std::string m = report_of({1, 32, 1}, [](target& t) {
    smem<uint32_t> none;
    if (t.lane() == 0) (void)none.load(0);
  });
  expect_report(m, {"a memory view that points at no buffer"});
}

TEST(ModelMisuse, AMissingReleaseIsADeadlockNamingTheBarrier) {
  const std::string m = report_of({1, 64, 1}, [](target& t) {
    auto& ring = cta_shared<pipe_t::storage>(t, "ring");
    auto pipe = pipe_t::init(ring, hopper::pipeline_params{1, 1, false}, t);
    if (t.warp() == 0) {
      if (t.lane() != 0) return;
      auto s = pipe.producer_start();
      for (; s.iter() < 4; ++s) pipe.acquire(s, 0u);  // no bytes: the arrive alone completes full[s]
      return;
    }
    for (auto s = pipe.consumer_start(); s.iter() < 4; ++s) pipe.wait(s);  // never releases
  });
  expect_report(m, {"empty"});
}

}  // namespace

namespace {

// A pipeline_params no pipeline can have is reported by pipeline::init naming the field (on the
// GPU, with HOPPER_DEBUG_WAITS, the same check prints it and traps), not later as the barrier
// count it would become.
TEST(ModelMisuse, PipelineParamsNameTheBadField) {
  const auto init_with = [](hopper::pipeline_params p) {
    return report_of({1, 64, 1}, [p](target& t) {
      auto& ring = cta_shared<pipe_t::storage>(t, "ring");
      (void)pipe_t::init(ring, p, t);
    });
  };
  expect_report(init_with(hopper::pipeline_params{0}), {"releases_per_cta = 0", "model_misuse.cpp"});
  expect_report(init_with(hopper::pipeline_params{1, 0}), {"cluster_size is outside 1..16"});
  expect_report(init_with(hopper::pipeline_params{1u << 27, 1, false, hopper::release_by::each_lane}),
                {"arrival count"});
  expect_report(init_with(hopper::pipeline_params{1, 1, false, static_cast<hopper::release_by>(9)}),
                {"releaser 9", "is not a release_by"});
  EXPECT_EQ(init_with(hopper::pipeline_params{2}), "");
}

}  // namespace

// setmaxnreg moves registers between a CTA's warps inside what the CTA holds at launch (384
// threads hold 168 each). A producer warpgroup at 24 and two consumers at 240 fill it exactly; the
// producer at 32 leaves the second consumer's setmaxnreg.inc waiting for ever on the GPU.
template <uint32_t Producer, uint32_t Consumer>
void register_split(target& t) {
  if (t.thread() < 128)
    t.setmaxnreg_dec<Producer>();
  else
    t.setmaxnreg_inc<Consumer>();
}

TEST(ModelMisuse, SetmaxnregBeyondTheLaunchPoolIsNamed) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    EXPECT_EQ(report_of({1, 384, 1}, register_split<24, 240>, seed), "");
    EXPECT_EQ(report_of({1, 384, 1}, register_split<40, 232>, seed), "");
    expect_report(report_of({1, 384, 1}, register_split<32, 240>, seed),
                  {"setmaxnreg", "168 a CTA of 384 threads holds at launch", "waits for ever"});
    EXPECT_EQ(report_of({1, 512, 1}, register_split<32, 160>, seed), "");
    expect_report(report_of({1, 512, 1}, register_split<32, 168>, seed), {"128 a CTA of 512 threads"});
  }
}
