// The streaming kernel of apps/pipeline_stream.cuh on the executable model: its own body
// (apps/pipeline_stream_body.hpp) instantiated with the model's target, every thread of the
// launch a task under the seeded scheduler. One launch per case: src filled with a pattern, dst
// poisoned, the body run, then every word of dst compared on the host with the source tile the
// kernel's layout says it must hold. A case may plant one classic bug (`mutant`) through the model's
// fault plan, so tests can show that the model reports it in the kernel's own code. Used by
// tests/host/pipeline_model.cpp and by the showcase when there is no GPU.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "apps/pipeline_stream_body.hpp"
#include "apps/pipeline_stream_plan.hpp"
#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "hopper/trace/trace.hpp"

namespace hopper::apps {

// The classic pipeline bugs a case may plant, each one fault of the model's plan (faults_of).
enum class mutant {
  none,
  producer_parity_0,    // the producer starts on parity 0, as if every stage were full
  consumer_parity_1,    // the consumers start on parity 1: they read before the first copy lands
  skip_release,         // the consumers' releases never arrive
  empty_count_minus_1,  // the empty barriers expect one consumer warp fewer than there are
  empty_count_plus_1,   // ... one more
  bytes_minus_16,       // the full barriers are armed with 16 bytes fewer than delivered
  bytes_plus_16,        // iteration tiles/2 arms its full barrier with 16 bytes more
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

// The model's fault that plants `m`: on the ring's barriers ("full[s]", "empty[s]") where the
// model can change the operation itself, else the body's hook of that name.
inline std::vector<hopper::model::fault> faults_of(mutant m) {
  using hopper::model::fault_kind;
  switch (m) {
    case mutant::none:
      return {};
    case mutant::producer_parity_0:  // the producer's waits are on the empty barriers
      return {{fault_kind::parity_flipped, "empty"}};
    case mutant::consumer_parity_1:  // the consumers' on the full ones
      return {{fault_kind::parity_flipped, "full"}};
    case mutant::skip_release:
      return {{fault_kind::arrive_dropped, "empty"}};
    case mutant::empty_count_minus_1:
      return {{fault_kind::kernel_hook, "empty count minus 1"}};
    case mutant::empty_count_plus_1:
      return {{fault_kind::kernel_hook, "empty count plus 1"}};
    case mutant::bytes_minus_16:
      return {{fault_kind::expect_tx_short, "full"}};
    case mutant::bytes_plus_16:
      return {{fault_kind::kernel_hook, "expect_tx 16 over"}};
    case mutant::no_drain:
      return {{fault_kind::kernel_hook, "no drain"}};
    case mutant::release_before_read:
      return {{fault_kind::kernel_hook, "release before read"}};
    case mutant::relaxed_release:
      return {{fault_kind::kernel_hook, "relaxed release"}};
  }
  throw std::invalid_argument("pipeline_stream on the model: mutant " + std::to_string(int(m)) +
                              " is not one of mutant");
}

struct host_case {
  uint32_t stages = 2, warpgroups = 1, cluster = 1, tiles = 4;
  uint32_t clusters = 1;  // clusters in the grid (ctas = clusters * cluster)
  uint32_t stage_bytes = 64;
  bool multicast = false;
  uint32_t warps_per_group = 4;  // consumer warps per warpgroup
  uint64_t seed = 1;
  mutant m = mutant::none;
  hopper::model::step_chooser* chooser = nullptr;  // explore_por's, when the case is explored

