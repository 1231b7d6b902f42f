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
// the issuer's completed phases as `observed_`: enough to know that an arrival of its own cannot
// land on one of them any more, never enough to read what they published.
//
// Representation. A clock has an entry per task (and per barrier), and a program of a few thousand
// threads synchronises all the time: a join that walks every entry would cost the task count at
// each arrive and wait. So:
// - The entries are kept in chunks that copies share until one of them changes (copy on write),
//   and a join takes the other side's chunk whole when it knows at least as much. Clocks that met
//   at a barrier then share nearly every chunk, and the next join compares pointers for those.
// - A chunk that was ever shared is never written again (a write copies it), so its serial names
//   fixed contents, and a chunk keeps the serials of a few such chunks it is known to cover
//   (entries only grow): the one it was copied from, those a join found it covers. A join of two
//   chunks one of which lists the other takes the newer without reading either: the clocks of
//   the tasks released by one phase or generation hold the same older chunks, and only the first
//   of them reads both.
// - A task's own time is kept beside its entries, not in them: a tick changes no chunk, so the
//   chunks a task adopted at a barrier stay shared until it learns something from another task.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace hopper::model {

// Counters indexed from 0 that only grow (a missing one is 0), in shared chunks. The chunks'
// reference counts are plain integers: a clock belongs to one world, which runs on one thread.
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
  // Every entry the max of its own and o's.
  void join(const grow_vec& o) {
    if (c_.size() < o.c_.size()) c_.resize(o.c_.size(), nullptr);
    for (size_t k = 0; k < o.c_.size(); ++k) {
      // Mostly the two share their chunks: runs of equal pointers are skipped a block at a time (one
      // memcmp).
      constexpr size_t block = 8;
      if (k % block == 0 && k + block <= o.c_.size() &&
          std::equal(c_.data() + k, c_.data() + k + block, o.c_.data() + k)) {
        k += block - 1;
        continue;
      }
      chunk* b = o.c_[k];
      chunk* a = c_[k];
      if (a == b || !b) continue;
      if (!a || covers(*b, *a)) {
        adopt(k, b);
        continue;
      }
      if (covers(*a, *b)) continue;
      bool a_ge = true, b_ge = true;
      for (size_t i = 0; i < width; ++i) {
        a_ge &= a->v[i] >= b->v[i];
        b_ge &= b->v[i] >= a->v[i];
      }
      if (a_ge) {
        note(*a, *b);
        continue;
      }
      if (b_ge) {
        note(*b, *a);
        adopt(k, b);
        continue;
      }
      a = own(k);
      for (size_t i = 0; i < width; ++i) a->v[i] = std::max(a->v[i], b->v[i]);
      note(*a, *b);
    }
  }

 private:
  static constexpr size_t width = 32;  // entries per chunk: a warp's tasks, when ids go by lane
  static constexpr size_t known = 6;   // serials a chunk keeps of chunks it covers
  struct chunk {
    uint32_t refs = 1;
    bool shared = false;  // ever held twice: its contents are fixed
    uint64_t serial = next_serial();
    uint64_t below[known] = {};  // serials of fixed chunks it covers, the latest first (0: none)
    uint64_t v[width] = {};
  };
  // Unique across every world and thread (serials are compared, never chunks of two worlds, but
  // the guarantee should not depend on that).
  static uint64_t next_serial() {
    static std::atomic<uint64_t> n{0};
    return n.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  static bool covers(const chunk& a, const chunk& b) {
    bool hit = false;
    for (uint64_t s : a.below) hit |= s == b.serial;
    return hit;
  }
  // a covers b (every entry at least b's): kept when b's contents are fixed, with what b covers.
  static void note(chunk& a, const chunk& b) {
    if (!b.shared) return;
    uint64_t merged[known];
    size_t n = 0;
    merged[n++] = b.serial;
    const auto add = [&](const uint64_t* list) {
      for (size_t i = 0; i < known && n < known; ++i)
        if (list[i] != 0 && std::find(merged, merged + n, list[i]) == merged + n) merged[n++] = list[i];
    };
    add(b.below);
    add(a.below);
    std::fill(std::copy(merged, merged + n, a.below), a.below + known, uint64_t(0));
  }
  static chunk* hold(chunk* p) {
    if (p) {
      ++p->refs;
      p->shared = true;
    }
    return p;
  }
  static void drop(chunk* p) {
    if (p && --p->refs == 0) delete p;
  }
  void adopt(size_t k, chunk* b) {
    drop(c_[k]);
    c_[k] = hold(b);
  }
  // Chunk k, never shared, for writing.
  chunk* own(size_t k) {
    if (c_.size() <= k) c_.resize(k + 1, nullptr);
    chunk*& p = c_[k];
    if (!p) {
      p = new chunk;
    } else if (p->shared) {
      auto* copy = new chunk;
      std::memcpy(copy->v, p->v, sizeof copy->v);
      note(*copy, *p);
      drop(p);
      p = copy;
    }
    return p;
  }
  std::vector<chunk*> c_;  // null: all 0
};

