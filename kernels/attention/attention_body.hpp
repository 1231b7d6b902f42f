// Attention forward, O = softmax(scale . Q K^T + mask) V with the row log-sum-exp, bf16 in and
// out, fp32 accumulation and softmax, written once over a target: kernels/attention/attention.cuh
// runs it on the GPU with hopper::device_target, attention_on_model.hpp runs the same lines on the
// model. Plain C++ apart from the target.
//
// One CTA = 1 + C warpgroups (attention_traits.hpp, C = 2 or 3) on tiles of 64 C rows of Q of
// one (batch, head): one tile, or with a persistent grid one tile a round (cta_tile) in turn, the
// two rings running on from one tile into the next:
//   warpgroup 0     producer (produce): one thread walks the CTA's tiles and loads, per tile, Q
//                   (its own barriers: full, and empty once the last tile's O has left) with the
//                   tile's place beside it for the consumers, and for each kv block its K tiles
//                   into the K ring and its V tiles into the V ring;
//   warpgroups 1-C  consumers (consume), 64 rows of Q each: S = Q K^T by wgmma from shared memory,
//                   the online softmax in registers (running max and sum, exp2 with the scale
//                   folded in), P packed to bf16 as wgmma's register A operand, O += P V by wgmma;
//                   the next block's S is issued before this block's P V, so the softmax of one
//                   block runs while the tensor cores compute the other's products; at the end O
//                   is normalised, written over the warpgroup's own rows of Q in shared memory and
//                   stored by TMA, and the log-sum-exp of each row stored to global memory.
// Masking: kv columns past seq_k, and with `causal` the columns past the row (row i sees keys
// 0..i, the top-left alignment of torch.nn.functional.scaled_dot_product_attention). Rows past
// seq_q read the zeros TMA fills in and their stores are clipped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "hopper/hd.hpp"
#include "hopper/objects/numerics.hpp"
#include "hopper/objects/swizzle.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "hopper/ptx/wgmma_desc.hpp"
#include "hopper/target/target_types.hpp"
#include "kernels/attention/attention_traits.hpp"

