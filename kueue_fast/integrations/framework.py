"""What Kueue's jobframework decides for every kind of job: whether Kueue
manages the job, in which LocalQueue, at which priority, the Workload's name,
the name the API server gives a job created with ``generateName``, and what
starting and stopping a job change in its pod templates.

Pure functions of the job and an :class:`Environment` (what the cluster holds
besides the job); no API client. :class:`Integration` is what each kind's
module provides. Kueue sources (pkg/controller/jobframework): reconciler.go
ReconcileGenericJob (namespace selector, queue-name label), ExtractPriority,
startJob, stopJob, getPodSetsInfoFromStatus; defaults.go
ApplyDefaultLocalQueue and ApplyDefaultWorkloadPriorityClass; validation.go
ValidateJobOnCreate; workload_names.go; pkg/podset/podset.go (FromAssignment,
FromPodSet, Merge, RestorePodSpec); pkg/util/priority/priority.go.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..api import validation as v
from ..api.errors import MissingReferenceError
from ..api.model import Configuration, WorkloadPriorityClass
from .topology_annotations import UNCONSTRAINED_TOPOLOGY_ANNOTATION

JSON = dict[str, Any]

KUEUE_API = "kueue.x-k8s.io/v1beta2"
KUEUE_GROUP = "kueue.x-k8s.io"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
PREBUILT_WORKLOAD_LABEL = "kueue.x-k8s.io/prebuilt-workload-name"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
RESOURCE_IN_USE = "kueue.x-k8s.io/resource-in-use"
PODSET_LABEL = "kueue.x-k8s.io/podset"  # pkg/constants PodSetLabel, put on started pod templates

DEFAULT_LOCAL_QUEUE = "default"  # pkg/controller/constants DefaultLocalQueueName
DEFAULT_PRIORITY_CLASS = "default"  # DefaultWorkloadPriorityClassName
# Kueue's default at ff69552e (beta since 0.20; not a gate the engines model).
WPC_DEFAULTING_GATE = "WorkloadPriorityClassDefaulting"

# PriorityClasses every cluster has (kubernetes pkg/apis/scheduling SystemPriorityClasses).
SYSTEM_PRIORITY_CLASSES = {
    "system-cluster-critical": WorkloadPriorityClass("system-cluster-critical", 2000000000),
    "system-node-critical": WorkloadPriorityClass("system-node-critical", 2000001000),
}


@dataclass(frozen=True)
class Environment:
    """What Kueue's job integrations read from the cluster besides the job."""

    workload_priority_classes: Mapping[str, WorkloadPriorityClass] = field(default_factory=dict)
    # scheduling.k8s.io PriorityClasses
    priority_classes: Mapping[str, WorkloadPriorityClass] = field(default_factory=dict)
    local_queues: Collection[str] = ()  # "namespace/name"
    namespace_labels: Callable[[str], Mapping[str, str]] = lambda ns: {"kubernetes.io/metadata.name": ns}
    configuration: Configuration = field(default_factory=Configuration)


@dataclass(frozen=True)
class Patch:
    """A write to a job: ``body`` sent as ``content_type`` (a JSON merge patch,
    or a JSON patch for lists of templates), to its ``sub``resource or the job."""

    body: Any
    content_type: str = "application/merge-patch+json"
    sub: str | None = None


MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class Integration(Protocol):
    """A kind of job Kueue runs (pkg/controller/jobframework GenericJob): its
    module provides these. ``obj`` is the job as the API server has it."""

    API_VERSION: str
    KIND: str
    GROUP: str
    PLURAL: str
    FRAMEWORK: str  # its name in the Configuration's integrations.frameworks

    def workloads_for(self, obj: JSON, env: Environment) -> Conversion:
        """The Workload(s) Kueue creates for the job (none, and why, when
        Kueue does not manage it); its webhook's defaults applied."""
        ...

    def owner_field(self, workload_field: str) -> str:
        """Where a field of its Workload comes from in the job (for errors)."""
        ...

    def workload_name(self, name: str, uid: str) -> str: ...

    def is_suspended(self, obj: JSON) -> bool: ...

    def finished(self, obj: JSON) -> tuple[bool, bool, str]:
        """(finished, failed, message) from the job's conditions."""
        ...

    def start_patch(self, obj: JSON, infos: Sequence[PodSetInfo]) -> Patch | None:
        """RunWithPodSetsInfo: the write that starts the admitted job with
        each pod set's admission merged into its template; None when it runs
        so already. Raises :class:`PodSetConflict` when they cannot merge."""
        ...

    def stop_step(self, obj: JSON, workload: JSON | None) -> tuple[str, Patch] | None:
        """The next write that stops the job and restores its templates from
        the Workload's pod sets (``workload`` None: nothing to restore), as
        (step name, patch); None once it is stopped."""
        ...


