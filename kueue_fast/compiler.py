"""From the object model to dense ids: the input both engines are built from.

The compiler resolves names once: resources, flavors, ClusterQueues and
cohort nodes get dense integer ids, quotas become per-node tables keyed by
flavor-resource ids, and every workload becomes a ``WorkloadSpec`` that says
which ClusterQueue it is offered to, with what priority, timestamps and
per-pod requests. Everything that depends only on names and labels (namespace
selectors, taints, node affinity, LocalQueue resolution) is decided here, in
one place, so the engines only do quota arithmetic and ordering.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, TypedDict

from . import node_affinity
from .errors import EngineError
from .fastjson import exact_key
from .features import FeatureGates
from .model import ClusterQueue, ClusterState, Cohort, PodSet, ResourceGroup, Workload
from .requests import quota_requests
from .status import cluster_queue_readiness

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


@dataclass
class AdmissionSpec:
    cluster_queue: int
    # Per pod set of the workload: (admitted count, [(resource id, flavor id or -1, total amount)])
    pod_sets: list[tuple[int, list[tuple[int, int, int]]]]
    time_ns: int


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


def compile_topology(state: ClusterState, extra_resources: set[str] | None = None) -> Topology:
    """Dense ids for resources, flavors, ClusterQueues and cohorts, and their quotas."""
    afs_on = admission_fair_sharing_enabled(state)
    resource_names, flavor_names = _resource_and_flavor_names(state, afs_on, extra_resources)
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
    )


def _resource_and_flavor_names(
    state: ClusterState, afs_on: bool, extra_resources: set[str] | None
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
    rules = state.configuration.resources
    for wl in state.workloads.values():
        for ps in wl.pod_sets:
            resources.update(quota_requests(ps.requests, rules))
        if wl.admission is not None:
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


# --- workloads -------------------------------------------------------------------


class WorkloadCompiler:
    """Turns model Workloads into WorkloadSpecs against one Topology.

    Keeps the interned flavor-eligibility classes, so that workloads added
    later (simulator, controller) share rows with earlier ones."""

    def __init__(self, state: ClusterState, topology: Topology) -> None:
        self.state = state
        self.topology = topology
        self._rid = {n: i for i, n in enumerate(topology.resource_names)}
        self._fid = {n: i for i, n in enumerate(topology.flavor_names)}
        self._cq_id = {cq.name: i for i, cq in enumerate(topology.cluster_queues)}
        self._lq_id = {lq.name: i for i, lq in enumerate(topology.local_queues)}
        self._class_of: dict[tuple[object, ...], int] = {}
        topology.flavor_classes.clear()
        # scheduling_hash by an exact key of what it depends on (see _hash_key)
        self._hash_of: dict[tuple[object, ...], tuple[list[dict[str, Any]], int]] = {}

    def flavor_class(self, ps: PodSet) -> int:
        shape = node_affinity.pod_set_shape(ps)
        cid = self._class_of.get(shape)
        if cid is None:
            row: list[str | None] = []
            for fname in self.topology.flavor_names:
                flavor = self.state.resource_flavors.get(fname)
                row.append(None if flavor is None else node_affinity.flavor_rejection(flavor, ps))
            cid = len(self.topology.flavor_classes)
            self.topology.flavor_classes.append(row)
            self._class_of[shape] = cid
        return cid

    def resource_id(self, name: str) -> int:
        rid = self._rid.get(name)
        if rid is None:
            raise KeyError(name)
        return rid

    def _pod_sets(self, wl: Workload) -> tuple[list[PodSetSpec], list[int], list[dict[str, int]]]:
        """The pod sets as the engines take them, their effective counts and charged requests."""
        reclaimable = self.topology.gates.reclaimable_pods
        pod_sets = []
        counts = []
        charged = self.charged_requests(wl)
        for ps, per_pod in zip(wl.pod_sets, charged, strict=True):
            # ReclaimablePods: pods the job declared done no longer need quota.
            count = max(0, ps.count - ps.reclaimable) if reclaimable else ps.count
            counts.append(count)
            requests = sorted(((self._rid[r], v) for r, v in per_pod.items()), key=lambda x: x[0])
            pod_sets.append(PodSetSpec(ps.name, count, requests, ps.min_count, self.flavor_class(ps)))
        return pod_sets, counts, charged

    def compile(self, wl: Workload) -> WorkloadSpec:
        pod_sets, counts, charged = self._pod_sets(wl)
        ignore_name = self.topology.gates.scheduling_equivalence_hashing_ignore_pod_set_name
        spec = WorkloadSpec(
            namespace=wl.namespace,
            name=wl.name,
            uid=wl.uid or wl.key,
            cluster_queue=-1,
            priority=wl.priority,
            queue_ts=self._queue_ts(wl),
            scheduling_hash=self._scheduling_hash(wl, counts, ignore_name, charged),
            pod_sets=pod_sets,
            local_queue=self._lq_id.get(f"{wl.namespace}/{wl.queue_name}", -1),
            queue_name=wl.queue_name,
            job_uid=_job_uid(wl),
        )
        if wl.admission is not None:
            spec.admission = self._admission(wl)
            spec.pods_ready = wl.pods_ready
        self._resolve_queue(wl, spec)
        return spec

    def _queue_ts(self, wl: Workload) -> int:
        """workload.go Ordering.GetQueueOrderTimestamp: the loader's eviction time
        of a workload evicted by the PodsReady timeout counts only when
        waitForPodsReady.requeuingStrategy.timestamp is Eviction (the default)."""
        wait = self.state.configuration.wait_for_pods_ready
        if wl.queue_order_ns is not None and wait is not None and wait.requeuing_timestamp == "Creation":
            for c in ((wl.raw.get("status") or {}).get("conditions") or []) if wl.raw else []:
                if isinstance(c, dict) and c.get("type") == "Evicted":
                    return wl.creation_ns if c.get("reason") == "PodsReadyTimeout" else wl.queue_timestamp_ns
        return wl.queue_timestamp_ns

    def charged_requests(self, wl: Workload) -> list[dict[str, int]]:
        """Per pod set, the per-pod requests charged to quota (Configuration
        resources: excluded prefixes, transformations)."""
        rules = self.state.configuration.resources
        return [quota_requests(ps.requests, rules) for ps in wl.pod_sets]

    def _scheduling_hash(
        self, wl: Workload, counts: list[int], ignore_pod_set_name: bool, requests: list[dict[str, int]]
    ) -> int:
        """scheduling_hash(wl, ...), computed once per distinct key: JSON
        encoding and hashing the pod templates is most of a compile."""
        found = _hash_key(wl, counts, ignore_pod_set_name, requests)
        if found is None:
            return scheduling_hash(wl, counts, ignore_pod_set_name, requests)
        key, templates = found
        hit = self._hash_of.get(key)
        if hit is not None and all(a is b or a == b for a, b in zip(hit[0], templates, strict=True)):
            return hit[1]
        h = scheduling_hash(wl, counts, ignore_pod_set_name, requests)
        self._hash_of[key] = (templates, h)
        return h

    def _admission(self, wl: Workload) -> AdmissionSpec:
        assert wl.admission is not None
        cq = self._cq_id.get(wl.admission.cluster_queue, -1)
        by_name = {psa.name: psa for psa in wl.admission.pod_set_assignments}
        pod_sets: list[tuple[int, list[tuple[int, int, int]]]] = []
        for ps in wl.pod_sets:
            psa = by_name.get(ps.name)
            if psa is None:
                pod_sets.append((0, []))
                continue
            usage = [
                (self._rid[r], self._fid[psa.flavors[r]] if r in psa.flavors else -1, amount)
                for r, amount in sorted(psa.resource_usage.items())
            ]
            pod_sets.append((psa.count, usage))
        time_ns = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
        return AdmissionSpec(cq, pod_sets, time_ns)

    def _resolve_queue(self, wl: Workload, spec: WorkloadSpec) -> None:
        """Which ClusterQueue the workload is offered to when pending, or why none."""
        if not wl.active:
            spec.unqueued_reason = "The workload is deactivated"
            return
        cq_id, reason, selected = self._queue_of(wl.namespace, wl.queue_name)
        spec.cluster_queue, spec.unqueued_reason = cq_id, reason
        if cq_id < 0:
            return
        if not selected:
            spec.block = BLOCK_NAMESPACE_MISMATCH
            spec.block_message = NAMESPACE_MISMATCH_MESSAGE
            return
        error = _resources_error(wl)
        if error:
            spec.block = BLOCK_RESOURCES_INVALID
            spec.block_message = error

    def _queue_of(self, namespace: str, queue_name: str) -> tuple[int, str, bool]:
        """An active workload's (ClusterQueue id or -1, why none, whether the
        ClusterQueue's namespaceSelector selects the namespace)."""
        lq = self.state.local_queues.get(f"{namespace}/{queue_name}")
        if lq is None:
            return -1, f"LocalQueue {queue_name} doesn't exist", False
        if lq.stop_policy != "None":
            return -1, f"LocalQueue {queue_name} is stopped", False
        cq_id = self._cq_id.get(lq.cluster_queue)
        if cq_id is None:
            return -1, f"ClusterQueue {lq.cluster_queue} doesn't exist", False
        cq = self.state.cluster_queues[lq.cluster_queue]
        labels = self.state.namespace_labels(namespace)
        return cq_id, "", cq.namespace_selector is not None and cq.namespace_selector.matches(labels)

    def pending_batch(self) -> PendingBatch:
        """An empty :class:`PendingBatch` over this compiler."""
        return PendingBatch(self)


