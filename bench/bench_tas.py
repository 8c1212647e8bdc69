"""Topology Aware Scheduling benchmarks.

* ``preemption``: kueue#13148's shape (TAS cycles of 40 s in Kueue "at about
  2k nodes and 700 workloads to preempt"): 2,000 nodes of 8 GPUs in 20
  blocks of 10 racks of 10 nodes, full of 700 admitted low-priority
  workloads (2 or 3 whole nodes each, admitted in an order unrelated to
  where they run), and a high-priority workload of 100 pods x 8 GPUs asking
  for one block. Quota and nodes both need preemption; Kueue's minimal
  preemption removes candidates until some block is free, with a TAS
  placement over the 2,000 nodes at each step, then adds back what it can.
  Timed: that one cycle (building the cluster is setup).
* ``drain``: Kueue's TAS scheduler performance test
  (test/performance/scheduler/configs/tas/generator.yaml): 640 nodes (1
  block x 10 racks x 64 nodes of 96 cpu), 5 cohorts x 6 ClusterQueues
  (nominal 20 cpu, borrowing limit 100, LowerPriority within, reclaim Any),
  500 workloads per ClusterQueue (15,000): small 2 x 500m, medium 4 x 1250m,
  large 8 x 2500m, asking for a required or preferred rack (Kueue's
  "balanced" classes need the TASBalancedPlacement gate: here they ask for a
  preferred rack), running 200 ms, 500 ms and 1 s. Offline, all submitted
  at once in Kueue's creation order; cycles back to back (1 ms apart),
  the clock jumping to the next completion when a cycle changes nothing,
  until every workload has run. Timed: the drain (building is setup).

    pytest bench/bench_tas.py --benchmark-only
    python bench/bench_tas.py                 # plain report, both shapes

The agreement tests run both engines on smaller instances of both shapes and
compare every decision.
"""

from __future__ import annotations

import argparse
import copy
import heapq
import time
from dataclasses import dataclass
from typing import Any

import pytest

from kueue_fast import Cluster
from kueue_fast.api import model as m
from kueue_fast.engine.select import native_available

NS = 1_000_000_000
MS = 1_000_000
T0 = 1_750_000_000 * NS
BLOCK, RACK, HOST = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack", m.HOSTNAME_LABEL
GPU = "nvidia.com/gpu"


def _nodes(
    blocks: int, racks: int, per_rack: int, alloc: dict[str, int], pool: str = "tas"
) -> dict[str, m.Node]:
    out = {}
    for b in range(blocks):
        for r in range(racks):
            for n in range(per_rack):
                name = f"b{b}-r{r}-n{n}"
                labels = {"pool": pool, BLOCK: f"b{b}", RACK: f"b{b}-r{r}", HOST: name}
                out[name] = m.Node(name, labels, [], dict(alloc), False, True)
    return out


def _base(levels: list[str], nodes: dict[str, m.Node]) -> m.ClusterState:
    state = m.ClusterState()
    state.topologies["topo"] = m.Topology("topo", levels)
    state.resource_flavors["tas"] = m.ResourceFlavor("tas", {"pool": "tas"}, topology_name="topo")
    state.nodes = nodes
    return state


# --- kueue#13148: one cycle, many preemption candidates ------------------------------------------


