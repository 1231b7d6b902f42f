// Streaming copies through shared memory at the speed of the memory itself: the copy engine
// (cp.async.bulk, bulk async-groups for the stores) moves every byte in the background while one
// thread per direction only issues.
// The kernel bodies are written once over a target in kernels/copy/stream_copy_body.hpp (they run on
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
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "hopper/checked.hpp"
#include "hopper/device_target.cuh"
#include "hopper/limits.hpp"
#include "hopper/pipeline.cuh"
#include "hopper/tensor_map.hpp"
#include "kernels/copy/stream_copy_args.hpp"
#include "kernels/copy/stream_copy_body.hpp"
#include "kernels/dispatch.hpp"

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

// Lets `kernel` take up to the block maximum of shared memory (227 KiB, less its static shared
// memory) dynamically, once per kernel and device. The attribute belongs to the kernel, not to a launch: setting it to
// each launch's own size would let one host thread lower it between another thread's set and its launch. A launch still
// takes only the bytes it asks for; occupancy follows from those.
template <class Kernel>
inline cudaError_t allow_max_smem(Kernel* kernel) {
  static std::mutex m;
  static std::set<std::pair<int, const void*>> done;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const std::lock_guard<std::mutex> lock(m);
  const std::pair<int, const void*> key{dev, reinterpret_cast<const void*>(kernel)};
  if (done.count(key)) return cudaSuccess;
  cudaFuncAttributes attr{};
  e = cudaFuncGetAttributes(&attr, kernel);  // its static shared memory counts against the same limit
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(limits::max_smem_per_block - attr.sharedSizeBytes));
  if (e == cudaSuccess) done.insert(key);
  return e;
}

// Sets the dynamic shared memory, then sizes the persistent grid: min(chunks, SMs x CTAs that
// actually fit per SM, capped at blocks_per_sm). At least one CTA (it copies the scalar tail).
template <class Kernel>
inline cudaError_t persistent_grid(Kernel* kernel, uint32_t threads, size_t smem, uint32_t blocks_per_sm,
                                   uint64_t chunks, uint32_t& grid) {
  int dev = 0, sms = 0, fit = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e == cudaSuccess) e = allow_max_smem(kernel);
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
  const cudaError_t e = allow_max_smem(kernel);
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
  const uint64_t chunks = checked::ceil_div(bytes & ~uint64_t(15), uint64_t(cfg.stage_bytes));
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
  detail::check_copy_1d_args(dst, src, bytes, cfg);
  if (bytes == 0) return cudaSuccess;
  if (cfg.path == store_path::st_global)
    return detail::launch_ldst<false>(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes, 0.f, 0.f,
                                      cfg, stream);
  const uint64_t chunks = checked::ceil_div(bytes & ~uint64_t(15), uint64_t(cfg.stage_bytes));
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
    detail::check_copy_2d_args(dst, src, bytes, cfg);
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
  detail::check_axpb_args(y, x, n, cfg);
  const uint32_t threads = 64u + 32u * cfg.transform_warps;
  if (n == 0) return cudaSuccess;
  if (cfg.path == store_path::st_global)
    return detail::launch_ldst<true>(reinterpret_cast<uint8_t*>(y), reinterpret_cast<const uint8_t*>(x), n * 2u, a, b,
                                     cfg, stream);
  const uint64_t chunks = checked::ceil_div(n * 2u & ~uint64_t(15), uint64_t(cfg.stage_bytes));
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
