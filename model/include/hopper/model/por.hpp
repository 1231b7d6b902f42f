// Stateless model checking with partial-order reduction: source sets and sleep sets (Abdulla,
// Aronis, Jonsson and Sagonas, "Optimal dynamic partial order reduction", POPL 2014, its
// source-DPOR algorithm; Flanagan and Godefroid 2005 for the race analysis over one trace).
//
// The processes are the tasks and the copy engine's actions. A run is a sequence of steps, each
// one process running from one scheduling point to the next, with the objects it touched
// (scheduler.hpp, touch_rec). Two steps are dependent when their processes differ and they
// conflict on an object; happens-before over a run is program order (an action after the step
// that posted it) and dependence, closed transitively (vector clocks over the run's steps).
// Two runs that order every pair of dependent steps alike reach the same state, so one run per
// class of that equivalence covers them all.
//
// After each run, every race (two dependent steps with no other path of happens-before between
// them) asks for the other order: at the state before the first step, some process that can
// start the reversed sequence (an initial of it) must be explored, unless one already is or
// sleeps there. Sleep sets keep a process that was explored at a state asleep in its siblings
// until a step dependent with it runs, so no class is run twice to its end; a run that meets
// only sleeping processes ends early (sleep-blocked). Choices inside a step (a spurious
// try_wait failure) are explored in full.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hopper/model/error.hpp"
#include "hopper/model/scheduler.hpp"

namespace hopper::model {

class por_search final : public step_chooser {
 public:
  using footprint = std::vector<touch_rec>;  // sorted by object, one entry per object

  // Two footprints conflict on some object.
  static bool dependent(const footprint& a, const footprint& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
      if (a[i].obj < b[j].obj) {
        ++i;
      } else if (b[j].obj < a[i].obj) {
        ++j;
      } else {
        if (conflict(a[i].how, b[j].how)) return true;
        ++i, ++j;
      }
    }
    return false;
  }

  void start_run() {
    blocked_ = false;
    last_ran_.clear();
    spinning_.clear();
    depth_ = 0;
    vpos_ = 0;
    events_.clear();
    creator_.clear();
  }

  size_t pick(const std::vector<uint64_t>& procs) override {
    if (depth_ < stack_.size()) {  // replayed (or the node whose next process was chosen)
      const node& n = stack_[depth_];
      const auto it = std::find(procs.begin(), procs.end(), n.chosen);
      if (it == procs.end() || procs != n.enabled)
        scheduler::misuse("a replayed schedule met other enabled steps: the program is not deterministic");
      return size_t(it - procs.begin());
    }
    node n;
    n.enabled = procs;
    if (depth_ > 0) {
      const node& parent = stack_[depth_ - 1];
      const footprint& last = events_.back().touched;
      for (const auto* from : {&parent.sleep, &parent.done})
        for (const auto& [q, f] : *from)
          if (q != parent.chosen && !dependent(f, last)) n.sleep.push_back({q, f});
    }
    // The process that ran least recently (a fair choice: a task polling in a loop does not keep
    // the others from the steps it waits for). When every process awake only spins and some
    // sleep, the run is redundant: the spinners wait for a sleeper, and a sleeper's step was
    // explored, before all these, in a sibling.
    size_t k = procs.size();
    long oldest = 0;
    bool progress = false, sleepers = false;
    for (uint64_t q : procs) {
      if (asleep(n, q))
        sleepers = true;
      else if (!spinning_.count(q))
        progress = true;
    }
    if (sleepers && !progress) {
      blocked_ = true;
      return procs.size();
    }
    for (size_t i = 0; i < procs.size(); ++i) {
      if (asleep(n, procs[i])) continue;
      const auto it = last_ran_.find(procs[i]);
      const long at = it == last_ran_.end() ? -1 : long(it->second);
      if (k == procs.size() || at < oldest) k = i, oldest = at;
    }
    if (k == procs.size()) {  // every enabled process sleeps: a redundant run
      blocked_ = true;
      return k;
    }
    n.chosen = procs[k];
    n.backtrack.insert(n.chosen);
    stack_.push_back(std::move(n));
    return k;
  }

  size_t value(size_t n) override {
    node& nd = stack_.at(depth_);
    if (vpos_ < nd.values.size()) {
      if (nd.values[vpos_].second != n)
        scheduler::misuse("a replayed choice inside a step has another number of values: not deterministic");
      return nd.values[vpos_++].first;
    }
    nd.values.push_back({0, n});
    ++vpos_;
    return 0;
  }

