// The model's tensor cores (model/include/hopper/model/wgmma.hpp) and shared-window addresses
// (shared_window.hpp), on the model's target, every thread a task:
//   - shared buffers get window addresses (first at 1024, each next 1024-aligned, at most 227 KiB);
//   - wgmma.mma_async.m64nNk16.f32.bf16.bf16 computes D = A*B (+ D) from tiles the model's TMA
//     lays out (every swizzle, K-major and MN-major A and B, N = 8 .. 256), with descriptors built
//     as the GEMM builds them, each fragment element checked against a CPU reference in double;
//   - the operand reads are async-proxy reads in flight until wgmma.wait_group: a refill or a
//     store before the wait is a WAR, a read of bytes whose TMA phase was not waited for is a RAW,
//     a generic write without fence.proxy.async is a RAW; the correct pipelines (wait_group 0 or 1,
//     then a .relaxed release) are clean under every seed;
//   - misuses (no wgmma.fence, divergent threads, differing descriptors, an address under no
//     buffer, a partial warpgroup, a base offset) are reported by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hopper/model/model.hpp"
#include "hopper/model/target.hpp"
#include "hopper/ptx/wgmma_desc.hpp"

using namespace hopper::model;
namespace ptx = hopper::ptx;
using hopper::swizzle;

namespace {

constexpr uint32_t kK = 64;  // the K of one tile: four k-steps of 16

// Random bf16 values (both signs, magnitudes 2^-3 .. 2^3, all mantissas).
std::vector<uint16_t> random_bf16(size_t n, std::mt19937_64& g) {
  std::vector<uint16_t> v(n);
  for (auto& h : v) h = uint16_t(((g() & 1u) << 15) | ((124u + g() % 6u) << 7) | (g() & 0x7Fu));
  return v;
}

// How one operand (A: mn = 64 rows; B: mn = N columns) lies in shared memory: TMA boxes as the
// GEMM loads them (K-major: boxes {W/2 (K), mn}, one per W bytes of K; MN-major: boxes
// {W/2 (MN), 64 (K)}, one per W/2 MN-elements), and the descriptor of k-step kk.
struct op_layout {
  uint32_t mn;
  bool mn_major;
  swizzle sw;

  uint32_t W() const { return sw == swizzle::none ? 16u : hopper::swizzle_bytes(sw); }
  uint32_t E() const { return W() / 2; }  // bf16 elements per box row
  uint32_t boxes() const { return mn_major ? (mn + E() - 1) / E() : kK / E(); }
  uint32_t box_bytes() const { return mn_major ? kK * W() : mn * W(); }
  uint32_t bytes() const { return boxes() * box_bytes(); }
  ptx::wgmma_swizzle mode() const {
    switch (sw) {
      case swizzle::b128:
        return ptx::wgmma_swizzle::b128;
      case swizzle::b64:
        return ptx::wgmma_swizzle::b64;
      case swizzle::b32:
        return ptx::wgmma_swizzle::b32;
      default:
        return ptx::wgmma_swizzle::none;
    }
  }
  // The tensor of `tiles` tiles in global memory (K-major: mn rows of K per tile; MN-major: K
  // rows of mn per tile).
  tensor_view view(buffer& g, uint32_t tiles) const {
    tensor_view v;
    v.mem = &g, v.elem_bytes = 2, v.sw = sw;
    if (!mn_major)
      v.dims = {kK, uint64_t(mn) * tiles}, v.strides = {kK * 2}, v.box = {E(), mn};
    else
      v.dims = {mn, uint64_t(kK) * tiles}, v.strides = {uint64_t(mn) * 2}, v.box = {E(), kK};
    return v;
  }
  int64_t c0(uint32_t box) const { return int64_t(box) * E(); }
  int64_t c1(uint32_t tile) const { return int64_t(tile) * (mn_major ? kK : mn); }
  // Byte offset in global memory of element (mn, k) of tile r.
  size_t global_offset(uint32_t r, uint32_t i, uint32_t k) const {
    return mn_major ? ((size_t(r) * kK + k) * mn + i) * 2 : ((size_t(r) * mn + i) * kK + k) * 2;
  }
  // The descriptor of k-step kk of the tile at window address `base`, as gemm_kernel.cuh builds
  // it for 128B (make_wgmma_desc_kmajor_sw128 / make_wgmma_desc_mnmajor_sw128), and from the
  // canonical layouts for the other modes.
  uint64_t desc(uint32_t base, uint32_t kk) const {
    if (sw == swizzle::b128)
      return mn_major ? ptx::make_wgmma_desc_mnmajor_sw128(base + kk * 2048, box_bytes())
                      : ptx::make_wgmma_desc_kmajor_sw128(base + kk * 32);
    if (!mn_major) {
      if (sw == swizzle::none)  // core matrices of 8 rows x 16 B; LBO: next 8 K, SBO: next 8 rows
        return ptx::make_wgmma_desc(base + 2 * kk * box_bytes(), box_bytes(), 128, mode());
      const uint32_t byte = kk * 32;  // of K, in rows of W bytes split over boxes
      return ptx::make_wgmma_desc(base + byte / W() * box_bytes() + byte % W(), 16, 8 * W(), mode());
    }
    if (sw == swizzle::none)  // core matrices of 8 K-rows x 16 B; LBO: next 8 K-rows, SBO: next 8 MN
      return ptx::make_wgmma_desc(base + kk * 16 * 16, 128, box_bytes(), mode());
    return ptx::make_wgmma_desc(base + kk * 16 * W(), box_bytes(), 8 * W(), mode());  // LBO: next MN box
  }
};

enum class mode {
  wait0,                // wait_group 0, then release the stage (.relaxed)
  wait1,                // wait_group 1, then release the previous stage (the GEMM's pattern)
  release_before_wait,  // bug: the stage is released right after commit, before wait_group
  release_current,      // bug: after wait_group 1 the current stage (still read) is released
  store_before_wait,    // bug: a generic store into the A stage between commit and wait_group
  skip_full_wait,       // bug: the first tile is read without waiting on its full barrier
};

struct config {
  int n = 64;
  bool a_mn = false, b_mn = false;
  swizzle sw = swizzle::b128;
  uint32_t rounds = 1;
  mode m = mode::wait0;
  bool with_c = false;  // accumulate into given C (scale-d = 1 from the first step)
  bool a_regs = false;  // A from each thread's registers (its A fragment), not through a descriptor
  uint64_t data_seed = 1;
};

std::string describe(const config& c) {
  static const char* sw[] = {"none", "32B", "64B", "128B"};
  return "N=" + std::to_string(c.n) + " A " +
         (c.a_regs ? "in registers"
          : c.a_mn ? "M-major"
                   : "K-major") +
         ", B " + (c.b_mn ? "N-major" : "K-major") + ", swizzle " + sw[int(c.sw)] + ", rounds " +
         std::to_string(c.rounds);
}

struct result {
  outcome o;
  std::vector<std::vector<float>> d;   // d[round][thread * N/2 + i]
  std::vector<std::vector<float>> cs;  // the C given per round (with_c)
  std::vector<uint16_t> a, b;          // logical tiles: a[(r*64 + m)*64 + k], b[(r*64 + k)*N + n]
};

struct bar_set {
  mbarrier_slot full[2], empty[2];
};

// The accumulator d[i] of thread t: where the test expects it (PTX ISA, wgmma .m64nNk16 D).
uint32_t frag_row(uint32_t t, uint32_t i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2); }
uint32_t frag_col(uint32_t t, uint32_t i) { return 8 * (i / 4) + 2 * (t % 4) + (i % 2); }

