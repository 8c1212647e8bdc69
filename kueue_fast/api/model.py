"""Kueue's objects after loading: defaults applied, quantities parsed, validated.

This is the one in-memory form of the input. The loader (``kueue_fast.loader``)
builds it from YAML/JSON manifests in either API version; the engines are
compiled from it (``kueue_fast.engine.inputs``); the CLI writes results back
against it. Field names follow Kueue's internal (v1beta2) API in snake case.

Quantities are ``int`` in canonical units (``kueue_fast.api.quantity``): CPU-like
resources in milli-units, everything else in base units. Times are ``int``
nanoseconds since the Unix epoch (UTC).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

# Part of this module's API, declared in their own modules: label and node
# selectors, taints and tolerations; Kueue's manager Configuration.
from .configuration import (
    RELEASED_FRAMEWORKS as RELEASED_FRAMEWORKS,
    AdmissionFairSharingConfig as AdmissionFairSharingConfig,
    Configuration as Configuration,
    FairSharingConfig as FairSharingConfig,
    ResourceRules as ResourceRules,
    ResourceTransformation as ResourceTransformation,
    WaitForPodsReadyConfig as WaitForPodsReadyConfig,
    managed_jobs_default_selector as managed_jobs_default_selector,
)
from .errors import InputWarning
from .selectors import (
    NODE_SELECTOR_OPERATORS as NODE_SELECTOR_OPERATORS,
    SELECTOR_OPERATORS as SELECTOR_OPERATORS,
    TAINT_EFFECTS as TAINT_EFFECTS,
    TOLERATION_OPERATORS as TOLERATION_OPERATORS,
    LabelSelector as LabelSelector,
    LabelSelectorRequirement as LabelSelectorRequirement,
    NodeSelectorRequirement as NodeSelectorRequirement,
    NodeSelectorTerm as NodeSelectorTerm,
    Taint as Taint,
    Toleration as Toleration,
)

# --- enumerations (the values Kueue's CRDs accept, v1beta2 spelling) --------

QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
WITHIN_CQ_POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM_POLICIES = ("Never", "LowerPriority", "Any")
BORROW_WITHIN_COHORT_POLICIES = ("Never", "LowerPriority")
FUNGIBILITY_POLICIES = ("MayStopSearch", "TryNextFlavor")
FUNGIBILITY_PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
FAIR_SHARING_STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")


def object_ref(kind: str, name: str, namespace: str | None = None) -> str:
    """``Kind/name`` or ``Kind/namespace/name``: how errors and logs name objects."""
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


# --- ResourceFlavor, ClusterQueue, Cohort, LocalQueue ------------------------


@dataclass
class ResourceFlavor:
    """A ResourceFlavor: the node labels, taints and tolerations its pods get."""

    name: str
    node_labels: dict[str, str] = field(default_factory=dict)
    node_taints: list[Taint] = field(default_factory=list)
    tolerations: list[Toleration] = field(default_factory=list)
    # spec.topologyName: a Topology Aware Scheduling flavor (None: not one)
    topology_name: str | None = None


# --- Topology Aware Scheduling: Topology, Node, non-TAS Pod ---------------------

HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass
class Topology:
    """A Topology: its levels' node labels, highest first (hostname only as the lowest)."""

    name: str
    levels: list[str]


@dataclass
class Node:
    """What TAS reads of a Node (kueue tas_nodes_cache.go copyAndStripNode):
    labels, taints, allocatable, and whether it is schedulable and Ready
    (Kueue's nodes cache keeps only those, SchedulerLibraryIntegration off)."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    allocatable: dict[str, int] = field(default_factory=dict)
    unschedulable: bool = False
    ready: bool = False


@dataclass
class NodePod:
    """A running Pod not managed by TAS, on a node (kueue
    pod_usage_controller.go belongsToNonTASCache): its requests use the
    node's capacity (tas_non_tas_pod_cache.go, plus one pod)."""

    namespace: str
    name: str
    node_name: str
    requests: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TopologyRequest:
    """A pod set's topologyRequest (apis/kueue/v1beta2 PodSetTopologyRequest),
    the fields that decide placement. ``slice_topology``/``slice_size`` are the
    single slice layer (podSetSliceRequiredTopology/podSetSliceSize, or a
    one-entry podsetSliceRequiredTopologyConstraints)."""

    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None
    slice_topology: str | None = None
    slice_size: int | None = None

    @property
    def explicit(self) -> bool:
        """kueue workload.IsExplicitlyRequestingTAS."""
        return (
            self.unconstrained is not None
            or self.required is not None
            or self.preferred is not None
            or self.slice_topology is not None
            or self.slice_size is not None
        )


