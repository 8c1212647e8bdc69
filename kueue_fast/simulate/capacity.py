"""Capacity: the quota each ClusterQueue's load and use are measured against,
and the load a trace offers.

A ClusterQueue's capacity on a flavor and resource is its own nominal quota
plus an equal share of the quota each Cohort above it owns on that flavor and
resource (a Cohort's own ``nominalQuota``: Kueue's pool pattern, cohort.md),
shared among the ClusterQueues below that Cohort that can reach it: they list
the flavor and resource in a resource group (even at ``nominalQuota: 0``) and
no node between them and the Cohort has a ``borrowingLimit`` of 0 on it
(Kueue's quota tree, pkg/cache/scheduler resource_node.go: a child borrows from
its parent within its borrowing limit). Summed over the ClusterQueues, capacity
is the tree's whole nominal quota that some ClusterQueue can reach, so a load
offered to every ClusterQueue in proportion to its capacity is that load of the
whole tree; a Cohort's quota that no ClusterQueue can reach is nobody's.
Whether a ClusterQueue is active does not matter: capacity is what the
configuration gives it.

``usable(cluster_queue, flavor)`` narrows capacity to the flavors a trace can
use (its pod sets' placement against the flavors' taints and labels); a
Cohort's quota is then shared among the ClusterQueues whose workloads can use
it.

The offered load of a ClusterQueue is, over the resources its workloads
request, the largest of: sum over its workloads of pods x per-pod request (as
charged to quota) x duration, divided by its capacity x the trace's span.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..api.model import ClusterState
from ..api.node_affinity import flavor_rejection
from .metrics import fmt_duration
from .trace import Trace

if TYPE_CHECKING:
    from ..engine.reference.quota import QuotaTree

FlavorResource = tuple[str, str]

# Two loads that print the same at two decimals are one number in the headline.
SAME_LOAD = 0.005


@dataclass
class Capacity:
    """Per ClusterQueue, its capacity per (flavor, resource) in canonical
    units; ``from_cohorts``: some of it is cohort-owned quota."""

    per_queue: dict[str, dict[FlavorResource, float]]
    from_cohorts: bool = False

    def of(self, cluster_queue: str) -> dict[str, float]:
        """Per resource, summed over flavors."""
        out: dict[str, float] = {}
        for (_, r), v in self.per_queue.get(cluster_queue, {}).items():
            out[r] = out.get(r, 0.0) + v
        return out


def capacity(state: ClusterState, usable: Callable[[str, str], bool] | None = None) -> Capacity:
    """Every ClusterQueue's capacity (module docstring); ``usable(cq, flavor)``
    leaves out the flavors a ClusterQueue's workloads cannot use."""
    from ..engine.inputs import compile_topology
    from ..engine.reference.quota import QuotaTree

    topo = compile_topology(state)
    tree = QuotaTree(topo)
    names = topo.node_names
    pairs = [(topo.flavor_names[f], topo.resource_names[r]) for f, r in topo.fr_pairs]
    out: dict[str, dict[FlavorResource, float]] = {names[c]: {} for c in range(topo.n_cq)}

    def can_use(cq: int, fr: int) -> bool:
        return fr in topo.quotas[cq] and (usable is None or usable(names[cq], pairs[fr][0]))

    # 1. each ClusterQueue's own nominal quota
    for cq in range(topo.n_cq):
        for fr, (nominal, _, _) in topo.quotas[cq].items():
            if nominal > 0 and can_use(cq, fr):
                mine = out[names[cq]]
                mine[pairs[fr]] = mine.get(pairs[fr], 0.0) + nominal
    # 2. each Cohort's own quota, shared equally by the ClusterQueues below that reach it
    from_cohorts = False
    for cohort in range(topo.n_cq, topo.n_nodes):
        for fr, (nominal, _, _) in topo.quotas[cohort].items():
            takers = [cq for cq in _reaching(tree, cohort, fr) if can_use(cq, fr)] if nominal > 0 else []
            for cq in takers:
                mine = out[names[cq]]
                mine[pairs[fr]] = mine.get(pairs[fr], 0.0) + nominal / len(takers)
            from_cohorts = from_cohorts or bool(takers)
    return Capacity(out, from_cohorts)


def _reaching(tree: QuotaTree, node: int, fr: int) -> list[int]:
    """The ClusterQueues below ``node`` (every one, active or not) with no
    borrowingLimit of 0 on fr between them and ``node``."""
    out: list[int] = []
    for child in tree.children[node]:
        if tree.borrowing_limit(child, fr) == 0:
            continue
        out.extend([child] if tree.is_cq[child] else _reaching(tree, child, fr))
    return out


# --- the load a trace offers ------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueLoad:
    resource: str  # the resource its load is highest on
    load: float
    work: float  # on that resource: canonical units x seconds
    capacity: float  # on that resource: canonical units


