// The GEMM's host side up to the launch, without a device: validate(problem, A, B, C),
// choose_config(problem, num_sms), validate(config, problem) and make_schedule(problem, config,
// resident). Every input is rejected naming an argument, or accepted with consistent sizes: the
// pitches and spans recomputed in 128 bits are what TMA takes, the rule's own choice is accepted,
// and the schedule covers every k-block of every tile exactly once.
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "kernels/gemm/gemm_config.hpp"

using namespace hopper_fuzz;
namespace g = hopper::gemm;

std::vector<seed> hopper_fuzz_seeds() {
  // M, N, K, a_major, b_major, out, lda, ldb, ldc, A, B, C, num_sms, forced, config (bm, bn, bk,
  // stages, cluster_m, cluster_n, group_m, splits, pingpong, stream_k), resident.
  const seed cfg = {small(0), wide(128), wide(256), wide(64), wide(4), wide(2),
                    wide(1),  wide(8),   wide(1),   small(0), small(0)};
  const seed ptrs = cat({aligned_pointer(0), aligned_pointer(1), aligned_pointer(2)});
  return {
      cat({{wide(4096), wide(4096), wide(4096), small(0), small(0), small(0), wide(0), wide(0), wide(0)},
           ptrs,
           {wide(132)},
           cfg,
           {wide(66)}}),
      cat({{wide(129), wide(200), wide(72), small(1), small(1), small(1), wide(136), wide(208), wide(200)},
           ptrs,
           {wide(132)},
           cfg,
           {wide(130)}}),
      cat({{wide(1), wide(8192), wide(8192), small(0), small(1), small(0), wide(0), wide(0), wide(0)},
           ptrs,
           {wide(114)},
           cfg,
           {wide(57)}}),
  };
}

namespace {

void check_accepted_shape(const g::problem& p) {
  struct op {
    i128 ld, row, rows, elem;
  };
  const op ops[] = {
      {p.lda_or_packed(), p.a_major == g::major::k ? p.K : p.M, p.a_major == g::major::k ? p.M : p.K, 2},
      {p.ldb_or_packed(), p.b_major == g::major::k ? p.K : p.N, p.b_major == g::major::k ? p.N : p.K, 2},
      {p.ldc_or_packed(), p.N, p.M, g::out_bytes(p.out)},
  };
  require(p.M >= 1 && p.N >= 1 && p.K >= 1 && p.M < (int64_t(1) << 31) && p.N < (int64_t(1) << 31) &&
              p.K < (int64_t(1) << 31),
          "accepted M x N x K = " + std::to_string(p.M) + " x " + std::to_string(p.N) + " x " + std::to_string(p.K));
  for (const op& o : ops) {
    const i128 pitch = o.ld * o.elem, span = ((o.rows - 1) * o.ld + o.row) * o.elem;
    require(o.ld >= o.row && pitch % 16 == 0 && pitch < (i128(1) << 40) && span < (i128(1) << 63),
            "accepted a leading dimension of " + str(u128(o.ld)) + " (pitch " + str(u128(pitch)) + " bytes)");
  }
}

// Every k-block of every cluster tile is computed by exactly one piece of the schedule.
void check_schedule(const g::problem& p, const g::config& c, const g::launch_schedule& ls, int resident) {
  const g::work_schedule& w = ls.work;
  const i128 rows = ((p.M + c.bm - 1) / c.bm + c.cluster_m - 1) / c.cluster_m;
  const i128 cols = ((p.N + c.bn - 1) / c.bn + c.cluster_n - 1) / c.cluster_n;
  require(w.order.cluster_rows == rows && w.order.cluster_cols == cols, "the schedule's tile counts wrapped");
  require(w.k_blocks == (p.K + 63) / 64, "the schedule's k-blocks");
  require(w.clusters >= 1 && w.clusters <= resident, "the grid has " + std::to_string(w.clusters) + " clusters");
  const i128 partial = i128(ls.fixup_tiles) * c.cluster_size() * ls.slot_stride * c.bm * c.bn * 4;
  require(i128(ls.partial_bytes(c)) == partial, "partial_bytes wrapped");
  const i128 total = rows * cols;
  if (total * w.k_blocks > (1 << 12)) return;  // walking it would take too long per input
  std::vector<int> covered(size_t(total) * size_t(w.k_blocks), 0);
  for (int cl = 0; cl < w.clusters; ++cl) {
    g::work_item it{};
    for (auto cur = w.start(cl); w.next(cur, it);) {
      require(it.tile >= 0 && it.tile < total, "an item outside the tiles");
      require(it.k.begin >= 0 && it.k.begin < it.k.end && it.k.end <= w.k_blocks, "an empty or outside k-range");
      for (int k = it.k.begin; k < it.k.end; ++k) ++covered[size_t(it.tile) * size_t(w.k_blocks) + size_t(k)];
      int r = 0, col = 0;
      w.order.coords(it.tile, r, col);
      require(r >= 0 && r < rows && col >= 0 && col < cols, "tile coordinates outside the grid of tiles");
    }
  }
  for (size_t i = 0; i < covered.size(); ++i)
    require(covered[i] == 1, "k-block " + std::to_string(i % size_t(w.k_blocks)) + " of tile " +
                                 std::to_string(i / size_t(w.k_blocks)) + " computed " + std::to_string(covered[i]) +
                                 " times");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  input in(data, size);
  g::problem p;
  p.M = in.i64(), p.N = in.i64(), p.K = in.i64();
  p.a_major = static_cast<g::major>(in.pick(3));
  p.b_major = static_cast<g::major>(in.pick(3));
  p.out = static_cast<g::out_type>(in.pick(3));
  p.lda = in.i64(), p.ldb = in.i64(), p.ldc = in.i64();
  const void* A = in.pointer();
  const void* B = in.pointer();
  const void* C = in.pointer();
  const int num_sms = in.i32();
  const bool forced = in.flag();
  g::config fc;
  fc.bm = in.i32(), fc.bn = in.i32(), fc.bk = in.i32(), fc.stages = in.i32();
  fc.cluster_m = in.i32(), fc.cluster_n = in.i32(), fc.group_m = in.i32(), fc.splits = in.i32();
  fc.pingpong = in.flag(), fc.stream_k = in.flag();
  const int resident = in.i32();

  const auto names = {"M =",  "N =",  "K =",     "M x N",   "lda",    "ldb",     "ldc",    "A is",
                      "B is", "C is", "a_major", "b_major", "out is", "num_sms", "config", "resident"};
  try {
    g::validate(p, A, B, C);
    check_accepted_shape(p);
  } catch (const std::invalid_argument& e) {
    expect_names_an_argument(e, names);
  }
  g::config c;
  try {
    c = forced ? fc : g::choose_config(p, num_sms);
  } catch (const std::invalid_argument& e) {
    expect_names_an_argument(e, names);
    return 0;
  }
  try {
    g::validate(c, p);
  } catch (const std::invalid_argument& e) {
    expect_names_an_argument(e, names);
    // The rule's own choice is always a kernel that computes the problem, unless the problem has
    // more tiles than the scheduler indexes.
    if (!forced && std::string(e.what()).find("work units") == std::string::npos)
      finding(std::string("validate rejects the rule's own configuration: ") + e.what());
    return 0;
  }
  try {
    const g::launch_schedule ls = g::make_schedule(p, c, resident);
    check_schedule(p, c, ls, resident);
  } catch (const std::invalid_argument& e) {
    expect_names_an_argument(e, names);
  }
  return 0;
}
