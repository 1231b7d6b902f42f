// One launch of the GEMM as both launchers see it: the CUDA launcher (gemm.cuh, hopper::gemm::plan)
// and the model runner (gemm_on_model.hpp) each make this plan and do only what their machine
// needs with it (encode tensor maps or build tensor views, allocate buffers, launch), so that the
// model checks the launch the GPU gets. Plain C++.
//
//   const launch_plan lp = make_launch_plan(problem, config, resident_clusters);
//   lp.grid, lp.threads, lp.cluster, lp.smem     the launch
//   lp.a, lp.b, lp.c                             the three tensor maps
//   lp.partial_bytes, lp.counter_bytes           the split-K / stream-K workspace
//   params_of<target>(lp, partial, counters, c)  the body's run-time parameters
#pragma once
#include <cstddef>
#include <cstdint>

#include "hopper/objects/swizzle.hpp"
#include "kernels/gemm/gemm_body.hpp"
#include "kernels/gemm/gemm_config.hpp"
#include "kernels/gemm/gemm_tiles.hpp"
#include "kernels/gemm/gemm_traits.hpp"
#include "kernels/gemm/tile_scheduler.hpp"

namespace hopper::gemm {

// One tensor map: a 2-D tensor of `elem_bytes` elements (bf16 or, for C, fp32), dims {inner,
// outer} with `pitch_bytes` between outer rows, loaded or stored in boxes of `box` through the
// tiles' swizzle.
struct tensor_spec {
  uint32_t elem_bytes;
  uint64_t inner, outer;
  uint64_t pitch_bytes;
  operand_box box;
  swizzle sw;
  bool l2_promote_256;  // operands: promote L2 fetches to 256 bytes
};

struct launch_plan {
  problem prob;
  config cfg;
  launch_schedule schedule;
  // The launch: clusters x cluster CTAs of `threads` (the roles of gemm_tiles.hpp: one producer
  // warpgroup, two consumer warpgroups), each with `smem` bytes of dynamic shared memory laid out
  // as kernel_traits::shared_storage.
  int clusters = 0, cluster = 1, grid = 0, threads = cta_threads;
  uint32_t smem = 0;
  tensor_spec a{}, b{}, c{};
  // C's row pitch and the columns the C map stores (the rest each row's tail stores itself).
  int64_t ldc_bytes = 0;
  int n_tma = 0;
  // The fixup workspace: the fp32 partials, then the counters (zero before a run; a run leaves
  // them zero).
  size_t partial_bytes = 0, counter_bytes = 0;
  size_t workspace_bytes() const { return partial_bytes + counter_bytes; }
};

// An operand's map: K-major tensors are K contiguous, MN-major ones MN contiguous.
inline tensor_spec operand_spec(major mj, int64_t mn, int64_t k, int64_t ld, operand_box box) {
  const bool k_inner = mj == major::k;
  return tensor_spec{uint32_t(operand_elem_bytes),
                     uint64_t(k_inner ? k : mn),
                     uint64_t(k_inner ? mn : k),
                     uint64_t(ld * operand_elem_bytes),
                     box,
                     tile_swizzle,
                     true};
}

// The plan of problem `p` with configuration `cf` (validated) on a device where `resident`
// clusters of it fit at once.
inline launch_plan make_launch_plan(const problem& p, const config& cf, int resident) {
  launch_plan lp;
  lp.prob = p;
  lp.cfg = cf;
  lp.schedule = make_schedule(p, cf, resident);
  lp.clusters = lp.schedule.work.clusters;
  lp.cluster = cf.cluster_size();
  lp.grid = lp.clusters * lp.cluster;
  lp.smem = uint32_t(smem_bytes(cf));
  // The boxes the kernel's producer loads and its epilogue stores (the tile types').
  lp.a =
      operand_spec(p.a_major, p.M, p.K, p.lda_or_packed(), operand_box_of(p.a_major == major::mn, cf.bm, cf.cluster_n));
  lp.b =
      operand_spec(p.b_major, p.N, p.K, p.ldb_or_packed(), operand_box_of(p.b_major == major::mn, cf.bn, cf.cluster_m));
  const int ob = int(out_bytes(p.out));
  lp.ldc_bytes = p.ldc_or_packed() * ob;
  lp.n_tma = int(c_tma_columns(p.N, ob));
  lp.c = tensor_spec{
      uint32_t(ob), uint64_t(c_map_columns(p.N, ob)), uint64_t(p.M), uint64_t(lp.ldc_bytes), c_box_of(ob), tile_swizzle,
      false};
  if (lp.schedule.fixup_tiles > 0) {
    lp.partial_bytes = lp.schedule.partial_bytes(cf);
    lp.counter_bytes = lp.schedule.counter_bytes(cf);
  }
  return lp;
}

// Instance T is the kernel `lp` launches: the launch's figures are T's.
template <class T>
constexpr bool launches(const launch_plan& lp) {
  return lp.cfg.bm == T::BM && lp.cfg.bn == T::BN && lp.cfg.bk == T::BK && lp.cfg.stages == T::STAGES &&
         lp.cfg.cluster_m == T::CLUSTER_M && lp.cfg.cluster_n == T::CLUSTER_N && lp.cfg.pingpong == T::PINGPONG &&
         (lp.prob.a_major == major::mn) == T::A_MN && (lp.prob.b_major == major::mn) == T::B_MN &&
         int64_t(sizeof(typename T::OutT)) == out_bytes(lp.prob.out) && lp.threads == T::THREADS &&
         lp.cluster == T::CLUSTER && lp.smem == T::SMEM;
}

// The body's run-time parameters on target Tg, given the workspace and C as the target sees them.
template <class Tg>
body_params<Tg> params_of(const launch_plan& lp, gmem_of<Tg, typename Tg::f32x4> partial, gmem_of<Tg, int> counters,
                          gmem_of<Tg, uint8_t> c) {
  return body_params<Tg>{
      int(lp.prob.M), int(lp.prob.N), int(lp.prob.K), lp.schedule.work, lp.schedule.slot_stride, partial, counters, c,
      lp.ldc_bytes,   lp.n_tma};
}

}  // namespace hopper::gemm