// One warpgroup multiplies `rounds` tiles of A (64 x 64) and B (64 x N), loaded by TMA. One tile:
// a CTA of 128 threads, thread 0 issues the copies. More: a ring of 2 stages filled by a producer
// thread 128 (a CTA of 160), released by the warpgroup.
template <int N, int TA, int TB, int SA = 1, int SB = 1>
result run(const config& c, uint64_t seed) {
  static_assert(TA == 0 || TA == 1, "");
  result res;
  const op_layout la{64, c.a_mn, c.sw}, lb{uint32_t(N), c.b_mn, c.sw};
  const uint32_t R = c.rounds, S = R > 1 ? 2 : 1;
  std::mt19937_64 g(c.data_seed * 1000003 + N);
  res.a = random_bf16(size_t(R) * 64 * kK, g);
  res.b = random_bf16(size_t(R) * kK * N, g);
  res.d.assign(R, std::vector<float>(128 * (N / 2), 0.f));
  res.cs.assign(R, std::vector<float>(128 * (N / 2), 0.f));
  for (auto& cr : res.cs)
    for (auto& x : cr) x = float(int(g() % 17) - 8) * 0.25f;
  const mode m = c.m;
  const bool with_c = c.with_c, a_regs = c.a_regs;
  program p = [&](world& w) {
    buffer& ga = w.make_global("A", size_t(R) * 64 * kK * 2);
    buffer& gb = w.make_global("B", size_t(R) * kK * N * 2);
    for (uint32_t r = 0; r < R; ++r)
      for (uint32_t i = 0; i < 64; ++i)
        for (uint32_t k = 0; k < kK; ++k)
          std::memcpy(ga.host_data() + la.global_offset(r, i, k), &res.a[(size_t(r) * 64 + i) * kK + k], 2);
    for (uint32_t r = 0; r < R; ++r)
      for (uint32_t k = 0; k < kK; ++k)
        for (uint32_t i = 0; i < uint32_t(N); ++i)
          std::memcpy(gb.host_data() + lb.global_offset(r, i, k), &res.b[(size_t(r) * kK + k) * N + i], 2);
    const tensor_view va = la.view(ga, R), vb = lb.view(gb, R);
    const uint32_t producer = R > 1 ? 128 : 0;
    launch(w, {1, producer + (R > 1 ? 32 : 128), 1}, [&, va, vb, la, lb, R, S, m, with_c, a_regs, producer](target& t) {
      auto& bars = cta_shared<bar_set>(t, "bars");
      const auto sa = shared_buffer(t, "A stages", S, la.bytes());
      const auto sb = shared_buffer(t, "B stages", S, lb.bytes());
      if (t.thread() == 0) {
        for (uint32_t s = 0; s < S; ++s) {
          t.mbarrier_init(bars.full[s], 1, "full", s);
          t.mbarrier_init(bars.empty[s], 1, "empty", s);
        }
        t.fence_mbarrier_init_release_cluster();
      }
      t.syncthreads();
      if (t.thread() == producer) {
        for (uint32_t r = 0; r < R; ++r) {
          const uint32_t s = r % S;
          if (r >= S) t.mbarrier_wait(bars.empty[s], hopper::parity((r / S - 1) & 1u));
          t.mbarrier_arrive_expect_tx(bars.full[s], la.bytes() + lb.bytes());
          for (uint32_t j = 0; j < la.boxes(); ++j)
            t.cp_async_bulk_tensor_shared_cluster_global(sa + s * la.bytes() + j * la.box_bytes(), va, bars.full[s],
                                                         la.c0(j), la.c1(r));
          for (uint32_t j = 0; j < lb.boxes(); ++j)
            t.cp_async_bulk_tensor_shared_cluster_global(sb + s * lb.bytes() + j * lb.box_bytes(), vb, bars.full[s],
                                                         lb.c0(j), lb.c1(r));
          // The bug of skip_full_wait reads the first tile after its copy was issued (not landed).
          if (m == mode::skip_full_wait && r == 0) t.syncthreads();
        }
        if (producer == 128) return;
      }
      if (m == mode::skip_full_wait && t.thread() != producer) t.syncthreads();
      if (t.thread() >= 128) return;
      const uint32_t me = t.thread();
      float acc[2][N / 2];
      auto save = [&](uint32_t r) {
        for (int i = 0; i < N / 2; ++i) res.d[r][me * (N / 2) + uint32_t(i)] = acc[r % 2][i];
      };
      const bool pipelined = m == mode::wait1 || m == mode::release_current;
      for (uint32_t r = 0; r < R; ++r) {
        const uint32_t s = r % S;
        if (!(m == mode::skip_full_wait && r == 0)) t.mbarrier_wait(bars.full[s], hopper::parity((r / S) & 1u));
        for (int i = 0; i < N / 2; ++i)
          acc[r % 2][i] = with_c ? res.cs[r][me * (N / 2) + uint32_t(i)] : std::numeric_limits<float>::quiet_NaN();
        const uint32_t a_base = t.smem_addr(sa + s * la.bytes()), b_base = t.smem_addr(sb + s * lb.bytes());
        t.wgmma_fence();
        for (uint32_t kk = 0; kk < kK / 16; ++kk) {
          if (a_regs) {  // this thread's A fragment of k-step kk: element e at the place of d[e]
            uint32_t fa[4] = {};
            for (uint32_t e = 0; e < 8; ++e)
              fa[e / 2] |= uint32_t(res.a[(size_t(r) * 64 + frag_row(me, e)) * kK + 16 * kk + frag_col(me, e)])
                           << (16 * (e % 2));
            if constexpr (hopper::ptx::wgmma_rs_n_instantiated(N)) {
              t.wgmma_m64nNk16_f32_bf16_bf16<N, SA, SB, TB>(acc[r % 2], fa, lb.desc(b_base, kk), with_c || kk > 0);
            } else {
              wgmma_mma_args args;
              args.n = N, args.scale_a = SA, args.scale_b = SB, args.trans_b = TB, args.a_in_registers = true;
              args.desc_b = lb.desc(b_base, kk), args.scale_d = with_c || kk > 0;
              wgmma_unit(t).mma_async(world_of(t), t.thread() % 128u, args, acc[r % 2], fa);
            }
            continue;
          }
          if constexpr (hopper::ptx::wgmma_n_instantiated(N)) {
            t.wgmma_m64nNk16_f32_bf16_bf16<N, SA, SB, TA, TB>(acc[r % 2], la.desc(a_base, kk), lb.desc(b_base, kk),
                                                              with_c || kk > 0);
          } else {  // an N the PTX layer does not instantiate: the model's tensor core itself
            wgmma_mma_args args;
            args.n = N, args.scale_a = SA, args.scale_b = SB, args.trans_a = TA, args.trans_b = TB;
            args.desc_a = la.desc(a_base, kk), args.desc_b = lb.desc(b_base, kk), args.scale_d = with_c || kk > 0;
            wgmma_unit(t).mma_async(world_of(t), t.thread() % 128u, args, acc[r % 2]);
          }
        }
        t.wgmma_commit_group();
        if (m == mode::store_before_wait && me == 5) (sa + s * la.bytes()).store(0, 0);
        if (m == mode::release_before_wait && me == 0) (void)t.mbarrier_arrive<ptx::sem::relaxed>(bars.empty[s]);
        if (pipelined) {
          t.wgmma_wait_group<1>();
          if (m == mode::release_current) {
            if (me == 0) (void)t.mbarrier_arrive<ptx::sem::relaxed>(bars.empty[s]);
          } else if (r > 0) {
            if (me == 0) (void)t.mbarrier_arrive<ptx::sem::relaxed>(bars.empty[(r - 1) % S]);
            t.wgmma_fence_operand(acc[(r - 1) % 2]);
            save(r - 1);
          }
        } else {
          t.wgmma_wait_group<0>();
          if (m != mode::release_before_wait && me == 0) (void)t.mbarrier_arrive<ptx::sem::relaxed>(bars.empty[s]);
          t.wgmma_fence_operand(acc[r % 2]);
          save(r);
        }
      }
      if (pipelined) {
        t.wgmma_wait_group<0>();
        t.wgmma_fence_operand(acc[(R - 1) % 2]);
        save(R - 1);
      }
    });
  };
  run_options o;
  o.seed = seed;
  o.stack_bytes = 128 * 1024;
  res.o = run_once(p, o);
  return res;
}

