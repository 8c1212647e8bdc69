"""The native engine against the reference engine, decision by decision.

Hypothesis draws whole clusters: flavors with node labels and taints,
ClusterQueues with one or two resource groups of one to three flavors, cohort
trees whose Cohort objects carry quota and borrowing/lending limits at every
level, preemption policies, flavor fungibility, fair sharing on or off with
weights and strategies, admission fair sharing (usage-based ClusterQueues,
several LocalQueues per ClusterQueue, some sharing a name across namespaces,
with weights, persisted history and stop policies; half-lives, sampling
intervals and resource weights), priorities, pod sets with minCount, node
selectors and tolerations, admitted and pending workloads. Both engines run
the same cycles, at irregular times, with workloads added and removed and
the configuration reapplied between cycles, and after every step we compare
the cycle report, every workload's full view (state, ClusterQueue, pod set
counts and flavors, usage, reason, message, eviction reason and message,
preempted_by, admission time), the quota tree's usage numbers, the count of
preemption candidate evaluations and the admission fair sharing ledger
(history and pending penalties to the nano, LastUpdate, usage).

The native engine runs with its debug checks on: every preemption target
search must leave the quota tree byte-identical.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from kueue_fast import Cluster
from kueue_fast.api.features import MODELLED_DEFAULTS
from kueue_fast.api.model import (
    CHECK_STATES,
    Admission,
    AdmissionCheck,
    AdmissionFairSharingConfig,
    ClusterQueue,
    ClusterState,
    Cohort,
    Configuration,
    FairSharingConfig,
    FlavorFungibility,
    FlavorQuotas,
    LabelSelector,
    LocalQueue,
    PodSet,
    PodSetAssignment,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Taint,
    Toleration,
    Workload,
)

# Gates both engines model.
GATES = sorted(MODELLED_DEFAULTS)

SECOND = 1_000_000_000
T0 = 1_700_000_000 * SECOND
GI = 1 << 30

# Per resource: the unit a quantity is drawn in (cpu milli, memory bytes, counts).
UNITS = {"cpu": 500, "memory": GI, "example.com/gpu": 1}
RESOURCE_GROUPS = [["cpu", "memory"], ["example.com/gpu"]]
FLAVORS = ["on-demand", "spot", "gpu-a", "gpu-b", "reserved"]
# Weighted towards policies that preempt, so that contention is the usual case.
POLICIES_WITHIN = ["Never", "LowerPriority", "LowerPriority", "LowerOrNewerEqualPriority"]
POLICIES_RECLAIM = ["Never", "LowerPriority", "LowerPriority", "Any"]


# --- drawing a cluster -----------------------------------------------------------------


@st.composite
def quota_entry(draw: Any, resource: str, in_cohort: bool, is_cohort: bool = False) -> ResourceQuota:
    unit = UNITS[resource]
    nominal = draw(st.integers(0, 8)) * unit
    borrow = lend = None
    if in_cohort:
        if draw(st.integers(0, 3)) == 0:
            borrow = draw(st.integers(0, 6)) * unit
        if draw(st.integers(0, 3)) == 0:
            hi = 10 if is_cohort else nominal // unit  # cohorts may lend more than nominal
            lend = draw(st.integers(0, hi)) * unit
    return ResourceQuota(resource, nominal, borrow, lend)


@st.composite
def resource_groups(
    draw: Any, in_cohort: bool, is_cohort: bool = False, pods: bool = False
) -> list[ResourceGroup]:
    groups = []
    n_groups = draw(st.integers(1, 2))
    available = list(FLAVORS)
    for g in range(n_groups):
        covered = list(RESOURCE_GROUPS[g])
        if pods and g == 0:
            covered.append("pods")
        n_flavors = draw(st.integers(1, 3))
        names = draw(st.permutations(available))[:n_flavors]
        available = [f for f in available if f not in names]
        flavors = []
        for name in names:
            quotas = []
            for r in covered:
                if r == "pods":
                    quotas.append(ResourceQuota("pods", draw(st.integers(0, 6)), None, None))
                else:
                    quotas.append(draw(quota_entry(r, in_cohort, is_cohort)))
            flavors.append(FlavorQuotas(name, quotas))
        groups.append(ResourceGroup(covered, flavors))
    return groups


@st.composite
def feature_gates(draw: Any) -> dict[str, bool]:
    """Kueue's defaults most of the time; otherwise a few gates flipped."""
    if draw(st.integers(0, 2)):
        return {}
    flipped = draw(st.lists(st.sampled_from(GATES), min_size=1, max_size=4, unique=True))
    return {g: not MODELLED_DEFAULTS[g] for g in flipped}


