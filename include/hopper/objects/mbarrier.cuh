// hopper::mbarrier: a typed view over a 64-bit barrier in this CTA's shared memory (PTX ISA,
// "Parallel Synchronization and Communication Instructions: mbarrier"). It holds only the
// pointer; every member is one PTX instruction (waits: a try_wait loop, bounded under
// HOPPER_DEBUG_WAITS). Types keep the ISA's rules in the signature: counts and bytes are checked
// types, waits take a parity (not an int), and pending_count exists only on the token of a
// .noComplete arrive, the one PTX defines it for.
//
// Templates emit one PTX form per argument: S (ptx::sem) picks .release or .relaxed for an
// arrive, .acquire or .relaxed for a wait; SC (ptx::scope) picks .cta or .cluster. Each comment
// names the forms; the defaults come first.
#pragma once
#include <cstdint>

#include "hopper/objects/counts.hpp"
#include "hopper/objects/phase.hpp"
#include "hopper/objects/wait_debug.cuh"
#include "hopper/ptx/cluster.cuh"
#include "hopper/ptx/fence.cuh"
#include "hopper/ptx/mbarrier.cuh"

namespace hopper {

// The state a local arrive returns: names the phase arrived on (for waits by token).
class mbarrier_token {
 public:
  __device__ constexpr explicit mbarrier_token(uint64_t state) : state_(state) {}
  __device__ constexpr uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

// The state a .noComplete arrive returns; adds the pending count (mbarrier.pending_count).
class mbarrier_nocomplete_token : public mbarrier_token {
 public:
  __device__ constexpr explicit mbarrier_nocomplete_token(uint64_t state) : mbarrier_token(state) {}
  // mbarrier.pending_count.b64: arrivals pending just before the arrive that made this token.
  __device__ uint32_t pending_count() const { return ptx::mbarrier_pending_count(state()); }
};

// A barrier of a peer CTA (or this one) in the cluster, addressed through .shared::cluster.
class remote_mbarrier {
 public:
  __device__ constexpr explicit remote_mbarrier(uint32_t cluster_addr) : addr_(cluster_addr) {}
  __device__ constexpr uint32_t cluster_addr() const { return addr_; }

  // mbarrier.arrive{.release,.relaxed}{.cluster,.cta}.shared::cluster.b64 _, [addr], count
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cluster>
  __device__ void arrive(arrival_count n = arrival_count(1)) const {
    ptx::mbarrier_arrive_shared_cluster<S, SC>(addr_, n.value());
  }
  // mbarrier.arrive.expect_tx{.release,.relaxed}{.cluster,.cta}.shared::cluster.b64 _, [addr], tx
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cluster>
  __device__ void arrive_expect_tx(tx_bytes b) const {
    ptx::mbarrier_arrive_expect_tx_shared_cluster<S, SC>(addr_, b.value());
  }
  // mbarrier.expect_tx.relaxed{.cluster,.cta}.shared::cluster.b64 [addr], tx
  template <ptx::scope SC = ptx::scope::cluster>
  __device__ void expect_tx(tx_bytes b) const {
    ptx::mbarrier_expect_tx_shared_cluster<SC>(addr_, b.value());
  }
  // mbarrier.complete_tx.relaxed{.cluster,.cta}.shared::cluster.b64 [addr], tx
  template <ptx::scope SC = ptx::scope::cluster>
  __device__ void complete_tx(tx_bytes b) const {
    ptx::mbarrier_complete_tx_shared_cluster<SC>(addr_, b.value());
  }

 private:
  uint32_t addr_;
};

class mbarrier {
 public:
  // A view of the 8-byte, 8-aligned barrier object `bar` in this CTA's shared memory.
  __device__ explicit mbarrier(uint64_t& bar) : bar_(&bar) {}
  __device__ explicit mbarrier(uint64_t* bar) : bar_(bar) {}

  __device__ uint64_t* native() const { return bar_; }
  // The barrier's offset in the shared::cta window (what timeout reports print).
  __device__ uint32_t smem_offset() const { return ptx::smem_addr(bar_); }

  // mbarrier.init.shared::cta.b64 [addr], count: phase 0, `expected` arrivals.
  __device__ void init(arrival_count expected) const { ptx::mbarrier_init(bar_, expected.value()); }
  // fence.mbarrier_init.release.cluster: publishes this thread's inits to the async proxy and the
  // cluster.
  __device__ static void fence_init() { ptx::fence_mbarrier_init_release_cluster(); }
  // mbarrier.inval.shared::cta.b64 [addr]: before reusing the 8 bytes as data.
  __device__ void inval() const { ptx::mbarrier_inval(bar_); }

