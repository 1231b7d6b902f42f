// The warp-specialized persistent bf16 GEMM, C = A . B^T with fp32 accumulation, written once over
// a target: kernels/gemm/gemm_kernel.cuh runs it on the GPU with hopper::device_target, the model
// tests run the same lines with hopper::model::target. Plain C++ apart from the target.
//
// One CTA = 3 warpgroups (384 threads), one CTA per SM, persistent over the work schedule
// (tile_scheduler.hpp: whole tiles, split-K ranges and a share of the stream-K tail):
//   warpgroup 0     producer (produce): gives registers back, one elected thread issues the TMA
//                   loads of every k-block into the ring of STAGES stages;
//   warpgroups 1-2  consumers: take registers; each computes its part of the tile with
//                   wgmma.m64nNk16 straight from the swizzled stage (mma_k_block), keeps one
//                   wgmma group in flight and releases a stage once the group that read it is
//                   retired (consume_k_blocks), then stores its part through shared memory with
//                   TMA stores (store_rows) or, for a shared tile, leaves its partial and the last
//                   piece sums them (split_k_fixup).
// Cooperative (both consumer warpgroups on one tile) or ping-pong (each warpgroup owns whole
// 128 x 128 tiles in turn; the order barriers (gemm_barrier) hand over the tensor cores). The ring is
// hopper::pipeline: full[s] counts the bytes the copy engine delivers, empty[s] the releases of
// the consumer warpgroups that read the stage (in a cluster: of every CTA it is multicast into),
// each from its first warp, .relaxed since wgmma.wait_group has retired the reads.
#pragma once
#include <cstdint>
#include <type_traits>

#include "hopper/hd.hpp"
#include "hopper/objects/numerics.hpp"
#include "hopper/objects/swizzle.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "hopper/ptx/wgmma_desc.hpp"
#include "hopper/target/target_types.hpp"
#include "kernels/gemm/gemm_tiles.hpp"
#include "kernels/gemm/gemm_traits.hpp"
#include "kernels/gemm/tile_scheduler.hpp"

