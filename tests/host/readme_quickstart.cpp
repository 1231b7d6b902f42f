// The README's quickstart is examples/quickstart.cu, word for word: the code a newcomer copies
// from the README is the file the package test compiles (tests/package/check_package.cmake).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ReadmeQuickstart, IsTheExampleFile) {
  const std::string root = HOPPER_SOURCE_DIR;
  const std::string readme = slurp(root + "/README.md"), file = slurp(root + "/examples/quickstart.cu");
  ASSERT_FALSE(file.empty()) << "examples/quickstart.cu is missing";
  const std::string marker = "<!-- quickstart: examples/quickstart.cu -->\n```cpp\n";
  const size_t at = readme.find(marker);
  ASSERT_NE(at, std::string::npos) << "the README has no quickstart block after its marker";
  const size_t begin = at + marker.size(), end = readme.find("```\n", begin);
  ASSERT_NE(end, std::string::npos) << "the quickstart block is not closed";
  EXPECT_EQ(readme.substr(begin, end - begin), file) << "README.md's quickstart differs from examples/quickstart.cu";
}

}  // namespace
