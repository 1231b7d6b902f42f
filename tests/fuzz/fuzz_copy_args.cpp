// The copy launchers' argument checks (kernels/copy/stream_copy_args.hpp: stream_copy_1d,
// stream_copy_2d, stream_axpb_bf16), through the plan each launcher launches
// (kernels/copy/stream_copy_plan.hpp), which runs them before anything else. Every input is
// rejected naming an argument, or accepted with regions that neither wrap nor overlap and a
// shape that fits the grid and shared memory, recomputed in 128 bits; the accepted plan's
// chunks, grid and shared memory are the ones recomputed.
#include <stdexcept>
#include <vector>

#include "fuzz_input.hpp"
#include "kernels/copy/stream_copy_plan.hpp"

using namespace hopper_fuzz;
namespace k = hopper::kernels;

std::vector<seed> hopper_fuzz_seeds() {
  // launcher, dst, src, bytes (n for axpb), then the config: stages, stage_bytes, blocks_per_sm,
  // store_lag, transform_warps, prefetch_chunks, load_policy, store_policy, order, path,
  // store_warps, streaming_store, sched, tile_chunks.
  const seed cfg = {wide(2),  wide(4096), wide(1),  wide(1), wide(4),  wide(0),  small(0),
                    small(0), small(0),   small(1), wide(4), small(0), small(1), wide(1)};
  const seed cfg2d = {wide(8),  wide(24576), wide(1),  wide(1), wide(4),  wide(0),  small(0),
                      small(0), small(0),    small(0), wide(8), small(0), small(0), wide(1)};
  const seed ptrs = cat({aligned_pointer(0), aligned_pointer(1 << 12)});
  return {
      cat({{small(0)}, ptrs, {wide(1 << 20)}, cfg}),
      cat({{small(1)}, ptrs, {wide(1 << 20)}, cfg2d}),
      cat({{small(2)}, ptrs, {wide(1 << 19)}, cfg}),
  };
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  input in(data, size);
  const uint32_t launcher = in.pick(3);
  const void* dst = in.pointer();
  const void* src = in.pointer();
  const uint64_t count = in.u64();
  k::stream_copy_config c;
  c.stages = in.u32(), c.stage_bytes = in.u32(), c.blocks_per_sm = in.u32(), c.store_lag = in.u32();
  c.transform_warps = in.u32(), c.prefetch_chunks = in.u32();
  c.load_policy = static_cast<k::l2_evict>(in.pick(5));
  c.store_policy = static_cast<k::l2_evict>(in.pick(5));
  c.order = static_cast<k::chunk_order>(in.pick(3));
  c.path = static_cast<k::store_path>(in.pick(3));
  c.store_warps = in.u32();
  c.streaming_store = in.flag();
  c.sched = static_cast<k::schedule>(in.pick(3));
  c.tile_chunks = in.u32();
  k::copy_plan plan;
  try {
    void* d = const_cast<void*>(dst);
    if (launcher == 0) plan = k::copy_plan::copy_1d(d, src, count, c);
    if (launcher == 1) plan = k::copy_plan::copy_2d(d, src, count, c);
    if (launcher == 2) plan = k::copy_plan::axpb_bf16(d, src, count, 1.f, 0.f, c);
  } catch (const std::invalid_argument& e) {
    expect_names_an_argument(e, {"dst",
                                 "src",
                                 "y ",
                                 "x ",
                                 "y =",
                                 "x =",
                                 "bytes",
                                 "n =",
                                 "stages",
                                 "stage_bytes",
                                 "blocks_per_sm",
                                 "store_lag",
                                 "transform_warps",
                                 "prefetch_chunks",
                                 "l2_evict",
                                 "chunk_order",
                                 "store_path",
                                 "store_warps",
                                 "streaming_store",
                                 "schedule",
                                 "tile_chunks"});
    return 0;
  }
  const u128 bytes = launcher == 2 ? u128(count) * 2 : u128(count);
  const u128 d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  require(launcher != 2 || count <= (uint64_t(1) << 62), "accepted n = " + std::to_string(count));
  if (bytes > 0) {
    require(dst && src, "accepted a null pointer");
    require(d + bytes <= u128(UINTPTR_MAX) + 1 && s + bytes <= u128(UINTPTR_MAX) + 1, "accepted a region that wraps");
    require(d + bytes <= s || s + bytes <= d, "accepted overlapping regions");
  }
  require(d % 16 == 0 && s % 16 == 0, "accepted a misaligned pointer");
  const uint32_t st = c.stages;
  require(st == 2 || st == 3 || st == 4 || st == 6 || st == 8 || st == 12 || st == 16, "accepted stages");
  const u128 granule = launcher == 1 ? 1024 : 16;
  require(c.stage_bytes > 0 && c.stage_bytes % granule == 0 && c.stage_bytes < (1u << 20), "accepted stage_bytes");
  const bool per_tile = c.sched == k::schedule::per_tile;
  require(per_tile || c.sched == k::schedule::persistent, "accepted a schedule that is not one");
  const u128 held = per_tile && c.tile_chunks < c.stages ? c.tile_chunks : c.stages;
  require(held * c.stage_bytes <= 232448, "accepted " + str(held * c.stage_bytes) + " bytes of stages");
  if (per_tile) {
    const u128 chunks = (bytes + c.stage_bytes - 1) / c.stage_bytes;
    require((chunks + c.tile_chunks - 1) / c.tile_chunks < (u128(1) << 31), "accepted more than 2^31-1 tiles");
  } else {
    require(u128(c.blocks_per_sm) * (held * c.stage_bytes + 1024 + 512) <= 228 * 1024, "accepted blocks_per_sm");
  }
  require(launcher != 1 || bytes / 1024 < (u128(1) << 31), "accepted more than 2^31-1 rows");
  const u128 bulk = launcher == 1 ? bytes / 1024 * 1024 : bytes / 16 * 16;
  require(plan.bytes == bytes && plan.bulk == bulk, "planned " + str(plan.bulk) + " of " + str(plan.bytes) + " bytes");
  require(
      u128(plan.chunks) * c.stage_bytes >= bulk && (plan.chunks == 0 || u128(plan.chunks - 1) * c.stage_bytes < bulk),
      "planned " + str(plan.chunks) + " chunks");
  require(plan.smem_bytes == held * c.stage_bytes, "planned " + str(plan.smem_bytes) + " bytes of stages");
  const u128 grid = plan.grid(132, 32);
  require(grid >= 1 && grid < (u128(1) << 31), "planned a grid of " + str(grid));
  if (per_tile) {
    const u128 tiles = (u128(plan.chunks) + c.tile_chunks - 1) / c.tile_chunks;
    require(grid == (tiles == 0 ? 1 : tiles), "planned " + str(grid) + " CTAs for " + str(tiles) + " tiles");
  }
  return 0;
}