@dataclass(frozen=True)
class TopologyAssignment:
    """A pod set's topologyAssignment in Kueue's internal form
    (pkg/util/tas TopologyAssignment): levels and, per domain, its values at
    those levels and its pod count."""

    levels: tuple[str, ...]
    domains: tuple[tuple[tuple[str, ...], int], ...]


@dataclass
class ResourceQuota:
    """The quota of one resource in one flavor: ``nominalQuota``, ``borrowingLimit``, ``lendingLimit``."""

    name: str
    nominal: int
    borrowing_limit: int | None = None  # None: unlimited
    lending_limit: int | None = None  # None: everything can be lent


@dataclass
class FlavorQuotas:
    """One flavor of a resource group, with its quota per resource."""

    name: str
    resources: list[ResourceQuota]


@dataclass
class ResourceGroup:
    """A resource group: the resources it covers and its flavors, in order of preference."""

    covered_resources: list[str]
    flavors: list[FlavorQuotas]


@dataclass
class Preemption:
    """A ClusterQueue's ``spec.preemption``."""

    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort_policy: str = "Never"
    max_priority_threshold: int | None = None


@dataclass
class FlavorFungibility:
    """A ClusterQueue's ``spec.flavorFungibility``: when to try the next flavor."""

    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str | None = None  # None behaves as BorrowingOverPreemption


@dataclass
class ClusterQueue:
    """A ClusterQueue: quota, cohort, namespace selector, queueing, preemption and admission checks."""

    name: str
    resource_groups: list[ResourceGroup] = field(default_factory=list)
    cohort: str | None = None
    # None is Kueue's "nothing" selector (no namespace eligible); an empty
    # LabelSelector() matches every namespace.
    namespace_selector: LabelSelector | None = None
    queueing_strategy: str = "BestEffortFIFO"
    preemption: Preemption = field(default_factory=Preemption)
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    stop_policy: str = "None"
    fair_weight: float = 1.0
    # The AdmissionChecks it names (spec.admissionChecks or
    # admissionChecksStrategy), in spec order, and the flavors each applies to
    # when the strategy gives onFlavors (absent: every flavor of the queue).
    admission_checks: list[str] = field(default_factory=list)
    admission_check_flavors: dict[str, list[str]] = field(default_factory=dict)
    # spec.admissionScope.admissionMode == UsageBasedAdmissionFairSharing
    usage_based_admission_fair_sharing: bool = False


@dataclass
class AdmissionCheck:
    """An AdmissionCheck: the controller that decides it, and whether its
    Active condition is True (a check without it makes its ClusterQueues
    inactive)."""

    name: str
    controller_name: str
    active: bool = False


# Kueue's controllers with extra rules on the ClusterQueues using their checks
# (clusterqueue.go updateWithAdmissionChecks).
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"

# An admission check's state on a workload (status.admissionChecks[].state)
CheckState = Literal["Pending", "Ready", "Retry", "Rejected"]
CHECK_PENDING: Final = "Pending"
CHECK_READY: Final = "Ready"
CHECK_RETRY: Final = "Retry"
CHECK_REJECTED: Final = "Rejected"
CHECK_STATES: tuple[CheckState, ...] = (CHECK_PENDING, CHECK_READY, CHECK_RETRY, CHECK_REJECTED)


@dataclass
class AdmissionCheckState:
    """One entry of a Workload's status.admissionChecks."""

    name: str
    state: CheckState = CHECK_PENDING
    message: str = ""
    retry_count: int = 0
    # requeueAfterSeconds of a Retry: the backoff before the workload queues
    # again, counted from lastTransitionTime (admissionchecks.go GetMaxRetryTime)
    requeue_after_s: int | None = None
    last_transition_ns: int | None = field(default=None, compare=False)


@dataclass
class Cohort:
    """A Cohort object: its parent and its own quota (hierarchical cohorts)."""

    name: str
    parent: str | None = None
    resource_groups: list[ResourceGroup] = field(default_factory=list)
    fair_weight: float = 1.0


