// mbarrier.*: the barrier object in shared memory (PTX ISA, "Parallel Synchronization and
// Communication Instructions: mbarrier"). One function per
// PTX form. Every asm is volatile with a "memory" clobber: each of these either orders memory
// (release/acquire) or must stay in program order relative to the loads and stores around it, and
// the barrier word itself is memory the compiler must not cache.
//
// Addressing: a barrier of this CTA is passed as `uint64_t*` (generic pointer into shared
// memory, converted with cvta); a barrier of a peer CTA in the cluster is passed as the uint32_t
// .shared::cluster address that mapa returns (see cluster.cuh), and those functions carry the
// suffix `_shared_cluster`, the state space they use.
#pragma once
#include <cstdint>

#include "common.cuh"

namespace hopper::ptx {

namespace detail {
template <sem S, scope SC>
__device__ __forceinline__ constexpr void check_arrive_qualifiers() {
  static_assert(S == sem::release || S == sem::relaxed, "mbarrier arrive: .sem must be release or relaxed");
  static_assert(SC == scope::cta || SC == scope::cluster, "mbarrier: .scope must be cta or cluster");
}
template <sem S, scope SC>
__device__ __forceinline__ constexpr void check_wait_qualifiers() {
  static_assert(S == sem::acquire || S == sem::relaxed, "mbarrier wait: .sem must be acquire or relaxed");
  static_assert(SC == scope::cta || SC == scope::cluster, "mbarrier: .scope must be cta or cluster");
}
}  // namespace detail

// ---- init / inval ------------------------------------------------------------------------

// mbarrier.init.shared::cta.b64 [addr], count: phase 0, pending = expected = count,
// tx-count 0. count must be 1..2^20-1 (hopper::limits). Make it visible to the async proxy and
// to the cluster with fence_mbarrier_init_release_cluster() before use by TMA or peers.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// mbarrier.inval.shared::cta.b64 [addr]: required before the 8 bytes are reused as
// ordinary data or re-initialised as another barrier.
__device__ __forceinline__ void mbarrier_inval(uint64_t* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// ---- arrive --------------------------------------------------------------------------------

// mbarrier.arrive{.release,.relaxed}{.cta,.cluster}.shared::cta.b64 state, [addr]: one arrival;
// returns the state token of the phase arrived on (for test_wait/try_wait).
template <sem S = sem::release, scope SC = scope::cta>
__device__ __forceinline__ uint64_t mbarrier_arrive(uint64_t* bar) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive);
  detail::check_arrive_qualifiers<S, SC>();
  uint64_t state;
  // clang-format off
#define HOPPER_BODY(SEM, SCOPE)                                         \
  asm volatile("mbarrier.arrive" SEM SCOPE ".shared::cta.b64 %0, [%1];" \
               : "=l"(state) : "r"(smem_addr(bar)) : "memory");
  // clang-format on
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return state;
}

// mbarrier.arrive{.sem}{.scope}.shared::cta.b64 state, [addr], count: count
// arrivals at once (1..2^20-1); returns the state token.
template <sem S = sem::release, scope SC = scope::cta>
__device__ __forceinline__ uint64_t mbarrier_arrive(uint64_t* bar, uint32_t count) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive);
  detail::check_arrive_qualifiers<S, SC>();
  uint64_t state;
#define HOPPER_BODY(SEM, SCOPE)                                             \
  asm volatile("mbarrier.arrive" SEM SCOPE ".shared::cta.b64 %0, [%1], %2;" \
               : "=l"(state)                                                \
               : "r"(smem_addr(bar)), "r"(count)                            \
               : "memory");
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return state;
}

// mbarrier.arrive.expect_tx{.sem}{.scope}.shared::cta.b64 state, [addr], txCount
// raises the tx-count by tx_bytes, then arrives once. Two of these with 4096 each make the phase
// wait for 8192 bytes.
template <sem S = sem::release, scope SC = scope::cta>
__device__ __forceinline__ uint64_t mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t tx_bytes) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_expect_tx);
  detail::check_arrive_qualifiers<S, SC>();
  uint64_t state;
