// The bug zoo's kernel bodies, written once over a target: tests/host/bug_zoo_target.cpp runs
// them on the model (hopper::model::target), tests/gpu/bug_zoo.cu on the H200
// (hopper::device_target), and tools/zoo_sanitizer.sh under compute-sanitizer. Each bug is a
// knob of one struct (`knobs`) that a body reads; its correct twin is the same body with the knob
// off. Plain C++: every device operation is a member of the target `t` (the members
// tests/support/target_probe.hpp lists).
//
// Bodies (one kernel each on the GPU):
//   ring            a producer lane bulk-loads tiles into a ring of stages (full barrier, count
//                   1, armed with arrive.expect_tx); consumer warps wait on full, read the stage
//                   (one word a lane), copy it to global memory and release the stage on the
//                   empty barrier (every lane arrives). With a cluster, CTA 0's producer arms every
//                   CTA's full barrier and multicasts; CTA 0's empty barrier counts every CTA's
//                   consumers.
//   store           an epilogue: every thread writes a word of a tile, one thread bulk-stores the
//                   tile to global memory (bulk group), the tile is rewritten for the next output.
//   token_wait      one thread arrives twice on a count-1 barrier, waiting on a token each time.
//   arriver_ahead   correct: a count-1 barrier whose one arriver runs a phase ahead of its waiter.
//   twice_in_phase  correct: on a count-3 barrier one thread arrives twice a phase, another once.
//
// Every body runs `instances` independent copies of its program (one CTA, or one cluster, each):
// instance i reads src + i * src_words and writes out + i * out_words (layout_of). The host
// fills src with fresh values and poisons out; expected_out says what every correct run writes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hopper/hd.hpp"
#include "hopper/objects/phase.hpp"
#include "hopper/ptx/qualifiers.hpp"

