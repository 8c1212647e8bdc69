"""A Workload's spec, the exact path: pod sets and their per-pod requests,
node affinity, priority (workload_webhook.go's and the CRD's rules).

:data:`SPEC_FIELDS` and :data:`POD_SET_FIELDS` are the fields kueue-fast
reads; the controller keeps only those when it reads a Workload from the
cluster (a Workload written by Kueue with fields kueue-fast does not know
still queues). The compiled bulk path (loader/_bulk.pyx) calls
:func:`required_affinity` and :func:`read_priority` for what it does not read itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import error_collection as collect, fields as api_fields, model as m, validation as v
from ..api.errors import InputError, MissingReferenceError
from ..api.requests import OverLimits, pod_requests, resources_validation_message
from .common import _FIELDS, KUEUE_GROUP, V1BETA1, V1BETA2
from .tas import topology_request

# The spec fields of a Workload by apiVersion, and of a pod set: what kueue-fast
# reads. The controller reads Workloads as the API server serves them (v1beta2)
# and keeps only these fields (kube/objects.py workload_model).
SPEC_FIELDS = {api: f.fields["spec"].names for api, f in _FIELDS["Workload"].items()}
V1BETA2_SPEC_FIELDS = SPEC_FIELDS[V1BETA2]
POD_SET_FIELDS = api_fields.POD_SET.names

_WL = _FIELDS["Workload"][V1BETA2]
_POD_SETS = _WL.at("spec.podSets")
POD_SETS_MIN, POD_SETS_MAX = _POD_SETS.min_items or 0, _POD_SETS.max_items or 0
_PRIORITY_CLASS_REF = _WL.at("spec.priorityClassRef")
_PRIORITY_CLASS_SOURCE = _FIELDS["Workload"][V1BETA1].at("spec.priorityClassSource")
_WPC_SOURCE, _POD_PC_SOURCE, _ = api_fields.PRIORITY_CLASS_SOURCES


def _node_selector_terms(raw: object, ref: str, path: str) -> tuple[m.NodeSelectorTerm, ...]:
    terms = []
    for i, traw in enumerate(v.as_list(raw, ref, path)):
        tp = v.index(path, i)
        t = v.as_map(traw, ref, tp)
        groups = []
        for fld in ("matchExpressions", "matchFields"):
            reqs = []
            for j, rraw in enumerate(v.opt_list(t, fld, ref, tp)):
                rp = v.index(v.child(tp, fld), j)
                r = v.as_map(rraw, ref, rp)
                k = v.as_str(r.get("key", ""), ref, v.child(rp, "key"))
                op = v.enum(r.get("operator"), m.NODE_SELECTOR_OPERATORS, ref, v.child(rp, "operator"))
                vals = tuple(
                    v.as_str(x, ref, v.index(v.child(rp, "values"), n))
                    for n, x in enumerate(v.opt_list(r, "values", ref, rp))
                )
                reqs.append(m.NodeSelectorRequirement(k, op, vals))
            groups.append(tuple(reqs))
        terms.append(m.NodeSelectorTerm(groups[0], groups[1]))
    return tuple(terms)


def required_affinity(spec: Mapping[str, Any], ref: str, path: str) -> tuple[m.NodeSelectorTerm, ...] | None:
    aff = spec.get("affinity")
    if aff is None:
        return None
    ap = v.child(path, "affinity")
    aff = v.as_map(aff, ref, ap)
    na = v.opt_map(aff, "nodeAffinity", ref, ap)
    if na is None:
        return None
    np_ = v.child(ap, "nodeAffinity")
    req = v.opt_map(na, "requiredDuringSchedulingIgnoredDuringExecution", ref, np_)
    if req is None:
        return None
    rp = v.child(np_, "requiredDuringSchedulingIgnoredDuringExecution")
    if "nodeSelectorTerms" not in req:
        v.required(ref, v.child(rp, "nodeSelectorTerms"))
    return _node_selector_terms(req["nodeSelectorTerms"], ref, v.child(rp, "nodeSelectorTerms"))


def _pod_set(raw: object, ref: str, path: str, api: str = V1BETA2) -> tuple[m.PodSet, OverLimits]:
    d = v.as_map(raw, ref, path)
    v.check_fields(d, POD_SET_FIELDS, ref, path)
    # PodSetReference: DNS label, CRD default "main"; each field on its own (error_collection.report)
    name = "main"
    with collect.reported():
        if d.get("name") not in (None, ""):
            name = v.object_name(d["name"], ref, v.child(path, "name"), label=True)
    count: int | None = 1
    try:
        if d.get("count") is not None:
            count = v.as_int32(d["count"], ref, v.child(path, "count"), minimum=0)
    except InputError as e:
        collect.report(e)
        count = None
    min_count = None
    with collect.reported():
        if d.get("minCount") is not None:
            mp = v.child(path, "minCount")
            min_count = v.as_int32(d["minCount"], ref, mp, minimum=1)
            # CEL on PodSet (apis/kueue/v1beta2/workload_types.go)
            if count is not None and min_count > count:
                v.invalid(ref, mp, min_count, "minCount should be positive and less or equal to count")
    if d.get("template") is None:
        v.required(ref, v.child(path, "template"))
    tp = v.child(path, "template")
    template = v.as_map(d["template"], ref, tp)
    if template.get("spec") is None:
        v.required(ref, v.child(tp, "spec"))
    sp = v.child(tp, "spec")
    spec = v.as_map(template["spec"], ref, sp)
    try:
        requests, over_limits = pod_requests(spec, sp, ref)
    except InputError as e:
        collect.report(e)
        requests, over_limits = {}, []
    ps = m.PodSet(name=name, count=1 if count is None else count, requests=requests, min_count=min_count)
    with collect.reported():
        if spec.get("nodeSelector") is not None:
            ps.node_selector = v.string_map(spec["nodeSelector"], ref, v.child(sp, "nodeSelector"))
    with collect.reported():
        ps.required_affinity = required_affinity(spec, ref, sp)
    with collect.reported():
        if spec.get("tolerations") is not None:
            ps.tolerations = v.tolerations(spec["tolerations"], ref, v.child(sp, "tolerations"), strict=False)
    with collect.reported():
        if d.get("topologyRequest") is not None:
            ps.topology_request = topology_request(
                d["topologyRequest"], ref, v.child(path, "topologyRequest"), api
            )
    return ps, over_limits


def read_pod_sets(spec: Mapping[str, Any], ref: str, api: str = V1BETA2) -> list[m.PodSet]:
    """spec.podSets: each pod set, names unique, at most one with minCount; a
    pod set whose requests exceed their limits leaves the Workload pending,
    not rejected (resources_validation_error)."""
    if spec.get("podSets") is None:
        v.required(ref, "spec.podSets")
    raw_sets = v.as_list(
        spec["podSets"],
        ref,
        "spec.podSets",
        min_items=_POD_SETS.min_items or 0,
        max_items=_POD_SETS.max_items,
    )
    pod_sets: list[m.PodSet] = []
    over_limits: list[OverLimits] = []
    names: set[str] = set()
    with_min = 0
    for i, raw in enumerate(raw_sets):
        try:  # each pod set on its own (error_collection.report)
            ps, over = _pod_set(raw, ref, f"spec.podSets[{i}]", api)
            if ps.name in names:  # listType=map, listMapKey=name
                v.duplicate(ref, f"spec.podSets[{i}].name", ps.name)
        except InputError as e:
            collect.report(e)
            continue
        names.add(ps.name)
        with_min += ps.min_count is not None
        over_limits.append(over)
        pod_sets.append(ps)
    if with_min > 1:
        v.invalid(ref, "spec.podSets", with_min, "at most one podSet can use minCount")
    msg = resources_validation_message(over_limits)  # pending, not rejected
    if msg is not None:
        for ps in pod_sets:
            ps.resources_validation_error = msg
    return pod_sets


def read_priority(
    spec: Mapping[str, Any],
    api: str,
    ref: str,
    priority_classes: Mapping[str, m.WorkloadPriorityClass] | None,
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass] | None,
) -> tuple[int, str | None]:
    """spec.priority if set, else the value of the referenced class, else 0.
    A named class that does not exist is a MissingReferenceError."""
    prio = v.as_int32(spec["priority"], ref, "spec.priority") if spec.get("priority") is not None else None
    cls: str | None = None
    pod_class = False
    path = ""
    if api == V1BETA1:
        if spec.get("priorityClassName"):
            path = "spec.priorityClassName"
            cls = v.object_name(spec["priorityClassName"], ref, path)
        src = v.opt_enum(spec, "priorityClassSource", _PRIORITY_CLASS_SOURCE.enum, ref, "spec", "")
        pod_class = src == _POD_PC_SOURCE
    elif spec.get("priorityClassRef") is not None:
        if prio is None:  # CEL rule on the v1beta2 WorkloadSpec
            v.invalid(ref, "spec", "object", "priority should not be nil when priorityClassRef is set")
        rp = "spec.priorityClassRef"
        r = v.as_map(spec["priorityClassRef"], ref, rp)
        v.check_fields(r, _PRIORITY_CLASS_REF.names, ref, rp)
        for f in _PRIORITY_CLASS_REF.required:
            if not r.get(f):
                v.required(ref, v.child(rp, f))
        group = v.enum(r["group"], _PRIORITY_CLASS_REF.fields["group"].enum, ref, v.child(rp, "group"))
        kind = v.enum(r["kind"], _PRIORITY_CLASS_REF.fields["kind"].enum, ref, v.child(rp, "kind"))
        # CEL rules on PriorityClassRef
        if group == "scheduling.k8s.io" and kind != "PriorityClass":
            v.invalid(
                ref, rp, "object", "only the PriorityClass kind is allowed for the scheduling.k8s.io group"
            )
        if group == KUEUE_GROUP and kind != "WorkloadPriorityClass":
            v.invalid(
                ref,
                rp,
                "object",
                "only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group",
            )
        path = v.child(rp, "name")
        cls = v.object_name(r["name"], ref, path)
        pod_class = kind == "PriorityClass"
    if prio is not None:
        return prio, cls
    if cls is None:
        return 0, None
    classes = pod_priority_classes if pod_class else priority_classes
    pc = (classes or {}).get(cls)
    if pc is None:
        what = "PriorityClass" if pod_class else "WorkloadPriorityClass"
        raise MissingReferenceError(
            ref, path, f'{what} "{cls}" not found{v.did_you_mean(cls, classes or {})}'
        )
    return pc.value, cls
