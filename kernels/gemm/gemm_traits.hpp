// The GEMM kernel's compile-time shape: tile geometry, roles, registers, the shared-memory layout
// (one struct) and the tensor-map boxes the producer loads, in one place. Plain C++: the kernel
// (gemm_kernel.cuh), its body (gemm_body.hpp), the host plan (gemm.cuh) and the model tests read
// the same facts from here.
#pragma once
#include <cstddef>
#include <cstdint>

#include "hopper/pipeline/pipeline.hpp"
#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/gemm_tiles.hpp"

namespace hopper::gemm {

// The boxes the plan's tensor maps describe, for a configuration known only at run time: the
// same as the tile types' (gemm_tiles.hpp).
constexpr operand_box operand_box_of(bool mn_major, int rows, int peers) {
  return mn_major ? operand_tile<64, true>::box : operand_box{uint32_t(k_block), uint32_t(rows / peers)};
}
constexpr operand_box c_box_of(int out_bytes) { return out_bytes == 2 ? epilogue_box<2>::box : epilogue_box<4>::box; }
// The columns of C the epilogue's TMA stores cover: N rounded down to a whole number of 16-byte
// chunks (a TMA store writes whole chunks, so a row ending inside one would be written past N);
// the rest of each row the epilogue stores itself (gemm_body.hpp, store_tail).
constexpr int64_t c_tma_columns(int64_t N, int out_bytes) { return N / (16 / out_bytes) * (16 / out_bytes); }
// The C map's innermost extent: those columns, or N where there are none (the map is then never
// used for a store).
constexpr int64_t c_map_columns(int64_t N, int out_bytes) {
  return c_tma_columns(N, out_bytes) > 0 ? c_tma_columns(N, out_bytes) : N;
}

// PINGPONG = false, "cooperative": both consumer warpgroups work on one BM x BN tile and read
// every stage; with BM = 128 each takes 64 rows and all BN columns, with BM = 64 each takes the
// 64 rows and BN / 2 of the columns. PINGPONG = true (BM = 128): each consumer warpgroup owns
// whole 128 x BN tiles (the CTA's tiles alternate between them, two m64nBNk16 per k-step), each
// stage is read by one warpgroup, and the epilogue of one runs while the other computes.
template <int BM_, int BN_, int STAGES_, int CLUSTER_M_, int CLUSTER_N_, class OutT_, bool A_MN_, bool B_MN_,
          bool PINGPONG_ = false>
struct kernel_traits {
  static constexpr int BM = BM_, BN = BN_, BK = k_block, STAGES = STAGES_;
  static constexpr int CLUSTER_M = CLUSTER_M_, CLUSTER_N = CLUSTER_N_, CLUSTER = CLUSTER_M * CLUSTER_N;
  static constexpr bool A_MN = A_MN_, B_MN = B_MN_, PINGPONG = PINGPONG_;
  using OutT = OutT_;
  static constexpr int THREADS = cta_threads;
  static constexpr int CONSUMERS = consumer_warpgroups;
  static constexpr int READERS = PINGPONG ? 1 : CONSUMERS;  // consumer warpgroups reading a stage
  static constexpr int WG_M = wgmma_m;                      // rows of one wgmma.m64
  static constexpr bool SPLIT_N = BM == 64;                 // the consumer warpgroups split the columns, not the rows
  static constexpr int WG_N = SPLIT_N ? BN / 2 : BN;        // the n of a consumer warpgroup's wgmma
  static constexpr int ACC = WG_N / 2;                      // fp32 accumulators per thread per m64nWG_N
  // A stage: A's tile (shared along a cluster row) and B's (shared along a cluster column).
  using A_TILE = operand_tile<BM, A_MN, CLUSTER_N>;
  using B_TILE = operand_tile<BN, B_MN, CLUSTER_M>;
  static constexpr uint32_t A_BYTES = sizeof(A_TILE);
  static constexpr uint32_t B_BYTES = sizeof(B_TILE);
  static constexpr uint32_t STAGE_BYTES = stage_bytes_of<A_TILE, B_TILE>;
  static constexpr operand_box A_BOX = A_TILE::box;
  static constexpr operand_box B_BOX = B_TILE::box;
  // Epilogue: boxes of 16 rows (one warp's) x one 128-byte swizzle row of C, double buffered per
  // warp.
  using EPI_BOX = epilogue_box<int(sizeof(OutT))>;
  static constexpr int EPI_COLS = EPI_BOX::cols;
  static constexpr int EPI_ROWS = EPI_BOX::rows;
  static constexpr uint32_t EPI_BYTES = sizeof(EPI_BOX);
  static constexpr uint32_t EPI_WG_BYTES = EPI_BOX::warpgroup_bytes;
  static constexpr int EPI_CHUNKS = WG_N / EPI_COLS;
  // Registers: producer 40, consumers 232: 128*40 + 256*232 = 64512 <= 65536.
  static constexpr uint32_t PRODUCER_REGS = 40, CONSUMER_REGS = 232;

  // The CTA's shared memory, from a 1024-byte aligned base (swizzle atoms need 1024-B alignment):
  // the ring's operand stages, the consumers' epilogue boxes, the ring's barriers, and one word
  // per consumer warpgroup for the fixup's "last piece" flag.
  struct shared_storage {
    alignas(swizzle_atom_bytes) A_TILE a[STAGES];
    alignas(swizzle_atom_bytes) B_TILE b[STAGES];
    alignas(swizzle_atom_bytes) EPI_BOX epi[CONSUMERS][warpgroup_warps][EPI_BOX::buffers];
    pipeline_storage<STAGES, uint64_t> ring;
    int last_flag[CONSUMERS];
  };
  // Dynamic shared memory a launch asks for: the storage up to its last byte (the kernel declares
  // the dynamic base 1024-byte aligned, so no slack for aligning it at run time).
  static constexpr uint32_t SMEM = uint32_t(offsetof(shared_storage, last_flag) + sizeof(shared_storage::last_flag));

  static_assert(BM == 128 || BM == 64, "BM is 128 (a warpgroup per 64 rows) or 64 (a warpgroup per BN / 2 columns)");
  static_assert(WG_N == 64 || WG_N == 128 || WG_N == 192 || WG_N == 256,
                "a warpgroup's n of wgmma.m64nNk16: 64, 128, 192 or 256");
  static_assert(BM == 128 || !PINGPONG, "ping-pong tiles are 128 rows");
  static_assert((CLUSTER_M == 1 || CLUSTER_M == 2) && (CLUSTER_N == 1 || CLUSTER_N == 2) && CLUSTER <= 2,
                "clusters of 1 x 1, 2 x 1 or 1 x 2 CTAs: every CTA writes into every CTA of its cluster, "
                "which orders the releases to all of them (gemm_config.hpp's instances say more)");
  static_assert(sizeof(OutT) == 2 || sizeof(OutT) == 4, "bf16 or fp32 output");
  static_assert(SMEM <= uint32_t(max_smem_per_block), "fits in 227 KiB of shared memory");
  static_assert(SMEM == smem_bytes(config{BM, BN, BK, STAGES, CLUSTER_M, CLUSTER_N}),
                "the host's smem_bytes() agrees with the layout");
  static_assert(limits::register_split_fits(1, PRODUCER_REGS, CONSUMERS, CONSUMER_REGS),
                "setmaxnreg inside the CTA's launch pool");
  static_assert(!PINGPONG || BN == 128, "ping-pong tiles are 128 x 128: 2 x 64 accumulators per thread");
  static_assert(STAGE_BYTES < (1u << 20), "tx-count limit of an mbarrier phase");
};

}  // namespace hopper::gemm
