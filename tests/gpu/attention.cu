// Attention forward on the GPU (kernels/attention/attention.cuh) against a float64 reference from
// the same bf16 inputs: fresh random inputs each run, O and the LSE poisoned with NaN before the
// launch. Small problems are checked on every row; long sequences on sampled rows of every
// (batch, head). Every head dimension, causal and not, grouped-query heads, tails in both
// sequences, cross attention and strided layouts.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "attention_reference.hpp"
#include "gpu_test.hpp"
#include "kernels/attention/attention.cuh"

namespace {

namespace ha = hopper::attention;
using namespace attention_ref;

constexpr float range = 2.0f;

std::string describe(const ha::problem& p) {
  return "b " + std::to_string(p.batch) + " heads " + std::to_string(p.heads) + "/" + std::to_string(p.kv_heads) +
         " seq " + std::to_string(p.seq_q) + "x" + std::to_string(p.seq_k) + " d " + std::to_string(p.head_dim) +
         (p.causal ? " causal" : "");
}

// Runs `p` on fresh inputs and checks `rows_per_head` sampled rows of every (batch, head), or every
// row when 0. V: the instance to launch (run_as), void for the plan's own (run); resident: the
// plan's (make_launch_plan: 0, a persistent grid of the device's CTAs; one_cta_per_tile; or a
// persistent grid of that many).
template <class V = void>
void expect_correct(const ha::problem& p, int rows_per_head = 0, int resident = 0) {
  std::string what = describe(p) + " seed " + std::to_string(hopper_test::fresh_seed());
  if constexpr (!std::is_void_v<V>)
    what += " instance kv " + std::to_string(V::BN) + " stages " + std::to_string(V::STAGES) + " consumers " +
            std::to_string(V::CONSUMERS) + (V::PINGPONG ? "" : " flat") + (V::Q_STAGES > 1 ? " two Q buffers" : "");
  if (resident == ha::one_cta_per_tile)
    what += " one CTA per tile";
  else if (resident > 0)
    what += " persistent " + std::to_string(resident) + " CTAs";
  std::mt19937_64 rng(hopper_test::fresh_seed() ^ uint64_t(p.seq_q * 131 + p.seq_k * 7 + p.head_dim + p.heads));
  const size_t nq = ha::span_elements(p.q, p.seq_q, p.heads, p.batch, p.head_dim);
  const size_t nk = ha::span_elements(p.k, p.seq_k, p.kv_heads, p.batch, p.head_dim);
  const size_t nv = ha::span_elements(p.v, p.seq_k, p.kv_heads, p.batch, p.head_dim);
  const size_t no = ha::span_elements(p.o, p.seq_q, p.heads, p.batch, p.head_dim);
  const size_t nl = size_t(p.batch * p.heads * p.seq_q);
  const tensors in = random_inputs(p, range, rng);
  const std::vector<uint16_t>&q = in.q, &k = in.k, &v = in.v;
  void *dq = nullptr, *dk = nullptr, *dv = nullptr, *dout = nullptr;
  float* dl = nullptr;
  CUDA_OK(cudaMalloc(&dq, nq * 2));
  CUDA_OK(cudaMalloc(&dk, nk * 2));
  CUDA_OK(cudaMalloc(&dv, nv * 2));
  CUDA_OK(cudaMalloc(&dout, no * 2));
  CUDA_OK(cudaMalloc(&dl, nl * 4));
  CUDA_OK(cudaMemcpy(dq, q.data(), nq * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dk, k.data(), nk * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dv, v.data(), nv * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dout, 0xFF, no * 2));  // NaN in bf16
  CUDA_OK(cudaMemset(dl, 0xFF, nl * 4));
  if constexpr (std::is_void_v<V>) {
    const ha::plan a(p, dq, dk, dv, dout, dl, {}, resident);
    CUDA_OK(a.run());
    CUDA_OK(cudaDeviceSynchronize());
  } else {
    const ha::plan a(p, dq, dk, dv, dout, dl, V::SHAPE, resident);
    CUDA_OK(a.template run_as<V>());
    CUDA_OK(cudaDeviceSynchronize());
  }
  std::vector<uint16_t> o(no);
  std::vector<float> lse(nl);
  CUDA_OK(cudaMemcpy(o.data(), dout, no * 2, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(lse.data(), dl, nl * 4, cudaMemcpyDeviceToHost));
  cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dout), cudaFree(dl);
  check c;
  if (rows_per_head == 0) {
    c = check_all(p, q, k, v, o, lse, range);
  } else {
    std::uniform_int_distribution<int64_t> pick(0, p.seq_q - 1);
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.heads; ++h) {
        check_row(c, p, q, k, v, o, lse, b, h, p.seq_q - 1, range);  // the last row: the tail
        for (int r = 1; r < rows_per_head; ++r) check_row(c, p, q, k, v, o, lse, b, h, pick(rng), range);
      }
  }
  EXPECT_EQ(c.unwritten, 0u) << what << ": " << c.first;
  EXPECT_EQ(c.wrong, 0u) << what << ": " << c.first;
  EXPECT_EQ(c.lse_wrong, 0u) << what << ": " << c.first;
  std::printf("%s: %zu rows, max |err| O %.2e LSE %.2e\n", what.c_str(), c.rows, c.max_err, c.max_lse_err);
}

