"""Kueue's dominant-resource-share tables, ported: the share of every ClusterQueue and cohort.

Facts from kueue ``pkg/cache/scheduler/fair_sharing_test.go``
(``TestDominantResourceShare`` and ``TestIsBorrowingOn``, v1beta2 layout) and
``pkg/scheduler/fair_sharing_iterator_test.go`` (``TestLogDrsValuesWhenVerboseJSON``:
the shares the iterator logs) and ``pkg/cache/scheduler/resource_node_test.go``
(``TestCohortLendable``; its EffectiveQuotas tests need DynamicQuotaOrchestration,
a newer feature than ff69552e, and are not ported),
restated with our builders. Kueue's tests compute the share directly on its
cache (``dominantResourceShare(node, wlReq)`` and ``roundedWeightedShare()``:
the weighted share rounded up, ``math.MaxInt64`` when a zero-weight node
borrows); so do these, on the reference engine's quota tree
(kueue_fast/engine/reference/quota.py, fair_sharing.py), because no public API shows
a share: the native engine keeps its shares inside the cycle, and its
decisions that depend on them are compared with Kueue's in
``test_kueue_fair_preemption_table.py`` and the fair-sharing cases of
``test_kueue_schedule_table.py``. These cases therefore run on the reference
engine only.

Usage is what Kueue's test admits to ClusterQueue "cq" (one workload per
flavor-resource); ``request`` is the ``wlReq`` Kueue adds on top (the
incoming workload's request). Quantities are in Kueue's units: cpu in
millicores, everything else in units.

Not ported from fair_sharing_iterator_test.go: ``TestFairSharingIteratorPush``
(an entry pushed back into a running iteration, ranked against the usage of
the moment: mid-cycle re-entry, newer than ff69552e, where a ClusterQueue
offers one head per cycle) and
``TestFairSharingIteratorReturnsAllEntriesOfClusterQueue`` (several entries of
one ClusterQueue in a cycle: the second scheduling pass of
TopologyAwareScheduling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest
from builders import ClusterQueueBuilder, CohortBuilder, build_state, cohort, cq, fq, quota, slug

from kueue_fast.engine.inputs import Topology, compile_topology
from kueue_fast.engine.reference.fair_sharing import dominant_resource_share, lendable
from kueue_fast.engine.reference.quota import QuotaTree

GPU = "example.com/gpu"
FLAVORS = ("default", "on-demand", "spot")
MAX_INT64 = 2**63 - 1

Share = tuple[int, str, bool]  # (rounded weighted share, dominant resource, borrowing)
ZERO: Share = (0, "", False)


@dataclass
class DRSCase:
    name: str  # the Kueue case name, verbatim
    cluster_queue: ClusterQueueBuilder  # "cq", where the usage is admitted
    usage: dict[tuple[str, str], int]  # (flavor, resource) -> amount
    want: dict[str, Share]  # node name -> share
    lending: ClusterQueueBuilder | None = None  # "lending-cq"
    cohorts: list[CohortBuilder] = field(default_factory=list)
    request: dict[tuple[str, str], int] = field(default_factory=dict)
    lending_usage: dict[tuple[str, str], int] = field(default_factory=dict)  # admitted to lending-cq
    test: str = "TestDominantResourceShare"

    @property
    def id(self) -> str:
        return f"kueue_{self.test}_{slug(self.name)}"


def cq_in(cohort_name: str, weight: float, **resources: object) -> ClusterQueueBuilder:
    return cq("cq").cohort(cohort_name).weight(weight).flavor("default", **resources)  # type: ignore[arg-type]


def lender(weight: float, **resources: object) -> ClusterQueueBuilder:
    return cq("lending-cq").cohort("test-cohort").weight(weight).flavor("default", **resources)  # type: ignore[arg-type]


def flat(cq_share: Share) -> dict[str, Share]:
    """cq's share; lending-cq and the root test-cohort have none."""
    return {"cq": cq_share, "lending-cq": ZERO, "test-cohort": ZERO}


CPU2_GPU5 = {"cpu": "2", GPU: "5"}
CPU8_GPU5 = {"cpu": "8", GPU: "5"}

