// The GEMM's geometry as types: the CTA's roles, the operand tiles of a ring stage and the
// epilogue's boxes of C. Each type owns its bytes, its TMA box, its row pitch, its k-step and its
// wgmma descriptor, so that the kernel's loads, its wgmma, the shared-memory layout, the
// full barrier's expected bytes and the host's tensor maps read one fact from one place. Plain
// C++: the body, the traits, the host plan and the model runner include it.
#pragma once
#include <cstdint>

#include "hopper/hd.hpp"
#include "hopper/objects/swizzle.hpp"
#include "hopper/ptx/wgmma_desc.hpp"

namespace hopper::gemm {

// ---- the CTA's roles ----------------------------------------------------------------------------
// One producer warpgroup and two consumer warpgroups of four warps each.
inline constexpr int warp_threads = 32;
inline constexpr int warpgroup_warps = 4;
inline constexpr int warpgroup_threads = warpgroup_warps * warp_threads;  // 128: one wgmma's threads
inline constexpr int producer_warpgroups = 1;
inline constexpr int consumer_warpgroups = 2;
inline constexpr int cta_threads = (producer_warpgroups + consumer_warpgroups) * warpgroup_threads;  // 384

// ---- the tiles' swizzle and the wgmma shape -----------------------------------------------------
// Every tile is written by TMA with the 128-byte swizzle and read by wgmma (or by the epilogue's
// threads) through the same pattern: rows of 128 bytes in atoms of 8 rows (1024 bytes, the
// alignment a tile keeps).
inline constexpr swizzle tile_swizzle = swizzle::b128;
inline constexpr uint32_t swizzle_row_bytes = swizzle_bytes(tile_swizzle);       // 128
inline constexpr uint32_t swizzle_atom_bytes = swizzle_alignment(tile_swizzle);  // 1024
inline constexpr int operand_elem_bytes = 2;                                     // bf16
// A k-block (one ring stage's depth): one swizzle row of bf16 along K.
inline constexpr int k_block = int(swizzle_row_bytes) / operand_elem_bytes;  // 64
inline constexpr int wgmma_m = 64, wgmma_k = 16;
// Each warp of a warpgroup holds 16 of the accumulator's 64 rows (rows r and r + 8, r = lane / 4).
inline constexpr int warp_acc_rows = wgmma_m / warpgroup_warps;  // 16

// Where a thread's elements of a wgmma.m64nN fp32 accumulator are (PTX ISA, wgmma's D fragment):
// the quad of lanes lane / 4 holds rows row0 and row0 + 8 of its warp's 16; each block of 8
// columns is 4 elements per thread, two adjacent columns from col0 in each of the two rows.
// Element i is at row row0 + row(i) of the warpgroup's 64 and column col0 + col(i).
struct fragment_place {
  static constexpr int quad = 4;                       // lanes per row
  static constexpr int block_cols = 8;                 // columns of one block
  static constexpr int block_elems = 4;                // a thread's elements of a block
  static constexpr int half_rows = warp_acc_rows / 2;  // 8: the distance of a thread's two rows
  static constexpr int pair = block_elems / 2;         // 2 adjacent columns per row
  int row0, col0;
  HOPPER_HD static constexpr fragment_place of(int wg_thread) {
    const int warp = wg_thread / warp_threads, lane = wg_thread % warp_threads;
    return fragment_place{warp * warp_acc_rows + lane / quad, pair * (lane % quad)};
  }
  HOPPER_HD static constexpr int row(int i) { return half_rows * ((i / pair) % 2); }
  HOPPER_HD static constexpr int col(int i) { return block_cols * (i / block_elems) + i % pair; }
};
static_assert(fragment_place::of(37).row0 == 16 + 1 && fragment_place::of(37).col0 == 2, "lane 5 of warp 1");
static_assert(fragment_place::row(2) == 8 && fragment_place::col(5) == 9, "element 5: row 0, column 9");

// The warps of a warpgroup whose accumulator rows start below the problem's edge, `rows` (> 0)
// rows from the warpgroup's first: the others hold only rows past M.
constexpr int live_warps(int rows) {
  return rows >= wgmma_m ? warpgroup_warps : (rows + warp_acc_rows - 1) / warp_acc_rows;
}

// A TMA box: {dims[0], dims[1]} in elements.
struct operand_box {
  uint32_t inner, outer;
};

// One operand's tile of a ring stage: ROWS along M or N x K along K of bf16 (one k-block unless
// given), swizzled. PEERS CTAs of a cluster share it (multicast), each loading its share of the
// boxes. K-major (MN false): each row is one swizzle row (64 K-elements: K is one k-block), the
// tile is one box of ROWS / PEERS rows per CTA. MN-major: boxes of 64 MN-elements (one swizzle row)
// x K K-rows (whole k-steps of 16), ROWS / 64 of them, split over the peers.
template <int ROWS, bool MN, int PEERS = 1, int K = k_block>
struct operand_tile {
  static constexpr int rows = ROWS, peers = PEERS;
  static constexpr bool mn_major = MN;
  static constexpr int k = K;
  static constexpr uint32_t row_bytes = swizzle_row_bytes;
  static constexpr uint32_t bytes = uint32_t(ROWS) * uint32_t(k) * operand_elem_bytes;
  // MN-major: the MN-elements of one box and its bytes.
  static constexpr int mn_box_rows = int(swizzle_row_bytes) / operand_elem_bytes;
  static constexpr uint32_t mn_box_bytes = uint32_t(mn_box_rows) * uint32_t(k) * operand_elem_bytes;
  // The box one TMA load of this tile moves.
  static constexpr operand_box box =
      MN ? operand_box{uint32_t(mn_box_rows), uint32_t(k)} : operand_box{uint32_t(k), uint32_t(ROWS / PEERS)};
  // Bytes a k-step of wgmma (16 along K) moves the start address: 32 bytes along a K-major row,
  // 16 rows of an MN-major box.
  static constexpr uint32_t k_step_bytes = MN ? wgmma_k * row_bytes : wgmma_k * operand_elem_bytes;
  // Offset of the slice that starts `r` rows in (r a multiple of 64 for an MN-major tile).
  HOPPER_HD static constexpr uint32_t slice_bytes(int r) {
    return MN ? uint32_t(r / mn_box_rows) * mn_box_bytes : uint32_t(r) * row_bytes;
  }
  // The wgmma descriptor of the tile (or of a slice of it) at shared-window address `addr`.
  HOPPER_HD static constexpr uint64_t desc(uint32_t addr) {
    return MN ? ptx::make_wgmma_desc_mnmajor_sw128(addr, mn_box_bytes) : ptx::make_wgmma_desc_kmajor_sw128(addr);
  }
  uint8_t data[bytes];

