// Streaming copies through shared memory at the speed of the memory itself (seed §3, §10, §19):
// the copy engine moves every byte in the background, in both directions, while one thread per
// direction only issues. Three kernels share one structure:
//
//   stream_copy_1d      cp.async.bulk global -> shared (mbarrier), cp.async.bulk shared -> global
//   stream_copy_2d      the same through 2-D tensor maps (cp.async.bulk.tensor.2d)
//   stream_axpb_bf16    y = a*x + b in bf16: consumer warps transform each stage in shared memory
//                       between the load and the store
//
// Per CTA (persistent: at most blocks_per_sm CTAs per SM, chunk c goes to CTA c % grid):
//   warp 0, lane 0   producer: pipeline.acquire (wait empty, arrive.expect_tx), bulk load
//   warp 1, lane 0   storer: wait until the stage is ready, bulk store, commit_group; the stage
//                    is released (empty barrier) only after wait_group.read<Lag> says its store
//                    has finished reading it, so up to Lag stores read shared memory at once
//   warps 2..        (fused only) transform warps: wait full, y = a*x + b in place,
//                    fence.proxy.async.shared::cta, arrive on the stage's `ready` barrier
// The bytes past the last multiple of 16 (2-D: past the last whole 1 KiB row) are copied with
// ordinary loads and stores by CTA 0, since a bulk copy moves only multiples of 16 bytes.
//
// The 1-D and fused kernels also have a store path off the TMA unit (store_path::st_global):
//   warp 0, lane 0   producer: the same bulk loads into the stages
//   warps 1..W       store warps: wait full, ld.shared 16 B per thread, (fused: y = a*x + b in
//                    registers), st.global 16 B per thread, then each warp releases the stage
// so the copy engine carries only the loads and the stores leave through W warps' load/store
// units, the way an ordinary copy kernel writes.
//
// Two schedules walk the chunks with the same kernel bodies (stream_copy_config::sched):
//   persistent   at most blocks_per_sm CTAs per SM, each walks chunk c, c + grid, ... (or one
//                contiguous run) through its ring, wrapping it many times
//   per_tile     one short-lived CTA per `tile_chunks` consecutive chunks (grid = chunks /
//                tile_chunks): it loads them into its own small ring, stores them, waits only
//                until its stores have read shared memory (wait_group.read), and exits; the
//                hardware block scheduler hands out the next tiles as CTAs retire
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "hopper/pipeline.cuh"
#include "hopper/pipeline_backend_device.cuh"
#include "hopper/ptx/cp_async_bulk.cuh"
#include "hopper/ptx/cp_async_bulk_tensor.cuh"
#include "hopper/ptx/createpolicy.cuh"
#include "hopper/ptx/fence.cuh"
#include "hopper/ptx/ld_st.cuh"
#include "hopper/ptx/mbarrier.cuh"
#include "hopper/tensor_map.hpp"

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
// one short-lived CTA per tile of `tile_chunks` chunks (docs/copy.md, "Why 0.94x" and run 9).
enum class schedule : uint8_t { persistent, per_tile };

// The knobs of a streaming copy; the benchmark sweeps them.
struct stream_copy_config {
  uint32_t stages = 8;             // shared-memory stages per CTA: 2, 3, 4, 6, 8, 12 or 16
  uint32_t stage_bytes = 24576;    // bytes per stage: multiple of 16 (2-D: of 1024)
  uint32_t blocks_per_sm = 1;      // CTAs per SM of the persistent grid
  uint32_t store_lag = 1;          // stores still reading shared memory before a release: 0, 1, 2
  uint32_t transform_warps = 4;    // fused only: warps that compute y = a*x + b (1..16)
  uint32_t prefetch_chunks = 0;    // cp.async.bulk.prefetch.L2 of the CTA's chunk this many ahead (0: none)
  l2_evict load_policy = l2_evict::none;   // L2 priority of the bulk loads
  l2_evict store_policy = l2_evict::none;  // L2 priority of the bulk stores
  chunk_order order = chunk_order::interleaved;
  store_path path = store_path::bulk;
  uint32_t store_warps = 8;        // st_global only: warps that read the stages and store (1..16)
  bool streaming_store = false;    // st_global only: st.global.cs instead of st.global (no store_policy then)
  schedule sched = schedule::persistent;
  uint32_t tile_chunks = 1;        // per_tile only: chunks of stage_bytes per CTA (1..16); the
                                   // ring holds min(stages, tile_chunks) of them
};

// The persistent 1-D copy's best of the H200 sweeps (docs/copy.md, run 4): bulk stores, 8 x 24 KiB,
// one CTA per SM, an L2 prefetch two chunks ahead and evict_first on loads and stores (0.92-0.95x
// memcpy from 256 MiB up). The 2-D kernel measured best with stream_copy_config{} (no prefetch,
// no hint). The persistent st_global store path did not beat it (0.917-0.937x, same run).
inline stream_copy_config stream_copy_1d_bulk_default() {
  stream_copy_config c;
  c.prefetch_chunks = 2;
  c.load_policy = l2_evict::first;
  c.store_policy = l2_evict::first;
  return c;
}

// The persistent st_global path's best of the H200 sweep (docs/copy.md): bulk loads into 6 x 32 KiB,
// one CTA per SM, 16 store warps with plain st.global (.cs measured 0.7% slower), no prefetch, no hint.
inline stream_copy_config stream_copy_st_global_default() {
  stream_copy_config c;
  c.stages = 6;
  c.stage_bytes = 32768;
  c.path = store_path::st_global;
  c.store_warps = 16;
  return c;
}

