# distutils: language = c++
# cython: language_level=3
"""The characters and scalars of the fast YAML reader (loader/_yaml_block.pyx,
whose docstring says the subset read): which bytes it reads
(acceptable_bytes), where a scalar token ends (scan_token, flow_plain_end)
and the value it gives (make_scalar), and the exception that declines the
text (Decline). The block module calls these in C through
loader/_yaml_scalars.pxd.

Resolution follows yaml/resolver.py: the first character selects the
resolvers (bool yYnNtTfFoO, float -+0-9., int -+0-9, merge <, null ~nN and
the empty scalar, value =), then their regular expressions in order; the
float and int ones are implemented as exact matchers below. Among numbers
only the plain decimal forms (``10``, ``-3``, ``1.5``, ``1.e+3``) are read,
every other YAML 1.1 form declines, as does a merge key ``<<`` or a value
``=``, and an unusual escape in a double-quoted scalar (see _unescape).
"""

# What this module offers (loader/_yaml_block.pyx through its .pxd; kueue_fast/_compiled.py INTERFACES): bump both
# when it changes.
INTERFACE = 1

from cpython.long cimport PyLong_FromLongLong
from cpython.float cimport PyFloat_FromDouble
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.ref cimport PyObject
from libc.string cimport memchr, memcmp, memcpy
from libc.stdint cimport uint32_t

cdef extern from "Python.h":
    object PyUnicode_DecodeUTF8(const char*, Py_ssize_t, const char*)
    object PyUnicode_New(Py_ssize_t, Py_UCS4)
    void* PyUnicode_DATA(object)
    double PyOS_string_to_double(const char*, char**, PyObject*) except? -1.0


class Decline(Exception):
    """The text is outside the subset: the caller's other parsers decide."""


