"""From the object model to dense ids: the input both engines are built from.

The compiler resolves names once: resources, flavors, ClusterQueues and
cohort nodes get dense integer ids, quotas become per-node tables keyed by
flavor-resource ids, and every workload becomes a ``WorkloadSpec`` that says
which ClusterQueue it is offered to, with what priority, timestamps and
per-pod requests. Everything that depends only on names and labels (namespace
selectors, taints, node affinity, LocalQueue resolution) is decided here, in
one place, so the engines only do quota arithmetic and ordering.

This module holds the specs and compiles the Topology; engine/workloads.py
compiles the workloads against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from ..api.errors import EngineError
from ..api.features import FeatureGates
from ..api.model import ClusterQueue, ClusterState, Cohort, ResourceGroup
from ..api.requests import quota_requests
from ..cluster.queue_readiness import cluster_queue_readiness
from .tas import TasPodSetRequest, TasSpec, compile_tas
from .workload_scan import WorkloadScan, workload_scan

# One sentinel for "no limit" (conventions: INT64_MAX).
NO_LIMIT = (1 << 63) - 1

# Policy codes shared with the C++ engine (csrc/include/kueue_fast/types.hpp).
POLICY_CODES = {"Never": 0, "LowerPriority": 1, "LowerOrNewerEqualPriority": 2, "Any": 3}
FUNGIBILITY_CODES = {"MayStopSearch": 0, "TryNextFlavor": 1}
PREFERENCE_CODES = {None: 0, "BorrowingOverPreemption": 1, "PreemptionOverBorrowing": 2}
STRATEGY_CODES = {"StrictFIFO": 0, "BestEffortFIFO": 1}
FAIR_STRATEGY_CODES = {"LessThanOrEqualToFinalShare": 0, "LessThanInitialShare": 1}

# Why a workload offered to a ClusterQueue cannot be nominated (checked by the
# engines in Kueue's nominate order).
BLOCK_NONE = 0
BLOCK_NAMESPACE_MISMATCH = 1
BLOCK_RESOURCES_INVALID = 2

NAMESPACE_MISMATCH_MESSAGE = "Workload namespace doesn't match ClusterQueue selector"


@dataclass
class ResourceGroupSpec:
    resources: list[int]  # covered resource ids, in coveredResources order
    flavors: list[int]  # flavor ids, in list order


@dataclass
class ClusterQueueSpec:
    name: str
    groups: list[ResourceGroupSpec]
    strategy: int
    within_cluster_queue: int
    reclaim_within_cohort: int
    borrow_within_cohort: int  # 0 Never, 1 LowerPriority
    max_priority_threshold: int | None
    when_can_borrow: int
    when_can_preempt: int
    preference: int
    active: bool
    inactive_message: str
    fair_weight: float
    # Admission fair sharing orders this ClusterQueue's workloads by their
    # LocalQueues' usage: spec.admissionScope.admissionMode is
    # UsageBasedAdmissionFairSharing and the Configuration has
    # admissionFairSharing (kueue admissionfairsharing.ResourceWeights).
    admission_fair_sharing: bool = False

    def group_of(self, rid: int) -> int:
        """Index of the resource group covering the resource, or -1."""
        for i, g in enumerate(self.groups):
            if rid in g.resources:
                return i
        return -1


@dataclass
class LocalQueueSpec:
    """A LocalQueue, for admission fair sharing (ids: sorted by ``namespace/name``)."""

    name: str  # "namespace/name"
    cluster_queue: int  # spec.clusterQueue; -1 when that ClusterQueue does not exist
    fair_weight: float  # spec.fairSharing.weight (default 1; 0 allowed)
    stopped: bool  # spec.stopPolicy is not None: Kueue's reconciler never samples it
    # status.fairSharing.admissionFairSharingStatus.consumedResources, the
    # persisted history the usage ledger starts from: (resource id, nanos of
    # the base unit, 1 cpu = 10**9), by resource id.
    consumed: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class AdmissionFairSharingSpec:
    """Configuration.admissionFairSharing (set only when the
    AdmissionFairSharing feature gate is on, the default)."""

    usage_half_life_s: float  # usageHalfLifeTime, seconds (0: no history kept)
    usage_sampling_interval_s: float  # usageSamplingInterval, seconds
    resource_weights: list[float]  # per resource id; 1.0 where not configured


@dataclass
class Topology:
    """Everything but the workloads, with dense ids."""

    resource_names: list[str]
    flavor_names: list[str]
    fr_pairs: list[tuple[int, int]]  # fr id -> (flavor id, resource id)
    node_names: list[str]  # ClusterQueues first (ids 0..n_cq-1), then cohorts
    n_cq: int
    node_parent: list[int]  # -1 for roots
    # Per node: fr id -> (nominal, borrowing limit, lending limit); limits
    # NO_LIMIT when unset. Absent fr: no quota entry (Kueue's map semantics).
    quotas: list[dict[int, tuple[int, int, int]]]
    fair_weight: list[float]
    cluster_queues: list[ClusterQueueSpec]
    fair_sharing: bool
    fair_strategies: list[int]
    # Flavor eligibility table: class id -> per flavor id, None (usable) or
    # Kueue's rejection message. Grows as new pod template shapes appear.
    flavor_classes: list[list[str | None]] = field(default_factory=list)
    # Admission fair sharing: every LocalQueue (ids as WorkloadSpec.local_queue)
    # and the configuration; None when not configured (then nothing else of
    # admission fair sharing applies).
    local_queues: list[LocalQueueSpec] = field(default_factory=list)
    admission_fair_sharing: AdmissionFairSharingSpec | None = None
    # The Configuration's feature gates, resolved with Kueue's defaults.
    gates: FeatureGates = field(default_factory=FeatureGates)
    # waitForPodsReady.blockAdmission: nothing is admitted while a workload
    # holding quota is not PodsReady (scheduler.go waitForPodsReadyIfNeeded).
    block_admission_for_pods_ready: bool = False
    # Topology Aware Scheduling: every TAS flavor's topology (kueue_fast/engine/tas.py);
    # None without a TAS flavor.
    tas: TasSpec | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.node_names)

    def fr_id(self, flavor: int, resource: int) -> int:
        return self._fr_index[(flavor, resource)]

    def __post_init__(self) -> None:
        self._fr_index = {p: i for i, p in enumerate(self.fr_pairs)}
        self.pods_rid = self.resource_names.index("pods") if "pods" in self.resource_names else -1


@dataclass
class PodSetSpec:
    name: str
    count: int
    requests: list[tuple[int, int]]  # (resource id, per-pod amount), by resource name
    min_count: int | None = None
    flavor_class: int = 0
    # Topology Aware Scheduling (only with Topology.tas): what the pod set asks
    # of the topology (None: no TAS, explicit or implied), and its pod's
    # requests as the placement counts them, per TAS resource (-1: not asked).
    tas: TasPodSetRequest | None = None
    tas_requests: list[int] | None = None


@dataclass
class AdmissionSpec:
    cluster_queue: int
    # Per pod set of the workload: (admitted count, [(resource id, flavor id or -1, total amount)])
    pod_sets: list[tuple[int, list[tuple[int, int, int]]]]
    time_ns: int
    # Per pod set, its topologyAssignment's usage (Topology.tas):
    # (TAS flavor, leaf or -1, hostname id or -1, pods) per domain the
    # flavor's snapshot or the cache knows (kueue addTASUsage skips the others).
    tas: list[list[tuple[int, int, int, int]]] | None = None


@dataclass
class WorkloadSpec:
    namespace: str
    name: str
    uid: str
    cluster_queue: int  # where it queues when pending; -1: nowhere (see unqueued_reason)
    priority: int
    queue_ts: int  # queue order timestamp (ns)
    scheduling_hash: int
    pod_sets: list[PodSetSpec]
    block: int = BLOCK_NONE
    block_message: str = ""
    admission: AdmissionSpec | None = None
    unqueued_reason: str = ""  # why a pending workload is in no queue
    # Its LocalQueue (spec.queueName in its namespace): id into
    # Topology.local_queues, -1 when that LocalQueue does not exist. Admission
    # fair sharing charges the LocalQueue's usage and orders by it.
    local_queue: int = -1
    # spec.queueName as written: Kueue's preemption ordering compares these
    # names, not LocalQueue identities (resourceUsagePreemptionEnabled).
    queue_name: str = ""
    # The kueue.x-k8s.io/job-uid label, named in the preemption messages it causes.
    job_uid: str = ""
    # An admitted workload's PodsReady=True condition (waitForPodsReady).
    pods_ready: bool = False


JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"


# --- topology ------------------------------------------------------------------


@dataclass
class CyclesRun:
    """What ``run_cycles`` (both engines) did, without a return to the
    caller between cycles: per cycle its heads and newly parked count; the
    admissions, the preemptions (with the admission time of the admission
    each ended), the heads tried and left pending and the heads parked, each
    with the offset (0-based, within the call) of its cycle, in cycle order.
    Arrays of int (numpy for the native engine, lists for the reference)."""

    cycles: int
    stable: bool
    heads: Any
    newly_parked: Any
    admitted: Any
    admitted_cycle: Any
    preempted: Any
    preempted_cycle: Any
    preempted_admission_ns: Any
    attempted: Any
    attempted_cycle: Any
    parked: Any
    parked_cycle: Any


def cohort_graph(state: ClusterState) -> tuple[list[str], dict[str, str | None], set[str]]:
    """Cohort names (sorted), their parents, and the cohorts caught in a cycle."""
    names: set[str] = set(state.cohorts)
    for cq in state.cluster_queues.values():
        if cq.cohort:
            names.add(cq.cohort)
    for co in state.cohorts.values():
        if co.parent:
            names.add(co.parent)
    parent: dict[str, str | None] = {n: None for n in names}
    for co in state.cohorts.values():
        parent[co.name] = co.parent
    in_cycle: set[str] = set()
    for start in sorted(names):
        seen: list[str] = []
        node: str | None = start
        while node is not None and node not in seen:
            seen.append(node)
            node = parent[node]
        if node is not None:  # revisited a node: the loop from `node` is a cycle
            in_cycle.update(seen[seen.index(node) :])
    return sorted(names), parent, in_cycle


def cycle_path(parent: dict[str, str | None], cohort: str) -> list[str]:
    """The cohorts from ``cohort`` up its parents until one repeats, ending with
    the repeated one (``["a", "b", "a"]``); the cycle starts at the last one's
    first place."""
    path: list[str] = []
    node: str | None = cohort
    while node is not None and node not in path:
        path.append(node)
        node = parent.get(node)
    if node is not None:
        path = path[path.index(node) :] + [node]
    return path


def _group_specs(
    groups: list[ResourceGroup], rid: dict[str, int], fid: dict[str, int]
) -> list[ResourceGroupSpec]:
    return [
        ResourceGroupSpec([rid[r] for r in g.covered_resources], [fid[f.name] for f in g.flavors])
        for g in groups
    ]


def _quota_table(
    groups: list[ResourceGroup], rid: dict[str, int], fid: dict[str, int], fr_of: dict[tuple[int, int], int]
) -> dict[int, tuple[int, int, int]]:
    table: dict[int, tuple[int, int, int]] = {}
    for g in groups:
        for fq in g.flavors:
            for rq in fq.resources:
                fr = fr_of[(fid[fq.name], rid[rq.name])]
                bl = NO_LIMIT if rq.borrowing_limit is None else rq.borrowing_limit
                ll = NO_LIMIT if rq.lending_limit is None else rq.lending_limit
                table[fr] = (rq.nominal, bl, ll)
    return table


def _inactive_message(cq: ClusterQueue, state: ClusterState, cycle_cohorts: set[str]) -> str:
    """Empty when the scheduler takes heads from the ClusterQueue; else the
    message its pending workloads get (kueue scheduler.go nominate). Inactive:
    not Ready (status.cluster_queue_readiness), or in a cohort cycle (kueue
    snapshot.go skipInactiveCQReason)."""
    if not cluster_queue_readiness(cq, state).active or (cq.cohort and cq.cohort in cycle_cohorts):
        return f"ClusterQueue {cq.name} is inactive"
    return ""


def queue_waiting_reason(cq: ClusterQueueSpec) -> tuple[str, str]:
    """(reason, message) of a workload pending in ``cq`` that the scheduler never tried."""
    if not cq.active:
        return "Suspended", cq.inactive_message
    return "Pending", f"waiting for its turn in ClusterQueue {cq.name}"


# One LocalQueue's admission fair sharing ledger entry as both engines show it
# (afs_ledger_state) and take it back (restore_afs_ledger): amounts in nanos of
# the base unit by resource name, LastUpdate, and the usage that orders it.
class LedgerEntry(TypedDict):
    consumed: dict[str, int]
    pending_penalty: dict[str, int]
    last_update_ns: int
    usage: float


LedgerState = dict[str, LedgerEntry]
# (LocalQueue id, consumed, pending penalty, LastUpdate ns, usage), amounts as
# (resource id, nanos) by resource id.
LedgerRow = tuple[int, list[tuple[int, int]], list[tuple[int, int]], int, float]
# (LocalQueue id, consumed as (resource id, nanos) by resource id, LastUpdate ns).
LedgerSeed = tuple[int, list[tuple[int, int]], int]


def afs_ledger_state(topology: Topology, rows: list[LedgerRow]) -> LedgerState:
    """The engines' ledger rows by LocalQueue name and resource name; the
    entry of workloads without a LocalQueue (id -1) is left out."""
    names = topology.resource_names
    return {
        topology.local_queues[lq].name: {
            "consumed": {names[r]: v for r, v in consumed},
            "pending_penalty": {names[r]: v for r, v in pending},
            "last_update_ns": last_update,
            "usage": usage,
        }
        for lq, consumed, pending, last_update, usage in rows
        if lq >= 0
    }


def afs_ledger_entries(topology: Topology, state: LedgerState) -> list[LedgerSeed]:
    """A ledger carried over a rebuild, in this topology's ids: (LocalQueue id,
    consumed by resource id, LastUpdate ns). Penalties are settled by then and
    Kueue's ledger outlives ClusterQueue and flavor changes (it lives in the
    queue manager, keyed by LocalQueue): LocalQueues and resources this
    topology does not know are dropped."""
    lq_id = {lq.name: i for i, lq in enumerate(topology.local_queues)}
    rid = {n: i for i, n in enumerate(topology.resource_names)}
    out: list[LedgerSeed] = []
    for name, entry in state.items():
        lq = lq_id.get(name)
        if lq is None:
            continue
        consumed, last_update = entry.get("consumed"), entry.get("last_update_ns")
        if not isinstance(consumed, dict) or not isinstance(last_update, int):
            raise EngineError(f"admission fair sharing ledger entry of LocalQueue {name}: bad shape")
        out.append((lq, sorted((rid[r], v) for r, v in consumed.items() if r in rid), last_update))
    return out


def admission_fair_sharing_enabled(state: ClusterState) -> bool:
    """Kueue afs.Enabled: the Configuration has admissionFairSharing and the
    AdmissionFairSharing feature gate (beta, on by default) is not turned off."""
    cfg = state.configuration
    return cfg.admission_fair_sharing is not None and cfg.feature_gates.get("AdmissionFairSharing", True)


def compile_topology(
    state: ClusterState, extra_resources: set[str] | None = None, scan: WorkloadScan | None = None
) -> Topology:
    """Dense ids for resources, flavors, ClusterQueues and cohorts, and their
    quotas; ``scan``: the state's workload_scan when the caller made it already."""
    afs_on = admission_fair_sharing_enabled(state)
    if scan is None:
        scan = workload_scan(state.workloads)
    resource_names, flavor_names = _resource_and_flavor_names(state, afs_on, extra_resources, scan)
    rid = {n: i for i, n in enumerate(resource_names)}
    fid = {n: i for i, n in enumerate(flavor_names)}
    fr_pairs = [(f, r) for f in range(len(flavor_names)) for r in range(len(resource_names))]
    fr_of = {p: i for i, p in enumerate(fr_pairs)}

    cohort_names, cohort_parent, cycle_cohorts = cohort_graph(state)
    cq_names = sorted(state.cluster_queues)
    node_names = cq_names + cohort_names
    node_of = {("cq", n): i for i, n in enumerate(cq_names)}
    node_of.update({("cohort", n): len(cq_names) + i for i, n in enumerate(cohort_names)})

    node_parent: list[int] = []
    quotas: list[dict[int, tuple[int, int, int]]] = []
    fair_weight: list[float] = []
    cq_specs: list[ClusterQueueSpec] = []
    for name in cq_names:
        cq = state.cluster_queues[name]
        node_parent.append(node_of[("cohort", cq.cohort)] if cq.cohort else -1)
        quotas.append(_quota_table(cq.resource_groups, rid, fid, fr_of))
        fair_weight.append(cq.fair_weight)
        inactive = _inactive_message(cq, state, cycle_cohorts)
        cq_specs.append(_cluster_queue_spec(name, cq, inactive, afs_on, rid, fid))
    for name in cohort_names:
        co: Cohort | None = state.cohorts.get(name)
        parent = cohort_parent[name]
        # A cohort on a cycle is cut loose: its ClusterQueues are inactive anyway.
        if parent is None or name in cycle_cohorts:
            node_parent.append(-1)
        else:
            node_parent.append(node_of[("cohort", parent)])
        quotas.append(_quota_table(co.resource_groups, rid, fid, fr_of) if co else {})
        fair_weight.append(co.fair_weight if co else 1.0)

    fs = state.configuration.fair_sharing
    wait = state.configuration.wait_for_pods_ready
    return Topology(
        resource_names=resource_names,
        flavor_names=flavor_names,
        fr_pairs=fr_pairs,
        node_names=node_names,
        n_cq=len(cq_names),
        node_parent=node_parent,
        quotas=quotas,
        fair_weight=fair_weight,
        cluster_queues=cq_specs,
        fair_sharing=fs is not None,
        fair_strategies=[FAIR_STRATEGY_CODES[s] for s in fs.preemption_strategies] if fs else [],
        local_queues=_local_queue_specs(state, afs_on, rid, cq_names),
        admission_fair_sharing=_admission_fair_sharing_spec(state, resource_names) if afs_on else None,
        gates=FeatureGates.resolve(state.configuration.feature_gates),
        block_admission_for_pods_ready=wait is not None and wait.block_admission,
        tas=compile_tas(state, flavor_names),
    )