#define HOPPER_BODY(SEM, SCOPE)                                                       \
  asm volatile("mbarrier.arrive.expect_tx" SEM SCOPE ".shared::cta.b64 %0, [%1], %2;" \
               : "=l"(state)                                                          \
               : "r"(smem_addr(bar)), "r"(tx_bytes)                                   \
               : "memory");
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return state;
}

// mbarrier.arrive.noComplete.release.cta.shared::cta.b64 state, [addr], count;
// arrives without being allowed to complete the phase: undefined behaviour if this
// arrival would bring the pending count to zero. Observable through mbarrier_pending_count.
// PTX accepts only .release.cta here (ptxas rejects .relaxed with .noComplete).
__device__ __forceinline__ uint64_t mbarrier_arrive_noComplete(uint64_t* bar, uint32_t count) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_noComplete);
  uint64_t state;
  asm volatile("mbarrier.arrive.noComplete.release.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(smem_addr(bar)), "r"(count)
               : "memory");
  return state;
}

// ---- arrive_drop ---------------------------------------------------------------------------

// mbarrier.arrive_drop{.sem}{.scope}.shared::cta.b64 state, [addr]: arrives once
// and lowers the expected arrival count of every later phase by one (a thread leaving the game).
template <sem S = sem::release, scope SC = scope::cta>
__device__ __forceinline__ uint64_t mbarrier_arrive_drop(uint64_t* bar) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_drop);
  detail::check_arrive_qualifiers<S, SC>();
  uint64_t state;
#define HOPPER_BODY(SEM, SCOPE)                                              \
  asm volatile("mbarrier.arrive_drop" SEM SCOPE ".shared::cta.b64 %0, [%1];" \
               : "=l"(state)                                                 \
               : "r"(smem_addr(bar))                                         \
               : "memory");
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return state;
}

// mbarrier.arrive_drop{.sem}{.scope}.shared::cta.b64 state, [addr], count: count
// arrivals, and the expected count of later phases drops by count.
template <sem S = sem::release, scope SC = scope::cta>
__device__ __forceinline__ uint64_t mbarrier_arrive_drop(uint64_t* bar, uint32_t count) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_drop);
  detail::check_arrive_qualifiers<S, SC>();
  uint64_t state;
#define HOPPER_BODY(SEM, SCOPE)                                                  \
  asm volatile("mbarrier.arrive_drop" SEM SCOPE ".shared::cta.b64 %0, [%1], %2;" \
               : "=l"(state)                                                     \
               : "r"(smem_addr(bar)), "r"(count)                                 \
               : "memory");
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return state;
}

// mbarrier.arrive_drop.expect_tx.shared::cta{.sem}{.scope}.b64 state, [addr], txCount;
// expect_tx, then arrive_drop once.
template <sem S = sem::release, scope SC = scope::cta>
__device__ __forceinline__ uint64_t mbarrier_arrive_drop_expect_tx(uint64_t* bar, uint32_t tx_bytes) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_drop_expect_tx);
  detail::check_arrive_qualifiers<S, SC>();
  uint64_t state;
#define HOPPER_BODY(SEM, SCOPE)                                                            \
  asm volatile("mbarrier.arrive_drop.expect_tx.shared::cta" SEM SCOPE ".b64 %0, [%1], %2;" \
               : "=l"(state)                                                               \
               : "r"(smem_addr(bar)), "r"(tx_bytes)                                        \
               : "memory");
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return state;
}

// mbarrier.arrive_drop.noComplete.release.cta.shared::cta.b64 state, [addr], count;
// arrive_drop that must not complete the phase (undefined behaviour if it would).
__device__ __forceinline__ uint64_t mbarrier_arrive_drop_noComplete(uint64_t* bar, uint32_t count) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_drop_noComplete);
  uint64_t state;
  asm volatile("mbarrier.arrive_drop.noComplete.release.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(smem_addr(bar)), "r"(count)
               : "memory");
  return state;
}

// ---- transaction count ---------------------------------------------------------------------