@dataclass
class Conversion:
    """A job's Workloads, or why there are none, and what to tell the user."""

    # the job as Kueue's webhook leaves it (defaulted labels, suspended)
    obj: JSON
    workloads: list[JSON] = field(default_factory=list)
    # (field path in the job, message): why it was skipped, or notes
    warnings: list[tuple[str, str]] = field(default_factory=list)
    # the prebuilt Workload the job runs as, instead of one Kueue creates
    runs_as: str = ""


def queue_name(obj: JSON, namespace: str, framework: str, env: Environment) -> tuple[str | None, str, str]:
    """(the LocalQueue Kueue queues the job in, or None when Kueue does not
    manage it; the field path and the reason when it does not).

    ReconcileGenericJob: the managedJobsNamespaceSelector is always respected
    (ManagedJobsNamespaceSelectorAlwaysRespected, GA); a job needs the
    queue-name label, which ApplyDefaultLocalQueue sets to "default" when that
    LocalQueue exists in the namespace, unless manageJobsWithoutQueueName."""
    cfg = env.configuration
    if framework not in cfg.frameworks:
        return (
            None,
            "",
            f"the Configuration's integrations.frameworks does not include {framework}: "
            "Kueue does not manage it",
        )
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if not cfg.managed_jobs_namespace_selector.matches(dict(env.namespace_labels(namespace))):
        return (
            None,
            "metadata.namespace",
            f"namespace {namespace} does not match the Configuration's managedJobsNamespaceSelector "
            "(by default every namespace but kube-system and kueue-system): Kueue does not manage it",
        )
    queue = labels.get(QUEUE_LABEL)
    if queue:
        return str(queue), "", ""
    if f"{namespace}/{DEFAULT_LOCAL_QUEUE}" in env.local_queues:
        return DEFAULT_LOCAL_QUEUE, "", ""
    if cfg.manage_jobs_without_queue_name:
        return "", "", ""
    return (
        None,
        f"metadata.labels[{QUEUE_LABEL}]",
        "not set (and no LocalQueue named default in its namespace): Kueue does not manage it",
    )


def validate_on_create(obj: JSON, ref: str) -> None:
    """ValidateJobOnCreate: the queue-name label and the prebuilt Workload's
    name are object names; max-exec-time-seconds is a positive integer."""
    md = obj.get("metadata") or {}
    labels, annotations = md.get("labels") or {}, md.get("annotations") or {}
    if labels.get(QUEUE_LABEL):
        v.object_name(labels[QUEUE_LABEL], ref, f"metadata.labels[{QUEUE_LABEL}]")
    for where, values in (("annotations", annotations), ("labels", labels)):
        if values.get(PREBUILT_WORKLOAD_LABEL):  # the annotation wins (PrebuiltWorkloadNameFor)
            path = f"metadata.{where}[{PREBUILT_WORKLOAD_LABEL}]"
            v.object_name(values[PREBUILT_WORKLOAD_LABEL], ref, path)
            break
    max_exec_seconds(obj, ref)


def prebuilt_workload_name(obj: JSON) -> str:
    """PrebuiltWorkloadNameFor (WorkloadIdentifierAnnotations on): the job runs
    as that existing Workload instead of one Kueue creates."""
    md = obj.get("metadata") or {}
    name = (md.get("annotations") or {}).get(PREBUILT_WORKLOAD_LABEL) or (md.get("labels") or {}).get(
        PREBUILT_WORKLOAD_LABEL
    )
    return str(name or "")


