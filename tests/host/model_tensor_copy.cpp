// The executable model's tensor copies (cp.async.bulk.tensor): the bytes of a box, with
// zeros outside the tensor and the map's swizzle, counted on the barrier like any bulk copy; the
// RAW and WAR rules of a tiled pipeline; and the misuses reported by name.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"

using namespace hopper::model;

namespace {

// The byte the copy engine puts at unswizzled box offset `o`, computed element by element from
// the tensor's bytes, independently of the model's row walk.
uint8_t expected_box_byte(const tensor_view& v, const std::vector<uint8_t>& mem, const std::vector<int64_t>& at,
                          size_t o) {
  const size_t e = o / v.elem_bytes, byte = o % v.elem_bytes;
  size_t rest = e, src = 0;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    const int64_t c = at[d] + int64_t(rest % v.box[d]);
    rest /= v.box[d];
    if (c < 0 || c >= int64_t(v.dims[d])) return 0;
    src += d == 0 ? size_t(c) * v.elem_bytes : size_t(c) * v.strides[d - 1];
  }
  return mem[src + byte];
}

struct box_case {
  uint32_t elem;
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box;
  hopper::swizzle sw;
  std::vector<int64_t> at;
};

// One box copied into shared memory and read back after the barrier's phase: every byte as
// expected_box_byte says, at its swizzled place.
void check_box(const box_case& k, uint64_t seed) {
  size_t mem_bytes = k.dims.back() * (k.dims.size() > 1 ? k.strides.back() : k.elem);
  if (k.dims.size() == 1) mem_bytes = k.dims[0] * k.elem;
  mem_bytes = (mem_bytes + 15) / 16 * 16;
  std::vector<uint8_t> image(mem_bytes);
  std::mt19937_64 rng(seed);
  for (auto& b : image) b = uint8_t(rng());
  std::vector<uint8_t> got;
  tensor_view v;
  v.elem_bytes = k.elem, v.dims = k.dims, v.strides = k.strides, v.box = k.box, v.sw = k.sw;
  const size_t bytes = v.box_bytes();
  program p = [&](world& w) {
    buffer& g = w.make_global("tensor", mem_bytes);
    std::copy(image.begin(), image.end(), g.host_data());
    buffer& s = w.make_shared("box", 1, bytes + 1024);
    barrier& full = w.make_barrier("full");
    tensor_view tv = v;
    tv.mem = &g;
    w.spawn("t", [&, tv] {
      full.init(1);
      w.fence_mbarrier_init();
      full.arrive_expect_tx(uint32_t(bytes));
      w.cp_async_bulk_tensor_shared_global(s, 1024, tv, k.at, full);
      full.wait(0);
      got.resize(bytes);
      s.read(1024, got.data(), bytes);
    });
  };
  const outcome o = run_once(p, {});
  ASSERT_TRUE(o.ok) << o.message;
  ASSERT_EQ(got.size(), bytes);
  for (size_t off = 0; off < bytes; ++off) {
    const size_t placed = hopper::swizzle_offset(k.sw, uint32_t(off));
    ASSERT_EQ(got[placed], expected_box_byte(v, image, k.at, off)) << "box byte " << off << " (at " << placed << ")";
  }
}

