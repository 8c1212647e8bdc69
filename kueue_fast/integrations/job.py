"""batch/v1 Jobs as Kueue's Job integration runs them (a
:class:`~.framework.Integration`).

:func:`workloads_for` is the Workload Kueue creates for a Job, after what
Kueue's Job webhook and jobframework decide (defaults, validation, whether
Kueue manages the Job, its queue and priority): the loader reads offline Jobs
with it and the controller creates Workloads with it, so the two cannot
disagree. :func:`start_patch` and :func:`stop_step` are what the controller
writes to start an admitted Job and to stop it again. Kueue sources:
pkg/controller/jobs/job/job_controller.go (PodSets, podsCount, minPodsCount,
RunWithPodSetsInfo, RestorePodSetsInfo, Stop, Finished), job_webhook.go
(Default, validatePartialAdmissionCreate, validateSyncCompletionCreate),
pkg/controller/jobframework/reconciler.go (ConstructWorkload,
prepareWorkload), workload_names.go.

The Workload: ``job-<name>-<hash>`` (:func:`workload_name`; offline a Job
without ``metadata.uid`` is hashed with an empty uid), one pod set ``main``
with ``count = min(parallelism, completions)``, the Job's pod template, and
``minCount`` from the ``kueue.x-k8s.io/job-min-parallelism`` annotation
(partial admission), ``spec.priority`` and ``spec.priorityClassRef`` as
framework.priority resolves them, ``spec.queueName`` from the queue-name label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..api import validation as v
from ..api.features import FeatureGates
from . import framework as fw, jobset
from .framework import (
    JOB_UID_LABEL,
    KUEUE_API,
    MERGE_PATCH,
    QUEUE_LABEL,
    RESOURCE_IN_USE,
    Conversion,
    Environment,
    Patch,
    PodSetInfo,
)
from .topology_annotations import topology_request

JSON = dict[str, Any]

API_VERSION = "batch/v1"
KIND = "Job"
GROUP = "batch"
PLURAL = "jobs"
FRAMEWORK = "batch/job"  # its name in the Configuration's integrations.frameworks
STOPPING_ANNOTATION = "kueue.x-k8s.io/stopping"
# labels the Job controller puts on a Job's pod template (job_controller.go managedLabels)
MANAGED_LABELS = (
    "job-name",
    "controller-uid",
    "batch.kubernetes.io/job-name",
    "batch.kubernetes.io/controller-uid",
)

MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-completions-equal-parallelism"

SHORT_NAMES_GATE = "ShortWorkloadNames"  # alpha, off by default: names cut to 63 characters


# the kinds with an integration besides Job itself (the registry in __init__.py lists the same)
_MANAGED_OWNER_KINDS = {(API_VERSION, KIND), (jobset.API_VERSION, jobset.KIND)}


def workload_name(job_name: str, job_uid: str, *, short: bool = False) -> str:
    """Kueue's GetWorkloadNameForJob: ``job-<name>-<hash>``."""
    return fw.workload_name(KIND, GROUP, job_name, job_uid, short=short)


def pods_count(spec: JSON) -> int:
    """Pods the Job runs at once: parallelism (default 1), capped by completions."""
    p = spec.get("parallelism")
    n = int(p) if p is not None else 1
    c = spec.get("completions")
    if c is not None and int(c) < n:
        n = int(c)
    return n


