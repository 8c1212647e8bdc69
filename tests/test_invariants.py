"""Invariants that hold after every cycle, whatever the input (both engines).

Checked from the outside, with arithmetic written here from Kueue's rules and
not taken from the engines:

1. the usage of every ClusterQueue is the sum of what the workloads holding its
   quota use (admitted, or evicted while their job has not stopped yet);
2. the usage of every cohort is what its children use beyond their local
   (never lent) quota;
3. nothing admitted during a cycle takes a node beyond what its quota and
   limits allow: a node whose usage grew stays within its subtree quota plus
   its borrowing limit, and a root within its subtree quota, once the
   evictions still in progress complete (Kueue's fit check counts every victim
   of the cycle as gone, scheduler.go fits; with release_evictions=False they
   hold their quota until their job stops);
4. every workload is in exactly one state, and none is lost.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import test_native_differential as gen
from builders import ENGINES, engine_marks
from hypothesis import HealthCheck, given, settings

from kueue_fast import Cluster
from kueue_fast.engine.inputs import NO_LIMIT, Topology

PARAMS = [pytest.param(e, marks=engine_marks(e)) for e in ENGINES]


def usage_matrix(cluster: Cluster) -> np.ndarray:
    engine = cluster.engine
    if cluster.engine_name == "native":
        return np.array(engine.usage, copy=True)
    out = np.zeros((cluster.topology.n_nodes, len(cluster.topology.fr_pairs)), dtype=np.int64)
    for node, d in enumerate(engine.tree.usage):
        for fr, v in d.items():
            out[node, fr] = v
    return out


def subtree_and_local(topo: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Subtree quota and local quota of every node, per fr (Kueue resource_node.go)."""
    n, nfr = topo.n_nodes, len(topo.fr_pairs)
    subtree = np.zeros((n, nfr), dtype=np.int64)
    local = np.zeros((n, nfr), dtype=np.int64)
    children: list[list[int]] = [[] for _ in range(n)]
    for node, p in enumerate(topo.node_parent):
        if p >= 0:
            children[p].append(node)

    def visit(node: int) -> None:
        for fr, (nominal, _, _) in topo.quotas[node].items():
            subtree[node, fr] += nominal
        for c in children[node]:
            visit(c)
            subtree[node] += subtree[c] - local[c]
        for fr, (_, _, lend) in topo.quotas[node].items():
            if lend != NO_LIMIT:
                local[node, fr] = max(0, subtree[node, fr] - lend)

    for node, p in enumerate(topo.node_parent):
        if p < 0:
            visit(node)
    return subtree, local


def admitted_usage(cluster: Cluster, evicting: bool = True) -> np.ndarray:
    """What the workloads holding quota use, per ClusterQueue (reserved ones,
    waiting for admission checks, included); `evicting`: an evicted workload
    whose job has not stopped yet still holds its admission."""
    topo = cluster.topology
    rid = {r: i for i, r in enumerate(topo.resource_names)}
    fid = {f: i for i, f in enumerate(topo.flavor_names)}
    cq_id = {c.name: i for i, c in enumerate(topo.cluster_queues)}
    out = np.zeros((topo.n_nodes, len(topo.fr_pairs)), dtype=np.int64)
    holding = ("admitted", "reserved", "evicted") if evicting else ("admitted", "reserved")
    for d in cluster.decisions():
        if d.state not in holding or d.cluster_queue not in cq_id:
            continue
        for ps in d.pod_sets:
            for r, v in ps.resource_usage.items():
                f = ps.flavors.get(r)
                if f is not None:
                    out[cq_id[d.cluster_queue], topo.fr_id(fid[f], rid[r])] += v
    return out