def preemption_state(
    blocks: int = 20, racks: int = 10, per_rack: int = 10, victims: int = 700
) -> m.ClusterState:
    nodes = _nodes(blocks, racks, per_rack, {GPU: 8, "cpu": 64_000, "pods": 110})
    state = _base([BLOCK, RACK, HOST], nodes)
    names = list(nodes)
    total = len(names)
    quota = [m.ResourceQuota(GPU, 8 * total), m.ResourceQuota("cpu", 64_000 * total)]
    state.cluster_queues["cq"] = m.ClusterQueue(
        "cq",
        [m.ResourceGroup([GPU, "cpu"], [m.FlavorQuotas("tas", quota)])],
        namespace_selector=m.LabelSelector(),
        preemption=m.Preemption("LowerPriority", "Never", "Never"),
    )
    state.local_queues["ml/q"] = m.LocalQueue("ml", "q", "cq")
    # victims: consecutive runs of 2 or 3 whole nodes, filling the cluster
    sizes = [3 if i < total - 2 * victims else 2 for i in range(victims)]
    assert sum(sizes) == total, "victims must cover the nodes (2 or 3 each)"
    order = sorted(range(victims), key=lambda i: (i * 7919) % victims)  # admission order unrelated to place
    start = 0
    for i, size in enumerate(sizes):
        hosts = names[start : start + size]
        start += size
        usage = {GPU: 8 * size, "cpu": 1000 * size}
        placement = m.TopologyAssignment((HOST,), tuple(((h,), 1) for h in hosts))
        psa = m.PodSetAssignment("main", size, {GPU: "tas", "cpu": "tas"}, usage, placement)
        ps = m.PodSet("main", size, {GPU: 8, "cpu": 1000}, topology_request=m.TopologyRequest(required=BLOCK))
        wl = m.Workload("ml", f"low-{i:04d}", "q", [ps], T0 - 3600 * NS, priority=0, uid=f"low-{i}")
        wl.admission = m.Admission("cq", [psa])
        wl.admission_ns = T0 - (victims - order.index(i)) * NS
        state.workloads[wl.key] = wl
    pods = racks * per_rack
    big = m.PodSet("main", pods, {GPU: 8, "cpu": 1000}, topology_request=m.TopologyRequest(required=BLOCK))
    wl = m.Workload("ml", "urgent", "q", [big], T0, priority=100, uid="urgent")
    state.workloads[wl.key] = wl
    return state


def preemption_cluster(engine: str, **size: int) -> Cluster:
    return Cluster(preemption_state(**size), engine, start_time_ns=T0)


def one_cycle(cluster: Cluster) -> dict[str, Any]:
    t = time.perf_counter()
    res = cluster.run_cycle()
    return {
        "seconds": time.perf_counter() - t,
        "preempted": len(res.preempted),
        "admitted": len(res.admitted),
    }


# --- Kueue's TAS performance test: drain -----------------------------------------------------------

# (class, count per ClusterQueue, creation interval ms, runtime ms, priority, cpu milli, pods, constraint)
CLASSES = [
    ("small-required-rack", 120, 100, 200, 50, 500, 2, "required"),
    ("small-preferred-rack", 120, 100, 200, 50, 500, 2, "preferred"),
    ("small-balanced-rack", 110, 100, 200, 50, 500, 2, "preferred"),
    ("medium-required-rack", 34, 500, 500, 100, 1250, 4, "required"),
    ("medium-preferred-rack", 33, 500, 500, 100, 1250, 4, "preferred"),
    ("medium-balanced-rack", 33, 500, 500, 100, 1250, 4, "preferred"),
    ("large-required-rack", 17, 1200, 1000, 200, 2500, 8, "required"),
    ("large-preferred-rack", 17, 1200, 1000, 200, 2500, 8, "preferred"),
    ("large-balanced-rack", 16, 1200, 1000, 200, 2500, 8, "preferred"),
]


@dataclass
class DrainCase:
    state: m.ClusterState
    runtime_ns: dict[str, int]


