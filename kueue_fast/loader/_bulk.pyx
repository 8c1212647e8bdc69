# distutils: language = c++
# cython: language_level=3
"""The bulk paths for Workloads, compiled: equal Workload specs and pod
templates shared while the documents are read (SharedTemplates), from parsed
objects to model Workloads (fast_workload, which builds them with
SlotsMaker). Pending Workloads to the engine's arrays: engine/_pending.pyx.

fast_workload gives the same model.Workload as loader.workload.parse_workload
for the common shape, or None for anything else (or anything invalid): then
parse_workload runs and raises its error, so messages never depend on the
path. What it saves:
  * names, namespaces, queue names, pod set names are checked in C when they
    are plain DNS-1123 names (api/validation.py's functions decide the rest);
  * an RFC 3339 time in whole seconds UTC is split by position (days of a
    date are computed once by parse_time_ns);
  * a pod template's results (requests, resource validation reasons, node
    affinity, tolerations) are computed once per distinct template. A
    template is first compared with the few last ones met (_same_json: same
    JSON types, values and key order), else looked up by an exact key:
    orjson's serialization (it tells 1, 1.0 and true apart, refuses
    non-string keys and non-JSON values) plus == against the template kept
    with the entry (which tells apart what orjson writes alike, NaN and null).
    On a hit the Workload's template points at the kept template (equal
    values, one copy in memory), and the PodSet remembers it
    (PodSet.template_spec): PendingFill then keys the pod set by that
    object's identity instead of serializing the template again.
The common status (valid conditions, an admission, no admission checks or
reclaimable pods: what Kueue writes on an admitted Workload) is read here too
(_fast_status), the admission through workload_status.read_admission's memo;
everything unusual (another status, a priority class) calls the Python
readers of loader.workload_spec and loader.workload_status, which never
import this module (loader.workload does, to offer fast_workload).
tests/test_fast_loading.py checks both paths give equal states and errors.
"""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 7

import dataclasses

from cpython.dict cimport PyDict_Next
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.math cimport copysign

from kueue_fast.api import model as m
from kueue_fast.api import validation as v
from kueue_fast.api.errors import InputError
from kueue_fast.api.fields import TOP
from kueue_fast.api.requests import pod_requests, resources_validation_message
from kueue_fast.loader.common import V1BETA1, V1BETA2, parse_time_ns, plain_conditions
from kueue_fast.loader.fastjson import exact_key
from kueue_fast.loader.tas import topology_request
from kueue_fast.loader.workload_spec import (
    POD_SET_FIELDS,
    POD_SETS_MAX,
    POD_SETS_MIN,
    SPEC_FIELDS,
    read_priority,
    required_affinity,
)
from kueue_fast.loader.workload_status import (
    EVICTION_REASONS_REORDERING,
    pods_ready_status,
    read_admission,
    workload_status,
)

cdef object INT32_MIN = v.INT32_MIN
cdef object INT32_MAX = v.INT32_MAX

# --- dataclass instances built from all their fields --------------------------------------

cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        int type
        Py_ssize_t offset
        int flags
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    ctypedef struct _TypeObject "PyTypeObject":
        PyObject* (*tp_alloc)(_TypeObject*, Py_ssize_t)

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

    cdef readonly object cls
    cdef readonly bint direct  # slots filled directly
    cdef _TypeObject* tp
    cdef Py_ssize_t n
    cdef Py_ssize_t* offsets

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
cdef SlotsMaker _PodSet = SlotsMaker(m.PodSet)
cdef SlotsMaker _Workload = SlotsMaker(m.Workload)

# The values of PodSet and Workload are given in this order: it must be api/model.py's.
_PODSET_ORDER = (
    "name", "count", "requests", "min_count", "node_selector", "required_affinity", "tolerations",
    "reclaimable", "resources_validation_error", "topology_request", "template_spec",
)
_WORKLOAD_ORDER = (
    "namespace", "name", "queue_name", "pod_sets", "creation_ns", "priority", "priority_class", "uid",
    "active", "admission", "admission_ns", "finished", "queue_order_ns", "pods_ready", "pods_ready_reason",
    "pods_ready_ns", "requeue_count", "requeue_at_ns", "admission_checks", "admitted_condition", "raw", "owner",
)
for _cls, _order in ((m.PodSet, _PODSET_ORDER), (m.Workload, _WORKLOAD_ORDER)):
    if tuple(f.name for f in dataclasses.fields(_cls)) != _order:
        raise ImportError(f"kueue_fast.loader._bulk: the fields of model.{_cls.__name__} changed")

