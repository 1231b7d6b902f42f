// The GEMM's tile rule from the command line, without a GPU:
//
//   gemm_rule explain M N K [--a-mn] [--b-mn] [--f32] [--sms S]
//       every candidate configuration with its predicted time and terms, cheapest first, and why
//       the winner won;
//   gemm_rule check FILE [--only PREFIX | --except PREFIX]
//       on the measured candidates of bench_gemm_models (its CAND lines in FILE): for each entry
//       the rule's choice against the fastest measured one (regret) and against cuBLAS;
//   gemm_rule residuals FILE [--only PREFIX | --except PREFIX]
//       every measured candidate's time beside its predicted time and what bounds it;
//   gemm_rule fit FILE [--only PREFIX | --except PREFIX]
//       calibrates the cost model's constants on those measurements (least squares of the log
//       time, Nelder-Mead) and prints them as kernels/gemm/tile_rule.hpp writes them, then checks
//       them on the entries it fitted, on those it left out, and on all.
//
// PREFIX selects entries by name (for example "gemm_model/deepseek_v3/"), so that the constants can
// be fitted on some layers and checked on the others.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/gemm/tile_rule.hpp"

namespace {

namespace g = hopper::gemm;

struct measured {
  g::config cfg;
  double ms;
  g::cost_geometry geo;  // computed once: the calibration evaluates only the constants' part
};
struct entry {
  std::string name;
  g::problem p;
  double cublas_ms = 0;
  std::vector<measured> runs;
};

std::string name(const g::config& c) {
  return (c.bm != 128 ? "bm" + std::to_string(c.bm) + "_" : std::string()) + "bn" + std::to_string(c.bn) + "_c" +
         std::to_string(c.cluster_m) + "x" + std::to_string(c.cluster_n) + "_s" + std::to_string(c.splits) +
         (c.pingpong ? "_pp" : "") + (c.stream_k ? "_sk" : "");
}

// Entries whose name starts with `only` (if given) and not with `except` (if given).
std::vector<entry> load(const std::string& file, const std::string& only, const std::string& except, int sms) {
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "gemm_rule: cannot read %s\n", file.c_str());
    std::exit(2);
  }
  std::map<std::string, entry> by_name;
  std::vector<std::string> order;
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    std::string tag, nm;
    s >> tag;
    if (tag != "CAND") continue;
    entry e;
    measured m;
    int pp = 0, sk = 0;
    s >> nm >> e.p.M >> e.p.N >> e.p.K >> m.cfg.bm >> m.cfg.bn >> m.cfg.stages >> m.cfg.cluster_m >> m.cfg.cluster_n >>
        m.cfg.splits >> pp >> sk >> m.ms >> e.cublas_ms;
    if (!s) {
      std::fprintf(stderr, "gemm_rule: malformed line: %s\n", line.c_str());
      std::exit(2);
    }
    if ((!only.empty() && nm.rfind(only, 0) != 0) || (!except.empty() && nm.rfind(except, 0) == 0)) continue;
    m.cfg.pingpong = pp != 0, m.cfg.stream_k = sk != 0;
    auto [it, fresh] = by_name.try_emplace(nm, e);
    if (fresh) it->second.name = nm, order.push_back(nm);
    m.geo = g::geometry(m.cfg, e.p, sms);
    it->second.runs.push_back(m);
  }
  std::vector<entry> out;
  for (const std::string& nm : order) out.push_back(by_name[nm]);
  return out;
}

// The hand rule's choice (choose_config), overruled where the cost model predicts its cheapest
// candidate `margin` times faster: whether such a rule would choose better than the hand rule
// alone on the measured candidates (check prints it for several margins).
g::config overruled_choice(const g::problem& p, const g::cost_constants& k, double margin, bool& overruled) {
  const g::config hand = g::choose_config(p, 132);
  const std::vector<g::cost> all = g::ranked(p, 132, k);
  overruled = !all.empty() && g::predict(hand, p, 132, k).total_us > margin * all.front().total_us;
  return overruled ? all.front().cfg : hand;
}

// The rule's choice among the measured candidates of `e` under constants `k`.
const measured& choice(const entry& e, const g::cost_constants& k) {
  const measured* best = &e.runs[0];
  double best_us = 1e300;
  for (const measured& m : e.runs) {
    const double us = g::predict(m.geo, k).total_us;
    if (us < best_us) best_us = us, best = &m;
  }
  return *best;
}

