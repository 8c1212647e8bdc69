"""Long preemption churn: both engines, hundreds of cycles, checked at every cycle.

The state Kueue keeps from one cycle to the next (parked workloads and their
requeue triggers, preemptor marks, flavor-scan records and their generations,
queue-order timestamps, the admitted lists preemption candidates come from,
admission fair sharing history) only shows its bugs after many cycles of
admissions, preemptions and finishes. Hypothesis draws a cluster that combines
hierarchical cohorts (Cohort objects with a parent and quota of their own,
borrowing and lending limits at every level), fair sharing or not (weights,
strategies), flavor fungibility (every whenCanBorrow x whenCanPreempt x
preference), StrictFIFO and BestEffortFIFO, every preemption policy with
borrowWithinCohort and maxPriorityThreshold, a few workload shapes (pod sets
with minCount, so partial admission; equal shapes share a scheduling hash) and
a seed; the seed drives the churn through the public Cluster API: arrivals,
finishes of admitted workloads after their run time, deletions of pending
ones, quiet stretches with no heads at all, and, in controller mode, evictions
released some cycles later.

After every cycle the native engine must match the reference exactly (cycle
report, every workload's view with its pending reason and message, usage of
every node, preemption evaluations, admission fair sharing ledger), and the
reference must keep the invariants of test_invariants.check plus the ones of a
cycle: a workload is admitted or preempted only through the cycle report, no
workload is both in one cycle, victims held quota when the cycle began, no
admitted workload is lost and none counted twice.

CI runs a few derandomized examples of a few hundred cycles; HYPOTHESIS_PROFILE=dev
runs many more, longer (KUEUE_FAST_CHURN_CYCLES=N sets the length).
"""

from __future__ import annotations

import copy
import os
import random
from dataclasses import dataclass, field
from typing import Any

import test_native_differential as gen
from hypothesis import HealthCheck, given, settings, strategies as st
from test_invariants import check, usage_matrix

from kueue_fast import Cluster
from kueue_fast.api.model import (
    ClusterQueue,
    ClusterState,
    Cohort,
    FairSharingConfig,
    FlavorFungibility,
    FlavorQuotas,
    LabelSelector,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)

SECOND = gen.SECOND
T0 = gen.T0
DEV = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "dev"
CYCLES = int(os.environ.get("KUEUE_FAST_CHURN_CYCLES", "600" if DEV else "250"))
EXAMPLES = settings.default.max_examples if DEV else 8

FUNGIBILITY = [
    (borrow, preempt, pref)
    for borrow in ("MayStopSearch", "TryNextFlavor")
    for preempt in ("MayStopSearch", "TryNextFlavor")
    for pref in (None, "BorrowingOverPreemption", "PreemptionOverBorrowing")
    if pref is None or borrow == preempt == "TryNextFlavor"
]


@dataclass
class Churn:
    state: ClusterState
    shapes: list[Workload]  # arrivals are copies of these (equal shapes share a scheduling hash)
    run_time: list[int]  # per shape, the longest run in cycles
    seed: int
    release_evictions: bool = True
    queues: list[str] = field(default_factory=list)  # "namespace/name" of every LocalQueue
    # A contended cohort: cq-0 lives on borrowed quota and runs the background
    # work; urgent bursts elsewhere in its cohort reclaim it, several
    # preemptors a cycle aiming at the same victims.
    contended: bool = False


UNIT = {"cpu": 1000, "memory": gen.GI, "example.com/gpu": 1}
CPU_FLAVORS = ["on-demand", "spot", "reserved"]
GPU_FLAVORS = ["gpu-a", "gpu-b"]


