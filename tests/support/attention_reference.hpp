// The attention tests' inputs and reference, shared by the model tests and the GPU tests: random
// bf16 tensors in a problem's layouts, and O and the log-sum-exp of chosen rows in double precision
// from those same bf16 values, compared element by element.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hopper/objects/numerics.hpp"
#include "kernels/attention/attention_plan.hpp"

namespace attention_ref {

namespace ha = hopper::attention;

inline size_t offset(const ha::tensor_layout& l, int64_t b, int64_t s, int64_t h) {
  return size_t(b * l.batch + s * l.seq + h * l.head);
}

// A tensor of `elems` bf16 values uniform in [-range, range] (elements outside the layout's
// positions are drawn too: they must not matter).
inline std::vector<uint16_t> random_tensor(size_t elems, float range, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-range, range);
  std::vector<uint16_t> v(elems);
  for (auto& x : v) x = hopper::bf16_bits(u(rng));
  return v;
}

// The three inputs of `p`, each as long as its layout's span.
struct tensors {
  std::vector<uint16_t> q, k, v;
};
inline tensors random_inputs(const ha::problem& p, float range, std::mt19937_64& rng) {
  tensors t;
  t.q = random_tensor(ha::span_elements(p.q, p.seq_q, p.heads, p.batch, p.head_dim), range, rng);
  t.k = random_tensor(ha::span_elements(p.k, p.seq_k, p.kv_heads, p.batch, p.head_dim), range, rng);
  t.v = random_tensor(ha::span_elements(p.v, p.seq_k, p.kv_heads, p.batch, p.head_dim), range, rng);
  return t;
}

// Row `i` of head `h` of batch `b`: O (head_dim values) and the natural log-sum-exp of the scaled,
// masked scores, in double from the bf16 inputs.
struct row_result {
  std::vector<double> o;
  double lse;
};
inline row_result reference_row(const ha::problem& p, const std::vector<uint16_t>& q, const std::vector<uint16_t>& k,
                                const std::vector<uint16_t>& v, int64_t b, int64_t h, int64_t i) {
  const int64_t d = p.head_dim, hk = h / (p.heads / p.kv_heads);
  const double scale = p.softmax_scale();
  const int64_t cols = p.causal ? std::min<int64_t>(p.seq_k, i + 1) : p.seq_k;
  std::vector<double> s(static_cast<size_t>(cols));
  double mx = -std::numeric_limits<double>::infinity();
  const size_t qo = offset(p.q, b, i, h);
  for (int64_t j = 0; j < cols; ++j) {
    const size_t ko = offset(p.k, b, j, hk);
    double acc = 0;
    for (int64_t e = 0; e < d; ++e)
      acc += double(hopper::bf16_value(q[qo + size_t(e)])) * double(hopper::bf16_value(k[ko + size_t(e)]));
    s[size_t(j)] = acc * scale;
    mx = std::max(mx, s[size_t(j)]);
  }
  row_result r;
  r.o.assign(size_t(d), 0.0);
  double sum = 0;
  for (int64_t j = 0; j < cols; ++j) {
    const double w = std::exp(s[size_t(j)] - mx);
    sum += w;
    const size_t vo = offset(p.v, b, j, hk);
    for (int64_t e = 0; e < d; ++e) r.o[size_t(e)] += w * double(hopper::bf16_value(v[vo + size_t(e)]));
  }
  for (double& x : r.o) x /= sum;
  r.lse = mx + std::log(sum);
  return r;
}

// How a kernel's O and LSE compare with the reference over the rows checked.
struct check {
  size_t rows = 0, wrong = 0, unwritten = 0, lse_wrong = 0;
  double max_err = 0, max_lse_err = 0;
  std::string first;  // the first bad element, described
};

// Tolerances: P is rounded to bf16 before P V (relative 2^-9 of each weight) and O to bf16 on
// output (2^-9 of |O|): with |V| <= range both are below 2^-9 range each.
inline double o_tolerance(float range) { return 4.0 * range / 512.0 + 1e-3; }

inline void check_row(check& c, const ha::problem& p, const std::vector<uint16_t>& q, const std::vector<uint16_t>& k,
                      const std::vector<uint16_t>& v, const std::vector<uint16_t>& o, const std::vector<float>& lse,
                      int64_t b, int64_t h, int64_t i, float range) {
  const row_result ref = reference_row(p, q, k, v, b, h, i);
  ++c.rows;
  const size_t oo = offset(p.o, b, i, h);
  const double tol = o_tolerance(range);
  for (int64_t e = 0; e < p.head_dim; ++e) {
    const float got = hopper::bf16_value(o[oo + size_t(e)]);
    const double err = std::fabs(double(got) - ref.o[size_t(e)]);
    const bool bad = !(err <= tol);
    if (std::isnan(got))
      ++c.unwritten;
    else if (bad)
      ++c.wrong;
    if (bad && c.first.empty())
      c.first = "O[b " + std::to_string(b) + ", row " + std::to_string(i) + ", head " + std::to_string(h) + ", d " +
                std::to_string(e) + "] = " + std::to_string(got) + ", reference " + std::to_string(ref.o[size_t(e)]);
    if (!std::isnan(got)) c.max_err = std::max(c.max_err, err);
  }
  if (!lse.empty()) {
    const float got = lse[size_t((b * p.heads + h) * p.seq_q + i)];
    const double err = std::fabs(double(got) - ref.lse);
    if (!(err <= 1e-3 + 1e-5 * std::fabs(ref.lse))) {
      ++c.lse_wrong;
      if (c.first.empty())
        c.first = "LSE[b " + std::to_string(b) + ", head " + std::to_string(h) + ", row " + std::to_string(i) +
                  "] = " + std::to_string(got) + ", reference " + std::to_string(ref.lse);
    }
    if (!std::isnan(got)) c.max_lse_err = std::max(c.max_lse_err, err);
  }
}

// Every row of every head and batch.
inline check check_all(const ha::problem& p, const std::vector<uint16_t>& q, const std::vector<uint16_t>& k,
                       const std::vector<uint16_t>& v, const std::vector<uint16_t>& o, const std::vector<float>& lse,
                       float range) {
  check c;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t i = 0; i < p.seq_q; ++i) check_row(c, p, q, k, v, o, lse, b, h, i, range);
  return c;
}

}  // namespace attention_ref
