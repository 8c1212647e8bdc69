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
INTERFACE = 5

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


# --- YAML 1.1 versus YAML 1.2: plain scalars that could be read differently --------
#
# kueue_fast.fastload reads big YAML streams with a YAML 1.2 parser and lets
# PyYAML (YAML 1.1, the loader's reference) read any text where the two could
# disagree. yaml_1_1_risk(text) finds the first such place. A token is a run of
# characters between whitespace, flow indicators ([]{},) and quotes, with one
# leading and one trailing ':' left out. Risky (conservatively: a token inside
# a quoted string or a comment is a false alarm, which only costs speed):
#   * number-like tokens: optional sign, optional '.', a digit, then only
#     digits, letters a-f/A-F/x/X/o/O/i/I/n/N, '_', '.', ':', '+', '-', except
#     the forms both read alike: decimal integers without leading zeros
#     ([-+]?(0|[1-9][0-9]*)) and decimal fractions ([-+]?[0-9]+.[0-9]+);
#     this covers 010 (octal in 1.1), 1:30 (sexagesimal), 1e3 (a float in 1.2
#     only), 0o17, 1_000, .5;
#   * [-+].inf, .nan and their spellings;
#   * YAML 1.1 booleans yes/no/on/off (lower, Title, UPPER case), '=' (the
#     value key), '<<' (merge keys);
#   * a token starting with '!' (tag), '%' (directive), '&' or '*' (anchor,
#     alias: '&a: v' is an empty key to PyYAML), a lone '?' (complex key), a lone
#     ':' (an empty key: null to yaml-rs, an error to PyYAML), '...' (document
#     end), ']' or '}' followed by ':' (collections as keys);
#   * a tab (PyYAML refuses tabs in places YAML 1.2 parsers allow), a byte order
#     mark or a NEL/LS/PS line break anywhere.

cdef inline bint _yaml_boundary(Py_UCS4 c):
    return (c == u' ' or c == u'\t' or c == u'\n' or c == u'\r' or c == u',' or c == u'['
            or c == u']' or c == u'{' or c == u'}' or c == u'"' or c == u"'")


cdef inline bint _number_char(Py_UCS4 c):
    return ((c >= u'0' and c <= u'9') or (c >= u'a' and c <= u'f') or (c >= u'A' and c <= u'F')
            or c == u'x' or c == u'X' or c == u'o' or c == u'O' or c == u'i' or c == u'I'
            or c == u'n' or c == u'N' or c == u'_' or c == u'.' or c == u':' or c == u'+' or c == u'-')


_RISKY_WORDS = frozenset(("yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON",
                          "off", "Off", "OFF", "=", "<<", "?", "...", ":"))
_SPECIAL_FLOATS = frozenset((".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"))


cdef bint _risky_token(str text, Py_ssize_t start, Py_ssize_t end):
    cdef Py_UCS4 c
    cdef Py_ssize_t i, j, digits
    if end - start > 1 and text[start] == u':':
        start += 1
    if end - start > 1 and text[end - 1] == u':':
        end -= 1
    c = text[start]
    if c == u'!' or c == u'%' or c == u'&' or c == u'*':
        return True
    if end - start <= 3 and text[start:end] in _RISKY_WORDS:
        return True
    i = start
    if c == u'-' or c == u'+':
        i += 1
    if i < end and text[i] == u'.':
        if text[i:end] in _SPECIAL_FLOATS:
            return True
        i += 1
    if i >= end or not (text[i] >= u'0' and text[i] <= u'9'):
        return False
    for j in range(i, end):
        if not _number_char(text[j]):
            return False  # a letter outside the alphabet: a string for both
    # number-like: safe only as a decimal integer or a decimal fraction
    i = start
    if text[i] == u'-' or text[i] == u'+':
        i += 1
    digits = 0
    j = i
    while j < end and text[j] >= u'0' and text[j] <= u'9':
        j += 1
    digits = j - i
    if digits == 0:
        return True  # '.5' and the like
    if j == end:
        return digits > 1 and text[i] == u'0'  # leading zero: octal in 1.1
    if text[j] != u'.' or j + 1 == end:
        return True
    j += 1
    while j < end and text[j] >= u'0' and text[j] <= u'9':
        j += 1
    return j != end


