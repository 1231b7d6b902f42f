// hopper::pipeline on the GPU: the device target (hopper/target/device_target.cuh) is its barrier
// backend, the hardware mbarrier in shared memory driven through the PTX layer; and what the host
// asks the device before a launch (its limits, the cluster size a kernel can be given).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "hopper/pipeline/pipeline.hpp"
#include "hopper/target/device_target.cuh"

namespace hopper {

// A pipeline on the GPU: `device_pipeline<4>` is four stages of hardware mbarriers.
template <int Stages, bool Traced = (HOPPER_TRACE != 0)>
using device_pipeline = pipeline<Stages, basic_device_target<Traced>>;

// ---- host: what this device allows ------------------------------------------------------------

// The limits validate() checks against, read from device `device`. Throws naming the call that
// failed. The cluster limit is the portable 8 where the device can launch clusters at all, 1 where
// it cannot (cluster_limit_for() asks the driver about one kernel).
inline pipeline_limits query_limits(int device = 0) {
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
  };
  int smem = 0, threads = 0, cluster = 0;
  check(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        "cudaDevAttrMaxSharedMemoryPerBlockOptin");
  check(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerBlock, device), "cudaDevAttrMaxThreadsPerBlock");
  check(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, device), "cudaDevAttrClusterLaunch");
  pipeline_limits lim;
  lim.smem_per_block = size_t(smem);
  lim.max_threads_per_block = uint32_t(threads);
  lim.max_cluster_size = cluster ? 8u : 1u;
  return lim;
}

// The largest cluster the driver can co-schedule for `kernel` with this block and shared memory
// (cudaOccupancyMaxPotentialClusterSize). Set the kernel's dynamic shared-memory attribute first.
template <class Kernel>
inline uint32_t cluster_limit_for(Kernel* kernel, uint32_t block_threads, size_t smem_bytes) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(1, 1, 1);
  cfg.blockDim = dim3(block_threads, 1, 1);
  cfg.dynamicSmemBytes = smem_bytes;
  int n = 0;
  const cudaError_t e = cudaOccupancyMaxPotentialClusterSize(&n, kernel, &cfg);
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cudaOccupancyMaxPotentialClusterSize: ") + cudaGetErrorString(e));
  return uint32_t(n);
}

}  // namespace hopper
