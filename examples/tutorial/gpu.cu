// The tutorial's body on the GPU (docs/tutorial_model.md): the same double_tile, called from a
// __global__ entry with hopper::device_target. Prints why and exits 0 without an sm_90 device.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "body.hpp"
#include "hopper/target/device_target.cuh"

__global__ void double_tile_kernel(const uint32_t* src, uint32_t* dst) {
  __shared__ uint64_t bar;
  __shared__ alignas(128) uint32_t tile[tutorial::kWords];
  hopper::device_target t;
  tutorial::double_tile(t, bar, hopper::smem<uint32_t>(tile), hopper::gmem<const uint32_t>(src),
                        hopper::gmem<uint32_t>(dst), 0u);
}

int main() {
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ||
      major != 9) {
    std::printf("tutorial gpu: needs an sm_90 GPU (H100, H200)\n");
    return 0;
  }
  std::vector<uint32_t> in(tutorial::kWords), out(tutorial::kWords);
  for (uint32_t i = 0; i < tutorial::kWords; ++i) in[i] = i * 7 + 1;
  uint32_t *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, tutorial::kBytes) || cudaMalloc(&dst, tutorial::kBytes) ||
      cudaMemcpy(src, in.data(), tutorial::kBytes, cudaMemcpyHostToDevice)) {
    std::printf("tutorial gpu: CUDA setup failed\n");
    return 1;
  }
  double_tile_kernel<<<1, 64>>>(src, dst);
  if (cudaDeviceSynchronize() || cudaMemcpy(out.data(), dst, tutorial::kBytes, cudaMemcpyDeviceToHost)) {
    std::printf("tutorial gpu: the kernel failed\n");
    return 1;
  }
  int wrong = 0;
  for (uint32_t i = 0; i < tutorial::kWords; ++i) wrong += out[i] != 2 * in[i];
  std::printf("tutorial gpu: %d of %u words wrong\n", wrong, tutorial::kWords);
  return wrong == 0 ? 0 : 1;
}
