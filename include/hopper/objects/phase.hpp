// Phases and stages: a barrier is reused by waiting on alternating parities, and
// a ring of Stages barriers is walked by an index whose parity flips each time it wraps. These
// types are plain C++ usable on the host (the model, the pipeline's host backend) and the device.
#pragma once
#include <cstdint>

#include "hopper/hd.hpp"

namespace hopper {

// The parity of a phase (0 even, 1 odd). A distinct type, constructible only explicitly, so a
// wait cannot be handed a stage index, a count or a byte total by mistake.
class parity {
 public:
  HOPPER_HD constexpr explicit parity(uint32_t bit) : bit_(bit & 1u) {}
  HOPPER_HD constexpr uint32_t value() const { return bit_; }
  HOPPER_HD constexpr parity flipped() const { return parity(bit_ ^ 1u); }
  HOPPER_HD constexpr bool operator==(parity o) const { return bit_ == o.bit_; }
  HOPPER_HD constexpr bool operator!=(parity o) const { return bit_ != o.bit_; }

 private:
  uint32_t bit_;
};

// The phase of one barrier that a thread waits for next: starts at parity 0 (the
// phase mbarrier.init opens) and flips after each completed wait.
class phase {
 public:
  HOPPER_HD constexpr phase() : parity_(0u) {}
  HOPPER_HD constexpr explicit phase(hopper::parity p) : parity_(p) {}
  HOPPER_HD constexpr hopper::parity parity() const { return parity_; }
  HOPPER_HD phase& operator++() {
    parity_ = parity_.flipped();
    return *this;
  }

 private:
  hopper::parity parity_;
};

// Position in a ring of Stages buffers and barriers: index() selects the stage,
// parity() is the phase to wait for on that stage's barrier, and ++ moves to the next stage,
// flipping the parity when the index wraps to 0. iter() counts the steps taken.
template <uint32_t Stages>
class stage_state {
  static_assert(Stages >= 1, "stage_state needs at least one stage");

 public:
  HOPPER_HD constexpr stage_state() : index_(0), parity_(0u), iteration_(0) {}
  HOPPER_HD constexpr stage_state(uint32_t index, hopper::parity p, uint32_t iteration = 0)
      : index_(index % Stages), parity_(p), iteration_(iteration) {}
  HOPPER_HD constexpr uint32_t index() const { return index_; }
  HOPPER_HD constexpr hopper::parity parity() const { return parity_; }
  HOPPER_HD constexpr uint32_t iter() const { return iteration_; }
  HOPPER_HD static constexpr uint32_t stages() { return Stages; }
  HOPPER_HD stage_state& operator++() {
    ++iteration_;
    if (++index_ == Stages) {
      index_ = 0;
      parity_ = parity_.flipped();
    }
    return *this;
  }
  // n steps at once (a stage sequence shared in turns, e.g. ping-pong consumers skipping the
  // other's k-blocks): the parity flips once per wrap of the index.
  HOPPER_HD stage_state& operator+=(uint32_t n) {
    iteration_ += n;
    const uint32_t t = index_ + n;
    if ((t / Stages) & 1u) parity_ = parity_.flipped();
    index_ = t % Stages;
    return *this;
  }
  HOPPER_HD stage_state operator++(int) {
    stage_state old = *this;
    ++*this;
    return old;
  }

 private:
  uint32_t index_;
  hopper::parity parity_;
  uint32_t iteration_;
};

}  // namespace hopper
