// The main job without a GPU (apps/showcase.cu calls it): the default copy's and the showcase
// pipeline's own kernel bodies on the executable model, every thread a task; says what it
// checked, shows the planted bugs it reports, and writes the model's timeline.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "apps/pipeline_stream_on_model.hpp"
#include "apps/showcase.hpp"
#include "hopper/trace/trace.hpp"
#include "kernels/copy/stream_copy_on_model.hpp"

namespace hopper::apps {

namespace {

// The default copy's own body on the model: sizes from 1 byte to several chunks, many seeds,
// every byte compared.
int run_copy_model() {
  std::mt19937_64 rng(std::random_device{}());
  hopper::kernels::stream_copy_config c = hopper::kernels::stream_copy_1d_default();
  c.stage_bytes = 64;  // small chunks: several CTAs and a partial last chunk at model sizes
  c.store_warps = 2;
  int runs = 0;
  uint64_t checked = 0;
  for (uint64_t bytes : {1ull, 15ull, 16ull, 100ull, 64ull * 6 + 9})
    for (int rep = 0; rep < 8; ++rep) {
      std::vector<uint8_t> in(bytes);
      for (auto& b : in) b = uint8_t(rng());
      const auto r = hopper::kernels::on_model::run_copy_1d(c, in, rng());
      if (!r.error.empty() || r.out != in) {
        std::printf("FAILED default copy of %llu bytes on the model: %s\n", (unsigned long long)bytes,
                    r.error.empty() ? "wrong bytes" : r.error.c_str());
        return 1;
      }
      ++runs;
      checked += bytes;
    }
  std::printf(
      "default copy (kernels/copy/stream_copy_body.hpp, the per-tile st.global path) on the model: %d runs of 1 B "
      "to 393 B, random scheduler seeds, no deadlock or hazard, all %llu bytes right\n",
      runs, (unsigned long long)checked);
  return 0;
}

}  // namespace

int run_model(const std::string& out, const std::string& why) {
  using namespace hopper::apps;
  std::printf(
      "no sm_90 GPU here (%s): running the kernels' own bodies on the executable model, every thread a "
      "task (the GEMM runs only on the GPU so far)\n",
      why.c_str());
  if (int rc = run_copy_model()) return rc;
  std::printf("the showcase pipeline (apps/pipeline_stream_body.hpp):\n");
  std::mt19937_64 rng(std::random_device{}());
  int runs = 0;
  uint64_t words = 0, steps = 0;
  size_t max_tasks = 0;
  for (uint32_t cluster : {1u, 2u, 4u})
    for (uint32_t stages : {1u, 2u, 4u, 7u})
      for (int rep = 0; rep < 10; ++rep) {
        host_case c;
        c.stages = stages;
        c.warpgroups = cluster == 4 ? 1 : uint32_t(1 + rng() % 2);
        c.warps_per_group = cluster == 4 ? 2 : 4;
        c.cluster = cluster;
        c.multicast = cluster > 1;
        c.tiles = uint32_t(1 + rng() % 10);
        c.stage_bytes = 16u * cluster * uint32_t(1 + rng() % 2);
        c.seed = rng();
        const stream_outcome o = run_case(c);
        if (o.reported || o.bad_words) {
          std::printf("FAILED %s\n%s\n", describe(c).c_str(), o.reported ? o.message.c_str() : o.first_bad.c_str());
          return 1;
        }
        ++runs;
        words += o.checked_words;
        steps += o.steps;
        max_tasks = o.tasks > max_tasks ? o.tasks : max_tasks;
      }
  std::printf(
      "checked: %d launches (1/2/4-CTA clusters with multicast, 1-7 stages, 2-8 consumer warps, random "
      "iteration counts and scheduler seeds, up to %zu thread tasks, %llu scheduler steps): no deadlock, "
      "no RAW/WAR hazard, and all %llu words of dst as the layout says\n",
      runs, max_tasks, (unsigned long long)steps, (unsigned long long)words);
  int caught = 0, tried = 0;
  for (mutant m : {mutant::producer_parity_0, mutant::skip_release, mutant::empty_count_minus_1, mutant::bytes_plus_16,
                   mutant::release_before_read, mutant::relaxed_release}) {
    host_case c;
    c.m = m;
    c.stages = 3;
    c.warps_per_group = 2;
    c.tiles = 9;
    c.seed = rng();
    const stream_outcome o = run_case(c);
    ++tried;
    caught += o.reported;
    // The report's first line and, for a deadlock, the first task it names with its barrier,
    // parity and counts.
    const size_t first = o.message.find('\n');
    const size_t second = first == std::string::npos ? first : o.message.find('\n', first + 1);
    std::string shown = o.reported ? o.message.substr(0, second) : "NOT REPORTED";
    if (second != std::string::npos) shown.replace(first, 1, "\n                                 ");
    std::printf("  planted bug %-20s -> %s\n", name(m), shown.c_str());
  }
  host_case c;
  c.stages = 3;
  c.warps_per_group = 2;
  c.cluster = 2;
  c.multicast = true;
  c.tiles = 10;
  c.seed = rng();
  const stream_outcome o = run_case(c, true);
  if (o.reported || o.bad_words) {
    std::printf("FAILED %s\n%s\n", describe(c).c_str(), o.reported ? o.message.c_str() : o.first_bad.c_str());
    return 1;
  }
  const std::string json = out + "/pipeline_trace_model.json";
  hopper::trace::write_file(
      json, hopper::trace::chrome_json(
                o.timeline,
                "pipeline_stream_body on the model: cluster of 2 with multicast, 3 stages, 2 consumer warps per CTA",
                "model steps"));
  const std::string png = render_png(json);
  std::printf("ran on the model. %d of %d planted bugs reported. timeline: %zu events in %s%s%s\n", caught, tried,
              o.timeline.size(), json.c_str(), png.empty() ? "" : ", PNG ", png.c_str());
  return caught == tried ? 0 : 1;
}

}  // namespace hopper::apps