class Attention : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { HOPPER_REQUIRE_SM90(); }
};

TEST_P(Attention, OneTile) {
  expect_correct(ha::problem::packed(1, 1, 1, 128, 128, GetParam()));
  expect_correct(ha::problem::packed(1, 1, 1, 128, 128, GetParam(), true));
}

TEST_P(Attention, TailsAndCross) {
  const int d = GetParam();
  expect_correct(ha::problem::packed(1, 2, 2, 1, 1, d));
  expect_correct(ha::problem::packed(2, 3, 3, 129, 300, d));
  expect_correct(ha::problem::packed(1, 2, 2, 300, 129, d, true));
  expect_correct(ha::problem::packed(1, 1, 1, 77, 1000, d, true));
  expect_correct(ha::problem::packed(1, 1, 1, 1000, 77, d));
}

TEST_P(Attention, GroupedQueryHeads) {
  const int d = GetParam();
  expect_correct(ha::problem::packed(2, 8, 2, 257, 257, d));
  expect_correct(ha::problem::packed(1, 6, 1, 200, 333, d, true));
}

// Q and O in (batch, heads, seq, dim) order, K and V slices of one packed (batch, seq, 2, heads, dim)
// tensor, and a softmax scale of the caller's.
TEST_P(Attention, StridedLayouts) {
  const int d = GetParam();
  ha::problem p = ha::problem::packed(2, 4, 2, 190, 260, d, true);
  p.q = p.o = ha::tensor_layout{p.heads * p.seq_q * d, d, p.seq_q * d};
  p.k = p.v = ha::tensor_layout{p.seq_k * 2 * p.kv_heads * d, 2 * p.kv_heads * d, d};
  p.scale = 0.3f;
  expect_correct(p);
}

TEST_P(Attention, LongSequencesSampled) {
  const int d = GetParam();
  expect_correct(ha::problem::packed(1, 4, 4, 4096, 4096, d), 24);
  expect_correct(ha::problem::packed(1, 4, 1, 4096, 4096, d, true), 24);
  expect_correct(ha::problem::packed(2, 2, 2, 3000, 5000, d, true), 24);
}

// The instances the throughput test measures against the default (attention_traits' A/B
// parameters): tails in both sequences, causal, GQA, cross attention, each on every row; and the
// plan of another instance refuses the default launch.
template <class V>
void expect_instance_correct() {
  const int d = V::HEAD_DIM;
  expect_correct<V>(ha::problem::packed(1, 2, 2, 1, 1, d));
  expect_correct<V>(ha::problem::packed(2, 3, 3, 129, 300, d));
  expect_correct<V>(ha::problem::packed(1, 2, 2, 400, 129, d, true));
  expect_correct<V>(ha::problem::packed(1, 4, 1, 577, 577, d, true));
  expect_correct<V>(ha::problem::packed(1, 1, 1, 1000, 77, d));
  expect_correct<V>(ha::problem::packed(1, 2, 2, 2048, 2048, d, true), 24);
}

TEST(AttentionInstances, EveryMeasuredVariantIsCorrect) {
  HOPPER_REQUIRE_SM90();
  expect_instance_correct<ha::attention_traits<64, false>>();
  expect_instance_correct<ha::attention_traits<64, true, 192, 3>>();
  expect_instance_correct<ha::attention_traits<64, true, 128, 3, 3>>();
  expect_instance_correct<ha::attention_traits<64, true, 128, 3, 3, 1>>();
  expect_instance_correct<ha::attention_traits<64, false, 128, 3, 3>>();
  expect_instance_correct<ha::attention_traits<64, true, 128, 3, 2, 1>>();
  expect_instance_correct<ha::attention_traits<128, false>>();
  expect_instance_correct<ha::attention_traits<128, true, 128, 3, 2, 1>>();
  expect_instance_correct<ha::attention_traits<128, true, 128, 2, 2, 1>>();
  expect_instance_correct<ha::attention_traits<256, false>>();
  // kv blocks that are not whole k-blocks of 64 (tails in every block count).
  expect_instance_correct<ha::attention_traits<128, true, 160, 2, 2, 2>>();
  expect_instance_correct<ha::attention_traits<256, true, 80, 2, 2, 1>>();
  expect_instance_correct<ha::attention_traits<64, true, 160, 3>>();
  expect_instance_correct<ha::attention_traits<64, true, 192, 2>>();
}