@dataclass
class Scenario:
    state: ClusterState
    extra: list[Workload] = field(default_factory=list)  # added between cycles
    # ("add", i) / ("remove", i) / ("cycle", seconds since the last cycle, 0: one) / ("reconfigure", 0)
    # / ("evict", i) / ("release", i) / ("check", i): a check controller sets a state (admission checks)
    ops: list[tuple[str, int]] = field(default_factory=list)
    release_evictions: bool = True  # False: evicted workloads hold their quota until ("release", i)


@st.composite
def afs_configuration(draw: Any) -> AdmissionFairSharingConfig:
    """Configuration.admissionFairSharing: half-lives from none to a minute,
    sampling every few seconds (cycles are one or more seconds apart), now
    and then resource weights."""
    weights: dict[str, float] = {}
    if draw(st.integers(0, 2)) == 0:
        for r in ("cpu", "memory", "example.com/gpu"):
            if draw(st.booleans()):
                weights[r] = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 1e-9, 3.7]))
    return AdmissionFairSharingConfig(
        usage_half_life_s=draw(st.sampled_from([0.0, 1.0, 2.5, 10.0, 60.0, 0.3])),
        usage_sampling_interval_s=draw(st.sampled_from([1.0, 2.0, 5.0, 0.5, 30.0])),
        resource_weights=weights,
    )


@st.composite
def consumed_history(draw: Any) -> dict[str, int]:
    """status.fairSharing.admissionFairSharingStatus.consumedResources (nanos)."""
    out: dict[str, int] = {}
    if draw(st.integers(0, 2)) == 0:
        return out
    for r in ("cpu", "memory", "example.com/gpu"):
        if draw(st.booleans()):
            out[r] = draw(st.integers(0, 8)) * UNITS[r] * (10**6 if r == "cpu" else 10**9) + draw(
                st.integers(0, 999_999_999)
            )
    return out


def add_local_queues(draw: Any, state: ClusterState, cq: str, i: int) -> None:
    """The ClusterQueue's LocalQueue ns/lq-i, and with admission fair sharing up
    to three more: their own names or a name shared by namespaces ns and other
    (Kueue's preemption ordering compares queue names, not LocalQueues)."""
    afs = state.configuration.admission_fair_sharing is not None

    def local_queue(ns: str, name: str) -> LocalQueue:
        q = LocalQueue(ns, name, cq)
        if afs:
            q.fair_weight = draw(st.sampled_from([1.0, 1.0, 1.0, 0.5, 2.0, 0.0]))
            q.afs_consumed_nanos = draw(consumed_history())
            if draw(st.integers(0, 14)) == 0:
                q.stop_policy = "Hold"
        return q

    state.local_queues[f"ns/lq-{i}"] = local_queue("ns", f"lq-{i}")
    if not afs:
        return
    for k in range(draw(st.integers(0, 3))):
        ns = draw(st.sampled_from(["ns", "other"]))
        name = draw(st.sampled_from([f"lq-{i}-{k}", f"shared-{i}", f"lq-{i}"]))
        state.local_queues[f"{ns}/{name}"] = local_queue(ns, name)


def cycle_ops(draw: Any) -> tuple[str, int]:
    """A cycle one second after the last (the offline clock), or later."""
    return ("cycle", draw(st.sampled_from([0, 0, 0, 0, 2, 3, 7, 40])))


