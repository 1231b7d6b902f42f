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
//
// Representation. A clock has an entry per task (and per barrier), and a program of a few thousand
// threads synchronises all the time: a join that walks every entry would cost the task count at
// each arrive and wait. The entries are kept in chunks that copies share until one of them
// changes (copy on write), and a join takes the other side's chunk whole when it knows at least
// as much. Clocks that met at a barrier then share nearly every chunk, so the next join compares
// pointers for those and walks only the chunks that changed since (a task's own tick touches
// one). Chunks are counted without atomics: a clock belongs to one world, which runs on one
// thread.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace hopper::model {

// Counters indexed from 0 that only grow (a missing one is 0), in shared chunks.
class grow_vec {
 public:
  grow_vec() = default;
  grow_vec(const grow_vec& o) : c_(o.c_) {
    for (chunk* p : c_) hold(p);
  }
  grow_vec(grow_vec&& o) noexcept : c_(std::move(o.c_)) { o.c_.clear(); }
  grow_vec& operator=(const grow_vec& o) {
    if (this != &o) {
      grow_vec copy(o);
      c_.swap(copy.c_);
    }
    return *this;
  }
  grow_vec& operator=(grow_vec&& o) noexcept {
    c_.swap(o.c_);
    return *this;
  }
  ~grow_vec() {
    for (chunk* p : c_) drop(p);
  }

  uint64_t get(size_t i) const {
    const size_t k = i / width;
    return k < c_.size() && c_[k] ? c_[k]->v[i % width] : 0;
  }
  void raise(size_t i, uint64_t x) {
    if (get(i) < x) own(i / width)->v[i % width] = x;
  }
  // ++entry i; returns its new value.
  uint64_t bump(size_t i) { return ++own(i / width)->v[i % width]; }
  // Every entry the max of its own and o's.
  void join(const grow_vec& o) {
    if (c_.size() < o.c_.size()) c_.resize(o.c_.size(), nullptr);
    for (size_t k = 0; k < o.c_.size(); ++k) {
      chunk* b = o.c_[k];
      chunk* a = c_[k];
      if (a == b || !b) continue;
      if (!a) {
        c_[k] = hold(b);
        continue;
      }
      bool a_ge = true, b_ge = true;
      for (size_t i = 0; i < width; ++i) {
        a_ge &= a->v[i] >= b->v[i];
        b_ge &= b->v[i] >= a->v[i];
      }
      if (a_ge) continue;
      if (b_ge) {
        drop(a);
        c_[k] = hold(b);
        continue;
      }
      a = own(k);
      for (size_t i = 0; i < width; ++i) a->v[i] = std::max(a->v[i], b->v[i]);
    }
  }

 private:
  static constexpr size_t width = 32;  // entries per chunk: a warp's tasks, when ids go by lane
  struct chunk {
    uint32_t refs;
    uint64_t v[width];
  };
  static chunk* hold(chunk* p) {
    if (p) ++p->refs;
    return p;
  }
  static void drop(chunk* p) {
    if (p && --p->refs == 0) delete p;
  }
  // Chunk k, unshared, for writing.
  chunk* own(size_t k) {
    if (c_.size() <= k) c_.resize(k + 1, nullptr);
    chunk*& p = c_[k];
    if (!p) {
      p = new chunk{1, {}};
    } else if (p->refs > 1) {
      chunk* copy = new chunk{1, {}};
      std::memcpy(copy->v, p->v, sizeof copy->v);
      --p->refs;
      p = copy;
    }
    return p;
  }
  std::vector<chunk*> c_;  // null: all 0
};

struct hb_clock {
  grow_vec task;       // task[t]: the latest event of task t ordered before
  grow_vec exec;       // exec[t]: ... before in execution order only (no memory)
  grow_vec completed;  // completed[b]: phases of barrier b known complete
  grow_vec observed;   // observed[b]: ... known complete in execution order only

  uint64_t of(int t) const { return task.get(size_t(t)); }
  // The latest event of task t known to come before, by memory ordering or by execution order
  // alone: enough to know that an asynchronous read the task retired is over, never enough to
  // read what the task wrote.
  uint64_t exec_of(int t) const { return std::max(of(t), exec.get(size_t(t))); }
  // Phases of b known complete with memory ordering (what a read may rely on).
  uint64_t phases(int b) const { return completed.get(size_t(b)); }
  // Phases of b known to be over, by memory ordering or by execution order alone (what an
  // arrival may rely on: it cannot be counted on a phase that is over).
  uint64_t phases_over(int b) const { return std::max(completed.get(size_t(b)), observed.get(size_t(b))); }
  void tick(int t) { task.bump(size_t(t)); }
  // tick(t) on the clock of task t itself; returns its new time.
  uint64_t tick_own(int t) { return task.bump(size_t(t)); }
  // Event `when` of task t is known to come before, in execution order only.
  void saw(int t, uint64_t when) { exec.raise(size_t(t), when); }
  void learn(int b, uint64_t phases_done) { completed.raise(size_t(b), phases_done); }
  void join(const hb_clock& o) {
    task.join(o.task);
    exec.join(o.exec);
    completed.join(o.completed);
    observed.join(o.observed);
  }
  // An execution-order edge from `o` (the copy engine's complete_tx after its issue, a .relaxed
  // arrive, a .relaxed wait): every event and phase o knows of comes before in execution order;
  // no memory ordering.
  void join_execution_order(const hb_clock& o) {
    exec.join(o.task);
    exec.join(o.exec);
    observed.join(o.completed);
    observed.join(o.observed);
  }
};

}  // namespace hopper::model