// A persistent grid: the device's resident CTAs (the plan's own), and a few CTAs walking many
// tiles each (their rings running on from tile to tile, Q reloaded once the last tile's O has
// left), on every head dimension, causal and not, tails and GQA; and one CTA per tile.
TEST(AttentionInstances, PersistentGrid) {
  HOPPER_REQUIRE_SM90();
  for (int d : {64, 128, 256}) {
    for (int resident : {3, 7}) {
      expect_correct(ha::problem::packed(2, 3, 3, 129, 300, d), 0, resident);
      expect_correct(ha::problem::packed(1, 4, 1, 577, 577, d, true), 0, resident);
      expect_correct(ha::problem::packed(1, 2, 2, 1000, 77, d), 0, resident);
    }
    for (const ha::problem& p :
         {ha::problem::packed(4, 8, 2, 2048, 2048, d, true), ha::problem::packed(2, 16, 16, 1024, 1024, d)}) {
      expect_correct(p, 16, ha::resident_ctas(p));
      expect_correct(p, 16, ha::one_cta_per_tile);
    }
  }
  using three = ha::attention_traits<64, true, 128, 3, 3>;
  expect_correct<three>(ha::problem::packed(1, 4, 1, 577, 577, 64, true), 0, 5);
  expect_correct<three>(ha::problem::packed(2, 16, 16, 1024, 1024, 64), 16, ha::resident_ctas<three>());
  // One Q buffer and two (the default at head dimensions 64 and 128: a CTA's tile n + 2 loads Q
  // where tile n's O has left).
  using one_q64 = ha::attention_traits<64, true, 128, 3, 2, 1>;
  using one_q128 = ha::attention_traits<128, true, 128, 2, 2, 1>;
  using two_q64 = ha::attention_traits<64>;
  using two_q128 = ha::attention_traits<128>;
  static_assert(two_q64::Q_STAGES == 2 && two_q128::Q_STAGES == 2, "two Q buffers by default");
  for (bool causal : {false, true}) {
    expect_correct<two_q64>(ha::problem::packed(1, 4, 1, 577, 577, 64, causal), 0, 3);
    expect_correct<two_q128>(ha::problem::packed(2, 3, 3, 129, 300, 128, causal), 0, 2);
    expect_correct<one_q64>(ha::problem::packed(4, 8, 2, 2048, 2048, 64, causal), 16, ha::resident_ctas<one_q64>());
    expect_correct<one_q128>(ha::problem::packed(2, 16, 16, 1024, 1024, 128, causal), 16,
                             ha::resident_ctas<one_q128>());
    using kv160 = ha::attention_traits<128, true, 160, 2, 2, 2>;
    expect_correct<kv160>(ha::problem::packed(2, 16, 16, 1000, 1000, 128, causal), 16, ha::resident_ctas<kv160>());
  }
}

// The plan of an instance run does not launch (a 192-wide kv block) refuses run and every other
// instance's run_as, naming what to do; the instance's own run_as computes.
TEST(AttentionInstances, AnotherInstancesPlanRefusesTheDefaultLaunch) {
  HOPPER_REQUIRE_SM90();
  using V = ha::attention_traits<64, true, 192, 3>;
  const ha::problem p = ha::problem::packed(1, 1, 1, 256, 256, 64);
  void* buf = nullptr;
  CUDA_OK(cudaMalloc(&buf, 4 * 256 * 64 * 2));
  CUDA_OK(cudaMemset(buf, 0, 4 * 256 * 64 * 2));
  uint16_t* b = static_cast<uint16_t*>(buf);
  const ha::plan a(p, b, b + 256 * 64, b + 2 * 256 * 64, b + 3 * 256 * 64, nullptr, V::SHAPE);
  try {
    (void)a.run();
    ADD_FAILURE() << "run() of a 192-wide kv block's plan launched";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("run_as"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("block_n 192"), std::string::npos) << e.what();
  }
  try {
    (void)a.run_as<ha::attention_traits<64, true, 128, 3, 3>>();
    ADD_FAILURE() << "run_as of another instance launched";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3 consumer warpgroups"), std::string::npos) << e.what();
  }
  CUDA_OK(a.run_as<V>());
  CUDA_OK(cudaDeviceSynchronize());
  cudaFree(buf);
}