int check(const std::vector<entry>& entries, const g::cost_constants& k, bool verbose) {
  double log_regret = 0, log_ratio = 0, log_best = 0, worst_regret = 1, worst_ratio = 1e9;
  std::string worst_regret_at, worst_ratio_at;
  for (const entry& e : entries) {
    const measured& c = choice(e, k);
    double best = 1e300;
    for (const measured& m : e.runs) best = std::min(best, m.ms);
    const double regret = c.ms / best, ratio = e.cublas_ms / c.ms;
    log_regret += std::log(regret), log_ratio += std::log(ratio), log_best += std::log(e.cublas_ms / best);
    if (regret > worst_regret) worst_regret = regret, worst_regret_at = e.name;
    if (ratio < worst_ratio) worst_ratio = ratio, worst_ratio_at = e.name;
    if (verbose)
      std::printf("%-44s %-18s %.4f ms  regret %.3f  ratio %.3f (best %.3f)\n", e.name.c_str(), name(c.cfg).c_str(),
                  c.ms, regret, ratio, e.cublas_ms / best);
  }
  // The hand rule (choose_config) on the same entries, where its choice was measured.
  double hand_log_regret = 0;
  size_t hand_n = 0;
  for (const entry& e : entries) {
    const std::string want = name(g::choose_config(e.p, 132));
    double best = 1e300, hand = 0;
    for (const measured& m : e.runs) {
      best = std::min(best, m.ms);
      if (name(m.cfg) == want) hand = m.ms;
    }
    if (hand > 0) hand_log_regret += std::log(hand / best), ++hand_n;
  }
  if (hand_n)
    std::printf("HAND %zu entries: regret geomean %.4f\n", hand_n, std::exp(hand_log_regret / double(hand_n)));
  // The hand rule overruled by the model at several margins, where that choice was measured.
  for (double margin : {1.05, 1.1, 1.2, 1.3, 1.5}) {
    double lr = 0, ratio = 0;
    size_t n = 0, overruled = 0;
    for (const entry& e : entries) {
      bool over = false;
      const std::string want = name(overruled_choice(e.p, k, margin, over));
      double best = 1e300, chosen = 0;
      for (const measured& r : e.runs) {
        best = std::min(best, r.ms);
        if (name(r.cfg) == want) chosen = r.ms;
      }
      if (chosen == 0) continue;
      lr += std::log(chosen / best), ratio += std::log(e.cublas_ms / chosen), ++n, overruled += over;
    }
    if (n)
      std::printf("OVERRULED at margin %g: %zu entries, %zu overruled: regret geomean %.4f, ratio to cuBLAS %.4f\n",
                  margin, n, overruled, std::exp(lr / double(n)), std::exp(ratio / double(n)));
  }
  const double n = double(entries.size());
  std::printf(
      "CHECK %zu entries: regret geomean %.4f (worst %.3f at %s); ratio to cuBLAS geomean %.4f (min %.3f at %s); "
      "best measured candidate geomean %.4f\n",
      entries.size(), std::exp(log_regret / n), worst_regret, worst_regret_at.c_str(), std::exp(log_ratio / n),
      worst_ratio, worst_ratio_at.c_str(), std::exp(log_best / n));
  return 0;
}

// Every candidate's measured and predicted time, one line each, for a look at where the model errs.
int residuals(const std::vector<entry>& entries, const g::cost_constants& k) {
  for (const entry& e : entries)
    for (const measured& m : e.runs) {
      const g::cost c = g::predict(m.geo, k);
      std::printf("RES %s %s %.3f %.3f %s\n", e.name.c_str(), name(m.cfg).c_str(), m.ms * 1e3, c.total_us, c.bound);
    }
  return 0;
}

// The constants as a flat vector of their logarithms (all are positive) and back.
constexpr int kParams = 15;
std::vector<double> flatten(const g::cost_constants& k) {
  return {std::log(k.launch_us),          std::log(k.tile_start_us),     std::log(k.tflops_per_sm[0]),
          std::log(k.tflops_per_sm[1]),   std::log(k.tflops_per_sm[2]),  std::log(k.tflops_per_sm[3]),
          std::log(k.tflops_per_sm[4]),   std::log(k.pingpong_rate),     std::log(k.l2_bytes_per_us),
          std::log(k.store_bytes_per_us), std::log(k.fixup_us),          std::log(k.fixup_bytes_per_us),
          std::log(k.dram_bytes_per_us),  std::log(k.stream_latency_us), 0.0};
}
g::cost_constants unflatten(const std::vector<double>& v) {
  g::cost_constants k{};
  k.launch_us = std::exp(v[0]), k.tile_start_us = std::exp(v[1]);
  for (int i = 0; i < 5; ++i) k.tflops_per_sm[i] = std::exp(v[size_t(2 + i)]);
  k.pingpong_rate = std::exp(v[7]), k.l2_bytes_per_us = std::exp(v[8]), k.store_bytes_per_us = std::exp(v[9]);
  k.fixup_us = std::exp(v[10]), k.fixup_bytes_per_us = std::exp(v[11]), k.dram_bytes_per_us = std::exp(v[12]);
  k.stream_latency_us = std::exp(v[13]);
  return k;
}