def build_workload(
    job: JSON,
    priority: int | None,
    priority_class: str | None,
    *,
    template: JSON | None = None,
    priority_class_kind: str = "WorkloadPriorityClass",
    min_count: int | None = None,
    max_execution_seconds: int | None = None,
    short_name: bool = False,
) -> JSON:
    """The Workload Kueue's job reconciler creates for a queued Job.

    ``template`` is the pod template (default: the Job's own);
    ``priority_class`` names a ``priority_class_kind`` (WorkloadPriorityClass,
    or scheduling.k8s.io's PriorityClass); None for ``priority`` leaves
    spec.priority unset."""
    md = job["metadata"]
    uid = md.get("uid") or ""
    spec = job.get("spec") or {}
    pod_set: JSON = {
        "name": "main",
        "count": pods_count(spec),
        "template": template if template is not None else spec.get("template") or {},
    }
    if min_count is not None:
        pod_set["minCount"] = min_count
    annotations = (pod_set["template"].get("metadata") or {}).get("annotations") or {}
    topology = topology_request(annotations, "", "", pod_set["count"]) if annotations else None
    if topology is not None:  # Kueue also writes podIndexLabel alone; kueue-fast only with TAS asked for
        pod_set["topologyRequest"] = topology
    wl_spec: JSON = {
        "queueName": (md.get("labels") or {}).get(QUEUE_LABEL, ""),
        "active": True,
        "podSets": [pod_set],
    }
    if priority_class:
        group = fw.KUEUE_GROUP if priority_class_kind == "WorkloadPriorityClass" else "scheduling.k8s.io"
        wl_spec["priorityClassRef"] = {"group": group, "kind": priority_class_kind, "name": priority_class}
    if priority is not None:
        wl_spec["priority"] = priority
    if max_execution_seconds is not None:
        wl_spec["maximumExecutionTimeSeconds"] = max_execution_seconds
    owner: JSON = {"apiVersion": API_VERSION, "kind": KIND, "name": md["name"], "uid": uid}
    owner.update({"controller": True, "blockOwnerDeletion": True})
    wl_md: JSON = {"name": workload_name(md["name"], uid, short=short_name), "namespace": md["namespace"]}
    if uid:
        wl_md["labels"] = {JOB_UID_LABEL: uid}
    else:  # offline: a Job that was never created has no uid
        del owner["uid"]
    wl_md["ownerReferences"] = [owner]
    wl_md["finalizers"] = [RESOURCE_IN_USE]
    return {"apiVersion": KUEUE_API, "kind": "Workload", "metadata": wl_md, "spec": wl_spec}


# --- offline: manifests -> Workloads --------------------------------------------------------


def workloads_for(job: JSON, env: Environment) -> Conversion:
    """The Workload(s) Kueue would create for this Job, with its webhook's
    defaults applied (queue-name "default" LocalQueue, "default"
    WorkloadPriorityClass); none, with the reason as a warning, when Kueue
    does not manage the Job or it is finished. The caller has checked kind,
    apiVersion and metadata (name set, namespace defaulted); errors name the
    Job and its field (ValidationError, MissingReferenceError)."""
    md = job["metadata"]
    ns = md["namespace"]
    ref = f"{KIND}/{ns}/{md['name']}"
    spec, pod_spec, min_count = _validate(job, ref)
    fw.validate_on_create(job, ref)
    out = Conversion(obj=job)
    done = _finished_condition(job)
    if done is not None:
        out.warnings.append(("status.conditions", f"{done}: it holds no quota and queues nothing; skipped"))
        return out
    parent = _managed_parent(job)
    if parent:
        # a child Job (jobframework IsOwnerManagedByKueue): its pods are its parent's Workload's
        out.warnings.append(
            ("metadata.ownerReferences", f"it belongs to {parent}, whose Workload holds its pods; skipped")
        )
        return out
    queue, path, why = fw.queue_name(job, ns, FRAMEWORK, env)
    if queue is None:
        out.warnings.append((path, f"{why}; skipped"))
        return out
    prebuilt = fw.prebuilt_workload_name(job)
    if prebuilt:
        out.runs_as = prebuilt
        return out
    if not FeatureGates.resolve(env.configuration.feature_gates).partial_admission:
        min_count = None  # prepareWorkload clearMinCountsIfFeatureDisabled
    class_ref, prio = fw.priority(job, ref, [("spec.template.spec", pod_spec)], env)
    wpc = class_ref["name"] if class_ref and class_ref["kind"] == "WorkloadPriorityClass" else None
    out.obj = job = apply_webhook_defaults(job, queue, wpc)
    wl = build_workload(
        job,
        prio,
        class_ref["name"] if class_ref else None,
        priority_class_kind=class_ref["kind"] if class_ref else "WorkloadPriorityClass",
        min_count=min_count,
        max_execution_seconds=fw.max_exec_seconds(job, ref),
        short_name=env.configuration.feature_gates.get(SHORT_NAMES_GATE, False),
    )
    if not spec.get("suspend") and (job.get("status") or {}).get("startTime"):
        running = "the Job runs, but its Workload is not in the input: it is queued as a new Job"
        out.warnings.append(("status.startTime", running))
    out.workloads.append(wl)
    return out


