// The bug zoo on the model: the bodies of tests/zoo/zoo_bodies.hpp, the very source
// tests/gpu/bug_zoo.cu runs on the H200, instantiated with the model's target (one task per
// thread). Every bug must be reported as its kind, with the words that name its cause, in every
// seed where its cause shows whatever the schedule, and otherwise within the seeds run; every
// twin and every correct protocol must run clean in every seed with the data a correct run
// writes. With HOPPER_ZOO_MODEL_TSV=path the verdicts are also written there, one row a case
// (tools/zoo_table.py joins them with the GPU's and compute-sanitizer's).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"
#include "tests/zoo/zoo_bodies.hpp"

using namespace hopper::model;
namespace zoo = hopper::zoo;

namespace {

// The kernels' mbarrier objects, as cta_shared objects (on the GPU, __shared__ variables).
struct ring_slots {
  mbarrier_slot full[zoo::kMaxStages];
  mbarrier_slot empty[zoo::kMaxStages];
};
struct one_slot {
  mbarrier_slot b;
};

// One run of a case on the model: the report, if any, and else how many output words were wrong.
struct model_run {
  bool reported = false;
  error_kind kind = error_kind::api_misuse;
  std::string message;
  size_t wrong = 0;
};

// The input word i of a run with this seed (the GPU draws fresh random words instead).
uint32_t input_word(uint64_t seed, uint32_t i) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + i + 1;
  x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
  return uint32_t(x ^ (x >> 29));
}

// Runs one body in the target's terms, as tests/gpu/bug_zoo.cu's kernels do on the GPU.
void run_body(target& t, const zoo::knobs& k, buffer& src, buffer& out) {
  const gmem<const uint32_t> in(src);
  const gmem<uint32_t> o(out);
  const zoo::layout l = zoo::layout_of(k);
  switch (k.kind) {
    case zoo::body::ring: {
      auto& b = cta_shared<ring_slots>(t, "barriers");
      const auto tiles = shared_buffer(t, "tile", k.stages, zoo::kTileBytes).as<uint32_t>();
      zoo::ring_body(t, k, zoo::ring_smem<target>{tiles, b.full, b.empty}, in, o);
      return;
    }
    case zoo::body::store:
      zoo::store_body(t, k, shared_buffer(t, "out tile", 1, l.smem_bytes).as<uint32_t>(), in, o);
      return;
    case zoo::body::token_wait:
      zoo::token_wait_body(t, k, cta_shared<one_slot>(t, "barrier").b, in, o);
      return;
    case zoo::body::arriver_ahead:
    case zoo::body::twice_in_phase: {
      const zoo::protocol_mem<target> m{&cta_shared<one_slot>(t, "barrier").b,
                                        shared_buffer(t, "x", 1, l.smem_bytes).as<uint32_t>(), in, o};
      if (k.kind == zoo::body::arriver_ahead)
        zoo::arriver_ahead_body(t, k, m);
      else
        zoo::twice_in_phase_body(t, k, m);
      return;
    }
  }
}

// One instance of case `c` under scheduler seed `seed` (or, under explore_por, the steps
// `chooser` picks).
model_run run_on_model(const zoo::zoo_case& c, uint64_t seed, step_chooser* chooser = nullptr) {
  const zoo::layout l = zoo::layout_of(c.k);
  run_options opt{seed};
  opt.chooser = chooser;
  world w(opt);
  buffer& src = w.make_global("src", size_t(l.src_words) * 4);
  buffer& out = w.make_global("out", size_t(l.out_words) * 4);
  std::vector<uint32_t> in(l.src_words);
  for (uint32_t i = 0; i < l.src_words; ++i) in[i] = input_word(seed, i);
  std::memcpy(src.host_data(), in.data(), src.bytes());
  std::memset(out.host_data(), 0xA5, out.bytes());  // poison, as on the GPU
  launch(w, {l.ctas, l.block, l.ctas}, [&](target& t) { run_body(t, c.k, src, out); });
  model_run r;
  try {
    w.run();
  } catch (const model_error& e) {
    r.reported = true;
    r.kind = e.kind();
    r.message = e.what();
  }
  const std::vector<uint32_t> want = zoo::expected_out(c.k, in.data());
  for (uint32_t i = 0; i < l.out_words; ++i) {
    uint32_t got = 0;
    std::memcpy(&got, out.host_data() + size_t(i) * 4, 4);
    r.wrong += got != want[i];
  }
  return r;
}

