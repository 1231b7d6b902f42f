// The launch of the streaming kernel (apps/pipeline_stream_body.hpp) in plain C++: the grid, the
// block, the cluster, the stage buffer and the pipeline's parameters, derived once from a
// pipeline_config. The CUDA launcher (apps/pipeline_stream.cuh) launches this plan and the model
// runner (apps/pipeline_stream_on_model.hpp) runs it, so the model checks the launch the GPU gets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "hopper/pipeline/pipeline.hpp"

namespace hopper::apps {

struct pipeline_stream_plan {
  uint32_t ctas = 0;     // the grid (a multiple of cluster)
  uint32_t threads = 0;  // the block: the producer warp, the consumer warps and any others
  uint32_t cluster = 1;
  uint32_t stages = 0;
  uint32_t stage_bytes = 0;
  uint32_t tiles = 0;      // per CTA (per cluster with multicast)
  size_t stage_smem = 0;   // the dynamic shared memory: stages x stage_bytes
  pipeline_params params;  // what the ring's barriers are initialised with
};

// Validates `cfg` against `lim` (throws std::invalid_argument naming the value) and the grid.
inline pipeline_stream_plan plan_pipeline_stream(const pipeline_config& cfg, uint32_t ctas, uint32_t tiles,
                                                 const pipeline_limits& lim = pipeline_limits{}) {
  validate(cfg, lim);
  if (ctas == 0 || ctas % cfg.cluster_size != 0)
    throw std::invalid_argument("pipeline_stream: ctas = " + std::to_string(ctas) +
                                " is not a positive multiple of cluster_size = " + std::to_string(cfg.cluster_size));
  pipeline_stream_plan p;
  p.ctas = ctas;
  p.threads = cfg.block_warps * 32u;
  p.cluster = cfg.cluster_size;
  p.stages = cfg.stages;
  p.stage_bytes = uint32_t(cfg.stage_bytes);  // validate bounds it by the transaction count
  p.tiles = tiles;
  p.stage_smem = size_t(cfg.stages) * cfg.stage_bytes;
  p.params = cfg.params();
  return p;
}

}  // namespace hopper::apps
