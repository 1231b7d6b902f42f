// The target contract, checked by the compiler: one body that calls every member a kernel body
// may call, with the same source for both targets. tests/host/target_contract.cpp instantiates
// it for the model's target, tests/gpu/target_contract.cu for the device's (sm_90a): a member
// missing on either side, or taking other arguments, fails the build.
#pragma once
#include <cstdint>

#include "hopper/hd.hpp"
#include "hopper/objects/phase.hpp"
#include "hopper/ptx/qualifiers.hpp"
#include "hopper/ptx/wgmma_desc.hpp"
#include "hopper/trace/trace.hpp"

namespace hopper::probe {

template <class T>
HOPPER_HD void target_probe(T& t, typename T::barrier_type& b, typename T::template smem_t<uint8_t> s,
                            typename T::template gmem_t<uint8_t> g, const typename T::tensor_map_type& map) {
  using ptx::scope;
  using ptx::sem;
  // identity
  uint32_t sum = t.thread() + t.lane() + t.warp() + t.warpgroup() + t.block_threads() + t.block() + t.grid() +
                 t.cluster_rank() + t.cluster_size();
  // views
  const auto w32 = s.template as<uint32_t>();
  w32.store(0, sum);
  sum += w32.load(1) + (s + 16).load(0);
  const auto gi = g.template as<int>();
  gi.store(0, int(sum));
  sum += uint32_t(gi.load(1));
  // memory forms
  const typename T::u32x4 v = t.ld_shared_v4_u32(s);
  t.st_global_v4_u32(g, v);
  t.st_global_cs_v4_u32(g, v);
  const uint64_t policy = t.createpolicy_fractional_L2_evict_first() ^ t.createpolicy_fractional_L2_evict_normal() ^
                          t.createpolicy_fractional_L2_evict_last();
  t.st_global_L2_cache_hint_v4_u32(g, v, t.createpolicy_fractional_L2_evict_last());
  sum += uint32_t(t.atomic_add(gi, 0, 1));
  t.st_global_cg(gi, 2);
  sum += uint32_t(t.ld_global_cg(gi));
  sum += uint32_t(t.template atom_add_gpu<sem::acq_rel>(gi, 1));
  // DSMEM: a variable and a barrier of CTA rank 0 of the cluster
  const auto peer = t.mapa(w32, 0);
  peer.store(0, sum);
  sum += peer.load(0);
  const auto remote = t.mapa(b, 0);
  // mbarrier
  t.mbarrier_init(b, 2, "probe", 0);
  t.fence_mbarrier_init_release_cluster();
  const uint64_t tok = t.mbarrier_arrive(b);
  (void)t.template mbarrier_arrive<sem::relaxed, scope::cluster>(b, 1);
  (void)t.mbarrier_arrive_expect_tx(b, 16);
  (void)t.mbarrier_arrive_drop(b);
  t.mbarrier_expect_tx(b, 16);
  t.mbarrier_arrive(remote);
  t.mbarrier_arrive_expect_tx(remote, 16);
  sum += t.mbarrier_try_wait_parity(b, 0) + t.mbarrier_test_wait_parity(b, 1);
  sum += t.mbarrier_test_wait(b, tok) + t.template mbarrier_try_wait<sem::relaxed>(b, tok);
  t.mbarrier_wait(b, parity(0));
  // fences
  t.fence_proxy_async();
  t.fence_proxy_async_shared_cta();
  t.fence_proxy_async_shared_cluster();
  t.fence_proxy_async_global();
  t.template fence_acq_rel<scope::cluster>();
  t.template fence_sc<scope::gpu>();
  // bulk copies and bulk groups
  t.cp_async_bulk_shared_cluster_global(s, g, 16, b);
  t.cp_async_bulk_shared_cluster_global(s, g, 16, b, policy);
  t.cp_async_bulk_shared_cluster_global_multicast(s, g, 16, b, uint16_t(0x3));
  t.cp_async_bulk_global_shared_cta(g, s, 16);
  t.cp_async_bulk_global_shared_cta(g, s, 16, policy);
  t.cp_async_bulk_shared_cluster_shared_cta(t.mapa(s, 0), s, 16, remote);
  t.cp_async_bulk_prefetch_L2_global(g, 16);
  t.cp_async_bulk_commit_group();
  t.template cp_async_bulk_wait_group_read<0>();
  t.template cp_async_bulk_wait_group<0>();
  // tensor copies (2-D coordinates)
  t.cp_async_bulk_tensor_shared_cluster_global(s, map, b, 0, 0);
  t.cp_async_bulk_tensor_shared_cluster_global_hint(s, map, b, policy, 0, 0);
  t.cp_async_bulk_tensor_shared_cluster_global_multicast(s, map, b, uint16_t(0x3), 0, 0);
  t.cp_async_bulk_tensor_global_shared_cta(map, s, 0, 0);
  t.cp_async_bulk_tensor_global_shared_cta_hint(map, s, policy, 0, 0);
  t.cp_async_bulk_prefetch_tensor_L2_global(map, 0, 0);
  t.prefetch_tensormap(map);
  // CTA, warp, named and cluster barriers
  t.syncthreads();
  sum += t.syncthreads_or(sum != 0);
  t.syncwarp();
  t.bar_sync(1, 64);
  t.bar_arrive(2, 64);
  t.barrier_cluster_arrive_aligned();
  t.barrier_cluster_wait_aligned();
  sum += t.elect_one() + t.shfl_sync(sum, 3) + t.ballot_sync(sum & 1u);
  // other
  t.template setmaxnreg_inc<240>();
  t.template setmaxnreg_dec<40>();
  t.griddepcontrol_wait();
  t.griddepcontrol_launch_dependents();
  sum += uint32_t(t.clock64());
  // tensor cores
  float d[32];
  const uint64_t desc = ptx::make_wgmma_desc_kmajor_sw128(t.smem_addr(s));
  t.wgmma_fence();
  t.template wgmma_m64nNk16_f32_bf16_bf16<64>(d, desc, desc, sum != 0);
  uint32_t a[4] = {sum, sum + 1, sum + 2, sum + 3};
  t.template wgmma_m64nNk16_f32_bf16_bf16<64>(d, a, desc, true);
  t.wgmma_commit_group();
  t.template wgmma_wait_group<0>();
  t.wgmma_fence_operand(d);
  t.wgmma_fence_operand(a);
  // a converged warp's arrive on each CTA (the pipeline's multicast release)
  t.mbarrier_arrive_shared_cluster_lanes(b, 2);
  t.template mbarrier_arrive_shared_cluster_lanes<ptx::sem::relaxed>(b, 1);
  // traces
  t.record(trace::event::issued, 0, 0, 0);
  t.mbarrier_inval(b);
  gi.store(2, int(sum) + int(d[0]));
}

}  // namespace hopper::probe