// The per-tile schedule with the copy engine both ways (docs/copy.md, run 9): one CTA of two warps
// per 4 KiB chunk, one bulk load, one bulk store. H200: 0.989-0.995x memcpy from 256 MiB up
// (the persistent default: 0.924-0.945x, same run).
inline stream_copy_config stream_copy_per_tile_default() {
  stream_copy_config c;
  c.sched = schedule::per_tile;
  c.stages = 2;
  c.stage_bytes = 4096;
  c.tile_chunks = 1;
  return c;
}

// The best point of the per-tile sweep (run 9), for the plain copy and the fused kernel alike: one
// CTA per 4 KiB chunk, a bulk load, then 4 store warps with st.global (one vector per thread per
// pass; 12 CTAs per SM fit). H200: plain copy 0.993-1.005x memcpy from 256 MiB up, fused
// 0.973-1.004x (persistent defaults 0.924-0.945x and 0.919-0.934x, same run).
inline stream_copy_config stream_copy_per_tile_st_global_default() {
  stream_copy_config c = stream_copy_per_tile_default();
  c.path = store_path::st_global;
  c.store_warps = 4;
  return c;
}

// The 1-D launcher's default: the per-tile st_global configuration, 5-7 points ahead of the
// persistent one (stream_copy_1d_bulk_default()) at every size from 256 MiB up.
inline stream_copy_config stream_copy_1d_default() { return stream_copy_per_tile_st_global_default(); }

// The fused kernel's default: the same per-tile st_global configuration (the persistent st_global
// default, stream_copy_st_global_default(), measured 0.919-0.934x in the same run; the per-tile
// bulk store path with transform warps 0.89-0.92x).
inline stream_copy_config stream_axpb_bf16_default() { return stream_copy_per_tile_st_global_default(); }

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

template <int Stages>
using copy_pipe = pipeline<Stages, basic_device_backend<false>>;

// Storer side of every variant: after `ready` (full, or transformed) the store of the stage is
// issued and committed; the stage is released to the producer only once wait_group.read<Lag>
// shows its store no longer reads it (seed §16, §19.4). `r` trails `s` by at most Lag stages.
template <int Stages, int Lag, class Store>
__device__ __forceinline__ void store_and_release(copy_pipe<Stages>& pipe, typename copy_pipe<Stages>::state& s,
                                                  typename copy_pipe<Stages>::state& r, uint32_t lane,
                                                  Store&& store) {
  if (lane == 0) {
    store();
    ptx::cp_async_bulk_commit_group();
  }
  ++s;
  if (s.iter() > uint32_t(Lag)) {
    if (lane == 0) ptx::cp_async_bulk_wait_group_read<Lag>();
    pipe.release(r);  // __syncwarp, then lane 0 arrives on r's empty barrier
    ++r;
  }
}

// The storer's tail: every outstanding store has read its stage (release them all); with
// `wait_writes`, every store has also written global memory before the CTA exits. A per-tile
// CTA leaves without it: once its stores have read shared memory the CTA owns nothing they use,
// and their writes complete on their own before the grid does, as plain st.global's do; waiting
// would hold the CTA's slot for the write latency of every tile.
template <int Stages>
__device__ __forceinline__ void finish_stores(copy_pipe<Stages>& pipe, typename copy_pipe<Stages>::state& s,
                                              typename copy_pipe<Stages>::state& r, uint32_t lane,
                                              bool wait_writes = true) {
  if (lane == 0) ptx::cp_async_bulk_wait_group_read<0>();
  for (; r.iter() < s.iter(); ++r) pipe.release(r);
  if (wait_writes && lane == 0) ptx::cp_async_bulk_wait_group<0>();
}

// The chunks of this CTA: first, first + step, ... below end.
struct chunk_range {
  uint64_t first, end, step;
};

__device__ __forceinline__ chunk_range cta_chunks(uint64_t chunks, chunk_order order) {
  if (order == chunk_order::interleaved) return {blockIdx.x, chunks, gridDim.x};
  const uint64_t per = chunks / gridDim.x, extra = chunks % gridDim.x, b = blockIdx.x;
  const uint64_t first = b * per + (b < extra ? b : extra);
  return {first, first + per + (b < extra ? 1u : 0u), 1};
}

// The same for either schedule: per_tile gives CTA b the chunks b*n .. b*n + n - 1 (fewer at the end).
__device__ __forceinline__ chunk_range cta_chunks(uint64_t chunks, const stream_knobs& k) {
  if (k.tile_chunks == 0) return cta_chunks(chunks, k.order);
  const uint64_t first = uint64_t(blockIdx.x) * k.tile_chunks, end = first + k.tile_chunks;
  return {first, end < chunks ? end : chunks, 1};
}

// The createpolicy for a priority (none never reaches here: the caller issues the plain form).
__device__ __forceinline__ uint64_t l2_policy(l2_evict e) {
  switch (e) {
    case l2_evict::first: return ptx::createpolicy_fractional_L2_evict_first();
    case l2_evict::last: return ptx::createpolicy_fractional_L2_evict_last();
    default: return ptx::createpolicy_fractional_L2_evict_normal();
  }
}

// One bulk load of a chunk, with or without a cache hint.
__device__ __forceinline__ void load_chunk(void* stage, const void* src, uint32_t n, uint64_t* bar, bool hint,
                                           uint64_t policy) {
  if (hint)
    ptx::cp_async_bulk_shared_cluster_global(stage, src, n, bar, policy);
  else
    ptx::cp_async_bulk_shared_cluster_global(stage, src, n, bar);
}

__device__ __forceinline__ void store_chunk(void* dst, const void* stage, uint32_t n, bool hint, uint64_t policy) {
  if (hint)
    ptx::cp_async_bulk_global_shared_cta(dst, stage, n, policy);
  else
    ptx::cp_async_bulk_global_shared_cta(dst, stage, n);
}

__device__ __forceinline__ uint32_t chunk_bytes(uint64_t off, uint64_t total, uint32_t stage_bytes) {
  const uint64_t left = total - off;
  return left < stage_bytes ? uint32_t(left) : stage_bytes;
}

