// A soak of random problems under a time budget: GEMMs of every shape up to 20000 in each
// dimension through hopper::gemm::plan, streaming copies of up to 256 MiB through stream_copy_1d
// and stream_copy_2d, then both at once from several host threads, each on its own stream. Every
// result is checked on the device, so that the largest problems cost no more to check than to
// run: the GEMM against cuBLAS, a copy against the hash that made its source; and the poison
// around every output (padding columns, guard zones) must survive.
//
//   HOPPER_SOAK_SECONDS  the budget (default 60): 45% single-stream GEMMs, 20% copies, 35% from
//                        several threads; a phase draws no new problem once its share is spent
//                        and at least kMinProblems have run
//   HOPPER_SEED          replays a run: every draw derives from it (printed at the start)
//
// A problem unfinished after kHangSeconds is a hang: the test fails naming the problem and the
// process ends there, since freeing memory would wait on the hung kernel forever.
//
// Sharing a hopper::gemm::plan between threads (kernels/gemm/gemm.cuh):
//  - run(stream) and run(stream, workspace) are const: they read the plan (the three tensor maps,
//    the kernel parameters, the launch options) and launch with cudaLaunchKernelEx, which is
//    thread-safe; the kernel keeps no state between launches but the workspace's counters. So
//    several threads may run one plan at once, each with its own workspace, but every such launch
//    writes the plan's one C (SharedPlanCopiesRunAtOnce checks that they agree). A plan that
//    allocated its own workspace shares it between its runs (and its copies': a shared_ptr): only
//    one of those may run at a time where workspace_bytes() > 0.
//  - A plan is a value: a copy makes no CUDA call, and bind() on a copy re-encodes the copy's
//    tensor maps only. To run one problem shape on other buffers from several threads, plan once
//    with external_workspace and give every thread a copy, bound to the thread's A, B, C and run
//    with the thread's workspace.
//  - bind() encodes the maps through the driver, which needs a current context; in a thread that
//    has made no CUDA runtime call yet, tensor_map's build() makes the device's primary context
//    current first (the copies' threads here call bind() before anything else).
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test.hpp"
#include "kernels/copy/stream_copy.cuh"
#include "kernels/gemm/gemm.cuh"

namespace {

using hopper::gemm::config;
using hopper::gemm::major;
using hopper::gemm::out_type;
using hopper::gemm::problem;
using hopper::kernels::stream_copy_config;
using steady = std::chrono::steady_clock;

constexpr double kGemmShare = 0.45, kCopyShare = 0.20, kThreadShare = 0.35;
constexpr int64_t kMinProblems = 50;  // per phase, whatever the budget
constexpr int kHangSeconds = 10;
constexpr int kThreads = 4;
constexpr int64_t kMaxDim = 20000;
constexpr uint64_t kMaxCopy = uint64_t(256) << 20;
constexpr size_t kGuard = 4096;  // poisoned bytes on either side of every output
constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kReserve = 256 * kMiB;        // arena room past the operands: offsets, workspaces
constexpr size_t kGemmCap = size_t(4) << 30;   // A + B + C + reference of one single-stream problem
constexpr size_t kThreadGemmCap = 768 * kMiB;  // the same for each of kThreads threads
constexpr uint8_t kUnwritten = 0xA5;           // a copy's destination starts as source ^ this
constexpr int kBlock = 256;

double budget_seconds() {
  const char* s = std::getenv("HOPPER_SOAK_SECONDS");
  if (!s) return 60.0;
  const double v = std::strtod(s, nullptr);
  return v >= 0 ? v : 60.0;
}

uint64_t seed() { return hopper_test::fresh_seed(); }
uint32_t seed32() { return uint32_t(seed() ^ (seed() >> 32)); }
std::string seed_text() {
  char b[32];
  std::snprintf(b, sizeof b, "0x%016" PRIx64, seed());
  return b;
}
std::string replay() { return "HOPPER_SEED=" + seed_text() + " replays the run"; }

// A failed CUDA or cuBLAS call. It ends the phase (the context may be lost) and fails the test.
struct soak_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw soak_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void ok(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw soak_error(std::string(what) + ": cuBLAS status " + std::to_string(int(s)));
}

// Reports of wrong problems: the first few in full, so that a broken kernel does not flood the log.
std::atomic<int> reports_left{20};
bool may_report() { return reports_left.fetch_sub(1) > 0; }

[[noreturn]] void hung(const std::string& what) {
  ADD_FAILURE() << "hang: not finished after " << kHangSeconds << " s: " << what << "\n  " << replay();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(1);
}

// Waits for what is queued on `s`, polling, so that a hang is caught instead of waited on.
void wait(cudaStream_t s, const std::string& what) {
  const steady::time_point deadline = steady::now() + std::chrono::seconds(kHangSeconds);
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) ok(e, ("cudaStreamQuery after " + what).c_str());
    if (steady::now() > deadline) hung(what);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// A phase's share of the budget: it draws new problems until the share is spent, and never
// fewer than kMinProblems.
class phase_clock {
 public:
  explicit phase_clock(double share_s) : share_s_(share_s) {}
  double elapsed() const { return std::chrono::duration<double>(steady::now() - start_).count(); }
  bool more(int64_t done) const { return done < kMinProblems || elapsed() < share_s_; }
  void announce(const char* phase) const {
    std::printf("soak %s: seed %s (HOPPER_SEED replays), %.1f s of a %.1f s budget\n", phase, seed_text().c_str(),
                share_s_, budget_seconds());
    std::fflush(stdout);
  }

 private:
  steady::time_point start_ = steady::now();
  double share_s_;
};

// ---- random draws ------------------------------------------------------------------------------

uint32_t below(std::mt19937_64& rng, uint32_t n) { return uint32_t(rng() % n); }
bool coin(std::mt19937_64& rng) { return (rng() & 1u) != 0; }

// Log-uniform in [lo, hi]: every octave as likely as any other, so that small problems are the
// many while the largest still come up.
int64_t log_uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  std::uniform_real_distribution<double> u(std::log(double(lo)), std::log(double(hi) + 1.0));
  return std::clamp(int64_t(std::exp(u(rng))), lo, hi);
}

// ---- device memory -----------------------------------------------------------------------------

// One allocation a worker carves its problems from, so that thousands of problems need no
// cudaMalloc each. Every piece starts a random multiple of 16 bytes past the previous one (TMA
// and the bulk copies need 16-byte alignment and no more), so bases of every alignment come up.
class arena {
 public:
  explicit arena(size_t bytes) : size_(bytes) { ok(cudaMalloc(&base_, bytes), "cudaMalloc(arena)"); }
  ~arena() { cudaFree(base_); }
  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;

