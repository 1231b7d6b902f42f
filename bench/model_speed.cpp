// The executable model's speed, on the host: the showcase's pipeline (apps/pipeline_stream_body.hpp)
// run on the model at growing thread counts, timed per run (wall clock, Google Benchmark's own
// timer; the anchor is the same program at the smallest size). Counters: scheduler steps per
// second and thread tasks. Sustained regime: each iteration is a whole fresh run.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "apps/pipeline_stream_on_model.hpp"

namespace {

void model_pipeline(benchmark::State& st) {
  hopper::apps::host_case c;
  c.stages = 4;
  c.warpgroups = uint32_t(st.range(0));  // 4 consumer warps each
  c.cluster = 2;
  c.clusters = 2;
  c.multicast = true;
  c.tiles = 8;
  c.stage_bytes = 256;
  uint64_t steps = 0, runs = 0;
  size_t tasks = 0;
  for (auto _ : st) {
    c.seed = 1 + runs;
    const hopper::apps::stream_outcome o = hopper::apps::run_case(c);
    if (o.reported || o.bad_words != 0) st.SkipWithError(o.message.c_str());
    steps += o.steps;
    tasks = o.tasks;
    ++runs;
  }
  st.counters["steps_per_s"] = benchmark::Counter(double(steps), benchmark::Counter::kIsRate);
  st.counters["tasks"] = double(tasks);
}
BENCHMARK(model_pipeline)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
