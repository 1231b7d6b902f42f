// The shared-memory matrix descriptor of a wgmma operand (PTX ISA "Matrix Descriptor Format"), as
// plain constexpr C++: the same functions build descriptors on the device (hopper/ptx/wgmma.cuh
// includes this header) and on the host, where the executable model decodes them
// (hopper/model/wgmma.hpp). No CUDA needed. Part of the PTX layer, in plain C++ like
// qualifiers.hpp.
#pragma once
#include <cstdint>

#include "hopper/hd.hpp"

namespace hopper::ptx {

// The N of wgmma.mma_async .m64nNk16 that the PTX layer instantiates (the PTX ISA allows every
// multiple of 8 in 8..256), with A and B from shared memory and with A from registers: both targets
// accept exactly these, so a body that builds for one builds for the other.
HOPPER_HD constexpr bool wgmma_n_instantiated(int n) {
  return n == 64 || n == 80 || n == 128 || n == 160 || n == 192 || n == 256;
}
HOPPER_HD constexpr bool wgmma_rs_n_instantiated(int n) { return n == 64 || n == 128 || n == 192 || n == 256; }

// The layout (swizzle) mode in bits 62-63 of a matrix descriptor.
enum class wgmma_swizzle : uint64_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

// Matrix descriptor of a wgmma operand in shared memory (PTX ISA "Matrix Descriptor Format"):
//   bits  0-13  start address >> 4
//   bits 16-29  leading dimension byte offset >> 4
//   bits 32-45  stride dimension byte offset >> 4
//   bits 49-51  matrix base offset (0 when the swizzle pattern starts at a 1024-B boundary)
//   bits 62-63  swizzle mode
// The three address fields keep only bits 4..17 of their byte values (shared memory is < 256 KiB),
// which is why every operand must be 16-byte aligned.
HOPPER_HD constexpr uint64_t make_wgmma_desc(uint32_t smem_byte_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                             wgmma_swizzle swizzle, uint32_t base_offset = 0) {
  return (uint64_t((smem_byte_addr & 0x3FFFF) >> 4)) | (uint64_t((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (uint64_t((sbo_bytes & 0x3FFFF) >> 4) << 32) | (uint64_t(base_offset & 0x7) << 49) | (uint64_t(swizzle) << 62);
}

// Descriptor of a K-major bf16 operand tile stored as TMA writes it with CU_TENSOR_MAP_SWIZZLE_128B
// and a box 64 elements (128 B) wide along K: row r at byte r*128, its 16-byte chunks permuted by
// r % 8. 8 rows form one 1024-B swizzle atom, so the stride byte offset (between 8-row groups
// along M/N) is 1024; the leading byte offset is unused for swizzled K-major layouts (set to 16,
// i.e. encoded 1, by convention). Stepping k by 16 elements moves the start address 32 bytes
// inside the atom; the hardware applies the swizzle to the computed address, so this is exact as
// long as the tile starts at a 1024-byte boundary.
HOPPER_HD constexpr uint64_t make_wgmma_desc_kmajor_sw128(uint32_t smem_byte_addr) {
  return make_wgmma_desc(smem_byte_addr, 16, 1024, wgmma_swizzle::b128);
}

// Descriptor of an MN-major bf16 operand tile written by TMA with SWIZZLE_128B in boxes of 64
// MN-elements (128 B) x 64 K-rows: within one box K-row k sits at byte k*128. The stride byte
// offset steps 8 K-rows (1024 B); the leading byte offset steps from one 64-wide MN box to the
// next (box_bytes). A k-step of 16 moves the start address by 16 rows = 2048 B.
HOPPER_HD constexpr uint64_t make_wgmma_desc_mnmajor_sw128(uint32_t smem_byte_addr, uint32_t box_bytes) {
  return make_wgmma_desc(smem_byte_addr, box_bytes, 1024, wgmma_swizzle::b128);
}

// The descriptor `desc` with its start address moved on by `bytes` (a multiple of 16), the rest
// unchanged: a 32-bit add to the low word, so a loop over k-steps and stages costs one integer add
// per descriptor instead of a rebuild. Exact while the moved address stays inside the 256 KiB the
// 14-bit field spans (every shared-memory address does): the field then cannot carry into the
// leading byte offset above it.
HOPPER_HD constexpr uint64_t wgmma_desc_advance(uint64_t desc, uint32_t bytes) {
  return (desc & 0xFFFFFFFF00000000ull) | uint32_t(uint32_t(desc) + (bytes >> 4));
}

}  // namespace hopper::ptx
