// The main job (README, tools/main.sh):  showcase [OUT_DIR]
//
// On an sm_90 GPU: streams a large buffer through hopper::pipeline (cp.async.bulk producer, four
// consumer warps, 4 stages of 32 KiB), checks every byte, measures its bandwidth beside
// cudaMemcpyAsync in the same process, then runs the same kernel traced and writes its timeline
// (Chrome/Perfetto JSON, and a PNG through tools/trace_png.py where Python and matplotlib exist).
// Without one: runs the same kernel body (apps/pipeline_stream_body.hpp) on the executable model,
// every thread a task (clusters with multicast, many scheduler seeds, the bugs planted in the body
// as compile-time mutants), checks every word it wrote, prints what it checked, and writes the
// model's timeline in the same format. Either way it says which it did and where the files are.
#include <cuda_runtime.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "apps/pipeline_stream.cuh"
#include "apps/pipeline_stream_on_model.hpp"
#include "hopper/trace.cuh"

namespace {

std::string gpu_missing_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device (") + cudaGetErrorString(e) + ")";
  if (n == 0) return "no CUDA device";
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "cudaGetDeviceProperties failed";
  if (p.major != 9 || p.minor != 0) return std::string(p.name) + " is not sm_90";
  return {};
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "showcase: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Render the PNG where the tool can; the JSON is the result either way.
std::string render_png(const std::string& json) {
  const std::string png = json.substr(0, json.size() - 5) + ".png";
  const std::string cmd = "python3 tools/trace_png.py '" + json + "' '" + png + "' > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0 ? png : std::string();
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int run_gpu(const std::string& out) {
  constexpr int stages = 4;
  hopper::pipeline_config cfg;
  cfg.stages = stages;
  cfg.stage_bytes = 32 * 1024;
  cfg.consumer_warps = 4;
  cfg.block_warps = 5;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const uint32_t ctas = uint32_t(prop.multiProcessorCount) * 2;  // two 128 KiB rings per SM
  const uint32_t tiles = 128;  // about 1 GiB through the pipeline, 20x the L2
  const size_t bytes = size_t(ctas) * tiles * cfg.stage_bytes;

  uint8_t *src = nullptr, *dst = nullptr;
  check(cudaMalloc(&src, bytes), "cudaMalloc src");
  check(cudaMalloc(&dst, bytes), "cudaMalloc dst");
  std::vector<uint32_t> host(bytes / 4);
  std::mt19937_64 rng(std::random_device{}());
  for (auto& w : host) w = uint32_t(rng());
  check(cudaMemcpy(src, host.data(), bytes, cudaMemcpyHostToDevice), "upload");
  check(cudaMemset(dst, 0xA5, bytes), "poison");

  auto run = [&] {
    check(hopper::apps::launch_pipeline_stream<stages>(reinterpret_cast<const uint4*>(src),
                                                       reinterpret_cast<uint4*>(dst), ctas, tiles, cfg),
          "pipeline launch");
  };
  // Correctness first: every byte.
  run();
  check(cudaDeviceSynchronize(), "pipeline run");
  std::vector<uint32_t> back(bytes / 4);
  check(cudaMemcpy(back.data(), dst, bytes, cudaMemcpyDeviceToHost), "download");
  const bool same = back == host;
  std::printf("pipeline copy of %.2f GiB (%u CTAs x %u tiles of %zu KiB, %d stages): %s\n",
              double(bytes) / (1u << 30), ctas, tiles, cfg.stage_bytes / 1024, stages,
              same ? "every byte verified" : "MISMATCH");
  if (!same) return 1;

  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  auto time = [&](auto&& body) {
    std::vector<float> ms;
    for (int i = 0; i < 3; ++i) body();  // warm-up
    for (int i = 0; i < 15; ++i) {
      check(cudaEventRecord(a), "record");
      body();
      check(cudaEventRecord(b), "record");
      check(cudaEventSynchronize(b), "sync");
      float t = 0;
      check(cudaEventElapsedTime(&t, a, b), "elapsed");
      ms.push_back(t);
    }
    return median(ms);
  };
  const float t_pipe = time(run);
  const float t_memcpy = time([&] { check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice), "memcpy"); });
  // Bytes read + bytes written, as ANCHORS.md counts them.
  const double gbs_pipe = 2.0 * double(bytes) / (t_pipe * 1e6), gbs_memcpy = 2.0 * double(bytes) / (t_memcpy * 1e6);
  std::printf("SUMMARY showcase pipeline copy %.0f GB/s, cudaMemcpyAsync %.0f GB/s\n", gbs_pipe, gbs_memcpy);
  std::printf("RATIO showcase pipeline/memcpy %.3f\n", gbs_pipe / gbs_memcpy);