// mbarrier.expect_tx.relaxed{.cta,.cluster}.shared::cta.b64 [addr], txCount
// raises the tx-count of the current phase without arriving.
template <scope SC = scope::cta>
__device__ __forceinline__ void mbarrier_expect_tx(uint64_t* bar, uint32_t tx_bytes) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_expect_tx);
  detail::check_arrive_qualifiers<sem::relaxed, SC>();
#define HOPPER_BODY(SCOPE)                                                                                          \
  asm volatile("mbarrier.expect_tx.relaxed" SCOPE ".shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(tx_bytes) \
               : "memory");
  HOPPER_PTX_SCOPE2(SC, HOPPER_BODY)
#undef HOPPER_BODY
}

// mbarrier.complete_tx.relaxed{.cta,.cluster}.shared::cta.b64 [addr], txCount: lowers
// the tx-count as if tx_bytes had arrived by an asynchronous copy; no memory is written.
template <scope SC = scope::cta>
__device__ __forceinline__ void mbarrier_complete_tx(uint64_t* bar, uint32_t tx_bytes) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_complete_tx);
  detail::check_arrive_qualifiers<sem::relaxed, SC>();
#define HOPPER_BODY(SCOPE)                                                                                            \
  asm volatile("mbarrier.complete_tx.relaxed" SCOPE ".shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(tx_bytes) \
               : "memory");
  HOPPER_PTX_SCOPE2(SC, HOPPER_BODY)
#undef HOPPER_BODY
}

// ---- a peer CTA's barrier (.shared::cluster address from mapa) ---------------------------
// Operations on .shared::cluster return no state (PTX requires the sink `_`): the token of a
// remote phase is meaningless to this thread. Default scope is .cluster, the scope a peer needs.

// mbarrier.arrive{.sem}{.scope}.shared::cluster.b64 _, [addr], count: arrives on a
// barrier in any CTA of the cluster.
template <sem S = sem::release, scope SC = scope::cluster>
__device__ __forceinline__ void mbarrier_arrive_shared_cluster(uint32_t cluster_bar, uint32_t count = 1) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_shared_cluster);
  detail::check_arrive_qualifiers<S, SC>();
#define HOPPER_BODY(SEM, SCOPE)                                                                               \
  asm volatile("mbarrier.arrive" SEM SCOPE ".shared::cluster.b64 _, [%0], %1;" ::"r"(cluster_bar), "r"(count) \
               : "memory");
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
}

// mbarrier.arrive.expect_tx{.sem}{.scope}.shared::cluster.b64 _, [addr], txCount: expect_tx then
// arrive, on a peer's barrier.
template <sem S = sem::release, scope SC = scope::cluster>
__device__ __forceinline__ void mbarrier_arrive_expect_tx_shared_cluster(uint32_t cluster_bar, uint32_t tx_bytes) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_expect_tx_shared_cluster);
  detail::check_arrive_qualifiers<S, SC>();
#define HOPPER_BODY(SEM, SCOPE)                                                                              \
  asm volatile("mbarrier.arrive.expect_tx" SEM SCOPE ".shared::cluster.b64 _, [%0], %1;" ::"r"(cluster_bar), \
               "r"(tx_bytes)                                                                                 \
               : "memory");
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
}

// mbarrier.arrive_drop{.sem}{.scope}.shared::cluster.b64 _, [addr], count
template <sem S = sem::release, scope SC = scope::cluster>
__device__ __forceinline__ void mbarrier_arrive_drop_shared_cluster(uint32_t cluster_bar, uint32_t count = 1) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_arrive_drop_shared_cluster);
  detail::check_arrive_qualifiers<S, SC>();
#define HOPPER_BODY(SEM, SCOPE)                                                                                    \
  asm volatile("mbarrier.arrive_drop" SEM SCOPE ".shared::cluster.b64 _, [%0], %1;" ::"r"(cluster_bar), "r"(count) \
               : "memory");
  HOPPER_PTX_ARRIVE_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
}

// mbarrier.expect_tx.relaxed{.scope}.shared::cluster.b64 [addr], txCount
template <scope SC = scope::cluster>
__device__ __forceinline__ void mbarrier_expect_tx_shared_cluster(uint32_t cluster_bar, uint32_t tx_bytes) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_expect_tx_shared_cluster);
  detail::check_arrive_qualifiers<sem::relaxed, SC>();