template <int N, int SA = 1, int SB = 1>
result run_any(const config& c, uint64_t seed) {
  if (!c.a_mn && !c.b_mn) return run<N, 0, 0, SA, SB>(c, seed);
  if (!c.a_mn && c.b_mn) return run<N, 0, 1, SA, SB>(c, seed);
  if (c.a_mn && !c.b_mn) return run<N, 1, 0, SA, SB>(c, seed);
  return run<N, 1, 1, SA, SB>(c, seed);
}

// Every fragment element of every round against sum_k sa*A[m][k] * sb*B[k][n] (+ C) in double.
void expect_products(const config& c, const result& res, double sa = 1, double sb = 1) {
  ASSERT_TRUE(res.o.ok) << describe(c) << ": " << res.o.message;
  const uint32_t N = uint32_t(c.n);
  int bad = 0;
  for (uint32_t r = 0; r < c.rounds; ++r)
    for (uint32_t t = 0; t < 128; ++t)
      for (uint32_t i = 0; i < N / 2; ++i) {
        const uint32_t row = frag_row(t, i), col = frag_col(t, i);
        double ref = c.with_c ? double(res.cs[r][t * (N / 2) + i]) : 0.0, mag = std::fabs(ref);
        for (uint32_t k = 0; k < kK; ++k) {
          const double x = sa * bf16_to_float(res.a[(size_t(r) * 64 + row) * kK + k]) *
                           (sb * bf16_to_float(res.b[(size_t(r) * kK + k) * N + col]));
          ref += x, mag += std::fabs(x);
        }
        const double got = res.d[r][t * (N / 2) + i];
        if (!(std::fabs(got - ref) <= 1e-6 * mag + 1e-30) && ++bad <= 5)
          ADD_FAILURE() << describe(c) << ": round " << r << " thread " << t << " d[" << i << "] (row " << row
                        << ", col " << col << ") = " << got << ", expected " << ref;
      }
  EXPECT_EQ(bad, 0) << describe(c);
}