namespace hopper::attention {

// Where a tensor map takes the sequence, head and batch coordinates (dims 1..3; dim 0 is the head
// dimension): the plan orders each map's dimensions by stride, as the copy engine requires.
struct coord_order {
  uint8_t seq = 1, head = 2, batch = 3;
};

// What the body needs at run time besides the four tensor maps. Tile i is one of Q's tiles of
// (batch, head) pair i / q_tiles, head-major, so that the CTAs running at once share a few heads'
// K and V in L2. A pair is head (pair % heads) of batch pair / heads; its K/V head is
// head / kv_group. Within a head, without a causal mask, tile i computes Q's tile i % q_tiles.
// With one, one CTA per tile takes a head's longest rows first (the hardware hands each freed SM
// the next tile), and a persistent grid, whose static walk must balance itself, takes them as
// pairs of a long and a short tile, each pair the same work: the last tile of Q and the first,
// the one before the last and the second, ... (cta_tile hands out the pairs).
template <class Tg>
struct body_params {
  int heads, kv_group;  // Q heads; Q heads per K/V head
  int seq_q, seq_k;
  int q_tiles;  // ceil(seq_q / BM)
  int tiles;    // q_tiles x heads x batch
  int ctas;     // the grid: tiles, or fewer walking them
  bool causal;
  float scale_log2;  // the softmax scale times log2(e): exp(scale s) = 2^(scale_log2 s)
  coord_order q, k, v, o;
  gmem_of<Tg, float> lse;  // [batch][heads][seq_q], natural log; not written when !has_lse
  bool has_lse;
};

// The CTA's shared memory as the body sees it.
template <class T, class Tg>
struct body_smem {
  smem_of<Tg, uint8_t> q, k, v;  // Q's first buffer, the first K stage, the first V stage
  smem_of<Tg, uint8_t> tile;     // the first Q buffer's tile_place
  pipeline_storage<T::STAGES, typename Tg::barrier_type>& k_ring;
  pipeline_storage<T::STAGES, typename Tg::barrier_type>& v_ring;
  q_ring_storage<T::Q_STAGES, typename Tg::barrier_type>& q_ring;
};

// The Q buffer of a CTA's n-th tile, and the phase its barriers are in for it.
template <class T>
struct q_slot {
  uint32_t index, parity;
  HOPPER_HD static constexpr q_slot of(int n) {
    return {uint32_t(n) % uint32_t(T::Q_STAGES), (uint32_t(n) / uint32_t(T::Q_STAGES)) & 1u};
  }
  HOPPER_HD constexpr int offset() const { return int(index * sizeof(typename T::q_tiles)); }
  // Where this buffer's tile_place is, from body_smem::tile.
  HOPPER_HD constexpr int place_offset() const { return int(index * sizeof(tile_place)); }
};

// The kv blocks the tile of `bm` rows from `m0` reads: every block with a column some row of the
// tile sees.
HOPPER_HD constexpr int kv_blocks(int m0, int bm, int seq_q, int seq_k, bool causal, int bn) {
  const int all = (seq_k + bn - 1) / bn;
  if (!causal) return all;
  const int last_row = (m0 + bm < seq_q ? m0 + bm : seq_q) - 1;
  const int seen = last_row / bn + 1;  // row i sees columns 0..i
  return seen < all ? seen : all;
}

namespace detail {

inline constexpr float neg_inf = -std::numeric_limits<float>::infinity();

HOPPER_HD uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
HOPPER_HD float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// The maximum and the sum over the four lanes of a quad: the threads that hold one row of a wgmma
// accumulator (shfl.sync.bfly over lane bits 0 and 1).
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD float quad_max(const Tg& t, float x) {
  x = max_f32(x, float_of(t.shfl_xor_sync(bits_of(x), 1u)));
  return max_f32(x, float_of(t.shfl_xor_sync(bits_of(x), 2u)));
}
HOPPER_EXEC_CHECK_OFF
template <class Tg>
HOPPER_HD float quad_sum(const Tg& t, float x) {
  x += float_of(t.shfl_xor_sync(bits_of(x), 1u));
  return x + float_of(t.shfl_xor_sync(bits_of(x), 2u));
}

// A tensor copy of one box at (d, seq, head, batch), in the map's own order of dimensions.
HOPPER_EXEC_CHECK_OFF
template <class Tg, class D>
HOPPER_HD void load_box(const Tg& t, D dst, const typename Tg::tensor_map_type& map, typename Tg::barrier_type& bar,
                        coord_order o, int d, int seq, int head, int batch) {
  const int c1 = o.seq == 1 ? seq : o.head == 1 ? head : batch;
  const int c2 = o.seq == 2 ? seq : o.head == 2 ? head : batch;
  const int c3 = o.seq == 3 ? seq : o.head == 3 ? head : batch;
  t.cp_async_bulk_tensor_shared_cluster_global(dst, map, bar, d, c1, c2, c3);
}
HOPPER_EXEC_CHECK_OFF
template <class Tg, class S>
HOPPER_HD void store_box(const Tg& t, const typename Tg::tensor_map_type& map, S src, coord_order o, int d, int seq,
                         int head, int batch) {
  const int c1 = o.seq == 1 ? seq : o.head == 1 ? head : batch;
  const int c2 = o.seq == 2 ? seq : o.head == 2 ? head : batch;
  const int c3 = o.seq == 3 ? seq : o.head == 3 ? head : batch;
  t.cp_async_bulk_tensor_global_shared_cta(map, src, d, c1, c2, c3);
}

// The n-th tile block `b` of a grid of `ctas` computes, of `tiles`; `tiles` or more: none. With
// a CTA per tile, tile b alone; on a persistent grid (fewer CTAs) without `paired`, tile
// n ctas + b, so that a round's CTAs cover ctas consecutive tiles (a few heads). `paired` (a
// causal mask) takes the tiles two at a time: round r gives block b tiles 2 (r ctas + b) and the
// one after it, so a round's CTAs cover 2 ctas consecutive tiles and the same work each. Tiles of
// equal work need no pairs, whose rounds quantize twice as coarsely.
HOPPER_HD constexpr int64_t cta_tile(int b, int n, int ctas, int tiles, bool paired) {
  if (ctas >= tiles || !paired) return int64_t(n) * ctas + b;
  return 2 * (int64_t(n / 2) * ctas + b) + n % 2;
}
// The grid that walks `tiles` on at most `resident` CTAs (cta_tile): one CTA per tile where
// they all fit, `resident`, or with pairs no more CTAs than pairs.
HOPPER_HD constexpr int64_t walk_grid(int64_t tiles, int64_t resident, bool paired) {
  if (resident >= tiles) return tiles;
  return paired ? (resident < (tiles + 1) / 2 ? resident : (tiles + 1) / 2) : resident;
}

// Q's tile that position i of a head's tiles computes (see body_params).
HOPPER_HD constexpr int q_tile_at(int i, int q_tiles, bool causal, bool paired) {
  if (!causal) return i;
  if (!paired) return q_tiles - 1 - i;
  return i % 2 == 0 ? q_tiles - 1 - i / 2 : i / 2;
}

// The n-th tile of block b (the producer's walk; the consumers read it from shared memory).
template <class T, class Tg>
HOPPER_HD tile_place place_of(int b, int n, const body_params<Tg>& p) {
  const int tile = int(cta_tile(b, n, p.ctas, p.tiles, p.causal));
  const int qt = q_tile_at(tile % p.q_tiles, p.q_tiles, p.causal, p.ctas < p.tiles);
  const int bh = tile / p.q_tiles;
  tile_place at;
  at.m0 = qt * T::BM;
  at.head = bh % p.heads;
  at.batch = bh / p.heads;
  at.kv_head = at.head / p.kv_group;
  at.blocks = kv_blocks(at.m0, T::BM, p.seq_q, p.seq_k, p.causal, T::BN);
  at.n = n;
  at.last = cta_tile(b, n + 1, p.ctas, p.tiles, p.causal) >= p.tiles;
  return at;
}

// What every role reads: the target, the two rings, the CTA's shared memory, the four tensor
// maps and the run-time parameters.
template <class T, class Tg, class Pipe>
struct role_context {
  Tg& t;
  Pipe& k_pipe;
  Pipe& v_pipe;
  const body_smem<T, Tg>& sm;
  const typename Tg::tensor_map_type& tma_q;
  const typename Tg::tensor_map_type& tma_k;
  const typename Tg::tensor_map_type& tma_v;
  const typename Tg::tensor_map_type& tma_o;
  const body_params<Tg>& p;
};

// The producer's walk: f(tile_place) for each tile of this CTA, in order.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe, class F>
HOPPER_HD void for_each_tile(const role_context<T, Tg, Pipe>& c, F&& f) {
  const int b = int(c.t.block());
  for (int n = 0; cta_tile(b, n, c.p.ctas, c.p.tiles, c.p.causal) < c.p.tiles; ++n) f(place_of<T>(b, n, c.p));
}

// A tile as the consumers see it: the producer's tile_place beside the tile's Q, each field read
// from shared memory where it is used, so that none holds a register through the tile (a loaded
// value, unlike arithmetic on the parameters, cannot be recomputed later) unless the consumer keeps
// it (consume_tile keeps the two its kv loop tests at every block). Valid from the completion of
// Q's full barrier until the consumer's arrive on its empty one, after which the producer writes
// the next tile's place there.
template <class Tg>
struct landed_tile {
  smem_of<Tg, uint8_t> place;
  int n;  // the tile's number among the CTA's tiles
  HOPPER_HD int32_t field(size_t offset) const { return (place + offset).template as<int32_t>().load(0); }
  HOPPER_HD int32_t m0() const { return field(offsetof(tile_place, m0)); }
  HOPPER_HD int32_t head() const { return field(offsetof(tile_place, head)); }
  HOPPER_HD int32_t batch() const { return field(offsetof(tile_place, batch)); }
  HOPPER_HD int32_t blocks() const { return field(offsetof(tile_place, blocks)); }
  HOPPER_HD bool last() const { return field(offsetof(tile_place, last)) != 0; }
};

// The consumers' walk: for each tile of this CTA, in order, wait for its Q (Q's full barrier) and
// call f(landed_tile), which returns whether the tile was the CTA's last (read before its release).
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe, class F>
HOPPER_HD void for_each_tile_landed(const role_context<T, Tg, Pipe>& c, F&& f) {
  for (int n = 0;; ++n) {
    const q_slot<T> qs = q_slot<T>::of(n);
    c.t.mbarrier_wait(c.sm.q_ring.full[qs.index], parity(qs.parity));
    if (f(landed_tile<Tg>{c.sm.tile + size_t(qs.place_offset()), n})) return;
  }
}

// ---- the producer -------------------------------------------------------------------------------

// One thread, per tile: block by block K's tiles (the box of BN kv rows x 64 of d, one per k-block
// of d) and V's (boxes of 64 of d x BN kv rows, one per 64 of d), and after the first
// block's K, Q's tiles into the tile's Q buffer on its full barrier once its empty one says the O
// of the tile Q_STAGES before has left (so that the next tile's first K lands while the consumers
// finish the last one); at the end wait for every stage's release.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe>
HOPPER_HD void produce(const role_context<T, Tg, Pipe>& c) {
  Tg& t = c.t;
  const body_params<Tg>& p = c.p;
  using q_tiles = typename T::q_tiles;
  using k_stage = typename T::k_stage;
  using v_stage = typename T::v_stage;
  using V_TILE = typename T::V_TILE;
  auto ks = c.k_pipe.producer_start();
  auto vs = c.v_pipe.producer_start();
  for_each_tile(c, [&](const tile_place& at) {
    for (int j = 0; j < at.blocks; ++j, ++ks, ++vs) {
      const int kv0 = j * T::BN;
      c.k_pipe.template acquire<k_stage>(ks);
      const auto kdst = c.sm.k + int(ks.index() * sizeof(k_stage));
      HOPPER_PRAGMA_UNROLL
      for (int kb = 0; kb < T::DK; ++kb)
        load_box(t, kdst + kb * int(sizeof(typename T::K_TILE)), c.tma_k, c.k_pipe.full(ks), p.k, kb * k_block, kv0,
                 at.kv_head, at.batch);
      c.k_pipe.issued(ks);
      if (j == 0) {
        const q_slot<T> qs = q_slot<T>::of(at.n);
        auto& full = c.sm.q_ring.full[qs.index];
        if (at.n >= T::Q_STAGES) t.mbarrier_wait(c.sm.q_ring.empty[qs.index], parity(qs.parity ^ 1u));
        // Which tile this Q is, for the consumers: published by the arrive below (.release).
        const auto place = c.sm.tile + size_t(qs.place_offset());
        (place + offsetof(tile_place, m0)).template as<int32_t>().store(0, at.m0);
        (place + offsetof(tile_place, head)).template as<int32_t>().store(0, at.head);
        (place + offsetof(tile_place, batch)).template as<int32_t>().store(0, at.batch);
        (place + offsetof(tile_place, blocks)).template as<int32_t>().store(0, at.blocks);
        (place + offsetof(tile_place, last)).template as<int32_t>().store(0, at.last);
        (void)t.template mbarrier_arrive_expect_tx<ptx::sem::release, ptx::scope::cta>(full, uint32_t(sizeof(q_tiles)));
        HOPPER_PRAGMA_UNROLL
        for (int kb = 0; kb < T::DK; ++kb)
          load_box(t, c.sm.q + (qs.offset() + kb * int(sizeof(typename T::Q_TILE))), c.tma_q, full, p.q, kb * k_block,
                   at.m0, at.head, at.batch);
      }
      c.v_pipe.template acquire<v_stage>(vs);
      const auto vdst = c.sm.v + int(vs.index() * sizeof(v_stage));
      HOPPER_PRAGMA_UNROLL
      for (int db = 0; db < T::DK; ++db)
        load_box(t, vdst + db * int(V_TILE::mn_box_bytes), c.tma_v, c.v_pipe.full(vs), p.v, db * V_TILE::mn_box_rows,
                 kv0, at.kv_head, at.batch);
      c.v_pipe.issued(vs);
    }
  });
  c.k_pipe.drain(ks);
  c.v_pipe.drain(vs);
}

// ---- the consumers' pieces ----------------------------------------------------------------------

// The first kv block (of BN columns) that needs the mask for rows from `first_row`: a block needs
// it if it reaches past seq_k or, causal, past the first row; every later block does too.
HOPPER_HD constexpr int first_masked_block(int first_row, int seq_k, bool causal, int bn) {
  const int past_seq_k = seq_k / bn, past_row = (first_row + 1) / bn;
  return causal && past_row < past_seq_k ? past_row : past_seq_k;
}

// S = Q K^T for one kv block: DK x 4 steps of wgmma.m64nBNk16, A (this warpgroup's 64 rows of Q)
// and B (the stage's K) from shared memory, both K-major. Issued and committed, not waited for.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg>
HOPPER_HD void issue_qk(Tg& t, float (&s)[T::ACC_S], uint64_t q_desc, uint64_t k_desc) {
  using Q_TILE = typename T::Q_TILE;
  using K_TILE = typename T::K_TILE;
  t.wgmma_fence();
  HOPPER_PRAGMA_UNROLL
  for (int kb = 0; kb < T::DK; ++kb) HOPPER_PRAGMA_UNROLL
  for (int kk = 0; kk < k_block / wgmma_k; ++kk) {
    const uint64_t da = ptx::wgmma_desc_advance(q_desc, uint32_t(kb * sizeof(Q_TILE)) + kk * Q_TILE::k_step_bytes);
    const uint64_t db = ptx::wgmma_desc_advance(k_desc, uint32_t(kb * sizeof(K_TILE)) + kk * K_TILE::k_step_bytes);
    t.template wgmma_m64nNk16_f32_bf16_bf16<T::BN, 1, 1, 0, 0>(s, da, db, kb > 0 || kk > 0);
  }
  t.wgmma_commit_group();
}

// O += P V for one kv block: BN / 16 steps of wgmma.m64nDk16 with A = P from registers (four
// bf16x2 words per step: the accumulator fragment of S is the A fragment of P) and B the stage's V
// (MN-major). `accumulate` false on the first block overwrites O. Issued and committed.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg>
HOPPER_HD void issue_pv(Tg& t, float (&o)[T::ACC_O], const uint32_t (&pw)[T::P_WORDS], uint64_t v_desc,
                        bool accumulate) {
  using V_TILE = typename T::V_TILE;
  t.wgmma_fence();
  HOPPER_PRAGMA_UNROLL
  for (int step = 0; step < T::PV_STEPS; ++step) {
    const uint32_t a[4] = {pw[4 * step], pw[4 * step + 1], pw[4 * step + 2], pw[4 * step + 3]};
    const uint64_t db = ptx::wgmma_desc_advance(v_desc, uint32_t(step) * V_TILE::k_step_bytes);
    t.template wgmma_m64nNk16_f32_bf16_bf16<T::HEAD_DIM, 1, 1, 1>(o, a, db, accumulate || step > 0);
  }
  t.wgmma_commit_group();
}

// The running softmax state of this thread's two rows: the reference maximum (in units of
// scale_log2 s, -inf before any column) and this thread's share of the row sum. The reference
// moves only where a block's maximum passes it by more than `rescale_threshold`: below that,
// P = 2^(scale_log2 s - m) stays at most 2^threshold (which bf16 P and fp32 O and l hold), the
// factor that rescales O is exactly 1, and a warp whose rows all keep theirs skips the rescale.
// O / l and the log-sum-exp m + log2 l are exact for any reference.
inline constexpr float rescale_threshold = 8.0f;
struct row_state {
  float m[2] = {detail::neg_inf, detail::neg_inf};
  float l[2] = {0.0f, 0.0f};
};

// One kv block of the online softmax on S (in place: S becomes P, unnormalised, in fp32), with
// the factor `alpha` that rescales what O holds so far. Masked columns (past seq_k; with causal,
// past the row) count as -inf. `row_of()` and `col` are this thread's first row (asked for only when
// `mask`) and kv column.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Row>
HOPPER_HD void online_softmax(const Tg& t, float (&s)[T::ACC_S], row_state& rs, float (&alpha)[2], bool mask,
                              const Row& row_of, int col, const body_params<Tg>& p) {
  if (mask) {
    const int row = row_of();
    // The model's planted fault "causal mask off by one" lets each row see one key too many.
    const int diagonal = t.planted("causal mask off by one") ? 1 : 0;
    HOPPER_PRAGMA_UNROLL
    for (int i = 0; i < T::ACC_S; ++i) {
      const int c = col + fragment_place::col(i), r = row + fragment_place::row(i);
      if (c >= p.seq_k || (p.causal && c > r + diagonal)) s[i] = neg_inf;
    }
  }
  HOPPER_PRAGMA_UNROLL
  for (int h = 0; h < 2; ++h) {
    float mx = neg_inf;
    HOPPER_PRAGMA_UNROLL
    for (int i = 2 * h; i < T::ACC_S; i += 4) mx = max_f32(mx, max_f32(s[i], s[i + 1]));
    const float m_block = quad_max(t, mx) * p.scale_log2;
    const float m_new = m_block > rs.m[h] + rescale_threshold ? m_block : rs.m[h];
    const float m_use = m_new == neg_inf ? 0.0f : m_new;  // a row with no column yet: exp2(-inf) = 0
    alpha[h] = m_new == rs.m[h] ? 1.0f : exp2_ftz(rs.m[h] - m_use);
    rs.m[h] = m_new;
    float sum = 0.0f;
    HOPPER_PRAGMA_UNROLL
    for (int i = 2 * h; i < T::ACC_S; i += 4) {
      s[i] = exp2_ftz(s[i] * p.scale_log2 - m_use);
      s[i + 1] = exp2_ftz(s[i + 1] * p.scale_log2 - m_use);
      sum += s[i] + s[i + 1];
    }
    rs.l[h] = rs.l[h] * alpha[h] + sum;
  }
}

// P as bf16x2 words: words 4k..4k+3 are the A fragment of the k-th 16 columns.
template <class T>
HOPPER_HD void pack_p(const float (&s)[T::ACC_S], uint32_t (&pw)[T::P_WORDS]) {
  HOPPER_PRAGMA_UNROLL
  for (int j = 0; j < T::P_WORDS; ++j) pw[j] = pack_bf16x2(s[2 * j], s[2 * j + 1]);
}

// O times each row's factor, skipped where no row of the warp has moved its reference maximum
// (every factor 1; the vote keeps the branch uniform over the warp).
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg>
HOPPER_HD void rescale(const Tg& t, float (&o)[T::ACC_O], const float (&alpha)[2]) {
  if (t.ballot_sync(alpha[0] != 1.0f || alpha[1] != 1.0f) == 0u) return;
  HOPPER_PRAGMA_UNROLL
  for (int i = 0; i < T::ACC_O; ++i) o[i] *= alpha[(i / 2) % 2];
}

// The epilogue of one consumer warpgroup: O / l as bf16 over the warpgroup's own 64 rows of Q in
// shared memory (their last reader, S's wgmma, has retired), the proxy fence, the warpgroup's
// barrier, and one thread's TMA stores of the DK boxes (clipped at seq_q); the lanes holding a
// row's first column store its log-sum-exp, (m + log2 l) ln 2. With two Q buffers the buffer's
// release waits for the next tile (`q_pending`, release_q_read): the stores read shared memory
// while the next tile's first S is computed.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe>
HOPPER_HD bool store_o(const role_context<T, Tg, Pipe>& c, const landed_tile<Tg>& at, int w, int wg_thread,
                       float (&o)[T::ACC_O], const row_state& rs, int& q_pending) {
  Tg& t = c.t;
  const body_params<Tg>& p = c.p;
  using Q_TILE = typename T::Q_TILE;
  const fragment_place f = fragment_place::of(wg_thread);
  float inv[2], lse[2];
  HOPPER_PRAGMA_UNROLL
  for (int h = 0; h < 2; ++h) {
    const float l = quad_sum(t, rs.l[h]);
    inv[h] = l > 0.0f ? 1.0f / l : 0.0f;
    lse[h] = l > 0.0f ? (rs.m[h] + log2_f32(l)) * 0.69314718055994531f : neg_inf;
  }
  // The tile's place, read by every thread before the warpgroup's barrier below: only thread 0
  // arrives on Q's empty barrier, so the others' reads must come before its arrive.
  const int row0 = at.m0() + w * wgmma_m, head = at.head(), batch = at.batch();
  const bool last = at.last();
  const q_slot<T> qs = q_slot<T>::of(at.n);
  const auto rows = c.sm.q + (qs.offset() + int(Q_TILE::slice_bytes(w * wgmma_m)));
  HOPPER_PRAGMA_UNROLL
  for (int i = 0; i < T::ACC_O; i += 2) {
    const int r = f.row0 + fragment_place::row(i), col = f.col0 + fragment_place::col(i);
    const uint32_t byte = uint32_t(col / k_block) * uint32_t(sizeof(Q_TILE)) +
                          swizzle_offset(gemm::tile_swizzle, uint32_t(r) * Q_TILE::row_bytes +
                                                                 uint32_t(col % k_block) * gemm::operand_elem_bytes);
    const int h = (i / 2) % 2;
    (rows + int(byte)).template as<uint32_t>().store(0, pack_bf16x2(o[i] * inv[h], o[i + 1] * inv[h]));
  }
  // The generic writes of O, then the async proxy's reads of them by the TMA store.
  t.fence_proxy_async_shared_cta();
  t.bar_sync(barrier_id(attention_barrier::epilogue, w), barrier_threads(attention_barrier::epilogue));
  if (wg_thread == 0) {
    HOPPER_PRAGMA_UNROLL
    for (int kb = 0; kb < T::DK; ++kb)
      store_box(t, c.tma_o, rows + kb * int(sizeof(Q_TILE)), p.o, kb * k_block, row0, head, batch);
    t.cp_async_bulk_commit_group();
  }
  if (p.has_lse && f.col0 == 0) {
    const auto lse_row = p.lse + (size_t(batch) * size_t(p.heads) + size_t(head)) * size_t(p.seq_q);
    HOPPER_PRAGMA_UNROLL
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + f.row0 + 8 * h;
      if (r < p.seq_q) lse_row.store(size_t(r), lse[h]);
    }
  }
  // The stores must have read shared memory before the CTA (and its memory) goes away, or before
  // a later tile's Q lands there: then this warpgroup says so on the buffer's empty barrier. With
  // one buffer the next tile's Q waits for that; with two the next tile's start says it.
  if (last) {
    if (wg_thread == 0) t.template cp_async_bulk_wait_group<0>();
  } else if constexpr (T::Q_STAGES == 1) {
    if (wg_thread == 0) {
      t.template cp_async_bulk_wait_group_read<0>();
      (void)t.mbarrier_arrive(c.sm.q_ring.empty[qs.index]);
    }
  } else {
    q_pending = int(qs.index);
  }
  return last;
}

// The release of the Q buffer whose O stores the last tile left in flight (store_o), once they
// have read it: the warpgroup's thread 0 waits for its bulk groups' reads (those stores are its
// only ones in flight) and arrives on the buffer's empty barrier.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe>
HOPPER_HD void release_q_read(const role_context<T, Tg, Pipe>& c, int wg_thread, int& q_pending) {
  if (q_pending < 0) return;
  if (wg_thread == 0) {
    c.t.template cp_async_bulk_wait_group_read<0>();
    (void)c.t.mbarrier_arrive(c.sm.q_ring.empty[q_pending]);
  }
  q_pending = -1;
}

// ---- the consumer role --------------------------------------------------------------------------

// What a consumer warpgroup keeps from tile to tile: its number, its thread's place in the
// fragments, the descriptors of its rows of Q and of the first K and V stages, its place in the
// two rings, and the Q buffer whose release waits for its O stores' reads (-1: none).
template <class Pipe>
struct consumer_state {
  int w, wg_thread, warp;
  fragment_place f;
  uint64_t q_desc, k_desc, v_desc;
  typename Pipe::state ks, vs;
  int q_pending = -1;
};

// One tile for consumer warpgroup w: rows [64w, 64w + 64) of it. Block j's S = Q K^T is issued,
// then block j-1's O += P V_(j-1); the softmax of block j runs while that product is computed;
// once it has retired O is rescaled and the new P packed. Each stage is released (.relaxed: the
// reads were the tensor cores', retired at wgmma.wait_group) by warp 0 once its product has
// retired. Ping-pong: each block's issue is a turn, taken by the warpgroups in the order 0, 1, ..,
// C - 1, 0, .. from tile to tile; warpgroup w waits for its turn on order + w, and once its
// products are issued gives the turn to the next warpgroup (arrives on the next one's barrier).
// The last warpgroup gives warpgroup 0 its first turn (consume) and skips the arrive after its own
// last one in the CTA's last tile, so that every barrier sees as many arrivals as waits and none is
// pending at exit (every warpgroup takes as many turns: the tiles' kv blocks).
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe>
HOPPER_HD bool consume_tile(const role_context<T, Tg, Pipe>& c, const landed_tile<Tg>& at, consumer_state<Pipe>& cs) {
  Tg& t = c.t;
  const body_params<Tg>& p = c.p;
  constexpr auto retired = release_sem::relaxed;
  const int w = cs.w;
  // The tile's kv blocks and its first masked one, held in registers: the loop tests both at every
  // block. This thread's first row in the sequence, read from the tile's place where the mask uses it.
  const int blocks = at.blocks();
  const int first_masked = first_masked_block(at.m0() + w * wgmma_m, p.seq_k, p.causal, T::BN);
  const auto masked = [&](int j) { return j >= first_masked; };
  const auto row = [&] { return at.m0() + w * wgmma_m + cs.f.row0; };
  const auto k_at = [&](uint32_t stage) {
    return ptx::wgmma_desc_advance(cs.k_desc, stage * uint32_t(sizeof(typename T::k_stage)));
  };
  const auto v_at = [&](uint32_t stage) {
    return ptx::wgmma_desc_advance(cs.v_desc, stage * uint32_t(sizeof(typename T::v_stage)));
  };
  const int last = T::CONSUMERS - 1, next = w == last ? 0 : w + 1;
  const auto my_turn = [&] {
    if constexpr (T::PINGPONG)
      t.bar_sync(barrier_id(attention_barrier::order, w), barrier_threads(attention_barrier::order));
  };
  const auto their_turn = [&](int turn) {
    if constexpr (T::PINGPONG)
      if (w != last || turn + 1 < blocks || !at.last())
        t.bar_arrive(barrier_id(attention_barrier::order, next), barrier_threads(attention_barrier::order));
  };
  auto& ks = cs.ks;
  auto& vs = cs.vs;

  float s[T::ACC_S], o[T::ACC_O], alpha[2];
  uint32_t pw[T::P_WORDS];
  row_state rs;
  const q_slot<T> qs = q_slot<T>::of(at.n);
  const uint64_t q_desc = ptx::wgmma_desc_advance(cs.q_desc, uint32_t(qs.offset()));
  c.k_pipe.wait(ks);
  my_turn();
  issue_qk<T>(t, s, q_desc, k_at(ks.index()));
  their_turn(0);
  release_q_read(c, cs.wg_thread, cs.q_pending);
  t.template wgmma_wait_group<0>();
  t.wgmma_fence_operand(s);
  if (cs.warp == 0) c.k_pipe.template release<retired>(ks);
  ++ks;
  online_softmax<T>(t, s, rs, alpha, masked(0), row, cs.f.col0, p);
  pack_p<T>(s, pw);
  for (int j = 1; j < blocks; ++j, ++ks, ++vs) {
    c.k_pipe.wait(ks);
    c.v_pipe.wait(vs);
    my_turn();
    issue_qk<T>(t, s, q_desc, k_at(ks.index()));
    issue_pv<T>(t, o, pw, v_at(vs.index()), j > 1);
    their_turn(j);
    t.template wgmma_wait_group<1>();  // S of block j
    t.wgmma_fence_operand(s);
    if (cs.warp == 0) c.k_pipe.template release<retired>(ks);
    online_softmax<T>(t, s, rs, alpha, masked(j), row, j * T::BN + cs.f.col0, p);
    t.template wgmma_wait_group<0>();  // O += P V of block j - 1
    t.wgmma_fence_operand(o);
    if (cs.warp == 0) c.v_pipe.template release<retired>(vs);
    rescale<T>(t, o, alpha);
    pack_p<T>(s, pw);
  }
  c.v_pipe.wait(vs);
  issue_pv<T>(t, o, pw, v_at(vs.index()), blocks > 1);
  t.template wgmma_wait_group<0>();
  t.wgmma_fence_operand(o);
  if (cs.warp == 0) c.v_pipe.template release<retired>(vs);
  ++vs;
  return store_o(c, at, w, cs.wg_thread, o, rs, cs.q_pending);
}

// Consumer warpgroup w: its state, warpgroup 0's first turn, then its rows of each tile.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg, class Pipe>
HOPPER_HD void consume(const role_context<T, Tg, Pipe>& c, int w, int wg_thread) {
  Tg& t = c.t;
  consumer_state<Pipe> cs{w,
                          wg_thread,
                          wg_thread / warp_threads,
                          fragment_place::of(wg_thread),
                          T::Q_TILE::desc(t.smem_addr(c.sm.q) + T::Q_TILE::slice_bytes(w * wgmma_m)),
                          T::K_TILE::desc(keep_in_register(t.smem_addr(c.sm.k))),
                          T::V_TILE::desc(keep_in_register(t.smem_addr(c.sm.v))),
                          c.k_pipe.consumer_start(),
                          c.v_pipe.consumer_start()};
  if constexpr (T::PINGPONG)
    if (w == T::CONSUMERS - 1)
      t.bar_arrive(barrier_id(attention_barrier::order, 0), barrier_threads(attention_barrier::order));
  for_each_tile_landed(c, [&](const landed_tile<Tg>& at) { return consume_tile(c, at, cs); });
}

}  // namespace detail

