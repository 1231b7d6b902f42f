// The streaming copies' kernel bodies, written once over a target: the GPU runs
// them through kernels/copy/stream_copy.cuh's __global__ entries with hopper::device_target, the host
// model runs the same lines with hopper::model::target (tests/host/stream_copy_model.cpp). Plain
// C++ apart from the target: no CUDA header is needed to compile this file for the model.
//
//   copy_1d_body      cp.async.bulk global -> shared (mbarrier), cp.async.bulk shared -> global
//   copy_2d_body      the same through 2-D tensor maps (cp.async.bulk.tensor.2d)
//   axpb_body         y = a*x + b in bf16: transform warps rewrite each stage in shared memory
//                     between the load and the store
//   ldst_body         bulk loads, then ld.shared + st.global from store warps (plain or fused)
//
// Roles per CTA:
//   warp 0, lane 0   producer: pipeline.acquire (wait empty, arrive.expect_tx), bulk load
//   warp 1, lane 0   storer (bulk paths): wait until the stage is ready, bulk store, commit_group;
//                    the stage is released only after wait_group.read<Lag> says its store has
//                    finished reading it, so up to Lag stores read shared memory at once
//   warps 2..        (axpb) transform warps: wait full, y = a*x + b in place,
//                    fence.proxy.async.shared::cta, every thread arrives on the stage's
//                    `ready` barrier
//   warps 1..W       (ldst) store warps: wait full, 16 B per thread from shared memory to global
//                    memory, then every thread releases the stage (release_by::each_lane)
// The bytes past the last multiple of 16 (2-D: past the last whole 1 KiB row) are copied with
// ordinary loads and stores by CTA 0's warp 0, lanes 1-31, since a bulk copy moves only multiples
// of 16 bytes.
//
// Two schedules walk the chunks with the same bodies: persistent (a CTA walks chunk c, c + grid,
// ... or one contiguous run, wrapping its ring many times) and per_tile (one short-lived CTA per
// `tile_chunks` consecutive chunks, which stores them and exits once its stores have read shared
// memory).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hopper/hd.hpp"
#include "hopper/objects/phase.hpp"
#include "hopper/pipeline/pipeline.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#endif

