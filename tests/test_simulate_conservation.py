"""Proof that the simulator never shows more quota used than the cluster has.

At every instant of a simulation (after its cycles settled: the state that
lasts until the next event), per ClusterQueue, cohort and flavor-resource:

1. the quota the engine holds is what the simulator's own records say the
   workloads holding quota use (admitted, or preempted with pods still
   stopping), charged up the tree as Kueue does: nothing admitted is lost
   or counted twice;
2. that usage stays within what Kueue's quota tree allows, computed here
   from the manifests (not from the engine): a ClusterQueue within its
   nominal quota plus its borrowing limit, each cohort within its subtree's
   quota plus its borrowing limit, the part of a queue's quota kept by its
   lending limit lent to nobody, and the whole tree within its quota (the
   sum of every nominal quota in it, cohort-owned pools included);
3. the usage series the report draws from (utilization, borrowing) is the
   exact time integral of those instants.

With a termination delay, a cycle that preempts may let later entries of the
same cycle use the quota its victims still hold (Kueue does the same:
scheduler.go ``fits()`` counts the cycle's targets as gone), so while pods
stop the quota held can exceed the tree's; the bound then holds for the
usage of the workloads not stopping. With ``--termination-delay 0`` it holds
for everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from builders import ENGINES, engine_marks
from test_simulate_consistency import SCALE, START, V1B1, cluster_objects, simulate_with, trace_csv

from kueue_fast.api.model import ClusterState, ResourceGroup
from kueue_fast.loader import build_state
from kueue_fast.simulate import event_loop as loop
from kueue_fast.simulate.result import EVICTING, RESERVED, RUNNING, SimResult

NS = 1_000_000_000
PARAMS = [pytest.param(e, marks=engine_marks(e)) for e in ENGINES]
NO_LIMIT = np.iinfo(np.int64).max // 4  # far above any quota here, and safe to add to one


class QuotaTree:
    """Kueue's quota tree (resource_node.go) from the manifests' objects,
    per (flavor, resource) column of ``fr_names``."""

    def __init__(self, state: ClusterState, cq_names: list[str], fr_names: list[tuple[str, str]]) -> None:
        col = {fr: k for k, fr in enumerate(fr_names)}
        cohorts = sorted({c.cohort for c in state.cluster_queues.values() if c.cohort} | set(state.cohorts))
        self.names = [*cq_names, *cohorts]
        self.n_cq = len(cq_names)
        node = {name: k for k, name in enumerate(self.names)}
        n, nfr = len(self.names), len(fr_names)
        self.parent = [-1] * n
        self.nominal = np.zeros((n, nfr), dtype=np.int64)
        self.borrowing_limit = np.full((n, nfr), NO_LIMIT, dtype=np.int64)
        self.lending_limit = np.full((n, nfr), NO_LIMIT, dtype=np.int64)

        def quotas(k: int, groups: list[ResourceGroup]) -> None:
            for g in groups:
                for fq in g.flavors:
                    for rq in fq.resources:
                        j = col[(fq.name, rq.name)]
                        self.nominal[k, j] = rq.nominal
                        if rq.borrowing_limit is not None:
                            self.borrowing_limit[k, j] = rq.borrowing_limit
                        if rq.lending_limit is not None:
                            self.lending_limit[k, j] = rq.lending_limit

        for k, name in enumerate(cq_names):
            cq = state.cluster_queues[name]
            self.parent[k] = node[cq.cohort] if cq.cohort else -1
            quotas(k, cq.resource_groups)
        for name in cohorts:
            k = node[name]
            co = state.cohorts.get(name)
            if co is not None:
                self.parent[k] = node[co.parent] if co.parent else -1
                quotas(k, co.resource_groups)
        self.children = [[c for c in range(n) if self.parent[c] == k] for k in range(n)]
        # children before parents
        self.order: list[int] = []
        for root in (k for k in range(n) if self.parent[k] < 0):
            self._post_order(root)
        # the quota a subtree offers its parent, and the part of it kept back
        # (guaranteed: never lent) by a lending limit
        self.subtree = self.nominal.copy()
        self.guaranteed = np.zeros_like(self.nominal)
        for k in self.order:
            for c in self.children[k]:
                self.subtree[k] += self.subtree[c] - self.guaranteed[c]
            limited = self.lending_limit[k] < NO_LIMIT
            self.guaranteed[k] = np.where(limited, np.maximum(0, self.subtree[k] - self.lending_limit[k]), 0)

    def _post_order(self, k: int) -> None:
        for c in self.children[k]:
            self._post_order(c)
        self.order.append(k)

    def usage(self, cq_usage: np.ndarray) -> np.ndarray:
        """Usage per node from the usage per ClusterQueue: a cohort is
        charged what its children use beyond their guaranteed part."""
        usage = np.zeros_like(self.nominal)
        usage[: self.n_cq] = cq_usage
        for k in self.order:
            for c in self.children[k]:
                usage[k] += np.maximum(0, usage[c] - self.guaranteed[c])
        return usage

    def violations(self, cq_usage: np.ndarray, fr_names: list[tuple[str, str]]) -> list[str]:
        """What the usage per ClusterQueue breaks: a node beyond its subtree
        quota plus its borrowing limit, a root beyond its subtree quota."""
        usage = self.usage(cq_usage)
        out = []
        for k in self.order:
            bound = self.subtree[k] + (self.borrowing_limit[k] if self.parent[k] >= 0 else 0)
            for j in np.flatnonzero(usage[k] > bound).tolist():
                out.append(f"{self.names[k]} {fr_names[j]}: uses {usage[k, j]}, may use {bound[j]}")
        return out


@dataclass
class Instants:
    """Per instant (after its cycles): the time and the quota held per
    ClusterQueue; how many instants had pods stopping, what broke the
    checks, and what the quota held, stopping pods included, went beyond."""

    times: list[int] = field(default_factory=list)
    held: list[np.ndarray] = field(default_factory=list)
    stopping_instants: int = 0
    problems: list[str] = field(default_factory=list)
    # (instant, what the quota held, stopping pods included, breaks)
    over_while_stopping: list[tuple[int, list[str]]] = field(default_factory=list)


def checked_run(
    engine: str, delay_s: float, objects: list[dict[str, Any]], trace: str
) -> tuple[SimResult, Instants]:
    """A simulation checking 1 and 2 at every instant."""
    seen = Instants()
    state = build_state(objects)  # the tree is computed from the manifests' objects

    class Checked(loop._Run):
        def start(self) -> None:
            super().start()
            topo = self.topo
            self.fr_names = [(topo.flavor_names[f], topo.resource_names[r]) for f, r in topo.fr_pairs]
            self.tree = QuotaTree(state, self.cq_names, self.fr_names)
            # the engine's rows in the tree's node order
            self.rows = [topo.node_names.index(name) for name in self.tree.names]

        def settle(self, t: int, first_slice: int) -> None:
            super().settle(t, first_slice)
            states = np.frombuffer(self.state_of, dtype=np.int8)
            held = np.zeros((self.n_cq, self.n_fr), dtype=np.int64)
            stopping = np.zeros_like(held)
            for w in np.flatnonzero(np.isin(states, (RUNNING, RESERVED, EVICTING))).tolist():
                row = self.usage[w]
                held[self.adm_cq[w]] += row
                if states[w] == EVICTING:
                    stopping[self.adm_cq[w]] += row
            seen.times.append(t)
            seen.held.append(held)
            seen.stopping_instants += bool(stopping.any())
            at = f"t={(t - START) / NS} s"
            engine_held = np.asarray(self.sim.engine.usage)[self.rows]
            want = self.tree.usage(held)
            if not (engine_held == want).all():
                seen.problems.append(
                    f"{at}: the engine holds {engine_held.tolist()}, the records {want.tolist()}"
                )
            seen.problems += [f"{at}: {v}" for v in self.tree.violations(held - stopping, self.fr_names)]
            if stopping.any() and (over := self.tree.violations(held, self.fr_names)):
                seen.over_while_stopping.append((t - START, over))
            if len(seen.problems) > 10:
                raise AssertionError("\n".join(seen.problems))

    result = simulate_with(Checked, engine, delay_s, objects, trace)
    return result, seen


def exact_bin_integrals(result: SimResult, seen: Instants) -> np.ndarray:
    """(ClusterQueues, bins, flavor-resources): the integral over each bin of
    the quota held, a step function of the instants."""
    bins = result.timeline.bins
    edges = bins.t0 + np.arange(bins.n + 1, dtype=np.int64) * bins.width_ns
    out = np.zeros((len(result.topology_cq_names), bins.n, len(result.fr_pairs)))
    ends = [*seen.times[1:], result.end_ns]
    for start, end, held in zip(seen.times, ends, seen.held, strict=True):
        if end <= start or not held.any():
            continue
        # the overlap of [start, end) with every bin
        overlap = np.clip(np.minimum(edges[1:], end) - np.maximum(edges[:-1], start), 0, None)
        out += overlap[None, :, None].astype(np.float64) * held[:, None, :].astype(np.float64)
    return out


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize("delay_s", [0, 30])
def test_quota_held_stays_within_the_tree_at_every_instant(engine: str, delay_s: float) -> None:
    trace = trace_csv(seed=8, hours=(16 if engine == "reference" else 48) * SCALE)
    result, seen = checked_run(engine, delay_s, cluster_objects(), trace)
    assert not seen.problems, "\n".join(seen.problems)
    assert len(seen.times) == result.instants
    assert result.preemptions_per_cq.sum() > 0
    if delay_s:
        assert seen.stopping_instants > 10  # pods were stopping at many instants
    else:
        assert seen.stopping_instants == 0
    # 3. the series is the exact integral of the instants
    series, exact = result.timeline.usage.integral, exact_bin_integrals(result, seen)
    wrong = np.argwhere(~np.isclose(series, exact, rtol=1e-9, atol=1e-3))
    if wrong.size:
        c, b, j = wrong[0].tolist()
        raise AssertionError(
            f"{len(wrong)} bins differ; first {result.topology_cq_names[c]} bin {b} fr {result.fr_pairs[j]}: "
            f"series {series[c, b, j]:.6g}, exact {exact[c, b, j]:.6g} (level x ns)"
        )


def gpu_cohort() -> list[dict[str, Any]]:
    """Cohort ``co``: ClusterQueue a (8 GPUs, preempts lower priority within
    itself), b and c (no quota of their own: they borrow a's)."""

    def cq(name: str, gpus: str, **spec: Any) -> dict[str, Any]:
        flavors = [{"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]
        groups = [{"coveredResources": ["nvidia.com/gpu"], "flavors": flavors}]
        body = {"namespaceSelector": {}, "cohort": "co", "resourceGroups": groups, **spec}
        return {"apiVersion": V1B1, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}

    return [
        {"apiVersion": V1B1, "kind": "ResourceFlavor", "metadata": {"name": "gpu"}},
        cq("a", "8", preemption={"withinClusterQueue": "LowerPriority"}),
        cq("b", "0"),
        cq("c", "0"),
        *(
            {
                "apiVersion": V1B1,
                "kind": "LocalQueue",
                "metadata": {"name": "q", "namespace": n},
                "spec": {"clusterQueue": n},
            }
            for n in "abc"
        ),
    ]


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize("delay_s", [0, 30])
def test_while_victims_stop_the_cycle_that_preempted_may_hold_more_than_the_quota(
    engine: str, delay_s: float
) -> None:
    """Kueue scheduler.go: an entry that preempts adds its own usage to the
    cycle's snapshot, and fits() checks each later entry with every target of
    the cycle removed. ``low`` holds 6 of a's 8 GPUs; at t=10 ``high`` (4
    GPUs) preempts it, then b1 and c1 (2 each, nominated as fitting in the 2
    free GPUs) both fit once ``low`` counts as gone: 10 GPUs held in a
    cohort of 8 until ``low``'s pods are gone at t=40; then ``high`` starts.
    Without a termination delay ``low`` gives its quota back at the end of
    the cycle and the cohort never holds more than 8."""
    trace = "arrival,namespace,queue,name,priority,duration,nvidia.com/gpu\n"
    trace += "0,a,q,low,0,1000,6\n10,a,q,high,100,1000,4\n10,b,q,b1,0,100,2\n10,c,q,c1,0,100,2\n"
    result, seen = checked_run(engine, delay_s, gpu_cohort(), trace)
    assert not seen.problems, "\n".join(seen.problems)
    first_admissions = ((result.workloads.admitted_at[:, 0] - START) // NS).tolist()
    assert first_admissions == [0, 10 + delay_s, 10, 10]
    if delay_s:
        assert seen.over_while_stopping == [(10 * NS, ["co ('gpu', 'nvidia.com/gpu'): uses 10, may use 8"])]
    else:
        assert seen.over_while_stopping == []


def test_the_tree_check_catches_usage_beyond_each_limit() -> None:
    """The check itself: each kind of excess is named (the cluster of the
    consistency test; units are canonical: milli-cpu)."""
    state = build_state(cluster_objects())
    cq_names = sorted(state.cluster_queues)
    frs = [(f, r) for f in ("on-demand", "spot") for r in ("cpu", "memory")] + [
        ("a100", "nvidia.com/gpu"),
        ("h100", "nvidia.com/gpu"),
    ]
    tree = QuotaTree(state, cq_names, frs)
    cq = {name: k for k, name in enumerate(cq_names)}
    spot_cpu, a100 = frs.index(("spot", "cpu")), frs.index(("a100", "nvidia.com/gpu"))
    usage = np.zeros((len(cq_names), len(frs)), dtype=np.int64)
    assert tree.violations(usage, frs) == []
    # etl: spot cpu 8 with borrowingLimit 8 -> at most 16 cpu
    usage[cq["etl"], spot_cpu] = 16_000
    assert tree.violations(usage, frs) == []
    usage[cq["etl"], spot_cpu] = 16_001
    assert tree.violations(usage, frs) == ["etl ('spot', 'cpu'): uses 16001, may use 16000"]
    # the spot cpu of the whole tree: etl 8 + llm 4 + org's own 8 = 20
    usage[cq["etl"], spot_cpu] = 12_000
    usage[cq["llm"], spot_cpu] = 8_001
    assert tree.violations(usage, frs) == ["org ('spot', 'cpu'): uses 20001, may use 20000"]
    usage[:, spot_cpu] = 0
    # a100: llm 8 (borrowingLimit 4), vision 4 lending at most 2: llm gets 8 + 2 at most
    usage[cq["llm"], a100] = 10
    assert tree.violations(usage, frs) == []
    usage[cq["llm"], a100] = 11
    assert tree.violations(usage, frs) == ["org ('a100', 'nvidia.com/gpu'): uses 11, may use 10"]
    # vision using its own 2 guaranteed GPUs leaves llm's 10 possible; one more is lent away
    usage[cq["llm"], a100], usage[cq["vision"], a100] = 10, 2
    assert tree.violations(usage, frs) == []
    usage[cq["vision"], a100] = 3
    assert tree.violations(usage, frs) == ["org ('a100', 'nvidia.com/gpu'): uses 11, may use 10"]
