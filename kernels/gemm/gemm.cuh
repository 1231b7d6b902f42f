// Host side of the GEMM: validate the problem, choose the tile configuration (gemm_config.hpp),
// encode the three tensor maps once, and launch the persistent kernel on a cluster grid.
//
//   hopper::gemm::plan g(problem, A, B, C);   // throws std::invalid_argument on bad input
//   g.run(stream);                            // any number of times
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "hopper/tensor_map.hpp"
#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/gemm_kernel.cuh"
#include "kernels/gemm/tile_scheduler.hpp"

namespace hopper::gemm {

namespace detail {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("hopper::gemm: ") + what + ": " + cudaGetErrorString(e));
}

// How a plan launches, beyond the kernel's parameters.
struct launch_options {
  int num_sms;
  cudaStream_t stream;
  bool programmatic;  // programmatic dependent launch (griddepcontrol, see the kernel)
};

// Launches one instantiation: opt in to its shared memory, size the persistent grid to the
// clusters that can be resident at once, launch with the cluster dimension (and, when asked,
// allowed to start under the tail of the previous grid in the stream).
template <class T>
cudaError_t launch(const hopper::tensor_map& a, const hopper::tensor_map& b, const hopper::tensor_map& c,
                   const kernel_params& kp, const launch_options& o, int* grid_out) {
  auto kern = gemm_kernel<T>;
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(T::SMEM));
  if (e != cudaSuccess) return e;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = T::CLUSTER;  // 1-D: rank = CLUSTER_M * rn + rm
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = o.programmatic ? 1 : 0;
  cfg.blockDim = dim3(T::THREADS);
  cfg.dynamicSmemBytes = T::SMEM;
  cfg.stream = o.stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;  // the occupancy query takes the cluster shape only
  // How many clusters fit at once (GPCs need not split evenly into pairs of SMs).
  static int resident = 0;
  if (resident == 0) {
    cfg.gridDim = dim3(o.num_sms / T::CLUSTER * T::CLUSTER);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
      (void)cudaGetLastError();
      n = o.num_sms / T::CLUSTER;
    }
    resident = n;
  }
  const int clusters = std::min(resident, kp.sched.total() * kp.splits);
  cfg.gridDim = dim3(clusters * T::CLUSTER);
  if (grid_out) *grid_out = clusters * T::CLUSTER;
  cfg.numAttrs = 2;
  return cudaLaunchKernelEx(&cfg, kern, a, b, c, kp);
}

template <int BN, int STAGES, int CM, int CN, class OutT, bool PP>
cudaError_t launch_layouts(bool a_mn, bool b_mn, const hopper::tensor_map& a, const hopper::tensor_map& b,
                           const hopper::tensor_map& c, const kernel_params& kp, const launch_options& o,
                           int* grid) {
  if (!a_mn && !b_mn) return launch<kernel_traits<BN, STAGES, CM, CN, OutT, false, false, PP>>(a, b, c, kp, o, grid);
  if (!a_mn && b_mn) return launch<kernel_traits<BN, STAGES, CM, CN, OutT, false, true, PP>>(a, b, c, kp, o, grid);
  if (a_mn && !b_mn) return launch<kernel_traits<BN, STAGES, CM, CN, OutT, true, false, PP>>(a, b, c, kp, o, grid);
  return launch<kernel_traits<BN, STAGES, CM, CN, OutT, true, true, PP>>(a, b, c, kp, o, grid);
}

// Finds `cf` in the instances table (gemm_config.hpp) and launches that instantiation; the plan
// has already rejected configurations that are not in the table.
template <class OutT, size_t I = 0>
cudaError_t launch_config(const config& cf, bool a_mn, bool b_mn, const hopper::tensor_map& a,
                          const hopper::tensor_map& b, const hopper::tensor_map& c, const kernel_params& kp,
                          const launch_options& o, int* grid) {
  if constexpr (I == sizeof(instances) / sizeof(instances[0])) {
    return cudaErrorInvalidValue;
  } else {
    constexpr instance in = instances[I];
    if (matches(cf, in))
      return launch_layouts<in.bn, in.stages, in.cluster_m, in.cluster_n, OutT, in.pingpong>(a_mn, b_mn, a, b, c,
                                                                                          kp, o, grid);
    return launch_config<OutT, I + 1>(cf, a_mn, b_mn, a, b, c, kp, o, grid);
  }
}

}  // namespace detail

