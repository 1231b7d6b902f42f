// Streaming copies through shared memory at the speed of the memory itself: the copy engine
// (cp.async.bulk, bulk async-groups for the stores) moves every byte in the background while one
// thread per direction only issues.
// The kernel bodies are written once over a target in kernels/stream_copy_body.hpp (they run on
// the host model too); this file holds their __global__ entries on the device target and the
// host launchers users call:
//
//   stream_copy_1d      1-D copy (default: per-tile, bulk loads, st.global from 4 store warps)
//   stream_copy_2d      the same through 2-D tensor maps (cp.async.bulk.tensor.2d both ways)
//   stream_axpb_bf16    y = a*x + b in bf16 between the load and the store
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "hopper/device_target.cuh"
#include "hopper/limits.hpp"
#include "hopper/pipeline.cuh"
#include "hopper/tensor_map.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/stream_copy_body.hpp"

namespace hopper::kernels {

namespace detail {
template <int Stages>
using copy_pipe = pipeline<Stages, basic_device_target<false>>;
using copy_target = basic_device_target<false>;
}  // namespace detail

// ---- __global__ entries: the bodies on the device target ------------------------------------

template <int Stages, int Lag>
__global__ void __launch_bounds__(64) stream_copy_1d_kernel(uint8_t* __restrict__ dst, const uint8_t* __restrict__ src,
                                                            uint64_t bytes, uint32_t stage_bytes, stream_knobs k) {
  __shared__ typename detail::copy_pipe<Stages>::storage ring;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  detail::copy_target t;
  copy_1d_body<Stages, Lag>(t, ring, smem<uint8_t>(stage_mem), gmem<uint8_t>(dst), gmem<const uint8_t>(src), bytes,
                            stage_bytes, k);
}

template <int Stages, int Lag>
__global__ void __launch_bounds__(64)
    stream_copy_2d_kernel(const __grid_constant__ tensor_map dst_map, const __grid_constant__ tensor_map src_map,
                          uint8_t* __restrict__ dst, const uint8_t* __restrict__ src, uint64_t bytes, uint32_t rows,
                          uint32_t box_rows, stream_knobs k) {
  __shared__ typename detail::copy_pipe<Stages>::storage ring;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  detail::copy_target t;
  copy_2d_body<Stages, Lag>(t, ring, smem<uint8_t>(stage_mem), dst_map, src_map, gmem<uint8_t>(dst),
                            gmem<const uint8_t>(src), bytes, rows, box_rows, k);
}

template <int Stages, int Lag>
__global__ void __launch_bounds__(64 + 16 * 32)
    stream_axpb_bf16_kernel(__nv_bfloat16* __restrict__ y, const __nv_bfloat16* __restrict__ x, uint64_t n, float a,
                            float b, uint32_t stage_bytes, stream_knobs k) {
  __shared__ typename detail::copy_pipe<Stages>::storage ring;
  __shared__ detail::ready_barriers<Stages, detail::copy_target> ready;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  detail::copy_target t;
  axpb_body<Stages, Lag>(t, ring, ready, smem<uint8_t>(stage_mem), gmem<uint16_t>(reinterpret_cast<uint16_t*>(y)),
                         gmem<const uint16_t>(reinterpret_cast<const uint16_t*>(x)), n, a, b, stage_bytes, k);
}

template <int Stages, bool Axpb, detail::st_kind K>
__global__ void __launch_bounds__(32 + 16 * 32)
    stream_ldst_kernel(uint8_t* __restrict__ dst, const uint8_t* __restrict__ src, uint64_t bytes, uint32_t stage_bytes,
                       stream_knobs k, float a, float b) {
  __shared__ typename detail::copy_pipe<Stages>::storage ring;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  detail::copy_target t;
  ldst_body<Stages, Axpb, K>(t, ring, smem<uint8_t>(stage_mem), gmem<uint8_t>(dst), gmem<const uint8_t>(src), bytes,
                             stage_bytes, k, a, b);
}

// ---- host side -------------------------------------------------------------------------------

namespace detail {

// Throws std::invalid_argument("hopper: <who>: <what>"), as hopper/limits.hpp's checks do.
[[noreturn]] inline void copy_reject(const char* who, const std::string& what) {
  limits::reject(std::string(who) + ": " + what);
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

// The checks every variant shares; `granule` is the stage_bytes multiple the variant needs. The
// hardware limits (bulk-copy alignment and size, tx-count, shared memory) are hopper/limits.hpp's.
inline void check_copy_args(const char* who, const void* dst, const void* src, uint64_t bytes,
                            const stream_copy_config& cfg, uint32_t granule) {
  const std::string me = std::string(who) + ": ";
  if (bytes > 0 && (dst == nullptr || src == nullptr))
    copy_reject(who, std::string(dst == nullptr ? "dst" : "src") + " is null with " + std::to_string(bytes) + " bytes");
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  if (bytes > 0 && d < s + bytes && s < d + bytes) {
    const uintptr_t overlap = (d < s ? d : s) + bytes - (d < s ? s : d);
    copy_reject(who, "dst " + ptr_str(dst) + " and src " + ptr_str(src) + " overlap by " + std::to_string(overlap) +
                         " of the " + std::to_string(bytes) + " bytes copied (in-place is not a streaming copy)");
  }
  const uint32_t st = cfg.stages;
  if (!(st == 2 || st == 3 || st == 4 || st == 6 || st == 8 || st == 12 || st == 16))
    copy_reject(who, "stages = " + std::to_string(st) + " is not one of 2, 3, 4, 6, 8, 12, 16");
  if (cfg.stage_bytes == 0 || cfg.stage_bytes % granule != 0)
    copy_reject(who, "stage_bytes = " + std::to_string(cfg.stage_bytes) + " is not a positive multiple of " +
                         std::to_string(granule));
  // Every stage is one bulk copy each way between src (dst) and shared memory, counted on one
  // mbarrier phase: its size and both addresses follow cp.async.bulk's rules.
  limits::check_bulk_copy(cfg.stage_bytes, src, dst, /*with_mbarrier=*/true, me + "stage copy");
  if (cfg.store_lag > 2) copy_reject(who, "store_lag = " + std::to_string(cfg.store_lag) + " is not 0, 1 or 2");
  if (cfg.store_lag >= cfg.stages)
    copy_reject(who, "store_lag = " + std::to_string(cfg.store_lag) +
                         " leaves no stage to load into with stages = " + std::to_string(cfg.stages));
  if (cfg.prefetch_chunks > 64)
    copy_reject(who, "prefetch_chunks = " + std::to_string(cfg.prefetch_chunks) + " is out of range 0..64");
  if (static_cast<unsigned>(cfg.load_policy) > 3u || static_cast<unsigned>(cfg.store_policy) > 3u)
    copy_reject(who, "l2_evict value " +
                         std::to_string(unsigned(static_cast<unsigned>(cfg.load_policy) > 3u ? cfg.load_policy
                                                                                             : cfg.store_policy)) +
                         " is not a hopper::kernels::l2_evict");
  if (static_cast<unsigned>(cfg.order) > 1u)
    copy_reject(who,
                "chunk_order value " + std::to_string(unsigned(cfg.order)) + " is not a hopper::kernels::chunk_order");
  if (static_cast<unsigned>(cfg.path) > 1u)
    copy_reject(who,
                "store_path value " + std::to_string(unsigned(cfg.path)) + " is not a hopper::kernels::store_path");
  if (cfg.path == store_path::st_global) {
    if (cfg.store_warps < 1 || cfg.store_warps > 16)
      copy_reject(who, "store_warps = " + std::to_string(cfg.store_warps) + " is out of range 1..16");
    if (cfg.streaming_store && cfg.store_policy != l2_evict::none)
      copy_reject(who,
                  "streaming_store (st.global.cs) and store_policy (st.global.L2::cache_hint) are exclusive: "
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
  limits::check_smem_budget(smem, limits::max_smem_per_block,
                            me + "stages x stage_bytes = " + std::to_string(smem / cfg.stage_bytes) + " x " +
                                std::to_string(cfg.stage_bytes));
  // Each CTA also takes the shared memory the system reserves per block and 512 bytes for its
  // barriers. A per-tile grid has as many CTAs per SM as fit; blocks_per_sm does not apply.
  const uint64_t per_sm = uint64_t(cfg.blocks_per_sm) * (smem + limits::reserved_smem_per_block + 512u);
  if (!per_tile && per_sm > limits::smem_per_sm)
    copy_reject(who, "blocks_per_sm = " + std::to_string(cfg.blocks_per_sm) + " x " + std::to_string(smem) +
                         " bytes of stages does not fit the " + std::to_string(limits::smem_per_sm / 1024) +
                         " KiB of shared memory of one SM");
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
  return with_value<2, 3, 4, 6, 8, 12, 16>(stages, f);
}

// Runtime (stages, lag) to the template instance; F is called with the kernel pointer.
template <template <int, int> class K, class F>
inline cudaError_t dispatch(uint32_t stages, uint32_t lag, F&& f) {
  return dispatch_stages(stages, [&](auto st) -> cudaError_t {
    return with_value<0, 1, 2>(lag, [&](auto lg) { return f(K<decltype(st)::value, decltype(lg)::value>::get()); });
  });
}

// Runtime (stages, store kind) to the st_global instance of stream_ldst_kernel; F gets the pointer.
template <bool Axpb, class F>
inline cudaError_t dispatch_ldst(uint32_t stages, st_kind kind, F&& f) {
  return dispatch_stages(stages, [&](auto st) -> cudaError_t {
    constexpr int S = decltype(st)::value;
    switch (kind) {
      case st_kind::cs:
        return f(&stream_ldst_kernel<S, Axpb, st_kind::cs>);
      case st_kind::hint:
        return f(&stream_ldst_kernel<S, Axpb, st_kind::hint>);
      default:
        return f(&stream_ldst_kernel<S, Axpb, st_kind::wb>);
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

// Each kernel's instance for (stages, store lag), as dispatch() takes it.
template <int S, int L>
struct copy_1d_instance {
  static auto get() { return &stream_copy_1d_kernel<S, L>; }
};
template <int S, int L>
struct copy_2d_instance {
  static auto get() { return &stream_copy_2d_kernel<S, L>; }
};
template <int S, int L>
struct axpb_bf16_instance {
  static auto get() { return &stream_axpb_bf16_kernel<S, L>; }
};

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
  return detail::dispatch<detail::copy_1d_instance>(cfg.stages, cfg.store_lag, [&](auto kernel) {
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
      detail::copy_reject("stream_copy_2d",
                          "store_path st_global is offered by the 1-D and fused kernels only "
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
      p.src_map = tensor_map::tiled(element::s32, src)
                      .dims({w, p.rows})
                      .box({w, p.box_rows})
                      .l2_promotion(l2_promotion::b256)
                      .build();
      p.dst_map = tensor_map::tiled(element::s32, dst).dims({w, p.rows}).box({w, p.box_rows}).build();
    }
    return p;
  }

  cudaError_t launch(cudaStream_t stream = nullptr) const {
    if (bytes == 0) return cudaSuccess;
    const uint64_t chunks = (uint64_t(rows) + box_rows - 1) / box_rows;
    const size_t smem = detail::ring_bytes(cfg);
    return detail::dispatch<detail::copy_2d_instance>(cfg.stages, cfg.store_lag, [&](auto kernel) {
      uint32_t grid = 0;
      cudaError_t e = detail::schedule_grid(kernel, 64, smem, cfg, chunks, grid);
      if (e != cudaSuccess) return e;
      kernel<<<grid, 64, smem, stream>>>(dst_map, src_map, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src),
                                         bytes, rows, box_rows, knobs_of(cfg));
      return cudaGetLastError();
    });
  }
};

// Copies `bytes` with the 2-D tensor kernel (stage_bytes a multiple of 1024). Encodes the maps on
// every call; keep a stream_copy_2d_plan to launch repeatedly.
inline cudaError_t stream_copy_2d(void* dst, const void* src, uint64_t bytes, const stream_copy_config& cfg = {},
                                  cudaStream_t stream = nullptr) {
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
    detail::copy_reject("stream_axpb_bf16",
                        "transform_warps = " + std::to_string(cfg.transform_warps) + " is out of range 1..16");
  if (n > (uint64_t(1) << 62))
    detail::copy_reject("stream_axpb_bf16", "n = " + std::to_string(n) + " elements overflows the byte count");
  detail::check_copy_args("stream_axpb_bf16", y, x, n * 2u, cfg, 16);
  if (n == 0) return cudaSuccess;
  if (cfg.path == store_path::st_global)
    return detail::launch_ldst<true>(reinterpret_cast<uint8_t*>(y), reinterpret_cast<const uint8_t*>(x), n * 2u, a, b,
                                     cfg, stream);
  const uint64_t chunks = ((n * 2u & ~uint64_t(15)) + cfg.stage_bytes - 1) / cfg.stage_bytes;
  const size_t smem = detail::ring_bytes(cfg);
  return detail::dispatch<detail::axpb_bf16_instance>(cfg.stages, cfg.store_lag, [&](auto kernel) {
    uint32_t grid = 0;
    cudaError_t e = detail::schedule_grid(kernel, threads, smem, cfg, chunks, grid);
    if (e != cudaSuccess) return e;
    kernel<<<grid, threads, smem, stream>>>(y, x, n, a, b, cfg.stage_bytes, knobs_of(cfg));
    return cudaGetLastError();
  });
}

}  // namespace hopper::kernels
