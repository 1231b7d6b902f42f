// tensor_map_builder::validate(), cuTensorMapEncodeTiled's rules checked on the host: every
// input is rejected naming a field, or accepted with strides, overlaps and box bytes that hold
// when recomputed in 128 bits.
#include <hopper/objects/tensor_map.hpp>

#include <stdexcept>
#include <vector>

#include "fuzz_input.hpp"

using namespace hopper_fuzz;

std::vector<seed> hopper_fuzz_seeds() {
  // type, base, rank, dims x rank, strides given?, strides x (rank - 1), box x rank,
  // element_strides given?, swizzle, interleave, l2, oob.
  return {
      cat({{small(5)},
           aligned_pointer(),
           {small(2), wide(1024), wide(512), small(0), wide(2048), wide(64), wide(32), small(0), small(3), small(0),
            small(2), small(0)}}),
      cat({{small(6)},
           aligned_pointer(),
           {small(3), wide(20), wide(6), wide(7), small(1), wide(96), wide(576), wide(8), wide(2), wide(2), small(0),
            small(0), small(0), small(0), small(1)}}),
      cat({{small(0)},
           aligned_pointer(),
           {small(3), wide(16), wide(uint64_t(1) << 32), wide(4), small(1), wide(uint64_t(1) << 39), wide(16), wide(16),
            wide(1), wide(1), small(0), small(0), small(0), small(0), small(0)}}),
  };
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  input in(data, size);
  const auto type = static_cast<hopper::element>(in.pick(9));
  hopper::tensor_map_builder b = hopper::tensor_map::tiled(type, in.pointer());
  const uint32_t rank = in.pick(7);
  std::vector<uint64_t> dims(rank);
  for (auto& d : dims) d = in.u64();
  b.dims(dims);
  if (in.flag()) {
    std::vector<uint64_t> st(rank > 0 ? rank - 1 : 0);
    for (auto& s : st) s = in.u64();
    b.strides(st);
  }
  std::vector<uint32_t> box(rank);
  for (auto& x : box) x = in.u32();
  b.box(box);
  if (in.flag()) {
    std::vector<uint32_t> es(rank);
    for (auto& e : es) e = 1 + in.pick(9);
    b.element_strides(es);
  }
  b.swizzle(static_cast<hopper::swizzle>(in.pick(5)));
  const auto il = static_cast<hopper::interleave>(in.pick(4));
  b.interleave(il);
  b.l2_promotion(static_cast<hopper::l2_promotion>(in.pick(5)));
  b.oob_fill(static_cast<hopper::oob_fill>(in.pick(3)));
  try {
    b.validate();
  } catch (const std::invalid_argument& e) {
    expect_names_an_argument(
        e, {"element type", "swizzle", "interleave", "l2_promotion", "oob_fill", "rank", "global address", "dims[",
            "strides", "stride of dim", "box", "element_strides", "inner box row"});
    return 0;
  }
  require(rank >= 1 && rank <= 5, "accepted rank " + std::to_string(rank));
  for (uint64_t d : dims) require(d >= 1 && d <= (uint64_t(1) << 32), "accepted dims of " + std::to_string(d));
  const std::vector<uint64_t> gs = b.global_strides();
  const u128 eb = hopper::element_bytes(type);
  const u128 mult = il == hopper::interleave::b32 ? 32 : 16;
  u128 below = u128(dims[0]) * eb;
  for (size_t i = 0; i + 1 < rank; ++i) {
    require(gs[i] < (uint64_t(1) << 40) && gs[i] > 0 && gs[i] % mult == 0,
            "accepted strides[" + std::to_string(i) + "] = " + std::to_string(gs[i]));
    require(gs[i] >= below, "accepted strides[" + std::to_string(i) + "] = " + std::to_string(gs[i]) + " over the " +
                                str(below) + " bytes below it");
    below = u128(gs[i]) * dims[i + 1];
  }
  u128 box_bytes = eb;
  for (uint32_t x : box) {
    require(x >= 1 && x <= 256, "accepted box of " + std::to_string(x));
    box_bytes *= x;
  }
  require(b.box_bytes() <= box_bytes && b.box_bytes() <= 232448,
          "accepted a box of " + std::to_string(b.box_bytes()) + " bytes");
  return 0;
}
