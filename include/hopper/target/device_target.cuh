// The device target: everything a kernel body does, as calls on one object, each the PTX-layer
// function of the same name (or the CUDA built-in it names). A kernel is written once as a
// template over its target; its __global__ entry instantiates it with this one, and a host test
// instantiates it with the model's (hopper/model/target.hpp), which has the same members and
// runs them on the executable model. The object is empty (or holds the trace sink), every member
// is __forceinline__, so a body compiles to the SASS of the hand-written kernel
// (tests/host/kernels_sass.cpp checks it instruction for instruction).
//
// It is also hopper::pipeline's backend: the pipeline calls these same members (hopper/pipeline/pipeline.hpp
// lists them), so a kernel and its pipeline speak one vocabulary.
//
// Member groups:
//   identity      thread, lane, warp, warpgroup, block_threads, block, grid, cluster_rank/size
//   memory        gmem<E>/smem<E>/dsmem<E> views (hopper/objects/views.cuh), ld_shared_v4_u32,
//                 st_global_*_v4_u32, atomic_add, mapa
//   mbarrier      mbarrier_init, arrive forms (.release/.relaxed, .cta/.cluster, expect_tx,
//                 remote, a converged warp's lanes on each CTA), try_wait/test_wait/wait by
//                 parity (.acquire/.relaxed)
//   fences        fence_proxy_async{,_shared_cta,_shared_cluster,_global}, fence_mbarrier_init,
//                 fence_acq_rel<scope>, fence_sc<scope>
//   copies        cp.async.bulk (global<->shared, shared::cta -> shared::cluster, multicast, L2
//                 hint), cp.async.bulk.tensor (load, store, multicast, hint), prefetches,
//                 createpolicy, bulk groups (commit, wait, wait.read)
//   sync          syncthreads(_or), syncwarp, bar.sync/bar.arrive, barrier.cluster, elect
//   other         setmaxnreg, griddepcontrol, clock64, nanosleep
//   tensor cores  smem_addr (cvta.to.shared), wgmma_fence, wgmma_m64nNk16_f32_bf16_bf16,
//                 wgmma_commit_group, wgmma_wait_group<N>, wgmma_fence_operand
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "hopper/objects/mbarrier.cuh"
#include "hopper/objects/phase.hpp"
#include "hopper/objects/tensor_map.hpp"
#include "hopper/objects/views.cuh"
#include "hopper/ptx.cuh"
#include "hopper/trace/trace.hpp"

namespace hopper {

namespace detail {

// Per-warp trace state: the sink when tracing is compiled in, nothing otherwise.
template <bool Traced>
struct pipe_trace_state {
  pipe_trace_state() = default;
  __host__ __device__ explicit pipe_trace_state(const trace::sink&) {}
};
template <>
struct pipe_trace_state<true> {
  pipe_trace_state() = default;
  __host__ __device__ explicit pipe_trace_state(const trace::sink& s) : sink(s) {}
  trace::sink sink{};
};

}  // namespace detail

// Traced = true records every pipeline event into the sink (hopper/trace/trace.hpp). The default
// follows the HOPPER_TRACE switch.
template <bool Traced = (HOPPER_TRACE != 0)>
struct basic_device_target : detail::pipe_trace_state<Traced> {
  using barrier_type = uint64_t;       // the 8-byte mbarrier object
  using tensor_map_type = tensor_map;  // a __grid_constant__ kernel parameter
  using u32x4 = uint4;                 // 16 bytes in four registers
  using f32x4 = float4;
  using f32x2 = float2;
  template <class E>
  using gmem_t = gmem<E>;
  template <class E>
  using smem_t = smem<E>;
  template <class E>
  using dsmem_t = dsmem<E>;
  static constexpr bool traced = Traced;
  static constexpr bool on_device = true;

  basic_device_target() = default;
  __host__ __device__ explicit basic_device_target(const trace::sink& s) : detail::pipe_trace_state<Traced>(s) {}

