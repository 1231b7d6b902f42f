// The producer/consumer pipeline: a ring of `Stages` buffers, each guarded by a full barrier
// (counts the bytes the copy engine delivers) and an empty barrier (counts the consumers'
// releases, the guard against overwriting a stage still being read). Written once over a barrier
// backend, so the same class runs on the GPU (hopper/pipeline/pipeline_backend_device.cuh: the hardware
// mbarrier) and on the host (hopper/model/target.hpp: the executable model, where each thread is
// a task).
//
// The backend is a target (hopper/target/device_target.cuh, hopper/model/target.hpp): the pipeline calls
// its PTX-named members and nothing else, so a kernel and the pipeline it uses speak one
// vocabulary. Those it calls:
//   barrier_type; traced; thread(); lane()      the barrier object; whether record() is called;
//                                                identity (thread 0 initialises the barriers)
//   mbarrier_init(b, count, name, index)         mbarrier.init (the model names it name[index])
//   fence_mbarrier_init_release_cluster()        fence.mbarrier_init.release.cluster
//   syncthreads(); barrier_cluster_{arrive,wait}_aligned()
//   mbarrier_arrive_expect_tx<.release, .cta>(b, bytes)
//   mbarrier_arrive<S, .cta>(b)                  arrive.{release,relaxed}.cta
//   mbarrier_arrive<S, .cluster>(mapa(b, rank))  the barrier at b's offset in CTA `rank`
//   mbarrier_arrive_shared_cluster_lanes<S>(b, n)
//                                                the converged warp's arrive.shared::cluster,
//                                                lane r < n on CTA r's barrier
//   mbarrier_wait<.acquire, .cta or .cluster>(b, parity)   the try_wait.parity loop
//   syncwarp(); record(event, stage, iter, role)  (record only if traced)
// and, on a target that reports call sites (the model's), pin_source / unpin_source.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "hopper/hd.hpp"
#include "hopper/objects/checked.hpp"
#include "hopper/objects/limits.hpp"
#include "hopper/objects/phase.hpp"
#include "hopper/ptx/qualifiers.hpp"
#include "hopper/source_location.hpp"
#include "hopper/trace/trace.hpp"