@st.composite
def quota(draw: Any, resource: str, in_cohort: bool, cohort: bool = False) -> ResourceQuota:
    """Nominal quota of a few units (now and then none); borrowing and lending
    limits inside a cohort (a root cohort has neither)."""
    unit = UNIT[resource]
    # (a ClusterQueue without quota of its own lives on what it borrows)
    nominal = (0 if draw(st.integers(0, 3)) == 3 else draw(st.integers(2, 8))) * unit
    borrow = lend = None
    if in_cohort and draw(st.integers(0, 2)) == 0:
        borrow = draw(st.integers(0, 4)) * unit
    if in_cohort and draw(st.integers(0, 2)) == 0:
        lend = draw(st.integers(0, max(0, nominal // unit) if not cohort else 6)) * unit
    return ResourceQuota(resource, nominal, borrow, lend)


def no_quota(groups: list[ResourceGroup]) -> list[ResourceGroup]:
    for g in groups:
        for fq in g.flavors:
            for q in fq.resources:
                q.nominal, q.lending_limit = 0, None
    return groups


@st.composite
def groups(
    draw: Any, in_cohort: bool, cohort: bool = False, gpu: bool = False, borrower: bool = False
) -> list[ResourceGroup]:
    """cpu and memory in one to three flavors (in a drawn order); with gpu, a
    second group of one or two GPU flavors. A borrower has no quota of its own."""
    out = []
    flavors = draw(st.permutations(CPU_FLAVORS))[: draw(st.integers(1, 3))]
    out.append(
        ResourceGroup(
            ["cpu", "memory"],
            [
                FlavorQuotas(f, [draw(quota(r, in_cohort, cohort)) for r in ("cpu", "memory")])
                for f in flavors
            ],
        )
    )
    if gpu:
        flavors = draw(st.permutations(GPU_FLAVORS))[: draw(st.integers(1, 2))]
        out.append(
            ResourceGroup(
                ["example.com/gpu"],
                [FlavorQuotas(f, [draw(quota("example.com/gpu", in_cohort, cohort))]) for f in flavors],
            )
        )
    return no_quota(out) if borrower else out


@st.composite
def shape(draw: Any, k: int, gpu: bool) -> Workload:
    """One or two pod sets of one to four pods (minCount now and then: partial
    admission), a cpu request, usually memory, GPUs where the cluster has them."""
    pod_sets = []
    for p in range(draw(st.integers(1, 2))):
        count = draw(st.integers(1, 4))
        requests = {"cpu": draw(st.sampled_from([250, 500, 1000, 1500, 2000]))}
        if draw(st.integers(0, 3)):
            requests["memory"] = draw(st.integers(0, 3)) * gen.GI // 2
        if gpu and draw(st.integers(0, 2)) == 2:
            requests["example.com/gpu"] = draw(st.integers(1, 2))
        min_count = draw(st.integers(1, count)) if count > 1 and draw(st.integers(0, 2)) == 0 else None
        pod_sets.append(PodSet(f"ps-{p}", count, requests, min_count))
    return Workload("ns", f"shape-{k}", "", pod_sets, T0, priority=draw(st.integers(0, 4)))


@st.composite
def churn_clusters(draw: Any) -> Churn:
    state = ClusterState()
    for name in CPU_FLAVORS + GPU_FLAVORS:
        state.resource_flavors[name] = ResourceFlavor(name)
    gpu = draw(st.integers(0, 2)) == 2
    # A cohort tree of two or three levels (root, its children, a grandchild),
    # cohorts with quota of their own and limits, sometimes a second root.
    cohorts = ["root", "left", "right", "left-a", "other"][: draw(st.integers(3, 5))]
    parents = {"root": None, "left": "root", "right": "root", "left-a": "left", "other": None}
    for name in cohorts:
        parent = parents[name]
        own = draw(groups(parent is not None, cohort=True, gpu=gpu)) if draw(st.integers(0, 2)) == 2 else []
        weight = draw(st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.0]))
        state.cohorts[name] = Cohort(name, parent, own, weight)
    fair = draw(st.booleans())
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
    afs = draw(st.integers(0, 3)) == 3
    if afs:
        state.configuration.admission_fair_sharing = draw(gen.afs_configuration())
    state.configuration.feature_gates = draw(gen.feature_gates()) if draw(st.integers(0, 2)) == 2 else {}
    n_cq = draw(st.integers(3, 7))
    contended = draw(st.booleans())
    if contended and draw(st.booleans()):
        # Entries then go by borrowing and age only: an urgent preemptor may
        # come after an admission it could take as a victim (kueue-min-12).
        state.configuration.feature_gates["PrioritySortingWithinCohort"] = False
    for i in range(n_cq):
        name = f"cq-{i}"
        cohort = None if draw(st.integers(0, 7)) == 7 else draw(st.sampled_from(cohorts[1:] + cohorts))
        if contended:
            cohort = "left-a" if "left-a" in cohorts and i % 2 else "left"
        within = draw(st.sampled_from(["LowerPriority", "Never", "LowerOrNewerEqualPriority"]))
        reclaim = draw(st.sampled_from(["Any", "LowerPriority", "Never"]))
        if contended and i > 0:
            reclaim = draw(st.sampled_from(["Any", "LowerPriority"]))
        borrow, threshold = "Never", None
        if reclaim != "Never" and draw(st.booleans()):
            borrow = "LowerPriority"
            threshold = draw(st.sampled_from([None, 0, 1, 2]))
        when_borrow, when_preempt, preference = draw(st.sampled_from(FUNGIBILITY))
        state.cluster_queues[name] = ClusterQueue(
            name=name,
            resource_groups=draw(
                groups(
                    cohort is not None, gpu=gpu and draw(st.integers(0, 3)) < 3, borrower=contended and i == 0
                )
            ),
            cohort=cohort,
            namespace_selector=LabelSelector(),
            queueing_strategy=draw(st.sampled_from(["BestEffortFIFO", "StrictFIFO"])),
            preemption=Preemption(within, reclaim, borrow, threshold),
            flavor_fungibility=FlavorFungibility(when_borrow, when_preempt, preference),
            fair_weight=draw(st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.0])),
            usage_based_admission_fair_sharing=afs and draw(st.integers(0, 2)) > 0,
        )
        state.local_queues[f"ns/lq-{i}"] = LocalQueue("ns", f"lq-{i}", name)
        if afs:  # a second team on the ClusterQueue, with its own weight and history
            q = LocalQueue("team-b", f"lq-{i}", name, fair_weight=draw(st.sampled_from([1.0, 0.5, 2.0])))
            q.afs_consumed_nanos = draw(gen.consumed_history())
            state.local_queues[f"team-b/lq-{i}"] = q
    shapes = [draw(shape(k, gpu)) for k in range(draw(st.integers(3, 8)))]
    run_time = [draw(st.sampled_from([20, 8, 40, 3, 80])) for _ in shapes]
    queues = sorted(state.local_queues)
    controller = draw(st.integers(0, 3)) == 3  # evictions release their quota only when released
    seed = draw(st.integers(0, 2**32 - 1))
    return Churn(state, shapes, run_time, seed, not controller, queues, contended)