  // ---- identity (1-D blocks and grids) ----------------------------------------------------
  __device__ __forceinline__ uint32_t thread() const { return threadIdx.x; }
  __device__ __forceinline__ uint32_t lane() const { return threadIdx.x % 32u; }
  __device__ __forceinline__ uint32_t warp() const { return threadIdx.x / 32u; }
  __device__ __forceinline__ uint32_t warpgroup() const { return threadIdx.x / 128u; }
  __device__ __forceinline__ uint32_t block_threads() const { return blockDim.x; }
  __device__ __forceinline__ uint32_t block() const { return blockIdx.x; }
  __device__ __forceinline__ uint32_t grid() const { return gridDim.x; }
  // mov.u32 %r, %cluster_ctarank / %cluster_nctarank
  __device__ __forceinline__ uint32_t cluster_rank() const { return ptx::cluster_ctarank(); }
  __device__ __forceinline__ uint32_t cluster_size() const { return ptx::cluster_nctarank(); }

  // ---- memory -------------------------------------------------------------------------------
  // ld.shared.v4.u32: 16 bytes at p (16-byte aligned).
  template <class E>
  __device__ __forceinline__ uint4 ld_shared_v4_u32(smem<E> p) const {
    return ptx::ld_shared_v4_u32(p.get());
  }
  // st.global.v4.u32 / st.global.cs.v4.u32 / st.global.L2::cache_hint.v4.u32: 16 bytes at p.
  template <class E>
  __device__ __forceinline__ void st_global_v4_u32(gmem<E> p, uint4 v) const {
    ptx::st_global_v4_u32(p.get(), v);
  }
  template <class E>
  __device__ __forceinline__ void st_global_cs_v4_u32(gmem<E> p, uint4 v) const {
    ptx::st_global_cs_v4_u32(p.get(), v);
  }
  template <class E>
  __device__ __forceinline__ void st_global_L2_cache_hint_v4_u32(gmem<E> p, uint4 v, uint64_t policy) const {
    ptx::st_global_L2_cache_hint_v4_u32(p.get(), v, policy);
  }
  // atomicAdd (atom.global.add / red.global.add): element i of p += v.
  template <class E>
  __device__ __forceinline__ E atomic_add(gmem<E> p, size_t i, E v) const {
    return atomicAdd(p.get() + i, v);
  }
  // st.global.cg / ld.global.cg (__stcg / __ldcg): cached in L2 only.
  template <class E>
  __device__ __forceinline__ void st_global_cg(gmem<E> p, const E& v) const {
    __stcg(p.get(), v);
  }
  template <class E>
  __device__ __forceinline__ std::remove_const_t<E> ld_global_cg(gmem<E> p) const {
    return __ldcg(p.get());
  }
  // atom{.sem}.gpu.global.add.s32
  template <ptx::sem S, class E>
  __device__ __forceinline__ E atom_add_gpu(gmem<E> p, E v) const {
    return ptx::atom_add_gpu<S>(p.get(), v);
  }
  // mapa.shared::cluster.u32: the variable at p in CTA `rank` of the cluster.
  template <class E>
  __device__ __forceinline__ dsmem<E> mapa(smem<E> p, uint32_t rank) const {
    return dsmem<E>(ptx::mapa_shared_cluster(p.get(), rank));
  }
  __device__ __forceinline__ remote_mbarrier mapa(barrier_type& b, uint32_t rank) const {
    return remote_mbarrier(ptx::mapa_shared_cluster(&b, rank));
  }

