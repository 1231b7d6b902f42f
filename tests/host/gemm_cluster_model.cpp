// The GEMM's cluster protocol on the executable model: a cluster of m x n CTAs where each CTA
// loads its share of the A tile (1 / n of its rows) and of the B tile (1 / m) and multicasts them
// to the CTAs that share them (cluster_shape's masks, the ones the kernel uses), through the same
// hopper::pipeline the kernel runs (full barriers expect the whole stage; empty barriers count the
// releases of every CTA's consumer warpgroups; the producer drains before its CTA exits). Every
// consumer checks every byte of A and B it sees. Broken twins: A multicast to the whole cluster,
// releases to the own CTA only, a full barrier armed with the own shares only. And the reason
// there are no 2 x 2 clusters: there a consumer's release to the diagonal CTA, which writes
// nothing into its CTA, is not ordered after that CTA's previous phase, and the model says so.
//
// The kernel's consumers read stages with wgmma (the async proxy) and release them .relaxed; the
// model's consumers read with generic loads, so they release with the default .release.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/pipeline_backend.hpp"
#include "hopper/pipeline.cuh"
#include "kernels/gemm/tile_scheduler.hpp"

using namespace hopper::model;
using hopper::gemm::cluster_shape;

namespace {

enum class twin { none, a_to_whole_cluster, release_own_cta_only, expect_own_shares_only };

constexpr int kStages = 2, kBlocks = 5, kRows = 16, kRowBytes = 128;  // 16 x 64 bf16 per operand tile
constexpr uint32_t kTileBytes = kRows * kRowBytes, kStageBytes = 2 * kTileBytes;
constexpr uint32_t kReaders = 2;  // consumer warpgroups, one releasing warp each

uint8_t pattern(int operand, size_t byte) { return uint8_t(byte * 13 + byte / 251 + 1 + 101 * operand); }

outcome run_cluster(cluster_shape cs, twin t, uint64_t seed) {
  using pipe_t = hopper::pipeline<kStages, pipeline_backend>;
  run_options o;
  o.seed = seed;
  const int ctas = cs.size();
  auto bad = std::make_shared<uint64_t>(0);
  // The pipeline's storage and the backend's view of the world outlive the program's set-up: the
  // tasks use them while the world runs.
  auto host = std::make_shared<pipeline_host>();
  auto st = std::make_shared<std::vector<typename pipe_t::storage>>(size_t(ctas));
  program p = [cs, t, ctas, bad, host, st](world& w) {
    // A is (m x 16) rows of kBlocks x 64 bf16, B is (n x 16) rows: one cluster tile.
    const size_t a_pitch = size_t(kBlocks) * kRowBytes;
    buffer& ga = w.make_global("A", size_t(cs.m) * kRows * a_pitch);
    buffer& gb = w.make_global("B", size_t(cs.n) * kRows * a_pitch);
    for (size_t i = 0; i < ga.bytes(); ++i) ga.host_data()[i] = pattern(0, i);
    for (size_t i = 0; i < gb.bytes(); ++i) gb.host_data()[i] = pattern(1, i);
    tensor_view va, vb;
    va.mem = &ga, va.elem_bytes = 2, va.dims = {uint64_t(kBlocks) * 64, uint64_t(cs.m) * kRows};
    va.strides = {a_pitch}, va.box = {64, uint32_t(kRows / cs.n)};
    vb.mem = &gb, vb.elem_bytes = 2, vb.dims = {uint64_t(kBlocks) * 64, uint64_t(cs.n) * kRows};
    vb.strides = {a_pitch}, vb.box = {64, uint32_t(kRows / cs.m)};

    std::vector<buffer*> stage_buf(static_cast<size_t>(ctas), nullptr);
    host->w = &w;
    host->cluster_size = uint32_t(ctas);
    for (int b = 0; b < ctas; ++b) {
      for (int s = 0; s < kStages; ++s) {
        (*st)[size_t(b)].full[s] = &w.make_barrier("full[" + std::to_string(s) + "]", b);
        (*st)[size_t(b)].empty[s] = &w.make_barrier("empty[" + std::to_string(s) + "]", b);
      }
      host->storage.push_back(&(*st)[size_t(b)].full[0]);
      stage_buf[size_t(b)] = &w.make_shared("stages", kStages, kStageBytes, b, kRowBytes);
      host->cta_sync.push_back(&w.make_named_barrier("bar.sync 0 of CTA " + std::to_string(b), 1 + kReaders));
    }
    host->cluster_sync.push_back(&w.make_named_barrier("barrier.cluster", uint32_t(ctas) * (1 + kReaders)));
    const bool mc = ctas > 1 && t != twin::release_own_cta_only;
    const hopper::pipeline_params params{kReaders, uint32_t(ctas), mc};

    for (int b = 0; b < ctas; ++b) {
      w.spawn(
          "producer",
          [&w, host, st, stage_buf, params, cs, t, b, va, vb] {
            pipeline_backend be(*host, b, 0, true);
            pipe_t pipe = pipe_t::init((*st)[size_t(b)], params, be);
            const int rm = cs.row(b), rn = cs.col(b);
            const uint16_t a_peers = t == twin::a_to_whole_cluster ? uint16_t((1u << cs.size()) - 1u) : cs.a_peers(b);
            const uint16_t b_peers = cs.b_peers(b);
            const auto targets = [&](uint16_t mask, uint32_t stage) {
              std::vector<world::target> v;
              for (int r = 0; r < cs.size(); ++r)
                if (mask & (1u << r)) v.push_back({stage_buf[size_t(r)], (*st)[size_t(r)].full[stage]});
              return v;
            };
            auto s = pipe.producer_start();
            for (; s.iter() < uint32_t(kBlocks); ++s) {
              const uint32_t own = kTileBytes / uint32_t(cs.n) + kTileBytes / uint32_t(cs.m);
              pipe.acquire(s, t == twin::expect_own_shares_only ? own : kStageBytes);
              const size_t base = size_t(s.index()) * kStageBytes;
              const int a_rows = kRows / cs.n, b_rows = kRows / cs.m;
              const int64_t k0 = int64_t(s.iter()) * 64;
              w.cp_async_bulk_tensor_shared_global_multicast(targets(a_peers, s.index()),
                                                             base + size_t(rn * a_rows) * kRowBytes, va,
                                                             {k0, int64_t(rm * kRows + rn * a_rows)});
              w.cp_async_bulk_tensor_shared_global_multicast(targets(b_peers, s.index()),
                                                             base + kTileBytes + size_t(rm * b_rows) * kRowBytes, vb,
                                                             {k0, int64_t(rn * kRows + rm * b_rows)});
              pipe.commit(s);
            }
            pipe.drain(s);  // every CTA released every stage: no peer arrives here after we exit
          },
          b);
      for (uint32_t k = 0; k < kReaders; ++k)
        w.spawn(
            "consumer " + std::to_string(k),
            [&ga, &gb, host, st, stage_buf, params, cs, b, k, bad, a_pitch] {
              pipeline_backend be(*host, b, 1 + k, false);
              pipe_t pipe = pipe_t::init((*st)[size_t(b)], params, be);
              std::vector<uint8_t> got(kStageBytes);
              auto s = pipe.consumer_start();
              for (; s.iter() < uint32_t(kBlocks); ++s) {
                pipe.wait(s);
                stage_buf[size_t(b)]->read(size_t(s.index()) * kStageBytes, got.data(), kStageBytes);
                for (int r = 0; r < kRows; ++r)
                  for (int i = 0; i < kRowBytes; ++i) {
                    const size_t col = size_t(s.iter()) * kRowBytes + size_t(i);
                    *bad +=
                        got[size_t(r * kRowBytes + i)] != ga.host_data()[size_t(cs.row(b) * kRows + r) * a_pitch + col];
                    *bad += got[kTileBytes + size_t(r * kRowBytes + i)] !=
                            gb.host_data()[size_t(cs.col(b) * kRows + r) * a_pitch + col];
                  }
                pipe.release(s);
              }
            },
            b);
    }
  };
  outcome r = run_once(p, o);
  if (r.ok && *bad) {
    r.ok = false;
    r.kind = error_kind::raw_hazard;
    r.message = std::to_string(*bad) + " operand bytes wrong";
  }
  return r;
}

const cluster_shape kShapes[] = {{1, 1}, {2, 1}, {1, 2}};  // what the kernels are instantiated for

TEST(GemmClusterModel, MasksMatchTheClusterLayout) {
  const cluster_shape c22{2, 2};
  EXPECT_EQ(c22.a_peers(0), 0b0101);  // ranks 0 and 2: cluster row 0
  EXPECT_EQ(c22.a_peers(3), 0b1010);
  EXPECT_EQ(c22.b_peers(1), 0b0011);  // ranks 0 and 1: cluster column 0
  EXPECT_EQ(c22.b_peers(2), 0b1100);
  const cluster_shape c21{2, 1}, c12{1, 2};
  EXPECT_EQ(c21.a_peers(1), 0b10);
  EXPECT_EQ(c21.b_peers(1), 0b11);
  EXPECT_EQ(c12.a_peers(1), 0b11);
  EXPECT_EQ(c12.b_peers(1), 0b10);
  for (const cluster_shape& cs : kShapes)
    for (int r = 0; r < cs.size(); ++r) {
      EXPECT_TRUE(cs.a_peers(r) & (1u << r)) << "a CTA receives its own A share";
      EXPECT_TRUE(cs.b_peers(r) & (1u << r)) << "a CTA receives its own B share";
      EXPECT_EQ(__builtin_popcount(cs.a_peers(r)), cs.n);
      EXPECT_EQ(__builtin_popcount(cs.b_peers(r)), cs.m);
    }
}

TEST(GemmClusterModel, EveryClusterShapeIsCleanAndDeliversEveryByte) {
  for (const cluster_shape& cs : kShapes)
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      const outcome o = run_cluster(cs, twin::none, seed);
      ASSERT_TRUE(o.ok) << cs.m << " x " << cs.n << " seed " << seed << ": " << o.message;
    }
}

