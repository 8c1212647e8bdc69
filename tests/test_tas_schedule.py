"""Topology Aware Scheduling decisions beyond Kueue's tables: preemption on a
topology of several levels, workloads added to a running cluster, and what
``--explain`` says of a workload the nodes cannot take."""

from __future__ import annotations

from typing import Any

import pytest
from kueue_tas_schedule_cases import (
    HOST,
    RACK,
    admission,
    cluster_queue,
    flavor as rflavor,
    fq,
    group,
    local_queue,
    node,
    placement,
    pod_set,
    psa,
    topology,
    workload,
)

from kueue_fast import Cluster, loader
from kueue_fast.cluster.explain import ClusterView
from kueue_fast.engine.contract import ENGINES
from kueue_fast.engine.select import native_available

BLOCK = "cloud.com/topology-block"


def engines() -> list[Any]:
    return [
        pytest.param(
            e, marks=pytest.mark.skipif(e == "native" and not native_available(), reason="not built")
        )
        for e in ENGINES
    ]


def racks(preemption: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Block b1 with racks r1 and r2 of two 4-cpu nodes each."""
    nodes = [
        node(
            f"{r}-n{i}", {"pool": "tas", BLOCK: "b1", RACK: r, HOST: f"{r}-n{i}"}, {"cpu": "4", "pods": "10"}
        )
        for r in ("r1", "r2")
        for i in (1, 2)
    ]
    return [
        topology("blocks", BLOCK, RACK, HOST),
        rflavor("tas", {"pool": "tas"}, "blocks"),
        *nodes,
        cluster_queue("cq", group(fq("tas", {"cpu": "100", "memory": "100Gi"})), preemption=preemption),
        local_queue("q", "cq"),
    ]


def held(name: str, hosts: list[str], priority: int = 0) -> dict[str, Any]:
    """An admitted workload with one 4-cpu pod on each of these nodes."""
    n = len(hosts)
    where = placement([HOST], *(([h], 1) for h in hosts))
    return workload(
        name,
        pod_set("main", n, {"cpu": "4"}, required=BLOCK),
        queue="q",
        priority=priority,
        uid=name,
        admission=admission("cq", psa("main", {"cpu": ("tas", str(4 * n))}, count=n, placement=where)),
        reserved_at=-60,
        admitted_at=-60,
    )


@pytest.mark.parametrize("engine", engines())
def test_preemption_frees_nodes_of_a_topology_with_several_levels(engine: str) -> None:
    """Every node of rack r1 is taken by a low-priority workload; a
    high-priority workload asking for a whole rack preempts the one on r1
    (Kueue's TAS usage of a hostname-lowest flavor is keyed by hostname:
    removing a candidate frees its nodes in the simulation)."""
    objs = racks({"withinClusterQueue": "LowerPriority"}) + [
        held("low-r1", ["r1-n1", "r1-n2"]),
        held("mid-r2", ["r2-n1", "r2-n2"], priority=5),
        workload("urgent", pod_set("main", 2, {"cpu": "4"}, required=RACK), queue="q", priority=10, uid="u"),
    ]
    cluster = Cluster.from_objects(objs, engine=engine)
    res = cluster.run_cycle()
    assert res.preempted == ["default/low-r1"]
    urgent = cluster.decision("default/urgent")
    assert urgent.state == "pending"
    assert urgent.message.endswith("Pending the preemption of 1 workload(s)")
    cluster.run_cycle()
    ta = cluster.decision("default/urgent").pod_sets[0].topology_assignment
    assert ta is not None and list(ta.domains) == [(("r1-n1",), 1), (("r1-n2",), 1)]


@pytest.mark.parametrize("engine", engines())
def test_a_workload_asking_for_a_resource_new_to_the_topology(engine: str) -> None:
    """A workload added later asks for memory, which no node or earlier
    workload named: the cluster compiles again and the placement sees that
    no node has memory."""
    cluster = Cluster.from_objects(racks(), engine=engine)
    cluster.run_cycle()
    state = loader.build_state(
        [
            *racks(),
            workload("late", pod_set("main", 1, {"cpu": "1", "memory": "1Gi"}, required=RACK), queue="q"),
        ]
    )
    cluster.add_workload(state.workloads["default/late"])
    cluster.run_cycle()
    d = cluster.decision("default/late")
    assert d.state == "pending"
    assert 'excluded: resource "memory": 4' in d.message


@pytest.mark.parametrize("engine", engines())
def test_explain_says_where_the_pods_would_fit(engine: str) -> None:
    """Quota fits, the nodes do not: the explanation names the best rack and
    how many of the pods fit there now and with no Kueue workload on it."""
    objs = racks() + [
        held("busy", ["r1-n1"]),
        workload("big", pod_set("main", 3, {"cpu": "4"}, required=RACK), queue="q", uid="b"),
    ]
    cluster = Cluster.from_objects(objs, engine=engine)
    cluster.run_cycle()
    d = cluster.decision("default/big")
    explanation = ClusterView(cluster).explain(d)
    assert explanation is not None
    assert explanation.summary.startswith(
        "fits in ClusterQueue cq now but not on its nodes: topology (required cloud.provider.com/rack, "
        "flavor tas): the best cloud.provider.com/rack b1/r2 fits 2 of its 3 pods now (2 if its nodes "
        "ran no Kueue workload)"
    )
    (entry,) = explanation.detail["topology"]
    assert entry["domains"] == [
        {"values": ["b1", "r2"], "fitsNow": 2, "fitsOnEmptyNodes": 2},
        {"values": ["b1", "r1"], "fitsNow": 1, "fitsOnEmptyNodes": 2},
    ]
    assert entry["nodesWithoutRoom"] == {"cpu": 1}


def test_simulate_refuses_topology_aware_flavors(tmp_path: Any, capsys: Any) -> None:
    """The simulator's trace workloads carry no topology requests and its
    arrays no placements: a cluster with a TAS flavor is refused, naming it,
    not simulated as if its nodes did not matter."""
    import yaml

    from kueue_fast.commands.cli import main

    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(racks()))
    assert main(["simulate", str(path), "-n", "10", "--days", "1", "--no-progress", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "ResourceFlavor/tas spec.topologyName" in err
    assert "Topology Aware Scheduling" in err