  void reset() { used_ = 0; }
  size_t offset(const void* p) const { return size_t(static_cast<const uint8_t*>(p) - base_); }
  // `bytes` bytes, or null where they do not fit.
  uint8_t* take(size_t bytes, std::mt19937_64& rng) {
    const size_t at = used_ + 16 * size_t(below(rng, 256));
    if (at + bytes > size_) return nullptr;
    used_ = (at + bytes + 15) / 16 * 16;
    return base_ + at;
  }
  uint8_t* must_take(size_t bytes, std::mt19937_64& rng) {
    uint8_t* p = take(bytes, rng);
    if (!p)
      throw soak_error("an arena of " + std::to_string(size_) + " bytes has no room for " + std::to_string(bytes));
    return p;
  }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0, used_ = 0;
};

// What a check kernel found, summed over the elements (or bytes) it read.
struct verdict {
  unsigned long long wrong;      // off by more than the tolerance (copies: neither right nor poison)
  unsigned long long unwritten;  // still the poison
  unsigned long long outside;    // poison overwritten where nothing may write: padding, guards
  unsigned long long tail;       // GEMM: padding written in the 16-byte chunk that holds column N - 1
  unsigned long long first_bad;  // ~index of the first bad element (0: none), so that atomicMax keeps the lowest
  unsigned int worst_bits;       // largest |C - ref| / (atol + rtol |ref|): a non-negative float's bits
};

float worst_of(const verdict& v) {
  float f;
  std::memcpy(&f, &v.worst_bits, 4);
  return f;
}
bool clean(const verdict& v) { return v.wrong == 0 && v.unwritten == 0 && v.outside == 0 && v.tail == 0; }

// What one host thread owns: a stream, a cuBLAS handle on it, an arena, the verdict (pinned on the
// host, so that copying it back is asynchronous and the watchdog still sees a hang), its draws.
struct worker {
  int id;
  std::mt19937_64 rng;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  std::unique_ptr<arena> mem;
  verdict* d_verdict = nullptr;
  verdict* h_verdict = nullptr;

  worker(int index, size_t arena_bytes, uint64_t tag) : id(index), rng(seed() ^ (0x9E3779B97F4A7C15ull * (tag + 1))) {
    ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    ok(cublasCreate(&blas), "cublasCreate");
    ok(cublasSetStream(blas, stream), "cublasSetStream");
    mem = std::make_unique<arena>(arena_bytes);
    ok(cudaMalloc(&d_verdict, sizeof(verdict)), "cudaMalloc(verdict)");
    ok(cudaMallocHost(&h_verdict, sizeof(verdict)), "cudaMallocHost(verdict)");
  }
  ~worker() {
    cudaFreeHost(h_verdict);
    cudaFree(d_verdict);
    if (blas) cublasDestroy(blas);
    if (stream) cudaStreamDestroy(stream);
  }
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;
};

// A grid-stride grid for n items: enough blocks to fill the device, no more than the items need.
unsigned grid_for(uint64_t n) { return unsigned(std::clamp<uint64_t>((n + kBlock - 1) / kBlock, 1, 1024)); }

// ---- device side: inputs, poison, checks -------------------------------------------------------

__device__ uint64_t first_thread() { return blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; }
__device__ uint64_t all_threads() { return uint64_t(gridDim.x) * blockDim.x; }

HOPPER_HD uint32_t hash_at(uint32_t seed, uint32_t salt, uint64_t i) {
  return hopper_test::mix(seed ^ (uint32_t(i >> 32) * 0x9e3779b9u), salt, uint32_t(i));
}

// Adds one thread's findings to the verdict (every thread of the block must call it).
__device__ void report(verdict* v, uint32_t wrong, uint32_t unwritten, uint32_t outside, uint32_t tail, uint64_t first,
                       float worst) {
  if (wrong) atomicAdd(&v->wrong, (unsigned long long)wrong);
  if (unwritten) atomicAdd(&v->unwritten, (unsigned long long)unwritten);
  if (outside) atomicAdd(&v->outside, (unsigned long long)outside);
  if (tail) atomicAdd(&v->tail, (unsigned long long)tail);
  if (first) atomicMax(&v->first_bad, (unsigned long long)first);
  const unsigned w = __reduce_max_sync(0xffffffffu, __float_as_uint(worst));
  if ((threadIdx.x & 31u) == 0 && w) atomicMax(&v->worst_bits, w);
}

// An operand of `rows` rows at pitch `ld`, the first `extent` of each row drawn: small integers
// (-3..3: every product and partial sum of K <= 20000 terms is an integer below 2^24, exact in
// fp32 in any order) or uniform in [-1, 1). The padding past `extent`, which no one may read, is
// NaN: a kernel that read it would put NaN into C.
__global__ void fill_operand(__nv_bfloat16* x, uint64_t rows, uint64_t ld, uint64_t extent, uint32_t seed,
                             uint32_t salt, bool integers) {
  const uint64_t n = rows * ld;
  for (uint64_t i = first_thread(); i < n; i += all_threads()) {
    if (i % ld >= extent) {
      x[i] = __ushort_as_bfloat16(0x7fc0);
      continue;
    }
    const uint32_t h = hash_at(seed, salt, i);
    const float v = integers ? float(int(h % 7u) - 3) : float(h >> 8) * 0x1p-23f - 1.f;
    x[i] = __float2bfloat16_rn(v);
  }
}

template <class OutT>
__device__ uint32_t bits_of(OutT x) {
  if constexpr (sizeof(OutT) == 2)
    return __bfloat16_as_ushort(x);
  else
    return __float_as_uint(x);
}
template <class OutT>
__device__ float value_of(OutT x) {
  if constexpr (sizeof(OutT) == 2)
    return __bfloat162float(x);
  else
    return x;
}

