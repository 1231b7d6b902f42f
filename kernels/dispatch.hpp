// A runtime value to one of a kernel's compile-time instances: with_value<V0, V1, ...>(v, f)
// calls f(std::integral_constant<int, Vi>{}) for the Vi equal to v, or for the last listed value
// when none is (callers validate first, or ask one_of). Plain C++: the GPU launchers and the model
// runners share it.
#pragma once
#include <cstdint>
#include <type_traits>

namespace hopper::kernels {

template <int... Vs>
constexpr bool one_of(uint32_t v) {
  return ((v == uint32_t(Vs)) || ...);
}

template <int V, int... Rest, class F>
decltype(auto) with_value(uint32_t v, F&& f) {
  if constexpr (sizeof...(Rest) == 0) {
    return f(std::integral_constant<int, V>{});
  } else {
    if (v == uint32_t(V)) return f(std::integral_constant<int, V>{});
    return with_value<Rest...>(v, f);
  }
}

}  // namespace hopper::kernels