namespace hopper::kernels {

// Which chunks a CTA copies: chunk c goes to CTA c % grid (neighbouring CTAs work on neighbouring
// chunks at the same time), or each CTA takes one contiguous run of chunks.
enum class chunk_order : uint8_t { interleaved, contiguous };

// L2 eviction priority given to a copy's accesses (.L2::cache_hint with createpolicy.fractional);
// none issues the plain instruction.
enum class l2_evict : uint8_t { none, first, normal, last };

// How a stage leaves shared memory: one bulk store per stage from the TMA unit (cp.async.bulk
// shared -> global), or 16-byte ld.shared + st.global from `store_warps` warps (1-D and fused only).
enum class store_path : uint8_t { bulk, st_global };

// How chunks are handed to CTAs: a persistent grid that walks them (each CTA wraps its ring), or
// one short-lived CTA per tile of `tile_chunks` chunks (docs/copy.md).
enum class schedule : uint8_t { persistent, per_tile };

// The knobs of a streaming copy. The defaults are the persistent 2-D copy's best point; the 1-D
// and fused copies default to stream_copy_1d_default() / stream_axpb_bf16_default()
// (kernels/copy/stream_copy.cuh). docs/copy.md has the sweeps; bench/copy_presets.hpp the other
// measured points.
struct stream_copy_config {
  uint32_t stages = 8;                     // shared-memory stages per CTA: 2, 3, 4, 6, 8, 12 or 16
  uint32_t stage_bytes = 24576;            // bytes per stage: multiple of 16 (2-D: of 1024)
  uint32_t blocks_per_sm = 1;              // CTAs per SM of the persistent grid
  uint32_t store_lag = 1;                  // stores still reading shared memory before a release: 0, 1, 2
  uint32_t transform_warps = 4;            // fused bulk path only: warps that compute y = a*x + b (1..16)
  uint32_t prefetch_chunks = 0;            // cp.async.bulk.prefetch.L2 of the CTA's chunk this many ahead (0: none)
  l2_evict load_policy = l2_evict::none;   // L2 priority of the bulk loads
  l2_evict store_policy = l2_evict::none;  // L2 priority of the bulk stores
  chunk_order order = chunk_order::interleaved;
  store_path path = store_path::bulk;
  uint32_t store_warps = 8;      // st_global only: warps that read the stages and store (1..16)
  bool streaming_store = false;  // st_global only: st.global.cs instead of st.global (no store_policy then)
  schedule sched = schedule::persistent;
  uint32_t tile_chunks = 1;  // per_tile only: chunks of stage_bytes per CTA (1..16); the
                             // ring holds min(stages, tile_chunks) of them
};

// What the 1-D copy and the fused kernel use by default: the per-tile schedule, one CTA per 4 KiB
// chunk, a bulk load, then 4 store warps with st.global (docs/copy.md: 0.99-1.00x cudaMemcpy).
inline stream_copy_config stream_copy_1d_default() {
  stream_copy_config c;
  c.sched = schedule::per_tile;
  c.stages = 2;
  c.stage_bytes = 4096;
  c.tile_chunks = 1;
  c.path = store_path::st_global;
  c.store_warps = 4;
  return c;
}
inline stream_copy_config stream_axpb_bf16_default() { return stream_copy_1d_default(); }

// The runtime knobs the kernels read (the shape knobs are template or launch parameters).
struct stream_knobs {
  uint32_t prefetch_chunks;
  l2_evict load_policy, store_policy;
  chunk_order order;
  uint32_t tile_chunks;  // 0: persistent schedule; n > 0: per_tile, n chunks per CTA
};

inline stream_knobs knobs_of(const stream_copy_config& c) {
  return {c.prefetch_chunks, c.load_policy, c.store_policy, c.order,
          c.sched == schedule::per_tile ? c.tile_chunks : 0u};
}

// Row of the 2-D view: 256 x 4-byte elements, so one box is {256, stage_bytes / 1024}; the
// 227 KiB shared-memory limit keeps a stage below the 256-row box limit.
inline constexpr uint32_t stream_copy_2d_row_bytes = 1024;

namespace detail {

inline constexpr uint32_t producer_warp = 0;
inline constexpr uint32_t storer_warp = 1;

// The fused kernel's extra barriers: transform warps -> storer, "the stage is rewritten".
template <int Stages, class Tg>
struct ready_barriers {
  typename Tg::barrier_type ready[Stages];
};

// Storer side of the bulk paths: after `ready` (full, or transformed) the store of the stage is
// issued and committed; the stage is released to the producer only once wait_group.read<Lag>
// shows its store no longer reads it. `r` trails `s` by at most Lag stages.
HOPPER_EXEC_CHECK_OFF
template <int Lag, class Tg, class Pipe, class Store>
HOPPER_HD void store_and_release(Tg& t, Pipe& pipe, typename Pipe::state& s, typename Pipe::state& r, uint32_t lane,
                                 Store&& store) {
  if (lane == 0) {
    store();
    t.cp_async_bulk_commit_group();
  }
  ++s;
  if (s.iter() > uint32_t(Lag)) {
    if (lane == 0) t.template cp_async_bulk_wait_group_read<Lag>();
    pipe.release(r);  // __syncwarp, then lane 0 (which waited for the store's reads) arrives
    ++r;
  }
}

// The storer's tail: every outstanding store has read its stage (release them all); with
// `wait_writes`, every store has also written global memory before the CTA exits. A per-tile
// CTA leaves without it: once its stores have read shared memory the CTA owns nothing they use,
// and their writes complete on their own before the grid does, as plain st.global's do.
HOPPER_EXEC_CHECK_OFF
template <class Tg, class Pipe>
HOPPER_HD void finish_stores(Tg& t, Pipe& pipe, typename Pipe::state& s, typename Pipe::state& r, uint32_t lane,
                             bool wait_writes = true) {
  if (lane == 0) t.template cp_async_bulk_wait_group_read<0>();
  for (; r.iter() < s.iter(); ++r) pipe.release(r);
  if (wait_writes && lane == 0) t.template cp_async_bulk_wait_group<0>();
}

// The storer warp of the bulk paths, whole: for each chunk `c` of `cr`, `ready(s)` waits until
// its stage (`stage_bytes` each from `stage_mem`) holds what is to be stored, `store(at, stage)`
// issues the store from lane 0, where `at` = c * `unit` is the chunk's first byte (1-D) or row
// (2-D); the stage goes back to the producer once the store has read it. Then the tail
// (finish_stores). The stage and `at` are computed by the whole warp, before lane 0 branches.
HOPPER_EXEC_CHECK_OFF
template <int Lag, class Tg, class Pipe, class Range, class Smem, class Ready, class Store>
HOPPER_HD void storer(Tg& t, Pipe& pipe, const Range& cr, Smem stage_mem, uint32_t stage_bytes, uint32_t unit,
                      uint32_t lane, bool wait_writes, Ready&& ready, Store&& store) {
  auto s = pipe.consumer_start();
  auto r = s;
  for (uint64_t c = cr.first; c < cr.end; c += cr.step) {
    ready(s);
    const uint64_t at = c * unit;
    const auto stage = stage_mem + size_t(s.index()) * stage_bytes;
    store_and_release<Lag>(t, pipe, s, r, lane, [&] { store(at, stage); });
  }
  finish_stores(t, pipe, s, r, lane, wait_writes);
}

// The elements [from, to) past the bulk copies, copied by lanes 1-31 of the producer warp of CTA 0
// while lane 0 issues the loads: out[i] = op(in[i]).
HOPPER_EXEC_CHECK_OFF
template <class Out, class In, class Op>
HOPPER_HD void copy_tail(Out out, In in, uint64_t from, uint64_t to, uint32_t lane, Op&& op) {
  for (uint64_t i = from + (lane - 1); i < to; i += 31) out.store(i, op(in.load(i)));
}

// The chunks of this CTA: first, first + step, ... below end.
struct chunk_range {
  uint64_t first, end, step;
};

HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD chunk_range cta_chunks(const Tg& t, uint64_t chunks, chunk_order order) {
  if (order == chunk_order::interleaved) return {t.block(), chunks, t.grid()};
  const uint64_t per = chunks / t.grid(), extra = chunks % t.grid(), b = t.block();
  const uint64_t first = b * per + (b < extra ? b : extra);
  return {first, first + per + (b < extra ? 1u : 0u), 1};
}

// The same for either schedule: per_tile gives CTA b the chunks b*n .. b*n + n - 1 (fewer at the end).
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD chunk_range cta_chunks(const Tg& t, uint64_t chunks, const stream_knobs& k) {
  if (k.tile_chunks == 0) return cta_chunks(t, chunks, k.order);
  const uint64_t first = uint64_t(t.block()) * k.tile_chunks, end = first + k.tile_chunks;
  return {first, end < chunks ? end : chunks, 1};
}

// The createpolicy for a priority (none never reaches here: the caller issues the plain form).
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD uint64_t l2_policy(const Tg& t, l2_evict e) {
  switch (e) {
    case l2_evict::first:
      return t.createpolicy_fractional_L2_evict_first();
    case l2_evict::last:
      return t.createpolicy_fractional_L2_evict_last();
    default:
      return t.createpolicy_fractional_L2_evict_normal();
  }
}

// The store hint of the storer: whether stores carry an L2 eviction policy, and (lane 0, which
// issues them) the policy.
struct store_hint {
  bool on;
  uint64_t policy;
};
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD store_hint store_hint_of(const Tg& t, l2_evict e, uint32_t lane) {
  const bool on = e != l2_evict::none;
  return {on, on && lane == 0 ? l2_policy(t, e) : 0};
}

// One bulk load of a chunk, with or without a cache hint.
HOPPER_EXEC_CHECK_OFF
template <class Tg, class D, class S>
HOPPER_HD void load_chunk(const Tg& t, D stage, S src, uint32_t n, typename Tg::barrier_type& bar, bool hint,
                          uint64_t policy) {
  if (hint)
    t.cp_async_bulk_shared_cluster_global(stage, src, n, bar, policy);
  else
    t.cp_async_bulk_shared_cluster_global(stage, src, n, bar);
}

HOPPER_EXEC_CHECK_OFF
template <class Tg, class D, class S>
HOPPER_HD void store_chunk(const Tg& t, D dst, S stage, uint32_t n, bool hint, uint64_t policy) {
  if (hint)
    t.cp_async_bulk_global_shared_cta(dst, stage, n, policy);
  else
    t.cp_async_bulk_global_shared_cta(dst, stage, n);
}

// The bytes of a copy that bulk copies move: all but those past the last multiple of 16, which
// CTA 0 copies with ordinary loads and stores.
HOPPER_HD uint64_t bulk_bytes(uint64_t bytes) { return bytes & ~uint64_t(15); }

// The pieces of `per` that cover `n` (chunks of stage_bytes over the bulk bytes, boxes of
// box_rows over the 2-D rows), the last one possibly short.
HOPPER_EXEC_CHECK_OFF
template <class T>
HOPPER_HD T pieces(T n, T per) {
  return (n + per - 1) / per;
}

HOPPER_HD uint32_t chunk_bytes(uint64_t off, uint64_t total, uint32_t stage_bytes) {
  const uint64_t left = total - off;
  return left < stage_bytes ? uint32_t(left) : stage_bytes;
}

// y = a*x + b for one bf16 (given by its bits): fp32 FMA (one rounding), then round to nearest
// even. The host computes the same bits as the device's intrinsics.
HOPPER_HD uint16_t axpb(uint16_t x, float a, float b) {
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__float2bfloat16_rn(__fmaf_rn(a, __bfloat162float(__ushort_as_bfloat16(x)), b)));
#else
  const uint32_t xb = uint32_t(x) << 16;
  float xf;
  std::memcpy(&xf, &xb, 4);
  const float r = std::fma(a, xf, b);
  uint32_t rb;
  std::memcpy(&rb, &r, 4);
  if ((rb & 0x7fffffffu) > 0x7f800000u) return uint16_t((rb >> 16) | 0x40u);  // NaN stays NaN (quiet)
  rb += 0x7fffu + ((rb >> 16) & 1u);                                          // round to nearest even
  return uint16_t(rb >> 16);
#endif
}

HOPPER_HD uint32_t axpb2(uint32_t packed, float a, float b) {
#if defined(__CUDA_ARCH__)
  __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162*>(&packed);
  v.x = __float2bfloat16_rn(__fmaf_rn(a, __bfloat162float(v.x), b));
  v.y = __float2bfloat16_rn(__fmaf_rn(a, __bfloat162float(v.y), b));
  return *reinterpret_cast<uint32_t*>(&v);
#else
  return uint32_t(axpb(uint16_t(packed & 0xffffu), a, b)) | uint32_t(axpb(uint16_t(packed >> 16), a, b)) << 16;
#endif
}

// The fused kernels' transform of 16 bytes (8 bf16); the plain copy passes them through.
HOPPER_EXEC_CHECK_OFF
template <bool Axpb, class V>
HOPPER_HD V transform16(V v, float a, float b) {
  if constexpr (Axpb) {
    v.x = axpb2(v.x, a, b);
    v.y = axpb2(v.y, a, b);
    v.z = axpb2(v.z, a, b);
    v.w = axpb2(v.w, a, b);
  }
  return v;
}

// The producer of the 1-D and fused kernels (one thread): for each of the CTA's chunks, an
// optional L2 prefetch `prefetch_chunks` ahead (issued before the wait for a free stage, so DRAM
// reads run ahead of what shared memory holds), then acquire (wait empty, arrive.expect_tx) and
// one bulk load completing on the stage's full barrier; finally wait for every stage's release.
HOPPER_EXEC_CHECK_OFF
template <class Tg, class Pipe, class Stages, class Src>
HOPPER_HD void produce_bulk(const Tg& t, Pipe& pipe, Stages stage_mem, Src src, uint64_t bulk, uint32_t stage_bytes,
                            const chunk_range& cr, const stream_knobs& k) {
  const bool hint = k.load_policy != l2_evict::none;
  const uint64_t policy = hint ? l2_policy(t, k.load_policy) : 0;
  const uint64_t ahead = uint64_t(k.prefetch_chunks) * cr.step;
  auto s = pipe.producer_start();
  for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
    if (ahead != 0 && c + ahead < cr.end) {
      const uint64_t pf = (c + ahead) * stage_bytes;
      t.cp_async_bulk_prefetch_L2_global(src + pf, chunk_bytes(pf, bulk, stage_bytes));
    }
    const uint64_t off = c * stage_bytes;
    const uint32_t n = chunk_bytes(off, bulk, stage_bytes);
    pipe.acquire(s, n);
    load_chunk(t, stage_mem + size_t(s.index()) * stage_bytes, src + off, n, pipe.full(s), hint, policy);
  }
  pipe.drain(s);
}

