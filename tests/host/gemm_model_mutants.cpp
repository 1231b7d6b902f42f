// Bugs planted in the GEMM kernel as it runs on the executable model (run_options::faults,
// hopper/model/fault.hpp: protocol faults by the target, the kernel-only ones through its named
// hooks, target::planted): every one must be reported, with the kind of error it is and a
// message that names the barrier or buffer, its CTA and the thread; the unplanted kernel of the
// same instance runs clean on the same seeds.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gemm_reference.hpp"

namespace {

using namespace gemm_model;
using hopper::model::fault;
using hopper::model::fault_kind;

using one_cta = hg::kernel_traits<128, 256, 4, 1, 1, uint16_t, false, false>;      // instance 0
using cluster_2x1 = hg::kernel_traits<128, 256, 4, 2, 1, uint16_t, false, false>;  // instance 1
using split_f32 = hg::kernel_traits<128, 128, 6, 1, 1, float, false, false>;       // instance 3

hg::config config_of(int bm, int bn, int stages, int cm, int cn, int splits = 1) {
  hg::config c;
  c.bm = bm, c.bn = bn, c.stages = stages, c.cluster_m = cm, c.cluster_n = cn, c.splits = splits;
  c.group_m = 2;
  return c;
}

struct expectation {
  std::vector<error_kind> kinds;      // any of these
  std::vector<std::string> mentions;  // every one of these in the message
};

template <class T>
void expect_reported(const hg::problem& p, const hg::config& cf, int resident, const fault& bug, const expectation& e,
                     int seeds = 4) {
  const std::string name = std::string(hopper::model::to_string(bug.kind)) + " '" + bug.where + "'";
  for (uint64_t seed = 1; seed <= uint64_t(seeds); ++seed) {
    const operands o = random_operands(p, seed);
    const outcome clean = run<T>(p, cf, resident, o, seed);
    ASSERT_EQ(clean.error, "") << "the unplanted kernel must run clean, seed " << seed;
    const outcome r = run<T>(p, cf, resident, o, seed, -1, nullptr, {bug});
    ASSERT_NE(r.error, "") << name << " not reported, seed " << seed;
    bool kind_ok = false;
    for (error_kind k : e.kinds) kind_ok |= r.error.rfind(to_string(k), 0) == 0;
    EXPECT_TRUE(kind_ok) << name << ", seed " << seed << ": " << r.error;
    for (const auto& m : e.mentions)
      EXPECT_NE(r.error.find(m), std::string::npos) << name << " should name '" << m << "': " << r.error;
  }
}

hg::problem problem_of(int64_t m, int64_t n, int64_t k, hg::out_type out = hg::out_type::bf16) {
  hg::problem p;
  p.M = m, p.N = n, p.K = k;
  p.out = out;
  return p;
}

const std::vector<error_kind> any_hazard{error_kind::raw_hazard, error_kind::war_hazard};

// The consumers read stages before their bytes land (a RAW naming the wgmma, its warpgroup, the
// stage and the barrier), or wait on phases that complete out of turn (a deadlock naming the
// barrier each thread waits on).
TEST(GemmModelMutants, WrongInitialParity) {
  expect_reported<one_cta>(
      problem_of(128, 256, 512), config_of(128, 256, 4, 1, 1), 1, {fault_kind::parity_flipped, "full"},
      {{error_kind::raw_hazard, error_kind::war_hazard, error_kind::deadlock}, {"CTA 0", "barrier full["}});
}

TEST(GemmModelMutants, ReleaseBeforeWgmmaRetiredTheReads) {
  expect_reported<one_cta>(problem_of(128, 256, 512), config_of(128, 256, 4, 1, 1), 1,
                           {fault_kind::wgmma_wait_short, ""},
                           {{error_kind::war_hazard}, {"shared buffer '", "stage", "CTA 0"}});
}

TEST(GemmModelMutants, NoProxyFenceBeforeTheTmaStore) {
  expect_reported<one_cta>(
      problem_of(128, 256, 128), config_of(128, 256, 4, 1, 1), 1, {fault_kind::proxy_fence_dropped, ""},
      {{error_kind::raw_hazard}, {"shared buffer 'epi' of CTA 0", "fence.proxy.async", "thread "}});
}

TEST(GemmModelMutants, ExpectTxSixteenBytesShort) {
  expect_reported<one_cta>(problem_of(128, 256, 256), config_of(128, 256, 4, 1, 1), 1,
                           {fault_kind::expect_tx_short, "full"},
                           {{error_kind::undefined_behavior, error_kind::deadlock}, {"full[", "CTA 0"}});
}

TEST(GemmModelMutants, MulticastMaskMissesAPeer) {
  expect_reported<cluster_2x1>(problem_of(256, 256, 256), config_of(128, 256, 4, 2, 1), 1,
                               {fault_kind::kernel_hook, "multicast misses peer"},
                               {{error_kind::deadlock}, {"full[", "CTA "}});
}

TEST(GemmModelMutants, EmptyCountLeavesOutThePeersConsumers) {
  expect_reported<cluster_2x1>(problem_of(256, 256, 512), config_of(128, 256, 4, 2, 1), 1,
                               {fault_kind::kernel_hook, "empty count without peer"},
                               {any_hazard, {"shared buffer '", "stage", "CTA "}});
}

// Without the drain a CTA may exit while its peer's consumers still have releases to make on its
// empty barriers: undefined behaviour once such an arrival comes after the exit. Random seeds
// rarely draw that schedule (the releases come before the epilogues), so these runs make the
// peer CTA the slow one; the unplanted kernel runs clean under the same schedules.
TEST(GemmModelMutants, NoDrain) {
  const hg::problem p = problem_of(256, 256, 512);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const operands o = random_operands(p, seed);
    EXPECT_EQ(run<cluster_2x1>(p, config_of(128, 256, 4, 2, 1), 1, o, seed, 1).error, "") << "seed " << seed;
    const outcome r = run<cluster_2x1>(p, config_of(128, 256, 4, 2, 1), 1, o, seed, 1, nullptr,
                                       {{fault_kind::kernel_hook, "no drain"}});
    ASSERT_NE(r.error, "") << "no_drain not reported, seed " << seed;
    EXPECT_EQ(r.error.rfind(to_string(error_kind::undefined_behavior), 0), 0u) << r.error;
    EXPECT_NE(r.error.find("empty["), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("has exited"), std::string::npos) << r.error;
  }
}