_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _resources_error(wl: Workload) -> str:
    """The first pod set's resources validation error ("" when none)."""
    for ps in wl.pod_sets:
        if ps.resources_validation_error:
            return ps.resources_validation_error
    return ""


class PendingBatch:
    """Pending workloads compiled straight into the native engine's bulk
    arrays (``NativeEngine.add_workloads``), without a WorkloadSpec each.

    What depends only on a workload's pod sets and priority (the engine's pod
    set rows, the scheduling hash) is computed once per distinct shape, under
    the exact key ``_hash_key`` gives (templates compared with == on a hit),
    and what depends only on its namespace and queue name once per pair. The
    values are the ones :meth:`WorkloadCompiler.compile` gives; :meth:`add`
    refuses (False) any workload whose spec the arrays cannot carry (an
    admission, admission checks, a job-uid label, no ClusterQueue): the
    caller compiles that one as usual. The memos live as long as the batch:
    build one per bulk construction, while the workloads do not change."""

    def __init__(self, compiler: WorkloadCompiler) -> None:
        self.compiler = compiler
        self._shapes: dict[tuple[object, ...], tuple[list[dict[str, Any]], list[PodSetSpec], int, str]] = {}
        self._queues: dict[tuple[str, str], tuple[int, int, int]] = {}  # -> (cq, lq, block)
        self.emptied()

    def emptied(self) -> PendingBatch:
        """No workloads (the memos stay): for the next run of pending workloads."""
        self._names: dict[str, int] = {}  # pod set name -> index into pod_set_names
        self._messages: dict[str, int] = {}  # block message -> index into block_messages
        self.keys: list[str] = []
        self._cq: list[int] = []
        self._lq: list[int] = []
        self._priority: list[int] = []
        self._queue_ts: list[int] = []
        self._hash: list[int] = []
        self._block: list[int] = []
        self._block_message: list[int] = []
        self._namespaces: list[str] = []
        self._wl_names: list[str] = []
        self._uids: list[str] = []
        self._ps_offsets: list[int] = [0]
        self._ps_count: list[int] = []
        self._ps_min: list[int] = []
        self._ps_class: list[int] = []
        self._ps_name: list[int] = []
        self._rq_offsets: list[int] = [0]
        self._rq_resource: list[int] = []
        self._rq_amount: list[int] = []
        return self

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: str, wl: Workload) -> bool:
        """Append a pending workload; False (nothing appended) when compile() must do it."""
        c = self.compiler
        if wl.admission is not None or wl.admission_checks or not wl.active or _job_uid(wl):
            return False
        queue = self._queues.get((wl.namespace, wl.queue_name))
        if queue is None:
            cq_id, _, selected = c._queue_of(wl.namespace, wl.queue_name)
            lq_id = c._lq_id.get(f"{wl.namespace}/{wl.queue_name}", -1)
            queue = (cq_id, lq_id, BLOCK_NONE if selected else BLOCK_NAMESPACE_MISMATCH)
            self._queues[(wl.namespace, wl.queue_name)] = queue
        cq_id, lq_id, block = queue
        if cq_id < 0 or type(wl.priority) is not int or not _INT32_MIN <= wl.priority <= _INT32_MAX:
            return False  # its unqueued reason lives in a WorkloadSpec only; the engine refuses it
        shape = self._shape(wl)
        if shape is None:
            return False
        pod_sets, scheduling_hash, resources_error = shape
        message = -1
        if block == BLOCK_NAMESPACE_MISMATCH:
            message = self._message(NAMESPACE_MISMATCH_MESSAGE)
        elif resources_error:
            block, message = BLOCK_RESOURCES_INVALID, self._message(resources_error)
        self.keys.append(key)
        self._cq.append(cq_id)
        self._lq.append(lq_id)
        self._priority.append(wl.priority)
        self._queue_ts.append(c._queue_ts(wl))
        self._hash.append(scheduling_hash)
        self._block.append(block)
        self._block_message.append(message)
        self._namespaces.append(wl.namespace)
        self._wl_names.append(wl.name)
        self._uids.append(wl.uid or wl.key)
        for ps in pod_sets:
            self._ps_count.append(ps.count)
            self._ps_min.append(-1 if ps.min_count is None else ps.min_count)
            self._ps_class.append(ps.flavor_class)
            name = self._names.setdefault(ps.name, len(self._names))
            self._ps_name.append(name)
            for r, amount in ps.requests:
                self._rq_resource.append(r)
                self._rq_amount.append(amount)
            self._rq_offsets.append(len(self._rq_resource))
        self._ps_offsets.append(len(self._ps_count))
        return True

    def _message(self, text: str) -> int:
        return self._messages.setdefault(text, len(self._messages))

    def _shape(self, wl: Workload) -> tuple[list[PodSetSpec], int, str] | None:
        """(pod sets, scheduling hash, resources error) as compile() gives them; None: not keyable."""
        c = self.compiler
        ignore_name = c.topology.gates.scheduling_equivalence_hashing_ignore_pod_set_name
        charged = c.charged_requests(wl)
        reclaimable = c.topology.gates.reclaimable_pods
        counts = [max(0, ps.count - ps.reclaimable) if reclaimable else ps.count for ps in wl.pod_sets]
        found = _hash_key(wl, counts, ignore_name, charged)
        if found is None:
            return None
        parts, templates = found
        # what the hash key leaves out: the names (when ignored) and what decides the flavor class
        key = (
            parts,
            tuple(ps.name for ps in wl.pod_sets),
            tuple(node_affinity.pod_set_shape(ps) for ps in wl.pod_sets),
            _resources_error(wl),
        )
        hit = self._shapes.get(key)
        if hit is not None and all(a is b or a == b for a, b in zip(hit[0], templates, strict=True)):
            return hit[1], hit[2], hit[3]
        pod_sets, counts, charged = c._pod_sets(wl)
        if any(not _INT64_MIN <= v <= _INT64_MAX for ps in pod_sets for _, v in ps.requests):
            return None  # the engine refuses it, one workload at a time
        scheduling_hash = c._scheduling_hash(wl, counts, ignore_name, charged)
        self._shapes[key] = (templates, pod_sets, scheduling_hash, _resources_error(wl))
        return pod_sets, scheduling_hash, _resources_error(wl)

    def arrays(self) -> Any:
        """The batch as ``kueue_fast.engine_contract.WorkloadArrays``."""
        import numpy as np

        from .engine_contract import WorkloadArrays

        def i64(values: list[int]) -> Any:
            return np.array(values, dtype=np.int64)

        return WorkloadArrays(
            cluster_queue=i64(self._cq),
            priority=i64(self._priority),
            queue_ts=i64(self._queue_ts),
            scheduling_hash=i64(self._hash),
            pod_set_offsets=i64(self._ps_offsets),
            pod_set_count=i64(self._ps_count),
            pod_set_min_count=i64(self._ps_min),
            pod_set_flavor_class=i64(self._ps_class),
            request_offsets=i64(self._rq_offsets),
            request_resource=i64(self._rq_resource),
            request_amount=i64(self._rq_amount),
            namespaces=self._namespaces,
            names=self._wl_names,
            uids=self._uids,
            pod_set_name=i64(self._ps_name),
            pod_set_names=list(self._names),
            block=i64(self._block),
            block_message=i64(self._block_message),
            block_messages=list(self._messages),
            local_queue=i64(self._lq),
        )


