# distutils: language = c++
# cython: language_level=3
"""The contract's JSON, written from the engine's bulk decisions (the compiled
twin of kueue_fast.commands.contract_json)."""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 1

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
    """The "workloads" array of schedule_output._bulk_json, indented as json.dumps(doc,
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
    """The owner of every workload that has one, by key (schedule_output.to_json)."""
    cdef dict out = {}
    for key, wl in workloads.items():
        owner = wl.owner
        if owner is not None:
            out[key] = owner
    return out
