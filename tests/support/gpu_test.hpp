// Shared by every GPU test: skip with a printed reason where no sm_90 device exists, check
// every CUDA return code, draw fresh random inputs, poison outputs.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hopper/hd.hpp"

namespace hopper_test {

// Why this machine cannot run sm_90a code, or an empty string when it can.
inline std::string sm90_missing_reason() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorString(e);
  }
  if (count == 0) return "no CUDA device";
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "cudaGetDeviceProperties failed";
  if (p.major != 9 || p.minor != 0) return "device 0 is sm_" + std::to_string(p.major * 10 + p.minor) + ", not sm_90";
  return {};
}

inline bool has_sm90() {
  static const bool yes = sm90_missing_reason().empty();
  return yes;
}

// A fresh seed per run (printed, so a failure can be replayed with HOPPER_SEED=...).
inline uint64_t fresh_seed() {
  if (const char* s = std::getenv("HOPPER_SEED")) return std::strtoull(s, nullptr, 0);
  static const uint64_t seed = std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32);
  return seed;
}

// A cheap hash of three words, the same on host and device: the data a kernel writes is a
// function of (seed, round, index), so the host can compute what every reader must see.
HOPPER_HD uint32_t mix(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu ^ (c + 0x165667b1u) * 0xc2b2ae35u;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  return h;
}

}  // namespace hopper_test

// Skip the current test, printing why, unless an sm_90 device is present.
#define HOPPER_REQUIRE_SM90()                                          \
  do {                                                                 \
    const std::string why_ = ::hopper_test::sm90_missing_reason();     \
    if (!why_.empty()) GTEST_SKIP() << "needs an sm_90 GPU: " << why_; \
  } while (0)

// Fail the test (returning from it) on any CUDA error, naming the call.
#define CUDA_OK(expr)                                                          \
  do {                                                                         \
    cudaError_t err_ = (expr);                                                 \
    ASSERT_EQ(err_, cudaSuccess) << #expr << ": " << cudaGetErrorString(err_); \
  } while (0)

// After a launch: both the launch error and the kernel's completion.
#define CUDA_LAUNCH_OK()              \
  do {                                \
    CUDA_OK(cudaGetLastError());      \
    CUDA_OK(cudaDeviceSynchronize()); \
  } while (0)
