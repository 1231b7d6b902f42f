// The attention kernel's ptxas report: every instance the rule chooses among (attention_rule.hpp's
// `instances`, the table the CUDA launcher dispatches over) compiled with nvcc -Xptxas -v, and for
// each entry function:
//   - no wgmma serialization (ptxas's C7515, "wgmma.mma_async instructions are serialized"): where
//     non-wgmma instructions define an accumulator register while a wgmma is in flight, ptxas
//     waits for every wgmma before each one, and the overlap of the softmax with the products is
//     lost without any other sign (the kernel stays correct and only slows down);
//   - no more spill stores than `known_spills` records for it (none for most).
// Skips, saying why, without nvcc.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "kernels/attention/attention_rule.hpp"
#include "sass_tools.hpp"

namespace {

namespace ha = hopper::attention;

// The spills ptxas reports for an instance, in bytes of spill stores (nvcc 13.0): three consumer
// warpgroups at head dimension 64 leave the producer 12 (its registers after setmaxnreg), and
// head dimension 256 with 80-wide kv blocks spills 104 in the consumers (it is still faster than
// 64-wide blocks, docs/attention.md). Every other instance spills nothing.
int known_spills(const ha::head_dim_shape& h) {
  if (h.head_dim == 64 && h.consumers == 3) return 12;
  if (h.head_dim == 256 && h.block_n == 80) return 104;
  return 0;
}

// The mangled template argument list of instance h's traits (Itanium ABI, as ptxas names the
// kernel): unique among the kernels of the table.
std::string mangled_traits(const ha::head_dim_shape& h) {
  const auto i = [](int v) { return "Li" + std::to_string(v) + "E"; };
  return "16attention_traitsI" + i(h.head_dim) + "Lb1E" + i(h.block_n) + i(h.stages) + i(h.consumers) + i(h.q_stages) +
         "EE";
}

// One explicit instantiation of the kernel per instance of the table.
std::string instantiations() {
  std::string s = "#include \"kernels/attention/attention_kernel.cuh\"\nnamespace ha = hopper::attention;\n";
  for (const ha::instance_rate& in : ha::instances) {
    const ha::head_dim_shape& h = in.shape;
    s += "template __global__ void ha::attention_kernel<ha::attention_traits<" + std::to_string(h.head_dim) +
         ", true, " + std::to_string(h.block_n) + ", " + std::to_string(h.stages) + ", " + std::to_string(h.consumers) +
         ", " + std::to_string(h.q_stages) +
         ">>(const __grid_constant__ hopper::tensor_map, const __grid_constant__ hopper::tensor_map, "
         "const __grid_constant__ hopper::tensor_map, const __grid_constant__ hopper::tensor_map, "
         "const ha::kernel_params);\n";
  }
  return s;
}

struct report {
  std::map<std::string, int> spill_stores;  // per entry function (mangled name)
  std::string serialized;                   // the C7515 lines
};

report parse(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex spill(R"((\d+) bytes spill stores)");
  report r;
  std::stringstream ss(log);
  std::string current;
  std::smatch m;
  for (std::string l; std::getline(ss, l);) {
    if (std::regex_search(l, m, entry)) {
      current = m[1].str();
      r.spill_stores[current] = -1;
    } else if (std::regex_search(l, m, spill) && !current.empty()) {
      r.spill_stores[current] = std::stoi(m[1].str());
    }
    if (l.find(hopper_test::ptxas_wgmma_serialized) != std::string::npos) r.serialized += l + "\n";
  }
  return r;
}

TEST(AttentionPtxas, NoInstanceSerializesItsWgmmaOrSpills) {
  const std::string nvcc = hopper_test::find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set NVCC or PATH)";
  const std::string dir = HOPPER_BINARY_DIR;
  const std::string source = dir + "/attention_ptxas.cu", cubin = dir + "/attention_ptxas.cubin";
  std::ofstream(source) << instantiations();
  const auto log =
      hopper_test::compile_cubin(nvcc, HOPPER_SOURCE_DIR, source, cubin, "--expt-relaxed-constexpr -Xptxas -v");
  ASSERT_EQ(log.status, 0) << "nvcc failed:\n" << log.output;
  const report r = parse(log.output);
  EXPECT_EQ(int(r.spill_stores.size()), ha::instance_count) << "entry functions in the report:\n" << log.output;
  EXPECT_TRUE(r.serialized.empty()) << "wgmma serialized:\n" << r.serialized;
  for (const ha::instance_rate& in : ha::instances) {
    const std::string name = mangled_traits(in.shape);
    auto at = r.spill_stores.begin();
    while (at != r.spill_stores.end() && at->first.find(name) == std::string::npos) ++at;
    if (at == r.spill_stores.end()) {
      ADD_FAILURE() << name << " is not in the report:\n" << log.output;
      continue;
    }
    EXPECT_GE(at->second, 0) << name << ": no spill line in the report";
    EXPECT_LE(at->second, known_spills(in.shape)) << name << " spills " << at->second << " bytes";
  }
}

// The parser on a report of each kind, so that the test above cannot pass by reading nothing.
TEST(AttentionPtxas, ParserReadsSpillsAndSerialization) {
  const std::string log =
      "ptxas info    : Compiling entry function '_Z1av' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z1av\n"
      "    8 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non "
      "wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage in "
      "the function '_Z1bv'\n"
      "ptxas info    : Compiling entry function '_Z1bv' for 'sm_90a'\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
  const report r = parse(log);
  ASSERT_EQ(r.spill_stores.size(), 2u);
  EXPECT_EQ(r.spill_stores.at("_Z1av"), 12);
  EXPECT_EQ(r.spill_stores.at("_Z1bv"), 0);
  EXPECT_NE(r.serialized.find("_Z1bv"), std::string::npos);
}

}  // namespace