// y = a*x + b for one bf16: fp32 FMA (one rounding), then round to nearest even.
__device__ __forceinline__ __nv_bfloat16 axpb(__nv_bfloat16 x, float a, float b) {
  return __float2bfloat16_rn(__fmaf_rn(a, __bfloat162float(x), b));
}

__device__ __forceinline__ uint32_t axpb2(uint32_t packed, float a, float b) {
  __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162*>(&packed);
  v.x = axpb(v.x, a, b);
  v.y = axpb(v.y, a, b);
  return *reinterpret_cast<uint32_t*>(&v);
}

// The producer of the 1-D and fused kernels (one thread): for each of the CTA's chunks, an
// optional L2 prefetch `prefetch_chunks` ahead (issued before the wait for a free stage, so DRAM
// reads run ahead of what shared memory holds), then acquire (wait empty, arrive.expect_tx) and
// one bulk load completing on the stage's full barrier; finally wait for every stage's release.
template <int Stages>
__device__ __forceinline__ void produce_bulk(copy_pipe<Stages>& pipe, uint8_t* stage_mem, const uint8_t* src,
                                             uint64_t bulk, uint32_t stage_bytes, const chunk_range& cr,
                                             const stream_knobs& k) {
  const bool hint = k.load_policy != l2_evict::none;
  const uint64_t policy = hint ? l2_policy(k.load_policy) : 0;
  const uint64_t ahead = uint64_t(k.prefetch_chunks) * cr.step;
  auto s = pipe.producer_start();
  for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
    if (ahead != 0 && c + ahead < cr.end) {
      const uint64_t pf = (c + ahead) * stage_bytes;
      ptx::cp_async_bulk_prefetch_L2_global(src + pf, chunk_bytes(pf, bulk, stage_bytes));
    }
    const uint64_t off = c * stage_bytes;
    const uint32_t n = chunk_bytes(off, bulk, stage_bytes);
    pipe.acquire(s, n);
    load_chunk(stage_mem + size_t(s.index()) * stage_bytes, src + off, n, &pipe.full(s), hint, policy);
  }
  pipe.drain(s);
}

// The store of one 16-byte vector from registers on the st_global path.
enum class st_kind : int { wb, cs, hint };

template <st_kind K>
__device__ __forceinline__ void st16(uint8_t* gmem, uint4 v, uint64_t policy) {
  if constexpr (K == st_kind::cs)
    ptx::st_global_cs_v4_u32(gmem, v);
  else if constexpr (K == st_kind::hint)
    ptx::st_global_L2_cache_hint_v4_u32(gmem, v, policy);
  else
    ptx::st_global_v4_u32(gmem, v);
}

// The fused kernels' transform of 16 bytes (8 bf16); the plain copy passes them through.
template <bool Axpb>
__device__ __forceinline__ uint4 transform16(uint4 v, float a, float b) {
  if constexpr (Axpb) {
    v.x = axpb2(v.x, a, b);
    v.y = axpb2(v.y, a, b);
    v.z = axpb2(v.z, a, b);
    v.w = axpb2(v.w, a, b);
  }
  return v;
}

}  // namespace detail

// ---- 1-D: cp.async.bulk both ways ----------------------------------------------------------

template <int Stages, int Lag>
__global__ void __launch_bounds__(64) stream_copy_1d_kernel(uint8_t* __restrict__ dst, const uint8_t* __restrict__ src,
                                                            uint64_t bytes, uint32_t stage_bytes, stream_knobs k) {
  using pipe_t = detail::copy_pipe<Stages>;
  __shared__ typename pipe_t::storage ring;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  pipe_t pipe = pipe_t::init(ring, pipeline_params{1u, 1u, false});  // one releasing warp: the storer

  const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  const uint64_t bulk = bytes & ~uint64_t(15);
  const uint64_t chunks = (bulk + stage_bytes - 1) / stage_bytes;
  const detail::chunk_range cr = detail::cta_chunks(chunks, k);

  if (warp == detail::producer_warp) {
    if (lane == 0) {
      detail::produce_bulk(pipe, stage_mem, src, bulk, stage_bytes, cr, k);
    } else if (blockIdx.x == 0) {
      for (uint64_t i = bulk + (lane - 1); i < bytes; i += 31) dst[i] = src[i];  // the last < 16 bytes
    }
  } else {
    const bool hint = k.store_policy != l2_evict::none;
    const uint64_t policy = hint && lane == 0 ? detail::l2_policy(k.store_policy) : 0;
    auto s = pipe.consumer_start();
    auto r = s;
    for (uint64_t c = cr.first; c < cr.end; c += cr.step) {
      pipe.wait(s);
      const uint64_t off = c * stage_bytes;
      const uint8_t* stage = stage_mem + size_t(s.index()) * stage_bytes;
      detail::store_and_release<Stages, Lag>(pipe, s, r, lane, [&] {
        detail::store_chunk(dst + off, stage, detail::chunk_bytes(off, bulk, stage_bytes), hint, policy);
      });
    }
    detail::finish_stores<Stages>(pipe, s, r, lane, k.tile_chunks == 0);
  }
}

// ---- 2-D: cp.async.bulk.tensor.2d both ways --------------------------------------------------