  static_assert(MN ? ROWS % 64 == 0 : ROWS % 8 == 0, "MN-major tiles are whole swizzle rows, K-major whole atoms");
  static_assert(MN ? K % wgmma_k == 0 : K == k_block, "K: MN-major whole k-steps, K-major one swizzle row");
  static_assert(bytes % swizzle_atom_bytes == 0, "tiles keep the swizzle atom's alignment");
  static_assert(MN || (ROWS / PEERS) * row_bytes % swizzle_atom_bytes == 0, "multicast shares keep the alignment");
  static_assert(!MN || (ROWS / mn_box_rows) % PEERS == 0, "MN-major boxes split evenly over the peers");
  static_assert(box.outer <= 256, "a TMA box dimension is at most 256");
};

// The epilogue's box of C: one warp's 16 rows (its share of a wgmma's 64) x one swizzle row,
// written by the warp's threads and stored by one TMA store; each warp has `buffers` of them.
template <int OUT_BYTES>
struct epilogue_box {
  static constexpr int rows = warp_acc_rows;
  static constexpr int cols = int(swizzle_row_bytes) / OUT_BYTES;
  static constexpr uint32_t row_bytes = swizzle_row_bytes;
  static constexpr uint32_t bytes = uint32_t(rows) * row_bytes;
  static constexpr int buffers = 2;                                               // per warp: double buffered
  static constexpr uint32_t warpgroup_bytes = warpgroup_warps * buffers * bytes;  // one consumer's boxes
  static constexpr operand_box box{uint32_t(cols), uint32_t(rows)};
  uint8_t data[bytes];
};

}  // namespace hopper::gemm
