// The target contract on the device's side: the probe body (tests/support/target_probe.hpp)
// instantiated for hopper::device_target and built for sm_90a; the model's twin is
// tests/host/target_contract.cpp. The kernel runs the probe only when asked to (never here: its
// waits would not complete); the test checks that it builds, launches and returns cleanly.
#include <hopper/async.cuh>
#include <hopper/target/device_target.cuh>

#include "gpu_test.hpp"
#include "target_probe.hpp"

namespace {

__global__ void probe_kernel(const __grid_constant__ hopper::tensor_map map, uint8_t* g, int run, int* ran) {
  __shared__ alignas(1024) uint8_t s[2048];
  __shared__ uint64_t b;
  hopper::device_target t;
  if (run == 0x5eed) hopper::probe::target_probe(t, b, hopper::smem<uint8_t>(s), hopper::gmem<uint8_t>(g), map);
  if (threadIdx.x == 0) atomicAdd(ran, 1);
}

TEST(TargetContract, DeviceTargetBuildsTheProbe) {
  if (!hopper_test::has_sm90()) GTEST_SKIP() << hopper_test::sm90_missing_reason();
  int* ran = nullptr;
  ASSERT_EQ(cudaMalloc(&ran, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(ran, 0, sizeof(int)), cudaSuccess);
  hopper::tensor_map map{};
  probe_kernel<<<4, 128>>>(map, nullptr, 0, ran);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  int host = 0;
  ASSERT_EQ(cudaMemcpy(&host, ran, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host, 4);
  ASSERT_EQ(cudaFree(ran), cudaSuccess);
}

}  // namespace
