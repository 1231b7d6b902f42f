// The bug zoo on the H200: the bodies of tests/zoo/zoo_bodies.hpp, the very source the model runs
// in tests/host/bug_zoo_target.cpp, instantiated with hopper::device_target. Every case launches
// HOPPER_ZOO_INSTANCES independent copies of its program (default 64) HOPPER_ZOO_LAUNCHES times
// (default 3), each launch with fresh random inputs and poisoned outputs, and says what it saw:
// correct output, wrong output (how many words), or a kernel that trapped. Waits are bounded
// (HOPPER_DEBUG_WAITS, 2 s): a bug that deadlocks traps with the barrier named instead of hanging.
// Twins and the correct protocols must produce correct output; a bug's outcome is printed, never
// asserted (the hardware may not show it: a bug may be latent).
//
// A trap leaves the CUDA context unusable, so each case runs in a process of its own: with
// HOPPER_ZOO_CASE=<name> the process runs that one case in place (what tools/zoo_sanitizer.sh
// does, one case per process under each compute-sanitizer tool); without it, each case's test
// runs this executable again as a child with HOPPER_ZOO_CASE set, under a deadline, and reads
// the child's verdict line:
//   ZOO <case> <role> <result> wrong=<words>/<checked> <detail>
// result: correct, wrong (some output word differs), trapped (the kernel ended in __trap: a
// bounded wait timed out), error:NAME (the kernel failed otherwise), setup:NAME (a CUDA call
// around the kernel failed: a failure of the test, whatever the case).
// BugZooTable.List prints the cases (ZOOCASE <case> <role> <twin> <what>), no GPU needed.
#ifndef HOPPER_DEBUG_WAITS
#define HOPPER_DEBUG_WAITS 1
#endif
#ifndef HOPPER_WAIT_TIMEOUT_NS
#define HOPPER_WAIT_TIMEOUT_NS 2000000000ull  // 2 s: far beyond any wait of a correct case, sanitized too
#endif

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "hopper/objects/views.cuh"
#include "hopper/target/device_target.cuh"
#include "tests/zoo/zoo_bodies.hpp"

