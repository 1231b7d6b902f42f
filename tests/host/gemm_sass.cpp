// The GEMM's SASS: compile the kernel's own translation unit (kernels/gemm/gemm_instance.cu) with
// nvcc to a cubin, disassemble it with cuobjdump --dump-sass, and check that the main loop is
// tensor-core work (HGMMA 64x256x16) fed by TMA (UTMALDG), that nothing spills to local memory
// (no LDL/STL) and that the stage releases carry no GPU-scope memory barrier. Skips, saying why,
// when nvcc or cuobjdump is not there.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

bool runnable(const std::string& path) { return !path.empty() && std::ifstream(path).good(); }

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && runnable(dir + "/" + name)) return dir + "/" + name;
  return "";
}

std::string find_tool(const char* env, const std::string& name, const std::vector<std::string>& extra) {
  if (const char* e = std::getenv(env); e && runnable(e)) return e;
  if (std::string p = on_path(name); !p.empty()) return p;
  for (const auto& p : extra)
    if (runnable(p)) return p;
  return "";
}

std::string run(const std::string& cmd, int& rc) {
  std::string out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) {
    rc = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  rc = pclose(f);
  return out;
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t c = 0;
  for (size_t i = hay.find(needle); i != std::string::npos; i = hay.find(needle, i + 1)) ++c;
  return c;
}

struct sass {
  std::string text, why_not;
};

// Compiles one instance (-D definitions select it) and returns its SASS, or why it could not.
sass compile(const std::string& defs, const std::string& tag) {
  sass s;
  const std::string nvcc = find_tool("NVCC", "nvcc", {"/usr/local/cuda/bin/nvcc"});
  if (nvcc.empty()) return {"", "nvcc not found (set NVCC or PATH)"};
  std::string dir = std::string(nvcc).substr(0, nvcc.rfind('/'));
  const std::string cuobjdump = find_tool(
      "CUOBJDUMP", "cuobjdump",
      {dir + "/cuobjdump", "/usr/local/cuda/bin/cuobjdump",
       "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump"});
  if (cuobjdump.empty()) return {"", "cuobjdump not found (set CUOBJDUMP or PATH)"};
  const std::string src = std::string(HOPPER_SOURCE_DIR);
  const std::string cubin = std::string(HOPPER_BINARY_DIR) + "/gemm_sass_" + tag + ".cubin";
  int rc = 0;
  const std::string log = run("\"" + nvcc + "\" -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v " +
                                  defs + " -I \"" + src + "/include\" -I \"" + src + "\" \"" + src +
                                  "/kernels/gemm/gemm_instance.cu\" -o \"" + cubin + "\"",
                              rc);
  if (rc != 0) {
    ADD_FAILURE() << "nvcc failed:\n" << log;
    return {"", ""};
  }
  EXPECT_NE(log.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;
  s.text = run("\"" + cuobjdump + "\" --dump-sass \"" + cubin + "\"", rc);
  if (rc != 0) {
    ADD_FAILURE() << "cuobjdump failed:\n" << s.text;
    s.text.clear();
  }
  return s;
}

void check_main_loop(const sass& s, const std::string& hgmma) {
  ASSERT_FALSE(s.text.empty());
  EXPECT_GE(count(s.text, hgmma), 4u) << "expected the 4 k-steps of a 64-deep stage as " << hgmma;
  EXPECT_GE(count(s.text, "UTMALDG"), 1u) << "operands come in by TMA";
  EXPECT_GE(count(s.text, "UTMASTG"), 1u) << "the epilogue stores by TMA";
  EXPECT_EQ(count(s.text, "LDL"), 0u) << "local-memory loads: registers spilled";
  EXPECT_EQ(count(s.text, "STL"), 0u) << "local-memory stores: registers spilled";
  // Between the first and the last HGMMA (the main loop) no GPU-scope fence may appear.
  const size_t first = s.text.find("HGMMA"), last = s.text.rfind("HGMMA");
  EXPECT_EQ(s.text.substr(first, last - first).find("MEMBAR.ALL.GPU"), std::string::npos)
      << "a GPU-scope memory barrier inside the main loop";
}

}  // namespace

TEST(GemmSass, Tile128x256Cluster2) {
  const sass s = compile("", "256_c2");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  check_main_loop(s, "HGMMA.64x256x16.F32.BF16");
}

TEST(GemmSass, Tile128x128NoCluster) {
  const sass s = compile("-DHOPPER_GEMM_INSTANCE_BN=128 -DHOPPER_GEMM_INSTANCE_STAGES=6 -DHOPPER_GEMM_INSTANCE_CLUSTER=1",
                         "128_c1");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  check_main_loop(s, "HGMMA.64x128x16.F32.BF16");
}

TEST(GemmSass, PingPong128x128Cluster2) {
  const sass s = compile("-DHOPPER_GEMM_INSTANCE_BN=128 -DHOPPER_GEMM_INSTANCE_STAGES=6 -DHOPPER_GEMM_INSTANCE_PINGPONG=true",
                         "pp_c2");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  // Two m64n128k16 (rows 0-63 and 64-127 of the warpgroup's tile) per k-step: 8 per stage.
  check_main_loop(s, "HGMMA.64x128x16.F32.BF16");
  EXPECT_GE(count(s.text, "HGMMA.64x128x16.F32.BF16"), 8u);
  // The ordering barriers: one warpgroup waits (BAR.SYNC of 256 threads), the other arrives.
  EXPECT_GE(count(s.text, "BAR.ARV"), 1u) << "the turn is handed over with bar.arrive";
  EXPECT_GE(count(s.text, ", 0x100"), 2u) << "ordering barriers count 256 threads (both warpgroups)";
}