namespace hopper {

// Bytes a stage carries when its contents are given as types: the sum of their sizes. A bulk copy
// moves a multiple of 16 bytes, so a stage whose size is not is rejected at compile time.
template <class... Tiles>
inline constexpr uint32_t stage_bytes_of = uint32_t((sizeof(Tiles) + ... + size_t(0)));

// Who arrives on a stage's empty barrier when a warp releases it (PTX ISA, mbarrier.arrive).
enum class release_by : uint8_t {
  // each_lane without multicast, warp_leader with it: the form that is fastest where both are
  // correct (docs/pipeline.md, "Who releases a stage", has the measurements).
  automatic,
  // Every lane arrives, after its own last read: mbarrier.arrive.release orders the arriving
  // thread's prior accesses before the producer's acquire, so each thread releases exactly what it
  // read. The empty barrier counts 32 arrivals per releasing warp (with multicast, each lane
  // arrives on every receiving CTA's barrier). The form compute-sanitizer racecheck follows.
  each_lane,
  // __syncwarp, then lane 0 arrives (with multicast lane r, on CTA r's barrier): one arrival per
  // warp. The other lanes' reads reach lane 0's arrive through bar.warp.sync, which orders memory
  // among the threads it synchronises (PTX ISA, bar.warp.sync), then through the arrive's
  // release. racecheck does not carry the other lanes' generic reads through bar.warp.sync and
  // reports the refill as a hazard.
  warp_leader,
};

// How the pipeline is laid out in one CTA and across its cluster.
struct pipeline_params {
  // Releases per CTA: how many warps of a CTA call release() once for every stage. Usually every
  // consumer warp (4 per warpgroup); a consumer warpgroup whose reads are retired together (wgmma)
  // may release from one of its warps, and then counts 1.
  uint32_t releases_per_cta = 1;
  uint32_t cluster_size = 1;  // CTAs in the cluster (1: no cluster)
  bool multicast = false;     // every CTA's stage is filled by every CTA's producer (multicast)
  release_by releaser = release_by::automatic;
  // The names the model's reports give the ring's barriers ("full[s]", "empty[s]"): a kernel
  // with two rings names them apart.
  const char* full_name = "full";
  const char* empty_name = "empty";
};

// Whether `r` is one of release_by's enumerators (a value cast from an integer may not be).
HOPPER_HD constexpr bool valid_release_by(release_by r) {
  return r == release_by::automatic || r == release_by::each_lane || r == release_by::warp_leader;
}

// The release form `p` uses: `releaser`, with automatic resolved by multicast.
HOPPER_HD_TEMPLATE constexpr release_by release_form(const pipeline_params& p) {
  if (p.releaser != release_by::automatic) return p.releaser;
  return p.multicast && p.cluster_size > 1 ? release_by::warp_leader : release_by::each_lane;
}
HOPPER_HD_TEMPLATE constexpr uint32_t arrivals_per_release(const pipeline_params& p) {
  return release_form(p) == release_by::each_lane ? 32u : 1u;
}

// Arrivals counted on one stage's empty barrier: those of every releasing warp (32 or 1, by
// `releaser`) of every CTA that receives the stage's bytes. With multicast a CTA's producer writes
// into all cluster CTAs, so it may only refill the stage when the consumers of all of them have
// released it.
HOPPER_HD_TEMPLATE constexpr uint32_t empty_arrivals(const pipeline_params& p) {
  return p.releases_per_cta * arrivals_per_release(p) * (p.multicast ? p.cluster_size : 1u);
}

// What makes `p` no pipeline, naming the field, or nullptr: releases_per_cta 0, a cluster outside
// 1..16, a releaser that is not a release_by, or an empty-barrier count (computed without
// wrapping) outside mbarrier.init's 1..2^20-1. pipeline::init checks it on the model (and on the
// device with HOPPER_DEBUG_WAITS); validate(pipeline_config) before a launch.
HOPPER_HD constexpr const char* params_fault(const pipeline_params& p) {
  if (p.releases_per_cta == 0) return "releases_per_cta = 0: at least one warp per CTA must release each stage";
  if (p.cluster_size < 1 || p.cluster_size > limits::max_nonportable_cluster_size)
    return "cluster_size is outside 1..16";
  if (!valid_release_by(p.releaser)) return "releaser is not a release_by (automatic, each_lane or warp_leader)";
  const uint64_t arrivals =
      uint64_t(p.releases_per_cta) * arrivals_per_release(p) * (p.multicast ? p.cluster_size : 1u);
  if (!limits::valid_arrival_count(arrivals))
    return "releases_per_cta x arrivals per release x receiving CTAs exceeds the mbarrier arrival count 2^20-1";
  return nullptr;
}

namespace detail {
// Deliberately not constexpr, like counts.hpp's: a bad pipeline_params is an error. The host (the
// model) throws, naming the field; the device, as counts.hpp's checks, prints it and traps when
// HOPPER_DEBUG_WAITS is on and checks nothing otherwise (the check costs 16-48 instructions and,
// for printf, a stack frame in every kernel that takes its params at run time; the SASS tests
// hold the kernels to the hand-written instructions). validate(pipeline_config) checks the same
// params on the host before a launch.
HOPPER_HD void bad_pipeline_params(const char* why, const pipeline_params& p) {
#if defined(__CUDA_ARCH__)
  printf("hopper: pipeline_params{releases_per_cta %u, cluster_size %u}: %s\n", p.releases_per_cta, p.cluster_size,
         why);
  __trap();
#else
  throw std::invalid_argument("hopper: pipeline_params{releases_per_cta " + std::to_string(p.releases_per_cta) +
                              ", cluster_size " + std::to_string(p.cluster_size) + ", releaser " +
                              std::to_string(unsigned(p.releaser)) + "}: " + why);
#endif
}
}  // namespace detail

// The memory semantics of a consumer's release, the arrive on empty[s] (PTX ISA, mbarrier.arrive:
// .release or .relaxed). release_sem is ptx::sem under the name a release reads with; a release
// takes one of its two values:
//   release_sem::release (the default): the consumer read the stage with generic loads; they must
//     be ordered before the arrive, or the producer's next copy may overwrite data still being read
//     (a write-after-read hazard).
//   release_sem::relaxed: the stage was read only by the async proxy (wgmma from shared memory) and
//     those reads are already complete (wgmma.wait_group retired them), so there is nothing to
//     order. At cluster scope this keeps the fence that .release.cluster costs (MEMBAR.ALL.GPU) out
//     of the loop.
using release_sem = ptx::sem;

// Whether a release may use `S`: release_sem::release or release_sem::relaxed.
HOPPER_HD constexpr bool valid_release_sem(release_sem S) {
  return S == release_sem::release || S == release_sem::relaxed;
}

// The ring's barriers as they lie in shared memory: Stages full, then Stages empty. A kernel whose
// whole shared memory is one struct names it with its barrier type (uint64_t on the GPU).
template <int Stages, class Barrier>
struct pipeline_storage {
  Barrier full[Stages];
  Barrier empty[Stages];
};

template <int Stages, class Backend>
class pipeline {
  static_assert(Stages >= 1 && Stages <= 64, "a pipeline has 1 to 64 stages");