TEST(ModelTensorCopy, BoxesOfEveryRankWithOutOfBoundsZeros) {
  using hopper::swizzle;
  // rank 1: in bounds, past the end, before the start
  check_box({1, {1000}, {}, {64}, swizzle::none, {0}}, 1);
  check_box({1, {1000}, {}, {64}, swizzle::none, {960}}, 2);
  check_box({1, {1000}, {}, {64}, swizzle::none, {-16}}, 3);
  // rank 2, padded rows (pitch 96 bytes for 37 bf16), corners outside
  check_box({2, {37, 50}, {96}, {16, 8}, swizzle::none, {0, 0}}, 4);
  check_box({2, {37, 50}, {96}, {16, 8}, swizzle::none, {24, 45}}, 5);
  check_box({2, {37, 50}, {96}, {16, 8}, swizzle::none, {-8, -3}}, 6);
  // ranks 3 to 5
  check_box({4, {20, 6, 7}, {96, 96 * 6 + 32}, {8, 4, 3}, swizzle::none, {16, 4, 5}}, 7);
  check_box({4, {8, 3, 4, 5}, {48, 160, 640}, {4, 2, 3, 2}, swizzle::none, {4, 2, 2, 4}}, 8);
  check_box({2, {16, 3, 2, 3, 4}, {32, 96, 192, 576}, {8, 2, 2, 2, 3}, swizzle::none, {8, 2, 1, 2, 2}}, 9);
  // a box wholly outside the tensor: all zeros, still the whole box counted
  check_box({2, {64, 64}, {128}, {64, 8}, swizzle::none, {0, 100}}, 10);
}

// A tensor store writes whole 16-byte chunks: a row of 37 bf16 (74 bytes) in a 96-byte pitch is
// written to byte 80, its chunk's end, and no further; a row whose end is a chunk's end (dims[0]
// 40) gets exactly its bytes.
TEST(ModelTensorCopy, StoresWriteWholeChunksPastTheInnermostExtent) {
  for (const uint64_t inner : {37u, 40u}) {
    std::vector<uint8_t> after;
    program p = [&](world& w) {
      buffer& g = w.make_global("tensor", 96 * 4);
      std::fill(g.host_data(), g.host_data() + g.bytes(), uint8_t(0xEE));
      buffer& s = w.make_shared("box", 1, 128 * 4);
      tensor_view v;
      v.mem = &g, v.elem_bytes = 2, v.dims = {inner, 4}, v.strides = {96}, v.box = {64, 4},
      v.sw = hopper::swizzle::none;
      w.spawn("t", [&, v] {
        std::vector<uint8_t> box(128 * 4, 0x11);
        s.write(0, box.data(), box.size());
        w.fence_proxy_async();
        w.cp_async_bulk_tensor_global_shared(v, {0, 0}, s, 0);
        w.cp_async_bulk_commit_group();
        w.cp_async_bulk_wait_group(0);
        after.assign(g.host_data(), g.host_data() + g.bytes());
      });
    };
    const outcome o = run_once(p, {});
    ASSERT_TRUE(o.ok) << o.message;
    const size_t written = (inner * 2 + 15) / 16 * 16;
    for (size_t r = 0; r < 4; ++r)
      for (size_t b = 0; b < 96; ++b)
        ASSERT_EQ(after[r * 96 + b], b < written ? 0x11 : 0xEE)
            << "dims[0] " << inner << ", row " << r << " byte " << b;
  }
}

TEST(ModelTensorCopy, EverySwizzleIsTheCopyEnginesChunkXorRow) {
  using hopper::swizzle;
  for (swizzle sw : {swizzle::b32, swizzle::b64, swizzle::b128}) {
    const uint32_t span = hopper::swizzle_bytes(sw), inner = span / 2;  // bf16 rows of one span
    SCOPED_TRACE(span);
    check_box({2, {inner * 3, 40}, {inner * 3 * 2}, {inner, 16}, sw, {int64_t(inner), 8}}, 20 + span);
    check_box({2, {inner * 3, 40}, {inner * 3 * 2}, {inner, 16}, sw, {int64_t(inner * 2 + inner / 2), 30}}, 21 + span);
  }
}

// A tiled two-stage pipeline over a K-major 2-D operand, as the GEMM producer runs it: the
// producer waits on empty, arms full with the box bytes and issues the tensor copy; the consumer
// waits on full, reads the stage and releases it. Variants break one rule each.
enum class mutation { none, read_before_full, refill_after_full_not_empty, expect_fewer_bytes };

