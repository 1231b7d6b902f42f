// The streaming copies of kernels/copy/stream_copy.cuh against a CPU reference: random data, poisoned
// output with a guard zone behind it, sizes from 0 through tails of every kind to several MiB,
// several pipeline shapes, and every argument the launchers reject.
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "bench/copy_presets.hpp"
#include "gpu_test.hpp"
#include "kernels/copy/stream_copy.cuh"

namespace {

using hopper::kernels::stream_copy_config;

constexpr size_t kGuard = 4096;  // poisoned bytes behind the output: nothing may write them
constexpr uint8_t kPoison = 0xA5;

// Device buffers of `bytes` (+ guard), freed on scope exit.
struct dev_buf {
  uint8_t* p = nullptr;
  explicit dev_buf(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes + kGuard), cudaSuccess); }
  ~dev_buf() { cudaFree(p); }
};

std::vector<uint8_t> random_bytes(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t r = rng();
    std::memcpy(v.data() + i, &r, std::min<size_t>(8, n - i));
  }
  return v;
}

// First differing byte of two buffers, or -1.
long long first_diff(const uint8_t* a, const uint8_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return (long long)i;
  return -1;
}

enum class variant { d1, d2 };

// Runs one copy of `bytes` and compares the whole output and the guard.
void check_copy(variant v, size_t bytes, const stream_copy_config& cfg) {
  SCOPED_TRACE(testing::Message() << (v == variant::d1 ? "1-D" : "2-D") << " bytes=" << bytes
                                  << " stages=" << cfg.stages << " stage_bytes=" << cfg.stage_bytes
                                  << " blocks_per_sm=" << cfg.blocks_per_sm << " store_lag=" << cfg.store_lag
                                  << " sched=" << int(cfg.sched) << " tile_chunks=" << cfg.tile_chunks
                                  << " path=" << int(cfg.path) << " seed=" << hopper_test::fresh_seed());
  std::mt19937_64 rng(hopper_test::fresh_seed() ^ bytes ^ (uint64_t(cfg.stage_bytes) << 40));
  const std::vector<uint8_t> src = random_bytes(bytes, rng);
  dev_buf d_src(bytes), d_dst(bytes);
  ASSERT_NE(d_src.p, nullptr);
  ASSERT_NE(d_dst.p, nullptr);
  if (bytes) CUDA_OK(cudaMemcpy(d_src.p, src.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_dst.p, kPoison, bytes + kGuard));
  if (v == variant::d1)
    CUDA_OK(hopper::kernels::stream_copy_1d(d_dst.p, d_src.p, bytes, cfg));
  else
    CUDA_OK(hopper::kernels::stream_copy_2d(d_dst.p, d_src.p, bytes, cfg));
  CUDA_LAUNCH_OK();
  std::vector<uint8_t> out(bytes + kGuard);
  CUDA_OK(cudaMemcpy(out.data(), d_dst.p, bytes + kGuard, cudaMemcpyDeviceToHost));
  const long long bad = first_diff(out.data(), src.data(), bytes);
  EXPECT_EQ(bad, -1) << "byte " << bad << ": got " << int(out[size_t(bad < 0 ? 0 : bad)]) << ", want "
                     << int(src[size_t(bad < 0 ? 0 : bad)]);
  for (size_t i = 0; i < kGuard; ++i)
    ASSERT_EQ(out[bytes + i], kPoison) << "guard byte " << i << " past the end was written";
}

// Sizes: empty, below one bulk granule, around 16, around a stage, odd tails, several MiB.
std::vector<size_t> sizes_for(uint32_t stage_bytes) {
  return {0,
          1,
          15,
          16,
          17,
          31,
          33,
          1000,
          1023,
          1024,
          1025,
          4095,
          4096,
          stage_bytes - 16,
          stage_bytes - 1,
          stage_bytes,
          stage_bytes + 1,
          stage_bytes + 16,
          stage_bytes + 17,
          3 * size_t(stage_bytes) + 1040 + 7,
          1000003,
          (size_t(3) << 20) + 5,
          (size_t(8) << 20) + 13,
          (size_t(37) << 20) + 1024 + 9};
}