// `rows` whole 1 KiB rows go through the maps (boxes of stage_bytes / 1024 rows; the last box may
// reach past the tensor: its load is zero-filled, its store clipped); the `bytes - rows * 1024`
// bytes after them are copied by CTA 0 with ordinary loads and stores.
template <int Stages, int Lag>
__global__ void __launch_bounds__(64) stream_copy_2d_kernel(const __grid_constant__ tensor_map dst_map,
                                                            const __grid_constant__ tensor_map src_map,
                                                            uint8_t* __restrict__ dst, const uint8_t* __restrict__ src,
                                                            uint64_t bytes, uint32_t rows, uint32_t box_rows,
                                                            stream_knobs k) {
  using pipe_t = detail::copy_pipe<Stages>;
  __shared__ typename pipe_t::storage ring;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  pipe_t pipe = pipe_t::init(ring, pipeline_params{1u, 1u, false});

  const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  const uint32_t chunks = (rows + box_rows - 1) / box_rows;
  const uint32_t stage_bytes = box_rows * stream_copy_2d_row_bytes;
  const detail::chunk_range cr = detail::cta_chunks(chunks, k);

  if (warp == detail::producer_warp) {
    if (lane == 0) {
      if (cr.first < cr.end) {
        ptx::prefetch_tensormap(src_map);
        ptx::prefetch_tensormap(dst_map);
      }
      const bool hint = k.load_policy != l2_evict::none;
      const uint64_t policy = hint ? detail::l2_policy(k.load_policy) : 0;
      const uint64_t ahead = uint64_t(k.prefetch_chunks) * cr.step;
      auto s = pipe.producer_start();
      for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
        if (ahead != 0 && c + ahead < cr.end)
          ptx::cp_async_bulk_prefetch_tensor_L2_global(src_map, 0, int32_t((c + ahead) * box_rows));
        pipe.acquire(s, src_map.box_bytes());  // the whole box: OOB rows are filled, and counted
        void* stage = stage_mem + size_t(s.index()) * stage_bytes;
        if (hint)
          ptx::cp_async_bulk_tensor_shared_cluster_global_hint(stage, src_map, &pipe.full(s), policy, 0,
                                                               int32_t(c * box_rows));
        else
          ptx::cp_async_bulk_tensor_shared_cluster_global(stage, src_map, &pipe.full(s), 0, int32_t(c * box_rows));
      }
      pipe.drain(s);
    } else if (blockIdx.x == 0) {
      const uint64_t from = uint64_t(rows) * stream_copy_2d_row_bytes;
      for (uint64_t i = from + (lane - 1); i < bytes; i += 31) dst[i] = src[i];  // the last partial row
    }
  } else {
    const bool hint = k.store_policy != l2_evict::none;
    const uint64_t policy = hint && lane == 0 ? detail::l2_policy(k.store_policy) : 0;
    auto s = pipe.consumer_start();
    auto r = s;
    for (uint64_t c = cr.first; c < cr.end; c += cr.step) {
      pipe.wait(s);
      const uint8_t* stage = stage_mem + size_t(s.index()) * stage_bytes;
      detail::store_and_release<Stages, Lag>(pipe, s, r, lane, [&] {
        if (hint)
          ptx::cp_async_bulk_tensor_global_shared_cta_hint(dst_map, stage, policy, 0, int32_t(c * box_rows));
        else
          ptx::cp_async_bulk_tensor_global_shared_cta(dst_map, stage, 0, int32_t(c * box_rows));
      });
    }
    detail::finish_stores<Stages>(pipe, s, r, lane, k.tile_chunks == 0);
  }
}

// ---- fused: y = a*x + b in bf16 between the load and the store --------------------------------

template <int Stages, int Lag>
__global__ void __launch_bounds__(64 + 16 * 32) stream_axpb_bf16_kernel(__nv_bfloat16* __restrict__ y,
                                                                        const __nv_bfloat16* __restrict__ x,
                                                                        uint64_t n, float a, float b,
                                                                        uint32_t stage_bytes, stream_knobs k) {
  using pipe_t = detail::copy_pipe<Stages>;
  __shared__ typename pipe_t::storage ring;
  __shared__ uint64_t ready[Stages];  // transform warps -> storer: the stage is rewritten
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  const uint32_t transform_warps = blockDim.x / 32u - 2u;
  if (threadIdx.x == 0)
    for (int i = 0; i < Stages; ++i) ptx::mbarrier_init(&ready[i], transform_warps);
  pipe_t pipe = pipe_t::init(ring, pipeline_params{1u, 1u, false});  // its CTA barrier covers `ready`

  const uint64_t bytes = n * 2u;
  const uint64_t bulk = bytes & ~uint64_t(15);
  const uint64_t chunks = (bulk + stage_bytes - 1) / stage_bytes;
  const uint8_t* src = reinterpret_cast<const uint8_t*>(x);
  uint8_t* dst = reinterpret_cast<uint8_t*>(y);
  const detail::chunk_range cr = detail::cta_chunks(chunks, k);

  if (warp == detail::producer_warp) {
    if (lane == 0) {
      detail::produce_bulk(pipe, stage_mem, src, bulk, stage_bytes, cr, k);
    } else if (blockIdx.x == 0) {
      for (uint64_t i = bulk / 2 + (lane - 1); i < n; i += 31) y[i] = detail::axpb(x[i], a, b);
    }
  } else if (warp == detail::storer_warp) {
    const bool hint = k.store_policy != l2_evict::none;
    const uint64_t policy = hint && lane == 0 ? detail::l2_policy(k.store_policy) : 0;
    auto s = pipe.consumer_start();
    auto r = s;
    for (uint64_t c = cr.first; c < cr.end; c += cr.step) {
      // acquire: the transform warps' generic writes, fenced to the async proxy, come first.
      mbarrier(&ready[s.index()]).wait(s.parity());
      const uint64_t off = c * stage_bytes;
      const uint8_t* stage = stage_mem + size_t(s.index()) * stage_bytes;
      detail::store_and_release<Stages, Lag>(pipe, s, r, lane, [&] {
        detail::store_chunk(dst + off, stage, detail::chunk_bytes(off, bulk, stage_bytes), hint, policy);
      });
    }
    detail::finish_stores<Stages>(pipe, s, r, lane, k.tile_chunks == 0);
  } else {
    const uint32_t t = (warp - 2u) * 32u + lane, threads = transform_warps * 32u;
    auto s = pipe.consumer_start();
    for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
      pipe.wait(s);  // try_wait.parity.acquire: the loaded bytes are visible to these loads
      const uint32_t vecs = detail::chunk_bytes(c * stage_bytes, bulk, stage_bytes) / 16u;
      uint4* stage = reinterpret_cast<uint4*>(stage_mem + size_t(s.index()) * stage_bytes);
      for (uint32_t i = t; i < vecs; i += threads) {
        uint4 v = stage[i];
        v.x = detail::axpb2(v.x, a, b);
        v.y = detail::axpb2(v.y, a, b);
        v.z = detail::axpb2(v.z, a, b);
        v.w = detail::axpb2(v.w, a, b);
        stage[i] = v;
      }
      // seed §9.3: each writer orders its own st.shared before the async proxy's reads, then the
      // warp's arrive.release hands them to the storer.
      ptx::fence_proxy_async_shared_cta();
      __syncwarp();
      if (lane == 0) (void)ptx::mbarrier_arrive<ptx::sem::release, ptx::scope::cta>(&ready[s.index()]);
    }
  }
}