def _job_uid(wl: Workload) -> str:
    labels = (wl.raw.get("metadata") or {}).get("labels") if wl.raw else None
    uid = labels.get(JOB_UID_LABEL) if isinstance(labels, dict) else None
    return uid if isinstance(uid, str) else ""


# The pod template fields that make two workloads schedule alike (kueue
# pkg/util/pod SpecShape): requests and ports of every container, and what
# decides where pods may run.
_SHAPE_FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "runtimeClassName",
    "priority",
    "topologySpreadConstraints",
    "overhead",
    "resourceClaims",
)


def _spec_shape(template_spec: dict[str, Any]) -> dict[str, Any]:
    shape: dict[str, Any] = {k: template_spec[k] for k in _SHAPE_FIELDS if k in template_spec}
    for kind in ("initContainers", "containers"):
        shape[kind] = [
            {"requests": (c.get("resources") or {}).get("requests"), "ports": c.get("ports")}
            for c in template_spec.get(kind) or []
            if isinstance(c, dict)
        ]
    return shape


def _raw_templates(wl: Workload) -> list[object]:
    """Each pod set's template spec as scheduling_hash reads it from wl.raw."""
    raw_pod_sets = (wl.raw.get("spec") or {}).get("podSets") or [] if wl.raw else []
    out: list[object] = []
    for i in range(len(wl.pod_sets)):
        raw = raw_pod_sets[i] if i < len(raw_pod_sets) and isinstance(raw_pod_sets[i], dict) else {}
        out.append(((raw.get("template") or {}).get("spec")) or {})
    return out