def max_exec_seconds(obj: JSON, ref: str) -> int | None:
    """The kueue.x-k8s.io/max-exec-time-seconds label (validateCreateForMaxExecTime)."""
    raw = ((obj.get("metadata") or {}).get("labels") or {}).get(MAX_EXEC_TIME_LABEL)
    if raw is None:
        return None
    path = f"metadata.labels[{MAX_EXEC_TIME_LABEL}]"
    n = atoi(raw)
    if n is None:
        v.invalid(ref, path, raw, f'strconv.Atoi: parsing "{raw}": invalid syntax')
    if n <= 0:
        v.invalid(ref, path, n, "should be greater than 0")
    return n


def atoi(s: str) -> int | None:
    """Go's strconv.Atoi: optional sign, ASCII digits only."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not body.isascii() or not body.isdigit():
        return None
    return int(s)


def priority(
    obj: JSON, ref: str, pod_specs: list[tuple[str, JSON]], env: Environment
) -> tuple[dict[str, str] | None, int]:
    """(spec.priorityClassRef, spec.priority) of the job's Workload
    (ExtractPriority): the kueue.x-k8s.io/priority-class label's
    WorkloadPriorityClass (defaulted to one named "default" when it exists,
    ApplyDefaultWorkloadPriorityClass), else the first pod template's
    priorityClassName's PriorityClass, else the globalDefault PriorityClass
    with the lowest value, else 0. A class that does not exist is a
    MissingReferenceError (Kueue creates no Workload then). ``pod_specs``:
    (field path, pod template spec) of each pod set, in pod set order."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    wpc_name = labels.get(PRIORITY_LABEL) or ""
    path = f"metadata.labels[{PRIORITY_LABEL}]"
    defaulting = env.configuration.feature_gates.get(WPC_DEFAULTING_GATE, True)
    if not wpc_name and defaulting and DEFAULT_PRIORITY_CLASS in env.workload_priority_classes:
        wpc_name = DEFAULT_PRIORITY_CLASS
    if wpc_name:
        wpc = env.workload_priority_classes.get(wpc_name)
        if wpc is None:
            hint = v.did_you_mean(wpc_name, env.workload_priority_classes)
            raise MissingReferenceError(ref, path, f'WorkloadPriorityClass "{wpc_name}" not found{hint}')
        return _class_ref(KUEUE_GROUP, "WorkloadPriorityClass", wpc.name), wpc.value
    for spec_path, spec in pod_specs:
        pc_name = spec.get("priorityClassName")
        if pc_name:
            pc = env.priority_classes.get(pc_name) or SYSTEM_PRIORITY_CLASSES.get(pc_name)
            if pc is None:
                path = v.child(spec_path, "priorityClassName")
                hint = v.did_you_mean(pc_name, [*env.priority_classes, *SYSTEM_PRIORITY_CLASSES])
                raise MissingReferenceError(ref, path, f'PriorityClass "{pc_name}" not found{hint}')
            return _class_ref("scheduling.k8s.io", "PriorityClass", pc.name), pc.value
    defaults = [pc for pc in env.priority_classes.values() if pc.global_default]
    if defaults:
        pc = min(defaults, key=lambda c: c.value)  # getDefaultPriorityClass: lowest value wins
        return _class_ref("scheduling.k8s.io", "PriorityClass", pc.name), pc.value
    return None, 0


def _class_ref(group: str, kind: str, name: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "name": name}


def workload_name(
    kind: str, group: str, job_name: str, job_uid: str, *, short: bool = False, max_name: int = 253
) -> str:
    """GetWorkloadNameForOwnerWithGVK: ``<kind>-<name>-<5 hex of sha1>``,
    the prefix cut so that the name fits (63 with the ShortWorkloadNames gate)."""
    h = hashlib.sha1(f"{kind}\n{group}\n{job_name}\n{job_uid}".encode()).hexdigest()[:5]
    limit = 63 if short else max_name
    prefix = f"{kind.lower()}-{job_name}"[: limit - 1 - 5]
    return f"{prefix}-{h}"


def controller_name(framework: str) -> str:
    """The reporting controller of a job integration's Events (setup.go:
    ``<framework>-<manager>-controller``)."""
    return f"{framework}-kueue-controller"


def controlling_owner(obj: JSON) -> dict[str, Any] | None:
    """metav1.GetControllerOf: the owner reference with controller: true."""
    for r in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(r, dict) and r.get("controller"):
            return r
    return None


# --- pod set infos: what an admission changes in a job's pod templates ------------------------


class PodSetConflict(Exception):
    """podset.BadPodSetsUpdateError: the admission cannot merge into a pod
    template (Kueue finishes the Workload as FailedToStart)."""


