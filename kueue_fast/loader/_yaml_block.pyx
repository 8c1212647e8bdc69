# distutils: language = c++
# cython: language_level=3
"""A reader for YAML as ``kubectl get -o yaml``, ``yaml.safe_dump``, our own
generators and people write it, giving exactly what PyYAML's loader of
kueue_fast.loader.documents (libyaml, YAML 1.1 implicit resolvers without the
timestamp one) gives, or None for the whole stream when the text holds
anything outside the subset, so that the existing path decides (with its own
messages).

The subset: a stream of documents separated by ``---`` lines, and ended by
``...`` lines if one likes (a scalar or flow collection may start on its
``---`` line, as ``yaml.safe_dump_all`` writes it); block mappings and block
sequences (compact ``- key: value`` entries, nested ``- - x``, and sequences
at the indentation of their parent key, as kubectl writes them); flow
mappings and sequences (``{name: a, namespace: b}``, ``[1, 2]``), nested, over
several lines indented more than their block parent, with comments; plain,
single-quoted and double-quoted scalars on one line; comments and blank
lines. Line breaks are ``\\n``: the loader reads files with Python's
universal newlines, so CRLF texts arrive here as LF.

Declined (None): tabs, carriage returns, control characters, NEL/LS/PS, a
byte order mark anywhere; anchors, aliases, tags, directives, block
scalars, complex keys (``?``), scalars over several lines, a key of 1000
bytes or more (libyaml's simple-key limit is 1024 characters), a key given
twice in one mapping, nesting deeper than 100 levels (the loader's limit,
kueue_fast/loader/limits.py: PyYAML then gives the loader's error for those
two), a plain scalar PyYAML resolves to a merge key ``<<`` or a value ``=``;
in flow collections, the rarer forms (a ``key: value`` pair in a sequence, a
key without a value, an empty entry, a trailing comma, a collection as a key,
a ``:`` in a plain scalar not followed by a letter or digit, a line indented
no more than the block parent); among numbers every form but
the plain decimal ones (``10``, ``-3``, ``1.5``, ``1.e+3``): octal, hex,
binary, sexagesimal, underscores, ``.5``, ``.inf`` and ``.nan`` all decline;
an unusual escape in a double-quoted scalar (libyaml's set except ``\\/``...
see _unescape). Anything malformed that PyYAML would reject also declines
(a line that does not fit the indentation, text after a value).

Resolution follows yaml/resolver.py: the first character selects the
resolvers (bool yYnNtTfFoO, float -+0-9., int -+0-9, merge <, null ~nN and
the empty scalar, value =), then their regular expressions in order; the
float and int ones are implemented as exact matchers below. Keys are
interned: one object per distinct key text in a stream (a 100k-Workload
stream has a few dozen distinct keys and millions of occurrences); short
values are shared through a small direct-mapped cache (values are immutable).
"""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 3

from cpython.dict cimport PyDict_SetItem, PyDict_Size
from cpython.list cimport PyList_Append
from cpython.long cimport PyLong_FromLongLong
from cpython.float cimport PyFloat_FromDouble
from cpython.mem cimport PyMem_Malloc, PyMem_Free, PyMem_Calloc
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.string cimport memchr, memcmp, memcpy
from libc.stdint cimport uint64_t, uint32_t

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    object PyUnicode_DecodeUTF8(const char*, Py_ssize_t, const char*)
    object PyUnicode_New(Py_ssize_t, Py_UCS4)
    void* PyUnicode_DATA(object)
    bint PyUnicode_IS_ASCII(object)
    double PyOS_string_to_double(const char*, char**, PyObject*) except? -1.0
    object PyLong_FromString(const char*, char**, int)


class _Decline(Exception):
    """The text is outside the subset: the caller's other parsers decide."""


cdef enum:
    EOF_LINE = -1      # next_content: no more content
    DOC_START = -2     # next_content: a '---' line
    DOC_END = -3       # next_content: a '...' line
    MAX_DEPTH = 100
    MAX_KEY_BYTES = 1000
    VALUE_CACHE_BITS = 14
    VALUE_CACHE_MAX_LEN = 64

