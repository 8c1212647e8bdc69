"""What Kueue's jobframework decides for every kind of job before its Workload
exists: whether Kueue manages the job, in which LocalQueue, at which priority,
and the name the API server gives a job created with ``generateName``.

Pure functions of the job and an :class:`Environment` (what the cluster holds
besides the job); no API client. Kueue sources (pkg/controller/jobframework):
reconciler.go ReconcileGenericJob (namespace selector, queue-name label) and
ExtractPriority; defaults.go ApplyDefaultLocalQueue and
ApplyDefaultWorkloadPriorityClass; validation.go ValidateJobOnCreate;
pkg/util/priority/priority.go.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import validation as v
from ..errors import MissingReferenceError
from ..model import Configuration, WorkloadPriorityClass

JSON = dict[str, Any]

KUEUE_API = "kueue.x-k8s.io/v1beta2"
KUEUE_GROUP = "kueue.x-k8s.io"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
PREBUILT_WORKLOAD_LABEL = "kueue.x-k8s.io/prebuilt-workload-name"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
RESOURCE_IN_USE = "kueue.x-k8s.io/resource-in-use"

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
            raise MissingReferenceError(ref, path, f'WorkloadPriorityClass "{wpc_name}" not found')
        return _class_ref(KUEUE_GROUP, "WorkloadPriorityClass", wpc.name), wpc.value
    for spec_path, spec in pod_specs:
        pc_name = spec.get("priorityClassName")
        if pc_name:
            pc = env.priority_classes.get(pc_name) or SYSTEM_PRIORITY_CLASSES.get(pc_name)
            if pc is None:
                path = v.child(spec_path, "priorityClassName")
                raise MissingReferenceError(ref, path, f'PriorityClass "{pc_name}" not found')
            return _class_ref("scheduling.k8s.io", "PriorityClass", pc.name), pc.value
    defaults = [pc for pc in env.priority_classes.values() if pc.global_default]
    if defaults:
        pc = min(defaults, key=lambda c: c.value)  # getDefaultPriorityClass: lowest value wins
        return _class_ref("scheduling.k8s.io", "PriorityClass", pc.name), pc.value
    return None, 0


def _class_ref(group: str, kind: str, name: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "name": name}


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
