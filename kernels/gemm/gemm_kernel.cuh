// The GEMM's __global__ entry: the body (gemm_body.hpp) on the device target, over the CTA's
// shared memory laid out as kernel_traits::shared_storage from a 1024-byte aligned base. The
// roles, the ring and the work schedule are described there.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "hopper/device_target.cuh"
#include "hopper/tensor_map.hpp"
#include "kernels/gemm/gemm_body.hpp"
#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/gemm_traits.hpp"
#include "kernels/gemm/tile_scheduler.hpp"

namespace hopper::gemm {

// The kernel's run-time parameters (gemm_body.hpp's body_params on the device target): the body
// reads them where the launch put them, in the kernel's parameter space.
using kernel_params = body_params<hopper::basic_device_target<false>>;

template <class T>
__global__ void __launch_bounds__(384, 1)
    gemm_kernel(const __grid_constant__ hopper::tensor_map tma_a, const __grid_constant__ hopper::tensor_map tma_b,
                const __grid_constant__ hopper::tensor_map tma_c, const kernel_params p) {
  using target = hopper::basic_device_target<false>;
  extern __shared__ uint8_t smem_raw[];
  auto& st =
      *reinterpret_cast<typename T::shared_storage*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  // One word per consumer warpgroup: thread 0's "this split is the last" broadcast to its warpgroup.
  __shared__ int last_flag[T::CONSUMERS];
  target t;
  const body_smem<T, target> sm{smem<uint8_t>(st.a[0]), smem<uint8_t>(st.b[0]), smem<uint8_t>(st.epi[0]), st.ring,
                                smem<int>(last_flag)};
  gemm_body<T>(t, sm, tma_a, tma_b, tma_c, p);
}

}  // namespace hopper::gemm
