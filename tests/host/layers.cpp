// The layering rules of include/hopper (README, "Layers and file names"), checked on the sources:
//   - the PTX layer (include/hopper/ptx/) includes nothing of the library above it: only standard
//     and CUDA headers (<...>), its own files and hopper/hd.hpp, the qualifier macros beneath every
//     layer;
//   - hopper/ptx.cuh includes every file of the PTX layer;
//   - `.hpp` headers compile as plain C++: they include a `.cuh` only inside a __CUDACC__ branch,
//     except hopper/pipeline.cuh, plain C++ under its historical name;
//   - `.cuh` headers need nvcc: each declares device code or includes another `.cuh`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = HOPPER_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

struct include_line {
  std::string target;  // what is between the quotes or angle brackets
  bool angled;         // <...>
  bool under_cuda;     // inside an #if/#ifdef branch taken only under __CUDACC__
  int line;
};

// The #include directives of a file, with whether each sits in a __CUDACC__-only branch.
std::vector<include_line> includes_of(const fs::path& p) {
  static const std::regex inc(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  static const std::regex open_if(R"(^\s*#\s*(if|ifdef|ifndef)\b(.*))");
  static const std::regex else_(R"(^\s*#\s*(else|elif)\b)");
  static const std::regex endif(R"(^\s*#\s*endif\b)");
  std::vector<include_line> out;
  std::vector<bool> cuda_branch;  // per open conditional: is the current branch __CUDACC__-only
  std::istringstream in(slurp(p));
  std::string l;
  std::smatch m;
  for (int n = 1; std::getline(in, l); ++n) {
    if (std::regex_search(l, m, open_if)) {
      const std::string kw = m[1], cond = m[2];
      const bool cuda =
          cond.find("__CUDACC__") != std::string::npos && kw != "ifndef" && cond.find('!') == std::string::npos;
      cuda_branch.push_back(cuda);
    } else if (std::regex_search(l, else_)) {
      if (!cuda_branch.empty()) cuda_branch.back() = false;
    } else if (std::regex_search(l, endif)) {
      if (!cuda_branch.empty()) cuda_branch.pop_back();
    } else if (std::regex_search(l, m, inc)) {
      const bool under = std::find(cuda_branch.begin(), cuda_branch.end(), true) != cuda_branch.end();
      out.push_back({m[2], m[1] == "<", under, n});
    }
  }
  return out;
}

std::vector<fs::path> files_under(const fs::path& dir, const std::set<std::string>& exts) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && exts.count(e.path().extension().string())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string rel(const fs::path& p) { return fs::relative(p, kRoot).generic_string(); }

TEST(Layers, PtxIncludesNothingAbove) {
  const fs::path ptx = kRoot / "include/hopper/ptx";
  int checked = 0;
  for (const fs::path& f : files_under(ptx, {".cuh", ".hpp"})) {
    for (const include_line& i : includes_of(f)) {
      ++checked;
      if (i.angled) continue;  // the standard library and CUDA's headers
      const bool own = i.target.find('/') == std::string::npos && fs::exists(ptx / i.target);
      const bool own_full = i.target.rfind("hopper/ptx/", 0) == 0 && fs::exists(kRoot / "include" / i.target);
      const bool macros = i.target == "hopper/hd.hpp";
      EXPECT_TRUE(own || own_full || macros)
          << rel(f) << ":" << i.line << " includes \"" << i.target << "\", which is not part of the PTX layer";
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(Layers, PtxHeaderIncludesEveryPtxFile) {
  std::set<std::string> included;
  for (const include_line& i : includes_of(kRoot / "include/hopper/ptx.cuh")) included.insert(i.target);
  for (const fs::path& f : files_under(kRoot / "include/hopper/ptx", {".cuh", ".hpp"}))
    EXPECT_TRUE(included.count("ptx/" + f.filename().string()))
        << "include/hopper/ptx.cuh does not include ptx/" << f.filename().string();
}

TEST(Layers, HppHeadersArePlainCpp) {
  int checked = 0;
  for (const char* dir : {"include", "model/include", "kernels", "apps", "bench", "tests/support"})
    for (const fs::path& f : files_under(kRoot / dir, {".hpp"})) {
      ++checked;
      for (const include_line& i : includes_of(f)) {
        const bool cuh = i.target.size() > 4 && i.target.compare(i.target.size() - 4, 4, ".cuh") == 0;
        if (!cuh || i.under_cuda || i.target == "hopper/pipeline.cuh") continue;
        ADD_FAILURE() << rel(f) << ":" << i.line << " is a .hpp (plain C++) but includes \"" << i.target
                      << "\" outside a __CUDACC__ branch";
      }
    }
  EXPECT_GT(checked, 10);
}

TEST(Layers, CuhHeadersNeedNvcc) {
  static const std::regex device_code(R"(__device__|__global__|__shared__|\basm\b|__grid_constant__)");
  for (const fs::path& f : files_under(kRoot / "include/hopper", {".cuh"})) {
    if (rel(f) == "include/hopper/pipeline.cuh") continue;  // the one exception (README)
    bool needs_nvcc = std::regex_search(slurp(f), device_code);
    for (const include_line& i : includes_of(f))
      needs_nvcc = needs_nvcc || (!i.angled && i.target.size() > 4 && i.target.substr(i.target.size() - 4) == ".cuh");
    EXPECT_TRUE(needs_nvcc) << rel(f) << " is named .cuh but holds no device code: name it .hpp";
  }
}

}  // namespace
