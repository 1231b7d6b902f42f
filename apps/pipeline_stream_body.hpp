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
// `M` plants one classic pipeline bug in this very source (compile-time switches, folded away for
// mutant::none, the only one the __global__ entry instantiates), so that the model tests
// (tests/host/pipeline_model.cpp) show the model reports each one in the kernel itself.
//
// Plain C++ as far as the compiler is concerned: no CUDA built-in and no ptx:: call here, only the
// target's members and views, so g++ compiles it with the model's target.
#pragma once
#include <cstddef>
#include <cstdint>

#include "hopper/hd.hpp"
#include "hopper/phase.hpp"
#include "hopper/pipeline.cuh"

namespace hopper::apps {

enum class mutant {
  none,
  producer_parity_0,    // the producer starts on parity 0, as if every stage were full
  consumer_parity_1,    // the consumers start on parity 1: they read before the first copy lands
  skip_release,         // the last consumer warp skips its release of iteration tiles/2
  empty_count_minus_1,  // the empty barriers expect one consumer warp fewer than there are
  empty_count_plus_1,   // ... one more
  bytes_minus_16,       // iteration tiles/2 arms the full barrier with 16 bytes fewer than delivered
  bytes_plus_16,        // ... 16 more
  no_drain,             // the producer exits without draining (peers may still arrive)
  release_before_read,  // consumer warp 0 releases iteration 0's stage before reading it
  relaxed_release,      // the consumers read with generic loads but release with .relaxed
};

inline const char* name(mutant m) {
  switch (m) {
    case mutant::none:
      return "none";
    case mutant::producer_parity_0:
      return "producer_parity_0";
    case mutant::consumer_parity_1:
      return "consumer_parity_1";
    case mutant::skip_release:
      return "skip_release";
    case mutant::empty_count_minus_1:
      return "empty_count_minus_1";
    case mutant::empty_count_plus_1:
      return "empty_count_plus_1";
    case mutant::bytes_minus_16:
      return "bytes_minus_16";
    case mutant::bytes_plus_16:
      return "bytes_plus_16";
    case mutant::no_drain:
      return "no_drain";
    case mutant::release_before_read:
      return "release_before_read";
    case mutant::relaxed_release:
      return "relaxed_release";
  }
  return "?";
}

// The kernel body; every thread of the block calls it. `ring` is the CTA's pipeline storage and
// `stage_mem` its Stages x stage_bytes stage buffer; src and dst are the whole global arrays.
HOPPER_EXEC_CHECK_OFF
template <int Stages, class Tg, mutant M = mutant::none>
HOPPER_HD void pipeline_stream_body(Tg& t, typename pipeline<Stages, Tg>::storage& ring,
                                    typename Tg::template smem_t<uint8_t> stage_mem,
                                    typename Tg::template gmem_t<const typename Tg::u32x4> src,
                                    typename Tg::template gmem_t<typename Tg::u32x4> dst, uint32_t tiles,
                                    uint32_t stage_bytes, pipeline_params params) {
  using pipe_t = pipeline<Stages, Tg>;
  using state = typename pipe_t::state;
  using vec = typename Tg::u32x4;

  pipeline_params ring_params = params;  // what the barriers are initialised with
  if constexpr (M == mutant::empty_count_minus_1) ring_params.releases_per_cta -= 1u;
  if constexpr (M == mutant::empty_count_plus_1) ring_params.releases_per_cta += 1u;
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
      state s = M == mutant::producer_parity_0 ? state(0u, parity(0u)) : pipe.producer_start();
      for (; s.iter() < tiles; ++s) {
        uint32_t bytes = stage_bytes;  // the whole stage, whoever delivers it
        if constexpr (M == mutant::bytes_minus_16) bytes -= s.iter() == tiles / 2 ? 16u : 0u;
        if constexpr (M == mutant::bytes_plus_16) bytes += s.iter() == tiles / 2 ? 16u : 0u;
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
      if constexpr (M != mutant::no_drain) pipe.drain(s);  // peers may still arrive on our empty barriers
    }
  } else if (warp <= consumer_warps) {
    const uint32_t cw = warp - 1u;
    state s = M == mutant::consumer_parity_1 ? state(0u, parity(1u)) : pipe.consumer_start();
    for (; s.iter() < tiles; ++s) {
      pipe.wait(s);
      const auto stage = (stage_mem + size_t(s.index()) * stage_bytes).template as<const vec>();
      const auto out = dst + (dst_tile0 + s.iter()) * tile_vecs;
      bool released = false;
      if constexpr (M == mutant::release_before_read) {
        released = cw == 0 && s.iter() == 0;
        if (released) pipe.release(s);
      }
      for (size_t i = size_t(cw) * 32u + lane; i < tile_vecs; i += size_t(consumer_warps) * 32u)
        out.store(i, stage.load(i));
      if constexpr (M == mutant::skip_release) released = cw == consumer_warps - 1u && s.iter() == tiles / 2;
      if (!released) {
        if constexpr (M == mutant::relaxed_release)
          pipe.template release<release_sem::relaxed>(s);  // nothing orders the generic reads
        else
          pipe.release(s);  // after this warp's last read of the stage
      }
    }
  }
}

}  // namespace hopper::apps