namespace hopper::zoo {

constexpr uint32_t kMaxStages = 4;
constexpr uint32_t kTileWords = 32;  // ring: one 128-byte tile a stage, one word a consumer lane
constexpr uint32_t kTileBytes = kTileWords * 4;
constexpr uint32_t kStoreThreads = 64;  // store: two warps, one word a thread
constexpr uint32_t kStoreBytes = kStoreThreads * 4;
constexpr uint32_t kMarker = 0xDEADBEEFu;   // what a consumer writes into a stage before its wait
constexpr uint32_t kTokenPolls = 1u << 16;  // token_wait gives up after this many test_wait polls

enum class body : uint8_t { ring, store, token_wait, arriver_ahead, twice_in_phase };

// One struct for every body: the shape of the program and, off in every twin, the bugs.
struct knobs {
  body kind = body::ring;
  uint32_t stages = 2;          // ring: stages of the ring (1..kMaxStages)
  uint32_t iters = 6;           // tiles (ring, store) or rounds (arriver_ahead, twice_in_phase)
  uint32_t consumer_warps = 1;  // ring: consumer warps of each CTA
  uint32_t cluster = 1;         // ring: CTAs of one instance, filled by CTA 0's multicast
  bool split_copy = false;      // ring: each stage filled by two copies of half a tile
  bool in_place = false;        // ring: a consumer writes ~word back into the stage after reading it
  // the bugs
  bool empty_wait_parity_0 = false;        // the producer's first wait on an empty barrier is on parity 0
  bool expect_16_more = false;             // arrive.expect_tx of 16 bytes more than the tile
  bool expect_one_half = false;            // split copy: only one copy's bytes expected
  bool empty_count_one_warp = false;       // empty count: one consumer warp, though every warp releases
  bool empty_count_one_cta = false;        // empty count: CTA 0's consumers only, though the cluster's release
  bool last_warp_never_releases = false;   // the last consumer warp reads but is not counted on empty
  bool release_before_read = false;        // a consumer arrives on empty before reading the stage
  bool no_final_cluster_sync = false;      // CTA 0 exits while CTA 1 still arrives on its empty barriers
  bool fence_init_by_other = false;        // fence.mbarrier_init by thread 32, not the initialising thread 0
  bool read_before_wait = false;           // a consumer reads the stage before waiting on full
  bool write_before_wait = false;          // a consumer writes the stage before waiting on full
  bool in_place_no_fence = false;          // in place: no fence.proxy.async between the write and the release
  bool refill_without_empty_wait = false;  // the producer waits for its last load of a stage to land
                                           // (full) instead of for its release (empty), then refills
  bool no_proxy_fence = false;             // store: no fence.proxy.async by the writers
  bool proxy_fence_issuer_only = false;    // store: only the issuing thread fences
  bool no_wait_group_read = false;         // store: the tile rewritten before wait_group.read
  bool stale_token = false;                // token_wait: the second wait uses the first arrive's token
};

// What a launch of one instance needs, and what it reads and writes.
struct layout {
  uint32_t ctas = 1;        // CTAs of an instance (the cluster size when above 1)
  uint32_t block = 32;      // threads of a CTA
  uint32_t smem_bytes = 0;  // dynamic shared memory of a CTA
  uint32_t src_words = 0;   // words an instance reads from src
  uint32_t out_words = 0;   // words an instance writes to out
};

HOPPER_HD layout layout_of(const knobs& k) {
  layout l;
  switch (k.kind) {
    case body::ring:
      l.ctas = k.cluster;
      l.block = 32 * (1 + k.consumer_warps);
      l.smem_bytes = k.stages * kTileBytes;
      l.src_words = k.iters * kTileWords;
      l.out_words = k.cluster * k.consumer_warps * k.iters * kTileWords;
      break;
    case body::store:
      l.block = kStoreThreads;
      l.smem_bytes = kStoreBytes;
      l.src_words = l.out_words = k.iters * kStoreThreads;
      break;
    case body::token_wait:
      l.src_words = l.out_words = 1;
      break;
    case body::arriver_ahead:
    case body::twice_in_phase:
      l.block = 64;
      l.smem_bytes = 2 * k.iters * 4;
      l.src_words = l.out_words = 2 * k.iters;
      break;
  }
  return l;
}

// What a correct run writes into out for one instance that read `src` (src_words words).
inline std::vector<uint32_t> expected_out(const knobs& k, const uint32_t* src) {
  const layout l = layout_of(k);
  std::vector<uint32_t> out(l.out_words);
  switch (k.kind) {
    case body::ring:  // every consumer warp of every CTA copies every tile
      for (uint32_t w = 0; w < k.cluster * k.consumer_warps; ++w)
        for (uint32_t i = 0; i < l.src_words; ++i) out[size_t(w) * l.src_words + i] = src[i];
      break;
    case body::store:
    case body::token_wait:
    case body::arriver_ahead:
      for (uint32_t i = 0; i < l.out_words; ++i) out[i] = src[i];
      break;
    case body::twice_in_phase:  // each thread writes what the other one published
      for (uint32_t r = 0; r < k.iters; ++r) {
        out[r] = src[k.iters + r];
        out[k.iters + r] = src[r];
      }
      break;
  }
  return out;
}

// ---- ring ----------------------------------------------------------------------------------

// A CTA's shared memory of the ring: the stages, and its mbarriers (arrays of kMaxStages).
template <class Tg>
struct ring_smem {
  typename Tg::template smem_t<uint32_t> tiles;  // stages x kTileWords
  typename Tg::barrier_type* full;               // full[s]: the stage's bytes have landed
  typename Tg::barrier_type* empty;              // empty[s] (CTA 0): every consumer read the stage
};

namespace detail {

// Which instance of the program this CTA runs, and its rank in it.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD uint32_t instance(Tg& t, const knobs& k) {
  return t.block() / (k.kind == body::ring ? k.cluster : 1u);
}

// Arrivals the empty barrier of CTA 0 counts per phase: 32 per releasing warp and CTA.
HOPPER_HD uint32_t empty_count(const knobs& k) {
  const uint32_t warps = k.consumer_warps - (k.last_warp_never_releases ? 1u : 0u);
  return 32u * (k.empty_count_one_warp ? 1u : warps) * (k.empty_count_one_cta ? 1u : k.cluster);
}

// Thread 0 of every CTA initialises its barriers (CTA 0 also the empty ones); the inits are
// fenced for the copy engine and the peers, then every thread of the instance meets.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void ring_init(Tg& t, const knobs& k, const ring_smem<Tg>& m) {
  if (t.thread() == 0) {
    for (uint32_t s = 0; s < k.stages; ++s) {
      t.mbarrier_init(m.full[s], 1, "full", s);
      if (t.cluster_rank() == 0) t.mbarrier_init(m.empty[s], empty_count(k), "empty", s);
    }
    if (!k.fence_init_by_other) t.fence_mbarrier_init_release_cluster();
  }
  if (k.fence_init_by_other) {  // another thread fences, once the inits are done
    t.syncthreads();
    if (t.thread() == 32) t.fence_mbarrier_init_release_cluster();
  }
  if (k.cluster > 1) {
    t.barrier_cluster_arrive_aligned();
    t.barrier_cluster_wait_aligned();
  } else {
    t.syncthreads();
  }
}