CASES: list[DRSCase] = [
    DRSCase(
        "no cohort",
        cluster_queue=cq("cq").flavor("default", cpu="2000", **{GPU: "5"}),
        usage={("default", "cpu"): 1_000, ("default", GPU): 2},
        want={"cq": ZERO},
    ),
    DRSCase(
        "usage below nominal",
        cluster_queue=cq_in("test-cohort", 1, **CPU2_GPU5),
        lending=lender(1, **CPU8_GPU5),
        usage={("default", "cpu"): 1_000, ("default", GPU): 2},
        want=flat(ZERO),
    ),
    DRSCase(
        # (7-5)*1000/10
        "usage above nominal",
        cluster_queue=cq_in("test-cohort", 1, **CPU2_GPU5),
        lending=lender(1, **CPU8_GPU5),
        usage={("default", "cpu"): 3_000, ("default", GPU): 7},
        want=flat((200, GPU, True)),
    ),
    DRSCase(
        # 1*1000/1500, rounded up
        "usage slightly above nominal in a cohort with large quotas",
        cluster_queue=cq_in("test-cohort", 1, **{GPU: "500"}),
        lending=lender(300, **{GPU: "1000"}),
        usage={("default", GPU): 501},
        want=flat((1, GPU, True)),
    ),
    DRSCase(
        # 300*1000/1500/300, rounded up
        "usage way above nominal in a cohort with large quotas and weights",
        cluster_queue=cq_in("test-cohort", 300, **{GPU: "500"}),
        lending=lender(300, **{GPU: "1000"}),
        usage={("default", GPU): 800},
        want=flat((1, GPU, True)),
    ),
    DRSCase(
        # (3-2)*1000/10
        "one resource above nominal",
        cluster_queue=cq_in("test-cohort", 1, **CPU2_GPU5),
        lending=lender(1, **CPU8_GPU5),
        usage={("default", "cpu"): 3_000, ("default", GPU): 3},
        want=flat((100, "cpu", True)),
    ),
    DRSCase(
        # (1+4-2)*1000/10
        "usage with workload above nominal",
        cluster_queue=cq_in("test-cohort", 1, **CPU2_GPU5),
        lending=lender(1, **CPU8_GPU5),
        usage={("default", "cpu"): 1_000, ("default", GPU): 2},
        request={("default", "cpu"): 4_000, ("default", GPU): 4},
        want=flat((300, "cpu", True)),
    ),
    DRSCase(
        # gpu: nobody lends any (lendingLimit 0), so it has no ratio; cpu (1+4-2)*1000/10
        "A resource with zero lendable",
        cluster_queue=cq_in("test-cohort", 1, cpu="2", **{GPU: quota("2", lend="0")}),
        lending=lender(1, cpu="8", **{GPU: quota("64", lend="0")}),
        usage={("default", "cpu"): 1_000, ("default", GPU): 1},
        request={("default", "cpu"): 4_000, ("default", GPU): 4},
        want=flat((300, "cpu", True)),
    ),
    DRSCase(
        "a zero-weight ClusterQueue borrowing only what nobody lends",
        cluster_queue=cq_in("test-cohort", 0, **{GPU: quota("2", lend="0")}),
        lending=lender(1, **{GPU: quota("64", lend="0")}),
        usage={("default", GPU): 3},
        want=flat((MAX_INT64, "", True)),
    ),
    DRSCase(
        # ((15+10-20)+0)*1000/200: spot is under its nominal quota
        "multiple flavors",
        cluster_queue=cq("cq")
        .cohort("test-cohort")
        .weight(1)
        .resource_group(fq("on-demand", cpu="20"), fq("spot", cpu="80")),
        lending=lender(1, cpu="100"),
        usage={("on-demand", "cpu"): 15_000, ("spot", "cpu"): 5_000},
        request={("on-demand", "cpu"): 10_000},
        want=flat((25, "cpu", True)),
    ),
    DRSCase(
        # ((7-5)*1000/10)/2
        "above nominal with integer weight",
        cluster_queue=cq_in("test-cohort", 2, **{GPU: "5"}),
        lending=lender(1, **{GPU: "5"}),
        usage={("default", GPU): 7},
        want=flat((100, GPU, True)),
    ),
    DRSCase(
        # ((7-5)*1000/10)/(1/2)
        "above nominal with decimal weight",
        cluster_queue=cq_in("test-cohort", 0.5, **{GPU: "5"}),
        lending=lender(1, **{GPU: "5"}),
        usage={("default", GPU): 7},
        want=flat((400, GPU, True)),
    ),
    DRSCase(
        "above nominal with zero weight",
        cluster_queue=cq_in("test-cohort", 0, **{GPU: "5"}),
        lending=lender(1, **{GPU: "10"}),
        usage={("default", GPU): 7},
        want=flat((MAX_INT64, GPU, True)),
    ),
    DRSCase(
        # cq: 5/50*1000; child-cohort (weight 2): 5/50*1000/2
        "cohort has resource share",
        cluster_queue=cq_in("child-cohort", 1, **{GPU: "5"}),
        cohorts=[
            cohort("child-cohort").weight(2).parent("root"),
            cohort("root").flavor("default", **{GPU: "45"}),
        ],
        usage={("default", GPU): 10},
        want={"cq": (100, GPU, True), "child-cohort": (50, GPU, True), "root": ZERO},
    ),
    DRSCase(
        # cq: 10/50*1000; child-cohort (weight 2): 10/50*1000/2
        "resource share defined for resources only available at the root cohort",
        cluster_queue=cq_in("child-cohort", 1, **{GPU: "0"}),
        cohorts=[
            cohort("child-cohort").weight(2).parent("root"),
            cohort("root").flavor("default", **{GPU: "50"}),
        ],
        usage={("default", GPU): 10},
        want={"cq": (200, GPU, True), "child-cohort": (100, GPU, True), "root": ZERO},
    ),
    DRSCase(
        # What cq could get is capped by child-cohort's borrowing limit (10);
        # child-cohort itself sees the root's 50.
        "resource share affected by borrowing limit",
        cluster_queue=cq("cq").cohort("child-cohort").flavor("default", **{GPU: "0"}),
        cohorts=[
            cohort("child-cohort").parent("root").flavor("default", **{GPU: quota("0", "10")}),
            cohort("root").flavor("default", **{GPU: "50"}),
        ],
        usage={("default", GPU): 10},
        want={"cq": (1000, GPU, True), "child-cohort": (200, GPU, True), "root": ZERO},
    ),
    DRSCase(
        # 1E cpu does not fit int64 millicores: Kueue saturates it to MaxInt64
        # (Unlimited); 1000*1000/MaxInt64 is tiny and positive, rounded up to 1.
        "borrowing against unlimited lendable capacity (exabyte-scale quota)",
        cluster_queue=cq_in("test-cohort", 1, cpu="0"),
        lending=lender(1, cpu="1E"),
        usage={("default", "cpu"): 1_000},
        want=flat((1, "cpu", True)),
    ),
    DRSCase(
        # pkg/scheduler/fair_sharing_iterator_test.go (a version of the file
        # with this one test): the shares the iterator logs. cq (weight 0)
        # borrows: +Inf; lending-cq uses 10 of its 8: 2*1000/10.
        "the shares the fair-sharing iterator logs",
        test="TestLogDrsValuesWhenVerboseJSON",
        cluster_queue=cq_in("test-cohort", 0, cpu="2"),
        lending=lender(1, cpu="8"),
        usage={("default", "cpu"): 5_000_000},
        lending_usage={("default", "cpu"): 10_000},
        want={"cq": (MAX_INT64, "cpu", True), "lending-cq": (200, "cpu", True), "test-cohort": ZERO},
    ),
]


