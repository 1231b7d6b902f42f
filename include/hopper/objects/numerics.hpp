// The numerics a kernel body needs on both machines, written once: on the GPU each is the PTX form
// of hopper/ptx/math.cuh, on the host (the model) the same function in plain C++. Where the GPU's
// form is approximate (ex2.approx) the host computes the exact value, rounded to fp32, with the
// GPU's flush-to-zero: the two agree within the PTX ISA's error bound (docs/model.md).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hopper/hd.hpp"

#if defined(__CUDACC__)
#include "hopper/ptx/math.cuh"
#endif

namespace hopper {

// The bf16 bits of x, rounded to nearest even (a NaN stays a quiet NaN), and the value of bf16
// bits h: plain C++, for hosts (references, the model's inputs and outputs).
inline uint16_t bf16_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7fffffffu) > 0x7f800000u) return uint16_t((b >> 16) | 0x40u);
  return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
inline float bf16_value(uint16_t h) {
  const uint32_t b = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Two fp32 values as one bf16x2 word, rounded to nearest even, `lo` in the low half (the lower
// column of a fragment's pair): cvt.rn.bf16x2.f32 on the GPU. A NaN stays a (quiet) NaN.
HOPPER_HD uint32_t pack_bf16x2(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  return ptx::cvt_rn_bf16x2_f32(hi, lo);
#else
  return uint32_t(bf16_bits(lo)) | uint32_t(bf16_bits(hi)) << 16;
#endif
}

// 2^x: ex2.approx.ftz.f32 on the GPU; on the host exp2 rounded to fp32 with subnormal inputs and
// results flushed to zero, as .ftz does.
HOPPER_HD float exp2_ftz(float x) {
#if defined(__CUDA_ARCH__)
  return ptx::ex2_approx_ftz_f32(x);
#else
  if (std::fpclassify(x) == FP_SUBNORMAL) x = 0.0f;
  const float y = float(std::exp2(double(x)));
  return std::fpclassify(y) == FP_SUBNORMAL ? 0.0f : y;
#endif
}

// log2(x), to the accuracy of log2f (the GPU's: 1 ulp; the host's exact value rounded to fp32).
HOPPER_HD float log2_f32(float x) {
#if defined(__CUDA_ARCH__)
  return log2f(x);
#else
  return float(std::log2(double(x)));
#endif
}

// The larger of a and b (fmaxf: a NaN operand yields the other).
HOPPER_HD float max_f32(float a, float b) {
#if defined(__CUDA_ARCH__)
  return fmaxf(a, b);
#else
  return std::fmax(a, b);
#endif
}

}  // namespace hopper