  // ---- mbarrier -----------------------------------------------------------------------------
  // mbarrier.init.shared::cta.b64 [b], count; `name`/`index` name it in the model's reports.
  __device__ __forceinline__ void mbarrier_init(barrier_type& b, uint32_t count, const char* = nullptr,
                                                uint32_t = 0) const {
    ptx::mbarrier_init(&b, count);
  }
  // mbarrier.arrive{.sem}{.scope}.shared::cta.b64 _, [b]; returns the state token.
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ uint64_t mbarrier_arrive(barrier_type& b) const {
    return ptx::mbarrier_arrive<S, SC>(&b);
  }
  // mbarrier.arrive.expect_tx{.sem}{.scope}.shared::cta.b64 _, [b], bytes
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ uint64_t mbarrier_arrive_expect_tx(barrier_type& b, uint32_t bytes) const {
    return ptx::mbarrier_arrive_expect_tx<S, SC>(&b, bytes);
  }
  // mbarrier.arrive{.sem}{.scope}.shared::cta.b64 _, [b], count
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ uint64_t mbarrier_arrive(barrier_type& b, uint32_t count) const {
    return ptx::mbarrier_arrive<S, SC>(&b, count);
  }
  // mbarrier.arrive_drop{.sem}{.scope}.shared::cta.b64 _, [b]: arrives and leaves later phases.
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ uint64_t mbarrier_arrive_drop(barrier_type& b) const {
    return ptx::mbarrier_arrive_drop<S, SC>(&b);
  }
  // mbarrier.expect_tx.relaxed{.scope}.shared::cta.b64 [b], bytes (no arrival)
  template <ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ void mbarrier_expect_tx(barrier_type& b, uint32_t bytes) const {
    ptx::mbarrier_expect_tx<SC>(&b, bytes);
  }
  // mbarrier.inval.shared::cta.b64 [b]
  __device__ __forceinline__ void mbarrier_inval(barrier_type& b) const { ptx::mbarrier_inval(&b); }
  // mbarrier.test_wait / try_wait{.sem}{.scope}.shared::cta.b64 with the token of an arrive
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ bool mbarrier_test_wait(barrier_type& b, uint64_t token) const {
    return ptx::mbarrier_test_wait<S, SC>(&b, token);
  }
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ bool mbarrier_try_wait(barrier_type& b, uint64_t token) const {
    return ptx::mbarrier_try_wait<S, SC>(&b, token);
  }
  // mbarrier.arrive{.sem}{.scope}.shared::cluster.b64 _, [remote]: a barrier of a peer CTA.
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cluster>
  __device__ __forceinline__ void mbarrier_arrive(remote_mbarrier r) const {
    ptx::mbarrier_arrive_shared_cluster<S, SC>(r.cluster_addr());
  }
  // mbarrier.arrive.expect_tx{.sem}{.scope}.shared::cluster.b64 _, [remote], bytes
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cluster>
  __device__ __forceinline__ void mbarrier_arrive_expect_tx(remote_mbarrier r, uint32_t bytes) const {
    ptx::mbarrier_arrive_expect_tx_shared_cluster<S, SC>(r.cluster_addr(), bytes);
  }
  // The converged warp's mapa + mbarrier.arrive{.sem}{.scope}.shared::cluster.b64: lane r < n arrives
  // on the barrier at b's offset in CTA r (one instruction of the warp; lanes n..31 do nothing).
  template <ptx::sem S = ptx::sem::release, ptx::scope SC = ptx::scope::cluster>
  __device__ __forceinline__ void mbarrier_arrive_shared_cluster_lanes(barrier_type& b, uint32_t n) const {
    const uint32_t lane = threadIdx.x & 31u;
    if (lane < n) ptx::mbarrier_arrive_shared_cluster<S, SC>(ptx::mapa_shared_cluster(&b, lane));
  }
  // mbarrier.try_wait.parity{.sem}{.scope}.shared::cta.b64: true once the phase of parity p completed.
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ bool mbarrier_try_wait_parity(barrier_type& b, uint32_t p) const {
    return ptx::mbarrier_try_wait_parity<S, SC>(&b, p);
  }
  // mbarrier.test_wait.parity{.sem}{.scope}.shared::cta.b64 (never suspends)
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ bool mbarrier_test_wait_parity(barrier_type& b, uint32_t p) const {
    return ptx::mbarrier_test_wait_parity<S, SC>(&b, p);
  }
  // The try_wait.parity loop, bounded and reported under HOPPER_DEBUG_WAITS.
  template <ptx::sem S = ptx::sem::acquire, ptx::scope SC = ptx::scope::cta>
  __device__ __forceinline__ void mbarrier_wait(barrier_type& b, parity p) const {
    hopper::mbarrier(&b).wait<S, SC>(p);
  }

  // ---- fences -------------------------------------------------------------------------------
  __device__ __forceinline__ void fence_proxy_async() const { ptx::fence_proxy_async(); }
  __device__ __forceinline__ void fence_proxy_async_shared_cta() const { ptx::fence_proxy_async_shared_cta(); }
  __device__ __forceinline__ void fence_proxy_async_shared_cluster() const { ptx::fence_proxy_async_shared_cluster(); }
  __device__ __forceinline__ void fence_proxy_async_global() const { ptx::fence_proxy_async_global(); }
  __device__ __forceinline__ void fence_mbarrier_init_release_cluster() const {
    ptx::fence_mbarrier_init_release_cluster();
  }
  template <ptx::scope SC = ptx::scope::gpu>
  __device__ __forceinline__ void fence_acq_rel() const {
    ptx::fence_acq_rel<SC>();
  }
  template <ptx::scope SC = ptx::scope::gpu>
  __device__ __forceinline__ void fence_sc() const {
    ptx::fence_sc<SC>();
  }

