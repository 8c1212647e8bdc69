"""Workload -> ``model.Workload``: the exact path (:func:`parse_workload`,
with workload_spec and workload_status) and the compiled bulk path's entry
(:data:`fast_workload`). Every Workload error message comes from the exact
path: the bulk path gives None for anything it does not read, and
parse_workload reads that Workload.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import _compiled
from ..api import error_collection as collect, model as m, validation as v
from ..api.errors import InputError
from .common import _FIELDS, V1BETA1, V1BETA2, _check_type, _metadata, parse_time_ns
from .workload_spec import SPEC_FIELDS, read_pod_sets, read_priority
from .workload_status import pods_ready_status, workload_status

_WL_RENAMED = {
    V1BETA1: {
        "priorityClassRef": v.version_rename(V1BETA1, "priorityClassName", "v1beta2", "priorityClassRef")
    },
    V1BETA2: {
        old: v.version_rename(V1BETA2, "priorityClassRef", "v1beta1", old)
        for old in ("priorityClassName", "priorityClassSource")
    },
}


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

    # 1. pod sets (each part of the object on its own: validation.report)
    noted = collect.errors_noted()
    try:
        pod_sets = read_pod_sets(spec, ref, api)
    except InputError as e:
        collect.report(e)
        pod_sets = []
    whole = collect.errors_noted() == noted  # the status names pod sets: not checked against broken ones

    # 2. queue, priority, active
    queue, priority, pclass, active = _queue_priority_active(
        spec, api, ref, priority_classes, pod_priority_classes
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
    admission, admission_ns, finished, queue_order_ns, checks, admitted = workload_status(
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
        pods_ready_status(obj, ref, wl)
    return wl


def _queue_priority_active(
    spec: Mapping[str, Any],
    api: str,
    ref: str,
    priority_classes: Mapping[str, m.WorkloadPriorityClass] | None,
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass] | None,
) -> tuple[str, int, str | None, bool]:
    """spec.queueName, the priority and its class, spec.active (and a valid
    spec.maximumExecutionTimeSeconds), each on its own (error_collection.report)."""
    queue = ""
    with collect.reported():
        queue = v.opt_str(spec, "queueName", ref, "spec")
        if queue:
            v.object_name(queue, ref, "spec.queueName")
    priority, pclass = 0, None
    with collect.reported():
        priority, pclass = read_priority(spec, api, ref, priority_classes, pod_priority_classes)
    active = True
    with collect.reported():
        if spec.get("active") is not None:
            active = v.as_bool(spec["active"], ref, "spec.active")
    with collect.reported():
        if spec.get("maximumExecutionTimeSeconds") is not None:
            v.as_int32(
                spec["maximumExecutionTimeSeconds"], ref, "spec.maximumExecutionTimeSeconds", minimum=1
            )
    return queue, priority, pclass, active


# --- the compiled bulk path ----------------------------------------------------------------------
# kueue_fast.loader._bulk (loader/_bulk.pyx) gives parse_workload's Workload
# for a valid Workload (every one of tests/scenarios and examples/, TAS
# requests included), else None: then parse_workload reads it and words the
# error, so an invalid Workload's message never depends on the path. The
# two stay because _bulk is the compiled twin: without one built from these
# sources (_compiled), every Workload goes through parse_workload, the same
# result, slower (tests/test_fast_loading.py holds them to each other).


def _no_fast_workload(*_: object) -> m.Workload | None:
    return None


_bulk = _compiled.module("loader._bulk")
fast_workload: Callable[..., m.Workload | None] = (
    _bulk.fast_workload if _bulk is not None else _no_fast_workload
)
BulkCaches: Callable[[], object] = _bulk.BulkCaches if _bulk is not None else object
