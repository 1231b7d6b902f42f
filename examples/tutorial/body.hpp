// The tutorial's kernel body (docs/tutorial_model.md), written once over a target: thread 0 brings
// a 1 KiB tile from global memory with cp.async.bulk, counted on an mbarrier; warp 1 waits for the
// barrier's phase, then writes every word doubled. `T` is hopper::device_target on the GPU
// (gpu.cu) and hopper::model::target on the host (model.cpp).
#pragma once
#include <cstdint>

#include "hopper/hd.hpp"
#include "hopper/objects/phase.hpp"

namespace tutorial {

constexpr uint32_t kWords = 256, kBytes = kWords * 4;

// `short_by`: bytes the thread announces fewer than it copies (0: correct; the planted bug is 16).
HOPPER_EXEC_CHECK_OFF
template <class T>
HOPPER_HD void double_tile(T& t, typename T::barrier_type& bar, typename T::template smem_t<uint32_t> tile,
                           typename T::template gmem_t<const uint32_t> src, typename T::template gmem_t<uint32_t> dst,
                           uint32_t short_by) {
  if (t.thread() == 0) {
    t.mbarrier_init(bar, 1, "bar");           // one arrival: thread 0's arrive.expect_tx
    t.fence_mbarrier_init_release_cluster();  // the copy engine may signal it now
  }
  t.syncthreads();  // nobody touches the barrier before its init
  if (t.thread() == 0) {
    (void)t.mbarrier_arrive_expect_tx(bar, kBytes - short_by);  // the phase waits for these bytes
    t.cp_async_bulk_shared_cluster_global(tile, src, kBytes, bar);
  }
  if (t.warp() == 1) {
    t.mbarrier_wait(bar, hopper::parity(0u));  // phase 0 complete: the bytes have landed
    for (uint32_t i = t.lane(); i < kWords; i += 32) dst.store(i, 2 * tile.load(i));
  }
}

}  // namespace tutorial