@dataclass
class LocalQueue:
    """A LocalQueue: the namespaced queue users submit to, pointing at a ClusterQueue."""

    namespace: str
    name: str
    cluster_queue: str
    stop_policy: str = "None"
    fair_weight: float = 1.0  # spec.fairSharing.weight, used by admission fair sharing
    # status.fairSharing.admissionFairSharingStatus.consumedResources: the
    # persisted usage history admission fair sharing starts from (Kueue seeds
    # its in-memory ledger from it, localqueue_controller.go). Exact amounts
    # in nanos of the base unit (1 cpu = 10**9), resource name -> amount.
    afs_consumed_nanos: dict[str, int] = field(default_factory=dict)


@dataclass
class WorkloadPriorityClass:
    """A WorkloadPriorityClass (or a ``scheduling.k8s.io`` PriorityClass: same fields)."""

    name: str
    value: int
    description: str = ""
    # scheduling.k8s.io PriorityClass globalDefault: the priority of pods (and
    # of Jobs' Workloads) that name no class.
    global_default: bool = False


@dataclass
class Namespace:
    """A Namespace's labels (what ``namespaceSelector`` matches)."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)


# --- Workload -----------------------------------------------------------------


@dataclass(slots=True)  # 100k of them: smaller, and cheaper to build and read
class PodSet:
    """One pod set of a Workload: how many pods, and what each requests."""

    name: str
    count: int
    # Per-pod requests as Kueue computes them from the template (limits
    # standing in for missing requests, init containers, sidecars, overhead).
    requests: dict[str, int] = field(default_factory=dict)
    min_count: int | None = None
    node_selector: dict[str, str] = field(default_factory=dict)
    # Required node affinity terms (ORed); None when the template has none.
    required_affinity: tuple[NodeSelectorTerm, ...] | None = None
    tolerations: list[Toleration] = field(default_factory=list)
    # status.reclaimablePods count for this pod set.
    reclaimable: int = 0
    # Set when a container requests more than its limit: Kueue leaves the
    # workload pending ("resources validation failed") instead of rejecting it.
    resources_validation_error: str | None = None
    # spec.podSets[].topologyRequest (Topology Aware Scheduling), None when
    # absent or when it asks for nothing (workload.IsExplicitlyRequestingTAS false).
    topology_request: TopologyRequest | None = None
    # The template spec the loader's bulk path read it from (kueue_fast.loader._bulk),
    # the one object all equal templates share: the compiler keys the pod set
    # by its identity while the Workload's raw still holds that very object.
    # Not an argument: a PodSet built otherwise has None.
    template_spec: dict[str, Any] | None = field(default=None, init=False, compare=False, repr=False)


@dataclass
class PodSetAssignment:
    """One pod set of an admission: the pods admitted and the flavor of each resource."""

    name: str
    count: int
    flavors: dict[str, str]  # resource -> flavor
    resource_usage: dict[str, int]  # resource -> total for the pod set
    topology_assignment: TopologyAssignment | None = None


@dataclass
class Admission:
    """A Workload's ``status.admission``: the ClusterQueue holding its quota, per pod set."""

    cluster_queue: str
    pod_set_assignments: list[PodSetAssignment]


@dataclass(slots=True)  # 100k of them: smaller, and cheaper to build and read
class Workload:
    """A Workload (or the one a Job becomes): what it asks for, where it queues, and its status."""

    namespace: str
    name: str
    queue_name: str
    pod_sets: list[PodSet]
    creation_ns: int
    priority: int = 0  # resolved: spec.priority, else the class value, else 0
    priority_class: str | None = None
    uid: str = ""
    active: bool = True  # spec.active
    # Admitted workloads: where their quota is held and since when.
    admission: Admission | None = None
    admission_ns: int | None = None
    # Finished=True: holds nothing and is never queued again.
    finished: bool = False
    # Queue order timestamp when Kueue orders by an eviction time instead of
    # creation (evicted for PodsReady timeout or by an admission check).
    queue_order_ns: int | None = None
    # PodsReady condition as given (waitForPodsReady): status True, its reason
    # (WaitForStart, WaitForRecovery, ...) and lastTransitionTime; and
    # status.requeueState (count, requeueAt).
    pods_ready: bool = False
    pods_ready_reason: str = ""
    pods_ready_ns: int | None = None
    requeue_count: int = 0
    requeue_at_ns: int | None = None
    # status.admissionChecks as given, and whether the Admitted condition is
    # True (an admitted workload stays admitted whatever its checks say, but
    # Retry and Rejected).
    admission_checks: list[AdmissionCheckState] = field(default_factory=list)
    admitted_condition: bool = False
    # The manifest as given, for `--output yaml` and the controller.
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    # The job it was made from offline, ``Job/name`` (same namespace); None
    # for a Workload given as such.
    owner: str | None = None

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @property
    def queue_timestamp_ns(self) -> int:
        """The time its place in the queue is ordered by: an eviction's, else its creation."""
        return self.queue_order_ns if self.queue_order_ns is not None else self.creation_ns


