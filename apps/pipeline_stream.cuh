// A streaming kernel through hopper::pipeline, shared by the showcase and the GPU pipeline tests.
// Its body, with the layout of the work, is apps/pipeline_stream_body.hpp, written once over a
// target: this entry runs it with the device target, tests/host/pipeline_model.cpp and the
// showcase's no-GPU path with the model's (every thread a task). The entry compiles to the same
// instructions as the hand-written kernel it replaced (tests/host/kernels_sass.cpp); a few
// independent instructions come in another order.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "apps/pipeline_stream_body.hpp"
#include "hopper/objects/views.cuh"
#include "hopper/pipeline/pipeline.hpp"
#include "hopper/pipeline/pipeline_backend_device.cuh"
#include "hopper/target/device_target.cuh"

namespace hopper::apps {

template <int Stages, bool Traced>
__global__ void __launch_bounds__(1024)
    pipeline_stream_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, uint32_t tiles, uint32_t stage_bytes,
                           pipeline_params params, trace::sink sink) {
  using target_t = basic_device_target<Traced>;
  __shared__ typename pipeline<Stages, target_t>::storage ring;
  extern __shared__ __align__(128) uint8_t stage_mem[];

  target_t t(sink);
  pipeline_stream_body<Stages>(t, ring, smem<uint8_t>(stage_mem), gmem<const uint4>(src), gmem<uint4>(dst), tiles,
                               stage_bytes, params);
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
                                " is not a positive multiple of cluster_size = " + std::to_string(cfg.cluster_size));
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
