// The streaming copies' own kernel bodies (kernels/copy/stream_copy_body.hpp) on the executable model,
// every thread a task: the 1-D copy through both store paths and both schedules, the 2-D tensor
// copy, and the fused y = a*x + b, at small and odd sizes (1 byte, 15 bytes, tails past the last
// multiple of 16 or the last whole row, partial last chunks), with the knobs the benchmark sweeps
// (stages, store lag, L2 prefetch and hints, chunk order, tile size, store warps). Every run must
// end with every byte right and no deadlock or hazard, over many scheduler seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hopper/model/explore.hpp"
#include "hopper/model/target.hpp"
#include "hopper/pipeline/pipeline.hpp"
#include "kernels/copy/stream_copy_body.hpp"
#include "kernels/copy/stream_copy_on_model.hpp"

using namespace hopper::model;
namespace hk = hopper::kernels;

namespace {

constexpr int kSeeds = 12;

std::string describe(const hk::stream_copy_config& c, uint64_t bytes, uint64_t seed) {
  return "bytes=" + std::to_string(bytes) + " stages=" + std::to_string(c.stages) +
         " stage_bytes=" + std::to_string(c.stage_bytes) + " lag=" + std::to_string(c.store_lag) +
         " path=" + (c.path == hk::store_path::bulk ? "bulk" : "st_global") +
         " sched=" + (c.sched == hk::schedule::per_tile ? "per_tile x" + std::to_string(c.tile_chunks) : "persistent") +
         " order=" + std::to_string(int(c.order)) + " prefetch=" + std::to_string(c.prefetch_chunks) +
         " load_policy=" + std::to_string(int(c.load_policy)) + " store_policy=" + std::to_string(int(c.store_policy)) +
         " store_warps=" + std::to_string(c.store_warps) + " cs=" + std::to_string(c.streaming_store) +
         " seed=" + std::to_string(seed);
}

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed * 7919 + n);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(g());
  return v;
}

using namespace hk::on_model;

void expect_copy_1d(const hk::stream_copy_config& c, uint64_t bytes) {
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const auto in = random_bytes(bytes, seed);
    const hk::on_model::outcome r = run_copy_1d(c, in, seed);
    ASSERT_EQ(r.error, "") << describe(c, bytes, seed);
    size_t bad = 0, first = bytes;
    for (size_t i = 0; i < bytes; ++i)
      if (r.out[i] != in[i]) bad++, first = first < i ? first : i;
    ASSERT_EQ(bad, 0u) << "wrong bytes, first at " << first << ": " << describe(c, bytes, seed);
  }
}

hk::stream_copy_config small(hk::stream_copy_config c) {
  c.stage_bytes = 64;  // four 16-byte vectors per stage: a few scheduler steps per chunk
  c.store_warps = c.store_warps > 2 ? 2 : c.store_warps;
  return c;
}

TEST(StreamCopyModel, DefaultCopyEverySizeClass) {
  // The library's default (per-tile, bulk load, st.global store warps) at 1 byte, under 16, one
  // vector, a tail, one chunk, a partial last chunk, many chunks.
  const hk::stream_copy_config c = small(hk::stream_copy_1d_default());
  for (uint64_t bytes : {1ull, 15ull, 16ull, 17ull, 63ull, 64ull, 65ull, 200ull, 64ull * 5 + 7})
    expect_copy_1d(c, bytes);
}

TEST(StreamCopyModel, BulkStorePathEveryLagAndStageCount) {
  for (uint32_t stages : {2u, 3u, 4u})
    for (uint32_t lag : {0u, 1u, 2u}) {
      if (lag >= stages) continue;
      hk::stream_copy_config c = small({});
      c.stages = stages;
      c.store_lag = lag;
      expect_copy_1d(c, 64 * 7 + 9);  // persistent grid of 2: each CTA wraps its ring
    }
}

