// Streaming copies through shared memory at the speed of the memory itself: the copy engine
// (cp.async.bulk, bulk async-groups for the stores) moves every byte in the background while one
// thread per direction only issues.
// The kernel bodies are written once over a target in kernels/copy/stream_copy_body.hpp (they run on
// the host model too); this file holds their __global__ entries on the device target and the
// host launchers users call, each launching the copy_plan (kernels/copy/stream_copy_plan.hpp) that
// the model runner launches too:
//
//   stream_copy_1d      1-D copy (default: per-tile, bulk loads, st.global from 4 store warps)
//   stream_copy_2d      the same through 2-D tensor maps (cp.async.bulk.tensor.2d both ways)
//   stream_axpb_bf16    y = a*x + b in bf16 between the load and the store
//   launch_copy         a 1-D or fused copy_plan made once, launched many times
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

#include "hopper/objects/checked.hpp"
#include "hopper/objects/limits.hpp"
#include "hopper/objects/tensor_map.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "hopper/target/device_target.cuh"
#include "kernels/copy/stream_copy_args.hpp"
#include "kernels/copy/stream_copy_body.hpp"
#include "kernels/copy/stream_copy_plan.hpp"
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

// The device's side of a persistent grid (sets the dynamic shared memory first): its SMs, and
// how many CTAs of `kernel` with `threads` and `smem` fit on one.
template <class Kernel>
inline cudaError_t device_fit(Kernel* kernel, uint32_t threads, size_t smem, uint32_t& sms, uint32_t& fit) {
  int dev = 0, n = 0, f = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
  if (e == cudaSuccess) e = allow_max_smem(kernel);
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f, kernel, int(threads), smem);
  if (e != cudaSuccess) return e;
  if (f < 1) return cudaErrorInvalidConfiguration;
  sms = uint32_t(n), fit = uint32_t(f);
  return cudaSuccess;
}

// Sets the dynamic shared memory, then sizes the persistent grid: persistent_ctas on this device.
template <class Kernel>
inline cudaError_t persistent_grid(Kernel* kernel, uint32_t threads, size_t smem, uint32_t blocks_per_sm,
                                   uint64_t chunks, uint32_t& grid) {
  uint32_t sms = 0, fit = 0;
  const cudaError_t e = device_fit(kernel, threads, smem, sms, fit);
  if (e == cudaSuccess) grid = persistent_ctas(chunks, sms, fit, blocks_per_sm);
  return e;
}

// Launches `kernel` with the plan's grid (on this device), block and shared memory.
template <class... Params, class... Args>
inline cudaError_t launch_plan(void (*kernel)(Params...), const copy_plan& p, cudaStream_t stream, Args&&... args) {
  uint32_t sms = 0, fit = 0;
  const cudaError_t e =
      p.per_tile() ? allow_max_smem(kernel) : device_fit(kernel, p.threads, size_t(p.smem_bytes), sms, fit);
  if (e != cudaSuccess) return e;
  kernel<<<p.grid(sms, fit), p.threads, size_t(p.smem_bytes), stream>>>(std::forward<Args>(args)...);
  return cudaGetLastError();
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

// The st_global entry of a plan (bytes > 0).
template <bool Axpb>
inline cudaError_t launch_ldst(const copy_plan& p, cudaStream_t stream) {
  return dispatch_ldst<Axpb>(p.stages, p.store, [&](auto kernel) {
    return launch_plan(kernel, p, stream, static_cast<uint8_t*>(p.dst), static_cast<const uint8_t*>(p.src), p.bytes,
                       p.stage_bytes, p.knobs, p.a, p.b);
  });
}

}  // namespace detail

// Launches a 1-D or fused plan (copy_plan::copy_1d, copy_plan::axpb_bf16) on `stream`; a 2-D
// plan needs its tensor maps (stream_copy_2d_plan). Returns the launch error.
inline cudaError_t launch_copy(const copy_plan& p, cudaStream_t stream = nullptr) {
  if (p.empty()) return cudaSuccess;
  auto* dst = static_cast<uint8_t*>(p.dst);
  const auto* src = static_cast<const uint8_t*>(p.src);
  switch (p.entry) {
    case copy_entry::ldst:
      return p.axpb ? detail::launch_ldst<true>(p, stream) : detail::launch_ldst<false>(p, stream);
    case copy_entry::copy_1d:
      return detail::dispatch<detail::copy_1d_instance>(p.stages, p.store_lag, [&](auto kernel) {
        return detail::launch_plan(kernel, p, stream, dst, src, p.bytes, p.stage_bytes, p.knobs);
      });
    case copy_entry::axpb_bf16:
      return detail::dispatch<detail::axpb_bf16_instance>(p.stages, p.store_lag, [&](auto kernel) {
        return detail::launch_plan(kernel, p, stream, reinterpret_cast<__nv_bfloat16*>(dst),
                                   reinterpret_cast<const __nv_bfloat16*>(src), p.bytes / 2u, p.a, p.b, p.stage_bytes,
                                   p.knobs);
      });
    case copy_entry::copy_2d:
      break;
  }
  throw std::invalid_argument(
      "hopper: launch_copy: a 2-D copy_plan is launched by stream_copy_2d_plan (its tensor maps)");
}

// Copies `bytes` from src to dst (device pointers, 16-byte aligned, not overlapping) with the
// 1-D bulk kernel. Throws std::invalid_argument naming a bad argument; returns the launch error.
inline cudaError_t stream_copy_1d(void* dst, const void* src, uint64_t bytes,
                                  const stream_copy_config& cfg = stream_copy_1d_default(),
                                  cudaStream_t stream = nullptr) {
  return launch_copy(copy_plan::copy_1d(dst, src, bytes, cfg), stream);
}

// A 2-D copy made ready once (arguments checked, maps encoded), launched many times.
struct stream_copy_2d_plan {
  copy_plan plan{};
  tensor_map dst_map{}, src_map{};

  // Checks, plans (copy_plan::copy_2d) and encodes the two maps the plan describes.
  static stream_copy_2d_plan make(void* dst, const void* src, uint64_t bytes, const stream_copy_config& cfg = {}) {
    stream_copy_2d_plan p;
    p.plan = copy_plan::copy_2d(dst, src, bytes, cfg);
    if (p.plan.rows > 0) {
      p.src_map = map_of(src, p.plan).l2_promotion(l2_promotion::b256).build();
      p.dst_map = map_of(dst, p.plan).build();
    }
    return p;
  }

  cudaError_t launch(cudaStream_t stream = nullptr) const {
    if (plan.empty()) return cudaSuccess;
    return detail::dispatch<detail::copy_2d_instance>(plan.stages, plan.store_lag, [&](auto kernel) {
      return detail::launch_plan(kernel, plan, stream, dst_map, src_map, static_cast<uint8_t*>(plan.dst),
                                 static_cast<const uint8_t*>(plan.src), plan.bytes, plan.rows, plan.box_rows,
                                 plan.knobs);
    });
  }

 private:
  // {row elements, rows} of s32, boxes of {row elements, box_rows}.
  static tensor_map_builder map_of(const void* base, const copy_plan& p) {
    return tensor_map::tiled(element::s32, base)
        .dims({stream_copy_2d_row_elems, p.rows})
        .box({stream_copy_2d_row_elems, p.box_rows});
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
  return launch_copy(copy_plan::axpb_bf16(y, x, n, a, b, cfg), stream);
}

}  // namespace hopper::kernels
