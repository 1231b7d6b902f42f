// The headers in a multi-architecture build (tests/sass/multi_arch.cu; hopper/ptx/arch.cuh): a
// translation unit that includes every public header builds for 80;90a at once, and a call of a
// Hopper-only operation compiled for an architecture without it fails with one error naming the
// operation and the architecture it needs, with none of ptxas's raw qualifier errors. Needs nvcc
// (the configured CMAKE_CUDA_COMPILER), no GPU; skips, saying why, without it.
#include <gtest/gtest.h>

#include <string>

#include "sass_tools.hpp"

#ifndef HOPPER_NVCC
#define HOPPER_NVCC ""
#endif

namespace {

const std::string kSource = std::string(HOPPER_SOURCE_DIR) + "/tests/sass/multi_arch.cu";

hopper_test::command_result build(int call, const std::string& gencodes) {
  const std::string nvcc = HOPPER_NVCC;
  return hopper_test::run_command(
      hopper_test::shell_quote(nvcc) + " -std=c++17 --expt-relaxed-constexpr " + gencodes + " -DHOPPER_CALL=" +
      std::to_string(call) + " -I " + hopper_test::shell_quote(std::string(HOPPER_SOURCE_DIR) + "/include") + " -c " +
      hopper_test::shell_quote(kSource) + " -o " +
      hopper_test::shell_quote(std::string(HOPPER_BINARY_DIR) + "/multi_arch_" + std::to_string(call) + ".o"));
}

const std::string k80and90a = "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90a,code=sm_90a";

#define REQUIRE_NVCC()                                                                                  \
  do {                                                                                                  \
    const std::string nvcc = HOPPER_NVCC;                                                               \
    if (nvcc.empty() || !hopper_test::file_exists(nvcc)) GTEST_SKIP() << "no CUDA compiler configured"; \
  } while (0)

TEST(MultiArch, EveryHeaderBuildsFor80And90a) {
  REQUIRE_NVCC();
  const auto r = build(0, k80and90a);
  EXPECT_EQ(r.status, 0) << r.output;
}

// One error, naming the function and the architecture; the raw ptxas errors ("Feature
// '.cluster scope' requires .target sm_90") never appear.
void expect_one_named_error(int call, const std::string& gencodes, const std::string& needs) {
  const auto r = build(call, gencodes);
  EXPECT_NE(r.status, 0) << "built although the operation does not exist there:\n" << r.output;
  EXPECT_NE(r.output.find(needs), std::string::npos) << "'" << needs << "' not in:\n" << r.output;
  EXPECT_EQ(r.output.find("requires .target"), std::string::npos) << r.output;
  EXPECT_EQ(hopper_test::count_of(r.output, "error"), 0u) << "only ptxas's one fatal line:\n" << r.output;
}

TEST(MultiArch, HopperOnlyOperationsNameThemselvesOnSm80) {
  REQUIRE_NVCC();
  expect_one_named_error(1, k80and90a, "cp_async_bulk_shared_cluster_global_needs_sm_90");
  expect_one_named_error(2, k80and90a, "mbarrier_arrive_needs_sm_90");
  expect_one_named_error(4, k80and90a, "cluster_ctarank_needs_sm_90");
}

TEST(MultiArch, Sm90aOnlyOperationsNameTheArchitectureSpecificTarget) {
  REQUIRE_NVCC();
  expect_one_named_error(3, "-gencode=arch=compute_90,code=sm_90", "wgmma_fence_needs_sm_90a");
  const auto r = build(3, "-gencode=arch=compute_90a,code=sm_90a");
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(MultiArch, EveryCallBuildsForSm90a) {
  REQUIRE_NVCC();
  for (int call = 1; call <= 4; ++call) {
    const auto r = build(call, "-gencode=arch=compute_90a,code=sm_90a");
    EXPECT_EQ(r.status, 0) << "HOPPER_CALL=" << call << ":\n" << r.output;
  }
}

}  // namespace