# The loader's field names as sets (frozenset lookups in C)
cdef frozenset _TOP_SET = frozenset(TOP)
cdef frozenset _POD_SET_FIELDS = frozenset(POD_SET_FIELDS)
cdef dict _SPEC_FIELDS = {api: frozenset(f) for api, f in SPEC_FIELDS.items()}


# --- caches -------------------------------------------------------------------------------


cdef class TemplateResult:
    """What a pod set's template spec gives, whatever the workload."""

    cdef readonly dict spec
    cdef readonly dict requests
    cdef readonly object over_limits
    cdef readonly object affinity
    cdef readonly object tolerations  # list of m.Toleration, or None

    def __init__(self, dict spec, dict requests, over_limits, affinity, tolerations):
        self.spec = spec
        self.requests = requests
        self.over_limits = over_limits
        self.affinity = affinity
        self.tolerations = tolerations


# How many of the last templates met are compared before the exact key is computed.
cdef Py_ssize_t RECENT = 8


cdef class BulkCaches:
    """Results of validations that depend only on a value, for one build_state."""

    cdef dict days  # "YYYY-MM-DD" -> ns at 00:00:00Z
    cdef dict templates  # exact key -> TemplateResult
    cdef list recent  # the last TemplateResults met, the latest first

    def __init__(self):
        self.days = {}
        self.templates = {}
        self.recent = []


cdef bint _plain_dns1123(str s, bint subdomain) except -1:
    """s is a DNS-1123 label (or subdomain: labels joined by dots), checked in C.
    False also for what only api/validation.py can decide (it reads the same)."""
    cdef Py_ssize_t n = len(s)
    cdef Py_ssize_t i
    cdef Py_UCS4 ch
    cdef Py_UCS4 prev = u'.'  # a label starts here
    if n == 0 or n > (253 if subdomain else 63):
        return False
    for i in range(n):
        ch = s[i]
        if (u'a' <= ch <= u'z') or (u'0' <= ch <= u'9'):
            pass
        elif ch == u'-':
            if prev == u'.':
                return False
        elif ch == u'.' and subdomain:
            if prev == u'.' or prev == u'-':
                return False
        else:
            return False
        prev = ch
    return prev != u'-' and prev != u'.'


cdef bint _is_subdomain(object s) except -1:
    if type(s) is not str:
        return False
    if _plain_dns1123(<str>s, True):
        return True
    return bool(s) and v.dns1123_subdomain_errors(s) is None


cdef bint _is_label(object s) except -1:
    if type(s) is not str:
        return False
    if _plain_dns1123(<str>s, False):
        return True
    return bool(s) and v.dns1123_label_errors(s) is None


cdef bint _same_json(object a, object b) except -1:
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
            if not _same_json(<object>va, <object>vb):
                return False
        return True
    if t is list:
        n = len(<list>a)
        if n != len(<list>b):
            return False
        for i in range(n):
            if not _same_json((<list>a)[i], (<list>b)[i]):
                return False
        return True
    if t is float:
        x, y = a, b
        return x == y and copysign(1.0, x) == copysign(1.0, y)
    if t is bool:
        return False  # True and False are single objects: a is not b
    return a is None and b is None


cdef inline bint _holds(list objs, object x):
    """x is one of objs (identity, not ==)."""
    for o in objs:
        if o is x:
            return True
    return False


cdef inline int _two_digits(str s, Py_ssize_t i):
    """The number written by s[i:i+2] in ASCII digits, else -1."""
    cdef Py_UCS4 a = s[i]
    cdef Py_UCS4 b = s[i + 1]
    if a < u'0' or a > u'9' or b < u'0' or b > u'9':
        return -1
    return (<int>a - 48) * 10 + (<int>b - 48)


cdef object _fast_time_ns(str s, BulkCaches c):
    """``YYYY-MM-DDTHH:MM:SSZ`` (ASCII digits) as parse_time_ns reads it, else None."""
    if len(s) != 20 or s[19] != u'Z' or s[10] != u'T' or s[13] != u':' or s[16] != u':' or not s.isascii():
        return None
    date = s[:10]
    day = c.days.get(date)
    if day is None:
        try:
            day = parse_time_ns(date + "T00:00:00Z", "", "")
        except InputError:
            return None
        c.days[date] = day
    cdef int h = _two_digits(s, 11)
    cdef int mi = _two_digits(s, 14)
    cdef int sec = _two_digits(s, 17)
    if h < 0 or mi < 0 or sec < 0 or h > 23 or mi > 59 or sec > 59:  # datetime's ranges
        return None
    cdef long long ns = (<long long>((h * 60 + mi) * 60 + sec)) * 1_000_000_000
    return day + ns


