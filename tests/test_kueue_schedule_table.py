"""Kueue's scheduling-cycle tables, ported: what one cycle admits, where, and whom it preempts.

Facts from kueue ``pkg/scheduler/scheduler_test.go`` ``TestSchedule`` (its
fair-sharing cases included) and from the flavor choices of
``pkg/scheduler/flavorassigner/flavorassigner_test.go`` ``TestAssignFlavors``
(node selectors, affinity, taints, resource groups), restated with our
builders. Each case is one ``run_cycle()`` through the public API; we compare
every workload's state with Kueue's expectations:

* ``wantAssignments`` of workloads admitted in the cycle -> admitted, in that
  ClusterQueue, with those flavors (and counts, under partial admission);
* ``wantPreempted`` -> evicted;
* ``wantLeft`` / ``wantInadmissibleLeft`` -> pending (we do not tell the heap
  from the inadmissible set apart);
* workloads that held quota before the cycle and are not preempted stay admitted.

TestSchedule's shared setup (``base_cluster_queues``, ``BASE_LOCAL_QUEUES``,
``NAMESPACES``) is Kueue's: namespaces "sales" (dep=sales), "eng-alpha",
"eng-beta", "eng-gamma" (dep=eng), "lend" (dep=lend); every case adds its own
queues to it as Kueue's ``additionalClusterQueues`` do. Workloads are created
at ``NOW`` unless the Kueue case sets a creation time; equal timestamps fall
back to our namespace/name tie-break.

Versions: the first port read the v1beta1 table (pkg/cache, pkg/queue
layout); the cases added since, the pending messages (``KUEUE_MESSAGES``)
and the preemption reasons (``KUEUE_VICTIMS``) come from the v1beta2 table
(pkg/cache/scheduler layout, the line kueue_fast/api/features.py follows), which
writes every workload's conditions after the cycle. That table still predates
FairSharingPreemptWithinNominal and RecomputeAssignmentUponPreemptionTargetsOverlap;
the cases those gates change run with the gate off and say so.

Not ported from TestSchedule: "error during admission" (an API error injected
into the status write: a test-fixture behaviour, no scheduling decision);
"container does not satisfy limitRange constraints" (LimitRange objects are not
an input kueue-fast accepts); "workload-slice fits in single clusterQueue"
(elastic jobs / workload slices are out of scope); "lendingLimit should not
affect assignments when feature disabled" (the LendingLimit gate of the v1beta1
table is gone, lending limits always apply). TestEntryOrdering,
TestRequeueAndUpdate, TestResourcesToReserve and
TestSchedulerWhenWorkloadModifiedConcurrently test internal functions with
hand-made entries, not decisions reachable through a cycle.

Kueue's unit tests build ClusterQueues without the API server's defaulting:
a ``Preemption`` struct naming only ``withinClusterQueue`` leaves
``reclaimWithinCohort`` empty, which Kueue's code treats as "not Never". Where
a case depends on that, the port says which explicit policy it uses instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from builders import (
    ENGINES,
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    NOW,
    SECOND,
    Admitted,
    ClusterQueueBuilder,
    CohortBuilder,
    ManifestWorkload,
    WorkloadBuilder,
    admitted,
    build_state,
    cohort,
    container_pod_set,
    cq,
    divergence_marks,
    engine_marks,
    expected_admission_text,
    expected_victims,
    fail_with_diff,
    flavor,
    fq,
    node_affinity,
    preemption_outcome,
    quota,
    run_one_cycle,
    schedule_outcome,
    selector_in,
    slug,
    wl,
)

from kueue_fast import Cluster
from kueue_fast.api.model import ResourceFlavor, Taint, Toleration

LP, ANY, NEVER = "LowerPriority", "Any", "Never"
GPU = "example.com/gpu"

SCHEDULE_FLAVORS = ("default", "on-demand", "spot", "model-a")


def base_cluster_queues() -> list[ClusterQueueBuilder]:
    """TestSchedule's clusterQueues."""
    eng = selector_in("dep", "eng")
    lend = selector_in("dep", "lend")
    return [
        cq("sales")
        .namespace_selector(selector_in("dep", "sales"))
        .strict_fifo()
        .flavor("default", cpu=quota("50", "0")),
        cq("eng-alpha")
        .cohort("eng")
        .namespace_selector(eng)
        .strict_fifo()
        .resource_group(fq("on-demand", cpu=quota("50", "50")), fq("spot", cpu=quota("100", "0"))),
        cq("eng-beta")
        .cohort("eng")
        .namespace_selector(eng)
        .strict_fifo()
        .preemption(within=LP, reclaim=ANY)
        .resource_group(fq("on-demand", cpu=quota("50", "10")), fq("spot", cpu=quota("0", "100")))
        .resource_group(fq("model-a", **{GPU: quota("20", "0")})),
        cq("flavor-nonexistent-cq").strict_fifo().flavor("nonexistent-flavor", cpu="50"),
        cq("lend-a").cohort("lend").namespace_selector(lend).flavor("default", cpu=quota("3", lend="2")),
        cq("lend-b").cohort("lend").namespace_selector(lend).flavor("default", cpu=quota("2", lend="2")),
    ]


BASE_LOCAL_QUEUES = [
    ("sales", "main", "sales"),
    ("sales", "blocked", "eng-alpha"),
    ("eng-alpha", "main", "eng-alpha"),
    ("eng-beta", "main", "eng-beta"),
    ("sales", "flavor-nonexistent-queue", "flavor-nonexistent-cq"),
    ("sales", "cq-nonexistent-queue", "nonexistent-cq"),
    ("lend", "lend-a-queue", "lend-a"),
    ("lend", "lend-b-queue", "lend-b"),
]
NAMESPACES = {
    "sales": {"dep": "sales"},
    "eng-alpha": {"dep": "eng"},
    "eng-beta": {"dep": "eng"},
    "eng-gamma": {"dep": "eng"},
    "lend": {"dep": "lend"},
}

SPOT_TAINT = Taint("instance", "spot", "NoSchedule")
SPOT_TOLERATION = Toleration("instance", "Equal", "spot", "NoSchedule")
# TestAssignFlavors' resourceFlavors.
ASSIGN_FLAVORS = (
    flavor("default"),
    flavor("one", {"type": "one"}),
    flavor("two", {"type": "two"}),
    flavor("b_one", {"b_type": "one"}),
    flavor("b_two", {"b_type": "two"}),
    flavor("tainted", taints=[SPOT_TAINT]),
    flavor("taint_and_toleration", taints=[SPOT_TAINT], tolerations=[SPOT_TOLERATION]),
    flavor("label-x-a", {"x": "a"}),
    flavor("label-xy-b", {"x": "b", "y": "k"}),
)


@dataclass
class ScheduleCase:
    test: str  # the Kueue test function
    name: str  # the Kueue case name, verbatim
    workloads: list[WorkloadBuilder]
    admitted: dict[str, Admitted] = field(default_factory=dict)  # admitted in this cycle
    preempted: tuple[str, ...] = ()
    # Victims whose eviction message is checked too: key -> (human reason, preemptor key).
    victims: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Pending workloads whose message is checked: key -> Kueue's QuotaReserved=False message.
    messages: dict[str, str] = field(default_factory=dict)
    cluster_queues: list[ClusterQueueBuilder] = field(default_factory=list)  # additional ones
    local_queues: list[tuple[str, str, str]] = field(default_factory=list)  # additional (ns, name, cq)
    cohorts: list[CohortBuilder] = field(default_factory=list)
    fair_sharing: bool = False
    base: bool = True  # TestSchedule's shared queues and namespaces
    flavors: tuple[ResourceFlavor | str, ...] = SCHEDULE_FLAVORS
    differs: str | None = None
    unverified: str | None = None
    # Feature gates set in the Configuration (Kueue's tables set them per case).
    feature_gates: dict[str, bool] = field(default_factory=dict)
    # A known divergence from Kueue: strict xfail on the engines named (both by
    # default), with what Kueue expects, what we do and Kueue's deciding source.
    diverges: str | None = None
    diverges_on: tuple[str, ...] = ENGINES

    @property
    def id(self) -> str:
        return f"kueue_{self.test}_{slug(self.name)}"


def ts(name: str, **kw: object) -> ScheduleCase:
    return ScheduleCase("TestSchedule", name, **kw)  # type: ignore[arg-type]


def other_queues(*names: str) -> list[tuple[str, str, str]]:
    """LocalQueues "other" in eng-<x> pointing at other-<x> (Kueue's usual additional queues)."""
    return [(f"eng-{n}", "other", f"other-{n}") for n in names]


def one(name: str, ns: str, count: int, cpu: str = "1", queue: str = "main", **kw: object) -> WorkloadBuilder:
    """A workload with the single pod set "one" of ``count`` pods."""
    return wl(name, ns).queue(queue).pod_set("one", count, {"cpu": cpu}, **kw)  # type: ignore[arg-type]


