// The model's tensor cores: wgmma.fence, wgmma.mma_async.m64nNk16.f32.bf16.bf16 (B in shared memory
// through its matrix descriptor, A there too or in registers), wgmma.commit_group and
// wgmma.wait_group, per
// warpgroup (128 consecutive threads of a CTA; warpgroup = thread / 128). The target's members of
// the same names (target.hpp) call into this file.
//
// What is modelled (PTX ISA 9.7.15, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions"):
//  * .sync.aligned: the 128 threads of the warpgroup meet at each of these instructions; the last
//    to arrive performs it for all, the others wait for it. A thread at another wgmma instruction
//    than the ones already waiting, descriptors / scale-d / immediates that differ between
//    threads, or a warpgroup that is not 128 threads are reported (undefined behaviour); a thread
//    that never comes is a deadlock naming the instruction and how many arrived. The meeting orders
//    no memory among the threads (the ISA gives none).
//  * the matrix descriptor ("Matrix Descriptor Format"): start address, leading and stride byte
//    offsets (each (x & 0x3FFFF) >> 4), base offset, swizzle mode (0 none / interleave, 1 128B,
//    2 64B, 3 32B). A non-zero base offset is refused (not modelled).
//  * the operand layouts ("Shared Memory Matrix Layout", "Strides", "Canonical Layouts"), for bf16
//    (T = 8 elements per 16 bytes), W = the swizzle width in bytes (16 for none):
//      K-major  (imm-trans = 0):  swizzled: start + (mn%8)*W + (mn/8)*SBO + 2k
//                                 none:     start + (mn%8)*16 + (mn/8)*SBO + (k/8)*LBO + 2(k%8)
//      MN-major (imm-trans = 1):  swizzled: start + 2(mn%(W/2)) + (mn/(W/2))*LBO + (k%8)*W + (k/8)*SBO
//                                 none:     start + 2(mn%8) + (mn/8)*SBO + (k%8)*16 + (k/8)*LBO
//    (mn: row of A or column of B, k in 0..15), and then the swizzle on the address: bits [4, 7)
//    XOR bits [7, 10) for 128B, [4, 6) ^ [7, 9) for 64B, bit 4 ^ bit 7 for 32B (the copy engine's
//    swizzle, hopper/objects/swizzle.hpp, on absolute shared-window addresses: the model's buffers start
//    at 1024-byte boundaries, shared_window.hpp). Each address is looked up in the CTA's window;
//    an address under no buffer is reported by value.
//  * D (64 x N, N any multiple of 8 up to 256) = scale-d ? D + A*B : A*B, with imm-scale-a/b = -1
//    negating A/B. Each element is the sum of the 16 products and (scale-d) the old D, computed in
//    double (exact for bf16 products) and rounded once to fp32: the ISA leaves the order and the
//    intermediate precision of the sum unspecified.
//  * the accumulator fragment ("Matrix Fragments for wgmma .m64nNk16"): thread t of the warpgroup,
//    warp w = t/32, lane l, holds d[i] at row 16w + l/4 + 8((i/2)%2), col 8(i/4) + 2(l%4) + i%2.
//  * A in registers (the form "d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b" of
//    wgmma.mma_async, which has no imm-trans-a; PTX ISA "Register Fragments", "Matrix Fragments
//    for wgmma.mma_async.m64nNk16": multiplicand A of .bf16 is four .b32 registers of two
//    elements each, a0..a7, low to high): element e of thread t is at the place of d[e] above
//    (row 16w + l/4 + 8((e/2)%2), k 8(e/4) + 2(l%4) + e%2), as the ISA's figure of the A fragment
//    draws it and tests/gpu/conformance_wgmma.cu confirms on the H200; the 128 threads' fragments
//    are A, read when the last thread arrives.
//  * wgmma.fence must come before the first mma_async of the warpgroup (else undefined
//    behaviour). commit_group closes the mma_async issued since the last commit into a group
//    (possibly empty); wait_group N retires all but the N most recent groups.
//  * the operand reads are async-proxy reads of the shared buffers (buffer::wgmma_read), in flight
//    from mma_async until the wait_group that retires their group. RAW (at issue): bytes landed by
//    a copy need the completion of their mbarrier phase observed (with acquire) by some thread of
//    the warpgroup; generic writes need fence.proxy.async by the writing thread after the write,
//    ordered before the mma_async; a copy still in flight into them is reported. "The warpgroup
//    knows" is the join of its 128 threads' clocks at the meeting. WAR: a write into an operand's
//    bytes (a generic store, or a copy into them, at its issue) is reported unless the read's
//    group was retired by a wait_group and the write is ordered after that wait in some thread of
//    the warpgroup (execution order suffices: a .relaxed mbarrier arrive after the wait releases
//    the stage).
//
// What is not: the model computes D and writes every thread's fragment when mma_async is issued,
// so reading the accumulators before wait_group (or touching them between mma_async without
// wgmma.fence) is not detected: that register hazard is the compiler's and the ISA's business
// (wgmma_fence_operand does nothing here). Groups complete at once, so wait_group never blocks.
// A fragment's registers are read at issue too, so changing them before the wait_group is not
// detected either. Sparse wgmma, other types, and the base offset are not modelled.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hopper/model/error.hpp"
#include "hopper/model/memory.hpp"
#include "hopper/model/world.hpp"
#include "hopper/objects/swizzle.hpp"
#include "hopper/ptx/wgmma_desc.hpp"