// ---- shared-window addresses ------------------------------------------------------------------

TEST(ModelWgmma, SharedBuffersGetWindowAddressesFrom1024AlignedTo1024) {
  world w;
  buffer& a = w.make_shared("a", 1, 100);
  buffer& b = w.make_shared("b", 2, 1500);
  buffer& c = w.make_shared("c", 1, 16);
  buffer& d = w.make_shared("d", 1, 64, 1);  // another CTA: its own window
  const shared_window& win = w.smem_window();
  EXPECT_EQ(win.address(a), 1024u);
  EXPECT_EQ(win.address(b), 2048u);
  EXPECT_EQ(win.address(b, 1600), 2048u + 1600u);
  EXPECT_EQ(win.address(c), 5120u);  // 2048 + 3000 rounded up
  EXPECT_EQ(win.address(d), 1024u);
  EXPECT_EQ(win.find(0, 2048 + 2999).first, &b);
  EXPECT_EQ(win.find(0, 2048 + 2999).second, 2999u);
  EXPECT_EQ(win.find(1, 1024 + 63).first, &d);
  EXPECT_EQ(win.find(0, 1200).first, nullptr);  // between a and b
  EXPECT_EQ(win.find(0, 100).first, nullptr);   // the reserved first KiB
  try {
    win.resolve(0, 1200, "a test read of");
    ADD_FAILURE() << "no report";
  } catch (const model_error& e) {
    EXPECT_EQ(e.kind(), error_kind::undefined_behavior);
    EXPECT_NE(std::string(e.what()).find("0x004b0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'b' at 0x00800"), std::string::npos) << e.what();
  }
  EXPECT_THROW(win.address(w.make_global("g", 64)), model_error);
}

TEST(ModelWgmma, SharedMemoryOfACtaIsAtMost227KiB) {
  world w;
  w.make_shared("big", 1, 200 * 1024);
  w.make_shared("exactly the rest", 1, 27 * 1024);  // 227 KiB in all
  w.make_shared("other CTA", 1, 227 * 1024, 1);
  try {
    w.make_shared("one more", 1, 16);
    ADD_FAILURE() << "no report";
  } catch (const model_error& e) {
    EXPECT_EQ(e.kind(), error_kind::api_misuse);
    const std::string m = e.what();
    EXPECT_NE(m.find("'one more' of CTA 0"), std::string::npos) << m;
    EXPECT_NE(m.find("227 KiB"), std::string::npos) << m;
    EXPECT_NE(m.find("'big' at 0x00400"), std::string::npos) << m;
  }
}

TEST(ModelWgmma, SmemAddrIsTheBuffersWindowAddressPlusOffset) {
  world w;
  std::vector<uint32_t> got(4, 0);
  launch(w, {2, 32, 1}, [&](target& t) {
    const auto x = shared_buffer(t, "x", 1, 2992);
    const auto y = shared_buffer(t, "y", 2, 512);
    if (t.thread() != 0) return;
    got[t.block() * 2] = t.smem_addr(x + 16);
    got[t.block() * 2 + 1] = t.smem_addr(y.as<uint32_t>() + 3);
  });
  w.run();
  EXPECT_EQ(got, (std::vector<uint32_t>{1024 + 16, 4096 + 12, 1024 + 16, 4096 + 12}));
}

