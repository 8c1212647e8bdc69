"""Kueue's quota arithmetic: resources.Amount (pkg/resources/amount.go at ff69552e).

Quota amounts (nominal, limits, subtree quota, usage, what is available) are
int64 values in canonical units. INT64_MAX is not a number but Unlimited, and
it is sticky:

* ``add``: Unlimited if either side is; otherwise the sum, saturated at the
  int64 range, so a sum that reaches INT64_MAX *becomes* Unlimited (Kueue at
  ff69552e: SaturatingAdd lands on the sentinel; kueue#15026, after it, made
  amounts exact);
* ``sub``: Unlimited - Unlimited = 0, Unlimited - x = Unlimited,
  x - Unlimited = INT64_MIN ("no capacity"); otherwise the difference,
  saturated;
* comparisons are plain int64 comparisons (Unlimited is the largest value).

For non-negative operands ``add`` equals a saturating add (Kueue's AddInt64
of a request to an amount is the same thing). The native engine has the same
two functions (csrc/include/kueue_fast/amount.hpp amount_add, amount_sub).
"""

from __future__ import annotations

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
UNLIMITED = INT64_MAX


def _saturate(v: int) -> int:
    return INT64_MAX if v > INT64_MAX else INT64_MIN if v < INT64_MIN else v


def add(a: int, b: int) -> int:
    """Amount.Add."""
    if a == UNLIMITED or b == UNLIMITED:
        return UNLIMITED
    return _saturate(a + b)


def sub(a: int, b: int) -> int:
    """Amount.Sub."""
    if a == UNLIMITED:
        return 0 if b == UNLIMITED else UNLIMITED
    if b == UNLIMITED:
        return INT64_MIN
    return _saturate(a - b)


def saturating_mul(a: int, b: int) -> int:
    """A per-pod request times a pod count (Requests.Mul, pkg/util/math
    SaturatingMul; both are non-negative)."""
    return _saturate(a * b)