@st.composite
def scenarios(draw: Any) -> Scenario:
    state = ClusterState()
    # Flavors: some with a zone label, some tainted.
    for name in FLAVORS:
        labels = {"zone": draw(st.sampled_from(["a", "b"]))} if draw(st.booleans()) else {}
        taints = [Taint("spot", "true", "NoSchedule")] if draw(st.integers(0, 4)) == 0 else []
        state.resource_flavors[name] = ResourceFlavor(name, labels, taints)
    # Cohort trees: cohorts c0..cN, each with an earlier parent or none.
    n_cohorts = draw(st.sampled_from([0, 1, 1, 2, 2, 3, 4]))
    cohort_names = [f"co-{i}" for i in range(n_cohorts)]
    for i, name in enumerate(cohort_names):
        parent = None
        if i > 0 and draw(st.booleans()):
            parent = cohort_names[draw(st.integers(0, i - 1))]
        groups = draw(resource_groups(parent is not None, True)) if draw(st.integers(0, 2)) == 0 else []
        weight = draw(st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.0]))
        state.cohorts[name] = Cohort(name, parent, groups, weight)
    # ClusterQueues.
    n_cq = draw(st.integers(1, 7))
    fair = draw(st.integers(0, 2)) == 0
    if draw(st.integers(0, 2)) == 0:
        state.configuration.admission_fair_sharing = draw(afs_configuration())
    for i in range(n_cq):
        name = f"cq-{i}"
        cohort = draw(st.sampled_from(cohort_names)) if cohort_names and draw(st.integers(0, 9)) else None
        reclaim = draw(st.sampled_from(POLICIES_RECLAIM))
        borrow_policy = "Never"
        threshold = None
        if reclaim != "Never" and not fair and draw(st.booleans()):
            borrow_policy = "LowerPriority"
            if draw(st.booleans()):
                threshold = draw(st.integers(-1, 2))
        when_borrow = draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"]))
        when_preempt = draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"]))
        preference = None
        if when_borrow == when_preempt == "TryNextFlavor" and draw(st.booleans()):
            preference = draw(st.sampled_from(["BorrowingOverPreemption", "PreemptionOverBorrowing"]))
        selector: LabelSelector | None = LabelSelector() if draw(st.integers(0, 19)) else None
        stop = "None"
        if draw(st.integers(0, 14)) == 0:
            stop = draw(st.sampled_from(["Hold", "HoldAndDrain"]))
        state.cluster_queues[name] = ClusterQueue(
            name=name,
            resource_groups=draw(resource_groups(cohort is not None, pods=draw(st.integers(0, 3)) == 0)),
            cohort=cohort,
            namespace_selector=selector,
            queueing_strategy=draw(st.sampled_from(["BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"])),
            preemption=Preemption(
                within_cluster_queue=draw(st.sampled_from(POLICIES_WITHIN)),
                reclaim_within_cohort=reclaim,
                borrow_within_cohort_policy=borrow_policy,
                max_priority_threshold=threshold,
            ),
            flavor_fungibility=FlavorFungibility(when_borrow, when_preempt, preference),
            stop_policy=stop,
            fair_weight=draw(st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.0])),
            usage_based_admission_fair_sharing=draw(st.integers(0, 3)) > 0,
        )
        add_local_queues(draw, state, name, i)
    if fair:
        strategies = draw(
            st.sampled_from(
                [
                    ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
                    ["LessThanOrEqualToFinalShare"],
                    ["LessThanInitialShare"],
                ]
            )
        )
        state.configuration.fair_sharing = FairSharingConfig(strategies)
    state.configuration.feature_gates = draw(feature_gates())
    with_checks = draw(st.integers(0, 3)) == 0
    if with_checks:  # admission checks on some ClusterQueues, one of them per flavor
        for name in ("chk-all", "chk-one"):
            state.admission_checks[name] = AdmissionCheck(name, "example.com/check", True)
        for cq in state.cluster_queues.values():
            flavors = [f.name for g in cq.resource_groups for f in g.flavors]
            if flavors and draw(st.booleans()):
                cq.admission_checks = ["chk-all", "chk-one"]
                cq.admission_check_flavors = {"chk-one": [draw(st.sampled_from(flavors))]}
    # Workloads: some admitted (as their status says), most pending.
    n_wl = draw(st.integers(0, 30))
    split = draw(st.integers(0, n_wl))
    # Later arrivals tend to have higher priorities: they preempt earlier ones.
    workloads = [draw(workload(state, i, n_cq, late=i >= split)) for i in range(n_wl)]
    for wl in workloads[:split]:
        state.workloads[wl.key] = wl
    extra = workloads[split:]
    # Operations: cycles, with additions and removals in between.
    ops: list[tuple[str, int]] = []
    added = 0
    for _ in range(draw(st.integers(1, 10))):
        ops.append(cycle_ops(draw))
        while added < len(extra) and draw(st.booleans()):
            ops.append(("add", added))
            added += 1
        if draw(st.integers(0, 3)) == 0:
            ops.append(("remove", draw(st.integers(0, max(0, n_wl - 1)))))
        if draw(st.integers(0, 11)) == 0:
            ops.append(("reconfigure", 0))
        while with_checks and draw(st.booleans()):
            ops.append(("check", draw(st.integers(0, 1000))))
    ops.append(("cycle", 0))
    return Scenario(state, extra, ops)


