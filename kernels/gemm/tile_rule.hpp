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
//                  cluster) at one SM's share of L2 bandwidth,
//                  bytes new to the device at that k-block step of every item then running
//                  (A rows and B columns no other of them reads at that step) at the DRAM
//                  bandwidth,
//                  each CTA's share of those bytes at the rate its stages in flight bring them
//                  (stages x stage bytes per load latency: Little's law, what bounds a launch of
//                  few CTAs streaming W);
//                  for the full rounds, the partial last one and the stream-K shares)
//   epilogue = C tile bytes at one SM's store rate (ping-pong: hidden behind the other
//              warpgroup's main loop, except its excess)
//   fixup    = a fixed cost + the fp32 partials of the live warps' rows, this piece's out and the
//              other pieces' back (as many as meet in the tile)
//   DRAM floor = A + B + C (+ the partials written and read back) at the DRAM bandwidth
//
// What this captures: tiles per wave and the last wave's fill (the rounds), tile quantization
// (a partial tile costs a whole tile's tensor time, but only its real rows' bytes), split-K and
// stream-K overheads (the fixup, and the pieces' tile starts), multicast (less L2 traffic per
// CTA), the per-tile fixed cost, and the memory-bound regime of few tokens (the feed and DRAM
// terms). The constants are fitted to the H200 sweep of every candidate with graph-replayed
// launches (docs/results/gemm_candidates_graphs_h200.txt, apps/gemm_rule.cpp fit);
// choose_config (gemm_config.hpp) is still the hand rule, which the model does not yet beat on
// that data or on held-out shapes, alone or as a veto of the hand rule's choice (docs/gemm.md,
// "The cost model beside the rule").
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/gemm/gemm_config.hpp"

