# distutils: language = c++
# cython: language_level=3
"""The loader's nesting limit on a value already read (the compiled twin of
kueue_fast.loader.limits.nesting_exceeds_py)."""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 1

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
