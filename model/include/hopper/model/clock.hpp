// Happens-before for the model: a vector clock over tasks plus, per mbarrier, the number of its
// phases known to have completed. A task learns both through synchronisation (a successful
// wait joins the clock released into the completed phase; a named barrier joins its
// participants), so "task R may see write w" is a comparison, whatever the interleaving.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace hopper::model {

struct hb_clock {
  std::vector<uint64_t> task;          // task[t]: the latest event of task t ordered before
  std::map<int, uint64_t> completed;   // completed[b]: phases of barrier b known complete

  uint64_t of(int t) const { return size_t(t) < task.size() ? task[size_t(t)] : 0; }
  uint64_t phases(int b) const {
    auto it = completed.find(b);
    return it == completed.end() ? 0 : it->second;
  }
  void tick(int t) {
    if (task.size() <= size_t(t)) task.resize(size_t(t) + 1, 0);
    ++task[size_t(t)];
  }
  void learn(int b, uint64_t phases_done) {
    uint64_t& p = completed[b];
    p = std::max(p, phases_done);
  }
  void join(const hb_clock& o) {
    if (task.size() < o.task.size()) task.resize(o.task.size(), 0);
    for (size_t i = 0; i < o.task.size(); ++i) task[i] = std::max(task[i], o.task[i]);
    for (const auto& [b, p] : o.completed) learn(b, p);
  }
};

}  // namespace hopper::model
