// Zero overhead, checked without a GPU: a kernel written with the objects layer and the same
// kernel in hand-written inline PTX (tests/sass/pipeline_{objects,raw}.cu) compile to the same
// barrier, fence and copy SASS instructions in the same number (cuobjdump --dump-sass). Also:
// every PTX-layer form assembles (tests/sass/ptx_forms.cu), and misuse the types forbid does not
// compile (tests/sass/misuse.cu). Skips, saying why, when nvcc or cuobjdump/nvdisasm is missing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "sass_tools.hpp"

#ifndef HOPPER_NVCC
#define HOPPER_NVCC ""
#endif

namespace fs = std::filesystem;

namespace {

std::string nvcc() { return HOPPER_NVCC; }

// Why SASS cannot be produced here, or empty.
std::string toolchain_missing() {
  if (std::string why = hopper_test::configured_toolchain_missing(nvcc()); !why.empty()) return why;
  if (hopper_test::find_on_path("nvdisasm").empty() && !std::getenv("NVDISASM_PATH"))
    return "nvdisasm not on PATH (cuobjdump --dump-sass needs it; pip install nvidia-cuda-nvdisasm)";
  return {};
}

fs::path work_dir() {
  fs::path d = fs::path(HOPPER_BINARY_DIR) / "sass_check";
  fs::create_directories(d);
  return d;
}

// Compiles tests/sass/<source> (a path from the repository root) to `cubin`.
hopper_test::command_result compile(const std::string& source, const fs::path& cubin, const std::string& extra = "") {
  const fs::path root = HOPPER_SOURCE_DIR;
  return hopper_test::compile_cubin(nvcc(), root.string(), (root / source).string(), cubin.string(), extra);
}

// Counts of the SASS opcodes that implement the asynchronous machinery: mbarrier (SYNCS.*), fences
// and memory barriers, bulk copies and TMA, cluster and named barriers, bulk-group waits.
std::map<std::string, int> async_opcodes(const std::string& sass) {
  static const std::regex op(
      R"(\b((SYNCS|FENCE|UBLKCP|UBLKPF|UBLKRED|UTMA[A-Z]*|MEMBAR|BAR|UCGABAR_[A-Z]+|CCTL|ERRBAR|DEPBAR|USETMAXREG)(\.[A-Z0-9_]+)*)\b)");
  std::map<std::string, int> counts;
  for (auto it = std::sregex_iterator(sass.begin(), sass.end(), op); it != std::sregex_iterator(); ++it)
    ++counts[(*it)[1].str()];
  return counts;
}

std::string show(const std::map<std::string, int>& m) {
  std::ostringstream s;
  for (const auto& [k, v] : m) s << "  " << v << " x " << k << "\n";
  return s.str();
}

std::map<std::string, int> sass_of(const std::string& source, const std::string& name) {
  const fs::path cubin = work_dir() / (name + ".cubin");
  const auto c = compile(source, cubin);
  EXPECT_EQ(c.status, 0) << source << " did not compile:\n" << c.output;
  const auto d = hopper_test::dump_sass(hopper_test::find_on_path("cuobjdump"), cubin.string());
  EXPECT_EQ(d.status, 0) << "cuobjdump failed:\n" << d.output;
  return async_opcodes(d.output);
}

#define REQUIRE_TOOLCHAIN()                                             \
  do {                                                                  \
    const std::string why_ = toolchain_missing();                       \
    if (!why_.empty()) GTEST_SKIP() << "cannot produce SASS: " << why_; \
  } while (0)

TEST(ZeroOverheadSass, ObjectsMatchRawPtx) {
  REQUIRE_TOOLCHAIN();
  const auto objects = sass_of("tests/sass/pipeline_objects.cu", "pipeline_objects");
  const auto raw = sass_of("tests/sass/pipeline_raw.cu", "pipeline_raw");
  // The kernel really contains the machinery (so equality is not of two empty sets).
  for (const char* must : {"SYNCS.EXCH.64", "SYNCS.ARRIVE.TRANS64", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "UBLKCP.S.G",
                           "UBLKCP.G.S", "FENCE.VIEW.ASYNC.S", "UCGABAR_ARV", "UCGABAR_WAIT", "DEPBAR.LE"})
    EXPECT_GT(raw.count(must) ? raw.at(must) : 0, 0) << "raw kernel lacks " << must << ":\n" << show(raw);
  EXPECT_EQ(objects, raw) << "objects layer:\n" << show(objects) << "hand-written PTX:\n" << show(raw);
}

TEST(ZeroOverheadSass, EveryPtxFormAssembles) {
  REQUIRE_TOOLCHAIN();
  const auto forms = sass_of("tests/sass/ptx_forms.cu", "ptx_forms");
  for (const char* must : {"SYNCS.ARRIVE.TRANS64.RED", "SYNCS.PHASECHK.TRANS64", "UBLKCP.S.G.MULTICAST", "UBLKCP.S.S",
                           "UBLKPF.L2", "FENCE.VIEW.ASYNC.G", "MEMBAR.SC.SYS", "BAR.ARV"})
    EXPECT_GT(forms.count(must) ? forms.at(must) : 0, 0) << "ptx_forms lacks " << must << ":\n" << show(forms);
}

TEST(ZeroOverheadSass, MisuseDoesNotCompile) {
  if (nvcc().empty() || !fs::exists(nvcc())) GTEST_SKIP() << "no CUDA compiler configured (CMAKE_CUDA_COMPILER)";
  const fs::path cubin = work_dir() / "misuse.cubin";
  const auto ok = compile("tests/sass/misuse.cu", cubin, "-DBAD=0");
  ASSERT_EQ(ok.status, 0) << "the correct use must compile:\n" << ok.output;
  const char* cases[] = {"",
                         "wait(0) with a raw int",
                         "arrival_count(0) as a constant",
                         "named barrier id 16",
                         "named barrier of 48 threads",
                         "setmaxnreg 100",
                         "pending_count on a plain arrive token",
                         "init(5) with a raw int"};
  for (int bad = 1; bad <= 7; ++bad) {
    const auto r = compile("tests/sass/misuse.cu", cubin, "-DBAD=" + std::to_string(bad));
    EXPECT_NE(r.status, 0) << "misuse " << bad << " (" << cases[bad] << ") compiled";
  }
}

}  // namespace
