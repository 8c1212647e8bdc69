"""Behaviours of the reference engine (and facade) that looked wrong.

The native engine reproduces the reference decision for decision, so where
the reference is doubtful both engines agree and a case states the behaviour
we would expect instead, as a strict xfail: when the reference is fixed it
starts passing (and the native engine needs the same change). Fixed ones stay
as regression tests for both engines: a workload admitted to a missing
ClusterQueue (reference 232bef6). Cohort sums above INT64_MAX, once a strict
xfail here, follow Kueue's Amount arithmetic in both engines now
(tests/test_amount.py).
"""

from __future__ import annotations

import copy

import pytest

from kueue_fast import Cluster
from kueue_fast.api.model import (
    Admission,
    ClusterQueue,
    ClusterState,
    FlavorQuotas,
    LabelSelector,
    LocalQueue,
    PodSet,
    PodSetAssignment,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from kueue_fast.engine.inputs import AdmissionSpec, compile_topology
from kueue_fast.engine.native import NativeEngine
from kueue_fast.engine.reference.scheduler import ReferenceEngine
from kueue_fast.engine.workloads import WorkloadCompiler

SECOND = 1_000_000_000
T0 = 1_700_000_000 * SECOND
INT64_MAX = (1 << 63) - 1
ENGINES = {"reference": ReferenceEngine, "native": NativeEngine}


def _two_queues() -> ClusterState:
    s = ClusterState()
    s.resource_flavors["f"] = ResourceFlavor("f")
    for name in ("a", "z"):
        group = ResourceGroup(["cpu"], [FlavorQuotas("f", [ResourceQuota("cpu", 1000)])])
        s.cluster_queues[name] = ClusterQueue(name, [group], namespace_selector=LabelSelector())
        s.local_queues[f"ns/{name}"] = LocalQueue("ns", name, name)
    for i in range(2):  # never fit: parked together (same scheduling hash)
        s.workloads[f"ns/big-{i}"] = Workload(
            "ns", f"big-{i}", "z", [PodSet("main", 1, {"cpu": 5000})], T0 - 10 * SECOND + i, uid=f"b{i}"
        )
    return s


def _ghost() -> Workload:
    """Admitted (per its status) to a ClusterQueue that does not exist."""
    wl = Workload("ns", "ghost", "a", [PodSet("main", 1, {"cpu": 500})], T0 - 20 * SECOND, uid="g")
    wl.admission = Admission("missing-cq", [PodSetAssignment("main", 1, {"cpu": "f"}, {"cpu": 500})])
    wl.admission_ns = T0 - 15 * SECOND
    return wl


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_evicting_a_workload_of_a_missing_cluster_queue_requeues_nothing(engine: str) -> None:
    """Releasing it frees nothing anywhere, so no parked workload is requeued
    (it once requeued the last ClusterQueue: Python's index -1)."""
    state = _two_queues()
    topo = compile_topology(state)
    comp = WorkloadCompiler(state, topo)
    eng = ENGINES[engine](topo)
    for key in sorted(state.workloads):
        eng.add_workload(comp.compile(state.workloads[key]))
    first = eng.run_cycle(T0 + SECOND)
    assert first.newly_parked == 2  # big-0 and big-1 parked in z
    spec = comp.compile(_ghost())
    assert spec.admission is not None and spec.admission.cluster_queue == -1
    wid = eng.add_workload(spec)
    eng.evict(wid, "LocalQueueStopped", "The LocalQueue is stopped")  # released at once (offline)
    second = eng.run_cycle(T0 + 2 * SECOND)
    assert second.admitted == [wid]  # the ghost, pending again, fits in its own queue a
    assert (second.heads, second.newly_parked) == (1, 0), (
        "z's workloads should stay parked: nothing was freed there"
    )


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_decision_of_a_workload_admitted_to_a_missing_cluster_queue(engine: str) -> None:
    """Its decision shows the admission its status has (it once raised ValueError)."""
    state = _two_queues()
    c = Cluster(state, engine, start_time_ns=T0)
    c.add_workload(copy.deepcopy(_ghost()))
    d = c.decision("ns/ghost")
    assert d.state == "admitted" and d.cluster_queue == "missing-cq"


def test_admission_spec_of_a_missing_cluster_queue_is_minus_one() -> None:
    """(Not a doubt: the compiler's encoding the cases above rely on.)"""
    state = _two_queues()
    topo = compile_topology(state)
    spec = WorkloadCompiler(state, topo).compile(_ghost())
    assert isinstance(spec.admission, AdmissionSpec) and spec.admission.cluster_queue == -1
