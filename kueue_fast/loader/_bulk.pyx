# distutils: language = c++
# cython: language_level=3
"""The bulk path for Workloads, compiled: from parsed objects to model
Workloads (fast_workload, which builds them with loader/_objects.pyx's
SlotsMaker; the documents' equal templates were shared as they were read, by
its SharedTemplates). Pending Workloads to the engine's arrays:
engine/_pending.pyx.

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
    template is first compared with the few last ones met (same_json: same
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
INTERFACE = 8

import dataclasses

from kueue_fast.loader._objects cimport SlotsMaker, holds, same_json

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
    keep their own objects (see _objects.SharedTemplates)."""
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
    if hit is not None and hit.spec is not spec and not holds(used, hit.spec):  # equal values: keep one copy
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
        if same_json(spec, r.spec):
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
