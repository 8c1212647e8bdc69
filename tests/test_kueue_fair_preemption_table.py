"""Kueue's fair-sharing preemption table, ported: whom does an incoming workload preempt
when the cohort shares by Dominant Resource Share?

Facts from kueue ``pkg/scheduler/preemption/preemption_fair_test.go``
``TestFairPreemptions`` (the v1beta2 version; older versions kept the table in
``preemption_test.go`` and, before FairSharingPreemptWithinNominal, expected
reason InCohortFairSharing where a preemptor within its nominal quota now
reclaims with InCohortReclamation), restated with our builders and run as one
scheduling cycle through the public API with fair sharing enabled in the
Configuration (Kueue's default strategies ``[LessThanOrEqualToFinalShare,
LessThanInitialShare]`` unless a case names its own). Kueue's test sets every
admitted workload's UID to its name so that equal candidates sort by name; our
tie-break (namespace, then name) agrees. The two cases of
``TestFairPreemptionSkipsUnsatisfiableTournament`` (same file, newer than the
table above) are ported for their decision only: nothing is preempted.

Conventions as in ``test_kueue_preemption_table.py``: namespace "default",
one LocalQueue per ClusterQueue named after it, admission at ``NOW``; a
ClusterQueue without resource groups in Kueue's test stays without them here
(its workloads' usage comes from their admission).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from builders import (
    ENGINES,
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    ClusterQueueBuilder,
    CohortBuilder,
    WorkloadBuilder,
    build_state,
    cohort,
    cq,
    engine_marks,
    expected_victims,
    fail_with_diff,
    fq,
    preemption_outcome,
    run_one_cycle,
    slug,
    wl,
)

LP, ANY = "LowerPriority", "Any"
S2A, S2B = "LessThanOrEqualToFinalShare", "LessThanInitialShare"
FS = IN_COHORT_FAIR_SHARING


def base_cluster_queues() -> list[ClusterQueueBuilder]:
    """TestFairPreemptions' baseCQs: a, b, c with 3 cpu each, and an empty "preemptible"."""
    qs = [
        cq(n)
        .cohort("all")
        .flavor("default", cpu="3")
        .preemption(within=LP, reclaim=ANY, borrow_within=LP, threshold=-3)
        for n in ("a", "b", "c")
    ]
    return [*qs, cq("preemptible").cohort("all").flavor("default", cpu="0")]


def weighted(
    weights: dict[str, float], names: tuple[str, ...] = ("a", "b", "c")
) -> list[ClusterQueueBuilder]:
    """Cohort "all" of 3-cpu queues (within LowerPriority, reclaim Any) with fair weights."""
    out = []
    for n in names:
        b = cq(n).cohort("all").flavor("default", cpu="3").preemption(within=LP, reclaim=ANY)
        if n in weights:
            b.weight(weights[n])
        out.append(b)
    return out


@dataclass
class FairCase:
    name: str  # the Kueue case name, verbatim
    admitted: list[WorkloadBuilder]
    incoming: WorkloadBuilder
    target: str
    want: dict[str, str]
    cluster_queues: list[ClusterQueueBuilder] | None = None  # None: base_cluster_queues()
    cohorts: list[CohortBuilder] = field(default_factory=list)
    strategies: tuple[str, ...] | None = None  # None: Kueue's defaults
    flavors: tuple[str, ...] = ("default",)
    feature_gates: dict[str, bool] = field(default_factory=dict)
    incoming_state: str = "pending"
    differs: str | None = None
    test: str = "TestFairPreemptions"

    @property
    def id(self) -> str:
        return f"kueue_{self.test}_{slug(self.name)}"


def units(cluster_queue: str, *names: str, prio: int = 0) -> list[WorkloadBuilder]:
    """Kueue's unitWl clones: one cpu each, admitted in ``cluster_queue``."""
    return [wl(n).priority(prio).request(cpu="1").reserve(cluster_queue, "default") for n in names]


def adm(name: str, cluster_queue: str, cpu: str, prio: int = 0) -> WorkloadBuilder:
    return wl(name).priority(prio).request(cpu=cpu).reserve(cluster_queue, "default")


def new(name: str, cpu: str = "1", prio: int = 0) -> WorkloadBuilder:
    return wl(name).priority(prio).request(cpu=cpu)


A3_B5_C1 = units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3", "b4", "b5") + units("c", "c1")
A3_B6 = units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3", "b4", "b5", "b6")