TEST(StreamCopyModel, SchedulesOrdersAndTiles) {
  for (auto sched : {hk::schedule::persistent, hk::schedule::per_tile})
    for (auto order : {hk::chunk_order::interleaved, hk::chunk_order::contiguous})
      for (uint32_t tile : {1u, 3u}) {
        if (sched == hk::schedule::persistent && tile != 1) continue;
        for (auto path : {hk::store_path::bulk, hk::store_path::st_global}) {
          hk::stream_copy_config c = small({});
          c.sched = sched;
          c.order = order;
          c.tile_chunks = tile;
          c.path = path;
          c.stages = 2;
          c.store_warps = 1;
          expect_copy_1d(c, 64 * 6 + 31);
        }
      }
}

TEST(StreamCopyModel, PrefetchAndCacheHints) {
  for (auto path : {hk::store_path::bulk, hk::store_path::st_global})
    for (auto policy : {hk::l2_evict::first, hk::l2_evict::normal, hk::l2_evict::last}) {
      hk::stream_copy_config c = small({});
      c.path = path;
      c.stages = 3;
      c.prefetch_chunks = 2;
      c.load_policy = policy;
      c.store_policy = policy;
      c.store_warps = 1;
      expect_copy_1d(c, 64 * 5 + 3);
    }
  hk::stream_copy_config cs = small(hk::stream_copy_1d_default());
  cs.streaming_store = true;
  expect_copy_1d(cs, 64 * 3 + 5);
}

// ---- 2-D ------------------------------------------------------------------------------------

TEST(StreamCopyModel, TwoDimensionalTensorCopy) {
  // Whole 1 KiB rows go through the tensor maps (boxes of 1 or 2 rows, a last box past the
  // tensor), the bytes after the last whole row by ordinary loads and stores.
  for (uint32_t box_rows : {1u, 2u})
    for (uint64_t bytes : {5ull, 1024ull, 3 * 1024ull + 7})
      for (auto sched : {hk::schedule::persistent, hk::schedule::per_tile})
        for (uint64_t seed = 1; seed <= 6; ++seed) {
          hk::stream_copy_config c;
          c.sched = sched;
          c.stages = 2;
          c.stage_bytes = box_rows * hk::stream_copy_2d_row_bytes;
          const auto in = random_bytes(bytes, seed);
          run_options o;
          o.seed = seed;
          const hk::on_model::outcome r = run_copy_2d(c, in, o);
          const std::string what = "bytes=" + std::to_string(bytes) + " box_rows=" + std::to_string(box_rows) +
                                   " seed=" + std::to_string(seed);
          ASSERT_EQ(r.error, "") << what;
          ASSERT_EQ(r.out, in) << what;
        }
}

// ---- fused y = a*x + b ------------------------------------------------------------------------

// bf16 bits of the float nearest to r (ties to even), chosen by comparing the two neighbours:
// written apart from the kernel's rounding, so the check is not the code checking itself.
uint16_t reference_bf16(float r) {
  uint32_t bits;
  std::memcpy(&bits, &r, 4);
  if (std::isnan(r)) return uint16_t((bits >> 16) | 0x40u);
  const uint32_t lo = bits & 0xffff0000u, hi = lo + 0x10000u;
  float flo, fhi;
  std::memcpy(&flo, &lo, 4);
  std::memcpy(&fhi, &hi, 4);
  const double dlo = std::fabs(double(r) - double(flo)), dhi = std::fabs(double(fhi) - double(r));
  if (std::isinf(fhi) && !std::isinf(r)) return dlo <= dhi ? uint16_t(lo >> 16) : uint16_t(hi >> 16);
  if (dlo < dhi) return uint16_t(lo >> 16);
  if (dhi < dlo) return uint16_t(hi >> 16);
  return (lo >> 16) % 2 == 0 ? uint16_t(lo >> 16) : uint16_t(hi >> 16);
}

uint16_t reference_axpb(uint16_t x, float a, float b) {
  const uint32_t xb = uint32_t(x) << 16;
  float xf;
  std::memcpy(&xf, &xb, 4);
  return reference_bf16(std::fma(a, xf, b));
}