def _resource_and_flavor_names(
    state: ClusterState, afs_on: bool, extra_resources: set[str] | None, scan: WorkloadScan
) -> tuple[list[str], list[str]]:
    """Every resource and flavor the state names (quotas, requests, admissions,
    the fair sharing ledger), sorted: their dense ids are their positions."""
    resources: set[str] = set(extra_resources or ())
    if afs_on:
        for lq in state.local_queues.values():
            resources.update(lq.afs_consumed_nanos)
    flavors: set[str] = set(state.resource_flavors)
    groups_of: list[list[ResourceGroup]] = [cq.resource_groups for cq in state.cluster_queues.values()]
    groups_of += [co.resource_groups for co in state.cohorts.values()]
    for groups in groups_of:
        for g in groups:
            resources.update(g.covered_resources)
            for f in g.flavors:
                flavors.add(f.name)
    # which names quota_requests gives depends on the names alone (amounts only change values):
    # the requests' names once, through it, give every workload's
    resources.update(quota_requests(dict.fromkeys(scan.requested, 0), state.configuration.resources))
    for wl in scan.admitted:
        for psa in wl.admission.pod_set_assignments:
            resources.update(psa.resource_usage)
            flavors.update(psa.flavors.values())
    return sorted(resources), sorted(flavors)


