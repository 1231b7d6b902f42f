// hopper::tensor_map validation: each rule of cuTensorMapEncodeTiled is rejected on the host,
// before the driver, with a message naming the bad value. No GPU needed; where a CUDA driver
// and device exist the valid maps are also encoded for real.
#include <hopper/objects/tensor_map.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

using hopper::element;
using hopper::tensor_map;

// A plausible, 256-byte aligned device-like address: validation never dereferences it.
const void* const kBase = reinterpret_cast<const void*>(std::uintptr_t(0x7f0000000000));

const void* at(std::uintptr_t offset) {
  return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(kBase) + offset);
}

// A valid 2-D bf16 map: 1024 x 512, box 64 x 32.
hopper::tensor_map_builder good2d(const void* base = kBase) {
  return tensor_map::tiled(element::bf16, base).dims({1024, 512}).box({64, 32});
}

// Expects std::invalid_argument whose message contains every fragment.
void expect_reject(const hopper::tensor_map_builder& b, std::initializer_list<const char*> fragments) {
  try {
    b.validate();
    ADD_FAILURE() << "accepted, expected a rejection mentioning " << *fragments.begin();
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("hopper::tensor_map"), std::string::npos) << msg;
    for (const char* f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

bool have_device() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();
  return ok;
}

TEST(TensorMapValidation, AcceptsAValidMapOfEveryRankAndType) {
  const element types[] = {element::u8,  element::s8,   element::e4m3, element::e5m2,
                           element::f16, element::bf16, element::f32,  element::s32};
  for (element t : types) {
    const std::uint32_t eb = hopper::element_bytes(t);
    const std::uint32_t inner = 64 / eb;  // a 64-byte inner row
    EXPECT_NO_THROW(tensor_map::tiled(t, kBase).dims({4096}).box({inner}).validate()) << element_name(t);
    EXPECT_NO_THROW(tensor_map::tiled(t, kBase).dims({256, 7}).box({inner, 3}).validate());
    EXPECT_NO_THROW(tensor_map::tiled(t, kBase).dims({256, 5, 6}).box({inner, 2, 2}).validate());
    EXPECT_NO_THROW(tensor_map::tiled(t, kBase).dims({256, 3, 4, 5}).box({inner, 1, 2, 3}).validate());
    EXPECT_NO_THROW(tensor_map::tiled(t, kBase).dims({256, 2, 3, 4, 5}).box({inner, 2, 1, 2, 1}).validate());
  }
}

TEST(TensorMapValidation, BoxBytesCountsTheWholeBox) {
  EXPECT_EQ(good2d().box_bytes(), 64u * 32u * 2u);
  EXPECT_EQ(tensor_map::tiled(element::f32, kBase).dims({64, 64, 64}).box({8, 4, 2}).box_bytes(), 8u * 4u * 2u * 4u);
  // Element strides: ceil(box / stride) elements along that dimension (dim 0 ignores its own).
  EXPECT_EQ(tensor_map::tiled(element::u8, kBase).dims({64, 64}).box({16, 9}).element_strides({1, 2}).box_bytes(),
            16u * 5u);
}

TEST(TensorMapValidation, PackedStridesAreDerivedFromDims) {
  const auto s = tensor_map::tiled(element::f16, kBase).dims({40, 3, 5}).box({8, 1, 1}).global_strides();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], 80u);
  EXPECT_EQ(s[1], 240u);
}

TEST(TensorMapValidation, RejectsRankOutOfRange) {
  expect_reject(
      tensor_map::tiled(element::u8, kBase).dims(std::vector<std::uint64_t>{}).box(std::vector<std::uint32_t>{}),
      {"rank = 0", "1..5"});
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({16, 2, 2, 2, 2, 2}).box({16, 1, 1, 1, 1, 1}),
                {"rank = 6", "1..5"});
}

TEST(TensorMapValidation, RejectsInterleaveBelowRank3) {
  expect_reject(good2d().interleave(hopper::interleave::b16), {"rank = 2", "interleave b16", ">= 3"});
}

TEST(TensorMapValidation, RejectsMisalignedBase) {
  expect_reject(good2d(at(8)), {"0x7f0000000008", "16-byte aligned"});
  expect_reject(good2d(nullptr), {"null"});
  // 16-aligned is enough without interleave, not with interleave b32.
  EXPECT_NO_THROW(good2d(at(16)).validate());
  expect_reject(tensor_map::tiled(element::bf16, at(16))
                    .dims({16, 8, 8})
                    .box({16, 8, 8})
                    .interleave(hopper::interleave::b32)
                    .swizzle(hopper::swizzle::b32),
                {"0x7f0000000010", "32-byte aligned", "interleave b32"});
}

