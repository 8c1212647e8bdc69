# distutils: language = c++
# cython: language_level=3
"""Kubernetes resource quantities: parsing to Kueue's int64 units.

Follows k8s.io/apimachinery pkg/api/resource (quantity.go ParseQuantity and
parseQuantityString, suffix.go interpret, amount.go/math.go for rounding) and
Kueue pkg/resources/requests.go ResourceValue + pkg/util/math SafeMilliValue /
SafeValue (clamping to the int64 range).

Which strings are valid is the intersection of
  * the OpenAPI pattern the API server applies to every resource.Quantity field
    of a CRD:  ^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))
               (([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$
  * Go's ParseQuantity, which additionally wants an integer exponent that fits
    an int64 (``1e1.5`` matches the pattern but Go rejects it).

A parsed quantity is kept exactly as (sign, digits, exp10, exp2):
value = sign * digits * 10**exp10 * 2**exp2.  Everything else derives from it.
"""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 1

from libc.stdint cimport int64_t

import numpy as np

from kueue_fast.api.errors import QuantityError

cdef object INT64_MAX = 9223372036854775807
cdef object INT64_MIN = -9223372036854775808
cdef object NANO = 10 ** 9
cdef object TEN = 10  # Python int: `10 ** c_int` would be a C double
# Beyond this many decimal digits of magnitude a value is far outside any int64
# (even in nano units); we stop materialising powers of ten there (see nanos()).
cdef int HUGE_EXP10 = 400
cdef object HUGE_NANOS = 10 ** 409  # 10**(HUGE_EXP10 + 9), a Python int

FORMAT_DECIMAL_SI = 0
FORMAT_BINARY_SI = 1
FORMAT_DECIMAL_EXPONENT = 2


cdef inline bint _is_digit(Py_UCS4 c):
    return c >= u'0' and c <= u'9'


cdef tuple _scan(str s):
    """Split ``s`` into (negative, int_digits, frac_digits, suffix) or raise.

    Mirrors the pattern above; the suffix is checked by _interpret_suffix."""
    cdef Py_ssize_t n = len(s)
    cdef Py_ssize_t i = 0
    cdef Py_ssize_t start
    cdef bint negative = False
    cdef Py_UCS4 c
    if n == 0:
        raise QuantityError("empty string is not a quantity")
    c = s[0]
    if c == u'+' or c == u'-':
        negative = c == u'-'
        i = 1
    start = i
    while i < n and _is_digit(s[i]):
        i += 1
    int_digits = s[start:i]
    frac_digits = ""
    if i < n and s[i] == u'.':
        i += 1
        start = i
        while i < n and _is_digit(s[i]):
            i += 1
        frac_digits = s[start:i]
    if not int_digits and not frac_digits:
        raise QuantityError(f"{s!r} is not a quantity: no digits")
    return negative, int_digits, frac_digits, s[i:]


cdef tuple _interpret_suffix(str s, str suffix):
    """(exp10, exp2, format) for a suffix (suffix.go interpret)."""
    cdef Py_ssize_t n = len(suffix)
    if n == 0:
        return 0, 0, FORMAT_DECIMAL_SI
    if n == 1:
        c = suffix
        if c == "n":
            return -9, 0, FORMAT_DECIMAL_SI
        if c == "u":
            return -6, 0, FORMAT_DECIMAL_SI
        if c == "m":
            return -3, 0, FORMAT_DECIMAL_SI
        if c == "k":
            return 3, 0, FORMAT_DECIMAL_SI
        if c == "M":
            return 6, 0, FORMAT_DECIMAL_SI
        if c == "G":
            return 9, 0, FORMAT_DECIMAL_SI
        if c == "T":
            return 12, 0, FORMAT_DECIMAL_SI
        if c == "P":
            return 15, 0, FORMAT_DECIMAL_SI
        if c == "E":
            return 18, 0, FORMAT_DECIMAL_SI
    if n == 2 and suffix[1] == "i":
        p = "KMGTPE".find(suffix[0])
        if p >= 0:
            return 0, 10 * (p + 1), FORMAT_BINARY_SI
    if n >= 2 and (suffix[0] == "e" or suffix[0] == "E"):
        body = suffix[1:]
        digits = body[1:] if body[0] in "+-" else body
        if digits and all(_is_digit(ch) for ch in digits):
            e = int(body)
            # Go: strconv.ParseInt(..., 10, 64) must succeed, then int32(parsed)
            # truncates (two's complement wrap) -- "1e4294967296" is 1.
            if e > INT64_MAX or e < INT64_MIN:
                raise QuantityError(f"{s!r} is not a quantity: exponent out of range")
            e = ((e + 2**31) % 2**32) - 2**31
            return e, 0, FORMAT_DECIMAL_EXPONENT
    raise QuantityError(f"{s!r} is not a quantity: unknown suffix {suffix!r}")