// Each broken twin fails under every seed tried, with the report its bug calls for.
void expect_every_seed_fails(twin t, cluster_shape cs, const char* what) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const outcome o = run_cluster(cs, t, seed);
    ASSERT_FALSE(o.ok) << what << ", cluster " << cs.m << " x " << cs.n << ", seed " << seed;
    EXPECT_FALSE(o.message.empty());
  }
}

TEST(GemmClusterModel, TwoByTwoReleasesToTheDiagonalAreNotOrdered) {
  // CTA 3's consumers wait on a full barrier fed by CTAs 1, 2 and 3 only; their next release on
  // CTA 0's empty barrier is not ordered after that barrier's previous phase.
  int reported = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const outcome o = run_cluster({2, 2}, twin::none, seed);
    if (o.ok) continue;
    ++reported;
    EXPECT_EQ(o.kind, error_kind::undefined_behavior) << o.message;
    EXPECT_NE(o.message.find("arrives again before observing the completion of phase"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("empty["), std::string::npos) << o.message;
  }
  EXPECT_GT(reported, 0) << "the 2 x 2 release-to-all protocol was never reported";
}

TEST(GemmClusterModel, AMulticastToTheWholeClusterIsReported) {
  // With A multicast to both CTAs of a 2 x 1 cluster, each CTA receives the other's A rows too and
  // its full barrier counts bytes it was not armed for.
  expect_every_seed_fails(twin::a_to_whole_cluster, {2, 1}, "A to every CTA");
}

TEST(GemmClusterModel, ReleasingOnlyTheOwnCtaIsReported) {
  for (const cluster_shape& cs : {cluster_shape{2, 1}, cluster_shape{1, 2}})
    expect_every_seed_fails(twin::release_own_cta_only, cs, "releases to the own CTA only");
}

TEST(GemmClusterModel, ArmingTheFullBarrierWithTheOwnSharesOnlyIsReported) {
  for (const cluster_shape& cs : {cluster_shape{2, 1}, cluster_shape{1, 2}})
    expect_every_seed_fails(twin::expect_own_shares_only, cs, "full armed with the own shares only");
}

}  // namespace