// What the model may say of a bug: one of these kinds, each with the words that name the cause in
// its message; in every seed when the cause shows whatever the schedule (`every_seed`), else in
// at least one.
struct expectation {
  std::vector<std::pair<error_kind, std::vector<std::string>>> reports;
  bool every_seed;
};

const std::map<std::string, expectation>& expectations() {
  using k = error_kind;
  const std::vector<std::string> unreleased = {"shared buffer 'tile'", "may still be reading it"};
  const std::vector<std::string> in_flight = {"shared buffer 'tile'", "reads it while bulk copy", "in flight"};
  const std::vector<std::string> unobserved = {"shared buffer 'tile'", "has not observed complete"};
  const std::vector<std::string> unwritten = {"shared buffer 'tile'", "that nothing has written"};
  const std::vector<std::string> too_many = {"phase race on barrier empty[", "the mbarrier.arrive of task",
                                             "more arrivals per phase than the barrier's count"};
  static const std::map<std::string, expectation> m = {
      {"empty_wait_parity_0",
       {{{k::deadlock,
          {"thread 0 (warp 0) of CTA 0: wait on parity 0 of barrier empty[0] phase 0",
           "(warp 1, 32 threads) of CTA 0: wait on parity 0 of barrier full[0]"}}},
        true}},
      {"expect_tx_too_large", {{{k::deadlock, {"wait on parity 0 of barrier full[0]", "tx-count 16 of CTA 0"}}}, true}},
      // The phase completes on one copy's bytes: the other copy's complete_tx races the phase,
      // unless a consumer first reads its bytes, in flight or not yet issued.
      {"expect_tx_one_half",
       {{{k::wrong_phase, {"phase race on barrier full[", "the complete_tx of bulk copy 'src'+", "expect_tx is short"}},
         {k::raw_hazard, in_flight},
         {k::raw_hazard, unwritten}},
        true}},
      // Whichever release is the first beyond the count (a lane of either warp, of either CTA).
      {"empty_count_one_warp", {{{k::wrong_phase, too_many}}, true}},
      {"empty_count_one_cta", {{{k::wrong_phase, too_many}}, true}},
      {"no_proxy_fence",
       {{{k::raw_hazard, {"bulk store 'out tile'", "reads the generic write", "no fence.proxy.async by that task"}}},
        true}},
      {"proxy_fence_issuer_only",
       {{{k::raw_hazard,
          {"bulk store 'out tile'", "issued by task 'thread 0 (warp 0 lane 0)'", "reads the generic write of task",
           "no fence.proxy.async by that task"}}},
        true}},
      {"no_wait_group_read",
       {{{k::war_hazard, {"bulk store 'out tile'", "may still be reading it", "wait_group.read"}}}, true}},
      {"release_before_read", {{{k::war_hazard, unreleased}, {k::raw_hazard, in_flight}}, false}},
      {"cta_exits_early",
       {{{k::undefined_behavior, {"barrier empty[", "(CTA 1)", "uses a barrier whose CTA 0 has exited"}}}, false}},
      {"fence_init_by_other",
       {{{k::undefined_behavior,
          {"was not followed by that task's fence.mbarrier_init",
           "fence.mbarrier_init was issued by task 'thread 32 (warp 1 lane 0)'", "which did not initialise it"}}},
        true}},
      {"uncounted_reader",
       {{{k::war_hazard, {"shared buffer 'tile'", "(warp 2 lane", "may still be reading it"}},
         {k::raw_hazard, {"shared buffer 'tile'", "(warp 2 lane"}},
         {k::wrong_phase, {"parity aliasing", "(warp 2 lane"}}},
        false}},
      {"stale_token",
       {{{k::undefined_behavior, {"mbarrier.test_wait on barrier done[0] phase 2", "token of phase 0 is neither"}}},
        true}},
      {"read_before_wait",
       {{{k::raw_hazard, unwritten}, {k::raw_hazard, in_flight}, {k::raw_hazard, unobserved}}, true}},
      {"write_before_wait", {{{k::waw_hazard, {"shared buffer 'tile'", "(warp 1 lane"}}}, true}},
      {"in_place_no_fence",
       {{{k::waw_hazard,
          {"shared buffer 'tile'", "overwrites the generic write", "no fence.proxy.async by that task"}}},
        true}},
      {"refill_without_empty_wait", {{{k::war_hazard, unreleased}, {k::raw_hazard, in_flight}}, false}},
  };
  return m;
}