cdef object _digits_to_int(str ds):
    # Python refuses int(str) beyond 4300 digits (CVE-2020-10735 guard); Go
    # accepts any length, so convert long digit strings in chunks.
    cdef Py_ssize_t n = len(ds), i
    if n <= 4000:
        return int(ds)
    v = 0
    for i in range(0, n, 4000):
        chunk = ds[i:i + 4000]
        v = v * TEN ** (<object>len(chunk)) + int(chunk)
    return v


cdef tuple _parse(str s):
    # (sign, significant digit string, exp10, exp2, format)
    negative, int_digits, frac_digits, suffix = _scan(s)
    exp10, exp2, fmt = _interpret_suffix(s, suffix)
    sig = (int_digits + frac_digits).lstrip("0")
    exp10 -= len(frac_digits)
    if not sig:
        return 0, "", 0, 0, fmt
    return (-1 if negative else 1), sig, exp10, exp2, fmt


def parse_parts(str s):
    """Parse ``s`` exactly: (sign, digits, exp10, exp2, format).

    value = sign * digits * 10**exp10 * 2**exp2; sign is 0 for a zero value.
    Raises QuantityError for anything the API server or Go would reject."""
    sign, sig, exp10, exp2, fmt = _parse(s)
    if sign == 0:
        return 0, 0, 0, 0, fmt
    return sign, _digits_to_int(sig), exp10, exp2, fmt


def nanos(str s):
    """The exact value of ``s`` in units of 1e-9, as Go's ParseQuantity keeps it.

    Go keeps at most nano precision: a finer non-zero remainder is rounded away
    from zero ("0.9n" is 1n).  A BinarySI value beyond 2**63-1 is capped there
    (quantity.go: "Parsing does cap a binarySI quantity, silently").
    Values with more than ~400 decimal digits saturate at +/-HUGE_NANOS (10**409 nanos): far
    beyond any int64, and Go itself cannot compare such numbers cheaply."""
    sign, sig, exp10, exp2, fmt = _parse(s)
    if sign == 0:
        return 0
    cdef Py_ssize_t nd = len(sig)
    e = exp10 + 9  # value in nanos = digits * 2**exp2 * 10**e
    if nd + e > HUGE_EXP10:
        mag = HUGE_NANOS
    elif nd + e < -20 - exp2:
        mag = 1  # tiny but non-zero: rounds up to 1n
    elif e >= 0:
        mag = (_digits_to_int(sig) << exp2) * 10 ** e
    else:
        q, r = divmod(_digits_to_int(sig) << exp2, 10 ** (-e))
        mag = q + (1 if r else 0)
    if fmt == FORMAT_BINARY_SI and mag > INT64_MAX * NANO:
        mag = INT64_MAX * NANO
    return sign * mag


cdef object _clamp(object v):
    if v > INT64_MAX:
        return INT64_MAX
    if v < INT64_MIN:
        return INT64_MIN
    return v


def value_from_nanos(object n, bint milli):
    """Quantity.Value() (or MilliValue() when ``milli``) of an exact nano amount,
    clamped to int64 like Kueue's SafeValue/SafeMilliValue.

    Go rounds a fraction away from zero (amount.go negativeScaleInt64 /
    AsScaledInt64: "rounded up to the nearest integer away from 0")."""
    if milli:
        n = n * 1000
    q, r = divmod(abs(n), NANO)
    if r:
        q += 1
    return _clamp(-q if n < 0 else q)


def parse_quantity(str s, str resource):
    """Kueue's ResourceValue: milli-units for ``cpu``, base units otherwise."""
    return value_from_nanos(nanos(s), resource == "cpu")


def parse_quantities(list strings, str resource):
    """parse_quantity over a list, into a C-contiguous int64 numpy array."""
    cdef Py_ssize_t i, n = len(strings)
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] view = out
    cdef bint milli = resource == "cpu"
    for i in range(n):
        view[i] = value_from_nanos(nanos(strings[i]), milli)
    return out