// The store of one 16-byte vector from registers on the st_global path.
enum class st_kind : int { wb, cs, hint };

HOPPER_EXEC_CHECK_OFF
template <st_kind K, class Tg, class G, class V>
HOPPER_HD void st16(const Tg& t, G gmem, V v, uint64_t policy) {
  if constexpr (K == st_kind::cs)
    t.st_global_cs_v4_u32(gmem, v);
  else if constexpr (K == st_kind::hint)
    t.st_global_L2_cache_hint_v4_u32(gmem, v, policy);
  else
    t.st_global_v4_u32(gmem, v);
}

template <class Tg, class E>
using gmem_of = typename Tg::template gmem_t<E>;
template <class Tg, class E>
using smem_of = typename Tg::template smem_t<E>;

}  // namespace detail

// ---- 1-D: cp.async.bulk both ways ----------------------------------------------------------

HOPPER_EXEC_CHECK_OFF
template <int Stages, int Lag, class Tg>
HOPPER_HD void copy_1d_body(Tg& t, typename pipeline<Stages, Tg>::storage& ring, detail::smem_of<Tg, uint8_t> stage_mem,
                            detail::gmem_of<Tg, uint8_t> dst, detail::gmem_of<Tg, const uint8_t> src, uint64_t bytes,
                            uint32_t stage_bytes, stream_knobs k) {
  using pipe_t = pipeline<Stages, Tg>;
  pipe_t pipe = pipe_t::init(ring, pipeline_params{1u, 1u, false, release_by::warp_leader}, t);  // the storer's lane 0

  const uint32_t warp = t.warp(), lane = t.lane();
  const uint64_t bulk = detail::bulk_bytes(bytes);
  const uint64_t chunks = detail::pieces(bulk, uint64_t(stage_bytes));
  const detail::chunk_range cr = detail::cta_chunks(t, chunks, k);

  if (warp == detail::producer_warp) {
    if (lane == 0) {
      detail::produce_bulk(t, pipe, stage_mem, src, bulk, stage_bytes, cr, k);
    } else if (t.block() == 0) {
      detail::copy_tail(dst, src, bulk, bytes, lane, [](uint8_t v) { return v; });  // the last < 16 bytes
    }
  } else {
    const detail::store_hint h = detail::store_hint_of(t, k.store_policy, lane);
    detail::storer<Lag>(
        t, pipe, cr, stage_mem, stage_bytes, stage_bytes, lane, k.tile_chunks == 0,
        [&](const auto& s) { pipe.wait(s); },
        [&](uint64_t off, const auto& stage) {
          detail::store_chunk(t, dst + off, stage, detail::chunk_bytes(off, bulk, stage_bytes), h.on, h.policy);
        });
  }
}

