// Probe kernels for bench_copy's `why/` benchmarks: they take the streaming copy of
// kernels/copy/stream_copy.cuh apart to find what holds it at 0.92-0.95x cudaMemcpyAsync.
//
//   plain_copy_kernel<U>         no shared memory, no TMA: grid-stride 16-byte ld.global.nc /
//                                st.global, U loads in flight per thread
//   plain_copy_tiles_kernel<U>   the same, one block per 256 x U vectors (not persistent)
//   plain_read_kernel<U>         the read side alone: 16-byte loads folded into a register,
//                                one store per block
//   plain_write_kernel<U>        the write side alone: 16-byte st.global of a register value
//   bulk_read_kernel<S>          the copy's producer alone: bulk loads into S stages, the consumer
//                                only waits and releases (nothing is stored)
//   bulk_write_kernel<Lag>       the copy's storer alone: bulk stores of resident stages (nothing
//                                is loaded), wait_group.read<Lag> between them
//   split_copy_kernel<S>         the 1-D bulk copy with each stage loaded (and stored) by several
//                                smaller bulk copies
// The bulk kernels reuse the copy's pipeline, chunk order and L2 knobs, so only the probed part
// differs from the copy.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "hopper/ptx/cp_async_bulk.cuh"
#include "hopper/ptx/fence.cuh"
#include "hopper/ptx/ld_st.cuh"
#include "kernels/copy/stream_copy.cuh"

namespace copy_probe {

namespace hk = hopper::kernels;
namespace ptx = hopper::ptx;

inline constexpr uint32_t plain_threads = 256;

// Grid-stride copy of n16 16-byte vectors: each pass issues U loads, then U stores.
template <int U>
__global__ void __launch_bounds__(plain_threads)
    plain_copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, uint64_t n16) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n16; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = ptx::ld_global_nc_v4_u32(src + i + k * stride);
#pragma unroll
    for (int k = 0; k < U; ++k) ptx::st_global_v4_u32(dst + i + k * stride, v[k]);
  }
  for (; i < n16; i += stride) ptx::st_global_v4_u32(dst + i, ptx::ld_global_nc_v4_u32(src + i));
}

// One block per tile of plain_threads x U vectors (grid = tiles).
template <int U>
__global__ void __launch_bounds__(plain_threads)
    plain_copy_tiles_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, uint64_t n16) {
  const uint64_t base = uint64_t(blockIdx.x) * plain_threads * U + threadIdx.x;
  uint4 v[U];
#pragma unroll
  for (int k = 0; k < U; ++k)
    if (base + k * plain_threads < n16) v[k] = ptx::ld_global_nc_v4_u32(src + base + k * plain_threads);
#pragma unroll
  for (int k = 0; k < U; ++k)
    if (base + k * plain_threads < n16) ptx::st_global_v4_u32(dst + base + k * plain_threads, v[k]);
}

// Reads n16 vectors, U loads in flight per thread; the XOR of everything a block read is its one
// store (so no load can be dropped).
template <int U>
__global__ void __launch_bounds__(plain_threads)
    plain_read_kernel(const uint4* __restrict__ src, uint64_t n16, uint32_t* __restrict__ out) {
  __shared__ uint32_t block_acc;
  if (threadIdx.x == 0) block_acc = 0;
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t acc = 0;
  for (; i + (U - 1) * stride < n16; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = ptx::ld_global_nc_v4_u32(src + i + k * stride);
#pragma unroll
    for (int k = 0; k < U; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  for (; i < n16; i += stride) {
    const uint4 v = ptx::ld_global_nc_v4_u32(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  for (int o = 16; o > 0; o /= 2) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0) atomicXor(&block_acc, acc);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = block_acc;
}

// Writes n16 vectors (a value made from the index), U stores per pass.
template <int U>
__global__ void __launch_bounds__(plain_threads) plain_write_kernel(uint4* __restrict__ dst, uint64_t n16) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n16; i += U * stride) {
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const uint32_t x = uint32_t(i + k * stride);
      ptx::st_global_v4_u32(dst + i + k * stride, make_uint4(x, x + 1, x + 2, x + 3));
    }
  }
  for (; i < n16; i += stride) {
    const uint32_t x = uint32_t(i);
    ptx::st_global_v4_u32(dst + i, make_uint4(x, x + 1, x + 2, x + 3));
  }
}

