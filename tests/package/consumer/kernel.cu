// A consumer's kernel in a multi-architecture build (80;90a): the Hopper path is compiled only
// where it exists, the rest everywhere; the library's headers build for both.
#include <cstdint>

#include "hopper/objects/mbarrier.cuh"
#include "hopper/pipeline/pipeline_backend_device.cuh"
#include "hopper/ptx.cuh"

__global__ void consumer_kernel(uint32_t* out) {
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) hopper::ptx::mbarrier_init(&bar, 1);
  __syncthreads();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0) (void)hopper::mbarrier(bar).arrive();  // mbarrier.arrive.release.cta: sm_90
  out[threadIdx.x] = hopper::ptx::cluster_ctarank();
#else
  out[threadIdx.x] = threadIdx.x;
#endif
}
