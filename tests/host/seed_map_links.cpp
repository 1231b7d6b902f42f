// docs/seed_map.md maps every section of the seed onto the code: each of its links must lead to a
// file that exists, and a backticked link text must name something that file contains (a
// function, a class, a test, a kernel), so the map cannot silently rot as the code moves.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kRoot = HOPPER_SOURCE_DIR;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

struct link {
  std::string text, target;
  int line;
};

std::vector<link> links_of(const std::string& md) {
  std::vector<link> out;
  static const std::regex re(R"(\[([^\]]+)\]\(([^)\s]+)\))");
  std::istringstream in(md);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    for (auto it = std::sregex_iterator(line.begin(), line.end(), re); it != std::sregex_iterator(); ++it)
      out.push_back({(*it)[1].str(), (*it)[2].str(), n});
  return out;
}

// `Suite.Test` -> Test, `a::b` -> b, `f()` -> f: the last name, which the file must contain.
std::string symbol_of(std::string text) {
  if (text.size() < 2 || text.front() != '`' || text.back() != '`') return {};
  text = text.substr(1, text.size() - 2);
  if (text.size() > 2 && text.compare(text.size() - 2, 2, "()") == 0) text.resize(text.size() - 2);
  for (const char* sep : {"::", ".", "/"}) {
    const size_t p = text.rfind(sep);
    if (p != std::string::npos) text = text.substr(p + std::string(sep).size());
  }
  return text;
}

void check_links(const std::string& doc) {
  const std::string md = slurp(kRoot + "/" + doc);
  ASSERT_FALSE(md.empty()) << doc << " is missing or empty";
  const std::string dir = kRoot + "/" + doc.substr(0, doc.rfind('/') + 1);
  int checked = 0;
  for (const link& l : links_of(md)) {
    if (l.target.rfind("http", 0) == 0) continue;
    const std::string file = l.target.substr(0, l.target.find('#'));
    const std::string body = slurp(dir + file);
    EXPECT_FALSE(body.empty()) << doc << ":" << l.line << ": link to '" << l.target << "': no such file (or empty)";
    const std::string sym = symbol_of(l.text);
    if (!sym.empty() && !body.empty()) {
      EXPECT_NE(body.find(sym), std::string::npos)
          << doc << ":" << l.line << ": '" << sym << "' does not occur in " << l.target;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0) << doc << " has no links";
  std::printf("%s: %d links checked\n", doc.c_str(), checked);
}

TEST(SeedMapLinks, EveryLinkedFileAndSymbolExists) { check_links("docs/seed_map.md"); }

TEST(SeedMapLinks, CompanionDocsLinksExist) {
  check_links("docs/hazard_lab.md");
  check_links("docs/primitives.md");
  check_links("docs/ptx_names.md");  // every hopper-async name there occurs in the file it links
}

// The measured figures travel with the map: it links the committed H200 results (whose files
// the link check above requires to exist and be non-empty).
TEST(SeedMapLinks, LinksTheCommittedResults) {
  std::set<std::string> targets;
  for (const link& l : links_of(slurp(kRoot + "/docs/seed_map.md"))) targets.insert(l.target);
  for (const char* f : {"results/bench_primitives.json", "results/primitives.png"})
    EXPECT_TRUE(targets.count(f)) << "docs/seed_map.md does not link " << f;
}

// One row per section 1..21, and one per line of the §21.1 summary (12 lines).
TEST(SeedMapLinks, EverySectionHasARow) {
  const std::string md = slurp(kRoot + "/docs/seed_map.md");
  std::set<int> sections;
  static const std::regex row(R"(^\| (\d+) \|)");
  std::istringstream in(md);
  std::string line;
  int summary_rows = 0;
  bool in_summary = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_summary = line.find("21.1") != std::string::npos;
    std::smatch m;
    if (std::regex_search(line, m, row))
      sections.insert(std::stoi(m[1].str()));
    else if (in_summary && line.rfind("| ", 0) == 0 && line.rfind("| ---", 0) != 0 &&
             line.find("summary line") == std::string::npos)
      ++summary_rows;
  }
  for (int s = 1; s <= 21; ++s) EXPECT_TRUE(sections.count(s)) << "no row for section " << s;
  EXPECT_EQ(summary_rows, 12) << "the seed's §21.1 summary has 12 lines";
}

// The checker itself: a missing file and a missing symbol are caught.
TEST(SeedMapLinks, CheckerCatchesBrokenLinks) {
  EXPECT_EQ(symbol_of("`Suite.TestName`"), "TestName");
  EXPECT_EQ(symbol_of("`hopper::ptx::fence_sc()`"), "fence_sc");
  EXPECT_EQ(symbol_of("plain text"), "");
  const auto l = links_of("a [`x`](../no/such/file.cu) b [y](z.md#anchor)");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].target, "../no/such/file.cu");
  EXPECT_TRUE(slurp(kRoot + "/docs/" + l[0].target).empty());
  EXPECT_EQ(l[1].target, "z.md#anchor");
}

}  // namespace