// ---- descriptors and fragments ----------------------------------------------------------------

TEST(ModelWgmma, DescriptorFieldsDecodeAsTheBuildersEncodeThem) {
  const wgmma_matrix m = wgmma_matrix::decode(ptx::make_wgmma_desc(0x41230, 0x2040, 0x400, ptx::wgmma_swizzle::b64, 5));
  EXPECT_EQ(m.start, 0x01230u);  // (x & 0x3FFFF) >> 4: bit 18 is dropped
  EXPECT_EQ(m.lbo, 0x2040u);
  EXPECT_EQ(m.sbo, 0x400u);
  EXPECT_EQ(m.base_offset, 5u);
  EXPECT_EQ(m.sw, swizzle::b64);
  const wgmma_matrix k = wgmma_matrix::decode(ptx::make_wgmma_desc_kmajor_sw128(0x2000 + 96));
  EXPECT_EQ(k.start, 0x2060u);
  EXPECT_EQ(k.lbo, 16u);
  EXPECT_EQ(k.sbo, 1024u);
  EXPECT_EQ(k.sw, swizzle::b128);
  const wgmma_matrix n = wgmma_matrix::decode(ptx::make_wgmma_desc_mnmajor_sw128(0x4800, 8192));
  EXPECT_EQ(n.lbo, 8192u);
  EXPECT_EQ(n.sbo, 1024u);
  EXPECT_EQ(wgmma_matrix::decode(ptx::make_wgmma_desc(0x400, 128, 256, ptx::wgmma_swizzle::b32)).sw, swizzle::b32);
  EXPECT_EQ(wgmma_matrix::decode(ptx::make_wgmma_desc(0x400, 128, 256, ptx::wgmma_swizzle::none)).sw, swizzle::none);
  // K-major 128B: row r of the tile at r*128, its 16-byte chunks XOR r%8 (what TMA writes)
  EXPECT_EQ(k.physical(k.address(false, 3, 5)), 0x2000u + 3 * 128 + ((6 ^ 3) << 4) + 10);
}

TEST(ModelWgmma, EveryAccumulatorOfTheWarpgroupIsOneElementOfD) {
  for (uint32_t n : {8u, 64u, 256u}) {
    std::vector<int> seen(64 * n, 0);
    for (uint32_t t = 0; t < 128; ++t)
      for (uint32_t i = 0; i < n / 2; ++i) {
        EXPECT_EQ(wgmma_fragment_row(t, i), frag_row(t, i));
        EXPECT_EQ(wgmma_fragment_col(t, i), frag_col(t, i));
        ++seen[frag_row(t, i) * n + frag_col(t, i)];
      }
    for (int s : seen) ASSERT_EQ(s, 1) << "N=" << n;
  }
}

// ---- products ---------------------------------------------------------------------------------

template <int N>
void check_layouts(swizzle sw, uint64_t seed) {
  for (int a_mn = 0; a_mn < 2; ++a_mn)
    for (int b_mn = 0; b_mn < 2; ++b_mn) {
      config c;
      c.n = N, c.a_mn = a_mn, c.b_mn = b_mn, c.sw = sw, c.data_seed = seed + 7 * a_mn + 13 * b_mn;
      expect_products(c, run_any<N>(c, seed));
    }
}

TEST(ModelWgmma, Sw128TilesWithTheGemmsDescriptorsEveryMajorAndN) {
  check_layouts<64>(swizzle::b128, 1);
  check_layouts<128>(swizzle::b128, 2);
  check_layouts<256>(swizzle::b128, 3);
}

TEST(ModelWgmma, Sw64Sw32AndInterleavedTilesEveryMajor) {
  for (swizzle sw : {swizzle::b64, swizzle::b32, swizzle::none}) {
    check_layouts<64>(sw, 10 + int(sw));
    check_layouts<256>(sw, 20 + int(sw));
  }
}

TEST(ModelWgmma, AnyNMultipleOf8) {
  check_layouts<8>(swizzle::b128, 31);
  check_layouts<24>(swizzle::b64, 32);
  check_layouts<136>(swizzle::none, 33);
  check_layouts<200>(swizzle::b32, 34);
}

// A from registers: each thread's A fragment (the places of d[0..7]) against the same product.
TEST(ModelWgmma, AFromRegistersEveryNAndBMajor) {
  for (swizzle sw : {swizzle::b128, swizzle::none})
    for (int b_mn = 0; b_mn < 2; ++b_mn) {
      config c;
      c.a_regs = true, c.b_mn = b_mn, c.sw = sw;
      c.n = 64, c.data_seed = 51 + b_mn;
      expect_products(c, run_any<64>(c, 1));
      c.n = 128, c.data_seed = 53 + b_mn;
      expect_products(c, run_any<128>(c, 2));
      c.n = 256, c.data_seed = 55 + b_mn;
      expect_products(c, run_any<256>(c, 3));
      c.n = 40, c.data_seed = 57 + b_mn;
      expect_products(c, run_any<40>(c, 4));
    }
  config c;
  c.a_regs = true, c.n = 128, c.with_c = true, c.rounds = 3, c.m = mode::wait1, c.data_seed = 59;
  expect_products(c, run_any<128, -1, 1>(c, 5), -1, 1);
}

