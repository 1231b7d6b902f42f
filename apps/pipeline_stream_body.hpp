// The streaming kernel of apps/pipeline_stream.cuh, written once over a target (include/hopper/
// device_target.cuh on the GPU, model/include/hopper/model/target.hpp on the host): warp 0's lane 0
// produces (cp.async.bulk global -> shared, one stage per iteration), the consumer warps 1..n
// (n = params.releases_per_cta: every consumer warp releases) consume (read the stage with
// generic loads, store it to global) and release it.
//
// Layout of the work:
//  - without multicast, CTA b streams tiles [b*tiles, (b+1)*tiles) of src to the same tiles of dst;
//  - with multicast (clusters of n CTAs), cluster c streams tiles [c*tiles, (c+1)*tiles): the
//    producer of rank r loads slice r of each tile into every CTA of the cluster, and CTA b writes
//    the whole tile it received to dst tile (b*tiles + t). So each CTA's output proves it saw
//    every peer's slice for that iteration.
//
// The classic pipeline bugs the model tests plant (tests/host/pipeline_model.cpp, `mutant`) come
// from the model's fault plan at run time (apps/pipeline_stream_on_model.hpp maps each to its
// fault): the generic ones act on the ring's barriers; the few only this kernel can express are
// named hooks (t.planted), constant false on the device target, so the GPU's code is the kernel.
//
// Plain C++ as far as the compiler is concerned: no CUDA built-in and no ptx:: call here, only the
// target's members and views, so g++ compiles it with the model's target.
#pragma once
#include <cstddef>
#include <cstdint>

#include "hopper/hd.hpp"
#include "hopper/pipeline/pipeline.hpp"

namespace hopper::apps {

// The kernel body; every thread of the block calls it. `ring` is the CTA's pipeline storage and
// `stage_mem` its Stages x stage_bytes stage buffer; src and dst are the whole global arrays.
HOPPER_EXEC_CHECK_OFF
template <int Stages, class Tg>
HOPPER_HD void pipeline_stream_body(Tg& t, typename pipeline<Stages, Tg>::storage& ring,
                                    typename Tg::template smem_t<uint8_t> stage_mem,
                                    typename Tg::template gmem_t<const typename Tg::u32x4> src,
                                    typename Tg::template gmem_t<typename Tg::u32x4> dst, uint32_t tiles,
                                    uint32_t stage_bytes, pipeline_params params) {
  using pipe_t = pipeline<Stages, Tg>;
  using state = typename pipe_t::state;
  using vec = typename Tg::u32x4;

  pipeline_params ring_params = params;  // what the barriers are initialised with
  if (t.planted("empty count minus 1")) ring_params.releases_per_cta -= 1u;
  if (t.planted("empty count plus 1")) ring_params.releases_per_cta += 1u;
  pipe_t pipe = pipe_t::init(ring, ring_params, t);

  const uint32_t warp = t.warp(), lane = t.lane();
  const uint32_t consumer_warps = params.releases_per_cta;  // each consumer warp releases every stage
  const bool mc = params.multicast && params.cluster_size > 1;
  const uint32_t rank = mc ? t.cluster_rank() : 0u;
  const uint32_t cta = t.block();
  const size_t tile_vecs = stage_bytes / 16u;
  // First source tile of this CTA (no multicast) or of its cluster (multicast).
  const size_t src_tile0 = mc ? size_t(cta / params.cluster_size) * tiles : size_t(cta) * tiles;
  const size_t dst_tile0 = size_t(cta) * tiles;

  if (warp == 0) {
    if (lane == 0) {
      state s = pipe.producer_start();
      for (; s.iter() < tiles; ++s) {
        uint32_t bytes = stage_bytes;  // the whole stage, whoever delivers it
        if (t.planted("expect_tx 16 over") && s.iter() == tiles / 2) bytes += 16u;
        pipe.acquire(s, bytes);
        const auto stage = stage_mem + size_t(s.index()) * stage_bytes;
        const auto from = src + (src_tile0 + s.iter()) * tile_vecs;
        if (mc) {
          const uint32_t slice = stage_bytes / params.cluster_size;
          const uint16_t all = uint16_t((1u << params.cluster_size) - 1u);
          t.cp_async_bulk_shared_cluster_global_multicast(stage + size_t(rank) * slice,
                                                          from.template as<const uint8_t>() + size_t(rank) * slice,
                                                          slice, pipe.full(s), all);
        } else {
          t.cp_async_bulk_shared_cluster_global(stage, from, stage_bytes, pipe.full(s));
        }
        pipe.issued(s);
      }
      if (!t.planted("no drain")) pipe.drain(s);  // peers may still arrive on our empty barriers
    }
  } else if (warp <= consumer_warps) {
    const uint32_t cw = warp - 1u;
    state s = pipe.consumer_start();
    for (; s.iter() < tiles; ++s) {
      pipe.wait(s);
      const auto stage = (stage_mem + size_t(s.index()) * stage_bytes).template as<const vec>();
      const auto out = dst + (dst_tile0 + s.iter()) * tile_vecs;
      const bool early = t.planted("release before read") && cw == 0 && s.iter() == 0;
      if (early) pipe.release(s);
      for (size_t i = size_t(cw) * 32u + lane; i < tile_vecs; i += size_t(consumer_warps) * 32u)
        out.store(i, stage.load(i));
      if (early) continue;
      if (t.planted("relaxed release"))
        pipe.template release<release_sem::relaxed>(s);  // nothing orders the generic reads
      else
        pipe.release(s);  // after this warp's last read of the stage
    }
  }
}

}  // namespace hopper::apps