// The producer of the copy with each stage loaded by `pieces` bulk copies of stage_bytes / pieces
// (a multiple of 16) that all complete on the stage's one full barrier.
template <int Stages>
__device__ __forceinline__ void produce_pieces(hk::detail::copy_pipe<Stages>& pipe, uint8_t* stage_mem,
                                               const uint8_t* src, uint64_t bulk, uint32_t stage_bytes, uint32_t pieces,
                                               const hk::detail::chunk_range& cr, const hk::stream_knobs& k) {
  const bool hint = k.load_policy != hk::l2_evict::none;
  const uint64_t policy = hint ? hk::detail::l2_policy(hk::detail::copy_target{}, k.load_policy) : 0;
  const uint64_t ahead = uint64_t(k.prefetch_chunks) * cr.step;
  const uint32_t piece = stage_bytes / pieces;
  auto s = pipe.producer_start();
  for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
    if (ahead != 0 && c + ahead < cr.end) {
      const uint64_t pf = (c + ahead) * stage_bytes;
      ptx::cp_async_bulk_prefetch_L2_global(src + pf, hk::detail::chunk_bytes(pf, bulk, stage_bytes));
    }
    const uint64_t off = c * stage_bytes;
    const uint32_t n = hk::detail::chunk_bytes(off, bulk, stage_bytes);
    uint8_t* stage = stage_mem + size_t(s.index()) * stage_bytes;
    pipe.acquire(s, n);
    for (uint32_t o = 0; o < n; o += piece)
      hk::detail::load_chunk(hk::detail::copy_target{}, hopper::smem<uint8_t>(stage + o),
                             hopper::gmem<const uint8_t>(src + off + o), n - o < piece ? n - o : piece, pipe.full(s),
                             hint, policy);
  }
  pipe.drain(s);
}

// The read side of the copy alone: warp 0 lane 0 loads as the copy does; warp 1 waits for each
// stage and releases it at once. `bytes` is a multiple of 16.
template <int Stages>
__global__ void __launch_bounds__(64) bulk_read_kernel(const uint8_t* __restrict__ src, uint64_t bytes,
                                                       uint32_t stage_bytes, uint32_t pieces, hk::stream_knobs k) {
  using pipe_t = hk::detail::copy_pipe<Stages>;
  __shared__ typename pipe_t::storage ring;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  pipe_t pipe = pipe_t::init(ring, hopper::pipeline_params{1u, 1u, false});
  const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  const uint64_t chunks = hk::detail::pieces(bytes, uint64_t(stage_bytes));
  const hk::detail::chunk_range cr = hk::detail::cta_chunks(hk::detail::copy_target{}, chunks, k.order);
  if (warp == 0) {
    if (lane == 0) produce_pieces(pipe, stage_mem, src, bytes, stage_bytes, pieces, cr, k);
  } else {
    auto s = pipe.consumer_start();
    for (uint64_t c = cr.first; c < cr.end; c += cr.step, ++s) {
      pipe.wait(s);
      pipe.release(s);
    }
  }
}