// The accumulator fragment's columns 16j .. 16j+15 are, element for element, the A fragment of a
// k-step: d[8j + e] lies at (row of a[e], 16j + k of a[e]). So S = Q K^T, rounded to bf16 in pairs,
// is the register operand of P V without moving a value between threads.
TEST(ModelWgmma, SixteenAccumulatorColumnsAreAnAFragment) {
  for (uint32_t t = 0; t < 128; ++t)
    for (uint32_t j = 0; j < 16; ++j)
      for (uint32_t e = 0; e < 8; ++e) {
        ASSERT_EQ(wgmma_fragment_row(t, 8 * j + e), wgmma_fragment_row(t, e)) << t << " " << j << " " << e;
        ASSERT_EQ(wgmma_fragment_col(t, 8 * j + e), 16 * j + wgmma_fragment_col(t, e)) << t << " " << j << " " << e;
      }
}

TEST(ModelWgmma, NegatedOperandsAndAccumulatingIntoGivenC) {
  config c;
  c.n = 128, c.with_c = true, c.data_seed = 41;
  expect_products(c, run_any<128, -1, 1>(c, 1), -1, 1);
  c.a_mn = true, c.b_mn = true, c.data_seed = 42;
  expect_products(c, run_any<128, 1, -1>(c, 2), 1, -1);
  c.with_c = false, c.a_mn = false, c.data_seed = 43;
  expect_products(c, run_any<128, -1, -1>(c, 3), -1, -1);
}

// ---- the operands' lifetime -------------------------------------------------------------------

TEST(ModelWgmma, RingReleasedAfterWaitGroupIsCleanUnderEverySeed) {
  for (mode m : {mode::wait0, mode::wait1})
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      config c;
      c.n = 64, c.rounds = 4, c.m = m, c.b_mn = seed % 2 == 0, c.data_seed = seed;
      SCOPED_TRACE("seed " + std::to_string(seed) + (m == mode::wait1 ? " wait_group 1" : " wait_group 0"));
      expect_products(c, run_any<64>(c, seed));
    }
}

// Every seed reports `kind`; the messages name what `needles` list.
void expect_report(const config& c, error_kind kind, const std::vector<std::string>& needles, uint64_t seeds = 12) {
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    const result r = run_any<64>(c, seed);
    ASSERT_FALSE(r.o.ok) << describe(c) << " seed " << seed << ": no report";
    EXPECT_EQ(r.o.kind, kind) << "seed " << seed << ": " << r.o.message;
    for (const auto& n : needles)
      EXPECT_NE(r.o.message.find(n), std::string::npos) << "seed " << seed << ": " << r.o.message;
  }
}

TEST(ModelWgmma, GenericStoreIntoAnOperandBeforeWaitGroupIsWar) {
  config c;
  c.m = mode::store_before_wait;
  expect_report(
      c, error_kind::war_hazard,
      {"shared buffer 'A stages' of CTA 0", "generic write by task 'thread 5",
       "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 #0 of warpgroup 0 of CTA 0 (A from 'A stages' +0",
       "may still be reading it"});
}

TEST(ModelWgmma, RefillReleasedBeforeWaitGroupIsWar) {
  config c;
  c.rounds = 3, c.m = mode::release_before_wait;
  expect_report(c, error_kind::war_hazard,
                {"stage 0", "of CTA 0", "tensor copy", "issued by task 'thread 128", "of warpgroup 0 of CTA 0",
                 "wgmma.wait_group"});
}

TEST(ModelWgmma, ReleasingTheStageOfTheGroupStillInFlightIsWar) {
  config c;
  c.rounds = 3, c.m = mode::release_current, c.b_mn = true;
  expect_report(c, error_kind::war_hazard, {"stage 0", "'A stages' of CTA 0", "warpgroup 0 of CTA 0"});
}

TEST(ModelWgmma, ReadingATileWhoseCopyWasNotWaitedForIsRaw) {
  config c;
  c.rounds = 2, c.m = mode::skip_full_wait;
  expect_report(c, error_kind::raw_hazard, {"stages' of CTA 0", "wgmma.mma_async", "of warpgroup 0 of CTA 0"});
}