@dataclass
class OfferedLoad:
    """The load a trace offers each ClusterQueue (those its rows reach),
    over ``span_s`` seconds; ``resource``: the one with the most work over
    the capacity of the whole cluster (what compare's utilization reads)."""

    per_queue: dict[str, QueueLoad]
    span_s: float
    from_cohorts: bool
    resource: str = ""
    rows_unqueued: int = 0  # rows whose LocalQueue leads to no ClusterQueue
    # the span is the trace's own window (generated, recorded), not up to its last arrival
    windowed: bool = True

    def text(self) -> str:
        """For a headline: ``offered load 0.70 x the nominal quota the trace
        can use, per ClusterQueue, on cpu`` (a range when they differ)."""
        if not self.per_queue:
            return ""
        loads = sorted(q.load for q in self.per_queue.values())
        figure = f"{loads[0]:.2f}" if loads[-1] - loads[0] < SAME_LOAD else f"{loads[0]:.2f}-{loads[-1]:.2f}"
        quota = (
            "quota the trace can use (nominal + share of cohort quota)"
            if self.from_cohorts
            else ("nominal quota the trace can use")
        )
        resources = sorted({q.resource for q in self.per_queue.values()})
        over = "" if self.windowed else f", over the {fmt_duration(self.span_s)} to the last arrival"
        return f"offered load {figure} x the {quota}, per ClusterQueue, on {', '.join(resources)}{over}"

    def to_json(self) -> dict[str, Any]:
        return {
            "span_s": round(self.span_s, 3),
            "cohort_quota_shared": self.from_cohorts,
            "cluster_queues": {
                name: {
                    "resource": q.resource,
                    "load": round(q.load, 6),
                    "work": q.work,
                    "capacity": q.capacity,
                }
                for name, q in sorted(self.per_queue.items())
            },
        }


def queue_of_rows(state: ClusterState, trace: Trace) -> tuple[list[str], np.ndarray]:
    """(ClusterQueue names, per row an index into them or -1): each row's
    LocalQueue's ClusterQueue, when both exist."""
    names = sorted(state.cluster_queues)
    index = {n: i for i, n in enumerate(names)}
    width = len(trace.queues) + 1
    pair = trace.namespace.astype(np.int64) * width + trace.queue
    codes, inverse = np.unique(pair, return_inverse=True)
    target = np.full(len(codes), -1, dtype=np.int64)
    for k, code in enumerate(codes.tolist()):
        lq = state.local_queues.get(f"{trace.namespaces[code // width]}/{trace.queues[code % width]}")
        if lq is not None:
            target[k] = index.get(lq.cluster_queue, -1)
    return names, target[inverse.ravel()]


def usable_flavors(state: ClusterState, trace: Trace) -> Callable[[str, str], bool]:
    """usable(cq, flavor): some pod set of the rows that reach cq can use the
    flavor (it exists, its taints are tolerated, its labels match)."""
    names, row_cq = queue_of_rows(state, trace)
    pl = trace.placement_ids()
    ps_cq = np.repeat(row_cq, np.diff(trace.ps_offsets))
    seen = np.unique(ps_cq * len(trace.placements) + pl) if len(pl) else np.zeros(0, dtype=np.int64)
    placements_of: dict[str, set[int]] = {}
    for code in seen.tolist():
        if code >= 0:
            placements_of.setdefault(names[code // len(trace.placements)], set()).add(
                code % len(trace.placements)
            )
    memo: dict[tuple[int, str], bool] = {}

    def ok(placement: int, flavor: str) -> bool:
        key = (placement, flavor)
        if key not in memo:
            rf = state.resource_flavors.get(flavor)
            memo[key] = rf is not None and flavor_rejection(rf, trace.placements[placement].pod_set()) is None
        return memo[key]

    def usable(cq: str, flavor: str) -> bool:
        return any(ok(p, flavor) for p in placements_of.get(cq, ()))

    return usable


def offered_load(state: ClusterState, trace: Trace, span_s: float | None = None) -> OfferedLoad:
    """The load ``trace`` offers each ClusterQueue over ``span_s`` (default:
    the trace's span), on the quota its rows can use (module docstring)."""
    from .batch import charged_trace

    span = trace.span_s if span_s is None else span_s
    names, row_cq = queue_of_rows(state, trace)
    cap = capacity(state, usable_flavors(state, trace))
    windowed = span_s is not None or (trace.window_s or 0.0) >= trace.span_s
    out = OfferedLoad({}, span, cap.from_cohorts, rows_unqueued=int((row_cq < 0).sum()), windowed=windowed)
    if not len(trace) or span <= 0:
        return out
    charged = charged_trace(trace, state.configuration.resources)
    reached = row_cq >= 0
    total_work: dict[str, float] = {}
    total_cap: dict[str, float] = {}
    for j, r in enumerate(charged.resources):
        per_ps = charged.requests[:, j].astype(np.float64) * charged.count
        work = np.add.reduceat(per_ps, charged.ps_offsets[:-1]) * charged.duration_s
        per_cq = np.bincount(row_cq[reached], weights=work[reached], minlength=len(names))
        for k, w in enumerate(per_cq.tolist()):
            if w <= 0:
                continue
            c = cap.of(names[k]).get(r, 0.0)
            total_work[r] = total_work.get(r, 0.0) + w
            if c <= 0:
                continue
            x = w / (c * span)
            best = out.per_queue.get(names[k])
            if best is None or x > best.load:
                out.per_queue[names[k]] = QueueLoad(r, x, w, c)
    for name in out.per_queue:
        for r, c in cap.of(name).items():
            total_cap[r] = total_cap.get(r, 0.0) + c
    ratios = {r: w / total_cap[r] for r, w in total_work.items() if total_cap.get(r, 0.0) > 0}
    out.resource = max(sorted(ratios), key=lambda r: ratios[r]) if ratios else ""
    return out