@dataclass
class PodSetInfo:
    """pkg/podset PodSetInfo: a pod set's count and what its pods' template
    gets (on start) or gets back (on stop)."""

    name: str
    count: int
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[JSON] = field(default_factory=list)
    scheduling_gates: list[JSON] = field(default_factory=list)


def admitted_info(
    name: str, count: int, flavors: Sequence[JSON], tas_workload: str | None = None, implied_tas: bool = False
) -> PodSetInfo:
    """FromAssignment plus the pod set label (getPodSetsInfoFromStatus): the
    nodeLabels and tolerations of each flavor the pod set was admitted with
    (``flavors``: the ResourceFlavor objects, each once). A pod set with a
    topologyAssignment (``tas_workload``: the Workload's name) also gets
    Kueue's topology scheduling gate, the Workload's name (the
    TopologyUngater finds the pods by it) and, when it asked for no topology
    (``implied_tas``), the unconstrained annotation that makes its pods TAS
    pods (not counted again as pods on their nodes)."""
    info = PodSetInfo(name, count, labels={PODSET_LABEL: name})
    if tas_workload is not None:
        if implied_tas:
            info.annotations[UNCONSTRAINED_TOPOLOGY_ANNOTATION] = "true"
        info.scheduling_gates.append({"name": TOPOLOGY_SCHEDULING_GATE})
        info.annotations[WORKLOAD_ANNOTATION] = tas_workload
    for f in flavors:
        fs = f.get("spec") or {}
        info.node_selector.update(fs.get("nodeLabels") or {})
        info.tolerations.extend(dict(t) for t in fs.get("tolerations") or [])
    return info


def pod_set_info(pod_set: JSON) -> PodSetInfo:
    """FromPodSet: what a Workload's pod set holds, to restore a template."""
    t = pod_set.get("template") or {}
    md, spec = t.get("metadata") or {}, t.get("spec") or {}
    return PodSetInfo(
        str(pod_set.get("name") or "main"),
        int(pod_set.get("count", 1)),
        dict(md.get("labels") or {}),
        dict(md.get("annotations") or {}),
        dict(spec.get("nodeSelector") or {}),
        [dict(x) for x in spec.get("tolerations") or []],
        [dict(x) for x in spec.get("schedulingGates") or []],
    )


def _same_toleration(a: JSON, b: JSON) -> bool:
    """utiltolerations.Equal: key, operator (Equal when empty), value and
    effect; tolerationSeconds does not count (MatchToleration)."""
    return (
        a.get("key", "") == b.get("key", "")
        and (a.get("operator") or "Equal") == (b.get("operator") or "Equal")
        and a.get("value", "") == b.get("value", "")
        and a.get("effect", "") == b.get("effect", "")
    )


def _no_conflict(what: str, have: Mapping[str, str], add: Mapping[str, str]) -> None:
    for k, val in have.items():
        if k in add and add[k] != val:
            raise PodSetConflict(
                f"invalid admission check PodSetUpdate: conflict for {what}: "
                f"conflict for key={k}, value1={val}, value2={add[k]}"
            )


def template_fields(template: JSON) -> PodSetInfo:
    """The fields of a pod template that starting and stopping change."""
    return pod_set_info({"name": "", "count": 0, "template": template})


def merged(template: JSON, info: PodSetInfo) -> PodSetInfo:
    """podset.Merge: the template's labels, annotations and nodeSelector with
    the info's added (a key with another value is a PodSetConflict), its
    tolerations and scheduling gates with the info's appended, without
    duplicates."""
    out = template_fields(template)
    _no_conflict("annotations", out.annotations, info.annotations)
    _no_conflict("labels", out.labels, info.labels)
    _no_conflict("nodeSelector", out.node_selector, info.node_selector)
    out.annotations.update(info.annotations)
    out.labels.update(info.labels)
    out.node_selector.update(info.node_selector)
    for t in info.tolerations:
        if not any(_same_toleration(e, t) for e in out.tolerations):
            out.tolerations.append(dict(t))
    for g in info.scheduling_gates:
        if g not in out.scheduling_gates:
            out.scheduling_gates.append(dict(g))
    return out


