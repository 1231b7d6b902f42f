// One launch of the attention kernel as both launchers see it: the CUDA launcher (attention.cuh,
// hopper::attention::plan) and the model runner (attention_on_model.hpp) each validate the problem,
// make this plan and do only what their machine needs with it (encode tensor maps or build tensor
// views, launch). Plain C++.
//
//   validate(problem);                    // std::invalid_argument naming the bad value
//   const launch_plan lp = make_launch_plan(problem);
//   lp.shape                              the instance (choose_shape's, attention_rule.hpp)
//   lp.tiles                              tiles of Q over every (batch, head)
//   lp.grid, lp.threads, lp.smem          the launch (one CTA per tile, or `resident` CTAs that
//                                         walk the tiles: make_launch_plan's last argument)
//   lp.q, lp.k, lp.v, lp.o                the four tensor maps
//   params_of<target>(lp, lse, has_lse)   the body's run-time parameters
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "hopper/objects/checked.hpp"
#include "hopper/objects/swizzle.hpp"
#include "kernels/attention/attention_body.hpp"
#include "kernels/attention/attention_problem.hpp"
#include "kernels/attention/attention_rule.hpp"
#include "kernels/attention/attention_traits.hpp"

namespace hopper::attention {

// One tensor map: bf16, dims {head_dim, three outer dimensions ordered by stride}, boxes of one
// swizzle row of the head dimension x `rows` of the sequence (one of the others).
struct map_spec {
  uint64_t dims[4];
  uint64_t strides[3];  // bytes, of dims 1..3
  uint32_t box[4];
  coord_order order;
};

struct launch_plan {
  problem prob;
  head_dim_shape shape;
  int q_tiles = 0;
  int tiles = 0;  // q_tiles x heads x batch
  int grid = 0, threads = 0;
  uint32_t smem = 0;
  map_spec q{}, k{}, v{}, o{};
  float scale_log2 = 0.0f;
};

namespace detail {

[[noreturn]] inline void reject(const std::string& what) { throw std::invalid_argument("hopper::attention: " + what); }

// The map of tensor `name` (extents seq, heads, batch) with boxes of `rows` sequence positions:
// its outer dimensions sorted by stride, as the copy engine wants each one's stride to span the
// dimension below it; a dimension of extent 1 is never stepped, so it goes last with the stride
// that satisfies that rule.
inline map_spec map_of(const char* name, const tensor_layout& l, int64_t seq, int64_t heads, int64_t batch,
                       int64_t head_dim, int rows) {
  struct outer {
    int64_t stride, extent;
    int which;  // 1 seq, 2 head, 3 batch
  };
  outer d[3] = {{l.seq, seq, 1}, {l.head, heads, 2}, {l.batch, batch, 3}};
  std::stable_sort(d, d + 3, [](const outer& a, const outer& b) {
    if ((a.extent == 1) != (b.extent == 1)) return b.extent == 1;
    return a.stride < b.stride;
  });
  map_spec m{};
  m.dims[0] = uint64_t(head_dim);
  m.box[0] = uint32_t(k_block);
  uint64_t below = uint64_t(head_dim) * 2;  // bytes the next dimension's stride must span
  const char* names[4] = {"", "seq", "head", "batch"};
  for (int i = 0; i < 3; ++i) {
    uint64_t bytes = 0;
    if (d[i].extent == 1) {
      bytes = std::max<uint64_t>(below, 16);
    } else {
      const auto b = checked::mul(uint64_t(d[i].stride), uint64_t(2));
      if (!b || *b < below)
        reject(std::string(name) + "'s " + names[d[i].which] + " stride " + std::to_string(d[i].stride) +
               " elements overlaps the dimensions below it (a stride must span " + std::to_string(below / 2) +
               " elements)");
      bytes = *b;
    }
    m.dims[i + 1] = uint64_t(d[i].extent);
    m.strides[i] = bytes;
    m.box[i + 1] = d[i].which == 1 ? uint32_t(rows) : 1u;
    (d[i].which == 1 ? m.order.seq : d[i].which == 2 ? m.order.head : m.order.batch) = uint8_t(i + 1);
    const auto next = checked::mul(bytes, uint64_t(d[i].extent));
    below = next ? *next : UINT64_MAX;
  }
  return m;
}

inline void check_layout(const char* name, const tensor_layout& l, int64_t seq, int64_t heads, int64_t batch) {
  const std::pair<const char*, std::pair<int64_t, int64_t>> strides[] = {
      {"batch", {l.batch, batch}}, {"seq", {l.seq, seq}}, {"head", {l.head, heads}}};
  for (const auto& [dim, se] : strides) {
    const auto [stride, extent] = se;
    if (extent > 1 && (stride <= 0 || stride % 8 != 0))
      reject(std::string(name) + "'s " + dim + " stride " + std::to_string(stride) +
             " elements is not a positive multiple of 8 (16 bytes, as the copy engine needs)");
    if (extent > 1 && stride >= (int64_t(1) << 39))
      reject(std::string(name) + "'s " + dim + " stride " + std::to_string(stride) + " elements is not below 2^39");
  }
}

// The Q tiles of instance `sh` over seq_q, and the grid's CTAs below 2^31.
inline int64_t q_tiles_of(const problem& p, const head_dim_shape& sh) {
  return (p.seq_q + sh.block_m() - 1) / sh.block_m();
}
inline void check_grid(const problem& p, const head_dim_shape& sh) {
  const int64_t q_tiles = q_tiles_of(p, sh);
  if (q_tiles * p.heads * p.batch >= (int64_t(1) << 31))
    reject("the grid of " + std::to_string(q_tiles) + " Q tiles x " + std::to_string(p.heads) + " heads x " +
           std::to_string(p.batch) + " batch is not below 2^31 CTAs");
}

}  // namespace detail

// Rejects what the kernel does not compute, naming the argument and its value.
inline void validate(const problem& p) {
  using detail::reject;
  if (!supported_head_dim(int(p.head_dim)) || p.head_dim > 256)
    reject("head_dim " + std::to_string(p.head_dim) + " is not supported (64, 128 or 256)");
  const std::pair<const char*, int64_t> sizes[] = {
      {"batch", p.batch}, {"heads", p.heads}, {"kv_heads", p.kv_heads}, {"seq_q", p.seq_q}, {"seq_k", p.seq_k}};
  for (const auto& [name, v] : sizes) {
    if (v < 1) reject(std::string(name) + " " + std::to_string(v) + " is not positive");
    if (v >= (int64_t(1) << 31)) reject(std::string(name) + " " + std::to_string(v) + " is not below 2^31");
  }
  if (p.heads % p.kv_heads != 0)
    reject("kv_heads " + std::to_string(p.kv_heads) + " does not divide heads " + std::to_string(p.heads));
  if (!(p.scale >= 0.0f) || std::isinf(p.scale))
    reject("scale " + std::to_string(p.scale) + " is not a positive finite number (0 for 1/sqrt(head_dim))");
  detail::check_grid(p, shape_of(int(p.head_dim)));
  detail::check_layout("q", p.q, p.seq_q, p.heads, p.batch);
  detail::check_layout("k", p.k, p.seq_k, p.kv_heads, p.batch);
  detail::check_layout("v", p.v, p.seq_k, p.kv_heads, p.batch);
  detail::check_layout("o", p.o, p.seq_q, p.heads, p.batch);
}

// The byte range [first, last) that tensor `l` of these extents can touch from its base.
inline std::pair<uint64_t, uint64_t> span_bytes(const tensor_layout& l, int64_t seq, int64_t heads, int64_t batch,
                                                int64_t head_dim) {
  const uint64_t end = uint64_t(l.batch) * uint64_t(batch - 1) + uint64_t(l.seq) * uint64_t(seq - 1) +
                       uint64_t(l.head) * uint64_t(heads - 1) + uint64_t(head_dim);
  return {0, end * 2};
}

// The elements tensor `l` spans (the bf16 buffer it needs from its base).
inline size_t span_elements(const tensor_layout& l, int64_t seq, int64_t heads, int64_t batch, int64_t head_dim) {
  return size_t(span_bytes(l, seq, heads, batch, head_dim).second / 2);
}

// Rejects null or misaligned pointers and an output that overlaps an input (or the LSE, `lse` may
// be null: not written), naming them.
inline void validate(const problem& p, const void* q, const void* k, const void* v, const void* o,
                     const void* lse = nullptr) {
  validate(p);
  const std::pair<const char*, const void*> ptrs[] = {{"q", q}, {"k", k}, {"v", v}, {"o", o}};
  for (const auto& [name, ptr] : ptrs) {
    if (ptr == nullptr) detail::reject(std::string(name) + " is null");
    if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0)
      detail::reject(std::string(name) + " at " + std::to_string(reinterpret_cast<uintptr_t>(ptr)) +
                     " is not 16-byte aligned");
  }
  if (lse != nullptr && reinterpret_cast<uintptr_t>(lse) % 4 != 0)
    detail::reject("lse at " + std::to_string(reinterpret_cast<uintptr_t>(lse)) + " is not 4-byte aligned");
  struct range {
    const char* name;
    uintptr_t lo, hi;
  };
  const auto at = [](const void* ptr, std::pair<uint64_t, uint64_t> s) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(ptr);
    return std::pair<uintptr_t, uintptr_t>{b + s.first, b + s.second};
  };
  const auto [qlo, qhi] = at(q, span_bytes(p.q, p.seq_q, p.heads, p.batch, p.head_dim));
  const auto [klo, khi] = at(k, span_bytes(p.k, p.seq_k, p.kv_heads, p.batch, p.head_dim));
  const auto [vlo, vhi] = at(v, span_bytes(p.v, p.seq_k, p.kv_heads, p.batch, p.head_dim));
  const auto [olo, ohi] = at(o, span_bytes(p.o, p.seq_q, p.heads, p.batch, p.head_dim));
  const range ins[] = {{"q", qlo, qhi}, {"k", klo, khi}, {"v", vlo, vhi}};
  for (const range& r : ins)
    if (olo < r.hi && r.lo < ohi) detail::reject(std::string("o overlaps ") + r.name);
  if (lse != nullptr) {
    const uintptr_t llo = reinterpret_cast<uintptr_t>(lse);
    const uintptr_t lhi = llo + uintptr_t(p.batch * p.heads * p.seq_q) * 4;
    const range all[] = {{"q", qlo, qhi}, {"k", klo, khi}, {"v", vlo, vhi}, {"o", olo, ohi}};
    for (const range& r : all)
      if (llo < r.hi && r.lo < lhi) detail::reject(std::string("lse overlaps ") + r.name);
  }
}