// ---- 2-D: cp.async.bulk.tensor.2d both ways --------------------------------------------------

// `rows` whole 1 KiB rows go through the maps (boxes of stage_bytes / 1024 rows; the last box may
// reach past the tensor: its load is zero-filled, its store clipped); the `bytes - rows * 1024`
// bytes after them are copied by CTA 0 with ordinary loads and stores.
HOPPER_EXEC_CHECK_OFF
template <int Stages, int Lag, class Tg>
HOPPER_HD void copy_2d_body(Tg& t, typename pipeline<Stages, Tg>::storage& ring, detail::smem_of<Tg, uint8_t> stage_mem,
                            const typename Tg::tensor_map_type& dst_map, const typename Tg::tensor_map_type& src_map,
                            detail::gmem_of<Tg, uint8_t> dst, detail::gmem_of<Tg, const uint8_t> src, uint64_t bytes,
                            uint32_t rows, uint32_t box_rows, stream_knobs k) {
  using pipe_t = pipeline<Stages, Tg>;
  pipe_t pipe = pipe_t::init(ring, pipeline_params{1u, 1u, false, release_by::warp_leader}, t);

  const uint32_t warp = t.warp(), lane = t.lane();
  const uint32_t chunks = detail::pieces(rows, box_rows);
  const uint32_t stage_bytes = box_rows * stream_copy_2d_row_bytes;
  const detail::chunk_range cr = detail::cta_chunks(t, chunks, k);

  if (warp == detail::producer_warp) {
    if (lane == 0) {
      if (cr.first < cr.end) {
        t.prefetch_tensormap(src_map);
        t.prefetch_tensormap(dst_map);
      }
      const bool hint = k.load_policy != l2_evict::none;
      const uint64_t policy = hint ? detail::l2_policy(t, k.load_policy) : 0;
      const uint64_t ahead = uint64_t(k.prefetch_chunks) * cr.step;
      auto s = pipe.producer_start();
      for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
        if (ahead != 0 && c + ahead < cr.end)
          t.cp_async_bulk_prefetch_tensor_L2_global(src_map, 0, int32_t((c + ahead) * box_rows));
        pipe.acquire(s, uint32_t(src_map.box_bytes()));  // the whole box: OOB rows are filled, and counted
        const auto stage = stage_mem + size_t(s.index()) * stage_bytes;
        if (hint)
          t.cp_async_bulk_tensor_shared_cluster_global_hint(stage, src_map, pipe.full(s), policy, 0,
                                                            int32_t(c * box_rows));
        else
          t.cp_async_bulk_tensor_shared_cluster_global(stage, src_map, pipe.full(s), 0, int32_t(c * box_rows));
      }
      pipe.drain(s);
    } else if (t.block() == 0) {
      const uint64_t from = uint64_t(rows) * stream_copy_2d_row_bytes;
      detail::copy_tail(dst, src, from, bytes, lane, [](uint8_t v) { return v; });  // the last partial row
    }
  } else {
    const detail::store_hint h = detail::store_hint_of(t, k.store_policy, lane);
    detail::storer<Lag>(
        t, pipe, cr, stage_mem, stage_bytes, box_rows, lane, k.tile_chunks == 0, [&](const auto& s) { pipe.wait(s); },
        [&](uint64_t row, const auto& stage) {
          if (h.on)
            t.cp_async_bulk_tensor_global_shared_cta_hint(dst_map, stage, h.policy, 0, int32_t(row));
          else
            t.cp_async_bulk_tensor_global_shared_cta(dst_map, stage, 0, int32_t(row));
        });
  }
}

