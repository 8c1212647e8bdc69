"""Kueue's flavor-assignment tables, ported: which flavors a workload gets, and what it is told when none fit.

Facts from kueue ``pkg/scheduler/flavorassigner/flavorassigner_test.go``:
``TestAssignFlavors``, ``TestReclaimBeforePriorityPreemption`` and
``TestHierarchical``, from the v1beta2 table whose assigner records
FlavorAssignmentAttempts and resolves a NoFit reason
(UnadmittedWorkloadsObservability). That table is a little newer than
ff69552e, the commit kueue_fast/api/features.py follows; one change shows in it:
the capacity probe for pod sets of zero pods (kueue PR #15444, "Fix flavor
selection for zero-count PodSets", opened after ff69552e; issue #14792
describes the behaviour before it). At ff69552e a pod set of 0 pods (or all
of whose pods are reclaimable) requests 0 of everything and takes the first
flavor whose quota holds 0, even a flavor with no quota at all; the newer
table prefers a flavor able to hold one of its pods. The four cases this
changes assert ff69552e's flavor and record the newer one in ``later``.
Restated with our builders
and checked through the public API: one ``run_cycle()`` of a Cluster holding
the ClusterQueue "test-clusterqueue" (LocalQueue default/test-clusterqueue),
the workload under test and the workloads that hold the usage Kueue's test
adds to the snapshot. For each case:

* representative mode Fit: the workload is admitted with these flavors per
  pod set and resource (and these counts);
* Preempt or NoFit: it stays pending, with reason ``WaitingForQuota`` for
  Preempt (``WaitingForPreemptedWorkloads`` when it issued preemptions, the
  scheduler then appends ``. Pending the preemption of N workload(s)``) and
  for NoFit the table's Assignment.NoFitReason (``ExceedsMaxQuota``,
  ``NoMatchingFlavor``), and Kueue's
  message: ``couldn't assign flavors to pod set P: `` and the assigner's
  status reasons, sorted (pod sets joined by ``; ``);
* workloads holding usage stay admitted unless the case names them as victims.

Kueue's assigner tests replace the preemption search by a stub oracle that
answers "Preempt" for every flavor-resource unless a case says otherwise. A
real cycle runs the real search, so:

* where a case only needs the answer's mode (one flavor, or the flavor is chosen
  either way), the usage is held by workloads nobody may preempt: the real
  answer is "no candidates", which Kueue also reports as mode Preempt with the
  same reasons;
* where the stub's "Preempt" decides the flavor (MayStopSearch stops there, or a
  later flavor would win over "no candidates"), the holders get priority -1 and
  the ClusterQueue a policy that lets the real search find them (each case says
  which); the workload then issues the preemptions, and the victims (not in
  Kueue's table, which never runs a search) show which flavor was chosen.

Not ported: the three "leader worker set" cases (pod-set groups are a
TopologyAwareScheduling feature); "zero-count PodSet retains its probe with
explicit counts" (it passes counts to Assign directly, an internal entry point;
the cycle-level facts are those of "zero-count PodSet prefers a flavor with
capacity"); the two "workload slice preemption" cases (elastic jobs / workload
slices); "multiple TAS flavors assigned to different resources in the same
PodSet leads to NoFit" (TopologyAwareScheduling); TestDeletedFlavors (it
deletes a flavor after taking the snapshot; in a cluster a ClusterQueue naming
a missing flavor is inactive and nothing reaches the assigner);
TestIsPreferred and the TopologyRequests tests (internal functions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from builders import (
    ENGINES,
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAMATION,
    ClusterQueueBuilder,
    CohortBuilder,
    WorkloadBuilder,
    admitted,
    build_state,
    cohort,
    cq,
    divergence_marks,
    engine_marks,
    expected_admission_text,
    fail_with_diff,
    flavor,
    flavors_message,
    fq,
    node_affinity,
    over_max_quota,
    quota,
    run_one_cycle,
    schedule_outcome,
    slug,
    unused_quota,
    wl,
)

from kueue_fast.api.model import Taint, Toleration

TQ = "test-clusterqueue"
SQ = "test-secondary-clusterqueue"
COHORT = "test-cohort"
GPU = "example.com/gpu"
LP, ANY, NEVER = "LowerPriority", "Any", "Never"
MAY_STOP, TRY_NEXT = "MayStopSearch", "TryNextFlavor"

SPOT_TAINT = Taint("instance", "spot", "NoSchedule")
SPOT_TOLERATION = Toleration("instance", "Equal", "spot", "NoSchedule")
UNTOLERATED = "untolerated taint {instance spot NoSchedule <nil>} in flavor tainted"

# TestAssignFlavors' resourceFlavors (the TAS ones left out).
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

WAITING_FOR_QUOTA = "WaitingForQuota"
WAITING_FOR_PREEMPTED = "WaitingForPreemptedWorkloads"
# Kueue's Assignment.NoFitReason (ResolveNoFitReason, UnadmittedWorkloadsObservability):
# the QuotaReserved=False reason of a workload no flavor can take.
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
NO_MATCHING_FLAVOR = "NoMatchingFlavor"


@dataclass
class FlavorCase:
    test: str  # the Kueue test function
    name: str  # the Kueue case name, verbatim
    cluster_queue: ClusterQueueBuilder  # test-clusterqueue
    workload: WorkloadBuilder  # the workload under test (default/wl)
    mode: str  # Kueue's representative mode: Fit, Preempt or NoFit
    # Fit: the flavor of every resource per pod set, and the admitted counts.
    flavors: dict[str, dict[str, str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    # Preempt / NoFit: the QuotaReserved=False message, and for NoFit Kueue's
    # Assignment.NoFitReason, the condition's reason (Preempt: WaitingForQuota, or
    # WaitingForPreemptedWorkloads once preemptions are issued).
    message: str | None = None
    reason: str | None = None
    holders: list[WorkloadBuilder] = field(default_factory=list)  # the usage Kueue adds
    others: list[ClusterQueueBuilder] = field(default_factory=list)  # e.g. the secondary ClusterQueue
    cohorts: list[CohortBuilder] = field(default_factory=list)
    victims: dict[str, str] = field(default_factory=dict)  # holder key -> human reason
    fair_sharing: bool = False
    feature_gates: dict[str, bool] = field(default_factory=dict)
    flavor_objects: tuple[object, ...] = ASSIGN_FLAVORS
    diverges: str | None = None
    diverges_on: tuple[str, ...] = ENGINES
    # Where Kueue's table (newer than ff69552e) expects other flavors: what it
    # expects, for the record; ``flavors`` holds what Kueue does at ff69552e.
    later: dict[str, dict[str, str]] | None = None

    @property
    def id(self) -> str:
        return f"kueue_{self.test}_{slug(self.name)}"


def af(name: str, **kw: object) -> FlavorCase:
    return FlavorCase("TestAssignFlavors", name, **kw)  # type: ignore[arg-type]


def tcq() -> ClusterQueueBuilder:
    return cq(TQ)


def rg(queue: ClusterQueueBuilder, *groups: list[object]) -> ClusterQueueBuilder:
    for group in groups:
        queue.resource_group(*group)  # type: ignore[arg-type]
    return queue


def wl_main(**requests: str) -> WorkloadBuilder:
    """The workload under test with the single pod set "main" (count 1)."""
    return wl("wl").queue(TQ).request(**requests)


def wl_sets() -> WorkloadBuilder:
    return wl("wl").queue(TQ)


def holder(name: str, cluster_queue: str, flavor_name: str, prio: int = 0, **usage: str) -> WorkloadBuilder:
    """A workload holding ``usage`` of ``flavor_name`` in ``cluster_queue``
    (Kueue's clusterQueueUsage / secondaryClusterQueueUsage)."""
    return wl(name).priority(prio).request(**usage).reserve(cluster_queue, flavor_name)


def secondary(*flavors: object) -> ClusterQueueBuilder:
    return cq(SQ).cohort(COHORT).resource_group(*flavors)  # type: ignore[arg-type]


CASES: list[FlavorCase] = [
    af(
        "single flavor, fits",
        cluster_queue=tcq().flavor("default", cpu="1", memory="2Mi"),
        workload=wl_main(cpu="1", memory="1Mi"),
        mode="Fit",
        flavors={"main": {"cpu": "default", "memory": "default"}},
    ),
    af(
        "single flavor, fits tainted flavor",
        cluster_queue=tcq().flavor("tainted", cpu="4"),
        workload=wl_sets().pod_set("main", 1, {"cpu": "1"}, tolerations=[SPOT_TOLERATION]),
        mode="Fit",
        flavors={"main": {"cpu": "tainted"}},
    ),
    af(
        "single flavor, fits tainted flavor with toleration",
        cluster_queue=tcq().flavor("taint_and_toleration", cpu="4"),
        workload=wl_main(cpu="1"),
        mode="Fit",
        flavors={"main": {"cpu": "taint_and_toleration"}},
    ),
    af(
        "single flavor, used resources, doesn't fit",
        cluster_queue=tcq().flavor("default", cpu="4"),
        holders=[holder("usage", TQ, "default", cpu="3")],
        workload=wl_main(cpu="2"),
        mode="Preempt",
        message=flavors_message("main", unused_quota("cpu", "default", 1)),
    ),
    af(
        "multiple resource groups, fits",
        cluster_queue=rg(
            tcq(),
            [fq("one", cpu="2"), fq("two", cpu="4")],
            [fq("b_one", memory="1Gi"), fq("b_two", memory="5Gi")],
        ),
        workload=wl_main(cpu="3", memory="10Mi"),
        mode="Fit",
        flavors={"main": {"cpu": "two", "memory": "b_one"}},
    ),
    af(
        # cpu would need a preemption in one; memory can never fit b_one: only
        # the failing group's reasons are reported.
        "multiple resource groups, one could fit with preemption, other doesn't fit",
        cluster_queue=rg(tcq(), [fq("one", cpu="3")], [fq("b_one", memory="1Mi")]),
        holders=[holder("usage", TQ, "one", cpu="1")],
        workload=wl_main(cpu="3", memory="10Mi"),
        mode="NoFit",
        reason=EXCEEDS_MAX_QUOTA,
        message=flavors_message("main", over_max_quota("memory", "b_one", 0, "10Mi", "1Mi")),
    ),
    af(
        "multiple resource groups with multiple resources, fits",
        cluster_queue=rg(
            tcq(),
            [fq("one", cpu="2", memory="1Gi"), fq("two", cpu="4", memory="15Mi")],
            [fq("b_one", **{GPU: "4"}), fq("b_two", **{GPU: "2"})],
        ),
        workload=wl_main(cpu="3", memory="10Mi", **{GPU: "3"}),
        mode="Fit",
        flavors={"main": {"cpu": "two", "memory": "two", GPU: "b_one"}},
    ),
    af(
        # Kueue's stub answers Preempt for memory in two and gpu in b_one. Here
        # the 10Mi of memory is held in test-clusterqueue and the 2 gpu borrowed
        # by the secondary queue, both at priority -1, with withinClusterQueue and
        # reclaimWithinCohort LowerPriority: the real search finds both.
        "multiple resource groups with multiple resources, fits with different modes",
        cluster_queue=rg(
            tcq().cohort(COHORT).preemption(within=LP, reclaim=LP),
            [fq("one", cpu="2", memory="1Gi"), fq("two", cpu="4", memory="15Mi")],
            [fq("b_one", **{GPU: "4"})],
        ),
        others=[secondary(fq("b_one", **{GPU: "0"}))],
        holders=[
            holder("usage", TQ, "two", prio=-1, memory="10Mi"),
            holder("secondary-usage", SQ, "b_one", prio=-1, **{GPU: "2"}),
        ],
        workload=wl_main(cpu="3", memory="10Mi", **{GPU: "3"}),
        mode="Preempt",
        message=flavors_message(
            "main",
            over_max_quota("cpu", "one", 0, 3, 2),
            unused_quota("memory", "two", "5Mi"),
            unused_quota(GPU, "b_one", 1),
            preempting=2,
        ),
        victims={"default/usage": IN_CLUSTER_QUEUE, "default/secondary-usage": IN_COHORT_RECLAMATION},
    ),
    af(
        "multiple resources in a group, doesn't fit",
        cluster_queue=rg(tcq(), [fq("one", cpu="2", memory="1Gi"), fq("two", cpu="4", memory="5Mi")]),
        workload=wl_main(cpu="3", memory="10Mi"),
        mode="NoFit",
        reason=EXCEEDS_MAX_QUOTA,
        message=flavors_message(
            "main", over_max_quota("cpu", "one", 0, 3, 2), over_max_quota("memory", "two", 0, "10Mi", "5Mi")
        ),
    ),
    af(
        "multiple flavors, fits while skipping tainted flavor",
        cluster_queue=rg(tcq(), [fq("tainted", cpu="4"), fq("two", cpu="4")]),
        workload=wl_main(cpu="3"),
        mode="Fit",
        flavors={"main": {"cpu": "two"}},
    ),
    af(
        # ignored1 and ignored2 are keys no flavor defines: they are dropped.
        "multiple flavors, fits a node selector",
        cluster_queue=rg(tcq(), [fq("one", cpu="4"), fq("two", cpu="4")]),
        workload=wl_sets().pod_set(
            "main",
            1,
            {"cpu": "1"},
            node_selector={"type": "two", "ignored1": "foo"},
            affinity=node_affinity([("ignored2", "In", ["bar"])]),
        ),
        mode="Fit",
        flavors={"main": {"cpu": "two"}},
    ),
    af(
        "multiple flavors, fits with node affinity",
        cluster_queue=rg(tcq(), [fq("one", cpu="4", memory="1Gi"), fq("two", cpu="4", memory="1Gi")]),
        workload=wl_sets().pod_set(
            "main",
            1,
            {"cpu": "1", "memory": "1Mi"},
            node_selector={"ignored1": "foo"},
            affinity=node_affinity([("type", "In", ["two"])]),
        ),
        mode="Fit",
        flavors={"main": {"cpu": "two", "memory": "two"}},
    ),
    af(
        # The first term only names a key no flavor defines: it matches every flavor.
        "multiple flavors, node affinity fits any flavor",
        cluster_queue=rg(tcq(), [fq("one", cpu="4"), fq("two", cpu="4")]),
        workload=wl_sets().pod_set(
            "main",
            1,
            {"cpu": "1"},
            affinity=node_affinity([("ignored2", "In", ["bar"])], [("cpuType", "In", ["two"])]),
        ),
        mode="Fit",
        flavors={"main": {"cpu": "one"}},
    ),
    af(
        "multiple flavors with different label keys, selector only uses flavor's own keys",
        cluster_queue=rg(tcq(), [fq("label-x-a", cpu="4"), fq("label-xy-b", cpu="4")]),
        workload=wl_sets().pod_set("main", 1, {"cpu": "1"}, node_selector={"x": "a", "y": "g"}),
        mode="Fit",
        flavors={"main": {"cpu": "label-x-a"}},
    ),
    af(
        "labelless flavor in group with labeled flavor, workload uses labeled selector",
        cluster_queue=rg(tcq(), [fq("default", cpu="4"), fq("two", cpu="4")]),
        workload=wl_sets().pod_set("main", 1, {"cpu": "1"}, node_selector={"type": "two"}),
        mode="Fit",
        flavors={"main": {"cpu": "default"}},
    ),
    af(
        "multiple flavors, doesn't fit node affinity",
        cluster_queue=rg(tcq(), [fq("one", cpu="4"), fq("two", cpu="4")]),
        workload=wl_sets().pod_set(
            "main", 1, {"cpu": "1"}, affinity=node_affinity([("type", "In", ["three"])])
        ),
        mode="NoFit",
        reason=NO_MATCHING_FLAVOR,
        message=flavors_message(
            "main", "flavor one doesn't match node affinity", "flavor two doesn't match node affinity"
        ),
    ),
    af(
        "multiple specs, fit different flavors",
        cluster_queue=rg(tcq(), [fq("one", cpu="4"), fq("two", cpu="10")]),
        workload=wl_sets().pod_set("driver", 1, {"cpu": "5"}).pod_set("worker", 1, {"cpu": "3"}),
        mode="Fit",
        flavors={"driver": {"cpu": "two"}, "worker": {"cpu": "one"}},
    ),
    af(
        "multiple specs, fits borrowing",
        cluster_queue=tcq().cohort(COHORT).flavor("default", cpu=quota("2", "98"), memory="2Gi"),
        others=[secondary(fq("default", cpu="198", memory="198Gi"))],
        workload=wl_sets()
        .pod_set("driver", 1, {"cpu": "4", "memory": "1Gi"})
        .pod_set("worker", 1, {"cpu": "6", "memory": "4Gi"}),
        mode="Fit",
        flavors={
            "driver": {"cpu": "default", "memory": "default"},
            "worker": {"cpu": "default", "memory": "default"},
        },
    ),
    af(
        # The secondary queue lends nothing (lendingLimit 0).
        "not enough space to borrow",
        cluster_queue=tcq().cohort(COHORT).flavor("one", cpu="1"),
        others=[secondary(fq("one", cpu=quota("10", lend="0")))],
        holders=[holder("secondary-usage", SQ, "one", cpu="9")],
        workload=wl_main(cpu="2"),
        mode="NoFit",
        reason=EXCEEDS_MAX_QUOTA,
        message=flavors_message("main", over_max_quota("cpu", "one", 0, 2, 1)),
    ),
    af(
        "past max, but can preempt in ClusterQueue",
        cluster_queue=tcq().cohort(COHORT).flavor("one", cpu=quota("2", "8")),
        others=[secondary(fq("one", cpu="98"))],
        holders=[holder("usage", TQ, "one", cpu="9"), holder("secondary-usage", SQ, "one", cpu="9")],
        workload=wl_main(cpu="2"),
        mode="Preempt",
        message=flavors_message("main", unused_quota("cpu", "one", 1)),
    ),
    af(
        "past min, but can preempt in ClusterQueue",
        cluster_queue=tcq().flavor("one", cpu="2"),
        holders=[holder("usage", TQ, "one", cpu="1")],
        workload=wl_main(cpu="2"),
        mode="Preempt",
        message=flavors_message("main", unused_quota("cpu", "one", 1)),
    ),
    af(
        "past min, but can preempt in cohort and ClusterQueue",
        cluster_queue=tcq().cohort(COHORT).flavor("one", cpu="3"),
        others=[secondary(fq("one", cpu="7"))],
        holders=[holder("usage", TQ, "one", cpu="2"), holder("secondary-usage", SQ, "one", cpu="8")],
        workload=wl_main(cpu="2"),
        mode="Preempt",
        message=flavors_message("main", unused_quota("cpu", "one", 2)),
    ),
    af(
        "can only preempt flavors that match affinity",
        cluster_queue=rg(tcq(), [fq("one", cpu="4"), fq("two", cpu="4")]),
        holders=[holder("usage-one", TQ, "one", cpu="3"), holder("usage-two", TQ, "two", cpu="3")],
        workload=wl_sets().pod_set("main", 1, {"cpu": "2"}, node_selector={"type": "two"}),
        mode="Preempt",
        message=flavors_message(
            "main", "flavor one doesn't match node affinity", unused_quota("cpu", "two", 1)
        ),
    ),
    af(
        # launcher: one needs a preemption, tainted is not tolerated. workers
        # (tolerating): one cannot hold 2 + 10, tainted needs a preemption.
        "each podset requires preemption on a different flavor",
        cluster_queue=rg(tcq(), [fq("one", cpu="4"), fq("tainted", cpu="10")]),
        holders=[holder("usage-one", TQ, "one", cpu="3"), holder("usage-tainted", TQ, "tainted", cpu="3")],
        workload=wl_sets()
        .pod_set("launcher", 1, {"cpu": "2"})
        .pod_set("workers", 10, {"cpu": "1"}, tolerations=[SPOT_TOLERATION]),
        mode="Preempt",
        message=flavors_message("launcher", unused_quota("cpu", "one", 1), UNTOLERATED)
        + "; "
        + flavors_message(
            "workers", over_max_quota("cpu", "one", 2, 10, 4), unused_quota("cpu", "tainted", 3)
        ),
    ),
    af(
        "resource not listed in clusterQueue",
        cluster_queue=tcq().flavor("one", cpu="4"),
        workload=wl_main(**{GPU: "2"}),
        mode="NoFit",
        reason=NO_MATCHING_FLAVOR,
        message=flavors_message("main", f"resource {GPU} unavailable in ClusterQueue"),
    ),
    af(
        "zero resource request not in clusterQueue should succeed",
        cluster_queue=tcq().flavor("default", cpu="4"),
        workload=wl_main(cpu="1", **{GPU: "0"}),
        mode="Fit",
        flavors={"main": {"cpu": "default"}},
    ),
    af(
        "zero resource request defined in clusterQueue should get flavor assigned",
        cluster_queue=tcq().flavor("default", cpu="4", **{GPU: "4"}),
        workload=wl_main(cpu="1", **{GPU: "0"}),
        mode="Fit",
        flavors={"main": {"cpu": "default", GPU: "default"}},
    ),
    af(
        # A pod set of 0 pods requests 0 gpu, which one (0 of quota) holds.
        "zero-count PodSet prefers a flavor with capacity",
        cluster_queue=rg(tcq(), [fq("one", **{GPU: "0"}), fq("two", **{GPU: "4"})]),
        workload=wl_sets().pod_set("main", 0, {GPU: "1"}),
        mode="Fit",
        flavors={"main": {GPU: "one"}},
        counts={"main": 0},
        later={"main": {GPU: "two"}},
    ),
    af(
        "zero-count PodSet prefers a flavor with pod capacity",
        cluster_queue=rg(tcq(), [fq("one", pods="0"), fq("two", pods="4")]),
        workload=wl_sets().pod_set("main", 0, {}),
        mode="Fit",
        flavors={"main": {"pods": "one"}},
        counts={"main": 0},
        later={"main": {"pods": "two"}},
    ),
    af(
        "zero-count PodSet uses potential capacity even when quota is exhausted",
        cluster_queue=rg(tcq(), [fq("one", **{GPU: "0"}), fq("two", **{GPU: "4"})]),
        holders=[holder("usage", TQ, "two", **{GPU: "4"})],
        workload=wl_sets().pod_set("main", 0, {GPU: "1"}),
        mode="Fit",
        flavors={"main": {GPU: "one"}},
        counts={"main": 0},
        later={"main": {GPU: "two"}},
    ),
    af(
        # Its only pod is reclaimable (finished for good): it counts as 0 pods.
        "fully reclaimed PodSet prefers a flavor with capacity",
        cluster_queue=rg(tcq(), [fq("one", **{GPU: "0"}), fq("two", **{GPU: "4"})]),
        workload=wl_sets().pod_set("main", 1, {GPU: "1"}).reclaimable("main", 1),
        mode="Fit",
        flavors={"main": {GPU: "one"}},
        later={"main": {GPU: "two"}},
    ),
    af(
        "zero-count PodSet falls back when no flavor has capacity",
        cluster_queue=rg(tcq(), [fq("one", **{GPU: "0"}), fq("two", **{GPU: "0"})]),
        workload=wl_sets().pod_set("main", 0, {GPU: "1"}),
        mode="Fit",
        flavors={"main": {GPU: "one"}},
        counts={"main": 0},
    ),
    af(
        "num pods fit",
        cluster_queue=tcq().flavor("default", pods="3", cpu="10"),
        workload=wl_sets().pod_set("main", 3, {"cpu": "1"}),
        mode="Fit",
        flavors={"main": {"cpu": "default", "pods": "default"}},
        counts={"main": 3},
    ),
    af(
        "num pods don't fit",
        cluster_queue=tcq().flavor("default", pods="2", cpu="10"),
        workload=wl_sets().pod_set("main", 3, {"cpu": "1"}),
        mode="NoFit",
        reason=EXCEEDS_MAX_QUOTA,
        message=flavors_message("main", over_max_quota("pods", "default", 0, 3, 2)),
    ),
    af(
        # 2 of the 5 pods are reclaimable: 3 pods and 3 cpu are assigned.
        "with reclaimable pods; reclaimablePods on",
        cluster_queue=tcq().flavor("default", pods="3", cpu="10"),
        workload=wl_sets().pod_set("main", 5, {"cpu": "1"}).reclaimable("main", 2),
        mode="Fit",
        flavors={"main": {"cpu": "default", "pods": "default"}},
        counts={"main": 3},
    ),
    af(
        "with reclaimable pods; reclaimablePods off",
        cluster_queue=tcq().flavor("default", pods="5", cpu="10"),
        workload=wl_sets().pod_set("main", 5, {"cpu": "1"}).reclaimable("main", 2),
        feature_gates={"ReclaimablePods": False},
        mode="Fit",
        flavors={"main": {"cpu": "default", "pods": "default"}},
        counts={"main": 5},
    ),
]


def pods_cpu_flavors(one: dict[str, object], two: dict[str, object]) -> list[object]:
    """Flavors one and two covering pods and cpu (pods first, as Kueue's tables list them)."""
    return [fq("one", **one), fq("two", **two)]  # type: ignore[arg-type]


CASES += [
    af(
        # Kueue's stub says one needs a preemption and MayStopSearch stops there.
        # Here the 2 cpu are held at priority -1 and withinClusterQueue is
        # LowerPriority, so the real search finds them.
        "preempt before try next flavor",
        cluster_queue=rg(
            tcq().fungibility(MAY_STOP, MAY_STOP).preemption(within=LP),
            pods_cpu_flavors({"pods": "10", "cpu": "10"}, {"pods": "10", "cpu": "10"}),
        ),
        holders=[holder("usage", TQ, "one", prio=-1, cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Preempt",
        message=flavors_message("main", unused_quota("cpu", "one", 1), preempting=1),
        victims={"default/usage": IN_CLUSTER_QUEUE},
    ),
    af(
        # Same as above; the case kept its name from the v1beta1 policy names.
        "preempt before try next flavor; using WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
        cluster_queue=rg(
            tcq().fungibility(MAY_STOP, MAY_STOP).preemption(within=LP),
            pods_cpu_flavors({"pods": "10", "cpu": "10"}, {"pods": "10", "cpu": "10"}),
        ),
        holders=[holder("usage", TQ, "one", prio=-1, cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Preempt",
        message=flavors_message("main", unused_quota("cpu", "one", 1), preempting=1),
        victims={"default/usage": IN_CLUSTER_QUEUE},
    ),
    af(
        # Default fungibility: a flavor needing a preemption does not end the search.
        "preempt try next flavor",
        cluster_queue=rg(
            tcq().preemption(within=LP),
            pods_cpu_flavors({"pods": "10", "cpu": "10"}, {"pods": "10", "cpu": "10"}),
        ),
        holders=[holder("usage", TQ, "one", prio=-1, cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Fit",
        flavors={"main": {"cpu": "two", "pods": "two"}},
    ),
    af(
        "borrow try next flavor, found the first flavor",
        cluster_queue=rg(
            tcq().cohort(COHORT).fungibility(TRY_NEXT, TRY_NEXT),
            pods_cpu_flavors({"pods": "10", "cpu": quota("10", "1")}, {"pods": "10", "cpu": "1"}),
        ),
        others=[secondary(fq("one", cpu="1"))],
        holders=[holder("usage", TQ, "one", cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Fit",
        flavors={"main": {"cpu": "one", "pods": "one"}},
    ),
    af(
        "borrow try next flavor, found the second flavor",
        cluster_queue=rg(
            tcq().cohort(COHORT).fungibility(TRY_NEXT, TRY_NEXT),
            pods_cpu_flavors({"pods": "10", "cpu": quota("10", "1")}, {"pods": "10", "cpu": "10"}),
        ),
        others=[secondary(fq("one", cpu="1"))],
        holders=[holder("usage", TQ, "one", cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Fit",
        flavors={"main": {"cpu": "two", "pods": "two"}},
    ),
    af(
        "borrow before try next flavor",
        cluster_queue=rg(
            tcq().cohort(COHORT),
            pods_cpu_flavors({"pods": "10", "cpu": quota("10", "1")}, {"pods": "10", "cpu": "10"}),
        ),
        others=[secondary(fq("one", cpu="1"))],
        holders=[holder("usage", TQ, "one", cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Fit",
        flavors={"main": {"cpu": "one", "pods": "one"}},
    ),
]


def borrow_while_preempting(name: str, when_can_borrow: str, borrowing_limit: bool = True) -> FlavorCase:
    """The "when borrowing while preemption is needed for flavor one" family:
    one has no nominal quota (borrowingLimit 12, or none), two 12 of its own;
    the secondary queue lends 12 of one, 10 of which are in use.

    Kueue's table puts those 10 in the secondary queue, within its nominal
    quota, and its stub answers Preempt. A real search cannot reclaim quota a
    queue uses within its nominal share; so for MayStopSearch the 10 are held
    by test-clusterqueue itself (borrowed from the secondary queue) at priority
    -1 with withinClusterQueue LowerPriority, which makes the real answer
    Preempt with the same numbers. For TryNextFlavor no usage is needed: one
    fits by borrowing and two without."""
    one = fq("one", cpu=quota("0", "12")) if borrowing_limit else fq("one", cpu="0")
    preempting = when_can_borrow == MAY_STOP
    queue = (
        tcq()
        .cohort(COHORT)
        .preemption(within=LP if preempting else NEVER, reclaim=LP, borrow_within=LP)
        .fungibility(when_can_borrow, MAY_STOP)
        .resource_group(one, fq("two", cpu="12"))
    )
    if preempting:
        return af(
            name,
            cluster_queue=queue,
            others=[secondary(fq("one", cpu="12"))],
            holders=[holder("usage", TQ, "one", prio=-1, cpu="10")],
            workload=wl_main(cpu="12"),
            mode="Preempt",
            message=flavors_message("main", unused_quota("cpu", "one", 10), preempting=1),
            victims={"default/usage": IN_CLUSTER_QUEUE},
        )
    return af(
        name,
        cluster_queue=queue,
        others=[secondary(fq("one", cpu="12"))],
        workload=wl_main(cpu="12"),
        mode="Fit",
        flavors={"main": {"cpu": "two"}},
    )


CASES += [
    borrow_while_preempting(
        "when borrowing while preemption is needed for flavor one; WhenCanBorrow=MayStopSearch", MAY_STOP
    ),
    borrow_while_preempting(
        "when borrowing while preemption is needed for flavor one; "
        "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
        MAY_STOP,
    ),
    borrow_while_preempting(
        "when borrowing while preemption is needed for flavor one, no borrowingLimit; WhenCanBorrow=MayStopSearch",  # noqa: E501
        MAY_STOP,
        borrowing_limit=False,
    ),
    borrow_while_preempting(
        "when borrowing while preemption is needed for flavor one, no borrowingLimit; "
        "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
        MAY_STOP,
        borrowing_limit=False,
    ),
    borrow_while_preempting(
        "when borrowing while preemption is needed for flavor one; WhenCanBorrow=TryNextFlavor", TRY_NEXT
    ),
    borrow_while_preempting(
        "when borrowing while preemption is needed for flavor one; "
        "WhenCanBorrow=TryNextFlavor,WhenCanPreempt=MayStopSearch",
        TRY_NEXT,
    ),
    af(
        # borrowingLimit 12, but the cohort only has 11 of one.
        "when borrowing while preemption is needed, but borrowingLimit exceeds the quota available in the cohort",  # noqa: E501
        cluster_queue=tcq()
        .cohort(COHORT)
        .preemption(reclaim=LP, borrow_within=LP)
        .flavor("one", cpu=quota("0", "12")),
        others=[secondary(fq("one", cpu="11"))],
        holders=[holder("secondary-usage", SQ, "one", cpu="10")],
        workload=wl_main(cpu="12"),
        mode="NoFit",
        reason=EXCEEDS_MAX_QUOTA,
        message=flavors_message("main", over_max_quota("cpu", "one", 0, 12, 11)),
    ),
    af(
        # one keeps 9 cpu of its own (lends 1) and uses 2; 9 more only fit by
        # borrowing; two fits without.
        "lend try next flavor, found the second flavor",
        cluster_queue=rg(
            tcq().cohort(COHORT).fungibility(TRY_NEXT, TRY_NEXT),
            pods_cpu_flavors(
                {"pods": "10", "cpu": quota("10", lend="1")}, {"pods": "10", "cpu": quota("10", lend="0")}
            ),
        ),
        others=[secondary(fq("one", cpu="1"))],
        holders=[holder("usage", TQ, "one", cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Fit",
        flavors={"main": {"cpu": "two", "pods": "two"}},
    ),
    af(
        "lend try next flavor, found the first flavor",
        cluster_queue=rg(
            tcq().cohort(COHORT).fungibility(TRY_NEXT, TRY_NEXT),
            pods_cpu_flavors(
                {"pods": "10", "cpu": quota("10", lend="1")}, {"pods": "10", "cpu": quota("1", lend="0")}
            ),
        ),
        others=[secondary(fq("one", cpu="1"))],
        holders=[holder("usage", TQ, "one", cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Fit",
        flavors={"main": {"cpu": "one", "pods": "one"}},
    ),
]

for _name in (
    "cannot preempt in cohort (oracle returns None) for the first flavor, tries the second flavor (which fits)",  # noqa: E501
    "cannot preempt in cohort (oracle returns None) for the first flavor, tries the second flavor (which fits); "  # noqa: E501
    "using deprecated WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
):
    CASES.append(
        af(
            # The secondary queue uses one within its nominal quota: nothing to reclaim.
            _name,
            cluster_queue=rg(
                tcq().cohort(COHORT).fungibility(MAY_STOP, MAY_STOP).preemption(reclaim=LP, borrow_within=LP),
                [fq("one", cpu=quota("0", "2")), fq("two", cpu=quota("0", "2"))],
            ),
            others=[secondary(fq("one", cpu="2"), fq("two", cpu="2"))],
            holders=[holder("secondary-usage", SQ, "one", cpu="2")],
            workload=wl_main(cpu="2"),
            mode="Fit",
            flavors={"main": {"cpu": "two"}},
        )
    )

CASES.append(
    af(
        "quota exhausted, but can preempt in cohort and ClusterQueue",
        cluster_queue=tcq().cohort(COHORT).flavor("one", pods="10", cpu=quota("10", lend="0")),
        others=[secondary(fq("one", pods="0", cpu="0"))],
        holders=[holder("usage", TQ, "one", cpu="2")],
        workload=wl_main(cpu="9"),
        mode="Preempt",
        message=flavors_message("main", unused_quota("cpu", "one", 1)),
    )
)


def fair_borrow_while_preempting(name: str, reclaim: str) -> FlavorCase:
    """Fair sharing on, one without quota of its own (the secondary lends 12, 10
    in use), two with 12. reclaimWithinCohort Any: preemption while borrowing is
    considered; Kueue's stub answers Preempt and MayStopSearch stops at one. As
    for the classical family above, the 10 are held by test-clusterqueue at
    priority -1 with withinClusterQueue LowerPriority so that a real search
    answers Preempt too. reclaimWithinCohort Never: preemption is not even
    considered while borrowing, one is NoFit and two fits."""
    preempting = reclaim == ANY
    queue = (
        tcq()
        .cohort(COHORT)
        .preemption(within=LP if preempting else NEVER, reclaim=reclaim)
        .fungibility(MAY_STOP, MAY_STOP)
        .resource_group(fq("one", cpu="0"), fq("two", cpu="12"))
    )
    if preempting:
        return af(
            name,
            fair_sharing=True,
            cluster_queue=queue,
            others=[secondary(fq("one", cpu="12"))],
            holders=[holder("usage", TQ, "one", prio=-1, cpu="10")],
            workload=wl_main(cpu="12"),
            mode="Preempt",
            message=flavors_message("main", unused_quota("cpu", "one", 10), preempting=1),
            victims={"default/usage": IN_CLUSTER_QUEUE},
        )
    return af(
        name,
        fair_sharing=True,
        cluster_queue=queue,
        others=[secondary(fq("one", cpu="12"))],
        holders=[holder("secondary-usage", SQ, "one", cpu="10")],
        workload=wl_main(cpu="12"),
        mode="Fit",
        flavors={"main": {"cpu": "two"}},
    )


_FS = "when borrowing while preemption is needed for flavor one, fair sharing enabled, "
_DEPRECATED = "; using deprecated WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch"
CASES += [
    fair_borrow_while_preempting(_FS + "reclaimWithinCohort=Any", ANY),
    fair_borrow_while_preempting(_FS + "reclaimWithinCohort=Any" + _DEPRECATED, ANY),
    fair_borrow_while_preempting(_FS + "reclaimWithinCohort=Never", NEVER),
    fair_borrow_while_preempting(_FS + "reclaimWithinCohort=Never" + _DEPRECATED, NEVER),
    af(
        # fitting-podset only matches one (1 cpu of 2); blocking-podset (5) fits no flavor.
        "multi-podset, one fits and another fails, fitting podset attempts skipped in resolveNoFitReason",
        cluster_queue=rg(tcq(), [fq("one", cpu="2"), fq("two", cpu="2")]),
        workload=wl_sets()
        .pod_set("fitting-podset", 1, {"cpu": "1"}, node_selector={"type": "one"})
        .pod_set("blocking-podset", 1, {"cpu": "5"}),
        mode="NoFit",
        reason=EXCEEDS_MAX_QUOTA,
        message=flavors_message(
            "blocking-podset", over_max_quota("cpu", "one", 1, 5, 2), over_max_quota("cpu", "two", 0, 5, 2)
        ),
    ),
]


# --- TestReclaimBeforePriorityPreemption -----------------------------------------------------------
#
# test-clusterqueue (withinClusterQueue and reclaimWithinCohort LowerPriority,
# whenCanPreempt TryNextFlavor) has 10 compute and 10 gpu in each of uno, due,
# tre; other-clusterqueue, in the same cohort, has none. Usage is held at
# priority -1 (the workload under test has 0): in test-clusterqueue it can be
# preempted, in other-clusterqueue (all borrowed) reclaimed. Where Kueue's stub
# gives no answer it says Preempt; the real search says Reclaim for a flavor
# whose only candidates are other-clusterqueue's, which is what the table's
# explicit answers say too.

OQ = "other-clusterqueue"
RECLAIM_FLAVORS = (flavor("uno"), flavor("due"), flavor("tre"))


def reclaim_queues(when_can_preempt: str = TRY_NEXT) -> tuple[ClusterQueueBuilder, list[ClusterQueueBuilder]]:
    test_cq = (
        tcq()
        .cohort("cohort")
        .preemption(within=LP, reclaim=LP)
        .fungibility(when_can_preempt=when_can_preempt)
        .resource_group(*[fq(f, compute="10", gpu="10") for f in ("uno", "due", "tre")])
    )
    other_cq = cq(OQ).cohort("cohort")
    other_cq.resource_group(*[fq(f, compute="0", gpu="0") for f in ("uno", "due", "tre")])
    return test_cq, [other_cq]


def rbp(name: str, when_can_preempt: str = TRY_NEXT, **kw: object) -> FlavorCase:
    test_cq, others = reclaim_queues(when_can_preempt)
    return FlavorCase(
        "TestReclaimBeforePriorityPreemption",
        name,
        cluster_queue=test_cq,
        others=others,
        flavor_objects=RECLAIM_FLAVORS,
        **kw,  # type: ignore[arg-type]
    )


def low(name: str, cluster_queue: str, flavor_name: str, **usage: str) -> WorkloadBuilder:
    return holder(name, cluster_queue, flavor_name, prio=-1, **usage)


def gpu_reason(flavor_name: str) -> str:
    return unused_quota("gpu", flavor_name, 1)


CASES += [
    rbp(
        "Select first flavor which fits",
        holders=[low("test-uno", TQ, "uno", gpu="1"), low("other-due", OQ, "due", gpu="1")],
        workload=wl_main(gpu="10"),
        mode="Fit",
        flavors={"main": {"gpu": "tre"}},
    ),
    rbp(
        # uno needs a preemption in test-clusterqueue, due and tre a reclamation:
        # reclamation is better, due comes first.
        "Select first flavor where gpu reclamation is possible",
        holders=[
            low("test-uno", TQ, "uno", gpu="1"),
            low("other-due", OQ, "due", gpu="1"),
            low("other-tre", OQ, "tre", gpu="1"),
        ],
        workload=wl_main(gpu="10"),
        mode="Preempt",
        message=flavors_message("main", *[gpu_reason(f) for f in ("uno", "due", "tre")], preempting=1),
        victims={"default/other-due": IN_COHORT_RECLAMATION},
    ),
    rbp(
        "Select first flavor when flavor fungibility is disabled",
        when_can_preempt=MAY_STOP,
        holders=[
            low("test-uno", TQ, "uno", gpu="1"),
            low("other-due", OQ, "due", gpu="1"),
            low("other-tre", OQ, "tre", gpu="1"),
        ],
        workload=wl_main(gpu="10"),
        mode="Preempt",
        message=flavors_message("main", gpu_reason("uno"), preempting=1),
        victims={"default/test-uno": IN_CLUSTER_QUEUE},
    ),
    rbp(
        "Select first flavor when flavor fungibility is disabled; using deprecated WhenCanPreempt=MayStopSearch",  # noqa: E501
        when_can_preempt=MAY_STOP,
        holders=[
            low("test-uno", TQ, "uno", gpu="1"),
            low("other-due", OQ, "due", gpu="1"),
            low("other-tre", OQ, "tre", gpu="1"),
        ],
        workload=wl_main(gpu="10"),
        mode="Preempt",
        message=flavors_message("main", gpu_reason("uno"), preempting=1),
        victims={"default/test-uno": IN_CLUSTER_QUEUE},
    ),
    rbp(
        "Select first flavor where priority based preemption is possible",
        holders=[low(f"test-{f}", TQ, f, gpu="1") for f in ("uno", "due", "tre")],
        workload=wl_main(gpu="10"),
        mode="Preempt",
        message=flavors_message("main", *[gpu_reason(f) for f in ("uno", "due", "tre")], preempting=1),
        victims={"default/test-uno": IN_CLUSTER_QUEUE},
    ),
    rbp(
        # uno: both resources need a preemption; due: gpu a reclamation but
        # compute a preemption; tre: gpu a reclamation, compute fits.
        "Select second flavor where gpu reclamation is possible, as compute Fits",
        holders=[
            low("test-uno", TQ, "uno", gpu="1", compute="1"),
            low("test-due", TQ, "due", compute="1"),
            low("other-due", OQ, "due", gpu="1"),
            low("other-tre", OQ, "tre", gpu="1"),
        ],
        workload=wl_main(gpu="10", compute="10"),
        mode="Preempt",
        message=flavors_message(
            "main",
            gpu_reason("uno"),
            unused_quota("compute", "uno", 1),
            gpu_reason("due"),
            unused_quota("compute", "due", 1),
            gpu_reason("tre"),
            preempting=1,
        ),
        victims={"default/other-tre": IN_COHORT_RECLAMATION},
    ),
]


# --- TestHierarchical -------------------------------------------------------------------------------
#
# Cohorts three (4 cpu of flavor three) <- two (4 of two) <- one (4 of one);
# test-clusterqueue in one, other-clusterqueue in two, neither with quota of
# its own unless a case says so. Usage is held at priority 0, as the workload
# under test: nobody can be preempted.

HIERARCHY_FLAVORS = (flavor("one"), flavor("two"), flavor("three"))


def hierarchical(
    name: str,
    quotas: list[object] | None = None,
    fungibility: tuple[str, str, str | None] | None = None,
    **kw: object,
) -> FlavorCase:
    test_cq = tcq().cohort("one").preemption(within=LP, reclaim=LP)
    no_quota = [fq(f, cpu="0") for f in ("one", "two", "three")]
    test_cq.resource_group(*(quotas or no_quota))  # type: ignore[arg-type]
    test_cq.fungibility(*fungibility) if fungibility else test_cq.fungibility(when_can_preempt=TRY_NEXT)
    return FlavorCase(
        "TestHierarchical",
        name,
        cluster_queue=test_cq,
        others=[cq(OQ).cohort("two").resource_group(*[fq(f, cpu="0") for f in ("one", "two", "three")])],
        cohorts=[
            cohort("three").flavor("three", cpu="4"),
            cohort("two").parent("three").flavor("two", cpu="4"),
            cohort("one").parent("two").flavor("one", cpu="4"),
        ],
        flavor_objects=HIERARCHY_FLAVORS,
        **kw,  # type: ignore[arg-type]
    )


CASES += [
    hierarchical(
        "Select the top flavor",
        holders=[holder("test-one", TQ, "one", cpu="4"), holder("other-two", OQ, "two", cpu="4")],
        workload=wl_main(cpu="4"),
        mode="Fit",
        flavors={"main": {"cpu": "three"}},
    ),
    hierarchical(
        "Select the first flavor which fits",
        holders=[holder("test-one", TQ, "one", cpu="4")],
        workload=wl_main(cpu="4"),
        mode="Fit",
        flavors={"main": {"cpu": "two"}},
    ),
    hierarchical(
        # one (4 of its own, no borrowing) is full and nobody can be preempted;
        # PreemptionOverBorrowing then takes the flavor that borrows least: two.
        "Select deeper-borrowing flavor that fits when shallower-borrowing flavor has no preemption candidates",  # noqa: E501
        quotas=[fq("one", cpu=quota("4", "0")), fq("two", cpu="0"), fq("three", cpu="0")],
        fungibility=(TRY_NEXT, TRY_NEXT, "PreemptionOverBorrowing"),
        holders=[holder("test-one", TQ, "one", cpu="4")],
        workload=wl_main(cpu="4"),
        mode="Fit",
        flavors={"main": {"cpu": "two"}},
    ),
]


def _params() -> list[object]:
    return [
        pytest.param(
            case,
            engine,
            id=f"{case.id}-{engine}",
            marks=engine_marks(engine) + divergence_marks(engine, case.diverges, case.diverges_on),
        )
        for case in CASES
        for engine in ENGINES
    ]


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


def test_every_case_states_its_outcome() -> None:
    for case in CASES:
        assert case.mode in ("Fit", "Preempt", "NoFit"), case.name
        if case.mode == "Fit":
            assert case.flavors and case.message is None, case.name
        else:
            assert case.message and not case.flavors, case.name
            assert (case.mode == "NoFit") == (case.reason is not None), case.name


@pytest.mark.parametrize(("case", "engine"), _params())
def test_kueue_assign_flavors(case: FlavorCase, engine: str) -> None:
    state = build_state(
        case.flavor_objects,  # type: ignore[arg-type]
        [case.cluster_queue, *case.others],
        [*case.holders, case.workload],
        cohorts=case.cohorts,
        fair_sharing=case.fair_sharing,
        feature_gates=case.feature_gates,
    )
    decisions = run_one_cycle(state, engine)
    key = case.workload.key

    want: dict[str, str] = {}
    if case.mode == "Fit":
        want[key] = expected_admission_text(admitted(TQ, counts=case.counts, **case.flavors))
    else:
        reason = case.reason or (WAITING_FOR_PREEMPTED if case.victims else WAITING_FOR_QUOTA)
        want[key] = f"pending ({reason}): {case.message}"
    for h in case.holders:
        w = state.workloads[h.key]
        assert w.admission is not None
        if h.key in case.victims:
            want[h.key] = f"evicted ({case.victims[h.key]}) by {key}"
        else:
            want[h.key] = f"admitted in {w.admission.cluster_queue}"

    got = schedule_outcome(decisions, {key: admitted(TQ, counts=case.counts, **case.flavors)})
    d = decisions[key]
    if d.state == "pending":
        got[key] = f"pending ({d.reason}): {d.message}"
    for k, v in decisions.items():
        if v.state == "evicted":
            human = v.message.split(" due to ", 1)[-1].split(";", 1)[0]
            got[k] = f"evicted ({human}) by {v.preempted_by}"
    if got != want:
        fail_with_diff(f"{case.test} {case.name!r} (mode {case.mode})", want, got, decisions)