@st.composite
def workload(draw: Any, state: ClusterState, i: int, n_cq: int, late: bool) -> Workload:
    n_ps = draw(st.integers(1, 2))
    pod_sets = []
    min_count_at = draw(st.integers(-1, n_ps - 1)) if draw(st.integers(0, 3)) == 0 else -1
    for p in range(n_ps):
        count = draw(st.integers(1, 3))
        requests = {}
        for r in ("cpu", "memory"):
            if draw(st.integers(0, 3)):
                requests[r] = draw(st.sampled_from([0, 1, 1, 2, 2, 3])) * UNITS[r]
        if draw(st.integers(0, 3)) == 0:
            requests["example.com/gpu"] = draw(st.integers(0, 2))
        selector = {"zone": draw(st.sampled_from(["a", "b"]))} if draw(st.integers(0, 4)) == 0 else {}
        tolerations = [Toleration("spot", "Exists")] if draw(st.integers(0, 2)) == 0 else []
        pod_sets.append(
            PodSet(
                name=f"ps-{p}",
                count=count,
                requests=requests,
                min_count=draw(st.integers(0, count - 1)) if p == min_count_at else None,
                node_selector=selector,
                tolerations=tolerations,
            )
        )
    lq = draw(st.integers(0, n_cq)) if draw(st.integers(0, 9)) == 0 else draw(st.integers(0, n_cq - 1))
    namespace, queue = "ns", f"lq-{lq}"
    if lq < n_cq and len(state.local_queues) > n_cq and draw(st.booleans()):
        # Admission fair sharing: any LocalQueue (of any namespace).
        namespace, queue = draw(st.sampled_from(sorted(state.local_queues))).split("/")
    priority = draw(st.integers(0, 3)) if late else draw(st.integers(-1, 1))
    creation = T0 - draw(st.integers(1, 40)) * SECOND
    wl = Workload(
        namespace=namespace,
        name=f"wl-{i:02d}",
        queue_name=queue,
        pod_sets=pod_sets,
        creation_ns=creation,
        priority=priority,
        uid=f"uid-{i}",
    )
    # Admitted as its status says: one flavor per resource group of the ClusterQueue.
    if lq < n_cq and not late and draw(st.booleans()):
        cq = state.cluster_queues[state.local_queues[f"{namespace}/{queue}"].cluster_queue]
        assignments = []
        for ps in pod_sets:
            flavors, usage = {}, {}
            for g in cq.resource_groups:
                f = draw(st.sampled_from([fq.name for fq in g.flavors]))
                for r in g.covered_resources:
                    if r in ps.requests:
                        flavors[r] = f
                    if r == "pods":
                        flavors[r] = f
                        usage[r] = ps.count
            for r, v in ps.requests.items():
                usage[r] = v * ps.count
            assignments.append(PodSetAssignment(ps.name, ps.count, flavors, usage))
        # Now and then admitted to a ClusterQueue that does not exist (it holds nothing).
        wl.admission = Admission(cq.name if draw(st.integers(0, 19)) else "missing-cq", assignments)
        wl.admission_ns = creation + draw(st.integers(0, 5)) * SECOND
    return wl


