// The persistent tile order, shared by the producer and the consumers of a CTA (they must walk
// the same tiles in the same order) and by host tests. Plain C++ usable on both sides.
//
// The output is cut into cluster tiles of (cluster_m * 128) x (cluster_n * bn); cluster c walks tiles c,
// c + clusters, c + 2*clusters, ... Within that index space tiles are grouped: `group` cluster-rows
// are swept column by column before moving on, so the clusters working at one time share their
// A rows and B columns in L2 instead of streaming all of B for every row of tiles.
#pragma once
#include <cstdint>

#include "hopper/hd.hpp"

namespace hopper::gemm {

struct tile_scheduler {
  int cluster_rows;  // ceil(tiles_m / cluster_m)
  int cluster_cols;  // ceil(tiles_n / cluster_n)
  int group;         // cluster-rows per group, >= 1

  HOPPER_HD int total() const { return cluster_rows * cluster_cols; }

  // Cluster tile t -> (cluster-row, column) in the grouped order.
  HOPPER_HD void coords(int t, int& cluster_row, int& cluster_col) const {
    const int per_group = group * cluster_cols;
    const int g = t / per_group;
    const int first = g * group;
    const int rows = cluster_rows - first < group ? cluster_rows - first : group;
    const int r = t - g * per_group;
    cluster_row = first + r % rows;
    cluster_col = r / rows;
  }
};

// A cluster of m x n CTAs on adjacent tiles, as the kernel launches it (1-D, rank = m * col + row):
// CTA `rank` computes tile row `row(rank)` and column `col(rank)` of its cluster tile, shares the
// A tile with the CTAs of its cluster row (same row: `a_peers`, a multicast mask) and the B tile
// with those of its cluster column (`b_peers`); it loads share `col(rank)` of 1 / n of the A tile
// and share `row(rank)` of 1 / m of the B tile.
struct cluster_shape {
  int m, n;
  HOPPER_HD int size() const { return m * n; }
  HOPPER_HD int row(int rank) const { return rank % m; }
  HOPPER_HD int col(int rank) const { return rank / m; }
  HOPPER_HD uint16_t a_peers(int rank) const {
    uint32_t bits = 0;
    for (int c = 0; c < n; ++c) bits |= 1u << (c * m + row(rank));
    return uint16_t(bits);
  }
  HOPPER_HD uint16_t b_peers(int rank) const { return uint16_t(((1u << m) - 1u) << (m * col(rank))); }
};

// Split-K: the k-blocks [begin, end) of split s of `splits` over `k_blocks`, balanced and never
// empty when splits <= k_blocks; the splits of a tile cover [0, k_blocks) exactly once.
struct k_range {
  int begin, end;
};
HOPPER_HD k_range split_k_range(int k_blocks, int splits, int s) {
  return {int(int64_t(s) * k_blocks / splits), int(int64_t(s + 1) * k_blocks / splits)};
}

// One piece of work of a cluster: k-blocks `k` of cluster tile `tile`. When `slots` > 1 the tile's
// k-blocks are shared by `slots` pieces (this is number `slot`): each leaves an fp32 partial in
// fixup tile `fixup`'s slot, and the last to finish sums them all in slot order.
struct work_item {
  int tile;
  k_range k;
  int slot, slots, fixup;
};

// How many of `total` cluster tiles, walked by `clusters` clusters in rounds, go to the stream-K
// region at the end instead of running whole: every tile when there is less than one round (the
// whole problem is shared, so that no cluster idles while others compute whole tiles); none when
// the rounds come out even; the last, partial round when it holds at least a third of the
// clusters (a tile is then cut in at most about three pieces); otherwise that short round together
// with the full round before it, so that every share is at least a whole tile long and no tile is
// cut in more than two pieces (the "two-tile" hybrid: a fixup per cluster, not one per k-block or
// two).
HOPPER_HD int stream_k_region(int total, int clusters) {
  if (total < clusters) return total;
  const int tail = total % clusters;
  if (tail == 0) return 0;
  return 3 * tail >= clusters ? tail : tail + clusters;
}

// Where each cluster's work comes from. Cluster tiles [0, dp_tiles) run whole, in rounds over the
// clusters (or, with splits > 1, as `splits` equal k-ranges each: classic split-K for problems with
// few tiles). The remaining tiles (stream_k_region above: a last round that would leave clusters
// idle, perhaps with the round before it) have their k-blocks, tile after tile, cut into
// `clusters` equal shares ("stream-K"), so every cluster ends at about the same time. A share may cover the end of one
// tile and the start of the next; the pieces of a tile are its slots.
struct work_schedule {
  tile_scheduler order;
  int k_blocks;
  int clusters;  // resident clusters walking the schedule (the grid)
  int splits;    // 1..max_splits of gemm_config.hpp (dp tiles only)
  int dp_tiles;  // == order.total() without a stream-K tail

