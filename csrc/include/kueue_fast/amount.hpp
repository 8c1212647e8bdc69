// Quantities: int64 in canonical units (milli-cpu, bytes, counts).
//
// One sentinel, NO_LIMIT = INT64_MAX, means "no limit": Kueue's Unlimited
// resources.Amount (pkg/resources/amount.go at ff69552e), and quota arithmetic
// is Kueue's Amount arithmetic, amount_add and amount_sub below: Unlimited is
// sticky, bounded results saturate at the int64 range instead of wrapping (a
// wrapped sum turns "huge" into "negative", which then looks like free quota),
// so a sum that reaches INT64_MAX becomes Unlimited. Comparisons are plain
// (Unlimited is the largest value). The reference engine has the same two
// functions (kueue_fast/engine/reference/amount.py).
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

// Amount.Add: Unlimited if either side is, else the saturated sum. For
// non-negative operands the same as sat_add.
inline Amount amount_add(Amount a, Amount b) noexcept {
  if (a == NO_LIMIT || b == NO_LIMIT) return NO_LIMIT;
  return sat_add(a, b);
}

// Amount.Sub: Unlimited - Unlimited = 0, Unlimited - x = Unlimited,
// x - Unlimited = AMOUNT_MIN ("no capacity"), else the saturated difference.
inline Amount amount_sub(Amount a, Amount b) noexcept {
  if (a == NO_LIMIT) return b == NO_LIMIT ? 0 : NO_LIMIT;
  if (b == NO_LIMIT) return AMOUNT_MIN;
  return sat_sub(a, b);
}

inline Amount amount_min(Amount a, Amount b) noexcept { return a < b ? a : b; }
inline Amount amount_max(Amount a, Amount b) noexcept { return a > b ? a : b; }

}  // namespace kueue_fast