def owner_field(workload_field: str) -> str:
    """Where a field of the Workload :func:`build_workload` made comes from
    in the Job (for errors found in the Workload); "" for the Job as a whole."""
    pod_set = "spec.podSets[0]"
    if workload_field.startswith(f"{pod_set}.template"):
        return "spec.template" + workload_field[len(f"{pod_set}.template") :]
    table = {
        pod_set: "spec.template",  # the pod set as a whole: the Job's pods
        f"{pod_set}.count": "spec.parallelism",
        f"{pod_set}.minCount": f"metadata.annotations[{MIN_PARALLELISM_ANNOTATION}]",
        "spec.queueName": f"metadata.labels[{QUEUE_LABEL}]",
        "spec.priorityClassRef.name": f"metadata.labels[{fw.PRIORITY_LABEL}]",
        "spec.maximumExecutionTimeSeconds": f"metadata.labels[{fw.MAX_EXEC_TIME_LABEL}]",
        "metadata.name": "metadata.name",
    }
    return table.get(workload_field, "")


def _managed_parent(job: JSON) -> str:
    """Kind/name of the job's controlling owner when Kueue manages that kind
    (jobframework.IsOwnerManagedByKueue: an owner of a kind with an integration)."""
    owner = fw.controlling_owner(job)
    if owner is None or (owner.get("apiVersion"), owner.get("kind")) not in _MANAGED_OWNER_KINDS:
        return ""
    return f"{owner.get('kind')}/{owner.get('name')}"


def apply_webhook_defaults(job: JSON, queue: str, priority_class: str | None) -> JSON:
    """The Job as Kueue's mutating webhook leaves it (Default): suspended,
    with the queue-name label (ApplyDefaultLocalQueue) and the
    priority-class label (ApplyDefaultWorkloadPriorityClass) it defaulted."""
    md = dict(job["metadata"])
    labels = dict(md.get("labels") or {})
    if queue:
        labels.setdefault(QUEUE_LABEL, queue)
    if priority_class:
        labels.setdefault(fw.PRIORITY_LABEL, priority_class)
    if labels:
        md["labels"] = labels
    return {**job, "metadata": md, "spec": {**(job.get("spec") or {}), "suspend": True}}


