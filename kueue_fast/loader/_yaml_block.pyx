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
see loader/_yaml_scalars.pyx's _unescape). Anything malformed that PyYAML would reject also declines
(a line that does not fit the indentation, text after a value).

The characters read, the tokens and their values (which plain scalars are
numbers, booleans or null, as yaml/resolver.py decides; escapes) are
loader/_yaml_scalars.pyx's, called in C; this module reads the structure. Keys are
interned: one object per distinct key text in a stream (a 100k-Workload
stream has a few dozen distinct keys and millions of occurrences); short
values are shared through a small direct-mapped cache (values are immutable).
"""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 3

from cpython.dict cimport PyDict_SetItem, PyDict_Size
from cpython.list cimport PyList_Append
from cpython.mem cimport PyMem_Free, PyMem_Calloc
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.string cimport memchr, memcmp
from libc.stdint cimport uint64_t

from kueue_fast.loader._yaml_scalars cimport (
    EMPTY_MAP, EMPTY_SEQ, PLAIN, Kind, acceptable_bytes, blankz, flow_plain_end, make_scalar, scan_token
)
from kueue_fast.loader._yaml_scalars import Decline

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    bint PyUnicode_IS_ASCII(object)


cdef enum:
    EOF_LINE = -1      # next_content: no more content
    DOC_START = -2     # next_content: a '---' line
    DOC_END = -3       # next_content: a '...' line
    MAX_DEPTH = 100
    MAX_KEY_BYTES = 1000
    VALUE_CACHE_BITS = 14
    VALUE_CACHE_MAX_LEN = 64

cdef struct Entry:
    Py_ssize_t start
    Py_ssize_t length
    uint64_t hash
    PyObject* obj  # a strong reference, or NULL for an empty slot


cdef inline uint64_t _hash(const char* s, Py_ssize_t n) noexcept:
    cdef uint64_t h = 1469598103934665603ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ <unsigned char>s[i]) * 1099511628211ULL
    return h


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
            if q == p and n - p >= 3 and blankz(b, p + 3, n) and (
                    (b[p] == b'-' and b[p + 1] == b'-' and b[p + 2] == b'-')
                    or (b[p] == b'.' and b[p + 1] == b'.' and b[p + 2] == b'.')):
                q = p + 3
                while q < n and b[q] == b' ':
                    q += 1
                indent[0] = DOC_START if b[p] == b'-' else DOC_END
                if q < n and b[q] != b'\n' and not (b[q] == b'#' and q > p + 3):
                    if b[p] == b'.':
                        raise Decline("content after ...")
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
                raise Decline("text after a value")
        self.pos = self.line_after(q) if q < self.n and b[q] == b'#' else min(q + 1, self.n)
        return 0


    # --- shared keys and values -------------------------------------------------------

    cdef object key(self, Py_ssize_t p, Py_ssize_t end, Kind kind):
        """The key object for the token [p, end): one per distinct text."""
        cdef Py_ssize_t length = end - p
        cdef uint64_t h
        cdef Py_ssize_t i
        cdef Entry* e
        cdef object obj
        if kind == EMPTY_MAP or kind == EMPTY_SEQ:
            raise Decline("collection as a key")
        h = _hash(self.b + p, length)
        i = <Py_ssize_t>(h & <uint64_t>self.keys_mask)
        while True:
            e = &self.keys[i]
            if e.obj == NULL:
                break
            if e.hash == h and e.length == length and memcmp(self.b + e.start, self.b + p, length) == 0:
                return <object>e.obj
            i = (i + 1) & self.keys_mask
        obj = make_scalar(self.b, self.ascii, p, end, kind)
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
            return make_scalar(self.b, self.ascii, p, end, kind)
        h = _hash(self.b + p, length)
        e = &self.values[h & ((1 << VALUE_CACHE_BITS) - 1)]
        if e.obj != NULL and e.hash == h and e.length == length \
                and memcmp(self.b + e.start, self.b + p, length) == 0:
            return <object>e.obj
        obj = make_scalar(self.b, self.ascii, p, end, kind)
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
                raise Decline("flow collection not closed")
            if b[p] == b'#':
                if b[p - 1] != b' ' and b[p - 1] != b'\n':
                    raise Decline("comment right after a token")
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
                raise Decline("flow collection's line not indented")
            p = q


    cdef object flow_node(self, Py_ssize_t p, Py_ssize_t floor, Py_ssize_t* end):
        """The scalar or flow collection at p inside a flow collection; *end
        past it."""
        cdef Kind kind
        cdef char c = self.b[p]
        if c == b'{' or c == b'[':
            return self.flow(p, floor, end)
        if c == b'"' or c == b"'":
            end[0] = scan_token(self.b, self.n, p, &kind)
        else:
            kind = PLAIN
            end[0] = flow_plain_end(self.b, self.n, p)
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
            raise Decline("nesting")
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
                        raise Decline("collection as a key")
                    if c == b'"' or c == b"'":
                        key_end = scan_token(self.b, self.n, q, &kind)
                    else:
                        kind = PLAIN
                        key_end = flow_plain_end(self.b, self.n, q)
                    if key_end - q >= MAX_KEY_BYTES:
                        raise Decline("long key")
                    k = self.key(q, key_end, kind)
                    q = key_end
                    while q < n and b[q] == b' ':
                        q += 1
                    if not (q < n and b[q] == b':' and blankz(b, q + 1, n)):
                        raise Decline("a key without ': ' on its line")
                    q = self.flow_skip(q + 1, floor, &crossed)
                    if b[q] == b',' or b[q] == b'}':
                        v = None
                    else:
                        v = self.flow_node(q, floor, &q)
                        q = self.flow_skip(q, floor, &crossed)
                    before = PyDict_Size(d)
                    PyDict_SetItem(d, k, v)
                    if PyDict_Size(d) == before:
                        raise Decline("a key given twice")
                else:
                    PyList_Append(items, self.flow_node(q, floor, &q))
                    q = self.flow_skip(q, floor, &crossed)
                if b[q] == close:
                    break
                if b[q] != b',':
                    raise Decline("not ',' after an entry")
                q = self.flow_skip(q + 1, floor, &crossed)
                if b[q] == b',' or b[q] == close:
                    raise Decline("an empty entry or a trailing comma")
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
        if b[p] == b'-' and blankz(b, p + 1, self.n):
            return self.sequence(p, col)
        if b[p] == b'{' or b[p] == b'[':
            value = self.flow(p, col, &end)
            self.end_of_value(end)  # also refuses a flow collection as a key
            return value
        end = scan_token(self.b, self.n, p, &kind)
        after = end
        while after < self.n and b[after] == b' ':
            after += 1
        if after < self.n and b[after] == b':' and blankz(b, after + 1, self.n):
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
            raise Decline("nesting")
        while True:
            if b[p] == b'-' and blankz(b, p + 1, n):
                raise Decline("sequence entry in a mapping")
            end = scan_token(self.b, self.n, p, &kind)
            after = end
            while after < n and b[after] == b' ':
                after += 1
            if not (after < n and b[after] == b':' and blankz(b, after + 1, n)):
                raise Decline("not a key")
            if after - p >= MAX_KEY_BYTES:
                raise Decline("long key")
            k = self.key(p, end, kind)
            q = after + 1
            while q < n and b[q] == b' ':
                q += 1
            if q >= n or b[q] == b'\n' or b[q] == b'#':
                line = self.line_after(q)
                at = self.next_content(line, &indent)
                if indent > col:
                    v = self.node(at, indent)
                elif indent == col and b[at] == b'-' and blankz(b, at + 1, n):
                    v = self.sequence(at, col)  # kubectl's sequence under its key
                else:
                    v = None
                    self.pos = line
            else:
                if b[q] == b'-' and blankz(b, q + 1, n):
                    raise Decline("sequence after a key on its line")
                if b[q] == b'{' or b[q] == b'[':
                    v = self.flow(q, col, &end)
                else:
                    end = scan_token(self.b, self.n, q, &kind)
                    v = self.value(q, end, kind)
                self.end_of_value(end)  # also refuses 'a: b: c'
            before = PyDict_Size(d)
            PyDict_SetItem(d, k, v)
            if PyDict_Size(d) == before:
                raise Decline("a key given twice")  # PyYAML's loader refuses it, with the lines
            at = self.next_content(self.pos, &indent)
            if indent == col:
                p = at
                continue
            if indent > col:
                raise Decline("indentation")
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
            raise Decline("nesting")
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
            if indent == col and b[at] == b'-' and blankz(b, at + 1, n):
                p = at
                continue
            if indent > col:
                raise Decline("indentation")
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
        if b[p] == b'-' and blankz(b, p + 1, self.n):
            raise Decline("sequence on the '---' line")
        if b[p] == b'{' or b[p] == b'[':
            value = self.flow(p, 0, &end)
            self.end_of_value(end)
            return value
        end = scan_token(self.b, self.n, p, &kind)
        after = end
        while after < self.n and b[after] == b' ':
            after += 1
        if after < self.n and b[after] == b':' and blankz(b, after + 1, self.n):
            raise Decline("mapping on the '---' line")
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
                            raise Decline("content after the document")
                        continue
                elif state == 0:
                    raise Decline("'...' before any document")
                else:
                    state = 3
                at = self.next_content(at, &indent)
                continue
            if state == 3:
                raise Decline("a document after '...' without '---'")
            doc = self.node(at, indent)
            if each is not None:
                each(doc)
            docs.append(doc)
            state = 2
            at = self.next_content(self.pos, &indent)
            if indent >= 0:
                raise Decline("content after the document")




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
    if not acceptable_bytes(<const unsigned char*>r.b, r.n):
        return None
    try:
        return r.stream(each)
    except Decline:
        return None