// The producer's wait for consumers' releases: .cluster scope when they arrive from peers.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void wait_released(Tg& t, const knobs& k, typename Tg::barrier_type& b, uint32_t p) {
  if (k.cluster > 1)
    t.template mbarrier_wait<ptx::sem::acquire, ptx::scope::cluster>(b, parity(p));
  else
    t.mbarrier_wait(b, parity(p));
}

// One lane releases stage s: arrive.release on CTA 0's empty barrier (remote from a peer CTA).
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void release(Tg& t, const ring_smem<Tg>& m, uint32_t s) {
  if (t.cluster_rank() == 0)
    (void)t.mbarrier_arrive(m.empty[s]);
  else
    t.mbarrier_arrive(t.mapa(m.empty[s], 0));
}

// Lane 0 of warp 0 of CTA 0: arms every CTA's full barrier and fills stage it % stages with tile it.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void ring_produce(Tg& t, const knobs& k, const ring_smem<Tg>& m,
                            typename Tg::template gmem_t<const uint32_t> src) {
  for (uint32_t it = 0; it < k.iters; ++it) {
    const uint32_t s = it % k.stages, r = it / k.stages;
    if (!k.refill_without_empty_wait)
      wait_released(t, k, m.empty[s], k.empty_wait_parity_0 ? (r & 1u) : (r & 1u) ^ 1u);
    else if (r > 0)
      t.mbarrier_wait(m.full[s], parity((r - 1) & 1u));  // the last load landed; its readers may not be done
    const uint32_t expect = k.expect_one_half ? kTileBytes / 2 : kTileBytes + (k.expect_16_more ? 16u : 0u);
    (void)t.mbarrier_arrive_expect_tx(m.full[s], expect);
    for (uint32_t c = 1; c < k.cluster; ++c) t.mbarrier_arrive_expect_tx(t.mapa(m.full[s], c), expect);
    const auto stage = m.tiles + size_t(s) * kTileWords;
    const auto tile = src + size_t(it) * kTileWords;
    if (k.cluster > 1) {
      t.cp_async_bulk_shared_cluster_global_multicast(stage, tile, kTileBytes, m.full[s],
                                                      uint16_t((1u << k.cluster) - 1u));
    } else if (k.split_copy) {
      t.cp_async_bulk_shared_cluster_global(stage, tile, kTileBytes / 2, m.full[s]);
      t.cp_async_bulk_shared_cluster_global(stage + kTileWords / 2, tile + kTileWords / 2, kTileBytes / 2, m.full[s]);
    } else {
      t.cp_async_bulk_shared_cluster_global(stage, tile, kTileBytes, m.full[s]);
    }
  }
}

// Consumer warp `cw` of this CTA: each lane waits for each tile, copies its word to `out` (this
// warp's iters x kTileWords words) and releases the stage.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void ring_consume(Tg& t, const knobs& k, const ring_smem<Tg>& m, typename Tg::template gmem_t<uint32_t> out,
                            uint32_t cw) {
  const uint32_t lane = t.lane();
  const bool releases = !(k.last_warp_never_releases && cw + 1 == k.consumer_warps);
  for (uint32_t it = 0; it < k.iters; ++it) {
    const uint32_t s = it % k.stages, r = it / k.stages;
    const auto stage = m.tiles + size_t(s) * kTileWords;
    uint32_t v = 0;
    if (k.read_before_wait) v = stage.load(lane);
    if (k.write_before_wait) stage.store(lane, uint32_t{kMarker});  // a value: no device copy of the constant
    t.mbarrier_wait(m.full[s], parity(r & 1u));
    if (releases && k.release_before_read) release(t, m, s);
    if (!k.read_before_wait) v = stage.load(lane);
    out.store(size_t(it) * kTileWords + lane, v);
    if (k.in_place) {
      stage.store(lane, ~v);
      if (!k.in_place_no_fence) t.fence_proxy_async_shared_cta();  // before the refill's async write
    }
    if (releases && !k.release_before_read) release(t, m, s);
  }
}

}  // namespace detail

