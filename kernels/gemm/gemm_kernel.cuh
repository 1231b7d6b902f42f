// The warp-specialized persistent bf16 GEMM: C = A . B^T, fp32 accumulation.
//
// One CTA = 3 warpgroups (384 threads), one CTA per SM, persistent over tiles:
//   warpgroup 0  producer: gives registers back (setmaxnreg.dec), one elected thread issues the
//                TMA loads of every k-block of every tile into a ring of STAGES stages;
//   warpgroup 1, 2  consumers: take registers (setmaxnreg.inc), each computes 64 x BN of the
//                128 x BN tile (or 64 x BN/2 of a 64 x BN tile) with wgmma.m64nNk16 straight
//                from the swizzled stage, keeps one wgmma group in flight, releases a stage as
//                soon as the group that read it is done, and stores its part through shared
//                memory with TMA stores that overlap the next item's main loop.
// Both walk the same items of the work schedule (tile_scheduler.hpp): whole tiles, split-K
// ranges and a share of the stream-K tail; a shared tile is summed by its last piece.
// The kernel waits (griddepcontrol.wait) for the previous grid in the stream before its first
// global access, so it may be launched to overlap that grid's tail (programmatic launch).
// With kernel_traits::PINGPONG the consumers instead own whole 128 x 128 tiles in turn (named
// barriers 3 and 4 hand over the tensor cores; one warpgroup's epilogue runs under the other's
// main loop). The ring is hopper::pipeline (seed §10, §14-§16, docs/pipeline.md): full[s] counts
// the bytes the copy engine delivers (acquire: wait for empty, arrive.expect_tx; TMA completes
// the bytes), empty[s] counts the releases of the consumer warpgroups that read the stage, each
// from its first warp, once wgmma.wait_group has retired the reads (release_sem::relaxed).
// A cluster is CLUSTER_M x CLUSTER_N CTAs computing adjacent tiles: the CTAs of one cluster column
// (same N tile) share the B tile, each loads 1 / CLUSTER_M of it and multicasts it down the
// column; the CTAs of one cluster row (same M tile) share the A tile the same way. Every full
// barrier expects the whole stage's bytes, and empty[s] of each CTA counts the releases of every
// CTA's consumers (a producer may refill a stage only when every CTA it writes into is done).
#pragma once
#include <cuda_bf16.h>
#include <cstdint>

#include "hopper/pipeline.cuh"
#include "hopper/pipeline_backend_device.cuh"
#include "hopper/ptx/atom.cuh"
#include "hopper/ptx/cluster.cuh"
#include "hopper/ptx/cp_async_bulk.cuh"
#include "hopper/ptx/cp_async_bulk_tensor.cuh"
#include "hopper/ptx/fence.cuh"
#include "hopper/ptx/griddepcontrol.cuh"
#include "hopper/ptx/named_barrier.cuh"
#include "hopper/ptx/setmaxnreg.cuh"
#include "hopper/ptx/special_registers.cuh"
#include "hopper/ptx/wgmma.cuh"
#include "hopper/tensor_map.hpp"
#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/tile_scheduler.hpp"

