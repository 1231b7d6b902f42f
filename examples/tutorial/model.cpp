// The tutorial's body on the model (docs/tutorial_model.md): clean over 50 scheduler seeds and
// every word right, then with 16 bytes too few announced, which the model reports. Exits 0 when
// both come out so.
#include <cstdint>
#include <cstdio>
#include <string>

#include "body.hpp"
#include "hopper/model/target.hpp"

using namespace hopper::model;

// One launch of 1 CTA x 64 threads; the model's report, or "" when it ran clean and right.
std::string run(uint32_t short_by, uint64_t seed) {
  run_options o;
  o.seed = seed;
  world w(o);
  buffer& src = w.make_global("src", tutorial::kBytes);
  buffer& dst = w.make_global("dst", tutorial::kBytes);
  auto* in = reinterpret_cast<uint32_t*>(src.host_data());
  for (uint32_t i = 0; i < tutorial::kWords; ++i) in[i] = i * 7 + 1;
  launch(w, {1, 64, 1}, [&](target& t) {
    auto& bar = cta_shared<target::barrier_type>(t, "bar");
    const auto tile = shared_buffer(t, "tile", 1, tutorial::kBytes).as<uint32_t>();
    tutorial::double_tile(t, bar, tile, gmem<const uint32_t>(src), gmem<uint32_t>(dst), short_by);
  });
  try {
    w.run();
  } catch (const model_error& e) {
    return e.what();
  }
  const auto* out = reinterpret_cast<const uint32_t*>(dst.host_data());
  for (uint32_t i = 0; i < tutorial::kWords; ++i)
    if (out[i] != 2 * in[i]) return "word " + std::to_string(i) + " is wrong";
  return "";
}

int main() {
  int bad = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) bad += !run(0, seed).empty();
  const std::string report = run(16, 1);
  std::printf("clean body: %d of 50 seeds reported or wrong\nplanted bug (16 bytes too few announced):\n%s\n", bad,
              report.c_str());
  return bad == 0 && report.find("tx-count") != std::string::npos ? 0 : 1;
}