namespace hopper::gemm {

// Every configuration the library can run `p` with that is worth timing: each instance, with
// 1 to 4 splits, and 6, 8, 12, 16 or the most of at least 4, stages + 1 or 16 k-blocks each (so
// that every choice of choose_config is among them), where the split work
// units still fit in one wave of num_sms / cluster CTAs, and
// with the stream-K schedule (a tail, or all of a problem of less than one wave); none whose cluster covers more
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
    // Splits 1 to 4, then the larger counts that keep every split at least 4 k-blocks long: 6, 8,
    // 12, 16, and the most that fit in the wave with splits of at least 4, stages + 1 or 16
    // k-blocks (the lengths choose_config's wave splits keep).
    const int64_t most = wave_splits(units, resident, k_blocks, 4);
    const int64_t most_rule[] = {wave_splits(units, resident, k_blocks, c.stages + 1),
                                 wave_splits(units, resident, k_blocks, 16)};
    for (int splits = 1; splits <= (c.pingpong ? 1 : max_splits); ++splits) {
      if (splits > k_blocks || (splits > 1 && units * splits > resident)) break;
      const bool wave = splits == most || splits == most_rule[0] || splits == most_rule[1];
      if (splits > 4 && (splits > most || (splits % 4 != 0 && splits != 6 && !wave))) continue;
      c.splits = splits;
      out.push_back(c);
    }
    // The stream-K schedule: a tail where whole tiles take more than one wave and the last is
    // partial; all of the problem where its tiles fill less than one wave (every share at least
    // 4 k-blocks, so that a share is more than its pipeline's fill).
    if (!c.pingpong && (units < resident ? units * k_blocks >= 4 * resident : units % resident != 0)) {
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
  double stream_latency_us;   // a stage's load from DRAM while every SM streams (stages in flight)
};

inline constexpr cost_constants h200_constants = {
    /*launch_us*/ 1.68,
    /*tile_start_us*/ 1.43,
    /*tflops_per_sm*/ {5.25, 5.27, 5.24, 2.46, 2.95},
    /*pingpong_rate*/ 1.04,
    /*l2_bytes_per_us*/ 7.637e+04,
    /*store_bytes_per_us*/ 3.942e+18,
    /*fixup_us*/ 1.74e-12,
    /*fixup_bytes_per_us*/ 5.149e+04,
    /*dram_bytes_per_us*/ 4.701e+06,
    /*stream_latency_us*/ 4.89,
};

// One candidate's predicted time and its terms, for the explain mode.
struct cost {
  config cfg;
  int clusters = 0;        // resident clusters the schedule assumes
  double rounds = 0;       // work items of the busiest cluster
  double kblock_us = 0;    // one k-block while every cluster runs
  double tensor_us = 0;    // its tensor time
  double feed_us = 0;      // its L2 feed time
  double stream_us = 0;    // its DRAM share: the bytes new to the device per k-block step
  double epilogue_us = 0;  // one tile's epilogue (visible part)
  double cluster_us = 0;   // the busiest cluster
  double dram_us = 0;      // the DRAM floor
  double fixup_us = 0;     // fixups on the busiest cluster
  double total_us = 0;
  const char* bound = "";  // "tensor", "feed", "stream" or "dram": what sets the time
};

namespace detail {
inline int rate_index(const config& c) {
  if (c.bm == 64) return 4;
  return c.bn == 256 ? 0 : c.bn == 192 ? 1 : c.bn == 128 ? 2 : 3;
}

// The operand bytes `count` concurrent work items starting at dp unit `first` (or, with
// first < 0, the first stream-K piece of every cluster) read per k-block step that no other of
// them reads at the same step: A rows and B columns of distinct (cluster row or column, k-block)
// pairs. Items of one tile row at the same k-block share their A bytes through L2.
inline double unique_step_bytes(const work_schedule& w, const config& c, int first, int count, double rows_a,
                                double rows_b) {
  std::vector<std::pair<int, int64_t>> rows, cols;
  const auto add = [&](int tile, int64_t k) {
    int r = 0, col = 0;
    w.order.coords(tile, r, col);
    rows.emplace_back(r, k);
    cols.emplace_back(col, k);
  };
  for (int i = 0; i < count; ++i) {
    if (first >= 0) {
      const int unit = first + i;
      add(unit / w.splits, split_k_range(w.k_blocks, w.splits, unit % w.splits).begin);
    } else {
      const int64_t it = w.sk_begin(i);
      add(w.dp_tiles + int(it / w.k_blocks), it % w.k_blocks);
    }
  }
  const auto distinct = [](std::vector<std::pair<int, int64_t>>& v) {
    std::sort(v.begin(), v.end());
    return double(std::unique(v.begin(), v.end()) - v.begin());
  };
  return (distinct(rows) * c.cluster_m * rows_a + distinct(cols) * c.cluster_n * rows_b) * k_block * 2;
}
}  // namespace detail

// What the prediction of one candidate takes from its launch's schedule, independent of the
// constants (so that a calibration computes it once): the rows of a tile that are real, the
// busiest cluster's rounds and k-blocks, the bytes new to the device per k-block step in each
// phase of the launch, and the launch's total DRAM bytes.
struct cost_geometry {
  config cfg;
  int clusters = 0;
  double rows_a = 0, rows_b = 0;        // real rows of an A tile, of a B tile
  int full = 0, tail = 0;               // full rounds of dp units, clusters in the partial one
  double dp_items = 0, dp_kblocks = 0;  // the busiest cluster's dp items, k-blocks of each
  double sk_kblocks = 0, sk_pieces = 0;
  double step_full = 0, step_tail = 0, step_sk = 0;  // unique bytes per k-block step
  double c_bytes = 0;                                // one tile's real bytes of C
  double partial_bytes = 0;  // one piece's fp32 partial: the rows of its live warps (live_warps)
  double slots = 0;          // the pieces that meet in a shared tile's fixup
  double dram_bytes = 0;     // A + B + C + partials written and read
};

inline cost_geometry geometry(const config& c, const problem& p, int num_sms) {
  using detail::ceil_div;
  cost_geometry g;
  g.cfg = c;
  const int resident = int(std::max<int64_t>(1, std::min<int64_t>(num_sms / c.cluster_size(), max_resident_clusters)));
  const launch_schedule ls = make_schedule(p, c, resident);
  const work_schedule& w = ls.work;
  g.clusters = w.clusters;
  g.rows_a = double(std::min<int64_t>(c.bm, p.M)), g.rows_b = double(std::min<int64_t>(c.bn, p.N));
  const int dp_units = w.dp_units();
  g.full = dp_units / w.clusters, g.tail = dp_units % w.clusters;
  g.dp_items = double(ceil_div(dp_units, w.clusters));
  g.dp_kblocks = double(ceil_div(w.k_blocks, w.splits));
  if (g.full > 0) g.step_full = detail::unique_step_bytes(w, c, 0, w.clusters, g.rows_a, g.rows_b);
  if (g.tail > 0) g.step_tail = detail::unique_step_bytes(w, c, g.full * w.clusters, g.tail, g.rows_a, g.rows_b);
  if (w.dp_tiles < w.order.total()) {
    g.sk_kblocks = double(ceil_div(w.sk_iters(), w.clusters));
    g.sk_pieces = double(ceil_div(int64_t(g.sk_kblocks), w.k_blocks)) + 1;
    g.step_sk = detail::unique_step_bytes(w, c, -1, w.clusters, g.rows_a, g.rows_b);
  }
  g.c_bytes = g.rows_a * g.rows_b * double(out_bytes(p.out));
  const auto live_rows = [](int64_t rows) {
    return double(live_warps(int(std::min<int64_t>(rows, wgmma_m))) * warp_acc_rows);
  };
  const double rows_live =
      c.bm == wgmma_m ? live_rows(p.M) : live_rows(p.M) + live_rows(std::max<int64_t>(0, p.M - wgmma_m));
  g.partial_bytes = std::min<double>(rows_live, c.bm) * c.bn * 4;
  g.slots = c.stream_k ? double(ls.slot_stride) : double(c.splits);
  g.dram_bytes = 2.0 * double(p.M) * double(p.K) + 2.0 * double(p.N) * double(p.K) +
                 double(out_bytes(p.out)) * double(p.M) * double(p.N) + double(ls.partial_bytes(c)) * 2;
  return g;
}

// The predicted time of a candidate from its geometry under constants `k`.
inline cost predict(const cost_geometry& g, const cost_constants& k = h200_constants) {
  const config& c = g.cfg;
  cost r;
  r.cfg = c;
  r.clusters = g.clusters;
  // One k-block: tensor time and L2 feed, from the rows the CTA's tile really has; and the DRAM
  // share of the k-block step of the clusters running at once.
  const double rate = k.tflops_per_sm[detail::rate_index(c)] * (c.pingpong ? k.pingpong_rate : 1.0);  // TFLOP/s
  r.tensor_us = 2.0 * c.bm * c.bn * 64 / (rate * 1e6);
  r.feed_us = (g.rows_a / c.cluster_n + g.rows_b / c.cluster_m) * 64 * 2 / k.l2_bytes_per_us;
  const double local_us = std::max(r.tensor_us, r.feed_us);
  // The bytes new to the device at a step come from DRAM at the device's bandwidth, and each CTA's
  // share of them no faster than its stages in flight bring them (Little's law: a stage's bytes
  // per stream_latency_us, the fraction of them that is new).
  const double ctas = double(c.cluster_size()), stage_bytes = (g.rows_a + g.rows_b) * 64 * 2;
  const auto kblock = [&](double step_bytes, double clusters) {
    const double per_sm =
        clusters > 0 ? step_bytes / (clusters * ctas) / stage_bytes * k.stream_latency_us / c.stages : 0;
    return std::max({local_us, step_bytes / k.dram_bytes_per_us, per_sm});
  };
  const double kb_full = kblock(g.step_full, g.clusters), kb_tail = kblock(g.step_tail, g.tail),
               kb_sk = kblock(g.step_sk, g.clusters);
  // One tile's epilogue: its real rows and columns of C.
  const double epilogue = g.c_bytes / k.store_bytes_per_us;
  // A shared tile's fixup: its fixed cost, this piece's partial out and, for the last piece, the
  // others' back.
  const double fixup = k.fixup_us + g.partial_bytes * g.slots / k.fixup_bytes_per_us;
  // The busiest cluster: cluster 0 takes the most whole items, the last of them perhaps in a
  // partial round; every cluster's stream-K share is the same number of k-blocks, in at most a
  // few pieces, while every cluster runs.
  r.kblock_us = g.full > 0 ? kb_full : g.tail > 0 ? kb_tail : kb_sk;
  r.stream_us = r.kblock_us > local_us ? r.kblock_us : 0;
  r.rounds = g.dp_items + g.sk_pieces;
  const double dp_loop_us = g.full * g.dp_kblocks * kb_full + (g.tail > 0 ? g.dp_kblocks * kb_tail : 0);
  if (c.pingpong) {
    // Two warpgroups alternate tiles: one's epilogue runs under the other's main loop.
    const double main_us = k.tile_start_us + g.dp_kblocks * r.kblock_us;
    r.epilogue_us = std::max(0.0, epilogue - main_us);
    r.cluster_us = g.dp_items * (k.tile_start_us + r.epilogue_us) + dp_loop_us + epilogue;
  } else {
    r.epilogue_us = epilogue;
    r.fixup_us = (c.splits > 1 ? g.dp_items : 0) * fixup + g.sk_pieces * fixup;
    r.cluster_us = r.rounds * (k.tile_start_us + epilogue) + dp_loop_us + g.sk_kblocks * kb_sk + r.fixup_us;
  }
  r.dram_us = g.dram_bytes / k.dram_bytes_per_us;
  r.total_us = k.launch_us + std::max(r.cluster_us, r.dram_us);
  r.bound = r.dram_us > r.cluster_us  ? "dram"
            : r.stream_us > 0         ? "stream"
            : r.feed_us > r.tensor_us ? "feed"
                                      : "tensor";
  return r;
}

// The predicted time of `c` on `p` with num_sms SMs (num_sms / cluster size resident clusters).
inline cost predict(const config& c, const problem& p, int num_sms, const cost_constants& k = h200_constants) {
  return predict(geometry(c, p, num_sms), k);
}

// Every candidate's prediction, cheapest first.
inline std::vector<cost> ranked(const problem& p, int num_sms, const cost_constants& k = h200_constants) {
  std::vector<cost> out;
  for (const config& c : candidates(p, num_sms)) out.push_back(predict(c, p, num_sms, k));
  std::stable_sort(out.begin(), out.end(), [](const cost& a, const cost& b) { return a.total_us < b.total_us; });
  return out;
}

}  // namespace hopper::gemm