def tree_usage(topo: Topology, cq_usage: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Cohort usage from ClusterQueue usage: what children use beyond their local quota."""
    out = cq_usage.copy()
    children: list[list[int]] = [[] for _ in range(topo.n_nodes)]
    for node, p in enumerate(topo.node_parent):
        if p >= 0:
            children[p].append(node)

    def visit(node: int) -> None:
        for c in children[node]:
            visit(c)
            out[node] += np.maximum(0, out[c] - local[c])

    for node, p in enumerate(topo.node_parent):
        if p < 0 and node >= topo.n_cq:
            visit(node)
    return out


def check(cluster: Cluster, before: np.ndarray, where: str) -> np.ndarray:
    topo = cluster.topology
    usage = usage_matrix(cluster)
    subtree, local = subtree_and_local(topo)
    # 1. ClusterQueues: the sum of their admitted workloads.
    expected = admitted_usage(cluster)
    assert (usage[: topo.n_cq] == expected[: topo.n_cq]).all(), (
        f"{where}: ClusterQueue usage != admitted workloads"
    )
    # 2. Cohorts: what children use beyond their local quota.
    for node in range(topo.n_cq, topo.n_nodes):
        kids = [c for c, p in enumerate(topo.node_parent) if p == node]
        want = np.zeros(usage.shape[1], dtype=np.int64)
        for c in kids:
            want += np.maximum(0, usage[c] - local[c])
        wrong = {
            topo.fr_pairs[fr]: (int(usage[node, fr]), int(want[fr]))
            for fr in np.nonzero(usage[node] != want)[0]
        }
        assert not wrong, f"{where}: cohort {topo.node_names[node]} usage (has, want) per fr: {wrong}"
    # 3. Growth only within quota and limits (evictions in progress completed).
    settled = usage
    if (expected != admitted_usage(cluster, evicting=False)).any():
        settled = tree_usage(topo, admitted_usage(cluster, evicting=False), local)
    grew = usage > before
    for node, fr in zip(*np.nonzero(grew), strict=True):
        name = f"{topo.node_names[node]} fr {topo.fr_pairs[fr]}"
        if topo.node_parent[node] < 0:
            assert settled[node, fr] <= subtree[node, fr], f"{where}: root {name} over its quota"
        q = topo.quotas[node].get(int(fr))
        if q is not None and q[1] != NO_LIMIT and topo.node_parent[node] >= 0:
            limit = subtree[node, fr] + q[1]
            assert settled[node, fr] <= limit, f"{where}: {name} beyond its borrowing limit"
    # 4. One state per workload, none lost.
    decisions = cluster.decisions()
    assert len(decisions) == len(cluster.keys()), f"{where}: workloads lost"
    assert {d.state for d in decisions} <= {"admitted", "reserved", "pending", "evicted", "finished"}
    return usage


@pytest.mark.parametrize("engine", PARAMS)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sc=gen.scenarios())
def test_invariants_hold_after_every_operation(engine: str, sc: gen.Scenario) -> None:
    cluster = Cluster(copy.deepcopy(sc.state), engine, start_time_ns=gen.T0)
    usage = usage_matrix(cluster)
    for step, (op, i) in enumerate(sc.ops):
        before = usage
        if op == "cycle":
            cluster.run_cycle()
        elif op == "add":
            cluster.add_workload(copy.deepcopy(sc.extra[i]))
        elif op == "remove":
            keys = cluster.keys()
            if keys:
                cluster.remove_workload(keys[i % len(keys)])
        usage = check(cluster, before if op == "cycle" else usage_matrix(cluster), f"step {step} ({op})")


def test_preemption_search_leaves_the_quota_tree_unchanged() -> None:
    """Every trial removal of a target search is undone (reference engine; the
    native engine checks the same with its debug_checks hook in the differential test)."""
    from builders import NOW, build_state, cq, wl

    state = build_state(
        ["default"],
        [
            cq("a").cohort("co").flavor("default", cpu="4").preemption(within="LowerPriority", reclaim="Any"),
            cq("b").cohort("co").flavor("default", cpu="4"),
        ],
        [
            *[
                wl(f"low{i}").priority(-1).request(cpu="2").reserve("b", "default", at=NOW + i)
                for i in range(4)
            ],
            wl("mid").request(cpu="2").reserve("a", "default", at=NOW),
            wl("high").queue("a").priority(5).request(cpu="4"),
        ],
    )
    cluster = Cluster(state, "reference")
    engine = cluster.engine
    original = engine.preemptor.get_targets
    snapshots = []

    def checked(ctx):  # type: ignore[no-untyped-def]
        before = copy.deepcopy(engine.tree.usage)
        targets = original(ctx)
        snapshots.append(before == engine.tree.usage)
        return targets

    engine.preemptor.get_targets = checked
    result = cluster.run_cycle()
    assert snapshots and all(snapshots)
    assert result.preempted


@pytest.mark.parametrize("engine", PARAMS)
def test_a_negative_capacity_reservation_leaves_no_trace(engine: str) -> None:
    """Kueue reserves min(request, nominal + borrowingLimit - usage) for a
    preemptor without targets (scheduler.go quotaResourcesToReserve): negative
    when the ClusterQueue is already beyond its limit. The cycle must end with
    the cohort's usage still the sum of its children's."""
    from builders import NOW, build_state, cq, quota, wl

    state = build_state(
        ["default"],
        [cq("a").cohort("co").flavor("default", cpu=quota("1", borrow="0")), cq("b").cohort("co")],
        [
            wl("over").request(cpu="2").reserve("a", "default", at=NOW),
            wl("incoming").queue("a").request(cpu="1"),
        ],
    )
    cluster = Cluster(state, engine)
    before = usage_matrix(cluster)
    cluster.run_cycle()
    assert (check(cluster, before, "after the cycle") == before).all()
