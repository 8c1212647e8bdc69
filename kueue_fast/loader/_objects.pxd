# distutils: language = c++
# cython: language_level=3
"""What loader/_bulk.pyx takes from loader/_objects.pyx, called in C."""

from cpython.object cimport PyObject

cdef extern from "Python.h":
    ctypedef struct _TypeObject "PyTypeObject":
        PyObject* (*tp_alloc)(_TypeObject*, Py_ssize_t)


cdef class SlotsMaker:
    cdef readonly object cls
    cdef readonly bint direct  # slots filled directly
    cdef _TypeObject* tp
    cdef Py_ssize_t n
    cdef Py_ssize_t* offsets

    cdef object make(self, tuple values)


cdef bint same_json(object a, object b) except -1


cdef inline bint holds(list objs, object x):
    """x is one of objs (identity, not ==)."""
    for o in objs:
        if o is x:
            return True
    return False
