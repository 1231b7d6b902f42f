// The copy launchers' argument checks, as plain C++ (no CUDA), so that the host tests, the fuzz
// targets and the model runner check exactly what kernels/copy/stream_copy.cuh's launchers check:
// each throws std::invalid_argument("hopper: <launcher>: ...") naming the bad argument as the
// launcher's signature names it, before anything derived from it is used.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "hopper/objects/checked.hpp"
#include "hopper/objects/limits.hpp"
#include "kernels/copy/stream_copy_body.hpp"

namespace hopper::kernels {
namespace detail {

// Throws std::invalid_argument("hopper: <who>: <what>"), as hopper/objects/limits.hpp's checks do.
[[noreturn]] inline void copy_reject(const char* who, const std::string& what) {
  limits::reject(std::string(who) + ": " + what);
}

inline std::string ptr_str(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// Stages of one CTA's ring: a per-tile CTA never holds more than its tile_chunks chunks.
inline uint32_t ring_stages(const stream_copy_config& c) {
  return c.sched == schedule::per_tile && c.tile_chunks < c.stages ? c.tile_chunks : c.stages;
}

// Shared memory of one CTA's ring.
inline uint64_t ring_bytes(const stream_copy_config& c) { return uint64_t(ring_stages(c)) * c.stage_bytes; }

// The checks every variant shares; `granule` is the stage_bytes multiple the variant needs, and
// `dst_name` / `src_name` are the pointers' names in the caller's signature. The hardware limits
// (bulk-copy alignment and size, tx-count, shared memory) are hopper/objects/limits.hpp's. Every derived
// size (the regions' ends, the chunk count) is computed without wrapping.
inline void check_copy_args(const char* who, const void* dst, const void* src, uint64_t bytes,
                            const stream_copy_config& cfg, uint32_t granule, const char* dst_name = "dst",
                            const char* src_name = "src") {
  const std::string me = std::string(who) + ": ";
  if (bytes > 0 && (dst == nullptr || src == nullptr))
    copy_reject(
        who, std::string(dst == nullptr ? dst_name : src_name) + " is null with " + std::to_string(bytes) + " bytes");
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  // cp.async.bulk moves 16-byte aligned addresses (PTX ISA, cp.async.bulk); every stage's copy
  // starts at the pointer plus a multiple of stage_bytes.
  if (d % limits::bulk_copy_alignment != 0)
    copy_reject(who, std::string(dst_name) + " = " + ptr_str(dst) + " is not 16-byte aligned (cp.async.bulk)");
  if (s % limits::bulk_copy_alignment != 0)
    copy_reject(who, std::string(src_name) + " = " + ptr_str(src) + " is not 16-byte aligned (cp.async.bulk)");
  const std::optional<uintptr_t> d_end = checked::add(d, uintptr_t(bytes)), s_end = checked::add(s, uintptr_t(bytes));
  if (!d_end || !s_end)
    copy_reject(who, std::string(!d_end ? dst_name : src_name) + " = " + ptr_str(!d_end ? dst : src) +
                         " + bytes = " + std::to_string(bytes) + " runs past the end of the address space");
  if (bytes > 0 && d < *s_end && s < *d_end) {
    const uintptr_t overlap = (d < s ? *d_end - s : *s_end - d);
    copy_reject(who, std::string(dst_name) + " " + ptr_str(dst) + " and " + src_name + " " + ptr_str(src) +
                         " overlap by " + std::to_string(overlap) + " of the " + std::to_string(bytes) +
                         " bytes copied (in-place is not a streaming copy)");
  }
  const uint32_t st = cfg.stages;
  if (!(st == 2 || st == 3 || st == 4 || st == 6 || st == 8 || st == 12 || st == 16))
    copy_reject(who, "stages = " + std::to_string(st) + " is not one of 2, 3, 4, 6, 8, 12, 16");
  if (cfg.stage_bytes == 0 || cfg.stage_bytes % granule != 0)
    copy_reject(who, "stage_bytes = " + std::to_string(cfg.stage_bytes) + " is not a positive multiple of " +
                         std::to_string(granule));
  // Every stage is one bulk copy each way between src (dst) and shared memory, counted on one
  // mbarrier phase: its size and both addresses follow cp.async.bulk's rules.
  limits::check_bulk_copy(cfg.stage_bytes, src, dst, /*with_mbarrier=*/true, me + "stage copy");
  if (cfg.store_lag > 2) copy_reject(who, "store_lag = " + std::to_string(cfg.store_lag) + " is not 0, 1 or 2");
  if (cfg.store_lag >= cfg.stages)
    copy_reject(who, "store_lag = " + std::to_string(cfg.store_lag) +
                         " leaves no stage to load into with stages = " + std::to_string(cfg.stages));
  if (cfg.prefetch_chunks > 64)
    copy_reject(who, "prefetch_chunks = " + std::to_string(cfg.prefetch_chunks) + " is out of range 0..64");
  if (static_cast<unsigned>(cfg.load_policy) > 3u || static_cast<unsigned>(cfg.store_policy) > 3u)
    copy_reject(who, "l2_evict value " +
                         std::to_string(unsigned(static_cast<unsigned>(cfg.load_policy) > 3u ? cfg.load_policy
                                                                                             : cfg.store_policy)) +
                         " is not a hopper::kernels::l2_evict");
  if (static_cast<unsigned>(cfg.order) > 1u)
    copy_reject(who,
                "chunk_order value " + std::to_string(unsigned(cfg.order)) + " is not a hopper::kernels::chunk_order");
  if (static_cast<unsigned>(cfg.path) > 1u)
    copy_reject(who,
                "store_path value " + std::to_string(unsigned(cfg.path)) + " is not a hopper::kernels::store_path");
  if (cfg.path == store_path::st_global) {
    if (cfg.store_warps < 1 || cfg.store_warps > 16)
      copy_reject(who, "store_warps = " + std::to_string(cfg.store_warps) + " is out of range 1..16");
    if (cfg.streaming_store && cfg.store_policy != l2_evict::none)
      copy_reject(who,
                  "streaming_store (st.global.cs) and store_policy (st.global.L2::cache_hint) are exclusive: "
                  "choose one");
  }
  if (static_cast<unsigned>(cfg.sched) > 1u)
    copy_reject(who, "schedule value " + std::to_string(unsigned(cfg.sched)) + " is not a hopper::kernels::schedule");
  const bool per_tile = cfg.sched == schedule::per_tile;
  if (per_tile && (cfg.tile_chunks < 1 || cfg.tile_chunks > 16))
    copy_reject(who, "tile_chunks = " + std::to_string(cfg.tile_chunks) + " is out of range 1..16");
  if (per_tile && cfg.stage_bytes != 0) {
    const uint64_t chunks = checked::ceil_div(bytes, uint64_t(cfg.stage_bytes));
    if (checked::ceil_div(chunks, uint64_t(cfg.tile_chunks)) > (uint64_t(1) << 31) - 1)
      copy_reject(who, "bytes = " + std::to_string(bytes) + " needs more than 2^31-1 tiles of " +
                           std::to_string(cfg.tile_chunks) + " x " + std::to_string(cfg.stage_bytes) +
                           " bytes (the grid's x limit)");
  }
  if (cfg.blocks_per_sm < 1 || cfg.blocks_per_sm > 32)
    copy_reject(who, "blocks_per_sm = " + std::to_string(cfg.blocks_per_sm) + " is out of range 1..32");
  const uint64_t smem = ring_bytes(cfg);
  limits::check_smem_budget(smem, limits::max_smem_per_block,
                            me + "stages x stage_bytes = " + std::to_string(smem / cfg.stage_bytes) + " x " +
                                std::to_string(cfg.stage_bytes));
  // Each CTA also takes the shared memory the system reserves per block and 512 bytes for its
  // barriers. A per-tile grid has as many CTAs per SM as fit; blocks_per_sm does not apply.
  const uint64_t per_sm = uint64_t(cfg.blocks_per_sm) * (smem + limits::reserved_smem_per_block + 512u);
  if (!per_tile && per_sm > limits::smem_per_sm)
    copy_reject(who, "blocks_per_sm = " + std::to_string(cfg.blocks_per_sm) + " x " + std::to_string(smem) +
                         " bytes of stages does not fit the " + std::to_string(limits::smem_per_sm / 1024) +
                         " KiB of shared memory of one SM");
}

// stream_copy_1d(dst, src, bytes, cfg).
inline void check_copy_1d_args(const void* dst, const void* src, uint64_t bytes, const stream_copy_config& cfg) {
  check_copy_args("stream_copy_1d", dst, src, bytes, cfg, limits::bulk_copy_granule);
}

// stream_copy_2d(dst, src, bytes, cfg): stages of whole 1024-byte rows, stored through the map.
inline void check_copy_2d_args(const void* dst, const void* src, uint64_t bytes, const stream_copy_config& cfg) {
  check_copy_args("stream_copy_2d", dst, src, bytes, cfg, stream_copy_2d_row_bytes);
  if (cfg.path != store_path::bulk)
    copy_reject("stream_copy_2d",
                "store_path st_global is offered by the 1-D and fused kernels only "
                "(the 2-D copy stores through its tensor map)");
  if (bytes / stream_copy_2d_row_bytes > (uint64_t(1) << 31) - 1)
    copy_reject("stream_copy_2d",
                "bytes = " + std::to_string(bytes) + " is more than 2^31-1 rows of 1024 bytes (s32 coordinates)");
}

// stream_axpb_bf16(y, x, n, a, b, cfg): n bf16 elements, 2n bytes.
inline void check_axpb_args(const void* y, const void* x, uint64_t n, const stream_copy_config& cfg) {
  if (cfg.transform_warps < 1 || cfg.transform_warps > 16)
    copy_reject("stream_axpb_bf16",
                "transform_warps = " + std::to_string(cfg.transform_warps) + " is out of range 1..16");
  if (n > (uint64_t(1) << 62))
    copy_reject("stream_axpb_bf16", "n = " + std::to_string(n) + " elements overflows the byte count");
  check_copy_args("stream_axpb_bf16", y, x, n * 2u, cfg, limits::bulk_copy_granule, "y", "x");
}

}  // namespace detail
}  // namespace hopper::kernels