CASES: list[ScheduleCase] = [
    ts(
        "use second flavor when the first has no preemption candidates; WhenCanPreempt: Preempt",
        # v1beta1's whenCanPreempt "Preempt" is v1beta2's MayStopSearch.
        cluster_queues=[
            cq("other-alpha")
            .preemption(within=LP)
            .fungibility(when_can_preempt="MayStopSearch")
            .resource_group(fq("on-demand", cpu=quota("50", "50")), fq("spot", cpu=quota("100", "0"))),
        ],
        local_queues=[("eng-alpha", "other", "other-alpha")],
        workloads=[
            wl("admitted", "eng-alpha").queue("other").request(cpu="50").reserve("other-alpha", "on-demand"),
            wl("new", "eng-alpha").queue("other").request(cpu="20"),
        ],
        admitted={"eng-alpha/new": admitted("other-alpha", main={"cpu": "spot"})},
    ),
    ts(
        "workload fits in single clusterQueue, with check state ready",
        workloads=[one("foo", "sales", 10)],
        admitted={"sales/foo": admitted("sales", one={"cpu": "default"}, counts={"one": 10})},
    ),
    ts(
        "skip workload with missing or deleted ClusterQueue (NoFit)",
        workloads=[
            wl("missing-cq-workload", "sales").queue("non-existent-queue").pod_set("set", 1, {"cpu": "1"})
        ],
    ),
    ts(
        "single clusterQueue full",
        workloads=[
            one("new", "sales", 11),
            wl("assigned", "sales").pod_set("one", 40, {"cpu": "1"}).reserve("sales", "default"),
        ],
    ),
    ts(
        "failed to match clusterQueue selector",
        workloads=[one("new", "sales", 1, queue="blocked")],
    ),
    ts(
        "admit in different cohorts",
        workloads=[one("new", "sales", 1), one("new", "eng-alpha", 51)],
        admitted={
            "sales/new": admitted("sales", one={"cpu": "default"}),
            "eng-alpha/new": admitted("eng-alpha", one={"cpu": "on-demand"}, counts={"one": 51}),
        },
    ),
    ts(
        "admit in same cohort with no borrowing",
        workloads=[one("new", "eng-alpha", 40), one("new", "eng-beta", 40)],
        admitted={
            "eng-alpha/new": admitted("eng-alpha", one={"cpu": "on-demand"}),
            "eng-beta/new": admitted("eng-beta", one={"cpu": "on-demand"}),
        },
    ),
    ts(
        "assign multiple resources and flavors",
        workloads=[
            wl("new", "eng-beta")
            .queue("main")
            .pod_set("one", 10, {"cpu": "6", GPU: "1"})
            .pod_set("two", 40, {"cpu": "1"}),
        ],
        admitted={
            "eng-beta/new": admitted(
                "eng-beta", one={"cpu": "on-demand", GPU: "model-a"}, two={"cpu": "spot"}
            )
        },
    ),
    ts(
        "cannot borrow if cohort was assigned and would result in overadmission",
        workloads=[one("new", "eng-alpha", 45), one("new", "eng-beta", 56)],
        admitted={"eng-alpha/new": admitted("eng-alpha", one={"cpu": "on-demand"})},
    ),
    ts(
        "can borrow if cohort was assigned and will not result in overadmission",
        workloads=[one("new", "eng-alpha", 45), one("new", "eng-beta", 55)],
        admitted={
            "eng-alpha/new": admitted("eng-alpha", one={"cpu": "on-demand"}),
            "eng-beta/new": admitted("eng-beta", one={"cpu": "on-demand"}),
        },
    ),
    ts(
        "can borrow if needs reclaim from cohort in different flavor",
        workloads=[
            wl("can-reclaim", "eng-alpha").queue("main").request(cpu="100"),
            wl("needs-to-borrow", "eng-beta").queue("main").request(cpu="1"),
            wl("user-on-demand", "eng-beta").request(cpu="50").reserve("eng-beta", "on-demand"),
            wl("user-spot", "eng-beta").request(cpu="1").reserve("eng-beta", "spot"),
        ],
        admitted={"eng-beta/needs-to-borrow": admitted("eng-beta", main={"cpu": "on-demand"})},
    ),
    ts(
        "workload exceeds lending limit when borrow in cohort",
        workloads=[
            wl("a", "lend").request(cpu="2").reserve("lend-b", "default"),
            wl("b", "lend").queue("lend-b-queue").request(cpu="3"),
        ],
    ),
    ts(
        "preempt workloads in ClusterQueue and cohort",
        workloads=[
            wl("preemptor", "eng-beta").queue("main").request(cpu="20"),
            wl("use-all-spot", "eng-alpha").request(cpu="100").reserve("eng-alpha", "spot"),
            wl("low-1", "eng-beta").priority(-1).request(cpu="30").reserve("eng-beta", "on-demand"),
            wl("low-2", "eng-beta").priority(-2).request(cpu="10").reserve("eng-beta", "on-demand"),
            wl("borrower", "eng-alpha").request(cpu="60").reserve("eng-alpha", "on-demand"),
        ],
        preempted=("eng-alpha/borrower", "eng-beta/low-2"),
    ),
    ts(
        "multiple CQs need preemption",
        cluster_queues=[
            cq("other-alpha").cohort("other").flavor("on-demand", cpu=quota("50", "50")),
            cq("other-beta")
            .cohort("other")
            .preemption(within=LP, reclaim=ANY)
            .flavor("on-demand", cpu=quota("50", "10")),
        ],
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            wl("preemptor", "eng-beta").priority(-1).queue("other").request(cpu="1"),
            wl("pending", "eng-alpha").priority(1).queue("other").request(cpu="1"),
            wl("use-all", "eng-alpha").request(cpu="100").reserve("other-alpha", "on-demand"),
        ],
        preempted=("eng-alpha/use-all",),
    ),
    ts(
        "cannot borrow resource not listed in clusterQueue",
        workloads=[wl("new", "eng-alpha").queue("main").request(**{GPU: "1"})],
    ),
    ts(
        "not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor",
        workloads=[
            one("new", "eng-alpha", 60),
            wl("existing", "eng-beta").pod_set("one", 45, {"cpu": "1"}).reserve("eng-beta", "on-demand"),
        ],
        admitted={"eng-alpha/new": admitted("eng-alpha", one={"cpu": "spot"})},
    ),
    ts(
        "workload should not fit in nonexistent clusterQueue",
        workloads=[wl("foo", "sales").queue("cq-nonexistent-queue").request(cpu="1")],
    ),
    ts(
        "workload should not fit in clusterQueue with nonexistent flavor",
        workloads=[wl("foo", "sales").queue("flavor-nonexistent-queue").request(cpu="1")],
    ),
    ts(
        "no overadmission while borrowing",
        cluster_queues=[
            cq("eng-gamma")
            .cohort("eng")
            .preemption(within=LP, reclaim=ANY)
            .resource_group(fq("on-demand", cpu=quota("50", "10")), fq("spot", cpu=quota("0", "100"))),
        ],
        local_queues=[("eng-gamma", "main", "eng-gamma")],
        workloads=[
            one("new", "eng-beta", 50).created(NOW - 2 * SECOND),
            one("new-alpha", "eng-alpha", 1).created(NOW - SECOND),
            one("new-gamma", "eng-gamma", 50).created(NOW),
            wl("existing", "eng-gamma")
            .pod_set("borrow-on-demand", 51, {"cpu": "1"})
            .pod_set("use-all-spot", 100, {"cpu": "1"})
            .reserve("eng-gamma", {"borrow-on-demand": "on-demand", "use-all-spot": "spot"}),
        ],
        admitted={
            "eng-beta/new": admitted("eng-beta", one={"cpu": "on-demand"}),
            "eng-alpha/new-alpha": admitted("eng-alpha", one={"cpu": "on-demand"}),
        },
    ),
    ts(
        "partial admission single variable pod set",
        workloads=[one("new", "sales", 50, cpu="2", min_count=20)],
        admitted={"sales/new": admitted("sales", one={"cpu": "default"}, counts={"one": 25})},
    ),
    ts(
        "partial admission single variable pod set, preempt first",
        workloads=[
            wl("new", "eng-beta").queue("main").priority(4).pod_set("one", 20, {GPU: "1"}, min_count=10),
            wl("old", "eng-beta").priority(-4).pod_set("one", 10, {GPU: "1"}).reserve("eng-beta", "model-a"),
        ],
        preempted=("eng-beta/old",),
    ),
    ts(
        "partial admission single variable pod set, preempt with partial admission",
        workloads=[
            wl("new", "eng-beta").queue("main").priority(4).pod_set("one", 30, {GPU: "1"}, min_count=10),
            wl("old", "eng-beta").priority(-4).pod_set("one", 10, {GPU: "1"}).reserve("eng-beta", "model-a"),
        ],
        preempted=("eng-beta/old",),
    ),
    ts(
        "partial admission multiple variable pod sets",
        workloads=[
            wl("new", "sales")
            .queue("main")
            .pod_set("one", 20, {"cpu": "1"})
            .pod_set("two", 30, {"cpu": "1"}, min_count=10)
            .pod_set("three", 15, {"cpu": "1"}, min_count=5),
        ],
        admitted={
            "sales/new": admitted(
                "sales",
                one={"cpu": "default"},
                two={"cpu": "default"},
                three={"cpu": "default"},
                counts={"one": 20, "two": 20, "three": 10},
            )
        },
    ),
]


def co_cluster_queues() -> list[ClusterQueueBuilder]:
    """cq1..cq3 in cohort "co", each 10 (+10 borrowable) of r1 and r2 in flavor default."""
    return [
        cq(n)
        .cohort("co")
        .preemption(within=LP, reclaim=ANY)
        .flavor("default", r1=quota("10", "10"), r2=quota("10", "10"))
        for n in ("cq1", "cq2", "cq3")
    ]


CO_LQS = [("sales", f"lq{i}", f"cq{i}") for i in (1, 2, 3)]


def r_wl(name: str, queue: str, prio: int, **req: str) -> WorkloadBuilder:
    return wl(name, "sales").queue(queue).priority(prio).request(**req)


