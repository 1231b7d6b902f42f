// The attention kernel's compile-time shape, per head dimension: the CTA's roles, the tiles of Q,
// K and V (the GEMM's operand tiles: each owns its bytes, TMA box, k-step and wgmma descriptor),
// the two rings' stages, the registers and the shared-memory layout, in one place. Plain C++: the
// body (attention_body.hpp), the launch plan and the model runner read the same facts from here.
//
// A CTA computes one tile of Q for one (batch, head): two or three consumer warpgroups of 64 rows
// each (wgmma's m64), one producer warpgroup whose elected thread loads Q once and K and V block
// by block through two rings (K's and V's: S = Q K^T may start before V has landed).
#pragma once
#include <cstddef>
#include <cstdint>

#include "hopper/objects/limits.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "hopper/ptx/wgmma_desc.hpp"
#include "kernels/gemm/gemm_tiles.hpp"

namespace hopper::attention {

using gemm::fragment_place;
using gemm::k_block;
using gemm::operand_tile;
using gemm::warp_threads;
using gemm::warpgroup_threads;
using gemm::warpgroup_warps;
using gemm::wgmma_k;
using gemm::wgmma_m;

// The most consumer warpgroups a CTA has (its named barriers are laid out for this many).
inline constexpr int max_consumer_warpgroups = 3;

// One instance of the kernel: its head dimension, kv block, ring depth, consumer warpgroups (the
// tile of Q is 64 rows per consumer warpgroup: wgmma's m64) and Q's buffers.
struct head_dim_shape {
  int head_dim = 0, block_n = 0, stages = 0, consumers = 0, q_stages = 1;
  HOPPER_HD constexpr int block_m() const { return consumers * wgmma_m; }
  HOPPER_HD constexpr int threads() const { return (consumers + 1) * warpgroup_threads; }
  HOPPER_HD constexpr bool operator==(const head_dim_shape& o) const {
    return head_dim == o.head_dim && block_n == o.block_n && stages == o.stages && consumers == o.consumers &&
           q_stages == o.q_stages;
  }
};
// The first instance of head dimension d (attention_rule.hpp lists every compiled one and chooses
// among them), all zeros where it is not instantiated: two consumer warpgroups, the widest kv
// block whose S (BN / 2 fp32), P (BN / 4 words) and O (D / 2 fp32) fit a consumer thread's
// registers, the deepest rings that fit shared memory beside Q, and q_stages_of's Q buffers. A
// function, not a table: the body's device code evaluates it at compile time and may reference no
// host variable.
// Q's buffers by default: two where they fit in shared memory beside the rings (not at head
// dimension 256: 64 KiB each). Beside three consumer warpgroups the producer (32 registers)
// spills 12 bytes with two, and is still 0.90-0.95 of the time of one at the base clock.
HOPPER_HD constexpr int q_stages_of(int d) { return d != 256 ? 2 : 1; }
HOPPER_HD constexpr head_dim_shape shape_of(int d) {
  return d == 64    ? head_dim_shape{64, 128, 3, 2, q_stages_of(64)}
         : d == 128 ? head_dim_shape{128, 128, 2, 2, q_stages_of(128)}
         : d == 256 ? head_dim_shape{256, 64, 2, 2, q_stages_of(256)}
                    : head_dim_shape{};
}
HOPPER_HD constexpr bool supported_head_dim(int d) { return shape_of(d).head_dim != 0; }
// The kv blocks an instance may take: S = Q K^T is one wgmma.m64nBNk16 per k-step (an N the PTX
// layer instantiates) and O += P V takes the block in whole k-steps of 16 kv rows.
HOPPER_HD constexpr bool kv_block_instantiated(int bn) { return ptx::wgmma_n_instantiated(bn) && bn % wgmma_k == 0; }

// Registers per thread from the CTA's launch pool (limits::launch_regs_per_thread), in multiples of
// 8 as setmaxnreg takes them: each of `consumers` warpgroups takes the most it can beside the
// producer's least (32, which its tile walk needs; at most 240), and the producer what they leave.
inline constexpr uint32_t least_producer_regs = 32;
HOPPER_HD constexpr uint32_t launch_pool_regs(int consumers) {
  return uint32_t(consumers + 1) * limits::launch_regs_per_thread(uint32_t(consumers + 1) * warpgroup_threads);
}
HOPPER_HD constexpr uint32_t consumer_regs(int consumers) {
  const uint32_t share = (launch_pool_regs(consumers) - least_producer_regs) / uint32_t(consumers) / 8u * 8u;
  return share < 240u ? share : 240u;
}
HOPPER_HD constexpr uint32_t producer_regs(int consumers) {
  return (launch_pool_regs(consumers) - uint32_t(consumers) * consumer_regs(consumers)) / 8u * 8u;
}

// Q's buffers and their barriers, a ring of N: buffer i holds the Q of a CTA's tiles i, i + N, ..
// (full: Q has landed; empty: every consumer warpgroup's TMA store of O, written over Q's rows,
// has read it, so the next Q may land there).
template <int N, class B>
struct q_ring_storage {
  B full[N];
  B empty[N];
};

// Which tile a Q buffer holds: written by the producer beside each Q it loads, before its arrive on
// the buffer's full barrier, and read by the consumers once that barrier's phase completes, so that
// the tile walk is computed by the producer alone (the consumers, at their registers' limit, only
// read it): the tile's first row m0 of Q of (batch, head), its K/V head, the kv blocks it reads, its
// number n among the CTA's tiles (n is Q's barriers' phase), and `last` (non-zero) on the CTA's
// last tile. kv_head and n stay with the producer; the other fields are what it writes.
struct tile_place {
  int32_t m0, head, kv_head, batch, blocks, n, last;
};

// PINGPONG: the two consumer warpgroups take turns at issuing their wgmma (named barriers,
// attention_barrier::order), so that one's softmax runs while the tensor cores compute the
// other's products.
// BN_, STAGES_, CONSUMERS_ and Q_STAGES_ other than shape_of's: the rule's other instances and
// A/B measurements of the choice. Q_STAGES_ 2: two Q buffers, so that on a persistent grid the
// next tile's Q lands while the consumers still compute and store this one's (1: it waits for
// this tile's stores of O).
template <int D, bool PINGPONG_ = true, int BN_ = shape_of(D).block_n, int STAGES_ = shape_of(D).stages,
          int CONSUMERS_ = shape_of(D).consumers, int Q_STAGES_ = q_stages_of(D)>
struct attention_traits {
  static constexpr bool PINGPONG = PINGPONG_;
  static constexpr int Q_STAGES = Q_STAGES_;
  static_assert(Q_STAGES == 1 || Q_STAGES == 2, "one or two Q buffers");
  static_assert(shape_of(D).head_dim == D, "head dimension 64, 128 or 256 (shape_of)");
  static_assert(CONSUMERS_ >= 2 && CONSUMERS_ <= max_consumer_warpgroups, "two or three consumer warpgroups");
  static constexpr head_dim_shape SHAPE{D, BN_, STAGES_, CONSUMERS_, Q_STAGES_};
  static constexpr int HEAD_DIM = D, BN = BN_, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
  static constexpr int BM = SHAPE.block_m(), THREADS = SHAPE.threads();
  static constexpr int DK = D / k_block;         // the head dimension's k-blocks (Q's and K's tiles)
  static constexpr int PV_STEPS = BN / wgmma_k;  // O += P V's k-steps: 16 kv rows each
  // Q: BM rows x one k-block of d, DK of them; consumer warpgroup w reads rows [64w, 64w + 64).
  // K (S = Q K^T's B operand, K-major): BN kv rows x one k-block of d, DK per stage.
  // V (O += P V's B operand, MN-major: d is contiguous): D columns x the BN kv rows, one per stage
  // (D / 64 boxes of 64 columns x BN rows).
  using Q_TILE = operand_tile<BM, false>;
  using K_TILE = operand_tile<BN, false>;
  using V_TILE = operand_tile<D, true, 1, BN>;
  struct q_tiles {
    Q_TILE t[DK];
  };
  struct k_stage {
    K_TILE t[DK];
  };
  struct v_stage {
    V_TILE t;
  };
  // Per consumer thread: S (m64nBN), O (m64nD) as fp32 accumulators, P as bf16x2 words (wgmma's A
  // fragment: four words per k-step of 16 kv columns).
  static constexpr int ACC_S = BN / 2, ACC_O = D / 2, P_WORDS = BN / 4;
  // Registers: two consumer warpgroups take 232 each beside the producer's 40, three 160 beside its
  // 32 (the tile walk's state: with 24 the producer spilled 20-24 bytes).
  static constexpr uint32_t PRODUCER_REGS = producer_regs(CONSUMERS), CONSUMER_REGS = consumer_regs(CONSUMERS);