// A written by the warpgroup's own generic stores (K-major, 128B swizzle by hand), B by TMA.
std::string run_generic_a(bool fence, uint64_t seed, bool* right) {
  std::mt19937_64 g(seed);
  const std::vector<uint16_t> a = random_bf16(64 * kK, g), b = random_bf16(kK * 64, g);
  std::vector<float> d(128 * 32, 0.f);
  program p = [&](world& w) {
    const op_layout lb{64, false, swizzle::b128};
    buffer& gb = w.make_global("B", kK * 64 * 2);
    for (uint32_t n = 0; n < 64; ++n)
      for (uint32_t k = 0; k < kK; ++k) std::memcpy(gb.host_data() + lb.global_offset(0, n, k), &b[k * 64 + n], 2);
    const tensor_view vb = lb.view(gb, 1);
    launch(w, {1, 128, 1}, [&, vb, lb, fence](target& t) {
      auto& bars = cta_shared<bar_set>(t, "bars");
      const auto sa = shared_buffer(t, "A", 1, 8192);
      const auto sb = shared_buffer(t, "B", 1, lb.bytes());
      if (t.thread() == 0) {
        t.mbarrier_init(bars.full[0], 1, "full");
        t.fence_mbarrier_init_release_cluster();
      }
      const auto h = sa.as<uint16_t>();
      for (uint32_t e = t.thread() * 32; e < t.thread() * 32 + 32; ++e) {
        const uint32_t m = e / kK, k = e % kK;
        h.store(hopper::swizzle_offset(swizzle::b128, m * 128 + k * 2) / 2, a[e]);
      }
      if (fence) t.fence_proxy_async_shared_cta();
      t.syncthreads();
      if (t.thread() == 0) {
        t.mbarrier_arrive_expect_tx(bars.full[0], lb.bytes());
        t.cp_async_bulk_tensor_shared_cluster_global(sb, vb, bars.full[0], lb.c0(0), lb.c1(0));
      }
      t.mbarrier_wait(bars.full[0], hopper::parity(0));
      float acc[32];
      const uint32_t a_base = t.smem_addr(sa), b_base = t.smem_addr(sb);
      t.wgmma_fence();
      for (uint32_t kk = 0; kk < 4; ++kk)
        t.wgmma_m64nNk16_f32_bf16_bf16<64>(acc, ptx::make_wgmma_desc_kmajor_sw128(a_base + kk * 32),
                                           lb.desc(b_base, kk), kk > 0);
      t.wgmma_commit_group();
      t.wgmma_wait_group<0>();
      for (int i = 0; i < 32; ++i) d[t.thread() * 32 + uint32_t(i)] = acc[i];
    });
  };
  run_options o;
  o.seed = seed;
  o.stack_bytes = 128 * 1024;
  const outcome r = run_once(p, o);
  *right = true;
  for (uint32_t t = 0; t < 128 && r.ok; ++t)
    for (uint32_t i = 0; i < 32; ++i) {
      double ref = 0, mag = 0;
      for (uint32_t k = 0; k < kK; ++k) {
        const double x = double(bf16_to_float(a[frag_row(t, i) * kK + k])) * bf16_to_float(b[k * 64 + frag_col(t, i)]);
        ref += x, mag += std::fabs(x);
      }
      if (std::fabs(d[t * 32 + i] - ref) > 1e-6 * mag) *right = false;
    }
  return r.ok ? std::string() : r.message;
}

TEST(ModelWgmma, GenericWritesOfAnOperandNeedFenceProxyAsync) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    bool right = false;
    EXPECT_EQ(run_generic_a(true, seed, &right), "") << "seed " << seed;
    EXPECT_TRUE(right) << "seed " << seed;
    const std::string m = run_generic_a(false, seed, &right);
    EXPECT_NE(m.find("RAW"), std::string::npos) << m;
    EXPECT_NE(m.find("shared buffer 'A' of CTA 0"), std::string::npos) << m;
    EXPECT_NE(m.find("no fence.proxy.async"), std::string::npos) << m;
    EXPECT_NE(m.find("wgmma.mma_async"), std::string::npos) << m;
  }
}

// ---- misuses ----------------------------------------------------------------------------------

// A warpgroup of `block` threads runs `body` over zeroed 8 KiB tiles A and B.
template <class Body>
outcome run_misuse(uint32_t block, Body body) {
  program p = [&](world& w) {
    launch(w, {1, block, 1}, [body](target& t) {
      const auto sa = shared_buffer(t, "A", 1, 8192);
      const auto sb = shared_buffer(t, "B", 1, 8192);
      // Zeroed by the threads themselves (shared memory starts undefined), then made visible to
      // the tensor cores: every writer's fence.proxy.async, then the CTA barrier.
      const uint32_t n = t.block_threads();
      for (uint32_t i = t.thread(); i < 8192 / 16; i += n) {
        (sa.as<u32x4>()).store(i, u32x4{0, 0, 0, 0});
        (sb.as<u32x4>()).store(i, u32x4{0, 0, 0, 0});
      }
      t.fence_proxy_async_shared_cta();
      t.syncthreads();
      body(t, t.smem_addr(sa), t.smem_addr(sb));
    });
  };
  run_options o;
  o.stack_bytes = 128 * 1024;
  return run_once(p, o);
}

void expect_message(const outcome& o, error_kind kind, const std::vector<std::string>& needles) {
  ASSERT_FALSE(o.ok) << "no report";
  EXPECT_EQ(o.kind, kind) << o.message;
  for (const auto& n : needles) EXPECT_NE(o.message.find(n), std::string::npos) << o.message;
}