// ---- fused: y = a*x + b in bf16 between the load and the store --------------------------------

HOPPER_EXEC_CHECK_OFF
template <int Stages, int Lag, class Tg>
HOPPER_HD void axpb_body(Tg& t, typename pipeline<Stages, Tg>::storage& ring, detail::ready_barriers<Stages, Tg>& rb,
                         detail::smem_of<Tg, uint8_t> stage_mem, detail::gmem_of<Tg, uint16_t> y,
                         detail::gmem_of<Tg, const uint16_t> x, uint64_t n, float a, float b, uint32_t stage_bytes,
                         stream_knobs k) {
  using pipe_t = pipeline<Stages, Tg>;
  const uint32_t warp = t.warp(), lane = t.lane();
  const uint32_t transform_warps = t.block_threads() / 32u - 2u;
  if (t.thread() == 0)
    for (int i = 0; i < Stages; ++i) t.mbarrier_init(rb.ready[i], transform_warps * 32u, "ready", uint32_t(i));
  pipe_t pipe =
      pipe_t::init(ring, pipeline_params{1u, 1u, false, release_by::warp_leader}, t);  // its CTA barrier covers `ready`

  const uint64_t bytes = n * 2u;
  const uint64_t bulk = detail::bulk_bytes(bytes);
  const uint64_t chunks = detail::pieces(bulk, uint64_t(stage_bytes));
  const auto src = x.template as<const uint8_t>();
  const auto dst = y.template as<uint8_t>();
  const detail::chunk_range cr = detail::cta_chunks(t, chunks, k);

  if (warp == detail::producer_warp) {
    if (lane == 0) {
      detail::produce_bulk(t, pipe, stage_mem, src, bulk, stage_bytes, cr, k);
    } else if (t.block() == 0) {
      detail::copy_tail(y, x, bulk / 2, n, lane, [&](uint16_t v) { return detail::axpb(v, a, b); });
    }
  } else if (warp == detail::storer_warp) {
    const detail::store_hint h = detail::store_hint_of(t, k.store_policy, lane);
    detail::storer<Lag>(
        t, pipe, cr, stage_mem, stage_bytes, stage_bytes, lane, k.tile_chunks == 0,
        // acquire: the transform warps' generic writes, fenced to the async proxy, come first.
        [&](const auto& s) { t.mbarrier_wait(rb.ready[s.index()], s.parity()); },
        [&](uint64_t off, const auto& stage) {
          detail::store_chunk(t, dst + off, stage, detail::chunk_bytes(off, bulk, stage_bytes), h.on, h.policy);
        });
  } else {
    const uint32_t me = (warp - 2u) * 32u + lane, threads = transform_warps * 32u;
    auto s = pipe.consumer_start();
    for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
      pipe.wait(s);  // try_wait.parity.acquire: the loaded bytes are visible to these loads
      const uint32_t vecs = detail::chunk_bytes(c * stage_bytes, bulk, stage_bytes) / 16u;
      const auto stage = (stage_mem + size_t(s.index()) * stage_bytes).template as<typename Tg::u32x4>();
      for (uint32_t i = me; i < vecs; i += threads) {
        typename Tg::u32x4 v = stage.load(i);
        v.x = detail::axpb2(v.x, a, b);
        v.y = detail::axpb2(v.y, a, b);
        v.z = detail::axpb2(v.z, a, b);
        v.w = detail::axpb2(v.w, a, b);
        stage.store(i, v);
      }
      // fence.proxy.async is per thread (PTX ISA, "Proxies"): each writer orders its own st.shared
      // before the async proxy's reads, then its own arrive.release hands them to the storer.
      t.fence_proxy_async_shared_cta();
      (void)t.mbarrier_arrive(rb.ready[s.index()]);
    }
  }
}

