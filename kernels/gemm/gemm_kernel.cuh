// The GEMM's __global__ entry: the body (gemm_body.hpp) on the device target, over the CTA's
// shared memory laid out as kernel_traits::shared_storage from a 1024-byte aligned base. The
// roles, the ring and the work schedule are described there.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <cstdio>

#include "hopper/objects/tensor_map.hpp"
#include "hopper/target/device_target.cuh"
#include "kernels/gemm/gemm_body.hpp"
#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/gemm_traits.hpp"
#include "kernels/gemm/tile_scheduler.hpp"

namespace hopper::gemm {

// The kernel's run-time parameters (gemm_body.hpp's body_params on the device target): the body
// reads them where the launch put them, in the kernel's parameter space.
using kernel_params = body_params<hopper::basic_device_target<false>>;

template <class T>
__global__ void __launch_bounds__(T::THREADS, 1)
    gemm_kernel(const __grid_constant__ hopper::tensor_map tma_a, const __grid_constant__ hopper::tensor_map tma_b,
                const __grid_constant__ hopper::tensor_map tma_c, const kernel_params p) {
  using target = hopper::basic_device_target<false>;
  // Declared 1024-byte aligned, so the layout's offsets are the shared-window addresses' low bits
  // at compile time: nothing is aligned at run time, and the stage descriptors are constants.
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  auto& st = *reinterpret_cast<typename T::shared_storage*>(smem_raw);
  target t;
  if (const uint32_t base = t.smem_addr(smem<uint8_t>(smem_raw)); t.thread() == 0 && base % 1024u != 0) {
    printf("hopper::gemm: dynamic shared memory at 0x%x is not 1024-byte aligned\n", base);
    __trap();
  }
  const body_smem<T, target> sm{smem<uint8_t>(st.a[0].data), smem<uint8_t>(st.b[0].data),
                                smem<uint8_t>(st.epi[0][0][0].data), st.ring, smem<int>(st.last_flag)};
  gemm_body<T>(t, sm, tma_a, tma_b, tma_c, p);
}

}  // namespace hopper::gemm
