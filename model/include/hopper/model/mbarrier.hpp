// The mbarrier state machine exactly as the PTX ISA defines it, with
// no scheduler and no memory: the single source of truth that the scheduled barrier
// (barrier.hpp) and the differential test against the H200 (tests/gpu/model_differential.cu)
// both drive.
//
// State: the current phase (counted from 0; its parity is the hardware's phase bit), the
// expected arrival count (reloaded into pending at each phase completion), the pending arrival
// count and the transaction count. A phase completes when pending arrivals and tx-count are
// both zero; completion flips the phase bit and reloads pending from expected, tx-count stays 0.
//
// Every case the PTX ISA leaves undefined throws model_error(undefined_behavior) naming the
// barrier, the operation and the values; the state is left unchanged by a rejected operation.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "hopper/model/error.hpp"
#include "hopper/objects/limits.hpp"

namespace hopper::model {

// What mbarrier.arrive returns in its 64-bit `state` operand: the barrier's state before the
// arrive-on operation (PTX ISA, mbarrier.arrive). Opaque on hardware; explicit here.
struct mbarrier_token {
  uint64_t phase = 0;    // the phase the arrive was counted on
  uint32_t pending = 0;  // the pending arrival count before the arrive
  int32_t tx_count = 0;  // the tx-count before the arrive
};

class mbarrier_state {
 public:
  static constexpr uint32_t max_arrivals = limits::max_arrival_count;  // mbarrier.init count in [1, 2^20-1]
  static constexpr int32_t max_tx = int32_t(limits::max_tx_count);     // tx-count in [-(2^20-1), 2^20-1]

  explicit mbarrier_state(std::string name = "mbarrier") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  // Whose shared memory holds it ("CTA 1"), named in every report.
  void set_owner(std::string owner) { owner_ = std::move(owner); }
  bool valid() const { return valid_; }
  uint64_t phase() const { return phase_; }  // phases completed so far
  uint32_t parity() const { return uint32_t(phase_ & 1); }
  uint32_t expected() const { return expected_; }
  uint32_t pending() const { return pending_; }
  int32_t tx_count() const { return tx_; }

  // mbarrier.init.shared::cta.b64 [addr], count
  void init(uint32_t count) {
    if (valid_) fail("mbarrier.init", "init of a barrier that is still valid (inval it first)");
    if (count < 1 || count > max_arrivals)
      fail("mbarrier.init", "count " + std::to_string(count) + " outside [1, 2^20-1]");
    valid_ = true;
    phase_ = 0;
    expected_ = pending_ = count;
    tx_ = 0;
  }

  // mbarrier.arrive{.noComplete}.shared::cta.b64 state, [addr], count
  mbarrier_token arrive(uint32_t count = 1, bool no_complete = false) {
    return arrive_impl(no_complete ? "mbarrier.arrive.noComplete" : "mbarrier.arrive", count, 0, false, no_complete);
  }

  // mbarrier.arrive.expect_tx.shared::cta.b64 state, [addr], txCount
  mbarrier_token arrive_expect_tx(uint32_t tx) { return arrive_impl("mbarrier.arrive.expect_tx", 1, tx, false, false); }

  // mbarrier.arrive_drop{.noComplete}.shared::cta.b64 state, [addr], count
  mbarrier_token arrive_drop(uint32_t count = 1, bool no_complete = false) {
    return arrive_impl(no_complete ? "mbarrier.arrive_drop.noComplete" : "mbarrier.arrive_drop", count, 0, true,
                       no_complete);
  }

  // mbarrier.arrive_drop.expect_tx.shared::cta.b64 state, [addr], txCount
  mbarrier_token arrive_drop_expect_tx(uint32_t tx) {
    return arrive_impl("mbarrier.arrive_drop.expect_tx", 1, tx, true, false);
  }

  // mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], txCount
  void expect_tx(uint32_t tx) {
    const char* op = "mbarrier.expect_tx";
    require_valid(op);
    const int64_t next = int64_t(tx_) + int64_t(tx);
    if (tx > uint32_t(max_tx) || next > max_tx)
      fail(op, "tx-count " + std::to_string(tx_) + " + " + std::to_string(tx) + " exceeds 2^20-1 (pending " +
                   std::to_string(pending_) + ")");
    tx_ = int32_t(next);
    maybe_complete();
  }

  // mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [addr], txCount: what the copy engine does
  // as bytes land
  void complete_tx(uint32_t tx) {
    const char* op = "mbarrier.complete_tx";
    require_valid(op);
    const int64_t next = int64_t(tx_) - int64_t(tx);
    if (tx > uint32_t(max_tx) || next < -int64_t(max_tx))
      fail(op, "tx-count " + std::to_string(tx_) + " - " + std::to_string(tx) + " below -(2^20-1) (pending " +
                   std::to_string(pending_) + ")");
    tx_ = int32_t(next);
    maybe_complete();
  }