  uint32_t consumer_warps() const { return warpgroups * warps_per_group; }
  uint32_t ctas() const { return clusters * cluster; }
  // The configuration the GPU launcher would be given: the producer warp and the consumers.
  pipeline_config config() const {
    pipeline_config cfg;
    cfg.stages = stages;
    cfg.stage_bytes = stage_bytes;
    cfg.consumer_warps = consumer_warps();
    cfg.block_warps = 1 + consumer_warps();
    cfg.cluster_size = cluster;
    cfg.multicast = multicast;
    return cfg;
  }
};

inline std::string describe(const host_case& c) {
  return "stages=" + std::to_string(c.stages) + " warpgroups=" + std::to_string(c.warpgroups) + "x" +
         std::to_string(c.warps_per_group) + " cluster=" + std::to_string(c.cluster) +
         (c.clusters > 1 ? " clusters=" + std::to_string(c.clusters) : std::string()) +
         (c.multicast ? " multicast" : "") + " tiles=" + std::to_string(c.tiles) +
         " stage_bytes=" + std::to_string(c.stage_bytes) + " seed=" + std::to_string(c.seed) + " mutant=" + name(c.m);
}

// The word at position i of source tile t: distinct across tiles and positions.
inline uint32_t word_of(size_t tile, size_t i) {
  uint64_t z = (uint64_t(tile) << 32) ^ (i * 0x9E3779B97F4A7C15ull) ^ 0x5bd1e995u;
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
  return uint32_t(z ^ (z >> 29));
}

inline constexpr uint32_t dst_poison = 0xA5A5A5A5u;

struct stream_outcome {
  bool reported = false;
  hopper::model::error_kind kind{};
  std::string message;
  // dst after the run (also after a report: what the kernel had written by then).
  uint64_t checked_words = 0, bad_words = 0;
  std::string first_bad;  // where the first wrong word is, if any
  uint64_t steps = 0;     // scheduler steps the run took
  size_t tasks = 0;       // threads of the launch (each a task)
  std::vector<hopper::trace::record> timeline;
};

// One launch of pipeline_stream_body<S, model::target> with the faults of c.m.
template <int S>
stream_outcome run_once(const host_case& c, bool keep_timeline) {
  namespace hm = hopper::model;
  using pipe_t = hopper::pipeline<S, hm::target>;
  pipeline_stream_plan plan;
  try {
    plan = plan_pipeline_stream(c.config(), c.ctas(), c.tiles);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("pipeline_stream on the model: " + describe(c) + ": " + e.what());
  }
  if (plan.stages != uint32_t(S))
    throw std::invalid_argument("pipeline_stream on the model: the plan has " + std::to_string(plan.stages) +
                                " stages but the body " + std::to_string(S));
  stream_outcome out;
  hm::run_options o;
  o.seed = c.seed;
  o.chooser = c.chooser;
  o.faults = faults_of(c.m);
  o.step_limit = 20000000;
  hm::world w(o);
  const bool mc = plan.params.multicast && plan.cluster > 1;
  const uint32_t ctas = plan.ctas;
  const size_t words = plan.stage_bytes / 4;
  const size_t src_tiles = (mc ? size_t(c.clusters) : size_t(ctas)) * plan.tiles;
  const size_t dst_tiles = size_t(ctas) * plan.tiles;

  hm::buffer& src = w.make_global("src", src_tiles * plan.stage_bytes);
  for (size_t t = 0; t < src_tiles; ++t)
    for (size_t i = 0; i < words; ++i) {
      const uint32_t v = word_of(t, i);
      std::memcpy(src.host_data() + (t * words + i) * 4, &v, 4);
    }
  hm::buffer& dst = w.make_global("dst", dst_tiles * plan.stage_bytes);
  std::memset(dst.host_data(), 0xA5, dst.bytes());

  const hopper::pipeline_params p = plan.params;
  const uint32_t tiles = plan.tiles, stage_bytes = plan.stage_bytes;
  hm::launch(
      w, {ctas, plan.threads, plan.cluster},
      [&src, &dst, tiles, stage_bytes, p](hm::target& t) {
        auto& ring = hopper::model::cta_shared<typename pipe_t::storage>(t, "ring");
        const auto stages = hopper::model::shared_buffer(t, "stages", S, stage_bytes);
        pipeline_stream_body<S, hm::target>(t, ring, stages, hm::gmem<const hm::u32x4>(src), hm::gmem<hm::u32x4>(dst),
                                            tiles, stage_bytes, p);
      },
      keep_timeline ? &out.timeline : nullptr);
  out.tasks = size_t(ctas) * plan.threads;
  try {
    w.run();
  } catch (const hm::model_error& e) {
    out.reported = true;
    out.kind = e.kind();
    out.message = e.what();
  }
  out.steps = w.steps();

  // CTA b's tile t must hold source tile t of its CTA (no multicast) or of its cluster (multicast).
  for (uint32_t b = 0; b < ctas; ++b)
    for (uint32_t t = 0; t < plan.tiles; ++t) {
      const size_t from = (mc ? size_t(b / plan.cluster) : size_t(b)) * plan.tiles + t;
      const size_t to = size_t(b) * plan.tiles + t;
      for (size_t i = 0; i < words; ++i) {
        uint32_t got;
        std::memcpy(&got, dst.host_data() + (to * words + i) * 4, 4);
        ++out.checked_words;
        if (got != word_of(from, i) && out.bad_words++ == 0) {
          char buf[160];
          std::snprintf(buf, sizeof buf, "dst word %zu of CTA %u tile %u is 0x%08x, expected 0x%08x%s", i, b, t, got,
                        word_of(from, i), got == dst_poison ? " (never written)" : "");
          out.first_bad = buf;
        }
      }
    }
  return out;
}

namespace detail {

template <int... S>
stream_outcome run_stages(const host_case& c, bool keep_timeline, std::integer_sequence<int, S...>) {
  stream_outcome out;
  const bool found = ((int(c.stages) == S ? (out = run_once<S>(c, keep_timeline), true) : false) || ...);
  if (!found)
    throw std::invalid_argument("pipeline_stream on the model: stages = " + std::to_string(c.stages) +
                                " is not instantiated (1..10)");
  return out;
}

}  // namespace detail

// The body with c.stages stages (1..10) and c.m planted.
inline stream_outcome run_case(const host_case& c, bool keep_timeline = false) {
  return detail::run_stages(c, keep_timeline, std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10>{});
}

}  // namespace hopper::apps