// The rule's instance (attention_rule.hpp) is the one run launches: three consumer warpgroups at
// head dimension 64 where the SMs have many tiles each and the 192-row tile's rounds pay, two
// where they do not (causal at 2k) and where one wave holds every tile; the wider kv blocks at
// head dimensions 128 and 256.
TEST(AttentionInstances, RuleChoiceIsLaunched) {
  HOPPER_REQUIRE_SM90();
  for (const auto& [p, consumers] : {std::pair<ha::problem, int>{ha::problem::packed(2, 16, 4, 4096, 4096, 64), 3},
                                     {ha::problem::packed(2, 16, 4, 2048, 2048, 64, true), 2},
                                     {ha::problem::packed(1, 4, 4, 2048, 2048, 64), 2}}) {
    const ha::launch_plan lp = ha::make_launch_plan(p, {}, 0, 132);
    EXPECT_EQ(lp.shape.consumers, consumers) << describe(p) << "\n" << ha::explain(p, 132);
    expect_correct(p, 12);
  }
  // The wider kv blocks at head dimensions 128 and 256 where the last block wastes little.
  for (const auto& [p, block_n] : {std::pair<ha::problem, int>{ha::problem::packed(2, 16, 4, 4096, 4096, 128), 160},
                                   {ha::problem::packed(2, 16, 16, 4096, 4096, 256, true), 80}}) {
    const ha::launch_plan lp = ha::make_launch_plan(p, {}, 0, 132);
    EXPECT_EQ(lp.shape.block_n, block_n) << describe(p) << "\n" << ha::explain(p, 132);
    expect_correct(p, 12);
  }
}

INSTANTIATE_TEST_SUITE_P(HeadDims, Attention, ::testing::Values(64, 128, 256),
                         [](const ::testing::TestParamInfo<int>& i) { return "d" + std::to_string(i.param); });

// bf16 values uniform in [-2, 2) from a hash of (seed, index): fresh data without a host copy.
__global__ void fill_random(uint16_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float u = float(hopper_test::mix(seed, uint32_t(i), uint32_t(i >> 32)) >> 8) * (4.0f / 16777216.0f) - 2.0f;
    p[i] = __bfloat16_as_ushort(__float2bfloat16(u));
  }
}

