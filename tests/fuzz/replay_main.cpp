// Runs a fuzz target without a fuzzing engine (any compiler, every ctest run, and the ASan/UBSan
// stage): first the seed corpus (each seed of the target, then each seed with one of its values
// swapped for every extreme value), then random inputs, seeded and replayable, until a budget of
// runs is spent. With --write-corpus DIR it writes the seed corpus there for libFuzzer and exits.
//   HOPPER_FUZZ_RUNS   random inputs after the corpus (default 20000)
//   HOPPER_SEED        the random inputs' seed (default: fresh, printed)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Every seed, and every seed with one of its wide values replaced by one extreme selector.
std::vector<std::vector<uint8_t>> corpus() {
  std::vector<std::vector<uint8_t>> out;
  for (const hopper_fuzz::seed& s : hopper_fuzz_seeds()) {
    out.push_back(hopper_fuzz::encode(s));
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i].wide) continue;
      for (size_t e = 0; e < 2 * hopper_fuzz::extreme_count; ++e) {
        hopper_fuzz::seed t = s;
        t[i] = hopper_fuzz::small(e);  // selector e: extreme e % count, negated in the second half
        out.push_back(hopper_fuzz::encode(t));
      }
    }
  }
  return out;
}

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 0) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::vector<uint8_t>> seeds = corpus();
  if (argc == 3 && std::string(argv[1]) == "--write-corpus") {
    for (size_t i = 0; i < seeds.size(); ++i) {
      std::ofstream f(std::string(argv[2]) + "/seed_" + std::to_string(i), std::ios::binary);
      f.write(reinterpret_cast<const char*>(seeds[i].data()), std::streamsize(seeds[i].size()));
      if (!f) {
        std::fprintf(stderr, "cannot write the corpus into %s\n", argv[2]);
        return 2;
      }
    }
    std::printf("%zu seed inputs written to %s\n", seeds.size(), argv[2]);
    return 0;
  }
  for (const auto& s : seeds) LLVMFuzzerTestOneInput(s.data(), s.size());
  const uint64_t runs = env_u64("HOPPER_FUZZ_RUNS", 20000);
  const uint64_t seed = env_u64("HOPPER_SEED", std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32));
  std::printf("replaying %zu seed inputs, then %llu random inputs (HOPPER_SEED=%llu)\n", seeds.size(),
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> in;
  for (uint64_t r = 0; r < runs; ++r) {
    // Half the inputs start from a seed and flip some bytes; half are fresh bytes.
    if (r % 2 == 0) {
      in = seeds[rng() % seeds.size()];
      for (int k = int(rng() % 4); k >= 0 && !in.empty(); --k) in[rng() % in.size()] = uint8_t(rng());
    } else {
      in.resize(rng() % 160);
      for (auto& b : in) b = uint8_t(rng());
    }
    LLVMFuzzerTestOneInput(in.data(), in.size());
  }
  std::printf("%zu seed inputs and %llu random inputs: no finding\n", seeds.size(),
              static_cast<unsigned long long>(runs));
  return 0;
}
