// Named barriers (PTX ISA: bar, barrier): 16 hardware barriers per CTA (id 0..15; id 0 is __syncthreads'),
// each synchronising a given number of threads (a multiple of the warp size). "memory" clobber:
// bar.sync orders shared and global accesses among the participating threads, and bar.arrive
// releases the producer's prior writes to the threads that bar.sync on the same id.
#pragma once
#include <cstdint>

namespace hopper::ptx {

// bar.sync id, count (= barrier.sync.aligned): wait until `count` threads (arrivals
// from bar.arrive included) reached barrier `id`; every thread of the warp executes it together.
__device__ __forceinline__ void bar_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// bar.sync id: with every thread of the CTA participating.
__device__ __forceinline__ void bar_sync(uint32_t id) { asm volatile("bar.sync %0;" ::"r"(id) : "memory"); }

// barrier.sync id, count: the non-.aligned form: threads of a warp may reach it from
// divergent code.
__device__ __forceinline__ void barrier_sync(uint32_t id, uint32_t count) {
  asm volatile("barrier.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// bar.arrive id, count (= barrier.arrive.aligned): count this warp's threads towards
// barrier `id` and continue without waiting (a producer signalling consumers).
__device__ __forceinline__ void bar_arrive(uint32_t id, uint32_t count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// barrier.arrive id, count: the non-.aligned form.
__device__ __forceinline__ void barrier_arrive(uint32_t id, uint32_t count) {
  asm volatile("barrier.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

}  // namespace hopper::ptx