// The kernel body: every thread of the CTA calls it.
HOPPER_EXEC_CHECK_OFF
template <class T, class Tg>
HOPPER_HD void attention_body(Tg& t, const body_smem<T, Tg>& sm, const typename Tg::tensor_map_type& tma_q,
                              const typename Tg::tensor_map_type& tma_k, const typename Tg::tensor_map_type& tma_v,
                              const typename Tg::tensor_map_type& tma_o, const body_params<Tg>& p) {
  const int wg = int(t.thread() / uint32_t(warpgroup_threads));
  const int wg_thread = int(t.thread() % uint32_t(warpgroup_threads));
  using pipe_t = pipeline<T::STAGES, Tg>;
  // Each consumer warpgroup releases each stage once, from its first warp.
  constexpr pipeline_params k_params{uint32_t(T::CONSUMERS), 1u, false, release_by::warp_leader, "K full", "K empty"};
  constexpr pipeline_params v_params{uint32_t(T::CONSUMERS), 1u, false, release_by::warp_leader, "V full", "V empty"};
  if (t.thread() == 0) {
    t.prefetch_tensormap(tma_q);
    t.prefetch_tensormap(tma_k);
    t.prefetch_tensormap(tma_v);
    t.prefetch_tensormap(tma_o);
    // Q's barriers: full, one arrival (the producer's expect_tx) and Q's bytes; empty, one
    // arrival per consumer warpgroup. The rings' init below fences them with theirs
    // (fence.mbarrier_init) and their CTA barrier publishes them.
    for (int i = 0; i < T::Q_STAGES; ++i) {
      t.mbarrier_init(sm.q_ring.full[i], 1u, "Q full", uint32_t(i));
      t.mbarrier_init(sm.q_ring.empty[i], uint32_t(T::CONSUMERS), "Q empty", uint32_t(i));
    }
  }
  auto k_pipe = pipe_t::init(sm.k_ring, k_params, t);
  auto v_pipe = pipe_t::init(sm.v_ring, v_params, t);
  const detail::role_context<T, Tg, pipe_t> roles{t, k_pipe, v_pipe, sm, tma_q, tma_k, tma_v, tma_o, p};
  if (wg == 0) {
    t.template setmaxnreg_dec<T::PRODUCER_REGS>();
    if (wg_thread == 0) detail::produce(roles);
    t.syncwarp();
  } else {
    t.template setmaxnreg_inc<T::CONSUMER_REGS>();
    detail::consume(roles, wg - 1, wg_thread);
  }
}

}  // namespace hopper::attention