  // mbarrier.test_wait.parity.shared::cta.b64 waitComplete, [addr], phaseParity:
  // true when the phase of that parity has completed, i.e. the current phase has the other one.
  bool test_wait_parity(uint32_t parity) const {
    require_valid("mbarrier.test_wait.parity");
    if (parity > 1) fail("mbarrier.test_wait.parity", "parity " + std::to_string(parity) + " is not 0 or 1");
    return (phase_ & 1) != parity;
  }

  // mbarrier.test_wait.shared::cta.b64 waitComplete, [addr], state: true when the
  // phase the token was counted on has completed. A token from a phase older than the previous
  // one is undefined (the hardware compares one bit).
  bool test_wait_token(const mbarrier_token& t) const {
    require_valid("mbarrier.test_wait");
    if (t.phase > phase_ || t.phase + 1 < phase_)
      fail("mbarrier.test_wait",
           "token of phase " + std::to_string(t.phase) + " is neither the current phase nor the previous one");
    return t.phase < phase_;
  }

  // The check a program that knows which phase it waits for can make (a pipeline state, a
  // token): waiting on phase k is defined only while k is the current or the previous phase;
  // two phases old, the parity aliases a phase that has not completed.
  void check_wait_phase(uint64_t k, const char* op = "mbarrier.try_wait.parity") const {
    require_valid(op);
    if (k + 1 < phase_)
      fail(op, "wait for phase " + std::to_string(k) + " (parity " + std::to_string(k & 1) + ") which is " +
                   std::to_string(phase_ - k) + " phases old: the parity now names the still pending phase " +
                   std::to_string(phase_));
    if (k > phase_)
      fail(op, "wait for phase " + std::to_string(k) + " (parity " + std::to_string(k & 1) +
                   ") which has not started: the parity names the completed phase " + std::to_string(phase_ - 1));
  }

  // mbarrier.pending_count.b64 count, state (PTX ISA): the pending arrival count in a token.
  static uint32_t pending_count(const mbarrier_token& t) { return t.pending; }

  // mbarrier.inval.shared::cta.b64 [addr]
  void inval() {
    require_valid("mbarrier.inval");
    valid_ = false;
  }

  std::string describe() const {
    std::ostringstream o;
    o << "barrier " << name_;
    if (!valid_)
      o << " (not initialised or invalidated)";
    else
      o << " phase " << phase_ << " (parity " << (phase_ & 1) << "), pending " << pending_ << "/" << expected_
        << ", tx-count " << tx_;
    if (!owner_.empty()) o << " of " << owner_;
    return o.str();
  }

  [[noreturn]] void fail(const std::string& op, const std::string& why) const {
    throw model_error(error_kind::undefined_behavior, op + " on " + describe() + ": " + why);
  }

 private:
  void require_valid(const char* op) const {
    if (!valid_) fail(op, "use of a barrier that is not initialised (or was invalidated)");
  }

  mbarrier_token arrive_impl(const char* op, uint32_t count, uint32_t tx, bool drop, bool no_complete) {
    require_valid(op);
    if (count < 1 || count > max_arrivals) fail(op, "count " + std::to_string(count) + " outside [1, 2^20-1]");
    if (count > pending_)
      fail(op, "count " + std::to_string(count) + " exceeds the pending arrivals " + std::to_string(pending_) +
                   " (arrival count would go below zero)");
    const int64_t next_tx = int64_t(tx_) + int64_t(tx);
    if (tx > uint32_t(max_tx) || next_tx > max_tx)
      fail(op, "tx-count " + std::to_string(tx_) + " + " + std::to_string(tx) + " exceeds 2^20-1");
    if (drop && count >= expected_)
      fail(op, "drop of " + std::to_string(count) + " leaves zero expected arrivals (expected " +
                   std::to_string(expected_) + ")");
    if (no_complete && pending_ == count && next_tx == 0)
      fail(op, ".noComplete arrive of count " + std::to_string(count) + " would complete the phase");
    const mbarrier_token before{phase_, pending_, tx_};
    pending_ -= count;
    tx_ = int32_t(next_tx);
    if (drop) expected_ -= count;
    if (!no_complete) maybe_complete();
    return before;
  }

  void maybe_complete() {
    if (pending_ == 0 && tx_ == 0) {
      ++phase_;
      pending_ = expected_;
    }
  }

  std::string name_;
  std::string owner_;
  bool valid_ = false;
  uint64_t phase_ = 0;
  uint32_t expected_ = 0;
  uint32_t pending_ = 0;
  int32_t tx_ = 0;
};

}  // namespace hopper::model
