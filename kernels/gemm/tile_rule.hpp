// The tile rule: every configuration that can run a problem (candidates), a cost model of what
// decides its time on this machine, and the choice of the cheapest. Plain C++ (no CUDA), so host
// tests and the calibration tool (apps/gemm_rule.cpp) evaluate it without a GPU.
//
// The model follows one cluster through the launch's schedule (make_schedule: whole tiles in
// rounds, split-K ranges, the stream-K tail), since the clusters run in lockstep rounds and the
// launch ends with its busiest cluster:
//
//   time = launch + max(busiest cluster, DRAM floor)
//   busiest cluster = rounds of items, each item = tile start + k-blocks x k-block + epilogue
//                     (+ the fixup where the tile's k-blocks are shared by several pieces)
//   k-block  = max(tensor time of bm x bn x 64 at the tile shape's rate,
//                  bytes the CTA reads from L2 (its own rows; a multicast share counted once per
//                  cluster) at one SM's share of L2 bandwidth)
//   epilogue = C tile bytes at one SM's store rate (ping-pong: hidden behind the other
//              warpgroup's main loop, except its excess)
//   DRAM floor = A + B + C (+ the partials written and read back) at the DRAM bandwidth
//
// What this captures: tiles per wave and the last wave's fill (the rounds), tile quantization
// (a partial tile costs a whole tile's tensor time, but only its real rows' bytes), split-K and
// stream-K overheads (the fixup, and the pieces' tile starts), multicast (less L2 traffic per
// CTA), the per-tile fixed cost, and the memory-bound regime of few tokens (the feed and DRAM
// terms). The constants are fitted to the H200 sweep (docs/results/gemm_candidates_h200.txt,
// apps/gemm_rule.cpp fit); choose_config (gemm_config.hpp) is still the hand rule, which the model
// does not yet beat on that data (docs/gemm.md, "The cost model beside the rule").
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/gemm/gemm_config.hpp"