#define HOPPER_BODY(SCOPE)                                                                                           \
  asm volatile("mbarrier.expect_tx.relaxed" SCOPE ".shared::cluster.b64 [%0], %1;" ::"r"(cluster_bar), "r"(tx_bytes) \
               : "memory");
  HOPPER_PTX_SCOPE2(SC, HOPPER_BODY)
#undef HOPPER_BODY
}

// mbarrier.complete_tx.relaxed{.scope}.shared::cluster.b64 [addr], txCount
template <scope SC = scope::cluster>
__device__ __forceinline__ void mbarrier_complete_tx_shared_cluster(uint32_t cluster_bar, uint32_t tx_bytes) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_complete_tx_shared_cluster);
  detail::check_arrive_qualifiers<sem::relaxed, SC>();
#define HOPPER_BODY(SCOPE)                                                                                             \
  asm volatile("mbarrier.complete_tx.relaxed" SCOPE ".shared::cluster.b64 [%0], %1;" ::"r"(cluster_bar), "r"(tx_bytes) \
               : "memory");
  HOPPER_PTX_SCOPE2(SC, HOPPER_BODY)
#undef HOPPER_BODY
}

// ---- waits -----------------------------------------------------------------------------------
// All return whether the phase named by the parity (or token) has completed. .acquire (the
// default) makes the writes released before the completing arrivals visible to this thread.
// test_wait never blocks; try_wait may suspend the thread for a system-dependent time (or up to
// the hint, in nanoseconds) before answering false. Both are potentially blocking only in the
// sense of try_wait, so callers loop (hopper::mbarrier::wait).

// mbarrier.test_wait.parity{.acquire,.relaxed}{.cta,.cluster}.shared::cta.b64 p, [addr], parity;
// true iff the phase with this parity has completed, i.e. the current phase's parity
// differs from `parity`.
template <sem S = sem::acquire, scope SC = scope::cta>
__device__ __forceinline__ bool mbarrier_test_wait_parity(uint64_t* bar, uint32_t parity) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_test_wait_parity);
  detail::check_wait_qualifiers<S, SC>();
  uint32_t done;
#define HOPPER_BODY(SEM, SCOPE)             \
  asm volatile(                             \
      "{\n\t.reg .pred p;\n\t"              \
      "mbarrier.test_wait.parity" SEM SCOPE \
      ".shared::cta.b64 p, [%1], %2;\n\t"   \
      "selp.u32 %0, 1, 0, p;\n\t}"          \
      : "=r"(done)                          \
      : "r"(smem_addr(bar)), "r"(parity)    \
      : "memory");
  HOPPER_PTX_WAIT_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return done != 0;
}

// mbarrier.test_wait{.sem}{.scope}.shared::cta.b64 p, [addr], state: true iff the
// phase the token came from (an arrive of this thread) has completed.
template <sem S = sem::acquire, scope SC = scope::cta>
__device__ __forceinline__ bool mbarrier_test_wait(uint64_t* bar, uint64_t state) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_test_wait);
  detail::check_wait_qualifiers<S, SC>();
  uint32_t done;
#define HOPPER_BODY(SEM, SCOPE)           \
  asm volatile(                           \
      "{\n\t.reg .pred p;\n\t"            \
      "mbarrier.test_wait" SEM SCOPE      \
      ".shared::cta.b64 p, [%1], %2;\n\t" \
      "selp.u32 %0, 1, 0, p;\n\t}"        \
      : "=r"(done)                        \
      : "r"(smem_addr(bar)), "l"(state)   \
      : "memory");
  HOPPER_PTX_WAIT_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return done != 0;
}

// mbarrier.try_wait.parity{.sem}{.scope}.shared::cta.b64 p, [addr], parity: like
// test_wait.parity, but the hardware may suspend the thread until the phase completes or a
// system-dependent time limit passes.
template <sem S = sem::acquire, scope SC = scope::cta>
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_try_wait_parity);
  detail::check_wait_qualifiers<S, SC>();
  uint32_t done;
