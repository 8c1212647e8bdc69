"""JobSets (``jobset.x-k8s.io/v1alpha2``) as Kueue's JobSet integration runs
them (a :class:`~.framework.Integration`).

One Workload per JobSet, ``jobset-<name>-<hash>``, with one pod set per
replicated job: named after it, ``count = replicas x min(parallelism,
completions)``, its Job template's pod template. JobSets have no partial
admission. Started by one write (unsuspend, each replicated job's pod
template merged with its pod set's admission) and stopped by one (suspend,
the templates restored from the Workload), as jobframework's generic
startJob / stopJob do; finished when the JobSet's Completed or Failed
condition is True. Kueue sources: pkg/controller/jobs/jobset/
jobset_controller.go (PodSets, podsCount, PodsCountPerReplica,
RunWithPodSetsInfo, RestorePodSetsInfo, Finished), jobset_webhook.go
(Default, validateCreate); pkg/controller/jobframework/reconciler.go.

A list of templates cannot be changed by a merge patch without replacing it
whole, so the writes are JSON patches naming each field, with the
resourceVersion they were decided on (a stale one is a 409).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..api import validation as v
from . import framework as fw
from .framework import (
    JOB_UID_LABEL,
    JSON_PATCH,
    KUEUE_API,
    QUEUE_LABEL,
    RESOURCE_IN_USE,
    Conversion,
    Environment,
    Patch,
    PodSetInfo,
)
from .topology_annotations import topology_request

JSON = dict[str, Any]

API_VERSION = "jobset.x-k8s.io/v1alpha2"
KIND = "JobSet"
GROUP = "jobset.x-k8s.io"
PLURAL = "jobsets"
FRAMEWORK = "jobset.x-k8s.io/jobset"  # its name in the Configuration's integrations.frameworks
SHORT_NAMES_GATE = "ShortWorkloadNames"


JOBSET_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"  # jobsetapi.JobIndexKey: a pod's replicated job index


def workload_name(name: str, uid: str, *, short: bool = False) -> str:
    """GetWorkloadNameForJobSet: ``jobset-<name>-<hash>``."""
    return fw.workload_name(KIND, GROUP, name, uid, short=short)


def _replicated_jobs(obj: JSON) -> list[JSON]:
    return list((obj.get("spec") or {}).get("replicatedJobs") or [])


def pods_per_replica(rj: JSON) -> int:
    """PodsCountPerReplica: parallelism (default 1), capped by completions."""
    spec = (rj.get("template") or {}).get("spec") or {}
    p = spec.get("parallelism")
    n = int(p) if p is not None else 1
    c = spec.get("completions")
    if c is not None and int(c) < n:
        n = int(c)
    return n


def pods_count(rj: JSON) -> int:
    """podsCount: replicas (default 1) x pods per replica."""
    r = rj.get("replicas")
    return (int(r) if r is not None else 1) * pods_per_replica(rj)


def _pod_template(rj: JSON) -> JSON:
    return ((rj.get("template") or {}).get("spec") or {}).get("template") or {}


# --- offline and on creation: JobSet -> Workload -------------------------------------------


def workloads_for(js: JSON, env: Environment) -> Conversion:
    """The Workload Kueue creates for the JobSet, with its webhook's defaults
    applied (queue-name "default" LocalQueue, "default"
    WorkloadPriorityClass, suspended); none, with the reason as a warning,
    when Kueue does not manage it or it is finished."""
    md = js["metadata"]
    ns = md["namespace"]
    ref = f"{KIND}/{ns}/{md['name']}"
    rjobs = _validate(js, ref)
    fw.validate_on_create(js, ref)
    out = Conversion(obj=js)
    done, failed, _ = finished(js)
    if done:
        state = "failed" if failed else "completed"
        out.warnings.append(
            ("status.conditions", f"the JobSet {state}: it holds no quota and queues nothing; skipped")
        )
        return out
    queue, path, why = fw.queue_name(js, ns, FRAMEWORK, env)
    if queue is None:
        out.warnings.append((path, f"{why}; skipped"))
        return out
    prebuilt = fw.prebuilt_workload_name(js)
    if prebuilt:
        out.runs_as = prebuilt
        return out
    specs = [(_pod_spec_path(i), _pod_template(rj).get("spec") or {}) for i, rj in enumerate(rjobs)]
    class_ref, prio = fw.priority(js, ref, specs, env)
    wpc = class_ref["name"] if class_ref and class_ref["kind"] == "WorkloadPriorityClass" else None
    out.obj = js = _webhook_defaults(js, queue, wpc)
    out.workloads.append(
        build_workload(
            js,
            prio,
            class_ref,
            max_execution_seconds=fw.max_exec_seconds(js, ref),
            short_name=env.configuration.feature_gates.get(SHORT_NAMES_GATE, False),
        )
    )
    return out


def _pod_spec_path(i: int) -> str:
    return f"spec.replicatedJobs[{i}].template.spec.template.spec"


def build_workload(
    js: JSON,
    priority: int | None,
    class_ref: dict[str, str] | None,
    *,
    max_execution_seconds: int | None = None,
    short_name: bool = False,
) -> JSON:
    """ConstructWorkload for a JobSet: one pod set per replicated job."""
    md = js["metadata"]
    uid = md.get("uid") or ""
    pod_sets = [
        {"name": rj["name"], "count": pods_count(rj), "template": _pod_template(rj)}
        for rj in _replicated_jobs(js)
    ]
    for ps, rj in zip(pod_sets, _replicated_jobs(js), strict=True):
        annotations = (ps["template"].get("metadata") or {}).get("annotations") or {}
        sub_group = (JOBSET_INDEX_LABEL, int(rj["replicas"]) if rj.get("replicas") is not None else 1)
        topology = topology_request(annotations, "", "", ps["count"], sub_group) if annotations else None
        if (
            topology is not None
        ):  # Kueue also writes the index labels alone; kueue-fast only with TAS asked for
            ps["topologyRequest"] = topology
    spec: JSON = {
        "queueName": (md.get("labels") or {}).get(QUEUE_LABEL, ""),
        "active": True,
        "podSets": pod_sets,
    }
    if class_ref:
        spec["priorityClassRef"] = class_ref
    if priority is not None:
        spec["priority"] = priority
    if max_execution_seconds is not None:
        spec["maximumExecutionTimeSeconds"] = max_execution_seconds
    owner: JSON = {"apiVersion": API_VERSION, "kind": KIND, "name": md["name"], "uid": uid}
    owner.update({"controller": True, "blockOwnerDeletion": True})
    wl_md: JSON = {"name": workload_name(md["name"], uid, short=short_name), "namespace": md["namespace"]}
    if uid:
        wl_md["labels"] = {JOB_UID_LABEL: uid}
    else:  # offline: a JobSet that was never created has no uid
        del owner["uid"]
    wl_md["ownerReferences"] = [owner]
    wl_md["finalizers"] = [RESOURCE_IN_USE]
    return {"apiVersion": KUEUE_API, "kind": "Workload", "metadata": wl_md, "spec": spec}


def owner_field(workload_field: str) -> str:
    """Where a field of the Workload :func:`build_workload` made comes from in
    the JobSet (for errors found in the Workload); "" for the JobSet as a whole."""
    if workload_field.startswith("spec.podSets["):
        i, _, rest = workload_field[len("spec.podSets[") :].partition("]")
        base = f"spec.replicatedJobs[{i}]"
        if rest.startswith(".template"):
            return f"{base}.template.spec.template{rest[len('.template') :]}"
        return {"": base, ".count": f"{base}.replicas", ".name": f"{base}.name"}.get(rest, base)
    table = {
        "spec.queueName": f"metadata.labels[{QUEUE_LABEL}]",
        "spec.priorityClassRef.name": f"metadata.labels[{fw.PRIORITY_LABEL}]",
        "spec.maximumExecutionTimeSeconds": f"metadata.labels[{fw.MAX_EXEC_TIME_LABEL}]",
        "metadata.name": "metadata.name",
    }
    return table.get(workload_field, "")


def _webhook_defaults(js: JSON, queue: str, priority_class: str | None) -> JSON:
    """The JobSet as Kueue's webhook leaves it: suspended, with the labels it defaulted."""
    md = dict(js["metadata"])
    labels = dict(md.get("labels") or {})
    if queue:
        labels.setdefault(QUEUE_LABEL, queue)
    if priority_class:
        labels.setdefault(fw.PRIORITY_LABEL, priority_class)
    if labels:
        md["labels"] = labels
    return {**js, "metadata": md, "spec": {**(js.get("spec") or {}), "suspend": True}}


