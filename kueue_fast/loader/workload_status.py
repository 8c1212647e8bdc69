"""A Workload's status, the exact path: conditions, admission, admission
checks, reclaimable pods, PodsReady (workload_webhook.go's and the CRD's
rules). The compiled bulk path (loader/_bulk.pyx) reads the common status
itself and calls :func:`read_admission` (its memo), :func:`workload_status` and
:func:`pods_ready_status` for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import error_collection as collect, fields as api_fields, model as m, validation as v
from ..api.errors import InputError
from .common import _FIELDS, V1BETA2, _conditions, _status, parse_time_ns
from .fastjson import exact_key
from .tas import topology_assignment

_WL = _FIELDS["Workload"][V1BETA2]
_POD_SET_ASSIGNMENTS = _WL.at("status.admission.podSetAssignments")
_RECLAIMABLE_PODS = _WL.at("status.reclaimablePods")
_CHECK_STATES = _WL.at("status.admissionChecks")
# Evictions after which the Workload queues by the eviction's time
EVICTION_REASONS_REORDERING = ("PodsReadyTimeout", "AdmissionCheck")


def _cond_time(c: dict[str, Any], ref: str, path: str) -> int:
    return parse_time_ns(c["lastTransitionTime"], ref, path)


# _checked_admission's result by an exact key of what it reads (the admission,
# the pod sets' names and counts): many Workloads hold equal admissions. Valid
# ones only, at most _ADMISSIONS_KEPT; none with a null in its key (orjson writes
# NaN as null: equal keys are equal values otherwise, fastjson.exact_key).
_admissions: dict[tuple[object, ...], m.Admission] = {}
_ADMISSIONS_KEPT = 1 << 14


def read_admission(raw: object, ref: str, pod_sets: list[m.PodSet]) -> m.Admission:
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


def workload_status(
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
                admission = read_admission(status["admission"], ref, pod_sets)
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
        if ev is not None and ev.get("status") == "True" and ev.get("reason") in EVICTION_REASONS_REORDERING:
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


def pods_ready_status(obj: Mapping[str, Any], ref: str, wl: m.Workload) -> None:
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
