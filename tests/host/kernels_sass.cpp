// Zero overhead of the target layer, checked without a GPU: the kernels written once over a
// target (the streaming copies, the hazard lab, the showcase's pipeline) compile, through
// hopper::device_target, to the SASS they compiled to when they called the PTX layer directly.
// tests/sass/kernels_reference.txt holds, per __global__ function of tests/sass/kernels.cu, its
// instruction count, the digest of its opcode histogram and the digest of its whole text, taken
// from the hand-written kernels with nvcc 13.0. Every function must have the same instructions in
// the same number (opcode and modifiers: the same work, the same fences, waits and copies);
// functions whose text also matches byte for byte are counted and the others listed, since
// there only the register allocation or the order differs (docs/gpu_runs.md has the copy's
// same-run before/after timing). Skips, saying why, without nvcc 13.0 and cuobjdump.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "sass_tools.hpp"

#ifndef HOPPER_NVCC
#define HOPPER_NVCC ""
#endif

namespace {

struct digest {
  size_t count = 0;
  std::string ops, text;
};

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", (unsigned long long)v);
  return b;
}

std::map<std::string, digest> reference() {
  std::ifstream f(std::string(HOPPER_SOURCE_DIR) + "/tests/sass/kernels_reference.txt");
  std::map<std::string, digest> m;
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name;
    digest d;
    ss >> name >> d.count >> d.ops >> d.text;
    m[name] = d;
  }
  return m;
}

TEST(KernelsSass, TargetKernelsCompileToTheHandWrittenInstructions) {
  const std::string nvcc = HOPPER_NVCC;
  if (std::string why = hopper_test::configured_toolchain_missing(nvcc); !why.empty())
    GTEST_SKIP() << "cannot produce SASS: " << why;
  const auto version = hopper_test::run_command(hopper_test::shell_quote(nvcc) + " --version");
  if (version.output.find("release 13.0") == std::string::npos)
    GTEST_SKIP() << "the reference SASS is nvcc 13.0's; this nvcc is another release:\n" << version.output;
  const auto ref = reference();
  ASSERT_GT(ref.size(), 100u) << "tests/sass/kernels_reference.txt is missing or short";

  const std::string out = std::string(HOPPER_BINARY_DIR) + "/kernels_sass";
  const auto c =
      hopper_test::compile_cubin(nvcc, HOPPER_SOURCE_DIR, std::string(HOPPER_SOURCE_DIR) + "/tests/sass/kernels.cu",
                                 out + ".cubin", "--expt-relaxed-constexpr");
  ASSERT_EQ(c.status, 0) << "nvcc failed:\n" << c.output;
  const auto d = hopper_test::dump_sass(hopper_test::find_on_path("cuobjdump"), out + ".cubin");
  ASSERT_EQ(d.status, 0) << "cuobjdump failed:\n" << d.output;

  std::map<std::string, digest> now;
  for (const auto& [name, ins] : hopper_test::sass_functions(d.output))
    now[name] = {ins.size(), hex(hopper_test::fnv1a(hopper_test::opcode_histogram(ins))), hex(hopper_test::fnv1a(ins))};

  // Today's table, in the reference's format, for a deliberate change of a kernel to be reviewed
  // against it (and, with the reason beside it in the reference's header, taken over).
  const std::string table = out + "_now.txt";
  {
    std::ofstream t(table);
    for (const auto& [name, dg] : now) t << name << ' ' << dg.count << ' ' << dg.ops << ' ' << dg.text << '\n';
  }
  size_t identical = 0;
  std::string reordered;
  for (const auto& [name, r] : ref) {
    auto it = now.find(name);
    ASSERT_NE(it, now.end()) << name << " is no longer compiled by tests/sass/kernels.cu";
    EXPECT_EQ(it->second.count, r.count) << name << ": instruction count changed (today's table: " << table << ")";
    EXPECT_EQ(it->second.ops, r.ops) << name << ": the opcode histogram changed (other instructions)";
    if (it->second.text == r.text)
      ++identical;
    else
      reordered += "  " + name + "\n";
  }
  std::printf(
      "%zu of %zu kernels byte-identical; the others have the same instructions, registers or order differ:\n%s",
      identical, ref.size(), reordered.c_str());
}

}  // namespace
