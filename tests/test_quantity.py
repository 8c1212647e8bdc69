"""Quantities: agreement with Kubernetes' parser, Go's rounding/clamping, and
Kueue's printing of amounts."""

from __future__ import annotations

import decimal
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st
from kubernetes.utils import parse_quantity as k8s_parse_quantity

from kueue_fast.api.errors import QuantityError
from kueue_fast.api.quantity import (
    INT64_MAX,
    INT64_MIN,
    format_amount,
    format_quantity,
    parse_quantities,
    parse_quantity,
    quantity_nanos,
)

# The OpenAPI pattern the API server applies to resource.Quantity fields of CRDs.
CRD_PATTERN = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
# Go's ParseQuantity additionally wants an integer exponent.
GO_EXPONENT = re.compile(r"[eE][+-]?[0-9]+$")


def valid_by_oracle(s: str) -> bool:
    m = CRD_PATTERN.match(s)
    if not m:
        return False
    suffix = m.group(6)
    if suffix and suffix[0] in "eE" and len(suffix) > 1 and suffix != "Ei":
        # ...that fits an int64 (strconv.ParseInt)
        return bool(GO_EXPONENT.match(suffix)) and -(2**63) <= int(suffix[1:]) < 2**63
    return True


def expected_value(s: str, resource: str) -> int:
    """Kubernetes' value via the official Python client: exact Decimal, then
    Kueue's rounding (away from zero) and clamping; BinarySI capped at 2**63-1."""
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        d = k8s_parse_quantity(s)
        if s.endswith("i") and abs(d) > INT64_MAX:
            d = decimal.Decimal(INT64_MAX).copy_sign(d)
        if resource == "cpu":
            d = d * 1000
        v = int(d.to_integral_value(rounding=decimal.ROUND_UP))
    return max(INT64_MIN, min(INT64_MAX, v))


# --- a table agreeing with kubernetes.utils.parse_quantity -------------------------

VALID = [
    "0",
    "1",
    "+1",
    "-1",
    "500m",
    "0.5",
    ".5",
    "5.",
    "1.5Ki",
    "36Gi",
    "1e3",
    "1E3",
    "1E",
    "1e-3",
    "1e+3",
    "1.5e2",
    "100Mi",
    "2Ti",
    "1Pi",
    "3Ei",
    "1n",
    "1u",
    "999n",
    "1500m",
    "2k",
    "3M",
    "4G",
    "5T",
    "6P",
    "7E",
    "0.001",
    "0.0001",
    "1.2345",
    "123456789",
    "0.5Gi",
    "1.1Ki",
    "007",
    "00.50",
    "1e0",
    "-0.5",
    "-1.5",
    "-1500m",
    "10",
    "64Gi",
    "250m",
    "0.25",
    "1.000001",
    "2.5e-1",
    ".5e1",
    "5.e1",
    "1.5n",
    "0.9n",
    "12345678901234567",
    "9223372036854775807",
    "9223372036854775807m",
    "1.5M",
    "0e5",
    "0Ki",
    "-0",
    "+0.0",
]


@pytest.mark.parametrize("s", VALID)
@pytest.mark.parametrize("resource", ["cpu", "memory", "nvidia.com/gpu"])
def test_valid_strings_agree_with_kubernetes(s: str, resource: str) -> None:
    assert valid_by_oracle(s)
    assert parse_quantity(s, resource) == expected_value(s, resource)


# Rejected by the API server's pattern and by Go's parser.
INVALID = [
    "",
    "1.5.5",
    "Ki",
    "1 Gi",
    "1GiB",
    "1e",
    "--1",
    ".",
    "+",
    "-",
    "1ki",
    "1mi",
    "1K",
    "1Kii",
    "e5",
    "1e1.5",
    "1e.5",
    "1e5.",
    "1Gi5",
    "1 ",
    " 1",
    "1_000",
    "0x10",
    "1/2",
    "inf",
    "nan",
    "Infinity",
    "1..5",
    "1e++5",
    "1e-",
    "1e3Ki",
    "1mm",
    "1.5 m",
    "１",
    "1e99999999999999999999",
]


@pytest.mark.parametrize("s", INVALID)
def test_invalid_strings_are_rejected(s: str) -> None:
    assert not valid_by_oracle(s)
    with pytest.raises(QuantityError):
        parse_quantity(s, "cpu")


# The Python client is more lenient than Go on these; Go (and we) reject them.
PYTHON_CLIENT_LENIENT = {
    "1 Gi",
    "1.5 m",
    "1e3Ki",
    "1K",
    "1 ",
    " 1",
    "1_000",
    "inf",
    "nan",
    "Infinity",
    "1e1.5",
    "1e.5",
    "1e5.",
    "１",
}