  // ---- bulk copies --------------------------------------------------------------------------
  // cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes, [bar]
  template <class D, class S>
  __device__ __forceinline__ void cp_async_bulk_shared_cluster_global(smem<D> dst, gmem<S> src, uint32_t bytes,
                                                                      barrier_type& bar) const {
    ptx::cp_async_bulk_shared_cluster_global(dst.get(), src.get(), bytes, &bar);
  }
  // ... .L2::cache_hint [dst], [src], bytes, [bar], policy
  template <class D, class S>
  __device__ __forceinline__ void cp_async_bulk_shared_cluster_global(smem<D> dst, gmem<S> src, uint32_t bytes,
                                                                      barrier_type& bar, uint64_t policy) const {
    ptx::cp_async_bulk_shared_cluster_global(dst.get(), src.get(), bytes, &bar, policy);
  }
  // ... .multicast::cluster [dst], [src], bytes, [bar], ctaMask: the same offsets in every CTA of
  // the mask.
  template <class D, class S>
  __device__ __forceinline__ void cp_async_bulk_shared_cluster_global_multicast(smem<D> dst, gmem<S> src,
                                                                                uint32_t bytes, barrier_type& bar,
                                                                                uint16_t cta_mask) const {
    ptx::cp_async_bulk_shared_cluster_global_multicast(dst.get(), src.get(), bytes, &bar, cta_mask);
  }
  // cp.async.bulk.global.shared::cta.bulk_group [dst], [src], bytes
  template <class D, class S>
  __device__ __forceinline__ void cp_async_bulk_global_shared_cta(gmem<D> dst, smem<S> src, uint32_t bytes) const {
    ptx::cp_async_bulk_global_shared_cta(dst.get(), src.get(), bytes);
  }
  // ... .L2::cache_hint [dst], [src], bytes, policy
  template <class D, class S>
  __device__ __forceinline__ void cp_async_bulk_global_shared_cta(gmem<D> dst, smem<S> src, uint32_t bytes,
                                                                  uint64_t policy) const {
    ptx::cp_async_bulk_global_shared_cta(dst.get(), src.get(), bytes, policy);
  }
  // cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], bytes, [bar]
  template <class D, class S>
  __device__ __forceinline__ void cp_async_bulk_shared_cluster_shared_cta(dsmem<D> dst, smem<S> src, uint32_t bytes,
                                                                          remote_mbarrier bar) const {
    ptx::cp_async_bulk_shared_cluster_shared_cta(dst.addr(), src.get(), bytes, bar.cluster_addr());
  }
  // cp.async.bulk.prefetch.L2.global [src], bytes
  template <class S>
  __device__ __forceinline__ void cp_async_bulk_prefetch_L2_global(gmem<S> src, uint32_t bytes) const {
    ptx::cp_async_bulk_prefetch_L2_global(src.get(), bytes);
  }
  // cp.async.bulk.commit_group / wait_group N / wait_group.read N
  __device__ __forceinline__ void cp_async_bulk_commit_group() const { ptx::cp_async_bulk_commit_group(); }
  template <int N>
  __device__ __forceinline__ void cp_async_bulk_wait_group() const {
    ptx::cp_async_bulk_wait_group<N>();
  }
  template <int N>
  __device__ __forceinline__ void cp_async_bulk_wait_group_read() const {
    ptx::cp_async_bulk_wait_group_read<N>();
  }

