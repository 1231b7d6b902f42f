// The hazard lab's kernel bodies (kernels/hazard_lab/hazard_lab.cuh), written once over a target: the
// __global__ entries there instantiate them with hopper::device_target, and the host tests
// (tests/host/hazard_lab_model.cpp) with hopper::model::target, so the model checks the very
// source the GPU runs. Plain C++: nothing here is CUDA-only, every device operation is a member
// of the target `t` (hopper/target/device_target.cuh and hopper/model/target.hpp list them).
//
// Every body takes its shared memory as parameters: the dynamic shared array as an smem view
// and the kernel's mbarrier objects as one struct of references to `typename Tg::barrier_type`
// slots. Expressions are written as the hand-written kernels wrote them (int loop indices, the
// same casts, __syncthreads_or of the int count), so that each entry compiles to the SASS it had
// before the split (all but release_acquire_mbarrier byte for byte; docs/hazard_lab.md).
#pragma once
#include <cstddef>
#include <cstdint>

#include "hopper/hd.hpp"
#include "hopper/ptx/qualifiers.hpp"

namespace hopper::kernels::hazard_lab {

// The two counters a case's kernels add to (one allocation, zeroed before the launch).
struct counters {
  unsigned long long failed_trials;
  unsigned long long wrong_words;
};
static_assert(offsetof(counters, failed_trials) == 0 && offsetof(counters, wrong_words) == 8,
              "counters: two 8-byte counters, added to as elements 0 and 1");

constexpr int kThreads = 128;  // 4 warps per block in every case

// The expected 32-bit word i of run `run` in block `block`: a hash, never equal for nearby inputs.
HOPPER_HD uint32_t pattern(uint64_t seed, uint32_t block, uint32_t run, uint32_t i) {
  uint64_t x = seed ^ (uint64_t(block) << 40) ^ (uint64_t(run) << 20) ^ uint64_t(i);
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return uint32_t(x ^ (x >> 31));
}

// The mbarrier objects of each kernel, by reference: on the GPU each is its own __shared__
// variable, as in the hand-written kernels (one struct in shared memory would let the compiler
// address them from one base and change the SASS); on the model, slots of a cta_shared object.
template <class B>
struct dsmem_copy_barriers {
  B& landed;  // CTA 1: the peer's copy has landed in the inbox
};
template <class B>
struct refill_barriers {
  B& full;      // the first copy of the run has landed
  B& empty;     // the 96 consumers have read the stage
  B& refilled;  // the refill has landed
};
template <class B>
struct message_barriers {
  B& flag;  // warp 1 has written the data
};

namespace detail {

// Spins `cycles` SM cycles (work on the data); on the model, one scheduling point per poll.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void spin_cycles(Tg& t, int cycles) {
  if (cycles <= 0) return;
  const long long until = t.clock64() + cycles;
  while (t.clock64() < until) {
  }
}

// Adds this thread's wrong words to the total (no atomic when there are none).
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void count_words(Tg& t, typename Tg::template gmem_t<counters> c, int wrong) {
  if (wrong != 0) t.atomic_add(c.template as<unsigned long long>(), 1, (unsigned long long)wrong);
}

// One failed trial (counted by one thread).
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void count_trial(Tg& t, typename Tg::template gmem_t<counters> c) {
  t.atomic_add(c.template as<unsigned long long>(), 0, 1ull);
}

}  // namespace detail

// check_slots: counts each (block, run) slot of `out` that differs from
// pattern(seed, block, run, .) ^ expect_xor in any word as one failed trial, and every differing
// word. One CTA per slot; block() = block * runs + run.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void check_slots_body(Tg& t, typename Tg::template gmem_t<const uint32_t> out, int runs, int words,
                                uint64_t seed, uint32_t expect_xor, typename Tg::template gmem_t<counters> c) {
  const uint32_t slot = t.block();
  const uint32_t block = slot / uint32_t(runs), run = slot % uint32_t(runs);
  const auto s = out + size_t(slot) * size_t(words);
  int wrong = 0;
  for (int i = t.thread(); i < words; i += t.block_threads())
    wrong += s.load(i) != (pattern(seed, block, run, uint32_t(i)) ^ expect_xor);
  detail::count_words(t, c, wrong);
  if (t.syncthreads_or(wrong) && t.thread() == 0) detail::count_trial(t, c);
}