namespace {

namespace zoo = hopper::zoo;
using hopper::device_target;

// ---- the kernels: each declares its shared memory and runs its body with the device target --

__global__ void ring_kernel(zoo::knobs k, const uint32_t* src, uint32_t* out) {
  extern __shared__ __align__(128) uint32_t tiles[];
  __shared__ __align__(8) uint64_t full[zoo::kMaxStages], empty[zoo::kMaxStages];
  device_target t;
  zoo::ring_body(t, k, zoo::ring_smem<device_target>{hopper::smem<uint32_t>(tiles), full, empty},
                 hopper::gmem<const uint32_t>(src), hopper::gmem<uint32_t>(out));
}

__global__ void store_kernel(zoo::knobs k, const uint32_t* src, uint32_t* out) {
  extern __shared__ __align__(128) uint32_t tile[];
  device_target t;
  zoo::store_body(t, k, hopper::smem<uint32_t>(tile), hopper::gmem<const uint32_t>(src), hopper::gmem<uint32_t>(out));
}

__global__ void token_wait_kernel(zoo::knobs k, const uint32_t* src, uint32_t* out) {
  __shared__ __align__(8) uint64_t done;
  device_target t;
  zoo::token_wait_body(t, k, done, hopper::gmem<const uint32_t>(src), hopper::gmem<uint32_t>(out));
}

// arriver_ahead and twice_in_phase: a barrier and 2 x iters words of shared memory.
__global__ void protocol_kernel(zoo::knobs k, const uint32_t* src, uint32_t* out) {
  extern __shared__ __align__(16) uint32_t x[];
  __shared__ __align__(8) uint64_t b;
  device_target t;
  const zoo::protocol_mem<device_target> m{&b, hopper::smem<uint32_t>(x), hopper::gmem<const uint32_t>(src),
                                           hopper::gmem<uint32_t>(out)};
  if (k.kind == zoo::body::arriver_ahead)
    zoo::arriver_ahead_body(t, k, m);
  else
    zoo::twice_in_phase_body(t, k, m);
}

using kernel_fn = void (*)(zoo::knobs, const uint32_t*, uint32_t*);

kernel_fn kernel_of(zoo::body b) {
  switch (b) {
    case zoo::body::ring:
      return ring_kernel;
    case zoo::body::store:
      return store_kernel;
    case zoo::body::token_wait:
      return token_wait_kernel;
    case zoo::body::arriver_ahead:
    case zoo::body::twice_in_phase:
      return protocol_kernel;
  }
  return nullptr;
}

// ---- one case, in this process --------------------------------------------------------------

uint32_t env_count(const char* name, uint32_t fallback, uint32_t most) {
  const char* s = std::getenv(name);
  if (!s || !*s) return fallback;
  const unsigned long v = std::strtoul(s, nullptr, 0);
  return v >= 1 && v <= most ? uint32_t(v) : fallback;
}

struct gpu_result {
  std::string result;  // correct, wrong, trapped, error:NAME (the kernel failed), setup:NAME
  size_t wrong = 0, checked = 0;
  std::string detail;
  bool setup_failed = false;  // a CUDA call outside the kernel's own execution failed
};

// What a launch's execution error means: __trap (a bounded wait that timed out) ends the kernel
// with an unspecified launch failure or an illegal instruction; anything else is named.
std::string failure_of(cudaError_t e) {
  if (e == cudaErrorLaunchFailure || e == cudaErrorIllegalInstruction) return "trapped";
  return std::string("error:") + cudaGetErrorName(e);
}

gpu_result run_on_gpu(const zoo::zoo_case& c, uint64_t seed) {
  const uint32_t instances = env_count("HOPPER_ZOO_INSTANCES", 64, 1024);
  const uint32_t launches = env_count("HOPPER_ZOO_LAUNCHES", 3, 1000);
  const zoo::layout l = zoo::layout_of(c.k);
  const size_t src_words = size_t(l.src_words) * instances, out_words = size_t(l.out_words) * instances;
  gpu_result r;
  std::ostringstream detail;
  detail << "seed=" << seed << " instances=" << instances << " launches=" << launches;
  uint32_t *d_src = nullptr, *d_out = nullptr;
  // A failing call outside the kernel: named in the result, which then counts as a setup failure.
  auto setup = [&](cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    r.result = std::string("setup:") + cudaGetErrorName(e);
    r.setup_failed = true;
    detail << " " << what << " failed";
    return false;
  };
  bool ok = setup(cudaMalloc(&d_src, src_words * 4), "cudaMalloc(src)") &&
            setup(cudaMalloc(&d_out, out_words * 4), "cudaMalloc(out)");
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> src(src_words), out(out_words);
  bool dead = false;  // the kernel failed: the context is gone
  for (uint32_t n = 0; ok && n < launches; ++n) {
    for (uint32_t& w : src) w = uint32_t(rng());
    ok = setup(cudaMemcpy(d_src, src.data(), src_words * 4, cudaMemcpyHostToDevice), "cudaMemcpy(src)") &&
         setup(cudaMemset(d_out, 0xA5, out_words * 4), "cudaMemset(out)");  // poison
    if (!ok) break;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(instances * l.ctas);
    cfg.blockDim = dim3(l.block);
    cfg.dynamicSmemBytes = l.smem_bytes;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = l.ctas;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = l.ctas > 1 ? 1 : 0;
    ok = setup(cudaLaunchKernelEx(&cfg, kernel_of(c.k.kind), c.k, static_cast<const uint32_t*>(d_src), d_out),
               "cudaLaunchKernelEx");
    if (!ok) break;
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      r.result = failure_of(e);
      detail << " launch " << n << ": " << cudaGetErrorName(e);
      dead = true;
      break;
    }
    ok = setup(cudaMemcpy(out.data(), d_out, out_words * 4, cudaMemcpyDeviceToHost), "cudaMemcpy(out)");
    if (!ok) break;
    for (uint32_t i = 0; i < instances; ++i) {
      const std::vector<uint32_t> want = zoo::expected_out(c.k, src.data() + size_t(i) * l.src_words);
      for (uint32_t w = 0; w < l.out_words; ++w) r.wrong += out[size_t(i) * l.out_words + w] != want[w];
      r.checked += l.out_words;
    }
  }
  if (!dead) {
    if (d_src) ok = setup(cudaFree(d_src), "cudaFree(src)") && ok;
    if (d_out) ok = setup(cudaFree(d_out), "cudaFree(out)") && ok;
  }
  if (r.result.empty()) r.result = r.wrong == 0 ? "correct" : "wrong";
  r.detail = detail.str();
  return r;
}

// ---- each case in a child process ----------------------------------------------------------

struct child_run {
  bool hung = false;
  int status = 0;
  std::string out;
};

