// Code the docs quote is the file it names: every block after a `<!-- file: PATH -->` marker in
// docs/*.md is PATH's text, word for word (PATH from the repository root), so that a tutorial
// cannot drift from the programs ctest builds and runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(DocQuotes, EveryQuotedFileIsTheFile) {
  const std::filesystem::path root = HOPPER_SOURCE_DIR;
  int quotes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root / "docs")) {
    if (entry.path().extension() != ".md") continue;
    const std::string doc = slurp(entry.path()), name = entry.path().filename().string();
    const std::string marker = "<!-- file: ";
    for (size_t at = doc.find(marker); at != std::string::npos; at = doc.find(marker, at + 1)) {
      const size_t path_end = doc.find(" -->", at);
      ASSERT_NE(path_end, std::string::npos) << name << ": an unclosed marker";
      const std::string path = doc.substr(at + marker.size(), path_end - at - marker.size());
      const size_t open = doc.find("```", path_end), begin = doc.find('\n', open) + 1;
      const size_t end = doc.find("```\n", begin);
      ASSERT_NE(end, std::string::npos) << name << ": the block quoting " << path << " is not closed";
      const std::string file = slurp(root / path);
      ASSERT_FALSE(file.empty()) << name << " quotes " << path << ", which does not exist";
      EXPECT_EQ(doc.substr(begin, end - begin), file) << name << "'s block differs from " << path;
      ++quotes;
    }
  }
  EXPECT_GE(quotes, 3) << "docs/tutorial_model.md quotes its three files";
}

}  // namespace
