// The tile rule's candidates and cost model (kernels/gemm/tile_rule.hpp): every candidate is a
// configuration the library runs, the ranking is ordered and finite, bad input is named, and the
// constants in the header reproduce the committed H200 sweep (docs/results/gemm_candidates_h200.txt).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench/gemm_corpus.hpp"
#include "kernels/gemm/tile_rule.hpp"

namespace g = hopper::gemm;

namespace {

const std::string kRoot = HOPPER_SOURCE_DIR;

std::vector<g::problem> shape_grid() {
  std::vector<g::problem> out;
  const int64_t sides[] = {1, 7, 64, 65, 128, 200, 576, 1024, 4096, 16384};
  const int64_t ks[] = {8, 64, 1000, 4096, 16384};
  for (int64_t m : sides)
    for (int64_t n : sides)
      for (int64_t k : ks)
        for (g::major a : {g::major::k, g::major::mn})
          for (g::out_type o : {g::out_type::bf16, g::out_type::f32}) {
            g::problem p;
            p.M = m, p.N = n, p.K = k, p.a_major = a, p.out = o;
            // TMA row pitches are multiples of 16 bytes: pad the leading dimensions.
            p.lda = ((a == g::major::k ? k : m) + 7) / 8 * 8;
            p.ldb = (k + 7) / 8 * 8;
            p.ldc = (n + 7) / 8 * 8;
            out.push_back(p);
          }
  return out;
}

TEST(GemmTileRule, EveryCandidateIsARunnableConfiguration) {
  for (const g::problem& p : shape_grid())
    for (int sms : {1, 8, 132}) {
      const std::vector<g::config> cs = g::candidates(p, sms);
      ASSERT_FALSE(cs.empty()) << p.M << " x " << p.N << " x " << p.K << " on " << sms << " SMs";
      for (const g::config& c : cs) {
        EXPECT_NO_THROW(g::validate(c, p)) << p.M << " x " << p.N << " x " << p.K << " bn " << c.bn;
        EXPECT_LE(c.cluster_m, (p.M + c.bm - 1) / c.bm) << "a cluster longer than the tiles along M";
        EXPECT_LE(c.cluster_n, (p.N + c.bn - 1) / c.bn) << "a cluster longer than the tiles along N";
      }
    }
}

// Whether choose_config's choice for `p` is one of candidates(p): the benchmark's sweep times the
// candidates, so the rule's choice is measured beside them and a cost model can pick it.
bool choice_is_candidate(const g::problem& p, int sms) {
  const g::config c = g::choose_config(p, sms);
  for (const g::config& k : g::candidates(p, sms))
    if (k.bm == c.bm && k.bn == c.bn && k.stages == c.stages && k.cluster_m == c.cluster_m &&
        k.cluster_n == c.cluster_n && k.splits == c.splits && k.pingpong == c.pingpong && k.stream_k == c.stream_k)
      return true;
  return false;
}

g::problem problem_of(int64_t m, int64_t n, int64_t k) {
  g::problem p;
  p.M = m, p.N = n, p.K = k;
  return p;
}

// The off-grid sets are held out: no shape of one is in another, in the model corpus or among the
// named shapes, and each has the 30 shapes of 5 token counts by 6 weights.
TEST(GemmTileRule, OffGridSetsAreHeldOut) {
  using key = std::tuple<int64_t, int64_t, int64_t>;
  std::set<key> seen;
  for (const hopper_bench::model_layer& l : hopper_bench::model_layers())
    for (const auto* ms : {&hopper_bench::prefill_tokens(), &hopper_bench::decode_tokens()})
      for (int64_t m : *ms) seen.insert({m, l.N, l.K});
  for (const hopper_bench::shape& s : hopper_bench::benchmark_shapes()) seen.insert({s.M, s.N, s.K});
  for (int set = 1; set <= 4; ++set) {
    const std::vector<hopper_bench::shape> shapes = hopper_bench::offgrid_shapes(set);
    EXPECT_EQ(shapes.size(), 30u) << "set " << set;
    for (const hopper_bench::shape& s : shapes)
      EXPECT_TRUE(seen.insert({s.M, s.N, s.K}).second)
          << "set " << set << ": " << s.M << " x " << s.N << " x " << s.K << " is not held out";
  }
  EXPECT_THROW(hopper_bench::offgrid_shapes(5), std::invalid_argument);
}

TEST(GemmTileRule, EveryChoiceOfTheRuleIsACandidate) {
  for (int set = 1; set <= 4; ++set)
    for (const hopper_bench::shape& s : hopper_bench::offgrid_shapes(set))
      EXPECT_TRUE(choice_is_candidate(problem_of(s.M, s.N, s.K), 132)) << s.M << " x " << s.N << " x " << s.K;
  for (const hopper_bench::model_layer& l : hopper_bench::model_layers())
    for (const auto* ms : {&hopper_bench::prefill_tokens(), &hopper_bench::decode_tokens()})
      for (int64_t m : *ms) EXPECT_TRUE(choice_is_candidate(problem_of(m, l.N, l.K), 132)) << corpus_name(l, m);
  for (const g::problem& p : shape_grid())
    for (int sms : {8, 132})
      EXPECT_TRUE(choice_is_candidate(p, sms)) << p.M << " x " << p.N << " x " << p.K << " on " << sms << " SMs";
}

TEST(GemmTileRule, RankingIsOrderedFiniteAndCoversTheCandidates) {
  for (const g::problem& p : shape_grid()) {
    const std::vector<g::cost> r = g::ranked(p, 132);
    ASSERT_EQ(r.size(), g::candidates(p, 132).size());
    for (size_t i = 0; i < r.size(); ++i) {
      ASSERT_TRUE(std::isfinite(r[i].total_us) && r[i].total_us > 0) << p.M << " x " << p.N << " x " << p.K;
      EXPECT_GE(r[i].total_us, g::h200_constants.launch_us);
      if (i) {
        EXPECT_LE(r[i - 1].total_us, r[i].total_us);
      }
    }
  }
}

TEST(GemmTileRule, MoreWorkNeverPredictsLessTime) {
  // Doubling K doubles every tile's main loop: the same configuration cannot get cheaper.
  for (const g::problem& p : shape_grid()) {
    g::problem q = p;
    q.K = 2 * p.K, q.lda = p.a_major == g::major::k ? 2 * p.lda : p.lda, q.ldb = 2 * p.ldb;
    for (const g::config& c : g::candidates(p, 132)) {
      if (c.splits > 1 || c.stream_k) continue;  // the split and the tail depend on K
      EXPECT_LE(g::predict(c, p, 132).total_us, g::predict(c, q, 132).total_us + 1e-9)
          << p.M << " x " << p.N << " x " << p.K << " bn " << c.bn;
    }
  }
}

TEST(GemmTileRule, BadInputIsNamed) {
  g::problem p;
  p.M = p.N = p.K = 256;
  try {
    (void)g::candidates(p, 0);
    FAIL() << "num_sms = 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("num_sms = 0"), std::string::npos) << e.what();
  }
  p.K = 0;
  try {
    (void)g::candidates(p, 132);
    FAIL() << "K = 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("K = 0"), std::string::npos) << e.what();
  }
}

// The committed sweep: per entry, every candidate's measured time.
struct sweep_entry {
  g::problem p;
  std::vector<std::pair<g::config, double>> runs;  // configuration, ms
};

std::map<std::string, sweep_entry> load_sweep(const std::string& file = "gemm_candidates_h200.txt") {
  std::ifstream in(kRoot + "/docs/results/" + file);
  std::map<std::string, sweep_entry> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    std::string tag, name;
    g::problem p;
    g::config c;
    int pp = 0, sk = 0;
    double ms = 0, cublas_ms = 0;
    s >> tag >> name >> p.M >> p.N >> p.K >> c.bm >> c.bn >> c.stages >> c.cluster_m >> c.cluster_n >> c.splits >> pp >>
        sk >> ms >> cublas_ms;
    if (tag != "CAND" || !s) continue;
    c.pingpong = pp != 0, c.stream_k = sk != 0;
    out[name].p = p;
    out[name].runs.emplace_back(c, ms);
  }
  return out;
}