_TRUE = frozenset(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_FALSE = frozenset(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"))
_NULL = frozenset(("null", "Null", "NULL"))


# Bytes the prescan looks at: 1 = refused anywhere (control characters but
# '\n', DEL), 2 = the lead byte of a UTF-8 sequence that may encode a refused
# character (U+0080-U+009F incl. NEL, U+2028/2029, U+FEFF, U+FFFE/FFFF).
cdef unsigned char _PRESCAN[256]
for _i in range(256):
    _PRESCAN[_i] = 0
for _i in range(0x20):
    _PRESCAN[_i] = 1
_PRESCAN[10] = 0
_PRESCAN[0x7F] = 1
_PRESCAN[0xC2] = 2
_PRESCAN[0xE2] = 2
_PRESCAN[0xEF] = 2


cdef bint acceptable_bytes(const unsigned char* b, Py_ssize_t n) noexcept:
    """No character that libyaml refuses or reads as a line break or BOM
    outside what loader/_yaml_block.pyx's parser understands."""
    cdef Py_ssize_t i
    cdef unsigned char t
    for i in range(n):
        t = _PRESCAN[b[i]]
        if t == 0:
            continue
        if t == 1:
            return False
        # UTF-8 lead bytes (the text came from a valid str, so continuation bytes follow)
        if b[i] == 0xC2 and b[i + 1] < 0xA0:
            return False
        if b[i] == 0xE2 and b[i + 1] == 0x80 and (b[i + 2] == 0xA8 or b[i + 2] == 0xA9):
            return False
        if b[i] == 0xEF and ((b[i + 1] == 0xBB and b[i + 2] == 0xBF)
                             or (b[i + 1] == 0xBF and b[i + 2] >= 0xBE)):
            return False
    return True


cdef inline bint _hex(char c) noexcept:
    return digit(c) or (c >= b'a' and c <= b'f') or (c >= b'A' and c <= b'F')


cdef Py_ssize_t _digits_underscores(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept:
    while i < n and (digit(s[i]) or s[i] == b'_'):
        i += 1
    return i


cdef Py_ssize_t _sexagesimal_parts(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept:
    """Past ``(?::[0-5]?[0-9])+`` from i, or -1 when there is not one part."""
    cdef int parts = 0
    while i < n and s[i] == b':':
        if i + 1 < n and digit(s[i + 1]):
            if i + 2 < n and digit(s[i + 2]) and s[i + 1] <= b'5':
                i += 3
            else:
                i += 2
            parts += 1
        else:
            break
    return i if parts else -1


cdef bint _is_float(const char* s, Py_ssize_t n) noexcept:
    """yaml/resolver.py's float expression, alternative by alternative."""
    cdef Py_ssize_t i = 0, j
    # [-+]?\.(?:inf|Inf|INF) and \.(?:nan|NaN|NAN)
    if n >= 1 and (s[0] == b'-' or s[0] == b'+'):
        i = 1
    if n - i == 4 and s[i] == b'.':
        if (memcmp(s + i, b".inf", 4) == 0 or memcmp(s + i, b".Inf", 4) == 0
                or memcmp(s + i, b".INF", 4) == 0):
            return True
        if i == 0 and (memcmp(s, b".nan", 4) == 0 or memcmp(s, b".NaN", 4) == 0
                       or memcmp(s, b".NAN", 4) == 0):
            return True
    # \.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    if n >= 2 and s[0] == b'.' and digit(s[1]):
        j = _digits_underscores(s, 2, n)
        if j == n or _exponent_end(s, j, n) == n:
            return True
    # [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?
    # [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    if i < n and digit(s[i]):
        j = _digits_underscores(s, i + 1, n)
        if j < n and s[j] == b'.':
            j = _digits_underscores(s, j + 1, n)
            if j == n or _exponent_end(s, j, n) == n:
                return True
        # the sexagesimal form: [0-9_]* took the digits, the parts follow
        j = _sexagesimal_after_digits(s, i, n)
        if j >= 0 and j < n and s[j] == b'.':
            if _digits_underscores(s, j + 1, n) == n:
                return True
    return False


cdef Py_ssize_t _sexagesimal_after_digits(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept:
    """Past ``[0-9][0-9_]*(?::[0-5]?[0-9])+`` from i (s[i] a digit), or -1."""
    cdef Py_ssize_t j = _digits_underscores(s, i + 1, n)
    return _sexagesimal_parts(s, j, n)


cdef Py_ssize_t _exponent_end(const char* s, Py_ssize_t j, Py_ssize_t n) noexcept:
    """Past ``[eE][-+][0-9]+`` at j, or -1."""
    if j + 2 < n and (s[j] == b'e' or s[j] == b'E') and (s[j + 1] == b'-' or s[j + 1] == b'+') \
            and digit(s[j + 2]):
        j += 3
        while j < n and digit(s[j]):
            j += 1
        return j
    return -1


cdef bint _is_int(const char* s, Py_ssize_t n) noexcept:
    """yaml/resolver.py's int expression, alternative by alternative."""
    cdef Py_ssize_t i = 0, j
    if n >= 1 and (s[0] == b'-' or s[0] == b'+'):
        i = 1
    if i >= n or not digit(s[i]):
        return False
    if s[i] == b'0':
        if n - i == 1:
            return True  # 0
        if s[i + 1] == b'b':  # 0b[0-1_]+
            j = i + 2
            while j < n and (s[j] == b'0' or s[j] == b'1' or s[j] == b'_'):
                j += 1
            return j == n and n > i + 2
        if s[i + 1] == b'x':  # 0x[0-9a-fA-F_]+
            j = i + 2
            while j < n and (_hex(s[j]) or s[j] == b'_'):
                j += 1
            return j == n and n > i + 2
        j = i + 1  # 0[0-7_]+
        while j < n and ((s[j] >= b'0' and s[j] <= b'7') or s[j] == b'_'):
            j += 1
        return j == n
    # [1-9][0-9_]* and [1-9][0-9_]*(?::[0-5]?[0-9])+
    j = _digits_underscores(s, i + 1, n)
    if j == n:
        return True
    return _sexagesimal_parts(s, j, n) == n


cdef bint _plain_decimal_int(const char* s, Py_ssize_t n) noexcept:
    """[-+]?(0|[1-9][0-9]*): what int() reads as PyYAML's constructor does."""
    cdef Py_ssize_t i = 0
    if n >= 1 and (s[0] == b'-' or s[0] == b'+'):
        i = 1
    if i >= n:
        return False
    if s[i] == b'0':
        return n - i == 1
    while i < n:
        if not digit(s[i]):
            return False
        i += 1
    return True


cdef bint _plain_decimal_float(const char* s, Py_ssize_t n) noexcept:
    """[-+]?[0-9]+\\.[0-9]*(?:[eE][-+][0-9]+)?: what float() reads as PyYAML's
    constructor does (no underscores, sign, infinity or sexagesimal parts)."""
    cdef Py_ssize_t i = 0
    if n >= 1 and (s[0] == b'-' or s[0] == b'+'):
        i = 1
    if i >= n or not digit(s[i]):
        return False
    while i < n and digit(s[i]):
        i += 1
    if i >= n or s[i] != b'.':
        return False
    i += 1
    while i < n and digit(s[i]):
        i += 1
    return i == n or _exponent_end(s, i, n) == n



cdef Py_ssize_t scan_token(const char* b, Py_ssize_t n, Py_ssize_t p, Kind* kind) except -1:
    """The end of the scalar (or empty flow collection) starting at p."""
    cdef Py_ssize_t q, r, last
    cdef char c = b[p]
    cdef char close
    if c == b'"':
        q = p + 1
        while q < n and b[q] != b'"' and b[q] != b'\n':
            q += 2 if b[q] == b'\\' else 1
        if q >= n or b[q] != b'"':
            raise Decline("double-quoted scalar over several lines")
        kind[0] = DOUBLE
        return q + 1
    if c == b"'":
        q = p + 1
        while True:
            while q < n and b[q] != b"'" and b[q] != b'\n':
                q += 1
            if q >= n or b[q] != b"'":
                raise Decline("single-quoted scalar over several lines")
            if q + 1 < n and b[q + 1] == b"'":
                q += 2
                continue
            break
        kind[0] = SINGLE
        return q + 1
    if c == b'{' or c == b'[':
        close = b'}' if c == b'{' else b']'
        if p + 1 < n and b[p + 1] == close:
            kind[0] = EMPTY_MAP if c == b'{' else EMPTY_SEQ
            return p + 2
        raise Decline("flow collection")
    if (c == b'#' or c == b',' or c == b']' or c == b'}' or c == b'&' or c == b'*' or c == b'!'
            or c == b'|' or c == b'>' or c == b'%' or c == b'@' or c == b'`' or c == b'?'
            or c == b':' or (c == b'-' and blankz(b, p + 1, n))):
        raise Decline("indicator")
    # plain: up to ': ', ' #' or the end of the line, trailing spaces left out
    kind[0] = PLAIN
    q = p
    last = p  # past the last character that is not a space
    while q < n:
        c = b[q]
        if c == b'\n':
            break
        if c == b' ':
            r = q + 1
            while r < n and b[r] == b' ':
                r += 1
            if r >= n or b[r] == b'\n' or b[r] == b'#':
                break
            q = r
            continue
        if c == b':' and blankz(b, q + 1, n):
            break
        q += 1
        last = q
    return last


cdef object make_str(const char* b, bint ascii, Py_ssize_t start, Py_ssize_t length):
    cdef object s
    if ascii:
        s = PyUnicode_New(length, 127)
        memcpy(PyUnicode_DATA(s), b + start, length)
        return s
    return PyUnicode_DecodeUTF8(b + start, length, NULL)


cdef object make_scalar(const char* b, bint ascii, Py_ssize_t p, Py_ssize_t end, Kind kind):
    """The value of the scalar (or empty flow collection) token [p, end) of b."""
    if kind == PLAIN:
        return _resolve(b, ascii, p, end - p)
    if kind == SINGLE:
        if memchr(b + p + 1, b"'", end - p - 2) == NULL:
            return make_str(b, ascii, p + 1, end - p - 2)
        return make_str(b, ascii, p + 1, end - p - 2).replace("''", "'")
    if kind == DOUBLE:
        if memchr(b + p + 1, b'\\', end - p - 2) == NULL:
            return make_str(b, ascii, p + 1, end - p - 2)
        return _unescape(b, p + 1, end - 1)
    if kind == EMPTY_MAP:
        return {}
    return []


cdef object _resolve(const char* b, bint ascii, Py_ssize_t p, Py_ssize_t n):
    """A plain scalar's value as PyYAML's implicit resolvers and
    SafeConstructor make it (see the module docstring)."""
    cdef const char* s = b + p
    cdef char c
    cdef char buf[32]
    cdef long long v
    cdef Py_ssize_t i
    if n == 0:
        return None
    c = s[0]
    if c == b'y' or c == b'Y' or c == b'n' or c == b'N' or c == b't' or c == b'T' \
            or c == b'f' or c == b'F' or c == b'o' or c == b'O':
        if n <= 5:
            w = make_str(b, ascii, p, n)
            if w in _TRUE:
                return True
            if w in _FALSE:
                return False
            if w in _NULL:
                return None
            return w
    elif c == b'~':
        if n == 1:
            return None
    elif c == b'<':
        if n == 2 and s[1] == b'<':
            raise Decline("merge key")
    elif c == b'=':
        if n == 1:
            raise Decline("value key")
    elif c == b'-' or c == b'+' or c == b'.' or digit(c):
        if _plain_decimal_int(s, n):
            if n <= 18:
                v = 0
                i = 1 if (c == b'-' or c == b'+') else 0
                while i < n:
                    v = v * 10 + (s[i] - 48)
                    i += 1
                return PyLong_FromLongLong(-v if c == b'-' else v)
            try:
                return int(make_str(b, ascii, p, n))
            except ValueError:  # beyond sys.get_int_max_str_digits(): PyYAML's error
                raise Decline("integer too long")
        if _plain_decimal_float(s, n):
            if n >= 32:
                return float(make_str(b, ascii, p, n))
            memcpy(buf, s, n)
            buf[n] = 0
            return PyFloat_FromDouble(PyOS_string_to_double(buf, NULL, NULL))
        if _is_float(s, n) or _is_int(s, n):
            raise Decline("a YAML 1.1 number form")
    return make_str(b, ascii, p, n)


cdef object _unescape(const char* b, Py_ssize_t p, Py_ssize_t end):
    """The content of a double-quoted scalar between p and end, with
    libyaml's escapes (scanner.c yaml_parser_scan_flow_scalar) but the
    line continuation (several lines: declined)."""
    cdef char* out = <char*>PyMem_Malloc(2 * (end - p) + 8)
    cdef Py_ssize_t o = 0, i = p, digits, k
    cdef uint32_t cp
    cdef char c, e
    if out == NULL:
        raise MemoryError()
    try:
        while i < end:
            c = b[i]
            if c != b'\\':
                out[o] = c
                o += 1
                i += 1
                continue
            e = b[i + 1]
            i += 2
            digits = 0
            cp = 0
            if e == b'0':
                cp = 0
            elif e == b'a':
                cp = 7
            elif e == b'b':
                cp = 8
            elif e == b't':
                cp = 9
            elif e == b'n':
                cp = 10
            elif e == b'v':
                cp = 11
            elif e == b'f':
                cp = 12
            elif e == b'r':
                cp = 13
            elif e == b'e':
                cp = 27
            elif e == b' ' or e == b'"' or e == b'/' or e == b'\\':
                cp = <unsigned char>e
            elif e == b'N':
                cp = 0x85
            elif e == b'_':
                cp = 0xA0
            elif e == b'L':
                cp = 0x2028
            elif e == b'P':
                cp = 0x2029
            elif e == b'x':
                digits = 2
            elif e == b'u':
                digits = 4
            elif e == b'U':
                digits = 8
            else:
                raise Decline("escape")
            if digits:
                if i + digits > end:
                    raise Decline("escape")
                for k in range(digits):
                    c = b[i + k]
                    if not _hex(c):
                        raise Decline("escape")
                    cp = cp * 16 + <uint32_t>(c - 48 if digit(c) else (c | 0x20) - 87)
                i += digits
                if (cp >= 0xD800 and cp <= 0xDFFF) or cp > 0x10FFFF:
                    raise Decline("escape")
            # UTF-8
            if cp < 0x80:
                out[o] = <char>cp
                o += 1
            elif cp < 0x800:
                out[o] = <char>(0xC0 | (cp >> 6))
                out[o + 1] = <char>(0x80 | (cp & 0x3F))
                o += 2
            elif cp < 0x10000:
                out[o] = <char>(0xE0 | (cp >> 12))
                out[o + 1] = <char>(0x80 | ((cp >> 6) & 0x3F))
                out[o + 2] = <char>(0x80 | (cp & 0x3F))
                o += 3
            else:
                out[o] = <char>(0xF0 | (cp >> 18))
                out[o + 1] = <char>(0x80 | ((cp >> 12) & 0x3F))
                out[o + 2] = <char>(0x80 | ((cp >> 6) & 0x3F))
                out[o + 3] = <char>(0x80 | (cp & 0x3F))
                o += 4
        return PyUnicode_DecodeUTF8(out, o, NULL)
    finally:
        PyMem_Free(out)


cdef Py_ssize_t flow_plain_end(const char* b, Py_ssize_t n, Py_ssize_t p) except -1:
    """The end of a plain scalar at p inside a flow collection: up to a
    flow indicator, ': ', ' #' or the end of the line, trailing spaces
    left out. A ':' inside it must be followed by a letter or a digit
    (``2026-01-01T00:00:00Z``); libyaml's versions differ on the rest."""
    cdef Py_ssize_t q = p, r, last = p
    cdef char c = b[p]
    if (c == b'#' or c == b',' or c == b'[' or c == b']' or c == b'{' or c == b'}' or c == b'&'
            or c == b'*' or c == b'!' or c == b'|' or c == b'>' or c == b'%' or c == b'@'
            or c == b'`' or c == b'?' or c == b':' or c == b'-' and (
                blankz(b, p + 1, n) or b[p + 1] == b',' or b[p + 1] == b']' or b[p + 1] == b'}')):
        raise Decline("indicator")
    while q < n:
        c = b[q]
        if c == b'\n' or c == b',' or c == b'[' or c == b']' or c == b'{' or c == b'}':
            break
        if c == b' ':
            r = q + 1
            while r < n and b[r] == b' ':
                r += 1
            if r >= n or b[r] == b'\n' or b[r] == b'#':
                break
            q = r
            continue
        if c == b':':
            if blankz(b, q + 1, n):
                break
            c = b[q + 1]
            if not (digit(c) or (c >= b'a' and c <= b'z') or (c >= b'A' and c <= b'Z')):
                raise Decline("':' in a flow scalar")
        q += 1
        last = q
    return last
