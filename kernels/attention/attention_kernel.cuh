// The attention kernel's __global__ entry: the body (attention_body.hpp) on the device target, over
// the CTA's shared memory laid out as attention_traits::shared_storage from a 1024-byte aligned
// base.
#pragma once
#include <cstdint>
#include <cstdio>

#include "hopper/objects/tensor_map.hpp"
#include "hopper/target/device_target.cuh"
#include "kernels/attention/attention_body.hpp"
#include "kernels/attention/attention_traits.hpp"

namespace hopper::attention {

// The body's run-time parameters on the device target, in the kernel's parameter space.
using kernel_params = body_params<hopper::basic_device_target<false>>;

template <class T>
__global__ void __launch_bounds__(T::THREADS, 1)
    attention_kernel(const __grid_constant__ hopper::tensor_map tma_q, const __grid_constant__ hopper::tensor_map tma_k,
                     const __grid_constant__ hopper::tensor_map tma_v, const __grid_constant__ hopper::tensor_map tma_o,
                     const kernel_params p) {
  using target = hopper::basic_device_target<false>;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  auto& st = *reinterpret_cast<typename T::shared_storage*>(smem_raw);
  target t;
  if (const uint32_t base = t.smem_addr(smem<uint8_t>(smem_raw)); t.thread() == 0 && base % 1024u != 0) {
    printf("hopper::attention: dynamic shared memory at 0x%x is not 1024-byte aligned\n", base);
    __trap();
  }
  const body_smem<T, target> sm{smem<uint8_t>(st.q[0].t[0].data),
                                smem<uint8_t>(st.k[0].t[0].data),
                                smem<uint8_t>(st.v[0].t.data),
                                smem<uint8_t>(reinterpret_cast<uint8_t*>(st.tile)),
                                st.k_ring,
                                st.v_ring,
                                st.q_ring};
  attention_body<T>(t, sm, tma_q, tma_k, tma_v, tma_o, p);
}

}  // namespace hopper::attention
