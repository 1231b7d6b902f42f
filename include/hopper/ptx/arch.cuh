// Which architecture a PTX form needs, checked where it is compiled: a translation unit that
// includes the library builds for any list of architectures (for example 80;90a), and a call of
// a form the target lacks fails with one error that names the function and the architecture it
// needs, instead of ptxas's errors about the instruction's qualifiers:
//
//   ptxas fatal : Unresolved extern function
//     '_ZN6hopper3ptx51cp_async_bulk_shared_cluster_global_needs_sm_90Ev'
//
// Every function of the PTX layer begins with one of these (those that compile everywhere, such
// as bar.sync or createpolicy, with none). In the device pass for an architecture without the
// form, the function calls an extern function that exists nowhere and ends there
// (__builtin_unreachable), so its asm is never emitted; elsewhere the macros are empty.
//   HOPPER_PTX_NEEDS_SM90(name)   sm_90 or later (cp.async.bulk, mbarrier .sem/.scope, clusters)
//   HOPPER_PTX_NEEDS_SM90A(name)  the sm_90a architecture-specific target (wgmma, setmaxnreg)
#pragma once

#define HOPPER_PTX_UNAVAILABLE(NAME, ARCH)        \
  do {                                            \
    extern __device__ void NAME##_needs_##ARCH(); \
    NAME##_needs_##ARCH();                        \
    __builtin_unreachable();                      \
  } while (0)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define HOPPER_PTX_NEEDS_SM90(NAME) HOPPER_PTX_UNAVAILABLE(NAME, sm_90)
#else
#define HOPPER_PTX_NEEDS_SM90(NAME) \
  do {                              \
  } while (0)
#endif

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HOPPER_PTX_NEEDS_SM90A(NAME) HOPPER_PTX_UNAVAILABLE(NAME, sm_90a)
#else
#define HOPPER_PTX_NEEDS_SM90A(NAME) \
  do {                               \
  } while (0)
#endif