// ---- bulk loads, ordinary stores: cp.async.bulk in, ld.shared + st.global out ----------------

// The 1-D copy (Axpb false) and the fused y = a*x + b (Axpb true, `bytes` = 2n) with the stores
// off the TMA unit. Warp 0 lane 0 loads as in the bulk kernels; the other warps (blockDim / 32 - 1
// of them, all consumers of the pipeline) read every stage 16 bytes per thread, transform in
// registers, store to global memory and release the stage, one arrive per warp. No proxy fence is
// needed on this path: shared memory is only read by the generic proxy (after the full barrier's
// acquire) and only written by the copy engine (after the empty barrier's release/acquire).
template <int Stages, bool Axpb, detail::st_kind K>
__global__ void __launch_bounds__(32 + 16 * 32) stream_ldst_kernel(uint8_t* __restrict__ dst,
                                                                   const uint8_t* __restrict__ src, uint64_t bytes,
                                                                   uint32_t stage_bytes, stream_knobs k, float a,
                                                                   float b) {
  using pipe_t = detail::copy_pipe<Stages>;
  __shared__ typename pipe_t::storage ring;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  const uint32_t store_warps = blockDim.x / 32u - 1u;
  pipe_t pipe = pipe_t::init(ring, pipeline_params{store_warps, 1u, false});

  const uint64_t bulk = bytes & ~uint64_t(15);
  const uint64_t chunks = (bulk + stage_bytes - 1) / stage_bytes;
  const detail::chunk_range cr = detail::cta_chunks(chunks, k);

  if (warp == 0) {
    if (lane == 0) {
      detail::produce_bulk(pipe, stage_mem, src, bulk, stage_bytes, cr, k);
    } else if (blockIdx.x == 0) {
      if constexpr (Axpb) {  // the last < 8 elements
        const auto* x = reinterpret_cast<const __nv_bfloat16*>(src);
        auto* y = reinterpret_cast<__nv_bfloat16*>(dst);
        for (uint64_t i = bulk / 2 + (lane - 1); i < bytes / 2; i += 31) y[i] = detail::axpb(x[i], a, b);
      } else {  // the last < 16 bytes
        for (uint64_t i = bulk + (lane - 1); i < bytes; i += 31) dst[i] = src[i];
      }
    }
  } else {
    const uint32_t t = threadIdx.x - 32u, threads = store_warps * 32u;
    const uint64_t policy = K == detail::st_kind::hint ? detail::l2_policy(k.store_policy) : 0;
    // Each thread has kBatch independent ld.shared in flight before its stores, so the shared
    // memory latency is paid once per batch rather than once per vector.
    constexpr uint32_t kBatch = 4;
    auto s = pipe.consumer_start();
    for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
      pipe.wait(s);  // try_wait.parity.acquire: the bulk load's bytes are visible to ld.shared
      const uint64_t off = c * stage_bytes;
      const uint32_t vecs = detail::chunk_bytes(off, bulk, stage_bytes) / 16u;
      const uint8_t* stage = stage_mem + size_t(s.index()) * stage_bytes;
      uint8_t* out = dst + off;
      uint32_t i = t;
      for (; i + (kBatch - 1) * threads < vecs; i += kBatch * threads) {
        uint4 v[kBatch];
#pragma unroll
        for (uint32_t u = 0; u < kBatch; ++u) v[u] = ptx::ld_shared_v4_u32(stage + size_t(i + u * threads) * 16u);
#pragma unroll
        for (uint32_t u = 0; u < kBatch; ++u)
          detail::st16<K>(out + size_t(i + u * threads) * 16u, detail::transform16<Axpb>(v[u], a, b), policy);
      }
      for (; i < vecs; i += threads)
        detail::st16<K>(out + size_t(i) * 16u, detail::transform16<Axpb>(ptx::ld_shared_v4_u32(stage + size_t(i) * 16u), a, b),
                        policy);
      pipe.release(s);  // __syncwarp, then lane 0's arrive.release: this warp's reads precede the refill
    }
  }
}

// ---- host side -------------------------------------------------------------------------------

