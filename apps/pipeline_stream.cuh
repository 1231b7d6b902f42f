// A streaming kernel through hopper::pipeline, shared by the showcase and the GPU pipeline tests:
// warp 0's lane 0 produces (cp.async.bulk global -> shared, one stage per iteration), the other
// warps consume (read the stage from shared memory, store it to global) and release it.
//
// Layout of the work:
//  - without multicast, CTA b streams tiles [b*tiles, (b+1)*tiles) of src to the same tiles of dst;
//  - with multicast (cluster of n CTAs), cluster c streams tiles [c*tiles, (c+1)*tiles): the
//    producer of rank r loads slice r of each tile into every CTA of the cluster, and CTA r writes
//    the whole tile it received to dst tile ((c*n + r)*tiles + t). So each CTA's output proves it
//    saw every peer's slice for that iteration.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "hopper/pipeline.cuh"
#include "hopper/pipeline_backend_device.cuh"
#include "hopper/ptx/cp_async_bulk.cuh"
#include "hopper/ptx/special_registers.cuh"

namespace hopper::apps {

template <int Stages, bool Traced>
__global__ void __launch_bounds__(1024) pipeline_stream_kernel(const uint4* __restrict__ src,
                                                               uint4* __restrict__ dst,
                                                               uint32_t tiles, uint32_t stage_bytes,
                                                               pipeline_params params,
                                                               trace::sink sink) {
  using pipe_t = pipeline<Stages, basic_device_backend<Traced>>;
  __shared__ typename pipe_t::storage ring;
  extern __shared__ __align__(128) uint8_t stage_mem[];

  pipe_t pipe = pipe_t::init(ring, params, basic_device_backend<Traced>(sink));
  const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
  const bool mc = params.multicast && params.cluster_size > 1;
  const uint32_t rank = mc ? ptx::cluster_ctarank() : 0u;
  const uint32_t cta = blockIdx.x;
  const size_t tile_vecs = stage_bytes / 16u;
  // First source tile of this CTA (no multicast) or of its cluster (multicast).
  const size_t src_tile0 = mc ? size_t(cta / params.cluster_size) * tiles : size_t(cta) * tiles;
  const size_t dst_tile0 = size_t(cta) * tiles;

  if (warp == 0) {
    if (lane == 0) {
      auto s = pipe.producer_start();
      for (; s.iter() < tiles; ++s) {
        pipe.acquire(s, stage_bytes);  // the whole stage, whoever delivers it
        uint8_t* stage = stage_mem + size_t(s.index()) * stage_bytes;
        const uint4* from = src + (src_tile0 + s.iter()) * tile_vecs;
        if (mc) {
          const uint32_t slice = stage_bytes / params.cluster_size;
          const uint16_t all = uint16_t((1u << params.cluster_size) - 1u);
          ptx::cp_async_bulk_shared_cluster_global_multicast(
              stage + size_t(rank) * slice, reinterpret_cast<const uint8_t*>(from) + size_t(rank) * slice,
              slice, &pipe.full(s), all);
        } else {
          ptx::cp_async_bulk_shared_cluster_global(stage, from, stage_bytes, &pipe.full(s));
        }
        pipe.commit(s);
      }
      pipe.drain(s);  // peers may still arrive on our empty barriers until then
    }
  } else if (warp <= params.consumer_warps) {
    const uint32_t cw = warp - 1u;
    for (auto s = pipe.consumer_start(); s.iter() < tiles; ++s) {
      pipe.wait(s);
      const uint4* stage = reinterpret_cast<const uint4*>(stage_mem + size_t(s.index()) * stage_bytes);
      uint4* out = dst + (dst_tile0 + s.iter()) * tile_vecs;
      for (size_t i = size_t(cw) * 32u + lane; i < tile_vecs; i += size_t(params.consumer_warps) * 32u)
        out[i] = stage[i];
      pipe.release(s);  // after this warp's last read of the stage
    }
  }
}

// Host launcher: validates, sets the shared-memory attribute, launches with the cluster shape.
// `ctas` must be a multiple of cluster_size. Returns the launch error (the caller synchronises).
template <int Stages, bool Traced = false>
inline cudaError_t launch_pipeline_stream(const uint4* src, uint4* dst, uint32_t ctas, uint32_t tiles,
                                          const pipeline_config& cfg, trace::sink sink = {},
                                          cudaStream_t stream = nullptr) {
  if (cfg.stages != uint32_t(Stages))
    throw std::invalid_argument("launch_pipeline_stream: cfg.stages = " + std::to_string(cfg.stages) +
                                " but the kernel has " + std::to_string(Stages) + " stages");
  if (ctas == 0 || ctas % cfg.cluster_size != 0)
    throw std::invalid_argument("launch_pipeline_stream: ctas = " + std::to_string(ctas) +
                                " is not a positive multiple of cluster_size = " +
                                std::to_string(cfg.cluster_size));
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  pipeline_limits lim = query_limits(dev);
  validate(cfg, lim);  // throws, naming the limit, before the device is asked anything else
  auto kernel = pipeline_stream_kernel<Stages, Traced>;
  const size_t dyn = size_t(cfg.stages) * cfg.stage_bytes;
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dyn));
  if (e != cudaSuccess) return e;
  if (cfg.cluster_size > 1) {
    // What the driver can co-schedule for this kernel, block and shared memory.
    const uint32_t can = cluster_limit_for(kernel, cfg.block_warps * 32u, dyn);
    lim.max_cluster_size = can < lim.max_cluster_size ? can : lim.max_cluster_size;
    validate(cfg, lim);
  }

  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(ctas, 1, 1);
  lc.blockDim = dim3(cfg.block_warps * 32u, 1, 1);
  lc.dynamicSmemBytes = dyn;
  lc.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cfg.cluster_size;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  return cudaLaunchKernelEx(&lc, kernel, src, dst, tiles, uint32_t(cfg.stage_bytes), cfg.params(), sink);
}

}  // namespace hopper::apps
