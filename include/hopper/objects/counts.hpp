// Checked count types: an arrival count and a byte count are different things,
// and each has a PTX range (1..2^20-1 arrivals, 0..2^20-1 bytes per expect_tx). Constructing
// one from a constant outside its range does not compile (constant evaluation reaches a
// non-constexpr function); from a runtime value on the host it throws std::invalid_argument; on
// the device it traps when HOPPER_DEBUG_WAITS is on and costs nothing otherwise.
#pragma once
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "hopper/objects/limits.hpp"
#include "hopper/objects/phase.hpp"

namespace hopper {
namespace detail {
// Deliberately not constexpr: reaching it during constant evaluation is a compile error.
HOPPER_HD void count_out_of_range(const char* what, uint64_t value) {
#if defined(__CUDA_ARCH__)
#if HOPPER_DEBUG_WAITS_ON
  printf("hopper: %s %llu out of range\n", what, static_cast<unsigned long long>(value));
  __trap();
#else
  (void)what;
  (void)value;
#endif
#else
  throw std::invalid_argument(std::string("hopper: ") + what + " " + std::to_string(value) + " out of range");
#endif
}
}  // namespace detail

// Arrivals for mbarrier.init / arrive / arrive_drop: 1..2^20-1.
class arrival_count {
 public:
  HOPPER_HD constexpr explicit arrival_count(uint32_t n) : n_(n) {
    if (!limits::valid_arrival_count(n)) detail::count_out_of_range("arrival count", n);
  }
  HOPPER_HD constexpr uint32_t value() const { return n_; }

 private:
  uint32_t n_;
};

// Bytes for expect_tx / complete_tx / arrive.expect_tx: 0..2^20-1 (the tx-count limit).
class tx_bytes {
 public:
  HOPPER_HD constexpr explicit tx_bytes(uint32_t b) : b_(b) {
    if (!limits::valid_tx_bytes(b)) detail::count_out_of_range("tx bytes", b);
  }
  HOPPER_HD constexpr uint32_t value() const { return b_; }

 private:
  uint32_t b_;
};

}  // namespace hopper