def yaml_1_1_risk(str text):
    """Index of the first token of ``text`` that PyYAML (YAML 1.1) and a YAML
    1.2 parser could read differently, or -1 (rules in the comment above)."""
    cdef Py_ssize_t n = len(text)
    cdef Py_ssize_t i = 0, start = -1, k
    cdef Py_UCS4 c
    while i < n:
        c = text[i]
        if c == u'\t' or c == u'\ufeff' or c == u'\x85' or c == u'\u2028' or c == u'\u2029':
            return i
        if _yaml_boundary(c):
            if start >= 0:
                if _risky_token(text, start, i):
                    return start
                start = -1
            if c == u']' or c == u'}':
                k = i + 1
                while k < n and (text[k] == u' ' or text[k] == u'\t'):
                    k += 1
                if k < n and text[k] == u':' and (k + 1 == n or text[k + 1] == u' ' or text[k + 1] == u'\t'
                                                    or text[k + 1] == u'\n' or text[k + 1] == u'\r'):
                    return i
        elif start < 0:
            start = i
        i += 1
    if start >= 0 and _risky_token(text, start, n):
        return start
    return -1


cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    int PyUnicode_1BYTE_KIND
    int PyUnicode_2BYTE_KIND


def digit_run(str text, Py_ssize_t length):
    """Index of the first run of at least ``length`` ASCII digits in ``text``,
    or -1. (orjson reads a JSON integer beyond 64 bits as a float; such an
    integer has at least 19 digits, so kueue_fast.loader lets json read any
    text with such a run.)"""
    cdef Py_ssize_t n = len(text), i, run = 0
    cdef Py_UCS4 c
    cdef const unsigned char* b
    if PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND:  # the common case, without a read per kind
        b = <const unsigned char*>PyUnicode_DATA(text)
        for i in range(n):
            if <unsigned int>(b[i] - 48) <= 9:  # an ASCII digit
                run += 1
                if run >= length:
                    return i - length + 1
            else:
                run = 0
        return -1
    for i in range(n):
        c = text[i]
        if c >= u'0' and c <= u'9':
            run += 1
            if run >= length:
                return i - length + 1
        else:
            run = 0
    return -1


# --- a JSON object's "items" array read item by item -------------------------------------------

from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memchr, memcpy
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector

ctypedef fused _unit:
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t _json_ws(const _unit* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and (s[i] == 32 or s[i] == 10 or s[i] == 13 or s[i] == 9):
        i += 1
    return i


cdef inline Py_ssize_t _string_end(const _unit* s, Py_ssize_t i, Py_ssize_t n, bint* escaped) noexcept nogil:
    """s[i] is '"': the index after the string's closing quote, or -1."""
    cdef const char* q
    i += 1
    if _unit is uint8_t:  # most of a text is strings: memchr finds their ends
        q = <const char*>memchr(s + i, 34, n - i)
        if q == NULL:
            return -1
        if memchr(s + i, 92, q - <const char*>(s + i)) == NULL:
            return q - <const char*>s + 1
    while i < n:
        if s[i] == 34:
            return i + 1
        if s[i] == 92:
            escaped[0] = True
            i += 2
        else:
            i += 1
    return -1


# What the loader's limits look for in a JSON text (kueue_fast/loader/limits.py
# json_problem, the exact check): collections nested more than max_depth deep,
# an object with a key twice. Gathered while the text is walked for its items,
# so that a List costs one walk.

cdef size_t _ARRAY = <size_t>-1

cdef struct _Shape:
    vector[uint64_t] keys  # hashes of the keys of the open objects, outermost first
    vector[size_t] opened  # per open collection: where its keys start in keys, or _ARRAY
    Py_ssize_t max_depth
    bint suspect  # maybe too deep or a key twice (a hash collision or an escape: a false alarm)
    bint long_number  # a number of 19 digits or more (orjson would read it as a float)


cdef inline uint64_t _key_hash(const _unit* s, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """A key's code units mixed into 64 bits: up to 16 ASCII bytes as two
    words, else FNV-1a; the length mixed in."""
    cdef uint64_t h = <uint64_t>(end - start) * 0x9E3779B97F4A7C15ULL, w0 = 0, w1 = 0
    cdef Py_ssize_t i, n = end - start
    if _unit is uint8_t and n <= 16:
        memcpy(&w0, s + start, n if n < 8 else 8)
        if n > 8:
            memcpy(&w1, s + start + 8, n - 8)
        h ^= w0 * 0xFF51AFD7ED558CCDULL
        h = (h ^ (h >> 29)) * 0xC4CEB9FE1A85EC53ULL
        h ^= w1 * 0x9E3779B97F4A7C15ULL
        return h ^ (h >> 32)
    for i in range(start, end):
        h = (h ^ <uint64_t>s[i]) * 1099511628211ULL
    return h


cdef bint _repeats(vector[uint64_t]& keys, size_t first) noexcept nogil:
    """Whether two of keys[first:] (one object's key hashes) are equal."""
    cdef size_t n = keys.size() - first, i, j
    cdef vector[uint64_t] sorted_keys
    if n < 2:
        return False
    if n <= 16:
        for i in range(first, keys.size()):
            for j in range(i + 1, keys.size()):
                if keys[i] == keys[j]:
                    return True
        return False
    sorted_keys.assign(keys.begin() + first, keys.end())
    sort(sorted_keys.begin(), sorted_keys.end())
    for i in range(1, n):
        if sorted_keys[i] == sorted_keys[i - 1]:
            return True
    return False


cdef inline void _shape_open(_Shape* sh, bint is_object) noexcept nogil:
    if <Py_ssize_t>sh.opened.size() >= sh.max_depth:
        sh.suspect = True
    sh.opened.push_back(sh.keys.size() if is_object else _ARRAY)


cdef inline void _shape_close(_Shape* sh) noexcept nogil:
    cdef size_t first
    if sh.opened.size() == 0:
        sh.suspect = True
        return
    first = sh.opened.back()
    sh.opened.pop_back()
    if first != _ARRAY:
        if _repeats(sh.keys, first):
            sh.suspect = True
        sh.keys.resize(first)


cdef inline void _shape_string(_Shape* sh, const _unit* s, Py_ssize_t i, Py_ssize_t e, Py_ssize_t n,
                               bint escaped) noexcept nogil:
    """The string s[i:e] (quotes included): a key when ':' follows it in an object."""
    cdef Py_ssize_t j = _json_ws(s, e, n)
    if j < n and s[j] == 58 and sh.opened.size() > 0 and sh.opened.back() != _ARRAY:
        if escaped:
            sh.suspect = True  # "\u0061" is "a": the exact check compares decoded keys
        else:
            sh.keys.push_back(_key_hash(s, i + 1, e - 1))


cdef Py_ssize_t _value_end(const _unit* s, Py_ssize_t i, Py_ssize_t n, _Shape* sh) noexcept nogil:
    """The index of the ',', '}' or ']' outside strings and brackets that ends
    the text from i, or -1; what it walks goes into sh. (Nothing is
    validated: the parser does that.)"""
    cdef Py_ssize_t depth = 0, e, digits = 0
    cdef bint escaped
    cdef uint32_t c
    while i < n:
        c = s[i]
        if <uint32_t>(c - 48) <= 9:  # a digit
            digits += 1
            if digits >= 19:
                sh.long_number = True
            i += 1
            continue
        digits = 0
        if c == 34:
            escaped = False
            e = _string_end(s, i, n, &escaped)
            if e < 0:
                return -1
            _shape_string(sh, s, i, e, n, escaped)
            i = e
            continue
        if c == 123 or c == 91:  # { [
            depth += 1
            _shape_open(sh, c == 123)
        elif c == 125 or c == 93:  # } ]
            if depth == 0:
                return i
            depth -= 1
            _shape_close(sh)
        elif c == 44 and depth == 0:
            return i
        i += 1
    return -1


cdef bint _items_spans(const _unit* s, Py_ssize_t n, vector[Py_ssize_t]& out, _Shape* sh) noexcept nogil:
    """For a text that is an object with one "items" key (written without
    escapes; no other key has one) whose value is an array: out = the indices
    of the array's '[' and ']', then the start and end of each element; the
    whole text goes into sh."""
    cdef Py_ssize_t i = _json_ws(s, 0, n), e, start
    cdef bint found = False, escaped = False, is_items
    if i >= n or s[i] != 123:
        return False
    _shape_open(sh, True)
    out.push_back(0)
    out.push_back(0)
    i = _json_ws(s, i + 1, n)
    while True:
        if i >= n or s[i] != 34:
            return False
        e = _string_end(s, i, n, &escaped)
        if e < 0 or escaped:
            return False
        _shape_string(sh, s, i, e, n, False)
        is_items = (e - i == 7 and s[i + 1] == 105 and s[i + 2] == 116 and s[i + 3] == 101
                    and s[i + 4] == 109 and s[i + 5] == 115)  # "items"
        i = _json_ws(s, e, n)
        if i >= n or s[i] != 58:  # :
            return False
        i = _json_ws(s, i + 1, n)
        if is_items:
            if found or i >= n or s[i] != 91:
                return False
            found = True
            out[0] = i
            _shape_open(sh, False)
            e = _json_ws(s, i + 1, n)
            if e < n and s[e] == 93:
                i = e
            else:
                start = i + 1
                while True:
                    e = _value_end(s, start, n, sh)
                    if e < 0 or s[e] == 125:
                        return False
                    out.push_back(start)
                    out.push_back(e)
                    if s[e] == 93:
                        break
                    start = e + 1
                i = e
            _shape_close(sh)
            out[1] = i
            i += 1
        else:
            i = _value_end(s, i, n, sh)
            if i < 0:
                return False
        i = _json_ws(s, i, n)
        if i >= n:
            return False
        if s[i] == 125:
            _shape_close(sh)
            return found
        if s[i] != 44:
            return False
        i = _json_ws(s, i + 1, n)


def json_list_items(str text, loads, each, Py_ssize_t max_depth):
    """``loads(text)`` for a JSON object with an "items" array (a ``kubectl
    get -o json`` List), parsing each item by itself and passing it to
    ``each`` (unless None) before the next is parsed; or None when the text is
    not such an object, anything fails to parse, the text may break the
    loader's limits (json_suspect, found in the same walk) or holds a number
    of 19 digits or more (orjson would read an integer beyond 64 bits as a
    float; digit_run's test, for numbers only): then the whole text is read
    as the caller reads it otherwise (loader.documents._json_loads).

    Why: ``each`` shares what items have in common (loader.documents), so
    the parse tree never holds all the copies at once. The value is the
    whole text's: the pieces are exactly the array's elements and the object
    around an empty array, each parsed as valid JSON, and the object has one
    "items" key (a key with an escape declines: it might spell "items")."""
    cdef vector[Py_ssize_t] spans
    cdef _Shape sh
    cdef Py_ssize_t n = len(text), k
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef bint ok
    sh.max_depth = max_depth
    sh.suspect = False
    sh.long_number = False
    with nogil:
        if kind == PyUnicode_1BYTE_KIND:
            ok = _items_spans(<const uint8_t*>data, n, spans, &sh)
        elif kind == PyUnicode_2BYTE_KIND:
            ok = _items_spans(<const uint16_t*>data, n, spans, &sh)
        else:
            ok = _items_spans(<const uint32_t*>data, n, spans, &sh)
    if not ok or sh.suspect or sh.long_number or sh.opened.size() != 0:
        return None
    try:
        top = loads(text[: spans[0] + 1] + text[spans[1] :])
    except Exception:  # json decides, with its message
        return None
    items = top.get("items") if type(top) is dict else None
    if type(items) is not list or items:
        return None
    for k in range(2, <Py_ssize_t>spans.size(), 2):
        try:
            item = loads(text[spans[k] : spans[k + 1]])
        except Exception:
            return None
        if each is not None:
            each(item)
        (<list>items).append(item)
    return top


cdef bint _json_suspect(const _unit* s, Py_ssize_t n, _Shape* sh) noexcept nogil:
    cdef Py_ssize_t i = 0, e
    while i < n:
        e = _value_end(s, i, n, sh)
        if e < 0:
            break
        if s[e] != 44:
            sh.suspect = True  # a bracket closing what is not open: not valid JSON
        i = e + 1
    return sh.suspect or sh.opened.size() != 0


def json_suspect(str text, Py_ssize_t max_depth):
    """Whether a JSON text may nest collections more than max_depth deep or
    repeat a key in an object: False means it does neither (a hash collision
    or an escaped key only makes a false alarm). The fast filter before the
    exact check, ``kueue_fast.loader.limits.json_problem``; json_list_items
    makes it on the way."""
    cdef _Shape sh
    cdef Py_ssize_t n = len(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef bint suspect
    sh.max_depth = max_depth
    sh.suspect = False
    sh.long_number = False
    with nogil:
        if kind == PyUnicode_1BYTE_KIND:
            suspect = _json_suspect(<const uint8_t*>data, n, &sh)
        elif kind == PyUnicode_2BYTE_KIND:
            suspect = _json_suspect(<const uint16_t*>data, n, &sh)
        else:
            suspect = _json_suspect(<const uint32_t*>data, n, &sh)
    return suspect


# --- the loader's limits (kueue_fast/loader/limits.py): nesting --------------------------------------


cdef bint _nesting_exceeds(object value, Py_ssize_t room) except -1:
    cdef object k, v
    if type(value) is dict or isinstance(value, dict):
        if room == 0:
            return True
        for k, v in (<dict>value).items():
            if type(k) is tuple or type(k) is frozenset:
                return True  # a collection as a key: yaml-rs makes it hashable, PyYAML refuses it
            if (type(v) is dict or type(v) is list or isinstance(v, (dict, list))) and _nesting_exceeds(v, room - 1):
                return True
    elif type(value) is list or isinstance(value, list):
        if room == 0:
            return True
        for v in <list>value:
            if (type(v) is dict or type(v) is list or isinstance(v, (dict, list))) and _nesting_exceeds(v, room - 1):
                return True
    return False


def nesting_exceeds(value, Py_ssize_t max_depth):
    """Whether a value read from a text (dicts, lists and scalars, no cycles)
    holds collections more than max_depth deep (the recursion goes no deeper
    than that), or a collection as a mapping key (yaml-rs reads ``{[a]: b}``
    with a tuple key where PyYAML refuses the unhashable key: the text goes to
    PyYAML). kueue_fast.loader.limits.nesting_exceeds_py is its definition."""
    return _nesting_exceeds(value, max_depth)


# --- the contract's JSON, written from the engine's bulk decisions -------------------------------

from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.string cimport memchr, memcpy
from libcpp.string cimport string

from json.encoder import encode_basestring_ascii as _json_string


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)
    # the characters of an ASCII str (its UTF-8)
    const char* _ascii_data "(const char*)PyUnicode_1BYTE_DATA" (object)
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    char* _ascii_buffer "(char*)PyUnicode_1BYTE_DATA" (object)


cdef inline bint _plain_ascii(const char* p, Py_ssize_t n):
    """Printable ASCII without a quote or backslash: json.dumps copies it as it is."""
    cdef Py_ssize_t i
    cdef unsigned char c
    for i in range(n):
        c = <unsigned char>p[i]
        if c < 0x20 or c == 0x7f or c == 34 or c == 92:  # controls, DEL, '"', '\\'
            return False
    return True


cdef inline void _append_json(string& out, str s, Py_ssize_t start, Py_ssize_t end):
    """``json.dumps(s[start:end])`` (ensure_ascii) appended to out; json's own
    encoder writes any text that is not plain ASCII."""
    cdef Py_ssize_t n
    cdef const char* p
    cdef str encoded  # held while its characters are copied
    if PyUnicode_IS_ASCII(s) and _plain_ascii(_ascii_data(s) + start, end - start):
        out.push_back(b'"')
        out.append(_ascii_data(s) + start, end - start)
        out.push_back(b'"')
    else:
        encoded = _json_string(s[start:end])
        p = PyUnicode_AsUTF8AndSize(encoded, &n)
        out.append(p, n)


cdef inline int _append_ascii(string& out, str s) except -1:
    """Text already JSON (ASCII, as json.dumps writes it) appended to out."""
    if not PyUnicode_IS_ASCII(s):
        raise ValueError("json_workload_entries: a text given as JSON is not ASCII")
    out.append(_ascii_data(s), len(s))
    return 0


cdef inline Py_ssize_t _slash(str key):
    """key.find("/")."""
    cdef const char* p
    if PyUnicode_IS_ASCII(key):
        p = <const char*>memchr(_ascii_data(key), 47, len(key))
        return p - _ascii_data(key) if p != NULL else -1
    return key.find("/")


cdef str _ascii_str(const string& out):
    """out as a str: every byte is ASCII (the texts checked, the rest escaped by json), so
    the str is made at its size and filled, without decoding."""
    text = PyUnicode_New(out.size(), 127)
    memcpy(_ascii_buffer(text), out.data(), out.size())
    return text


def json_workload_entries(
    list keys, list kinds, list shapes, list admitted_tails, list reasons, list messages,
    dict owners, list other_texts, str pending_state, str prefix="", str suffix="",
    object write=None, Py_ssize_t chunk=1 << 20
):
    """The "workloads" array of output._bulk_json, indented as json.dumps(doc,
    indent=2) writes it: one entry per key, in order, between ``prefix`` and
    ``suffix`` (the document around it: no copy of the whole text to add them).
    ``kinds`` (BULK_OTHER 0, BULK_ADMITTED 1, BULK_PENDING 2) say where an
    entry's text comes from: other_texts (in order, already indented), the
    admitted shape's tail (``shapes``), or the next of reasons/messages
    (``pending_state`` is the state those entries carry). Given ``write``, the
    text goes to it in pieces (each piece ends once it holds ``chunk``
    characters) and "" is returned: the whole text never exists at once."""
    cdef string out
    cdef Py_ssize_t i, n = len(keys), pending = 0, other = 0, slash, size
    cdef int kind
    cdef str key
    cdef object owner
    _append_ascii(out, prefix)
    if n == 0:
        out.append(b"[]")
    else:
        # the size of the plain text (escapes add to it): one allocation, no regrowth
        size = out.size() + len(suffix) + 8 + 96 * n
        for i in range(n):
            kind = kinds[i]
            size += len(<str>keys[i])
            if kind == 0:
                size += len(<str>other_texts[other])
                other += 1
            elif kind == 1:
                size += len(<str>admitted_tails[shapes[i]])
            else:
                size += len(<str>reasons[pending]) + len(<str>messages[pending])
                pending += 1
        out.reserve(size if write is None else chunk + 4096)
        pending = other = 0
        out.append(b"[\n    ")
        for i in range(n):
            if i:
                out.append(b",\n    ")
            if write is not None and <Py_ssize_t>out.size() >= chunk:
                write(_ascii_str(out))
                out.clear()
            kind = kinds[i]
            if kind == 0:
                _append_ascii(out, other_texts[other])
                other += 1
                continue
            key = keys[i]
            slash = _slash(key)
            out.append(b'{\n      "namespace": ')
            _append_json(out, key, 0, slash)
            out.append(b',\n      "name": ')
            _append_json(out, key, slash + 1, len(key))
            owner = owners.get(key) if owners else None
            if owner is not None:
                out.append(b',\n      "owner": ')
                _append_json(out, owner, 0, len(owner))
            if kind == 1:
                _append_ascii(out, admitted_tails[shapes[i]])
            else:
                out.append(b',\n      "state": ')
                _append_json(out, pending_state, 0, len(pending_state))
                out.append(b',\n      "reason": ')
                _append_json(out, reasons[pending], 0, len(reasons[pending]))
                out.append(b',\n      "message": ')
                _append_json(out, messages[pending], 0, len(messages[pending]))
                out.append(b"\n    }")
                pending += 1
        out.append(b"\n  ]")
    _append_ascii(out, suffix)
    if write is None:
        return _ascii_str(out)
    write(_ascii_str(out))
    return ""


def workload_owners(dict workloads):
    """The owner of every workload that has one, by key (output.to_json)."""
    cdef dict out = {}
    for key, wl in workloads.items():
        owner = wl.owner
        if owner is not None:
            out[key] = owner
    return out


# --- whole-state scans of the Cluster's construction, one pass each in C --------------------------

def workload_scan(dict workloads):
    """What the Cluster's construction needs of every workload, in one pass
    (kernels.WorkloadScan): the latest creation_ns, admission_ns,
    queue_order_ns and pods_ready_ns (None counts as 0; Python ints compared
    as such, a time past 2262 does not fit 64 bits), the resource names the
    pod sets request, the workloads with an admission, and the keys of those
    with a PodsReady time or a requeueAt."""
    cdef object latest = 0, t, ready
    cdef set requested = set()
    cdef list admitted = [], timed = []
    cdef dict requests
    for key, wl in workloads.items():
        t = wl.creation_ns
        if t > latest:
            latest = t
        t = wl.admission_ns
        if t is not None and t > latest:
            latest = t
        t = wl.queue_order_ns
        if t is not None and t > latest:
            latest = t
        ready = wl.pods_ready_ns
        if ready is not None and ready > latest:
            latest = ready
        for ps in wl.pod_sets:
            requests = ps.requests
            for r in requests:
                requested.add(r)
        if wl.admission is not None:
            admitted.append(wl)
        if ready is not None or wl.requeue_at_ns is not None:
            timed.append(key)
    return latest, requested, admitted, timed