namespace detail {

[[noreturn]] inline void copy_reject(const char* who, const std::string& what) {
  throw std::invalid_argument(std::string(who) + ": " + what);
}

inline std::string ptr_str(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// Shared memory of one CTA's ring: a per-tile CTA never holds more than its tile_chunks chunks.
inline uint64_t ring_bytes(const stream_copy_config& c) {
  const uint32_t held = c.sched == schedule::per_tile && c.tile_chunks < c.stages ? c.tile_chunks : c.stages;
  return uint64_t(held) * c.stage_bytes;
}

// The checks every variant shares; `granule` is the stage_bytes multiple the variant needs.
inline void check_copy_args(const char* who, const void* dst, const void* src, uint64_t bytes,
                            const stream_copy_config& cfg, uint32_t granule) {
  if (bytes > 0 && (dst == nullptr || src == nullptr))
    copy_reject(who, std::string(dst == nullptr ? "dst" : "src") + " is null with " + std::to_string(bytes) + " bytes");
  if (reinterpret_cast<uintptr_t>(dst) % 16 != 0)
    copy_reject(who, "dst " + ptr_str(dst) + " is not 16-byte aligned (cp.async.bulk needs 16)");
  if (reinterpret_cast<uintptr_t>(src) % 16 != 0)
    copy_reject(who, "src " + ptr_str(src) + " is not 16-byte aligned (cp.async.bulk needs 16)");
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  if (bytes > 0 && d < s + bytes && s < d + bytes)
    copy_reject(who, "dst " + ptr_str(dst) + " and src " + ptr_str(src) + " overlap over " +
                         std::to_string(bytes) + " bytes (in-place is not a streaming copy)");
  const uint32_t st = cfg.stages;
  if (!(st == 2 || st == 3 || st == 4 || st == 6 || st == 8 || st == 12 || st == 16))
    copy_reject(who, "stages = " + std::to_string(st) + " is not one of 2, 3, 4, 6, 8, 12, 16");
  if (cfg.stage_bytes == 0 || cfg.stage_bytes % granule != 0)
    copy_reject(who, "stage_bytes = " + std::to_string(cfg.stage_bytes) + " is not a positive multiple of " +
                         std::to_string(granule));
  if (cfg.store_lag > 2)
    copy_reject(who, "store_lag = " + std::to_string(cfg.store_lag) + " is not 0, 1 or 2");
  if (cfg.store_lag >= cfg.stages)
    copy_reject(who, "store_lag = " + std::to_string(cfg.store_lag) + " leaves no stage to load into with stages = " +
                         std::to_string(cfg.stages));
  if (cfg.prefetch_chunks > 64)
    copy_reject(who, "prefetch_chunks = " + std::to_string(cfg.prefetch_chunks) + " is out of range 0..64");
  if (static_cast<unsigned>(cfg.load_policy) > 3u || static_cast<unsigned>(cfg.store_policy) > 3u)
    copy_reject(who, "l2_evict value " +
                         std::to_string(unsigned(static_cast<unsigned>(cfg.load_policy) > 3u ? cfg.load_policy
                                                                                               : cfg.store_policy)) +
                         " is not a hopper::kernels::l2_evict");
  if (static_cast<unsigned>(cfg.order) > 1u)
    copy_reject(who, "chunk_order value " + std::to_string(unsigned(cfg.order)) + " is not a hopper::kernels::chunk_order");
  if (static_cast<unsigned>(cfg.path) > 1u)
    copy_reject(who, "store_path value " + std::to_string(unsigned(cfg.path)) + " is not a hopper::kernels::store_path");
  if (cfg.path == store_path::st_global) {
    if (cfg.store_warps < 1 || cfg.store_warps > 16)
      copy_reject(who, "store_warps = " + std::to_string(cfg.store_warps) + " is out of range 1..16");
    if (cfg.streaming_store && cfg.store_policy != l2_evict::none)
      copy_reject(who, "streaming_store (st.global.cs) and store_policy (st.global.L2::cache_hint) are exclusive: "
                       "choose one");
  }
  if (static_cast<unsigned>(cfg.sched) > 1u)
    copy_reject(who, "schedule value " + std::to_string(unsigned(cfg.sched)) + " is not a hopper::kernels::schedule");
  const bool per_tile = cfg.sched == schedule::per_tile;
  if (per_tile && (cfg.tile_chunks < 1 || cfg.tile_chunks > 16))
    copy_reject(who, "tile_chunks = " + std::to_string(cfg.tile_chunks) + " is out of range 1..16");
  if (per_tile && cfg.stage_bytes != 0) {
    const uint64_t chunks = (bytes + cfg.stage_bytes - 1) / cfg.stage_bytes;
    if ((chunks + cfg.tile_chunks - 1) / cfg.tile_chunks > (uint64_t(1) << 31) - 1)
      copy_reject(who, "bytes = " + std::to_string(bytes) + " needs more than 2^31-1 tiles of " +
                           std::to_string(cfg.tile_chunks) + " x " + std::to_string(cfg.stage_bytes) +
                           " bytes (the grid's x limit)");
  }
  if (cfg.blocks_per_sm < 1 || cfg.blocks_per_sm > 32)
    copy_reject(who, "blocks_per_sm = " + std::to_string(cfg.blocks_per_sm) + " is out of range 1..32");
  const uint64_t smem = ring_bytes(cfg);
  if (smem > 227u * 1024u || (uint64_t(cfg.stage_bytes) > (1u << 20) - 1))
    copy_reject(who, "stages x stage_bytes = " + std::to_string(smem / cfg.stage_bytes) + " x " +
                         std::to_string(cfg.stage_bytes) + " = " + std::to_string(smem) +
                         " bytes exceeds 227 KiB of shared memory per block");
  // Each CTA also takes 1 KiB reserved by the system and its barriers. A per-tile grid has as many
  // CTAs per SM as fit; blocks_per_sm does not apply.
  const uint64_t per_sm = uint64_t(cfg.blocks_per_sm) * (smem + 1024u + 512u);
  if (!per_tile && per_sm > 228u * 1024u)
    copy_reject(who, "blocks_per_sm = " + std::to_string(cfg.blocks_per_sm) + " x " + std::to_string(smem) +
                         " bytes of stages does not fit the 228 KiB of shared memory of one SM");
}

// Sets the dynamic shared memory, then sizes the persistent grid: min(chunks, SMs x CTAs that
// actually fit per SM, capped at blocks_per_sm). At least one CTA (it copies the scalar tail).
template <class Kernel>
inline cudaError_t persistent_grid(Kernel* kernel, uint32_t threads, size_t smem, uint32_t blocks_per_sm,
                                   uint64_t chunks, uint32_t& grid) {
  int dev = 0, sms = 0, fit = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e == cudaSuccess) e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, int(threads), smem);
  if (e != cudaSuccess) return e;
  if (fit < 1) return cudaErrorInvalidConfiguration;
  const uint64_t per_sm = uint64_t(fit) < blocks_per_sm ? uint64_t(fit) : blocks_per_sm;
  const uint64_t cap = uint64_t(sms) * per_sm;
  grid = uint32_t(chunks < 1 ? 1 : (chunks < cap ? chunks : cap));
  return cudaSuccess;
}