namespace hopper::model {

// The value of a bf16 bit pattern.
inline float bf16_to_float(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// A decoded matrix descriptor (PTX ISA "Matrix Descriptor Format").
struct wgmma_matrix {
  uint64_t raw = 0;
  uint32_t start = 0;        // bytes
  uint32_t lbo = 0;          // leading dimension byte offset
  uint32_t sbo = 0;          // stride dimension byte offset
  uint32_t base_offset = 0;  // bits 49-51
  unsigned mode = 0;         // bits 62-63: 0 none, 1 128B, 2 64B, 3 32B
  hopper::swizzle sw = hopper::swizzle::none;

  static wgmma_matrix decode(uint64_t d) {
    wgmma_matrix m;
    m.raw = d;
    m.start = uint32_t(d & 0x3FFFu) << 4;
    m.lbo = uint32_t((d >> 16) & 0x3FFFu) << 4;
    m.sbo = uint32_t((d >> 32) & 0x3FFFu) << 4;
    m.base_offset = uint32_t((d >> 49) & 0x7u);
    m.mode = unsigned(d >> 62);
    static constexpr hopper::swizzle of[4] = {hopper::swizzle::none, hopper::swizzle::b128, hopper::swizzle::b64,
                                              hopper::swizzle::b32};
    m.sw = of[m.mode];
    return m;
  }
  // Bytes of one row of the swizzle atom (16 for no swizzle: a core matrix row).
  uint32_t row_bytes() const { return sw == hopper::swizzle::none ? 16u : hopper::swizzle_bytes(sw); }
  // The address, before the swizzle, of bf16 element (mn, k) of a 16-deep operand (mn: the row of
  // A or the column of B; k in 0..15), per the canonical layouts.
  uint32_t address(bool mn_major, uint32_t mn, uint32_t k) const {
    const uint32_t W = row_bytes();
    if (!mn_major) {
      if (sw != hopper::swizzle::none) return start + (mn % 8) * W + (mn / 8) * sbo + 2 * k;
      return start + (mn % 8) * 16 + (mn / 8) * sbo + (k / 8) * lbo + 2 * (k % 8);
    }
    if (sw != hopper::swizzle::none) {
      const uint32_t e = W / 2;  // MN elements in one row of the atom
      return start + 2 * (mn % e) + (mn / e) * lbo + (k % 8) * W + (k / 8) * sbo;
    }
    return start + 2 * (mn % 8) + (mn / 8) * sbo + (k % 8) * 16 + (k / 8) * lbo;
  }
  // Where the element really is: the swizzle applied to the address.
  uint32_t physical(uint32_t a) const { return hopper::swizzle_offset(sw, a); }

  std::string describe() const {
    static const char* names[4] = {"none", "128B", "64B", "32B"};
    char s[160];
    std::snprintf(s, sizeof s, "0x%016llx (start 0x%05x, LBO %u, SBO %u, base offset %u, swizzle %s)",
                  (unsigned long long)raw, unsigned(start), unsigned(lbo), unsigned(sbo), unsigned(base_offset),
                  names[mode]);
    return s;
  }
};

// The operands of one wgmma.mma_async.m64nNk16.f32.bf16.bf16, as each thread gives them.
struct wgmma_mma_args {
  int n = 0;
  int scale_a = 1, scale_b = 1, trans_a = 0, trans_b = 0;
  bool a_in_registers = false;  // then desc_a and trans_a are unused, each thread gives its fragment
  uint64_t desc_a = 0, desc_b = 0;
  bool scale_d = false;
  bool operator==(const wgmma_mma_args& o) const {
    return n == o.n && scale_a == o.scale_a && scale_b == o.scale_b && trans_a == o.trans_a && trans_b == o.trans_b &&
           a_in_registers == o.a_in_registers && desc_a == o.desc_a && desc_b == o.desc_b && scale_d == o.scale_d;
  }
  bool operator!=(const wgmma_mma_args& o) const { return !(*this == o); }
  std::string instruction() const {
    return "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32.bf16.bf16";
  }
  std::string describe() const {
    const std::string a = a_in_registers ? "a in registers" : "a-desc " + wgmma_matrix::decode(desc_a).describe();
    return a + ", b-desc " + wgmma_matrix::decode(desc_b).describe() + ", scale-d " + std::to_string(int(scale_d)) +
           ", imm-scale-a " + std::to_string(scale_a) + ", imm-scale-b " + std::to_string(scale_b) +
           (a_in_registers ? "" : ", imm-trans-a " + std::to_string(trans_a)) + ", imm-trans-b " +
           std::to_string(trans_b);
  }
};

// Where accumulator d[i] of thread t of the warpgroup lies in D (PTX ISA, wgmma .m64nNk16 D).
inline uint32_t wgmma_fragment_row(uint32_t t, uint32_t i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2); }
inline uint32_t wgmma_fragment_col(uint32_t t, uint32_t i) { return 8 * (i / 4) + 2 * (t % 4) + (i % 2); }

// The tensor core of one warpgroup: its meetings, its wgmma-groups.
class wgmma_warpgroup {
 public:
  static constexpr uint32_t threads = 128;

