// One launch of a streaming copy, derived once from checked arguments: the __global__ entry and
// its instance, the block, the shared memory, the chunks, the 2-D tensor maps' shape and the
// grid. The CUDA launchers (kernels/copy/stream_copy.cuh) and the model runner
// (kernels/copy/stream_copy_on_model.hpp) both launch a copy_plan, so the model runs the launch
// the GPU gets. Plain C++: no CUDA header is needed.
//
//   copy_plan::copy_1d(dst, src, bytes, cfg)          stream_copy_1d
//   copy_plan::copy_2d(dst, src, bytes, cfg)          stream_copy_2d
//   copy_plan::axpb_bf16(y, x, n, a, b, cfg)          stream_axpb_bf16
//
// Each checks its arguments first (kernels/copy/stream_copy_args.hpp: std::invalid_argument
// naming the bad one), so no plan exists for input the launcher would refuse.
#pragma once
#include <cstdint>

#include "hopper/objects/checked.hpp"
#include "kernels/copy/stream_copy_args.hpp"
#include "kernels/copy/stream_copy_body.hpp"

namespace hopper::kernels {

// The __global__ entry a plan launches (kernels/copy/stream_copy.cuh), each written over its body.
enum class copy_entry : uint8_t {
  copy_1d,    // stream_copy_1d_kernel<stages, store_lag>: copy_1d_body
  copy_2d,    // stream_copy_2d_kernel<stages, store_lag>: copy_2d_body
  axpb_bf16,  // stream_axpb_bf16_kernel<stages, store_lag>: axpb_body
  ldst,       // stream_ldst_kernel<stages, axpb, store>: ldst_body
};

// The 2-D copy's tensor maps view the bytes as rows of this many s32 elements.
inline constexpr uint32_t stream_copy_2d_elem_bytes = 4;
inline constexpr uint32_t stream_copy_2d_row_elems = stream_copy_2d_row_bytes / stream_copy_2d_elem_bytes;

// The CTAs of a persistent grid over `chunks`: as many as fit on `sms` SMs (`fit` per SM, at most
// blocks_per_sm), no more than there are chunks, at least one (CTA 0 copies the tail).
inline uint32_t persistent_ctas(uint64_t chunks, uint32_t sms, uint32_t fit, uint32_t blocks_per_sm) {
  const uint64_t cap = uint64_t(sms) * (fit < blocks_per_sm ? fit : blocks_per_sm);
  return uint32_t(chunks < 1 ? 1 : (chunks < cap ? chunks : cap));
}

struct copy_plan {
  copy_entry entry = copy_entry::copy_1d;
  uint32_t stages = 0;                          // the instance's pipeline<stages>
  uint32_t store_lag = 0;                       // bulk stores: wait_group.read<store_lag>
  bool axpb = false;                            // ldst: y = a*x + b in registers
  detail::st_kind store = detail::st_kind::wb;  // ldst: st.global, st.global.cs or .L2::cache_hint
  void* dst = nullptr;                          // as checked (axpb: y)
  const void* src = nullptr;                    // as checked (axpb: x)
  float a = 0.f, b = 0.f;                       // axpb: y = a*x + b
  uint64_t bytes = 0;                           // bytes written (axpb: 2n)
  uint64_t bulk = 0;                            // of them, moved by bulk copies; CTA 0 copies the rest
  uint64_t chunks = 0;                          // pieces of the bulk bytes, one stage each
  uint32_t stage_bytes = 0;
  uint32_t ring_stages = 0;    // stages of shared memory the ring holds
  uint64_t smem_bytes = 0;     // dynamic shared memory per CTA: ring_stages x stage_bytes
  uint32_t threads = 0;        // per CTA
  uint32_t rows = 0;           // 2-D: the tensor's rows of stream_copy_2d_row_bytes
  uint32_t box_rows = 0;       // 2-D: rows per box (one stage)
  uint32_t blocks_per_sm = 1;  // persistent: CTAs per SM at most
  stream_knobs knobs{};        // knobs.tile_chunks != 0: the per-tile schedule

