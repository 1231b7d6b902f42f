// Named barriers: a barrier id (1..15 for user code; 0 is __syncthreads') and the
// number of threads that meet there, a multiple of the warp size. The compile-time form checks
// both with static_assert; the runtime form checks on the host through hopper::limits and traps
// on the device under HOPPER_DEBUG_WAITS.
#pragma once
#include <cstdint>

#include "hopper/objects/counts.hpp"
#include "hopper/objects/limits.hpp"
#include "hopper/ptx/named_barrier.cuh"

namespace hopper {

template <uint32_t Id, uint32_t Threads>
struct named_barrier {
  static_assert(limits::valid_named_barrier_id(Id), "named_barrier: id must be 0..15");
  static_assert(limits::valid_named_barrier_threads(Threads),
                "named_barrier: thread count must be a multiple of 32 in 32..1024");
  static constexpr uint32_t id = Id;
  static constexpr uint32_t threads = Threads;

  // bar.sync Id, Threads: wait until Threads threads arrived (bar.arrive counts).
  __device__ static void sync() { ptx::bar_sync(Id, Threads); }
  // bar.arrive Id, Threads: signal without waiting (producers).
  __device__ static void arrive() { ptx::bar_arrive(Id, Threads); }
};

// The same with an id and count known only at run time.
class dynamic_named_barrier {
 public:
  HOPPER_HD constexpr dynamic_named_barrier(uint32_t id, uint32_t threads) : id_(id), threads_(threads) {
    if (!limits::valid_named_barrier_id(id)) detail::count_out_of_range("named barrier id", id);
    if (!limits::valid_named_barrier_threads(threads)) detail::count_out_of_range("named barrier threads", threads);
  }
  HOPPER_HD constexpr uint32_t id() const { return id_; }
  HOPPER_HD constexpr uint32_t threads() const { return threads_; }
  // bar.sync id, threads
  __device__ void sync() const { ptx::bar_sync(id_, threads_); }
  // bar.arrive id, threads
  __device__ void arrive() const { ptx::bar_arrive(id_, threads_); }

 private:
  uint32_t id_;
  uint32_t threads_;
};

}  // namespace hopper