CASES += [
    ts(
        "two workloads can borrow different resources from the same flavor in the same cycle",
        cluster_queues=co_cluster_queues(),
        local_queues=CO_LQS,
        workloads=[r_wl("wl1", "lq1", -1, r1="16"), r_wl("wl2", "lq2", -2, r2="16")],
        admitted={
            "sales/wl1": admitted("cq1", main={"r1": "default"}),
            "sales/wl2": admitted("cq2", main={"r2": "default"}),
        },
    ),
    ts(
        "two workloads can borrow the same resources from the same flavor in the same cycle if fits in the cohort quota",  # noqa: E501
        cluster_queues=co_cluster_queues(),
        local_queues=CO_LQS,
        workloads=[r_wl("wl1", "lq1", -1, r1="16"), r_wl("wl2", "lq2", -2, r1="14")],
        admitted={
            "sales/wl1": admitted("cq1", main={"r1": "default"}),
            "sales/wl2": admitted("cq2", main={"r1": "default"}),
        },
    ),
    ts(
        "only one workload can borrow one resources from the same flavor in the same cycle if cohort quota cannot fit",  # noqa: E501
        cluster_queues=co_cluster_queues(),
        local_queues=CO_LQS,
        workloads=[r_wl("wl1", "lq1", -1, r1="16"), r_wl("wl2", "lq2", -2, r1="16")],
        admitted={"sales/wl1": admitted("cq1", main={"r1": "default"})},
        messages={"sales/wl2": "Workload no longer fits after processing another workload"},
    ),
    ts(
        "preemption while borrowing, workload waiting for preemption should not block a borrowing workload in another CQ",  # noqa: E501
        cluster_queues=[
            cq("cq_shared").cohort("preemption-while-borrowing").flavor("default", cpu=quota("4", "0")),
            cq("cq_a")
            .cohort("preemption-while-borrowing")
            .preemption(reclaim=LP, borrow_within=LP)
            .flavor("default", cpu=quota("0", "3")),
            cq("cq_b")
            .cohort("preemption-while-borrowing")
            .preemption(reclaim=LP, borrow_within=LP)
            .flavor("default", cpu="0"),
        ],
        local_queues=[("eng-alpha", "lq_a", "cq_a"), ("eng-beta", "lq_b", "cq_b")],
        workloads=[
            wl("a", "eng-alpha").queue("lq_a").created(NOW + SECOND).request(cpu="3"),
            wl("b", "eng-beta").queue("lq_b").created(NOW + 2 * SECOND).request(cpu="1"),
            wl("admitted_a", "eng-alpha").queue("lq_a").request(cpu="2").reserve("cq_a", "default"),
        ],
        admitted={"eng-beta/b": admitted("cq_b", main={"cpu": "default"})},
        messages={
            "eng-alpha/a": "couldn't assign flavors to pod set main: "
            "insufficient unused quota for cpu in flavor default, 2 more needed"
        },
    ),
    ts(
        "with fair sharing: schedule workload with lowest share first",
        fair_sharing=True,
        cluster_queues=[cq("eng-shared").cohort("eng").flavor("on-demand", cpu=quota("10", "0"))],
        workloads=[
            one("all_nominal", "eng-alpha", 50).reserve("eng-alpha", "on-demand"),
            one("borrowing", "eng-beta", 55).reserve("eng-beta", "on-demand"),
            one("older_new", "eng-beta", 1).created(NOW - 60 * SECOND),
            one("new", "eng-alpha", 5).created(NOW),
        ],
        admitted={"eng-alpha/new": admitted("eng-alpha", one={"cpu": "on-demand"})},
    ),
    ts(
        # Cohort A (200 cpu) <- B <- {d (uses 10), e (20)}, A <- C <- {f, g (100)}.
        # Pending d1 70, e1 61, f1 1, g1 1: inside B, d1 (d at 80) beats e1 (e
        # at 81); at A, B with d1 (100) beats C with f1 or g1 (101). Only d1 fits.
        "hierarchical fair sharing schedule workload which wins tournament",
        fair_sharing=True,
        cohorts=[
            cohort("A").flavor("on-demand", cpu="200"),
            cohort("B").parent("A"),
            cohort("C").parent("A"),
        ],
        cluster_queues=[
            cq(n).cohort(p).flavor("on-demand", cpu="0")
            for n, p in (("d", "B"), ("e", "B"), ("f", "C"), ("g", "C"))
        ],
        local_queues=[("eng-alpha", f"lq-{n}", n) for n in "defg"],
        workloads=[
            one("d0", "eng-alpha", 1, cpu="10", queue="lq-d").reserve("d", "on-demand"),
            one("e0", "eng-alpha", 1, cpu="20", queue="lq-e").reserve("e", "on-demand"),
            one("g0", "eng-alpha", 1, cpu="100", queue="lq-g").reserve("g", "on-demand"),
            one("d1", "eng-alpha", 1, cpu="70", queue="lq-d"),
            one("e1", "eng-alpha", 1, cpu="61", queue="lq-e"),
            one("f1", "eng-alpha", 1, cpu="1", queue="lq-f"),
            one("g1", "eng-alpha", 1, cpu="1", queue="lq-g"),
        ],
        admitted={"eng-alpha/d1": admitted("d", one={"cpu": "on-demand"})},
    ),
    ts(
        # b0 holds 10; b1 (50) would bring b to 60, c1 (75) c to 75: b1 goes first.
        "fair sharing schedule workload with lowest drf after admission",
        fair_sharing=True,
        cohorts=[cohort("A").flavor("on-demand", cpu="100")],
        cluster_queues=[cq(n).cohort("A").flavor("on-demand", cpu="0") for n in "bc"],
        local_queues=[("eng-alpha", f"lq-{n}", n) for n in "bc"],
        workloads=[
            one("b0", "eng-alpha", 1, cpu="10", queue="lq-b").reserve("b", "on-demand"),
            one("b1", "eng-alpha", 1, cpu="50", queue="lq-b"),
            one("c1", "eng-alpha", 1, cpu="75", queue="lq-c"),
        ],
        admitted={"eng-alpha/b1": admitted("b", one={"cpu": "on-demand"})},
    ),
    ts(
        "fair sharing schedule singleton cqs and cq without cohort",
        fair_sharing=True,
        cohorts=[cohort("A").flavor("on-demand", cpu="10"), cohort("B")],
        cluster_queues=[
            cq("a").cohort("A").flavor("on-demand", cpu="0"),
            cq("b").cohort("B").flavor("on-demand", cpu="10"),
            cq("c").flavor("on-demand", cpu="10"),
        ],
        local_queues=[("eng-alpha", f"lq-{n}", n) for n in "abc"],
        workloads=[one(f"{n}1", "eng-alpha", 1, cpu="10", queue=f"lq-{n}") for n in "abc"],
        admitted={f"eng-alpha/{n}1": admitted(n, one={"cpu": "on-demand"}) for n in "abc"},
    ),
    ts(
        "fair sharing schedule highest priority first",
        fair_sharing=True,
        cohorts=[cohort("A").flavor("on-demand", cpu="10"), cohort("B")],
        cluster_queues=[cq(n).cohort("A").flavor("on-demand", cpu="0") for n in "bc"],
        local_queues=[("eng-alpha", f"lq-{n}", n) for n in "bc"],
        workloads=[
            one("b1", "eng-alpha", 1, cpu="10", queue="lq-b").priority(99),
            one("c1", "eng-alpha", 1, cpu="10", queue="lq-c").priority(101),
        ],
        admitted={"eng-alpha/c1": admitted("c", one={"cpu": "on-demand"})},
    ),
    ts(
        "fair sharing schedule earliest timestamp first",
        fair_sharing=True,
        cohorts=[cohort("A").flavor("on-demand", cpu="10"), cohort("B")],
        cluster_queues=[cq(n).cohort("A").flavor("on-demand", cpu="0") for n in "bc"],
        local_queues=[("eng-alpha", f"lq-{n}", n) for n in "bc"],
        workloads=[
            one("b1", "eng-alpha", 1, cpu="10", queue="lq-b").priority(101).created(NOW + SECOND),
            one("c1", "eng-alpha", 1, cpu="10", queue="lq-c").priority(101).created(NOW),
        ],
        admitted={"eng-alpha/c1": admitted("c", one={"cpu": "on-demand"})},
    ),
    ts(
        "minimal preemptions when target queue is exhausted",
        cluster_queues=[
            cq("other-alpha").cohort("other").preemption(within=LP, reclaim=ANY).flavor("on-demand", cpu="2"),
            cq("other-beta").cohort("other").flavor("on-demand", cpu="2"),
            cq("other-gamma").cohort("other").flavor("on-demand", cpu="2"),
        ],
        local_queues=other_queues("alpha", "beta", "gamma"),
        workloads=[
            wl("a1", "eng-alpha")
            .priority(-2)
            .queue("other")
            .request(cpu="1")
            .reserve("other-alpha", "on-demand"),
            wl("a2", "eng-alpha")
            .priority(-2)
            .queue("other")
            .request(cpu="1")
            .reserve("other-alpha", "on-demand"),
            wl("a3", "eng-alpha")
            .priority(-1)
            .queue("other")
            .request(cpu="1")
            .reserve("other-alpha", "on-demand"),
            wl("b1", "eng-beta").queue("other").request(cpu="1").reserve("other-beta", "on-demand"),
            wl("b2", "eng-beta").queue("other").request(cpu="1").reserve("other-beta", "on-demand"),
            wl("b3", "eng-beta").queue("other").request(cpu="1").reserve("other-beta", "on-demand"),
            wl("incoming", "eng-alpha").queue("other").request(cpu="2"),
        ],
        preempted=("eng-alpha/a1", "eng-alpha/a2"),
    ),
    ts(
        "A workload is only eligible to do preemptions if it fits fully within nominal quota",
        cluster_queues=[
            cq("other-alpha").cohort("other").preemption(within=LP, reclaim=ANY).flavor("on-demand", cpu="2"),
            cq("other-beta").cohort("other").flavor("on-demand", cpu="2"),
        ],
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            wl("a1", "eng-alpha")
            .priority(-1)
            .queue("other")
            .request(cpu="1")
            .reserve("other-alpha", "on-demand"),
            wl("b1", "eng-beta")
            .priority(-1)
            .queue("other")
            .request(cpu="1")
            .reserve("other-beta", "on-demand"),
            wl("incoming", "eng-alpha").priority(1).queue("other").request(cpu="3"),
        ],
        messages={
            "eng-alpha/incoming": "couldn't assign flavors to pod set main: "
            "insufficient unused quota for cpu in flavor on-demand, 1 more needed"
        },
    ),
    ts(
        "with fair sharing: preempt workload from CQ with the highest share",
        fair_sharing=True,
        cluster_queues=[cq("eng-gamma").cohort("eng").flavor("on-demand", cpu=quota("50", "0"))],
        workloads=[
            wl("all_spot", "eng-alpha").request(cpu="100").reserve("eng-alpha", "spot"),
            *[
                wl(f"alpha{i}", "eng-alpha").request(cpu="20").reserve("eng-alpha", "on-demand")
                for i in range(1, 5)
            ],
            wl("gamma1", "eng-gamma").request(cpu="10").reserve("eng-gamma", "on-demand"),
            *[
                wl(f"gamma{i}", "eng-gamma").request(cpu="20").reserve("eng-gamma", "on-demand")
                for i in range(2, 5)
            ],
            wl("preemptor", "eng-beta").queue("main").request(cpu="30"),
        ],
        victims={
            "eng-alpha/alpha1": (IN_COHORT_FAIR_SHARING, "eng-beta/preemptor"),
            "eng-gamma/gamma1": (IN_COHORT_FAIR_SHARING, "eng-beta/preemptor"),
        },
        # The table predates FairSharingPreemptWithinNominal (beta, on since 0.17):
        # with it a preemptor within nominal reclaims (InCohortReclamation), so the
        # case runs with the gate off, as the table was written.
        feature_gates={"FairSharingPreemptWithinNominal": False},
        messages={
            "eng-beta/preemptor": "couldn't assign flavors to pod set main: "
            "insufficient unused quota for cpu in flavor on-demand, 30 more needed, "
            "insufficient unused quota for cpu in flavor spot, 30 more needed. "
            "Pending the preemption of 2 workload(s)"
        },
    ),
]


def within_only(name: str, cpu: str, reclaim: str = NEVER, **kw: object) -> ClusterQueueBuilder:
    """other-* queues whose Kueue Preemption names only withinClusterQueue: LowerPriority.

    The unset reclaimWithinCohort becomes Never here (the API server's default)
    unless a case says otherwise; where that matters the case explains it."""
    return cq(name).cohort("other").preemption(within=LP, reclaim=reclaim, **kw).flavor("default", cpu=cpu)  # type: ignore[arg-type]


def other_wl(name: str, ns: str, prio: int, cpu: str, reserve_in: str | None = None) -> WorkloadBuilder:
    w = wl(name, ns).priority(prio).queue("other").request(cpu=cpu)
    return w.reserve(reserve_in, "default") if reserve_in else w


CASES += [
    ts(
        # Each preemptor preempts in its own ClusterQueue, in the same cycle.
        "multiple preemptions without borrowing",
        cluster_queues=[within_only("other-alpha", "2"), within_only("other-beta", "2")],
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            other_wl("a1", "eng-alpha", 0, "2", "other-alpha"),
            other_wl("b1", "eng-beta", 0, "2", "other-beta"),
            other_wl("preemptor", "eng-alpha", 100, "2"),
            other_wl("preemptor", "eng-beta", 100, "2"),
        ],
        preempted=("eng-alpha/a1", "eng-beta/b1"),
    ),
    ts(
        # A workload that fits does not block a preempting one in the same cycle.
        "multiple preemptions preemption possible after earlier workload fits",
        cluster_queues=[within_only("other-alpha", "1"), within_only("other-beta", "2")],
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            other_wl("b1", "eng-beta", 0, "2", "other-beta"),
            other_wl("fit", "eng-alpha", 100, "1"),
            other_wl("preemptor", "eng-beta", 99, "2"),
        ],
        admitted={"eng-alpha/fit": admitted("other-alpha", main={"cpu": "default"})},
        preempted=("eng-beta/b1",),
    ),
    ts(
        # Two preemptors of 3 cpu each need the cohort's single spare cpu on top
        # of their preemption: only the first one preempts.
        "multiple preemptions skip preemption when shared limited resource",
        cluster_queues=[
            within_only("other-alpha", "2", borrow_within=LP),
            within_only("other-beta", "2", borrow_within=LP),
            cq("resource-bank").cohort("other").flavor("default", cpu="1"),
        ],
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            other_wl("a1", "eng-alpha", 0, "2", "other-alpha"),
            other_wl("b1", "eng-beta", 0, "2", "other-beta"),
            other_wl("preemptor", "eng-alpha", 100, "3"),
            other_wl("pretending-preemptor", "eng-beta", 99, "3"),
        ],
        preempted=("eng-alpha/a1",),
    ),
    ts(
        # Kueue's queues leave reclaimWithinCohort empty, which lets fair sharing
        # consider preemption while borrowing; LowerPriority has that effect here.
        "multiple preemptions within cq when fair sharing",
        fair_sharing=True,
        cluster_queues=[
            within_only("other-alpha", "2", reclaim=LP),
            within_only("other-beta", "2", reclaim=LP),
            within_only("other-gamma", "2", reclaim=LP),
            cq("resource-bank").cohort("other").flavor("default", cpu="3"),
        ],
        local_queues=other_queues("alpha", "beta", "gamma"),
        workloads=[
            other_wl("a1", "eng-alpha", 0, "3", "other-alpha"),
            other_wl("b1", "eng-beta", 0, "3", "other-beta"),
            other_wl("c1", "eng-gamma", 0, "3", "other-gamma"),
            other_wl("preemptor", "eng-alpha", 100, "3"),
            other_wl("preemptor", "eng-beta", 100, "3"),
            other_wl("preemptor", "eng-gamma", 100, "3"),
        ],
        victims={
            f"eng-{x}/{v}": (IN_CLUSTER_QUEUE, f"eng-{x}/preemptor")
            for x, v in (("alpha", "a1"), ("beta", "b1"), ("gamma", "c1"))
        },
        messages={
            f"eng-{x}/preemptor": "couldn't assign flavors to pod set main: "
            "insufficient unused quota for cpu in flavor default, 3 more needed. "
            "Pending the preemption of 1 workload(s)"
            for x in ("alpha", "beta", "gamma")
        },
    ),
    ts(
        # other-gamma uses more than its fair share of cpu; alpha's and beta's
        # preemptors both need it. Alpha's (higher priority) goes first; beta's
        # targets overlap (c1) and it is skipped, b1 keeps running. (Facts from
        # the v1beta2 table, whose queues name reclaimWithinCohort: Any.)
        "multiple preemptions skip overlapping preemption targets",
        fair_sharing=True,
        cluster_queues=[
            cq(f"other-{x}")
            .cohort("other")
            .preemption(within=LP, reclaim=ANY)
            .flavor("default", cpu="0", **{f"{x}-resource": "1"})
            for x in ("alpha", "beta", "gamma")
        ]
        + [cq("resource-bank").cohort("other").flavor("default", cpu="9")],
        local_queues=other_queues("alpha", "beta", "gamma"),
        workloads=[
            wl("a1", "eng-alpha")
            .queue("other")
            .request(**{"alpha-resource": "1"})
            .reserve("other-alpha", "default"),
            wl("b1", "eng-beta")
            .queue("other")
            .request(**{"beta-resource": "1"})
            .reserve("other-beta", "default"),
            # Kueue's c1 requests gamma-resource too, but its admission only charges the 9 cpu.
            wl("c1", "eng-gamma")
            .queue("other")
            .request(cpu="9", **{"gamma-resource": "1"})
            .reserve("other-gamma", "default", usage={"cpu": "9"}),
            wl("preemptor", "eng-alpha")
            .priority(100)
            .queue("other")
            .request(cpu="3", **{"alpha-resource": "1"}),
            wl("pretending-preemptor", "eng-beta")
            .priority(99)
            .queue("other")
            .request(cpu="3", **{"beta-resource": "1"}),
        ],
        victims={
            "eng-alpha/a1": (IN_CLUSTER_QUEUE, "eng-alpha/preemptor"),
            "eng-gamma/c1": (IN_COHORT_FAIR_SHARING, "eng-alpha/preemptor"),
        },
        messages={
            "eng-alpha/preemptor": "couldn't assign flavors to pod set main: "
            "insufficient unused quota for alpha-resource in flavor default, 1 more needed, "
            "insufficient unused quota for cpu in flavor default, 3 more needed. "
            "Pending the preemption of 2 workload(s)",
            "eng-beta/pretending-preemptor": (
                "Workload has overlapping preemption targets with another workload"
            ),
        },
        # The table predates RecomputeAssignmentUponPreemptionTargetsOverlap (beta,
        # on in 0.20), which re-computes beta's targets instead of skipping it
        # (TestScheduleRecomputePreemptionTargets); run with the gate off.
        feature_gates={"RecomputeAssignmentUponPreemptionTargetsOverlap": False},
    ),
    ts(
        "not enough resources",
        workloads=[one("new", "sales", 1, cpu="100")],
    ),
    ts(
        "not enough resources with fair sharing enabled",
        fair_sharing=True,
        workloads=[one("new", "sales", 1, cpu="100")],
    ),
]


