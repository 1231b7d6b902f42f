// createpolicy: the opaque 64-bit L2 eviction policy that the .L2::cache_hint forms of
// cp.async.bulk and cp.async.bulk.tensor take. A fractional policy applies its priority to the
// given fraction of the accessed lines (1.0: all of them). A streaming copy reads and writes each
// line once, so evict_first keeps its lines from pushing out lines that will still be used.
// No "memory" clobber: createpolicy only computes a register value and touches no memory.
#pragma once
#include <cstdint>

#include "common.cuh"

namespace hopper::ptx {

// createpolicy.fractional.L2::evict_first.b64 policy, fraction: lines go first.
__device__ __forceinline__ uint64_t createpolicy_fractional_L2_evict_first(float fraction = 1.0f) {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, %1;" : "=l"(p) : "f"(fraction));
  return p;
}

// createpolicy.fractional.L2::evict_normal.b64 policy, fraction: the default priority.
__device__ __forceinline__ uint64_t createpolicy_fractional_L2_evict_normal(float fraction = 1.0f) {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, %1;" : "=l"(p) : "f"(fraction));
  return p;
}

// createpolicy.fractional.L2::evict_last.b64 policy, fraction: lines stay longest.
__device__ __forceinline__ uint64_t createpolicy_fractional_L2_evict_last(float fraction = 1.0f) {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, %1;" : "=l"(p) : "f"(fraction));
  return p;
}

// createpolicy.fractional.L2::evict_unchanged.b64 policy, fraction: keep the lines'
// present priority.
__device__ __forceinline__ uint64_t createpolicy_fractional_L2_evict_unchanged(float fraction = 1.0f) {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_unchanged.b64 %0, %1;" : "=l"(p) : "f"(fraction));
  return p;
}

}  // namespace hopper::ptx