# --- pod sets -------------------------------------------------------------------------------


cdef tuple _fast_pod_set(object raw, object api, BulkCaches c, list used):
    """parse_workload's _pod_set for a valid pod set: (PodSet, over limits); None otherwise.
    used: the template specs of the Workload's pod sets before this one, which
    keep their own objects (see SharedTemplates)."""
    if type(raw) is not dict:
        return None
    cdef dict d = <dict>raw
    for k in d:
        if k not in _POD_SET_FIELDS:
            return None
    topology = None
    if d.get("topologyRequest") is not None:
        try:
            topology = topology_request(d["topologyRequest"], "", "", api)
        except Exception:  # parse_workload raises it, with the object and field
            return None
    name = d.get("name")
    if name is None or name == "":
        name = "main"
    elif not _is_label(name):
        return None
    count = d.get("count", 1)
    if count is None:
        count = 1
    elif type(count) is not int or not (0 <= count <= INT32_MAX):
        return None
    min_count = d.get("minCount")
    if min_count is not None and (type(min_count) is not int or not (1 <= min_count <= count)):
        return None
    template_obj = d.get("template")
    if type(template_obj) is not dict:
        return None
    cdef dict template = <dict>template_obj
    spec_obj = template.get("spec")
    if type(spec_obj) is not dict:
        return None
    for k in template:
        if type(k) is not str:
            return None
    cdef dict spec = <dict>spec_obj
    cdef TemplateResult hit = _recent_template(spec, c)
    if hit is None:
        key = exact_key(spec)
        if key is None:
            return None
        hit = c.templates.get(key)
        if hit is not None and hit.spec is not spec and hit.spec != spec:
            hit = None
        if hit is not None:
            _met(hit, c)
    if hit is not None and hit.spec is not spec and not _holds(used, hit.spec):  # equal values: keep one copy
        template["spec"] = spec = hit.spec
    if hit is None:
        try:
            requests, over_limits = pod_requests(spec, "", "")
            if spec.get("nodeSelector") is not None:
                v.string_map(spec["nodeSelector"], "", "")
            affinity = required_affinity(spec, "", "")
            tols = None
            if spec.get("tolerations") is not None:
                tols = v.tolerations(spec["tolerations"], "", "", strict=False)
        except Exception:  # parse_workload raises it, with the object and field
            return None
        hit = TemplateResult(spec, requests, over_limits, affinity, tols)
        c.templates[key] = hit
        _met(hit, c)
    node_selector = spec.get("nodeSelector")  # string_map gives the mapping itself
    ps = _PodSet.make((
        name,
        count,
        dict(hit.requests),
        min_count,
        {} if node_selector is None else node_selector,
        hit.affinity,
        [] if hit.tolerations is None else list(hit.tolerations),
        0,
        None,
        topology,
        # the template read, by which the engine's arrays may key the pod set
        # (engine/_pending.pyx): not with a topology request, which the key leaves out
        spec if topology is None else None,
    ))
    used.append(spec)
    return ps, hit.over_limits


cdef TemplateResult _recent_template(dict spec, BulkCaches c):
    """One of the last templates met, if spec is the same JSON value, else None.
    The very object first (templates shared as they were read: no comparison)."""
    cdef TemplateResult r
    for r in c.recent:
        if r.spec is spec:
            return r
    for r in c.recent:
        if _same_json(spec, r.spec):
            return r
    return None


cdef int _met(TemplateResult r, BulkCaches c) except -1:
    """r is the latest template met."""
    cdef list recent = c.recent
    recent.insert(0, r)
    if len(recent) > RECENT:
        recent.pop()
    return 0


