# distutils: language = c++
# cython: language_level=3
"""A JSON text read fast and checked against the loader's limits in the same
walk (kueue_fast.loader.documents): a List's "items" array read item by item
(json_list_items), the filter before limits.json_problem (json_suspect), and
the run of digits orjson would read as a float (digit_run)."""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 1

from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memchr, memcpy
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector


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