// The model's fit to a sweep: the rms log error of every candidate's predicted time, and the
// regret of its cheapest prediction (its pick's measured time over the fastest measured).
std::pair<double, double> model_on(const std::map<std::string, sweep_entry>& sweep) {
  double sq = 0, log_regret = 0;
  size_t n = 0;
  for (const auto& [name, e] : sweep) {
    double best = 1e300, chosen_ms = 0, chosen_us = 1e300;
    for (const auto& [c, ms] : e.runs) {
      EXPECT_NO_THROW(g::validate(c, e.p)) << name;
      const double us = g::predict(c, e.p, 132).total_us;
      const double d = std::log(us) - std::log(ms * 1e3);
      sq += d * d, ++n;
      best = std::min(best, ms);
      if (us < chosen_us) chosen_us = us, chosen_ms = ms;
    }
    log_regret += std::log(chosen_ms / best);
  }
  const double rms = std::sqrt(sq / double(n)), regret = std::exp(log_regret / double(sweep.size()));
  std::printf("sweep: %zu entries, %zu timings: rms log error %.3f, regret geomean %.4f\n", sweep.size(), n, rms,
              regret);
  return {rms, regret};
}

// The constants are fitted (apps/gemm_rule.cpp fit) on the sweep of every candidate with graphs;
// off-grid set 4 was measured after them and was not fitted. When committed: rms log error 0.293
// and regret 1.045 on the fitted sweep (1.083 with the constants before the stream-latency term),
// 0.251 and 1.056 on set 4 (1.069 before). Constants that drifted from the data, or a model term
// that lost its meaning, fail here.
TEST(GemmTileRule, ConstantsReproduceTheCommittedSweep) {
  const std::map<std::string, sweep_entry> fitted = load_sweep("gemm_candidates_graphs_h200.txt");
  ASSERT_GE(fitted.size(), 250u) << "docs/results/gemm_candidates_graphs_h200.txt is missing or short";
  const auto [rms, regret] = model_on(fitted);
  EXPECT_LT(rms, 0.31);
  EXPECT_LT(regret, 1.05);
  const std::map<std::string, sweep_entry> held = load_sweep("gemm_candidates_offgrid4_h200.txt");
  ASSERT_GE(held.size(), 30u) << "docs/results/gemm_candidates_offgrid4_h200.txt is missing or short";
  const auto [held_rms, held_regret] = model_on(held);
  EXPECT_LT(held_rms, 0.27);
  EXPECT_LT(held_regret, 1.06);
}

