// A producer/consumer kernel body checked on the model, no GPU: the same source a __global__
// entry would run with hopper::device_target runs here with hopper::model::target, every thread a
// task under a seeded scheduler. Run clean it copies every byte; with the consumer's release
// skipped once (a planted bug) the model reports the deadlock and names the barrier. Exits 0 when
// both come out so.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "hopper/hd.hpp"
#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"

using namespace hopper::model;

constexpr int kStages = 2;
constexpr uint32_t kTiles = 8, kTileBytes = 256;

// The kernel body, over any target `T`: warp 0 lane 0 loads tiles with cp.async.bulk, warp 1
// copies each stage out with ordinary loads and stores, then releases it. HOPPER_EXEC_CHECK_OFF
// and HOPPER_HD (hopper/hd.hpp) make the same template a device function under nvcc, where a
// __global__ entry calls it with hopper::device_target (docs/model.md, "The target").
HOPPER_EXEC_CHECK_OFF
template <class T>
HOPPER_HD void body(T& t, typename hopper::pipeline<kStages, T>::storage& ring,
                    typename T::template smem_t<uint8_t> stages, typename T::template gmem_t<const uint8_t> src,
                    typename T::template gmem_t<uint8_t> dst, bool skip_release) {
  using pipe_t = hopper::pipeline<kStages, T>;
  auto pipe = pipe_t::init(ring, hopper::pipeline_params{1}, t);
  if (t.warp() == 0) {
    if (t.lane() != 0) return;
    auto s = pipe.producer_start();
    for (; s.iter() < kTiles; ++s) {
      pipe.acquire(s, kTileBytes);
      t.cp_async_bulk_shared_cluster_global(stages + s.index() * kTileBytes, src + s.iter() * kTileBytes, kTileBytes,
                                            pipe.full(s));
    }
    pipe.drain(s);
    return;
  }
  for (auto s = pipe.consumer_start(); s.iter() < kTiles; ++s) {
    pipe.wait(s);
    const auto in = (stages + s.index() * kTileBytes).template as<uint32_t>();
    const auto out = (dst + s.iter() * kTileBytes).template as<uint32_t>();
    for (uint32_t i = t.lane(); i < kTileBytes / 4; i += 32) out.store(i, in.load(i));
    if (!(skip_release && s.iter() == 3)) pipe.release(s);
  }
}

// Runs the body on a fresh model world; returns the model's report, or "" when it ran clean.
std::string run(bool skip_release, uint64_t seed, bool* copied) {
  run_options o;
  o.seed = seed;
  world w(o);
  buffer& src = w.make_global("src", kTiles * kTileBytes);
  buffer& dst = w.make_global("dst", kTiles * kTileBytes);
  for (uint32_t i = 0; i < kTiles * kTileBytes; ++i) src.host_data()[i] = uint8_t(i * 13 + 5);
  launch(w, {1, 64, 1}, [&](target& t) {
    auto& ring = cta_shared<hopper::pipeline<kStages, target>::storage>(t, "ring");
    body(t, ring, shared_buffer(t, "stages", kStages, kTileBytes), gmem<const uint8_t>(src), gmem<uint8_t>(dst),
         skip_release);
  });
  try {
    w.run();
  } catch (const model_error& e) {
    return e.what();
  }
  *copied = std::memcmp(src.host_data(), dst.host_data(), kTiles * kTileBytes) == 0;
  return "";
}

int main() {
  int bad = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    bool copied = false;
    const std::string clean = run(false, seed, &copied);
    if (!clean.empty() || !copied) {
      std::printf("seed %llu: the correct body was reported or copied wrong: %s\n", (unsigned long long)seed,
                  clean.c_str());
      ++bad;
    }
    const std::string bug = run(true, seed, &copied);
    if (bug.find("empty") == std::string::npos) {
      std::printf("seed %llu: the skipped release went unreported: %s\n", (unsigned long long)seed, bug.c_str());
      ++bad;
    }
    if (seed == 1) std::printf("the planted bug, as the model reports it:\n%s\n", bug.c_str());
  }
  std::printf("model_check: %d of 40 runs not as expected\n", bad);
  return bad == 0 ? 0 : 1;
}