TEST(StreamCopy1D, EverySizeMatchesTheSource) {
  HOPPER_REQUIRE_SM90();
  const stream_copy_config cfg{};
  for (size_t n : sizes_for(cfg.stage_bytes)) check_copy(variant::d1, n, cfg);
}

TEST(StreamCopy2D, EverySizeMatchesTheSource) {
  HOPPER_REQUIRE_SM90();
  const stream_copy_config cfg{};
  for (size_t n : sizes_for(cfg.stage_bytes)) check_copy(variant::d2, n, cfg);
}

TEST(StreamCopy, EveryPipelineShapeCopiesExactly) {
  HOPPER_REQUIRE_SM90();
  const size_t n = (size_t(5) << 20) + 4096 + 3;
  for (uint32_t stages : {2u, 3u, 4u, 6u, 8u, 12u, 16u})
    for (uint32_t lag : {0u, 1u, 2u}) {
      if (lag >= stages) continue;
      stream_copy_config c;
      c.stages = stages;
      c.store_lag = lag;
      c.stage_bytes = stages <= 8 ? 16384 : 8192;
      c.blocks_per_sm = stages <= 4 ? 2 : 1;
      check_copy(variant::d1, n, c);
      check_copy(variant::d2, n, c);
    }
}

TEST(StreamCopy, SmallAndOddStagesAndManyBlocksPerSm) {
  HOPPER_REQUIRE_SM90();
  stream_copy_config c;
  c.stages = 4;
  c.stage_bytes = 1024;  // many more chunks than CTAs: each CTA wraps its ring many times
  c.blocks_per_sm = 8;
  for (size_t n : {size_t(1) << 20, (size_t(2) << 20) + 1040 + 15}) {
    check_copy(variant::d1, n, c);
    check_copy(variant::d2, n, c);
  }
  c.stage_bytes = 48 + 16 * 7;  // 1-D only: a stage that is a multiple of 16 but not of 128
  check_copy(variant::d1, (size_t(1) << 20) + 77, c);
}

// ---- fused y = a*x + b ------------------------------------------------------------------------