def _validate(js: JSON, ref: str) -> list[JSON]:
    """What the JobSet CRD and webhook refuse before any Workload exists (the
    part a Workload is built from): replicated jobs with unique DNS-label
    names, replicas >= 0, a Job template with a pod template. The pod
    templates are checked as the Workload's (loader)."""
    v.check_fields(js, ("apiVersion", "kind", "metadata", "spec", "status"), ref, "")
    if js.get("spec") is None:
        v.required(ref, "spec")
    spec = v.as_map(js["spec"], ref, "spec")
    if spec.get("suspend") is not None:
        v.as_bool(spec["suspend"], ref, "spec.suspend")
    if spec.get("replicatedJobs") is None:
        v.required(ref, "spec.replicatedJobs")
    rjobs = v.as_list(spec["replicatedJobs"], ref, "spec.replicatedJobs", min_items=1)
    if len(rjobs) > 8:  # a Workload has at most 8 pod sets
        v.fail(
            ref,
            "spec.replicatedJobs",
            f"Too many: {len(rjobs)}: must have at most 8 items (one pod set each)",
        )
    seen: set[str] = set()
    out = []
    for i, raw in enumerate(rjobs):
        p = f"spec.replicatedJobs[{i}]"
        rj = v.as_map(raw, ref, p)
        if not rj.get("name"):
            v.required(ref, f"{p}.name")
        name = v.object_name(rj["name"], ref, f"{p}.name", label=True)
        if name in seen:
            v.duplicate(ref, f"{p}.name", name)
        seen.add(name)
        if rj.get("replicas") is not None:
            rj = {**rj, "replicas": v.as_int32(rj["replicas"], ref, f"{p}.replicas", minimum=0)}
        tp = f"{p}.template"
        if rj.get("template") is None:
            v.required(ref, tp)
        job_spec = v.opt_map(v.as_map(rj["template"], ref, tp), "spec", ref, tp)
        if job_spec is None:
            v.required(ref, f"{tp}.spec")
        for k in ("parallelism", "completions"):
            if job_spec.get(k) is not None:
                v.as_int32(job_spec[k], ref, f"{tp}.spec.{k}", minimum=0)
        pod = v.opt_map(job_spec, "template", ref, f"{tp}.spec")
        if pod is None or pod.get("spec") is None:
            v.required(ref, f"{tp}.spec.template.spec")
        v.as_map(pod["spec"], ref, f"{tp}.spec.template.spec")
        pmd = v.opt_map(pod, "metadata", ref, f"{tp}.spec.template") or {}
        if pmd.get("annotations") is not None:
            annotations = v.string_map(pmd["annotations"], ref, f"{tp}.spec.template.metadata.annotations")
            topology_request(annotations, ref, f"{tp}.spec.template.metadata", pods_count(rj))
        out.append(rj)
    return out