constexpr uint64_t kTwinSeeds = 500;  // seeds a twin or a correct protocol must run clean
constexpr uint64_t kBugSeeds = 60;    // seeds a bug runs in

// The verdicts, written at the end when HOPPER_ZOO_MODEL_TSV names a file.
struct verdict_row {
  std::string name, role, twin, verdict, seeds, message;
};
std::vector<verdict_row>& verdicts() {
  static std::vector<verdict_row> v;
  return v;
}

std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\t' || ch == '\n') ch = ' ';
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A twin or a correct protocol: clean, with correct data, in every seed.
void expect_clean(const zoo::zoo_case& c) {
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t clean = 0;
  std::string first;
  for (uint64_t s = 1; s <= kTwinSeeds; ++s) {
    const model_run r = run_on_model(c, s);
    EXPECT_FALSE(r.reported) << c.name << ", seed " << s << ": " << r.message;
    EXPECT_EQ(r.wrong, 0u) << c.name << ", seed " << s << ": wrong output words";
    if (!r.reported && r.wrong == 0) ++clean;
    if (r.reported && first.empty()) first = r.message;
  }
  std::printf("ZOO_MODEL %s %s: clean in %llu/%llu seeds (%.2f s)\n", c.name.c_str(), zoo::role_name(c.kind),
              (unsigned long long)clean, (unsigned long long)kTwinSeeds, seconds_since(t0));
  verdicts().push_back({c.name, zoo::role_name(c.kind), c.twin, clean == kTwinSeeds ? "clean" : "REPORTED",
                        std::to_string(clean) + "/" + std::to_string(kTwinSeeds) + " clean", one_line(first)});
}

// A bug: reported as expected, in every seed or in at least one.
void expect_reported(const zoo::zoo_case& c) {
  const auto it = expectations().find(c.name);
  ASSERT_NE(it, expectations().end()) << "no expectation for bug " << c.name;
  const expectation& e = it->second;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t reported = 0;
  std::map<error_kind, uint64_t> kinds;
  std::map<error_kind, std::string> firsts;  // the first message of each kind
  std::string first;
  for (uint64_t s = 1; s <= kBugSeeds; ++s) {
    const model_run r = run_on_model(c, s);
    if (!r.reported) {
      if (e.every_seed) ADD_FAILURE() << c.name << ", seed " << s << ": not reported (" << r.wrong << " wrong words)";
      continue;
    }
    ++reported;
    ++kinds[r.kind];
    if (first.empty()) first = r.message;
    // Some allowed report of this kind has every one of its words in the message.
    bool matched = false;
    for (const auto& [kind, words] : e.reports) {
      bool all = kind == r.kind;
      for (const std::string& w : words) all = all && r.message.find(w) != std::string::npos;
      matched = matched || all;
    }
    EXPECT_TRUE(matched) << c.name << ", seed " << s << ": not the report expected: " << r.message;
    if (!firsts.count(r.kind)) firsts[r.kind] = r.message;
  }
  EXPECT_GT(reported, 0u) << c.name << ": not reported in " << kBugSeeds << " seeds";
  std::string how;
  for (const auto& [k, n] : kinds)
    how += (how.empty() ? "" : ", ") + std::string(to_string(k)) + " " + std::to_string(n);
  std::printf("ZOO_MODEL %s bug: reported in %llu/%llu seeds (%s; %.2f s)\n", c.name.c_str(),
              (unsigned long long)reported, (unsigned long long)kBugSeeds, how.c_str(), seconds_since(t0));
  for (const auto& [k, m] : firsts) std::printf("    %s\n", m.c_str());
  verdicts().push_back({c.name, "bug", c.twin, how.empty() ? "NOT REPORTED" : how,
                        std::to_string(reported) + "/" + std::to_string(kBugSeeds) + " reported", one_line(first)});
}