  wgmma_warpgroup(int cta, uint32_t wg) : cta_(cta), wg_(wg) {}
  wgmma_warpgroup(const wgmma_warpgroup&) = delete;
  wgmma_warpgroup& operator=(const wgmma_warpgroup&) = delete;

  std::string name() const { return "warpgroup " + std::to_string(wg_) + " of CTA " + std::to_string(cta_); }

  // wgmma.fence.sync.aligned
  void fence(world& w, uint32_t t) {
    meet(w, t, "wgmma.fence.sync.aligned", slot{}, [this, &w] {
      fenced_ = true;
      w.record("wgmma.fence.sync.aligned", name());
    });
  }

  // wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a,
  // imm-scale-b, imm-trans-a, imm-trans-b: `d` holds the thread's a.n / 2 accumulators. With
  // a.a_in_registers, `a_regs` is the thread's A fragment (d, a, b-desc, ... without imm-trans-a).
  void mma_async(world& w, uint32_t t, const wgmma_mma_args& a, float* d, const uint32_t* a_regs = nullptr) {
    slot s;
    s.args = a;
    s.d = d;
    if (a.a_in_registers) std::memcpy(s.a, a_regs, sizeof s.a);
    meet(w, t, a.instruction(), s, [this, &w] { perform(w); });
  }

