// The floating-point forms a kernel's numerics use (PTX ISA: ex2, cvt): the base-2 exponential of
// the special function unit and the packing conversion of two fp32 values into one bf16x2 word.
#pragma once
#include <cstdint>

namespace hopper::ptx {

// ex2.approx.ftz.f32 d, a: d ~ 2^a (maximum relative error 2^-22 on the PTX ISA's range; -inf gives
// +0, +inf gives +inf; subnormal inputs and results are flushed to sign-preserving zero).
__device__ __forceinline__ float ex2_approx_ftz_f32(float a) {
  float d;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(a));
  return d;
}

// cvt.rn.bf16x2.f32 d, a, b: a and b rounded to nearest even bf16; a's in the upper half of d,
// b's in the lower half.
__device__ __forceinline__ uint32_t cvt_rn_bf16x2_f32(float a, float b) {
  uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(a), "f"(b));
  return d;
}

}  // namespace hopper::ptx
