// Global atomics with memory-ordering semantics (PTX ISA: atom; "Memory Consistency Model"): the
// one-thread handshake between CTAs.
// After a CTA barrier (bar.sync) has ordered its threads' stores before thread 0, a single
// atom.add.acq_rel.gpu by thread 0 publishes all of them (release is cumulative over what precedes
// it in causality order) and, read back, acquires what the other CTAs published the same way.
// That is one gpu-scope ordering per CTA instead of a fence.sc.gpu (membar.gl, __threadfence)
// in every thread.
#pragma once
#include <cstdint>

#include "common.cuh"

namespace hopper::ptx {

// atom{.sem}.gpu.global.add.s32 old, [addr], v; returns the value before the add. .sem is
// acq_rel (default), release, acquire or relaxed.
template <sem S = sem::acq_rel>
__device__ __forceinline__ int atom_add_gpu(int* addr, int v) {
  static_assert(S != sem::sc, "atom has no .sc form: use fence.sc first");
  int old;
  if constexpr (S == sem::acq_rel) {
    asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  } else if constexpr (S == sem::release) {
    asm volatile("atom.release.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  } else if constexpr (S == sem::acquire) {
    asm volatile("atom.acquire.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  } else {
    asm volatile("atom.relaxed.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  }
  return old;
}

}  // namespace hopper::ptx