namespace hopper::gemm {

// Every configuration the library can run `p` with that is worth timing: each instance, with
// 1 to 4 splits where the split work units still fit in one wave of num_sms / cluster CTAs, and
// with a stream-K tail where whole tiles take more than one wave; none whose cluster covers more
// tiles than the problem has along a side (CTAs that would compute nothing). The space the rule
// chooses from and the benchmark's sweep measures.
inline std::vector<config> candidates(const problem& p, int num_sms) {
  using detail::ceil_div;
  validate_shape(p);
  if (num_sms < 1) detail::fail("num_sms = " + std::to_string(num_sms) + " must be >= 1");
  std::vector<config> out;
  const int64_t k_blocks = ceil_div(p.K, 64);
  for (const instance& in : instances) {
    config c;
    c.bm = in.bm, c.bn = in.bn, c.stages = in.stages, c.cluster_m = in.cluster_m, c.cluster_n = in.cluster_n;
    c.pingpong = in.pingpong;
    const int64_t tiles_m = ceil_div(p.M, c.bm), tiles_n = ceil_div(p.N, c.bn);
    if (c.cluster_m > tiles_m || c.cluster_n > tiles_n) continue;
    const int64_t units = ceil_div(tiles_m, c.cluster_m) * ceil_div(tiles_n, c.cluster_n);
    const int64_t resident = std::max<int64_t>(1, num_sms / c.cluster_size());
    for (int splits = 1; splits <= (c.pingpong ? 1 : 4); ++splits) {
      if (splits > k_blocks || (splits > 1 && units * splits > resident)) break;
      c.splits = splits;
      out.push_back(c);
    }
    if (!c.pingpong && units > resident && units % resident != 0) {
      c.splits = 1;
      c.stream_k = true;
      out.push_back(c);
    }
  }
  return out;
}

// The model's constants (microseconds, bytes per microsecond, TFLOP/s per SM), calibrated on the
// H200 at its sustained clock.
struct cost_constants {
  double launch_us;           // a launch's fixed cost, back to back with the previous one
  double tile_start_us;       // a work item's start: coordinates, the first stages' latency
  double tflops_per_sm[5];    // tensor rate by tile shape: 128 x 256, 128 x 192, 128 x 128, 128 x 64, 64 x 128
  double pingpong_rate;       // ping-pong's rate relative to the cooperative 128 x 128 tile
  double l2_bytes_per_us;     // one SM's share of L2 read bandwidth
  double store_bytes_per_us;  // one SM's epilogue store rate (C tile out)
  double fixup_us;            // a shared tile's fixed fixup cost (fence, counter, wait)
  double fixup_bytes_per_us;  // one SM's rate for partials written and read back
  double dram_bytes_per_us;   // the device's DRAM bandwidth
};

inline constexpr cost_constants h200_constants = {
    /*launch_us*/ 1.73,
    /*tile_start_us*/ 0.115,
    /*tflops_per_sm*/ {5.51, 5.63, 5.02, 2.69, 3.24},
    /*pingpong_rate*/ 1.03,
    /*l2_bytes_per_us*/ 6.91e4,
    /*store_bytes_per_us*/ 6.815e4,
    /*fixup_us*/ 4.16,
    /*fixup_bytes_per_us*/ 7.666e4,
    /*dram_bytes_per_us*/ 2.969e6,
};

// One candidate's predicted time and its terms, for the explain mode.
struct cost {
  config cfg;
  int clusters = 0;        // resident clusters the schedule assumes
  double rounds = 0;       // work items of the busiest cluster
  double kblock_us = 0;    // one k-block
  double tensor_us = 0;    // its tensor time
  double feed_us = 0;      // its L2 feed time
  double epilogue_us = 0;  // one tile's epilogue (visible part)
  double cluster_us = 0;   // the busiest cluster
  double dram_us = 0;      // the DRAM floor
  double fixup_us = 0;     // fixups on the busiest cluster
  double total_us = 0;
  const char* bound = "";  // "tensor", "feed" or "dram": what sets the time
};

namespace detail {
inline int rate_index(const config& c) {
  if (c.bm == 64) return 4;
  return c.bn == 256 ? 0 : c.bn == 192 ? 1 : c.bn == 128 ? 2 : 3;
}
}  // namespace detail

// The predicted time of `c` on `p` with num_sms SMs (num_sms / cluster size resident clusters).
inline cost predict(const config& c, const problem& p, int num_sms, const cost_constants& k = h200_constants) {
  using detail::ceil_div;
  cost r;
  r.cfg = c;
  const int resident = int(std::max<int64_t>(1, std::min<int64_t>(num_sms / c.cluster_size(), max_resident_clusters)));
  const launch_schedule ls = make_schedule(p, c, resident);
  const work_schedule& w = ls.work;
  r.clusters = w.clusters;
  // One k-block: tensor time and L2 feed, from the rows the CTA's tile really has.
  const double rows_a = double(std::min<int64_t>(c.bm, p.M)), rows_b = double(std::min<int64_t>(c.bn, p.N));
  const double rate = k.tflops_per_sm[detail::rate_index(c)] * (c.pingpong ? k.pingpong_rate : 1.0);  // TFLOP/s
  r.tensor_us = 2.0 * c.bm * c.bn * 64 / (rate * 1e6);
  const double feed_bytes = (rows_a / c.cluster_n + rows_b / c.cluster_m) * 64 * 2;
  r.feed_us = feed_bytes / k.l2_bytes_per_us;
  r.kblock_us = std::max(r.tensor_us, r.feed_us);
  // One tile's epilogue: its real rows and columns of C.
  const double c_bytes = rows_a * double(std::min<int64_t>(c.bn, p.N)) * double(out_bytes(p.out));
  const double epilogue = c_bytes / k.store_bytes_per_us;
  const double fixup = k.fixup_us + double(c.bm) * c.bn * 4 * 2 / k.fixup_bytes_per_us;
  // The busiest cluster: cluster 0 takes the most whole items; every cluster's stream-K share is
  // the same number of k-blocks, in at most a few pieces.
  const double dp_items = double(ceil_div(w.dp_units(), w.clusters));
  const double dp_kblocks = double(ceil_div(w.k_blocks, w.splits));
  double sk_kblocks = 0, sk_pieces = 0;
  if (w.dp_tiles < w.order.total()) {
    sk_kblocks = double(ceil_div(w.sk_iters(), w.clusters));
    sk_pieces = double(ceil_div(int64_t(sk_kblocks), w.k_blocks)) + 1;
  }
  r.rounds = dp_items + sk_pieces;
  if (c.pingpong) {
    // Two warpgroups alternate tiles: one's epilogue runs under the other's main loop.
    const double main_us = k.tile_start_us + dp_kblocks * r.kblock_us;
    r.epilogue_us = std::max(0.0, epilogue - main_us);
    r.cluster_us = dp_items * (main_us + r.epilogue_us) + epilogue;
  } else {
    r.epilogue_us = epilogue;
    r.fixup_us = (w.splits > 1 ? dp_items : 0) * fixup + sk_pieces * fixup;
    r.cluster_us =
        r.rounds * (k.tile_start_us + epilogue) + (dp_items * dp_kblocks + sk_kblocks) * r.kblock_us + r.fixup_us;
  }
  const double partials = double(ls.partial_bytes(c)) * 2;
  const double dram_bytes = 2.0 * double(p.M) * double(p.K) + 2.0 * double(p.N) * double(p.K) +
                            double(out_bytes(p.out)) * double(p.M) * double(p.N) + partials;
  r.dram_us = dram_bytes / k.dram_bytes_per_us;
  r.total_us = k.launch_us + std::max(r.cluster_us, r.dram_us);
  r.bound = r.dram_us > r.cluster_us ? "dram" : r.feed_us > r.tensor_us ? "feed" : "tensor";
  return r;
}

// Every candidate's prediction, cheapest first.
inline std::vector<cost> ranked(const problem& p, int num_sms, const cost_constants& k = h200_constants) {
  std::vector<cost> out;
  for (const config& c : candidates(p, num_sms)) out.push_back(predict(c, p, num_sms, k));
  std::stable_sort(out.begin(), out.end(), [](const cost& a, const cost& b) { return a.total_us < b.total_us; });
  return out;
}

}  // namespace hopper::gemm