  // wgmma.commit_group.sync.aligned
  void commit_group(world& w, uint32_t t) {
    meet(w, t, "wgmma.commit_group.sync.aligned", slot{}, [this, &w] {
      const size_t n = uncommitted_.size();
      committed_.push_back(std::move(uncommitted_));
      uncommitted_.clear();
      w.record("wgmma.commit_group.sync.aligned", name(), [&] { return std::to_string(n) + " mma_async"; });
    });
  }

  // wgmma.wait_group.sync.aligned N: all but the N most recent wgmma-groups are complete (at
  // once in the model); their operand reads are over for every thread from its own wait on.
  void wait_group(world& w, uint32_t t, unsigned n) {
    meet(w, t, "wgmma.wait_group.sync.aligned " + std::to_string(n), slot{}, [this, &w, n] {
      retiring_.clear();
      while (committed_.size() > n) {
        for (auto& op : committed_.front()) retiring_.push_back(op);
        committed_.pop_front();
      }
      w.record("wgmma.wait_group.sync.aligned", name(), [&] { return std::to_string(n); });
    });
    // retiring_ stays as the last thread left it until every thread has come back to another
    // wait_group, so each thread records its own retirement here.
    const int me = w.current();
    const uint64_t now = w.tick();
    for (auto& op : retiring_) op->retired_by.push_back({me, now});
  }

 private:
  struct slot {
    int task = -1;
    wgmma_mma_args args{};
    float* d = nullptr;
    uint32_t a[4] = {};  // the A fragment, when A is in registers
  };

  // The 128 threads meet at instruction `op`; the last to come runs last() for all.
  template <class Last>
  void meet(world& w, uint32_t t, const std::string& op, slot s, Last&& last) {
    w.yield();
    const uint64_t obj = scheduler::wgmma_object(cta_, wg_);
    w.touch(obj, arrived_ + 1 == threads ? access::write : access::update);
    s.task = w.current();
    if (arrived_ == 0) {
      at_ = op;
    } else if (at_ != op) {
      throw model_error(error_kind::undefined_behavior,
                        op + " by " + w.where(s.task) + " while " + std::to_string(arrived_) + " threads of " + name() +
                            " wait at " + at_ +
                            " (.sync.aligned: every thread of the warpgroup executes the same wgmma instruction)");
    }
    slots_[t] = s;
    const uint64_t g = gen_;
    if (++arrived_ == threads) {
      last();
      arrived_ = 0;
      ++gen_;
      if (key_ >= 0)
        w.notify(key_);
      else
        w.changed();  // no waiter yet, but the state moved
      return;
    }
    if (key_ < 0) key_ = w.new_key();
    w.block_until([this, g] { return gen_ > g; },
                  [this] {  // the meeting's instruction is at_ until it completes
                    return at_ + " of " + name() + " (" + std::to_string(arrived_) +
                           " of 128 threads arrived; .sync.aligned: every thread of the warpgroup must execute it)";
                  },
                  key_);
    w.touch(scheduler::wgmma_object(cta_, wg_), access::acquire);
  }

