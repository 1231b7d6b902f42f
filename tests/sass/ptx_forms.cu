// Every instruction form of the PTX layer, instantiated once, so that ptxas checks each spelling
// (tests/host/zero_overhead_sass.cpp compiles this file to a cubin). Never launched.
#include <hopper/ptx.cuh>

using namespace hopper::ptx;

template <sem S, scope SC>
__device__ void arrives(uint64_t* bar, uint32_t remote, uint32_t n, uint64_t* out) {
  out[0] = mbarrier_arrive<S, SC>(bar);
  out[1] = mbarrier_arrive<S, SC>(bar, n);
  out[2] = mbarrier_arrive_expect_tx<S, SC>(bar, n);
  out[3] = mbarrier_arrive_drop<S, SC>(bar);
  out[4] = mbarrier_arrive_drop<S, SC>(bar, n);
  out[5] = mbarrier_arrive_drop_expect_tx<S, SC>(bar, n);
  mbarrier_arrive_shared_cluster<S, SC>(remote, n);
  mbarrier_arrive_expect_tx_shared_cluster<S, SC>(remote, n);
  mbarrier_arrive_drop_shared_cluster<S, SC>(remote, n);
}

template <sem S, scope SC>
__device__ void waits(uint64_t* bar, uint32_t parity, uint64_t state, uint32_t* out) {
  out[0] = mbarrier_test_wait_parity<S, SC>(bar, parity);
  out[1] = mbarrier_test_wait<S, SC>(bar, state);
  out[2] = mbarrier_try_wait_parity<S, SC>(bar, parity);
  out[3] = mbarrier_try_wait_parity<S, SC>(bar, parity, 1000u);
  out[4] = mbarrier_try_wait<S, SC>(bar, state);
  out[5] = mbarrier_try_wait<S, SC>(bar, state, 1000u);
}

template <scope SC>
__device__ void fences() {
  fence_acq_rel<SC>();
  fence_sc<SC>();
}

extern "C" __global__ void __cluster_dims__(2, 1, 1)
    every_form(uint64_t* out64, uint32_t* out32, float* g, uint32_t n) {
  __shared__ alignas(128) float tile[256];
  __shared__ uint64_t bar;
  mbarrier_init(&bar, n);
  fence_mbarrier_init_release_cluster();
  const uint32_t remote = mapa_shared_cluster(&bar, cluster_ctarank() ^ 1u);
  arrives<sem::release, scope::cta>(&bar, remote, n, out64);
  arrives<sem::release, scope::cluster>(&bar, remote, n, out64 + 8);
  arrives<sem::relaxed, scope::cta>(&bar, remote, n, out64 + 16);
  arrives<sem::relaxed, scope::cluster>(&bar, remote, n, out64 + 24);
  out64[32] = mbarrier_arrive_noComplete(&bar, n);
  out64[34] = mbarrier_arrive_drop_noComplete(&bar, n);
  mbarrier_expect_tx<scope::cta>(&bar, n);
  mbarrier_expect_tx<scope::cluster>(&bar, n);
  mbarrier_complete_tx<scope::cta>(&bar, n);
  mbarrier_complete_tx<scope::cluster>(&bar, n);
  mbarrier_expect_tx_shared_cluster<scope::cta>(remote, n);
  mbarrier_expect_tx_shared_cluster<scope::cluster>(remote, n);
  mbarrier_complete_tx_shared_cluster<scope::cta>(remote, n);
  mbarrier_complete_tx_shared_cluster<scope::cluster>(remote, n);
  waits<sem::acquire, scope::cta>(&bar, n & 1, out64[0], out32);
  waits<sem::acquire, scope::cluster>(&bar, n & 1, out64[1], out32 + 8);
  waits<sem::relaxed, scope::cta>(&bar, n & 1, out64[2], out32 + 16);
  waits<sem::relaxed, scope::cluster>(&bar, n & 1, out64[3], out32 + 24);
  out32[32] = mbarrier_pending_count(out64[4]);

  fence_proxy_async();
  fence_proxy_async_shared_cta();
  fence_proxy_async_shared_cluster();
  fence_proxy_async_global();
  fences<scope::cta>();
  fences<scope::cluster>();
  fences<scope::gpu>();
  fences<scope::sys>();

  cp_async_bulk_shared_cluster_global(tile, g, 512, &bar);
  cp_async_bulk_shared_cluster_global(tile, g, 512, &bar, out64[5]);
  cp_async_bulk_shared_cluster_global_multicast(tile, g, 512, &bar, uint16_t(3));
  cp_async_bulk_global_shared_cta(g, tile, 512);
  cp_async_bulk_global_shared_cta(g, tile, 512, out64[6]);
  cp_async_bulk_shared_cluster_shared_cta(mapa_shared_cluster(tile, 1), tile, 512, remote);
  cp_async_bulk_commit_group();
  cp_async_bulk_wait_group<0>();
  cp_async_bulk_wait_group<3>();
  cp_async_bulk_wait_group_read<0>();
  cp_async_bulk_wait_group_read<2>();
  cp_async_bulk_prefetch_L2_global(g, 512);

  barrier_cluster_arrive_aligned<sem::release>();
  barrier_cluster_wait_aligned();
  barrier_cluster_arrive_aligned<sem::relaxed>();
  barrier_cluster_wait_aligned();
  barrier_cluster_arrive<sem::release>();
  barrier_cluster_wait();
  barrier_cluster_arrive<sem::relaxed>();
  barrier_cluster_wait();
  const uint32_t peer_tile = mapa_shared_cluster(smem_addr(tile), 1);
  st_shared_cluster_u32(peer_tile, n);
  st_shared_cluster_u64(peer_tile + 8, out64[7]);
  st_shared_cluster_f32(peer_tile + 16, 1.5f);
  out32[33] = ld_shared_cluster_u32(peer_tile);
  out64[36] = ld_shared_cluster_u64(peer_tile + 8);
  g[1] = ld_shared_cluster_f32(peer_tile + 16);
  float* peer = mapa(tile, 1);
  peer[5] = 2.0f;
  out32[34] = cluster_ctarank() + cluster_nctarank() + cluster_ctaid_x() + cluster_ctaid_y() + cluster_ctaid_z() +
              cluster_nctaid_x() + cluster_nctaid_y() + cluster_nctaid_z() + clusterid_x() + clusterid_y() +
              clusterid_z() + nclusterid_x() + nclusterid_y() + nclusterid_z() + dynamic_smem_size() +
              total_smem_size() + smid() + (is_explicit_cluster() ? 1u : 0u);
  out64[37] = globaltimer();

  bar_sync(1, 64);
  bar_sync(0);
  barrier_sync(2, 64);
  bar_arrive(3, 64);
  barrier_arrive(4, 64);
  if (n == 7) {
    setmaxnreg_dec<40>();
  } else {
    setmaxnreg_inc<232>();
  }
  mbarrier_inval(&bar);
}
