# distutils: language = c++
# cython: language_level=3
"""What the structure parser (loader/_yaml_block.pyx) takes from
loader/_yaml_scalars.pyx: where a scalar token ends and the value it gives,
called in C (no Python call per scalar)."""

cdef enum Kind:
    PLAIN = 0
    SINGLE = 1
    DOUBLE = 2
    EMPTY_MAP = 3
    EMPTY_SEQ = 4


cdef inline bint digit(char c) noexcept:
    return c >= b'0' and c <= b'9'


cdef inline bint blankz(const char* b, Py_ssize_t i, Py_ssize_t n) noexcept:
    """End of text, a space or a line break at i (tabs and CR never get here)."""
    return i >= n or b[i] == b' ' or b[i] == b'\n'


cdef bint acceptable_bytes(const unsigned char* b, Py_ssize_t n) noexcept
cdef Py_ssize_t scan_token(const char* b, Py_ssize_t n, Py_ssize_t p, Kind* kind) except -1
cdef Py_ssize_t flow_plain_end(const char* b, Py_ssize_t n, Py_ssize_t p) except -1
cdef object make_scalar(const char* b, bint ascii, Py_ssize_t p, Py_ssize_t end, Kind kind)