namespace hopper::gemm {

// The kernel's named barriers (the ids of bar.sync / bar.arrive; 0 is __syncthreads'), listed in
// one place so that two uses cannot share an id: each consumer warpgroup w has a fixup barrier
// (its 128 threads, split_k_fixup) and, in ping-pong, an order barrier (both warpgroups' 256
// threads, consume_pingpong), at the kind's base id + w.
enum class gemm_barrier : uint32_t { fixup = 1, order = 3 };
HOPPER_HD constexpr uint32_t barrier_id(gemm_barrier kind, int warpgroup) {
  return uint32_t(kind) + uint32_t(warpgroup);
}
// The threads that meet at a barrier of each kind.
HOPPER_HD constexpr uint32_t barrier_threads(gemm_barrier kind) {
  return uint32_t(kind == gemm_barrier::fixup ? warpgroup_threads : consumer_warpgroups * warpgroup_threads);
}
static_assert(barrier_id(gemm_barrier::fixup, 0) > 0, "id 0 is __syncthreads'");
static_assert(barrier_id(gemm_barrier::fixup, consumer_warpgroups - 1) < barrier_id(gemm_barrier::order, 0),
              "fixup and order ids overlap");
static_assert(barrier_id(gemm_barrier::order, consumer_warpgroups - 1) < hopper::limits::named_barrier_count,
              "16 named barriers");

// What the body needs at run time besides the three tensor maps. Cluster c walks the items of
// `work`. When a tile's k-blocks are shared by several items each consumer warpgroup leaves its
// fp32 partial in `partial` and the last to arrive on the tile's counter sums them all (in slot
// order: the result does not depend on who is last) and stores the tile.
// TMA stores write whole 16-byte chunks: the C map covers columns [0, n_tma) (c_tma_columns in
// gemm_traits.hpp), and the columns [n_tma, N) of a row whose end is not on a 16-byte boundary go
// out as plain stores through `c`, so that nothing past column N is written.
template <class Tg>
struct body_params {
  int M, N, K;
  work_schedule work;
  int slot_stride;                          // partial slots per fixup tile (>= the slots of any item)
  gmem_of<Tg, typename Tg::f32x4> partial;  // [fixup cta tile][warpgroup][slot][ACC / 4][128 threads]
  gmem_of<Tg, int> counters;                // [fixup cta tile][warpgroup], zero between launches
  gmem_of<Tg, uint8_t> c;                   // C itself, for the columns past n_tma
  int64_t ldc_bytes;                        // C's row pitch
  int n_tma;                                // columns the C map stores (N rounded down to 16 bytes)
};

// The CTA's shared memory as the body sees it: the operand stages, the epilogue boxes, the ring's
// barriers, and one word per consumer warpgroup for the fixup's "last piece" flag.
template <class T, class Tg>
struct body_smem {
  smem_of<Tg, uint8_t> a, b, epi;
  pipeline_storage<T::STAGES, typename Tg::barrier_type>& ring;
  smem_of<Tg, int> last_flag;
};

namespace detail {

// Two adjacent accumulators converted to the output type and stored as one 4- or 8-byte word.
HOPPER_EXEC_CHECK_OFF
template <class OutT, class Tg, class D>
HOPPER_HD void store_pair(D dst, float lo, float hi) {
  if constexpr (sizeof(OutT) == 2) {
    dst.template as<uint32_t>().store(0, pack_bf16x2(lo, hi));
  } else {
    dst.template as<typename Tg::f32x2>().store(0, typename Tg::f32x2{lo, hi});
  }
}

// This CTA's share of one operand's stage tile (gemm_tiles.hpp's operand_tile), loaded to `dst`
// in every CTA of `peers` (Tile::peers CTAs share the tile; this CTA is number `piece` of them).
// K-major: rows [piece, piece + 1) x rows / peers as one box. MN-major: its share of the tile's
// boxes.
HOPPER_EXEC_CHECK_OFF
template <class Tile, class Tg, class D>
HOPPER_HD void load_share(const Tg& t, D dst, const typename Tg::tensor_map_type& map, typename Tg::barrier_type& bar,
                          uint16_t peers, int piece, int k0, int mn0) {
  constexpr int PEERS = Tile::peers;
  if constexpr (!Tile::mn_major) {
    const int r0 = piece * (Tile::rows / PEERS);
    if constexpr (PEERS > 1)
      t.cp_async_bulk_tensor_shared_cluster_global_multicast(dst + r0 * int(Tile::row_bytes), map, bar, peers, k0,
                                                             mn0 + r0);
    else
      t.cp_async_bulk_tensor_shared_cluster_global(dst, map, bar, k0, mn0);
  } else {
    constexpr int boxes = Tile::rows / Tile::mn_box_rows / PEERS;
    HOPPER_PRAGMA_UNROLL
    for (int j = piece * boxes; j < (piece + 1) * boxes; ++j) {
      if constexpr (PEERS > 1)
        t.cp_async_bulk_tensor_shared_cluster_global_multicast(dst + j * Tile::mn_box_bytes, map, bar, peers,
                                                               mn0 + Tile::mn_box_rows * j, k0);
      else
        t.cp_async_bulk_tensor_shared_cluster_global(dst + j * Tile::mn_box_bytes, map, bar,
                                                     mn0 + Tile::mn_box_rows * j, k0);
    }
  }
}

// The wgmma of one k-block on one operand pair: BK / 16 steps of m64nNk16 from the stage whose
// first k-step descriptors are `a_desc` / `b_desc` (each k-step moves the start address by the
// tile's k_step_bytes). H > 1: H row halves of A (ping-pong's 128 rows) against the same B.
// scale_d false on the block's first step overwrites the accumulators.
HOPPER_EXEC_CHECK_OFF
template <class T, int N, int H, class Tg>
HOPPER_HD void mma_k_block(Tg& t, float (&acc)[H][N / 2], uint64_t a_desc, uint64_t b_desc, bool accumulate) {
  using A = typename T::A_TILE;
  using B = typename T::B_TILE;
  constexpr uint32_t A_STEP = A::k_step_bytes, B_STEP = B::k_step_bytes;
  constexpr uint32_t A_HALF = A::slice_bytes(T::WG_M);  // the next 64 rows of A
  t.wgmma_fence();
  HOPPER_PRAGMA_UNROLL
  for (int kk = 0; kk < A::k / wgmma_k; ++kk) {
    const uint64_t db = ptx::wgmma_desc_advance(b_desc, kk * B_STEP);
    HOPPER_PRAGMA_UNROLL
    for (int h = 0; h < H; ++h) {
      const uint64_t da = ptx::wgmma_desc_advance(a_desc, h * A_HALF + kk * A_STEP);
      t.template wgmma_m64nNk16_f32_bf16_bf16<N, 1, 1, A::mn_major ? 1 : 0, B::mn_major ? 1 : 0>(acc[h], da, db,
                                                                                                 accumulate || kk > 0);
    }
  }
  t.wgmma_commit_group();
}

// The descriptors of one warpgroup's operands in stage 0 of the ring (from their shared-window
// addresses); stage i's are these advanced by i stages (stage_desc).
struct operand_descs {
  uint64_t a, b;
};
template <class T>
HOPPER_HD operand_descs first_stage_descs(uint32_t a_addr, uint32_t b_addr) {
  a_addr = keep_in_register(a_addr);  // the loop adds to these; nothing rebuilds them
  b_addr = keep_in_register(b_addr);
  return {T::A_TILE::desc(a_addr), T::B_TILE::desc(b_addr)};
}
template <class T>
HOPPER_HD operand_descs stage_descs(const operand_descs& first, uint32_t stage) {
  return {ptx::wgmma_desc_advance(first.a, stage * uint32_t(sizeof(typename T::A_TILE))),
          ptx::wgmma_desc_advance(first.b, stage * uint32_t(sizeof(typename T::B_TILE)))};
}

// A consumer warpgroup's main loop over k-blocks [kb0, kb1) starting at ring state `s`: wait for
// each stage (RAW guard), issue its wgmma group, keep one group in flight, and release the stage
// whose group wait_group<1> just retired (WAR guard; .relaxed: the reads were the tensor cores');
// at the end retire the last group and release its stage. `first` holds the warpgroup's operand
// descriptors in stage 0; `first_issued()` runs once the first k-block's group is issued (the
// tensor cores are busy: work that only needs other registers overlaps them), `issued()` once the
// last k-block's group is issued, before the last wait.
HOPPER_EXEC_CHECK_OFF
template <class T, int N, int H, class Tg, class Pipe, class FirstIssued, class Issued>
HOPPER_HD void consume_k_blocks(Tg& t, Pipe& pipe, typename Pipe::state& s, float (&acc)[H][N / 2], int kb0, int kb1,
                                int warp, const operand_descs& first, FirstIssued&& first_issued, Issued&& issued) {
  constexpr auto retired = release_sem::relaxed;  // wgmma reads, done at wait_group
  auto read = s;                                  // the stage whose wgmma group is retired next
  // Issues k-block kb (from stage s); after the first, retires the group before it and releases
  // its stage. kb1 > kb0: every work item has at least one k-block.
  const auto step = [&](int kb) {
    pipe.wait(s);
    const operand_descs d = stage_descs<T>(first, s.index());
    mma_k_block<T, N, H>(t, acc, d.a, d.b, kb > kb0);
    if (kb == kb0) return;
    // One group stays in flight; the one before it has finished reading its stage.
    t.template wgmma_wait_group<1>();
    // The model's planted fault "release own CTA only" arrives on this CTA's barrier alone.
    if (t.planted("release own CTA only")) {
      if (warp == 0 && t.lane() == 0) (void)pipe.backend().template mbarrier_arrive<retired>(pipe.empty(read));
    } else if (warp == 0) {
      pipe.template release<retired>(read);
    }
    ++read;
  };
  step(kb0);
  ++s;
  first_issued();
  for (int kb = kb0 + 1; kb < kb1; ++kb, ++s) step(kb);
  issued();
  t.template wgmma_wait_group<0>();
  if (warp == 0) pipe.template release<retired>(read);
}

// The columns [n_tma, N) of the box at `buf` (16 rows x 128 bytes, swizzled) with plain stores,
// lane r its row r: fewer than 16 bytes per row, which a TMA store would round up to a whole chunk
// past column N. The lanes' fragment stores must be in the box first (__syncwarp).
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg>
HOPPER_HD void store_tail(Tg& t, smem_of<Tg, uint8_t> buf, const body_params<Tg>& p, int warp_row0, int col0,
                          int lane) {
  using E = std::conditional_t<sizeof(typename T::OutT) == 2, uint16_t, uint32_t>;
  t.syncwarp();
  const int row = warp_row0 + lane;
  if (lane >= T::EPI_ROWS || row >= p.M) return;
  const int first = col0 > p.n_tma ? col0 : p.n_tma;
  const int last = col0 + T::EPI_COLS < p.N ? col0 + T::EPI_COLS : p.N;
  for (int col = first; col < last; ++col) {
    const uint32_t at = hopper::swizzle_offset(
        tile_swizzle, uint32_t(lane * int(T::EPI_BOX::row_bytes) + (col - col0) * int(sizeof(E))));
    const E v = (buf + at).template as<E>().load(0);
    (p.c + size_t(int64_t(row) * p.ldc_bytes + int64_t(col) * int64_t(sizeof(E)))).template as<E>().store(0, v);
  }
}

// The epilogue of one 64-row half tile held by a consumer warpgroup: each warp stores its own
// 16 rows: registers -> one of the warp's two 128B-swizzled 16-row x 128-byte shared boxes ->
// TMA store issued by the warp's lane 0. Warps share no buffer, so only __syncwarp orders them.
// Swizzled, so the fragment stores are bank-conflict free; before refilling a buffer, lane 0
// waits until its store issued two boxes ago has read it (bulk group, wait_group.read 1).
// `put(dst, i)` writes the warpgroup fragment's elements i and i + 1 (adjacent columns) at dst:
// from the accumulators, or from the bf16 words a deferred epilogue packed them into.
HOPPER_EXEC_CHECK_OFF
template <class T, int C0 = 0, int C1 = T::EPI_CHUNKS, class Tg, class Put>
HOPPER_HD void store_rows(Tg& t, Put&& put, const typename Tg::tensor_map_type& tma_c, smem_of<Tg, uint8_t> epi,
                          uint32_t& epi_count, int wg_thread, int row0, int n0, const body_params<Tg>& p) {
  const int M = p.M, N = p.N;
  const int warp = wg_thread / warp_threads, lane = wg_thread % warp_threads;
  const int warp_row0 = row0 + warp * T::EPI_ROWS;
  if (warp_row0 >= M) return;  // uniform over the warp; rows past M inside the box TMA clips
  const auto bufs = epi + warp * T::EPI_BOX::buffers * T::EPI_BYTES;
  using F = fragment_place;
  const F f = F::of(lane);  // the thread's place in its warp's 16 rows
  constexpr int BLOCKS = T::EPI_COLS / F::block_cols;
  HOPPER_PRAGMA_UNROLL
  for (int c = C0; c < C1; ++c) {
    const int col0 = n0 + c * T::EPI_COLS;
    if (col0 >= N) break;  // uniform over the warpgroup
    const auto buf = bufs + (epi_count & 1u) * T::EPI_BYTES;
    if (lane == 0) t.template cp_async_bulk_wait_group_read<1>();
    t.syncwarp();
    HOPPER_PRAGMA_UNROLL
    for (int j = 0; j < BLOCKS; ++j) {
      const int i = (c * BLOCKS + j) * F::block_elems;  // acc[i..i+3]: one block of columns
      const uint32_t col_bytes = uint32_t(f.col0 + j * F::block_cols) * sizeof(typename T::OutT);  // in the chunk
      const uint32_t o_lo =
          hopper::swizzle_offset(tile_swizzle, (f.row0 + F::row(i)) * int(T::EPI_BOX::row_bytes) + col_bytes);
      const uint32_t o_hi =
          hopper::swizzle_offset(tile_swizzle, (f.row0 + F::row(i + F::pair)) * int(T::EPI_BOX::row_bytes) + col_bytes);
      put(buf + o_lo, i);
      put(buf + o_hi, i + F::pair);
    }
    if (col0 + T::EPI_COLS > p.n_tma && p.n_tma < N) store_tail<T>(t, buf, p, warp_row0, col0, lane);
    // Generic-proxy writes -> visible to the async proxy (TMA) before the store reads them.
    t.fence_proxy_async_shared_cta();
    t.syncwarp();
    if (lane == 0) {
      if (col0 < p.n_tma) t.cp_async_bulk_tensor_global_shared_cta(tma_c, buf, col0, warp_row0);
      t.cp_async_bulk_commit_group();  // an empty group where the map has no column of the box
    }
    ++epi_count;
  }
}

// The last piece's sum, in slot order 0, 1, ..., S - 1, of the float4s that the first L warps of
// the warpgroup left in each of a fixup tile's S slots (`base`: slot 0, thread 0), spread over all
// 128 threads: thread T sums the float4s T, T + 128, ... of the slot's [q][thread < 32 L] list,
// G slots of J float4s per round of loads in flight, and puts each sum back in slot 0. With few
// live rows (few tokens) this takes a round of loads or two instead of one per slot. The sums
// are kept in the thread's own accumulators (their values are in its partial already), so the
// registers this needs are those of the loads in flight.
HOPPER_EXEC_CHECK_OFF
template <int L, int ACC, class Tg>
HOPPER_HD void spread_slot_sum(Tg& t, float (&acc)[ACC], gmem_of<Tg, typename Tg::f32x4> base, int S, int wg_thread) {
  using f32x4 = typename Tg::f32x4;
  constexpr int Q = ACC / 4, W = warpgroup_threads, LIVE = L * warp_threads, P = Q * L / 4;  // float4s per thread
  constexpr int J = P < 8 ? P : 8, G = 8 / J;  // at most 8 float4s (32 registers) in flight
  static_assert(Q * L % 4 == 0, "the live float4s split evenly over the warpgroup");
  const auto at = [&](int j) {
    const int i = wg_thread + W * j;
    return (i / LIVE) * W + i % LIVE;
  };
  HOPPER_PRAGMA_UNROLL
  for (int j0 = 0; j0 < P; j0 += J) {
    for (int s0 = 0; s0 < S; s0 += G) {
      f32x4 v[G][J];
      HOPPER_PRAGMA_UNROLL
      for (int g = 0; g < G; ++g)
        if (s0 + g < S) {
          HOPPER_PRAGMA_UNROLL
          for (int j = 0; j < J; ++j) v[g][j] = t.ld_global_cg(base + size_t(s0 + g) * Q * W + at(j0 + j));
        }
      HOPPER_PRAGMA_UNROLL
      for (int g = 0; g < G; ++g)
        if (s0 + g < S) {
          HOPPER_PRAGMA_UNROLL
          for (int j = 0; j < J; ++j) {
            float* a = acc + 4 * (j0 + j);
            if (s0 + g == 0) {
              a[0] = v[g][j].x, a[1] = v[g][j].y, a[2] = v[g][j].z, a[3] = v[g][j].w;
            } else {
              a[0] += v[g][j].x, a[1] += v[g][j].y, a[2] += v[g][j].z, a[3] += v[g][j].w;
            }
          }
        }
    }
    HOPPER_PRAGMA_UNROLL
    for (int j = 0; j < J; ++j) {
      const float* a = acc + 4 * (j0 + j);
      t.st_global_cg(base + at(j0 + j), f32x4{a[0], a[1], a[2], a[3]});
    }
  }
}

// Split-K / stream-K fixup for one consumer warpgroup (128 threads, its gemm_barrier::fixup) of fixup
// CTA tile `tile`, piece `slot` of `slots`: its first `live_count` warps (those whose rows start
// below M) store their fp32 partial (each thread its ACC floats as float4s, thread-interleaved so
// that every float4 step is one coalesced write of the live threads), then thread 0 counts the
// arrival. The warpgroup that completes the count reads every slot's partial back, in slot order
// 0, 1, ..., into acc, resets the counter for the next launch and returns true where the thread
// holds rows of the tile to store (its warp is live); all others return false. With one or two live warps the sum is
// spread over the whole warpgroup (spread_slot_sum) and read back from slot 0. Ordering with one gpu-scope operation
// per warpgroup: the named barrier orders every thread's partial stores before thread 0, whose atom.add.acq_rel.gpu
// releases them (cumulatively) and, in the last arriver, acquires the other pieces' partials; the second barrier passes
// that on to the warpgroup's loads (ld.global.cg), and a third orders the spread sums before their owners load them.
HOPPER_EXEC_CHECK_OFF
template <int ACC, class Tg>
HOPPER_HD bool split_k_fixup(Tg& t, float (&acc)[ACC], const body_params<Tg>& p, int tile, int w, int slot, int S,
                             int wg_thread, int live_count, smem_of<Tg, int> flag) {
  using f32x4 = typename Tg::f32x4;
  constexpr int Q = ACC / 4;            // float4 per thread
  constexpr int W = warpgroup_threads;  // the partial is thread-interleaved
  const bool live = wg_thread / warp_threads < live_count;
  const auto base = p.partial + size_t(tile * consumer_warpgroups + w) * p.slot_stride * Q * W;
  const auto slots = base + wg_thread;
  const auto mine = slots + size_t(slot) * Q * W;
  if (live) {
    HOPPER_PRAGMA_UNROLL
    for (int q = 0; q < Q; ++q)
      t.st_global_cg(mine + q * W, f32x4{acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]});
  }
  t.bar_sync(barrier_id(gemm_barrier::fixup, w), barrier_threads(gemm_barrier::fixup));
  const auto counter = p.counters + tile * consumer_warpgroups + w;
  if (wg_thread == 0) {
    // The model's planted fault "split-K relaxed handshake": the partials are not ordered.
    const int arrived = t.planted("split-K relaxed handshake") ? t.template atom_add_gpu<ptx::sem::relaxed>(counter, 1)
                                                               : t.template atom_add_gpu<ptx::sem::acq_rel>(counter, 1);
    flag.store(0, arrived == S - 1);
  }
  t.bar_sync(barrier_id(gemm_barrier::fixup, w), barrier_threads(gemm_barrier::fixup));
  const bool last = flag.load(0) != 0;
  // Nobody reads the flag again before the next fixup's first barrier has been passed by all.
  if (!last) return false;
  if (wg_thread == 0) counter.store(0, 0);  // every split of this tile has arrived: ready for next launch
  if (live_count <= 2) {
    if (live_count == 1)
      spread_slot_sum<1>(t, acc, base, S, wg_thread);
    else
      spread_slot_sum<2>(t, acc, base, S, wg_thread);
    // The model's planted fault "split-K spread unordered": the owners load sums still in flight.
    if (!t.planted("split-K spread unordered"))
      t.bar_sync(barrier_id(gemm_barrier::fixup, w), barrier_threads(gemm_barrier::fixup));
    if (!live) return false;
    HOPPER_PRAGMA_UNROLL
    for (int q = 0; q < Q; ++q) {
      const f32x4 v = t.ld_global_cg(slots + q * W);
      acc[4 * q] = v.x, acc[4 * q + 1] = v.y, acc[4 * q + 2] = v.z, acc[4 * q + 3] = v.w;
    }
    return true;
  }
  if (!live) return false;
  // Chunks of 8 float4: 8 independent loads in flight per split without extra live registers
  // (unrolling the split loop too hoists more loads than the 232 registers hold: spills).
  HOPPER_PRAGMA_UNROLL
  for (int q0 = 0; q0 < Q; q0 += 8) {
    for (int s = 0; s < S; ++s) {
      const auto src = slots + size_t(s) * Q * W;
      HOPPER_PRAGMA_UNROLL
      for (int q = q0; q < q0 + 8 && q < Q; ++q) {
        const f32x4 v = t.ld_global_cg(src + q * W);
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

// Where CTA `rank` of its cluster is: CTA (rm, rn) computes tile row crow * CLUSTER_M + rm and
// column ccol * CLUSTER_N + rn of its cluster tile (crow, ccol).
template <class T>
struct cta_place {
  int rank, rm, rn;
  HOPPER_HD void tile_origin(const tile_scheduler& order, int tile, int& m0, int& n0) const {
    int crow, ccol;
    order.coords(tile, crow, ccol);
    m0 = (crow * T::CLUSTER_M + rm) * T::BM;
    n0 = (ccol * T::CLUSTER_N + rn) * T::BN;
  }
};

// What every role reads: the target, the ring, the CTA's shared memory, the three tensor maps,
// the run-time parameters, where the CTA sits in its cluster, which cluster walks which part of
// the work schedule, and the k-blocks of a whole tile.
template <class T, class Tg, class Pipe>
struct role_context {
  Tg& t;
  Pipe& pipe;
  const body_smem<T, Tg>& sm;
  const typename Tg::tensor_map_type& tma_a;
  const typename Tg::tensor_map_type& tma_b;
  const typename Tg::tensor_map_type& tma_c;
  const body_params<Tg>& p;
  cta_place<T> at;
  int cluster_id;
  int k_blocks;
};

// ---- the roles ---------------------------------------------------------------------------------

// The producer (one thread): for every k-block of every work item, wait until every reader of
// the stage (of every CTA it is multicast into) released it, arm full[s] with the whole stage
// (our shares of A and B and the shares the peers multicast into us), load our shares; at the
// end wait for every stage's release, so that no peer arrives on our barriers after we exit.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe>
HOPPER_HD void produce(const role_context<T, Tg, Pipe>& c) {
  Tg& t = c.t;
  Pipe& pipe = c.pipe;
  const body_params<Tg>& p = c.p;
  const cta_place<T>& at = c.at;
  constexpr cluster_shape cs{T::CLUSTER_M, T::CLUSTER_N};
  auto s = pipe.producer_start();
  work_item item;
  for (auto cur = p.work.start(c.cluster_id); p.work.next(cur, item);) {
    int m0, n0;
    at.tile_origin(p.work.order, item.tile, m0, n0);
    const k_range kr = item.k;
    for (int kb = kr.begin; kb < kr.end; ++kb, ++s) {
      pipe.template acquire<typename T::A_TILE, typename T::B_TILE>(s);
      auto& bar = pipe.full(s);
      // The CTAs sharing our A tile (our cluster row) and our B tile (our cluster column).
      const uint16_t a_peers = cs.a_peers(at.rank);
      // The model's planted fault "multicast misses peer" leaves the peer out of B's mask.
      const uint16_t b_peers = t.planted("multicast misses peer") ? uint16_t(1u << at.rank) : cs.b_peers(at.rank);
      const int k0 = kb * T::BK;
      load_share<typename T::A_TILE>(t, c.sm.a + s.index() * T::A_BYTES, c.tma_a, bar, a_peers, at.rn, k0, m0);
      load_share<typename T::B_TILE>(t, c.sm.b + s.index() * T::B_BYTES, c.tma_b, bar, b_peers, at.rm, k0, n0);
      pipe.issued(s);
    }
  }
  if (!t.planted("no drain")) pipe.drain(s);
}

// The epilogue of a cooperative consumer warpgroup w, one object for every finished work item:
// the split-K / stream-K fixup of a shared tile (only the last piece to arrive goes on), the
// stores of the tile's rows through the warpgroup's boxes, and with bf16 output the deferred half:
// the first half of the tile's chunks is stored at once, the second packed into bf16x2 words (a
// quarter of the accumulators' registers; deferring more spills) and stored by `deferred()`,
// which the main loop calls once the next item's first k-block is issued, so that the tensor
// cores restart sooner. `drain()` after the last item.
template <class T, class Tg>
struct cooperative_epilogue {
  // Chunks [KEPT, EPI_CHUNKS) of the tile are stored deferred, as bf16x2 words.
  static constexpr int KEPT = sizeof(typename T::OutT) == 2 ? T::EPI_CHUNKS - (T::EPI_CHUNKS + 1) / 2 : T::EPI_CHUNKS;
  static constexpr int WORD0 = KEPT * T::EPI_COLS / 4;  // first deferred word: 2 columns per word, 8 per 4 accumulators

  int w, wg_thread;
  int pending_row0 = -1, pending_col0 = 0;  // the deferred chunks' origin; -1: nothing pending
  uint32_t epi_count = 0;                   // boxes this warpgroup has stored: picks the buffer
  uint32_t packed[T::ACC / 2 - WORD0 > 0 ? T::ACC / 2 - WORD0 : 1];  // written before it is read

  // Not an aggregate: `packed` is left uninitialized (zeroing it costs a move per word).
  HOPPER_HD cooperative_epilogue(int warpgroup, int thread) : w(warpgroup), wg_thread(thread) {}

  HOPPER_EXEC_CHECK_OFF
  template <class C>
  HOPPER_HD void deferred(const C& c) {
    if (pending_row0 < 0) return;
    store_rows<T, KEPT>(
        c.t, [&](smem_of<Tg, uint8_t> dst, int i) { dst.template as<uint32_t>().store(0, packed[i / 2 - WORD0]); },
        c.tma_c, c.sm.epi + w * T::EPI_WG_BYTES, epi_count, wg_thread, pending_row0, pending_col0, c.p);
    pending_row0 = -1;
  }
  // Work item `item` is finished in `acc`: rows from row0, columns from col0 of C.
  HOPPER_EXEC_CHECK_OFF
  template <class C>
  HOPPER_HD void finish(const C& c, float (&acc)[T::ACC], const work_item& item, int row0, int col0) {
    // A shared tile: every piece leaves its partial; only the last to arrive goes on to store.
    if (row0 < c.p.M && item.slots > 1 &&
        !split_k_fixup<T::ACC>(c.t, acc, c.p, item.fixup * T::CLUSTER + c.at.rank, w, item.slot, item.slots, wg_thread,
                               live_warps(c.p.M - row0), c.sm.last_flag + w))
      return;
    if (row0 >= c.p.M) return;
    store_rows<T, 0, KEPT>(
        c.t, [&](smem_of<Tg, uint8_t> dst, int i) { store_pair<typename T::OutT, Tg>(dst, acc[i], acc[i + 1]); },
        c.tma_c, c.sm.epi + w * T::EPI_WG_BYTES, epi_count, wg_thread, row0, col0, c.p);
    if constexpr (KEPT < T::EPI_CHUNKS) {
      HOPPER_PRAGMA_UNROLL
      for (int i = 2 * WORD0; i < T::ACC; i += 2) packed[i / 2 - WORD0] = pack_bf16x2(acc[i], acc[i + 1]);
      pending_row0 = row0, pending_col0 = col0;
    }
  }
  // After the last item: the deferred stores, then every store has read shared memory before the
  // CTA (and its memory) goes away.
  HOPPER_EXEC_CHECK_OFF
  template <class C>
  HOPPER_HD void drain(const C& c) {
    deferred(c);
    if (wg_thread % warp_threads == 0) c.t.template cp_async_bulk_wait_group<0>();  // each warp's lane 0 issued stores
  }
};

// Cooperative consumer warpgroup w (0 or 1): rows [64w, 64w + 64) of each tile (BM = 128) or
// columns [w BN/2, (w + 1) BN/2) (BM = 64). The main loop knows its epilogue only as the hook it
// calls once an item's first k-block is issued and the object it hands the finished item.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe>
HOPPER_HD void consume_cooperative(const role_context<T, Tg, Pipe>& c, int w, int wg_thread) {
  Tg& t = c.t;
  const body_smem<T, Tg>& sm = c.sm;
  const body_params<Tg>& p = c.p;
  const int warp = wg_thread / warp_threads;
  float acc[1][T::ACC];
  auto s = c.pipe.consumer_start();
  // This warpgroup's rows of A (BM = 128) or columns of B (BM = 64) in stage 0.
  const operand_descs first =
      first_stage_descs<T>(t.smem_addr(sm.a) + (T::SPLIT_N ? 0u : w * T::A_TILE::slice_bytes(T::WG_M)),
                           t.smem_addr(sm.b) + (T::SPLIT_N ? w * T::B_TILE::slice_bytes(T::WG_N) : 0u));
  cooperative_epilogue<T, Tg> epilogue(w, wg_thread);
  work_item item;
  for (auto cur = p.work.start(c.cluster_id); p.work.next(cur, item);) {
    int m0, n0;
    c.at.tile_origin(p.work.order, item.tile, m0, n0);
    consume_k_blocks<T, T::WG_N, 1>(
        t, c.pipe, s, acc, item.k.begin, item.k.end, warp, first, [&] { epilogue.deferred(c); }, [] {});
    t.wgmma_fence_operand(acc[0]);
    epilogue.finish(c, acc[0], item, m0 + (T::SPLIT_N ? 0 : w * T::WG_M), n0 + (T::SPLIT_N ? w * T::WG_N : 0));
  }
  epilogue.drain(c);
}

// Ping-pong consumer warpgroup w: owns items w, w + 2, ... of the cluster's walk of the work
// schedule, the walk the producer fills the ring in (whole 128 x 128 tiles). Order barriers
// (gemm_barrier::order + w): warpgroup w waits on its own for its turn at the tensor cores; the
// other warpgroup arrives there once it has issued its last k-block. So the math runs item after
// item while the epilogue of one warpgroup overlaps the main loop of the other.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe>
HOPPER_HD void consume_pingpong(const role_context<T, Tg, Pipe>& c, int w, int wg_thread) {
  Tg& t = c.t;
  Pipe& pipe = c.pipe;
  const body_smem<T, Tg>& sm = c.sm;
  const body_params<Tg>& p = c.p;
  const work_schedule& work = p.work;
  const int k_blocks = c.k_blocks;
  const int warp = wg_thread / warp_threads;
  const auto epi = sm.epi + w * T::EPI_WG_BYTES;
  uint32_t epi_count = 0;
  float acc[2][T::ACC];  // rows [0, 64) and [64, 128) of the tile
  auto s = pipe.consumer_start();
  s += uint32_t(w * k_blocks);  // warpgroup 1 starts after warpgroup 0's first item
  int j = w;                    // the item's index in the cluster's walk
  const operand_descs first = first_stage_descs<T>(t.smem_addr(sm.a), t.smem_addr(sm.b));
  // Whole tiles: no split, no stream-K (checked by the plan).
  for (auto cur = work.start_tiles(c.cluster_id, w, consumer_warpgroups); !work.done(cur);
       ++cur, j += consumer_warpgroups) {
    const int u = cur.tile;
    int m0, n0;
    c.at.tile_origin(work.order, u, m0, n0);
    if (j > 0) t.bar_sync(barrier_id(gemm_barrier::order, w), barrier_threads(gemm_barrier::order));
    // Once every k-block is issued the other warpgroup may start its item while ours drains;
    // only when the walk has one, so that no arrival is left pending on the barrier at exit.
    consume_k_blocks<T, T::BN, 2>(
        t, pipe, s, acc, 0, k_blocks, warp, first, [] {},
        [&] {
          if (work.has_tile_after(u))
            t.bar_arrive(barrier_id(gemm_barrier::order, 1 - w), barrier_threads(gemm_barrier::order));
        });
    t.wgmma_fence_operand(acc[0]);
    t.wgmma_fence_operand(acc[1]);
    s += uint32_t(k_blocks);  // the other warpgroup's next item
    HOPPER_PRAGMA_UNROLL
    for (int h = 0; h < 2; ++h) {
      const int row0 = m0 + h * T::WG_M;
      if (row0 < p.M)
        store_rows<T>(
            t,
            [&](smem_of<Tg, uint8_t> dst, int i) { store_pair<typename T::OutT, Tg>(dst, acc[h][i], acc[h][i + 1]); },
            c.tma_c, epi, epi_count, wg_thread, row0, n0, p);
    }
  }
  if (wg_thread % warp_threads == 0) t.template cp_async_bulk_wait_group<0>();  // each warp's lane 0 issued stores
}

}  // namespace detail

// The kernel body: every thread of the CTA calls it.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg>
HOPPER_HD void gemm_body(Tg& t, const body_smem<T, Tg>& sm, const typename Tg::tensor_map_type& tma_a,
                         const typename Tg::tensor_map_type& tma_b, const typename Tg::tensor_map_type& tma_c,
                         const body_params<Tg>& p) {
  constexpr int CLUSTER = T::CLUSTER;
  const int wg = int(t.thread() / uint32_t(warpgroup_threads));
  const int wg_thread = int(t.thread() % uint32_t(warpgroup_threads));
  const uint32_t rank = CLUSTER > 1 ? t.cluster_rank() : 0u;
  constexpr cluster_shape cs{T::CLUSTER_M, T::CLUSTER_N};
  const detail::cta_place<T> at{int(rank), cs.row(int(rank)), cs.col(int(rank))};
  const int cluster_id = int(t.block() / uint32_t(CLUSTER));
  const int k_blocks = (p.K + T::BK - 1) / T::BK;

  // Each consumer warpgroup that reads a stage releases it once, from its first warp's leader
  // (the wgmma reads of all four warps retire together); in a cluster the operands are multicast, so a stage
  // is free only when the readers of every CTA have released it.
  using pipe_t = pipeline<T::STAGES, Tg>;
  // The model's planted fault "empty count without peer" counts this CTA's releases only.
  const pipeline_params ring_params{uint32_t(T::READERS), uint32_t(CLUSTER),
                                    CLUSTER > 1 && !t.planted("empty count without peer"), release_by::warp_leader};
  if (t.thread() == 0) {
    t.prefetch_tensormap(tma_a);
    t.prefetch_tensormap(tma_b);
    t.prefetch_tensormap(tma_c);
  }
  // init, fence.mbarrier_init, and a cluster (or CTA) barrier: no peer multicasts into us or
  // arrives on our barriers before they exist.
  auto pipe = pipe_t::init(sm.ring, ring_params, t);
  const detail::role_context<T, Tg, pipe_t> roles{t, pipe, sm, tma_a, tma_b, tma_c, p, at, cluster_id, k_blocks};
  // Programmatic dependent launch: everything above touched only shared memory and the kernel
  // parameters, so with the launch attribute it ran under the previous grid's tail. From here on
  // the kernel reads A and B, writes C and the split-K workspace: wait until the previous grid
  // has finished and its writes are visible. Then let the next grid be scheduled: its CTAs take
  // SMs as ours exit and run their own prologue while our last tiles finish.
  t.griddepcontrol_wait();
  t.griddepcontrol_launch_dependents();

  if (wg == 0) {
    t.template setmaxnreg_dec<T::PRODUCER_REGS>();
    if (wg_thread == 0) detail::produce(roles);
    t.syncwarp();
  } else {
    t.template setmaxnreg_inc<T::CONSUMER_REGS>();
    if constexpr (T::PINGPONG)
      detail::consume_pingpong(roles, wg - 1, wg_thread);
    else
      detail::consume_cooperative(roles, wg - 1, wg_thread);
  }
  // No cluster barrier at exit: the producer's drain() waited for the releases of every CTA's
  // consumers on our empty barriers, and every multicast into our stages completed on a full
  // barrier our consumers waited on, so no peer touches this CTA once its warps are done.
}

}  // namespace hopper::gemm