namespace hopper::gemm {

// What the kernel needs at run time besides the three tensor maps. Cluster c walks the items of
// `work` (tile_scheduler.hpp): whole tiles, the k-ranges of split-K, and its share of the
// stream-K tail. When a tile's k-blocks are shared by several items each consumer warpgroup
// leaves its fp32 partial in `partial` and the last to arrive on the tile's counter sums them
// all (in slot order: the result does not depend on who is last) and stores the tile.
struct kernel_params {
  int M, N, K;
  work_schedule work;
  int slot_stride;  // partial slots per fixup tile (>= the slots of any item)
  float4* partial;  // [fixup cta tile][warpgroup][slot][ACC / 4][128 threads] float4
  int* counters;    // [fixup cta tile][warpgroup], zero between launches
};

// PINGPONG = false, "cooperative": both consumer warpgroups work on one BM x BN tile and read
// every stage; with BM = 128 each takes 64 rows and all BN columns, with BM = 64 each takes the
// 64 rows and BN / 2 of the columns. PINGPONG = true (BM = 128): each consumer warpgroup owns
// whole 128 x BN tiles (the CTA's tiles alternate between them, two m64nBNk16 per k-step), each
// stage is read by one warpgroup, and the epilogue of one runs while the other computes.
template <int BM_, int BN_, int STAGES_, int CLUSTER_M_, int CLUSTER_N_, class OutT_, bool A_MN_, bool B_MN_,
          bool PINGPONG_ = false>
struct kernel_traits {
  static constexpr int BM = BM_, BN = BN_, BK = 64, STAGES = STAGES_;
  static constexpr int CLUSTER_M = CLUSTER_M_, CLUSTER_N = CLUSTER_N_, CLUSTER = CLUSTER_M * CLUSTER_N;
  static constexpr bool A_MN = A_MN_, B_MN = B_MN_, PINGPONG = PINGPONG_;
  using OutT = OutT_;
  static constexpr int THREADS = 384;
  static constexpr int CONSUMERS = 2;                       // consumer warpgroups
  static constexpr int READERS = PINGPONG ? 1 : CONSUMERS;  // consumer warpgroups reading a stage
  static constexpr int WG_M = 64;                           // rows of one wgmma.m64
  static constexpr bool SPLIT_N = BM == 64;                 // the consumer warpgroups split the columns, not the rows
  static constexpr int WG_N = SPLIT_N ? BN / 2 : BN;        // the n of a consumer warpgroup's wgmma
  static constexpr int ACC = WG_N / 2;                      // fp32 accumulators per thread per m64nWG_N
  static constexpr uint32_t A_BYTES = BM * BK * 2;
  static constexpr uint32_t B_BYTES = BN * BK * 2;
  static constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;
  static constexpr uint32_t BOX_MN_BYTES = 64 * BK * 2;  // one 64 (MN) x 64 (K) MN-major box (load_share)
  static constexpr int A_ROWS_PER_CTA = BM / CLUSTER_N;  // A rows (M) each CTA loads for its row
  static constexpr int B_ROWS_PER_CTA = BN / CLUSTER_M;  // B rows (N) each CTA loads for its column
  // Epilogue: boxes of 16 rows (one warp's) x one 128-byte swizzle row of C, double buffered per
  // warp.
  static constexpr int EPI_COLS = 128 / int(sizeof(OutT));
  static constexpr int EPI_ROWS = 16;
  static constexpr uint32_t EPI_BYTES = EPI_ROWS * 128;
  static constexpr uint32_t EPI_WG_BYTES = WG_M / EPI_ROWS * 2 * EPI_BYTES;  // a warpgroup's 4 warps x 2
  static constexpr int EPI_CHUNKS = WG_N / EPI_COLS;
  // Shared-memory offsets from a 1024-byte aligned base (swizzle atoms need 1024-B alignment).
  static constexpr uint32_t OFF_A = 0;
  static constexpr uint32_t OFF_B = OFF_A + STAGES * A_BYTES;
  static constexpr uint32_t OFF_EPI = OFF_B + STAGES * B_BYTES;
  static constexpr uint32_t OFF_BAR = OFF_EPI + CONSUMERS * EPI_WG_BYTES;
  static constexpr uint32_t SMEM = OFF_BAR + 2 * 8 * STAGES + 1024;
  // Registers: producer 40, consumers 232: 128*40 + 256*232 = 64512 <= 65536.
  static constexpr uint32_t PRODUCER_REGS = 40, CONSUMER_REGS = 232;