def _cluster_queue_spec(
    name: str, cq: ClusterQueue, inactive: str, afs_on: bool, rid: dict[str, int], fid: dict[str, int]
) -> ClusterQueueSpec:
    """The ClusterQueue's groups, policies as codes, and whether it is active
    (``inactive``: why not, "" when active)."""
    return ClusterQueueSpec(
        name=name,
        groups=_group_specs(cq.resource_groups, rid, fid),
        strategy=STRATEGY_CODES[cq.queueing_strategy],
        within_cluster_queue=POLICY_CODES[cq.preemption.within_cluster_queue],
        reclaim_within_cohort=POLICY_CODES[cq.preemption.reclaim_within_cohort],
        borrow_within_cohort=POLICY_CODES[cq.preemption.borrow_within_cohort_policy],
        max_priority_threshold=cq.preemption.max_priority_threshold,
        when_can_borrow=FUNGIBILITY_CODES[cq.flavor_fungibility.when_can_borrow],
        when_can_preempt=FUNGIBILITY_CODES[cq.flavor_fungibility.when_can_preempt],
        preference=PREFERENCE_CODES[cq.flavor_fungibility.preference],
        active=not inactive,
        inactive_message=inactive,
        fair_weight=cq.fair_weight,
        admission_fair_sharing=afs_on and cq.usage_based_admission_fair_sharing,
    )