TEST(ModelWgmma, MisusesAreReportedByName) {
  auto mma = [](target& t, uint64_t da, uint64_t db) {
    float acc[32];
    t.wgmma_m64nNk16_f32_bf16_bf16<64>(acc, da, db, false);
  };
  // no wgmma.fence before the first mma_async
  expect_message(run_misuse(128,
                            [&](target& t, uint32_t a, uint32_t b) {
                              mma(t, ptx::make_wgmma_desc_kmajor_sw128(a), ptx::make_wgmma_desc_kmajor_sw128(b));
                            }),
                 error_kind::undefined_behavior, {"warpgroup 0 of CTA 0", "no wgmma.fence"});
  // a warp that skips the mma_async meets the others at another instruction
  expect_message(run_misuse(128,
                            [&](target& t, uint32_t a, uint32_t b) {
                              t.wgmma_fence();
                              if (t.warp() == 0)
                                mma(t, ptx::make_wgmma_desc_kmajor_sw128(a), ptx::make_wgmma_desc_kmajor_sw128(b));
                              t.wgmma_commit_group();
                            }),
                 error_kind::undefined_behavior, {"warpgroup 0 of CTA 0", ".sync.aligned", "wgmma.commit_group"});
  // a warp that never comes: the others wait for ever
  expect_message(run_misuse(128,
                            [&](target& t, uint32_t, uint32_t) {
                              if (t.warp() != 3) t.wgmma_fence();
                            }),
                 error_kind::deadlock, {"wgmma.fence.sync.aligned of warpgroup 0 of CTA 0 (96 of 128 threads arrived"});
  // descriptors that differ between threads
  expect_message(run_misuse(128,
                            [&](target& t, uint32_t a, uint32_t b) {
                              t.wgmma_fence();
                              mma(t, ptx::make_wgmma_desc_kmajor_sw128(a + (t.thread() == 77 ? 32 : 0)),
                                  ptx::make_wgmma_desc_kmajor_sw128(b));
                            }),
                 error_kind::undefined_behavior, {"differ between threads", "thread 77 "});
  // threads that give A in registers beside threads that give it by descriptor
  expect_message(run_misuse(128,
                            [&](target& t, uint32_t a, uint32_t b) {
                              t.wgmma_fence();
                              float acc[32];
                              const uint32_t fa[4] = {0, 0, 0, 0};
                              if (t.thread() == 9)
                                t.wgmma_m64nNk16_f32_bf16_bf16<64>(acc, fa, ptx::make_wgmma_desc_kmajor_sw128(b),
                                                                   false);
                              else
                                mma(t, ptx::make_wgmma_desc_kmajor_sw128(a), ptx::make_wgmma_desc_kmajor_sw128(b));
                            }),
                 error_kind::undefined_behavior, {"differ between threads", "thread 9 ", "a in registers"});
  // an operand under no buffer (the reserved first KiB)
  expect_message(run_misuse(128,
                            [&](target& t, uint32_t, uint32_t b) {
                              t.wgmma_fence();
                              mma(t, ptx::make_wgmma_desc_kmajor_sw128(0x100), ptx::make_wgmma_desc_kmajor_sw128(b));
                            }),
                 error_kind::undefined_behavior,
                 {"operand A", "at 0x00100 before the swizzle", "shared address 0x00120 of CTA 0", "no shared buffer"});
  // B running past the end of its buffer (SBO too large)
  expect_message(run_misuse(128,
                            [&](target& t, uint32_t a, uint32_t b) {
                              t.wgmma_fence();
                              mma(t, ptx::make_wgmma_desc_kmajor_sw128(a),
                                  ptx::make_wgmma_desc(b, 16, 4096, ptx::wgmma_swizzle::b128));
                            }),
                 error_kind::undefined_behavior, {"operand B", "no shared buffer"});
  // a base offset
  expect_message(run_misuse(128,
                            [&](target& t, uint32_t a, uint32_t b) {
                              t.wgmma_fence();
                              mma(t, ptx::make_wgmma_desc(a, 16, 1024, ptx::wgmma_swizzle::b128, 2),
                                  ptx::make_wgmma_desc_kmajor_sw128(b));
                            }),
                 error_kind::api_misuse, {"base offset"});
  // a block that is not a whole warpgroup
  expect_message(run_misuse(64, [&](target& t, uint32_t, uint32_t) { t.wgmma_fence(); }),
                 error_kind::undefined_behavior, {"warpgroup 0 of CTA 0", "has only 64"});
}

// An mma_async never committed stays in flight: a store after wait_group 0 is still a WAR.
TEST(ModelWgmma, WaitGroupRetiresOnlyCommittedGroups) {
  const outcome o = run_misuse(128, [](target& t, uint32_t a, uint32_t b) {
    float acc[32];
    t.wgmma_fence();
    t.wgmma_m64nNk16_f32_bf16_bf16<64>(acc, ptx::make_wgmma_desc_kmajor_sw128(a), ptx::make_wgmma_desc_kmajor_sw128(b),
                                       false);
    t.wgmma_wait_group<0>();
    if (t.thread() == 0) shared_buffer(t, "B", 1, 8192).store(0, 1);
  });
  expect_message(o, error_kind::war_hazard, {"shared buffer 'B' of CTA 0", "may still be reading it"});
  const outcome ok = run_misuse(128, [](target& t, uint32_t a, uint32_t b) {
    float acc[32];
    t.wgmma_fence();
    t.wgmma_m64nNk16_f32_bf16_bf16<64>(acc, ptx::make_wgmma_desc_kmajor_sw128(a), ptx::make_wgmma_desc_kmajor_sw128(b),
                                       false);
    t.wgmma_commit_group();
    t.wgmma_wait_group<0>();
    if (t.thread() == 0) shared_buffer(t, "B", 1, 8192).store(0, 1);
  });
  EXPECT_TRUE(ok.ok) << ok.message;
}

}  // namespace
