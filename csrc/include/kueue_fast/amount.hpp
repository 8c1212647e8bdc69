// Quantities: int64 in canonical units (milli-cpu, bytes, counts).
//
// One sentinel, NO_LIMIT = INT64_MAX, means "no limit". Arithmetic that can
// overflow saturates at the int64 range instead of wrapping (the reason is in
// kueue pkg/resources/amount.go: a wrapped sum turns "huge" into "negative",
// which then looks like free quota). The reference engine computes with
// Python's unbounded ints; the two agree whenever no intermediate result
// leaves the int64 range.
#pragma once

#include <cstdint>
#include <limits>

namespace kueue_fast {

using Amount = std::int64_t;

inline constexpr Amount NO_LIMIT = std::numeric_limits<Amount>::max();
inline constexpr Amount AMOUNT_MAX = std::numeric_limits<Amount>::max();
inline constexpr Amount AMOUNT_MIN = std::numeric_limits<Amount>::min();

// a + b, clamped to [AMOUNT_MIN, AMOUNT_MAX].
inline Amount sat_add(Amount a, Amount b) noexcept {
  Amount r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? AMOUNT_MAX : AMOUNT_MIN;
  return r;
}

// a - b, clamped to [AMOUNT_MIN, AMOUNT_MAX].
inline Amount sat_sub(Amount a, Amount b) noexcept {
  Amount r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? AMOUNT_MAX : AMOUNT_MIN;
  return r;
}

// a * b, clamped to [AMOUNT_MIN, AMOUNT_MAX] (the reference's saturating_mul
// clamps the positive side; requests and counts are never negative).
inline Amount sat_mul(Amount a, Amount b) noexcept {
  Amount r;
  if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? AMOUNT_MIN : AMOUNT_MAX;
  return r;
}

inline Amount amount_min(Amount a, Amount b) noexcept { return a < b ? a : b; }
inline Amount amount_max(Amount a, Amount b) noexcept { return a > b ? a : b; }

}  // namespace kueue_fast