# --- running: what the controller writes to a JobSet --------------------------------------------


def is_suspended(js: JSON) -> bool:
    return bool((js.get("spec") or {}).get("suspend"))


def finished(js: JSON) -> tuple[bool, bool, str]:
    """Finished: the Completed condition (success), else the Failed one."""
    conds = {
        c.get("type"): c for c in (js.get("status") or {}).get("conditions") or [] if isinstance(c, dict)
    }
    for ctype, failed in (("Completed", False), ("Failed", True)):
        c = conds.get(ctype)
        if c is not None and c.get("status") == "True":
            return True, failed, str(c.get("message") or "")
    return False, False, ""


def _rv_op(js: JSON) -> JSON:
    # the patched object carries the resourceVersion decided on: the API server answers 409 if it moved
    return {"op": "replace", "path": "/metadata/resourceVersion", "value": js["metadata"]["resourceVersion"]}


def _template_path(i: int) -> str:
    return f"/spec/replicatedJobs/{i}/template/spec/template"


def start_patch(js: JSON, infos: Sequence[PodSetInfo]) -> Patch | None:
    """RunWithPodSetsInfo: unsuspend, each replicated job's pod template
    merged with its pod set's admission (podset.Merge); None when it runs so
    already."""
    rjobs = _replicated_jobs(js)
    if len(infos) != len(rjobs):
        raise fw.PodSetConflict(f"invalid podset infos: expecting {len(rjobs)} podset, got {len(infos)}")
    by_name = {i.name: i for i in infos}
    ops: list[JSON] = []
    for i, rj in enumerate(rjobs):
        info = by_name.get(rj["name"]) or infos[i]
        template = _pod_template(rj)
        ops += fw.template_json_patch(template, fw.merged(template, info), _template_path(i))
    if not ops and not is_suspended(js):
        return None
    return Patch([_rv_op(js), {"op": "add", "path": "/spec/suspend", "value": False}, *ops], JSON_PATCH)


def stop_step(js: JSON, workload: JSON | None) -> tuple[str, Patch] | None:
    """jobframework stopJob for a JobSet: one write, suspend with the
    templates restored from the Workload's pod sets (RestorePodSetsInfo,
    skipped when the counts of pod sets differ); None once suspended."""
    if is_suspended(js):
        return None
    ops = [_rv_op(js), {"op": "add", "path": "/spec/suspend", "value": True}]
    sets = ((workload or {}).get("spec") or {}).get("podSets") or []
    rjobs = _replicated_jobs(js)
    if sets and len(sets) == len(rjobs):
        for i, (rj, ps) in enumerate(zip(rjobs, sets, strict=True)):
            ops += fw.template_json_patch(_pod_template(rj), fw.pod_set_info(ps), _template_path(i))
    return "suspend", Patch(ops, JSON_PATCH)


__all__ = [
    "API_VERSION",
    "FRAMEWORK",
    "GROUP",
    "KIND",
    "PLURAL",
    "build_workload",
    "finished",
    "is_suspended",
    "owner_field",
    "pods_count",
    "start_patch",
    "stop_step",
    "workload_name",
    "workloads_for",
]
