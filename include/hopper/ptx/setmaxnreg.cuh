// setmaxnreg: producer warpgroups give registers back, consumer warpgroups take them,
// so warp specialisation can give the math warps more registers. Every thread of the warpgroup
// executes it (.sync.aligned). "memory" clobber: none is needed for memory, but the compiler must
// not move register-heavy code across the change; volatile plus the clobber pins it in place.
#pragma once
#include <cstdint>

#include "arch.cuh"

namespace hopper::ptx {

template <uint32_t N>
__device__ __forceinline__ constexpr void check_setmaxnreg_count() {
  static_assert(N >= 24 && N <= 256, "setmaxnreg: the register count must be in 24..256");
  static_assert(N % 8 == 0, "setmaxnreg: the register count must be a multiple of 8");
}

// setmaxnreg.inc.sync.aligned.u32 N: raise this warp's register limit to N.
template <uint32_t N>
__device__ __forceinline__ void setmaxnreg_inc() {
  HOPPER_PTX_NEEDS_SM90A(setmaxnreg_inc);
  check_setmaxnreg_count<N>();
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N) : "memory");
}

// setmaxnreg.dec.sync.aligned.u32 N: lower this warp's register limit to N.
template <uint32_t N>
__device__ __forceinline__ void setmaxnreg_dec() {
  HOPPER_PTX_NEEDS_SM90A(setmaxnreg_dec);
  check_setmaxnreg_count<N>();
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N) : "memory");
}

}  // namespace hopper::ptx