  // The timeline: a short traced run (8 CTAs, 3 stages, 2 consumer warpgroups, cluster of 2).
  hopper::pipeline_config tc;
  tc.stages = 3;
  tc.stage_bytes = 16 * 1024;
  tc.consumer_warps = 8;
  tc.block_warps = 9;
  tc.cluster_size = 2;
  tc.multicast = true;
  const uint32_t tctas = 8, ttiles = 48;
  const uint32_t warps = tctas * tc.block_warps, per_warp = 4 * ttiles + 8;
  hopper::trace::record* rec = nullptr;
  uint32_t* cnt = nullptr;
  check(cudaMalloc(&rec, size_t(warps) * per_warp * sizeof(hopper::trace::record)), "cudaMalloc trace");
  check(cudaMalloc(&cnt, warps * 4), "cudaMalloc counts");
  check(cudaMemset(cnt, 0, warps * 4), "memset counts");
  check(hopper::apps::launch_pipeline_stream<3, true>(reinterpret_cast<const uint4*>(src),
                                                      reinterpret_cast<uint4*>(dst), tctas, ttiles, tc,
                                                      hopper::trace::sink{rec, cnt, per_warp, warps}),
        "traced launch");
  check(cudaDeviceSynchronize(), "traced run");
  std::vector<hopper::trace::record> slots(size_t(warps) * per_warp), recs;
  std::vector<uint32_t> counts(warps);
  check(cudaMemcpy(slots.data(), rec, slots.size() * sizeof(slots[0]), cudaMemcpyDeviceToHost), "trace download");
  check(cudaMemcpy(counts.data(), cnt, warps * 4, cudaMemcpyDeviceToHost), "counts download");
  const size_t dropped = hopper::trace::gather(slots, counts, per_warp, recs);
  const std::string json = out + "/pipeline_trace_gpu.json";
  hopper::trace::write_file(json, hopper::trace::chrome_json(
      recs, "hopper::pipeline on " + std::string(prop.name) + ": 8 CTAs, clusters of 2 with multicast, 3 stages, 8 consumer warps",
      "globaltimer ns"));
  const std::string png = render_png(json);
  std::printf("ran on the GPU (%s). timeline: %zu events (%zu dropped) in %s%s%s\n", prop.name, recs.size(), dropped,
              json.c_str(), png.empty() ? "" : ", PNG ", png.c_str());
  cudaFree(rec);
  cudaFree(cnt);
  cudaFree(src);
  cudaFree(dst);
  return 0;
}

int run_model(const std::string& out, const std::string& why) {
  using namespace hopper::apps;
  std::printf("no sm_90 GPU here (%s): running the kernel's own body (apps/pipeline_stream_body.hpp) on the "
              "executable model, every thread a task\n",
              why.c_str());
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
  std::printf("checked: %d launches (1/2/4-CTA clusters with multicast, 1-7 stages, 2-8 consumer warps, random "
              "iteration counts and scheduler seeds, up to %zu thread tasks, %llu scheduler steps): no deadlock, "
              "no RAW/WAR hazard, and all %llu words of dst as the layout says\n",
              runs, max_tasks, (unsigned long long)steps, (unsigned long long)words);
  int caught = 0, tried = 0;
  for (mutant m : {mutant::producer_parity_0, mutant::skip_release, mutant::empty_count_minus_1,
                   mutant::bytes_plus_16, mutant::release_before_read, mutant::relaxed_release}) {
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
  hopper::trace::write_file(json, hopper::trace::chrome_json(
      o.timeline, "pipeline_stream_body on the model: cluster of 2 with multicast, 3 stages, 2 consumer warps per CTA",
      "model steps"));
  const std::string png = render_png(json);
  std::printf("ran on the model. %d of %d planted bugs reported. timeline: %zu events in %s%s%s\n", caught, tried,
              o.timeline.size(), json.c_str(), png.empty() ? "" : ", PNG ", png.c_str());
  return caught == tried ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "out";
  if (std::system(("mkdir -p '" + out + "'").c_str()) != 0) {
    std::fprintf(stderr, "showcase: cannot create %s\n", out.c_str());
    return 1;
  }
  try {
    const std::string why = gpu_missing_reason();
    return why.empty() ? run_gpu(out) : run_model(out, why);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "showcase: %s\n", e.what());
    return 1;
  }
}