class ZooOnTheModel : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooOnTheModel, Verdict) {
  const zoo::zoo_case& c = *zoo::find_case(GetParam());
  if (c.kind == zoo::role::bug)
    expect_reported(c);
  else
    expect_clean(c);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooOnTheModel, ::testing::ValuesIn(zoo::case_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The exploration of every schedule (explore_por) beside random seeds: a twin or a correct
// protocol is clean, with correct data, in every run of its exploration (at most kExplored runs,
// complete or not as printed); a bug is reported in its exploration, and the runs it took to
// the first report are printed beside the seeds a random search took.
constexpr uint64_t kExplored = 3000;

TEST_P(ZooOnTheModel, Explored) {
  const zoo::zoo_case& c = *zoo::find_case(GetParam());
  const bool bug = c.kind == zoo::role::bug;
  uint64_t wrong = 0;
  const exploration e = explore_por(
      [&](const run_options& o) {
        const model_run r = run_on_model(c, 1, o.chooser);
        if (!r.reported && !o.chooser->ended_early()) wrong += r.wrong;
        outcome out;
        out.ok = !r.reported;
        out.kind = r.kind;
        out.message = r.message;
        return out;
      },
      kExplored, {}, bug);
  const uint64_t first = e.first_failure, runs = e.runs;
  const bool complete = e.complete;
  if (!bug) {
    EXPECT_TRUE(e.clean()) << c.name << ", run " << e.first_failure << " of the exploration: " << e.summary();
  }
  if (bug) {
    EXPECT_GT(first, 0u) << c.name << ": not reported in " << runs << " runs of the exploration";
    uint64_t seed = 0;
    for (uint64_t s = 1; s <= kBugSeeds && seed == 0; ++s)
      if (run_on_model(c, s).reported) seed = s;
    std::printf("ZOO_POR %s bug: first reported in run %llu of the exploration, at seed %llu of %llu random\n",
                c.name.c_str(), (unsigned long long)first, (unsigned long long)seed, (unsigned long long)kBugSeeds);
  } else {
    EXPECT_EQ(wrong, 0u) << c.name << ": wrong output words in a clean run of the exploration";
    std::printf("ZOO_POR %s %s: clean in %llu runs of the exploration%s\n", c.name.c_str(), zoo::role_name(c.kind),
                (unsigned long long)runs, complete ? " (every class)" : "");
  }
}

// Every bug has an expectation and a twin that is a case of the zoo with the same body.
TEST(ZooCases, EveryBugHasItsTwin) {
  for (const zoo::zoo_case& c : zoo::all_cases()) {
    if (c.kind != zoo::role::bug) {
      EXPECT_TRUE(c.twin.empty()) << c.name;
      continue;
    }
    EXPECT_EQ(expectations().count(c.name), 1u) << c.name;
    const zoo::zoo_case* t = zoo::find_case(c.twin);
    ASSERT_NE(t, nullptr) << c.name << ": twin '" << c.twin << "' is not a case";
    EXPECT_EQ(t->kind, zoo::role::twin) << c.name;
    EXPECT_EQ(int(t->k.kind), int(c.k.kind)) << c.name << ": its twin runs another body";
  }
  EXPECT_EQ(expectations().size(),
            size_t(std::count_if(zoo::all_cases().begin(), zoo::all_cases().end(),
                                 [](const zoo::zoo_case& c) { return c.kind == zoo::role::bug; })));
}

// Writes the verdicts as TSV when HOPPER_ZOO_MODEL_TSV names a file.
class write_verdicts : public ::testing::Environment {
 public:
  void TearDown() override {
    const char* path = std::getenv("HOPPER_ZOO_MODEL_TSV");
    if (!path || !*path) return;
    std::ofstream f(path);
    f << "case\trole\ttwin\tmodel\tseeds\tmessage\n";
    for (const verdict_row& v : verdicts())
      f << v.name << '\t' << v.role << '\t' << v.twin << '\t' << v.verdict << '\t' << v.seeds << '\t' << v.message
        << '\n';
    std::printf("ZOO_MODEL verdicts of %zu cases written to %s\n", verdicts().size(), path);
  }
};
const auto* const kWriteVerdicts = ::testing::AddGlobalTestEnvironment(new write_verdicts);

}  // namespace