// C (M rows at pitch ldc between two guards of kGuard bytes, all of it poisoned with all-ones
// bytes before the run: NaN in either type) against the fp32 reference (M x N, packed):
// |C - ref| <= atol + rtol |ref| element by element, every element written, the padding columns
// N..ldc and the guards still poison. Padding in the 16-byte chunk that holds column N - 1 is
// counted apart (`tail`): TMA stores move whole 16-byte chunks, so a store of C's last columns
// may write it, which is wrong all the same where the padding holds someone else's data.
template <class OutT>
__global__ void check_gemm(const OutT* c, const float* ref, int64_t M, int64_t N, int64_t ldc, float atol, float rtol,
                           verdict* v) {
  constexpr uint32_t poison = sizeof(OutT) == 2 ? 0xffffu : 0xffffffffu;
  const float inf = __int_as_float(0x7f800000);
  constexpr uint64_t per_chunk = 16 / sizeof(OutT);
  const uint64_t chunk_end = (uint64_t(N) + per_chunk - 1) / per_chunk * per_chunk;
  uint32_t wrong = 0, unwritten = 0, outside = 0, tail = 0;
  uint64_t first = 0;
  float worst = 0.f;
  const auto* lo = reinterpret_cast<const uint32_t*>(reinterpret_cast<const uint8_t*>(c) - kGuard);
  const auto* hi = reinterpret_cast<const uint32_t*>(c + M * ldc);
  for (uint64_t i = first_thread(); i < kGuard / 4; i += all_threads())
    outside += uint32_t(lo[i] != ~0u) + uint32_t(hi[i] != ~0u);
  const uint64_t n = uint64_t(M) * uint64_t(ldc);
  for (uint64_t i = first_thread(); i < n; i += all_threads()) {
    const uint64_t m = i / uint64_t(ldc), col = i % uint64_t(ldc);
    const uint32_t b = bits_of(c[i]);
    if (col >= uint64_t(N)) {
      (col < chunk_end ? tail : outside) += uint32_t(b != poison);
      continue;
    }
    const uint64_t r = m * uint64_t(N) + col;
    if (b == poison) {
      ++unwritten;
      if (!first) first = ~r;
      continue;
    }
    const float y = ref[r];
    const float err = fabsf(value_of(c[i]) - y), tol = atol + rtol * fabsf(y);
    if (err <= tol) {
      worst = fmaxf(worst, tol > 0.f ? err / tol : 0.f);
    } else {  // also NaN
      ++wrong;
      if (!first) first = ~r;
      worst = tol > 0.f && err < inf ? fmaxf(worst, err / tol) : inf;
    }
  }
  report(v, wrong, unwritten, outside, tail, first, worst);
}

// A copy's source byte i, and the guard pattern around its destination.
HOPPER_HD uint8_t source_byte(uint32_t seed, uint32_t salt, uint64_t i) {
  return uint8_t(hash_at(seed, salt, i) >> 24);
}
HOPPER_HD uint8_t guard_byte(uint32_t seed, uint32_t salt, uint64_t i) {
  return uint8_t(hash_at(seed, salt ^ 0x5bd1e995u, i) >> 24);
}

__global__ void fill_source(uint8_t* src, uint64_t bytes, uint32_t seed, uint32_t salt) {
  for (uint64_t i = first_thread(); i < bytes; i += all_threads()) src[i] = source_byte(seed, salt, i);
}

// The destination region: kGuard bytes of guard pattern, the destination, kGuard more. The
// destination starts as the source's bytes ^ kUnwritten, never the right value, so that a byte
// the copy skipped shows as such.
__global__ void poison_copy(uint8_t* region, uint64_t bytes, uint32_t seed, uint32_t salt) {
  for (uint64_t i = first_thread(); i < bytes + 2 * kGuard; i += all_threads()) {
    const bool dst = i >= kGuard && i < kGuard + bytes;
    region[i] = dst ? uint8_t(source_byte(seed, salt, i - kGuard) ^ kUnwritten) : guard_byte(seed, salt, i);
  }
}

__global__ void check_copy(const uint8_t* region, uint64_t bytes, uint32_t seed, uint32_t salt, verdict* v) {
  uint32_t wrong = 0, unwritten = 0, outside = 0;
  uint64_t first = 0;
  for (uint64_t i = first_thread(); i < bytes + 2 * kGuard; i += all_threads()) {
    const uint8_t got = region[i];
    if (i < kGuard || i >= kGuard + bytes) {
      if (got == guard_byte(seed, salt, i)) continue;
      ++outside;
    } else {
      const uint8_t want = source_byte(seed, salt, i - kGuard);
      if (got == want) continue;
      if (got == uint8_t(want ^ kUnwritten))
        ++unwritten;
      else
        ++wrong;
    }
    if (!first) first = ~i;
  }
  report(v, wrong, unwritten, outside, 0, first, 0.f);
}

// Resets the verdict, queues the check, copies the verdict back and waits under the watchdog.
template <class Launch>
verdict checked(worker& w, Launch&& launch_check, const std::string& what) {
  ok(cudaMemsetAsync(w.d_verdict, 0, sizeof(verdict), w.stream), "cudaMemsetAsync(verdict)");
  launch_check();
  ok(cudaGetLastError(), "check kernel launch");
  ok(cudaMemcpyAsync(w.h_verdict, w.d_verdict, sizeof(verdict), cudaMemcpyDeviceToHost, w.stream),
     "cudaMemcpyAsync(verdict)");
  wait(w.stream, what);
  return *w.h_verdict;
}

// ---- statistics --------------------------------------------------------------------------------

struct phase_stats {
  int64_t run = 0, correct = 0;
  double largest = 0;  // flops (GEMM) or bytes (copy) of the largest problem
  std::string largest_what;
  double worst_ratio = 0;                        // GEMM: max |C - ref| / tolerance; copies: bad bytes / bytes
  std::map<std::string, int64_t> kinds;          // problems per configuration
  std::map<std::string, double> worst_by_class;  // GEMM: worst_ratio per kind of inputs and output
  int64_t tail_only = 0;                         // GEMM runs wrong only in the padding chunk past column N - 1

  void add(bool right, double size, const std::string& what, double ratio, const std::string& kind) {
    ++run;
    correct += right ? 1 : 0;
    if (size > largest) largest = size, largest_what = what;
    worst_ratio = std::max(worst_ratio, ratio);
    ++kinds[kind];
  }
  void merge(const phase_stats& o) {
    run += o.run;
    correct += o.correct;
    if (o.largest > largest) largest = o.largest, largest_what = o.largest_what;
    worst_ratio = std::max(worst_ratio, o.worst_ratio);
    for (const auto& [k, n] : o.kinds) kinds[k] += n;
    for (const auto& [k, r] : o.worst_by_class) worst_by_class[k] = std::max(worst_by_class[k], r);
    tail_only += o.tail_only;
  }
};

void summary(const char* phase, const phase_stats& s, double seconds) {
  std::printf("SUMMARY soak %s: %lld problems, %lld correct, largest %s, max error ratio %.3g, in %.1f s\n", phase,
              (long long)s.run, (long long)s.correct, s.largest_what.empty() ? "none" : s.largest_what.c_str(),
              s.worst_ratio, seconds);
  std::printf("soak %s, problems per configuration:", phase);
  for (const auto& [k, n] : s.kinds) std::printf(" [%s] %lld", k.c_str(), (long long)n);
  std::printf("\n");
  if (!s.worst_by_class.empty()) {
    std::printf("soak %s, max error ratio by inputs and output:", phase);
    for (const auto& [k, r] : s.worst_by_class) std::printf(" [%s] %.3g", k.c_str(), r);
    std::printf("\n");
  }
  if (s.tail_only > 0)
    std::printf(
        "soak %s: %lld runs wrong only in C's padding within the 16 bytes past column N - 1, every element "
        "right (TMA stores whole 16-byte chunks)\n",
        phase, (long long)s.tail_only);
  std::fflush(stdout);
}