uint16_t bf16_bits_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);  // inputs are finite: no NaN to preserve
  return uint16_t(u >> 16);
}
float bf16_to_float(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void check_axpb(size_t n, const stream_copy_config& cfg) {
  SCOPED_TRACE(testing::Message() << "axpb n=" << n << " stages=" << cfg.stages << " stage_bytes=" << cfg.stage_bytes
                                  << " transform_warps=" << cfg.transform_warps << " store_lag=" << cfg.store_lag
                                  << " sched=" << int(cfg.sched) << " tile_chunks=" << cfg.tile_chunks
                                  << " path=" << int(cfg.path) << " seed=" << hopper_test::fresh_seed());
  std::mt19937_64 rng(hopper_test::fresh_seed() ^ (n * 0x9E3779B97F4A7C15ull));
  std::uniform_real_distribution<float> u(-8.f, 8.f);
  const float a = u(rng), b = u(rng);
  std::vector<uint16_t> x(n), want(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = bf16_bits_rne(u(rng));
    want[i] = bf16_bits_rne(std::fma(a, bf16_to_float(x[i]), b));
  }
  const size_t bytes = n * 2;
  dev_buf dx(bytes), dy(bytes);
  ASSERT_NE(dx.p, nullptr);
  ASSERT_NE(dy.p, nullptr);
  if (n) CUDA_OK(cudaMemcpy(dx.p, x.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(dy.p, kPoison, bytes + kGuard));
  CUDA_OK(hopper::kernels::stream_axpb_bf16(reinterpret_cast<__nv_bfloat16*>(dy.p),
                                            reinterpret_cast<const __nv_bfloat16*>(dx.p), n, a, b, cfg));
  CUDA_LAUNCH_OK();
  std::vector<uint8_t> out(bytes + kGuard);
  CUDA_OK(cudaMemcpy(out.data(), dy.p, bytes + kGuard, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i) {
    uint16_t got;
    std::memcpy(&got, out.data() + 2 * i, 2);
    ASSERT_EQ(got, want[i]) << "element " << i << " of " << n << ": x=" << bf16_to_float(x[i]) << " a=" << a
                            << " b=" << b;
  }
  for (size_t i = 0; i < kGuard; ++i) ASSERT_EQ(out[bytes + i], kPoison) << "guard byte " << i << " was written";
}

TEST(StreamAxpbBf16, EverySizeMatchesTheReference) {
  HOPPER_REQUIRE_SM90();
  const stream_copy_config cfg{};
  for (size_t bytes : sizes_for(cfg.stage_bytes)) check_axpb(bytes / 2 + (bytes & 1), cfg);
}

TEST(StreamAxpbBf16, EveryShapeMatchesTheReference) {
  HOPPER_REQUIRE_SM90();
  const size_t n = (size_t(3) << 20) + 11;  // 6 MiB + 22 bytes
  for (uint32_t warps : {1u, 2u, 4u, 8u, 16u})
    for (uint32_t lag : {0u, 2u}) {
      stream_copy_config c;
      c.transform_warps = warps;
      c.store_lag = lag;
      c.stages = warps <= 4 ? 8 : 4;
      c.stage_bytes = 16384;
      c.blocks_per_sm = warps <= 4 ? 1 : 2;
      check_axpb(n, c);
    }
}

// L2 prefetch distances, eviction priorities and both chunk orders change only the timing: every
// combination copies exactly, with tails and more chunks than CTAs.
TEST(StreamCopy, PrefetchEvictionAndChunkOrderCopyExactly) {
  HOPPER_REQUIRE_SM90();
  using hopper::kernels::chunk_order;
  using hopper::kernels::l2_evict;
  const size_t n = (size_t(7) << 20) + 2048 + 13;
  for (chunk_order o : {chunk_order::interleaved, chunk_order::contiguous})
    for (uint32_t pf : {0u, 3u, 16u})
      for (l2_evict e : {l2_evict::none, l2_evict::first, l2_evict::normal, l2_evict::last}) {
        stream_copy_config c;
        c.stages = 4, c.stage_bytes = 16384, c.blocks_per_sm = 2;
        c.order = o, c.prefetch_chunks = pf, c.load_policy = e;
        c.store_policy = e == l2_evict::none ? l2_evict::first : l2_evict::none;
        SCOPED_TRACE(testing::Message() << "order " << int(o) << " prefetch " << pf << " load_evict " << int(e));
        check_copy(variant::d1, n, c);
        check_copy(variant::d2, n, c);
        check_axpb(n / 2, c);
      }
}

// ---- the st_global store path: bulk loads, ld.shared + st.global from the store warps -----------

stream_copy_config st_global(uint32_t stages, uint32_t stage_bytes, uint32_t blocks_per_sm, uint32_t warps) {
  stream_copy_config c = hopper::kernels::stream_copy_st_global_default();
  c.stages = stages, c.stage_bytes = stage_bytes, c.blocks_per_sm = blocks_per_sm, c.store_warps = warps;
  return c;
}

TEST(StreamCopyStGlobal, EverySizeMatchesTheSource) {
  HOPPER_REQUIRE_SM90();
  const stream_copy_config cfg = hopper::kernels::stream_copy_st_global_default();
  ASSERT_EQ(cfg.path, hopper::kernels::store_path::st_global);
  for (size_t n : sizes_for(cfg.stage_bytes)) check_copy(variant::d1, n, cfg);
}

TEST(StreamAxpbStGlobal, EverySizeMatchesTheReference) {
  HOPPER_REQUIRE_SM90();
  const stream_copy_config cfg = hopper::kernels::stream_copy_st_global_default();
  for (size_t bytes : sizes_for(cfg.stage_bytes)) check_axpb(bytes / 2 + (bytes & 1), cfg);
}

// Every stage count, store warps from 1 to 16 (stages whose 16-byte vectors are not a multiple of
// the threads, nor of the 4-vector batch), each store form, several CTAs per SM.
TEST(StreamCopyStGlobal, EveryShapeWarpsAndStoreFormCopyExactly) {
  HOPPER_REQUIRE_SM90();
  using hopper::kernels::l2_evict;
  const size_t n = (size_t(5) << 20) + 4096 + 3;
  for (uint32_t stages : {2u, 3u, 4u, 6u, 8u, 12u, 16u})
    for (uint32_t warps : {1u, 3u, 8u, 16u})
      for (int form : {0, 1, 2}) {  // st.global, st.global.cs, st.global.L2::cache_hint
        stream_copy_config c =
            st_global(stages, stages <= 8 ? 16384 + 16 * stages : 8192 - 48, stages <= 4 ? 2 : 1, warps);
        c.streaming_store = form == 1;
        c.store_policy = form == 2 ? (warps == 3 ? l2_evict::last : l2_evict::first) : l2_evict::none;
        SCOPED_TRACE(testing::Message() << "store_warps " << warps << " form " << form);
        check_copy(variant::d1, n, c);
        if (form != 1 || stages == 4) check_axpb(n / 2, c);
      }
}

// The shapes the benchmark sweeps (with load-side prefetch and hints), small stages wrapped many
// times, and a stage smaller than one vector per thread.
TEST(StreamCopyStGlobal, SweptShapesAndSmallStagesCopyExactly) {
  HOPPER_REQUIRE_SM90();
  using hopper::kernels::chunk_order;
  using hopper::kernels::l2_evict;
  struct shape {
    uint32_t stages, kib, bpsm;
  };
  const size_t n = (size_t(9) << 20) + 1040 + 9;
  for (shape sh : {shape{2, 96, 1}, shape{3, 64, 1}, shape{4, 48, 1}, shape{4, 32, 1}, shape{8, 24, 1}, shape{6, 32, 1},
                   shape{12, 16, 1}, shape{4, 24, 2}, shape{2, 48, 2}, shape{2, 32, 3}, shape{4, 8, 4}})
    for (uint32_t warps : {2u, 4u, 8u, 16u}) {
      if (sh.bpsm * (32 + 32 * warps) > 2048) continue;
      stream_copy_config c = st_global(sh.stages, sh.kib * 1024, sh.bpsm, warps);
      c.streaming_store = warps == 4;
      c.prefetch_chunks = warps == 8 ? 2 : 0;
      c.load_policy = warps == 8 ? l2_evict::first : l2_evict::none;
      c.order = warps == 16 ? chunk_order::contiguous : chunk_order::interleaved;
      check_copy(variant::d1, n, c);
      check_axpb(n / 2, c);
    }
  stream_copy_config c = st_global(4, 1024, 8, 4);  // many more chunks than CTAs
  for (size_t bytes : {size_t(1) << 20, (size_t(2) << 20) + 1040 + 15}) check_copy(variant::d1, bytes, c);
  c = st_global(3, 48 + 16 * 7, 4, 16);  // 10 vectors per stage for 512 threads
  check_copy(variant::d1, (size_t(1) << 20) + 77, c);
  check_axpb((size_t(1) << 19) + 5, c);
}

// ---- the per-tile schedule: one short-lived CTA per tile of tile_chunks chunks -----------------

stream_copy_config per_tile(uint32_t stage_bytes, uint32_t tile_chunks, uint32_t stages, uint32_t store_warps) {
  stream_copy_config c = hopper::kernels::stream_copy_per_tile_default();
  c.stage_bytes = stage_bytes, c.tile_chunks = tile_chunks, c.stages = stages;
  if (store_warps != 0) c.path = hopper::kernels::store_path::st_global, c.store_warps = store_warps;
  return c;
}

// The launchers' defaults are the per-tile schedule (docs/copy.md, "The per-tile schedule"), the ring sized to the
// tile.
TEST(StreamCopyPerTile, DefaultsArePerTile) {
  for (const stream_copy_config& c :
       {hopper::kernels::stream_copy_per_tile_default(), hopper::kernels::stream_copy_1d_default(),
        hopper::kernels::stream_axpb_bf16_default()}) {
    EXPECT_EQ(c.sched, hopper::kernels::schedule::per_tile);
    EXPECT_GE(c.tile_chunks, 1u);
    EXPECT_EQ(hopper::kernels::detail::ring_bytes(c), uint64_t(std::min(c.stages, c.tile_chunks)) * c.stage_bytes);
  }
  EXPECT_EQ(hopper::kernels::stream_copy_1d_default().path, hopper::kernels::store_path::st_global);
  EXPECT_EQ(hopper::kernels::stream_copy_1d_bulk_default().sched, hopper::kernels::schedule::persistent);
}

// Sizes from 0 through every tail around the chunk and the tile, up to 37 MiB, for the swept
// tile shapes: a ring that holds the whole tile, and one that wraps (tile_chunks > stages);
// bulk stores and st.global from 4 or 8 warps; 1-D and fused (2-D: bulk, whole 1 KiB rows).
TEST(StreamCopyPerTile, EverySizeMatchesTheSource) {
  HOPPER_REQUIRE_SM90();
  for (const stream_copy_config& c :
       {per_tile(4096, 1, 2, 0), per_tile(8192, 2, 2, 0), per_tile(16384, 4, 2, 0), per_tile(4096, 1, 2, 8),
        per_tile(16384, 4, 4, 4), per_tile(8192, 4, 2, 8), hopper::kernels::stream_copy_1d_default()}) {
    std::vector<size_t> sizes = sizes_for(c.stage_bytes);
    const size_t tile = size_t(c.stage_bytes) * c.tile_chunks;
    for (size_t extra : {tile - 16, tile - 1, tile, tile + 1, 2 * tile + 16 + 3}) sizes.push_back(extra);
    for (size_t n : sizes) {
      check_copy(variant::d1, n, c);
      check_axpb(n / 2 + (n & 1), c);
      if (c.path == hopper::kernels::store_path::bulk) check_copy(variant::d2, n, c);
    }
  }
}

// Odd shapes: a chunk that is a multiple of 16 but not of 128, a tile of 16 chunks through a
// 3-stage ring with store lags 0 and 2, one store warp, the fused kernel's transform warps.
TEST(StreamCopyPerTile, OddTilesCopyExactly) {
  HOPPER_REQUIRE_SM90();
  const size_t n = (size_t(3) << 20) + 1040 + 7;
  stream_copy_config c = per_tile(48 + 16 * 7, 3, 2, 0);
  check_copy(variant::d1, n, c);
  check_axpb(n / 2, c);
  for (uint32_t lag : {0u, 2u}) {
    c = per_tile(2048, 16, 3, 0);
    c.store_lag = lag;
    check_copy(variant::d1, n, c);
    check_copy(variant::d2, n, c);
    c.transform_warps = lag == 0 ? 1 : 16;
    check_axpb(n / 2, c);
  }
  c = per_tile(4096 + 16, 3, 3, 1);
  check_copy(variant::d1, n, c);
  check_axpb(n / 2, c);
}

// ---- rejections (no GPU needed: validation precedes every CUDA call) ---------------------------

template <class F>
void expect_reject(F&& f, const char* fragment) {
  try {
    f();
    ADD_FAILURE() << "accepted, expected a rejection mentioning '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(StreamCopyArgs, RejectsEachBadArgument) {
  auto* d = reinterpret_cast<uint8_t*>(uintptr_t(1) << 40);
  auto* s = reinterpret_cast<uint8_t*>(uintptr_t(2) << 40);
  using hopper::kernels::stream_copy_1d;
  using hopper::kernels::stream_copy_2d;
  const stream_copy_config ok{};
  expect_reject([&] { (void)stream_copy_1d(d + 8, s, 100, ok); }, "dst = 0x10000000008 is not 16-byte aligned");
  expect_reject([&] { (void)stream_copy_1d(d, s + 4, 100, ok); }, "src = 0x20000000004 is not 16-byte aligned");
  // The regions' ends are computed without wrapping: a size that runs past the address space is
  // rejected by name, not taken for a short copy.
  expect_reject([&] { (void)stream_copy_1d(d, s, UINT64_MAX - 15, ok); }, "runs past the end of the address space");
  expect_reject(
      [&] {
        (void)hopper::kernels::stream_axpb_bf16(reinterpret_cast<__nv_bfloat16*>(d),
                                                reinterpret_cast<const __nv_bfloat16*>(s + 2), 64, 1.f, 0.f);
      },
      "x = 0x20000000002 is not 16-byte aligned");
  expect_reject([&] { (void)stream_copy_1d(nullptr, s, 100, ok); }, "dst is null");
  expect_reject([&] { (void)stream_copy_1d(d, d + 64, 100, ok); }, "overlap by 36 of the 100 bytes");
  auto with = [&](auto edit) {
    stream_copy_config c = ok;
    edit(c);
    return c;
  };
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.stages = 5; })); }, "stages = 5");
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.stage_bytes = 1000; })); },
                "stage_bytes = 1000");
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.stage_bytes = 0; })); }, "stage_bytes = 0");
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.store_lag = 3; })); }, "store_lag = 3");
  expect_reject(
      [&] {
        (void)stream_copy_1d(d, s, 100, with([](auto& c) {
                               c.stages = 2;
                               c.store_lag = 2;
                             }));
      },
      "leaves no stage");
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.blocks_per_sm = 0; })); },
                "blocks_per_sm = 0");
  expect_reject(
      [&] {
        (void)stream_copy_1d(d, s, 100, with([](auto& c) {
                               c.stages = 16;
                               c.stage_bytes = 16384;
                             }));
      },
      "exceeds the shared-memory limit of 232448 bytes (227 KiB)");
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.blocks_per_sm = 2; })); },
                "does not fit the 228 KiB");
  expect_reject([&] { (void)stream_copy_2d(d, s, 1 << 20, with([](auto& c) { c.stage_bytes = 1040; })); },
                "multiple of 1024");
  expect_reject(
      [&] {
        (void)hopper::kernels::stream_axpb_bf16(reinterpret_cast<__nv_bfloat16*>(d),
                                                reinterpret_cast<const __nv_bfloat16*>(s), 100, 1.f, 0.f,
                                                with([](auto& c) { c.transform_warps = 17; }));
      },
      "transform_warps = 17");
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.prefetch_chunks = 65; })); },
                "prefetch_chunks = 65");
  expect_reject(
      [&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.store_policy = hopper::kernels::l2_evict(7); })); },
      "l2_evict value 7");
  expect_reject(
      [&] { (void)stream_copy_1d(d, s, 100, with([](auto& c) { c.order = hopper::kernels::chunk_order(2); })); },
      "chunk_order value 2");
  const stream_copy_config st = hopper::kernels::stream_copy_st_global_default();
  auto with_st = [&](auto edit) {
    stream_copy_config c = st;
    edit(c);
    return c;
  };
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with_st([](auto& c) { c.store_warps = 0; })); },
                "store_warps = 0");
  expect_reject(
      [&] {
        (void)hopper::kernels::stream_axpb_bf16(reinterpret_cast<__nv_bfloat16*>(d),
                                                reinterpret_cast<const __nv_bfloat16*>(s), 100, 1.f, 0.f,
                                                with_st([](auto& c) { c.store_warps = 17; }));
      },
      "store_warps = 17");
  expect_reject(
      [&] {
        (void)stream_copy_1d(d, s, 100, with_st([](auto& c) {
                               c.streaming_store = true;
                               c.store_policy = hopper::kernels::l2_evict::first;
                             }));
      },
      "exclusive");
  expect_reject([&] { (void)stream_copy_2d(d, s, 1 << 20, st); }, "1-D and fused kernels only");
  expect_reject(
      [&] { (void)stream_copy_1d(d, s, 100, with_st([](auto& c) { c.path = hopper::kernels::store_path(5); })); },
      "store_path value 5");
  const stream_copy_config pt = hopper::kernels::stream_copy_per_tile_default();
  auto with_pt = [&](auto edit) {
    stream_copy_config c = pt;
    edit(c);
    return c;
  };
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with_pt([](auto& c) { c.tile_chunks = 0; })); },
                "tile_chunks = 0");
  expect_reject([&] { (void)stream_copy_1d(d, s, 100, with_pt([](auto& c) { c.tile_chunks = 17; })); },
                "tile_chunks = 17");
  expect_reject(
      [&] { (void)stream_copy_1d(d, s, 100, with_pt([](auto& c) { c.sched = hopper::kernels::schedule(5); })); },
      "schedule value 5");
  expect_reject([&] { (void)stream_copy_1d(d, s, uint64_t(1) << 36, with_pt([](auto& c) { c.stage_bytes = 16; })); },
                "2^31-1 tiles");
  // The ring of a tile holds min(stages, tile_chunks) chunks: 16 x 16 KiB is too much for a
  // persistent CTA, but a per-tile CTA of 2 chunks takes 32 KiB; blocks_per_sm does not apply.
  (void)stream_copy_1d(d, s, 0, with_pt([](auto& c) { c.stages = 16, c.stage_bytes = 16384, c.tile_chunks = 2; }));
  (void)stream_copy_1d(d, s, 0, with_pt([](auto& c) { c.blocks_per_sm = 32, c.stage_bytes = 65536; }));
  expect_reject(
      [&] {
        (void)stream_copy_1d(d, s, 100,
                             with_pt([](auto& c) { c.stages = 16, c.stage_bytes = 16384, c.tile_chunks = 16; }));
      },
      "exceeds the shared-memory limit of 232448 bytes (227 KiB)");
}