program tiled_pipeline(mutation m) {
  return [m](world& w) {
    constexpr int stages = 2, tiles = 6;
    constexpr uint32_t box_bytes = 64 * 2 * 8;  // 64 bf16 x 8 rows
    buffer& g = w.make_global("A", 64 * 2 * 8 * tiles);
    for (size_t i = 0; i < g.bytes(); ++i) g.host_data()[i] = uint8_t(i * 7 + 1);
    buffer& s = w.make_shared("A tiles", stages, 1024);
    std::vector<barrier*> full, empty;
    for (int i = 0; i < stages; ++i) {
      full.push_back(&w.make_barrier("full[" + std::to_string(i) + "]"));
      empty.push_back(&w.make_barrier("empty[" + std::to_string(i) + "]"));
    }
    named_barrier& start = w.make_named_barrier("start", 2);
    tensor_view a;
    a.mem = &g, a.elem_bytes = 2, a.dims = {64, 8 * tiles}, a.strides = {128}, a.box = {64, 8};
    a.sw = hopper::swizzle::b128;
    w.spawn("producer", [&w, &s, &start, full, empty, a, m] {
      for (int i = 0; i < stages; ++i) {
        full[size_t(i)]->init(1);
        empty[size_t(i)]->init(1);
      }
      w.fence_mbarrier_init();
      start.sync();
      for (int k = 0; k < tiles; ++k) {
        const int st = k % stages;
        const uint32_t round = uint32_t(k / stages);
        // The bug of the second mutation: waiting for the stage's previous bytes to land (full)
        // instead of for the consumer's release (empty) before refilling it.
        if (k >= stages) {
          if (m == mutation::refill_after_full_not_empty)
            full[size_t(st)]->wait((round - 1) & 1u);
          else
            empty[size_t(st)]->wait((round - 1) & 1u);
        }
        full[size_t(st)]->arrive_expect_tx(m == mutation::expect_fewer_bytes ? box_bytes - 16 : box_bytes);
        w.cp_async_bulk_tensor_shared_global(s, s.stage_offset(size_t(st)), a, {0, int64_t(8 * k)}, *full[size_t(st)]);
      }
    });
    w.spawn("consumer", [&s, &start, full, empty, m] {
      start.sync();
      for (int k = 0; k < tiles; ++k) {
        const int st = k % stages;
        if (m != mutation::read_before_full) full[size_t(st)]->wait(uint32_t(k / stages) & 1u);
        // The first 16 bytes of the box are row 0's first chunk, unmoved by the swizzle.
        const uint8_t first = s.load<uint8_t>(s.stage_offset(size_t(st)));
        const uint8_t want = uint8_t(size_t(k) * box_bytes * 7 + 1);
        if (m == mutation::none && first != want)
          throw model_error(error_kind::raw_hazard, "tile " + std::to_string(k) + " has the wrong bytes");
        empty[size_t(st)]->arrive();
      }
    });
  };
}

TEST(ModelTensorCopy, TiledPipelineIsCleanUnderEverySchedule) {
  const exploration e = explore_seeds(tiled_pipeline(mutation::none), 1, 300);
  EXPECT_TRUE(e.clean()) << e.summary();
}

// Every schedule of a broken pipeline fails with a precise report: RAW when the read comes while
// the copy is in flight, WAR when the copy overwrites a read not ordered before it (both naming
// the tensor copy and the stage), or, when the producer runs a whole phase ahead and the
// consumer's parity wait aliases, the deadlock naming the barrier, its phase and parity.
void expect_reports(mutation m, const char* why) {
  const exploration e = explore_seeds(tiled_pipeline(m), 1, 100);
  ASSERT_FALSE(e.clean()) << why;
  EXPECT_EQ(e.failures, e.runs) << why << ": some schedules pass: " << e.summary();
  int hazards = 0;
  for (const outcome& o : e.failed) {
    if (o.kind == error_kind::raw_hazard || o.kind == error_kind::war_hazard) {
      ++hazards;
      // the copy in flight or landed, or not yet issued (the bytes are still undefined)
      const bool named = o.message.find("tensor copy 'A' box {0, ") != std::string::npos ||
                         o.message.find("that nothing has written") != std::string::npos;
      EXPECT_TRUE(named) << o.message;
      EXPECT_NE(o.message.find("'A tiles'"), std::string::npos) << o.message;
    } else {
      EXPECT_EQ(o.kind, error_kind::deadlock) << o.message;
      EXPECT_NE(o.message.find("of barrier full["), std::string::npos) << o.message;
    }
  }
  EXPECT_GT(hazards, 0) << why << ": no schedule reported the hazard itself";
}

