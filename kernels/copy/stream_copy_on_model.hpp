// The streaming copy's own kernel body (kernels/copy/stream_copy_body.hpp) launched on the executable
// model, every thread a task: what the model tests and the showcase's no-GPU path share. The grid
// is what the launcher would pick on a model device of 2 SMs.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hopper/model/target.hpp"
#include "hopper/pipeline.cuh"
#include "kernels/copy/stream_copy_body.hpp"
#include "kernels/dispatch.hpp"

namespace hopper::kernels::on_model {

using hopper::model::buffer;
using hopper::model::gmem;
using hopper::model::launch;
using hopper::model::model_error;
using hopper::model::run_options;
using hopper::model::target;
using hopper::model::world;

// Runtime stage count and lag to the body's template parameters (the counts the tests use).
template <class F>
inline void with_stages(uint32_t stages, F&& f) {
  if (!one_of<2, 3, 4>(stages))
    throw std::invalid_argument("stages = " + std::to_string(stages) + " is not instantiated on the model (2, 3, 4)");
  with_value<2, 3, 4>(stages, f);
}
template <class F>
inline void with_lag(uint32_t lag, F&& f) {
  with_value<0, 1, 2>(lag, f);
}

// The grid the launcher would pick, on a model "device" of 2 SMs.
inline uint32_t grid_of(const hopper::kernels::stream_copy_config& c, uint64_t chunks) {
  if (c.sched == hopper::kernels::schedule::per_tile) {
    const uint64_t tiles = (chunks + c.tile_chunks - 1) / c.tile_chunks;
    return uint32_t(tiles < 1 ? 1 : tiles);
  }
  const uint64_t cap = 2ull * c.blocks_per_sm;
  return uint32_t(chunks < 1 ? 1 : (chunks < cap ? chunks : cap));
}

inline size_t ring_stages(const hopper::kernels::stream_copy_config& c) {
  return c.sched == hopper::kernels::schedule::per_tile && c.tile_chunks < c.stages ? c.tile_chunks : c.stages;
}

struct outcome {
  std::string error;  // empty: the run was clean
  std::vector<uint8_t> out;
};

// One run of the 1-D copy (either store path) on the model, its world made with `o`.
inline outcome run_copy_1d(const hopper::kernels::stream_copy_config& c, const std::vector<uint8_t>& in,
                           run_options o) {
  o.stack_bytes = 64 * 1024;
  world w(o);
  const uint64_t bytes = in.size();
  buffer& src = w.make_global("src", bytes);
  buffer& dst = w.make_global("dst", bytes);
  std::memcpy(src.host_data(), in.data(), bytes);
  std::memset(dst.host_data(), 0xA5, bytes);
  const uint64_t chunks = ((bytes & ~uint64_t(15)) + c.stage_bytes - 1) / c.stage_bytes;
  const hopper::kernels::stream_knobs k = hopper::kernels::knobs_of(c);
  const size_t held = ring_stages(c);
  with_stages(c.stages, [&](auto st) {
    constexpr int S = decltype(st)::value;
    using ring_t = typename hopper::pipeline<S, target>::storage;
    if (c.path == hopper::kernels::store_path::st_global) {
      auto body = [&](target& t) {
        auto& ring = hopper::model::cta_shared<ring_t>(t, "ring");
        auto stages = hopper::model::shared_buffer(t, "stages", held, c.stage_bytes);
        const gmem<uint8_t> d(dst);
        const gmem<const uint8_t> s(src);
        if (c.streaming_store)
          hopper::kernels::ldst_body<S, false, hopper::kernels::detail::st_kind::cs>(t, ring, stages, d, s, bytes,
                                                                                     c.stage_bytes, k, 0.f, 0.f);
        else if (c.store_policy != hopper::kernels::l2_evict::none)
          hopper::kernels::ldst_body<S, false, hopper::kernels::detail::st_kind::hint>(t, ring, stages, d, s, bytes,
                                                                                       c.stage_bytes, k, 0.f, 0.f);
        else
          hopper::kernels::ldst_body<S, false, hopper::kernels::detail::st_kind::wb>(t, ring, stages, d, s, bytes,
                                                                                     c.stage_bytes, k, 0.f, 0.f);
      };
      launch(w, {grid_of(c, chunks), 32u + 32u * c.store_warps, 1}, body);
    } else {
      with_lag(c.store_lag, [&](auto lg) {
        constexpr int L = decltype(lg)::value;
        launch(w, {grid_of(c, chunks), 64, 1}, [&](target& t) {
          auto& ring = hopper::model::cta_shared<ring_t>(t, "ring");
          auto stages = hopper::model::shared_buffer(t, "stages", held, c.stage_bytes);
          hopper::kernels::copy_1d_body<S, L>(t, ring, stages, gmem<uint8_t>(dst), gmem<const uint8_t>(src), bytes,
                                              c.stage_bytes, k);
        });
      });
    }
  });
  outcome r;
  try {
    w.run();
  } catch (const model_error& e) {
    r.error = e.what();
  }
  r.out.assign(dst.host_data(), dst.host_data() + bytes);
  return r;
}

inline outcome run_copy_1d(const hopper::kernels::stream_copy_config& c, const std::vector<uint8_t>& in,
                           uint64_t seed) {
  run_options o;
  o.seed = seed;
  return run_copy_1d(c, in, o);
}

}  // namespace hopper::kernels::on_model