// ---- bulk loads, ordinary stores: cp.async.bulk in, ld.shared + st.global out ----------------

// The 1-D copy (Axpb false) and the fused y = a*x + b (Axpb true, `bytes` = 2n) with the stores
// off the TMA unit. Warp 0 lane 0 loads as in the bulk kernels; the other warps (block_threads / 32
// - 1 of them, all consumers of the pipeline) read every stage 16 bytes per thread, transform in
// registers, store to global memory and release the stage, one arrive per thread. No proxy fence is
// needed on this path: shared memory is only read by the generic proxy (after the full barrier's
// acquire) and only written by the copy engine (after the empty barrier's release/acquire).
HOPPER_EXEC_CHECK_OFF
template <int Stages, bool Axpb, detail::st_kind K, class Tg>
HOPPER_HD void ldst_body(Tg& t, typename pipeline<Stages, Tg>::storage& ring, detail::smem_of<Tg, uint8_t> stage_mem,
                         detail::gmem_of<Tg, uint8_t> dst, detail::gmem_of<Tg, const uint8_t> src, uint64_t bytes,
                         uint32_t stage_bytes, stream_knobs k, float a, float b) {
  using pipe_t = pipeline<Stages, Tg>;
  const uint32_t warp = t.warp(), lane = t.lane();
  const uint32_t store_warps = t.block_threads() / 32u - 1u;
  pipe_t pipe = pipe_t::init(ring, pipeline_params{store_warps, 1u, false}, t);

  const uint64_t bulk = detail::bulk_bytes(bytes);
  const uint64_t chunks = detail::pieces(bulk, uint64_t(stage_bytes));
  const detail::chunk_range cr = detail::cta_chunks(t, chunks, k);

  if (warp == 0) {
    if (lane == 0) {
      detail::produce_bulk(t, pipe, stage_mem, src, bulk, stage_bytes, cr, k);
    } else if (t.block() == 0) {
      if constexpr (Axpb)  // the last < 8 elements
        detail::copy_tail(dst.template as<uint16_t>(), src.template as<const uint16_t>(), bulk / 2, bytes / 2, lane,
                          [&](uint16_t v) { return detail::axpb(v, a, b); });
      else  // the last < 16 bytes
        detail::copy_tail(dst, src, bulk, bytes, lane, [](uint8_t v) { return v; });
    }
  } else {
    const uint32_t me = t.thread() - 32u, threads = store_warps * 32u;
    const uint64_t policy = K == detail::st_kind::hint ? detail::l2_policy(t, k.store_policy) : 0;
    // Each thread has kBatch independent ld.shared in flight before its stores, so the shared
    // memory latency is paid once per batch rather than once per vector.
    constexpr uint32_t kBatch = 4;
    auto s = pipe.consumer_start();
    for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
      pipe.wait(s);  // try_wait.parity.acquire: the bulk load's bytes are visible to ld.shared
      const uint64_t off = c * stage_bytes;
      const uint32_t vecs = detail::chunk_bytes(off, bulk, stage_bytes) / 16u;
      const auto stage = stage_mem + size_t(s.index()) * stage_bytes;
      const auto out = dst + off;
      uint32_t i = me;
      for (; i + (kBatch - 1) * threads < vecs; i += kBatch * threads) {
        typename Tg::u32x4 v[kBatch];
        HOPPER_PRAGMA_UNROLL
        for (uint32_t u = 0; u < kBatch; ++u) v[u] = t.ld_shared_v4_u32(stage + size_t(i + u * threads) * 16u);
        HOPPER_PRAGMA_UNROLL
        for (uint32_t u = 0; u < kBatch; ++u)
          detail::st16<K>(t, out + size_t(i + u * threads) * 16u, detail::transform16<Axpb>(v[u], a, b), policy);
      }
      for (; i < vecs; i += threads)
        detail::st16<K>(t, out + size_t(i) * 16u,
                        detail::transform16<Axpb>(t.ld_shared_v4_u32(stage + size_t(i) * 16u), a, b), policy);
      pipe.release(s);  // each lane's arrive.release: its reads precede the refill
    }
  }
}

}  // namespace hopper::kernels
