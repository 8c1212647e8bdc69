# distutils: language = c++
# cython: language_level=3
"""Objects of the loader's compiled paths: model instances made by filling
their slots (SlotsMaker), JSON values compared exactly (same_json), and
equal Workload specs and pod templates made one object while the documents
are read (SharedTemplates). loader/_bulk.pyx calls them in C through
loader/_objects.pxd; loader.documents uses SlotsMaker and SharedTemplates.
"""

# What this module offers (Python, and loader/_bulk.pyx through its .pxd; kueue_fast/_compiled.py INTERFACES): bump both
# when it changes.
INTERFACE = 1

import dataclasses

from cpython.dict cimport PyDict_Next
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.math cimport copysign

# --- dataclass instances built from all their fields --------------------------------------

cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        int type
        Py_ssize_t offset
        int flags
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member

cdef int _T_OBJECT_EX = 16  # structmember.h: an object slot (AttributeError while unset)
cdef int _READONLY = 1


cdef class SlotsMaker:
    """``cls(*values)`` for a dataclass with ``slots=True``, given the values of
    all its fields in their order (those with defaults and ``init=False``
    too): the instance is allocated and its slots filled directly, as the
    dataclass's ``__init__`` would fill them, at a fraction of the cost of
    calling it (a Python function that assigns each field in turn; a frozen
    one through object.__setattr__). Only for a class whose ``__init__`` does
    nothing else (checked: no ``__post_init__``, no ``__new__``, each field a
    writable object slot, the slots exactly the fields); for any other class,
    a call of ``cls(*values)``."""

    def __cinit__(self):
        self.offsets = NULL

    def __init__(self, cls):
        names = tuple(f.name for f in dataclasses.fields(cls))
        self.cls = cls
        self.tp = <_TypeObject*>cls
        self.n = len(names)
        self.offsets = <Py_ssize_t*>PyMem_Malloc(max(self.n, 1) * sizeof(Py_ssize_t))
        if self.offsets == NULL:
            raise MemoryError()
        self.direct = (
            tuple(cls.__dict__.get("__slots__", ())) == names
            and not hasattr(cls, "__post_init__")
            and cls.__new__ is object.__new__
            and all(type(cls.__dict__.get(name)) is _MemberDescriptor for name in names)
        )
        cdef PyMemberDef* member
        cdef Py_ssize_t i
        for i in range(self.n if self.direct else 0):
            member = (<PyMemberDescrObject*>(<PyObject*>cls.__dict__[names[i]])).d_member
            if member.type != _T_OBJECT_EX or member.flags & _READONLY:
                self.direct = False
                break
            self.offsets[i] = member.offset

    def __dealloc__(self):
        PyMem_Free(self.offsets)

    def __call__(self, *values):
        return self.make(values)

    cdef object make(self, tuple values):
        if len(values) != self.n:
            raise TypeError(f"{self.cls.__name__}: {self.n} values expected, got {len(values)}")
        if not self.direct:
            return self.cls(*values)
        cdef PyObject* p = self.tp.tp_alloc(self.tp, 0)
        if p == NULL:
            raise MemoryError()
        obj = <object>p
        Py_DECREF(obj)  # the cast took a second reference
        cdef Py_ssize_t i
        cdef PyObject* value
        for i in range(self.n):
            value = PyTuple_GET_ITEM(values, i)
            Py_INCREF(<object>value)
            (<PyObject**>((<char*>p) + self.offsets[i]))[0] = value
        return obj


_MemberDescriptor = type(type("_Probe", (), {"__slots__": ("x",)}).__dict__["x"])


# --- JSON values ---------------------------------------------------------------------------