  void stepped(uint64_t proc, const std::vector<touch_rec>& touched, bool spun) override {
    last_ran_[proc] = depth_;
    if (spun)
      spinning_.insert(proc);
    else
      spinning_.erase(proc);
    event ev;
    ev.proc = proc;
    ev.touched = normalized(touched);
    node& nd = stack_.at(depth_);
    nd.chosen_touched = merged(nd.chosen_touched, ev.touched);
    events_.push_back(std::move(ev));
    ++depth_;
    vpos_ = 0;
  }

  uint64_t agent(uint64_t parent, uint64_t nth) override {
    const auto key = std::make_pair(parent, nth);
    auto it = agents_.find(key);
    if (it == agents_.end()) it = agents_.emplace(key, first_agent + agents_.size()).first;
    creator_[it->second] = depth_;  // posted by the step in progress
    return it->second;
  }

  // Whether the last run ended early, every enabled process asleep.
  bool blocked() const { return blocked_; }
  bool ended_early() const override { return blocked_; }

  // The race analysis of the run just ended: backtrack points for its races.
  void end_run() {
    const size_t m = events_.size();
    // Dense process indices for this run's vector clocks.
    std::unordered_map<uint64_t, size_t> dense;
    for (const event& e : events_) dense.emplace(e.proc, dense.size());
    const size_t P = dense.size();
    std::vector<size_t> pidx(m);
    for (size_t i = 0; i < m; ++i) pidx[i] = dense[events_[i].proc];
    std::vector<std::vector<size_t>> of_proc(P);  // each process's steps, in order
    for (size_t i = 0; i < m; ++i) of_proc[pidx[i]].push_back(i);

    vc_.assign(m, {});
    struct object_state {
      long last_write = -1;
      std::vector<std::pair<size_t, access>> since;  // reads and updates since it
    };
    std::unordered_map<uint64_t, object_state> objects;
    std::vector<long> last_of(P, -1);
    std::vector<std::pair<size_t, bool>> deps;  // (earlier step, whether the pair can race)
    std::vector<std::pair<size_t, size_t>> races;
    for (size_t i = 0; i < m; ++i) {
      std::vector<long> c(P, -1);
      const size_t p = pidx[i];
      if (last_of[p] >= 0) {
        c = vc_[size_t(last_of[p])];
      } else if (auto cr = creator_.find(events_[i].proc); cr != creator_.end() && cr->second < i) {
        c = vc_[cr->second];  // an action runs after the step that posted it
      }
      deps.clear();
      for (const touch_rec& t : events_[i].touched) {
        object_state& o = objects[t.obj];
        // An update and the write that completes (or follows) its phase, meeting or CTA are
        // ordered, never reversed: in the other order the same arrivals complete it (the state
        // is the same), so the pair is no race.
        if (o.last_write >= 0)
          deps.push_back({size_t(o.last_write), t.how != access::update && t.how != access::acquire});
        if (t.how == access::write)
          for (const auto& [j, how] : o.since) deps.push_back({j, how != access::update});
      }
      std::sort(deps.begin(), deps.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second > b.second;
      });
      deps.erase(std::unique(deps.begin(), deps.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
                 deps.end());
      races.clear();
      for (const auto& [j, racy] : deps) {
        if (pidx[j] == p) continue;
        if (racy && c[pidx[j]] < long(j)) races.push_back({j, i});
        join(c, vc_[j]);
      }
      c[p] = long(i);
      vc_[i] = std::move(c);
      last_of[p] = long(i);
      for (const touch_rec& t : events_[i].touched) {
        object_state& o = objects[t.obj];
        if (t.how == access::write) {
          o.last_write = long(i);
          o.since.clear();
        } else {
          o.since.push_back({i, t.how});
        }
      }
      for (const auto& [j, k] : races) reverse(j, k, pidx, of_proc, dense);
    }
  }

  // The next run: the deepest choice with an alternative left. False when none is left.
  bool next() {
    while (!stack_.empty()) {
      node& n = stack_.back();
      for (size_t vi = n.values.size(); vi-- > 0;) {
        if (n.values[vi].first + 1 < n.values[vi].second) {
          n.values.resize(vi + 1);
          ++n.values[vi].first;
          return true;
        }
      }
      n.done.push_back({n.chosen, n.chosen_touched});
      n.chosen_touched.clear();
      n.values.clear();
      for (uint64_t q : n.backtrack)
        if (!asleep(n, q) && !explored(n, q)) {
          n.chosen = q;
          return true;
        }
      stack_.pop_back();
    }
    return false;
  }

 private:
  static constexpr uint64_t first_agent = uint64_t(1) << 40;