// Milliseconds per launch: 20 back-to-back launches per timed batch (sustained), 7 batches, median.
template <class F>
double sustained_ms(F&& launch) {
  cudaEvent_t e0, e1;
  EXPECT_EQ(cudaEventCreate(&e0), cudaSuccess);
  EXPECT_EQ(cudaEventCreate(&e1), cudaSuccess);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(launch(), cudaSuccess);
  std::vector<float> ms;
  for (int r = 0; r < 7; ++r) {
    EXPECT_EQ(cudaEventRecord(e0), cudaSuccess);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(launch(), cudaSuccess);
    EXPECT_EQ(cudaEventRecord(e1), cudaSuccess);
    EXPECT_EQ(cudaEventSynchronize(e1), cudaSuccess);
    float t = 0;
    EXPECT_EQ(cudaEventElapsedTime(&t, e0, e1), cudaSuccess);
    ms.push_back(t / 20);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Throughput on the benchmark's shapes (16 heads x 16k tokens as batch x sequence), sustained, on
// random inputs, for the rule's instance and the others in the same process, each on the
// persistent grid (A/B at the running clock: one CTA per tile; two consumer warpgroups with and
// without ping-pong, and with one Q buffer; for head dim 64 kv blocks of 160 and 192 (and 192 in two stages), three
// consumer warpgroups with and without ping-pong and with one Q buffer; for head dim 128 three stages and a 160-wide kv
// block; for head dim 256 an 80-wide one; "two consumers" is shape_of's instance). For a first look; bench_attention.py
// measures against cuDNN and the flash backend. HOPPER_ATTENTION_SHAPE=D:SEQ:CAUSAL (for example 128:4096:0) measures
// that shape alone, and HOPPER_ATTENTION_VARIANTS=NAME,NAME (for example "one CTA per tile") only those variants beside
// the rule's instance, for a profiler's run.
bool shape_selected(int d, int seq, bool causal) {
  const char* only = std::getenv("HOPPER_ATTENTION_SHAPE");
  return only == nullptr || std::to_string(d) + ":" + std::to_string(seq) + ":" + (causal ? "1" : "0") == only;
}
bool variant_selected(const std::string& name) {
  const char* only = std::getenv("HOPPER_ATTENTION_VARIANTS");
  if (only == nullptr) return true;
  const std::string list = std::string(",") + only + ",";
  return list.find("," + name + ",") != std::string::npos;
}

template <int D>
void throughput_of_head_dim() {
  for (int seq : {1024, 4096, 16384})
    for (bool causal : {false, true}) {
      if (!shape_selected(D, seq, causal)) continue;
      const ha::problem p = ha::problem::packed(16384 / seq, 16, 16, seq, seq, D, causal);
      const size_t n = size_t(p.batch * p.seq_q * p.heads * D);
      void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
      CUDA_OK(cudaMalloc(&q, n * 2));
      CUDA_OK(cudaMalloc(&k, n * 2));
      CUDA_OK(cudaMalloc(&v, n * 2));
      CUDA_OK(cudaMalloc(&o, n * 2));
      const uint32_t seed = uint32_t(hopper_test::fresh_seed());
      fill_random<<<1024, 256>>>(static_cast<uint16_t*>(q), n, seed);
      fill_random<<<1024, 256>>>(static_cast<uint16_t*>(k), n, seed + 1);
      fill_random<<<1024, 256>>>(static_cast<uint16_t*>(v), n, seed + 2);
      CUDA_OK(cudaDeviceSynchronize());
      const ha::plan a(p, q, k, v, o);
      const double tf = a.flops() / 1e9;
      const double ours = sustained_ms([&] { return a.run(); });
      std::printf("attention/hd%d/seq%d/%s: %.3f ms, %.1f TFLOP/s (%d consumers)", D, seq, causal ? "causal" : "full",
                  ours, tf / ours, a.launch().shape.consumers);
      // Another instance of the head dimension on the same inputs: its TFLOP/s and time / ours.
      const auto variant = [&](auto tr, const char* what, int resident = 0) {
        using V = decltype(tr);
        if (!variant_selected(what)) return;
        const ha::plan b(p, q, k, v, o, nullptr, V::SHAPE, resident);
        const double w = sustained_ms([&] { return b.template run_as<V>(); });
        std::printf("; %s %.1f TFLOP/s (%.3f)", what, tf / w, w / ours);
      };
      if (variant_selected("one CTA per tile")) {
        const ha::plan b(p, q, k, v, o, nullptr, {}, ha::one_cta_per_tile);
        const double w = sustained_ms([&] { return b.run(); });
        std::printf("; one CTA per tile %.1f TFLOP/s (%.3f)", tf / w, w / ours);
      }
      constexpr ha::head_dim_shape s = ha::shape_of(D);
      variant(ha::attention_traits<D>{}, "two consumers");
      variant(ha::attention_traits<D, false>{}, "two without ping-pong");
      if constexpr (s.q_stages == 2)
        variant(ha::attention_traits<D, true, s.block_n, s.stages, 2, 1>{}, "one Q buffer");
      if constexpr (D == 64) {
        variant(ha::attention_traits<64, true, 192, 3>{}, "kv block 192");
        variant(ha::attention_traits<64, true, 192, 2>{}, "kv block 192 two stages");
        variant(ha::attention_traits<64, true, 160, 3>{}, "kv block 160");
        variant(ha::attention_traits<64, true, 128, 3, 3>{}, "three consumers");
        variant(ha::attention_traits<64, true, 128, 3, 3, 1>{}, "three consumers with one Q buffer");
        variant(ha::attention_traits<64, false, 128, 3, 3>{}, "three without ping-pong");
      }
      if constexpr (D == 128) {
        variant(ha::attention_traits<128, true, 128, 3, 2, 1>{}, "three stages");
        variant(ha::attention_traits<128, true, 160, 2, 2, 2>{}, "kv block 160");
      }
      if constexpr (D == 256) variant(ha::attention_traits<256, true, 80, 2, 2, 1>{}, "kv block 80");
      std::printf("\n");
      CUDA_OK(cudaGetLastError());
      cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o);
      EXPECT_GT(ours, 0.0);
    }
}

TEST(AttentionThroughput, BenchmarkShapes) {
  HOPPER_REQUIRE_SM90();
  throughput_of_head_dim<64>();
  throughput_of_head_dim<128>();
  throughput_of_head_dim<256>();
}

}  // namespace