def same_fields(template: JSON, want: PodSetInfo) -> bool:
    """Whether the template holds ``want``'s labels, annotations,
    nodeSelector, tolerations and scheduling gates (absent == empty, as Go's
    maps.Equal and slices.Equal compare nil and empty)."""
    have = template_fields(template)
    return (
        have.labels == want.labels
        and have.annotations == want.annotations
        and have.node_selector == want.node_selector
        and have.tolerations == want.tolerations
        and have.scheduling_gates == want.scheduling_gates
    )


def template_merge_patch(template: JSON, want: PodSetInfo) -> JSON:
    """A JSON merge patch turning the template's five fields into ``want``'s."""
    have = template_fields(template)
    md: JSON = {}
    spec: JSON = {}
    for name, cur, new in (
        ("labels", have.labels, want.labels),
        ("annotations", have.annotations, want.annotations),
    ):
        if cur != new:
            md[name] = map_patch(cur, new)
    if have.node_selector != want.node_selector:
        spec["nodeSelector"] = map_patch(have.node_selector, want.node_selector)
    for name, cur_l, new_l in (
        ("tolerations", have.tolerations, want.tolerations),
        ("schedulingGates", have.scheduling_gates, want.scheduling_gates),
    ):
        if cur_l != new_l:
            spec[name] = new_l or None
    out: JSON = {}
    if md:
        out["metadata"] = md
    if spec:
        out["spec"] = spec
    return out


def map_patch(cur: Mapping[str, str], want: Mapping[str, str]) -> dict[str, Any] | None:
    """A merge patch turning map ``cur`` into ``want`` (None: remove the map)."""
    if not want:
        return None
    out: dict[str, Any] = {k: None for k in cur if k not in want}
    out.update(want)
    return out


def template_json_patch(template: JSON, want: PodSetInfo, path: str) -> list[JSON]:
    """JSON patch operations turning the five fields of the pod template at
    ``path`` into ``want``'s (for templates inside lists, which a merge patch
    would replace whole)."""
    have = template_fields(template)
    ops: list[JSON] = []
    md = template.get("metadata")
    new_md: JSON = {}  # the metadata to add whole when the template has none
    for name, cur, new in (
        ("labels", have.labels, want.labels),
        ("annotations", have.annotations, want.annotations),
    ):
        if cur == new:
            continue
        if not isinstance(md, dict):
            if new:
                new_md[name] = dict(new)
        elif new:
            ops.append({"op": "add", "path": f"{path}/metadata/{name}", "value": dict(new)})
        elif name in md:
            ops.append({"op": "remove", "path": f"{path}/metadata/{name}"})
    if new_md:
        ops.append({"op": "add", "path": f"{path}/metadata", "value": new_md})
    spec = template.get("spec") or {}
    for name, cur_v, new_v in (
        ("nodeSelector", have.node_selector, want.node_selector),
        ("tolerations", have.tolerations, want.tolerations),
        ("schedulingGates", have.scheduling_gates, want.scheduling_gates),
    ):
        if cur_v == new_v:
            continue
        if new_v:
            ops.append({"op": "add", "path": f"{path}/spec/{name}", "value": new_v})
        elif name in spec:
            ops.append({"op": "remove", "path": f"{path}/spec/{name}"})
    return ops


# --- generateName ---------------------------------------------------------------------------

# k8s.io/apiserver pkg/storage/names SimpleNameGenerator: generateName
# truncated to 58 characters plus 5 random characters of this alphabet
# (k8s.io/apimachinery pkg/util/rand).
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_RANDOM_LENGTH = 5
_MAX_PREFIX = 63 - _RANDOM_LENGTH


def generated_name(generate_name: str, namespace: str, ordinal: int) -> str:
    """The name the API server would give an object created with
    ``generateName``, made deterministic offline: the suffix is taken from
    sha1("<namespace>/<generateName>#<ordinal>"), ``ordinal`` counting the
    earlier objects of the input with the same kind, namespace and generateName."""
    digest = hashlib.sha1(f"{namespace}/{generate_name}#{ordinal}".encode()).digest()
    suffix = "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:_RANDOM_LENGTH])
    return generate_name[:_MAX_PREFIX] + suffix


# --- Topology Aware Scheduling: what Kueue puts on a TAS pod set's pods ------------------------

TOPOLOGY_SCHEDULING_GATE = "kueue.x-k8s.io/topology"
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