def drain_case(cohorts: int = 5, cqs: int = 6, per_rack: int = 64, scale: int = 1) -> DrainCase:
    """Kueue's shape; ``scale`` divides the workload counts (smaller instances)."""
    nodes = _nodes(1, 10, per_rack, {"cpu": 96_000, "memory": 256 * 2**30, "pods": 110})
    state = _base([BLOCK, RACK, HOST], nodes)
    runtime: dict[str, int] = {}
    for c in range(cohorts):
        for q in range(cqs):
            name = f"cohort-{c}-cq-{q}"
            quota = [m.ResourceQuota("cpu", 20_000, borrowing_limit=100_000)]
            state.cluster_queues[name] = m.ClusterQueue(
                name,
                [m.ResourceGroup(["cpu"], [m.FlavorQuotas("tas", quota)])],
                cohort=f"cohort-{c}",
                namespace_selector=m.LabelSelector(),
                preemption=m.Preemption("LowerPriority", "Any", "Never"),
            )
            state.local_queues[f"default/{name}"] = m.LocalQueue("default", name, name)
            for cls, count, every_ms, run_ms, prio, cpu, pods, kind in CLASSES:
                for i in range(count // scale):
                    tr = (
                        m.TopologyRequest(required=RACK)
                        if kind == "required"
                        else m.TopologyRequest(preferred=RACK)
                    )
                    ps = m.PodSet("main", pods, {"cpu": cpu}, topology_request=tr)
                    key = f"{name}-{cls}-{i}"
                    wl = m.Workload(
                        "default", key, name, [ps], T0 + i * every_ms * MS, priority=prio, uid=key
                    )
                    state.workloads[wl.key] = wl
                    runtime[wl.key] = run_ms * MS
    return DrainCase(state, runtime)


def drain(cluster: Cluster, runtime_ns: dict[str, int], max_cycles: int = 1_000_000) -> dict[str, Any]:
    """Cycles 1 ms apart; a cycle that changes nothing jumps the clock to the
    next completion; completed workloads leave. Until every workload has run."""
    now = T0
    running: list[tuple[int, str, int]] = []  # (finish, key, admission number)
    admission_of: dict[str, int] = {}
    left = len(runtime_ns)
    cycles = admissions = preemptions = 0
    while left and cycles < max_cycles:
        res = cluster.run_cycle(now)
        cycles += 1
        for key in res.admitted:
            admissions += 1
            admission_of[key] = admissions
            heapq.heappush(running, (now + runtime_ns[key], key, admissions))
        for key in res.preempted:
            preemptions += 1
            admission_of.pop(key, None)  # its completion is void; it queues again
        now += MS
        if not res.changed and running:
            now = max(now, running[0][0])
        while running and running[0][0] <= now:
            _, key, n = heapq.heappop(running)
            if admission_of.get(key) == n:
                cluster.remove_workload(key)
                del admission_of[key]
                left -= 1
    return {"cycles": cycles, "admissions": admissions, "preemptions": preemptions, "left": left}


# --- pytest-benchmark ---------------------------------------------------------------------------

needs_native = pytest.mark.skipif(not native_available(), reason="native engine not built")


@needs_native
def test_tas_preemption_cycle_native(benchmark: Any) -> None:
    def setup() -> tuple[tuple[Cluster], dict[str, Any]]:
        return (preemption_cluster("native"),), {}

    result = benchmark.pedantic(lambda c: c.run_cycle(), setup=setup, rounds=5)
    benchmark.extra_info["preempted"] = len(result.preempted)
    assert result.preempted  # the urgent workload preempted for a block


@needs_native
def test_tas_drain_native(benchmark: Any) -> None:
    case = drain_case()

    def setup() -> tuple[tuple[Cluster], dict[str, Any]]:  # (a Cluster takes its state over)
        return (Cluster(copy.deepcopy(case.state), "native", start_time_ns=T0),), {}

    result = benchmark.pedantic(lambda c: drain(c, case.runtime_ns), setup=setup, rounds=3)
    benchmark.extra_info.update(result)
    assert result["left"] == 0


@needs_native
def test_engines_agree_on_a_small_preemption() -> None:
    out = {}
    for engine in ("native", "reference"):
        cluster = preemption_cluster(engine, blocks=4, racks=4, per_rack=5, victims=30)
        res = cluster.run_cycle()
        out[engine] = (sorted(res.preempted), cluster.decisions())
    assert out["native"] == out["reference"]
    assert out["native"][0]


@needs_native
def test_engines_agree_on_a_small_drain() -> None:
    out = {}
    for engine in ("native", "reference"):
        case = drain_case(cohorts=2, cqs=2, per_rack=4, scale=10)
        cluster = Cluster(case.state, engine, start_time_ns=T0)
        out[engine] = (drain(cluster, case.runtime_ns), cluster.decisions())
    assert out["native"] == out["reference"]
    assert out["native"][0]["left"] == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="native", choices=["native", "reference"])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    for r in range(args.rounds):
        t = time.perf_counter()
        cluster = preemption_cluster(args.engine)
        built = time.perf_counter() - t
        got = one_cycle(cluster)
        print(
            f"preemption (2000 nodes, 700 candidates) {args.engine} round {r}: "
            f"cycle {got['seconds'] * 1e3:.1f} ms, {got['preempted']} preempted (build {built:.2f} s)"
        )
    case = drain_case()
    for r in range(args.rounds):
        cluster = Cluster(copy.deepcopy(case.state), args.engine, start_time_ns=T0)
        t = time.perf_counter()
        got = drain(cluster, case.runtime_ns)
        print(
            f"drain (640 nodes, 15000 workloads) {args.engine} round {r}: "
            f"{time.perf_counter() - t:.2f} s, {got}"
        )


if __name__ == "__main__":
    main()