TEST(TensorMapValidation, RejectsDimsOutOfRange) {
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({16, 0}).box({16, 1}), {"dims[1] = 0", "1..2^32"});
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({(std::uint64_t(1) << 32) + 1}).box({16}),
                {"dims[0] = 4294967297", "1..2^32"});
  EXPECT_NO_THROW(tensor_map::tiled(element::u8, kBase).dims({std::uint64_t(1) << 32}).box({16}).validate());
}

TEST(TensorMapValidation, RejectsStridesNotAMultipleOf16) {
  // Packed 30 x bf16 rows are 60 bytes: the derived stride is named as derived.
  expect_reject(
      tensor_map::tiled(element::bf16, kBase).dims({30, 4}).box({8, 4}),
      {"the packed stride of dim 1 (no strides given: dims[0] x 2-byte elements) = 60 bytes is not", "multiple of 16"});
  expect_reject(good2d().strides({2056}), {"strides[0] = 2056", "multiple of 16"});
  expect_reject(good2d().strides({0}), {"strides[0] = 0"});
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({32, 4, 4}).box({16, 1, 1}).strides({32, 136}),
                {"strides[1] = 136", "dim 2"});
}

// cuTensorMapEncodeTiled's layout rule: strides[0] >= dims[0] * element size and
// strides[i] >= strides[i-1] * dims[i]; a padded stride is fine, an overlapping one is not.
TEST(TensorMapValidation, RejectsStridesThatOverlapTheDimensionBelow) {
  expect_reject(tensor_map::tiled(element::f32, kBase).dims({20, 6}).box({8, 2}).strides({64}),
                {"strides[0] = 64", "80 bytes of dims[0] x element size"});
  expect_reject(tensor_map::tiled(element::f32, kBase).dims({20, 6, 7}).box({8, 2, 2}).strides({96, 560}),
                {"strides[1] = 560", "576 bytes of strides[0] x dims[1]"});
  EXPECT_NO_THROW(tensor_map::tiled(element::f32, kBase).dims({20, 6, 7}).box({8, 2, 2}).strides({96, 576}).validate());
  EXPECT_NO_THROW(tensor_map::tiled(element::bf16, kBase).dims({37, 50}).box({16, 8}).strides({96}).validate());
}

// The overlap rule's product is computed without wrapping: 2^39 x 2^32 bytes is not 0.
TEST(TensorMapValidation, OverlapCheckDoesNotWrap) {
  expect_reject(tensor_map::tiled(element::u8, kBase)
                    .dims({16, std::uint64_t(1) << 32, 4})
                    .box({16, 1, 1})
                    .strides({std::uint64_t(1) << 39, 16}),
                {"strides[1] = 16", "more than 2^64 bytes of strides[0] x dims[1]"});
}

// Rank 1 has no strides: any length is valid, also one that is not a multiple of 16 bytes.
TEST(TensorMapValidation, AcceptsRank1OfAnyLength) {
  EXPECT_NO_THROW(tensor_map::tiled(element::u8, kBase).dims({1000}).box({64}).validate());
  EXPECT_NO_THROW(tensor_map::tiled(element::bf16, kBase).dims({37}).box({8}).validate());
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({1000}).strides({1008}).box({64}),
                {"strides has 1 entries", "rank 1 needs 0"});
}

TEST(TensorMapValidation, RejectsStridesOf2To40OrMore) {
  const std::uint64_t big = std::uint64_t(1) << 40;
  expect_reject(good2d().strides({big}), {"strides[0] = 1099511627776", "2^40"});
  EXPECT_NO_THROW(good2d().strides({big - 16}).validate());
}