cdef list _fast_pod_sets(dict spec, object api, BulkCaches c):
    """parse_workload's _pod_sets for valid pod sets; None otherwise."""
    raw_sets = spec.get("podSets")
    if type(raw_sets) is not list or not (POD_SETS_MIN <= len(<list>raw_sets) <= POD_SETS_MAX):
        return None
    cdef list pod_sets = []
    cdef list over_limits = []
    cdef int with_min = 0
    cdef tuple found
    cdef list used = []
    for raw in <list>raw_sets:
        found = _fast_pod_set(raw, api, c, used)
        if found is None:
            return None
        ps = found[0]
        pod_sets.append(ps)
        over_limits.append(found[1])
        if ps.min_count is not None:
            with_min += 1
    if len(pod_sets) > 1 and len({ps.name for ps in pod_sets}) != len(pod_sets):
        return None  # duplicate names
    if with_min > 1:
        return None
    for over in over_limits:
        if over:  # a container requests more than its limit
            msg = resources_validation_message(over_limits)
            for ps in pod_sets:
                ps.resources_validation_error = msg
            break
    return pod_sets


# --- the rest of the spec, metadata ----------------------------------------------------------


cdef tuple _fast_priority(dict spec, object api, str ns, str name, priority_classes, pod_priority_classes):
    """parse_workload's (priority, class): a plain int32 priority directly,
    a class through read_priority; None when that raises."""
    if (api == V1BETA1 and "priorityClassName" not in spec and "priorityClassSource" not in spec) or (
        api == V1BETA2 and "priorityClassRef" not in spec
    ):
        prio = spec.get("priority")
        if prio is None:
            return 0, None
        if type(prio) is int and INT32_MIN <= prio <= INT32_MAX:
            return prio, None
        return None
    try:
        return read_priority(spec, api, f"Workload/{ns}/{name}", priority_classes, pod_priority_classes)
    except InputError:
        return None


cdef tuple _fast_header(dict obj, object api, BulkCaches c):
    """(metadata, spec, name, namespace) of a Workload with known top-level and
    spec fields and valid metadata, else None."""
    for k in obj:
        if k not in _TOP_SET:
            return None
    md_obj = obj.get("metadata")
    if type(md_obj) is not dict:
        return None
    cdef dict md = <dict>md_obj
    for k in md:
        if type(k) is not str:
            return None
    name = md.get("name")
    if not _is_subdomain(name):
        return None
    ns = md.get("namespace")
    if ns is None or ns == "":
        ns = "default"
    elif not _is_label(ns):
        return None
    spec_obj = obj.get("spec")
    if type(spec_obj) is not dict:
        return None
    cdef frozenset fields = _SPEC_FIELDS.get(api)
    if fields is None:
        return None
    for k in <dict>spec_obj:
        if k not in fields:
            return None
    labels = md.get("labels")
    annotations = md.get("annotations")
    if labels is not None or annotations is not None:
        ref = f"Workload/{ns}/{name}"
        try:  # rare: validated as parse_workload does
            if labels is not None:
                v.labels(labels, ref, "metadata.labels")
            if annotations is not None:
                v.string_map(annotations, ref, "metadata.annotations")
        except InputError:
            return None
    return md, spec_obj, name, ns



# --- status ---------------------------------------------------------------------------------


cdef object _fast_cond_time(dict cond, BulkCaches c):
    """parse_time_ns of a condition's lastTransitionTime, None when it raises."""
    ltt = cond["lastTransitionTime"]
    ns = _fast_time_ns(<str>ltt, c) if type(ltt) is str else None
    if ns is None:
        try:
            ns = parse_time_ns(ltt, "", "")
        except InputError:
            return None
    return ns


cdef object _fast_admission(object raw, list pod_sets):
    """workload_status.read_admission (its memo of equal admissions) for a valid admission; None otherwise."""
    try:
        return read_admission(raw, "", pod_sets)
    except InputError:
        return None


cdef tuple _fast_status(dict status, list pod_sets, object creation, BulkCaches c):
    """workload_status.workload_status of the common status (valid conditions,
    a valid admission or none, no admissionChecks, reclaimablePods or
    unhealthyNodes) and whether pods_ready_status has anything to read; None
    for anything else (then workload_status reads it, and names any error)."""
    if status.get("admissionChecks") is not None or status.get("reclaimablePods") is not None:
        return None
    if status.get("unhealthyNodes"):
        return None
    cdef dict conds = plain_conditions(status)
    if conds is None:
        return None
    reserved = conds.get("QuotaReserved")
    cdef bint has_reservation = reserved is not None and (<dict>reserved).get("status") == "True"
    admission = None
    admission_ns = None
    adm_raw = status.get("admission")
    if adm_raw is not None:
        admission = _fast_admission(adm_raw, pod_sets)
        if admission is None:
            return None
        if has_reservation:
            admission_ns = _fast_cond_time(<dict>reserved, c)
            if admission_ns is None:
                return None
        else:
            admission_ns = creation
    elif has_reservation:
        return None  # an error: admission required
    finished = conds.get("Finished", {}).get("status") == "True"
    queue_order_ns = None
    ev = conds.get("Evicted")
    if ev is not None and (<dict>ev).get("status") == "True" and (
        (<dict>ev).get("reason") in EVICTION_REASONS_REORDERING
    ):
        queue_order_ns = _fast_cond_time(<dict>ev, c)
        if queue_order_ns is None:
            return None
    admitted = conds.get("Admitted", {}).get("status") == "True"
    if admitted and admission is not None and _fast_cond_time(<dict>conds["Admitted"], c) is None:
        return None  # its time, read during the cycles, is checked by workload_status
    pods_ready = "PodsReady" in conds or status.get("requeueState") is not None
    return admission, admission_ns, finished, queue_order_ns, [], admitted, pods_ready