// ring: warp 0 lane 0 of CTA 0 produces, warps 1.. of every CTA consume.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void ring_body(Tg& t, const knobs& k, const ring_smem<Tg>& m,
                         typename Tg::template gmem_t<const uint32_t> src, typename Tg::template gmem_t<uint32_t> out) {
  const layout l = layout_of(k);
  const uint32_t inst = detail::instance(t, k), rank = t.cluster_rank();
  detail::ring_init(t, k, m);
  if (t.warp() == 0) {
    if (t.lane() == 0 && rank == 0) detail::ring_produce(t, k, m, src + size_t(inst) * l.src_words);
  } else {
    const uint32_t cw = t.warp() - 1;
    detail::ring_consume(t, k, m, out + size_t(inst) * l.out_words + size_t(rank * k.consumer_warps + cw) * l.src_words,
                         cw);
  }
  if (k.cluster > 1 && !k.no_final_cluster_sync) {  // CTA 0's barriers live until every peer is done
    t.syncwarp();
    t.barrier_cluster_arrive_aligned();
    t.barrier_cluster_wait_aligned();
  }
}

// ---- store ---------------------------------------------------------------------------------

// store: thread i writes word i of the tile (from src), thread 0 bulk-stores the tile to out.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void store_body(Tg& t, const knobs& k, typename Tg::template smem_t<uint32_t> tile,
                          typename Tg::template gmem_t<const uint32_t> src,
                          typename Tg::template gmem_t<uint32_t> out) {
  const size_t base = size_t(detail::instance(t, k)) * layout_of(k).src_words;
  const uint32_t i = t.thread();
  for (uint32_t it = 0; it < k.iters; ++it) {
    const size_t at = base + size_t(it) * kStoreThreads;
    tile.store(i, src.load(at + i));
    if (!k.no_proxy_fence && (!k.proxy_fence_issuer_only || i == 0)) t.fence_proxy_async_shared_cta();
    t.syncthreads();
    if (i == 0) {
      t.cp_async_bulk_global_shared_cta(out + at, tile, kStoreBytes);
      t.cp_async_bulk_commit_group();
      if (!k.no_wait_group_read) t.template cp_async_bulk_wait_group_read<0>();  // the tile may be rewritten
    }
    t.syncthreads();
  }
  if (i == 0) t.template cp_async_bulk_wait_group<0>();
}

// ---- token_wait ----------------------------------------------------------------------------

namespace detail {

// Polls test_wait on `token` at most kTokenPolls times: whether its phase was seen complete.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD bool poll_token(Tg& t, typename Tg::barrier_type& b, uint64_t token) {
  for (uint32_t i = 0; i < kTokenPolls; ++i)
    if (t.mbarrier_test_wait(b, token)) return true;
  return false;
}

}  // namespace detail

// token_wait: thread 0 arrives on its count-1 barrier and waits on the token (phase 0), arrives
// again (phase 1) and waits on a token again; it writes src's word when both waits saw their
// phase complete, else its complement.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void token_wait_body(Tg& t, const knobs& k, typename Tg::barrier_type& b,
                               typename Tg::template gmem_t<const uint32_t> src,
                               typename Tg::template gmem_t<uint32_t> out) {
  if (t.thread() != 0) return;
  const uint32_t inst = detail::instance(t, k);
  t.mbarrier_init(b, 1, "done", 0);
  const uint64_t first = t.mbarrier_arrive(b);  // completes phase 0
  const bool saw_first = detail::poll_token(t, b, first);
  const uint64_t second = t.mbarrier_arrive(b);  // completes phase 1: the barrier is in phase 2
  const bool saw_second = detail::poll_token(t, b, k.stale_token ? first : second);
  const uint32_t v = src.load(inst);
  out.store(inst, saw_first && saw_second ? v : ~v);
}