  // ---- tensor copies ------------------------------------------------------------------------
  // cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [map, {c...}], [bar]
  template <class D, class... C>
  __device__ __forceinline__ void cp_async_bulk_tensor_shared_cluster_global(smem<D> dst, const tensor_map& map,
                                                                             barrier_type& bar, C... c) const {
    ptx::cp_async_bulk_tensor_shared_cluster_global(dst.get(), map, &bar, c...);
  }
  // ... .L2::cache_hint [dst], [map, {c...}], [bar], policy
  template <class D, class... C>
  __device__ __forceinline__ void cp_async_bulk_tensor_shared_cluster_global_hint(smem<D> dst, const tensor_map& map,
                                                                                  barrier_type& bar, uint64_t policy,
                                                                                  C... c) const {
    ptx::cp_async_bulk_tensor_shared_cluster_global_hint(dst.get(), map, &bar, policy, c...);
  }
  // ... .multicast::cluster [dst], [map, {c...}], [bar], ctaMask
  template <class D, class... C>
  __device__ __forceinline__ void cp_async_bulk_tensor_shared_cluster_global_multicast(
      smem<D> dst, const tensor_map& map, barrier_type& bar, uint16_t cta_mask, C... c) const {
    ptx::cp_async_bulk_tensor_shared_cluster_global_multicast(dst.get(), map, &bar, cta_mask, c...);
  }
  // cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [map, {c...}], [src]
  template <class S, class... C>
  __device__ __forceinline__ void cp_async_bulk_tensor_global_shared_cta(const tensor_map& map, smem<S> src,
                                                                         C... c) const {
    ptx::cp_async_bulk_tensor_global_shared_cta(map, src.get(), c...);
  }
  // ... .L2::cache_hint [map, {c...}], [src], policy
  template <class S, class... C>
  __device__ __forceinline__ void cp_async_bulk_tensor_global_shared_cta_hint(const tensor_map& map, smem<S> src,
                                                                              uint64_t policy, C... c) const {
    ptx::cp_async_bulk_tensor_global_shared_cta_hint(map, src.get(), policy, c...);
  }
  // cp.async.bulk.prefetch.tensor.Nd.L2.global.tile [map, {c...}]
  template <class... C>
  __device__ __forceinline__ void cp_async_bulk_prefetch_tensor_L2_global(const tensor_map& map, C... c) const {
    ptx::cp_async_bulk_prefetch_tensor_L2_global(map, c...);
  }
  // prefetch.tensormap [map]
  __device__ __forceinline__ void prefetch_tensormap(const tensor_map& map) const { ptx::prefetch_tensormap(map); }
  // createpolicy.fractional.L2::evict_{first,normal,last}.b64 policy, 1.0
  __device__ __forceinline__ uint64_t createpolicy_fractional_L2_evict_first() const {
    return ptx::createpolicy_fractional_L2_evict_first();
  }
  __device__ __forceinline__ uint64_t createpolicy_fractional_L2_evict_normal() const {
    return ptx::createpolicy_fractional_L2_evict_normal();
  }
  __device__ __forceinline__ uint64_t createpolicy_fractional_L2_evict_last() const {
    return ptx::createpolicy_fractional_L2_evict_last();
  }

  // ---- sync ---------------------------------------------------------------------------------
  // bar.sync 0 (__syncthreads) / bar.red.or.pred (__syncthreads_or) / bar.warp.sync (__syncwarp)
  __device__ __forceinline__ void syncthreads() const { __syncthreads(); }
  __device__ __forceinline__ bool syncthreads_or(bool p) const { return __syncthreads_or(p) != 0; }
  // __syncthreads_or of an integer (nonzero: true), passed to the built-in as it is: the SASS of a
  // kernel that wrote __syncthreads_or(count) (the bool form compares the value differently).
  template <class I, std::enable_if_t<std::is_integral<I>::value && !std::is_same<I, bool>::value, int> = 0>
  __device__ __forceinline__ bool syncthreads_or(I p) const {
    return __syncthreads_or(sizeof(I) <= sizeof(int) ? int(p) : int(p != 0)) != 0;
  }
  __device__ __forceinline__ void syncwarp() const { __syncwarp(); }
  // bar.sync id, count / bar.arrive id, count
  __device__ __forceinline__ void bar_sync(uint32_t id, uint32_t count) const { ptx::bar_sync(id, count); }
  __device__ __forceinline__ void bar_arrive(uint32_t id, uint32_t count) const { ptx::bar_arrive(id, count); }
  // barrier.cluster.arrive.release.aligned / barrier.cluster.wait.acquire.aligned
  __device__ __forceinline__ void barrier_cluster_arrive_aligned() const { ptx::barrier_cluster_arrive_aligned(); }
  __device__ __forceinline__ void barrier_cluster_wait_aligned() const { ptx::barrier_cluster_wait_aligned(); }
  // elect.sync _|p, 0xffffffff: true in one lane of the (converged) warp.
  // shfl.sync.idx.b32 / shfl.sync.bfly.b32 / vote.sync.ballot.b32 over the full warp
  // (__shfl_sync, __shfl_xor_sync, __ballot_sync)
  __device__ __forceinline__ uint32_t shfl_sync(uint32_t v, uint32_t src_lane) const {
    return __shfl_sync(0xffffffffu, v, int(src_lane));
  }
  __device__ __forceinline__ uint32_t shfl_xor_sync(uint32_t v, uint32_t lane_mask) const {
    return __shfl_xor_sync(0xffffffffu, v, int(lane_mask));
  }
  __device__ __forceinline__ uint32_t ballot_sync(bool p) const { return __ballot_sync(0xffffffffu, p); }
  __device__ __forceinline__ bool elect_one() const {
    uint32_t pred = 0;
    asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(pred));
    return pred != 0;
  }