def gpu_queues(
    alpha: tuple[str, str], beta: tuple[str, str], beta_preempts: bool = True
) -> list[ClusterQueueBuilder]:
    """other-alpha / other-beta with gpu quotas (on-demand, spot)."""
    beta_cq = cq("other-beta").cohort("other")
    if beta_preempts:
        beta_cq.preemption(within=LP, reclaim=LP)
    return [
        cq("other-alpha")
        .cohort("other")
        .preemption(within=LP, reclaim=LP)
        .resource_group(fq("on-demand", gpu=alpha[0]), fq("spot", gpu=alpha[1])),
        beta_cq.resource_group(fq("on-demand", gpu=beta[0]), fq("spot", gpu=beta[1])),
    ]


def gpu_wl(
    name: str, ns: str, prio: int, gpu: str, reserve: tuple[str, str] | None = None
) -> WorkloadBuilder:
    w = wl(name, ns).priority(prio).queue("other").request(gpu=gpu)
    return w.reserve(*reserve) if reserve else w


CASES += [
    ts(
        # on-demand needs a preemption inside other-alpha; spot a reclamation of a
        # borrowing workload of other-beta: reclamation is the better mode.
        "prefer reclamation over cq priority based preemption",
        cluster_queues=gpu_queues(("10", "10"), ("0", "0")),
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            gpu_wl("a1", "eng-alpha", 50, "5", ("other-alpha", "on-demand")),
            gpu_wl("b1", "eng-beta", 50, "5", ("other-beta", "spot")),
            gpu_wl("preemptor", "eng-alpha", 100, "6"),
        ],
        preempted=("eng-beta/b1",),
    ),
    ts(
        "with fair sharing: prefer reclamation over cq priority based preemption; with preemption while borrowing",  # noqa: E501
        fair_sharing=True,
        cluster_queues=gpu_queues(("7", "7"), ("3", "3"), beta_preempts=False),
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            gpu_wl("a1", "eng-alpha", 50, "5", ("other-alpha", "on-demand")),
            gpu_wl("b1", "eng-beta", 50, "5", ("other-beta", "spot")),
            gpu_wl("preemptor", "eng-alpha", 100, "8"),
        ],
        preempted=("eng-beta/b1",),
    ),
    ts(
        # spot would need a reclamation and a preemption in other-alpha: no better
        # than on-demand's preemption, so the first flavor is kept.
        "prefer first preemption flavor when second flavor requires both reclaim and cq priority preemption",
        cluster_queues=gpu_queues(("10", "10"), ("0", "0"), beta_preempts=False),
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            gpu_wl("a1", "eng-alpha", 50, "5", ("other-alpha", "on-demand")),
            gpu_wl("a2", "eng-alpha", 50, "5", ("other-alpha", "spot")),
            gpu_wl("b1", "eng-beta", 50, "5", ("other-beta", "spot")),
            gpu_wl("preemptor", "eng-alpha", 100, "6"),
        ],
        preempted=("eng-alpha/a1",),
    ),
    ts(
        # b1 outranks the preemptor, so spot also needs a preemption in other-alpha.
        "prefer first preemption flavor when second flavor also requires cq preemption",
        cluster_queues=gpu_queues(("10", "10"), ("0", "0"), beta_preempts=False),
        local_queues=other_queues("alpha", "beta"),
        workloads=[
            gpu_wl("a1", "eng-alpha", 50, "6", ("other-alpha", "on-demand")),
            gpu_wl("a2", "eng-alpha", 50, "5", ("other-alpha", "spot")),
            gpu_wl("b1", "eng-beta", 9001, "5", ("other-beta", "spot")),
            gpu_wl("preemptor", "eng-alpha", 100, "5"),
        ],
        preempted=("eng-alpha/a1",),
    ),
    ts(
        # CQ2 lends its quota; its WL2 fits its nominal quota and may reclaim from
        # CQ3 (borrowing). WL1 in CQ1 (older) does not fit CQ1's nominal quota and
        # must not reserve capacity that invalidates WL2's reclamation (#3405).
        "workload requiring reclaimation prioritized over wl in another full cq",
        cluster_queues=[
            cq("CQ1").cohort("other").flavor("on-demand", gpu="10"),
            cq("CQ2").cohort("other").preemption(reclaim=ANY).flavor("on-demand", gpu="10"),
            cq("CQ3").cohort("other").flavor("on-demand", gpu="0"),
        ],
        local_queues=[("eng-alpha", "lq", "CQ1"), ("eng-beta", "lq", "CQ2"), ("eng-gamma", "lq", "CQ3")],
        workloads=[
            wl("Admitted-Workload-1", "eng-alpha").queue("lq").request(gpu="5").reserve("CQ1", "on-demand"),
            wl("WL1", "eng-alpha").queue("lq").created(NOW).request(gpu="10"),
            wl("WL2", "eng-beta").queue("lq").created(NOW + SECOND).request(gpu="10"),
            wl("Admitted-Workload-2", "eng-gamma")
            .queue("lq")
            .priority(0)
            .request(gpu="5")
            .reserve("CQ3", "on-demand"),
            wl("Admitted-Workload-3", "eng-gamma")
            .queue("lq")
            .priority(1)
            .request(gpu="5")
            .reserve("CQ3", "on-demand"),
        ],
        preempted=("eng-gamma/Admitted-Workload-2",),
    ),
]


def lender_borrower(reclaim: str) -> list[ClusterQueueBuilder]:
    """ClusterQueueA (2 gpu, reclaimWithinCohort ``reclaim``) and ClusterQueueB (0 gpu) in cohort root."""
    return [
        cq("ClusterQueueA").cohort("root").preemption(reclaim=reclaim).flavor("on-demand", gpu="2"),
        cq("ClusterQueueB").cohort("root").flavor("on-demand", gpu="0"),
    ]


LENDER_BORROWER_LQS = [("eng-alpha", "lq", "ClusterQueueA"), ("eng-beta", "lq", "ClusterQueueB")]


def lender_borrower_workloads() -> list[WorkloadBuilder]:
    """A holds 1 of its 2 gpu and has a 2-gpu workload waiting; B has a 1-gpu one."""
    return [
        wl("a1-admitted", "eng-alpha").queue("lq").request(gpu="1").reserve("ClusterQueueA", "on-demand"),
        wl("a2-pending", "eng-alpha").queue("lq").request(gpu="2"),
        wl("b1-pending", "eng-beta").queue("lq").created(NOW).request(gpu="1"),
    ]


CASES += [
    ts(
        # a2-pending needs a preemption without candidates; A can always reclaim
        # (Any), so it does not hold its free gpu back and B may borrow it.
        "capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)",
        cluster_queues=lender_borrower(ANY),
        local_queues=LENDER_BORROWER_LQS,
        workloads=lender_borrower_workloads(),
        admitted={"eng-beta/b1-pending": admitted("ClusterQueueB", main={"gpu": "on-demand"})},
    ),
    ts(
        "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=LowerPriority)",  # noqa: E501
        cluster_queues=lender_borrower(LP),
        local_queues=LENDER_BORROWER_LQS,
        workloads=lender_borrower_workloads(),
    ),
    ts(
        "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)",
        cluster_queues=lender_borrower(NEVER),
        local_queues=LENDER_BORROWER_LQS,
        workloads=lender_borrower_workloads(),
    ),
    ts(
        # ROOT <- GUARANTEED (4 cpu) <- guaranteed; ROOT <- best-effort. The
        # workload borrowing from a lower level goes first despite its lower priority.
        "in a hierarchical cohort, workload borrowing less is scheduled first",
        cohorts=[cohort("root"), cohort("guaranteed").parent("root").flavor("default", cpu="4")],
        cluster_queues=[
            cq("guaranteed").cohort("guaranteed").flavor("default", cpu="0"),
            cq("best-effort").cohort("root").flavor("default", cpu="0"),
        ],
        local_queues=[
            ("eng-alpha", "lq-guaranteed", "guaranteed"),
            ("eng-alpha", "lq-best-effort", "best-effort"),
        ],
        workloads=[
            one("guaranteed", "eng-alpha", 1, cpu="4", queue="lq-guaranteed").priority(0),
            one("best-effort", "eng-alpha", 1, cpu="4", queue="lq-best-effort").priority(3),
        ],
        admitted={"eng-alpha/guaranteed": admitted("guaranteed", one={"cpu": "default"})},
    ),
    ts(
        # on-demand would need a preemption but "admitted" only uses cq2's
        # nominal quota: no candidates, so the assigner moves on to spot.
        # (v1beta1's whenCanPreempt Preempt / whenCanBorrow Borrow are v1beta2's MayStopSearch.)
        "don't assign flavor if there are no candidates for preemption",
        cluster_queues=[
            cq("cq1")
            .cohort("cohort")
            .preemption(within=LP, reclaim=ANY, borrow_within=LP)
            .fungibility(when_can_borrow="MayStopSearch", when_can_preempt="MayStopSearch")
            .resource_group(fq("on-demand", cpu=quota("0", "1")), fq("spot", cpu=quota("0", "1"))),
            cq("cq2").cohort("cohort").resource_group(fq("on-demand", cpu="1"), fq("spot", cpu="1")),
        ],
        local_queues=[("eng-alpha", "lq1", "cq1"), ("eng-alpha", "lq2", "cq2")],
        workloads=[
            wl("admitted", "eng-alpha")
            .queue("lq2")
            .request(cpu="1")
            .priority(0)
            .reserve("cq2", "on-demand", at=NOW - SECOND),
            wl("new", "eng-alpha").queue("lq1").request(cpu="1").priority(100),
        ],
        admitted={"eng-alpha/new": admitted("cq1", main={"cpu": "spot"})},
    ),
]


