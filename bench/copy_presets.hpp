// The measured points of the streaming copy that the benchmark and the GPU tests sweep beside the
// library's defaults (kernels/copy/stream_copy_body.hpp: stream_copy_1d_default()). Each is a
// hopper::kernels::stream_copy_config; docs/copy.md has the figures behind them.
#pragma once
#include "kernels/copy/stream_copy_body.hpp"

namespace hopper::kernels {

// The persistent 1-D copy's best of the H200 sweeps (docs/copy.md): bulk stores, 8 x 24 KiB,
// one CTA per SM, an L2 prefetch two chunks ahead and evict_first on loads and stores (0.92-0.95x
// memcpy from 256 MiB up). The 2-D kernel measured best with stream_copy_config{} (no prefetch,
// no hint). The persistent st_global store path did not beat it (0.917-0.937x, same run).
inline stream_copy_config stream_copy_1d_bulk_default() {
  stream_copy_config c;
  c.prefetch_chunks = 2;
  c.load_policy = l2_evict::first;
  c.store_policy = l2_evict::first;
  return c;
}

// The persistent st_global path's best of the H200 sweep (docs/copy.md): bulk loads into 6 x 32 KiB,
// one CTA per SM, 16 store warps with plain st.global (.cs measured 0.7% slower), no prefetch, no hint.
inline stream_copy_config stream_copy_st_global_default() {
  stream_copy_config c;
  c.stages = 6;
  c.stage_bytes = 32768;
  c.path = store_path::st_global;
  c.store_warps = 16;
  return c;
}

// The per-tile schedule with the copy engine both ways (docs/copy.md): one CTA of two warps
// per 4 KiB chunk, one bulk load, one bulk store. H200: 0.989-0.995x memcpy from 256 MiB up
// (the persistent default: 0.924-0.945x, same run).
inline stream_copy_config stream_copy_per_tile_default() {
  stream_copy_config c;
  c.sched = schedule::per_tile;
  c.stages = 2;
  c.stage_bytes = 4096;
  c.tile_chunks = 1;
  return c;
}

// The best point of the per-tile sweep (docs/copy.md), for the plain copy and the fused kernel alike: one
// CTA per 4 KiB chunk, a bulk load, then 4 store warps with st.global (one vector per thread per
// pass; 12 CTAs per SM fit). H200: plain copy 0.993-1.005x memcpy from 256 MiB up, fused
// 0.973-1.004x (persistent defaults 0.924-0.945x and 0.919-0.934x, same run).
inline stream_copy_config stream_copy_per_tile_st_global_default() {
  stream_copy_config c = stream_copy_per_tile_default();
  c.path = store_path::st_global;
  c.store_warps = 4;
  return c;
}

}  // namespace hopper::kernels