// ---- GEMM problems -----------------------------------------------------------------------------

// A drawn GEMM problem and everything that rebuilds it.
struct gemm_case {
  problem p;
  bool integers = false;      // small integer inputs: exact sums, so an exact reference
  bool own_workspace = true;  // plan(p, A, B, C) allocates the workspace; else external_workspace
  uint32_t salt = 0;          // the inputs' hash, with the seed
};

size_t a_elems(const problem& p) { return size_t(p.lda_or_packed()) * size_t(p.a_major == major::k ? p.M : p.K); }
size_t b_elems(const problem& p) { return size_t(p.ldb_or_packed()) * size_t(p.b_major == major::k ? p.N : p.K); }
size_t c_bytes(const problem& p) {
  return size_t(p.ldc_or_packed()) * size_t(p.M) * size_t(hopper::gemm::out_bytes(p.out));
}
size_t ref_bytes(const problem& p) { return size_t(p.M) * size_t(p.N) * 4; }
size_t gemm_bytes(const problem& p) { return 2 * a_elems(p) + 2 * b_elems(p) + c_bytes(p) + ref_bytes(p); }

// A leading dimension for rows of `extent` elements whose pitch must be a multiple of `multiple`
// elements (16 bytes): packed (0) where the extent allows it, the extent rounded up, or padded
// past that by a few or by many multiples.
int64_t draw_ld(std::mt19937_64& rng, int64_t extent, int64_t multiple) {
  const int64_t tight = (extent + multiple - 1) / multiple * multiple;
  switch (below(rng, 4)) {
    case 0:
      return tight == extent ? 0 : tight;
    case 1:
      return tight;
    case 2:
      return tight + multiple * int64_t(1 + below(rng, 8));
    default:
      return tight + multiple * log_uniform(rng, 1, 512);
  }
}

// Any M, N, K in 1..kMaxDim (log-uniform each; K need not be a multiple of 8 where the leading
// dimension is padded), any layouts and output type, drawn again until it fits in `cap` bytes.
gemm_case draw_gemm(std::mt19937_64& rng, size_t cap, uint32_t salt) {
  gemm_case c;
  c.salt = salt;
  problem& p = c.p;
  do {
    p.M = log_uniform(rng, 1, kMaxDim);
    p.N = log_uniform(rng, 1, kMaxDim);
    p.K = log_uniform(rng, 1, kMaxDim);
    p.a_major = coin(rng) ? major::k : major::mn;
    p.b_major = coin(rng) ? major::k : major::mn;
    p.out = coin(rng) ? out_type::bf16 : out_type::f32;
    p.lda = draw_ld(rng, p.a_major == major::k ? p.K : p.M, 8);
    p.ldb = draw_ld(rng, p.b_major == major::k ? p.K : p.N, 8);
    p.ldc = draw_ld(rng, p.N, p.out == out_type::bf16 ? 8 : 4);
  } while (gemm_bytes(p) > cap);
  c.integers = coin(rng);
  c.own_workspace = coin(rng);
  return c;
}

std::string shape_of(const problem& p) {
  std::ostringstream s;
  s << p.M << " x " << p.N << " x " << p.K << " (A " << name(p.a_major) << ", B " << name(p.b_major) << ", "
    << name(p.out) << ")";
  return s.str();
}

std::string describe(const gemm_case& c) {
  const problem& p = c.p;
  std::ostringstream s;
  s << "M x N x K = " << p.M << " x " << p.N << " x " << p.K << ", A " << name(p.a_major) << " lda " << p.lda << ", B "
    << name(p.b_major) << " ldb " << p.ldb << ", C " << name(p.out) << " ldc " << p.ldc << " (ld 0: packed), "
    << (c.integers ? "integer" : "uniform") << " inputs, " << (c.own_workspace ? "own" : "external")
    << " workspace, salt " << c.salt;
  return s.str();
}

std::string describe(const hopper::gemm::plan& g) {
  const config& f = g.cfg();
  std::ostringstream s;
  s << "config " << f.bm << " x " << f.bn << " x " << f.bk << ", " << f.stages << " stages, cluster " << f.cluster_m
    << " x " << f.cluster_n << ", splits " << f.splits << ", stream-K " << (f.stream_k ? "on" : "off") << " ("
    << g.stream_k_tiles() << " tiles), " << (f.pingpong ? "ping-pong" : "cooperative") << ", group_m " << f.group_m
    << ", grid " << g.grid() << ", workspace " << g.workspace_bytes() << " bytes";
  return s.str();
}

std::string kind_of(const hopper::gemm::plan& g) {
  const config& f = g.cfg();
  std::ostringstream s;
  s << f.bm << "x" << f.bn << " " << f.cluster_m << "x" << f.cluster_n;
  if (f.pingpong) s << " ping-pong";
  if (f.splits > 1) s << " split-K";
  if (g.stream_k_tiles() > 0) s << " stream-K";
  return s.str();
}

// The comparison's tolerance, |C - ref| <= atol + rtol |ref| element by element, ref in fp32:
//  - integer inputs: ours and cuBLAS's sums are exact, so an f32 C must equal the reference and a
//    bf16 C be its rounding to nearest (the epilogue rounds to nearest even): at most half a bf16
//    ulp, 2^-8 of the value.
//  - uniform inputs: the fp32 sums of K products in different orders differ by roundings of the
//    running sum, about sqrt(K) / 3 in size at most 2^-23 of it per addition: atol = 2^-22 K^1.5
//    covers even K such errors of one sign (0.67 at K = 20000, where |C| is about 47, while a
//    lost k-block is off by about 2.7 in a whole tile), and a bf16 C adds its rounding, rtol 2^-8.
struct tolerance {
  float atol, rtol;
};
tolerance tolerance_of(const gemm_case& c) {
  const float rtol = c.p.out == out_type::bf16 ? 0x1p-8f : 0.f;
  if (c.integers) return {0.f, rtol};
  const double k = double(c.p.K);
  return {float(std::ldexp(k * std::sqrt(k), -22)), rtol};
}

// A problem's pieces in its worker's arena.
struct gemm_buffers {
  __nv_bfloat16 *a = nullptr, *b = nullptr;
  uint8_t* c_region = nullptr;  // kGuard bytes, C, kGuard bytes
  void* c = nullptr;
  float* ref = nullptr;
};

gemm_buffers take_gemm_buffers(worker& w, const problem& p) {
  arena& mem = *w.mem;
  gemm_buffers d;
  d.a = reinterpret_cast<__nv_bfloat16*>(mem.must_take(2 * a_elems(p), w.rng));
  d.b = reinterpret_cast<__nv_bfloat16*>(mem.must_take(2 * b_elems(p), w.rng));
  d.c_region = mem.must_take(2 * kGuard + c_bytes(p), w.rng);
  d.c = d.c_region + kGuard;
  d.ref = reinterpret_cast<float*>(mem.must_take(ref_bytes(p), w.rng));
  return d;
}