# --- TestSchedule cases of the v1beta2 table that the first port left out ---------------------------
#
# Facts from the v1beta2 scheduler_test.go (the table that also gives every
# pending workload's QuotaReserved=False message, see KUEUE_MESSAGES below).


def lender_borrower_hierarchy(lending_limit: str) -> list[ClusterQueueBuilder]:
    """ROOT <- CHILD <- {cq-lender (10 cpu, lendingLimit), cq-borrower (5 cpu, borrowingLimit 10)}."""
    eng = selector_in("dep", "eng")
    return [
        cq("cq-lender")
        .cohort("child")
        .namespace_selector(eng)
        .flavor("on-demand", cpu=quota("10", lend=lending_limit)),
        cq("cq-borrower").cohort("child").namespace_selector(eng).flavor("on-demand", cpu=quota("5", "10")),
    ]


def weighted_pair(weight: float) -> list[ClusterQueueBuilder]:
    """b and c in cohort A (8 cpu), no quota of their own, reclaim Any, fair weight ``weight``."""
    return [
        cq(n).cohort("A").weight(weight).preemption(within=NEVER, reclaim=ANY).flavor("on-demand", cpu="0")
        for n in "bc"
    ]


def local_capacity_case(fair_sharing: bool) -> ScheduleCase:
    # root-cohort (on-demand 2, spot 0) <- child-cohort (on-demand 5, spot 7) <- queue1
    # (on-demand 3, spot 3, TryNextFlavor for both). a1 uses 8 on-demand (all of
    # the tree's), a2 the 3 spot of queue1: a3 borrows spot from child-cohort.
    name = "prefer flavor with most local capacity" + ("" if fair_sharing else " (FS=false)")
    return ts(
        name,
        fair_sharing=fair_sharing,
        cohorts=[
            cohort("root-cohort").resource_group(fq("on-demand", gpu="2"), fq("spot", gpu="0")),
            cohort("child-cohort")
            .parent("root-cohort")
            .resource_group(fq("on-demand", gpu="5"), fq("spot", gpu="7")),
        ],
        cluster_queues=[
            cq("queue1")
            .cohort("child-cohort")
            .preemption(within=LP, reclaim=ANY)
            .fungibility(when_can_borrow="TryNextFlavor", when_can_preempt="TryNextFlavor")
            .resource_group(fq("on-demand", gpu="3"), fq("spot", gpu="3")),
        ],
        local_queues=[("default", "queue1", "queue1")],
        workloads=[
            wl("a1").queue("queue1").request(gpu="8").reserve("queue1", "on-demand"),
            wl("a2").queue("queue1").request(gpu="3").reserve("queue1", "spot"),
            wl("a3").queue("queue1").request(gpu="1"),
        ],
        admitted={"default/a3": admitted("queue1", main={"gpu": "spot"})},
    )


CASES += [
    ts(
        # The AdmissionCheckState on Kueue's workload is left out: its ClusterQueue
        # has no admission checks, so the state plays no part in the decision.
        "workload fits in single clusterQueue, with check state pending",
        workloads=[one("foo", "sales", 10)],
        admitted={"sales/foo": admitted("sales", one={"cpu": "default"}, counts={"one": 10})},
    ),
    ts(
        # lender keeps 10 - 3 = 7 cpu; borrower uses its 5 and wants 4 more, only 3 lendable.
        "hierarchical cohort respects lending limit when borrowing",
        cohorts=[cohort("root"), cohort("child").parent("root")],
        cluster_queues=lender_borrower_hierarchy("3"),
        local_queues=[("eng-alpha", "lq-lender", "cq-lender"), ("eng-alpha", "lq-borrower", "cq-borrower")],
        workloads=[
            wl("wl-existing", "eng-alpha").request(cpu="5").reserve("cq-borrower", "on-demand"),
            wl("wl-pending", "eng-alpha").queue("lq-borrower").request(cpu="4"),
        ],
        messages={
            "eng-alpha/wl-pending": "couldn't assign flavors to pod set main: "
            "insufficient unused quota for cpu in flavor on-demand, 1 more needed"
        },
    ),
    ts(
        "hierarchical cohort allows borrowing up to lending limit",
        cohorts=[cohort("root"), cohort("child").parent("root")],
        cluster_queues=lender_borrower_hierarchy("5"),
        local_queues=[("eng-alpha", "lq-lender", "cq-lender"), ("eng-alpha", "lq-borrower", "cq-borrower")],
        workloads=[
            wl("wl-existing", "eng-alpha").request(cpu="5").reserve("cq-borrower", "on-demand"),
            wl("wl-borrowing", "eng-alpha").queue("lq-borrower").request(cpu="5"),
        ],
        admitted={"eng-alpha/wl-borrowing": admitted("cq-borrower", main={"cpu": "on-demand"})},
    ),
    ts(
        # Without partial admission, pod set three (15) no longer fits after one
        # (20) and two (30) took the 50 cpu of sales.
        "partial admission disabled, multiple variable pod sets",
        feature_gates={"PartialAdmission": False},
        workloads=[
            wl("new", "sales")
            .queue("main")
            .pod_set("one", 20, {"cpu": "1"})
            .pod_set("two", 30, {"cpu": "1"}, min_count=10)
            .pod_set("three", 15, {"cpu": "1"}, min_count=5),
        ],
        messages={
            "sales/new": "couldn't assign flavors to pod set three: insufficient quota for cpu in flavor "
            "default, previously considered podsets requests (50) + current podset request (15) > "
            "maximum capacity (50)"
        },
    ),
    ts(
        # b0 holds 4 of b's borrowed cpu; with weight 0 both borrowers compare by
        # their unweighted shares: c1 (c at 4) beats b1 (b at 8) despite b1's priority.
        "fair sharing two queues with weight 0 schedules workload which borrows less",
        fair_sharing=True,
        cohorts=[cohort("A").flavor("on-demand", cpu="8")],
        cluster_queues=weighted_pair(0),
        local_queues=[("eng-alpha", f"lq-{n}", n) for n in "bc"],
        workloads=[
            one("b0", "eng-alpha", 1, cpu="4", queue="lq-b").reserve("b", "on-demand"),
            one("b1", "eng-alpha", 1, cpu="4", queue="lq-b").priority(9001),
            one("c1", "eng-alpha", 1, cpu="4", queue="lq-c").priority(0),
        ],
        admitted={"eng-alpha/c1": admitted("c", one={"cpu": "on-demand"})},
        messages={"eng-alpha/b1": "Workload no longer fits after processing another workload"},
    ),
    ts(
        "fair sharing two queues with high weight schedules workload which borrows less",
        fair_sharing=True,
        cohorts=[cohort("A").flavor("on-demand", cpu="8")],
        cluster_queues=weighted_pair(123456789),
        local_queues=[("eng-alpha", f"lq-{n}", n) for n in "bc"],
        workloads=[
            one("b0", "eng-alpha", 1, cpu="4", queue="lq-b").reserve("b", "on-demand"),
            one("b1", "eng-alpha", 1, cpu="4", queue="lq-b").priority(9001),
            one("c1", "eng-alpha", 1, cpu="4", queue="lq-c").priority(0),
        ],
        admitted={"eng-alpha/c1": admitted("c", one={"cpu": "on-demand"})},
        messages={"eng-alpha/b1": "Workload no longer fits after processing another workload"},
    ),
    ts(
        # requests above limits: the workload stays pending, its message names
        # the field path of the container (workload.ValidateResources).
        "container resource requests exceed limits",
        workloads=[
            ManifestWorkload(
                "new", "sales", "main", [container_pod_set("one", 1, {"cpu": "200m"}, {"cpu": "100m"})]
            ),  # type: ignore[list-item]
        ],
        messages={
            "sales/new": "resources validation failed: spec.podSets[0].template.spec.containers[0]: "
            'Invalid value: ["cpu"]: requests must not exceed its limits'
        },
    ),
    local_capacity_case(True),
    local_capacity_case(False),
    ts(
        # The AdmissionCheckState on Kueue's workload is left out (no checks on eng-beta).
        # on-demand cannot ever hold 80 (50 + 10 borrowable): spot, by borrowing.
        "pending admission check with nofit and fit flavors",
        workloads=[wl("pending-check", "eng-beta").queue("main").request(cpu="80")],
        admitted={"eng-beta/pending-check": admitted("eng-beta", main={"cpu": "spot"})},
    ),
    ts(
        "admit to second flavor when first needs preemption; WhenCanPreempt: TryNextFlavor",
        cluster_queues=[
            cq("preempt-attempts-cq")
            .preemption(within=LP)
            .fungibility(when_can_preempt="TryNextFlavor")
            .resource_group(fq("on-demand", cpu="1"), fq("spot", cpu="1")),
        ],
        local_queues=[("eng-alpha", "preempt-attempts-lq", "preempt-attempts-cq")],
        workloads=[
            wl("blocker", "eng-alpha")
            .queue("preempt-attempts-lq")
            .request(cpu="1")
            .priority(50)
            .reserve("preempt-attempts-cq", "on-demand"),
            wl("test-wl", "eng-alpha").queue("preempt-attempts-lq").request(cpu="1").priority(100),
        ],
        admitted={"eng-alpha/test-wl": admitted("preempt-attempts-cq", main={"cpu": "spot"})},
    ),
    ts(
        "admit workload with zero-quantity request for resource not in ClusterQueue",
        workloads=[wl("zero-resource-wl", "sales").queue("main").request(cpu="1", **{GPU: "0"})],
        admitted={"sales/zero-resource-wl": admitted("sales", main={"cpu": "default"})},
    ),
    ts(
        "preempt when workload requests zero of a resource not defined in ClusterQueue",
        cluster_queues=[cq("preempt-zero-gpu-cq").preemption(within=LP).flavor("default", cpu="4")],
        local_queues=[("sales", "preempt-zero-gpu-lq", "preempt-zero-gpu-cq")],
        workloads=[
            wl("preemptor", "sales").queue("preempt-zero-gpu-lq").request(cpu="2", **{GPU: "0"}),
            wl("low-priority", "sales")
            .priority(-1)
            .queue("preempt-zero-gpu-lq")
            .request(cpu="4")
            .reserve("preempt-zero-gpu-cq", "default"),
        ],
        victims={"sales/low-priority": (IN_CLUSTER_QUEUE, "sales/preemptor")},
        messages={
            "sales/preemptor": "couldn't assign flavors to pod set main: insufficient unused quota for cpu "
            "in flavor default, 2 more needed. Pending the preemption of 1 workload(s)"
        },
    ),
]


# --- TestScheduleRecomputePreemptionTargets (RecomputeAssignmentUponPreemptionTargetsOverlap) -------
#
#                     root-cohort (3005 cpu)
#                   /        |          \
#     parent-cohort-a   parent-cohort-b   parent-cohort-c
#      (0 cpu)          |                 |
#      /       \        cq-tiny (50)      cq-rest (0)
#  cq-hero (3000)  cq-noisy (0)


def recompute_queues() -> list[ClusterQueueBuilder]:
    return [
        cq(name).cohort(parent).flavor("default", cpu=nominal).preemption(within=LP, reclaim=ANY)
        for name, parent, nominal in (
            ("cq-hero", "parent-cohort-a", "3000"),
            ("cq-noisy", "parent-cohort-a", "0"),
            ("cq-tiny", "parent-cohort-b", "50"),
            ("cq-rest", "parent-cohort-c", "0"),
        )
    ]