// Mean over entries of the mean squared log error of the predictions of its candidates, as a
// choice needs it: two-sided for the candidates within 25% of the entry's fastest (their order
// decides the choice), one-sided for the slower ones (only a prediction too fast can make them
// the choice).
double loss(const std::vector<entry>& entries, const std::vector<double>& v) {
  const g::cost_constants k = unflatten(v);
  double sum = 0;
  for (const entry& e : entries) {
    double best = 1e300, s = 0;
    for (const measured& m : e.runs) best = std::min(best, m.ms);
    for (const measured& m : e.runs) {
      const double d = std::log(g::predict(m.geo, k).total_us) - std::log(m.ms * 1e3);
      if (m.ms <= 1.25 * best || d < 0) s += d * d;
    }
    sum += s / double(e.runs.size());
  }
  return sum / double(entries.size());
}

// Nelder-Mead over the log-constants (the last coordinate is unused), restarted from its best.
std::vector<double> minimize(const std::vector<entry>& entries, std::vector<double> x0) {
  const int n = kParams - 1;
  for (int restart = 0; restart < 4; ++restart) {
    std::vector<std::vector<double>> pts(size_t(n + 1), x0);
    for (int i = 0; i < n; ++i) pts[size_t(i + 1)][size_t(i)] += 0.3;
    std::vector<double> f(size_t(n + 1));
    for (int i = 0; i <= n; ++i) f[size_t(i)] = loss(entries, pts[size_t(i)]);
    for (int iter = 0; iter < 3000; ++iter) {
      std::vector<int> idx(size_t(n + 1));
      for (int i = 0; i <= n; ++i) idx[size_t(i)] = i;
      std::sort(idx.begin(), idx.end(), [&](int a, int b) { return f[size_t(a)] < f[size_t(b)]; });
      const int lo = idx[0], hi = idx[size_t(n)], second = idx[size_t(n - 1)];
      std::vector<double> mid(size_t(kParams), 0.0);
      for (int i = 0; i <= n; ++i)
        if (i != hi)
          for (int d = 0; d < n; ++d) mid[size_t(d)] += pts[size_t(i)][size_t(d)] / n;
      const auto along = [&](double t) {
        std::vector<double> q = mid;
        for (int d = 0; d < n; ++d) q[size_t(d)] = mid[size_t(d)] + t * (pts[size_t(hi)][size_t(d)] - mid[size_t(d)]);
        return q;
      };
      const std::vector<double> xr = along(-1.0);
      const double fr = loss(entries, xr);
      if (fr < f[size_t(lo)]) {
        const std::vector<double> xe = along(-2.0);
        const double fe = loss(entries, xe);
        if (fe < fr)
          pts[size_t(hi)] = xe, f[size_t(hi)] = fe;
        else
          pts[size_t(hi)] = xr, f[size_t(hi)] = fr;
      } else if (fr < f[size_t(second)]) {
        pts[size_t(hi)] = xr, f[size_t(hi)] = fr;
      } else {
        const std::vector<double> xc = along(0.5);
        const double fc = loss(entries, xc);
        if (fc < f[size_t(hi)]) {
          pts[size_t(hi)] = xc, f[size_t(hi)] = fc;
        } else {
          for (int i = 0; i <= n; ++i)
            if (i != lo) {
              for (int d = 0; d < n; ++d)
                pts[size_t(i)][size_t(d)] =
                    pts[size_t(lo)][size_t(d)] + 0.5 * (pts[size_t(i)][size_t(d)] - pts[size_t(lo)][size_t(d)]);
              f[size_t(i)] = loss(entries, pts[size_t(i)]);
            }
        }
      }
    }
    x0 = pts[size_t(std::min_element(f.begin(), f.end()) - f.begin())];
    std::printf("fit: restart %d loss %.5f (rms log error %.3f)\n", restart, loss(entries, x0),
                std::sqrt(loss(entries, x0)));
  }
  return x0;
}