TEST(ModelTensorCopy, ReadingAStageBeforeItsFullBarrierIsAHazard) {
  expect_reports(mutation::read_before_full, "consumer reads without waiting on full");
}

TEST(ModelTensorCopy, RefillingAfterFullInsteadOfEmptyIsAHazard) {
  expect_reports(mutation::refill_after_full_not_empty, "producer refills before the consumer released");
}

TEST(ModelTensorCopy, ExpectingFewerBytesThanTheBoxIsReported) {
  // The box's 1024 bytes against the 1008 expected leave the tx-count at -16: the phase never
  // completes, and the model names the barrier and the count instead of hanging.
  const outcome o = run_once(tiled_pipeline(mutation::expect_fewer_bytes), {});
  ASSERT_FALSE(o.ok);
  EXPECT_EQ(o.kind, error_kind::deadlock) << o.message;
  EXPECT_NE(o.message.find("barrier full[0] phase 0 (parity 0), pending 0/1, tx-count -16"), std::string::npos)
      << o.message;
}

TEST(ModelTensorCopy, MisusesAreNamed) {
  const auto misuse_of = [](auto issue) {
    program p = [issue](world& w) {
      buffer& g = w.make_global("T", 4096);
      buffer& s = w.make_shared("S", 1, 4096);
      barrier& b = w.make_barrier("b");
      w.spawn("t", [&w, &g, &s, &b, issue] {
        b.init(1);
        w.fence_mbarrier_init();
        issue(w, g, s, b);
      });
    };
    const outcome o = run_once(p, {});
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.kind, error_kind::api_misuse) << o.message;
    return o.message;
  };
  const auto view = [](buffer& g) {
    tensor_view v;
    v.mem = &g, v.elem_bytes = 2, v.dims = {64, 32}, v.strides = {128}, v.box = {64, 8};
    v.sw = hopper::swizzle::b128;
    return v;
  };
  EXPECT_NE(misuse_of([&](world& w, buffer& g, buffer& s, barrier& b) {
              w.cp_async_bulk_tensor_shared_global(s, 512, view(g), {0, 0}, b);
            }).find("not 1024-byte aligned"),
            std::string::npos);
  EXPECT_NE(misuse_of([&](world& w, buffer& g, buffer& s, barrier& b) {
              tensor_view v = view(g);
              v.box = {32, 8};  // 64-byte rows under a 128-byte swizzle
              w.cp_async_bulk_tensor_shared_global(s, 0, v, {0, 0}, b);
            }).find("must span the swizzle (128 bytes), not 64"),
            std::string::npos);
  EXPECT_NE(misuse_of([&](world& w, buffer& g, buffer& s, barrier& b) {
              w.cp_async_bulk_tensor_shared_global(s, 0, view(g), {0}, b);
            }).find("1 coordinates for a rank-2 tensor"),
            std::string::npos);
  EXPECT_NE(misuse_of([&](world& w, buffer& g, buffer& s, barrier& b) {
              tensor_view v = view(g);
              v.strides = {120};
              w.cp_async_bulk_tensor_shared_global(s, 0, v, {0, 0}, b);
            }).find("stride of dimension 1 is 120 bytes"),
            std::string::npos);
  EXPECT_NE(misuse_of([&](world& w, buffer&, buffer& s, barrier& b) {
              tensor_view v = view(s);  // a shared buffer as the source
              w.cp_async_bulk_tensor_shared_global(s, 0, v, {0, 0}, b);
            }).find("not a global buffer"),
            std::string::npos);
}

}  // namespace