  // One operand: the bf16 values of its (mn, k), mn < rows, k < 16, read through the descriptor.
  struct operand {
    std::vector<float> v;                               // v[mn * 16 + k]
    std::map<std::pair<buffer*, size_t>, bool> chunks;  // 16-byte chunks read (buffer, offset)
    std::string where;                                  // its first element, for reports
  };
  operand gather(world& w, const wgmma_matrix& m, bool mn_major, uint32_t rows, const char* which,
                 const std::string& op) const {
    operand r;
    r.v.resize(size_t(rows) * 16);
    const shared_window& win = w.smem_window();
    uint32_t cached_chunk = ~0u;
    std::pair<buffer*, size_t> at{nullptr, 0};
    for (uint32_t mn = 0; mn < rows; ++mn)
      for (uint32_t k = 0; k < 16; ++k) {
        const uint32_t u = m.address(mn_major, mn, k), p = m.physical(u);
        if ((p & ~15u) != cached_chunk) {
          cached_chunk = p & ~15u;
          at = win.resolve(cta_, cached_chunk, [&] {
            return op + " (operand " + which + ", element (" + std::to_string(mn) + ", " + std::to_string(k) + ") at " +
                   shared_window::hex(u) + " before the swizzle, " + (which[0] == 'A' ? "a-desc " : "b-desc ") +
                   m.describe() + ") reads";
          });
          r.chunks[at] = true;
        }
        uint16_t h;
        std::memcpy(&h, at.first->host_data() + at.second + (p & 15u), 2);
        r.v[size_t(mn) * 16 + k] = bf16_to_float(h);
        if (mn == 0 && k == 0) {
          buffer& b = *at.first;
          const size_t off = at.second + (p & 15u);
          r.where = "'" + b.name() + "'" + (b.stages() > 1 ? " stage " + std::to_string(off / b.stage_bytes()) : "") +
                    " +" + std::to_string(b.stages() > 1 ? off % b.stage_bytes() : off);
        }
      }
    return r;
  }
  // A from the 128 threads' registers: element e of thread t's fragment is A(row, k) at the place
  // of d[e] in the accumulator fragment.
  operand fragment_a() const {
    operand r;
    r.v.resize(64 * 16);
    for (uint32_t t = 0; t < threads; ++t)
      for (uint32_t e = 0; e < 8; ++e) {
        const uint16_t h = uint16_t(slots_[t].a[e / 2] >> (16 * (e % 2)));
        r.v[size_t(wgmma_fragment_row(t, e)) * 16 + wgmma_fragment_col(t, e)] = bf16_to_float(h);
      }
    r.where = "registers";
    return r;
  }
  // The async-proxy reads of an operand's chunks, coalesced into ranges per buffer.
  static void track(const operand& o, const std::shared_ptr<bulk_op>& op, const hb_clock& c) {
    buffer* b = nullptr;
    size_t lo = 0, hi = 0;
    for (const auto& [key, unused] : o.chunks) {
      (void)unused;
      if (b == key.first && key.second == hi) {
        hi += 16;
        continue;
      }
      if (b) b->wgmma_read(op, c, lo, hi - lo);
      b = key.first, lo = key.second, hi = key.second + 16;
    }
    if (b) b->wgmma_read(op, c, lo, hi - lo);
  }