cdef bint same_json(object a, object b) except -1:
    """a and b are the same JSON value: the same types (1, 1.0 and true differ,
    so do 0.0 and -0.0), values and key order, as their orjson serializations
    and == would tell. False for anything else (NaN, a type orjson refuses)."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    cdef Py_ssize_t i, n, pa, pb
    cdef PyObject* ka
    cdef PyObject* va
    cdef PyObject* kb
    cdef PyObject* vb
    cdef double x, y
    if t is str or t is int:
        return a == b
    if t is dict:
        if len(<dict>a) != len(<dict>b):
            return False
        pa = pb = 0
        while PyDict_Next(a, &pa, &ka, &va):
            PyDict_Next(b, &pb, &kb, &vb)
            if type(<object>ka) is not str or type(<object>kb) is not str or <object>ka != <object>kb:
                return False
            if not same_json(<object>va, <object>vb):
                return False
        return True
    if t is list:
        n = len(<list>a)
        if n != len(<list>b):
            return False
        for i in range(n):
            if not same_json((<list>a)[i], (<list>b)[i]):
                return False
        return True
    if t is float:
        x, y = a, b
        return x == y and copysign(1.0, x) == copysign(1.0, y)
    if t is bool:
        return False  # True and False are single objects: a is not b
    return a is None and b is None


# --- equal pod templates shared as the documents are read ----------------------------------


cdef class _Recent:
    """The last values met at one place of a Workload (its spec, a pod
    template's spec), the latest first, for SharedTemplates."""

    cdef list values
    cdef Py_ssize_t size, tries, hits

    def __init__(self, Py_ssize_t size):
        self.values = []
        self.size = size
        self.tries = self.hits = 0

    cdef object kept(self, object value):
        """The recent value that is the same JSON value as ``value`` (now the
        latest met), else ``value`` (likewise). After 1024 tries with fewer
        than one hit in four (values that rarely repeat) only ``value``: the
        comparisons would cost more than they save."""
        cdef list values = self.values
        cdef Py_ssize_t i
        if self.tries >= 1024 and self.hits * 4 < self.tries:
            return value
        self.tries += 1
        for i in range(len(values)):
            r = values[i]
            if same_json(value, r):
                self.hits += 1
                if i:
                    del values[i]
                    values.insert(0, r)
                return r
        values.insert(0, value)
        if len(values) > self.size:
            values.pop()
        return value


cdef class SharedTemplates:
    """Called on each document as it is read (loader.documents): a Workload
    whose spec is the same JSON value as a recent Workload's (the same types,
    values and key order: same_json) gets that spec object; else its pod
    template specs equal to recent ones become those objects. Its apiVersion,
    kind and namespace become one str per distinct text. Every value stays
    what it was read as.

    Why: the copies die while the next documents are read, so they never add
    up (a List of 100k Workloads of a dozen distinct specs: the parse tree
    259 MB -> 60 MB). Only recent values are compared (no key is computed):
    fast_workload's template cache still finds the others. Within one
    Workload the pod sets keep distinct objects (one object met twice in a
    document is written as a YAML alias when the document is dumped)."""

    cdef _Recent specs
    cdef _Recent templates
    cdef dict strings  # str -> the one kept

    def __init__(self):
        self.specs = _Recent(8)
        self.templates = _Recent(8)
        self.strings = {}

    def __call__(self, object doc):
        """Share what ``doc`` (a Workload, or a List holding Workloads) has in
        common with the documents before it."""
        if type(doc) is not dict:
            return
        items = (<dict>doc).get("items")
        if type(items) is list:
            for it in <list>items:
                self._workload(it)
        else:
            self._workload(doc)

    cdef int _intern(self, dict d, str key) except -1:
        s = d.get(key)
        if type(s) is str:
            kept = self.strings.setdefault(s, s)
            if kept is not s:
                d[key] = kept
        return 0

    cdef int _workload(self, object obj) except -1:
        if type(obj) is not dict:
            return 0
        cdef dict d = <dict>obj
        if d.get("kind") != "Workload":
            return 0
        self._intern(d, "apiVersion")
        self._intern(d, "kind")
        md = d.get("metadata")
        if type(md) is dict:
            self._intern(<dict>md, "namespace")
        spec = d.get("spec")
        if type(spec) is not dict:
            return 0
        kept = self.specs.kept(spec)
        if kept is not spec:
            d["spec"] = kept
            return 0
        sets = (<dict>spec).get("podSets")
        if type(sets) is not list:
            return 0
        cdef list used = []  # the template specs this Workload's pod sets hold
        for ps in <list>sets:
            if type(ps) is not dict:
                continue
            template = (<dict>ps).get("template")
            if type(template) is not dict:
                continue
            tspec = (<dict>template).get("spec")
            if type(tspec) is not dict:
                continue
            kept = self.templates.kept(tspec)
            if kept is not tspec and not holds(used, kept):
                (<dict>template)["spec"] = tspec = kept
            used.append(tspec)
        return 0