@st.composite
def contended_scenarios(draw: Any) -> Scenario:
    """One cohort (optionally under a parent with its own quota): a borrower
    ClusterQueue full of admitted low-priority workloads, and lenders that get
    high-priority workloads all at once, so that several preemptors of one
    cycle aim at the same victims (overlapping targets, recomputation,
    deferred admission, "no longer fits")."""
    state = ClusterState()
    flavors = ["f0", "f1"]
    for name in flavors:
        state.resource_flavors[name] = ResourceFlavor(name)
    fair = draw(st.booleans())
    if fair:
        state.configuration = Configuration(fair_sharing=FairSharingConfig())
    state.configuration.feature_gates = draw(feature_gates())
    # Admission fair sharing: the borrower's workloads come from LocalQueues
    # with different histories, which then order its preemption candidates.
    afs = draw(st.booleans())
    if afs:
        state.configuration.admission_fair_sharing = draw(afs_configuration())
    parent = "root" if draw(st.booleans()) else None
    if parent:
        q = [ResourceQuota("cpu", draw(st.integers(0, 4)) * 1000)]
        state.cohorts["root"] = Cohort("root", None, [ResourceGroup(["cpu"], [FlavorQuotas("f0", q)])])
    state.cohorts["team"] = Cohort("team", parent, [], draw(st.sampled_from([1.0, 2.0])))
    n_cq = draw(st.integers(2, 5))
    n_flavors = draw(st.integers(1, 2))
    for i in range(n_cq):
        quotas = []
        for f in flavors[:n_flavors]:
            nominal = 0 if i == 0 else draw(st.integers(1, 4)) * 1000
            lend = draw(st.sampled_from([None, None, nominal // 2]))
            quotas.append(FlavorQuotas(f, [ResourceQuota("cpu", nominal, None, lend)]))
        reclaim = draw(st.sampled_from(["LowerPriority", "Any", "LowerPriority"]))
        borrow = "LowerPriority" if not fair and draw(st.booleans()) else "Never"
        state.cluster_queues[f"cq-{i}"] = ClusterQueue(
            name=f"cq-{i}",
            resource_groups=[ResourceGroup(["cpu"], quotas)],
            cohort="team" if i < n_cq - 1 or draw(st.booleans()) else None,
            namespace_selector=LabelSelector(),
            queueing_strategy=draw(st.sampled_from(["BestEffortFIFO", "StrictFIFO"])),
            preemption=Preemption(draw(st.sampled_from(POLICIES_WITHIN)), reclaim, borrow),
            flavor_fungibility=FlavorFungibility(
                draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"])),
                draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"])),
            ),
            fair_weight=draw(st.sampled_from([1.0, 0.5, 2.0])),
            usage_based_admission_fair_sharing=afs and draw(st.integers(0, 3)) > 0,
        )
        add_local_queues(draw, state, f"cq-{i}", i)
    borrower_queues = sorted(k for k, q in state.local_queues.items() if q.cluster_queue == "cq-0")
    # The borrower holds low-priority workloads admitted on the lenders' quota.
    k = 0
    for _ in range(draw(st.integers(1, 8))):
        cpu = draw(st.integers(1, 3)) * 500
        f = draw(st.sampled_from(flavors[:n_flavors]))
        ns, queue = draw(st.sampled_from(borrower_queues)).split("/")
        wl = Workload(
            ns,
            f"low-{k:02d}",
            queue,
            [PodSet("main", 1, {"cpu": cpu})],
            creation_ns=T0 - 100 * SECOND + k,
            priority=draw(st.integers(-2, 0)),
            uid=f"low-{k}",
        )
        wl.admission = Admission("cq-0", [PodSetAssignment("main", 1, {"cpu": f}, {"cpu": cpu})])
        wl.admission_ns = T0 - 50 * SECOND + draw(st.integers(0, 3)) * SECOND
        state.workloads[wl.key] = wl
        k += 1
    extra = []
    for j in range(draw(st.integers(2, 10))):
        i = draw(st.integers(0, n_cq - 1))
        count = draw(st.integers(1, 3))
        min_count = draw(st.integers(1, count)) if draw(st.integers(0, 3)) == 0 else None
        queues = sorted(k for k, q in state.local_queues.items() if q.cluster_queue == f"cq-{i}")
        ns, queue = draw(st.sampled_from(queues)).split("/")
        wl = Workload(
            ns,
            f"high-{j:02d}",
            queue,
            [PodSet("main", count, {"cpu": draw(st.integers(1, 4)) * 500}, min_count)],
            creation_ns=T0 - 10 * SECOND + draw(st.integers(0, 3)),
            priority=draw(st.integers(0, 3)),
            uid=f"high-{j}",
        )
        extra.append(wl)
    ops: list[tuple[str, int]] = [("cycle", 0)] + [("add", j) for j in range(len(extra))]
    ops += [cycle_ops(draw) for _ in range(draw(st.integers(1, 6)))]
    return Scenario(state, extra, ops)


@st.composite
def many_candidate_scenarios(draw: Any) -> Scenario:
    """The preemption candidate order under pressure: many ClusterQueues (in
    one cohort, or two sub-cohorts under a root) each holding many admitted
    workloads with few distinct priorities and admission times (ties decided
    by namespace and name, across ClusterQueues: namespaces interleave), some
    of them evicted but still holding quota (release_evictions off), then
    preemptors everywhere. The native engine walks its per-ClusterQueue lists
    as a lazy merge; its debug checks compare that with the sorted order."""
    state = ClusterState()
    state.resource_flavors["f0"] = ResourceFlavor("f0")
    state.configuration.feature_gates = draw(feature_gates())
    nested = draw(st.booleans())
    if nested:
        state.cohorts["root"] = Cohort("root", None, [])
        for sub in ("left", "right"):
            state.cohorts[sub] = Cohort(sub, "root", [])
    n_cq = draw(st.integers(3, 8))
    namespaces = ["a", "b", "c"]
    for i in range(n_cq):
        nominal = draw(st.integers(2, 6)) * 1000
        lend = draw(st.sampled_from([None, None, nominal // 2]))
        quota = FlavorQuotas("f0", [ResourceQuota("cpu", nominal, None, lend)])
        borrow = draw(st.sampled_from(["Never", "LowerPriority"]))
        threshold = draw(st.sampled_from([None, 0, 1])) if borrow != "Never" else None
        state.cluster_queues[f"cq-{i}"] = ClusterQueue(
            name=f"cq-{i}",
            resource_groups=[ResourceGroup(["cpu"], [quota])],
            cohort=(("left" if i % 2 else "right") if nested else "team"),
            namespace_selector=LabelSelector(),
            preemption=Preemption(
                draw(st.sampled_from(POLICIES_WITHIN)),
                draw(st.sampled_from(["LowerPriority", "Any", "LowerPriority", "Never"])),
                borrow,
                threshold,
            ),
        )
        for ns in namespaces:
            state.local_queues[f"{ns}/lq-{i}"] = LocalQueue(ns, f"lq-{i}", f"cq-{i}")
    # Admitted: fill every ClusterQueue up to 1.5x or 0.5x its nominal quota.
    k = 0
    for i in range(n_cq):
        nominal = state.cluster_queues[f"cq-{i}"].resource_groups[0].flavors[0].resources[0].nominal
        held = nominal * draw(st.sampled_from([1, 3])) // 2
        while held >= 500:
            cpu = min(held, draw(st.sampled_from([500, 500, 1000])))
            held -= cpu
            ns = draw(st.sampled_from(namespaces))
            wl = Workload(
                ns,
                f"w-{draw(st.integers(0, 99)):02d}-{k:03d}",
                f"lq-{i}",
                [PodSet("main", 1, {"cpu": cpu})],
                creation_ns=T0 - 100 * SECOND + draw(st.integers(0, 2)),
                priority=draw(st.integers(0, 1)),
                uid=f"w-{k}",
            )
            wl.admission = Admission(f"cq-{i}", [PodSetAssignment("main", 1, {"cpu": "f0"}, {"cpu": cpu})])
            wl.admission_ns = T0 - 50 * SECOND + draw(st.integers(0, 1)) * SECOND
            state.workloads[wl.key] = wl
            k += 1
    extra = []
    for j in range(draw(st.integers(2, 12))):
        i = draw(st.integers(0, n_cq - 1))
        wl = Workload(
            draw(st.sampled_from(namespaces)),
            f"p-{j:02d}",
            f"lq-{i}",
            [PodSet("main", 1, {"cpu": draw(st.integers(1, 4)) * 500})],
            creation_ns=T0 - 10 * SECOND + draw(st.integers(0, 1)),
            priority=draw(st.integers(1, 3)),
            uid=f"p-{j}",
        )
        extra.append(wl)
    release = draw(st.booleans())
    n_evict = draw(st.integers(0, 4))
    ops: list[tuple[str, int]] = [("evict", draw(st.integers(0, k - 1))) for _ in range(n_evict)]
    for j in range(len(extra)):
        ops.append(("add", j))
        if draw(st.integers(0, 2)) == 0:
            ops.append(("cycle", 0))
    ops += [("cycle", 0)] * draw(st.integers(1, 5))
    if not release:
        ops += [("release", draw(st.integers(0, k))) for _ in range(draw(st.integers(0, 3)))]
        ops += [("cycle", 0)] * draw(st.integers(0, 3))
    return Scenario(state, extra, ops, release_evictions=release)


# --- running both engines ------------------------------------------------------------------------


def _dense_usage(engine: Any) -> np.ndarray:
    tree = engine.tree
    out = np.zeros((engine.topo.n_nodes, len(engine.topo.fr_pairs)), dtype=np.int64)
    for node, d in enumerate(tree.usage):
        for fr, v in d.items():
            out[node, fr] = v
    return out


def _compare(ref: Cluster, nat: Cluster, where: str) -> None:
    re, ne = ref.engine, nat.engine
    assert re.n_workloads == nat.engine.n_workloads, where
    for wid in range(re.n_workloads):
        a, b = re.workload_view(wid), ne.workload_view(wid)
        if a != b:
            diff = {k: (getattr(a, k), getattr(b, k)) for k in a.__slots__ if getattr(a, k) != getattr(b, k)}
            raise AssertionError(f"{where}: workload {a.spec.namespace}/{a.spec.name} differs: {diff}")
    ur, un = _dense_usage(re), ne.usage
    assert (ur == un).all(), f"{where}: usage differs\nreference:\n{ur}\nnative:\n{un}"
    assert (re.usage == un).all(), f"{where}: the reference's usage accessor differs"
    for cq in range(re.topo.n_cq):
        qa, qb = re.queue_state(cq), ne.queue_state(cq)
        assert qa == qb, f"{where}: queue of ClusterQueue {cq} differs\nreference: {qa}\nnative:    {qb}"
    assert re.evaluations == ne.evaluations, f"{where}: preemption evaluations differ"
    # Admission fair sharing: the whole ledger, exactly (ints in nanos, float usages).
    la, lb = re.afs_ledger_state(), ne.afs_ledger_state()
    assert list(la) == list(lb), f"{where}: ledger entries differ: {list(la)} vs {list(lb)}"
    for key in la:
        assert la[key] == lb[key], f"{where}: ledger of {key}\nreference: {la[key]}\nnative:    {lb[key]}"


def run_both(sc: Scenario) -> None:
    clusters = {}
    for name in ("reference", "native"):
        clusters[name] = Cluster(
            copy.deepcopy(sc.state), name, start_time_ns=T0, release_evictions=sc.release_evictions
        )
    ref, nat = clusters["reference"], clusters["native"]
    nat.engine.debug_checks = True
    _compare(ref, nat, "after loading")
    for step, (op, i) in enumerate(sc.ops):
        where = f"step {step} ({op} {i})"
        if op == "cycle":
            now = ref.now_ns() + max(1, i) * SECOND
            a, b = ref.run_cycle(now), nat.run_cycle(now)
            assert a == b, f"{where}: cycle results differ\nreference: {a}\nnative:    {b}"
        elif op == "reconfigure":
            # The configuration reapplied (a rebuild): admissions and the
            # admission fair sharing history carry over.
            for c in (ref, nat):
                c.reconfigure(c.state)
            nat.engine.debug_checks = True
        elif op == "add":
            for c in (ref, nat):
                c.add_workload(copy.deepcopy(sc.extra[i]))
        elif op == "remove":
            keys = ref.keys()
            if keys:
                key = keys[i % len(keys)]
                for c in (ref, nat):
                    c.remove_workload(key)
        elif op in ("evict", "release"):
            keys = ref.keys()
            if keys:
                key = keys[i % len(keys)]
                for c in (ref, nat):
                    if op == "evict":  # (a no-op unless admitted and not evicting already)
                        c.evict(key, "Deactivated", "evicted by the test")
                    else:
                        c.release_eviction(key)
        elif op == "check":
            keys = ref.keys()
            if keys:
                key, check = keys[i % len(keys)], ("chk-all", "chk-one")[i % 2]
                for c in (ref, nat):
                    c.set_check_state(key, check, CHECK_STATES[(i // 2) % len(CHECK_STATES)])
        _compare(ref, nat, where)
        assert ref.decisions() == nat.decisions(), f"{where}: decisions differ"


# --- amounts at the int64 boundary ------------------------------------------------------------------

INT64_MAX = (1 << 63) - 1
# One GPU "unit" in the huge scenarios: a few of them pass INT64_MAX, so
# quotas, cohort sums, requests and usages saturate onto Unlimited.
HUGE_UNIT = 3 * (1 << 60) + 12_345


def _huge(v: int | None) -> int | None:
    return None if v is None else min(INT64_MAX, v * HUGE_UNIT)


@st.composite
def huge_scenarios(draw: Any) -> Scenario:
    """scenarios() with every example.com/gpu amount scaled by HUGE_UNIT and
    clamped to INT64_MAX, as Kueue clamps (AmountFromQuantity for quotas,
    ResourceValue for requests): the engines must agree in Kueue's Amount
    arithmetic (Unlimited sticky, saturating sums)."""
    sc: Scenario = draw(scenarios())
    gpu = "example.com/gpu"
    groups = [g for q in sc.state.cluster_queues.values() for g in q.resource_groups]
    groups += [g for co in sc.state.cohorts.values() for g in co.resource_groups]
    for g in groups:
        for fq in g.flavors:
            for rq in fq.resources:
                if rq.name == gpu:
                    rq.nominal = _huge(rq.nominal) or 0
                    rq.borrowing_limit = _huge(rq.borrowing_limit)
                    rq.lending_limit = _huge(rq.lending_limit)
    for wl in [*sc.state.workloads.values(), *sc.extra]:
        for ps in wl.pod_sets:
            if gpu in ps.requests:
                ps.requests[gpu] = _huge(ps.requests[gpu]) or 0
        if wl.admission is not None:
            for psa, ps in zip(wl.admission.pod_set_assignments, wl.pod_sets, strict=True):
                if gpu in psa.resource_usage:
                    psa.resource_usage[gpu] = min(INT64_MAX, ps.requests[gpu] * ps.count)
    return sc


# Three times the loaded profile's examples (ci: 300 per test, ~15 s in all).
EXAMPLES = settings.default.max_examples * 3
SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=EXAMPLES, suppress_health_check=SLOW_OK, deadline=None)
@given(scenarios())
def test_native_matches_reference(sc: Scenario) -> None:
    run_both(sc)


@settings(max_examples=EXAMPLES, suppress_health_check=SLOW_OK, deadline=None)
@given(contended_scenarios())
def test_native_matches_reference_in_a_contended_cohort(sc: Scenario) -> None:
    run_both(sc)


@settings(max_examples=EXAMPLES, suppress_health_check=SLOW_OK, deadline=None)
@given(many_candidate_scenarios())
def test_native_matches_reference_with_many_preemption_candidates(sc: Scenario) -> None:
    run_both(sc)


@settings(max_examples=EXAMPLES, suppress_health_check=SLOW_OK, deadline=None)
@given(huge_scenarios())
def test_native_matches_reference_with_amounts_at_the_int64_boundary(sc: Scenario) -> None:
    run_both(sc)


def test_negative_reservation_is_undone_like_the_reference() -> None:
    """A ClusterQueue over nominal + borrowingLimit (admitted before a quota
    cut) whose head needs preemption and finds no candidates reserves a
    negative amount (Kueue quotaResourcesToReserve); undoing it must leave
    the cohort's usage as the reference re-derives it."""
    state = ClusterState()
    state.resource_flavors["f"] = ResourceFlavor("f")
    for name, nominal, borrow in (("a", 4000, 2000), ("b", 10000, None)):
        state.cluster_queues[name] = ClusterQueue(
            name=name,
            resource_groups=[
                ResourceGroup(["cpu"], [FlavorQuotas("f", [ResourceQuota("cpu", nominal, borrow)])])
            ],
            cohort="co",
            namespace_selector=LabelSelector(),
            preemption=Preemption("Never", "LowerPriority"),
        )
        state.local_queues[f"ns/{name}"] = LocalQueue("ns", name, name)
    for i in range(4):  # 8 cpu in a: over nominal 4 + borrowing limit 2
        wl = Workload(
            "ns", f"old-{i}", "a", [PodSet("main", 1, {"cpu": 2000})], T0 - 100 * SECOND, uid=f"o{i}"
        )
        wl.admission = Admission("a", [PodSetAssignment("main", 1, {"cpu": "f"}, {"cpu": 2000})])
        wl.admission_ns = T0 - 50 * SECOND
        state.workloads[wl.key] = wl
    new = Workload("ns", "new", "a", [PodSet("main", 1, {"cpu": 1000})], T0 - 10 * SECOND, uid="n")
    state.workloads[new.key] = new
    run_both(Scenario(state, [], [("cycle", 0), ("cycle", 0)]))
    ref = Cluster(copy.deepcopy(state), "reference", start_time_ns=T0)
    ref.run_cycle()
    usage = _dense_usage(ref.engine)
    topo = ref.topology
    cohort = topo.node_names.index("co")
    fr = topo.fr_id(topo.flavor_names.index("f"), topo.resource_names.index("cpu"))
    assert usage[cohort, fr] == 8000, "the cohort holds exactly what its ClusterQueues use"
