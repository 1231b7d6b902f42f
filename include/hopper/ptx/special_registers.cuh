// Special registers (PTX ISA, "Special Registers"): where this CTA sits in its cluster, and the global timer the
// bounded waits read. Reads are asm volatile without a "memory" clobber: they touch no memory,
// and volatile only keeps %globaltimer reads where they are written (its value changes).
#pragma once
#include <cstdint>

#include "arch.cuh"

namespace hopper::ptx {

#define HOPPER_PTX_SREG_U32(NAME, REG)              \
  __device__ __forceinline__ uint32_t NAME() {      \
    HOPPER_PTX_NEEDS_SM90(NAME);                    \
    uint32_t v;                                     \
    asm volatile("mov.u32 %0, " REG ";" : "=r"(v)); \
    return v;                                       \
  }
// The same for registers every architecture has.
#define HOPPER_PTX_SREG_U32_ANY(NAME, REG)          \
  __device__ __forceinline__ uint32_t NAME() {      \
    uint32_t v;                                     \
    asm volatile("mov.u32 %0, " REG ";" : "=r"(v)); \
    return v;                                       \
  }

// mov.u32 %r, %cluster_ctarank: this CTA's rank in its cluster, 0..nctarank-1.
HOPPER_PTX_SREG_U32(cluster_ctarank, "%%cluster_ctarank")
// mov.u32 %r, %cluster_nctarank: the number of CTAs in the cluster.
HOPPER_PTX_SREG_U32(cluster_nctarank, "%%cluster_nctarank")
// mov.u32 %r, %cluster_ctaid.{x,y,z}: this CTA's coordinates in its cluster.
HOPPER_PTX_SREG_U32(cluster_ctaid_x, "%%cluster_ctaid.x")
HOPPER_PTX_SREG_U32(cluster_ctaid_y, "%%cluster_ctaid.y")
HOPPER_PTX_SREG_U32(cluster_ctaid_z, "%%cluster_ctaid.z")
// mov.u32 %r, %cluster_nctaid.{x,y,z}: the cluster's shape in CTAs.
HOPPER_PTX_SREG_U32(cluster_nctaid_x, "%%cluster_nctaid.x")
HOPPER_PTX_SREG_U32(cluster_nctaid_y, "%%cluster_nctaid.y")
HOPPER_PTX_SREG_U32(cluster_nctaid_z, "%%cluster_nctaid.z")
// mov.u32 %r, %clusterid.{x,y,z}: the cluster's coordinates in the grid.
HOPPER_PTX_SREG_U32(clusterid_x, "%%clusterid.x")
HOPPER_PTX_SREG_U32(clusterid_y, "%%clusterid.y")
HOPPER_PTX_SREG_U32(clusterid_z, "%%clusterid.z")
// mov.u32 %r, %nclusterid.{x,y,z}: the grid's shape in clusters.
HOPPER_PTX_SREG_U32(nclusterid_x, "%%nclusterid.x")
HOPPER_PTX_SREG_U32(nclusterid_y, "%%nclusterid.y")
HOPPER_PTX_SREG_U32(nclusterid_z, "%%nclusterid.z")
// mov.u32 %r, %dynamic_smem_size; bytes of dynamic shared memory of this launch.
HOPPER_PTX_SREG_U32_ANY(dynamic_smem_size, "%%dynamic_smem_size")
// mov.u32 %r, %total_smem_size; bytes of shared memory (static + dynamic) of this CTA.
HOPPER_PTX_SREG_U32_ANY(total_smem_size, "%%total_smem_size")
// mov.u32 %r, %smid; the SM this CTA runs on (diagnostics only: it may change over time).
HOPPER_PTX_SREG_U32_ANY(smid, "%%smid")

#undef HOPPER_PTX_SREG_U32
#undef HOPPER_PTX_SREG_U32_ANY

// mov.u32 %r, %is_explicit_cluster; true when launched with a cluster dimension.
__device__ __forceinline__ bool is_explicit_cluster() {
  HOPPER_PTX_NEEDS_SM90(is_explicit_cluster);
  uint32_t v;
  asm volatile("{\n\t.reg .pred p;\n\tmov.pred p, %%is_explicit_cluster;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(v));
  return v != 0;
}

// mov.u64 %r, %globaltimer; nanoseconds of a global clock (bounded waits).
__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  return v;
}

}  // namespace hopper::ptx