// The launchers launch the plan the model runs (kernels/copy/stream_copy_plan.hpp): a plan made
// once and launched with launch_copy copies as stream_copy_1d does, and a 2-D copy made ready
// holds the plan copy_plan::copy_2d makes.
TEST(StreamCopyPlan, ThePlanIsWhatTheLaunchersLaunch) {
  HOPPER_REQUIRE_SM90();
  const size_t bytes = (size_t(3) << 20) + 1040 + 7;
  std::mt19937_64 rng(hopper_test::fresh_seed());
  const std::vector<uint8_t> src = random_bytes(bytes, rng);
  dev_buf d_src(bytes), d_dst(bytes);
  ASSERT_NE(d_src.p, nullptr);
  ASSERT_NE(d_dst.p, nullptr);
  CUDA_OK(cudaMemcpy(d_src.p, src.data(), bytes, cudaMemcpyHostToDevice));
  for (const stream_copy_config& c : {hopper::kernels::stream_copy_1d_default(), stream_copy_config{}}) {
    CUDA_OK(cudaMemset(d_dst.p, kPoison, bytes + kGuard));
    const auto plan = hopper::kernels::copy_plan::copy_1d(d_dst.p, d_src.p, bytes, c);
    CUDA_OK(hopper::kernels::launch_copy(plan));
    CUDA_LAUNCH_OK();
    std::vector<uint8_t> out(bytes + kGuard);
    CUDA_OK(cudaMemcpy(out.data(), d_dst.p, bytes + kGuard, cudaMemcpyDeviceToHost));
    EXPECT_EQ(first_diff(out.data(), src.data(), bytes), -1);
    EXPECT_EQ(out[bytes], kPoison);
  }
  const auto two = hopper::kernels::stream_copy_2d_plan::make(d_dst.p, d_src.p, bytes);
  const auto plan = hopper::kernels::copy_plan::copy_2d(d_dst.p, d_src.p, bytes, stream_copy_config{});
  EXPECT_EQ(two.plan.rows, plan.rows);
  EXPECT_EQ(two.plan.chunks, plan.chunks);
  EXPECT_EQ(two.src_map.box_bytes(), plan.stage_bytes);
  EXPECT_THROW((void)hopper::kernels::launch_copy(plan), std::invalid_argument);
}

}  // namespace