TEST(StreamCopyModel, FusedAxpbBothPaths) {
  const float a = 1.75f, b = -0.3125f;
  for (auto path : {hk::store_path::st_global, hk::store_path::bulk})
    for (uint64_t n : {1ull, 7ull, 8ull, 9ull, 32ull * 3 + 5})
      for (uint64_t seed = 1; seed <= 6; ++seed) {
        std::mt19937_64 g(seed);
        std::vector<uint16_t> x(n);
        for (auto& v : x) v = uint16_t(0x3c00u + (g() % 0x0a00u)) ^ uint16_t((g() & 1) << 15);  // +-0.0078..256
        hk::stream_copy_config c =
            small(path == hk::store_path::bulk ? hk::stream_copy_config{} : hk::stream_axpb_bf16_default());
        c.stages = 2;
        c.transform_warps = 2;
        run_options o;
        o.seed = seed;
        const hk::on_model::outcome r = run_axpb_bf16(c, x, a, b, o);
        const std::string what = std::string(path == hk::store_path::bulk ? "bulk" : "st_global") +
                                 " n=" + std::to_string(n) + " seed=" + std::to_string(seed);
        ASSERT_EQ(r.error, "") << what;
        for (uint64_t i = 0; i < n; ++i) {
          uint16_t got;
          std::memcpy(&got, r.out.data() + i * 2, 2);
          ASSERT_EQ(got, reference_axpb(x[i], a, b)) << what << " element " << i;
        }
      }
}

// A launch the hardware could not make is refused, naming the value.
TEST(StreamCopyModel, LaunchShapeMisuseIsNamed) {
  world w;
  EXPECT_THROW(launch(w, {3, 64, 2}, [](target&) {}), model_error);
  try {
    world w2;
    launch(w2, {1, 2048, 1}, [](target&) {});
    ADD_FAILURE() << "a block of 2048 threads was accepted";
  } catch (const model_error& e) {
    EXPECT_NE(std::string(e.what()).find("2048"), std::string::npos) << e.what();
  }
}

}  // namespace

// Every schedule of a small copy, up to the order of independent steps (explore_por): the bulk
// path with 2 stages and a lag of 1 over 3 chunks, one persistent CTA of 64 threads; and the
// library's default (per-tile, st.global store warps) over 2 chunks. Each must be clean, with
// every byte right, in every class, and the exploration complete.
TEST(StreamCopyModel, CleanInEverySchedule) {
  struct small_case {
    const char* what;
    hk::stream_copy_config c;
    uint64_t bytes;
  };
  hk::stream_copy_config bulk = small({});
  bulk.stages = 2;
  bulk.store_lag = 1;
  hk::stream_copy_config dflt = small(hk::stream_copy_1d_default());
  dflt.store_warps = 1;
  for (const small_case& k : {small_case{"bulk path, 2 stages, 3 chunks", bulk, 3 * 64},
                              small_case{"default path, 2 chunks", dflt, 2 * 64}}) {
    const auto in = random_bytes(k.bytes, 7);
    uint64_t wrong = 0;
    const auto run = [&](const run_options& o) {
      const auto r = run_copy_1d(k.c, in, o);
      hopper::model::outcome out;
      out.ok = r.error.empty();
      out.message = r.error;
      if (!o.chooser->ended_early() && r.out != in) ++wrong;
      return out;
    };
    const exploration e = explore_por(run, 20000);
    EXPECT_TRUE(e.complete) << k.what << ": " << e.summary();
    EXPECT_TRUE(e.clean()) << k.what << ": " << e.summary();
    EXPECT_EQ(wrong, 0u) << k.what << ": wrong bytes in a clean run";
    std::printf("    %s: clean in all %llu schedule classes (%llu runs ended early as redundant)\n", k.what,
                (unsigned long long)e.classes(), (unsigned long long)e.sleep_blocked);
  }
}