struct hb_clock {
  // task[t]: the latest event of task t ordered before; the owner's own time is `own_time`.
  uint64_t of(int t) const { return t == owner_ ? std::max(own_time_, task_.get(size_t(t))) : task_.get(size_t(t)); }
  // The latest event of task t known to come before, by memory ordering or by execution order
  // alone: enough to know that an asynchronous read the task retired is over, never enough to
  // read what the task wrote.
  uint64_t exec_of(int t) const { return std::max(of(t), exec_.get(size_t(t))); }
  // Phases of b known complete with memory ordering (what a read may rely on).
  uint64_t phases(int b) const { return completed_.get(size_t(b)); }
  // Phases of b known to be over, by memory ordering or by execution order alone (what an
  // arrival may rely on: it cannot be counted on a phase that is over).
  uint64_t phases_over(int b) const { return std::max(completed_.get(size_t(b)), observed_.get(size_t(b))); }
  // A new event of task t on t's own clock (the first tick makes t its owner); returns its time.
  uint64_t tick_own(int t) {
    if (owner_ < 0) owner_ = t;
    if (t != owner_) {
      task_.raise(size_t(t), task_.get(size_t(t)) + 1);
      return task_.get(size_t(t));
    }
    return ++own_time_;
  }
  void tick(int t) { (void)tick_own(t); }
  // Event `when` of task t is known to come before, in execution order only.
  void saw(int t, uint64_t when) { exec_.raise(size_t(t), when); }
  void learn(int b, uint64_t phases_done) { completed_.raise(size_t(b), phases_done); }
  void join(const hb_clock& o) {
    task_.join(o.task_);
    learn_owner(task_, o);
    exec_.join(o.exec_);
    completed_.join(o.completed_);
    observed_.join(o.observed_);
  }
  // An execution-order edge from `o` (the copy engine's complete_tx after its issue, a .relaxed
  // arrive, a .relaxed wait): every event and phase o knows of comes before in execution order;
  // no memory ordering.
  void join_execution_order(const hb_clock& o) {
    exec_.join(o.task_);
    if (o.owner_ >= 0) exec_.raise(size_t(o.owner_), o.own_time_);
    exec_.join(o.exec_);
    observed_.join(o.completed_);
    observed_.join(o.observed_);
  }

 private:
  // o's owner's own time, into `into` (or into own_time_ when it is this clock's owner too).
  void learn_owner(grow_vec& into, const hb_clock& o) {
    if (o.owner_ < 0) return;
    if (o.owner_ == owner_)
      own_time_ = std::max(own_time_, o.own_time_);
    else
      into.raise(size_t(o.owner_), o.own_time_);
  }
  grow_vec task_;       // task_[t]: the latest event of task t ordered before (see of)
  grow_vec exec_;       // exec_[t]: ... before in execution order only (no memory)
  grow_vec completed_;  // completed_[b]: phases of barrier b known complete
  grow_vec observed_;   // observed_[b]: ... known complete in execution order only
  int owner_ = -1;      // the task whose clock this is (-1: a barrier's, a copy's ...)
  uint64_t own_time_ = 0;
};

}  // namespace hopper::model
