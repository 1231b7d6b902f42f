// What every fuzz target shares: a reader that turns the engine's bytes into argument values
// (often the extreme ones, so that the engine reaches 0, -1, 2^31-1, 2^32, 2^62 and SIZE_MAX at
// once), and the oracle's verdicts. A target defines LLVMFuzzerTestOneInput; it runs under
// libFuzzer (tools/fuzz.sh, clang) or under tests/fuzz/replay_main.cpp, which feeds it the seed
// corpus and random inputs in every ctest run.
//
// The oracle: an entry point either rejects with std::invalid_argument whose message names one of
// its real arguments, or accepts, and then every size derived from the input is consistent when
// recomputed in 128 bits. Anything else (another exception, a crash, a hang, a sanitizer report)
// is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <string>
#include <vector>

namespace hopper_fuzz {

using u128 = unsigned __int128;
using i128 = __int128;

// Values at the edges of the types and limits the entry points check.
inline constexpr uint64_t extremes[] = {
    0,
    1,
    2,
    3,
    7,
    8,
    15,
    16,
    17,
    31,
    32,
    63,
    64,
    100,
    127,
    128,
    129,
    191,
    192,
    255,
    256,
    1000,
    1024,
    4096,
    8192,
    16384,
    65535,
    65536,
    232448,  // sm_90's shared memory per block
    232449,
    (uint64_t(1) << 20) - 1,  // the mbarrier's 20-bit counts
    uint64_t(1) << 20,
    (uint64_t(1) << 27),
    (uint64_t(1) << 30),
    (uint64_t(1) << 31) - 8,
    (uint64_t(1) << 31) - 1,
    uint64_t(1) << 31,
    (uint64_t(1) << 32) - 1,
    uint64_t(1) << 32,
    (uint64_t(1) << 32) + 16,
    uint64_t(1) << 39,
    uint64_t(1) << 40,
    uint64_t(1) << 48,
    uint64_t(1) << 62,
    (uint64_t(1) << 63) - 1,
    uint64_t(1) << 63,
    UINT64_MAX - 100,
    UINT64_MAX - 15,
    UINT64_MAX - 1,
    UINT64_MAX,
};
inline constexpr size_t extreme_count = sizeof(extremes) / sizeof(extremes[0]);

// Reads values from the engine's bytes. Each value is one selector byte, then: an extreme
// (selector < 0xC0, the extreme it indexes, sometimes negated), or 8 raw bytes. Past the end every
// value is 0, so any input is a complete argument list.
class input {
 public:
  input(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  uint64_t u64() {
    const uint8_t sel = byte();
    if (sel < 0xC0) {
      const uint64_t v = extremes[sel % extreme_count];
      return (sel / extreme_count) % 2 == 1 ? uint64_t(0) - v : v;  // negated: -1, -16, ...
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return v;
  }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  uint32_t u32() { return static_cast<uint32_t>(u64()); }
  int32_t i32() { return static_cast<int32_t>(u64()); }
  bool flag() { return byte() & 1; }
  // A small choice: 0..n-1.
  uint32_t pick(uint32_t n) { return n ? byte() % n : 0; }
  // A pointer-like address: 16-byte aligned bases, sometimes offset by a few bytes, or null.
  const void* pointer() {
    const uint64_t base = (uint64_t(1 + pick(4)) << 40), off = u64();
    switch (pick(4)) {
      case 0:
        return nullptr;
      case 1:
        return reinterpret_cast<const void*>(uintptr_t(base + (off % 64)));  // often misaligned
      default:
        return reinterpret_cast<const void*>(uintptr_t(base + (off % 4096) * 16));
    }
  }
  bool done() const { return p_ >= end_; }

 private:
  uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  const uint8_t* p_;
  const uint8_t* end_;
};

// A finding: print it and abort, which libFuzzer records as a crash with its input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::abort();
}
inline void require(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

// A rejection must name one of the entry point's arguments (the names as its users write them).
inline void expect_names_an_argument(const std::exception& e, std::initializer_list<const char*> names) {
  const std::string m = e.what();
  if (m.rfind("hopper", 0) != 0) finding("a rejection without the library's prefix: " + m);
  for (const char* n : names)
    if (m.find(n) != std::string::npos) return;
  finding("a rejection that names no argument: " + m);
}

// A seed input, as the values a target reads in order: `wide` for u64() and its kin (encoded as a
// raw 8-byte value, which the replayer then swaps for each extreme), else one byte (pick, flag).
struct token {
  bool wide;
  uint64_t v;
};
using seed = std::vector<token>;
inline token wide(uint64_t v) { return {true, v}; }
inline token small(uint64_t v) { return {false, v}; }
// The tokens pointer() reads for an aligned address (kind 2: base + off x 16), or null (kind 0).
inline seed aligned_pointer(uint64_t off = 0) { return {small(0), wide(off), small(2)}; }
inline seed null_pointer() { return {small(0), wide(0), small(0)}; }

inline std::vector<uint8_t> encode(const seed& s) {
  std::vector<uint8_t> out;
  for (const token& t : s) {
    if (!t.wide) {
      out.push_back(uint8_t(t.v));
      continue;
    }
    out.push_back(0xFF);
    for (int i = 7; i >= 0; --i) out.push_back(uint8_t(t.v >> (8 * i)));
  }
  return out;
}

inline seed cat(std::initializer_list<seed> parts) {
  seed s;
  for (const seed& p : parts) s.insert(s.end(), p.begin(), p.end());
  return s;
}

inline std::string str(u128 v) {
  if (v == 0) return "0";
  std::string s;
  for (; v; v /= 10) s.insert(s.begin(), char('0' + int(v % 10)));
  return s;
}

}  // namespace hopper_fuzz

// Each target's valid (or nearly valid) starting points; the replayer and tools/fuzz.sh derive the
// seed corpus from them, one extreme value at a time.
std::vector<hopper_fuzz::seed> hopper_fuzz_seeds();