void print(const g::cost_constants& k) {
  std::printf(
      "inline constexpr cost_constants h200_constants = {\n"
      "    /*launch_us*/ %.3g,\n    /*tile_start_us*/ %.3g,\n    /*tflops_per_sm*/ {%.3g, %.3g, %.3g, %.3g, %.3g},\n"
      "    /*pingpong_rate*/ %.3g,\n    /*l2_bytes_per_us*/ %.4g,\n    /*store_bytes_per_us*/ %.4g,\n"
      "    /*fixup_us*/ %.3g,\n    /*fixup_bytes_per_us*/ %.4g,\n    /*dram_bytes_per_us*/ %.4g,\n"
      "    /*stream_latency_us*/ %.3g,\n};\n",
      k.launch_us, k.tile_start_us, k.tflops_per_sm[0], k.tflops_per_sm[1], k.tflops_per_sm[2], k.tflops_per_sm[3],
      k.tflops_per_sm[4], k.pingpong_rate, k.l2_bytes_per_us, k.store_bytes_per_us, k.fixup_us, k.fixup_bytes_per_us,
      k.dram_bytes_per_us, k.stream_latency_us);
}

int explain(const g::problem& p, int sms) {
  const std::vector<g::cost> all = g::ranked(p, sms);
  std::printf("%lld x %lld x %lld, A %s, B %s, C %s, %d SMs: %zu candidates\n", (long long)p.M, (long long)p.N,
              (long long)p.K, g::name(p.a_major), g::name(p.b_major), g::name(p.out), sms, all.size());
  std::printf("%-22s %9s %8s %7s %9s %9s %9s %9s %9s %9s %s\n", "config", "total_us", "clusters", "items", "kblock_us",
              "tensor_us", "feed_us", "stream_us", "epi_us", "dram_us", "bound");
  for (const g::cost& c : all)
    std::printf("%-22s %9.2f %8d %7.0f %9.4f %9.4f %9.4f %9.4f %9.3f %9.2f %s\n", name(c.cfg).c_str(), c.total_us,
                c.clusters, c.rounds, c.kblock_us, c.tensor_us, c.feed_us, c.stream_us, c.epilogue_us, c.dram_us,
                c.bound);
  if (all.size() > 1)
    std::printf("winner %s: %.2f us, %.1f%% below the next (%s), %s-bound, %.0f items on the busiest of %d clusters\n",
                name(all[0].cfg).c_str(), all[0].total_us, 100.0 * (1.0 - all[0].total_us / all[1].total_us),
                name(all[1].cfg).c_str(), all[0].bound, all[0].rounds, all[0].clusters);
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: gemm_rule explain M N K [--a-mn] [--b-mn] [--f32] [--sms S]\n"
               "       gemm_rule check FILE [--only PREFIX | --except PREFIX] [-v]\n"
               "       gemm_rule residuals FILE [--only PREFIX | --except PREFIX]\n"
               "       gemm_rule fit FILE [--only PREFIX | --except PREFIX]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  std::string only, except;
  int sms = 132;
  bool verbose = false;
  g::problem p;
  std::vector<std::string> pos;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--except" && i + 1 < argc)
      except = argv[++i];
    else if (a == "--sms" && i + 1 < argc)
      sms = std::atoi(argv[++i]);
    else if (a == "--a-mn")
      p.a_major = g::major::mn;
    else if (a == "--b-mn")
      p.b_major = g::major::mn;
    else if (a == "--f32")
      p.out = g::out_type::f32;
    else if (a == "-v")
      verbose = true;
    else
      pos.push_back(a);
  }
  try {
    if (mode == "explain" && pos.size() == 3) {
      p.M = std::stoll(pos[0]), p.N = std::stoll(pos[1]), p.K = std::stoll(pos[2]);
      return explain(p, sms);
    }
    if ((mode == "check" || mode == "fit" || mode == "residuals") && pos.size() == 1) {
      const std::vector<entry> entries = load(pos[0], only, except, sms);
      if (entries.empty()) {
        std::fprintf(stderr, "gemm_rule: no CAND lines selected in %s\n", pos[0].c_str());
        return 2;
      }
      if (mode == "check") return check(entries, g::h200_constants, verbose);
      if (mode == "residuals") return residuals(entries, g::h200_constants);
      const g::cost_constants k = unflatten(minimize(entries, flatten(g::h200_constants)));
      print(k);
      check(entries, k, verbose);
      // The same constants on the entries left out of the fit, and on all.
      if (!only.empty() || !except.empty()) {
        std::vector<entry> held;
        for (entry& e : load(pos[0], "", "", sms))
          if ((!only.empty() && e.name.rfind(only, 0) != 0) || (!except.empty() && e.name.rfind(except, 0) == 0))
            held.push_back(std::move(e));
        std::printf("held out: ");
        if (!held.empty()) check(held, k, false);
        std::printf("all: ");
        check(load(pos[0], "", "", sms), k, false);
      }
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_rule: %s\n", e.what());
    return 1;
  }
  return usage();
}
