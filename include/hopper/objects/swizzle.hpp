// The shared-memory swizzle of the copy engine (TMA): 16-byte chunks permuted inside a span of
// 32, 64 or 128 bytes. Plain C++, usable on the device, on the host and by the executable model.
#pragma once
#include <cstdint>

#include "hopper/hd.hpp"

namespace hopper {

enum class swizzle : std::uint8_t { none, b32, b64, b128 };

// Bytes of one swizzle span (0 for none).
HOPPER_HD constexpr std::uint32_t swizzle_bytes(swizzle s) {
  return s == swizzle::none ? 0u : 16u << static_cast<unsigned>(s);
}

// Shared-memory alignment a TMA box needs: 128 B always, and the whole swizzle pattern
// (8 rows of 128 B = 1024 B for b128) so that the pattern is the same relative to the buffer.
HOPPER_HD constexpr std::uint32_t swizzle_alignment(swizzle s) {
  return s == swizzle::none ? 128u : 128u * (swizzle_bytes(s) / 16u);
}

// Byte offset inside a box after the copy engine's swizzle: bits [4, 4+B) XOR bits [7, 7+B),
// B = log2(span / 16). Its own inverse. Offsets are relative to a swizzle_alignment() base.
HOPPER_HD constexpr std::uint32_t swizzle_offset(swizzle s, std::uint32_t offset) {
  const std::uint32_t bits = static_cast<std::uint32_t>(s);  // 0, 1, 2, 3
  const std::uint32_t mask = ((1u << bits) - 1u) << 4;
  return offset ^ ((offset >> 3) & mask);
}

}  // namespace hopper
