// The mbarrier state machine on the hardware, one test per rule of the PTX ISA's mbarrier section:
// phase completion and reuse ("Phase Completion of the mbarrier object"), expect_tx accumulation
// (mbarrier.expect_tx), test_wait/try_wait answers (mbarrier.test_wait/try_wait), arrive_drop and
// .noComplete (mbarrier.arrive_drop, mbarrier.arrive), inval then reuse as data (mbarrier.inval).
// Each kernel records what the barrier answered; the host compares with what the PTX ISA says it
// must answer.
#include <vector>

#include <hopper/async.cuh>
#include "gpu_test.hpp"

namespace {

using hopper::arrival_count;
using hopper::mbarrier;
using hopper::parity;
using hopper::tx_bytes;

// ---- phase completion: a phase completes exactly when pending arrivals and tx-count reach 0 ----
// Per phase k (3 expected arrivals, tx_k bytes): order[k] == 0: expect_tx, 3 arrivals, then
// complete_tx in two parts; order[k] == 1: expect_tx, complete_tx in full, then 3 arrivals.
// After every step the kernel records test_wait(parity of k) and, at the end, test_wait of the
// next phase's parity.
constexpr int kSteps = 8;
__global__ void phase_rule_kernel(const uint32_t* tx, const uint32_t* order, int phases, uint32_t* rec) {
  __shared__ uint64_t word;
  if (threadIdx.x != 0) return;
  mbarrier bar(word);
  bar.init(arrival_count(3));
  for (int k = 0; k < phases; ++k) {
    const parity p(uint32_t(k) & 1u);
    uint32_t* r = rec + k * kSteps;
    r[0] = bar.test_wait(p);
    bar.expect_tx(tx_bytes(tx[k]));
    if (order[k] == 0) {
      bar.arrive();
      r[1] = bar.test_wait(p);
      bar.arrive();
      r[2] = bar.test_wait(p);
      bar.arrive();
      r[3] = bar.test_wait(p);  // arrivals done, bytes outstanding
      bar.complete_tx(tx_bytes(tx[k] - 1));
      r[4] = bar.test_wait(p);
      bar.complete_tx(tx_bytes(1));
      r[5] = bar.test_wait(p);  // now complete
    } else {
      bar.complete_tx(tx_bytes(tx[k]));
      r[1] = bar.test_wait(p);  // bytes done, arrivals outstanding
      bar.arrive();
      r[2] = bar.test_wait(p);
      bar.arrive();
      r[3] = bar.test_wait(p);
      r[4] = bar.test_wait(p);
      bar.arrive();
      r[5] = bar.test_wait(p);  // now complete
    }
    r[6] = bar.test_wait(p.flipped());  // the next phase has just opened
    r[7] = bar.try_wait(p);
  }
}

TEST(ConformanceMbarrier, PhaseCompletesOnArrivalsAndTxThenFlips_S11_S15) {
  HOPPER_REQUIRE_SM90();
  std::mt19937_64 rng(hopper_test::fresh_seed());
  const int phases = 200;
  std::vector<uint32_t> tx(phases), order(phases);
  for (int k = 0; k < phases; ++k) {
    tx[k] = 2 + uint32_t(rng() % 100000);
    order[k] = uint32_t(rng() & 1);
  }
  uint32_t *d_tx, *d_order, *d_rec;
  CUDA_OK(cudaMalloc(&d_tx, phases * 4));
  CUDA_OK(cudaMalloc(&d_order, phases * 4));
  CUDA_OK(cudaMalloc(&d_rec, phases * kSteps * 4));
  CUDA_OK(cudaMemcpy(d_tx, tx.data(), phases * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_order, order.data(), phases * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_rec, 0xef, phases * kSteps * 4));
  phase_rule_kernel<<<1, 32>>>(d_tx, d_order, phases, d_rec);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> rec(phases * kSteps);
  CUDA_OK(cudaMemcpy(rec.data(), d_rec, rec.size() * 4, cudaMemcpyDeviceToHost));
  const uint32_t expect[kSteps] = {0, 0, 0, 0, 0, 1, 0, 1};
  for (int k = 0; k < phases; ++k)
    for (int s = 0; s < kSteps; ++s)
      ASSERT_EQ(rec[k * kSteps + s], expect[s]) << "phase " << k << " step " << s << " order " << order[k];
  cudaFree(d_tx);
  cudaFree(d_order);
  cudaFree(d_rec);
}

// ---- mbarrier.expect_tx: two arrive.expect_tx of 4096 make the phase wait for 8192 bytes ------
// Warps 0 and 1 each arrive.expect_tx(4096) on a barrier of 2 arrivals. Only the first half is
// copied; the phase must stay open (sampled for 2 ms); then the second half completes it.
__global__ void expect_tx_kernel(const uint4* src, uint4* dst, uint32_t* rec) {
  __shared__ alignas(128) uint4 buf[512];  // 8192 bytes
  __shared__ uint64_t word;
  mbarrier bar(word);
  if (threadIdx.x == 0) {
    bar.init(arrival_count(2));
    mbarrier::fence_init();
  }
  __syncthreads();
  if (threadIdx.x == 0 || threadIdx.x == 32) (void)bar.arrive_expect_tx(tx_bytes(4096));
  __syncthreads();
  if (threadIdx.x == 0) {
    hopper::ptx::cp_async_bulk_shared_cluster_global(buf, src, 4096, bar.native());
    uint32_t early = 0;
    const uint64_t t0 = hopper::ptx::globaltimer();
    while (hopper::ptx::globaltimer() - t0 < 2000000) early |= bar.test_wait(parity(0)) ? 1u : 0u;
    rec[0] = early;  // must be 0: 4096 of 8192 bytes is not the phase
    hopper::ptx::cp_async_bulk_shared_cluster_global(buf + 256, src + 256, 4096, bar.native());
  }
  bar.wait(parity(0));
  for (int i = threadIdx.x; i < 512; i += blockDim.x) dst[i] = buf[i];
  if (threadIdx.x == 0) rec[1] = bar.test_wait(parity(0));
}

TEST(ConformanceMbarrier, TwoExpectTx4096WaitFor8192_S12_2) {
  HOPPER_REQUIRE_SM90();
  std::mt19937_64 rng(hopper_test::fresh_seed());
  std::vector<uint32_t> src(2048);
  for (auto& v : src) v = uint32_t(rng());
  uint32_t *d_src, *d_dst, *d_rec;
  CUDA_OK(cudaMalloc(&d_src, 8192));
  CUDA_OK(cudaMalloc(&d_dst, 8192));
  CUDA_OK(cudaMalloc(&d_rec, 8));
  CUDA_OK(cudaMemcpy(d_src, src.data(), 8192, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_dst, 0xef, 8192));
  CUDA_OK(cudaMemset(d_rec, 0xef, 8));
  expect_tx_kernel<<<1, 128>>>(reinterpret_cast<const uint4*>(d_src), reinterpret_cast<uint4*>(d_dst), d_rec);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> dst(2048), rec(2);
  CUDA_OK(cudaMemcpy(dst.data(), d_dst, 8192, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(rec.data(), d_rec, 8, cudaMemcpyDeviceToHost));
  EXPECT_EQ(rec[0], 0u) << "the phase completed after 4096 of the 8192 announced bytes";
  EXPECT_EQ(rec[1], 1u);
  EXPECT_EQ(dst, src);
  cudaFree(d_src);
  cudaFree(d_dst);
  cudaFree(d_rec);
}

// ---- mbarrier.test_wait/try_wait: what they answer ---------------------------------------------
__global__ void wait_answers_kernel(uint32_t* rec) {
  __shared__ uint64_t a_word, b_word;
  if (threadIdx.x != 0) return;
  mbarrier a(a_word), b(b_word);
  a.init(arrival_count(1));
  int i = 0;
  // Fresh barrier: phase 0 is current (parity 0 not complete); the phase "before" it, parity 1,
  // counts as complete.
  rec[i++] = a.test_wait(parity(0));        // 0
  rec[i++] = a.test_wait(parity(1));        // 1
  rec[i++] = a.try_wait(parity(0), 1000u);  // 0
  rec[i++] = a.try_wait(parity(1));         // 1
  (void)a.arrive();                         // completes phase 0
  rec[i++] = a.test_wait(parity(0));        // 1
  rec[i++] = a.test_wait(parity(1));        // 0: phase 1 is current
  rec[i++] = a.try_wait(parity(0));         // 1
  rec[i++] = a.try_wait(parity(1), 1000u);  // 0
  (void)a.arrive();                         // completes phase 1
  rec[i++] = a.test_wait(parity(1));        // 1
  rec[i++] = a.test_wait(parity(0));        // 0
  // By token: the token names the phase it arrived on.
  b.init(arrival_count(2));
  const auto t = b.arrive();
  rec[i++] = b.test_wait(t);  // 0
  rec[i++] = b.try_wait(t);   // 0
  (void)b.arrive();
  rec[i++] = b.test_wait(t);                                                                    // 1
  rec[i++] = b.try_wait(t);                                                                     // 1
  rec[i++] = hopper::ptx::mbarrier_test_wait_parity<hopper::ptx::sem::relaxed>(b.native(), 0);  // 1
  rec[i++] = hopper::ptx::mbarrier_try_wait_parity<hopper::ptx::sem::relaxed, hopper::ptx::scope::cluster>(
      b.native(), 1, 1000u);  // 0
  rec[i++] = uint32_t(i);
}

TEST(ConformanceMbarrier, TestWaitTryWaitAnswers_S13) {
  HOPPER_REQUIRE_SM90();
  uint32_t* d_rec;
  CUDA_OK(cudaMalloc(&d_rec, 64 * 4));
  CUDA_OK(cudaMemset(d_rec, 0xef, 64 * 4));
  wait_answers_kernel<<<1, 32>>>(d_rec);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> rec(17);
  CUDA_OK(cudaMemcpy(rec.data(), d_rec, rec.size() * 4, cudaMemcpyDeviceToHost));
  const std::vector<uint32_t> expect = {0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 16};
  EXPECT_EQ(rec, expect);
  cudaFree(d_rec);
}

// ---- arrive_drop lowers later phases' expected count; .noComplete via pending_count ------------
__global__ void drop_kernel(uint32_t* rec) {
  __shared__ uint64_t word;
  if (threadIdx.x != 0) return;
  mbarrier bar(word);
  bar.init(arrival_count(4));
  int i = 0;
  // Phase 0 (expected 4).
  rec[i++] = bar.arrive_no_complete(arrival_count(1)).pending_count();  // 4 before it
  rec[i++] = bar.arrive_no_complete(arrival_count(2)).pending_count();  // 3
  rec[i++] = bar.test_wait(parity(0));                                  // 0: one still pending
  (void)bar.arrive();
  rec[i++] = bar.test_wait(parity(0));  // 1
  // Phase 1 (expected 4): one participant drops out.
  (void)bar.arrive_drop();
  rec[i++] = bar.arrive_no_complete(arrival_count(1)).pending_count();  // 3
  (void)bar.arrive(arrival_count(2));
  rec[i++] = bar.test_wait(parity(1));  // 1
  // Phase 2 (expected now 3): drop another without completing.
  rec[i++] = bar.arrive_no_complete(arrival_count(1)).pending_count();       // 3
  rec[i++] = bar.arrive_drop_no_complete(arrival_count(1)).pending_count();  // 2
  rec[i++] = bar.test_wait(parity(0));                                       // 0
  (void)bar.arrive();
  rec[i++] = bar.test_wait(parity(0));  // 1
  // Phase 3 (expected now 2).
  rec[i++] = bar.arrive_no_complete(arrival_count(1)).pending_count();  // 2
  rec[i++] = bar.test_wait(parity(1));                                  // 0
  (void)bar.arrive();
  rec[i++] = bar.test_wait(parity(1));  // 1
  // Phase 4 (expected 2): arrive_drop.expect_tx arrives, announces bytes and drops one more.
  (void)bar.arrive_drop_expect_tx(tx_bytes(64));
  rec[i++] = bar.test_wait(parity(0));  // 0: bytes and one arrival
  bar.complete_tx(tx_bytes(64));
  rec[i++] = bar.test_wait(parity(0));  // 0: one arrival
  (void)bar.arrive();
  rec[i++] = bar.test_wait(parity(0));  // 1
  // Phase 5 (expected now 1): a single arrival completes it.
  rec[i++] = bar.test_wait(parity(1));  // 0
  (void)bar.arrive();
  rec[i++] = bar.test_wait(parity(1));  // 1
  rec[i++] = uint32_t(i);
}

TEST(ConformanceMbarrier, ArriveDropAndNoComplete_S17_4) {
  HOPPER_REQUIRE_SM90();
  uint32_t* d_rec;
  CUDA_OK(cudaMalloc(&d_rec, 64 * 4));
  CUDA_OK(cudaMemset(d_rec, 0xef, 64 * 4));
  drop_kernel<<<1, 32>>>(d_rec);
  CUDA_LAUNCH_OK();
  std::vector<uint32_t> rec(19);
  CUDA_OK(cudaMemcpy(rec.data(), d_rec, rec.size() * 4, cudaMemcpyDeviceToHost));
  const std::vector<uint32_t> expect = {4, 3, 0, 1, 3, 1, 3, 2, 0, 1, 2, 0, 1, 0, 0, 1, 0, 1, 18};
  EXPECT_EQ(rec, expect);
  cudaFree(d_rec);
}

// ---- mbarrier.inval, then the same 8 bytes as ordinary data, then a barrier again --------------
__global__ void inval_kernel(uint64_t value, uint64_t* out, uint32_t* rec) {
  __shared__ uint64_t word;
  mbarrier bar(word);
  if (threadIdx.x == 0) {
    bar.init(arrival_count(1));
    (void)bar.arrive();
    rec[0] = bar.test_wait(parity(0));
    bar.inval();
    word = value;  // the object is gone: plain data now
  }
  __syncthreads();
  out[threadIdx.x] = word ^ threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    bar.init(arrival_count(2));  // and a barrier once more, from phase 0
    rec[1] = bar.test_wait(parity(0));
    (void)bar.arrive(arrival_count(2));
    rec[2] = bar.test_wait(parity(0));
    bar.inval();
  }
}

TEST(ConformanceMbarrier, InvalThenReuseAsData_S17_5) {
  HOPPER_REQUIRE_SM90();
  std::mt19937_64 rng(hopper_test::fresh_seed());
  const uint64_t value = rng();
  uint64_t* d_out;
  uint32_t* d_rec;
  CUDA_OK(cudaMalloc(&d_out, 64 * 8));
  CUDA_OK(cudaMalloc(&d_rec, 3 * 4));
  CUDA_OK(cudaMemset(d_out, 0xef, 64 * 8));
  CUDA_OK(cudaMemset(d_rec, 0xef, 3 * 4));
  inval_kernel<<<1, 64>>>(value, d_out, d_rec);
  CUDA_LAUNCH_OK();
  std::vector<uint64_t> out(64);
  std::vector<uint32_t> rec(3);
  CUDA_OK(cudaMemcpy(out.data(), d_out, 64 * 8, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(rec.data(), d_rec, 3 * 4, cudaMemcpyDeviceToHost));
  for (uint64_t t = 0; t < 64; ++t) ASSERT_EQ(out[t], value ^ t) << "thread " << t;
  EXPECT_EQ(rec, (std::vector<uint32_t>{1, 0, 1}));
  cudaFree(d_out);
  cudaFree(d_rec);
}

}  // namespace