  HOPPER_HD int dp_units() const { return dp_tiles * splits; }
  HOPPER_HD int64_t sk_iters() const { return int64_t(order.total() - dp_tiles) * k_blocks; }
  // First stream-K iteration of cluster c's share (c = clusters: the end).
  HOPPER_HD int64_t sk_begin(int c) const { return int64_t(c) * sk_iters() / clusters; }
  // The cluster whose share holds stream-K iteration `it`: the largest c with sk_begin(c) <= it.
  HOPPER_HD int sk_owner(int64_t it) const { return int(((it + 1) * clusters - 1) / sk_iters()); }

  // Walks cluster c's items: `unit` over the dp units, then `it` over its stream-K share.
  struct cursor {
    int unit;
    int64_t it, end;
  };
  HOPPER_HD cursor start(int c) const {
    return {c, dp_tiles < order.total() ? sk_begin(c) : 0, dp_tiles < order.total() ? sk_begin(c + 1) : 0};
  }
  HOPPER_HD bool next(cursor& cur, work_item& w) const {
    if (cur.unit < dp_units()) {
      const int split = cur.unit % splits;
      w.tile = cur.unit / splits;
      w.k = split_k_range(k_blocks, splits, split);
      w.slot = split;
      w.slots = splits;
      w.fixup = w.tile;
      cur.unit += clusters;
      return true;
    }
    if (cur.it >= cur.end) return false;
    const int t = int(cur.it / k_blocks);  // stream-K tile, counted from dp_tiles
    const int64_t tile_begin = int64_t(t) * k_blocks, tile_end = tile_begin + k_blocks;
    const int64_t piece_end = cur.end < tile_end ? cur.end : tile_end;
    const int first = sk_owner(tile_begin), last = sk_owner(tile_end - 1);
    w.tile = dp_tiles + t;
    w.k = {int(cur.it - tile_begin), int(piece_end - tile_begin)};
    w.slot = sk_owner(cur.it) - first;
    w.slots = last - first + 1;
    w.fixup = t;
    cur.it = piece_end;
    return true;
  }

  // A schedule of whole tiles only (no split-K, no stream-K) walks cluster c's tiles c,
  // c + clusters, ...: item i of its walk above is tile c + i * clusters. start_tiles / done / ++
  // walk its items first, first + every, ... of that one walk, so that `every` consumers each
  // take their own items of it in turn.
  struct tile_cursor {
    int tile, step;
    HOPPER_HD void operator++() { tile += step; }
  };
  HOPPER_HD tile_cursor start_tiles(int c, int first, int every) const {
    return {c + first * clusters, every * clusters};
  }
  HOPPER_HD bool done(const tile_cursor& cur) const { return cur.tile >= order.total(); }
  // Whether the walk that holds whole tile `tile` has an item after it.
  HOPPER_HD bool has_tile_after(int tile) const { return tile + clusters < order.total(); }
};

}  // namespace hopper::gemm
