// Barriers among tasks: bar.sync / bar.arrive with a thread count and
// barrier.cluster.arrive / wait. Each generation releases the clocks of everyone who
// arrived to everyone who waits, so it orders memory like __syncthreads() does.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "hopper/model/clock.hpp"
#include "hopper/model/scheduler.hpp"

namespace hopper::model {

class named_barrier {
 public:
  named_barrier(scheduler& s, std::string name, unsigned count)
      : s_(s), name_(std::move(name)), count_(count), key_(s.new_key()), obj_(s.new_objects()) {
    if (count == 0) scheduler::misuse("named barrier '" + name_ + "' with a count of 0");
  }
  named_barrier(const named_barrier&) = delete;
  named_barrier& operator=(const named_barrier&) = delete;
  const std::string& name() const { return name_; }
  unsigned count() const { return count_; }
  // The generation the next arrival belongs to.
  uint64_t generation() const { return generation_; }

  // bar.arrive id, count / barrier.cluster.arrive.release: returns the
  // generation to wait for.
  // `last`, if given, runs in the last arriver's step before anyone is released (the meeting of
  // a warp instruction performed for all its lanes at once).
  uint64_t arrive(const std::function<void()>& last = nullptr) {
    const int t = s_.current();
    s_.yield();
    s_.tick();
    gathering_.join(s_.clock(t));
    const uint64_t gen = generation_;
    s_.touch(obj_, arrived_ + 1 == count_ ? access::write : access::update);
    if (++arrived_ == count_) {
      if (last) last();
      released_[generation_] = std::move(gathering_);
      gathering_ = hb_clock{};
      arrived_ = 0;
      ++generation_;
      s_.notify(key_);
    }
    s_.record("bar.arrive", name_, [&] { return "generation " + std::to_string(gen); });
    return gen;
  }
  // barrier.cluster.wait.acquire: blocks until generation `gen` is complete.
  void wait(uint64_t gen) {
    const int t = s_.current();
    if (generation_ <= gen)
      s_.block_until([this, gen] { return generation_ > gen; },
                     [this, gen] {
                       return "named barrier " + name_ + " generation " + std::to_string(gen) + " (" +
                              std::to_string(arrived_) + " of " + std::to_string(count_) + " arrived)";
                     },
                     key_);
    s_.touch(obj_, access::acquire);
    s_.clock(t).join(released_[gen]);
    s_.record("bar.wait", name_, [&] { return "generation " + std::to_string(gen); });
  }
  // bar.sync id, count / barrier.cluster.arrive + wait
  void sync() { wait(arrive()); }

 private:
  scheduler& s_;
  std::string name_;
  unsigned count_;
  int key_;       // notified when a generation completes
  uint64_t obj_;  // its object for partial-order reduction (scheduler::touch)
  unsigned arrived_ = 0;
  uint64_t generation_ = 0;
  hb_clock gathering_;
  std::map<uint64_t, hb_clock> released_;
};

}  // namespace hopper::model