  static_assert(BM == 128 || BM == 64, "BM is 128 (a warpgroup per 64 rows) or 64 (a warpgroup per BN / 2 columns)");
  static_assert(WG_N == 64 || WG_N == 128 || WG_N == 256, "a warpgroup's n of wgmma.m64nNk16: 64, 128 or 256");
  static_assert(BM == 128 || !PINGPONG, "ping-pong tiles are 128 rows");
  static_assert((CLUSTER_M == 1 || CLUSTER_M == 2) && (CLUSTER_N == 1 || CLUSTER_N == 2) && CLUSTER <= 2,
                "clusters of 1 x 1, 2 x 1 or 1 x 2 CTAs: every CTA writes into every CTA of its cluster, "
                "which orders the releases to all of them (gemm_config.hpp's instances say more)");
  static_assert(B_ROWS_PER_CTA <= 256, "a TMA box dimension is at most 256");
  static_assert(!A_MN || (BM / 64) % CLUSTER_N == 0, "MN-major A boxes split evenly over a cluster row");
  static_assert(!B_MN || (BN / 64) % CLUSTER_M == 0, "MN-major B boxes split evenly over a cluster column");
  static_assert((A_ROWS_PER_CTA * 128) % 1024 == 0, "multicast A pieces keep 1024-B alignment");
  static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "stages keep 1024-B swizzle alignment");
  static_assert((B_ROWS_PER_CTA * 128) % 1024 == 0, "multicast B pieces keep 1024-B alignment");
  static_assert(OFF_EPI % 1024 == 0, "epilogue boxes are 128B-swizzled: 1024-B aligned");
  static_assert(sizeof(OutT) == 2 || sizeof(OutT) == 4, "bf16 or fp32 output");
  static_assert(SMEM <= uint32_t(max_smem_per_block), "fits in 227 KiB of shared memory");
  static_assert(CONSUMERS * 128 * CONSUMER_REGS + 128 * PRODUCER_REGS <= 65536, "register file");
  static_assert(!PINGPONG || BN == 128, "ping-pong tiles are 128 x 128: 2 x 64 accumulators per thread");
  static_assert(STAGE_BYTES < (1u << 20), "tx-count limit of an mbarrier phase");
};

