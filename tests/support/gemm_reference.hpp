// What the GEMM's model tests share besides the runner (kernels/gemm/gemm_on_model.hpp): random
// bf16 operands and the check of C against a double-precision reference.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/gemm_on_model.hpp"

namespace gemm_model {

using namespace hopper::model;
using hopper::gemm::on_model::operands;
using hopper::gemm::on_model::outcome;
using hopper::gemm::on_model::run;
namespace hg = hopper::gemm;

inline operands random_operands(const hg::problem& p, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  operands o;
  o.a.resize(size_t(p.M * p.K));
  o.b.resize(size_t(p.N * p.K));
  for (auto& x : o.a) x = hopper::bf16_bits(nd(g));
  for (auto& x : o.b) x = hopper::bf16_bits(nd(g));
  return o;
}

inline float a_at(const hg::problem& p, const operands& o, int64_t m, int64_t k) {
  return hopper::bf16_value(o.a[size_t(p.a_major == hg::major::k ? m * p.K + k : k * p.M + m)]);
}
inline float b_at(const hg::problem& p, const operands& o, int64_t n, int64_t k) {
  return hopper::bf16_value(o.b[size_t(p.b_major == hg::major::k ? n * p.K + k : k * p.N + n)]);
}

// Elements of C outside tolerance of a double-precision reference (relative to the sum of the
// products' magnitudes; bf16 output rounds to 8 bits), and unwritten ones (still the NaN poison).
struct check {
  size_t wrong = 0, unwritten = 0;
  std::string first;
};
inline check compare(const hg::problem& p, const operands& o, const std::vector<float>& c, bool bf16_out) {
  check k;
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n) {
      double ref = 0, mag = 0;
      for (int64_t kk = 0; kk < p.K; ++kk) {
        const double x = double(a_at(p, o, m, kk)) * double(b_at(p, o, n, kk));
        ref += x;
        mag += std::fabs(x);
      }
      const float got = c[size_t(m * p.N + n)];
      if (std::isnan(got)) {
        if (!k.unwritten++ && k.first.empty())
          k.first = "C[" + std::to_string(m) + "][" + std::to_string(n) + "] unwritten";
        continue;
      }
      const double tol = (bf16_out ? 1.0 / 128 : 1e-5) * (mag + 1e-6);
      if (std::fabs(double(got) - ref) > tol && !k.wrong++)
        k.first = "C[" + std::to_string(m) + "][" + std::to_string(n) + "] = " + std::to_string(got) + ", reference " +
                  std::to_string(ref);
    }
  return k;
}

}  // namespace gemm_model