// cuBLAS's C in fp32 (column-major view: C^T = B . A^T), fp32 compute, on the worker's stream.
void cublas_reference(worker& w, const problem& p, const gemm_buffers& d) {
  const float alpha = 1.f, beta = 0.f;
  ok(cublasGemmEx(w.blas, p.b_major == major::k ? CUBLAS_OP_T : CUBLAS_OP_N,
                  p.a_major == major::k ? CUBLAS_OP_N : CUBLAS_OP_T, int(p.N), int(p.M), int(p.K), &alpha, d.b,
                  CUDA_R_16BF, int(p.ldb_or_packed()), d.a, CUDA_R_16BF, int(p.lda_or_packed()), &beta, d.ref,
                  CUDA_R_32F, int(p.N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
     "cublasGemmEx");
}

// Queues the operands' fill and cuBLAS's reference.
void prepare_gemm(worker& w, const gemm_case& gc, const gemm_buffers& d) {
  const problem& p = gc.p;
  const bool ak = p.a_major == major::k, bk = p.b_major == major::k;
  const uint64_t a_rows = uint64_t(ak ? p.M : p.K), b_rows = uint64_t(bk ? p.N : p.K);
  fill_operand<<<grid_for(a_elems(p)), kBlock, 0, w.stream>>>(
      d.a, a_rows, uint64_t(p.lda_or_packed()), uint64_t(ak ? p.K : p.M), seed32(), 2 * gc.salt, gc.integers);
  ok(cudaGetLastError(), "fill_operand(A)");
  fill_operand<<<grid_for(b_elems(p)), kBlock, 0, w.stream>>>(
      d.b, b_rows, uint64_t(p.ldb_or_packed()), uint64_t(bk ? p.K : p.N), seed32(), 2 * gc.salt + 1, gc.integers);
  ok(cudaGetLastError(), "fill_operand(B)");
  cublas_reference(w, p, d);
}

void poison_c(worker& w, const problem& p, const gemm_buffers& d) {
  ok(cudaMemsetAsync(d.c_region, 0xFF, 2 * kGuard + c_bytes(p), w.stream), "cudaMemsetAsync(poison C)");
}

// Checks the C of the run just queued on the worker's stream; waits under the watchdog.
verdict check_c(worker& w, const gemm_case& gc, const gemm_buffers& d, const std::string& what) {
  const problem& p = gc.p;
  const tolerance t = tolerance_of(gc);
  const unsigned grid = grid_for(size_t(p.M) * size_t(p.ldc_or_packed()));
  return checked(
      w,
      [&] {
        if (p.out == out_type::bf16)
          check_gemm<<<grid, kBlock, 0, w.stream>>>(static_cast<const __nv_bfloat16*>(d.c), d.ref, p.M, p.N,
                                                    p.ldc_or_packed(), t.atol, t.rtol, w.d_verdict);
        else
          check_gemm<<<grid, kBlock, 0, w.stream>>>(static_cast<const float*>(d.c), d.ref, p.M, p.N, p.ldc_or_packed(),
                                                    t.atol, t.rtol, w.d_verdict);
      },
      what);
}

float bf16_bits_to_float(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Whether the checked run was right; a wrong one is reported in full, with its first bad element.
bool judge(const verdict& v, const gemm_case& gc, const gemm_buffers& d, const std::string& what) {
  if (clean(v)) return true;
  if (!may_report()) return false;
  const problem& p = gc.p;
  std::ostringstream s;
  s << "wrong GEMM: " << v.wrong << " elements off, " << v.unwritten << " never written, " << v.tail
    << " padding elements written in the 16 bytes past column N - 1, " << v.outside
    << " elements or words written further outside C (padding columns, guards); worst error ratio " << worst_of(v);
  if (v.first_bad) {
    const uint64_t r = ~v.first_bad, m = r / uint64_t(p.N), n = r % uint64_t(p.N);
    const size_t at = size_t(m) * size_t(p.ldc_or_packed()) + size_t(n);
    float ours = 0, ref = 0;
    if (p.out == out_type::bf16) {
      uint16_t h = 0;
      ok(cudaMemcpy(&h, static_cast<const uint16_t*>(d.c) + at, 2, cudaMemcpyDeviceToHost), "cudaMemcpy(C element)");
      ours = bf16_bits_to_float(h);
    } else {
      ok(cudaMemcpy(&ours, static_cast<const float*>(d.c) + at, 4, cudaMemcpyDeviceToHost), "cudaMemcpy(C element)");
    }
    ok(cudaMemcpy(&ref, d.ref + r, 4, cudaMemcpyDeviceToHost), "cudaMemcpy(reference element)");
    const tolerance t = tolerance_of(gc);
    s << "; first at C(" << m << ", " << n << ") = " << ours << ", cuBLAS " << ref << " (atol " << t.atol << ", rtol "
      << t.rtol << ")";
  }
  ADD_FAILURE() << s.str() << "\n  " << what << "\n  " << replay();
  return false;
}

// The worst error ratio per kind of inputs and output, and the runs wrong only in the tail chunk.
void note(phase_stats& st, const gemm_case& gc, const verdict& v) {
  const std::string cls = std::string(gc.integers ? "integer " : "uniform ") + name(gc.p.out);
  st.worst_by_class[cls] = std::max(st.worst_by_class[cls], double(worst_of(v)));
  if (v.tail > 0 && v.wrong == 0 && v.unwritten == 0 && v.outside == 0) ++st.tail_only;
}

// One problem end to end: the plan (first: its constructor may synchronize the device), the
// operands, cuBLAS's C, then ours, twice where a workspace carries counters from run to run.
void run_gemm(worker& w, const gemm_case& gc, phase_stats& st, int64_t index) {
  const problem& p = gc.p;
  w.mem->reset();
  const gemm_buffers d = take_gemm_buffers(w, p);
  std::unique_ptr<hopper::gemm::plan> g;
  void* ws = nullptr;
  bool own = gc.own_workspace;
  const std::string where = "worker " + std::to_string(w.id) + ", problem " + std::to_string(index) + ": ";
  try {
    if (!own) {
      g = std::make_unique<hopper::gemm::plan>(p, d.a, d.b, d.c, hopper::gemm::external_workspace);
      if (g->workspace_bytes() > 0) ws = w.mem->take(g->workspace_bytes(), w.rng);
      own = g->workspace_bytes() > 0 && ws == nullptr;  // no room: let the plan allocate its own
    }
    if (own) g = std::make_unique<hopper::gemm::plan>(p, d.a, d.b, d.c);
  } catch (const std::invalid_argument& e) {
    ADD_FAILURE() << "the plan rejected a valid problem: " << e.what() << "\n  " << where << describe(gc) << "\n  "
                  << replay();
    st.add(false, p.flops(), shape_of(p), 0, "rejected");
    return;
  }
  const std::string what =
      where + describe(gc) + (own != gc.own_workspace ? " (own: no room)" : "") + "\n  " + describe(*g);
  prepare_gemm(w, gc, d);
  if (ws) {
    ok(cudaMemsetAsync(ws, 0xFF, g->counters_offset(), w.stream), "cudaMemsetAsync(partials)");
    ok(cudaMemsetAsync(static_cast<uint8_t*>(ws) + g->counters_offset(), 0, g->workspace_bytes() - g->counters_offset(),
                       w.stream),
       "cudaMemsetAsync(counters)");
  }
  const int runs = g->workspace_bytes() > 0 ? 2 : 1;
  bool right = true;
  float worst = 0;
  for (int r = 0; r < runs && right; ++r) {
    poison_c(w, p, d);
    ok(own ? g->run(w.stream) : g->run(w.stream, ws), "plan::run");
    const verdict v = check_c(w, gc, d, what + ", run " + std::to_string(r));
    right = judge(v, gc, d, what + ", run " + std::to_string(r));
    note(st, gc, v);
    worst = std::max(worst, worst_of(v));
  }
  st.add(right, p.flops(), shape_of(p), worst, kind_of(*g));
}

// Runs `body`, adding `what()` to the message of anything it throws.
template <class F, class D>
void naming(F&& body, D&& what) {
  try {
    body();
  } catch (const std::exception& e) {
    throw soak_error(std::string(e.what()) + "\n  during " + what());
  }
}

// ---- copy problems -----------------------------------------------------------------------------

struct copy_case {
  uint64_t bytes = 0;
  bool two_d = false;
  bool preset = true;  // the launcher's default configuration; else a random one
  stream_copy_config cfg;
  uint32_t salt = 0;
};

// A random configuration, for the launcher to accept or reject (a rejected one is drawn again).
stream_copy_config random_copy_config(std::mt19937_64& rng, bool two_d) {
  using hopper::kernels::chunk_order, hopper::kernels::l2_evict, hopper::kernels::schedule, hopper::kernels::store_path;
  static constexpr uint32_t stage_counts[] = {2, 3, 4, 6, 8, 12, 16};
  stream_copy_config c;
  c.stages = stage_counts[below(rng, 7)];
  c.store_lag = below(rng, 3);
  c.sched = coin(rng) ? schedule::per_tile : schedule::persistent;
  c.tile_chunks = 1 + below(rng, 16);
  c.path = !two_d && coin(rng) ? store_path::st_global : store_path::bulk;
  c.store_warps = 1 + below(rng, 16);
  c.blocks_per_sm = 1 + below(rng, 4);
  c.prefetch_chunks = coin(rng) ? 0 : below(rng, 9);
  c.load_policy = static_cast<l2_evict>(below(rng, 4));
  c.store_policy = static_cast<l2_evict>(below(rng, 4));
  c.streaming_store = c.store_policy == l2_evict::none && coin(rng);
  c.order = coin(rng) ? chunk_order::interleaved : chunk_order::contiguous;
  // Stages log-uniform in the variant's granule, up to a ring of 200 KiB.
  const uint32_t granule = two_d ? hopper::kernels::stream_copy_2d_row_bytes : 16;
  const uint32_t held = hopper::kernels::detail::ring_stages(c);
  const int64_t most = std::max<int64_t>(1, int64_t(200 * 1024 / held / granule));
  c.stage_bytes = granule * uint32_t(log_uniform(rng, 1, most));
  return c;
}

// 16 B .. 256 MiB log-uniform in multiples of 16; one in four with a tail of 1..15 more bytes,
// which the launchers copy too (with ordinary stores from CTA 0).
copy_case draw_copy(std::mt19937_64& rng, uint32_t salt) {
  copy_case c;
  c.salt = salt;
  c.bytes = 16 * uint64_t(log_uniform(rng, 1, int64_t(kMaxCopy / 16)));
  if (below(rng, 4) == 0) c.bytes += 1 + below(rng, 15);
  c.two_d = below(rng, 3) == 0;
  c.preset = coin(rng);
  if (c.preset)
    c.cfg = c.two_d ? stream_copy_config{} : hopper::kernels::stream_copy_1d_default();
  else
    c.cfg = random_copy_config(rng, c.two_d);
  return c;
}

std::string describe(const copy_case& c) {
  const stream_copy_config& f = c.cfg;
  std::ostringstream s;
  s << (c.two_d ? "stream_copy_2d" : "stream_copy_1d") << " of " << c.bytes << " bytes, salt " << c.salt << ", "
    << (c.preset ? "default config" : "random config") << " {stages " << f.stages << ", stage_bytes " << f.stage_bytes
    << ", blocks_per_sm " << f.blocks_per_sm << ", store_lag " << f.store_lag << ", prefetch_chunks "
    << f.prefetch_chunks << ", load/store policy " << int(f.load_policy) << "/" << int(f.store_policy) << ", order "
    << int(f.order) << ", path " << (f.path == hopper::kernels::store_path::bulk ? "bulk" : "st_global")
    << ", store_warps " << f.store_warps << ", streaming_store " << f.streaming_store << ", sched "
    << (f.sched == hopper::kernels::schedule::per_tile ? "per_tile" : "persistent") << ", tile_chunks " << f.tile_chunks
    << "}";
  return s.str();
}

std::string kind_of(const copy_case& c) {
  std::string k = c.two_d ? "2-D " : "1-D ";
  if (c.preset) return k + "default";
  k += c.cfg.path == hopper::kernels::store_path::bulk ? "bulk " : "st_global ";
  return k + (c.cfg.sched == hopper::kernels::schedule::per_tile ? "per_tile" : "persistent");
}

enum class copy_outcome { checked, rejected };

// One copy end to end; a random configuration the launcher rejects is not a problem run.
copy_outcome run_copy(worker& w, const copy_case& cc, phase_stats& st, int64_t index) {
  w.mem->reset();
  uint8_t* src = w.mem->must_take(cc.bytes, w.rng);
  uint8_t* region = w.mem->must_take(2 * kGuard + cc.bytes, w.rng);
  uint8_t* dst = region + kGuard;
  const std::string what = "worker " + std::to_string(w.id) + ", problem " + std::to_string(index) + ": " +
                           describe(cc) + ", src at arena + " + std::to_string(w.mem->offset(src)) +
                           ", dst at arena + " + std::to_string(w.mem->offset(dst));
  fill_source<<<grid_for(cc.bytes), kBlock, 0, w.stream>>>(src, cc.bytes, seed32(), cc.salt);
  ok(cudaGetLastError(), "fill_source");
  poison_copy<<<grid_for(cc.bytes + 2 * kGuard), kBlock, 0, w.stream>>>(region, cc.bytes, seed32(), cc.salt);
  ok(cudaGetLastError(), "poison_copy");
  try {
    ok(cc.two_d ? hopper::kernels::stream_copy_2d(dst, src, cc.bytes, cc.cfg, w.stream)
                : hopper::kernels::stream_copy_1d(dst, src, cc.bytes, cc.cfg, w.stream),
       "stream_copy");
  } catch (const std::invalid_argument& e) {
    if (!cc.preset) return copy_outcome::rejected;
    ADD_FAILURE() << "the launcher rejected its default configuration: " << e.what() << "\n  " << what << "\n  "
                  << replay();
    st.add(false, double(cc.bytes), std::to_string(cc.bytes) + " bytes", 0, kind_of(cc));
    return copy_outcome::checked;
  }
  const verdict v = checked(
      w,
      [&] {
        check_copy<<<grid_for(cc.bytes + 2 * kGuard), kBlock, 0, w.stream>>>(region, cc.bytes, seed32(), cc.salt,
                                                                             w.d_verdict);
      },
      what);
  const double ratio = double(v.wrong + v.unwritten + v.outside) / double(cc.bytes);
  if (!clean(v) && may_report()) {
    const int64_t at = int64_t(~v.first_bad) - int64_t(kGuard);  // negative: before dst
    ADD_FAILURE() << "wrong copy: " << v.wrong << " bytes wrong, " << v.unwritten << " never written, " << v.outside
                  << " guard bytes overwritten; first at dst + " << at << " (the destination is [0, " << cc.bytes
                  << "))\n  " << what << "\n  " << replay();
  }
  st.add(clean(v), double(cc.bytes), std::to_string(cc.bytes) + " bytes" + (cc.two_d ? " (2-D)" : " (1-D)"), ratio,
         kind_of(cc));
  return copy_outcome::checked;
}

// Draws copies until one is run (random configurations may be rejected and drawn again).
void one_copy(worker& w, phase_stats& st, uint32_t salt, int64_t index) {
  for (;;) {
    const copy_case cc = draw_copy(w.rng, salt);
    copy_outcome o = copy_outcome::rejected;
    naming([&] { o = run_copy(w, cc, st, index); }, [&] { return describe(cc); });
    if (o == copy_outcome::checked) return;
    ++st.kinds["random config rejected (not run)"];
  }
}

void one_gemm(worker& w, phase_stats& st, size_t cap, uint32_t salt, int64_t index) {
  const gemm_case gc = draw_gemm(w.rng, cap, salt);
  naming([&] { run_gemm(w, gc, st, index); }, [&] { return describe(gc); });
}

// The salt of a worker's problem: unique over workers and problems.
uint32_t salt_of(const worker& w, int64_t index) { return (uint32_t(w.id) << 26) ^ uint32_t(index); }

}  // namespace

// ---- single stream ---------------------------------------------------------------------------------

TEST(SoakGemm, RandomProblemsAgreeWithCublas) {
  HOPPER_REQUIRE_SM90();
  const phase_clock clock(kGemmShare * budget_seconds());
  clock.announce("gemm");
  phase_stats st;
  std::string error;
  try {
    worker w(0, kGemmCap + kReserve, 1);
    while (clock.more(st.run)) one_gemm(w, st, kGemmCap, salt_of(w, st.run), st.run);
  } catch (const std::exception& e) {
    error = e.what();
  }
  summary("gemm", st, clock.elapsed());
  ASSERT_EQ(error, "") << replay();
  EXPECT_EQ(st.correct, st.run) << replay();
  EXPECT_GE(st.run, kMinProblems);
}

TEST(SoakCopy, RandomCopiesMatchAndKeepTheirGuards) {
  HOPPER_REQUIRE_SM90();
  const phase_clock clock(kCopyShare * budget_seconds());
  clock.announce("copy");
  phase_stats st;
  std::string error;
  try {
    worker w(0, 2 * kMaxCopy + kReserve, 2);
    while (clock.more(st.run)) one_copy(w, st, salt_of(w, st.run), st.run);
  } catch (const std::exception& e) {
    error = e.what();
  }
  summary("copy", st, clock.elapsed());
  ASSERT_EQ(error, "") << replay();
  EXPECT_EQ(st.correct, st.run) << replay();
  EXPECT_GE(st.run, kMinProblems);
}

// ---- several host threads --------------------------------------------------------------------------

// kThreads threads, each with its own stream, cuBLAS handle and arena, draw GEMMs and copies at
// once: plans are built while other threads' kernels run, kernels of different plans and copies
// share the device.
TEST(SoakThreads, GemmsAndCopiesFromSeveralThreadsAtOnce) {
  HOPPER_REQUIRE_SM90();
  const phase_clock clock(kThreadShare * budget_seconds());
  clock.announce("threads");
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false};
  std::vector<phase_stats> gemm(kThreads), copy(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      try {
        worker w(t, kThreadGemmCap + kReserve, 100 + uint64_t(t));
        for (int64_t i = 0; !stop && clock.more(done.load()); ++i, ++done) {
          if (coin(w.rng))
            one_gemm(w, gemm[size_t(t)], kThreadGemmCap, salt_of(w, i), i);
          else
            one_copy(w, copy[size_t(t)], salt_of(w, i), i);
        }
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
        stop = true;
      }
    });
  for (std::thread& th : pool) th.join();
  phase_stats g, c;
  for (int t = 0; t < kThreads; ++t) g.merge(gemm[size_t(t)]), c.merge(copy[size_t(t)]);
  summary("threads gemm", g, clock.elapsed());
  summary("threads copy", c, clock.elapsed());
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[size_t(t)], "") << "thread " << t << "; " << replay();
  EXPECT_EQ(g.correct, g.run) << replay();
  EXPECT_EQ(c.correct, c.run) << replay();
  EXPECT_GE(g.run + c.run, kMinProblems);
  EXPECT_GT(g.run, 0);
  EXPECT_GT(c.run, 0);
}

