// Differential test of the model against the hardware: random sequences of
// single-threaded mbarrier operations, filtered by the model (sequences it calls undefined are
// never sent), run on the GPU by one thread per barrier through the PTX layer, and compared
// observable by observable with the model: test_wait on both parities after every operation,
// and pending_count and test_wait of every token an arrive returns.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "hopper/model/mbarrier.hpp"
#include "hopper/ptx/mbarrier.cuh"

namespace {

enum op_kind : uint32_t {
  op_arrive,
  op_arrive_no_complete,
  op_arrive_expect_tx,
  op_expect_tx,
  op_complete_tx,
  op_arrive_drop,
  op_arrive_drop_no_complete,
  op_arrive_drop_expect_tx,
  op_test_wait,
  op_kinds
};
const char* op_name(uint32_t k) {
  static const char* n[] = {"arrive",      "arrive.noComplete", "arrive.expect_tx",       "expect_tx",
                            "complete_tx", "arrive_drop",       "arrive_drop.noComplete", "arrive_drop.expect_tx",
                            "test_wait"};
  return k < op_kinds ? n[k] : "?";
}

constexpr int kOps = 24;       // operations per sequence (after init)
constexpr int kObs = 4;        // observables per operation
constexpr int kThreads = 128;  // sequences per block, one barrier each
constexpr int kBlocks = 96;    // 12,288 sequences per launch
constexpr uint32_t kNone = 0xFFFFFFFFu;

struct op {
  uint32_t kind, value;
};
struct sequence {
  uint32_t init;
  op ops[kOps];
};

// Observables after op i: [0] test_wait.parity 0, [1] test_wait.parity 1, [2] pending_count of
// the returned token (kNone when no token), [3] test_wait of that token (kNone when none).
__global__ void run_sequences(const sequence* seqs, uint32_t* obs, int n) {
  __shared__ uint64_t bars[kThreads];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t* bar = &bars[threadIdx.x];
  // Every thread initialises its own barrier, and a CTA barrier orders every init before any
  // other operation: racecheck reports the inits against other threads' operations otherwise.
  hopper::ptx::mbarrier_init(bar, i < n ? seqs[i].init : 1u);
  __syncthreads();
  if (i >= n) return;
  const sequence& s = seqs[i];
  uint32_t* o = obs + size_t(i) * kOps * kObs;
  for (int k = 0; k < kOps; ++k) {
    const op p = s.ops[k];
    uint64_t tok = 0;
    bool has_tok = true;
    switch (p.kind) {
      case op_arrive:
        tok = hopper::ptx::mbarrier_arrive(bar, p.value);
        break;
      case op_arrive_no_complete:
        tok = hopper::ptx::mbarrier_arrive_noComplete(bar, p.value);
        break;
      case op_arrive_expect_tx:
        tok = hopper::ptx::mbarrier_arrive_expect_tx(bar, p.value);
        break;
      case op_expect_tx:
        hopper::ptx::mbarrier_expect_tx(bar, p.value);
        has_tok = false;
        break;
      case op_complete_tx:
        hopper::ptx::mbarrier_complete_tx(bar, p.value);
        has_tok = false;
        break;
      case op_arrive_drop:
        tok = hopper::ptx::mbarrier_arrive_drop(bar, p.value);
        break;
      case op_arrive_drop_no_complete:
        tok = hopper::ptx::mbarrier_arrive_drop_noComplete(bar, p.value);
        break;
      case op_arrive_drop_expect_tx:
        tok = hopper::ptx::mbarrier_arrive_drop_expect_tx(bar, p.value);
        break;
      default:
        has_tok = false;
        break;
    }
    o[k * kObs + 0] = hopper::ptx::mbarrier_test_wait_parity(bar, 0) ? 1u : 0u;
    o[k * kObs + 1] = hopper::ptx::mbarrier_test_wait_parity(bar, 1) ? 1u : 0u;
    o[k * kObs + 2] = has_tok ? hopper::ptx::mbarrier_pending_count(tok) : kNone;
    o[k * kObs + 3] = has_tok ? (hopper::ptx::mbarrier_test_wait(bar, tok) ? 1u : 0u) : kNone;
  }
  hopper::ptx::mbarrier_inval(bar);
}

using hopper::model::mbarrier_state;
using hopper::model::mbarrier_token;
using hopper::model::model_error;

// Applies one op to the model; throws model_error when the PTX ISA leaves it undefined.
void apply(mbarrier_state& m, const op& p, uint32_t* o) {
  mbarrier_token t{};
  bool has_tok = true;
  switch (p.kind) {
    case op_arrive:
      t = m.arrive(p.value);
      break;
    case op_arrive_no_complete:
      t = m.arrive(p.value, true);
      break;
    case op_arrive_expect_tx:
      t = m.arrive_expect_tx(p.value);
      break;
    case op_expect_tx:
      m.expect_tx(p.value);
      has_tok = false;
      break;
    case op_complete_tx:
      m.complete_tx(p.value);
      has_tok = false;
      break;
    case op_arrive_drop:
      t = m.arrive_drop(p.value);
      break;
    case op_arrive_drop_no_complete:
      t = m.arrive_drop(p.value, true);
      break;
    case op_arrive_drop_expect_tx:
      t = m.arrive_drop_expect_tx(p.value);
      break;
    default:
      has_tok = false;
      break;
  }
  o[0] = m.test_wait_parity(0) ? 1u : 0u;
  o[1] = m.test_wait_parity(1) ? 1u : 0u;
  o[2] = has_tok ? mbarrier_state::pending_count(t) : kNone;
  o[3] = has_tok ? (m.test_wait_token(t) ? 1u : 0u) : kNone;
}

// A random defined sequence and the model's observables for it.
void generate(std::mt19937_64& rng, sequence& s, uint32_t* expect) {
  auto pick = [&](uint32_t lo, uint32_t hi) { return uint32_t(lo + rng() % (uint64_t(hi) - lo + 1)); };
  // Mostly small counts (phases complete often), sometimes the limits.
  const uint32_t r = pick(0, 9);
  s.init = r < 7 ? pick(1, 4) : r < 9 ? pick(5, 64) : pick(1u << 19, mbarrier_state::max_arrivals);
  mbarrier_state m("differential");
  m.init(s.init);
  for (int k = 0; k < kOps; ++k) {
    for (int attempt = 0;; ++attempt) {
      op p{};
      p.kind = attempt < 64 ? pick(0, op_kinds - 1) : uint32_t(op_test_wait);
      const uint32_t pend = m.pending() ? m.pending() : 1;
      switch (p.kind) {
        case op_arrive:
        case op_arrive_no_complete:
        case op_arrive_drop:
        case op_arrive_drop_no_complete:
          p.value = pick(0, 3) == 0 ? pend : pick(1, pend);
          break;
        case op_arrive_expect_tx:
        case op_expect_tx:
        case op_complete_tx:
        case op_arrive_drop_expect_tx: {
          const uint32_t t = pick(0, 9);
          p.value = t < 6   ? pick(0, 8) * 16
                    : t < 9 ? uint32_t(m.tx_count() < 0 ? -m.tx_count() : m.tx_count())
                            : pick(0, uint32_t(mbarrier_state::max_tx));
          break;
        }
        default:
          p.value = 0;
          break;
      }
      mbarrier_state trial = m;
      try {
        apply(trial, p, expect + k * kObs);
      } catch (const model_error&) {
        continue;  // undefined: never sent to the hardware
      }
      m = trial;
      s.ops[k] = p;
      break;
    }
  }
}

std::string show(const sequence& s, int upto) {
  std::ostringstream o;
  o << "init(" << s.init << ")";
  for (int k = 0; k <= upto && k < kOps; ++k) o << "; " << op_name(s.ops[k].kind) << "(" << s.ops[k].value << ")";
  return o.str();
}

TEST(ModelDifferential, RandomSequencesAgreeWithTheH200) {
  HOPPER_REQUIRE_SM90();
  const uint64_t seed = hopper_test::fresh_seed();
  std::printf("model_differential seed %llu\n", (unsigned long long)seed);
  std::mt19937_64 rng(seed);
  const int n = kThreads * kBlocks;
  std::vector<sequence> seqs(static_cast<size_t>(n));
  std::vector<uint32_t> expect(size_t(n) * kOps * kObs), got(size_t(n) * kOps * kObs);
  for (int i = 0; i < n; ++i) generate(rng, seqs[size_t(i)], expect.data() + size_t(i) * kOps * kObs);

  sequence* d_seqs = nullptr;
  uint32_t* d_obs = nullptr;
  CUDA_OK(cudaMalloc(&d_seqs, seqs.size() * sizeof(sequence)));
  CUDA_OK(cudaMalloc(&d_obs, got.size() * sizeof(uint32_t)));
  CUDA_OK(cudaMemcpy(d_seqs, seqs.data(), seqs.size() * sizeof(sequence), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_obs, 0xA5, got.size() * sizeof(uint32_t)));  // poison
  run_sequences<<<kBlocks, kThreads>>>(d_seqs, d_obs, n);
  CUDA_LAUNCH_OK();
  CUDA_OK(cudaMemcpy(got.data(), d_obs, got.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(d_seqs));
  CUDA_OK(cudaFree(d_obs));

  static const char* obs_name[kObs] = {"test_wait.parity 0", "test_wait.parity 1", "pending_count(token)",
                                       "test_wait(token)"};
  int disagreements = 0;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < kOps; ++k) {
      bool bad = false;
      for (int j = 0; j < kObs; ++j) {
        const size_t at = (size_t(i) * kOps + size_t(k)) * kObs + size_t(j);
        if (expect[at] != got[at]) {
          if (disagreements < 10)
            ADD_FAILURE() << "sequence " << i << " op " << k << ": " << obs_name[j] << " model " << expect[at]
                          << ", H200 " << got[at] << "\n  " << show(seqs[size_t(i)], k);
          bad = true;
        }
      }
      if (bad) {
        ++disagreements;
        break;  // the first disagreement of a sequence is the finding
      }
    }
  }
  std::printf("SUMMARY model_differential: %d sequences, %d disagreements\n", n, disagreements);
  EXPECT_EQ(disagreements, 0);
}

}  // namespace
