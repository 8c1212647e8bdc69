"""Kubernetes resource quantities in Kueue's canonical int64 units.

Parsing is done by the Cython kernel (``api/_quantity.pyx``); this module
adds caching, YAML number handling and :func:`format_quantity`, Kueue's way of
printing an int64 amount in messages.

Units (Kueue ``pkg/resources/requests.go`` ResourceValue): ``cpu`` in
milli-units (Quantity.MilliValue), every other resource in base units
(Quantity.Value). A fraction rounds up, away from zero. Results are clamped to
the int64 range as Kueue's ``pkg/util/math`` SafeMilliValue / SafeValue do
(``1e30`` cpu is INT64_MAX; a BinarySI value is already capped at 2**63-1 when
parsed, so ``-8Ei`` memory is -(2**63-1)).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from . import _quantity
from .errors import QuantityError

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "amount_from_nanos",
    "format_amount",
    "format_quantity",
    "is_binary_resource",
    "parse_quantities",
    "parse_quantity",
    "quantity_nanos",
    "quantity_string",
]


def quantity_string(value: object) -> str:
    """The quantity text of a manifest value.

    YAML/JSON numbers arrive as int or float (``nominalQuota: 9``, ``0.5``); the
    API server reads them as the decimal they spell, so use their repr
    (``1e+16``, ``1.5e-07`` are valid quantities; ``inf``/``nan`` are not).
    ``bool`` is an int in Python but not a quantity."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        raise QuantityError(f"{value!r} is not a quantity: expected a string or a number")
    if isinstance(value, int):
        try:
            return str(value)
        except ValueError:  # more digits than Python will print
            raise QuantityError("integer quantity has too many digits") from None
    if isinstance(value, float):
        return repr(value)
    got = (
        "object" if isinstance(value, dict) else "array" if isinstance(value, list) else type(value).__name__
    )
    raise QuantityError(f"expected a quantity (string or number), got {got}")


@lru_cache(maxsize=1 << 16)
def _parse_cached(s: str, milli: bool) -> int:
    v: int = _quantity.value_from_nanos(_quantity.nanos(s), milli)
    return v


@lru_cache(maxsize=1 << 16)
def _nanos_cached(s: str) -> int:
    n: int = _quantity.nanos(s)
    return n


def parse_quantity(s: object, resource: str) -> int:
    """``s`` (a quantity string, or a YAML int/float) in canonical units of
    ``resource``. Raises QuantityError for invalid text."""
    return _parse_cached(quantity_string(s), resource == "cpu")


def quantity_nanos(s: object) -> int:
    """The exact value of ``s`` in units of 1e-9 (Python int, unbounded).

    Kueue compares and adds Quantities exactly before converting to int64
    (``lendingLimit.Cmp(nominalQuota)``, pod requests summed as Quantities);
    every parsed quantity is a whole number of nanos, so this is exact."""
    return _nanos_cached(quantity_string(s))


def value_from_nanos(n: int, resource: str) -> int:
    """Canonical int64 value of an exact nano amount (see parse_quantity)."""
    v: int = _quantity.value_from_nanos(n, resource == "cpu")
    return v


