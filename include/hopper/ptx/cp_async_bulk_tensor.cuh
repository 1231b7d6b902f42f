// cp.async.bulk.tensor (TMA; PTX ISA: "Tensor Copy Instructions", "Tensor Map"): tiled tensor
// copies described by a tensor map, 1-D to 5-D, performed by the async proxy. The number of
// coordinates picks the .Nd form.
//
// The map operand is a CUtensorMap (a hopper::tensor_map converts to its own, its first member)
// living in kernel parameter space (`const __grid_constant__`), constant or global memory; the
// instruction takes its generic address. Never pass a copy held in a local variable: its generic
// address is in local memory, which the copy engine cannot read. Coordinates are signed element
// indices, innermost first; boxes reaching outside the tensor are filled (zeros or NaN, per the
// map) on load and clipped on store. The shared-memory box must be 128-byte aligned, and aligned
// to the whole swizzle pattern (hopper::swizzle_alignment) for the swizzle to be the documented one.
//
// Every asm is volatile with a "memory" clobber: the copy reads or writes memory behind the
// compiler's back, so the stores that fill a source and the loads that read a destination must
// stay on their side of the issue.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "common.cuh"

namespace hopper::ptx {

// The generic address of a tensor map, as the [tensorMap, ...] operand takes it.
__device__ __forceinline__ uint64_t tensor_map_addr(const CUtensorMap& m) { return reinterpret_cast<uint64_t>(&m); }

namespace detail {
template <class... C>
__device__ __forceinline__ constexpr void check_coords() {
  static_assert(sizeof...(C) >= 1 && sizeof...(C) <= 5, "cp.async.bulk.tensor: 1 to 5 coordinates (.1d to .5d)");
  static_assert((std::is_integral_v<C> && ...), "cp.async.bulk.tensor: coordinates are integers (s32)");
}
}  // namespace detail

// ---- loads: global -> shared::cluster, completing on an mbarrier ---------------------------

// cp.async.bulk.tensor.{1..5}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// [dstMem], [tensorMap, {c0, ...}], [mbar]: one box into this CTA's shared
// memory; its box_bytes complete_tx on `bar` when they have landed.
template <class... C>
__device__ __forceinline__ void cp_async_bulk_tensor_shared_cluster_global(void* dst_smem, const CUtensorMap& map,
                                                                           uint64_t* bar, C... coords) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_tensor_shared_cluster_global);
  detail::check_coords<C...>();
  const int32_t c[] = {static_cast<int32_t>(coords)...};
  const uint32_t d = smem_addr(dst_smem), b = smem_addr(bar);
  const uint64_t m = tensor_map_addr(map);
  if constexpr (sizeof...(C) == 1) {
    asm volatile(
        "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3}], [%2];" ::"r"(d),
        "l"(m), "r"(b), "r"(c[0])
        : "memory");
  } else if constexpr (sizeof...(C) == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(d),
        "l"(m), "r"(b), "r"(c[0]), "r"(c[1])
        : "memory");
  } else if constexpr (sizeof...(C) == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(d),
        "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2])
        : "memory");
  } else if constexpr (sizeof...(C) == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(d),
        "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];" ::"r"(d),
        "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
}

// cp.async.bulk.tensor.{1..5}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// .L2::cache_hint [dstMem], [tensorMap, {c0, ...}], [mbar], policy: the same with an
// L2 eviction policy (from createpolicy).
template <class... C>
__device__ __forceinline__ void cp_async_bulk_tensor_shared_cluster_global_hint(void* dst_smem, const CUtensorMap& map,
                                                                                uint64_t* bar, uint64_t l2_policy,
                                                                                C... coords) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_tensor_shared_cluster_global_hint);
  detail::check_coords<C...>();
  const int32_t c[] = {static_cast<int32_t>(coords)...};
  const uint32_t d = smem_addr(dst_smem), b = smem_addr(bar);
  const uint64_t m = tensor_map_addr(map);
  if constexpr (sizeof...(C) == 1) {
    asm volatile(
        "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%4}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "l"(l2_policy), "r"(c[0])
        : "memory");
  } else if constexpr (sizeof...(C) == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%4, %5}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "l"(l2_policy), "r"(c[0]), "r"(c[1])
        : "memory");
  } else if constexpr (sizeof...(C) == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%4, %5, %6}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "l"(l2_policy), "r"(c[0]), "r"(c[1]), "r"(c[2])
        : "memory");
  } else if constexpr (sizeof...(C) == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%4, %5, %6, %7}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "l"(l2_policy), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "l"(l2_policy), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
}

// cp.async.bulk.tensor.{1..5}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// .multicast::cluster [dstMem], [tensorMap, {c0, ...}], [mbar], ctaMask: one read of
// the box lands at the same shared offset in every CTA of the cluster whose bit is set in
// cta_mask, and completes box_bytes on the barrier at the same offset in each of them. The
// cluster must have synchronised (barrier.cluster) after the peers' mbarrier.init.
template <class... C>
__device__ __forceinline__ void cp_async_bulk_tensor_shared_cluster_global_multicast(void* dst_smem,
                                                                                     const CUtensorMap& map,
                                                                                     uint64_t* bar, uint16_t cta_mask,
                                                                                     C... coords) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_tensor_shared_cluster_global_multicast);
  detail::check_coords<C...>();
  const int32_t c[] = {static_cast<int32_t>(coords)...};
  const uint32_t d = smem_addr(dst_smem), b = smem_addr(bar);
  const uint64_t m = tensor_map_addr(map);
  if constexpr (sizeof...(C) == 1) {
    asm volatile(
        "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%4}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "h"(cta_mask), "r"(c[0])
        : "memory");
  } else if constexpr (sizeof...(C) == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%4, %5}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "h"(cta_mask), "r"(c[0]), "r"(c[1])
        : "memory");
  } else if constexpr (sizeof...(C) == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%4, %5, %6}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "h"(cta_mask), "r"(c[0]), "r"(c[1]), "r"(c[2])
        : "memory");
  } else if constexpr (sizeof...(C) == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%4, %5, %6, %7}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "h"(cta_mask), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;" ::"r"(d),
        "l"(m), "r"(b), "h"(cta_mask), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
}