// Runs this executable again with HOPPER_ZOO_CASE=name, filtered to that case's test, and
// collects its output; kills it after `seconds` (a hang: what bounded waits forbid).
child_run run_child(const std::string& name, int seconds) {
  child_run c;
  int fds[2];
  if (pipe(fds) != 0) {
    c.out = "pipe failed";
    return c;
  }
  const std::string filter = "--gtest_filter=Zoo/BugZoo.OnTheGpu/" + name;
  const pid_t pid = fork();
  if (pid < 0) {
    c.out = "fork failed";
    return c;
  }
  if (pid == 0) {  // the child: this binary afresh (no CUDA state crosses the fork)
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    setenv("HOPPER_ZOO_CASE", name.c_str(), 1);
    execl("/proc/self/exe", "gpu_bug_zoo_child", filter.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      c.hung = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, int(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the child closed its output: it ended
    c.out.append(buf, size_t(n));
  }
  close(fds[0]);
  waitpid(pid, &c.status, 0);
  return c;
}

// The child's verdict line for `name`, split at tabs (empty: none). It is looked for anywhere, not
// only at the start of a line: the driver flushes the kernel's printf text (the bounded waits'
// time-outs) into the same stdout when the trapped context ends, in pieces that may split one of
// its own lines around the verdict. The verdict itself is one write of under PIPE_BUF bytes, so it
// arrives whole.
std::vector<std::string> verdict_of(const std::string& out, const std::string& name) {
  const std::string mark = "ZOO\t" + name + "\t";
  const size_t at = out.find(mark);
  if (at == std::string::npos) return {};
  const size_t end = out.find('\n', at);
  std::vector<std::string> f;
  std::istringstream fs(out.substr(at, end == std::string::npos ? std::string::npos : end - at));
  std::string x;
  while (std::getline(fs, x, '\t')) f.push_back(x);
  return f;
}

class BugZoo : public ::testing::TestWithParam<std::string> {};

TEST_P(BugZoo, OnTheGpu) {
  const zoo::zoo_case& c = *zoo::find_case(GetParam());
  const char* selected = std::getenv("HOPPER_ZOO_CASE");
  const bool must_be_correct = c.kind != zoo::role::bug;
  if (selected && *selected) {  // one case, in this process
    if (c.name != selected) GTEST_SKIP() << "HOPPER_ZOO_CASE selects " << selected;
    HOPPER_REQUIRE_SM90();
    const gpu_result r = run_on_gpu(c, hopper_test::fresh_seed());
    std::printf("ZOO\t%s\t%s\t%s\twrong=%zu/%zu\t%s\n", c.name.c_str(), zoo::role_name(c.kind), r.result.c_str(),
                r.wrong, r.checked, r.detail.c_str());
    std::fflush(stdout);
    EXPECT_FALSE(r.setup_failed) << c.name << ": " << r.result << " (" << r.detail << ")";
    if (must_be_correct) EXPECT_EQ(r.result, "correct") << c.name << ": " << r.wrong << " wrong words, " << r.detail;
    if (r.result == "trapped" || r.result.rfind("error:", 0) == 0) {  // the kernel failed: the context is gone
      std::fflush(stdout);
      std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    return;
  }
  HOPPER_REQUIRE_SM90();
  const child_run ch = run_child(c.name, 120);
  ASSERT_FALSE(ch.hung) << c.name << " ran 120 s without ending: a wait that did not trap; output:\n" << ch.out;
  const std::vector<std::string> v = verdict_of(ch.out, c.name);
  ASSERT_GE(v.size(), 6u) << c.name << ": the child printed no verdict; output:\n" << ch.out;
  std::string result = v[3];
  // A wait that timed out says so before the trap: the trap is the bounded wait's.
  if (result != "trapped" && ch.out.find("hopper: mbarrier wait timed out") != std::string::npos)
    result = "trapped (" + result + ")";
  std::printf("SUMMARY bug_zoo %s %s: %s %s %s\n", c.name.c_str(), v[2].c_str(), result.c_str(), v[4].c_str(),
              v[5].c_str());
  if (must_be_correct) {
    EXPECT_EQ(result, "correct") << c.name << " must produce correct output; child output:\n" << ch.out;
    EXPECT_TRUE(WIFEXITED(ch.status) && WEXITSTATUS(ch.status) == 0) << c.name << ": the child failed:\n" << ch.out;
  } else {
    EXPECT_EQ(result.rfind("setup:", 0), std::string::npos)
        << c.name << ": a CUDA call outside the kernel failed; child output:\n"
        << ch.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, BugZoo, ::testing::ValuesIn(zoo::case_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The cases, for tools/zoo_sanitizer.sh: one line each, tab-separated.
TEST(BugZooTable, List) {
  for (const zoo::zoo_case& c : zoo::all_cases())
    std::printf("ZOOCASE\t%s\t%s\t%s\t%s\n", c.name.c_str(), zoo::role_name(c.kind),
                c.twin.empty() ? "-" : c.twin.c_str(), c.what.c_str());
  EXPECT_FALSE(zoo::all_cases().empty());
}

}  // namespace
