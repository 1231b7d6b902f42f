// Happens-before for the model: a vector clock over tasks plus, per mbarrier, the number of its
// phases known to have completed. A task learns both through synchronisation (a successful
// wait joins the clock released into the completed phase; a named barrier joins its
// participants), so "task R may see write w" is a comparison, whatever the interleaving.
//
// A second, weaker kind of knowledge: phases known to have completed in execution order only.
// The copy engine's complete_tx is ordered after the issue of its copy, which is after whatever
// the issuer had observed, but it orders no memory of the issuer (PTX ISA, asynchronous
// operations: the implicit complete-tx "does not transitively establish ordering with respect to
// prior instructions from the issuing thread"). A task that waits on that phase therefore learns
// the issuer's completed phases as `observed`: enough to know that an arrival of its own cannot
// land on one of them any more, never enough to read what they published.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace hopper::model {

struct hb_clock {
  std::vector<uint64_t> task;       // task[t]: the latest event of task t ordered before
  std::vector<uint64_t> exec;       // exec[t]: ... before in execution order only (no memory)
  std::vector<uint64_t> completed;  // completed[b]: phases of barrier b known complete
  std::vector<uint64_t> observed;   // observed[b]: ... known complete in execution order only

  uint64_t of(int t) const { return size_t(t) < task.size() ? task[size_t(t)] : 0; }
  // The latest event of task t known to come before, by memory ordering or by execution order
  // alone: enough to know that an asynchronous read the task retired is over, never enough to
  // read what the task wrote.
  uint64_t exec_of(int t) const { return std::max(of(t), size_t(t) < exec.size() ? exec[size_t(t)] : 0); }
  // Phases of b known complete with memory ordering (what a read may rely on).
  uint64_t phases(int b) const { return get(completed, b); }
  // Phases of b known to be over, by memory ordering or by execution order alone (what an
  // arrival may rely on: it cannot be counted on a phase that is over).
  uint64_t phases_over(int b) const { return std::max(get(completed, b), get(observed, b)); }
  void tick(int t) {
    if (task.size() <= size_t(t)) task.resize(size_t(t) + 1, 0);
    ++task[size_t(t)];
  }
  // tick(t) on the clock of task t itself; returns its new time.
  uint64_t tick_own(int t) {
    tick(t);
    return task[size_t(t)];
  }
  // Event `when` of task t is known to come before, in execution order only.
  void saw(int t, uint64_t when) {
    if (exec.size() <= size_t(t)) exec.resize(size_t(t) + 1, 0);
    exec[size_t(t)] = std::max(exec[size_t(t)], when);
  }
  void learn(int b, uint64_t phases_done) { raise(completed, b, phases_done); }
  void join(const hb_clock& o) {
    max_into(task, o.task);
    max_into(exec, o.exec);
    max_into(completed, o.completed);
    max_into(observed, o.observed);
  }
  // An execution-order edge from `o` (the copy engine's complete_tx after its issue, a .relaxed
  // arrive, a .relaxed wait): every event and phase o knows of comes before in execution order;
  // no memory ordering.
  void join_execution_order(const hb_clock& o) {
    max_into(exec, o.task);
    max_into(exec, o.exec);
    max_into(observed, o.completed);
    max_into(observed, o.observed);
  }

 private:
  static void max_into(std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
    if (a.size() < b.size()) a.resize(b.size(), 0);
    for (size_t i = 0; i < b.size(); ++i) a[i] = std::max(a[i], b[i]);
  }
  static uint64_t get(const std::vector<uint64_t>& m, int b) { return size_t(b) < m.size() ? m[size_t(b)] : 0; }
  static void raise(std::vector<uint64_t>& m, int b, uint64_t p) {
    if (m.size() <= size_t(b)) m.resize(size_t(b) + 1, 0);
    m[size_t(b)] = std::max(m[size_t(b)], p);
  }
};

}  // namespace hopper::model