// The write side of the copy alone: one warp fills `stages` stages once (generic writes, then
// fence.proxy.async so the copy engine sees them), then lane 0 stores the CTA's chunks from them
// in turn as `pieces` bulk stores per chunk, one group per chunk, waiting with
// wait_group.read<Lag> after each as the copy's storer does. `bytes` is a multiple of 16.
template <int Lag>
__global__ void __launch_bounds__(32) bulk_write_kernel(uint8_t* __restrict__ dst, uint64_t bytes, uint32_t stages,
                                                        uint32_t stage_bytes, uint32_t pieces, hk::stream_knobs k) {
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  for (uint32_t i = threadIdx.x * 16u; i < stages * stage_bytes; i += 32u * 16u)
    *reinterpret_cast<uint4*>(stage_mem + i) = make_uint4(i, i + 1, i + 2, i + 3);
  ptx::fence_proxy_async_shared_cta();
  __syncwarp();
  if (threadIdx.x != 0) return;
  const bool hint = k.store_policy != hk::l2_evict::none;
  const uint64_t policy = hint ? hk::detail::l2_policy(hk::detail::copy_target{}, k.store_policy) : 0;
  const uint64_t chunks = hk::detail::pieces(bytes, uint64_t(stage_bytes));
  const hk::detail::chunk_range cr = hk::detail::cta_chunks(hk::detail::copy_target{}, chunks, k.order);
  const uint32_t piece = stage_bytes / pieces;
  uint32_t at = 0;
  for (uint64_t c = cr.first; c < cr.end; c += cr.step) {
    const uint64_t off = c * stage_bytes;
    const uint32_t n = hk::detail::chunk_bytes(off, bytes, stage_bytes);
    const uint8_t* stage = stage_mem + size_t(at) * stage_bytes;
    for (uint32_t o = 0; o < n; o += piece)
      hk::detail::store_chunk(hk::detail::copy_target{}, hopper::gmem<uint8_t>(dst + off + o),
                              hopper::smem<const uint8_t>(stage + o), n - o < piece ? n - o : piece, hint, policy);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read<Lag>();
    at = at + 1 == stages ? 0 : at + 1;
  }
  ptx::cp_async_bulk_wait_group<0>();
}

// The 1-D bulk copy (store lag 1) with `load_pieces` bulk loads and `store_pieces` bulk stores
// per stage (each a multiple of 16 bytes); the stores of a stage form one bulk group. `bytes` is
// a multiple of 16.
template <int Stages>
__global__ void __launch_bounds__(64)
    split_copy_kernel(uint8_t* __restrict__ dst, const uint8_t* __restrict__ src, uint64_t bytes, uint32_t stage_bytes,
                      uint32_t load_pieces, uint32_t store_pieces, hk::stream_knobs k) {
  using pipe_t = hk::detail::copy_pipe<Stages>;
  __shared__ typename pipe_t::storage ring;
  extern __shared__ __align__(1024) uint8_t stage_mem[];
  pipe_t pipe = pipe_t::init(ring, hopper::pipeline_params{1u, 1u, false});
  const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  const uint64_t chunks = hk::detail::pieces(bytes, uint64_t(stage_bytes));
  const hk::detail::chunk_range cr = hk::detail::cta_chunks(hk::detail::copy_target{}, chunks, k.order);
  if (warp == 0) {
    if (lane == 0) produce_pieces(pipe, stage_mem, src, bytes, stage_bytes, load_pieces, cr, k);
  } else {
    const bool hint = k.store_policy != hk::l2_evict::none;
    const uint64_t policy = hint && lane == 0 ? hk::detail::l2_policy(hk::detail::copy_target{}, k.store_policy) : 0;
    const uint32_t piece = stage_bytes / store_pieces;
    auto s = pipe.consumer_start();
    auto r = s;
    for (uint64_t c = cr.first; c < cr.end; c += cr.step) {
      pipe.wait(s);
      const uint64_t off = c * stage_bytes;
      const uint32_t n = hk::detail::chunk_bytes(off, bytes, stage_bytes);
      const uint8_t* stage = stage_mem + size_t(s.index()) * stage_bytes;
      hk::detail::copy_target t;
      hk::detail::store_and_release<1>(t, pipe, s, r, lane, [&] {
        for (uint32_t o = 0; o < n; o += piece)
          hk::detail::store_chunk(hk::detail::copy_target{}, hopper::gmem<uint8_t>(dst + off + o),
                                  hopper::smem<const uint8_t>(stage + o), n - o < piece ? n - o : piece, hint, policy);
      });
    }
    hk::detail::copy_target t;
    hk::detail::finish_stores(t, pipe, s, r, lane);
  }
}

}  // namespace copy_probe
