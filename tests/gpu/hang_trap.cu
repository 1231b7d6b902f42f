// Nothing hangs silently: with HOPPER_DEBUG_WAITS a wait on a parity that never
// completes must print the barrier's shared offset, the parity, the block and the thread, and
// trap. The hang is planted in a child process (this executable re-run with a filter and an
// environment flag), so the trap cannot poison the parent's CUDA context; the parent kills the
// child if it has not ended after a deadline, and fails: that is the silent hang this forbids.
#ifndef HOPPER_DEBUG_WAITS
#define HOPPER_DEBUG_WAITS 1
#endif
#define HOPPER_WAIT_TIMEOUT_NS 500000000ull  // 0.5 s: the planted wait must time out quickly

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>

#include <hopper/async.cuh>
#include "gpu_test.hpp"

namespace {

// Only block `hang_block`, thread `hang_thread` waits; everyone else leaves. Nobody arrives,
// so phase 0 never completes.
__global__ void planted_hang(unsigned hang_block, unsigned hang_thread) {
  __shared__ uint64_t bar_word;
  hopper::mbarrier bar(bar_word);
  if (threadIdx.x == 0) bar.init(hopper::arrival_count(1));
  __syncthreads();
  if (blockIdx.x != hang_block || threadIdx.x != hang_thread) return;
  printf("planted: barrier at shared offset 0x%x\n", bar.smem_offset());
  bar.wait(hopper::parity(0));
  printf("planted: the wait returned, which it must not\n");
}

// The child's body: launch the hang and report how the launch ended.
TEST(HangTrap, DISABLED_ChildPlantsHang) {
  if (!std::getenv("HOPPER_HANG_CHILD")) GTEST_SKIP() << "runs only as the child of HangTrap.TrapsWithMessage";
  HOPPER_REQUIRE_SM90();
  planted_hang<<<2, 64>>>(1, 37);
  CUDA_OK(cudaGetLastError());
  const cudaError_t e = cudaDeviceSynchronize();
  fflush(stdout);
  printf("child: kernel ended with %s\n", cudaGetErrorName(e));
  fflush(stdout);
  std::_Exit(e == cudaSuccess ? 0 : 3);
}

TEST(HangTrap, TrapsWithMessage) {
  HOPPER_REQUIRE_SM90();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // child: exec this binary afresh (no CUDA state crosses the fork)
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    setenv("HOPPER_HANG_CHILD", "1", 1);
    execl("/proc/self/exe", "hang_trap_child", "--gtest_filter=HangTrap.DISABLED_ChildPlantsHang",
          "--gtest_also_run_disabled_tests", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool killed = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, int(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // child closed its output: it ended
    out.append(buf, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_FALSE(killed) << "the planted wait hung for 60 s instead of trapping; child output:\n" << out;
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child succeeded; output:\n" << out;
  EXPECT_EQ(out.find("the wait returned"), std::string::npos) << out;

  std::smatch planted, report;
  ASSERT_TRUE(std::regex_search(out, planted, std::regex("planted: barrier at shared offset (0x[0-9a-f]+)")))
      << "the child never reached the wait; output:\n"
      << out;
  ASSERT_TRUE(std::regex_search(
      out, report,
      std::regex(R"(hopper: mbarrier wait timed out: barrier at shared offset (0x[0-9a-f]+), parity 0, )"
                 R"(block \(1,0,0\), thread \(37,0,0\))")))
      << "no timeout report naming barrier, parity 0, block (1,0,0), thread (37,0,0); output:\n"
      << out;
  EXPECT_EQ(planted[1].str(), report[1].str()) << "the report names another barrier";
  EXPECT_NE(out.find("child: kernel ended with cuda"), std::string::npos) << out;
}

}  // namespace