def recompute_cohorts() -> list[CohortBuilder]:
    return [
        cohort("root-cohort").flavor("default", cpu="3005"),
        cohort("parent-cohort-a").parent("root-cohort").flavor("default", cpu="0"),
        cohort("parent-cohort-b").parent("root-cohort"),
        cohort("parent-cohort-c").parent("root-cohort"),
    ]


RECOMPUTE_LQS = [("eng-alpha", f"lq-{n}", f"cq-{n}") for n in ("hero", "noisy", "tiny", "rest")]


def tr(name: str, **kw: object) -> ScheduleCase:
    kw.setdefault("base", False)
    kw.setdefault("flavors", ("default", "on-demand"))
    return ScheduleCase("TestScheduleRecomputePreemptionTargets", name, **kw)  # type: ignore[arg-type]


def ea(name: str, queue: str, cpu: str) -> WorkloadBuilder:
    return wl(name, "eng-alpha").queue(queue).request(cpu=cpu)


DEFERRED = (
    "Workload has overlapping preemption targets with another workload, "
    "but will fit after these preemptions complete"
)

CASES += [
    tr(
        # cq-rest borrows most of the root's quota: wl-tiny-pending and wl-hero
        # both first pick wl-rest-admitted. wl-tiny-pending goes first (fair
        # sharing); wl-hero's targets overlap, it re-computes them and finds
        # wl-noisy-admitted (borrowing its own parent's quota) instead.
        "with fair sharing: hierarchical nominal-first prefers non-borrowing leaf CQ",
        fair_sharing=True,
        cohorts=recompute_cohorts(),
        cluster_queues=recompute_queues(),
        local_queues=RECOMPUTE_LQS,
        workloads=[
            ea("wl-noisy-admitted", "lq-noisy", "3000").reserve("cq-noisy", "default"),
            ea("wl-tiny-admitted", "lq-tiny", "60").reserve("cq-tiny", "default"),
            ea("wl-rest-admitted", "lq-rest", "2995").reserve("cq-rest", "default"),
            ea("wl-hero", "lq-hero", "2990").created(NOW + SECOND),
            ea("wl-tiny-pending", "lq-tiny", "10").created(NOW),
        ],
        victims={
            "eng-alpha/wl-noisy-admitted": (IN_COHORT_RECLAMATION, "eng-alpha/wl-hero"),
            "eng-alpha/wl-rest-admitted": (IN_COHORT_FAIR_SHARING, "eng-alpha/wl-tiny-pending"),
        },
        messages={
            "eng-alpha/wl-hero": "couldn't assign flavors to pod set main: insufficient unused quota "
            "for cpu in flavor default, 5 more needed. Pending the preemption of 1 workload(s)",
            "eng-alpha/wl-tiny-pending": "couldn't assign flavors to pod set main: insufficient unused quota "
            "for cpu in flavor default, 10 more needed. Pending the preemption of 1 workload(s)",
        },
    ),
    tr(
        # Both want wl-rest-admitted; once wl-tiny-pending has it, wl-hero fits
        # without more preemptions: it waits ("deferred fit").
        "with fair sharing: two workloads reclaim nominal quota; RecomputePreemptionTargetsUponOverlap enabled",  # noqa: E501
        fair_sharing=True,
        cohorts=recompute_cohorts(),
        cluster_queues=recompute_queues(),
        local_queues=RECOMPUTE_LQS,
        workloads=[
            ea("wl-rest-admitted", "lq-rest", "6055").priority(0).reserve("cq-rest", "default"),
            ea("wl-hero", "lq-hero", "2950").created(NOW + SECOND),
            ea("wl-tiny-pending", "lq-tiny", "50").created(NOW),
            ea("wl-rest-pending", "lq-rest", "4000").priority(10).created(NOW + 2 * SECOND),
        ],
        victims={"eng-alpha/wl-rest-admitted": (IN_COHORT_RECLAMATION, "eng-alpha/wl-tiny-pending")},
        messages={
            "eng-alpha/wl-hero": DEFERRED,
            "eng-alpha/wl-rest-pending": "couldn't assign flavors to pod set main: insufficient unused quota "
            "for cpu in flavor default, 945 more needed",
            "eng-alpha/wl-tiny-pending": "couldn't assign flavors to pod set main: insufficient unused quota "
            "for cpu in flavor default, 50 more needed. Pending the preemption of 1 workload(s)",
        },
    ),
    tr(
        "two workloads reclaim nominal quota; RecomputePreemptionTargetsUponOverlap enabled",
        cohorts=recompute_cohorts(),
        cluster_queues=recompute_queues(),
        local_queues=RECOMPUTE_LQS,
        workloads=[
            ea("wl-rest-admitted", "lq-rest", "6055").reserve("cq-rest", "default"),
            ea("wl-hero", "lq-hero", "2950").created(NOW + SECOND),
            ea("wl-tiny-pending", "lq-tiny", "50").created(NOW),
        ],
        victims={"eng-alpha/wl-rest-admitted": (IN_COHORT_RECLAMATION, "eng-alpha/wl-tiny-pending")},
        messages={
            "eng-alpha/wl-hero": DEFERRED,
            "eng-alpha/wl-tiny-pending": "couldn't assign flavors to pod set main: insufficient unused quota "
            "for cpu in flavor default, 50 more needed. Pending the preemption of 1 workload(s)",
        },
    ),
    tr(
        # cq-2 (unused) goes first under fair sharing and takes wl-admitted-default.
        # wl-pending-high-prio-1 overlaps; its re-computation keeps its nominated
        # flavor (default) instead of switching to on-demand, and is skipped.
        "flavor stickiness with RecomputePreemptionTargetsUponOverlap",
        fair_sharing=True,
        cohorts=[cohort("root")],
        cluster_queues=[
            *recompute_queues(),
            *[
                cq(n)
                .cohort("root")
                .preemption(within=LP, reclaim=ANY)
                .resource_group(fq("default", cpu="5"), fq("on-demand", cpu="5"))
                for n in ("cq-1", "cq-2")
            ],
        ],
        local_queues=[*RECOMPUTE_LQS, ("default", "lq-1", "cq-1"), ("default", "lq-2", "cq-2")],
        workloads=[
            wl("wl-admitted-default").queue("lq-1").request(cpu="10").reserve("cq-1", "default"),
            wl("wl-admitted-on-demand").queue("lq-1").request(cpu="10").reserve("cq-1", "on-demand"),
            wl("wl-pending-high-prio-1").queue("lq-1").priority(11).request(cpu="10").created(NOW),
            wl("wl-pending-high-prio-2").queue("lq-2").priority(10).request(cpu="10").created(NOW + SECOND),
        ],
        victims={"default/wl-admitted-default": (IN_COHORT_FAIR_SHARING, "default/wl-pending-high-prio-2")},
        messages={
            "default/wl-pending-high-prio-1": "couldn't assign flavors to pod set main: insufficient unused "
            "quota for cpu in flavor default, 10 more needed, skipping flavor on-demand as it is not found "
            "in the nomination mapping for resource cpu",
            "default/wl-pending-high-prio-2": "couldn't assign flavors to pod set main: insufficient unused "
            "quota for cpu in flavor default, 10 more needed, insufficient unused quota for cpu in flavor "
            "on-demand, 10 more needed. Pending the preemption of 1 workload(s)",
        },
    ),
]

# --- TestAssignFlavors: the flavor a single workload gets in one ClusterQueue ----------------------


def af(
    name: str, flavors: list[object], pod_sets: list[WorkloadBuilder] | WorkloadBuilder, **kw: object
) -> ScheduleCase:
    """A TestAssignFlavors case: one ClusterQueue "test-clusterqueue" (resource
    groups ``flavors``: lists of FlavorQuotas), the workload in LocalQueue
    default/main. ``kw``: admitted=..., plus extra admitted workloads standing in
    for Kueue's clusterQueueUsage."""
    queue = cq("test-clusterqueue")
    for group in flavors:
        queue.resource_group(*group)  # type: ignore[arg-type]
    workloads = pod_sets if isinstance(pod_sets, list) else [pod_sets]
    return ScheduleCase(
        "TestAssignFlavors",
        name,
        workloads=workloads,
        cluster_queues=[queue],
        local_queues=[("default", "main", "test-clusterqueue")],
        base=False,
        flavors=ASSIGN_FLAVORS,
        **kw,  # type: ignore[arg-type]
    )


def awl(name: str = "wl") -> WorkloadBuilder:
    return wl(name).queue("main")


TQ = "test-clusterqueue"

CASES += [
    af(
        "single flavor, fits",
        [[fq("default", cpu="1", memory="2Mi")]],
        awl().request(cpu="1", memory="1Mi"),
        admitted={"default/wl": admitted(TQ, main={"cpu": "default", "memory": "default"})},
    ),
    af(
        "single flavor, fits tainted flavor",
        [[fq("tainted", cpu="4")]],
        awl().pod_set("main", 1, {"cpu": "1"}, tolerations=[SPOT_TOLERATION]),
        admitted={"default/wl": admitted(TQ, main={"cpu": "tainted"})},
    ),
    af(
        "single flavor, fits tainted flavor with toleration",
        [[fq("taint_and_toleration", cpu="4")]],
        awl().request(cpu="1"),
        admitted={"default/wl": admitted(TQ, main={"cpu": "taint_and_toleration"})},
    ),
    af(
        # clusterQueueUsage (3 cpu) is held by an admitted workload; no preemption policy.
        "single flavor, used resources, doesn't fit",
        [[fq("default", cpu="4")]],
        [awl().request(cpu="2"), wl("usage").request(cpu="3").reserve(TQ, "default")],
    ),
    af(
        "multiple resource groups, fits",
        [[fq("one", cpu="2"), fq("two", cpu="4")], [fq("b_one", memory="1Gi"), fq("b_two", memory="5Gi")]],
        awl().request(cpu="3", memory="10Mi"),
        admitted={"default/wl": admitted(TQ, main={"cpu": "two", "memory": "b_one"})},
    ),
    af(
        "multiple resources in a group, doesn't fit",
        [[fq("one", cpu="2", memory="1Gi"), fq("two", cpu="4", memory="5Mi")]],
        awl().request(cpu="3", memory="10Mi"),
    ),
    af(
        "multiple flavors, fits while skipping tainted flavor",
        [[fq("tainted", cpu="4"), fq("two", cpu="4")]],
        awl().request(cpu="3"),
        admitted={"default/wl": admitted(TQ, main={"cpu": "two"})},
    ),
    af(
        # ignored1 and ignored2 are keys no flavor defines: they are dropped.
        "multiple flavors, fits a node selector",
        [[fq("one", cpu="4"), fq("two", cpu="4")]],
        awl().pod_set(
            "main",
            1,
            {"cpu": "1"},
            node_selector={"type": "two", "ignored1": "foo"},
            affinity=node_affinity([("ignored2", "In", ["bar"])]),
        ),
        admitted={"default/wl": admitted(TQ, main={"cpu": "two"})},
    ),
    af(
        "multiple flavors, fits with node affinity",
        [[fq("one", cpu="4", memory="1Gi"), fq("two", cpu="4", memory="1Gi")]],
        awl().pod_set(
            "main",
            1,
            {"cpu": "1", "memory": "1Mi"},
            node_selector={"ignored1": "foo"},
            affinity=node_affinity([("type", "In", ["two"])]),
        ),
        admitted={"default/wl": admitted(TQ, main={"cpu": "two", "memory": "two"})},
    ),
    af(
        # The first term only names an unknown key, so it matches any flavor (terms are ORed).
        "multiple flavors, node affinity fits any flavor",
        [[fq("one", cpu="4"), fq("two", cpu="4")]],
        awl().pod_set(
            "main",
            1,
            {"cpu": "1"},
            affinity=node_affinity([("ignored2", "In", ["bar"])], [("cpuType", "In", ["two"])]),
        ),
        admitted={"default/wl": admitted(TQ, main={"cpu": "one"})},
    ),
    af(
        "multiple flavors with different label keys, selector only uses flavor's own keys",
        [[fq("label-x-a", cpu="4"), fq("label-xy-b", cpu="4")]],
        awl().pod_set("main", 1, {"cpu": "1"}, node_selector={"x": "a", "y": "g"}),
        admitted={"default/wl": admitted(TQ, main={"cpu": "label-x-a"})},
    ),
    af(
        "labelless flavor in group with labeled flavor, workload uses labeled selector",
        [[fq("default", cpu="4"), fq("two", cpu="4")]],
        awl().pod_set("main", 1, {"cpu": "1"}, node_selector={"type": "two"}),
        admitted={"default/wl": admitted(TQ, main={"cpu": "default"})},
    ),
    af(
        "multiple flavors, doesn't fit node affinity",
        [[fq("one", cpu="4"), fq("two", cpu="4")]],
        awl().pod_set("main", 1, {"cpu": "1"}, affinity=node_affinity([("type", "In", ["three"])])),
    ),
    af(
        "multiple specs, fit different flavors",
        [[fq("one", cpu="4"), fq("two", cpu="10")]],
        awl().pod_set("driver", 1, {"cpu": "5"}).pod_set("worker", 1, {"cpu": "3"}),
        admitted={"default/wl": admitted(TQ, driver={"cpu": "two"}, worker={"cpu": "one"})},
    ),
]


