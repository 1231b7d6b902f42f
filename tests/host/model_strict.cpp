// The model is at least as strict as the device: what the device would silently truncate or mask
// is reported on the model, naming the value.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"
#include "model_tensor.hpp"

using namespace hopper::model;

namespace {

outcome run_body(std::function<void(target&)> body) {
  const program p = [body](world& w) { launch(w, {1, 32, 1}, body); };
  return run_once(p, {});
}

// mbarrier.try_wait.parity / test_wait.parity take the parity of a phase: 0 or 1.
TEST(ModelStrict, ParityOtherThanZeroOrOneIsReported) {
  for (int form = 0; form < 2; ++form) {
    const outcome o = run_body([form](target& t) {
      auto& b = cta_shared<mbarrier_slot>(t, "b");
      if (t.thread() == 0) t.mbarrier_init(b, 1, "b", 0);
      t.syncthreads();
      if (t.thread() != 0) return;
      if (form == 0) (void)t.mbarrier_try_wait_parity(b, 2);
      if (form == 1) (void)t.mbarrier_test_wait_parity(b, 3);
    });
    ASSERT_EQ(o.kind, error_kind::undefined_behavior) << o.message;
    EXPECT_NE(o.message.find(form == 0 ? "parity 2 is not 0 or 1" : "parity 3 is not 0 or 1"), std::string::npos)
        << o.message;
  }
}

// cp.async.bulk.tensor's coordinates are .s32: 2^31 (or -2^31 - 1) is not a coordinate.
TEST(ModelStrict, TensorCoordinateOutsideInt32IsReported) {
  for (int64_t bad : {int64_t(1) << 31, -(int64_t(1) << 31) - 1}) {
    const program p = [bad](world& w) {
      const tensor_view v = hopper_test::small_tensor(w.make_global("g", 4096));
      launch(w, {1, 32, 1}, [v, bad](target& t) {
        auto& b = cta_shared<mbarrier_slot>(t, "b");
        const smem<uint8_t> s = shared_buffer(t, "s", 1, 1024);
        if (t.thread() != 0) return;
        t.mbarrier_init(b, 1, "b", 0);
        t.fence_mbarrier_init_release_cluster();
        t.cp_async_bulk_tensor_shared_cluster_global(s, v, b, 0, bad);
      });
    };
    const outcome o = run_once(p, {});
    ASSERT_EQ(o.kind, error_kind::undefined_behavior) << o.message;
    EXPECT_NE(o.message.find("coordinate 1 is " + std::to_string(bad)), std::string::npos) << o.message;
  }
}

// A .release.cta arrive on a barrier of another CTA orders nothing for that CTA's threads: a value
// written before it is not published to the peer that waits (.cluster publishes it). The waiter's
// own wait is .acquire.cta: it acquires the peer's .release.cluster (docs/model.md, the rule table).
template <hopper::ptx::scope SC>
outcome remote_release(uint64_t seed) {
  const program p = [](world& w) {
    buffer& g = w.make_global("value", 16);
    launch(w, {2, 32, 2}, [&g](target& t) {
      auto& b = cta_shared<mbarrier_slot>(t, "b");
      if (t.thread() == 0) {
        t.mbarrier_init(b, 1, "b", 0);
        t.fence_mbarrier_init_release_cluster();
      }
      t.barrier_cluster_arrive_aligned();
      t.barrier_cluster_wait_aligned();
      if (t.thread() == 0 && t.cluster_rank() == 1) {
        gmem<uint32_t>(g).store(0, 42);
        t.mbarrier_arrive<hopper::ptx::sem::release, SC>(t.mapa(b, 0));
      } else if (t.thread() == 0) {
        t.mbarrier_wait(b, hopper::parity(0));
        (void)gmem<uint32_t>(g).load(0);
      }
      t.barrier_cluster_arrive_aligned();  // CTA 0's barrier outlives the remote arrive
      t.barrier_cluster_wait_aligned();
    });
  };
  run_options o;
  o.seed = seed;
  return run_once(p, o);
}

TEST(ModelStrict, ReleaseAtCtaScopeOnAPeersBarrierPublishesNothing) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const outcome ok = remote_release<hopper::ptx::scope::cluster>(seed);
    EXPECT_TRUE(ok.ok) << ok.message;
    const outcome bad = remote_release<hopper::ptx::scope::cta>(seed);
    ASSERT_EQ(bad.kind, error_kind::raw_hazard) << bad.message;
    EXPECT_NE(bad.message.find("global buffer 'value'"), std::string::npos) << bad.message;
  }
}

}  // namespace
