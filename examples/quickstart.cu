// hopper-async quickstart: y = 2x through a 4-stage TMA pipeline. One producer thread loads tiles
// into shared memory with cp.async.bulk, completing on each stage's full barrier; four consumer
// warps wait for a stage, read it, write 2x to global memory and release the stage for the next
// load. Build: nvcc -std=c++17 -arch=sm_90a -I include examples/quickstart.cu -o quickstart
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "hopper/pipeline/pipeline_backend_device.cuh"
#include "hopper/ptx.cuh"

constexpr int kStages = 4;
constexpr uint32_t kTileFloats = 2048;  // 8 KiB per stage
constexpr uint32_t kTileBytes = kTileFloats * sizeof(float);
constexpr uint32_t kConsumerWarps = 4;

__global__ void twice(const float* x, float* y, uint32_t tiles) {
  using pipe_t = hopper::device_pipeline<kStages>;
  __shared__ pipe_t::storage ring;                                          // 4 full + 4 empty mbarriers
  __shared__ alignas(128) float stage[kStages][kTileFloats];                // 32 KiB of stages
  auto pipe = pipe_t::init(ring, hopper::pipeline_params{kConsumerWarps});  // init, fence, sync
  const uint32_t first = blockIdx.x * tiles;                                // this CTA's tiles
  if (threadIdx.x < 32) {                                                   // producer warp
    if (threadIdx.x != 0) return;
    auto s = pipe.producer_start();  // every stage starts empty
    for (; s.iter() < tiles; ++s) {
      pipe.acquire(s, kTileBytes);  // wait empty[s]; arrive.expect_tx on full[s]
      hopper::ptx::cp_async_bulk_shared_cluster_global(stage[s.index()], x + size_t(first + s.iter()) * kTileFloats,
                                                       kTileBytes, &pipe.full(s));
    }
    pipe.drain(s);  // every stage released before the CTA exits
    return;
  }
  const uint32_t me = threadIdx.x - 32;  // consumer thread 0..127
  for (auto s = pipe.consumer_start(); s.iter() < tiles; ++s) {
    pipe.wait(s);  // the stage's bytes have landed and are visible
    float* out = y + size_t(first + s.iter()) * kTileFloats;
    for (uint32_t i = me; i < kTileFloats; i += kConsumerWarps * 32) out[i] = 2.0f * stage[s.index()][i];
    pipe.release(s);  // this thread's reads are done: the producer may refill the stage
  }
}

int main() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) || major != 9 || minor != 0) {
    std::printf("quickstart: needs an sm_90 GPU (H100, H200)\n");
    return 0;
  }
  const uint32_t ctas = 132, tiles = 64;
  const size_t n = size_t(ctas) * tiles * kTileFloats;
  std::vector<float> hx(n), hy(n);
  for (size_t i = 0; i < n; ++i) hx[i] = float(i % 1000) * 0.5f;
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, n * 4) || cudaMalloc(&y, n * 4) || cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice) ||
      cudaMemset(y, 0xff, n * 4)) {
    std::printf("quickstart: CUDA setup failed\n");
    return 1;
  }
  twice<<<ctas, 32 + kConsumerWarps * 32>>>(x, y, tiles);
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess || cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost)) {
    std::printf("quickstart: %s\n", cudaGetErrorString(e));
    return 1;
  }
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += hy[i] != 2.0f * hx[i];
  std::printf("quickstart: %zu floats through %d stages, %zu wrong\n", n, kStages, wrong);
  cudaFree(x);
  cudaFree(y);
  return wrong == 0 ? 0 : 1;
}