# --- the v1beta2 table's messages for the cases ported first -----------------------------------------
#
# The v1beta2 TestSchedule checks every workload's conditions after the cycle:
# the QuotaReserved=False message of each pending workload and the reason of
# each preemption. Restated here per case (Kueue's case name) and merged into
# the cases above, so that every port checks them.

NO_LONGER_FITS = "Workload no longer fits after processing another workload"


def _flavors_msg(pod_set: str, *reasons: str, preempting: int = 0) -> str:
    text = f"couldn't assign flavors to pod set {pod_set}: " + ", ".join(reasons)
    return text + (f". Pending the preemption of {preempting} workload(s)" if preempting else "")


def _unused(resource: str, flavor_name: str, more: int) -> str:
    return f"insufficient unused quota for {resource} in flavor {flavor_name}, {more} more needed"


def _max(resource: str, flavor_name: str, before: int, request: int, capacity: int) -> str:
    return (
        f"insufficient quota for {resource} in flavor {flavor_name}, previously considered podsets requests "
        f"({before}) + current podset request ({request}) > maximum capacity ({capacity})"
    )


KUEUE_MESSAGES: dict[str, dict[str, str]] = {
    "single clusterQueue full": {"sales/new": _flavors_msg("one", _unused("cpu", "default", 1))},
    "failed to match clusterQueue selector": {
        "sales/new": "Workload namespace doesn't match ClusterQueue selector"
    },
    "cannot borrow if cohort was assigned and would result in overadmission": {
        "eng-beta/new": NO_LONGER_FITS
    },
    "can borrow if needs reclaim from cohort in different flavor": {
        "eng-alpha/can-reclaim": _flavors_msg(
            "main", _unused("cpu", "on-demand", 50), _unused("cpu", "spot", 1)
        )
    },
    "workload exceeds lending limit when borrow in cohort": {
        "lend/b": _flavors_msg("main", _unused("cpu", "default", 1))
    },
    "preempt workloads in ClusterQueue and cohort": {
        "eng-beta/preemptor": _flavors_msg(
            "main", _unused("cpu", "on-demand", 20), _unused("cpu", "spot", 20), preempting=2
        )
    },
    "multiple CQs need preemption": {
        "eng-alpha/pending": _flavors_msg("main", _unused("cpu", "on-demand", 1)),
        "eng-beta/preemptor": _flavors_msg("main", _unused("cpu", "on-demand", 1), preempting=1),
    },
    "cannot borrow resource not listed in clusterQueue": {
        "eng-alpha/new": _flavors_msg("main", f"resource {GPU} unavailable in ClusterQueue")
    },
    "no overadmission while borrowing": {
        "eng-gamma/new-gamma": _flavors_msg(
            "one", _unused("cpu", "on-demand", 41), _unused("cpu", "spot", 50)
        )
    },
    "partial admission single variable pod set, preempt first": {
        "eng-beta/new": _flavors_msg("one", _unused(GPU, "model-a", 10), preempting=1)
    },
    "partial admission single variable pod set, preempt with partial admission": {
        "eng-beta/new": _flavors_msg("one", _unused(GPU, "model-a", 10), preempting=1)
    },
    "with fair sharing: schedule workload with lowest share first": {"eng-beta/older_new": NO_LONGER_FITS},
    "hierarchical fair sharing schedule workload which wins tournament": {
        f"eng-alpha/{n}": NO_LONGER_FITS for n in ("e1", "f1", "g1")
    },
    "fair sharing schedule workload with lowest drf after admission": {"eng-alpha/c1": NO_LONGER_FITS},
    "fair sharing schedule highest priority first": {"eng-alpha/b1": NO_LONGER_FITS},
    "fair sharing schedule earliest timestamp first": {"eng-alpha/b1": NO_LONGER_FITS},
    "minimal preemptions when target queue is exhausted": {
        "eng-alpha/incoming": _flavors_msg("main", _unused("cpu", "on-demand", 2), preempting=2)
    },
    "multiple preemptions without borrowing": {
        f"eng-{x}/preemptor": _flavors_msg("main", _unused("cpu", "default", 2), preempting=1)
        for x in ("alpha", "beta")
    },
    "multiple preemptions preemption possible after earlier workload fits": {
        "eng-beta/preemptor": _flavors_msg("main", _unused("cpu", "default", 1), preempting=1)
    },
    "multiple preemptions skip preemption when shared limited resource": {
        "eng-alpha/preemptor": _flavors_msg("main", _unused("cpu", "default", 2), preempting=1),
        "eng-beta/pretending-preemptor": NO_LONGER_FITS,
    },
    "not enough resources": {"sales/new": _flavors_msg("one", _max("cpu", "default", 0, 100, 50))},
    "not enough resources with fair sharing enabled": {
        "sales/new": _flavors_msg("one", _max("cpu", "default", 0, 100, 50))
    },
    "prefer reclamation over cq priority based preemption": {
        "eng-alpha/preemptor": _flavors_msg(
            "main", _unused("gpu", "on-demand", 1), _unused("gpu", "spot", 1), preempting=1
        )
    },
    "with fair sharing: prefer reclamation over cq priority based preemption; with preemption while borrowing": {  # noqa: E501
        "eng-alpha/preemptor": _flavors_msg(
            "main", _unused("gpu", "on-demand", 3), _unused("gpu", "spot", 3), preempting=1
        )
    },
    "prefer first preemption flavor when second flavor requires both reclaim and cq priority preemption": {
        "eng-alpha/preemptor": _flavors_msg(
            "main", _unused("gpu", "on-demand", 1), _unused("gpu", "spot", 6), preempting=1
        )
    },
    "prefer first preemption flavor when second flavor also requires cq preemption": {
        "eng-alpha/preemptor": _flavors_msg(
            "main", _unused("gpu", "on-demand", 1), _unused("gpu", "spot", 5), preempting=1
        )
    },
    "workload requiring reclaimation prioritized over wl in another full cq": {
        "eng-alpha/WL1": _flavors_msg("main", _unused("gpu", "on-demand", 5)),
        "eng-beta/WL2": _flavors_msg("main", _unused("gpu", "on-demand", 5), preempting=1),
    },
    "capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)": {
        "eng-alpha/a2-pending": _flavors_msg("main", _unused("gpu", "on-demand", 1))
    },
    "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=LowerPriority)": {  # noqa: E501
        "eng-alpha/a2-pending": _flavors_msg("main", _unused("gpu", "on-demand", 1)),
        "eng-beta/b1-pending": NO_LONGER_FITS,
    },
    "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)": {
        "eng-alpha/a2-pending": _flavors_msg("main", _unused("gpu", "on-demand", 1)),
        "eng-beta/b1-pending": NO_LONGER_FITS,
    },
    "in a hierarchical cohort, workload borrowing less is scheduled first": {
        "eng-alpha/best-effort": NO_LONGER_FITS
    },
}

# Victims' preemption reasons (with their preemptor) in the v1beta2 table.
KUEUE_VICTIMS: dict[str, dict[str, tuple[str, str]]] = {
    "preempt workloads in ClusterQueue and cohort": {
        "eng-alpha/borrower": (IN_COHORT_RECLAMATION, "eng-beta/preemptor"),
        "eng-beta/low-2": (IN_CLUSTER_QUEUE, "eng-beta/preemptor"),
    },
    "multiple CQs need preemption": {"eng-alpha/use-all": (IN_COHORT_RECLAMATION, "eng-beta/preemptor")},
    "partial admission single variable pod set, preempt first": {
        "eng-beta/old": (IN_CLUSTER_QUEUE, "eng-beta/new")
    },
    "partial admission single variable pod set, preempt with partial admission": {
        "eng-beta/old": (IN_CLUSTER_QUEUE, "eng-beta/new")
    },
    "minimal preemptions when target queue is exhausted": {
        f"eng-alpha/{v}": (IN_CLUSTER_QUEUE, "eng-alpha/incoming") for v in ("a1", "a2")
    },
    "multiple preemptions without borrowing": {
        "eng-alpha/a1": (IN_CLUSTER_QUEUE, "eng-alpha/preemptor"),
        "eng-beta/b1": (IN_CLUSTER_QUEUE, "eng-beta/preemptor"),
    },
    "multiple preemptions preemption possible after earlier workload fits": {
        "eng-beta/b1": (IN_CLUSTER_QUEUE, "eng-beta/preemptor")
    },
    "multiple preemptions skip preemption when shared limited resource": {
        "eng-alpha/a1": (IN_CLUSTER_QUEUE, "eng-alpha/preemptor")
    },
    "prefer reclamation over cq priority based preemption": {
        "eng-beta/b1": (IN_COHORT_RECLAMATION, "eng-alpha/preemptor")
    },
    "with fair sharing: prefer reclamation over cq priority based preemption; with preemption while borrowing": {  # noqa: E501
        "eng-beta/b1": (IN_COHORT_FAIR_SHARING, "eng-alpha/preemptor")
    },
    "prefer first preemption flavor when second flavor requires both reclaim and cq priority preemption": {
        "eng-alpha/a1": (IN_CLUSTER_QUEUE, "eng-alpha/preemptor")
    },
    "prefer first preemption flavor when second flavor also requires cq preemption": {
        "eng-alpha/a1": (IN_CLUSTER_QUEUE, "eng-alpha/preemptor")
    },
    "workload requiring reclaimation prioritized over wl in another full cq": {
        "eng-gamma/Admitted-Workload-2": (IN_COHORT_RECLAMATION, "eng-beta/WL2")
    },
}

for _case in CASES:
    if _case.test != "TestSchedule":
        continue
    for _key, _msg in KUEUE_MESSAGES.get(_case.name, {}).items():
        _case.messages.setdefault(_key, _msg)
    for _key, _victim in KUEUE_VICTIMS.get(_case.name, {}).items():
        _case.victims.setdefault(_key, _victim)