// ---- the correct protocols a naive checker rejects ----------------------------------------

// What the two protocols use: their barrier, 2 x iters words of shared memory, src and out.
template <class Tg>
struct protocol_mem {
  typename Tg::barrier_type* b;
  typename Tg::template smem_t<uint32_t> x;
  typename Tg::template gmem_t<const uint32_t> src;
  typename Tg::template gmem_t<uint32_t> out;
};

namespace detail {

// Thread 0 initialises the barrier with `count` arrivals, every thread meets; returns the offset
// of this instance's words in src and out.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD size_t protocol_start(Tg& t, const knobs& k, const protocol_mem<Tg>& m, uint32_t count, const char* name) {
  if (t.thread() == 0) t.mbarrier_init(*m.b, count, name, 0);
  t.syncthreads();
  return size_t(instance(t, k)) * layout_of(k).src_words;
}

}  // namespace detail

// arriver_ahead: count 1. Per round r, thread 0 publishes x[2r] and arrives (completing phase
// 2r), meets thread 32 at __syncthreads, publishes x[2r+1] and arrives again (phase 2r+1) with no
// wait in between; thread 32 waits for phase 2r+1 (parity 1) and copies both words out.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void arriver_ahead_body(Tg& t, const knobs& k, const protocol_mem<Tg>& m) {
  const size_t base = detail::protocol_start(t, k, m, 1, "done");
  for (uint32_t r = 0; r < k.iters; ++r) {
    if (t.thread() == 0) {
      m.x.store(2 * r, m.src.load(base + 2 * r));
      (void)t.mbarrier_arrive(*m.b);
    }
    t.syncthreads();
    if (t.thread() == 0) {
      m.x.store(2 * r + 1, m.src.load(base + 2 * r + 1));
      (void)t.mbarrier_arrive(*m.b);
    }
    if (t.thread() == 32) {
      t.mbarrier_wait(*m.b, parity(1));
      m.out.store(base + 2 * r, m.x.load(2 * r));
      m.out.store(base + 2 * r + 1, m.x.load(2 * r + 1));
    }
    t.syncthreads();  // the wait of round r before the arrivals of round r+1
  }
}

// twice_in_phase: count 3. Per round r, thread 0 publishes x[r] and arrives twice, thread 32
// publishes x[iters + r] and arrives once; both wait for phase r and copy the other's word out.
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD void twice_in_phase_body(Tg& t, const knobs& k, const protocol_mem<Tg>& m) {
  const size_t base = detail::protocol_start(t, k, m, 3, "round");
  if (t.thread() != 0 && t.thread() != 32) return;
  const uint32_t mine = t.thread() == 0 ? 0 : k.iters, theirs = k.iters - mine;
  for (uint32_t r = 0; r < k.iters; ++r) {
    m.x.store(mine + r, m.src.load(base + mine + r));
    (void)t.mbarrier_arrive(*m.b);
    if (t.thread() == 0) (void)t.mbarrier_arrive(*m.b);
    t.mbarrier_wait(*m.b, parity(r & 1u));
    m.out.store(base + mine + r, m.x.load(theirs + r));
  }
}

// ---- the cases -----------------------------------------------------------------------------

enum class role : uint8_t { bug, twin, correct };

inline const char* role_name(role r) {
  switch (r) {
    case role::bug:
      return "bug";
    case role::twin:
      return "twin";
    case role::correct:
      return "correct";
  }
  return "?";
}

struct zoo_case {
  std::string name;
  role kind;
  std::string twin;  // a bug's correct twin (the same body with its knob off); empty otherwise
  knobs k;
  std::string what;
};

