// The persistent tile order, shared by the producer and the consumers of a CTA (they must walk
// the same tiles in the same order) and by host tests. Plain C++ usable on both sides.
//
// The output is cut into cluster tiles of (cluster_m * 128) x (cluster_n * bn); cluster c walks tiles c,
// c + clusters, c + 2*clusters, ... Within that index space tiles are grouped: `group` cluster-rows
// are swept column by column before moving on, so the clusters working at one time share their
// A rows and B columns in L2 instead of streaming all of B for every row of tiles.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define HOPPER_GEMM_HD __host__ __device__ __forceinline__
#else
#define HOPPER_GEMM_HD inline
#endif

namespace hopper::gemm {

struct tile_scheduler {
  int cluster_rows;  // ceil(tiles_m / cluster_m)
  int cluster_cols;  // ceil(tiles_n / cluster_n)
  int group;         // cluster-rows per group, >= 1

  HOPPER_GEMM_HD int total() const { return cluster_rows * cluster_cols; }

  // Cluster tile t -> (cluster-row, column) in the grouped order.
  HOPPER_GEMM_HD void coords(int t, int& cluster_row, int& cluster_col) const {
    const int per_group = group * cluster_cols;
    const int g = t / per_group;
    const int first = g * group;
    const int rows = cluster_rows - first < group ? cluster_rows - first : group;
    const int r = t - g * per_group;
    cluster_row = first + r % rows;
    cluster_col = r / rows;
  }
};

// Split-K: the k-blocks [begin, end) of split s of `splits` over `k_blocks`, balanced and never
// empty when splits <= k_blocks; the splits of a tile cover [0, k_blocks) exactly once.
struct k_range {
  int begin, end;
};
HOPPER_GEMM_HD k_range split_k_range(int k_blocks, int splits, int s) {
  return {int(int64_t(s) * k_blocks / splits), int(int64_t(s + 1) * k_blocks / splits)};
}

}  // namespace hopper::gemm