def _local_queue_specs(
    state: ClusterState, afs_on: bool, rid: dict[str, int], cq_names: list[str]
) -> list[LocalQueueSpec]:
    """The LocalQueues by key: their ClusterQueue's id (-1: none), stopped or
    not, and the usage their status carries for admission fair sharing."""
    cq_id = {n: i for i, n in enumerate(cq_names)}
    local_queues: list[LocalQueueSpec] = []
    for key in sorted(state.local_queues):
        lq = state.local_queues[key]
        consumed = sorted((rid[r], n) for r, n in lq.afs_consumed_nanos.items()) if afs_on else []
        stopped = lq.stop_policy != "None"
        local_queues.append(
            LocalQueueSpec(key, cq_id.get(lq.cluster_queue, -1), lq.fair_weight, stopped, consumed)
        )
    return local_queues


def _admission_fair_sharing_spec(state: ClusterState, resource_names: list[str]) -> AdmissionFairSharingSpec:
    afs_cfg = state.configuration.admission_fair_sharing
    assert afs_cfg is not None  # admission_fair_sharing_enabled
    return AdmissionFairSharingSpec(
        afs_cfg.usage_half_life_s,
        afs_cfg.usage_sampling_interval_s,
        [afs_cfg.resource_weights.get(r, 1.0) for r in resource_names],
    )
