// The streaming copies' launch plan (kernels/copy/stream_copy_plan.hpp), which the CUDA launchers
// and the model runner both launch: over many random and extreme sizes and configs, the plan's
// grid walked by the bodies' own chunk walk (detail::cta_chunks) gives every chunk to exactly one
// CTA, the chunks cover the bulk bytes and CTA 0's tail the rest, and the block and shared memory
// are within the hardware's limits; input the launchers refuse makes no plan, and the error names
// the argument; the model launches a plan only into the buffers it was made for.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hopper/objects/limits.hpp"
#include "kernels/copy/stream_copy_on_model.hpp"
#include "kernels/copy/stream_copy_plan.hpp"

namespace hk = hopper::kernels;

namespace {

// What cta_chunks reads of a target: the CTA and the grid.
struct cta_of {
  uint32_t b, g;
  uint32_t block() const { return b; }
  uint32_t grid() const { return g; }
};

enum class launcher { copy_1d, copy_2d, axpb_bf16 };

// A plan of `bytes` (axpb: bytes / 2 elements) between two disjoint aligned regions, made as the
// launcher makes it.
hk::copy_plan plan_of(launcher l, uint64_t bytes, const hk::stream_copy_config& c) {
  auto* dst = reinterpret_cast<void*>(uintptr_t(1) << 20);
  const auto* src = reinterpret_cast<const void*>((uintptr_t(1) << 20) + ((bytes + 15) & ~uint64_t(15)));
  switch (l) {
    case launcher::copy_1d:
      return hk::copy_plan::copy_1d(dst, src, bytes, c);
    case launcher::copy_2d:
      return hk::copy_plan::copy_2d(dst, src, bytes, c);
    case launcher::axpb_bf16:
      break;
  }
  return hk::copy_plan::axpb_bf16(dst, src, bytes / 2, 1.f, 0.f, c);
}

// The CTAs whose chunk ranges are checked: all of a small grid, else both ends and random ones.
std::vector<uint32_t> ctas_to_check(uint32_t grid, std::mt19937_64& g) {
  std::vector<uint32_t> v;
  if (grid <= 4096) {
    for (uint32_t b = 0; b < grid; ++b) v.push_back(b);
    return v;
  }
  for (uint32_t b = 0; b < 64; ++b) v.push_back(b), v.push_back(grid - 1 - b);
  for (int i = 0; i < 1024; ++i) v.push_back(uint32_t(g() % grid));
  return v;
}

// Every chunk of `p` goes to exactly one CTA of `grid`, through the bodies' own walk.
void expect_every_chunk_once(const hk::copy_plan& p, uint32_t grid, std::mt19937_64& g, const std::string& what) {
  ASSERT_GE(grid, 1u) << what;
  const bool strided = !p.per_tile() && p.knobs.order == hk::chunk_order::interleaved;
  if (p.chunks <= 4096 && grid <= 4096) {  // small: count every chunk's CTAs
    std::vector<int> seen(p.chunks, 0);
    for (uint32_t b = 0; b < grid; ++b) {
      const auto r = hk::detail::cta_chunks(cta_of{b, grid}, p.chunks, p.knobs);
      for (uint64_t c = r.first; c < r.end; c += r.step) ++seen[c];
    }
    for (uint64_t c = 0; c < p.chunks; ++c) ASSERT_EQ(seen[c], 1) << what << ": chunk " << c;
    return;
  }
  for (uint32_t b : ctas_to_check(grid, g)) {  // large: the ranges tile [0, chunks)
    const auto r = hk::detail::cta_chunks(cta_of{b, grid}, p.chunks, p.knobs);
    if (strided) {
      ASSERT_EQ(r.first, b) << what;
      ASSERT_EQ(r.step, grid) << what;
      ASSERT_EQ(r.end, p.chunks) << what;
      continue;
    }
    ASSERT_EQ(r.step, 1u) << what;
    ASSERT_LE(r.first, r.end) << what;
    if (b == 0) {
      ASSERT_EQ(r.first, 0u) << what;
    }
    if (b + 1 == grid) {
      ASSERT_EQ(r.end, p.chunks) << what << ": the last CTA";
    }
    if (b + 1 < grid) {
      const auto next = hk::detail::cta_chunks(cta_of{b + 1, grid}, p.chunks, p.knobs);
      ASSERT_EQ(r.end, next.first) << what << ": CTAs " << b << " and " << b + 1;
    }
  }
}

// The plan's pieces: chunks of stage_bytes cover the bulk bytes (the last one short or whole),
// the tail is what a bulk copy cannot move, the block and shared memory fit an SM.
void expect_plan_shape(launcher l, const hk::copy_plan& p, uint64_t bytes, const std::string& what) {
  ASSERT_EQ(p.bytes, l == launcher::axpb_bf16 ? bytes / 2 * 2 : bytes) << what;
  ASSERT_LE(p.bulk, p.bytes) << what;
  ASSERT_LT(p.tail(), l == launcher::copy_2d ? hk::stream_copy_2d_row_bytes : 16u) << what;
  ASSERT_EQ(p.bulk % (l == launcher::copy_2d ? hk::stream_copy_2d_row_bytes : 16u), 0u) << what;
  if (p.bulk > 0) {
    ASSERT_LT((p.chunks - 1) * p.stage_bytes, p.bulk) << what << ": an empty last chunk";
    const uint32_t last = hk::detail::chunk_bytes((p.chunks - 1) * p.stage_bytes, p.bulk, p.stage_bytes);
    ASSERT_EQ((p.chunks - 1) * p.stage_bytes + last, p.bulk) << what;
    ASSERT_GT(last, 0u) << what;
    ASSERT_EQ(last % 16, 0u) << what << ": a bulk copy of " << last << " bytes";
  } else {
    ASSERT_EQ(p.chunks, 0u) << what;
  }
  if (l != launcher::copy_2d) {  // what the 1-D and fused bodies count from their arguments
    ASSERT_EQ(p.chunks, hk::detail::pieces(hk::detail::bulk_bytes(p.bytes), uint64_t(p.stage_bytes))) << what;
  } else {
    ASSERT_EQ(uint64_t(p.rows) * hk::stream_copy_2d_row_bytes, p.bulk) << what;
    ASSERT_EQ(p.chunks, hk::detail::pieces(p.rows, p.box_rows)) << what << ": boxes";
    ASSERT_EQ(p.box_rows * hk::stream_copy_2d_row_bytes, p.stage_bytes) << what;
  }
  ASSERT_GE(p.threads, 64u) << what;
  ASSERT_LE(p.threads, 64u + 16u * 32u) << what << ": the entries' __launch_bounds__";
  ASSERT_EQ(p.smem_bytes, uint64_t(p.ring_stages) * p.stage_bytes) << what;
  ASSERT_LE(p.smem_bytes, hopper::limits::max_smem_per_block) << what;
  ASSERT_GE(p.ring_stages, 1u) << what;
  ASSERT_LE(p.ring_stages, p.stages) << what;
}

uint32_t below(std::mt19937_64& g, uint32_t n) { return uint32_t(g() % n); }

hk::stream_copy_config random_config(std::mt19937_64& g, launcher l) {
  static const uint32_t kStages[] = {2, 3, 4, 6, 8, 12, 16};
  hk::stream_copy_config c;
  c.stages = kStages[below(g, 7)];
  c.store_lag = below(g, 3);
  c.sched = below(g, 2) ? hk::schedule::per_tile : hk::schedule::persistent;
  c.tile_chunks = 1 + below(g, 16);
  c.order = below(g, 2) ? hk::chunk_order::contiguous : hk::chunk_order::interleaved;
  c.path = l != launcher::copy_2d && below(g, 2) ? hk::store_path::st_global : hk::store_path::bulk;
  c.store_warps = 1 + below(g, 16);
  c.transform_warps = 1 + below(g, 16);
  c.blocks_per_sm = 1 + below(g, 4);
  c.prefetch_chunks = below(g, 3);
  const uint32_t granule = l == launcher::copy_2d ? hk::stream_copy_2d_row_bytes : 16u;
  const uint32_t held = c.sched == hk::schedule::per_tile && c.tile_chunks < c.stages ? c.tile_chunks : c.stages;
  const uint32_t most = uint32_t(hopper::limits::max_smem_per_block / (uint64_t(held) * c.blocks_per_sm) / granule);
  c.stage_bytes = granule * (1 + below(g, most < 1 ? 1 : (below(g, 4) == 0 ? most : (most < 8 ? most : 8))));
  return c;
}

// A size: extreme ones around the config's chunk and tile edges, or log-uniform up to 2^62.
uint64_t random_bytes(std::mt19937_64& g, const hk::stream_copy_config& c) {
  const uint64_t sb = c.stage_bytes, tile = sb * c.tile_chunks;
  const uint64_t edges[] = {0,
                            1,
                            15,
                            16,
                            17,
                            sb - 1,
                            sb,
                            sb + 1,
                            sb + 15,
                            sb + 16,
                            2 * sb - 1,
                            tile - 1,
                            tile,
                            tile + 17,
                            tile * ((uint64_t(1) << 31) - 1),
                            tile * ((uint64_t(1) << 31) - 1) + 1,
                            uint64_t(1) << 62};
  if (below(g, 3) == 0) return edges[below(g, sizeof edges / sizeof edges[0])];
  return g() >> (2 + below(g, 62));
}

TEST(StreamCopyPlan, EveryChunkToExactlyOneCtaOverRandomAndExtremeSizes) {
  std::mt19937_64 g(2024);
  int planned[3] = {0, 0, 0}, refused = 0;
  for (int i = 0; i < 6000; ++i) {
    const auto l = launcher(i % 3);
    const hk::stream_copy_config c = random_config(g, l);
    const uint64_t bytes = random_bytes(g, c);
    const std::string what = "launcher " + std::to_string(i % 3) + " bytes " + std::to_string(bytes) + " stages " +
                             std::to_string(c.stages) + " stage_bytes " + std::to_string(c.stage_bytes) +
                             (c.sched == hk::schedule::per_tile ? " per_tile x" + std::to_string(c.tile_chunks)
                                                                : " persistent x" + std::to_string(c.blocks_per_sm));
    hk::copy_plan p;
    try {
      p = plan_of(l, bytes, c);
    } catch (const std::invalid_argument& e) {
      ++refused;  // refused, naming its launcher; never for want of a rule the plan needs
      EXPECT_EQ(std::string(e.what()).rfind("hopper: stream_", 0), 0u) << what << ": " << e.what();
      continue;
    }
    ++planned[i % 3];
    expect_plan_shape(l, p, bytes, what);
    if (::testing::Test::HasFatalFailure()) return;
    // The model's device, an H200 where 1..32 CTAs fit per SM, and a per-tile grid of tiles.
    for (const uint32_t sms : {hk::on_model::model_sms, 132u}) {
      const uint32_t fit = sms == hk::on_model::model_sms ? p.blocks_per_sm : 1 + below(g, 32);
      const uint32_t grid = p.grid(sms, fit);
      if (!p.per_tile()) {
        ASSERT_LE(grid, sms * (fit < p.blocks_per_sm ? fit : p.blocks_per_sm)) << what;
      }
      ASSERT_LE(grid, (uint32_t(1) << 31) - 1) << what << ": the grid's x limit";
      expect_every_chunk_once(p, grid, g, what + " on " + std::to_string(sms) + " SMs");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GT(planned[0], 1000);
  EXPECT_GT(planned[1], 1000);
  EXPECT_GT(planned[2], 1000);
  std::printf("    %d + %d + %d plans (1-D, 2-D, axpb) covered every chunk once; %d inputs refused\n", planned[0],
              planned[1], planned[2], refused);
}

TEST(StreamCopyPlan, TheLargestPerTileGridIsTheGridsLimit) {
  hk::stream_copy_config c = hk::stream_copy_1d_default();
  const uint64_t tiles = (uint64_t(1) << 31) - 1;
  const hk::copy_plan p = plan_of(launcher::copy_1d, tiles * c.stage_bytes, c);
  EXPECT_EQ(p.grid(132, 1), uint32_t(tiles));
  EXPECT_THROW(plan_of(launcher::copy_1d, tiles * c.stage_bytes + 16, c), std::invalid_argument);
}

// The entry, its instance and its block follow the config as the CUDA launchers launch them.
TEST(StreamCopyPlan, EntryInstanceAndBlock) {
  const hk::copy_plan d = plan_of(launcher::copy_1d, 1000, hk::stream_copy_1d_default());
  EXPECT_EQ(d.entry, hk::copy_entry::ldst);
  EXPECT_FALSE(d.axpb);
  EXPECT_EQ(d.store, hk::detail::st_kind::wb);
  EXPECT_EQ(d.threads, 32u + 32u * 4u);
  EXPECT_EQ(d.ring_stages, 1u);  // per tile of one chunk: the ring holds one
  hk::stream_copy_config cs = hk::stream_copy_1d_default();
  cs.streaming_store = true;
  EXPECT_EQ(plan_of(launcher::copy_1d, 1000, cs).store, hk::detail::st_kind::cs);
  cs.streaming_store = false;
  cs.store_policy = hk::l2_evict::first;
  EXPECT_EQ(plan_of(launcher::copy_1d, 1000, cs).store, hk::detail::st_kind::hint);

  const hk::copy_plan b = plan_of(launcher::copy_1d, 1000, hk::stream_copy_config{});
  EXPECT_EQ(b.entry, hk::copy_entry::copy_1d);
  EXPECT_EQ(b.threads, 64u);
  EXPECT_EQ(b.ring_stages, 8u);
  EXPECT_EQ(b.smem_bytes, 8u * 24576u);

  hk::stream_copy_config fused;
  fused.transform_warps = 3;
  const hk::copy_plan f = plan_of(launcher::axpb_bf16, 2 * 1001, fused);
  EXPECT_EQ(f.entry, hk::copy_entry::axpb_bf16);
  EXPECT_EQ(f.threads, 64u + 32u * 3u);
  EXPECT_EQ(f.bytes, 2u * 1001u);
  const hk::copy_plan fs = plan_of(launcher::axpb_bf16, 2 * 1001, hk::stream_axpb_bf16_default());
  EXPECT_EQ(fs.entry, hk::copy_entry::ldst);
  EXPECT_TRUE(fs.axpb);

  hk::stream_copy_config two;
  two.stage_bytes = 3 * 1024;
  const hk::copy_plan t = plan_of(launcher::copy_2d, 10 * 1024 + 5, two);
  EXPECT_EQ(t.entry, hk::copy_entry::copy_2d);
  EXPECT_EQ(t.rows, 10u);
  EXPECT_EQ(t.box_rows, 3u);
  EXPECT_EQ(t.chunks, 4u);
  EXPECT_EQ(t.tail(), 5u);
}

// Bad input makes no plan: the error names the launcher and the argument, as the launcher's
// signature names them.
TEST(StreamCopyPlan, BadInputIsRefusedByName) {
  struct bad {
    launcher l;
    void (*spoil)(hk::stream_copy_config&);
    const char* says;
  };
  const bad cases[] = {
      {launcher::copy_1d, [](hk::stream_copy_config& c) { c.stages = 5; }, "stream_copy_1d: stages = 5"},
      {launcher::copy_1d, [](hk::stream_copy_config& c) { c.stage_bytes = 24; }, "stream_copy_1d: stage_bytes = 24"},
      {launcher::copy_1d, [](hk::stream_copy_config& c) { c.store_warps = 17; }, "stream_copy_1d: store_warps = 17"},
      {launcher::copy_1d, [](hk::stream_copy_config& c) { c.tile_chunks = 0; }, "stream_copy_1d: tile_chunks = 0"},
      {launcher::copy_2d, [](hk::stream_copy_config& c) { c.stage_bytes = 1040; },
       "stream_copy_2d: stage_bytes = 1040"},
      {launcher::copy_2d, [](hk::stream_copy_config& c) { c.path = hk::store_path::st_global; },
       "stream_copy_2d: store_path st_global"},
      {launcher::axpb_bf16, [](hk::stream_copy_config& c) { c.transform_warps = 0; },
       "stream_axpb_bf16: transform_warps = 0"},
      {launcher::axpb_bf16, [](hk::stream_copy_config& c) { c.store_lag = 3; }, "stream_axpb_bf16: store_lag = 3"},
  };
  for (const bad& b : cases) {
    hk::stream_copy_config c = b.l == launcher::copy_1d ? hk::stream_copy_1d_default() : hk::stream_copy_config{};
    if (b.l == launcher::axpb_bf16) c = hk::stream_axpb_bf16_default();
    b.spoil(c);
    try {
      (void)plan_of(b.l, 4096, c);
      ADD_FAILURE() << "planned: " << b.says;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(b.says), std::string::npos) << e.what();
    }
  }
  auto* p = reinterpret_cast<void*>(uintptr_t(1) << 20);
  try {
    (void)hk::copy_plan::copy_1d(p, static_cast<const char*>(p) + 8, 64, hk::stream_copy_1d_default());
    ADD_FAILURE() << "planned an unaligned source";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stream_copy_1d: src = "), std::string::npos) << e.what();
  }
  try {
    (void)hk::copy_plan::axpb_bf16(p, nullptr, 8, 1.f, 0.f, hk::stream_axpb_bf16_default());
    ADD_FAILURE() << "planned a null x";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stream_axpb_bf16: x is null"), std::string::npos) << e.what();
  }
}

// The model launches a plan into the buffers it was made (and checked) for, and no others.
TEST(StreamCopyPlan, TheModelLaunchesThePlanItsBuffersWereCheckedWith) {
  hopper::model::world w;
  auto& src = w.make_global("src", 256);
  auto& dst = w.make_global("dst", 256);
  auto& other = w.make_global("other", 256);
  const hk::copy_plan p = hk::copy_plan::copy_1d(dst.host_data(), src.host_data(), 256, hk::stream_copy_1d_default());
  try {
    hk::on_model::launch_copy(w, p, other, src);
    ADD_FAILURE() << "a plan launched into other buffers";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'other'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(hk::on_model::grid_of(p), p.grid(hk::on_model::model_sms, p.blocks_per_sm));
}

}  // namespace
