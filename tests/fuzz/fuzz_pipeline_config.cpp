// hopper::validate(pipeline_config, pipeline_limits) and params_fault(pipeline_params): every
// input is rejected naming a field, or accepted with its derived sizes (shared memory, threads,
// empty-barrier arrivals) within the limits when recomputed in 128 bits.
#include <stdexcept>

#include "fuzz_input.hpp"
#include "hopper/pipeline/pipeline.hpp"

using namespace hopper_fuzz;

std::vector<seed> hopper_fuzz_seeds() {
  // stages, stage_bytes, consumer_warps, block_warps, cluster_size, multicast, releaser,
  // extra_smem, then the limits (own limits?, smem_per_block, max_threads, max_cluster_size).
  return {
      {wide(4), wide(32768), wide(8), wide(9), wide(2), small(1), small(0), wide(0), small(0), wide(0), wide(0),
       wide(0)},
      {wide(6), wide(16384), wide(4), wide(5), wide(1), small(0), small(2), wide(1024), small(1), wide(200000),
       wide(1024), wide(16)},
  };
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  input in(data, size);
  hopper::pipeline_config c;
  c.stages = in.u32();
  c.stage_bytes = in.u64();
  c.consumer_warps = in.u32();
  c.block_warps = in.u32();
  c.cluster_size = in.u32();
  c.multicast = in.flag();
  c.releaser = static_cast<hopper::release_by>(in.pick(256));
  c.extra_smem = in.u64();
  hopper::pipeline_limits lim;
  const bool own_limits = in.flag();
  const uint64_t smem = in.u64(), threads = in.u64(), cluster = in.u64();
  if (own_limits) {
    lim.smem_per_block = smem;
    lim.max_threads_per_block = uint32_t(threads);
    lim.max_cluster_size = uint32_t(cluster);
  }
  try {
    hopper::validate(c, lim);
  } catch (const std::invalid_argument& e) {
    expect_names_an_argument(e, {"stages", "stage_bytes", "consumer_warps", "block_warps", "cluster_size", "releaser",
                                 "extra_smem", "smem_per_block", "max_threads_per_block", "max_cluster_size"});
    return 0;
  }
  // Accepted: recompute every derived quantity in 128 bits.
  const u128 need = u128(c.stages) * c.stage_bytes + u128(c.stages) * 16 + c.extra_smem;
  require(lim.smem_per_block <= 232448 && need <= lim.smem_per_block,
          "accepted " + str(need) + " bytes of shared memory against " + std::to_string(lim.smem_per_block));
  require(c.smem_bytes() == need, "smem_bytes() " + std::to_string(c.smem_bytes()) + " != " + str(need));
  require(lim.max_threads_per_block <= 1024 && u128(c.block_warps) * 32 <= lim.max_threads_per_block,
          "accepted block_warps = " + std::to_string(c.block_warps));
  require(c.consumer_warps >= 1 && u128(c.consumer_warps) + 1 <= c.block_warps, "accepted consumer_warps");
  require(c.cluster_size >= 1 && c.cluster_size <= lim.max_cluster_size && lim.max_cluster_size <= 16,
          "accepted cluster_size = " + std::to_string(c.cluster_size));
  require(c.stages >= 1 && c.stages <= 64, "accepted stages = " + std::to_string(c.stages));
  require(c.stage_bytes % 16 == 0 && c.stage_bytes > 0 && c.stage_bytes < (1u << 20), "accepted stage_bytes");
  require(!c.multicast || c.stage_bytes % (u128(16) * c.cluster_size) == 0, "accepted a multicast split");
  require(unsigned(c.releaser) <= 2, "accepted releaser " + std::to_string(unsigned(c.releaser)));
  const hopper::pipeline_params p = c.params();
  const u128 lanes = hopper::release_form(p) == hopper::release_by::each_lane ? 32 : 1;
  const u128 arrivals = u128(p.releases_per_cta) * lanes * (p.multicast ? p.cluster_size : 1u);
  require(arrivals >= 1 && arrivals < (1u << 20) && arrivals == hopper::empty_arrivals(p),
          "accepted " + str(arrivals) + " empty-barrier arrivals");
  require(hopper::params_fault(p) == nullptr, "validate accepted what pipeline::init rejects");
  return 0;
}
