// What the host SASS tests share: finding nvcc and cuobjdump, running a command and capturing
// its output, compiling one translation unit for sm_90a to a cubin and disassembling it
// (cuobjdump --dump-sass), and counting instructions in the result. Plain C++ (no GoogleTest):
// each test decides what a failure means.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace hopper_test {

struct command_result {
  int status = -1;     // pclose's status; -1 where the command could not be started
  std::string output;  // stdout and stderr together
};

// Runs `cmd` through the shell.
inline command_result run_command(const std::string& cmd) {
  command_result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  r.status = pclose(p);
  return r;
}

// `s` as one shell word.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline bool file_exists(const std::string& path) { return !path.empty() && std::ifstream(path).good(); }

// `name` in the first directory of PATH that has it, or empty.
inline std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::stringstream ss(path);
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty() && file_exists(dir + "/" + name)) return dir + "/" + name;
  return "";
}

// A tool named by the environment variable `env`, else `name` on PATH, else the first of `extra`
// that exists; empty where none does.
inline std::string find_tool(const char* env, const std::string& name, const std::vector<std::string>& extra = {}) {
  if (const char* e = std::getenv(env); e && file_exists(e)) return e;
  if (std::string p = find_on_path(name); !p.empty()) return p;
  for (const auto& p : extra)
    if (file_exists(p)) return p;
  return "";
}

// nvcc: $NVCC, PATH, /usr/local/cuda/bin.
inline std::string find_nvcc() { return find_tool("NVCC", "nvcc", {"/usr/local/cuda/bin/nvcc"}); }

// cuobjdump: $CUOBJDUMP, PATH, beside `nvcc`, /usr/local/cuda/bin, the pip wheel of CUDA 13.
inline std::string find_cuobjdump(const std::string& nvcc) {
  return find_tool("CUOBJDUMP", "cuobjdump",
                   {nvcc.substr(0, nvcc.rfind('/')) + "/cuobjdump", "/usr/local/cuda/bin/cuobjdump",
                    "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump"});
}

// Why the configured nvcc (CMAKE_CUDA_COMPILER, passed in) with cuobjdump from PATH cannot
// produce SASS here, or empty.
inline std::string configured_toolchain_missing(const std::string& nvcc) {
  if (nvcc.empty() || !file_exists(nvcc)) return "no CUDA compiler configured (CMAKE_CUDA_COMPILER)";
  if (find_on_path("cuobjdump").empty()) return "cuobjdump not on PATH";
  return {};
}

// nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin <flags>
//      -I <root>/include -I <root> -o <cubin> <source>      (root: the repository)
inline command_result compile_cubin(const std::string& nvcc, const std::string& root, const std::string& source,
                                    const std::string& cubin, const std::string& flags = "") {
  return run_command(shell_quote(nvcc) + " -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin " + flags + " -I " +
                     shell_quote(root + "/include") + " -I " + shell_quote(root) + " -o " + shell_quote(cubin) + " " +
                     shell_quote(source));
}

// The code of ptxas's report (-v) that it serialized wgmma.mma_async: where non-wgmma
// instructions define an accumulator register of a wgmma in flight, ptxas waits for every wgmma
// before the next, and the overlap of the products with other work is lost with no other sign.
inline constexpr const char* ptxas_wgmma_serialized = "C7515";

// cuobjdump --dump-sass <cubin>
inline command_result dump_sass(const std::string& cuobjdump, const std::string& cubin) {
  return run_command(shell_quote(cuobjdump) + " --dump-sass " + shell_quote(cubin));
}

// How often `needle` occurs in `text` (overlapping occurrences count).
inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t c = 0;
  for (size_t i = text.find(needle); i != std::string::npos; i = text.find(needle, i + 1)) ++c;
  return c;
}

// The instructions of a SASS dump, one per entry (opcode and operands; addresses, encodings and
// header comments dropped).
inline std::vector<std::string> sass_instructions(const std::string& sass) {
  static const std::regex line(R"(^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;)");
  std::vector<std::string> out;
  std::stringstream ss(sass);
  std::smatch m;
  for (std::string l; std::getline(ss, l);)
    if (std::regex_search(l, m, line)) out.push_back(m[1].str());
  return out;
}

// How many of `instructions` contain `what`.
inline size_t count_containing(const std::vector<std::string>& instructions, const std::string& what) {
  size_t n = 0;
  for (const auto& s : instructions) n += s.find(what) != std::string::npos;
  return n;
}

// The SASS of each function of a dump: mangled name -> its instructions (sass_instructions).
inline std::vector<std::pair<std::string, std::vector<std::string>>> sass_functions(const std::string& sass) {
  static const std::regex head(R"(Function : (\S+))");
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::stringstream ss(sass);
  std::smatch m;
  std::string body;
  auto flush = [&] {
    if (!out.empty()) out.back().second = sass_instructions(body);
    body.clear();
  };
  for (std::string l; std::getline(ss, l);) {
    if (std::regex_search(l, m, head)) {
      flush();
      out.push_back({m[1].str(), {}});
    } else {
      body += l + "\n";
    }
  }
  flush();
  return out;
}

// FNV-1a over the instructions (one newline after each): a digest that is the same on every
// platform, so a reference file written on one machine checks another.
inline uint64_t fnv1a(const std::vector<std::string>& instructions) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& s : instructions) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ uint64_t('\n')) * 1099511628211ull;
  }
  return h;
}

// The opcodes of `instructions` (guard predicates dropped, modifiers kept) with their counts,
// sorted: what stays the same when only register allocation or instruction order changes.
inline std::vector<std::string> opcode_histogram(const std::vector<std::string>& instructions) {
  static const std::regex guard(R"(^@!?U?P[T0-9]+\s+)");
  std::map<std::string, int> counts;
  for (const auto& s : instructions) {
    const std::string body = std::regex_replace(s, guard, "");
    ++counts[body.substr(0, body.find(' '))];
  }
  std::vector<std::string> out;
  out.reserve(counts.size());
  for (const auto& [op, n] : counts) out.push_back(op + " " + std::to_string(n));
  return out;
}

}  // namespace hopper_test