  void perform(world& w) {
    const wgmma_mma_args& a = slots_[0].args;
    const std::string instr = a.instruction();
    for (uint32_t t = 1; t < threads; ++t)
      if (slots_[t].args != a)
        throw model_error(error_kind::undefined_behavior,
                          instr + " of " + name() +
                              " with operands that differ between threads: " + w.where(slots_[t].task) + " gives " +
                              slots_[t].args.describe() + ", " + w.where(slots_[0].task) + " gives " + a.describe() +
                              " (the descriptors must be the same across the warpgroup, and .aligned instructions "
                              "are executed alike by all its threads)");
    if (!fenced_)
      throw model_error(error_kind::undefined_behavior,
                        instr + " by " + name() +
                            " with no wgmma.fence before it (PTX ISA: wgmma.fence must be "
                            "issued by all warps of the warpgroup before its first wgmma.mma_async)");
    const wgmma_matrix ma = wgmma_matrix::decode(a.desc_a), mb = wgmma_matrix::decode(a.desc_b);
    for (const wgmma_matrix* m : {&ma, &mb})
      if (m->base_offset != 0 && (m == &mb || !a.a_in_registers))
        scheduler::misuse(instr + " of " + name() + " with descriptor " + m->describe() +
                          ": a non-zero matrix base offset is not modelled (start the swizzle pattern at its "
                          "alignment: 1024 B for 128B, 512 B for 64B, 256 B for 32B)");
    // What the warpgroup knows: the join of its threads' clocks.
    hb_clock c;
    for (const slot& s : slots_) c.join(w.clock(s.task));
    auto op = std::make_shared<bulk_op>();
    op->issuer = slots_[0].task;
    op->wgmma_key = cta_ * 64 + int(wg_);
    const std::string what = instr + " #" + std::to_string(issued_) + " of " + name();
    const operand A = a.a_in_registers ? fragment_a() : gather(w, ma, a.trans_a != 0, 64, "A", what);
    const operand B = gather(w, mb, a.trans_b != 0, uint32_t(a.n), "B", what);
    op->what = what + " (A from " + A.where + ", B from " + B.where + ")";
    track(A, op, c);  // no chunks when A is in registers: nothing of shared memory is read for it
    track(B, op, c);
    // D = (scale-d ? D : 0) + A*B, in every thread's fragment.
    // The scaled operands, each product formed once rather than in every thread's every element
    // (the same values: the order of the sums is unchanged).
    const double sa = a.scale_a, sb = a.scale_b;
    std::vector<double> as(A.v.size()), bs(B.v.size());
    for (size_t i = 0; i < as.size(); ++i) as[i] = sa * A.v[i];
    for (size_t i = 0; i < bs.size(); ++i) bs[i] = sb * B.v[i];
    for (uint32_t t = 0; t < threads; ++t) {
      float* d = slots_[t].d;
      for (uint32_t i = 0; i < uint32_t(a.n) / 2; ++i) {
        const uint32_t row = wgmma_fragment_row(t, i), col = wgmma_fragment_col(t, i);
        double sum = a.scale_d ? double(d[i]) : 0.0;
        const double* ar = &as[size_t(row) * 16];
        const double* bc = &bs[size_t(col) * 16];
        for (uint32_t k = 0; k < 16; ++k) sum += ar[k] * bc[k];
        d[i] = float(sum);
      }
    }
    uncommitted_.push_back(op);
    ++issued_;
    w.record(instr, name(), [&] { return "A " + A.where + ", B " + B.where; });
  }

  int cta_;
  uint32_t wg_;
  // the meeting
  std::string at_;
  uint32_t arrived_ = 0;
  uint64_t gen_ = 0;
  int key_ = -1;  // the scheduler key its waiters block on (made at the first wait)
  std::array<slot, threads> slots_{};
  // the tensor core's state
  bool fenced_ = false;
  uint64_t issued_ = 0;
  std::vector<std::shared_ptr<bulk_op>> uncommitted_;
  std::deque<std::vector<std::shared_ptr<bulk_op>>> committed_;
  std::vector<std::shared_ptr<bulk_op>> retiring_;  // retired by the last wait_group
};

// The tensor cores of one CTA, one per warpgroup, made when first used (a cta_shared object).
class wgmma_cta {
 public:
  wgmma_warpgroup& warpgroup(int cta, uint32_t wg, uint32_t block_threads) {
    if ((wg + 1) * wgmma_warpgroup::threads > block_threads)
      throw model_error(error_kind::undefined_behavior,
                        "wgmma by warpgroup " + std::to_string(wg) + " of CTA " + std::to_string(cta) +
                            ", a block of " + std::to_string(block_threads) + " threads: warpgroup " +
                            std::to_string(wg) + " has only " +
                            std::to_string(block_threads - wg * wgmma_warpgroup::threads) +
                            " (a warpgroup is 128 consecutive threads, four whole warps)");
    if (groups_.size() <= wg) groups_.resize(wg + 1);
    if (!groups_[wg]) groups_[wg] = std::make_unique<wgmma_warpgroup>(cta, wg);
    return *groups_[wg];
  }

 private:
  std::vector<std::unique_ptr<wgmma_warpgroup>> groups_;
};

}  // namespace hopper::model
