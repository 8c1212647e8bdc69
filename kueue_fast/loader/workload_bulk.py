"""The bulk path for Workloads.

build_state reads many Workloads of a few shapes. _fast_workload gives the
same m.Workload as parse_workload for the common shape, or None for anything
else (or anything invalid): then parse_workload runs and raises its error,
so messages never depend on the path. What it saves:
  * names, namespaces, queue names are validated once per distinct value;
  * an RFC 3339 time in whole seconds UTC is split by position (days of a
    date are computed once by parse_time_ns);
  * a pod template's results (requests, resource validation reasons, node
    affinity, tolerations) are computed once per distinct template. The key
    is exact: orjson's serialization (it tells 1, 1.0 and true apart, refuses
    non-string keys and non-JSON values) plus == against the template kept
    with the entry (which tells apart what orjson writes alike, NaN and null).
tests/test_fast_loading.py checks both paths give equal states and errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from .. import model as m
from .. import validation as v
from ..errors import InputError
from ..fastjson import exact_key
from ..requests import OverLimits, pod_requests, resources_validation_message
from .common import (
    _TOP,
    V1BETA1,
    V1BETA2,
    parse_time_ns,
)
from .workload import (
    _POD_SETS_MAX,
    _POD_SETS_MIN,
    POD_SET_FIELDS,
    SPEC_FIELDS,
    _pods_ready_status,
    _priority,
    _required_affinity,
    _workload_status,
)

_TOP_SET = frozenset(_TOP)


class _TemplateResult:
    """What a pod set's template spec gives, whatever the workload."""

    __slots__ = ("spec", "requests", "over_limits", "affinity", "tolerations")

    def __init__(
        self,
        spec: dict[str, Any],
        requests: dict[str, int],
        over_limits: OverLimits,
        affinity: tuple[m.NodeSelectorTerm, ...] | None,
        tolerations: list[m.Toleration] | None,
    ) -> None:
        self.spec = spec
        self.requests = requests
        self.over_limits = over_limits
        self.affinity = affinity
        self.tolerations = tolerations


class _BulkCaches:
    """Results of validations that depend only on a value, for one build_state."""

    def __init__(self) -> None:
        self.subdomains: set[str] = set()  # valid DNS-1123 subdomains (names, queue names)
        self.labels: set[str] = set()  # valid DNS-1123 labels (namespaces, pod set names)
        self.days: dict[str, int] = {}  # "YYYY-MM-DD" -> ns at 00:00:00Z
        self.templates: dict[tuple[str, bytes], _TemplateResult] = {}


def _is_subdomain(s: object, c: _BulkCaches) -> TypeGuard[str]:
    if type(s) is not str:
        return False
    if s in c.subdomains:
        return True
    if not s or v.dns1123_subdomain_errors(s) is not None:
        return False
    c.subdomains.add(s)
    return True


def _is_label(s: object, c: _BulkCaches) -> TypeGuard[str]:
    if type(s) is not str:
        return False
    if s in c.labels:
        return True
    if not s or v.dns1123_label_errors(s) is not None:
        return False
    c.labels.add(s)
    return True