cdef enum Kind:
    PLAIN = 0
    SINGLE = 1
    DOUBLE = 2
    EMPTY_MAP = 3
    EMPTY_SEQ = 4

cdef struct Entry:
    Py_ssize_t start
    Py_ssize_t length
    uint64_t hash
    PyObject* obj  # a strong reference, or NULL for an empty slot


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


cdef bint _acceptable_bytes(const unsigned char* b, Py_ssize_t n) noexcept:
    """No character that libyaml refuses or reads as a line break or BOM
    outside what the parser below understands."""
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


cdef inline uint64_t _hash(const char* s, Py_ssize_t n) noexcept:
    cdef uint64_t h = 1469598103934665603ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ <unsigned char>s[i]) * 1099511628211ULL
    return h


cdef inline bint _digit(char c) noexcept:
    return c >= b'0' and c <= b'9'


cdef inline bint _hex(char c) noexcept:
    return _digit(c) or (c >= b'a' and c <= b'f') or (c >= b'A' and c <= b'F')


cdef Py_ssize_t _digits_underscores(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept:
    while i < n and (_digit(s[i]) or s[i] == b'_'):
        i += 1
    return i


cdef Py_ssize_t _sexagesimal_parts(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept:
    """Past ``(?::[0-5]?[0-9])+`` from i, or -1 when there is not one part."""
    cdef int parts = 0
    while i < n and s[i] == b':':
        if i + 1 < n and _digit(s[i + 1]):
            if i + 2 < n and _digit(s[i + 2]) and s[i + 1] <= b'5':
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
    if n >= 2 and s[0] == b'.' and _digit(s[1]):
        j = _digits_underscores(s, 2, n)
        if j == n or _exponent_end(s, j, n) == n:
            return True
    # [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?
    # [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    if i < n and _digit(s[i]):
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
            and _digit(s[j + 2]):
        j += 3
        while j < n and _digit(s[j]):
            j += 1
        return j
    return -1


cdef bint _is_int(const char* s, Py_ssize_t n) noexcept:
    """yaml/resolver.py's int expression, alternative by alternative."""
    cdef Py_ssize_t i = 0, j
    if n >= 1 and (s[0] == b'-' or s[0] == b'+'):
        i = 1
    if i >= n or not _digit(s[i]):
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
        if not _digit(s[i]):
            return False
        i += 1
    return True


cdef bint _plain_decimal_float(const char* s, Py_ssize_t n) noexcept:
    """[-+]?[0-9]+\\.[0-9]*(?:[eE][-+][0-9]+)?: what float() reads as PyYAML's
    constructor does (no underscores, sign, infinity or sexagesimal parts)."""
    cdef Py_ssize_t i = 0
    if n >= 1 and (s[0] == b'-' or s[0] == b'+'):
        i = 1
    if i >= n or not _digit(s[i]):
        return False
    while i < n and _digit(s[i]):
        i += 1
    if i >= n or s[i] != b'.':
        return False
    i += 1
    while i < n and _digit(s[i]):
        i += 1
    return i == n or _exponent_end(s, i, n) == n


cdef inline bint _blankz(const char* b, Py_ssize_t i, Py_ssize_t n) noexcept:
    """End of text, a space or a line break at i (tabs and CR never get here)."""
    return i >= n or b[i] == b' ' or b[i] == b'\n'


cdef class _Reader:
    cdef const char* b
    cdef Py_ssize_t n
    cdef Py_ssize_t pos  # start of the line after the node just read
    cdef bint ascii
    cdef int depth
    # next_content memo: from -> (content position, indent)
    cdef Py_ssize_t memo_from, memo_at, memo_indent
    cdef Entry* keys
    cdef Py_ssize_t keys_mask, keys_used
    cdef Entry* values
    cdef object text  # keeps the buffer alive

    def __cinit__(self):
        self.keys = NULL
        self.values = NULL

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.keys != NULL:
            for i in range(self.keys_mask + 1):
                Py_XDECREF(self.keys[i].obj)
            PyMem_Free(self.keys)
        if self.values != NULL:
            for i in range(1 << VALUE_CACHE_BITS):
                Py_XDECREF(self.values[i].obj)
            PyMem_Free(self.values)

    cdef int setup(self, str text) except -1:
        cdef Py_ssize_t n
        self.text = text
        self.b = PyUnicode_AsUTF8AndSize(text, &n)
        self.n = n
        self.ascii = PyUnicode_IS_ASCII(text)
        self.depth = 0
        self.memo_from = -1
        self.keys_mask = 255
        self.keys_used = 0
        self.keys = <Entry*>PyMem_Calloc(self.keys_mask + 1, sizeof(Entry))
        self.values = <Entry*>PyMem_Calloc(1 << VALUE_CACHE_BITS, sizeof(Entry))
        if self.keys == NULL or self.values == NULL:
            raise MemoryError()
        return 0

    # --- lines --------------------------------------------------------------------

    cdef inline Py_ssize_t line_after(self, Py_ssize_t p) noexcept:
        """Start of the line after the one holding p (n at the end)."""
        cdef const char* nl = <const char*>memchr(self.b + p, b'\n', self.n - p) if p < self.n else NULL
        return (nl - self.b) + 1 if nl != NULL else self.n

    cdef Py_ssize_t next_content(self, Py_ssize_t p, Py_ssize_t* indent) except -2:
        """From the line starting at p, skip blank and comment lines; the first
        character of the next content line, its column in *indent (EOF_LINE
        at the end, DOC_START or DOC_END for a '---' or '...' line: the
        position is then the line after it, or the document's first
        character when it starts on the '---' line)."""
        cdef const char* b = self.b
        cdef Py_ssize_t n = self.n, q
        if p == self.memo_from:
            indent[0] = self.memo_indent
            return self.memo_at
        self.memo_from = p
        while True:
            if p >= n:
                indent[0] = EOF_LINE
                break
            q = p
            while q < n and b[q] == b' ':
                q += 1
            if q >= n:
                indent[0] = EOF_LINE
                p = n
                break
            if b[q] == b'\n' or b[q] == b'#':
                p = self.line_after(q)
                continue
            if q == p and n - p >= 3 and _blankz(b, p + 3, n) and (
                    (b[p] == b'-' and b[p + 1] == b'-' and b[p + 2] == b'-')
                    or (b[p] == b'.' and b[p + 1] == b'.' and b[p + 2] == b'.')):
                q = p + 3
                while q < n and b[q] == b' ':
                    q += 1
                indent[0] = DOC_START if b[p] == b'-' else DOC_END
                if q < n and b[q] != b'\n' and not (b[q] == b'#' and q > p + 3):
                    if b[p] == b'.':
                        raise _Decline("content after ...")
                    p = q  # a document on the '---' line: it starts after a space
                else:
                    p = self.line_after(p)
                break
            indent[0] = q - p
            p = q
            break
        self.memo_at = p
        self.memo_indent = indent[0]
        return p

    cdef int end_of_value(self, Py_ssize_t token_end) except -1:
        """After a value on its line: only spaces and a comment may follow;
        self.pos moves to the next line."""
        cdef const char* b = self.b
        cdef Py_ssize_t q = token_end
        while q < self.n and b[q] == b' ':
            q += 1
        if q < self.n and b[q] != b'\n':
            if b[q] != b'#' or q == token_end:
                raise _Decline("text after a value")
        self.pos = self.line_after(q) if q < self.n and b[q] == b'#' else min(q + 1, self.n)
        return 0

    # --- tokens -------------------------------------------------------------------

    cdef Py_ssize_t scan_token(self, Py_ssize_t p, Kind* kind) except -1:
        """The end of the scalar (or empty flow collection) starting at p."""
        cdef const char* b = self.b
        cdef Py_ssize_t n = self.n, q, r, last
        cdef char c = b[p]
        cdef char close
        if c == b'"':
            q = p + 1
            while q < n and b[q] != b'"' and b[q] != b'\n':
                q += 2 if b[q] == b'\\' else 1
            if q >= n or b[q] != b'"':
                raise _Decline("double-quoted scalar over several lines")
            kind[0] = DOUBLE
            return q + 1
        if c == b"'":
            q = p + 1
            while True:
                while q < n and b[q] != b"'" and b[q] != b'\n':
                    q += 1
                if q >= n or b[q] != b"'":
                    raise _Decline("single-quoted scalar over several lines")
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
            raise _Decline("flow collection")
        if (c == b'#' or c == b',' or c == b']' or c == b'}' or c == b'&' or c == b'*' or c == b'!'
                or c == b'|' or c == b'>' or c == b'%' or c == b'@' or c == b'`' or c == b'?'
                or c == b':' or (c == b'-' and _blankz(b, p + 1, n))):
            raise _Decline("indicator")
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
            if c == b':' and _blankz(b, q + 1, n):
                break
            q += 1
            last = q
        return last

    cdef object make_str(self, Py_ssize_t start, Py_ssize_t length):
        cdef object s
        if self.ascii:
            s = PyUnicode_New(length, 127)
            memcpy(PyUnicode_DATA(s), self.b + start, length)
            return s
        return PyUnicode_DecodeUTF8(self.b + start, length, NULL)

    cdef object make_scalar(self, Py_ssize_t p, Py_ssize_t end, Kind kind):
        if kind == PLAIN:
            return self.resolve(p, end - p)
        if kind == SINGLE:
            if memchr(self.b + p + 1, b"'", end - p - 2) == NULL:
                return self.make_str(p + 1, end - p - 2)
            return self.make_str(p + 1, end - p - 2).replace("''", "'")
        if kind == DOUBLE:
            if memchr(self.b + p + 1, b'\\', end - p - 2) == NULL:
                return self.make_str(p + 1, end - p - 2)
            return self.unescape(p + 1, end - 1)
        if kind == EMPTY_MAP:
            return {}
        return []

    cdef object resolve(self, Py_ssize_t p, Py_ssize_t n):
        """A plain scalar's value as PyYAML's implicit resolvers and
        SafeConstructor make it (see the module docstring)."""
        cdef const char* s = self.b + p
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
                w = self.make_str(p, n)
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
                raise _Decline("merge key")
        elif c == b'=':
            if n == 1:
                raise _Decline("value key")
        elif c == b'-' or c == b'+' or c == b'.' or _digit(c):
            if _plain_decimal_int(s, n):
                if n <= 18:
                    v = 0
                    i = 1 if (c == b'-' or c == b'+') else 0
                    while i < n:
                        v = v * 10 + (s[i] - 48)
                        i += 1
                    return PyLong_FromLongLong(-v if c == b'-' else v)
                try:
                    return int(self.make_str(p, n))
                except ValueError:  # beyond sys.get_int_max_str_digits(): PyYAML's error
                    raise _Decline("integer too long")
            if _plain_decimal_float(s, n):
                if n >= 32:
                    return float(self.make_str(p, n))
                memcpy(buf, s, n)
                buf[n] = 0
                return PyFloat_FromDouble(PyOS_string_to_double(buf, NULL, NULL))
            if _is_float(s, n) or _is_int(s, n):
                raise _Decline("a YAML 1.1 number form")
        return self.make_str(p, n)

    cdef object unescape(self, Py_ssize_t p, Py_ssize_t end):
        """The content of a double-quoted scalar between p and end, with
        libyaml's escapes (scanner.c yaml_parser_scan_flow_scalar) but the
        line continuation (several lines: declined)."""
        cdef const char* b = self.b
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
                    raise _Decline("escape")
                if digits:
                    if i + digits > end:
                        raise _Decline("escape")
                    for k in range(digits):
                        c = b[i + k]
                        if not _hex(c):
                            raise _Decline("escape")
                        cp = cp * 16 + <uint32_t>(c - 48 if _digit(c) else (c | 0x20) - 87)
                    i += digits
                    if (cp >= 0xD800 and cp <= 0xDFFF) or cp > 0x10FFFF:
                        raise _Decline("escape")
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

    # --- shared keys and values -------------------------------------------------------

    cdef object key(self, Py_ssize_t p, Py_ssize_t end, Kind kind):
        """The key object for the token [p, end): one per distinct text."""
        cdef Py_ssize_t length = end - p
        cdef uint64_t h
        cdef Py_ssize_t i
        cdef Entry* e
        cdef object obj
        if kind == EMPTY_MAP or kind == EMPTY_SEQ:
            raise _Decline("collection as a key")
        h = _hash(self.b + p, length)
        i = <Py_ssize_t>(h & <uint64_t>self.keys_mask)
        while True:
            e = &self.keys[i]
            if e.obj == NULL:
                break
            if e.hash == h and e.length == length and memcmp(self.b + e.start, self.b + p, length) == 0:
                return <object>e.obj
            i = (i + 1) & self.keys_mask
        obj = self.make_scalar(p, end, kind)
        if self.keys_used * 2 >= self.keys_mask:
            if self.keys_mask >= (1 << 20):
                return obj  # that many distinct keys: no more interning
            self.grow_keys()
            i = <Py_ssize_t>(h & <uint64_t>self.keys_mask)
            while self.keys[i].obj != NULL:
                i = (i + 1) & self.keys_mask
            e = &self.keys[i]
        e.start = p
        e.length = length
        e.hash = h
        Py_INCREF(obj)
        e.obj = <PyObject*>obj
        self.keys_used += 1
        return obj

    cdef int grow_keys(self) except -1:
        cdef Py_ssize_t old_mask = self.keys_mask, i, j
        cdef Entry* old = self.keys
        cdef Py_ssize_t mask = old_mask * 2 + 1
        cdef Entry* table = <Entry*>PyMem_Calloc(mask + 1, sizeof(Entry))
        if table == NULL:
            raise MemoryError()
        for i in range(old_mask + 1):
            if old[i].obj != NULL:
                j = <Py_ssize_t>(old[i].hash & <uint64_t>mask)
                while table[j].obj != NULL:
                    j = (j + 1) & mask
                table[j] = old[i]
        self.keys = table
        self.keys_mask = mask
        PyMem_Free(old)
        return 0

    cdef object value(self, Py_ssize_t p, Py_ssize_t end, Kind kind):
        """The value of the token [p, end); short scalars shared through the cache."""
        cdef Py_ssize_t length = end - p
        cdef uint64_t h
        cdef Entry* e
        cdef object obj
        if kind == EMPTY_MAP or kind == EMPTY_SEQ or length > VALUE_CACHE_MAX_LEN:
            return self.make_scalar(p, end, kind)
        h = _hash(self.b + p, length)
        e = &self.values[h & ((1 << VALUE_CACHE_BITS) - 1)]
        if e.obj != NULL and e.hash == h and e.length == length \
                and memcmp(self.b + e.start, self.b + p, length) == 0:
            return <object>e.obj
        obj = self.make_scalar(p, end, kind)
        Py_XDECREF(e.obj)
        e.obj = NULL
        e.start = p
        e.length = length
        e.hash = h
        Py_INCREF(obj)
        e.obj = <PyObject*>obj
        return obj

    # --- flow collections -----------------------------------------------------------

    cdef Py_ssize_t flow_skip(self, Py_ssize_t p, Py_ssize_t floor, bint* crossed) except -1:
        """Past spaces, line breaks and comments inside a flow collection (set
        *crossed when a line break is passed). A line it reaches must be
        indented more than ``floor``, the column of the block node the
        collection belongs to (the spec's rule; so no document marker can
        begin a line inside it)."""
        cdef const char* b = self.b
        cdef Py_ssize_t n = self.n, q
        crossed[0] = False
        while True:
            while p < n and b[p] == b' ':
                p += 1
            if p >= n:
                raise _Decline("flow collection not closed")
            if b[p] == b'#':
                if b[p - 1] != b' ' and b[p - 1] != b'\n':
                    raise _Decline("comment right after a token")
                p = self.line_after(p)
            elif b[p] == b'\n':
                p += 1
            else:
                return p
            crossed[0] = True
            q = p
            while q < n and b[q] == b' ':
                q += 1
            if q < n and b[q] != b'\n' and b[q] != b'#' and q - p <= floor:
                raise _Decline("flow collection's line not indented")
            p = q

    cdef Py_ssize_t flow_plain_end(self, Py_ssize_t p) except -1:
        """The end of a plain scalar at p inside a flow collection: up to a
        flow indicator, ': ', ' #' or the end of the line, trailing spaces
        left out. A ':' inside it must be followed by a letter or a digit
        (``2026-01-01T00:00:00Z``); libyaml's versions differ on the rest."""
        cdef const char* b = self.b
        cdef Py_ssize_t n = self.n, q = p, r, last = p
        cdef char c = b[p]
        if (c == b'#' or c == b',' or c == b'[' or c == b']' or c == b'{' or c == b'}' or c == b'&'
                or c == b'*' or c == b'!' or c == b'|' or c == b'>' or c == b'%' or c == b'@'
                or c == b'`' or c == b'?' or c == b':' or c == b'-' and (
                    _blankz(b, p + 1, n) or b[p + 1] == b',' or b[p + 1] == b']' or b[p + 1] == b'}')):
            raise _Decline("indicator")
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
                if _blankz(b, q + 1, n):
                    break
                c = b[q + 1]
                if not (_digit(c) or (c >= b'a' and c <= b'z') or (c >= b'A' and c <= b'Z')):
                    raise _Decline("':' in a flow scalar")
            q += 1
            last = q
        return last

    cdef object flow_node(self, Py_ssize_t p, Py_ssize_t floor, Py_ssize_t* end):
        """The scalar or flow collection at p inside a flow collection; *end
        past it."""
        cdef Kind kind
        cdef char c = self.b[p]
        if c == b'{' or c == b'[':
            return self.flow(p, floor, end)
        if c == b'"' or c == b"'":
            end[0] = self.scan_token(p, &kind)
        else:
            kind = PLAIN
            end[0] = self.flow_plain_end(p)
        return self.value(p, end[0], kind)

    cdef object flow(self, Py_ssize_t p, Py_ssize_t floor, Py_ssize_t* end):
        """The flow mapping or sequence opening at p (libyaml's parser.c
        yaml_parser_parse_flow_sequence_entry and _flow_mapping_key/_value,
        without their rarer forms: a pair in a sequence, a key without a
        value, a trailing comma, a complex key, a collection as a key all
        decline); *end past its closing bracket."""
        cdef const char* b = self.b
        cdef Py_ssize_t n = self.n, q, key_end, before
        cdef bint crossed
        cdef bint is_map = b[p] == b'{'
        cdef char close = b'}' if is_map else b']'
        cdef char c
        cdef Kind kind
        cdef dict d
        cdef list items
        cdef object k, v, result
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Decline("nesting")
        q = self.flow_skip(p + 1, floor, &crossed)
        if is_map:
            d = {}
            result = d
        else:
            items = []
            result = items
        if b[q] != close:
            while True:
                if is_map:
                    c = b[q]
                    if c == b'{' or c == b'[':
                        raise _Decline("collection as a key")
                    if c == b'"' or c == b"'":
                        key_end = self.scan_token(q, &kind)
                    else:
                        kind = PLAIN
                        key_end = self.flow_plain_end(q)
                    if key_end - q >= MAX_KEY_BYTES:
                        raise _Decline("long key")
                    k = self.key(q, key_end, kind)
                    q = key_end
                    while q < n and b[q] == b' ':
                        q += 1
                    if not (q < n and b[q] == b':' and _blankz(b, q + 1, n)):
                        raise _Decline("a key without ': ' on its line")
                    q = self.flow_skip(q + 1, floor, &crossed)
                    if b[q] == b',' or b[q] == b'}':
                        v = None
                    else:
                        v = self.flow_node(q, floor, &q)
                        q = self.flow_skip(q, floor, &crossed)
                    before = PyDict_Size(d)
                    PyDict_SetItem(d, k, v)
                    if PyDict_Size(d) == before:
                        raise _Decline("a key given twice")
                else:
                    PyList_Append(items, self.flow_node(q, floor, &q))
                    q = self.flow_skip(q, floor, &crossed)
                if b[q] == close:
                    break
                if b[q] != b',':
                    raise _Decline("not ',' after an entry")
                q = self.flow_skip(q + 1, floor, &crossed)
                if b[q] == b',' or b[q] == close:
                    raise _Decline("an empty entry or a trailing comma")
        end[0] = q + 1
        self.depth -= 1
        return result

    # --- nodes --------------------------------------------------------------------

    cdef object node(self, Py_ssize_t p, Py_ssize_t col):
        """The node whose first character is at p (column col), at the start
        of its line or after '- ': a sequence, a mapping or a scalar."""
        cdef const char* b = self.b
        cdef Py_ssize_t end, after
        cdef Kind kind
        cdef object value
        if b[p] == b'-' and _blankz(b, p + 1, self.n):
            return self.sequence(p, col)
        if b[p] == b'{' or b[p] == b'[':
            value = self.flow(p, col, &end)
            self.end_of_value(end)  # also refuses a flow collection as a key
            return value
        end = self.scan_token(p, &kind)
        after = end
        while after < self.n and b[after] == b' ':
            after += 1
        if after < self.n and b[after] == b':' and _blankz(b, after + 1, self.n):
            return self.mapping(p, col)
        value = self.value(p, end, kind)
        self.end_of_value(end)
        return value

    cdef object mapping(self, Py_ssize_t p, Py_ssize_t col):
        cdef const char* b = self.b
        cdef Py_ssize_t n = self.n, end, after, q, line, at, indent, before
        cdef Kind kind
        cdef dict d = {}
        cdef object k, v
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Decline("nesting")
        while True:
            if b[p] == b'-' and _blankz(b, p + 1, n):
                raise _Decline("sequence entry in a mapping")
            end = self.scan_token(p, &kind)
            after = end
            while after < n and b[after] == b' ':
                after += 1
            if not (after < n and b[after] == b':' and _blankz(b, after + 1, n)):
                raise _Decline("not a key")
            if after - p >= MAX_KEY_BYTES:
                raise _Decline("long key")
            k = self.key(p, end, kind)
            q = after + 1
            while q < n and b[q] == b' ':
                q += 1
            if q >= n or b[q] == b'\n' or b[q] == b'#':
                line = self.line_after(q)
                at = self.next_content(line, &indent)
                if indent > col:
                    v = self.node(at, indent)
                elif indent == col and b[at] == b'-' and _blankz(b, at + 1, n):
                    v = self.sequence(at, col)  # kubectl's sequence under its key
                else:
                    v = None
                    self.pos = line
            else:
                if b[q] == b'-' and _blankz(b, q + 1, n):
                    raise _Decline("sequence after a key on its line")
                if b[q] == b'{' or b[q] == b'[':
                    v = self.flow(q, col, &end)
                else:
                    end = self.scan_token(q, &kind)
                    v = self.value(q, end, kind)
                self.end_of_value(end)  # also refuses 'a: b: c'
            before = PyDict_Size(d)
            PyDict_SetItem(d, k, v)
            if PyDict_Size(d) == before:
                raise _Decline("a key given twice")  # PyYAML's loader refuses it, with the lines
            at = self.next_content(self.pos, &indent)
            if indent == col:
                p = at
                continue
            if indent > col:
                raise _Decline("indentation")
            break
        self.depth -= 1
        return d

    cdef object sequence(self, Py_ssize_t p, Py_ssize_t col):
        cdef const char* b = self.b
        cdef Py_ssize_t n = self.n, q, line, at, indent
        cdef list items = []
        cdef object item
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Decline("nesting")
        while True:
            q = p + 1
            while q < n and b[q] == b' ':
                q += 1
            if q >= n or b[q] == b'\n' or b[q] == b'#':
                line = self.line_after(q)
                at = self.next_content(line, &indent)
                if indent > col:
                    item = self.node(at, indent)
                else:
                    item = None
                    self.pos = line
            else:
                item = self.node(q, col + (q - p))
            PyList_Append(items, item)
            at = self.next_content(self.pos, &indent)
            if indent == col and b[at] == b'-' and _blankz(b, at + 1, n):
                p = at
                continue
            if indent > col:
                raise _Decline("indentation")
            break
        self.depth -= 1
        return items

    cdef object scalar_after_document_start(self, Py_ssize_t p):
        """'--- value': a scalar or a flow collection (libyaml allows no simple
        key or block entry right after '---')."""
        cdef const char* b = self.b
        cdef Py_ssize_t end, after
        cdef Kind kind
        cdef object value
        if b[p] == b'-' and _blankz(b, p + 1, self.n):
            raise _Decline("sequence on the '---' line")
        if b[p] == b'{' or b[p] == b'[':
            value = self.flow(p, 0, &end)
            self.end_of_value(end)
            return value
        end = self.scan_token(p, &kind)
        after = end
        while after < self.n and b[after] == b' ':
            after += 1
        if after < self.n and b[after] == b':' and _blankz(b, after + 1, self.n):
            raise _Decline("mapping on the '---' line")
        value = self.value(p, end, kind)
        self.end_of_value(end)
        return value

    cdef list stream(self, each):
        """The documents (libyaml's parser.c yaml_parser_parse_document_start),
        each passed to ``each`` (unless None) as soon as it is read."""
        cdef list docs = []
        cdef Py_ssize_t at, indent
        # 0: nothing yet; 1: after '---', no content yet (a None document if
        # nothing comes); 2: after a document's content; 3: after '...',
        # where only '---', '...' or the end may follow
        cdef int state = 0
        at = self.next_content(0, &indent)
        while True:
            if indent == EOF_LINE:
                if state == 1:
                    docs.append(None)
                return docs
            if indent == DOC_START or indent == DOC_END:
                if state == 1:
                    docs.append(None)
                if indent == DOC_START:
                    state = 1
                    if at < self.n and self.b[at - 1] == b' ':
                        docs.append(self.scalar_after_document_start(at))
                        state = 2
                        at = self.next_content(self.pos, &indent)
                        if indent >= 0:
                            raise _Decline("content after the document")
                        continue
                elif state == 0:
                    raise _Decline("'...' before any document")
                else:
                    state = 3
                at = self.next_content(at, &indent)
                continue
            if state == 3:
                raise _Decline("a document after '...' without '---'")
            doc = self.node(at, indent)
            if each is not None:
                each(doc)
            docs.append(doc)
            state = 2
            at = self.next_content(self.pos, &indent)
            if indent >= 0:
                raise _Decline("content after the document")


_TRUE = frozenset(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_FALSE = frozenset(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"))
_NULL = frozenset(("null", "Null", "NULL"))


def load_all(str text, each=None):
    """The documents of a YAML stream exactly as PyYAML's loader gives them
    (empty documents as None), or None when the text is outside the subset
    (module docstring) and another parser must decide. ``each`` (unless None)
    is called with each document (but one on its '---' line) as soon as it is
    read: the loader shares equal pod templates there, while the copies are young."""
    cdef _Reader r = _Reader()
    cdef Py_ssize_t n
    try:
        r.setup(text)
    except UnicodeEncodeError:  # lone surrogates: not text libyaml reads
        return None
    if not _acceptable_bytes(<const unsigned char*>r.b, r.n):
        return None
    try:
        return r.stream(each)
    except _Decline:
        return None