// Every case: each twin, then each bug, made from its twin by turning one knob on, then the
// correct protocols.
inline const std::vector<zoo_case>& all_cases() {
  static const std::vector<zoo_case> cases = [] {
    std::vector<zoo_case> v;
    knobs ring;  // 1 CTA, 1 consumer warp, 2 stages, 6 tiles
    knobs split = ring;
    split.split_copy = true;
    knobs two = ring;  // two consumer warps, 4 stages, 12 tiles
    two.consumer_warps = 2;
    two.stages = 4;
    two.iters = 12;
    knobs cluster = ring;  // multicast into a cluster of 2
    cluster.cluster = 2;
    knobs in_place = ring;
    in_place.in_place = true;
    knobs store;
    store.kind = body::store;
    store.iters = 3;
    knobs token;
    token.kind = body::token_wait;
    v.push_back({"ring", role::twin, "", ring, "bulk-loaded ring, 1 CTA, 2 stages, every lane releases"});
    v.push_back({"ring_split_copy", role::twin, "", split, "ring, each stage filled by two half-tile copies"});
    v.push_back({"ring_two_warps", role::twin, "", two, "ring, 4 stages, two consumer warps, both counted"});
    v.push_back({"ring_cluster", role::twin, "", cluster, "ring multicast into a cluster of 2, final cluster sync"});
    v.push_back({"ring_in_place", role::twin, "", in_place, "ring, consumers write the stage in place, then fence"});
    v.push_back({"store", role::twin, "", store, "epilogue: writes, fence.proxy.async by each, bulk store, .read"});
    v.push_back({"token_wait", role::twin, "", token, "waits on the token of the latest arrive"});
    // The bug `name`: the knobs of its twin (a case above) with `knob` on.
    const auto bug = [&v](const char* name, const char* twin, bool knobs::*knob, const char* what) {
      knobs k;
      for (const zoo_case& c : v)
        if (c.name == twin) k = c.k;
      k.*knob = true;
      v.push_back({name, role::bug, twin, k, what});
    };
    bug("empty_wait_parity_0", "ring", &knobs::empty_wait_parity_0, "producer's first empty wait on parity 0");
    bug("expect_tx_too_large", "ring", &knobs::expect_16_more, "expect_tx 16 bytes more than the copy brings");
    bug("expect_tx_one_half", "ring_split_copy", &knobs::expect_one_half, "two copies a stage, one's bytes expected");
    bug("empty_count_one_warp", "ring_two_warps", &knobs::empty_count_one_warp, "empty count ignores a consumer warp");
    bug("empty_count_one_cta", "ring_cluster", &knobs::empty_count_one_cta, "empty count ignores the cluster");
    bug("no_proxy_fence", "store", &knobs::no_proxy_fence, "bulk store of generic writes, no fence.proxy.async");
    bug("proxy_fence_issuer_only", "store", &knobs::proxy_fence_issuer_only, "fence.proxy.async by the issuer only");
    bug("no_wait_group_read", "store", &knobs::no_wait_group_read, "store's source rewritten before wait_group.read");
    bug("release_before_read", "ring", &knobs::release_before_read, "consumer releases the stage before reading it");
    bug("cta_exits_early", "ring_cluster", &knobs::no_final_cluster_sync, "CTA 0 exits while CTA 1 still arrives");
    bug("fence_init_by_other", "ring", &knobs::fence_init_by_other, "fence.mbarrier_init by another thread");
    bug("uncounted_reader", "ring_two_warps", &knobs::last_warp_never_releases, "a reader the empty count leaves out");
    bug("stale_token", "token_wait", &knobs::stale_token, "waits on a token two phases old");
    bug("read_before_wait", "ring", &knobs::read_before_wait, "consumer reads the stage before waiting on full");
    bug("write_before_wait", "ring", &knobs::write_before_wait, "consumer writes the stage before waiting on full");
    bug("in_place_no_fence", "ring_in_place", &knobs::in_place_no_fence, "in-place write, TMA refill, no proxy fence");
    bug("refill_without_empty_wait", "ring", &knobs::refill_without_empty_wait, "producer skips its empty wait");
    knobs ahead;
    ahead.kind = body::arriver_ahead;
    ahead.iters = 2;
    knobs twice;
    twice.kind = body::twice_in_phase;
    twice.iters = 3;
    v.push_back({"arriver_ahead", role::correct, "", ahead, "count-1 barrier, its one arriver a phase ahead"});
    v.push_back({"twice_in_phase", role::correct, "", twice, "count 3: one thread arrives twice a phase"});
    return v;
  }();
  return cases;
}

// The cases' names (what a parameterised test iterates over).
inline std::vector<std::string> case_names() {
  std::vector<std::string> v;
  for (const zoo_case& c : all_cases()) v.push_back(c.name);
  return v;
}

inline const zoo_case* find_case(const std::string& name) {
  for (const zoo_case& c : all_cases())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace hopper::zoo