CASES: list[FairCase] = [
    FairCase(
        "reclaim nominal from user using the most",
        admitted=A3_B5_C1,
        incoming=new("c_incoming"),
        target="c",
        # c stays within its nominal quota: FairSharingPreemptWithinNominal takes
        # b1 without comparing shares, as a reclamation.
        want={"b1": IN_COHORT_RECLAMATION},
    ),
    FairCase(
        "can reclaim from queue using less, if taking the latest workload from user using the most isn't enough",  # noqa: E501
        admitted=[adm("a1", "a", "3"), adm("a2", "a", "1"), adm("b1", "b", "2"), adm("b2", "b", "3")],
        # Kueue's incoming workload also carries a (meaningless) quota reservation in "a";
        # here it is simply pending in "c".
        incoming=new("c_incoming", "3"),
        target="c",
        want={"a1": IN_COHORT_RECLAMATION},  # b1 is tried first, but it is not enough
    ),
    FairCase(
        "reclaim borrowable quota from user using the most",
        admitted=A3_B5_C1,
        incoming=new("a_incoming"),
        target="a",
        want={"b1": FS},
    ),
    FairCase(
        "preempt one from each CQ borrowing",
        admitted=[
            adm("a1", "a", "0.5"),
            adm("a2", "a", "0.5"),
            adm("a3", "a", "3"),
            adm("b1", "b", "0.5"),
            adm("b2", "b", "0.5"),
            adm("b3", "b", "3"),
        ],
        incoming=new("c_incoming", "2"),
        target="c",
        want={"a1": IN_COHORT_RECLAMATION, "b1": IN_COHORT_RECLAMATION},
    ),
    FairCase(
        "can't preempt when everyone under nominal",
        admitted=units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3") + units("c", "c1", "c2", "c3"),
        incoming=new("c_incoming"),
        target="c",
        want={},
    ),
    FairCase(
        "can't preempt when it would switch the imbalance",
        admitted=units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3", "b4", "b5"),
        incoming=new("a_incoming", "2"),
        target="a",
        want={},
    ),
    FairCase(
        "can preempt lower priority workloads from same CQ",
        admitted=units("a", "a1_low", "a2_low", prio=-1)
        + units("a", "a3", "a4")
        + units("b", "b1", "b2", "b3", "b4", "b5"),
        incoming=new("a_incoming", "2"),
        target="a",
        want={"a1_low": IN_CLUSTER_QUEUE, "a2_low": IN_CLUSTER_QUEUE},
    ),
    FairCase(
        "can preempt a combination of same CQ and highest user",
        admitted=units("a", "a_low", prio=-1)
        + units("a", "a2", "a3")
        + units("b", "b1", "b2", "b3", "b4", "b5", "b6"),
        incoming=new("a_incoming", "2"),
        target="a",
        want={"a_low": IN_CLUSTER_QUEUE, "b1": FS},
    ),
    FairCase(
        "preempt huge workload if there is no other option, as long as the target CQ gets a lower share",
        admitted=[adm("b1", "b", "9")],
        incoming=new("a_incoming", "2"),
        target="a",
        want={"b1": IN_COHORT_RECLAMATION},
    ),
    FairCase(
        "can't preempt huge workload if the incoming is also huge",
        admitted=[adm("a1", "a", "2"), adm("b1", "b", "7")],
        incoming=new("a_incoming", "5"),
        target="a",
        want={},
    ),
    FairCase(
        "can't preempt 2 smaller workloads if the incoming is huge",
        admitted=[adm("b1", "b", "2"), adm("b2", "b", "2"), adm("b3", "b", "3")],
        incoming=new("a_incoming", "6"),
        target="a",
        want={},
    ),
    FairCase(
        "preempt from target and others even if over nominal",
        admitted=[
            adm("a1_low", "a", "2", prio=-1),
            adm("a2_low", "a", "1", prio=-1),
            adm("b1", "b", "3"),
            adm("b2", "b", "3"),
        ],
        incoming=new("a_incoming", "4"),
        target="a",
        want={"a1_low": IN_CLUSTER_QUEUE, "b1": FS},
    ),
    FairCase(
        "prefer to preempt workloads that don't make the target CQ have the biggest share",
        admitted=[adm("b1", "b", "2"), adm("b2", "b", "1"), adm("b3", "b", "2"), adm("c1", "c", "1")],
        incoming=new("a_incoming", "3.5"),
        target="a",
        # b1 would also do under rule S2-b, but S2-a finds b2 first.
        want={"b2": FS},
    ),
    FairCase(
        "preempt from different cluster queues if the end result has a smaller max share",
        admitted=[adm("b1", "b", "2"), adm("b2", "b", "2.5"), adm("c1", "c", "2"), adm("c2", "c", "2.5")],
        incoming=new("a_incoming", "3.5"),
        target="a",
        want={"b1": FS, "c1": FS},
    ),
    FairCase(
        "scenario above does not flap",
        admitted=[adm("a1", "a", "3.5"), adm("b2", "b", "2.5"), adm("c2", "c", "2.5")],
        incoming=new("b_incoming", "2"),
        target="b",
        want={},
    ),
    FairCase(
        "cannot preempt if it would make the candidate CQ go under nominal after preempting one element",
        admitted=[adm("b1", "b", "3"), adm("b2", "b", "3"), adm("c1", "c", "3")],
        incoming=new("a_incoming", "4"),
        target="a",
        want={},
    ),
    FairCase(
        # borrowWithinCohort does not change fair-sharing preemption: workloads
        # under its priority threshold are not preempted unless the shares say so.
        "workloads under priority threshold not capriciously preempted",
        admitted=units("a", "a1", "a2", "a3")
        + units("b", "b1", "b2", "b3")
        + units("preemptible", "preemptible1", "preemptible2", "preemptible3", prio=-3),
        incoming=new("a_incoming", "2"),
        target="a",
        want={},
    ),
    FairCase(
        "preempt lower priority first, even if big",
        strategies=(S2B,),
        admitted=[adm("a1", "a", "3"), adm("b_low", "b", "5", prio=0), adm("b_high", "b", "1", prio=1)],
        incoming=new("a_incoming", "1"),
        target="a",
        want={"b_low": FS},
    ),
    FairCase(
        "preempt workload that doesn't transfer the imbalance, even if high priority",
        strategies=(S2A,),
        admitted=[adm("a1", "a", "3"), adm("b_low", "b", "5", prio=0), adm("b_high", "b", "1", prio=1)],
        incoming=new("a_incoming", "1"),
        target="a",
        want={"b_high": FS},
    ),
    FairCase(
        "CQ with higher weight can preempt more",
        cluster_queues=weighted({"a": 2.0}),
        admitted=A3_B6,
        incoming=new("a_incoming", "2"),
        target="a",
        want={"b1": FS, "b2": FS},
    ),
    FairCase(
        "can preempt anything borrowing from CQ with 0 weight",
        cluster_queues=weighted({"b": 0.0}),
        admitted=A3_B6,
        incoming=new("a_incoming", "3"),
        target="a",
        want={"b1": FS, "b2": FS, "b3": FS},
    ),
    FairCase(
        "can't preempt nominal from CQ with 0 weight",
        cluster_queues=weighted({"b": 0.0}, ("a", "b")),
        admitted=units("a", "a1", "a2", "a3") + units("b", "b1", "b2", "b3"),
        incoming=new("a_incoming"),
        target="a",
        want={},
    ),
    FairCase(
        "can't preempt nominal from Cohort with 0 weight",
        cluster_queues=[
            cq("left-cq").cohort("root").flavor("default", cpu="0").preemption(reclaim=ANY),
            cq("right-cq")
            .cohort("right-cohort")
            .flavor("default", cpu="0")
            .preemption(reclaim=ANY)
            .weight(0.0),
        ],
        cohorts=[cohort("right-cohort").weight(0.0).flavor("default", cpu="1").parent("root")],
        admitted=units("right-cq", "right-1"),
        incoming=new("left-1"),
        target="left-cq",
        want={},
    ),
    FairCase(
        "can preempt within cluster queue when no cohort",
        cluster_queues=[cq("a").flavor("default", cpu="1").preemption(within=LP)],
        admitted=units("a", "a1"),
        incoming=new("a_incoming", prio=1000),
        target="a",
        want={"a1": IN_CLUSTER_QUEUE},
    ),
    FairCase(
        # Each cohort provides 5 cpu, each ClusterQueue 1 (Usage, Quota, SubtreeQuota):
        #                ROOT(20,5,20)
        #             /       |        \
        #       LEFT(5,5,7)  c(5,1,1)   RIGHT(10,5,7)
        #       /       \               /      \
        #     a(0,1,1)  b(5,1,1)     d(5,1,1)  e(5,1,1)
        # a (and LEFT) weigh 2, so a can preempt in every other queue; e weighs
        # 0.99 so that e is slightly preferred over d.
        "hierarchical preemption",
        cluster_queues=[
            cq("a").cohort("LEFT").weight(2.0).flavor("default", cpu="1").preemption(reclaim=ANY),
            cq("b").cohort("LEFT").flavor("default", cpu="1"),
            cq("c").cohort("ROOT").flavor("default", cpu="1"),
            cq("d").cohort("RIGHT").flavor("default", cpu="1"),
            cq("e").cohort("RIGHT").weight(0.99).flavor("default", cpu="1"),
        ],
        cohorts=[
            cohort("ROOT").flavor("default", cpu="5"),
            cohort("LEFT").weight(2.0).parent("ROOT").flavor("default", cpu="5"),
            cohort("RIGHT").parent("ROOT").flavor("default", cpu="5"),
        ],
        admitted=[w for q in "bcde" for i in range(1, 6) for w in units(q, f"{q}{i}", prio=i)],
        incoming=new("unit", "5"),
        target="a",
        want={"b1": FS, "b2": FS, "c1": FS, "c2": FS, "e1": FS},
    ),
    FairCase(
        # b borrows, but its cohort RIGHT does not: b is protected, and a (size
        # 5 incoming, high weight) must preempt its own workloads.
        #             ROOT
        #           /      \
        #       a(3,5,5)   RIGHT(1,1,1)
        #                        \
        #                         b(1,0,0)
        "borrowing cq in non-borrowing cohort is protected",
        cluster_queues=[
            cq("a").cohort("ROOT").weight(10.0).flavor("default", cpu="5").preemption(within=LP, reclaim=ANY),
            cq("b").cohort("RIGHT").weight(0.1),
        ],
        cohorts=[cohort("ROOT"), cohort("RIGHT").parent("ROOT").weight(0.1).flavor("default", cpu="1")],
        admitted=units("a", "a1", "a2", "a3", prio=-1) + units("b", "b1", prio=-1),
        incoming=new("unit", "5"),
        target="a",
        want={"a1": IN_CLUSTER_QUEUE, "a2": IN_CLUSTER_QUEUE, "a3": IN_CLUSTER_QUEUE},
    ),
    FairCase(
        # Preempting b1 would bring RIGHT to a share of 0, and b1 outranks a's
        # workload: a must preempt its own workloads.
        #             ROOT
        #           /      \
        #       a(3,5,5)   RIGHT(4,3,3)
        #                        \
        #                         b(4,0,0)
        "forced to preempt within clusterqueue because borrowing workload too important",
        cluster_queues=[
            cq("a").cohort("ROOT").weight(10.0).flavor("default", cpu="5").preemption(within=LP, reclaim=LP),
            cq("b").cohort("RIGHT").weight(0.1),
        ],
        cohorts=[cohort("ROOT"), cohort("RIGHT").parent("ROOT").weight(0.1).flavor("default", cpu="3")],
        admitted=units("a", "a1", "a2", "a3", prio=-1) + [adm("b1", "b", "4", prio=100)],
        incoming=new("unit", "4"),
        target="a",
        want={"a1": IN_CLUSTER_QUEUE, "a2": IN_CLUSTER_QUEUE, "a3": IN_CLUSTER_QUEUE},
    ),
    FairCase(
        # ROOT -> A -> AA -> AAA -> a ; ROOT -> B -> BB -> BBB -> b ;
        # ROOT -> C -> CC -> CCC -> CCCC (1 cpu). a wants, b uses, CCCC provides;
        # A weighs more than B (1.01 vs 0.99), so the preemption is possible.
        "deep preemption",
        cluster_queues=[
            cq("a").cohort("AAA").flavor("default", cpu="0").preemption(reclaim=ANY),
            cq("b").cohort("BBB").flavor("default", cpu="0"),
        ],
        cohorts=[
            cohort("ROOT"),
            cohort("A").parent("ROOT").weight(1.01),
            cohort("AA").parent("A"),
            cohort("AAA").parent("AA"),
            cohort("B").parent("ROOT").weight(0.99),
            cohort("BB").parent("B"),
            cohort("BBB").parent("BB"),
            cohort("C").parent("ROOT"),
            cohort("CC").parent("C"),
            cohort("CCC").parent("CC"),
            cohort("CCCC").parent("CCC").flavor("default", cpu="1"),
        ],
        admitted=units("b", "b1"),
        incoming=new("a1"),
        target="a",
        want={"b1": FS},
    ),
    FairCase(
        "cq with zero weight can reclaim nominal quota",
        cluster_queues=[
            cq("a").cohort("ROOT").weight(0.0).flavor("default", cpu="1").preemption(reclaim=ANY),
            cq("b").cohort("ROOT").flavor("default", cpu="0").weight(1.0),
        ],
        admitted=units("b", "b1"),
        incoming=new("a1"),
        target="a",
        want={"b1": IN_COHORT_RECLAMATION},
    ),
    FairCase(
        "cohort with zero weight can reclaim nominal quota",
        cluster_queues=[
            cq("a").cohort("A").weight(0.0).flavor("default", cpu="0").preemption(reclaim=ANY),
            cq("b").cohort("ROOT").flavor("default", cpu="0").weight(1.0),
        ],
        cohorts=[cohort("A").parent("ROOT").weight(0.0).flavor("default", cpu="1")],
        admitted=units("b", "b1"),
        incoming=new("a1"),
        target="a",
        want={"b1": FS},
    ),
    FairCase(
        # a: 3 premium (2 used, within nominal) and 0 cheap (5 used, borrowed): a
        # high share overall. b borrows 1 premium. a's new 1-cpu workload fits
        # a's nominal premium quota, so it may reclaim despite a's larger share.
        "nominal first: workload fitting within nominal can preempt despite high aggregate DRS",
        flavors=("premium", "cheap"),
        cluster_queues=[
            cq("a")
            .cohort("all")
            .resource_group(fq("premium", cpu="3"), fq("cheap", cpu="0"))
            .preemption(reclaim=ANY)
            .fungibility(when_can_borrow="MayStopSearch", when_can_preempt="MayStopSearch"),
            cq("b").cohort("all").resource_group(fq("premium", cpu="0"), fq("cheap", cpu="6")),
        ],
        admitted=[
            *[wl(n).request(cpu="1").reserve("a", "premium") for n in ("a_prem1", "a_prem2")],
            *[wl(f"a_cheap{i}").request(cpu="1").reserve("a", "cheap") for i in range(1, 6)],
            wl("b_prem1").request(cpu="1").reserve("b", "premium"),
        ],
        incoming=new("a_incoming"),
        target="a",
        want={"b_prem1": IN_COHORT_RECLAMATION},
    ),
    FairCase(
        # a weighs 0 and borrows: its share is infinite, above any finite share of b.
        "zero weight borrowing preemptor cannot preempt from a borrowing CQ with a non-zero weight",
        cluster_queues=[
            cq("a").cohort("all").weight(0.0).flavor("default", cpu="1").preemption(reclaim=ANY),
            cq("b").cohort("all").weight(1.0).flavor("default", cpu="1"),
        ],
        admitted=units("a", "a1") + units("b", "b1", "b2"),
        incoming=new("a_incoming"),
        target="a",
        want={},
    ),
    FairCase(
        # Both infinite: the comparison falls back to the unweighted shares.
        "zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight",
        cohorts=[cohort("all").flavor("default", cpu="3")],
        cluster_queues=[
            cq("a").cohort("all").weight(0.0).flavor("default", cpu="1").preemption(reclaim=ANY),
            cq("b").cohort("all").weight(0.0).flavor("default", cpu="0"),
        ],
        admitted=units("b", "b1", "b2", "b3"),
        incoming=new("a_incoming", "2"),
        target="a",
        want={"b1": FS},
    ),
    FairCase(
        "non-zero weight borrowing preemptor preempts from a borrowing CQ",
        cohorts=[cohort("all").flavor("default", cpu="3")],
        cluster_queues=[
            cq("a").cohort("all").weight(1.0).flavor("default", cpu="1").preemption(reclaim=ANY),
            cq("b").cohort("all").weight(1.0).flavor("default", cpu="0"),
        ],
        admitted=units("b", "b1", "b2", "b3"),
        incoming=new("a_incoming", "2"),
        target="a",
        want={"b1": FS},
    ),
    FairCase(
        # ROOT -> A (weight 0, 1 cpu) -> {p (preemptor, 2 cpu), y (2 cpu)}; ROOT -> x (1 cpu).
        # Against x the almost-LCA is A, whose share is infinite while it borrows,
        # so x's candidates fail the first strategy; they stay available to the
        # second, which succeeds once y1 is gone and A no longer borrows.
        "candidates skipped by the first strategy are still available to the second strategy",
        cohorts=[cohort("A").parent("ROOT").weight(0.0).flavor("default", cpu="1")],
        cluster_queues=[
            cq("p").cohort("A").weight(1.0).flavor("default", cpu="2").preemption(reclaim=ANY),
            cq("y").cohort("A").weight(1.0).flavor("default", cpu="2"),
            cq("x").cohort("ROOT").weight(1.0).flavor("default", cpu="1"),
        ],
        admitted=[adm("p1", "p", "2"), adm("y1", "y", "2"), adm("y2", "y", "2")] + units("x", "x1", "x2"),
        incoming=new("p_incoming"),
        target="p",
        want={"y1": FS, "x1": FS},
    ),
    FairCase(
        # right-b/right-c are visited first (weights), but fail the strategy while
        # left-a's share is high; left-a's own workloads go first (no strategy
        # within the ClusterQueue), after which b1 and b2 pass.
        "can admit after preempting workloads from the preemptor's CQ with lower processing priority",
        feature_gates={"FairSharingReevaluatePreemptionCandidates": True},
        strategies=(S2A,),
        cohorts=[
            cohort("root").flavor("default", cpu="15"),
            cohort("left").parent("root").weight(20.0).flavor("default", cpu="0"),
            cohort("right").parent("root").weight(10.0).flavor("default", cpu="0"),
        ],
        cluster_queues=[
            cq(n).cohort(p).flavor("default", cpu="0").preemption(within=ANY, reclaim=ANY)
            for n, p in (("left-a", "left"), ("right-b", "right"), ("right-c", "right"))
        ],
        admitted=[adm(f"a{i}", "left-a", "1") for i in range(1, 4)]
        + [adm(f"b{i}", "right-b", "1") for i in range(1, 7)]
        + [adm("c1", "right-c", "1")],
        incoming=new("a_incoming", "10"),
        target="left-a",
        want={"a1": IN_CLUSTER_QUEUE, "a2": IN_CLUSTER_QUEUE, "a3": IN_CLUSTER_QUEUE, "b1": FS, "b2": FS},
    ),
]