def _finished_condition(job: JSON) -> str | None:
    for c in (job.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("status") == "True" and c.get("type") in ("Complete", "Failed"):
            return f"the Job is {'complete' if c['type'] == 'Complete' else 'failed'}"
    return None


def _validate(job: JSON, ref: str) -> tuple[JSON, JSON, int | None]:
    """What the API server (batch validation) and Kueue's Job webhook reject
    before any Workload exists; returns (spec, pod template spec, minCount).
    The pod template itself is checked as the Workload's (loader)."""
    v.check_fields(job, ("apiVersion", "kind", "metadata", "spec", "status"), ref, "")
    name = job["metadata"]["name"]
    if len(name) > 63:  # batch defaulting puts it in the pods' job-name labels
        v.invalid(
            ref,
            "metadata.name",
            name,
            "must be no more than 63 characters (the Job's pods are labelled with it)",
        )
    if job.get("spec") is None:
        v.required(ref, "spec")
    spec = v.as_map(job["spec"], ref, "spec")
    for name in ("parallelism", "completions"):
        if spec.get(name) is not None:
            spec_value = v.as_int32(spec[name], ref, f"spec.{name}", minimum=0)
            spec = {**spec, name: spec_value}
    if spec.get("suspend") is not None:
        v.as_bool(spec["suspend"], ref, "spec.suspend")
    if spec.get("template") is None:
        v.required(ref, "spec.template")
    template = v.as_map(spec["template"], ref, "spec.template")
    tmd = v.opt_map(template, "metadata", ref, "spec.template") or {}
    if tmd.get("labels") is not None:
        v.labels(tmd["labels"], ref, "spec.template.metadata.labels")
    if tmd.get("annotations") is not None:
        annotations = v.string_map(tmd["annotations"], ref, "spec.template.metadata.annotations")
        topology_request(annotations, ref, "spec.template.metadata", pods_count(spec))
    if template.get("spec") is None:
        v.required(ref, "spec.template.spec")
    pod_spec = v.as_map(template["spec"], ref, "spec.template.spec")
    # batch validation: a Job's pods never restart in place (the pod default is Always)
    policy = pod_spec.get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        shown = "Always" if policy is None else policy
        v.unsupported(ref, "spec.template.spec.restartPolicy", shown, ("OnFailure", "Never"))
    annotations = (job["metadata"].get("annotations")) or {}
    return spec, pod_spec, _min_count(spec, annotations, ref)


def _min_count(spec: JSON, annotations: dict[str, str], ref: str) -> int | None:
    """job-min-parallelism (validatePartialAdmissionCreate, minPodsCount) and
    job-completions-equal-parallelism (validateSyncCompletionCreate)."""
    path = f"metadata.annotations[{MIN_PARALLELISM_ANNOTATION}]"
    out = None
    raw = annotations.get(MIN_PARALLELISM_ANNOTATION)
    if raw is not None:
        n = fw.atoi(raw)
        if n is None:
            v.invalid(ref, path, raw, f'strconv.Atoi: parsing "{raw}": invalid syntax')
        count = pods_count(spec)
        if n >= count or n <= 0:
            v.invalid(ref, path, n, f"should be between 0 and {count - 1}")
        out = n
    sync = annotations.get(COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION)
    if sync is not None:
        spath = f"metadata.annotations[{COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION}]"
        enabled = _parse_bool(sync)
        if enabled is None:
            v.invalid(ref, spath, sync, f'strconv.ParseBool: parsing "{sync}": invalid syntax')
        if enabled:
            if spec.get("completionMode") in (None, "NonIndexed"):
                v.invalid(ref, spath, sync, "should not be enabled for NonIndexed jobs")
            if _or_one(spec.get("parallelism")) != _or_one(spec.get("completions")):
                v.invalid(
                    ref,
                    "spec.completions",
                    spec.get("completions"),
                    f"should be equal to parallelism when {COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION} "
                    "annotation is true",
                )
    return out


def _or_one(n: int | None) -> int:
    return 1 if n is None else n  # ptr.Deref(x, 1)


def _parse_bool(s: str) -> bool | None:
    """Go's strconv.ParseBool."""
    if s in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if s in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


# --- running: what the controller writes to a Job ------------------------------------------


def is_suspended(job: JSON) -> bool:
    return bool((job.get("spec") or {}).get("suspend"))


def finished(job: JSON) -> tuple[bool, bool, str]:
    """Finished: (finished, failed, message) from the Complete / Failed conditions."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("status") == "True" and c.get("type") in ("Complete", "Failed"):
            return True, c["type"] == "Failed", str(c.get("message") or "")
    return False, False, ""


def pods_ready(job: JSON) -> bool:
    """pkg/controller/jobs/job PodsReady: ready and succeeded pods (counted or
    not yet: uncountedTerminatedPods.succeeded) reach the pods it runs at once."""
    st = job.get("status") or {}
    uncounted = len((st.get("uncountedTerminatedPods") or {}).get("succeeded") or [])
    done = int(st.get("succeeded") or 0) + int(st.get("ready") or 0) + uncounted
    return done >= pods_count(job.get("spec") or {})


def _annotations(job: JSON) -> dict[str, str]:
    return (job.get("metadata") or {}).get("annotations") or {}


def _partial(job: JSON) -> tuple[bool, bool]:
    """(minPodsCount set: the Job accepts partial admission, completions follow parallelism)."""
    ann = _annotations(job)
    partial = fw.atoi(str(ann.get(MIN_PARALLELISM_ANNOTATION, ""))) is not None
    return partial, _parse_bool(str(ann.get(COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION, ""))) is True


def _template(job: JSON) -> JSON:
    return (job.get("spec") or {}).get("template") or {}


def _counts(job: JSON, count: int) -> JSON:
    """spec.parallelism (and completions) for ``count`` pods, when the Job
    accepts partial admission; {} otherwise."""
    partial, sync = _partial(job)
    if not partial:
        return {}
    out: JSON = {"parallelism": count}
    if sync:
        out["completions"] = count
    return out


def start_patch(job: JSON, infos: Sequence[PodSetInfo]) -> Patch | None:
    """RunWithPodSetsInfo: unsuspend; with partial admission, parallelism
    (and completions with job-completions-equal-parallelism) lowered to the
    admitted count; the admission merged into the pod template (podset.Merge:
    the flavors' nodeLabels and tolerations, the pod set label). None when the
    Job runs so already."""
    if len(infos) != 1:
        raise fw.PodSetConflict(f"invalid podset infos: expecting 1 podset, got {len(infos)}")
    spec = job.get("spec") or {}
    template = _template(job)
    want = fw.merged(template, infos[0])
    counts = {k: n for k, n in _counts(job, infos[0].count).items() if spec.get(k) != n}
    stopping = STOPPING_ANNOTATION in _annotations(job)
    if not is_suspended(job) and not counts and not stopping and fw.same_fields(template, want):
        return None
    body: JSON = {
        "metadata": {"resourceVersion": job["metadata"]["resourceVersion"]},
        "spec": {"suspend": False, **counts},
    }
    tpatch = fw.template_merge_patch(template, want)
    if tpatch:
        body["spec"]["template"] = tpatch
    if stopping:
        body["metadata"]["annotations"] = {STOPPING_ANNOTATION: None}
    return Patch(body, MERGE_PATCH)


def _restored(job: JSON, workload: JSON | None) -> tuple[PodSetInfo | None, JSON]:
    """RestorePodSetsInfo: the template fields to put back (the Workload's pod
    set, with the Job controller's labels the template has now) and the counts."""
    sets = ((workload or {}).get("spec") or {}).get("podSets") or []
    if not sets:
        return None, {}
    info = fw.pod_set_info(sets[0])
    labels = (_template(job).get("metadata") or {}).get("labels") or {}
    for k in MANAGED_LABELS:
        if k in labels:
            info.labels[k] = labels[k]
    spec = job.get("spec") or {}
    counts = {k: n for k, n in _counts(job, info.count).items() if spec.get(k) != n}
    return info, counts


def stop_step(job: JSON, workload: JSON | None) -> tuple[str, Patch] | None:
    """Job.Stop in Kueue's three writes, the next one as (step, patch):
    ``suspend`` (with the stopping annotation when there is something to
    restore), ``clear-start`` (status.startTime cleared: the API server lets
    the template change only then) and ``restore`` (RestorePodSetsInfo, the
    annotation removed); None once the Job is stopped. ``workload`` None:
    nothing to restore (a Job without its Workload)."""
    md = job["metadata"]
    rv = md["resourceVersion"]
    info, counts = _restored(job, workload)
    template = _template(job)
    needs_restore = info is not None and (bool(counts) or not fw.same_fields(template, info))
    stopping = STOPPING_ANNOTATION in _annotations(job)
    if not is_suspended(job):
        body: JSON = {"metadata": {"resourceVersion": rv}, "spec": {"suspend": True}}
        if needs_restore:
            body["metadata"]["annotations"] = {STOPPING_ANNOTATION: "true"}
        return "suspend", Patch(body)
    if (job.get("status") or {}).get("startTime"):
        # Kueue's Stop clears it always: the template can change again only then
        return "clear-start", Patch(
            {"metadata": {"resourceVersion": rv}, "status": {"startTime": None}}, sub="status"
        )
    if needs_restore or stopping:
        body = {"metadata": {"resourceVersion": rv, "annotations": {STOPPING_ANNOTATION: None}}}
        if needs_restore and info is not None:
            body["spec"] = {**counts}
            tpatch = fw.template_merge_patch(template, info)
            if tpatch:
                body["spec"]["template"] = tpatch
        return "restore", Patch(body)
    return None


__all__ = [
    "API_VERSION",
    "FRAMEWORK",
    "GROUP",
    "KIND",
    "PLURAL",
    "apply_webhook_defaults",
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