  // The CTA's shared memory from a 1024-byte aligned base: Q's buffers (whose rows each warpgroup
  // rewrites with its O for the TMA store once its last S is computed), the K and V stages, the
  // two rings' barriers and Q's, and which tile each Q buffer holds.
  struct shared_storage {
    alignas(gemm::swizzle_atom_bytes) q_tiles q[Q_STAGES];
    alignas(gemm::swizzle_atom_bytes) k_stage k[STAGES];
    alignas(gemm::swizzle_atom_bytes) v_stage v[STAGES];
    pipeline_storage<STAGES, uint64_t> k_ring, v_ring;
    q_ring_storage<Q_STAGES, uint64_t> q_ring;
    tile_place tile[Q_STAGES];  // the tile each Q buffer holds
  };
  static constexpr uint32_t SMEM = uint32_t(offsetof(shared_storage, tile) + sizeof(tile_place[Q_STAGES]));

  static_assert(D % k_block == 0, "whole k-blocks of d");
  static_assert(kv_block_instantiated(BN), "S is one wgmma.m64nBNk16 per k-step, P V's k-steps whole");
  static_assert(ptx::wgmma_rs_n_instantiated(D), "O is one wgmma.m64nDk16 (A from registers) per k-step");
  static_assert(SMEM <= uint32_t(limits::max_smem_per_block), "fits in 227 KiB of shared memory");
  static_assert(limits::register_split_fits(1, PRODUCER_REGS, CONSUMERS, CONSUMER_REGS),
                "setmaxnreg inside the CTA's launch pool");
  // The launch pool is the register file's share of THREADS: one CTA per SM, so that a persistent
  // grid of as many CTAs as SMs is every CTA the device holds at once (make_launch_plan).
  static_assert(2 * launch_pool_regs(CONSUMERS) * warpgroup_threads > limits::registers_per_sm, "one CTA per SM");
  static_assert(sizeof(k_stage) < (1u << 20) && sizeof(v_stage) < (1u << 20), "tx-count limit of an mbarrier phase");
};

// The kernel's named barriers (0 is __syncthreads'): each consumer warpgroup w has one for its
// epilogue (its 128 threads meet before its TMA store of O) at epilogue + w, and with ping-pong
// one for its turn at the tensor cores at order + w (two warpgroups' 256 threads: w waits there,
// the warpgroup before it in the turn order arrives).
enum class attention_barrier : uint32_t { epilogue = 1, order = 1 + max_consumer_warpgroups };
HOPPER_HD constexpr uint32_t barrier_id(attention_barrier kind, int warpgroup) {
  return uint32_t(kind) + uint32_t(warpgroup);
}
HOPPER_HD constexpr uint32_t barrier_threads(attention_barrier kind) {
  return uint32_t(kind == attention_barrier::epilogue ? warpgroup_threads : 2 * warpgroup_threads);
}
static_assert(barrier_id(attention_barrier::epilogue, max_consumer_warpgroups - 1) <
                  barrier_id(attention_barrier::order, 0),
              "epilogue and order ids overlap");
static_assert(barrier_id(attention_barrier::order, max_consumer_warpgroups - 1) < limits::named_barrier_count,
              "16 named barriers");

}  // namespace hopper::attention