namespace {

constexpr int kSharedRounds = 8;

gemm_case shared_case(int64_t M, int64_t N, int64_t K, major a, major b, out_type o, uint32_t salt) {
  gemm_case c;
  c.p.M = M, c.p.N = N, c.p.K = K, c.p.a_major = a, c.p.b_major = b, c.p.out = o;
  c.integers = (salt & 1u) != 0;
  c.own_workspace = false;
  c.salt = salt;
  return c;
}

config forced(int bn, int cluster_m, int splits, bool stream_k) {
  config c;
  c.bn = bn;
  c.stages = bn == 256 ? 4 : 6;
  c.cluster_m = cluster_m;
  c.cluster_n = 1;
  c.splits = splits;
  c.stream_k = stream_k;
  return c;
}

// Starts kThreads threads running body(t) together, once all have been created; joins them.
template <class F>
void all_at_once(F&& body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      body(t);
    });
  for (std::thread& th : pool) th.join();
}

}  // namespace

// The rule in this file's header, tested: one plan made once (external_workspace), copied by every
// thread, each copy bound to that thread's operands and run with its own workspace, all threads at
// once on their own streams; split-K, stream-K and the rule's own configuration. Then one plan
// without a workspace whose const run(stream) every thread calls at once, into its one C.
TEST(SoakThreads, SharedPlanCopiesRunAtOnce) {
  HOPPER_REQUIRE_SM90();
  const phase_clock clock(0);
  std::printf("soak shared-plan: seed %s (HOPPER_SEED replays), %d rounds per thread and problem\n",
              seed_text().c_str(), kSharedRounds);
  const config split_k = forced(128, 2, 3, false), stream_k = forced(256, 2, 1, true);
  struct shared_problem {
    gemm_case gc;
    const config* cfg;  // null: the rule's
    const char* name;
  };
  const shared_problem problems[] = {
      {shared_case(1000, 1032, 3000, major::k, major::mn, out_type::bf16, 1), &split_k, "split-K"},
      {shared_case(3000, 3000, 1000, major::mn, major::k, out_type::f32, 2), &stream_k, "stream-K"},
      {shared_case(2000, 1504, 700, major::mn, major::mn, out_type::bf16, 3), nullptr, "the rule's"},
  };
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  std::vector<std::unique_ptr<worker>> ws;
  std::vector<phase_stats> st(kThreads);
  std::vector<std::string> errors(kThreads);
  try {
    for (int t = 0; t < kThreads; ++t) ws.push_back(std::make_unique<worker>(t, 512 * kMiB, 200 + uint64_t(t)));
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  for (const shared_problem& sp : problems) {
    SCOPED_TRACE(sp.name);
    // Every thread's own operands (its own salt) and reference, queued on its stream.
    std::vector<gemm_case> cases(kThreads, sp.gc);
    std::vector<gemm_buffers> bufs(kThreads);
    std::unique_ptr<hopper::gemm::plan> shared;
    try {
      for (int t = 0; t < kThreads; ++t) {
        worker& w = *ws[size_t(t)];
        cases[size_t(t)].salt = sp.gc.salt * 16 + uint32_t(t);
        w.mem->reset();
        bufs[size_t(t)] = take_gemm_buffers(w, sp.gc.p);
        prepare_gemm(w, cases[size_t(t)], bufs[size_t(t)]);
      }
      shared = std::make_unique<hopper::gemm::plan>(sp.gc.p, bufs[0].a, bufs[0].b, bufs[0].c,
                                                    hopper::gemm::external_workspace, sp.cfg);
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    if (sp.cfg) EXPECT_GT(shared->workspace_bytes(), 0u) << "a forced " << sp.name << " plan needs a workspace";
    if (sp.cfg && sp.cfg->stream_k) EXPECT_GT(shared->stream_k_tiles(), 0) << "no stream-K tail";
    all_at_once([&](int t) {
      worker& w = *ws[size_t(t)];
      const std::string what = "worker " + std::to_string(t) + ", shared " + sp.name +
                               " plan: " + describe(cases[size_t(t)]) + "\n  " + describe(*shared);
      try {
        hopper::gemm::plan mine = *shared;  // a copy: no CUDA call; bind() is this thread's first
        mine.bind(bufs[size_t(t)].a, bufs[size_t(t)].b, bufs[size_t(t)].c);
        void* space = nullptr;
        if (mine.workspace_bytes() > 0) {
          space = w.mem->must_take(mine.workspace_bytes(), w.rng);
          ok(cudaMemsetAsync(space, 0, mine.workspace_bytes(), w.stream), "cudaMemsetAsync(workspace)");
        }
        for (int r = 0; r < kSharedRounds; ++r) {
          poison_c(w, sp.gc.p, bufs[size_t(t)]);
          ok(mine.run(w.stream, space), "plan::run");
          const std::string run = what + ", run " + std::to_string(r);
          const verdict v = check_c(w, cases[size_t(t)], bufs[size_t(t)], run);
          note(st[size_t(t)], cases[size_t(t)], v);
          st[size_t(t)].add(judge(v, cases[size_t(t)], bufs[size_t(t)], run), sp.gc.p.flops(), shape_of(sp.gc.p),
                            worst_of(v), std::string(sp.name) + ", copies");
        }
      } catch (const std::exception& e) {
        errors[size_t(t)] += std::string(e.what()) + "\n  during " + what + "\n";
      }
    });
  }
  // One plan without a workspace, its const run(stream) from every thread at once: the launches
  // all write the same C, which must come out right.
  const gemm_case one = shared_case(1536, 1024, 520, major::k, major::k, out_type::bf16, 4);
  const config whole = forced(256, 2, 1, false);
  worker& w0 = *ws[0];
  try {
    w0.mem->reset();
    const gemm_buffers d = take_gemm_buffers(w0, one.p);
    prepare_gemm(w0, one, d);
    const hopper::gemm::plan g(one.p, d.a, d.b, d.c, &whole);
    ASSERT_EQ(g.workspace_bytes(), 0u) << "whole tiles need no workspace";
    poison_c(w0, one.p, d);
    const std::string what = "shared const plan: " + describe(one) + "\n  " + describe(g);
    wait(w0.stream, what + ", setup");
    all_at_once([&](int t) {
      worker& w = *ws[size_t(t)];
      try {
        for (int r = 0; r < kSharedRounds; ++r) ok(g.run(w.stream), "plan::run");
        wait(w.stream, what + ", thread " + std::to_string(t));
      } catch (const std::exception& e) {
        errors[size_t(t)] += std::string(e.what()) + "\n  during " + what + "\n";
      }
    });
    const verdict v = check_c(w0, one, d, what);
    note(st[0], one, v);
    st[0].add(judge(v, one, d, what), one.p.flops(), shape_of(one.p), worst_of(v), "no workspace, one const plan");
  } catch (const std::exception& e) {
    errors[0] += e.what();
  }
  phase_stats all;
  for (int t = 0; t < kThreads; ++t) all.merge(st[size_t(t)]);
  summary("shared-plan", all, clock.elapsed());
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[size_t(t)], "") << "thread " << t << "; " << replay();
  EXPECT_EQ(all.correct, all.run) << replay();
  EXPECT_EQ(all.run, int64_t(std::size(problems)) * kThreads * kSharedRounds + 1);
}
