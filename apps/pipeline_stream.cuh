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
#include "apps/pipeline_stream_plan.hpp"
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

// Host launcher: plans (apps/pipeline_stream_plan.hpp, which validates), sets the shared-memory
// attribute, launches the plan. `ctas` must be a multiple of cluster_size. Returns the launch
// error (the caller synchronises).
template <int Stages, bool Traced = false>
inline cudaError_t launch_pipeline_stream(const uint4* src, uint4* dst, uint32_t ctas, uint32_t tiles,
                                          const pipeline_config& cfg, trace::sink sink = {},
                                          cudaStream_t stream = nullptr) {
  if (cfg.stages != uint32_t(Stages))
    throw std::invalid_argument("launch_pipeline_stream: cfg.stages = " + std::to_string(cfg.stages) +
                                " but the kernel has " + std::to_string(Stages) + " stages");
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  pipeline_limits lim = query_limits(dev);
  // Throws, naming the value and the limit, before the device is asked anything else.
  pipeline_stream_plan plan = plan_pipeline_stream(cfg, ctas, tiles, lim);
  auto kernel = pipeline_stream_kernel<Stages, Traced>;
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(plan.stage_smem));
  if (e != cudaSuccess) return e;
  if (plan.cluster > 1) {
    // What the driver can co-schedule for this kernel, block and shared memory.
    const uint32_t can = cluster_limit_for(kernel, plan.threads, plan.stage_smem);
    lim.max_cluster_size = can < lim.max_cluster_size ? can : lim.max_cluster_size;
    plan = plan_pipeline_stream(cfg, ctas, tiles, lim);
  }

  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(plan.ctas, 1, 1);
  lc.blockDim = dim3(plan.threads, 1, 1);
  lc.dynamicSmemBytes = plan.stage_smem;
  lc.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = plan.cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  return cudaLaunchKernelEx(&lc, kernel, src, dst, plan.tiles, plan.stage_bytes, plan.params, sink);
}

}  // namespace hopper::apps
