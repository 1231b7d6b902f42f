// Arithmetic that cannot wrap, for the host validators: a size derived from user input (a row
// pitch, a tile count, a shared-memory total) is computed here first, so that a value too large
// to represent is rejected by name instead of wrapping into one that passes a limit.
//
//   if (auto bytes = checked::mul(lda, 2)) use(*bytes); else reject("lda = ... overflows");
//
// Each operation returns the exact result, or nullopt when it does not fit the result type.
#pragma once
#include <cstdint>
#include <optional>
#include <type_traits>

namespace hopper::checked {

template <class T>
using if_integer = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, std::optional<T>>;

// a * b, a + b, a - b in T (both operands converted to T first, so pass values of one type).
template <class T>
constexpr if_integer<T> mul(T a, T b) {
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
template <class T>
constexpr if_integer<T> add(T a, T b) {
  T r{};
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
template <class T>
constexpr if_integer<T> sub(T a, T b) {
  T r{};
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// An optional operand propagates: mul(mul(a, b), c) is nullopt when either product overflows.
template <class T>
constexpr std::optional<T> mul(std::optional<T> a, T b) {
  return a ? mul(*a, b) : std::nullopt;
}
template <class T>
constexpr std::optional<T> add(std::optional<T> a, T b) {
  return a ? add(*a, b) : std::nullopt;
}
template <class T>
constexpr std::optional<T> add(std::optional<T> a, std::optional<T> b) {
  return a && b ? add(*a, *b) : std::nullopt;
}

// ceil(a / b) for a >= 0, b > 0, without forming a + b - 1 (which wraps near the type's limit).
template <class T>
constexpr T ceil_div(T a, T b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace hopper::checked