def _hash_key(
    wl: Workload, counts: list[int], ignore_pod_set_name: bool, charged: list[dict[str, int]]
) -> tuple[tuple[object, ...], list[dict[str, Any]]] | None:
    """An exact key of everything scheduling_hash reads, and the templates to
    compare on a hit; None when a value is not plain JSON-like data (then the
    hash is computed). Exact: values are checked to be of their exact types
    (True is not 1 in the payload), templates are keyed by their orjson
    serialization and compared with == on a hit (fastjson.exact_key)."""
    if type(wl.priority) is not int:
        return None
    templates: list[dict[str, Any]] = []
    parts: list[object] = [wl.priority, ignore_pod_set_name]
    for ps, per_pod, count, template in zip(wl.pod_sets, charged, counts, _raw_templates(wl), strict=True):
        if type(template) is not dict or type(ps.name) is not str:
            return None
        if ps.min_count is not None and type(ps.min_count) is not int:
            return None
        requests = tuple(per_pod.items())
        for r, amount in requests:
            if type(r) is not str or type(amount) is not int:
                return None
        tkey = exact_key(template)
        if tkey is None:
            return None
        templates.append(template)
        parts.append((None if ignore_pod_set_name else ps.name, count, ps.min_count, requests, tkey))
    return tuple(parts), templates