# --- Configuration ------------------------------------------------------------


def count_after_reclaim(ps: PodSet, reclaimable_pods: bool) -> int:
    """The pods of ``ps`` that still need quota (kueue workload.go
    podSetsCountsAfterReclaim: status.reclaimablePods, when the
    ReclaimablePods gate is on, never below 0)."""
    return ps.count - min(ps.reclaimable, ps.count) if reclaimable_pods else ps.count


def charged_usage(
    pod_sets: list[PodSet], name: str, count: int, usage: dict[str, int], reclaimable_pods: bool
) -> tuple[int, dict[str, int]]:
    """The (count, usage) quota charges for the admitted pod set ``name`` of
    ``count`` pods using ``usage`` (kueue workload.go totalRequestsFromAdmission):
    when the pod set's count after reclaim is lower, the usage is divided by
    ``count`` and multiplied by the count after reclaim (integers,
    Requests.Divide then Mul) and the count is the count after reclaim. The
    admission written in the Workload's status is left as it is."""
    left = next((count_after_reclaim(ps, reclaimable_pods) for ps in pod_sets if ps.name == name), 0)
    if left >= count:  # as admitted (a partial admission keeps its count)
        return count, usage
    return left, {r: _div_trunc(v, count) * left for r, v in usage.items()}


def charged_assignments(
    wl: Workload, reclaimable_pods: bool
) -> list[tuple[PodSetAssignment, int, dict[str, int]]]:
    """charged_usage of each pod set assignment of the Workload's admission."""
    assert wl.admission is not None
    return [
        (psa, *charged_usage(wl.pod_sets, psa.name, psa.count, psa.resource_usage, reclaimable_pods))
        for psa in wl.admission.pod_set_assignments
    ]


def _div_trunc(a: int, b: int) -> int:
    """Go's int64 a / b (towards zero)."""
    q = abs(a) // b
    return q if a >= 0 else -q


# --- The whole input ----------------------------------------------------------


@dataclass
class ClusterState:
    """Everything read from the input, keyed by name (namespaced: ``ns/name``)."""

    resource_flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    local_queues: dict[str, LocalQueue] = field(default_factory=dict)
    priority_classes: dict[str, WorkloadPriorityClass] = field(default_factory=dict)
    admission_checks: dict[str, AdmissionCheck] = field(default_factory=dict)
    # scheduling.k8s.io/v1 PriorityClasses (a Workload may take its priority
    # from one: priorityClassSource / priorityClassRef), by name.
    pod_priority_classes: dict[str, WorkloadPriorityClass] = field(default_factory=dict)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    workloads: dict[str, Workload] = field(default_factory=dict)
    # Topology Aware Scheduling: Topologies by name, Nodes by name, and the
    # running Pods not managed by TAS (their requests use node capacity).
    topologies: dict[str, Topology] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    node_pods: list[NodePod] = field(default_factory=list)
    configuration: Configuration = field(default_factory=Configuration)
    # The documents as read, in order, for `--output yaml` (each Workload made
    # from a job follows its job).
    documents: list[dict[str, Any]] = field(default_factory=list, repr=False)
    # What the input has that is accepted but probably not meant, or skipped.
    warnings: list[InputWarning] = field(default_factory=list)
    # Where each object came from, "Kind/[namespace/]name" -> "file (document
    # N)"; filled only when asked for (loader.build_state(keep_sources=True)).
    sources: dict[str, str] = field(default_factory=dict, repr=False)

    def namespace_labels(self, name: str) -> dict[str, str]:
        """Labels of a namespace; one given no Namespace object exists with just
        its ``kubernetes.io/metadata.name`` label (scheduling contract)."""
        ns = self.namespaces.get(name)
        if ns is not None:
            return ns.labels
        return {"kubernetes.io/metadata.name": name}
