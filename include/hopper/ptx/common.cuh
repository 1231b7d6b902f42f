// Shared vocabulary of the PTX layer: the .sem and .scope qualifiers as compile-time values, and
// the conversion from a generic pointer to the 32-bit shared-window address PTX operands take.
#pragma once
#include <cstdint>

#include "arch.cuh"
#include "qualifiers.hpp"

namespace hopper::ptx {

// cvta.to.shared: the shared::cta window address of a generic pointer into this CTA's shared
// memory. Operands of mbarrier.* and cp.async.bulk.* are 32-bit shared addresses.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace hopper::ptx

// Expands BODY(SEM, SCOPE) with the string literals of the chosen qualifiers, so that one asm
// template per instruction form covers every (sem, scope) pair; the literals concatenate into a
// single asm string at compile time. Only release/relaxed x cta/cluster occur for mbarrier arrives.
#define HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, BODY)                                                  \
  if constexpr (S == ::hopper::ptx::sem::release && SC == ::hopper::ptx::scope::cta) {            \
    BODY(".release", ".cta")                                                                      \
  } else if constexpr (S == ::hopper::ptx::sem::release && SC == ::hopper::ptx::scope::cluster) { \
    BODY(".release", ".cluster")                                                                  \
  } else if constexpr (S == ::hopper::ptx::sem::relaxed && SC == ::hopper::ptx::scope::cta) {     \
    BODY(".relaxed", ".cta")                                                                      \
  } else {                                                                                        \
    BODY(".relaxed", ".cluster")                                                                  \
  }

// The same for waits: acquire/relaxed x cta/cluster.
#define HOPPER_PTX_WAIT_SEM_SCOPE(S, SC, BODY)                                                    \
  if constexpr (S == ::hopper::ptx::sem::acquire && SC == ::hopper::ptx::scope::cta) {            \
    BODY(".acquire", ".cta")                                                                      \
  } else if constexpr (S == ::hopper::ptx::sem::acquire && SC == ::hopper::ptx::scope::cluster) { \
    BODY(".acquire", ".cluster")                                                                  \
  } else if constexpr (S == ::hopper::ptx::sem::relaxed && SC == ::hopper::ptx::scope::cta) {     \
    BODY(".relaxed", ".cta")                                                                      \
  } else {                                                                                        \
    BODY(".relaxed", ".cluster")                                                                  \
  }

// Scope only (.cta / .cluster), for instructions whose .sem is fixed.
#define HOPPER_PTX_SCOPE2(SC, BODY)                \
  if constexpr (SC == ::hopper::ptx::scope::cta) { \
    BODY(".cta")                                   \
  } else {                                         \
    BODY(".cluster")                               \
  }