 public:
  using barrier_type = typename Backend::barrier_type;
  // The stage/phase state each thread keeps in registers: ++ wraps the stage index and flips the
  // parity (a barrier is reused by waiting on alternating parities).
  using state = stage_state<uint32_t(Stages)>;
  static constexpr int stages = Stages;
  // The caller's call site, for a backend that reports (the model's); empty on the device.
  using source_location = source_location_t<Backend>;

  // The barriers, placed in shared memory by the kernel (on the host: in the model's CTA).
  using storage = pipeline_storage<Stages, barrier_type>;

  // Called by every thread of the CTA (every task on the host). Thread 0 (the targets' identity is
  // 1-D: blocks of threadIdx.x only) initialises the barriers: full expects one arrival (the
  // producer's arrive.expect_tx) plus the bytes; empty expects empty_arrivals(p). Then fence.mbarrier_init makes the
  // init visible to the async proxy and the cluster, and a CTA or cluster barrier keeps anyone from using a barrier
  // before it exists (PTX ISA, mbarrier.init and fence.mbarrier_init).
  HOPPER_HD_TEMPLATE static pipeline init(storage& st, const pipeline_params& p, Backend be = Backend{},
                                          source_location loc = source_location::current()) {
    pin(be, loc);
#if !defined(__CUDA_ARCH__) || HOPPER_DEBUG_WAITS_ON
    if (const char* why = params_fault(p)) detail::bad_pipeline_params(why, p);
#endif
    if (be.thread() == 0) {
      for (int s = 0; s < Stages; ++s) {
        be.mbarrier_init(st.full[s], 1u, p.full_name, uint32_t(s));
        be.mbarrier_init(st.empty[s], empty_arrivals(p), p.empty_name, uint32_t(s));
      }
      // The inits are generic-proxy writes; the copy engine (async proxy) and peer CTAs signal
      // these barriers, so the initialising thread publishes them to both.
      be.fence_mbarrier_init_release_cluster();
    }
    if (p.cluster_size > 1) {
      // peers will arrive on our empty barriers and multicast into our stages
      be.barrier_cluster_arrive_aligned();
      be.barrier_cluster_wait_aligned();
    } else {
      be.syncthreads();
    }
    unpin(be);
    return pipeline(st, p, be);
  }

  // The producer starts on the opposite parity: at start every stage is empty, and a wait for
  // parity 1 on a fresh barrier (phase 0 in progress) succeeds at once (PTX ISA,
  // mbarrier.test_wait/try_wait: waiting on the parity of the preceding phase returns true).
  HOPPER_HD_TEMPLATE state producer_start() const { return state(0u, parity(1u)); }
  HOPPER_HD_TEMPLATE state consumer_start() const { return state(0u, parity(0u)); }

  HOPPER_HD_TEMPLATE barrier_type& full(const state& s) const { return st_->full[s.index()]; }
  HOPPER_HD_TEMPLATE barrier_type& empty(const state& s) const { return st_->empty[s.index()]; }
  HOPPER_HD_TEMPLATE const pipeline_params& params() const { return p_; }
  HOPPER_HD_TEMPLATE Backend& backend() { return be_; }