// The plan of problem `p` (validated) for instance `instance`: the rule's choice over `sms` SMs
// (choose_shape, attention_rule.hpp) where it is left empty, another one of the same head
// dimension for A/B measurements of the choice.
// The grid: where there are more tiles than `resident` CTAs (0: `sms`, every CTA the device holds
// at once, one per SM), a persistent grid of `resident` CTAs that take a tile a round, or with a
// causal mask of min(resident, ceil(tiles / 2)) that take a pair of tiles a round (cta_tile,
// attention_body.hpp); otherwise one CTA per tile (one_cta_per_tile asks for it at any size).
inline constexpr int one_cta_per_tile = std::numeric_limits<int>::max();
inline launch_plan make_launch_plan(const problem& p, head_dim_shape instance = {}, int resident = 0,
                                    int sms = reference_sms) {
  validate(p);
  const head_dim_shape sh = instance.head_dim == 0 ? choose_shape(p, sms) : instance;
  if (sh.head_dim != p.head_dim || sh.consumers < 2 || sh.consumers > max_consumer_warpgroups ||
      !kv_block_instantiated(sh.block_n) || sh.stages <= 0 || sh.q_stages < 1 || sh.q_stages > 2)
    detail::reject("instance {head_dim " + std::to_string(sh.head_dim) + ", block_n " + std::to_string(sh.block_n) +
                   ", stages " + std::to_string(sh.stages) + ", consumers " + std::to_string(sh.consumers) +
                   ", q_stages " + std::to_string(sh.q_stages) + "} is not one of head_dim " +
                   std::to_string(p.head_dim));
  detail::check_grid(p, sh);
  if (resident < 0) detail::reject("resident CTAs " + std::to_string(resident) + " is negative (0: one per SM)");
  launch_plan lp;
  lp.prob = p;
  lp.shape = sh;
  lp.q_tiles = int(detail::q_tiles_of(p, sh));
  lp.tiles = int(int64_t(lp.q_tiles) * p.heads * p.batch);
  if (resident == 0) detail::check_sms(sms);
  const int ctas = resident == 0 ? sms : resident;
  lp.grid = int(detail::walk_grid(lp.tiles, ctas, p.causal));
  lp.threads = sh.threads();
  // Boxes: Q's tile of rows per load, K's and V's block of kv rows, O's 64 rows (one consumer
  // warpgroup's).
  lp.q = detail::map_of("q", p.q, p.seq_q, p.heads, p.batch, p.head_dim, sh.block_m());
  lp.k = detail::map_of("k", p.k, p.seq_k, p.kv_heads, p.batch, p.head_dim, sh.block_n);
  lp.v = detail::map_of("v", p.v, p.seq_k, p.kv_heads, p.batch, p.head_dim, sh.block_n);
  lp.o = detail::map_of("o", p.o, p.seq_q, p.heads, p.batch, p.head_dim, wgmma_m);
  lp.scale_log2 = float(double(p.softmax_scale()) * 1.4426950408889634);
  return lp;
}

// Instance T is the kernel `lp` launches.
template <class T>
constexpr bool launches(const launch_plan& lp) {
  return lp.shape == T::SHAPE && lp.threads == T::THREADS && lp.k.box[lp.k.order.seq] == uint32_t(T::BN) &&
         lp.q.box[lp.q.order.seq] == uint32_t(T::BM);
}

// The body's run-time parameters on target Tg, given the LSE as the target sees it.
template <class Tg>
body_params<Tg> params_of(const launch_plan& lp, gmem_of<Tg, float> lse, bool has_lse) {
  const problem& p = lp.prob;
  return body_params<Tg>{int(p.heads),  int(p.heads / p.kv_heads),
                         int(p.seq_q),  int(p.seq_k),
                         lp.q_tiles,    lp.tiles,
                         lp.grid,       p.causal,
                         lp.scale_log2, lp.q.order,
                         lp.k.order,    lp.v.order,
                         lp.o.order,    lse,
                         has_lse};
}

}  // namespace hopper::attention