  struct event {
    uint64_t proc = 0;
    footprint touched;
  };
  struct node {
    std::vector<uint64_t> enabled;  // the processes that can run here, in the scheduler's order
    uint64_t chosen = 0;
    footprint chosen_touched;                           // its step's footprint (all its values)
    std::set<uint64_t> backtrack;                       // to explore here
    std::vector<std::pair<uint64_t, footprint>> done;   // explored here
    std::vector<std::pair<uint64_t, footprint>> sleep;  // asleep on entry
    std::vector<std::pair<size_t, size_t>> values;      // (value, of n) chosen inside the step
  };

  static bool asleep(const node& n, uint64_t q) {
    return std::any_of(n.sleep.begin(), n.sleep.end(), [q](const auto& s) { return s.first == q; });
  }
  static bool explored(const node& n, uint64_t q) {
    return std::any_of(n.done.begin(), n.done.end(), [q](const auto& s) { return s.first == q; });
  }

  static void join(std::vector<long>& a, const std::vector<long>& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
  }

  // Sorted by object, the strongest access per object (write > acquire > update > read).
  static footprint normalized(std::vector<touch_rec> t) {
    std::sort(t.begin(), t.end(), [](const touch_rec& a, const touch_rec& b) {
      return a.obj != b.obj ? a.obj < b.obj : int(a.how) > int(b.how);
    });
    footprint f;
    for (const touch_rec& r : t)
      if (f.empty() || f.back().obj != r.obj) f.push_back(r);
    return f;
  }
  static footprint merged(const footprint& a, const footprint& b) {
    std::vector<touch_rec> all(a);
    all.insert(all.end(), b.begin(), b.end());
    return normalized(std::move(all));
  }

  // The race of step j before step i (j < i): at the state before j, explore a process that
  // starts the sequence of the steps after j not ordered after it, then i (an initial), unless
  // one is already to be explored there or sleeps there.
  void reverse(size_t j, size_t i, const std::vector<size_t>& pidx, const std::vector<std::vector<size_t>>& of_proc,
               const std::unordered_map<uint64_t, size_t>& dense) {
    node& n = stack_.at(j);
    const size_t pj = pidx[j];
    const auto after_j = [&](size_t k) { return vc_[k][pj] >= long(j); };
    // The first step of process r after j, if any before or at i.
    const auto first_after = [&](size_t r) -> long {
      const auto& v = of_proc[r];
      const auto it = std::upper_bound(v.begin(), v.end(), j);
      return it == v.end() || *it > i ? -1 : long(*it);
    };
    const auto initial = [&](uint64_t q) {
      const auto d = dense.find(q);
      if (d == dense.end()) return false;
      const long e = first_after(d->second);
      if (e < 0 || (size_t(e) != i && after_j(size_t(e)))) return false;
      for (size_t r = 0; r < of_proc.size(); ++r) {
        if (r == d->second) continue;
        const long f = first_after(r);
        if (f >= 0 && f < e && !after_j(size_t(f)) && vc_[size_t(e)][r] >= f) return false;
      }
      return true;
    };
    for (uint64_t q : n.backtrack)
      if (initial(q)) return;
    for (const auto& s : n.sleep)
      if (initial(s.first)) return;
    // An initial that can run at the state before j. An initial that cannot was enabled by j
    // itself (nothing else before it in the sequence orders it, and no step disables another):
    // then the race cannot be reversed there.
    const auto enabled = [&](uint64_t q) {
      return std::find(n.enabled.begin(), n.enabled.end(), q) != n.enabled.end();
    };
    uint64_t add = events_[i].proc;
    if (!(enabled(add) && initial(add))) {
      bool found = false;
      for (size_t k = j + 1; k <= i && !found; ++k)
        if ((k == i || !after_j(k)) && enabled(events_[k].proc) && initial(events_[k].proc)) {
          add = events_[k].proc;
          found = true;
        }
      if (!found) return;
    }
    n.backtrack.insert(add);
  }

  std::vector<node> stack_;
  std::vector<event> events_;  // this run's steps
  std::vector<std::vector<long>> vc_;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> agents_;  // (parent, nth) -> process id
  std::map<uint64_t, size_t> creator_;                        // action -> the step that posted it (this run)
  std::map<uint64_t, size_t> last_ran_;                       // process -> its latest step (this run)
  std::set<uint64_t> spinning_;                               // processes whose latest step only spun (this run)
  size_t depth_ = 0, vpos_ = 0;
  bool blocked_ = false;
};

}  // namespace hopper::model