def unsatisfiable_tournament(name: str, weight: float) -> FairCase:
    """TestFairPreemptionSkipsUnsatisfiableTournament (the same file): a (1 cpu,
    reclaimWithinCohort Any, fair weight ``weight``) holds a1 at its nominal
    quota; b (1 cpu, weight 1) holds b1 and b2, borrowing 1. a's incoming 1 cpu
    would borrow: with weight 0 its share is +Inf, with weight 1 it equals b's
    (1 borrowed of 2 lendable), so neither strategy lets it take b's workloads.
    Kueue's test also counts the strategy evaluations it logs (an internal
    optimisation); the decision, no victims, is what a cycle shows."""
    return FairCase(
        name,
        test="TestFairPreemptionSkipsUnsatisfiableTournament",
        cluster_queues=[
            cq("a").cohort("all").weight(weight).flavor("default", cpu="1").preemption(reclaim=ANY),
            cq("b").cohort("all").weight(1.0).flavor("default", cpu="1"),
        ],
        admitted=units("a", "a1") + units("b", "b1", "b2"),
        incoming=new("a_incoming"),
        target="a",
        want={},
    )


CASES += [
    unsatisfiable_tournament("zero weight preemptor: share is +Inf and the tournament is skipped", 0.0),
    unsatisfiable_tournament("non-zero weight preemptor: share is finite so the tournament runs", 1.0),
]


def _params() -> list[object]:
    return [
        pytest.param(case, engine, id=f"{case.id}-{engine}", marks=engine_marks(engine, case.differs))
        for case in CASES
        for engine in ENGINES
    ]


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("case", "engine"), _params())
def test_kueue_fair_preemption(case: FairCase, engine: str) -> None:
    case.incoming.queue(case.target)
    cluster_queues = case.cluster_queues if case.cluster_queues is not None else base_cluster_queues()
    state = build_state(
        case.flavors,
        cluster_queues,
        [*case.admitted, case.incoming],
        cohorts=case.cohorts,
        fair_sharing=case.strategies or True,
    )
    state.configuration.feature_gates.update(case.feature_gates)
    decisions = run_one_cycle(state, engine)

    incoming_key = case.incoming.key
    victims = {f"default/{name}": reason for name, reason in case.want.items()}
    want = expected_victims(state, state.workloads[incoming_key], victims)
    want[incoming_key] = "pending" if case.want else case.incoming_state
    got = preemption_outcome(decisions, incoming_key)
    if got != want:
        fail_with_diff(
            f"{case.test} {case.name!r}: victims (with reasons) and the incoming workload",
            want,
            got,
            decisions,
        )