def _tree(case_cqs: list[ClusterQueueBuilder], cohorts: list[CohortBuilder]) -> tuple[Topology, QuotaTree]:
    topo = compile_topology(build_state(FLAVORS, case_cqs, [], cohorts=cohorts))
    return topo, QuotaTree(topo)


def _fr(topo: Topology, flavor_name: str, resource: str) -> int:
    return topo.fr_id(topo.flavor_names.index(flavor_name), topo.resource_names.index(resource))


def _rounded(share: float, zero_weight_borrows: bool) -> int:
    """Kueue roundedWeightedShare."""
    return MAX_INT64 if zero_weight_borrows else int(math.ceil(share))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kueue_dominant_resource_share(case: DRSCase) -> None:
    queues = [case.cluster_queue] + ([case.lending] if case.lending else [])
    topo, tree = _tree(queues, case.cohorts)
    node_of = {n: i for i, n in enumerate(topo.node_names)}
    for (f, r), v in case.usage.items():
        tree.add_usage(node_of["cq"], _fr(topo, f, r), v)
    for (f, r), v in case.request.items():
        tree.add_usage(node_of["cq"], _fr(topo, f, r), v)
    for (f, r), v in case.lending_usage.items():
        tree.add_usage(node_of["lending-cq"], _fr(topo, f, r), v)
    resource_of_fr = [r for _, r in topo.fr_pairs]
    got: dict[str, Share] = {}
    for name, node in node_of.items():
        drs = dominant_resource_share(tree, node, topo.fair_weight[node], resource_of_fr, topo.resource_names)
        got[name] = (
            _rounded(drs.weighted_share(), drs.zero_weight_borrows()),
            drs.dominant_resource,
            drs.borrowing,
        )
    assert got == case.want