class plan {
 public:
  // Validates (std::invalid_argument naming the bad value), chooses the configuration for this
  // device (or takes `forced`, checked against the instantiated ones) and encodes the tensor maps.
  plan(const problem& p, const void* A, const void* B, void* C, const config* forced = nullptr)
      : p_(p) {
    validate(p, A, B, C);
    int dev = 0;
    detail::cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
    detail::cuda_check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev),
                       "cudaDeviceGetAttribute(MultiProcessorCount)");
    cfg_ = forced ? *forced : choose_config(p, sms_);
    if (!instantiated(cfg_) || cfg_.group_m < 1) {
      std::string list;
      for (const instance& in : instances)
        list += std::string(list.empty() ? "" : ", ") + "128 x " + std::to_string(in.bn) + " / " +
                std::to_string(in.stages) + " stages / cluster " + std::to_string(in.cluster_m) + " x " +
                std::to_string(in.cluster_n) + (in.pingpong ? " ping-pong" : "");
      detail::fail("config bm x bn x bk = " + std::to_string(cfg_.bm) + " x " + std::to_string(cfg_.bn) + " x " +
                   std::to_string(cfg_.bk) + ", stages " + std::to_string(cfg_.stages) + ", cluster " +
                   std::to_string(cfg_.cluster_m) + " x " + std::to_string(cfg_.cluster_n) +
                   (cfg_.pingpong ? ", ping-pong" : "") + ", group_m " + std::to_string(cfg_.group_m) +
                   " is not instantiated (bk 64, group_m >= 1, and one of: " + list + ")");
    }
    if (cfg_.pingpong && (cfg_.bn != 128 || cfg_.splits != 1))
      detail::fail("config pingpong with bn = " + std::to_string(cfg_.bn) + ", splits = " + std::to_string(cfg_.splits) +
                   " is not instantiated (ping-pong runs 128 x 128 tiles without split-K)");
    const int64_t k_blocks = detail::ceil_div(p.K, cfg_.bk);
    if (cfg_.splits < 1 || cfg_.splits > 4 || cfg_.splits > k_blocks)
      detail::fail("config splits = " + std::to_string(cfg_.splits) + " must be 1..4 and at most the " +
                   std::to_string(k_blocks) + " k-blocks of K = " + std::to_string(p.K));
    const auto u = [](int64_t v) { return uint64_t(v); };
    const int64_t lda = p.lda_or_packed(), ldb = p.ldb_or_packed(), ldc = p.ldc_or_packed();
    // A: K-major boxes are 64 (K) x 128 / cluster_n (M): each CTA of a cluster row loads its
    // share; MN-major boxes are 64 (M) x 64 (K), two per tile.
    if (p.a_major == major::k)
      a_ = tensor_map::tiled(element::bf16, A).dims({u(p.K), u(p.M)}).strides({u(lda * 2)})
               .box({64, uint32_t(cfg_.bm / cfg_.cluster_n)}).swizzle(swizzle::b128).l2_promotion(l2_promotion::b256).build();
    else
      a_ = tensor_map::tiled(element::bf16, A).dims({u(p.M), u(p.K)}).strides({u(lda * 2)})
               .box({64, 64}).swizzle(swizzle::b128).l2_promotion(l2_promotion::b256).build();
    // B: K-major boxes are 64 (K) x bn / cluster_m (N): each CTA of a cluster column loads its
    // share; MN-major boxes are 64 (N) x 64 (K).
    if (p.b_major == major::k)
      b_ = tensor_map::tiled(element::bf16, B).dims({u(p.K), u(p.N)}).strides({u(ldb * 2)})
               .box({64, uint32_t(cfg_.bn / cfg_.cluster_m)}).swizzle(swizzle::b128)
               .l2_promotion(l2_promotion::b256).build();
    else
      b_ = tensor_map::tiled(element::bf16, B).dims({u(p.N), u(p.K)}).strides({u(ldb * 2)})
               .box({64, 64}).swizzle(swizzle::b128).l2_promotion(l2_promotion::b256).build();
    // C: boxes of 64 rows x 128 bytes, written from 128B-swizzled shared memory.
    const element ce = p.out == out_type::bf16 ? element::bf16 : element::f32;
    c_ = tensor_map::tiled(ce, C).dims({u(p.N), u(p.M)}).strides({u(ldc * out_bytes(p.out))})
             .box({uint32_t(128 / out_bytes(p.out)), 64}).swizzle(swizzle::b128).build();
    const int tiles_m = int(detail::ceil_div(p.M, cfg_.bm));
    kp_.M = int(p.M);
    kp_.N = int(p.N);
    kp_.K = int(p.K);
    kp_.sched.cluster_rows = int(detail::ceil_div(tiles_m, cfg_.cluster_m));
    kp_.sched.cluster_cols = int(detail::ceil_div(detail::ceil_div(p.N, cfg_.bn), cfg_.cluster_n));
    kp_.sched.group = cfg_.group_m;
    kp_.splits = cfg_.splits;
    kp_.partial = nullptr;
    kp_.counters = nullptr;
    if (cfg_.splits > 1) {
      // One fp32 partial per split of every CTA tile, and one counter per consumer warpgroup of
      // every CTA tile (zeroed here; the kernel leaves them zero).
      const size_t cta_tiles = size_t(kp_.sched.total()) * size_t(cfg_.cluster_size());
      const size_t partial_bytes = cta_tiles * size_t(cfg_.splits) * size_t(cfg_.bm) * size_t(cfg_.bn) * 4;
      const size_t counter_bytes = cta_tiles * 2 * sizeof(int);
      void* w = nullptr;
      detail::cuda_check(cudaMalloc(&w, partial_bytes + counter_bytes), "cudaMalloc(split-K workspace)");
      workspace_ = std::shared_ptr<void>(w, [](void* q) { cudaFree(q); });
      detail::cuda_check(cudaMemset(static_cast<char*>(w) + partial_bytes, 0, counter_bytes),
                         "cudaMemset(split-K counters)");
      detail::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      kp_.partial = static_cast<float4*>(w);
      kp_.counters = reinterpret_cast<int*>(static_cast<char*>(w) + partial_bytes);
    }
  }

  // Launches the GEMM on `stream`; returns the launch error (asynchronous errors appear later).
  // With split-K (cfg().splits > 1) the plan's workspace is reused: one run of a plan at a time.
  cudaError_t run(cudaStream_t stream = 0) const {
    const bool a_mn = p_.a_major == major::mn, b_mn = p_.b_major == major::mn;
    const detail::launch_options o{sms_, stream, programmatic_};
    if (p_.out == out_type::bf16) return detail::launch_config<__nv_bfloat16>(cfg_, a_mn, b_mn, a_, b_, c_, kp_, o, &grid_);
    return detail::launch_config<float>(cfg_, a_mn, b_mn, a_, b_, c_, kp_, o, &grid_);
  }

  // Programmatic dependent launch (on by default): the kernel may be scheduled while the previous
  // kernel in the stream finishes, runs its prologue, and waits (griddepcontrol.wait) for that
  // kernel's completion and memory before it reads A and B or writes C. The result is the same
  // as with plain stream order; back-to-back launches lose the gap between kernels.
  plan& programmatic_launch(bool on) {
    programmatic_ = on;
    return *this;
  }
  bool programmatic_launch() const { return programmatic_; }

  const config& cfg() const { return cfg_; }
  const problem& prob() const { return p_; }
  int grid() const { return grid_; }  // CTAs of the last launch

 private:
  problem p_;
  config cfg_;
  int sms_ = 0;
  mutable int grid_ = 0;
  bool programmatic_ = true;
  hopper::tensor_map a_{}, b_{}, c_{};
  kernel_params kp_{};
  std::shared_ptr<void> workspace_;  // split-K partials and counters (shared by copies of the plan)
};

}  // namespace hopper::gemm