def scheduling_hash(
    wl: Workload, counts: list[int], ignore_pod_set_name: bool, charged: list[dict[str, int]] | None = None
) -> int:
    """Kueue computeSchedulingHash (pkg/workload/workload.go): workloads with the
    same priority and the same pod sets (template shape, effective count and
    requests, minCount) fail the same way, so one failure parks them all
    (SchedulingEquivalenceHashing). ``charged``: per pod set the requests
    charged to quota (default: the pod sets' requests), as TotalRequests."""
    if charged is None:
        charged = [ps.requests for ps in wl.pod_sets]
    raw_pod_sets = (wl.raw.get("spec") or {}).get("podSets") or [] if wl.raw else []
    shapes = []
    for i, ps in enumerate(wl.pod_sets):
        raw = raw_pod_sets[i] if i < len(raw_pod_sets) and isinstance(raw_pod_sets[i], dict) else {}
        template = ((raw.get("template") or {}).get("spec")) or {}
        shape: dict[str, Any] = {
            "spec": _spec_shape(template) if isinstance(template, dict) else None,
            "count": counts[i],
            "requests": sorted((r, v * counts[i]) for r, v in charged[i].items()),
            "minCount": ps.min_count,
        }
        if not ignore_pod_set_name:
            shape["name"] = ps.name
        shapes.append(shape)
    payload = json.dumps({"podSets": shapes, "priority": wl.priority}, sort_keys=True, default=str)
    return int.from_bytes(hashlib.blake2b(payload.encode(), digest_size=8).digest(), "little") >> 1