// raw_proxy_bulk_store: generic writes of a tile, then an async-proxy read of it (bulk store).
// `tile`: words x 4 bytes of shared memory; `out`: blocks * runs slots of words.
HOPPER_EXEC_CHECK_OFF
template <class Tg, bool Protect>
HOPPER_HD void raw_proxy_bulk_store_body(Tg& t, typename Tg::template smem_t<uint32_t> tile,
                                         typename Tg::template gmem_t<uint32_t> out, int runs, int words,
                                         uint64_t seed) {
  for (int r = 0; r < runs; ++r) {
    for (int i = t.thread(); i < words; i += t.block_threads())
      tile.store(i, pattern(seed, t.block(), uint32_t(r), uint32_t(i)));
    if constexpr (Protect) t.fence_proxy_async_shared_cta();  // each writer, before the sync
    t.syncthreads();
    if (t.thread() == 0) {
      t.cp_async_bulk_global_shared_cta(out + (size_t(t.block()) * runs + r) * size_t(words), tile,
                                        uint32_t(words) * 4u);
      t.cp_async_bulk_commit_group();
      t.template cp_async_bulk_wait_group_read<0>();  // the next run's writes must not be the hazard here
    }
    t.syncthreads();
  }
  if (t.thread() == 0) t.template cp_async_bulk_wait_group<0>();
}

// raw_proxy_dsmem_copy: the same with a bulk copy into the peer CTA's shared memory (cluster of
// 2: CTA 0 sends to CTA 1, which copies what it received to global memory for the check).
// `smem`: 2 x words x 4 bytes (CTA 0's tile, then CTA 1's inbox); `out`: blocks / 2 * runs slots.
HOPPER_EXEC_CHECK_OFF
template <class Tg, bool Protect>
HOPPER_HD void raw_proxy_dsmem_copy_body(Tg& t, typename Tg::template smem_t<uint32_t> smem,
                                         dsmem_copy_barriers<typename Tg::barrier_type> bars,
                                         typename Tg::template gmem_t<uint32_t> out, int runs, int words,
                                         uint64_t seed) {
  const auto tile = smem;           // CTA 0: the source
  const auto inbox = smem + words;  // CTA 1: the destination
  const uint32_t rank = t.cluster_rank();
  const uint32_t pair = t.block() / 2;
  const uint32_t bytes = uint32_t(words) * 4u;
  if (rank == 1 && t.thread() == 0) {
    t.mbarrier_init(bars.landed, 1, "landed");
    t.mbarrier_arrive_expect_tx(bars.landed, bytes);  // armed for the first run
    t.fence_mbarrier_init_release_cluster();          // the peer's copy engine signals it
  }
  t.barrier_cluster_arrive_aligned();
  t.barrier_cluster_wait_aligned();
  const auto peer_inbox = t.mapa(inbox, 1);
  const auto peer_landed = t.mapa(bars.landed, 1);
  for (int r = 0; r < runs; ++r) {
    if (rank == 0) {
      for (int i = t.thread(); i < words; i += t.block_threads())
        tile.store(i, pattern(seed, pair, uint32_t(r), uint32_t(i)));
      if constexpr (Protect) t.fence_proxy_async_shared_cta();
      t.syncthreads();
      if (t.thread() == 0) t.cp_async_bulk_shared_cluster_shared_cta(peer_inbox, tile, bytes, peer_landed);
    } else {
      if (t.thread() == 0) {
        while (!t.mbarrier_try_wait_parity(bars.landed, uint32_t(r & 1))) {
        }
      }
      t.syncthreads();
      const auto o = out + (size_t(pair) * runs + r) * size_t(words);
      for (int i = t.thread(); i < words; i += t.block_threads()) o.store(i, inbox.load(i));
      t.syncthreads();  // inbox read before the next copy is armed
      if (t.thread() == 0 && r + 1 < runs) t.mbarrier_arrive_expect_tx(bars.landed, bytes);
    }
    // CTA 0 rewrites its tile only after CTA 1 saw the copy complete (source read included).
    t.barrier_cluster_arrive_aligned();
    t.barrier_cluster_wait_aligned();
  }
}

