// Ordinary 16-byte loads and stores of the generic proxy: the other half of a copy
// whose loads the copy engine performs. A streaming copy reads a stage that a bulk load filled
// (ld.shared, after the stage's full barrier) and writes it out from registers (st.global), so
// the stores leave the SM through the load/store units of many warps instead of its one TMA unit.
// Every asm is volatile; the shared loads and the stores carry a "memory" clobber: the loads must
// stay after the mbarrier wait that made the stage visible and before the arrive that hands it
// back; the stores write memory the compiler does not see. ld.global.nc has none (see there).
#pragma once
#include <cstdint>

#include "common.cuh"

namespace hopper::ptx {

// ld.shared.v4.u32 {a, b, c, d}, [addr]: 16 bytes of this CTA's shared memory, 16-byte aligned.
__device__ __forceinline__ uint4 ld_shared_v4_u32(const void* smem) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(smem_addr(smem))
               : "memory");
  return v;
}

// ld.global.nc.v4.u32 {a, b, c, d}, [addr]: 16 bytes of global memory, 16-byte aligned,
// through the non-coherent (read-only) path: nothing may write them while the kernel runs. No
// "memory" clobber: such data cannot change under the load, so it orders nothing, and leaving the
// compiler free to hoist it lets several loads be in flight at once; volatile keeps it issued.
__device__ __forceinline__ uint4 ld_global_nc_v4_u32(const void* gmem) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(gmem));
  return v;
}

// st.global.v4.u32 [addr], {a, b, c, d}: 16 bytes, 16-byte aligned, default (.wb) caching.
__device__ __forceinline__ void st_global_v4_u32(void* gmem, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(gmem), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// st.global.cs.v4.u32 [addr], {a, b, c, d}: the streaming form: the lines are likely
// accessed once, so the caches may evict them first.
__device__ __forceinline__ void st_global_cs_v4_u32(void* gmem, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(gmem), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// st.global.L2::cache_hint.v4.u32 [addr], {a, b, c, d}, policy: with an L2 eviction
// policy from createpolicy.
__device__ __forceinline__ void st_global_L2_cache_hint_v4_u32(void* gmem, uint4 v, uint64_t l2_policy) {
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(gmem), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w), "l"(l2_policy)
               : "memory");
}

}  // namespace hopper::ptx