// Strides derived from packed dims (none given) are named as derived, with the product they come
// from, and a product past 2^64 is reported as such rather than wrapped.
TEST(TensorMapValidation, NamesADerivedStrideAsDerived) {
  const std::uint64_t g = std::uint64_t(1) << 32;
  auto message = [](const hopper::tensor_map_builder& b) {
    try {
      b.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // dims {2^32, 2^32, 2} of bf16: dim 1's packed stride is 2^33 (valid), dim 2's 2^65.
  std::string m = message(tensor_map::tiled(element::bf16, kBase).dims({g, g, 2}).box({64, 1, 1}));
  EXPECT_NE(m.find("the packed stride of dim 2 (no strides given: dims[0] x dims[1] x 2-byte elements) = more "
                   "than 2^64 bytes is not below 2^40"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("strides["), std::string::npos) << "blames strides the caller never passed: " << m;
  // dims {2^20, 2^32, 4} of bf16: dim 2's packed stride is 2^53.
  m = message(tensor_map::tiled(element::bf16, kBase).dims({1u << 20, g, 4}).box({64, 1, 1}));
  EXPECT_NE(m.find("the packed stride of dim 2 (no strides given: dims[0] x dims[1] x 2-byte elements) = "
                   "9007199254740992 bytes is not below 2^40"),
            std::string::npos)
      << m;
  // Given strides are still named as given.
  m = message(good2d().strides({std::uint64_t(1) << 41}));
  EXPECT_NE(m.find("strides[0] = 2199023255552 bytes is not below 2^40"), std::string::npos) << m;
}

TEST(TensorMapValidation, RejectsInterleaveB32StridesNotAMultipleOf32) {
  expect_reject(tensor_map::tiled(element::bf16, kBase)
                    .dims({16, 8, 8})
                    .box({16, 8, 8})
                    .strides({48, 384})
                    .interleave(hopper::interleave::b32)
                    .swizzle(hopper::swizzle::b32),
                {"strides[0] = 48", "multiple of 32"});
}

TEST(TensorMapValidation, RejectsWrongCounts) {
  expect_reject(good2d().strides({2048, 4096}), {"strides has 2 entries", "needs 1"});
  expect_reject(tensor_map::tiled(element::bf16, kBase).dims({1024, 512}).box({64}),
                {"box has 1 entries", "rank is 2"});
  expect_reject(good2d().element_strides({1, 1, 1}), {"element_strides has 3 entries"});
}

TEST(TensorMapValidation, RejectsBoxDimsOutOfRange) {
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({1024, 1024}).box({16, 257}), {"box[1] = 257", "1..256"});
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({1024, 1024}).box({16, 0}), {"box[1] = 0", "1..256"});
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({1024}).box({272}), {"box[0] = 272", "1..256"});
  EXPECT_NO_THROW(tensor_map::tiled(element::u8, kBase).dims({1024, 1024}).box({256, 256}).validate());
}

TEST(TensorMapValidation, RejectsInnerBoxRowNotAMultipleOf16) {
  expect_reject(tensor_map::tiled(element::f32, kBase).dims({1024, 8}).box({6, 8}), {"24 bytes", "multiple of 16"});
  expect_reject(tensor_map::tiled(element::u8, kBase).dims({1024}).box({15}), {"15 bytes", "multiple of 16"});
}

TEST(TensorMapValidation, RejectsInnerBoxRowWiderThanTheSwizzleSpan) {
  // bf16: 16 elements = 32 B fits b32; 32 elements = 64 B does not.
  EXPECT_NO_THROW(good2d().box({16, 8}).swizzle(hopper::swizzle::b32).validate());
  expect_reject(good2d().box({32, 8}).swizzle(hopper::swizzle::b32), {"64 bytes", "swizzle span of 32", "b32"});
  EXPECT_NO_THROW(good2d().box({32, 8}).swizzle(hopper::swizzle::b64).validate());
  expect_reject(good2d().box({64, 8}).swizzle(hopper::swizzle::b64), {"128 bytes", "swizzle span of 64", "b64"});
  EXPECT_NO_THROW(good2d().box({64, 8}).swizzle(hopper::swizzle::b128).validate());
  expect_reject(good2d().box({128, 8}).swizzle(hopper::swizzle::b128), {"256 bytes", "swizzle span of 128", "b128"});
  // Without swizzle a wide row is fine.
  EXPECT_NO_THROW(good2d().box({128, 8}).validate());
}

TEST(TensorMapValidation, RejectsElementStridesOutOfRange) {
  expect_reject(good2d().element_strides({1, 9}), {"element_strides[1] = 9", "1..8"});
  expect_reject(good2d().element_strides({1, 0}), {"element_strides[1] = 0", "1..8"});
  expect_reject(good2d().element_strides({2, 1}), {"element_strides[0] = 2", "ignored"});
  EXPECT_NO_THROW(good2d().element_strides({1, 8}).validate());
}

TEST(TensorMapValidation, RejectsSwizzleOtherThanB32WithInterleaveB32) {
  const auto b =
      tensor_map::tiled(element::bf16, kBase).dims({16, 8, 8}).box({16, 8, 8}).interleave(hopper::interleave::b32);
  EXPECT_NO_THROW(hopper::tensor_map_builder(b).swizzle(hopper::swizzle::b32).validate());
  expect_reject(hopper::tensor_map_builder(b).swizzle(hopper::swizzle::b128), {"swizzle b128", "interleave b32"});
  expect_reject(hopper::tensor_map_builder(b), {"swizzle none", "interleave b32"});
}