// ---- stores: shared::cta -> global, tracked by the bulk async-group -------------------------

// cp.async.bulk.tensor.{1..5}d.global.shared::cta.tile.bulk_group [tensorMap, {c0, ...}], [srcMem];
// one box from this CTA's shared memory to global, elements outside the tensor
// skipped. Generic writes to the source need fence.proxy.async.shared::cta first;
// reuse the source only after cp.async.bulk.commit_group + wait_group.read.
template <class... C>
__device__ __forceinline__ void cp_async_bulk_tensor_global_shared_cta(const CUtensorMap& map, const void* src_smem,
                                                                       C... coords) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_tensor_global_shared_cta);
  detail::check_coords<C...>();
  const int32_t c[] = {static_cast<int32_t>(coords)...};
  const uint32_t s = smem_addr(src_smem);
  const uint64_t m = tensor_map_addr(map);
  if constexpr (sizeof...(C) == 1) {
    asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%2}], [%1];" ::"l"(m), "r"(s),
                 "r"(c[0])
                 : "memory");
  } else if constexpr (sizeof...(C) == 2) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(m), "r"(s),
                 "r"(c[0]), "r"(c[1])
                 : "memory");
  } else if constexpr (sizeof...(C) == 3) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(m),
                 "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2])
                 : "memory");
  } else if constexpr (sizeof...(C) == 4) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(m),
                 "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
                 : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(m), "r"(s),
        "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
}

// cp.async.bulk.tensor.{1..5}d.global.shared::cta.tile.bulk_group.L2::cache_hint
// [tensorMap, {c0, ...}], [srcMem], policy: the store with an L2 eviction policy.
template <class... C>
__device__ __forceinline__ void cp_async_bulk_tensor_global_shared_cta_hint(const CUtensorMap& map,
                                                                            const void* src_smem, uint64_t l2_policy,
                                                                            C... coords) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_tensor_global_shared_cta_hint);
  detail::check_coords<C...>();
  const int32_t c[] = {static_cast<int32_t>(coords)...};
  const uint32_t s = smem_addr(src_smem);
  const uint64_t m = tensor_map_addr(map);
  if constexpr (sizeof...(C) == 1) {
    asm volatile(
        "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%3}], [%1], %2;" ::"l"(m),
        "r"(s), "l"(l2_policy), "r"(c[0])
        : "memory");
  } else if constexpr (sizeof...(C) == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%3, %4}], [%1], %2;" ::"l"(m),
        "r"(s), "l"(l2_policy), "r"(c[0]), "r"(c[1])
        : "memory");
  } else if constexpr (sizeof...(C) == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%3, %4, %5}], [%1], %2;" ::"l"(
            m),
        "r"(s), "l"(l2_policy), "r"(c[0]), "r"(c[1]), "r"(c[2])
        : "memory");
  } else if constexpr (sizeof...(C) == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group.L2::cache_hint"
        " [%0, {%3, %4, %5, %6}], [%1], %2;" ::"l"(m),
        "r"(s), "l"(l2_policy), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group.L2::cache_hint"
        " [%0, {%3, %4, %5, %6, %7}], [%1], %2;" ::"l"(m),
        "r"(s), "l"(l2_policy), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
}

// ---- prefetch ----------------------------------------------------------------------------------

// cp.async.bulk.prefetch.tensor.{1..5}d.L2.global.tile [tensorMap, {c0, ...}]: a hint
// to bring one box into L2; writes nothing visible. The "memory" clobber keeps it where it was
// placed relative to the copies it is meant to run ahead of.
template <class... C>
__device__ __forceinline__ void cp_async_bulk_prefetch_tensor_L2_global(const CUtensorMap& map, C... coords) {
  HOPPER_PTX_NEEDS_SM90(cp_async_bulk_prefetch_tensor_L2_global);
  detail::check_coords<C...>();
  const int32_t c[] = {static_cast<int32_t>(coords)...};
  const uint64_t m = tensor_map_addr(map);
  if constexpr (sizeof...(C) == 1) {
    asm volatile("cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%0, {%1}];" ::"l"(m), "r"(c[0]) : "memory");
  } else if constexpr (sizeof...(C) == 2) {
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(m), "r"(c[0]), "r"(c[1])
                 : "memory");
  } else if constexpr (sizeof...(C) == 3) {
    asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(m), "r"(c[0]), "r"(c[1]),
                 "r"(c[2])
                 : "memory");
  } else if constexpr (sizeof...(C) == 4) {
    asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];" ::"l"(m), "r"(c[0]),
                 "r"(c[1]), "r"(c[2]), "r"(c[3])
                 : "memory");
  } else {
    asm volatile("cp.async.bulk.prefetch.tensor.5d.L2.global.tile [%0, {%1, %2, %3, %4, %5}];" ::"l"(m), "r"(c[0]),
                 "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
                 : "memory");
  }
}

// prefetch.tensormap [addr]: brings the 128-byte map itself into the descriptor
// cache, so the first copy does not wait for it. No memory is written; "memory" keeps it early.
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap& map) {
  HOPPER_PTX_NEEDS_SM90(prefetch_tensormap);
  asm volatile("prefetch.tensormap [%0];" ::"l"(tensor_map_addr(map)) : "memory");
}

}  // namespace hopper::ptx
