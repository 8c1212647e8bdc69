"""Kueue feature gates set in the Configuration change the decisions as in Kueue.

Each case runs the same input with the gate at its default and flipped, and
states what Kueue's code does in both (kueue pkg/features/kube_features.go for
the defaults). Unknown gate names are rejected as Kueue rejects them.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from builders import ENGINES, NOW, SECOND, build_state, cq, engine_marks, fq, wl

from kueue_fast import Cluster
from kueue_fast.api.features import MODELLED_DEFAULTS, FeatureGates
from kueue_fast.commands.cli import main

PARAMS = [pytest.param(e, marks=engine_marks(e)) for e in ENGINES]


def decide(state, engine, cycles=1):
    cluster = Cluster(state, engine=engine)
    ran = cluster.run_until_stable() if cycles is None else len(cluster.run(cycles))
    return {d.key: d for d in cluster.decisions()}, ran


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize(("on", "want_count"), [(True, 2), (False, None)])
def test_partial_admission_reduces_the_count_only_when_enabled(engine, on, want_count):
    # 4 pods of 2 cpu, at least 1: with PartialAdmission the largest count that
    # fits 4 cpu (2) is admitted; without it the workload waits.
    state = build_state(
        ["default"],
        [cq("cq").flavor("default", cpu="4")],
        [wl("w").queue("cq").pod_set("main", 4, {"cpu": "2"}, min_count=1)],
        feature_gates={"PartialAdmission": on},
    )
    got, _ = decide(state, engine)
    if want_count is None:
        assert got["default/w"].state == "pending"
    else:
        assert got["default/w"].state == "admitted"
        assert got["default/w"].pod_sets[0].count == want_count


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize(("on", "want_flavor"), [(True, "second"), (False, "first")])
def test_flavor_fungibility_off_takes_the_first_flavor_that_fits(engine, on, want_flavor):
    # "first" fits only by borrowing from the cohort, "second" fits within
    # nominal. With whenCanBorrow: TryNextFlavor the scan goes on to "second";
    # without FlavorFungibility the first flavor that fits wins.
    state = build_state(
        ["first", "second"],
        [
            cq("cq")
            .cohort("co")
            .resource_group(*_two_flavors(first="1", second="4"))
            .fungibility(when_can_borrow="TryNextFlavor"),
            cq("lender").cohort("co").resource_group(*_two_flavors(first="4", second="0")),
        ],
        [wl("w").queue("cq").request(cpu="2")],
        feature_gates={"FlavorFungibility": on},
    )
    got, _ = decide(state, engine)
    assert got["default/w"].state == "admitted"
    assert got["default/w"].pod_sets[0].flavors == {"cpu": want_flavor}


def _two_flavors(first: str, second: str):
    return fq("first", cpu=first), fq("second", cpu=second)


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize(("on", "want_cycles"), [(True, 2), (False, 4)])
def test_equivalence_hashing_parks_equivalent_workloads_together(engine, on, want_cycles):
    # Three identical workloads that can never fit a 1-cpu queue (NoFit). With
    # SchedulingEquivalenceHashing the first one parks the other two with it, so
    # the second cycle has no head; without it each one is tried in turn.
    workloads = [wl(f"w{i}").queue("cq").request(cpu="2").created(NOW + i * SECOND) for i in range(3)]
    state = build_state(
        ["default"],
        [cq("cq").flavor("default", cpu="1")],
        workloads,
        feature_gates={"SchedulingEquivalenceHashing": on},
    )
    got, cycles = decide(state, engine, cycles=None)
    assert cycles == want_cycles
    assert {d.state for d in got.values()} == {"pending"}


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize(("on", "first"), [(True, "high"), (False, "old")])
def test_priority_sorting_within_cohort(engine, on, first):
    # Two heads of two ClusterQueues both need the 2 cpu the cohort can lend; only
    # one fits. With PrioritySortingWithinCohort the higher priority goes first,
    # without it the older one.
    state = build_state(
        ["default"],
        [
            cq("a").cohort("co").flavor("default", cpu="0"),
            cq("b").cohort("co").flavor("default", cpu="0"),
            cq("lender").cohort("co").flavor("default", cpu="2"),
        ],
        [
            wl("old").queue("a").request(cpu="2").created(NOW),
            wl("high").queue("b").request(cpu="2").priority(10).created(NOW + SECOND),
        ],
        feature_gates={"PrioritySortingWithinCohort": on},
    )
    got, _ = decide(state, engine)
    assert got[f"default/{first}"].state == "admitted"
    other = "old" if first == "high" else "high"
    assert got[f"default/{other}"].state == "pending"


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize(("on", "want_state"), [(True, "admitted"), (False, "pending")])
def test_reclaimable_pods_release_quota_only_when_enabled(engine, on, want_state):
    # 4 pods of 1 cpu with 2 declared reclaimable need only 2 cpu under
    # ReclaimablePods; without the gate they need 4.
    w = wl("w").queue("cq").pod_set("main", 4, {"cpu": "1"}).obj()
    w.pod_sets[0].reclaimable = 2
    state = build_state(
        ["default"], [cq("cq").flavor("default", cpu="2")], [], feature_gates={"ReclaimablePods": on}
    )
    state.workloads[w.key] = w
    got, _ = decide(state, engine)
    assert got["default/w"].state == want_state
    if on:
        assert got["default/w"].pod_sets[0].count == 2


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize("on", [True, False])
def test_recompute_on_overlapping_targets(engine, on):
    # Two preemptors in two ClusterQueues of one cohort both reclaim from the same
    # borrowing victim. The second one's targets overlap the first one's victim:
    # with RecomputeAssignmentUponPreemptionTargetsOverlap it is re-planned on
    # the snapshot without that victim and, as 2 cpu are then free for it too
    # (the victim uses 4), it waits for the preemption ("will fit after these
    # preemptions complete"); without the gate it is skipped as overlapping.
    state = build_state(
        ["default"],
        [
            cq("a").cohort("co").flavor("default", cpu="2").preemption(reclaim="Any"),
            cq("b").cohort("co").flavor("default", cpu="2").preemption(reclaim="Any"),
            cq("c").cohort("co").flavor("default", cpu="0"),
        ],
        [
            wl("victim").priority(-1).request(cpu="4").reserve("c", "default", at=NOW),
            wl("pa").queue("a").request(cpu="2").created(NOW + SECOND),
            wl("pb").queue("b").request(cpu="2").created(NOW + 2 * SECOND),
        ],
        feature_gates={"RecomputeAssignmentUponPreemptionTargetsOverlap": on},
    )
    got, _ = decide(state, engine)
    assert got["default/victim"].state == "evicted"
    assert got["default/victim"].preempted_by == "default/pa"
    assert got["default/pb"].state == "pending"
    if on:
        assert "will fit after these preemptions complete" in got["default/pb"].message
    else:
        assert (
            got["default/pb"].message == "Workload has overlapping preemption targets with another workload"
        )


def test_gates_default_to_kueue_defaults():
    assert FeatureGates.resolve({}) == FeatureGates()
    for name, default in MODELLED_DEFAULTS.items():
        flipped = FeatureGates.resolve({name: not default})
        assert flipped != FeatureGates() or name == "SchedulingEquivalenceHashingIgnorePodSetName"


def test_unknown_feature_gate_is_rejected(tmp_path, capsys):
    path = tmp_path / "config.yaml"
    path.write_text(
        textwrap.dedent(
            """
            apiVersion: config.kueue.x-k8s.io/v1beta2
            kind: Configuration
            featureGates: {NoSuchGate: true}
            """
        )
    )
    rc = main(["schedule", str(path), "--engine", "reference"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "featureGates" in err and "NoSuchGate" in err
    assert "Traceback" not in err


def test_known_gate_without_scheduling_effect_is_accepted(tmp_path, capsys):
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "featureGates: {TopologyAwareScheduling: false, LocalQueueMetrics: true}\n"
    )
    rc = main(["schedule", str(path), "--engine", "reference"])
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["workloads"] == []
