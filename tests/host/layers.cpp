// The layering rules of include/hopper (README, "Layers and file names"), checked on the sources:
//   - the folders are the layers, bottom to top ptx/, objects/, trace/, target/, pipeline/; a
//     header includes only the library's headers of its own layer or below, and the files beneath
//     every layer (hd.hpp, source_location.hpp, version.hpp, which include only each other);
//     standard and CUDA headers (<...>) are free;
//   - hopper/ptx.cuh includes every file of the PTX layer and nothing else of the library;
//   - `.hpp` headers compile as plain C++: they include a `.cuh` only inside a __CUDACC__ branch;
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

// The layers bottom to top, and the files beneath all of them.
const std::vector<std::string> kLayers = {"ptx", "objects", "trace", "target", "pipeline"};
const std::set<std::string> kBeneath = {"hopper/hd.hpp", "hopper/source_location.hpp", "hopper/version.hpp"};

// The layer of a library header named as included ("hopper/objects/mbarrier.cuh"; the PTX
// layer's umbrella hopper/ptx.cuh is of that layer), or -1 where it is beneath every layer or not
// in one.
int layer_of(const std::string& target) {
  if (target == "hopper/ptx.cuh") return 0;
  for (size_t i = 0; i < kLayers.size(); ++i)
    if (target.rfind("hopper/" + kLayers[i] + "/", 0) == 0) return int(i);
  return -1;
}

// The name under which a file of include/ is included ("hopper/..."), resolving a quoted include
// relative to the including file's folder first, as the compiler does.
std::string resolved(const fs::path& from, const std::string& target) {
  const fs::path local = from.parent_path() / target;
  if (fs::exists(local)) return fs::relative(fs::canonical(local), kRoot / "include").generic_string();
  return target;
}

TEST(Layers, EachLayerIncludesOnlyItselfAndBelow) {
  int checked = 0;
  for (size_t layer = 0; layer < kLayers.size(); ++layer) {
    const fs::path dir = kRoot / "include/hopper" / kLayers[layer];
    ASSERT_TRUE(fs::is_directory(dir)) << rel(dir);
    for (const fs::path& f : files_under(dir, {".cuh", ".hpp"}))
      for (const include_line& i : includes_of(f)) {
        if (i.angled) continue;  // the standard library and CUDA's headers
        ++checked;
        const std::string t = resolved(f, i.target);
        const int l = layer_of(t);
        EXPECT_TRUE(kBeneath.count(t) || (l >= 0 && l <= int(layer)))
            << rel(f) << ":" << i.line << " (layer " << kLayers[layer] << ") includes \"" << i.target
            << "\", which is not of its layer or one below it";
      }
  }
  EXPECT_GT(checked, 20);
  for (const std::string& b : kBeneath)
    for (const include_line& i : includes_of(kRoot / "include" / b))
      EXPECT_TRUE(i.angled || kBeneath.count(resolved(kRoot / "include" / b, i.target)))
          << b << ":" << i.line << " includes \"" << i.target << "\", but it is beneath every layer";
  // Every header of include/hopper is in a layer, beneath them, or one of the two umbrellas.
  for (const fs::path& f : files_under(kRoot / "include/hopper", {".cuh", ".hpp"})) {
    const std::string name = fs::relative(f, kRoot / "include").generic_string();
    EXPECT_TRUE(layer_of(name) >= 0 || kBeneath.count(name) || name == "hopper/async.cuh")
        << rel(f) << " is in no layer's folder";
  }
}

TEST(Layers, PtxHeaderIncludesEveryPtxFile) {
  std::set<std::string> included;
  for (const include_line& i : includes_of(kRoot / "include/hopper/ptx.cuh")) {
    const std::string t = resolved(kRoot / "include/hopper/ptx.cuh", i.target);
    if (!i.angled) {
      EXPECT_EQ(layer_of(t), 0) << "include/hopper/ptx.cuh includes \"" << i.target << "\"";
    }
    included.insert(t);
  }
  for (const fs::path& f : files_under(kRoot / "include/hopper/ptx", {".cuh", ".hpp"}))
    EXPECT_TRUE(included.count("hopper/ptx/" + f.filename().string()))
        << "include/hopper/ptx.cuh does not include ptx/" << f.filename().string();
}

TEST(Layers, HppHeadersArePlainCpp) {
  int checked = 0;
  for (const char* dir : {"include", "model/include", "kernels", "apps", "bench", "tests/support"})
    for (const fs::path& f : files_under(kRoot / dir, {".hpp"})) {
      ++checked;
      for (const include_line& i : includes_of(f)) {
        const bool cuh = i.target.size() > 4 && i.target.compare(i.target.size() - 4, 4, ".cuh") == 0;
        if (!cuh || i.under_cuda) continue;
        ADD_FAILURE() << rel(f) << ":" << i.line << " is a .hpp (plain C++) but includes \"" << i.target
                      << "\" outside a __CUDACC__ branch";
      }
    }
  EXPECT_GT(checked, 10);
}

TEST(Layers, CuhHeadersNeedNvcc) {
  static const std::regex device_code(R"(__device__|__global__|__shared__|\basm\b|__grid_constant__)");
  for (const fs::path& f : files_under(kRoot / "include/hopper", {".cuh"})) {
    bool needs_nvcc = std::regex_search(slurp(f), device_code);
    for (const include_line& i : includes_of(f))
      needs_nvcc = needs_nvcc || (!i.angled && i.target.size() > 4 && i.target.substr(i.target.size() - 4) == ".cuh");
    EXPECT_TRUE(needs_nvcc) << rel(f) << " is named .cuh but holds no device code: name it .hpp";
  }
}

}  // namespace