def fast_status(dict status, list pod_sets, object creation, BulkCaches caches):
    """_fast_status, for tests: workload_status's tuple and whether
    pods_ready_status reads anything, or None."""
    return _fast_status(status, pod_sets, creation, caches)


# --- the Workload ----------------------------------------------------------------------------


def fast_workload(
    object obj,
    object api,
    object position,
    priority_classes,
    pod_priority_classes,
    BulkCaches caches,
):
    """parse_workload(obj, ...) for a valid Workload of the common shape, else None."""
    if type(obj) is not dict or type(api) is not str:
        return None
    cdef dict o = <dict>obj
    cdef tuple header = _fast_header(o, api, caches)
    if header is None:
        return None
    cdef dict md = header[0]
    cdef dict spec = header[1]
    cdef str name = header[2]
    cdef str ns = header[3]

    # 1. pod sets
    cdef list pod_sets = _fast_pod_sets(spec, api, caches)
    if pod_sets is None:
        return None

    # 2. queue, priority, active (and a valid maximumExecutionTimeSeconds)
    queue = spec.get("queueName")
    if queue is None:
        queue = ""
    elif type(queue) is not str or (queue and not _is_subdomain(queue)):
        return None
    active = spec.get("active")
    if active is None:
        active = True
    elif type(active) is not bool:
        return None
    met = spec.get("maximumExecutionTimeSeconds")
    if met is not None and (type(met) is not int or not (1 <= met <= INT32_MAX)):
        return None
    cdef tuple found = _fast_priority(spec, api, ns, name, priority_classes, pod_priority_classes)
    if found is None:
        return None
    priority, pclass = found

    # 3. identity and times: creationTimestamp (the input position when absent)
    ts = md.get("creationTimestamp")
    if ts is None:
        creation = position
    else:
        creation = _fast_time_ns(<str>ts, caches) if type(ts) is str else None
        if creation is None:
            try:
                creation = parse_time_ns(ts, f"Workload/{ns}/{name}", "metadata.creationTimestamp")
            except InputError:
                return None
    uid = md.get("uid")
    if not uid:
        uid = f"{ns}/{name}"
    elif type(uid) is not str:
        return None

    # 4. status
    status = o.get("status")
    cdef tuple read = None
    cdef bint pods_ready = False
    if status is None:  # not admitted, no checks
        admission, admission_ns, finished, queue_order_ns, checks, admitted = None, None, False, None, [], False
    else:
        if type(status) is dict:
            read = _fast_status(<dict>status, pod_sets, creation, caches)
        if read is not None:
            admission, admission_ns, finished, queue_order_ns, checks, admitted, pods_ready = read
        else:
            pods_ready = True
            try:
                admission, admission_ns, finished, queue_order_ns, checks, admitted = workload_status(
                    o, f"Workload/{ns}/{name}", pod_sets, creation
                )
            except InputError:
                return None

    wl = _Workload.make((
        ns, name, queue, pod_sets, creation, priority, pclass, uid, active, admission, admission_ns, finished,
        queue_order_ns, False, "", None, 0, None, checks, admitted, o, None,  # raw: the document itself
    ))
    if pods_ready:
        try:
            pods_ready_status(o, f"Workload/{ns}/{name}", wl)
        except InputError:
            return None
    return wl


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
            if _same_json(value, r):
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
    values and key order: _same_json) gets that spec object; else its pod
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
            if kept is not tspec and not _holds(used, kept):
                (<dict>template)["spec"] = tspec = kept
            used.append(tspec)
        return 0
