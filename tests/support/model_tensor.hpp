// A small 2-D bf16 tensor over a model buffer, for model tests that issue tensor copies: 64 x 32
// elements of 2 bytes, rows of 128 bytes, copied in boxes of 64 x 8 (1 KiB).
#pragma once
#include "hopper/model/world.hpp"

namespace hopper_test {

inline hopper::model::tensor_view small_tensor(hopper::model::buffer& g) {
  hopper::model::tensor_view v;
  v.mem = &g;
  v.elem_bytes = 2;
  v.dims = {64, 32};
  v.strides = {128};
  v.box = {64, 8};
  return v;
}

}  // namespace hopper_test