  // Producer (one thread): wait until the stage is empty, then arm its full barrier with the
  // bytes the copies will deliver (mbarrier.arrive.expect_tx). With multicast the bytes are the
  // whole stage, whichever CTAs' producers deliver them.
  HOPPER_HD_TEMPLATE void acquire(const state& s, uint32_t bytes, source_location loc = source_location::current()) {
    pin(be_, loc);
    trace(trace::event::acquire_begin, s, 0);
    wait_on(st_->empty[s.index()], s.parity(), p_.cluster_size > 1);
    (void)be_.template mbarrier_arrive_expect_tx<ptx::sem::release, ptx::scope::cta>(st_->full[s.index()], bytes);
    trace(trace::event::acquire_end, s, 0);
    unpin(be_);
  }

  // The same with the bytes derived from the stage's tile types.
  HOPPER_EXEC_CHECK_OFF
  template <class... Tiles>
  HOPPER_HD void acquire(const state& s, source_location loc = source_location::current()) {
    static_assert(sizeof...(Tiles) > 0, "name the tile types the stage carries");
    static_assert(stage_bytes_of<Tiles...> % 16 == 0, "a stage's bytes must be a multiple of 16 (cp.async.bulk size)");
    acquire(s, stage_bytes_of<Tiles...>, loc);
  }

  // Producer: the stage's copies are issued. It signals nothing (the copies complete the
  // transaction count on the full barrier themselves) and emits no code without tracing: it only
  // marks the moment on the timeline (trace::event::issued).
  HOPPER_HD_TEMPLATE void issued(const state& s) { trace(trace::event::issued, s, 0); }

  // Consumer (every thread of a consumer warp): wait until the stage's phase completed, i.e. all
  // its bytes landed; .acquire makes them visible to this thread's loads (PTX ISA,
  // mbarrier.test_wait/try_wait: .acquire).
  HOPPER_HD_TEMPLATE void wait(const state& s, source_location loc = source_location::current()) {
    pin(be_, loc);
    trace(trace::event::wait_begin, s, 1);
    wait_on(st_->full[s.index()], s.parity(), false);
    trace(trace::event::wait_end, s, 1);
    unpin(be_);
  }

  // Consumer (every thread of a releasing warp, after its last read of the stage): arrive on the
  // stage's empty barrier, once per CTA that received the stage: this is the write-after-read
  // guard. `releaser` says who arrives (release_by); with multicast every CTA's producer writes a
  // slice into this CTA's stage, so the arrive goes to each CTA's barrier (mapa +
  // .shared::cluster). `Sem` says how the reads are ordered (release_sem).
  HOPPER_EXEC_CHECK_OFF
  template <release_sem Sem = release_sem::release>
  HOPPER_HD void release(const state& s, source_location loc = source_location::current()) {
    static_assert(valid_release_sem(Sem), "pipeline::release: .sem must be release_sem::release or ::relaxed");
    pin(be_, loc);
    barrier_type& e = st_->empty[s.index()];
    const bool remote = p_.multicast && p_.cluster_size > 1;
    if (release_form(p_) == release_by::each_lane) {
      if (be_.lane() == 0) trace(trace::event::release, s, 1);
      if (remote) {
        for (uint32_t r = 0; r < p_.cluster_size; ++r)
          be_.template mbarrier_arrive<Sem, ptx::scope::cluster>(be_.mapa(e, r));
      } else {
        (void)be_.template mbarrier_arrive<Sem, ptx::scope::cta>(e);
      }
      unpin(be_);
      return;
    }
    be_.syncwarp();
    if (be_.lane() == 0) trace(trace::event::release, s, 1);
    if (remote) {
      be_.template mbarrier_arrive_shared_cluster_lanes<Sem>(e, p_.cluster_size);
    } else if (be_.lane() == 0) {
      (void)be_.template mbarrier_arrive<Sem, ptx::scope::cta>(e);
    }
    unpin(be_);
  }

