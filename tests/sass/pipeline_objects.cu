// A two-stage bulk-copy pipeline written with the objects layer. tests/sass/pipeline_raw.cu is
// the same kernel in hand-written inline PTX; the zero-overhead test compares their SASS.
#include <hopper/async.cuh>

constexpr uint32_t kStages = 2;
constexpr uint32_t kTileFloats = 1024;
constexpr uint32_t kTileBytes = kTileFloats * sizeof(float);

extern "C" __global__ void __cluster_dims__(2, 1, 1) pipeline_kernel(const float* in, float* out, int tiles) {
  __shared__ alignas(128) float tile[kStages][kTileFloats];
  __shared__ uint64_t full[kStages];
  __shared__ uint32_t peer_word;
  using namespace hopper;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < kStages; ++s) mbarrier(full[s]).init(arrival_count(1));
    mbarrier::fence_init();
  }
  __syncthreads();
  stage_state<kStages> st;
  for (int t = 0; t < tiles; ++t, ++st) {
    mbarrier bar(full[st.index()]);
    if (threadIdx.x == 0) {
      bar.arrive_expect_tx(tx_bytes(kTileBytes));
      ptx::cp_async_bulk_shared_cluster_global(tile[st.index()], in + size_t(t) * kTileFloats, kTileBytes,
                                               bar.native());
    }
    bar.wait(st.parity());
    for (uint32_t i = threadIdx.x; i < kTileFloats; i += blockDim.x) tile[st.index()][i] *= 2.0f;
    ptx::fence_proxy_async_shared_cta();
    named_barrier<1, 128>::sync();
    if (threadIdx.x == 0) {
      ptx::cp_async_bulk_global_shared_cta(out + size_t(t) * kTileFloats, tile[st.index()], kTileBytes);
      bulk_group::commit();
      bulk_group::wait_read<kStages - 1>();
    }
  }
  if (threadIdx.x == 0) bulk_group::wait<0>();
  *cluster::map_shared_rank(&peer_word, cluster::rank() ^ 1u) = uint32_t(tiles);
  cluster::sync();
  if (threadIdx.x == 0) {
    out[0] += float(peer_word);
    for (uint32_t s = 0; s < kStages; ++s) mbarrier(full[s]).inval();
  }
}