// The grid of either schedule (sets the dynamic shared memory first): persistent_grid, or one CTA
// per tile of cfg.tile_chunks chunks (at least one: CTA 0 copies the scalar tail).
template <class Kernel>
inline cudaError_t schedule_grid(Kernel* kernel, uint32_t threads, size_t smem, const stream_copy_config& cfg,
                                 uint64_t chunks, uint32_t& grid) {
  if (cfg.sched == schedule::persistent) return persistent_grid(kernel, threads, smem, cfg.blocks_per_sm, chunks, grid);
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  const uint64_t tiles = (chunks + cfg.tile_chunks - 1) / cfg.tile_chunks;  // < 2^31 (check_copy_args)
  grid = uint32_t(tiles < 1 ? 1 : tiles);
  return cudaSuccess;
}

// Runtime stage count to a compile-time one: f(std::integral_constant<int, S>) for the stage
// counts the kernels are instantiated with (2, 3, 4, 6, 8, 12, 16; validation admits only these).
template <class F>
inline cudaError_t dispatch_stages(uint32_t stages, F&& f) {
  switch (stages) {
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 12: return f(std::integral_constant<int, 12>{});
    default: return f(std::integral_constant<int, 16>{});
  }
}

// Runtime (stages, lag) to the template instance; F is called with the kernel pointer.
template <template <int, int> class K, class F>
inline cudaError_t dispatch(uint32_t stages, uint32_t lag, F&& f) {
  return dispatch_stages(stages, [&](auto st) -> cudaError_t {
    constexpr int S = decltype(st)::value;
    switch (lag) {
      case 0: return f(K<S, 0>::get());
      case 1: return f(K<S, 1>::get());
      default: return f(K<S, 2>::get());
    }
  });
}

// Runtime (stages, store kind) to the st_global instance of stream_ldst_kernel; F gets the pointer.
template <bool Axpb, class F>
inline cudaError_t dispatch_ldst(uint32_t stages, st_kind kind, F&& f) {
  return dispatch_stages(stages, [&](auto st) -> cudaError_t {
    constexpr int S = decltype(st)::value;
    switch (kind) {
      case st_kind::cs: return f(&stream_ldst_kernel<S, Axpb, st_kind::cs>);
      case st_kind::hint: return f(&stream_ldst_kernel<S, Axpb, st_kind::hint>);
      default: return f(&stream_ldst_kernel<S, Axpb, st_kind::wb>);
    }
  });
}

inline st_kind st_kind_of(const stream_copy_config& c) {
  if (c.streaming_store) return st_kind::cs;
  return c.store_policy == l2_evict::none ? st_kind::wb : st_kind::hint;
}

// Launches the st_global path (checked arguments, bytes > 0).
template <bool Axpb>
inline cudaError_t launch_ldst(uint8_t* dst, const uint8_t* src, uint64_t bytes, float a, float b,
                               const stream_copy_config& cfg, cudaStream_t stream) {
  const uint64_t chunks = ((bytes & ~uint64_t(15)) + cfg.stage_bytes - 1) / cfg.stage_bytes;
  const size_t smem = ring_bytes(cfg);
  const uint32_t threads = 32u + 32u * cfg.store_warps;
  return dispatch_ldst<Axpb>(cfg.stages, st_kind_of(cfg), [&](auto kernel) {
    uint32_t grid = 0;
    cudaError_t e = schedule_grid(kernel, threads, smem, cfg, chunks, grid);
    if (e != cudaSuccess) return e;
    kernel<<<grid, threads, smem, stream>>>(dst, src, bytes, cfg.stage_bytes, knobs_of(cfg), a, b);
    return cudaGetLastError();
  });
}

template <int S, int L> struct k1d { static auto get() { return &stream_copy_1d_kernel<S, L>; } };
template <int S, int L> struct k2d { static auto get() { return &stream_copy_2d_kernel<S, L>; } };
template <int S, int L> struct kaxpb { static auto get() { return &stream_axpb_bf16_kernel<S, L>; } };

}  // namespace detail

// Copies `bytes` from src to dst (device pointers, 16-byte aligned, not overlapping) with the
// 1-D bulk kernel. Throws std::invalid_argument naming a bad argument; returns the launch error.
inline cudaError_t stream_copy_1d(void* dst, const void* src, uint64_t bytes,
                                  const stream_copy_config& cfg = stream_copy_1d_default(),
                                  cudaStream_t stream = nullptr) {
  detail::check_copy_args("stream_copy_1d", dst, src, bytes, cfg, 16);
  if (bytes == 0) return cudaSuccess;
  if (cfg.path == store_path::st_global)
    return detail::launch_ldst<false>(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes, 0.f, 0.f,
                                      cfg, stream);
  const uint64_t chunks = ((bytes & ~uint64_t(15)) + cfg.stage_bytes - 1) / cfg.stage_bytes;
  const size_t smem = detail::ring_bytes(cfg);
  return detail::dispatch<detail::k1d>(cfg.stages, cfg.store_lag, [&](auto kernel) {
    uint32_t grid = 0;
    cudaError_t e = detail::schedule_grid(kernel, 64, smem, cfg, chunks, grid);
    if (e != cudaSuccess) return e;
    kernel<<<grid, 64, smem, stream>>>(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes,
                                       cfg.stage_bytes, knobs_of(cfg));
    return cudaGetLastError();
  });
}