@pytest.mark.parametrize("s", sorted(set(INVALID) - PYTHON_CLIENT_LENIENT))
def test_invalid_strings_are_rejected_by_the_python_client_too(s: str) -> None:
    with pytest.raises((ValueError, decimal.DecimalException)):
        with decimal.localcontext() as ctx:
            ctx.prec = 200
            k8s_parse_quantity(s)


# --- units, rounding, clamping -----------------------------------------------------


@pytest.mark.parametrize(
    ("s", "resource", "want"),
    [
        ("500m", "cpu", 500),
        ("1", "cpu", 1000),
        ("0.0005", "cpu", 1),  # MilliValue rounds a fraction up
        ("1n", "cpu", 1),
        ("1n", "memory", 1),  # Value rounds up too
        ("1.5", "memory", 2),
        ("36Gi", "memory", 36 * 2**30),
        ("1Ki", "memory", 1024),
        ("1k", "memory", 1000),
        ("-0.5", "memory", -1),  # away from zero, as Go's int64Amount does
        ("-1500m", "cpu", -1500),
        ("-1.0001", "pods", -2),
    ],
)
def test_units_and_rounding(s: str, resource: str, want: int) -> None:
    assert parse_quantity(s, resource) == want


@pytest.mark.parametrize(
    ("s", "resource", "want"),
    [
        # cpu: Kueue SafeMilliValue clamps beyond MaxInt64 milli
        ("9223372036854775807m", "cpu", INT64_MAX),
        ("9223372036854775.807", "cpu", INT64_MAX),
        ("9223372036854775.808", "cpu", INT64_MAX),
        ("1e30", "cpu", INT64_MAX),
        ("-1e30", "cpu", INT64_MIN),
        ("8Ei", "cpu", INT64_MAX),
        # other resources: Kueue SafeValue clamps, BinarySI is capped when parsed
        ("9223372036854775807", "memory", INT64_MAX),
        ("9223372036854775808", "memory", INT64_MAX),
        ("10E", "pods", INT64_MAX),
        ("8Ei", "memory", INT64_MAX),
        ("100Ei", "memory", INT64_MAX),
        ("-8Ei", "memory", -INT64_MAX),  # capped magnitude, not INT64_MIN
        ("-9223372036854775808", "memory", INT64_MIN),
        ("-9223372036854775809", "memory", INT64_MIN),
        ("1e400", "memory", INT64_MAX),
        ("1e2000000000", "memory", INT64_MAX),
        ("1e-2000000000", "memory", 1),
        # Go reads the exponent as int32: 4294967296 wraps to 0
        ("1e4294967296", "memory", 1),
    ],
)
def test_overflow_is_clamped_like_kueue(s: str, resource: str, want: int) -> None:
    assert parse_quantity(s, resource) == want


def test_very_long_digit_strings_do_not_crash() -> None:
    assert parse_quantity("0." + "0" * 5000 + "1", "memory") == 1
    assert parse_quantity("1" * 6000, "memory") == INT64_MAX
    assert parse_quantity("0." + "9" * 6000, "cpu") == 1000


@pytest.mark.parametrize(
    ("value", "want"),
    [(9, "9"), (0, "0"), (-3, "-3"), (0.5, "0.5"), (1e16, "1e+16"), (1.5e-07, "1.5e-07"), (1000.0, "1000.0")],
)
def test_yaml_numbers_are_read_as_their_decimal(value: int | float, want: str) -> None:
    assert parse_quantity(value, "pods") == parse_quantity(want, "pods")


@pytest.mark.parametrize("value", [True, None, float("inf"), float("nan"), [1], {"a": 1}])
def test_non_quantity_values_are_rejected(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value, "cpu")


def test_nanos_are_exact() -> None:
    assert quantity_nanos("1.5") == 1_500_000_000
    assert quantity_nanos("0.9n") == 1
    assert quantity_nanos("1Ki") == 1024 * 10**9
    assert quantity_nanos("-2") == -2 * 10**9
    assert quantity_nanos("5.0001m") == 5_000_100


def test_parse_quantities_bulk() -> None:
    arr = parse_quantities(["1", "500m", 2, "1e30"], "cpu")
    assert arr.dtype == np.int64 and arr.flags.c_contiguous
    assert arr.tolist() == [1000, 500, 2000, INT64_MAX]
    with pytest.raises(QuantityError):
        parse_quantities(["1", "bogus"], "cpu")


# --- property tests -----------------------------------------------------------------

