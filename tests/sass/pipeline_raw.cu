// The kernel of tests/sass/pipeline_objects.cu written with hand-written inline PTX only: the
// reference the objects layer must match instruction for instruction (barrier, fence, copy).
#include <cstdint>

constexpr uint32_t kStages = 2;
constexpr uint32_t kTileFloats = 1024;
constexpr uint32_t kTileBytes = kTileFloats * sizeof(float);

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

extern "C" __global__ void __cluster_dims__(2, 1, 1) pipeline_kernel(const float* in, float* out, int tiles) {
  __shared__ alignas(128) float tile[kStages][kTileFloats];
  __shared__ uint64_t full[kStages];
  __shared__ uint32_t peer_word;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < kStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&full[s])), "r"(1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  uint32_t index = 0, parity = 0;
  for (int t = 0; t < tiles; ++t) {
    const uint32_t bar = smem(&full[index]);
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(kTileBytes)
                   : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                       smem(tile[index])),
                   "l"(in + size_t(t) * kTileFloats), "r"(kTileBytes), "r"(bar)
                   : "memory");
    }
    asm volatile(
        "{\n\t.reg .pred p;\n"
        "WAIT_%=:\n\t"
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1;\n\t"
        "@!p bra WAIT_%=;\n\t}" ::"r"(bar),
        "r"(parity)
        : "memory");
    for (uint32_t i = threadIdx.x; i < kTileFloats; i += blockDim.x) tile[index][i] *= 2.0f;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("bar.sync 1, 128;" ::: "memory");
    if (threadIdx.x == 0) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + size_t(t) * kTileFloats),
                   "r"(smem(tile[index])), "r"(kTileBytes)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    }
    if (++index == kStages) {
      index = 0;
      parity ^= 1;
    }
  }
  if (threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  uint64_t peer;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(peer) : "l"(&peer_word), "r"(rank ^ 1u));
  *reinterpret_cast<uint32_t*>(peer) = uint32_t(tiles);
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    out[0] += float(peer_word);
    for (uint32_t s = 0; s < kStages; ++s)
      asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem(&full[s])) : "memory");
  }
}