def _params() -> list[object]:
    return [
        pytest.param(
            case,
            engine,
            id=f"{case.id}-{engine}",
            marks=engine_marks(engine, case.differs, case.unverified)
            + divergence_marks(engine, case.diverges, case.diverges_on),
        )
        for case in CASES
        for engine in ENGINES
    ]


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("case", "engine"), _params())
def test_kueue_schedule(case: ScheduleCase, engine: str) -> None:
    cluster_queues = [*(base_cluster_queues() if case.base else []), *case.cluster_queues]
    local_queues = [*(BASE_LOCAL_QUEUES if case.base else []), *case.local_queues]
    state = build_state(
        case.flavors,
        cluster_queues,
        case.workloads,
        cohorts=case.cohorts,
        local_queues=local_queues,
        namespaces=NAMESPACES if case.base else None,
        fair_sharing=case.fair_sharing,
        default_namespace=None,
        feature_gates=case.feature_gates,
    )
    decisions = run_one_cycle(state, engine)

    want: dict[str, str] = {}
    for w in state.workloads.values():
        if w.key in case.admitted:
            want[w.key] = expected_admission_text(case.admitted[w.key])
        elif w.key in case.victims:
            reason, by = case.victims[w.key]
            want[w.key] = (
                f"evicted by {by}: " + expected_victims(state, state.workloads[by], {w.key: reason})[w.key]
            )
        elif w.key in case.preempted:
            want[w.key] = "evicted"
        elif w.admission is not None:
            want[w.key] = f"admitted in {w.admission.cluster_queue}"
        elif w.key in case.messages:
            want[w.key] = f"pending: {case.messages[w.key]}"
        else:
            want[w.key] = "pending"
    got = schedule_outcome(decisions, case.admitted)
    for key in case.victims:
        d = decisions[key]
        if d.state == "evicted":
            got[key] = (
                f"evicted by {d.preempted_by}: " + preemption_outcome({key: d}, str(d.preempted_by))[key]
            )
    for key in case.messages:
        if decisions[key].state == "pending":
            got[key] = f"pending: {decisions[key].message}"
    if got != want:
        fail_with_diff(f"{case.test} {case.name!r}: state of every workload", want, got, decisions)


# --- TestLastSchedulingContext: two cycles, with deletions in between -------------------------------
#
# Kueue's test records preemptions without carrying them out: a preempted
# workload keeps its quota until the test deletes it. We run the Cluster the
# same way (release_evictions=False: an evicted workload holds its quota until
# it is removed), remove the deleted workloads after the first cycle, and run a
# second one. The first cycle must admit exactly wantAdmissionsOnFirstSchedule;
# after the second, the workloads holding quota must be exactly
# wantAdmissionsOnSecondSchedule (with their flavors); preemptions are counted
# over both cycles.


@dataclass
class TwoCycleCase:
    name: str
    cluster_queues: list[ClusterQueueBuilder]
    admitted_before: list[WorkloadBuilder]
    workloads: list[WorkloadBuilder]
    first: dict[str, Admitted]
    second: dict[str, Admitted]
    delete: tuple[str, ...] = ()
    preempted: tuple[str, ...] = ()
    test: str = "TestLastSchedulingContext"
    # Pending workloads' messages after the first cycle (the v1beta2 table's wantWorkloads).
    first_messages: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"kueue_{self.test}_{slug(self.name)}"


def cohort_queues() -> list[ClusterQueueBuilder]:
    """TestLastSchedulingContext's clusterQueueCohort (v1beta1 Preempt/Borrow are MayStopSearch)."""
    out = []
    for name, policy in (
        ("eng-cohort-alpha", "MayStopSearch"),
        ("eng-cohort-beta", "MayStopSearch"),
        ("eng-cohort-theta", "TryNextFlavor"),
    ):
        out.append(
            cq(name)
            .cohort("cohort")
            .strict_fifo()
            .preemption(within=NEVER, reclaim=LP)
            .fungibility(when_can_borrow=policy, when_can_preempt=policy)
            .resource_group(fq("on-demand", cpu=quota("50", "50")), fq("spot", cpu=quota("100", "0")))
        )
    return out


LAST_CONTEXT_LQS = [
    ("default", "main", "eng-alpha"),
    ("default", "main-alpha", "eng-cohort-alpha"),
    ("default", "main-beta", "eng-cohort-beta"),
    ("default", "main-theta", "eng-cohort-theta"),
]


def held(name: str, cpu: str, cluster_queue: str, flavor_name: str, **kw: object) -> WorkloadBuilder:
    return wl(name).request(cpu=cpu).reserve(cluster_queue, flavor_name, **kw)  # type: ignore[arg-type]


def on(cluster_queue: str, flavor_name: str) -> Admitted:
    return admitted(cluster_queue, main={"cpu": flavor_name})


TWO_CYCLE_CASES = [
    TwoCycleCase(
        # on-demand has no candidate, spot (10) can never fit 20: wait, and take
        # on-demand once low-1 is gone.
        "scheduling on the first flavor is unblocked after some workloads were deleted",
        cluster_queues=[
            cq("eng-alpha")
            .preemption(within=LP)
            .fungibility(when_can_preempt="MayStopSearch")
            .resource_group(fq("on-demand", cpu=quota("50", "50")), fq("spot", cpu=quota("10", "0"))),
        ],
        admitted_before=[wl("low-1").queue("main").request(cpu="50").reserve("eng-alpha", "on-demand")],
        workloads=[wl("preemptor").queue("main").request(cpu="20")],
        delete=("default/low-1",),
        first={},
        first_messages={
            "default/preemptor": _flavors_msg(
                "main", _max("cpu", "spot", 0, 20, 10), _unused("cpu", "on-demand", 20)
            )
        },
        second={"default/preemptor": on("eng-alpha", "on-demand")},
    ),
    TwoCycleCase(
        "borrow before next flavor",
        cluster_queues=cohort_queues(),
        admitted_before=[held("placeholder", "50", "eng-cohort-alpha", "on-demand")],
        workloads=[
            wl("borrower").queue("main-alpha").request(cpu="20"),
            wl("workload1").queue("main-beta").request(cpu="20"),
        ],
        first={
            "default/workload1": on("eng-cohort-beta", "on-demand"),
            "default/borrower": on("eng-cohort-alpha", "on-demand"),
        },
        second={
            "default/placeholder": on("eng-cohort-alpha", "on-demand"),
            "default/workload1": on("eng-cohort-beta", "on-demand"),
            "default/borrower": on("eng-cohort-alpha", "on-demand"),
        },
    ),
    TwoCycleCase(
        "borrow after all flavors",
        cluster_queues=cohort_queues(),
        admitted_before=[
            held("placeholder", "50", "eng-cohort-alpha", "on-demand"),
            held("placeholder1", "50", "eng-cohort-theta", "on-demand"),
        ],
        workloads=[wl("workload").queue("main-theta").request(cpu="20")],
        first={"default/workload": on("eng-cohort-theta", "spot")},
        second={
            "default/placeholder": on("eng-cohort-alpha", "on-demand"),
            "default/placeholder1": on("eng-cohort-theta", "on-demand"),
            "default/workload": on("eng-cohort-theta", "spot"),
        },
    ),
    TwoCycleCase(
        "when the next flavor is full, but can borrow on first",
        cluster_queues=cohort_queues(),
        admitted_before=[
            held("placeholder", "40", "eng-cohort-alpha", "on-demand"),
            held("placeholder1", "40", "eng-cohort-theta", "on-demand"),
            held("placeholder2", "100", "eng-cohort-theta", "spot"),
        ],
        workloads=[wl("workload").queue("main-theta").request(cpu="20")],
        first={"default/workload": on("eng-cohort-theta", "on-demand")},
        second={
            "default/placeholder": on("eng-cohort-alpha", "on-demand"),
            "default/placeholder1": on("eng-cohort-theta", "on-demand"),
            "default/placeholder2": on("eng-cohort-theta", "spot"),
            "default/workload": on("eng-cohort-theta", "on-demand"),
        },
    ),
    TwoCycleCase(
        "when the next flavor is full, but can preempt on first",
        cluster_queues=cohort_queues(),
        admitted_before=[
            held("placeholder-alpha", "150", "eng-cohort-alpha", "on-demand").priority(-1),
            held("placeholder-theta-spot", "100", "eng-cohort-theta", "spot"),
        ],
        workloads=[wl("new").queue("main-theta").request(cpu="20")],
        delete=("default/placeholder-alpha",),
        preempted=("default/placeholder-alpha",),
        first={},
        first_messages={
            "default/new": _flavors_msg(
                "main", _unused("cpu", "on-demand", 20), _unused("cpu", "spot", 20), preempting=1
            )
        },
        second={
            "default/placeholder-theta-spot": on("eng-cohort-theta", "spot"),
            "default/new": on("eng-cohort-theta", "on-demand"),
        },
    ),
    TwoCycleCase(
        "TryNextFlavor, but second flavor is full and can preempt on first",
        cluster_queues=[
            cq("eng-cohort-alpha")
            .cohort("cohort")
            .preemption(within=LP, reclaim=ANY)
            .fungibility(when_can_borrow="TryNextFlavor", when_can_preempt="TryNextFlavor")
            .resource_group(fq("on-demand", cpu=quota("0", "60")), fq("spot", cpu=quota("30", "30"))),
            cq("eng-cohort-beta")
            .cohort("cohort")
            .preemption(within=LP, reclaim=ANY)
            .fungibility(when_can_borrow="TryNextFlavor", when_can_preempt="TryNextFlavor")
            .resource_group(fq("on-demand", cpu=quota("30", "30")), fq("spot", cpu=quota("30", "30"))),
            cq("eng-cohort-shared").cohort("cohort").flavor("on-demand", cpu="30"),
        ],
        admitted_before=[
            held("alpha1", "22", "eng-cohort-alpha", "on-demand", at=NOW - SECOND),
            held("alpha2", "22", "eng-cohort-alpha", "on-demand"),
            held("alpha3", "22", "eng-cohort-alpha", "spot"),
            held("beta1", "22", "eng-cohort-beta", "spot"),
        ],
        workloads=[wl("new").queue("main-beta").request(cpu="22")],
        delete=("default/alpha2",),
        preempted=("default/alpha2",),
        first={},
        first_messages={
            "default/new": _flavors_msg(
                "main", _unused("cpu", "on-demand", 6), _unused("cpu", "spot", 6), preempting=1
            )
        },
        second={
            "default/alpha1": on("eng-cohort-alpha", "on-demand"),
            "default/alpha3": on("eng-cohort-alpha", "spot"),
            "default/beta1": on("eng-cohort-beta", "spot"),
            "default/new": on("eng-cohort-beta", "on-demand"),
        },
    ),
]


def _two_cycle_params() -> list[object]:
    return [
        pytest.param(case, engine, id=f"{case.id}-{engine}", marks=engine_marks(engine))
        for case in TWO_CYCLE_CASES
        for engine in ENGINES
    ]


@pytest.mark.parametrize(("case", "engine"), _two_cycle_params())
def test_kueue_last_scheduling_context(case: TwoCycleCase, engine: str) -> None:
    state = build_state(
        ("on-demand", "spot"),
        case.cluster_queues,
        [*case.admitted_before, *case.workloads],
        local_queues=LAST_CONTEXT_LQS,
        default_namespace=None,
    )
    cluster = Cluster(state, engine=engine, release_evictions=False)
    before = {k for k, w in state.workloads.items() if w.admission is not None}

    result = cluster.run_cycle()
    first = {d.key: d for d in cluster.decisions()}
    preempted = set(result.preempted)
    got_first = {
        k: v
        for k, v in schedule_outcome(first, case.first).items()
        if v.startswith("admitted") and k not in before
    }
    want_first = {k: expected_admission_text(a) for k, a in case.first.items()}
    for key, message in case.first_messages.items():
        want_first[key] = f"pending: {message}"
        if first[key].state == "pending":
            got_first[key] = f"pending: {first[key].message}"
        else:
            got_first[key] = first[key].state
    if got_first != want_first:
        fail_with_diff(
            f"{case.test} {case.name!r}: admitted in the first cycle", want_first, got_first, first
        )

    for key in case.delete:
        cluster.remove_workload(key)
    preempted |= set(cluster.run_cycle().preempted)
    second = {d.key: d for d in cluster.decisions() if d.key not in case.delete}
    got = {k: v for k, v in schedule_outcome(second, case.second).items() if v.startswith("admitted")}
    got.update({k: "preempted" for k in preempted})
    want = {k: expected_admission_text(a) for k, a in case.second.items()}
    want.update({k: "preempted" for k in case.preempted})
    if got != want:
        fail_with_diff(f"{case.test} {case.name!r}: holding quota after the second cycle", want, got, second)