  // ---- faults -------------------------------------------------------------------------------
  // A kernel's own planted fault (the model's run_options::faults, kernel_hook): never on the GPU.
  __device__ __forceinline__ constexpr bool planted(const char*) const { return false; }

  // ---- other --------------------------------------------------------------------------------
  template <uint32_t N>
  __device__ __forceinline__ void setmaxnreg_inc() const {
    ptx::setmaxnreg_inc<N>();
  }
  template <uint32_t N>
  __device__ __forceinline__ void setmaxnreg_dec() const {
    ptx::setmaxnreg_dec<N>();
  }
  __device__ __forceinline__ void griddepcontrol_wait() const { ptx::griddepcontrol_wait(); }
  __device__ __forceinline__ void griddepcontrol_launch_dependents() const { ptx::griddepcontrol_launch_dependents(); }
  // clock64 (mov.u64 %clock64): SM cycles, for spins that model work.
  __device__ __forceinline__ long long clock64() const { return ::clock64(); }

  // ---- shared-window addresses and tensor cores --------------------------------------------
  // cvta.to.shared: the 32-bit shared::cta address of v (what wgmma descriptors are built from).
  template <class E>
  __device__ __forceinline__ uint32_t smem_addr(smem<E> v) const {
    return v.addr();
  }
  // wgmma.fence.sync.aligned
  __device__ __forceinline__ void wgmma_fence() const { ptx::wgmma_fence(); }
  // wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a,
  // imm-scale-b, imm-trans-a, imm-trans-b (N = 64, 128, 256)
  template <int N, int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
  __device__ __forceinline__ void wgmma_m64nNk16_f32_bf16_bf16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                                               bool scale_d) const {
    ptx::wgmma_m64nNk16_f32_bf16_bf16<N, ScaleA, ScaleB, TransA, TransB>(d, desc_a, desc_b, scale_d);
  }
  // wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 d, a, b-desc, scale-d, imm-scale-a,
  // imm-scale-b, imm-trans-b: A from four registers of each thread (its A fragment)
  template <int N, int ScaleA = 1, int ScaleB = 1, int TransB = 0>
  __device__ __forceinline__ void wgmma_m64nNk16_f32_bf16_bf16(float (&d)[N / 2], const uint32_t (&a)[4],
                                                               uint64_t desc_b, bool scale_d) const {
    ptx::wgmma_m64nNk16_f32_bf16_bf16<N, ScaleA, ScaleB, TransB>(d, a, desc_b, scale_d);
  }
  // wgmma.commit_group.sync.aligned / wgmma.wait_group.sync.aligned N
  __device__ __forceinline__ void wgmma_commit_group() const { ptx::wgmma_commit_group(); }
  template <int N>
  __device__ __forceinline__ void wgmma_wait_group() const {
    ptx::wgmma_wait_group<N>();
  }
  // Keeps ordinary uses of the accumulators (float) or of an A fragment in registers (uint32_t)
  // from moving across fence / wait_group (no instruction).
  template <class E, int R>
  __device__ __forceinline__ void wgmma_fence_operand(E (&d)[R]) const {
    ptx::wgmma_fence_operand(d);
  }

  // ---- traces (hopper/trace/trace.hpp) -------------------------------------------------------------
  // One record per event and warp, by lane 0 (compiled only when Traced).
  __device__ __forceinline__ void record(trace::event e, uint32_t stage, uint32_t iter, uint32_t role) {
    if constexpr (Traced) {
      if (lane() != 0) return;
      const uint32_t warps_per_cta = (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u;
      const uint32_t cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
      const uint32_t warp = threadIdx.x / 32u;
      trace::put(this->sink, cta * warps_per_cta + warp, e, stage, iter, role, cta, warp);
    }
  }
};

using device_target = basic_device_target<>;

}  // namespace hopper