  // Producer tail, from the state after its last acquire: wait for the release of every stage,
  // so that this CTA does not exit while consumers (its own, or a peer's arriving remotely) may
  // still arrive on its empty barriers. A stage never used passes at once (fresh parity).
  HOPPER_HD_TEMPLATE void drain(state s, source_location loc = source_location::current()) {
    pin(be_, loc);
    trace(trace::event::drain_begin, s, 0);
    for (int k = 0; k < Stages; ++k, ++s) wait_on(st_->empty[s.index()], s.parity(), p_.cluster_size > 1);
    trace(trace::event::drain_end, s, 0);
    unpin(be_);
  }

 private:
  HOPPER_HD_TEMPLATE pipeline(storage& st, const pipeline_params& p, Backend be) : st_(&st), p_(p), be_(be) {}

  // mbarrier.try_wait.parity.acquire loop, at cluster scope where peers' arrivals and copies
  // complete the phase (PTX ISA, mbarrier.test_wait/try_wait: .acquire with .scope).
  HOPPER_HD_TEMPLATE void wait_on(barrier_type& b, parity p, bool cluster_scope) {
    if (cluster_scope)
      be_.template mbarrier_wait<ptx::sem::acquire, ptx::scope::cluster>(b, p);
    else
      be_.template mbarrier_wait<ptx::sem::acquire, ptx::scope::cta>(b, p);
  }

  // The members the pipeline calls on the backend report the caller's call site (a backend that
  // takes none, the device's, compiles this to nothing).
  HOPPER_HD_TEMPLATE static void pin(Backend& be, const source_location& loc) {
    if constexpr (takes_source_location<Backend>)
      be.pin_source(loc);
    else
      (void)be, (void)loc;
  }
  HOPPER_HD_TEMPLATE static void unpin(Backend& be) {
    if constexpr (takes_source_location<Backend>)
      be.unpin_source();
    else
      (void)be;
  }

  // With tracing off this is empty after `if constexpr`; HOPPER_PIPELINE_NO_TRACE_HOOKS removes
  // even the call, which is the reference tests/host/pipeline_trace_sass.cpp compares against.
  HOPPER_HD_TEMPLATE void trace(trace::event e, const state& s, uint32_t role) {
#if !defined(HOPPER_PIPELINE_NO_TRACE_HOOKS)
    if constexpr (Backend::traced) be_.record(e, s.index(), s.iter(), role);
#else
    (void)e, (void)s, (void)role;
#endif
  }

  storage* st_;
  pipeline_params p_;
  Backend be_;
};

// ---- host-side validation, before launch -----------------------------------------------------

// What a device allows; query_limits() in pipeline_backend_device.cuh fills it from the device.
// The defaults are sm_90's (hopper/objects/limits.hpp): 227 KiB of opt-in shared memory per block, 1024
// threads, portable cluster size 8 (16 with the non-portable attribute).
struct pipeline_limits {
  size_t smem_per_block = limits::max_smem_per_block;
  uint32_t max_threads_per_block = limits::max_threads_per_block;
  uint32_t max_cluster_size = limits::max_portable_cluster_size;
};

// A whole launch of the pipeline, as the host sees it.
struct pipeline_config {
  uint32_t stages = 4;
  size_t stage_bytes = 0;       // bytes one stage holds in one CTA
  uint32_t consumer_warps = 4;  // per CTA; each releases every stage (releases_per_cta)
  uint32_t block_warps = 5;     // warps in the block (producer warp + consumers + others)
  uint32_t cluster_size = 1;
  bool multicast = false;
  release_by releaser = release_by::automatic;  // who arrives when a warp releases a stage
  size_t extra_smem = 0;                        // other shared memory the kernel uses

