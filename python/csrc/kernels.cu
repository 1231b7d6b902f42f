// The library's kernels behind the PyTorch operators: the GEMM through cached plans that bring
// their workspace from the caller (hopper::gemm::external_workspace), the streaming copy and the
// fused y = a*x + b. No PyTorch header here; see launch.hpp.
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "kernels/attention/attention.cuh"
#include "kernels/copy/stream_copy.cuh"
#include "kernels/gemm/gemm.cuh"
#include "launch.hpp"

namespace hopper_torch {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The largest power of two, up to 256, that divides the address.
int64_t alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  int64_t a = 1;
  while (a < 256 && v % uintptr_t(a * 2) == 0) a *= 2;
  return a;
}

using key =
    std::tuple<int, int64_t, int64_t, int64_t, bool, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

key key_of(const gemm_args& g) {
  return key{g.device,      g.M,   g.N,   g.K,   g.a_k_major,    g.b_k_major,
             g.out_f32,     g.lda, g.ldb, g.ldc, alignment(g.A), alignment(g.B),
             alignment(g.C)};
}

hopper::gemm::problem problem_of(const gemm_args& g) {
  hopper::gemm::problem p;
  p.M = g.M, p.N = g.N, p.K = g.K;
  p.a_major = g.a_k_major ? hopper::gemm::major::k : hopper::gemm::major::mn;
  p.b_major = g.b_k_major ? hopper::gemm::major::k : hopper::gemm::major::mn;
  p.out = g.out_f32 ? hopper::gemm::out_type::f32 : hopper::gemm::out_type::bf16;
  p.lda = g.lda, p.ldb = g.ldb, p.ldc = g.ldc;
  return p;
}

// The plan cache: the most recently used plans, at most kMaxPlans (a plan holds three 128-byte
// tensor maps and a schedule; its kernels' attributes are set once per kernel, not per plan).
// Each remembers the pointers it was last bound to, so that a call with the same tensors (the
// usual case in a training or inference loop) re-encodes nothing.
constexpr size_t kMaxPlans = 256;
struct cached {
  std::unique_ptr<hopper::gemm::plan> plan;
  const void* A = nullptr;
  const void* B = nullptr;
  void* C = nullptr;
  std::list<key>::iterator age;  // its place in `recent`
};
std::mutex cache_mutex;
std::map<key, cached> cache;
std::list<key> recent;  // most recently used first

cached& plan_for(const gemm_args& g) {
  const key k = key_of(g);
  auto it = cache.find(k);
  if (it != cache.end()) {
    recent.splice(recent.begin(), recent, it->second.age);
    return it->second;
  }
  check(cudaSetDevice(g.device), "cudaSetDevice");
  auto plan = std::make_unique<hopper::gemm::plan>(problem_of(g), g.A, g.B, g.C, hopper::gemm::external_workspace);
  if (cache.size() == kMaxPlans) {
    cache.erase(recent.back());
    recent.pop_back();
  }
  recent.push_front(k);
  cached& c = cache[k];
  c.plan = std::move(plan);
  c.A = g.A, c.B = g.B, c.C = g.C;
  c.age = recent.begin();
  return c;
}

}  // namespace

workspace_need gemm_prepare(const gemm_args& g) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  const hopper::gemm::plan& p = *plan_for(g).plan;
  return workspace_need{p.workspace_bytes(), p.counters_offset()};
}

void gemm_run(const gemm_args& g, void* workspace, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  cached& c = plan_for(g);
  if (c.A != g.A || c.B != g.B || c.C != g.C) {
    c.plan->bind(g.A, g.B, g.C);
    c.A = g.A, c.B = g.B, c.C = g.C;
  }
  check(c.plan->run(stream, workspace), "hopper.gemm launch");
}

size_t gemm_cached_plans() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  return cache.size();
}

void attention_run(const attention_args& a, cudaStream_t stream) {
  hopper::attention::problem p;
  p.batch = a.batch, p.heads = a.heads, p.kv_heads = a.kv_heads, p.seq_q = a.seq_q, p.seq_k = a.seq_k;
  p.head_dim = a.head_dim, p.causal = a.causal, p.scale = float(a.scale);
  const auto layout = [](const int64_t(&s)[3]) { return hopper::attention::tensor_layout{s[0], s[1], s[2]}; };
  p.q = layout(a.q_stride), p.k = layout(a.k_stride), p.v = layout(a.v_stride), p.o = layout(a.o_stride);
  check(cudaSetDevice(a.device), "cudaSetDevice");
  const hopper::attention::plan plan(p, a.Q, a.K, a.V, a.O, a.lse);
  check(plan.run(stream), "hopper.attention launch");
}

void copy_run(void* dst, const void* src, uint64_t bytes, cudaStream_t stream) {
  check(hopper::kernels::stream_copy_1d(dst, src, bytes, hopper::kernels::stream_copy_1d_default(), stream),
        "hopper.copy_ launch");
}

void axpb_run(void* y, const void* x, uint64_t n, float a, float b, cudaStream_t stream) {
  check(hopper::kernels::stream_axpb_bf16(static_cast<__nv_bfloat16*>(y), static_cast<const __nv_bfloat16*>(x), n, a, b,
                                          hopper::kernels::stream_axpb_bf16_default(), stream),
        "hopper.axpb launch");
}

}  // namespace hopper_torch
