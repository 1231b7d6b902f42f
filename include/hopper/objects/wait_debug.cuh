// Nothing hangs silently: with HOPPER_DEBUG_WAITS defined, every mbarrier wait of the
// objects layer gives up after HOPPER_WAIT_TIMEOUT_NS nanoseconds of %globaltimer, prints which
// barrier (its shared-memory offset), which parity, which block and thread, and traps, so that a
// lost arrival becomes an error with a name instead of a hung GPU. Without the macro, a wait is
// the bare try_wait loop.
#pragma once
#include <cstdint>
#include <cstdio>

#include "hopper/hd.hpp"
#include "hopper/ptx/special_registers.cuh"

#ifndef HOPPER_WAIT_TIMEOUT_NS
#define HOPPER_WAIT_TIMEOUT_NS 4000000000ull  // 4 s: far beyond any legitimate wait
#endif

namespace hopper::debug {

// Marks a wait by state token rather than parity in the timeout report.
inline constexpr uint32_t token_wait = 0xffffffffu;

#if HOPPER_DEBUG_WAITS_ON
inline constexpr bool bounded_waits = true;
#else
inline constexpr bool bounded_waits = false;
#endif

// Prints the timeout report and traps. Not inlined: the cold path stays out of the wait loop.
__device__ __noinline__ inline void wait_timeout(uint32_t smem_offset, uint32_t parity) {
  printf(
      "hopper: mbarrier wait timed out: barrier at shared offset 0x%x, parity %d, "
      "block (%u,%u,%u), thread (%u,%u,%u)\n",
      smem_offset, parity == token_wait ? -1 : int(parity), blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
      threadIdx.y, threadIdx.z);
  __trap();
}

// Calls try_once() until it returns true; when waits are bounded, reports and traps after the
// timeout. `smem_offset` and `parity` only label the report.
template <class TryOnce>
__device__ __forceinline__ void spin_until(TryOnce try_once, uint32_t smem_offset, uint32_t parity) {
  if constexpr (bounded_waits) {
    if (try_once()) return;
    const uint64_t start = ptx::globaltimer();
    while (!try_once()) {
      if (ptx::globaltimer() - start > uint64_t(HOPPER_WAIT_TIMEOUT_NS)) wait_timeout(smem_offset, parity);
    }
  } else {
    (void)smem_offset;
    (void)parity;
    while (!try_once()) {
    }
  }
}

}  // namespace hopper::debug