// war_refill_before_release: warp 0 lane 0 is the producer, warps 1..3 the consumers. `stage`:
// words x 4 bytes; `first`, `refill`, `reference`: one slot of words per block.
HOPPER_EXEC_CHECK_OFF
template <class Tg, bool Protect>
HOPPER_HD void war_refill_before_release_body(Tg& t, typename Tg::template smem_t<uint32_t> stage,
                                              refill_barriers<typename Tg::barrier_type> bars,
                                              typename Tg::template gmem_t<const uint32_t> first,
                                              typename Tg::template gmem_t<const uint32_t> refill,
                                              typename Tg::template gmem_t<const uint32_t> reference, int runs,
                                              int words, int delay, typename Tg::template gmem_t<counters> c) {
  constexpr int kConsumers = kThreads - 32;
  const uint32_t bytes = uint32_t(words) * 4u;
  const auto a = first + size_t(t.block()) * words;
  const auto b = refill + size_t(t.block()) * words;
  const auto ref = reference + size_t(t.block()) * words;
  if (t.thread() == 0) {
    t.mbarrier_init(bars.full, 1, "full");
    t.mbarrier_init(bars.empty, kConsumers, "empty");
    t.mbarrier_init(bars.refilled, 1, "refilled");
    t.fence_mbarrier_init_release_cluster();  // the copy engine signals full and refilled
  }
  t.syncthreads();
  for (int r = 0; r < runs; ++r) {
    const uint32_t parity = uint32_t(r & 1);
    if (t.thread() == 0) {
      t.mbarrier_arrive_expect_tx(bars.full, bytes);
      t.cp_async_bulk_shared_cluster_global(stage, a, bytes, bars.full);
      while (!t.mbarrier_try_wait_parity(bars.full, parity)) {
      }
      if constexpr (Protect) {
        while (!t.mbarrier_try_wait_parity(bars.empty, parity)) {
        }
      }
      t.mbarrier_arrive_expect_tx(bars.refilled, bytes);
      t.cp_async_bulk_shared_cluster_global(stage, b, bytes, bars.refilled);
      while (!t.mbarrier_try_wait_parity(bars.refilled, parity)) {
      }
    }
    int wrong = 0;  // the producer warp checks nothing
    if (t.thread() >= 32) {
      while (!t.mbarrier_try_wait_parity(bars.full, parity)) {
      }
      for (int i = int(t.thread()) - 32; i < words; i += kConsumers) {
        wrong += stage.load(i) != ref.load(i);  // read-only global data: what the first copy brought
        detail::spin_cycles(t, delay);
      }
      t.mbarrier_arrive(bars.empty);  // release: the reads above happen before the refill
      detail::count_words(t, c, wrong);
    }
    // The run is over (the refill has landed, every read is done); the trial failed if any of the
    // 96 consumers saw a wrong word, and it is counted once.
    if (t.syncthreads_or(wrong) && t.thread() == 0) detail::count_trial(t, c);
  }
}

// war_store_source_reuse: a tile bulk-stored per run, rewritten by the next run. `tile`: words x
// 4 bytes; `out`: blocks * runs slots of words.
HOPPER_EXEC_CHECK_OFF
template <class Tg, bool Protect>
HOPPER_HD void war_store_source_reuse_body(Tg& t, typename Tg::template smem_t<uint32_t> tile,
                                           typename Tg::template gmem_t<uint32_t> out, int runs, int words,
                                           uint64_t seed) {
  for (int r = 0; r < runs; ++r) {
    for (int i = t.thread(); i < words; i += t.block_threads())
      tile.store(i, pattern(seed, t.block(), uint32_t(r), uint32_t(i)));
    t.fence_proxy_async_shared_cta();  // the RAW side is protected in both variants
    t.syncthreads();
    if (t.thread() == 0) {
      t.cp_async_bulk_global_shared_cta(out + (size_t(t.block()) * runs + r) * size_t(words), tile,
                                        uint32_t(words) * 4u);
      t.cp_async_bulk_commit_group();
      if constexpr (Protect) t.template cp_async_bulk_wait_group_read<0>();
    }
    t.syncthreads();
  }
  if (t.thread() == 0) t.template cp_async_bulk_wait_group<0>();
}

// release_acquire_mbarrier: warp 1 writes `words` words, arrives (32 lanes); warp 2 waits and
// reads. The data lives in shared memory (`data`: words x 4 bytes); every run writes new values.
// The reader expects pattern ^ expect_xor (all ones for a planted fault).
HOPPER_EXEC_CHECK_OFF
template <class Tg, bool Protect>
HOPPER_HD void release_acquire_mbarrier_body(Tg& t, typename Tg::template smem_t<uint32_t> data,
                                             message_barriers<typename Tg::barrier_type> bars, int runs, int words,
                                             uint64_t seed, uint32_t expect_xor,
                                             typename Tg::template gmem_t<counters> c) {
  constexpr auto kArrive = Protect ? ptx::sem::release : ptx::sem::relaxed;
  constexpr auto kWait = Protect ? ptx::sem::acquire : ptx::sem::relaxed;
  if (t.thread() == 0) t.mbarrier_init(bars.flag, 32, "flag");
  t.syncthreads();
  const int warp = int(t.thread()) / 32, lane = int(t.thread()) % 32;
  for (int r = 0; r < runs; ++r) {
    if (warp == 1) {
      // each store issued as written, not merged or delayed
      for (int i = lane; i < words; i += 32) data.store_volatile(i, pattern(seed, t.block(), uint32_t(r), uint32_t(i)));
      t.template mbarrier_arrive<kArrive, ptx::scope::cta>(bars.flag);
    }
    int wrong = 0;  // only warp 2 checks
    if (warp == 2) {
      while (!t.template mbarrier_try_wait_parity<kWait, ptx::scope::cta>(bars.flag, uint32_t(r & 1))) {
      }
      for (int i = lane; i < words; i += 32)
        wrong += data.load_volatile(i) != (pattern(seed, t.block(), uint32_t(r), uint32_t(i)) ^ expect_xor);
      detail::count_words(t, c, wrong);
    }
    // Next run: the reads are over before the next writes. The trial failed if any of the 32
    // reading lanes saw a wrong word, and it is counted once.
    if (t.syncthreads_or(wrong) && t.thread() == 0) detail::count_trial(t, c);
  }
}

}  // namespace hopper::kernels::hazard_lab