  // mbarrier.arrive{.release,.relaxed}{.cta,.cluster}.shared::cta.b64 state, [addr]
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ mbarrier_token arrive() const {
    return mbarrier_token(ptx::mbarrier_arrive<S, SC>(bar_));
  }
  // mbarrier.arrive{.release,.relaxed}{.cta,.cluster}.shared::cta.b64 state, [addr], count
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ mbarrier_token arrive(arrival_count n) const {
    return mbarrier_token(ptx::mbarrier_arrive<S, SC>(bar_, n.value()));
  }
  // mbarrier.arrive.expect_tx{.release,.relaxed}{.cta,.cluster}.shared::cta.b64 state, [addr], tx
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ mbarrier_token arrive_expect_tx(tx_bytes b) const {
    return mbarrier_token(ptx::mbarrier_arrive_expect_tx<S, SC>(bar_, b.value()));
  }
  // mbarrier.expect_tx.relaxed{.cta,.cluster}.shared::cta.b64 [addr], tx
  template <ptx::scope SC = ptx::scope::cta>
  __device__ void expect_tx(tx_bytes b) const {
    ptx::mbarrier_expect_tx<SC>(bar_, b.value());
  }
  // mbarrier.complete_tx.relaxed{.cta,.cluster}.shared::cta.b64 [addr], tx
  template <ptx::scope SC = ptx::scope::cta>
  __device__ void complete_tx(tx_bytes b) const {
    ptx::mbarrier_complete_tx<SC>(bar_, b.value());
  }
  // mbarrier.arrive.noComplete.release.cta.shared::cta.b64 state, [addr], count: must not
  // complete the phase. Named arrive_no_complete, as in the model; the PTX layer keeps the ISA's
  // spelling (ptx::mbarrier_arrive_noComplete).
  __device__ mbarrier_nocomplete_token arrive_no_complete(arrival_count n) const {
    return mbarrier_nocomplete_token(ptx::mbarrier_arrive_noComplete(bar_, n.value()));
  }

  // mbarrier.arrive_drop{.release,.relaxed}{.cta,.cluster}.shared::cta.b64 state, [addr]: arrives
  // and lowers the expected count of every later phase by one.
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ mbarrier_token arrive_drop() const {
    return mbarrier_token(ptx::mbarrier_arrive_drop<S, SC>(bar_));
  }
  // mbarrier.arrive_drop{.release,.relaxed}{.cta,.cluster}.shared::cta.b64 state, [addr], count
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ mbarrier_token arrive_drop(arrival_count n) const {
    return mbarrier_token(ptx::mbarrier_arrive_drop<S, SC>(bar_, n.value()));
  }
  // mbarrier.arrive_drop.expect_tx{.release,.relaxed}{.cta,.cluster}.shared::cta.b64 state, [addr], tx
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ mbarrier_token arrive_drop_expect_tx(tx_bytes b) const {
    return mbarrier_token(ptx::mbarrier_arrive_drop_expect_tx<S, SC>(bar_, b.value()));
  }
  // mbarrier.arrive_drop.noComplete.release.cta.shared::cta.b64 state, [addr], count
  __device__ mbarrier_nocomplete_token arrive_drop_no_complete(arrival_count n) const {
    return mbarrier_nocomplete_token(ptx::mbarrier_arrive_drop_noComplete(bar_, n.value()));
  }

  // mbarrier.test_wait.parity{.acquire,.relaxed}{.cta,.cluster}.shared::cta.b64: non-blocking,
  // has the phase with parity `p` completed?
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ bool test_wait(parity p) const {
    return ptx::mbarrier_test_wait_parity<S, SC>(bar_, p.value());
  }
  // mbarrier.test_wait{.acquire,.relaxed}{.cta,.cluster}.shared::cta.b64, by token
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ bool test_wait(mbarrier_token t) const {
    return ptx::mbarrier_test_wait<S, SC>(bar_, t.state());
  }
  // mbarrier.try_wait.parity{.acquire,.relaxed}{.cta,.cluster}.shared::cta.b64: may suspend the
  // thread for a system-dependent time before answering.
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ bool try_wait(parity p) const {
    return ptx::mbarrier_try_wait_parity<S, SC>(bar_, p.value());
  }
  // mbarrier.try_wait.parity{.acquire,.relaxed}{.cta,.cluster}.shared::cta.b64 with a
  // suspend-time hint (ns)
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ bool try_wait(parity p, uint32_t suspend_ns) const {
    return ptx::mbarrier_try_wait_parity<S, SC>(bar_, p.value(), suspend_ns);
  }
  // mbarrier.try_wait{.acquire,.relaxed}{.cta,.cluster}.shared::cta.b64, by token
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ bool try_wait(mbarrier_token t) const {
    return ptx::mbarrier_try_wait<S, SC>(bar_, t.state());
  }

  // Loop on mbarrier.try_wait.parity{.acquire,.relaxed}{.cta,.cluster} until the phase with
  // parity `p` completes; bounded and reported under HOPPER_DEBUG_WAITS. Use scope::cluster when
  // the phase is completed from other CTAs (multicast, remote arrives) whose writes this thread
  // reads.
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ void wait(parity p) const {
    uint64_t* const bar = bar_;
    const uint32_t bit = p.value();
    debug::spin_until([bar, bit] { return ptx::mbarrier_try_wait_parity<S, SC>(bar, bit); }, smem_offset(), bit);
  }
  // Wait for the phase a stage/phase tracker names.
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ void wait(const phase& ph) const {
    wait<S, SC>(ph.parity());
  }
  // Loop on mbarrier.try_wait{.acquire,.relaxed}{.cta,.cluster} by token.
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ void wait(mbarrier_token t) const {
    uint64_t* const bar = bar_;
    const uint64_t state = t.state();
    debug::spin_until([bar, state] { return ptx::mbarrier_try_wait<S, SC>(bar, state); }, smem_offset(),
                      debug::token_wait);
  }

  // The same barrier in CTA `rank` of the cluster: mapa.shared::cluster.u32.
  __device__ remote_mbarrier remote(uint32_t rank) const {
    return remote_mbarrier(ptx::mapa_shared_cluster(bar_, rank));
  }

 private:
  uint64_t* bar_;
};

}  // namespace hopper