# --- TestIsBorrowingOn -------------------------------------------------------------------------
#
# cq (cpu 2, gpu 5) and lending-cq (cpu 8, gpu 5) in one cohort: is cq borrowing
# at all, and on one of the flavor-resources of a request?


@dataclass
class BorrowingOnCase:
    name: str
    usage: dict[str, int]  # resource of flavor default -> amount in cq
    requested: dict[str, int]  # resource of flavor default -> amount
    want_on_requested: bool
    want_borrowing: bool


BORROWING_ON = [
    BorrowingOnCase("borrows on requested flavor", {"cpu": 3_000}, {"cpu": 1_000}, True, True),
    BorrowingOnCase(
        "borrows on unrequested flavor only", {"cpu": 1_000, GPU: 7}, {"cpu": 1_000}, False, True
    ),
    BorrowingOnCase("borrows on both, requests one", {"cpu": 3_000, GPU: 7}, {GPU: 1}, True, True),
    BorrowingOnCase("no borrowing", {"cpu": 1_000, GPU: 2}, {"cpu": 1_000}, False, False),
    BorrowingOnCase("nil requestedFRs", {"cpu": 3_000}, {}, False, True),
]


@pytest.mark.parametrize(
    "case", BORROWING_ON, ids=[f"kueue_TestIsBorrowingOn_{slug(c.name)}" for c in BORROWING_ON]
)
def test_kueue_is_borrowing_on(case: BorrowingOnCase) -> None:
    topo, tree = _tree(
        [
            cq("cq").cohort("cohort").weight(1).flavor("default", **CPU2_GPU5),
            cq("lending-cq").cohort("cohort").flavor("default", **CPU8_GPU5),
        ],
        [],
    )
    node = topo.node_names.index("cq")
    for r, v in case.usage.items():
        tree.add_usage(node, _fr(topo, "default", r), v)
    drs = dominant_resource_share(
        tree, node, topo.fair_weight[node], [r for _, r in topo.fr_pairs], topo.resource_names
    )
    requested = {_fr(topo, "default", r): v for r, v in case.requested.items()}
    assert (drs.is_borrowing_on(requested), drs.borrowing) == (case.want_on_requested, case.want_borrowing)


# --- TestCohortLendable (pkg/cache/scheduler/resource_node_test.go) ----------------------------


def test_kueue_cohort_lendable() -> None:
    """cq1 lends all of its 8 cpu and 3 gpu, cq2 all of its 2 cpu: the cohort
    can lend 10 cpu and 3 gpu (what the DRS of its children divides by)."""
    topo, tree = _tree(
        [
            cq("cq1")
            .cohort("test-cohort")
            .flavor("default", cpu=quota("8", lend="8"), **{GPU: quota("3", lend="3")}),
            cq("cq2").cohort("test-cohort").flavor("default", cpu=quota("2", lend="2")),
        ],
        [],
    )
    node = topo.node_names.index("test-cohort")
    got = lendable(tree, node, [r for _, r in topo.fr_pairs])
    assert {topo.resource_names[r]: v for r, v in got.items()} == {"cpu": 10_000, GPU: 3}