TEST(TensorMapValidation, RejectsNanFillForTypesThatAreNotFloat) {
  EXPECT_NO_THROW(good2d().oob_fill(hopper::oob_fill::nan_request_zero_fma).validate());
  for (element t : {element::u8, element::s8, element::e4m3, element::e5m2, element::s32}) {
    const auto b =
        tensor_map::tiled(t, kBase).dims({1024, 8}).box({16, 8}).oob_fill(hopper::oob_fill::nan_request_zero_fma);
    expect_reject(b, {hopper::element_name(t), "nan_request_zero_fma"});
  }
}

TEST(TensorMapValidation, RejectsEnumValuesOutOfRange) {
  expect_reject(good2d().swizzle(static_cast<hopper::swizzle>(4)), {"swizzle value 4"});
  expect_reject(good2d().interleave(static_cast<hopper::interleave>(3)), {"interleave value 3"});
  expect_reject(good2d().l2_promotion(static_cast<hopper::l2_promotion>(7)), {"l2_promotion value 7"});
  expect_reject(good2d().oob_fill(static_cast<hopper::oob_fill>(2)), {"oob_fill value 2"});
  expect_reject(tensor_map::tiled(static_cast<element>(9), kBase).dims({1024}).box({16}), {"element type value 9"});
}

TEST(TensorMapValidation, RejectsABoxLargerThanSharedMemory) {
  expect_reject(tensor_map::tiled(element::f32, kBase).dims({256, 256}).box({256, 256}), {"262144 bytes", "227 KiB"});
}

TEST(TensorMapValidation, BuildValidatesFirst) {
  // build() must throw the validation error, never reach the driver with a bad map.
  EXPECT_THROW(good2d(at(4)).build(), std::invalid_argument);
}

TEST(TensorMapSwizzle, OffsetsFollowTheChunkXorRowPattern) {
  using hopper::swizzle;
  for (std::uint32_t o = 0; o < 4096; ++o) {
    EXPECT_EQ(hopper::swizzle_offset(swizzle::none, o), o);
    for (swizzle s : {swizzle::b32, swizzle::b64, swizzle::b128})
      ASSERT_EQ(hopper::swizzle_offset(s, hopper::swizzle_offset(s, o)), o) << "not an involution at " << o;
  }
  // 128B: chunk c of 128-byte row r lands at chunk c ^ (r % 8); bytes inside a chunk stay.
  for (std::uint32_t r = 0; r < 16; ++r)
    for (std::uint32_t c = 0; c < 8; ++c)
      EXPECT_EQ(hopper::swizzle_offset(swizzle::b128, r * 128 + c * 16 + 5), r * 128 + ((c ^ (r % 8)) * 16) + 5);
  // 64B: two chunk bits XOR bits 7-8 (128-byte row index mod 4).
  EXPECT_EQ(hopper::swizzle_offset(swizzle::b64, 128 * 3 + 16 * 1), 128 * 3 + 16 * 2);
  // 32B: one chunk bit XOR bit 7.
  EXPECT_EQ(hopper::swizzle_offset(swizzle::b32, 128 + 16), 128u);
  EXPECT_EQ(hopper::swizzle_alignment(swizzle::b128), 1024u);
  EXPECT_EQ(hopper::swizzle_alignment(swizzle::b32), 256u);
}

TEST(TensorMapEncode, EncodesValidMapsThroughTheDriver) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device/driver: the encode itself is left to the GPU run";
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 1 << 20), cudaSuccess);
  for (hopper::swizzle s : {hopper::swizzle::none, hopper::swizzle::b32, hopper::swizzle::b64, hopper::swizzle::b128}) {
    const std::uint32_t inner = s == hopper::swizzle::none ? 64 : hopper::swizzle_bytes(s) / 2;
    const tensor_map m = tensor_map::tiled(element::bf16, p).dims({512, 512}).box({inner, 16}).swizzle(s).build();
    EXPECT_EQ(m.box_bytes(), inner * 16u * 2u);
    EXPECT_EQ(m.rank(), 2u);
  }
  const tensor_map m5 = tensor_map::tiled(element::f32, p)
                            .dims({16, 4, 4, 4, 4})
                            .box({4, 2, 2, 2, 2})
                            .l2_promotion(hopper::l2_promotion::b256)
                            .oob_fill(hopper::oob_fill::nan_request_zero_fma)
                            .build();
  EXPECT_EQ(m5.box_bytes(), 4u * 16u * 4u);
  // Rank 1 of a length that is not a multiple of 16 bytes (the driver still reads a stride).
  const tensor_map m1 = tensor_map::tiled(element::u8, p).dims({1000}).box({64}).build();
  EXPECT_EQ(m1.box_bytes(), 64u);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
}

}  // namespace