_digits = st.text("0123456789", min_size=1, max_size=9)
_number = st.one_of(
    _digits,
    st.builds(lambda a, b: f"{a}.{b}", _digits, st.text("0123456789", max_size=9)),
    st.builds(lambda b: f".{b}", _digits),
)
_suffix = st.one_of(
    st.just(""),
    st.sampled_from(["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"]),
    st.builds(lambda e, sign: f"e{sign}{e}", st.integers(0, 25), st.sampled_from(["", "+", "-"])),
    st.builds(lambda e, sign: f"E{sign}{e}", st.integers(0, 25), st.sampled_from(["", "+", "-"])),
)
valid_quantities = st.builds(
    lambda sign, n, suf: f"{sign}{n}{suf}", st.sampled_from(["", "+", "-"]), _number, _suffix
)


@given(valid_quantities, st.sampled_from(["cpu", "memory", "example.com/gpu"]))
def test_property_valid_strings_match_the_python_client(s: str, resource: str) -> None:
    assert valid_by_oracle(s)
    assert parse_quantity(s, resource) == expected_value(s, resource)


@given(st.text("0123456789.+-eEinumkKMGTP i", max_size=8))
def test_property_validity_matches_the_api_server_pattern(s: str) -> None:
    if valid_by_oracle(s):
        assert parse_quantity(s, "memory") == expected_value(s, "memory")
    else:
        with pytest.raises(QuantityError):
            parse_quantity(s, "memory")


@given(st.integers(INT64_MIN, INT64_MAX), st.sampled_from(["cpu", "memory", "pods", "hugepages-2Mi"]))
def test_property_format_round_trips(value: int, resource: str) -> None:
    assert parse_quantity(format_quantity(resource, value), resource) == value


# --- format_quantity against Go's outputs -------------------------------------------


@pytest.mark.parametrize(
    ("resource", "value", "want"),
    [
        # NewMilliQuantity(v, DecimalSI).String()
        ("cpu", 2000, "2"),
        ("cpu", 1500, "1500m"),
        ("cpu", 1000000, "1k"),
        ("cpu", 100, "100m"),
        ("cpu", 10, "10m"),
        ("cpu", 1, "1m"),
        ("cpu", 0, "0"),
        ("cpu", 12000, "12"),
        ("cpu", 120000, "120"),
        ("cpu", -1500, "-1500m"),
        ("cpu", INT64_MAX, "9223372036854775807m"),
        ("cpu", 5_000_000_000_000_000, "5T"),
        # newCanonicalQuantity(v, BinarySI): exact multiples of 1024 stay binary,
        # the rest are re-read as DecimalSI ("128000 will use BinarySI format
        # (125Ki), but 100000 will use DecimalSI")
        ("memory", 8589934592, "8Gi"),
        ("memory", 128000, "125Ki"),
        ("memory", 100000, "100k"),
        ("memory", 1500, "1500"),
        ("memory", 2000, "2k"),
        ("memory", 1000, "1k"),
        ("memory", 1023, "1023"),
        ("memory", 1024, "1Ki"),
        ("memory", 1536, "1536"),
        ("memory", 1024000, "1000Ki"),
        ("memory", 2**60, "1Ei"),
        ("memory", INT64_MAX, "9223372036854775807"),
        ("memory", -2048, "-2Ki"),
        ("memory", INT64_MIN, "-9223372036854775808"),
        ("ephemeral-storage", 10 * 2**30, "10Gi"),
        ("hugepages-2Mi", 4 * 2**20, "4Mi"),
        # NewQuantity(v, DecimalSI) for every other resource
        ("pods", 5, "5"),
        ("pods", 1000, "1k"),
        ("nvidia.com/gpu", 8, "8"),
        ("example.com/gpu-memory", 9984 * 1024 * 1024, "10468982784"),
        ("pods", 10**18, "1E"),
        ("pods", 1500000, "1500k"),
    ],
)
def test_format_quantity_matches_go(resource: str, value: int, want: str) -> None:
    assert format_quantity(resource, value) == want
    assert parse_quantity(want, resource) == value


def test_format_quantity_prints_values_beyond_int64_saturated_as_the_engines_hold_them() -> None:
    # issue 21 item 10: count 2 x 4Ei of memory, or a sum of usages beyond int64, raised ValueError
    assert format_quantity("memory", 2 * 4 * 2**60) == "9223372036854775807"
    assert format_quantity("cpu", 18 * 10**18) == "9223372036854775807m"
    assert format_quantity("memory", -(2**70)) == "-9223372036854775808"
    assert format_amount("memory", 2**63) == "<unlimited>"
    assert format_amount("cpu", INT64_MAX) == "<unlimited>"