  bool empty() const { return bytes == 0; }
  bool per_tile() const { return knobs.tile_chunks != 0; }
  uint64_t tail() const { return bytes - bulk; }

  // The grid on a device of `sms` SMs where `fit` CTAs of the instance fit per SM: one CTA per
  // tile of tile_chunks chunks (< 2^31, checked), or persistent_ctas. At least one.
  uint32_t grid(uint32_t sms, uint32_t fit) const {
    if (!per_tile()) return persistent_ctas(chunks, sms, fit, blocks_per_sm);
    const uint64_t tiles = checked::ceil_div(chunks, uint64_t(knobs.tile_chunks));
    return uint32_t(tiles < 1 ? 1 : tiles);
  }

  // stream_copy_1d(dst, src, bytes, cfg): the bulk kernel, or the st_global one.
  static copy_plan copy_1d(void* dst, const void* src, uint64_t bytes, const stream_copy_config& cfg) {
    detail::check_copy_1d_args(dst, src, bytes, cfg);
    copy_plan p = of(cfg, dst, src, bytes, detail::bulk_bytes(bytes));
    if (cfg.path == store_path::st_global) p.ldst(cfg, false);
    return p;
  }

  // stream_copy_2d(dst, src, bytes, cfg): whole rows through the maps, one box per stage.
  static copy_plan copy_2d(void* dst, const void* src, uint64_t bytes, const stream_copy_config& cfg) {
    detail::check_copy_2d_args(dst, src, bytes, cfg);
    const uint32_t rows = uint32_t(bytes / stream_copy_2d_row_bytes);  // < 2^31 (checked)
    copy_plan p = of(cfg, dst, src, bytes, uint64_t(rows) * stream_copy_2d_row_bytes);
    p.entry = copy_entry::copy_2d;
    p.rows = rows;
    p.box_rows = cfg.stage_bytes / stream_copy_2d_row_bytes;
    return p;
  }

  // stream_axpb_bf16(y, x, n, a, b, cfg): the bulk kernel with transform warps, or st_global.
  static copy_plan axpb_bf16(void* y, const void* x, uint64_t n, float a, float b, const stream_copy_config& cfg) {
    detail::check_axpb_args(y, x, n, cfg);
    copy_plan p = of(cfg, y, x, n * 2u, detail::bulk_bytes(n * 2u));
    p.a = a, p.b = b;
    p.entry = copy_entry::axpb_bf16;
    p.threads = 64u + 32u * cfg.transform_warps;  // producer, storer, transform warps
    if (cfg.path == store_path::st_global) p.ldst(cfg, true);
    return p;
  }

 private:
  // What every entry shares; the bulk kernels' block: producer warp and storer warp.
  static copy_plan of(const stream_copy_config& cfg, void* dst, const void* src, uint64_t bytes, uint64_t bulk) {
    copy_plan p;
    p.stages = cfg.stages, p.store_lag = cfg.store_lag;
    p.dst = dst, p.src = src;
    p.bytes = bytes, p.bulk = bulk;
    p.stage_bytes = cfg.stage_bytes;
    // The chunks the bodies count (checked input has stage_bytes > 0: nothing else is planned).
    p.chunks = cfg.stage_bytes == 0 ? 0 : detail::pieces(bulk, uint64_t(cfg.stage_bytes));
    p.ring_stages = detail::ring_stages(cfg);
    p.smem_bytes = detail::ring_bytes(cfg);
    p.threads = 64;
    p.blocks_per_sm = cfg.blocks_per_sm;
    p.knobs = knobs_of(cfg);
    return p;
  }

  // The st_global path: a producer warp, then the store warps.
  void ldst(const stream_copy_config& cfg, bool with_axpb) {
    entry = copy_entry::ldst;
    axpb = with_axpb;
    threads = 32u + 32u * cfg.store_warps;
    if (cfg.streaming_store)
      store = detail::st_kind::cs;
    else
      store = cfg.store_policy == l2_evict::none ? detail::st_kind::wb : detail::st_kind::hint;
  }
};

}  // namespace hopper::kernels
