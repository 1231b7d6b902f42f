// One run of a hazard-lab case, derived once from a checked config: its kernel's grid, cluster and
// shared memory, the buffers it reads and writes, the expected words and the checker's launch.
// The CUDA launcher (hazard_lab::run, kernels/hazard_lab/hazard_lab.cuh) and the model runner
// (kernels/hazard_lab/hazard_lab_on_model.hpp) both run a plan, so the model checks the launch the
// GPU gets. Plain C++: no CUDA header is needed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/hazard_lab/hazard_lab_body.hpp"

namespace hopper::kernels::hazard_lab {

enum class hazard_case {
  raw_proxy_bulk_store,
  raw_proxy_dsmem_copy,
  war_refill_before_release,
  war_store_source_reuse,
  release_acquire_mbarrier,
};

inline const char* case_name(hazard_case c) {
  switch (c) {
    case hazard_case::raw_proxy_bulk_store:
      return "raw_proxy_bulk_store";
    case hazard_case::raw_proxy_dsmem_copy:
      return "raw_proxy_dsmem_copy";
    case hazard_case::war_refill_before_release:
      return "war_refill_before_release";
    case hazard_case::war_store_source_reuse:
      return "war_store_source_reuse";
    case hazard_case::release_acquire_mbarrier:
      return "release_acquire_mbarrier";
  }
  return "?";
}

struct config {
  bool protect = true;     // with the protection (fence, wait, release/acquire) or without
  int blocks = 264;        // concurrent trials per run (2 per SM on an H200); even for dsmem
  int runs = 64;           // runs per block; trials = blocks * runs
  int tile_bytes = 4096;   // bytes per tile, multiple of 16, 16..16384
  int consumer_delay = 0;  // war_refill: spin cycles between a consumer's reads (work on data)
  uint64_t seed = 1;
  bool plant_fault = false;  // the checker expects the complement of every word: every trial fails
                             // and every word of it is counted wrong
};

struct result {
  uint64_t trials = 0;
  uint64_t failures = 0;     // trials with at least one wrong word: never more than trials
  uint64_t words = 0;        // words each trial checks (tile_bytes / 4)
  uint64_t wrong_words = 0;  // wrong words over all trials: never more than trials * words
};

// A bad config throws std::invalid_argument("hazard_lab <case>: ..."), naming the value.
inline void validate(hazard_case c, const config& k) {
  auto bad = [&](const std::string& what) {
    throw std::invalid_argument(std::string("hazard_lab ") + case_name(c) + ": " + what);
  };
  if (k.blocks < 1 || k.blocks > 65535) bad("blocks " + std::to_string(k.blocks) + " not in 1..65535");
  if (c == hazard_case::raw_proxy_dsmem_copy && k.blocks % 2 != 0)
    bad("blocks " + std::to_string(k.blocks) + " is odd (clusters of 2)");
  if (k.runs < 1 || k.runs > 100000) bad("runs " + std::to_string(k.runs) + " not in 1..100000");
  if (k.tile_bytes < 16 || k.tile_bytes > 16384 || k.tile_bytes % 16 != 0)
    bad("tile_bytes " + std::to_string(k.tile_bytes) + " not a multiple of 16 in 16..16384");
  if (k.consumer_delay < 0 || k.consumer_delay > 100000)
    bad("consumer_delay " + std::to_string(k.consumer_delay) + " not in 0..100000");
  const double out_bytes = double(k.blocks) * k.runs * k.tile_bytes;
  if (out_bytes > double(1u << 30)) bad("blocks*runs*tile_bytes = " + std::to_string(out_bytes) + " bytes > 1 GiB");
}

struct plan {
  hazard_case c = hazard_case::raw_proxy_bulk_store;
  config k{};
  int words = 0;            // 32-bit words of a tile, and of each trial's slot
  uint32_t expect_xor = 0;  // what the checks expect: pattern ^ expect_xor (all ones: a planted fault)
  uint64_t trials = 0;      // one per (block, run); per (cluster, run) for the DSMEM copy
  uint32_t grid = 0, block = uint32_t(kThreads), cluster = 1;
  size_t smem_bytes = 0;    // dynamic shared memory: the tile (DSMEM: the tile, then the inbox)
  size_t out_bytes = 0;     // the slots check_slots reads after the kernel (0: the kernel counts)
  uint32_t check_grid = 0;  // check_slots' CTAs, one per slot (block = kThreads)
  size_t src_bytes = 0;     // war_refill: bytes of first[] and of refill[] each, one tile per block

  // Checks `k` (validate), then plans case `c`.
  static plan make(hazard_case c, const config& k) {
    validate(c, k);
    plan p;
    p.c = c, p.k = k;
    p.words = k.tile_bytes / 4;
    p.expect_xor = k.plant_fault ? 0xFFFFFFFFu : 0u;
    const bool dsmem = c == hazard_case::raw_proxy_dsmem_copy;
    const uint32_t trial_ctas = uint32_t(dsmem ? k.blocks / 2 : k.blocks);  // one slot writer per trial
    p.trials = uint64_t(trial_ctas) * uint64_t(k.runs);
    p.grid = uint32_t(k.blocks);
    p.cluster = dsmem ? 2u : 1u;
    p.smem_bytes = size_t(k.tile_bytes) * (dsmem ? 2u : 1u);
    if (p.checked_after()) {
      p.out_bytes = size_t(p.trials) * size_t(k.tile_bytes);
      p.check_grid = uint32_t(p.trials);
    }
    if (c == hazard_case::war_refill_before_release) p.src_bytes = size_t(k.blocks) * size_t(k.tile_bytes);
    return p;
  }

  // The cases whose output is checked by check_slots after the kernel; the others count in it.
  bool checked_after() const {
    return c == hazard_case::raw_proxy_bulk_store || c == hazard_case::war_store_source_reuse ||
           c == hazard_case::raw_proxy_dsmem_copy;
  }

  // war_refill's sources: first[] = pattern(seed, block, 0, i), refill[] its complement (every
  // word differs). Each is src_bytes / 4 words.
  void fill_sources(uint32_t* first, uint32_t* refill) const {
    for (int b = 0; b < k.blocks; ++b)
      for (int i = 0; i < words; ++i) {
        const uint32_t v = pattern(k.seed, uint32_t(b), 0, uint32_t(i));
        first[size_t(b) * size_t(words) + size_t(i)] = v;
        refill[size_t(b) * size_t(words) + size_t(i)] = ~v;
      }
  }

  // The result before the counters are read.
  result empty_result() const {
    result r;
    r.trials = trials;
    r.words = uint64_t(words);
    return r;
  }
};

// The byte the output slots are filled with before a case writes them.
inline constexpr unsigned char out_poison = 0xA5;

}  // namespace hopper::kernels::hazard_lab