# --- driving the churn ---------------------------------------------------------------------------


class Driver:
    """Both engines through the public Cluster API, one operation at a time."""

    def __init__(self, churn: Churn) -> None:
        self.churn = churn
        self.rng = random.Random(churn.seed)
        self.clusters = [
            Cluster(
                copy.deepcopy(churn.state), name, start_time_ns=T0, release_evictions=churn.release_evictions
            )
            for name in ("reference", "native")
        ]
        self.clusters[1].engine.debug_checks = True
        self.next_id = 0
        self.finish_at: dict[str, int] = {}  # admitted workload -> cycle it finishes after
        self.release_at: dict[str, int] = {}  # controller mode: evicted workload -> cycle its job stops
        self.states: dict[str, str] = {}  # the reference's decisions after the last step
        self.cycle = 0

    def each(self, op: str, *args: Any) -> None:
        for c in self.clusters:
            getattr(c, op)(*args)

    def arrive(self, urgent: bool = False) -> None:
        k = self.rng.randrange(len(self.churn.shapes))
        wl = copy.deepcopy(self.churn.shapes[k])
        wl.name = f"w{self.next_id:05d}-s{k}"
        wl.uid = f"uid-{self.next_id}"
        # Each shape mostly comes from one LocalQueue, now and then from any.
        queues = self.churn.queues
        q = queues[k % len(queues)] if self.rng.random() < 0.7 and not urgent else self.rng.choice(queues)
        if self.churn.contended:  # background work on the borrower, bursts on the others
            others = [x for x in queues if not x.endswith("/lq-0")] or queues
            q = self.rng.choice(others) if urgent else ("ns/lq-0" if self.rng.random() < 0.6 else q)
        wl.namespace, wl.queue_name = q.split("/")
        # Priorities spread around the shape's, so that preemption is common;
        # a burst is urgent work.
        wl.priority += self.rng.choice([0, 0, 1, 2, 3, 5]) - 1 + (4 if urgent else 0)
        # Arrivals are stamped now; some a little earlier (a job created a while ago).
        now = self.clusters[0].now_ns()
        wl.creation_ns = now - self.rng.choice([0, 0, 0, 1, 5]) * SECOND
        self.next_id += 1
        self.each("add_workload", wl)

    def between_cycles(self, quiet: bool) -> None:
        """Finishes, releases, deletions and arrivals before the next cycle."""
        for key in sorted(k for k, at in self.finish_at.items() if at <= self.cycle):
            del self.finish_at[key]
            self.each("remove_workload", key)
        for key in sorted(k for k, at in self.release_at.items() if at <= self.cycle):
            del self.release_at[key]
            self.each("release_eviction", key)
        pending = sorted(k for k, s in self.states.items() if s == "pending")
        if pending and self.rng.random() < 0.05:  # a pending job deleted
            self.each("remove_workload", self.rng.choice(pending))
        if not quiet:
            # Now and then a burst: many heads at once, several of them
            # preempting in one cycle (overlapping targets, recomputation).
            burst = self.rng.random() < 0.08
            n = self.rng.randint(6, 20) if burst else self.rng.choice([0, 0, 1, 1, 2, 3, 4])
            for _ in range(n):
                self.arrive(urgent=burst)

    def run(self, cycles: int) -> None:
        ref, nat = self.clusters
        gen._compare(ref, nat, "after loading")
        quiet_until = -1
        for self.cycle in range(1, cycles + 1):
            if quiet_until < self.cycle and self.rng.random() < 0.03:
                quiet_until = self.cycle + self.rng.randrange(5, 40)  # a quiet stretch: drain
            self.between_cycles(quiet=self.cycle <= quiet_until)
            where = f"cycle {self.cycle}"
            gen._compare(ref, nat, f"{where}, before it")
            before = {d.key: d.state for d in ref.decisions()}
            usage = usage_matrix(ref)
            now = ref.now_ns() + self.rng.choice([1, 1, 1, 1, 2, 5]) * SECOND
            a, b = ref.run_cycle(now), nat.run_cycle(now)
            assert a == b, f"{where}: cycle results differ\nreference: {a}\nnative:    {b}"
            gen._compare(ref, nat, where)
            check(ref, usage, where)
            self.check_transitions(before, a, where)

    def check_transitions(self, before: dict[str, str], result: Any, where: str) -> None:
        ref = self.clusters[0]
        after = {d.key: d for d in ref.decisions()}
        assert set(after) == set(before), f"{where}: workloads appeared or vanished"
        admitted, preempted = set(result.admitted), set(result.preempted)
        assert len(admitted) == len(result.admitted), f"{where}: admitted twice"
        both = admitted & preempted
        assert not both, f"{where}: admitted and preempted in one cycle: {both}"
        # (in controller mode a victim whose job has not stopped yet may be picked again)
        holding = ("admitted",) if self.churn.release_evictions else ("admitted", "evicted")
        for key in preempted:
            assert before[key] in holding, f"{where}: victim {key} held no quota when the cycle began"
        for key, d in after.items():
            was = before[key]
            if key in admitted:
                ok = was in ("pending", "evicted") and d.state == "admitted"
                assert ok, f"{where}: {key} {was} -> {d.state}"
                self.finish_at[key] = self.cycle + self.rng.randint(1, self.run_time(key))
            elif key in preempted:
                assert d.state == "evicted", f"{where}: victim {key} is {d.state}"
                self.finish_at.pop(key, None)
                if not self.churn.release_evictions:
                    self.release_at[key] = self.cycle + self.rng.choice([0, 1, 1, 3])
            elif was == "admitted":
                assert d.state == "admitted", f"{where}: {key} left admitted outside the cycle report"
            elif d.state == "admitted":
                raise AssertionError(f"{where}: {key} admitted outside the cycle report")
        self.states = {k: d.state for k, d in after.items()}

    def run_time(self, key: str) -> int:
        return self.churn.run_time[int(key.rsplit("-s", 1)[1])] if "-s" in key else 1


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(churn_clusters())
def test_engines_agree_under_long_churn(churn: Churn) -> None:
    Driver(churn).run(CYCLES)