// The hand rule (choose_config) on the latest sweep, with up to max_splits splits and every batch a
// CUDA graph (docs/results/gemm_candidates_graphs_h200.txt): its choice is among the measured
// candidates of every entry, and within 4% of the fastest in geomean (1.033 when it was
// committed, over the corpus, the named and the off-grid shapes; 1.099 with the rule before few
// tokens split over the wave and the corrections the off-grid sweeps led to).
TEST(GemmTileRule, HandRuleOnTheLatestSweep) {
  const std::map<std::string, sweep_entry> sweep = load_sweep("gemm_candidates_graphs_h200.txt");
  ASSERT_GE(sweep.size(), 250u) << "docs/results/gemm_candidates_graphs_h200.txt is missing or short";
  double log_regret = 0;
  for (const auto& [name, e] : sweep) {
    const g::config want = g::choose_config(e.p, 132);
    double best = 1e300, chosen = 0;
    for (const auto& [c, ms] : e.runs) {
      best = std::min(best, ms);
      if (g::matches(c, g::instance{want.bm, want.bn, want.stages, want.cluster_m, want.cluster_n, want.pingpong}) &&
          c.splits == want.splits && c.stream_k == want.stream_k)
        chosen = ms;
    }
    ASSERT_GT(chosen, 0) << name << ": the rule's choice was not measured";
    log_regret += std::log(chosen / best);
  }
  const double regret = std::exp(log_regret / double(sweep.size()));
  std::printf("hand rule on the latest sweep: %zu entries, regret geomean %.4f\n", sweep.size(), regret);
  EXPECT_LT(regret, 1.04);
}

}  // namespace
