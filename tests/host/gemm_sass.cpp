// The GEMM's SASS: compile the kernel's own translation unit (kernels/gemm/gemm_instance.cu) with
// nvcc to a cubin, disassemble it with cuobjdump --dump-sass, and check that the main loop is
// tensor-core work (HGMMA 64x256x16) fed by TMA (UTMALDG), that nothing spills to local memory
// (no LDL/STL), that a k-block costs no more instructions than its hand-written form, that the
// stage releases carry no GPU-scope memory barrier, that ptxas serializes no wgmma (C7515), that
// no fence.sc is left in the kernel, and that no global access precedes griddepcontrol.wait.
// Skips, saying why, when nvcc or cuobjdump is not there.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sass_tools.hpp"

namespace {

using hopper_test::count_of;

struct sass {
  std::string text, why_not;
};

// Compiles one instance (-D definitions select it) and returns its SASS, or why it could not.
sass compile(const std::string& defs, const std::string& tag) {
  sass s;
  const std::string nvcc = hopper_test::find_nvcc();
  if (nvcc.empty()) return {"", "nvcc not found (set NVCC or PATH)"};
  const std::string src = HOPPER_SOURCE_DIR;
  const std::string cubin = std::string(HOPPER_BINARY_DIR) + "/gemm_sass_" + tag + ".cubin";
  const auto log =
      hopper_test::compile_cubin(nvcc, src, src + "/kernels/gemm/gemm_instance.cu", cubin, "-Xptxas -v " + defs);
  if (log.status != 0) {
    ADD_FAILURE() << "nvcc failed:\n" << log.output;
    return {"", ""};
  }
  EXPECT_NE(log.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log.output;
  EXPECT_EQ(log.output.find(hopper_test::ptxas_wgmma_serialized), std::string::npos) << log.output;
  // The ptxas report needs nvcc alone; the SASS checks need cuobjdump too.
  const std::string cuobjdump = hopper_test::find_cuobjdump(nvcc);
  if (cuobjdump.empty()) return {"", "cuobjdump not found (set CUOBJDUMP or PATH); the ptxas report was checked"};
  const auto dump = hopper_test::dump_sass(cuobjdump, cubin);
  if (dump.status != 0)
    ADD_FAILURE() << "cuobjdump failed:\n" << dump.output;
  else
    s.text = dump.output;
  return s;
}

// The consumers' main loop: the shortest loop (a backward BRA and the instructions it jumps back
// over) that holds HGMMA instructions. Returns its instructions per k-block, `steps` HGMMA making
// one k-block (ptxas may unroll the loop), or 0 when there is no such loop.
double instructions_per_k_block(const std::string& text, size_t steps) {
  static const std::regex line(R"(^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;)");
  static const std::regex branch(R"(BRA (?:\S+ )?0x([0-9a-f]+))");
  std::vector<std::pair<unsigned long, std::string>> ins;
  std::stringstream ss(text);
  std::smatch m;
  for (std::string l; std::getline(ss, l);)
    if (std::regex_search(l, m, line)) ins.emplace_back(std::stoul(m[1].str(), nullptr, 16), m[2].str());
  double best = 0;
  size_t best_len = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!std::regex_search(ins[i].second, m, branch)) continue;
    const unsigned long target = std::stoul(m[1].str(), nullptr, 16);
    if (target >= ins[i].first) continue;
    size_t first = i;
    while (first > 0 && ins[first].first > target) --first;
    if (ins[first].first != target) continue;
    size_t hgmma = 0;
    for (size_t j = first; j <= i; ++j) hgmma += ins[j].second.find("HGMMA") != std::string::npos;
    const size_t len = i - first + 1;
    if (hgmma >= steps && (best_len == 0 || len < best_len)) {
      best_len = len;
      const size_t k_blocks = hgmma / steps;  // whole k-blocks the (possibly unrolled) loop holds
      best = double(len) / double(k_blocks);
    }
  }
  return best;
}

