// Running a program under many schedules: a range of seeds (random interleavings, spurious
// try_wait failures), every interleaving of a small program (stateless model checking:
// replay a prefix of choices, then take the next unexplored alternative; a program's own
// try_wait on a completed phase is also a choice, succeed or fail spuriously, a bounded number
// of times per run: run_options::explore_spurious_failures), or every schedule up to the order
// of independent steps (explore_por: source sets and sleep sets, Abdulla et al. 2014).
#pragma once
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "hopper/model/por.hpp"
#include "hopper/model/world.hpp"

namespace hopper::model {

// Builds one run: creates barriers and buffers in the world and spawns the tasks.
using program = std::function<void(world&)>;

struct outcome {
  bool ok = true;
  bool sleep_blocked = false;  // explore_por: the run was redundant and ended early
  uint64_t seed = 0;
  error_kind kind = error_kind::api_misuse;
  std::string message;
  uint64_t steps = 0;
};

inline outcome run_once(const program& p, run_options o, const std::vector<size_t>* exhaustive_prefix = nullptr,
                        std::vector<std::pair<size_t, size_t>>* choices = nullptr) {
  world w(o);
  if (exhaustive_prefix) w.set_exhaustive(*exhaustive_prefix);
  outcome r;
  r.seed = o.seed;
  try {
    p(w);
    w.run();
  } catch (const model_error& e) {
    r.ok = false;
    r.kind = e.kind();
    r.message = e.what();
  }
  r.steps = w.steps();
  r.sleep_blocked = w.sleep_blocked();
  if (choices) *choices = w.choices_made();
  return r;
}

struct exploration {
  uint64_t runs = 0;
  uint64_t failures = 0;
  bool complete = false;        // explore_all / explore_por: every interleaving (class) was run
  uint64_t sleep_blocked = 0;   // explore_por: runs ended early as redundant (not a class)
  std::vector<outcome> failed;  // the first few failing runs, with their seeds
  uint64_t first_failure = 0;   // the run (counted from 1) that failed first; 0: none did
  bool clean() const { return failures == 0; }
  // explore_por: the schedule classes (orders of dependent steps) run to their end or report.
  uint64_t classes() const { return runs - sleep_blocked; }
  std::string summary() const {
    std::ostringstream o;
    o << runs << " runs, " << failures << " failing";
    if (sleep_blocked) o << ", " << sleep_blocked << " redundant";
    if (!failed.empty()) o << "; first (seed " << failed[0].seed << "): " << failed[0].message;
    return o.str();
  }
};

// Seeds first_seed .. first_seed+count-1; stops at the first failure when asked.
inline exploration explore_seeds(const program& p, uint64_t first_seed, uint64_t count, run_options base = {},
                                 bool stop_at_first_failure = false) {
  exploration e;
  for (uint64_t s = first_seed; s < first_seed + count; ++s) {
    base.seed = s;
    outcome r = run_once(p, base);
    ++e.runs;
    if (!r.ok) {
      ++e.failures;
      if (e.failures == 1) e.first_failure = e.runs;
      if (e.failed.size() < 4) e.failed.push_back(r);
      if (stop_at_first_failure) break;
    }
  }
  return e;
}

// Every interleaving (depth first), up to max_runs runs; e.complete says whether all were run.
inline exploration explore_all(const program& p, uint64_t max_runs, run_options base = {}) {
  exploration e;
  std::vector<size_t> prefix;
  std::vector<std::pair<size_t, size_t>> made;
  while (e.runs < max_runs) {
    outcome r = run_once(p, base, &prefix, &made);
    r.seed = e.runs;  // the run's index in the exploration
    ++e.runs;
    if (!r.ok) {
      ++e.failures;
      if (e.failures == 1) e.first_failure = e.runs;
      if (e.failed.size() < 4) e.failed.push_back(r);
    }
    long i = long(made.size()) - 1;
    while (i >= 0 && made[size_t(i)].first + 1 >= made[size_t(i)].second) --i;
    if (i < 0) {
      e.complete = true;
      break;
    }
    prefix.clear();
    for (long j = 0; j < i; ++j) prefix.push_back(made[size_t(j)].first);
    prefix.push_back(made[size_t(i)].first + 1);
  }
  return e;
}

// A run that makes its own world (or several: the first made with the given options is the
// one explored) and reports what the model reported, or what the run found wrong.
using runner = std::function<outcome(const run_options&)>;

// Every schedule up to the order of independent steps (steps that touch no common object, or
// only read or update it: scheduler.hpp, access), up to max_runs runs: e.complete says whether
// every class was run, e.classes() how many. A bug that some schedule shows is reported in at
// least one class; a program clean here is clean in every schedule of the model.
// `stop_at_first_failure`: end at the first failing run (e.first_failure), to count the runs a
// bug takes to be found.
inline exploration explore_por(const runner& run, uint64_t max_runs, run_options base = {},
                               bool stop_at_first_failure = false) {
  exploration e;
  por_search search;
  base.chooser = &search;
  while (e.runs < max_runs) {
    search.start_run();
    outcome r = run(base);
    r.seed = e.runs;  // the run's index in the exploration
    r.sleep_blocked = search.blocked();
    ++e.runs;
    if (r.sleep_blocked) ++e.sleep_blocked;
    if (!r.ok) {
      ++e.failures;
      if (e.failures == 1) e.first_failure = e.runs;
      if (e.failed.size() < 4) e.failed.push_back(r);
    }
    search.end_run();
    if (!r.ok && stop_at_first_failure) break;
    if (!search.next()) {
      e.complete = true;
      break;
    }
  }
  return e;
}
inline exploration explore_por(const program& p, uint64_t max_runs, run_options base = {},
                               bool stop_at_first_failure = false) {
  return explore_por([&p](const run_options& o) { return run_once(p, o); }, max_runs, base, stop_at_first_failure);
}

}  // namespace hopper::model
