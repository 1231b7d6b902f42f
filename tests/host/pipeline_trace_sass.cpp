// The timeline switch costs nothing when off: the streaming pipeline kernel
// compiled with HOPPER_TRACE=0 has exactly the SASS of the same kernel with the trace hooks removed
// from the source (HOPPER_PIPELINE_NO_TRACE_HOOKS), instruction for instruction. The traced build
// differs (it reads %globaltimer), which shows the comparison can fail. Skips, saying why, where
// nvcc or cuobjdump is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sass_tools.hpp"

#ifndef HOPPER_NVCC
#define HOPPER_NVCC ""
#endif

namespace fs = std::filesystem;

namespace {

using hopper_test::count_containing;

// The kernel's SASS instructions, for one build of the streaming kernel.
std::vector<std::string> kernel_sass(const std::string& tag, const std::string& defines) {
  const fs::path dir = fs::path(HOPPER_BINARY_DIR) / "pipeline_trace_sass";
  fs::create_directories(dir);
  const fs::path src = dir / "kernel.cu", cubin = dir / (tag + ".cubin");
  {
    std::ofstream o(src);
    o << "#include \"apps/pipeline_stream.cuh\"\n"
         "template __global__ void hopper::apps::pipeline_stream_kernel<4, (HOPPER_TRACE != 0)>(\n"
         "    const uint4*, uint4*, uint32_t, uint32_t, hopper::pipeline_params, hopper::trace::sink);\n";
  }
  const auto c = hopper_test::compile_cubin(HOPPER_NVCC, HOPPER_SOURCE_DIR, src.string(), cubin.string(), defines);
  EXPECT_EQ(c.status, 0) << tag << " did not compile:\n" << c.output;
  const auto d = hopper_test::dump_sass(hopper_test::find_on_path("cuobjdump"), cubin.string());
  EXPECT_EQ(d.status, 0) << "cuobjdump failed:\n" << d.output;
  return hopper_test::sass_instructions(d.output);
}

TEST(PipelineTraceSass, OffIsIdenticalToNoHooks) {
  const std::string why = hopper_test::configured_toolchain_missing(HOPPER_NVCC);
  if (!why.empty()) GTEST_SKIP() << "cannot produce SASS: " << why;
  const auto off = kernel_sass("trace_off", "-DHOPPER_TRACE=0");
  const auto none = kernel_sass("no_hooks", "-DHOPPER_TRACE=0 -DHOPPER_PIPELINE_NO_TRACE_HOOKS");
  const auto on = kernel_sass("trace_on", "-DHOPPER_TRACE=1");
  // The kernel really is the pipeline: barrier init, arrive, try_wait, bulk copy.
  for (const char* must : {"SYNCS.EXCH.64", "SYNCS.ARRIVE.TRANS64", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "UBLKCP"})
    EXPECT_GT(count_containing(off, must), 0u) << "the kernel lacks " << must;
  ASSERT_EQ(off.size(), none.size()) << "tracing off adds or removes instructions";
  for (size_t i = 0; i < off.size(); ++i) ASSERT_EQ(off[i], none[i]) << "instruction " << i << " differs";
  EXPECT_EQ(count_containing(off, "GLOBALTIMER"), 0u);
  // The switch on changes the code: the comparison above is not of two things that cannot differ.
  EXPECT_GT(count_containing(on, "GLOBALTIMER"), 0u) << "the traced kernel reads no %globaltimer";
  EXPECT_NE(on, off);
}

}  // namespace