namespace detail {

// Two adjacent accumulators converted to the output type and stored as one 4- or 8-byte word
// (the lower column at the lower address).
template <class OutT>
__device__ __forceinline__ void store_pair(uint8_t* dst, float lo, float hi) {
  if constexpr (sizeof(OutT) == 2) {
    *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(lo, hi);
  } else {
    *reinterpret_cast<float2*>(dst) = make_float2(lo, hi);
  }
}

// This CTA's share of one operand's stage tile (ROWS along M or N x 64 along K), loaded to `dst`
// in every CTA of `peers` (PEERS CTAs that share the tile; this CTA is number `piece` of them).
// K-major: rows [piece, piece + 1) x ROWS / PEERS as one box (128 bytes per row). MN-major: its
// share of the tile's 64 (MN) x 64 (K) boxes of 8 KiB.
template <bool MN, int ROWS, int PEERS>
__device__ __forceinline__ void load_share(uint8_t* dst, const hopper::tensor_map& map, uint64_t* bar, uint16_t peers,
                                           int piece, int k0, int mn0) {
  using namespace hopper::ptx;
  constexpr uint32_t BOX_MN_BYTES = 64 * 64 * 2;
  if constexpr (!MN) {
    const int r0 = piece * (ROWS / PEERS);
    if constexpr (PEERS > 1)
      cp_async_bulk_tensor_shared_cluster_global_multicast(dst + r0 * 128, map, bar, peers, k0, mn0 + r0);
    else
      cp_async_bulk_tensor_shared_cluster_global(dst, map, bar, k0, mn0);
  } else {
    constexpr int boxes = ROWS / 64 / PEERS;
#pragma unroll
    for (int j = piece * boxes; j < (piece + 1) * boxes; ++j) {
      if constexpr (PEERS > 1)
        cp_async_bulk_tensor_shared_cluster_global_multicast(dst + j * BOX_MN_BYTES, map, bar, peers, mn0 + 64 * j, k0);
      else
        cp_async_bulk_tensor_shared_cluster_global(dst + j * BOX_MN_BYTES, map, bar, mn0 + 64 * j, k0);
    }
  }
}

// The epilogue of one 64-row half tile held by a consumer warpgroup: each warp stores its own
// 16 rows (seed §19): registers -> one of the warp's two 128B-swizzled 16-row x 128-byte shared
// boxes -> TMA store issued by the warp's lane 0. Warps share no buffer, so only __syncwarp orders
// them: no warpgroup barrier in the epilogue. Swizzled, so the fragment stores are bank-conflict
// free; before refilling a buffer, lane 0 waits until its store issued two boxes ago has read it.
template <class T>
__device__ __forceinline__ void store_rows(const float (&acc)[T::ACC], const hopper::tensor_map& tma_c, uint8_t* epi,
                                           uint32_t& epi_count, int wg_thread, int row0, int n0, int M, int N) {
  using namespace hopper::ptx;
  const int warp = wg_thread / 32, lane = wg_thread % 32;
  const int warp_row0 = row0 + warp * T::EPI_ROWS;
  if (warp_row0 >= M) return;  // uniform over the warp; rows past M inside the box TMA clips
  uint8_t* bufs = epi + warp * 2 * T::EPI_BYTES;
  const int r_lo = lane / 4;  // rows r_lo and r_lo + 8 of the warp's 16
#pragma unroll
  for (int c = 0; c < T::EPI_CHUNKS; ++c) {
    const int col0 = n0 + c * T::EPI_COLS;
    if (col0 >= N) break;  // uniform over the warpgroup
    uint8_t* buf = bufs + (epi_count & 1u) * T::EPI_BYTES;
    if (lane == 0) cp_async_bulk_wait_group_read<1>();
    __syncwarp();
#pragma unroll
    for (int j = 0; j < T::EPI_COLS / 8; ++j) {
      const int i = (c * T::EPI_COLS / 8 + j) * 4;  // acc[i..i+3]: 8-column block
      const uint32_t col_bytes = uint32_t(j * 8 + 2 * (lane % 4)) * sizeof(typename T::OutT);
      const uint32_t o_lo = hopper::swizzle_offset(hopper::swizzle::b128, r_lo * 128 + col_bytes);
      const uint32_t o_hi = hopper::swizzle_offset(hopper::swizzle::b128, (r_lo + 8) * 128 + col_bytes);
      store_pair<typename T::OutT>(buf + o_lo, acc[i], acc[i + 1]);
      store_pair<typename T::OutT>(buf + o_hi, acc[i + 2], acc[i + 3]);
    }
    // Generic-proxy writes -> visible to the async proxy (TMA) before the store reads them.
    fence_proxy_async_shared_cta();
    __syncwarp();
    if (lane == 0) {
      cp_async_bulk_tensor_global_shared_cta(tma_c, buf, col0, warp_row0);
      cp_async_bulk_commit_group();
    }
    ++epi_count;
  }
}

// Split-K / stream-K fixup for one consumer warpgroup (128 threads, named barrier 1 + w) of fixup
// CTA tile `tile`, piece `slot` of `slots`: stores its fp32 partial (each thread its ACC floats as
// float4s, thread-interleaved so that every float4 step is one coalesced 2 KiB write), then thread
// 0 counts the arrival. The warpgroup that completes the count reads every slot's partial back, in
// slot order 0, 1, ..., into acc,
// resets the counter for the next launch and returns true (it stores the tile); the others
// return false. Ordering on the generic proxy with one gpu-scope operation per warpgroup: the
// named barrier orders every thread's partial stores before thread 0, whose
// atom.add.acq_rel.gpu releases them (cumulatively) and, in the last arriver, acquires the other
// pieces' partials; the second barrier passes that on to the warpgroup's loads (ld.global.cg, L2).
template <int ACC>
__device__ __forceinline__ bool split_k_fixup(float (&acc)[ACC], const kernel_params& p, int tile, int w, int slot,
                                              int S, int wg_thread, int* flag) {
  constexpr int Q = ACC / 4;  // float4 per thread
  float4* slots = p.partial + size_t(tile * 2 + w) * p.slot_stride * Q * 128 + wg_thread;
  float4* mine = slots + size_t(slot) * Q * 128;
#pragma unroll
  for (int q = 0; q < Q; ++q)
    __stcg(mine + q * 128, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
  hopper::ptx::bar_sync(1 + w, 128);
  int* counter = p.counters + tile * 2 + w;
  if (wg_thread == 0) *flag = hopper::ptx::atom_add_gpu<hopper::ptx::sem::acq_rel>(counter, 1) == S - 1;
  hopper::ptx::bar_sync(1 + w, 128);
  const bool last = *flag != 0;
  // Nobody reads the flag again before the next fixup's first barrier has been passed by all.
  if (!last) return false;
  if (wg_thread == 0) *counter = 0;  // every split of this tile has arrived: ready for next launch
    // Chunks of 8 float4: 8 independent loads in flight per split without extra live registers
    // (unrolling the split loop too hoists more loads than the 232 registers hold: spills).
#pragma unroll
  for (int q0 = 0; q0 < Q; q0 += 8) {
    for (int s = 0; s < S; ++s) {
      const float4* src = slots + size_t(s) * Q * 128;
#pragma unroll
      for (int q = q0; q < q0 + 8 && q < Q; ++q) {
        const float4 v = __ldcg(src + q * 128);
        if (s == 0) {
          acc[4 * q] = v.x, acc[4 * q + 1] = v.y, acc[4 * q + 2] = v.z, acc[4 * q + 3] = v.w;
        } else {
          acc[4 * q] += v.x, acc[4 * q + 1] += v.y, acc[4 * q + 2] += v.z, acc[4 * q + 3] += v.w;
        }
      }
    }
  }
  return true;
}

}  // namespace detail

template <class T>
__global__ void __launch_bounds__(384, 1)
    gemm_kernel(const __grid_constant__ hopper::tensor_map tma_a, const __grid_constant__ hopper::tensor_map tma_b,
                const __grid_constant__ hopper::tensor_map tma_c, const kernel_params p) {
  using namespace hopper::ptx;
  constexpr int STAGES = T::STAGES, CLUSTER = T::CLUSTER, BN = T::BN, BM = T::BM, BK = T::BK;

  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint8_t* sA = smem + T::OFF_A;
  uint8_t* sB = smem + T::OFF_B;

  const int wg = threadIdx.x / 128;
  const int wg_thread = threadIdx.x % 128;
  const int warp = wg_thread / 32;  // warp within the warpgroup
  const uint32_t rank = CLUSTER > 1 ? cluster_ctarank() : 0u;
  // Position in the cluster: CTA (rm, rn) computes tile row crow * CLUSTER_M + rm and column
  // ccol * CLUSTER_N + rn of its cluster tile (crow, ccol).
  constexpr cluster_shape cs{T::CLUSTER_M, T::CLUSTER_N};
  const int rm = cs.row(int(rank)), rn = cs.col(int(rank));
  const int cluster_id = blockIdx.x / CLUSTER;
  const int clusters = gridDim.x / CLUSTER;
  const int k_blocks = (p.K + BK - 1) / BK;

  // The ring: STAGES full + empty barriers after the epilogue buffers. Each consumer warpgroup
  // that reads a stage releases it once, from its first warp (the wgmma reads of all four warps
  // retire together); in a cluster the operands are multicast, so a stage is free only when the
  // readers of every CTA have released it.
  using pipe_t = hopper::device_pipeline<STAGES, false>;
  constexpr hopper::pipeline_params ring_params{uint32_t(T::READERS), uint32_t(CLUSTER), CLUSTER > 1};
  constexpr auto retired = hopper::release_sem::relaxed;  // wgmma reads, done at wait_group
  if (threadIdx.x == 0) {
    prefetch_tensormap(tma_a);
    prefetch_tensormap(tma_b);
    prefetch_tensormap(tma_c);
  }
  // init, fence.mbarrier_init, and a cluster (or CTA) barrier: no peer multicasts into us or
  // arrives on our barriers before they exist (seed §12, §18).
  auto pipe = pipe_t::init(*reinterpret_cast<typename pipe_t::storage*>(smem + T::OFF_BAR), ring_params);
  // Programmatic dependent launch: everything above touched only shared memory and the kernel
  // parameters, so with the launch attribute it ran under the previous grid's tail. From here on
  // the kernel reads A and B, writes C and the split-K workspace: wait until the previous grid
  // has finished and its writes are visible. Then let the next grid be scheduled: its CTAs take
  // SMs as ours exit and run their own prologue while our last tiles finish.
  griddepcontrol_wait();
  griddepcontrol_launch_dependents();

  if (wg == 0) {
    // ---------------- producer ----------------
    setmaxnreg_dec<T::PRODUCER_REGS>();
    if (wg_thread == 0) {
      auto s = pipe.producer_start();
      work_item item;
      for (auto cur = p.work.start(cluster_id); p.work.next(cur, item);) {
        int crow, ccol;
        p.work.order.coords(item.tile, crow, ccol);
        const int m0 = (crow * T::CLUSTER_M + rm) * BM;
        const int n0 = (ccol * T::CLUSTER_N + rn) * BN;
        const k_range kr = item.k;
        for (int kb = kr.begin; kb < kr.end; ++kb, ++s) {
          // Wait until every reader of the stage (of every CTA it is multicast into) released it
          // (WAR, seed §16), then arm full[s] with the whole stage: our share of A and B, and
          // the shares the peers multicast into us.
          pipe.acquire(s, T::STAGE_BYTES);
          uint64_t* bar = &pipe.full(s);
          // The CTAs sharing our A tile (our cluster row) and our B tile (our cluster column).
          const uint16_t a_peers = cs.a_peers(int(rank)), b_peers = cs.b_peers(int(rank));
          const int k0 = kb * BK;
          detail::load_share<T::A_MN, BM, T::CLUSTER_N>(sA + s.index() * T::A_BYTES, tma_a, bar, a_peers, rn, k0, m0);
          detail::load_share<T::B_MN, BN, T::CLUSTER_M>(sB + s.index() * T::B_BYTES, tma_b, bar, b_peers, rm, k0, n0);
          pipe.commit(s);
        }
      }
      pipe.drain(s);  // every stage released: no peer arrives on our barriers after we exit
    }
    __syncwarp();
  } else if constexpr (T::PINGPONG) {
    // ---------------- ping-pong consumers ----------------
    setmaxnreg_inc<T::CONSUMER_REGS>();
    const int w = wg - 1;  // owns the CTA's work units w, w + 2, w + 4, ... (local order)
    uint8_t* epi = smem + T::OFF_EPI + w * T::EPI_WG_BYTES;
    uint32_t epi_count = 0;
    // Ordering barriers 3 and 4: warpgroup w waits on 3 + w for its turn at the tensor cores; the
    // other warpgroup arrives there once it has issued its last k-block. The producer fills the
    // ring in the same unit order, so the math runs unit after unit while the epilogue of one
    // warpgroup overlaps the main loop of the other.
    constexpr uint32_t ORDER = 3;
    float acc[2][T::ACC];  // rows [0, 64) and [64, 128) of the tile
    auto s = pipe.consumer_start();
    s += uint32_t(w * k_blocks);             // warpgroup 1 starts after warpgroup 0's first unit
    int j = w;                               // local index of the unit among the CTA's units
    const int units = p.work.order.total();  // whole tiles: no split, no stream-K (checked by the plan)
    for (int u = cluster_id + w * clusters; u < units; u += 2 * clusters, j += 2) {
      int crow, ccol;
      p.work.order.coords(u, crow, ccol);
      const int m0 = (crow * T::CLUSTER_M + rm) * BM;
      const int n0 = (ccol * T::CLUSTER_N + rn) * BN;
      if (j > 0) bar_sync(ORDER + w, 256);
      auto read = s;  // the stage whose wgmma group is retired next
      for (int kb = 0; kb < k_blocks; ++kb, ++s) {
        pipe.wait(s);  // RAW guard: the stage's bytes landed
        const uint32_t a_base = smem_addr(sA + s.index() * T::A_BYTES);
        const uint32_t b_base = smem_addr(sB + s.index() * T::B_BYTES);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          const uint64_t db = T::B_MN ? make_wgmma_desc_mnmajor_sw128(b_base + kk * 2048, T::BOX_MN_BYTES)
                                      : make_wgmma_desc_kmajor_sw128(b_base + kk * 32);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const uint64_t da =
                T::A_MN ? make_wgmma_desc_mnmajor_sw128(a_base + h * T::BOX_MN_BYTES + kk * 2048, T::BOX_MN_BYTES)
                        : make_wgmma_desc_kmajor_sw128(a_base + h * T::WG_M * 128 + kk * 32);
            wgmma_m64nNk16_f32_bf16_bf16<BN, 1, 1, T::A_MN ? 1 : 0, T::B_MN ? 1 : 0>(acc[h], da, db, kb > 0 || kk > 0);
          }
        }
        wgmma_commit_group();
        // One group stays in flight; the one before it has finished reading its stage.
        wgmma_wait_group<1>();
        if (kb > 0) {
          if (warp == 0) pipe.release<retired>(read);
          ++read;
        }
      }
      // Every k-block is issued: the other warpgroup may start its unit while ours drain. Only
      // when that unit exists, so that no arrival is left pending on the barrier at exit.
      if (u + clusters < units) bar_arrive(ORDER + (1 - w), 256);
      wgmma_wait_group<0>();
      if (warp == 0) pipe.release<retired>(read);
      wgmma_fence_operand(acc[0]);
      wgmma_fence_operand(acc[1]);
      s += uint32_t(k_blocks);  // the other warpgroup's next unit
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row0 = m0 + h * T::WG_M;
        if (row0 < p.M) detail::store_rows<T>(acc[h], tma_c, epi, epi_count, wg_thread, row0, n0, p.M, p.N);
      }
    }
    if (wg_thread % 32 == 0) cp_async_bulk_wait_group<0>();  // each warp's lane 0 issued stores
  } else {
    // ---------------- cooperative consumers ----------------
    setmaxnreg_inc<T::CONSUMER_REGS>();
    const int w = wg - 1;  // 0 or 1: rows [64w, 64w + 64) of the tile
    uint8_t* epi = smem + T::OFF_EPI + w * T::EPI_WG_BYTES;
    uint32_t epi_count = 0;  // boxes this warpgroup has stored: picks the buffer
    // One word per warpgroup: thread 0's "this split is the last" broadcast to its warpgroup.
    __shared__ int last_flag[T::CONSUMERS];
    float acc[T::ACC];
    auto s = pipe.consumer_start();

    work_item item;
    for (auto cur = p.work.start(cluster_id); p.work.next(cur, item);) {
      int crow, ccol;
      p.work.order.coords(item.tile, crow, ccol);
      const int m0 = (crow * T::CLUSTER_M + rm) * BM;
      const int n0 = (ccol * T::CLUSTER_N + rn) * BN;
      const k_range kr = item.k;

      auto read = s;  // the stage whose wgmma group is retired next
      for (int kb = kr.begin; kb < kr.end; ++kb, ++s) {
        pipe.wait(s);  // RAW guard: the stage's bytes landed
        // This warpgroup's rows of A (BM = 128) or columns of B (BM = 64) in the stage.
        const uint32_t a_base = smem_addr(sA + s.index() * T::A_BYTES) + (T::SPLIT_N ? 0
                                                                          : T::A_MN  ? w * T::BOX_MN_BYTES
                                                                                     : w * T::WG_M * 128);
        const uint32_t b_base =
            smem_addr(sB + s.index() * T::B_BYTES) + (!T::SPLIT_N ? 0
                                                      : T::B_MN   ? w * (T::WG_N / 64) * T::BOX_MN_BYTES
                                                                  : w * T::WG_N * 128);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          // k-step of 16: 32 bytes along a K-major row, 16 rows (2048 B) of an MN-major box.
          const uint64_t da = T::A_MN ? make_wgmma_desc_mnmajor_sw128(a_base + kk * 2048, T::BOX_MN_BYTES)
                                      : make_wgmma_desc_kmajor_sw128(a_base + kk * 32);
          const uint64_t db = T::B_MN ? make_wgmma_desc_mnmajor_sw128(b_base + kk * 2048, T::BOX_MN_BYTES)
                                      : make_wgmma_desc_kmajor_sw128(b_base + kk * 32);
          wgmma_m64nNk16_f32_bf16_bf16<T::WG_N, 1, 1, T::A_MN ? 1 : 0, T::B_MN ? 1 : 0>(acc, da, db,
                                                                                        kb > kr.begin || kk > 0);
        }
        wgmma_commit_group();
        // One group stays in flight; the one before it has finished reading its stage.
        wgmma_wait_group<1>();
        if (kb > kr.begin) {
          if (warp == 0) pipe.release<retired>(read);
          ++read;
        }
      }
      wgmma_wait_group<0>();
      if (warp == 0) pipe.release<retired>(read);
      wgmma_fence_operand(acc);

      // ---- epilogue: registers -> swizzled shared box -> TMA store (seed §19) ----
      const int row0 = m0 + (T::SPLIT_N ? 0 : w * T::WG_M);
      const int col0 = n0 + (T::SPLIT_N ? w * T::WG_N : 0);
      // A shared tile: every piece leaves its partial; only the last to arrive goes on to store.
      if (row0 < p.M && item.slots > 1 &&
          !detail::split_k_fixup<T::ACC>(acc, p, item.fixup * CLUSTER + int(rank), w, item.slot, item.slots, wg_thread,
                                         last_flag + w))
        continue;
      if (row0 < p.M) detail::store_rows<T>(acc, tma_c, epi, epi_count, wg_thread, row0, col0, p.M, p.N);
    }
    // The last stores must have read shared memory before the CTA (and its memory) goes away.
    if (wg_thread % 32 == 0) cp_async_bulk_wait_group<0>();  // each warp's lane 0 issued stores
  }
  // No cluster barrier at exit: the producer's drain() waited for the releases of every CTA's
  // consumers on our empty barriers, and every multicast into our stages completed on a full
  // barrier our consumers waited on, so no peer touches this CTA once its warps are done.
}

}  // namespace hopper::gemm
