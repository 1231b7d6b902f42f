// What every benchmark in bench/ shares: the CUDA return-code check, the median of a series of
// timings, and main()'s frame (skip with a SUMMARY line where there is no CUDA device, register,
// run, shut down). Each benchmark prints its own headline RATIO / SUMMARY lines afterwards.
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

// A failed CUDA call ends the benchmark: a figure measured after an error would mean nothing.
#define BENCH_CUDA(x)                                                                         \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace hopper_bench {

// The median of `v` (the mean of the middle two for an even count); `v` must not be empty.
template <class T>
double median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? double(v[n / 2]) : 0.5 * (double(v[n / 2 - 1]) + double(v[n / 2]));
}

// main()'s frame. Without a CUDA device prints "SUMMARY <tag> skipped: no CUDA device" and
// returns false; otherwise calls `prepare` (setup and RegisterBenchmark calls), runs the
// benchmarks selected on the command line and returns true, for the caller's summary lines.
template <class Prepare>
bool run_benchmarks(int argc, char** argv, const char* tag, Prepare&& prepare) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SUMMARY %s skipped: no CUDA device\n", tag);
    return false;
  }
  prepare();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return true;
}

}  // namespace hopper_bench