# The largest CPU quantity whose milli value fits int64 (MaxInt64 / 1000 cores),
# in nanos: Kueue's maxCPUQuantityForAmount.
_MAX_CPU_NANOS = (INT64_MAX // 1000) * 10**9
_MAX_NANOS = INT64_MAX * 10**9


def amount_from_nanos(n: int, resource: str) -> int:
    """A quota field (nominalQuota, borrowingLimit, lendingLimit) of exact value
    ``n`` nanos, as Kueue's resources.AmountFromQuantity takes it: INT64_MAX
    (Unlimited) from MaxInt64/1000 cores of cpu, or MaxInt64 of anything else,
    up; below that the canonical value (parse_quantity's, rounded up)."""
    if n >= (_MAX_CPU_NANOS if resource == "cpu" else _MAX_NANOS):
        return INT64_MAX
    return value_from_nanos(n, resource)


def parse_quantities(strings: Sequence[object], resource: str) -> npt.NDArray[np.int64]:
    """parse_quantity over many values, as a C-contiguous int64 array."""
    arr: npt.NDArray[np.int64] = _quantity.parse_quantities([quantity_string(s) for s in strings], resource)
    return arr


# --- formatting -----------------------------------------------------------------
#
# Algorithm (for the C++ twin; follows kueue pkg/resources/requests.go
# ResourceQuantity + newCanonicalQuantity, and apimachinery quantity.go
# Quantity.String -> CanonicalizeBytes, amount.go int64Amount.AsCanonicalBytes /
# AsCanonicalBase1024Bytes, suffix.go):
#
# * cpu: the value is milli. Format DecimalSI with scale -3.
# * memory, ephemeral-storage, hugepages-*: "BinarySI preferred". If
#   -1024 < v < 1024, or v is not a multiple of 1024, Kueue's re-parse turns it
#   into DecimalSI: format DecimalSI with scale 0. Otherwise strip factors of
#   1024 (k times, 1..6) and print mantissa + Ki/Mi/Gi/Ti/Pi/Ei.
#   (INT64_MIN is printed in decimal: Go cannot negate it to strip factors.)
# * anything else: DecimalSI with scale 0.
#
# DecimalSI(v, scale): 0 -> "0". Otherwise strip all factors of 10 from v
# (t times); exponent = scale + t; then lower the exponent to a multiple of
# three (floor), multiplying the mantissa back by 10 or 100; suffix by exponent:
# -9 n, -6 u, -3 m, 0 "", 3 k, 6 M, 9 G, 12 T, 15 P, 18 E. An int64 never needs
# another exponent (|v| < 10**19).

_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def is_binary_resource(resource: str) -> bool:
    """Resources Kueue prints in BinarySI when exact (ResourceQuantity)."""
    return resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")


def _format_decimal_si(value: int, scale: int) -> str:
    if value == 0:
        return "0"
    mantissa = value
    times = 0
    while mantissa % 10 == 0:
        mantissa //= 10
        times += 1
    exponent = scale + times
    r = exponent % 3  # Python's floor modulo: 0, 1 or 2
    mantissa *= 10**r
    exponent -= r
    return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"


def _format_binary_preferred(value: int) -> str:
    if -1024 < value < 1024 or value == INT64_MIN:
        return _format_decimal_si(value, 0)
    mantissa = value
    times = 0
    while mantissa % 1024 == 0:
        mantissa //= 1024
        times += 1
    if times == 0:
        return _format_decimal_si(value, 0)
    return f"{mantissa}{_BINARY_SUFFIXES[times]}"


def format_amount(resource: str, value: int) -> str:
    """A quota amount as Kueue prints it (ResourceFormatter.AmountQuantityString):
    Unlimited (INT64_MAX, and what saturates to it) is "<unlimited>", anything
    else format_quantity's."""
    return "<unlimited>" if value >= INT64_MAX else format_quantity(resource, value)


def format_quantity(resource: str, value: int) -> str:
    """The string Kueue prints for ``value`` canonical units of ``resource``
    (ResourceQuantityString): cpu 1500 -> "1500m", memory 8Gi in bytes -> "8Gi".

    A value beyond int64 (a count times a per-pod request, a sum of usages)
    prints as the engines hold it, saturated (``engine/reference/amount.py``):
    2 x 4Ei of memory is INT64_MAX, "9223372036854775807" ("...807m" for
    cpu); format_amount prints INT64_MAX "<unlimited>"."""
    if not INT64_MIN <= value <= INT64_MAX:
        value = INT64_MAX if value > 0 else INT64_MIN
    if resource == "cpu":
        return _format_decimal_si(value, -3)
    if is_binary_resource(resource):
        return _format_binary_preferred(value)
    return _format_decimal_si(value, 0)