TEST(GemmModelMutants, ReleaseToTheOwnCtaOnly) {
  expect_reported<cluster_2x1>(problem_of(256, 256, 512), config_of(128, 256, 4, 2, 1), 1,
                               {fault_kind::kernel_hook, "release own CTA only"},
                               {{error_kind::deadlock}, {"empty[", "CTA "}});
}

TEST(GemmModelMutants, SplitKHandshakeWithoutAcqRel) {
  expect_reported<split_f32>(problem_of(128, 128, 256, hg::out_type::f32), config_of(128, 128, 6, 1, 1, 2), 2,
                             {fault_kind::kernel_hook, "split-K relaxed handshake"},
                             {{error_kind::raw_hazard}, {"global buffer 'partial'", "thread "}});
}

// Few rows: the last piece spreads the sum over its warpgroup and puts it back in slot 0; without
// the barrier after that, the owners read slot 0 while other threads still write it.
TEST(GemmModelMutants, SplitKSpreadSumUnordered) {
  expect_reported<split_f32>(
      problem_of(16, 128, 512, hg::out_type::f32), config_of(128, 128, 6, 1, 1, 4), 4,
      {fault_kind::kernel_hook, "split-K spread unordered"},
      {{error_kind::raw_hazard, error_kind::war_hazard}, {"global buffer 'partial'", "thread "}});
}

TEST(GemmModelMutants, EpilogueBoxReusedBeforeWaitGroupRead) {
  expect_reported<one_cta>(problem_of(128, 256, 64), config_of(128, 256, 4, 1, 1), 1,
                           {fault_kind::bulk_wait_dropped, "cp.async.bulk.wait_group.read"},
                           {{error_kind::war_hazard}, {"shared buffer 'epi' of CTA 0", "wait_group.read"}});
}

}  // namespace
