// Which instance of the kernel a problem gets: every compiled instance of its head dimension is
// a candidate, and the one with the least predicted time wins. Plain C++ (the launch plan of both
// machines calls it).
//
//   choose_shape(problem, sms)      the instance
//   predict(problem, instance, sms) its predicted time and the terms behind it
//   explain(problem, sms)           one line per candidate: why the winner won
//
// The model: a CTA computes its tile's kv blocks whole (rows past seq_q and, causal, columns past
// the diagonal included), so the work of a tile is BM x BN x its blocks, and the launch is the
// plan's (attention_plan.hpp). With no more tiles than SMs every tile runs at once and the longest
// decides. Otherwise the persistent grid of `sms` CTAs runs in rounds: without a causal mask
// ceil(tiles / sms) rounds of one tile, every tile the same work; with one ceil(pairs / grid)
// rounds of a pair of tiles (grid = min(sms, pairs), pairs = ceil(tiles / 2)), each pair about
// their mean work. So
//     time = max(rounds x the work of a round's tile or pair, work of the longest tile) / rate
// where `rate` is the instance's throughput relative to the first instance of its head dimension,
// measured at the base clock (docs/gpu_runs.md).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/attention/attention_body.hpp"
#include "kernels/attention/attention_problem.hpp"
#include "kernels/attention/attention_traits.hpp"

namespace hopper::attention {

// One compiled instance and its relative throughput.
struct instance_rate {
  head_dim_shape shape;
  double rate;
};
// The instances the CUDA launcher compiles (attention.cuh dispatches over this table) and the rule
// chooses among; each head dimension's first is shape_of's. Three consumer warpgroups at head
// dimension 64, both with two Q buffers on the persistent grid of pairs at the base clock, 16
// heads: 0.984, 0.970, 1.053 and 0.989 of two's time at 1k full, 4k full, 4k causal and 16k
// causal, where the model predicts 1.125, 1.125, 1.190 and 1.142 before the rate: rates of 1.14,
// 1.16, 1.13 and 1.15. At head dimensions 128 and 256 a third warpgroup's 160 registers do not
// hold O, S and P. Wider kv blocks than shape_of's, where shared memory holds them (the rings of
// two stages beside Q's buffers), at the base clock beside the first instance on the benchmark's
// shapes: head dimension 128 with 160, 0.980, 0.970, 1.059 and 1.008 of its time at 4k full, 16k
// full, 1k full and 4k causal, where the model predicts 1.016, 1.006, 1.094 and 1.030 (rates of
// 1.036, 1.038, 1.033, 1.022); head dimension 256 with 80, 0.989 and 0.974 at 1k and 4k full for
// 1.016 (1.027, 1.043).
inline constexpr instance_rate instances[] = {
    {shape_of(64), 1.0},  {head_dim_shape{64, 128, 3, 3, q_stages_of(64)}, 1.15},
    {shape_of(128), 1.0}, {head_dim_shape{128, 160, 2, 2, q_stages_of(128)}, 1.035},
    {shape_of(256), 1.0}, {head_dim_shape{256, 80, 2, 2, q_stages_of(256)}, 1.035},
};
inline constexpr int instance_count = int(sizeof(instances) / sizeof(instances[0]));

// The SMs of the H100 SXM and the H200 (the machines the rates were measured on); the CUDA plan
// passes its device's count.
inline constexpr int reference_sms = 132;

// One candidate's predicted time, in kv-block products (BM x BN) per SM over `rate`.
struct prediction {
  head_dim_shape shape;
  double rate = 0;
  int64_t tiles = 0;
  double work = 0;     // BM x BN x kv blocks, summed over every tile of every (batch, head)
  double longest = 0;  // the same of the longest tile
  int64_t rounds = 1;  // of the persistent grid; 1 where every tile runs at once
  double round = 0;    // the work of a round's tile (without a causal mask) or pair of tiles
  double time = 0;     // max(rounds x round, longest) / rate
};

namespace detail {
[[noreturn]] inline void rule_reject(const std::string& what) {
  throw std::invalid_argument("hopper::attention: " + what);
}
inline void check_sms(int sms) {
  if (sms < 1) rule_reject("sms " + std::to_string(sms) + " is not positive");
}
}  // namespace detail

// The predicted time of instance `in` on problem `p` (of its head dimension) over `sms` SMs.
inline prediction predict(const problem& p, const instance_rate& in, int sms) {
  detail::check_sms(sms);
  if (in.shape.head_dim != p.head_dim || !(in.rate > 0))
    detail::rule_reject("instance of head_dim " + std::to_string(in.shape.head_dim) + ", rate " +
                        std::to_string(in.rate) + " is no candidate for head_dim " + std::to_string(p.head_dim));
  prediction r;
  r.shape = in.shape;
  r.rate = in.rate;
  const int bm = in.shape.block_m(), bn = in.shape.block_n;
  const int64_t q_tiles = (p.seq_q + bm - 1) / bm;
  double per_head = 0;
  for (int64_t t = 0; t < q_tiles; ++t) {
    const double w = double(bm) * bn * kv_blocks(int(t * bm), bm, int(p.seq_q), int(p.seq_k), p.causal, bn);
    per_head += w;
    r.longest = std::max(r.longest, w);
  }
  const double heads = double(p.batch) * double(p.heads);
  r.tiles = q_tiles * p.batch * p.heads;
  r.work = per_head * heads;
  if (r.tiles <= sms) {
    r.round = r.longest;
  } else if (!p.causal) {
    r.rounds = (r.tiles + sms - 1) / sms;
    r.round = r.longest;
  } else {
    const int64_t pairs = (r.tiles + 1) / 2, grid = detail::walk_grid(r.tiles, sms, true);
    r.rounds = (pairs + grid - 1) / grid;
    r.round = r.work / double(pairs);
  }
  r.time = std::max(double(r.rounds) * r.round, r.longest) / in.rate;
  return r;
}

// The instance with the least predicted time; the first of the head dimension on a tie.
inline head_dim_shape choose_shape(const problem& p, int sms) {
  detail::check_sms(sms);
  const instance_rate* best = nullptr;
  double best_time = 0;
  for (const instance_rate& in : instances) {
    if (in.shape.head_dim != p.head_dim) continue;
    const double t = predict(p, in, sms).time;
    if (best == nullptr || t < best_time) best = &in, best_time = t;
  }
  if (best == nullptr) detail::rule_reject("head_dim " + std::to_string(p.head_dim) + " has no compiled instance");
  return best->shape;
}

// Each candidate's prediction on one line, the chosen one marked with '*'.
inline std::string explain(const problem& p, int sms) {
  const head_dim_shape chosen = choose_shape(p, sms);
  std::string s;
  for (const instance_rate& in : instances) {
    if (in.shape.head_dim != p.head_dim) continue;
    const prediction r = predict(p, in, sms);
    char line[256];
    std::snprintf(line, sizeof line,
                  "%c block_n %d stages %d consumers %d q_stages %d: %lld tiles, work/sms %.4g, %lld rounds of "
                  "%.4g, longest %.4g, rate %.2f -> %.4g\n",
                  r.shape == chosen ? '*' : ' ', r.shape.block_n, r.shape.stages, r.shape.consumers, r.shape.q_stages,
                  static_cast<long long>(r.tiles), r.work / sms, static_cast<long long>(r.rounds), r.round, r.longest,
                  r.rate, r.time);
    s += line;
  }
  return s;
}

}  // namespace hopper::attention