// Every instance's main loop, checked against the hand-written form of a k-block: the try_wait,
// the wgmma fence, the HGMMA with their descriptors, commit, wait_group and the release. The stage
// descriptors are one add from a value kept in a register, not rebuilt from the shared-memory base
// in every k-block (S2UR SR_CgaCtaId, the 1024-B alignment, the field masks: 115 instructions per
// k-block before, for 128 x 256 tiles; 78 to 82 now, as register pressure varies).
void check_main_loop(const sass& s, const std::string& hgmma, size_t steps = 4, double max_per_k_block = 85) {
  ASSERT_FALSE(s.text.empty());
  const double per_k_block = instructions_per_k_block(s.text, steps);
  EXPECT_GT(per_k_block, 0) << "no loop holding " << steps << " HGMMA";
  EXPECT_LE(per_k_block, max_per_k_block) << "instructions per k-block in the consumers' main loop";
  EXPECT_GE(count_of(s.text, hgmma), 4u) << "expected the 4 k-steps of a 64-deep stage as " << hgmma;
  EXPECT_GE(count_of(s.text, "UTMALDG"), 1u) << "operands come in by TMA";
  EXPECT_GE(count_of(s.text, "UTMASTG"), 1u) << "the epilogue stores by TMA";
  EXPECT_EQ(count_of(s.text, "LDL"), 0u) << "local-memory loads: registers spilled";
  EXPECT_EQ(count_of(s.text, "STL"), 0u) << "local-memory stores: registers spilled";
  // Between the first and the last HGMMA (the main loop) no GPU-scope fence may appear.
  const size_t first = s.text.find("HGMMA"), last = s.text.rfind("HGMMA");
  EXPECT_EQ(s.text.substr(first, last - first).find("MEMBAR.ALL.GPU"), std::string::npos)
      << "a GPU-scope memory barrier inside the main loop";
  // The split-K / stream-K handshake orders its partials with one atom.acq_rel.gpu per warpgroup
  // after a named barrier, not with a fence.sc.gpu (membar.gl, __threadfence) in every thread.
  EXPECT_EQ(count_of(s.text, "MEMBAR.SC"), 0u) << "a sequentially consistent fence in the kernel";
  // Programmatic dependent launch: griddepcontrol.wait (ACQBULK) comes before the first global
  // access by TMA, load or store, and griddepcontrol.launch_dependents (PREEXIT) is there.
  const size_t wait = s.text.find("ACQBULK");
  ASSERT_NE(wait, std::string::npos) << "no griddepcontrol.wait";
  EXPECT_LT(wait, s.text.find("UTMALDG")) << "a TMA load before griddepcontrol.wait";
  EXPECT_LT(wait, s.text.find("UTMASTG")) << "a TMA store before griddepcontrol.wait";
  EXPECT_GE(count_of(s.text, "PREEXIT"), 1u) << "no griddepcontrol.launch_dependents";
}

}  // namespace

TEST(GemmSass, Tile128x256Cluster2) {
  const sass s = compile("", "256_c2");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  check_main_loop(s, "HGMMA.64x256x16.F32.BF16");
}

TEST(GemmSass, Tile128x256Float32Output) {  // fp32 output: stored at once, still no spills
  const sass s = compile("-DHOPPER_GEMM_INSTANCE_OUT=float", "256_c2_f32");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  check_main_loop(s, "HGMMA.64x256x16.F32.BF16");
}

TEST(GemmSass, Tile128x256Cluster1x2) {  // A multicast along N: still no spills, no GPU fence
  const sass s = compile("-DHOPPER_GEMM_INSTANCE_CLUSTER_M=1 -DHOPPER_GEMM_INSTANCE_CLUSTER_N=2", "256_c1x2");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  check_main_loop(s, "HGMMA.64x256x16.F32.BF16");
  EXPECT_GE(count_of(s.text, "UTMALDG.2D.MULTICAST"), 1u) << "the A share is multicast";
}

TEST(GemmSass, Tile64x128Cluster2) {  // 64-row tiles: each warpgroup a 64 x 64 half, B multicast
  const sass s = compile("-DHOPPER_GEMM_INSTANCE_BM=64 -DHOPPER_GEMM_INSTANCE_BN=128 -DHOPPER_GEMM_INSTANCE_STAGES=8",
                         "64x128_c2");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  check_main_loop(s, "HGMMA.64x64x16.F32.BF16");
}

TEST(GemmSass, Tile128x128NoCluster) {
  const sass s = compile(
      "-DHOPPER_GEMM_INSTANCE_BN=128 -DHOPPER_GEMM_INSTANCE_STAGES=6 -DHOPPER_GEMM_INSTANCE_CLUSTER_M=1", "128_c1");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  check_main_loop(s, "HGMMA.64x128x16.F32.BF16", 4, 75);
}

TEST(GemmSass, PingPong128x128Cluster2) {
  const sass s = compile(
      "-DHOPPER_GEMM_INSTANCE_BN=128 -DHOPPER_GEMM_INSTANCE_STAGES=6 -DHOPPER_GEMM_INSTANCE_PINGPONG=true", "pp_c2");
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not;
  // Two m64n128k16 (rows 0-63 and 64-127 of the warpgroup's tile) per k-step: 8 per stage.
  check_main_loop(s, "HGMMA.64x128x16.F32.BF16", 8, 105);
  EXPECT_GE(count_of(s.text, "HGMMA.64x128x16.F32.BF16"), 8u);
  // The ordering barriers: one warpgroup waits (BAR.SYNC of 256 threads), the other arrives.
  EXPECT_GE(count_of(s.text, "BAR.ARV"), 1u) << "the turn is handed over with bar.arrive";
  EXPECT_GE(count_of(s.text, ", 0x100"), 2u) << "ordering barriers count 256 threads (both warpgroups)";
}