def _fast_time_ns(s: str, c: _BulkCaches) -> int | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` (ASCII digits) as parse_time_ns reads it, else None."""
    if len(s) != 20 or s[19] != "Z" or s[10] != "T" or s[13] != ":" or s[16] != ":" or not s.isascii():
        return None
    day = c.days.get(s[:10])
    if day is None:
        try:
            day = parse_time_ns(s[:10] + "T00:00:00Z", "", "")
        except InputError:
            return None
        c.days[s[:10]] = day
    hh, mm, ss = s[11:13], s[14:16], s[17:19]
    if not (hh.isdigit() and mm.isdigit() and ss.isdigit()):
        return None
    h, mi, sec = int(hh), int(mm), int(ss)
    if h > 23 or mi > 59 or sec > 59:  # datetime's ranges
        return None
    return day + ((h * 60 + mi) * 60 + sec) * 1_000_000_000


def _fast_pod_set(d: object, c: _BulkCaches) -> tuple[m.PodSet, OverLimits] | None:
    """parse_workload's _pod_set for a valid pod set; None otherwise."""
    if type(d) is not dict or not d.keys() <= POD_SET_FIELDS or d.get("topologyRequest") is not None:
        return None
    name = d.get("name")
    if name is None or name == "":
        name = "main"
    elif not _is_label(name, c):
        return None
    count = d.get("count", 1)
    if count is None:
        count = 1
    elif type(count) is not int or not 0 <= count <= v.INT32_MAX:
        return None
    min_count = d.get("minCount")
    if min_count is not None and (type(min_count) is not int or not 1 <= min_count <= count):
        return None
    template = d.get("template")
    if type(template) is not dict:
        return None
    spec = template.get("spec")
    if type(spec) is not dict or any(type(k) is not str for k in template):
        return None
    key = exact_key(spec)
    if key is None:
        return None
    hit = c.templates.get((name, key))
    if hit is None or (hit.spec is not spec and hit.spec != spec):
        try:
            requests, over_limits = pod_requests(spec, "", "")
            if spec.get("nodeSelector") is not None:
                v.string_map(spec["nodeSelector"], "", "")
            affinity = _required_affinity(spec, "", "")
            tols = None
            if spec.get("tolerations") is not None:
                tols = v.tolerations(spec["tolerations"], "", "", strict=False)
        except Exception:  # noqa: BLE001 - parse_workload raises it, with the object and field
            return None
        hit = _TemplateResult(spec, requests, over_limits, affinity, tols)
        c.templates[(name, key)] = hit
    ps = m.PodSet(name=name, count=count, requests=dict(hit.requests), min_count=min_count)
    ns_raw = spec.get("nodeSelector")
    if ns_raw is not None:
        ps.node_selector = ns_raw  # string_map gives the mapping itself
    ps.required_affinity = hit.affinity
    if hit.tolerations is not None:
        ps.tolerations = list(hit.tolerations)
    return ps, hit.over_limits


def _fast_pod_sets(spec: dict[str, Any], c: _BulkCaches) -> list[m.PodSet] | None:
    """parse_workload's _pod_sets for valid pod sets; None otherwise."""
    raw_sets = spec.get("podSets")
    if type(raw_sets) is not list or not _POD_SETS_MIN <= len(raw_sets) <= _POD_SETS_MAX:
        return None
    pod_sets: list[m.PodSet] = []
    over_limits: list[OverLimits] = []
    with_min = 0
    for raw in raw_sets:
        found = _fast_pod_set(raw, c)
        if found is None:
            return None
        ps, over = found
        pod_sets.append(ps)
        over_limits.append(over)
        with_min += ps.min_count is not None
    if len(pod_sets) > 1 and len({ps.name for ps in pod_sets}) != len(pod_sets):
        return None  # duplicate names
    if with_min > 1:
        return None
    msg = resources_validation_message(over_limits)
    if msg is not None:
        for ps in pod_sets:
            ps.resources_validation_error = msg
    return pod_sets


def _fast_queue_and_active(spec: dict[str, Any], c: _BulkCaches) -> tuple[str, bool] | None:
    """(spec.queueName, spec.active) as parse_workload reads them (and a valid
    maximumExecutionTimeSeconds), else None."""
    queue = spec.get("queueName")
    if queue is None:
        queue = ""
    elif type(queue) is not str or (queue and not _is_subdomain(queue, c)):
        return None
    active = spec.get("active")
    if active is None:
        active = True
    elif type(active) is not bool:
        return None
    met = spec.get("maximumExecutionTimeSeconds")
    if met is not None and (type(met) is not int or not 1 <= met <= v.INT32_MAX):
        return None
    return queue, active


def _fast_priority(
    spec: dict[str, Any],
    api: str,
    ref: str,
    priority_classes: Mapping[str, m.WorkloadPriorityClass],
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass],
) -> tuple[int, str | None] | None:
    """parse_workload's (priority, class): a plain int32 priority directly,
    a class through _priority; None when that raises."""
    if (api == V1BETA1 and "priorityClassName" not in spec and "priorityClassSource" not in spec) or (
        api == V1BETA2 and "priorityClassRef" not in spec
    ):
        prio = spec.get("priority")
        if prio is None:
            return 0, None
        if type(prio) is int and v.INT32_MIN <= prio <= v.INT32_MAX:
            return prio, None
        return None
    try:
        return _priority(spec, api, ref, priority_classes, pod_priority_classes)
    except InputError:
        return None


def _fast_name(md: dict[str, Any], c: _BulkCaches) -> tuple[str, str] | None:
    """(name, namespace) as _metadata gives them, else None."""
    name = md.get("name")
    if not _is_subdomain(name, c):
        return None
    ns = md.get("namespace")
    if ns is None or ns == "":
        ns = "default"
    elif not _is_label(ns, c):
        return None
    return name, ns


def _fast_creation_ns(md: dict[str, Any], ref: str, position: int, c: _BulkCaches) -> int | None:
    """metadata.creationTimestamp in ns (the input position when absent), else None."""
    ts = md.get("creationTimestamp")
    if ts is None:
        return position
    if type(ts) is str and (fast_ts := _fast_time_ns(ts, c)) is not None:
        return fast_ts
    try:
        return parse_time_ns(ts, ref, "metadata.creationTimestamp")
    except InputError:
        return None


_Status = tuple[m.Admission | None, int | None, bool, int | None, list[m.AdmissionCheckState], bool]


def _no_status() -> _Status:
    """A Workload without status: not admitted, no checks (a new list each time)."""
    return None, None, False, None, [], False


def _fast_status(obj: dict[str, Any], ref: str, pod_sets: list[m.PodSet], creation: int) -> _Status | None:
    """_workload_status, or None when it raises."""
    try:
        return _workload_status(obj, ref, pod_sets, creation)
    except InputError:
        return None


def _fast_header(
    obj: dict[str, Any], api: str, c: _BulkCaches
) -> tuple[dict[str, Any], dict[str, Any], str, str] | None:
    """(metadata, spec, name, namespace) of a Workload with known top-level and
    spec fields and valid metadata, else None."""
    if not obj.keys() <= _TOP_SET:
        return None
    md = obj.get("metadata")
    if type(md) is not dict or any(type(k) is not str for k in md):
        return None
    named = _fast_name(md, c)
    if named is None:
        return None
    name, ns = named
    spec = obj.get("spec")
    if type(spec) is not dict or not spec.keys() <= SPEC_FIELDS[api]:
        return None
    ref = f"Workload/{ns}/{name}"
    try:  # rare: validated as parse_workload does
        if md.get("labels") is not None:
            v.labels(md["labels"], ref, "metadata.labels")
        if md.get("annotations") is not None:
            v.string_map(md["annotations"], ref, "metadata.annotations")
    except InputError:
        return None
    return md, spec, name, ns


def _fast_workload(
    obj: dict[str, Any],
    api: str,
    position: int,
    priority_classes: Mapping[str, m.WorkloadPriorityClass],
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass],
    c: _BulkCaches,
) -> m.Workload | None:
    """parse_workload(obj, ...) for a valid Workload of the common shape, else None."""
    header = _fast_header(obj, api, c)
    if header is None:
        return None
    md, spec, name, ns = header
    ref = f"Workload/{ns}/{name}"

    # 1. pod sets
    pod_sets = _fast_pod_sets(spec, c)
    if pod_sets is None:
        return None

    # 2. queue, priority, active
    queue_active = _fast_queue_and_active(spec, c)
    found = _fast_priority(spec, api, ref, priority_classes, pod_priority_classes)
    if queue_active is None or found is None:
        return None
    queue, active = queue_active
    priority, pclass = found

    # 3. identity and times
    creation = _fast_creation_ns(md, ref, position, c)
    if creation is None:
        return None
    uid = md.get("uid")
    if not uid:
        uid = f"{ns}/{name}"
    elif type(uid) is not str:
        return None

    # 4. status
    status = _no_status() if obj.get("status") is None else _fast_status(obj, ref, pod_sets, creation)
    if status is None:
        return None
    admission, admission_ns, finished, queue_order_ns, checks, admitted = status

    wl = m.Workload(
        namespace=ns,
        name=name,
        queue_name=queue,
        pod_sets=pod_sets,
        creation_ns=creation,
        priority=priority,
        priority_class=pclass,
        uid=uid,
        active=active,
        admission=admission,
        admission_ns=admission_ns,
        finished=finished,
        queue_order_ns=queue_order_ns,
        admission_checks=checks,
        admitted_condition=admitted,
        raw=dict(obj),
    )
    if obj.get("status") is not None:
        try:
            _pods_ready_status(obj, ref, wl)
        except InputError:
            return None
    return wl