  // Shared memory the pipeline needs: the stages plus a full and an empty barrier per stage, and
  // the kernel's other bytes; nullopt when the sum does not fit 64 bits (validate rejects that).
  std::optional<size_t> checked_smem_bytes() const {
    return checked::add(checked::add(checked::mul(size_t(stages), stage_bytes), barrier_bytes()), extra_smem);
  }
  size_t barrier_bytes() const { return size_t(stages) * 2 * limits::mbarrier_bytes; }
  size_t smem_bytes() const { return checked_smem_bytes().value_or(SIZE_MAX); }
  pipeline_params params() const { return pipeline_params{consumer_warps, cluster_size, multicast, releaser}; }
};

// Throws std::invalid_argument ("hopper: pipeline_config: ...") naming the value and the limit it
// breaks. The limits are checked first, against sm_90's (hopper/objects/limits.hpp): a pipeline_limits
// larger than the machine is itself a bad argument. Every derived quantity (threads, bytes,
// arrivals) is computed without wrapping before it is compared.
inline void validate(const pipeline_limits& lim) {
  const std::string who = "pipeline_limits: ";
  if (lim.smem_per_block == 0 || lim.smem_per_block > limits::max_smem_per_block)
    limits::reject(who + "smem_per_block = " + std::to_string(lim.smem_per_block) + " is outside 1.." +
                   std::to_string(limits::max_smem_per_block) + " (sm_90's opt-in maximum per block, 227 KiB)");
  if (lim.max_threads_per_block < limits::warp_size || lim.max_threads_per_block > limits::max_threads_per_block)
    limits::reject(who + "max_threads_per_block = " + std::to_string(lim.max_threads_per_block) + " is outside " +
                   std::to_string(limits::warp_size) + ".." + std::to_string(limits::max_threads_per_block));
  if (lim.max_cluster_size < 1 || lim.max_cluster_size > limits::max_nonportable_cluster_size)
    limits::reject(who + "max_cluster_size = " + std::to_string(lim.max_cluster_size) + " is outside 1.." +
                   std::to_string(limits::max_nonportable_cluster_size));
}

inline void validate(const pipeline_config& c, const pipeline_limits& lim = pipeline_limits{}) {
  validate(lim);
  const std::string who = "pipeline_config: ";
  auto fail = [&](const std::string& m) { limits::reject(who + m); };
  const std::string S = std::to_string(c.stages), B = std::to_string(c.stage_bytes);
  if (c.stages < 1 || c.stages > 64) fail("stages = " + S + ", must be 1 to 64");
  if (c.stage_bytes == 0 || c.stage_bytes % limits::bulk_copy_granule != 0)
    fail("stage_bytes = " + B + ", must be a positive multiple of 16 (cp.async.bulk size)");
  limits::check_tx_bytes(c.stage_bytes, who + "stage_bytes =");
  const std::optional<size_t> smem = c.checked_smem_bytes();
  const std::string smem_what = "stages x stage_bytes = " + S + " x " + B + " (+ " + std::to_string(c.barrier_bytes()) +
                                " barrier + extra_smem = " + std::to_string(c.extra_smem) + " other bytes)";
  if (!smem) fail(smem_what + " overflows 64 bits");
  limits::check_smem_budget(*smem, lim.smem_per_block, who + smem_what);
  const uint64_t threads = uint64_t(c.block_warps) * limits::warp_size;
  if (c.block_warps < 1 || threads > lim.max_threads_per_block)
    fail("block_warps = " + std::to_string(c.block_warps) + " is outside 1.." +
         std::to_string(lim.max_threads_per_block / limits::warp_size) + " warps (" +
         std::to_string(lim.max_threads_per_block) + " threads per block)");
  if (c.consumer_warps < 1) fail("consumer_warps = 0, a pipeline needs at least one consumer warp");
  if (uint64_t(c.consumer_warps) + 1 > c.block_warps)
    fail("consumer_warps = " + std::to_string(c.consumer_warps) + " plus the producer warp exceeds" + " the block's " +
         std::to_string(c.block_warps) + " warps");
  if (c.cluster_size < 1 || c.cluster_size > lim.max_cluster_size)
    fail("cluster_size = " + std::to_string(c.cluster_size) + ", the device can launch clusters of 1 to " +
         std::to_string(lim.max_cluster_size) + " CTAs");
  if (!valid_release_by(c.releaser))
    fail("releaser = release_by(" + std::to_string(unsigned(c.releaser)) +
         ") is not a release_by (automatic, each_lane or warp_leader)");
  if (c.multicast && c.stage_bytes % (limits::bulk_copy_granule * c.cluster_size) != 0)
    fail("stage_bytes = " + B + " cannot be split into " + std::to_string(c.cluster_size) +
         " multicast slices of a multiple of 16 bytes");
  if (const char* why = params_fault(c.params()))
    fail(std::string("consumer_warps = ") + std::to_string(c.consumer_warps) + ": " + why);
}

}  // namespace hopper
