"""Workload -> ``model.Workload``, the exact path: pod sets and their
per-pod requests, priority, timestamps and status (admission, admission
checks, conditions, reclaimable pods, PodsReady), with workload_webhook.go's
and the CRD's rules. Every Workload error message comes from here (the bulk
path of ``kueue_fast._bulk`` falls back to it).

:data:`SPEC_FIELDS` and :data:`POD_SET_FIELDS` are the fields kueue-fast
reads; the controller keeps only those when it reads a Workload from the
cluster (a Workload written by Kueue with fields kueue-fast does not know
still queues).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import _compiled
from ..api import error_collection as collect
from ..api import fields as api_fields
from ..api import model as m
from ..api import validation as v
from ..api.errors import InputError, MissingReferenceError
from ..api.requests import OverLimits, pod_requests, resources_validation_message
from .common import (
    _FIELDS,
    KUEUE_GROUP,
    V1BETA1,
    V1BETA2,
    _check_type,
    _conditions,
    _metadata,
    _status,
    parse_time_ns,
)
from .fastjson import exact_key
from .tas import topology_assignment, topology_request

# The spec fields of a Workload by apiVersion, and of a pod set: what kueue-fast
# reads. The controller reads Workloads as the API server serves them (v1beta2)
# and keeps only these fields (kube/objects.py workload_model).
SPEC_FIELDS = {api: f.fields["spec"].names for api, f in _FIELDS["Workload"].items()}
V1BETA2_SPEC_FIELDS = SPEC_FIELDS[V1BETA2]
POD_SET_FIELDS = api_fields.POD_SET.names

_WL = _FIELDS["Workload"][V1BETA2]
_POD_SETS = _WL.at("spec.podSets")
_POD_SETS_MIN, _POD_SETS_MAX = _POD_SETS.min_items or 0, _POD_SETS.max_items or 0
_PRIORITY_CLASS_REF = _WL.at("spec.priorityClassRef")
_PRIORITY_CLASS_SOURCE = _FIELDS["Workload"][V1BETA1].at("spec.priorityClassSource")
_POD_SET_ASSIGNMENTS = _WL.at("status.admission.podSetAssignments")
_RECLAIMABLE_PODS = _WL.at("status.reclaimablePods")
_CHECK_STATES = _WL.at("status.admissionChecks")
_WL_RENAMED = {
    V1BETA1: {
        "priorityClassRef": v.version_rename(V1BETA1, "priorityClassName", "v1beta2", "priorityClassRef")
    },
    V1BETA2: {
        old: v.version_rename(V1BETA2, "priorityClassRef", "v1beta1", old)
        for old in ("priorityClassName", "priorityClassSource")
    },
}
_WPC_SOURCE, _POD_PC_SOURCE, _ = api_fields.PRIORITY_CLASS_SOURCES
_EVICTION_REASONS_REORDERING = ("PodsReadyTimeout", "AdmissionCheck")


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


def _required_affinity(spec: Mapping[str, Any], ref: str, path: str) -> tuple[m.NodeSelectorTerm, ...] | None:
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
        ps.required_affinity = _required_affinity(spec, ref, sp)
    with collect.reported():
        if spec.get("tolerations") is not None:
            ps.tolerations = v.tolerations(spec["tolerations"], ref, v.child(sp, "tolerations"), strict=False)
    with collect.reported():
        if d.get("topologyRequest") is not None:
            ps.topology_request = topology_request(
                d["topologyRequest"], ref, v.child(path, "topologyRequest"), api
            )
    return ps, over_limits


def _cond_time(c: dict[str, Any], ref: str, path: str) -> int:
    return parse_time_ns(c["lastTransitionTime"], ref, path)


# _checked_admission's result by an exact key of what it reads (the admission,
# the pod sets' names and counts): many Workloads hold equal admissions. Valid
# ones only, at most _ADMISSIONS_KEPT; none with a null in its key (orjson writes
# NaN as null: equal keys are equal values otherwise, fastjson.exact_key).
_admissions: dict[tuple[object, ...], m.Admission] = {}
_ADMISSIONS_KEPT = 1 << 14


def _admission(raw: object, ref: str, pod_sets: list[m.PodSet]) -> m.Admission:
    """status.admission (workload_webhook.go validateAdmission: pod set names
    exist; each resourceUsage is a multiple of the count), a copy of the one
    read before when the same with the same pod sets."""
    raw_key = exact_key(raw)
    if raw_key is None or b"null" in raw_key:
        return _checked_admission(raw, ref, pod_sets)
    key = (raw_key, *((ps.name, ps.count) for ps in pod_sets))
    kept = _admissions.get(key)
    if kept is None:
        kept = _checked_admission(raw, ref, pod_sets)
        if len(_admissions) >= _ADMISSIONS_KEPT:
            _admissions.clear()
        _admissions[key] = kept
    return m.Admission(
        kept.cluster_queue,
        [
            m.PodSetAssignment(
                a.name, a.count, dict(a.flavors), dict(a.resource_usage), a.topology_assignment
            )
            for a in kept.pod_set_assignments
        ],
    )


def _checked_admission(raw: object, ref: str, pod_sets: list[m.PodSet]) -> m.Admission:
    path = "status.admission"
    d = v.as_map(raw, ref, path)
    cq = v.opt_str(d, "clusterQueue", ref, path)
    if not cq:
        v.required(ref, v.child(path, "clusterQueue"))
    v.object_name(cq, ref, v.child(path, "clusterQueue"))
    by_name = {ps.name: ps for ps in pod_sets}
    assignments = []
    ap = v.child(path, "podSetAssignments")
    seen: set[str] = set()
    assignments_raw = v.opt_list(d, "podSetAssignments", ref, path, max_items=_POD_SET_ASSIGNMENTS.max_items)
    for i, praw in enumerate(assignments_raw):
        pp = v.index(ap, i)
        pa = v.as_map(praw, ref, pp)
        name = v.opt_str(pa, "name", ref, pp, "main") or "main"
        if name not in by_name:
            v.fail(ref, v.child(pp, "name"), f'Not found: "{name}"')
        if name in seen:
            v.duplicate(ref, v.child(pp, "name"), name)
        seen.add(name)
        flavors = v.string_map(pa.get("flavors") or {}, ref, v.child(pp, "flavors"))
        # A missing count means the pod set's count (PodSetAssignment.count docs);
        # the webhook only checks divisibility by an explicit count.
        explicit = None
        if pa.get("count") is not None:
            explicit = v.as_int32(pa["count"], ref, v.child(pp, "count"), minimum=0)
        count = by_name[name].count if explicit is None else explicit
        usage: dict[str, int] = {}
        up = v.child(pp, "resourceUsage")
        for rname, q in v.as_map(pa.get("resourceUsage") or {}, ref, up).items():
            val = v.quantity(q, rname, ref, v.key(up, rname))
            if explicit and val % explicit != 0:
                v.invalid(ref, v.key(up, rname), str(q), f"is not a multiple of {count}")
            usage[rname] = val
        topology = None
        if pa.get("topologyAssignment") is not None:
            topology = topology_assignment(pa["topologyAssignment"], ref, v.child(pp, "topologyAssignment"))
        assignments.append(m.PodSetAssignment(name, count, dict(flavors), usage, topology))
    return m.Admission(cq, assignments)


def _priority(
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


def _check_states(
    status: Mapping[str, Any], ref: str, pod_sets: list[m.PodSet] | None
) -> list[m.AdmissionCheckState]:
    """status.admissionChecks (listType=map on name, state in the CRD's enum;
    workload_webhook.go validatePodSetUpdates: an update names a pod set,
    unchecked when ``pod_sets`` is None)."""
    p = "status.admissionChecks"
    out: list[m.AdmissionCheckState] = []
    raws = v.opt_list(status, "admissionChecks", ref, "status", max_items=_CHECK_STATES.max_items)
    for i, raw in enumerate(raws):
        try:  # each check state on its own (error_collection.report)
            out.append(_check_state(raw, v.index(p, i), ref, out, pod_sets))
        except InputError as e:
            collect.report(e)
    return out


def _check_state(
    raw: object, ip: str, ref: str, before: list[m.AdmissionCheckState], pod_sets: list[m.PodSet] | None
) -> m.AdmissionCheckState:
    c = v.as_map(raw, ref, ip)
    name = v.as_str(c.get("name", ""), ref, v.child(ip, "name"))
    if not name:
        v.required(ref, v.child(ip, "name"))
    if any(x.name == name for x in before):
        v.duplicate(ref, v.child(ip, "name"), name)
    if c.get("state") in (None, ""):
        v.required(ref, v.child(ip, "state"))
    state = v.enum(c["state"], api_fields.CHECK_STATE_NAMES, ref, v.child(ip, "state"))
    message = v.opt_str(c, "message", ref, ip)
    retries = c.get("retryCount")
    count = 0 if retries is None else v.as_int32(retries, ref, v.child(ip, "retryCount"), minimum=0)
    after = c.get("requeueAfterSeconds")
    after_path = v.child(ip, "requeueAfterSeconds")
    after_s = None if after is None else v.as_int32(after, ref, after_path, minimum=0)
    ltt = c.get("lastTransitionTime")
    ltt_ns = None if ltt in (None, "") else parse_time_ns(ltt, ref, v.child(ip, "lastTransitionTime"))
    up = v.child(ip, "podSetUpdates")
    known = [ps.name for ps in pod_sets or ()]
    for j, u in enumerate(v.opt_list(c, "podSetUpdates", ref, ip)):
        upd = v.as_map(u, ref, v.index(up, j))
        if pod_sets is not None and upd.get("name") not in known:
            v.unsupported(ref, v.child(v.index(up, j), "name"), upd.get("name"), sorted(known))
    return m.AdmissionCheckState(name, state, message, count, after_s, ltt_ns)


def _workload_status(
    obj: Mapping[str, Any], ref: str, pod_sets: list[m.PodSet] | None, creation: int
) -> tuple[m.Admission | None, int | None, bool, int | None, list[m.AdmissionCheckState], bool]:
    """status: conditions, admission, admissionChecks, reclaimablePods (sets
    the pod sets' ``reclaimable``). Returns (admission, admission_ns, finished,
    queue_order_ns, check states, Admitted=True). ``pod_sets`` is None under
    collect_errors when a pod set was invalid: what names pod sets is left unchecked."""
    status = _status(obj, ref)
    with collect.reported():
        if status.get("unhealthyNodes"):
            feature = "Topology Aware Scheduling node replacement"
            v.not_supported_feature(ref, "status.unhealthyNodes", feature)
    conds: dict[str, dict[str, Any]] = {}
    try:  # each part on its own (error_collection.report)
        conds = _conditions(status, ref)
    except InputError as e:
        collect.report(e)
    reserved = conds.get("QuotaReserved")
    has_reservation = reserved is not None and reserved.get("status") == "True"
    admission = None
    admission_ns = None
    with collect.reported():
        if status.get("admission") is not None:
            if pod_sets is not None:
                admission = _admission(status["admission"], ref, pod_sets)
            admission_ns = (
                _cond_time(reserved, ref, "status.conditions[QuotaReserved].lastTransitionTime")
                if has_reservation and reserved is not None
                else creation
            )
        elif has_reservation:
            v.required(ref, "status.admission", "must be set when the QuotaReserved condition is True")
    finished = conds.get("Finished", {}).get("status") == "True"
    queue_order_ns = None
    ev = conds.get("Evicted")
    with collect.reported():
        if ev is not None and ev.get("status") == "True" and ev.get("reason") in _EVICTION_REASONS_REORDERING:
            queue_order_ns = _cond_time(ev, ref, "status.conditions[Evicted].lastTransitionTime")

    # reclaimablePods (workload_webhook.go validateReclaimablePods)
    with collect.reported():
        if pod_sets is not None and status.get("reclaimablePods") is not None:
            _reclaimable_pods(status, ref, pod_sets)
    checks: list[m.AdmissionCheckState] = []
    with collect.reported():
        checks = _check_states(status, ref, pod_sets)
    admitted = conds.get("Admitted", {}).get("status") == "True"
    with collect.reported():
        if admitted and admission is not None:  # waitForPodsReady reads it during the cycles: checked here
            _cond_time(conds["Admitted"], ref, "status.conditions[Admitted].lastTransitionTime")
    return admission, admission_ns, finished, queue_order_ns, checks, admitted


def _reclaimable_pods(status: Mapping[str, Any], ref: str, pod_sets: list[m.PodSet]) -> None:
    """status.reclaimablePods: each names a pod set, at most its count
    (workload_webhook.go validateReclaimablePods); sets ``reclaimable``."""
    by_name = {ps.name: ps for ps in pod_sets}
    rp = "status.reclaimablePods"
    reclaimable = v.opt_list(status, "reclaimablePods", ref, "status", max_items=_RECLAIMABLE_PODS.max_items)
    for i, rraw in enumerate(reclaimable):
        with collect.reported():
            r = v.as_map(rraw, ref, v.index(rp, i))
            rname = v.as_str(r.get("name", ""), ref, v.child(v.index(rp, i), "name"))
            kp = v.key(rp, rname)
            if rname not in by_name:
                v.unsupported(ref, v.child(kp, "name"), rname, [ps.name for ps in pod_sets])
            cnt = v.as_int32(r.get("count", 0), ref, v.child(kp, "count"), minimum=0)
            if cnt > by_name[rname].count:
                v.invalid(
                    ref, v.child(kp, "count"), cnt, f"should be less or equal to {by_name[rname].count}"
                )
            by_name[rname].reclaimable = cnt


def _pod_sets(spec: Mapping[str, Any], ref: str, api: str = V1BETA2) -> list[m.PodSet]:
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


def parse_workload(
    obj: Mapping[str, Any],
    priority_classes: Mapping[str, m.WorkloadPriorityClass] | None = None,
    *,
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass] | None = None,
    default_creation_ns: int = 0,
) -> m.Workload:
    """A Workload: pod sets with their per-pod requests, priority, timestamps and
    (for admitted ones) the admission from status (workload_webhook.go rules).

    ``priority_classes`` are WorkloadPriorityClasses by name,
    ``pod_priority_classes`` scheduling.k8s.io PriorityClasses;
    ``default_creation_ns`` is used when metadata.creationTimestamp is absent."""
    api = _check_type(obj, ("Workload",))
    name, ns, md = _metadata(obj, "Workload", namespaced=True)
    ref = m.object_ref("Workload", name, ns)
    v.check_fields(obj, _FIELDS["Workload"][api].names, ref, "")
    if obj.get("spec") is None:
        v.required(ref, "spec")
    spec = v.as_map(obj["spec"], ref, "spec")
    v.check_fields(spec, SPEC_FIELDS[api], ref, "spec", _WL_RENAMED[api])

    # 1. pod sets (each part of the object on its own: error_collection.report)
    noted = collect.errors_noted()
    try:
        pod_sets = _pod_sets(spec, ref, api)
    except InputError as e:
        collect.report(e)
        pod_sets = []
    whole = collect.errors_noted() == noted  # the status names pod sets: not checked against broken ones

    # 2. queue, priority, active
    queue = ""
    with collect.reported():
        queue = v.opt_str(spec, "queueName", ref, "spec")
        if queue:
            v.object_name(queue, ref, "spec.queueName")
    priority, pclass = 0, None
    with collect.reported():
        priority, pclass = _priority(spec, api, ref, priority_classes, pod_priority_classes)
    active = True
    with collect.reported():
        if spec.get("active") is not None:
            active = v.as_bool(spec["active"], ref, "spec.active")
    with collect.reported():
        if spec.get("maximumExecutionTimeSeconds") is not None:
            v.as_int32(
                spec["maximumExecutionTimeSeconds"], ref, "spec.maximumExecutionTimeSeconds", minimum=1
            )

    # 3. identity and times
    creation = default_creation_ns
    with collect.reported():
        if md.get("creationTimestamp") is not None:
            creation = parse_time_ns(md["creationTimestamp"], ref, "metadata.creationTimestamp")
    try:
        uid = v.as_str(md["uid"], ref, "metadata.uid") if md.get("uid") else f"{ns}/{name}"
    except InputError as e:
        collect.report(e)
        uid = f"{ns}/{name}"

    # 4. status
    admission, admission_ns, finished, queue_order_ns, checks, admitted = _workload_status(
        obj, ref, pod_sets if whole else None, creation
    )

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
        raw=obj if type(obj) is dict else dict(obj),  # kept, not copied: build_state keeps the input objects
    )
    with collect.reported():
        _pods_ready_status(obj, ref, wl)
    return wl


def _pods_ready_status(obj: Mapping[str, Any], ref: str, wl: m.Workload) -> None:
    """waitForPodsReady's inputs: the PodsReady condition (status, reason,
    lastTransitionTime) and status.requeueState (count, requeueAt)."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return
    for i, c in enumerate(status.get("conditions") or []):
        if isinstance(c, dict) and c.get("type") == "PodsReady":
            wl.pods_ready = c.get("status") == "True"
            wl.pods_ready_reason = str(c.get("reason") or "")
            tp = f"status.conditions[{i}].lastTransitionTime"
            wl.pods_ready_ns = parse_time_ns(c["lastTransitionTime"], ref, tp)
    rs = v.opt_map(status, "requeueState", ref, "status")
    if rs is not None:
        rp = "status.requeueState"
        if rs.get("count") is not None:
            wl.requeue_count = v.as_int32(rs["count"], ref, v.child(rp, "count"), minimum=0)
        if rs.get("requeueAt") is not None:
            wl.requeue_at_ns = parse_time_ns(rs["requeueAt"], ref, v.child(rp, "requeueAt"))


# --- the compiled bulk path ----------------------------------------------------------------------
# kueue_fast._bulk (bindings/_bulk.pyx) gives parse_workload's Workload for a
# valid one of the common shape, else None (then parse_workload decides, with
# its messages). Without a _bulk built from these sources (_compiled), every
# Workload goes through parse_workload: the same result, slower.


def _no_fast_workload(*_: object) -> m.Workload | None:
    return None


_bulk = _compiled.module("_bulk")
fast_workload: Callable[..., m.Workload | None] = (
    _bulk.fast_workload if _bulk is not None else _no_fast_workload
)
BulkCaches: Callable[[], object] = _bulk.BulkCaches if _bulk is not None else object