// A 2-D copy made ready once (maps encoded, arguments checked), launched many times.
struct stream_copy_2d_plan {
  tensor_map dst_map{}, src_map{};
  void* dst = nullptr;
  const void* src = nullptr;
  uint64_t bytes = 0;
  uint32_t rows = 0, box_rows = 0;
  stream_copy_config cfg{};

  // Validates, encodes the two maps (bytes viewed as rows of 256 s32), picks the kernel's shape.
  static stream_copy_2d_plan make(void* dst, const void* src, uint64_t bytes, const stream_copy_config& cfg = {}) {
    detail::check_copy_args("stream_copy_2d", dst, src, bytes, cfg, stream_copy_2d_row_bytes);
    if (cfg.path != store_path::bulk)
      detail::copy_reject("stream_copy_2d", "store_path st_global is offered by the 1-D and fused kernels only "
                                            "(the 2-D copy stores through its tensor map)");
    if (bytes / stream_copy_2d_row_bytes > (uint64_t(1) << 31) - 1)
      detail::copy_reject("stream_copy_2d", "bytes = " + std::to_string(bytes) +
                                                " is more than 2^31-1 rows of 1024 bytes (s32 coordinates)");
    stream_copy_2d_plan p;
    p.dst = dst, p.src = src, p.bytes = bytes, p.cfg = cfg;
    p.rows = uint32_t(bytes / stream_copy_2d_row_bytes);
    p.box_rows = cfg.stage_bytes / stream_copy_2d_row_bytes;
    if (p.rows > 0) {
      const uint32_t w = stream_copy_2d_row_bytes / 4;
      p.src_map = tensor_map::tiled(element::s32, src).dims({w, p.rows}).box({w, p.box_rows})
                      .l2_promotion(l2_promotion::b256).build();
      p.dst_map = tensor_map::tiled(element::s32, dst).dims({w, p.rows}).box({w, p.box_rows}).build();
    }
    return p;
  }

  cudaError_t launch(cudaStream_t stream = nullptr) const {
    if (bytes == 0) return cudaSuccess;
    const uint64_t chunks = (uint64_t(rows) + box_rows - 1) / box_rows;
    const size_t smem = detail::ring_bytes(cfg);
    return detail::dispatch<detail::k2d>(cfg.stages, cfg.store_lag, [&](auto kernel) {
      uint32_t grid = 0;
      cudaError_t e = detail::schedule_grid(kernel, 64, smem, cfg, chunks, grid);
      if (e != cudaSuccess) return e;
      kernel<<<grid, 64, smem, stream>>>(dst_map, src_map, static_cast<uint8_t*>(dst),
                                         static_cast<const uint8_t*>(src), bytes, rows, box_rows, knobs_of(cfg));
      return cudaGetLastError();
    });
  }
};

// Copies `bytes` with the 2-D tensor kernel (stage_bytes a multiple of 1024). Encodes the maps on
// every call; keep a stream_copy_2d_plan to launch repeatedly.
inline cudaError_t stream_copy_2d(void* dst, const void* src, uint64_t bytes,
                                  const stream_copy_config& cfg = {}, cudaStream_t stream = nullptr) {
  return stream_copy_2d_plan::make(dst, src, bytes, cfg).launch(stream);
}

// y[i] = bf16(a * x[i] + b) (fp32 FMA, round to nearest even) for n elements, streamed through
// shared memory. store_path::st_global (the default): the store warps transform in registers and
// store; store_path::bulk: cfg.transform_warps warps transform each stage in place and one thread
// stores it with a bulk copy.
inline cudaError_t stream_axpb_bf16(__nv_bfloat16* y, const __nv_bfloat16* x, uint64_t n, float a, float b,
                                    const stream_copy_config& cfg = stream_axpb_bf16_default(),
                                    cudaStream_t stream = nullptr) {
  const uint32_t threads = 64u + 32u * cfg.transform_warps;
  if (cfg.transform_warps < 1 || cfg.transform_warps > 16)
    detail::copy_reject("stream_axpb_bf16", "transform_warps = " + std::to_string(cfg.transform_warps) +
                                                " is out of range 1..16");
  if (n > (uint64_t(1) << 62))
    detail::copy_reject("stream_axpb_bf16", "n = " + std::to_string(n) + " elements overflows the byte count");
  detail::check_copy_args("stream_axpb_bf16", y, x, n * 2u, cfg, 16);
  if (n == 0) return cudaSuccess;
  if (cfg.path == store_path::st_global)
    return detail::launch_ldst<true>(reinterpret_cast<uint8_t*>(y), reinterpret_cast<const uint8_t*>(x), n * 2u, a, b,
                                     cfg, stream);
  const uint64_t chunks = ((n * 2u & ~uint64_t(15)) + cfg.stage_bytes - 1) / cfg.stage_bytes;
  const size_t smem = detail::ring_bytes(cfg);
  return detail::dispatch<detail::kaxpb>(cfg.stages, cfg.store_lag, [&](auto kernel) {
    uint32_t grid = 0;
    cudaError_t e = detail::schedule_grid(kernel, threads, smem, cfg, chunks, grid);
    if (e != cudaSuccess) return e;
    kernel<<<grid, threads, smem, stream>>>(y, x, n, a, b, cfg.stage_bytes, knobs_of(cfg));
    return cudaGetLastError();
  });
}

}  // namespace hopper::kernels
