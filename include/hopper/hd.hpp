// Host/device qualifiers, in one place: the library's only macros for code that compiles both
// under nvcc and as plain C++.
//   HOPPER_HD           a function that runs on either machine (plain C++ compilers: inline).
//   HOPPER_HD_TEMPLATE  a template written once over a target (hopper/target/device_target.cuh on the
//                       GPU, hopper/model/target.hpp on the host): nvcc instantiates it with a
//                       device target from device code and with the model's from host code; each
//                       instantiation calls only its own side's functions, so the host/device
//                       call check is turned off for it (nv_exec_check_disable).
// The pragma must come before the whole declaration: for a function template (or a member
// template) write HOPPER_EXEC_CHECK_OFF before its `template <...>` line and HOPPER_HD after it;
// HOPPER_HD_TEMPLATE fits a member function of a class template, which has no line of its own.
//   HOPPER_PRAGMA_UNROLL  `#pragma unroll` in device code, nothing for a host compiler (which does
//                         not know it and warns): for loops in code written once over a target.
#pragma once

#if defined(__CUDACC__)
#define HOPPER_EXEC_CHECK_OFF _Pragma("nv_exec_check_disable")
#define HOPPER_HD __host__ __device__ __forceinline__
#else
#define HOPPER_EXEC_CHECK_OFF
#define HOPPER_HD inline
#endif

// Only nvcc's device pass knows `#pragma unroll`: its host pass hands the host compiler the
// pragma, which would warn there too.
#if defined(__CUDA_ARCH__)
#define HOPPER_PRAGMA_UNROLL _Pragma("unroll")
#else
#define HOPPER_PRAGMA_UNROLL
#endif

#define HOPPER_HD_TEMPLATE HOPPER_EXEC_CHECK_OFF HOPPER_HD

// HOPPER_DEBUG_WAITS_ON: 1 where HOPPER_DEBUG_WAITS is defined with no value (`#define
// HOPPER_DEBUG_WAITS`, `-DHOPPER_DEBUG_WAITS`) or a non-zero one, else 0. The first test is
// `0 - - 1 == 1` for the empty definition; `+ 0` keeps the second valid for it too.
#if defined(HOPPER_DEBUG_WAITS) && ((0 - HOPPER_DEBUG_WAITS - 1) == 1 || (HOPPER_DEBUG_WAITS + 0))
#define HOPPER_DEBUG_WAITS_ON 1
#else
#define HOPPER_DEBUG_WAITS_ON 0
#endif

#include <cstdint>

namespace hopper {

// `v`, computed once and kept in a register. Compilers recompute a value they find cheap (the
// address of a shared-memory symbol: S2UR SR_CgaCtaId and its arithmetic) inside every iteration
// of a hot loop instead of keeping it; on the device a volatile mov.b32 that they cannot see
// through or repeat ends that. On the host it is the value itself.
HOPPER_HD uint32_t keep_in_register(uint32_t v) {
#if defined(__CUDA_ARCH__)
  asm volatile("mov.b32 %0, %0;" : "+r"(v));
#endif
  return v;
}

}  // namespace hopper