#define HOPPER_BODY(SEM, SCOPE)            \
  asm volatile(                            \
      "{\n\t.reg .pred p;\n\t"             \
      "mbarrier.try_wait.parity" SEM SCOPE \
      ".shared::cta.b64 p, [%1], %2;\n\t"  \
      "selp.u32 %0, 1, 0, p;\n\t}"         \
      : "=r"(done)                         \
      : "r"(smem_addr(bar)), "r"(parity)   \
      : "memory");
  HOPPER_PTX_WAIT_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return done != 0;
}

// mbarrier.try_wait.parity{.sem}{.scope}.shared::cta.b64 p, [addr], parity, suspendTimeHint;
// with a suspend-time limit in nanoseconds.
template <sem S = sem::acquire, scope SC = scope::cta>
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity, uint32_t suspend_ns) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_try_wait_parity);
  detail::check_wait_qualifiers<S, SC>();
  uint32_t done;
#define HOPPER_BODY(SEM, SCOPE)                           \
  asm volatile(                                           \
      "{\n\t.reg .pred p;\n\t"                            \
      "mbarrier.try_wait.parity" SEM SCOPE                \
      ".shared::cta.b64 p, [%1], %2, %3;\n\t"             \
      "selp.u32 %0, 1, 0, p;\n\t}"                        \
      : "=r"(done)                                        \
      : "r"(smem_addr(bar)), "r"(parity), "r"(suspend_ns) \
      : "memory");
  HOPPER_PTX_WAIT_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return done != 0;
}

// mbarrier.try_wait{.sem}{.scope}.shared::cta.b64 p, [addr], state: by state token.
template <sem S = sem::acquire, scope SC = scope::cta>
__device__ __forceinline__ bool mbarrier_try_wait(uint64_t* bar, uint64_t state) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_try_wait);
  detail::check_wait_qualifiers<S, SC>();
  uint32_t done;
#define HOPPER_BODY(SEM, SCOPE)           \
  asm volatile(                           \
      "{\n\t.reg .pred p;\n\t"            \
      "mbarrier.try_wait" SEM SCOPE       \
      ".shared::cta.b64 p, [%1], %2;\n\t" \
      "selp.u32 %0, 1, 0, p;\n\t}"        \
      : "=r"(done)                        \
      : "r"(smem_addr(bar)), "l"(state)   \
      : "memory");
  HOPPER_PTX_WAIT_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return done != 0;
}

// mbarrier.try_wait{.sem}{.scope}.shared::cta.b64 p, [addr], state, suspendTimeHint
template <sem S = sem::acquire, scope SC = scope::cta>
__device__ __forceinline__ bool mbarrier_try_wait(uint64_t* bar, uint64_t state, uint32_t suspend_ns) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_try_wait);
  detail::check_wait_qualifiers<S, SC>();
  uint32_t done;
#define HOPPER_BODY(SEM, SCOPE)                          \
  asm volatile(                                          \
      "{\n\t.reg .pred p;\n\t"                           \
      "mbarrier.try_wait" SEM SCOPE                      \
      ".shared::cta.b64 p, [%1], %2, %3;\n\t"            \
      "selp.u32 %0, 1, 0, p;\n\t}"                       \
      : "=r"(done)                                       \
      : "r"(smem_addr(bar)), "l"(state), "r"(suspend_ns) \
      : "memory");
  HOPPER_PTX_WAIT_SEM_SCOPE(S, SC, HOPPER_BODY)
#undef HOPPER_BODY
  return done != 0;
}

// ---- inspection ------------------------------------------------------------------------------

// mbarrier.pending_count.b64 count, state: the pending arrival count the barrier
// had just before the arrive that produced `state`. PTX defines it only for a state returned by
// mbarrier_arrive_noComplete / mbarrier_arrive_drop_noComplete. No memory access (the token is a
// register value), so no "memory" clobber; volatile keeps it in place.
__device__ __forceinline__ uint32_t mbarrier_pending_count(uint64_t state) {
  HOPPER_PTX_NEEDS_SM90(mbarrier_pending_count);
  uint32_t count;
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(count) : "l"(state));
  return count;
}

}  // namespace hopper::ptx
