"""A synthetic trace for the user's own manifests: the job shapes each
LocalQueue could submit (from its ClusterQueue's quota and the flavors'
placement rules, or the manifests' own Workloads), drawn by trace_generator.py
and calibrated to offer a chosen load on every ClusterQueue; what could never
be admitted is reported. (scenario.py is the built-in cluster and its trace.)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from ..api.model import ClusterState
from ..api.node_affinity import flavor_rejection
from .capacity import capacity, offered_load, queue_of_rows
from .defaults import DEFAULT_DAYS, DEFAULT_LOAD, DEFAULT_SEED
from .placement import NO_PLACEMENT, Placement
from .trace import Trace
from .trace_generator import PodSetShape, QueueProfile, Template, generate

# Job sizes: (pods, popularity, median minutes); a size of p pods asks for
# p/64 of the ClusterQueue's usable nominal quota (1/64 to 1/4).
SIZES = ((1, 0.40, 10), (2, 0.25, 30), (4, 0.18, 60), (8, 0.12, 120), (16, 0.05, 240))


def _memory_like(resource: str) -> bool:
    return resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")


def _whole_units(resource: str) -> bool:
    """Extended resources (GPUs...) come in whole units per pod."""
    return resource != "cpu" and not _memory_like(resource)


def _nice(amount: float, resource: str) -> int:
    """A per-pod request a person would write: whole GPUs, 100m CPU steps, 256Mi memory steps."""
    if resource == "cpu":
        return max(100, int(round(amount / 100.0)) * 100)
    if _memory_like(resource):
        step = 256 << 20
        return max(step, int(round(amount / step)) * step)
    return max(1, int(round(amount)))


@dataclass
class QueueCapacity:
    """What a pod set of one placement (a generated one: none) can use in one
    ClusterQueue: per resource group, its usable flavors with the most each
    could ever hold (Kueue's potentialAvailable: nominal quota plus what the
    cohort can lend, within the borrowing limit), and the flavors it cannot
    use, with Kueue's reason; per resource, its capacity (capacity.py) on the
    usable flavors and on every flavor."""

    cluster_queue: str
    groups: list[tuple[list[str], list[tuple[str, dict[str, int]]], list[tuple[str, str]]]]
    capacity: dict[str, float]  # resource -> capacity on the usable flavors
    all_capacity: dict[str, float]  # resource -> capacity on every flavor

    def fits(self, pods: int, per_pod: Mapping[str, int]) -> bool:
        """Could ``pods`` pods of ``per_pod`` ever be admitted here?"""
        for r, v in per_pod.items():
            if v > 0 and not any(r in covered for covered, _, _ in self.groups):
                return False
        for covered, usable, _ in self.groups:
            wanted = {r: pods * v for r, v in per_pod.items() if r in covered and v > 0}
            if wanted and not any(all(v <= caps.get(r, 0) for r, v in wanted.items()) for _, caps in usable):
                return False
        return True

    def most_per_pod(self, resource: str) -> int:
        return max(
            (caps.get(resource, 0) for covered, usable, _ in self.groups for _, caps in usable), default=0
        )

    def unusable(self) -> str:
        """Why some resource of this ClusterQueue has no usable flavor ("" if none)."""
        missing = sorted(set(self.all_capacity) - set(self.capacity))
        if not missing:
            return ""
        reasons = [
            why for covered, _, unusable in self.groups if set(covered) & set(missing) for _, why in unusable
        ]
        return (
            f"no flavor of ClusterQueue {self.cluster_queue} for {', '.join(missing)} is usable ("
            + "; ".join(reasons)
            + ")"
        )


def queue_capacities(state: ClusterState, placement: Placement = NO_PLACEMENT) -> dict[str, QueueCapacity]:
    """QueueCapacity of every ClusterQueue for pod sets of ``placement``."""
    from ..engine.inputs import compile_topology
    from ..engine.reference.quota import QuotaTree

    topo = compile_topology(state)
    tree = QuotaTree(topo)
    rid = {r: k for k, r in enumerate(topo.resource_names)}
    fid = {f: k for k, f in enumerate(topo.flavor_names)}
    probe = placement.pod_set()
    rules = state.configuration.resources
    charged_only = {out for t in rules.transformations.values() for out, _ in t.outputs}

    def rejection(flavor: str) -> str | None:
        rf = state.resource_flavors.get(flavor)
        return f"ResourceFlavor {flavor} doesn't exist" if rf is None else flavor_rejection(rf, probe)

    usable_cap = capacity(state, lambda _, flavor: rejection(flavor) is None)
    every_cap = capacity(state)

    def quota(d: dict[str, float]) -> dict[str, float]:
        # pods and transformation outputs (cpu_credits...) are charged, never requested
        return {r: v for r, v in d.items() if v > 0 and r != "pods" and r not in charged_only}

    out: dict[str, QueueCapacity] = {}
    for node, name in enumerate(topo.node_names[: topo.n_cq]):
        groups = []
        for g in state.cluster_queues[name].resource_groups:
            usable: list[tuple[str, dict[str, int]]] = []
            unusable: list[tuple[str, str]] = []
            for fq in g.flavors:
                why = rejection(fq.name)
                if why is not None:
                    unusable.append((fq.name, why))
                    continue
                caps = {
                    rq.name: tree.potential_available(node, topo.fr_id(fid[fq.name], rid[rq.name]))
                    for rq in fq.resources
                }
                usable.append((fq.name, caps))
            groups.append((list(g.covered_resources), usable, unusable))
        out[name] = QueueCapacity(name, groups, quota(usable_cap.of(name)), quota(every_cap.of(name)))
    return out


def _size(cap: QueueCapacity, nominal: dict[str, float], pods: int) -> tuple[int, dict[str, int], bool]:
    """(pods, per-pod requests, can ever be admitted) for the size of
    ``pods`` pods: p/64 of the capacity, whole units of integer
    resources (fewer pods rather than a unit rounded up per pod), never
    more than the ClusterQueue can ever hold when it can hold one pod."""
    target = {r: v * pods / 64.0 for r, v in nominal.items()}
    p = pods
    for r, total in target.items():
        if _whole_units(r):
            p = min(p, max(1, int(total)))
    per_pod = {r: _nice(total / p, r) for r, total in target.items()}
    while p > 1 and not cap.fits(p, per_pod):
        p -= 1
    if cap.fits(p, per_pod):
        return p, per_pod, True
    smaller = {r: min(v, cap.most_per_pod(r)) for r, v in per_pod.items()}
    if all(v > 0 for v in smaller.values()) and cap.fits(p, smaller):
        return p, smaller, True
    return p, per_pod, False


@dataclass
class GeneratedTraceCheck:
    """What trace_for_state found about the manifests: per LocalQueue whose
    workloads can never be admitted, why; flavors trace workloads cannot use;
    where the shapes came from (notes)."""

    never_admitted: dict[tuple[str, str], str] = field(default_factory=dict)  # (namespace, queue) -> why
    unusable_flavors: dict[str, list[str]] = field(default_factory=dict)  # ClusterQueue -> reasons
    notes: list[str] = field(default_factory=list)

    def warnings(self, trace: Trace) -> list[str]:
        out = [
            f"ClusterQueue {cq} has quota that no generated workload can use: {'; '.join(reasons)} "
            "(generated workloads tolerate no taint and select no node; Jobs, JobSets or Workloads of the "
            "manifests that do give the trace their shapes, or give a trace with placement: see Traces)"
            for cq, reasons in sorted(self.unusable_flavors.items())
        ]
        for (ns, q), why in sorted(self.never_admitted.items()):
            if ns not in trace.namespaces or q not in trace.queues:
                continue
            rows = int(
                (
                    (trace.namespace == trace.namespaces.index(ns)) & (trace.queue == trace.queues.index(q))
                ).sum()
            )
            if rows:
                out.append(
                    f"{rows:,} generated workloads of LocalQueue {ns}/{q} can never be admitted: {why}"
                )
        return out


# Run time of a shape taken from the manifests, before calibration scales it:
# one value for all (the manifests say nothing about run times).
SHAPE_MEDIAN_S = 30 * 60.0


# A shape of the manifests: its priority and, per pod set, (name, count,
# per-pod requests, minCount, placement), hashable.
_PodSetKey = tuple[str, int, tuple[tuple[str, int], ...], int, Placement]


def manifest_shapes(state: ClusterState) -> dict[str, list[Template]]:
    """Per LocalQueue (``namespace/name``), the shapes of the manifests'
    Workloads (those of Jobs and JobSets included) submitted to it: pod sets
    (count, minCount, per-pod requests, placement) and priority, each shape
    weighted by how many objects have it, in the order first seen."""
    counts: dict[str, dict[tuple[int, tuple[_PodSetKey, ...]], int]] = {}
    for wl in state.workloads.values():
        key = f"{wl.namespace}/{wl.queue_name}"
        if not wl.queue_name or key not in state.local_queues or not wl.pod_sets:
            continue
        pod_sets = tuple(
            (
                ps.name,
                ps.count,
                tuple(sorted(ps.requests.items())),
                -1 if ps.min_count is None else ps.min_count,
                Placement.of(ps),
            )
            for ps in wl.pod_sets
        )
        mine = counts.setdefault(key, {})
        mine[(wl.priority, pod_sets)] = mine.get((wl.priority, pod_sets), 0) + 1
    return {
        key: [
            Template(
                tuple(PodSetShape(nm, c, dict(req), mc, pl) for nm, c, req, mc, pl in shape),
                prio,
                n,
                SHAPE_MEDIAN_S,
            )
            for (prio, shape), n in found.items()
        ]
        for key, found in counts.items()
    }


def profiles_for_state(state: ClusterState, check: GeneratedTraceCheck | None = None) -> list[QueueProfile]:
    """Queue profiles for any set of manifests: every ClusterQueue with
    capacity gets an equal share of the arrivals, shared equally by the
    LocalQueues that feed it. A LocalQueue that the manifests' Jobs,
    JobSets or Workloads name submits their shapes (manifest_shapes); the
    others submit jobs of five sizes (1/64 to 1/4 of the ClusterQueue's
    capacity on the flavors they can use, small ones most often, see _size)
    at the priorities of the WorkloadPriorityClasses given (low ones most
    often). ``check`` collects what can never be admitted, and notes."""
    prios = sorted(p.value for p in state.priority_classes.values()) or [0]
    prio_weights = np.linspace(2.0, 1.0, len(prios))
    capacities = queue_capacities(state)
    by_placement = {NO_PLACEMENT: capacities}  # queue_capacities per placement of the shapes
    shapes = manifest_shapes(state)
    feeding: dict[str, list[str]] = {}
    for key in sorted(state.local_queues):
        cq = state.local_queues[key].cluster_queue
        found = capacities.get(cq)
        if found is not None and (found.all_capacity or key in shapes):
            feeding.setdefault(cq, []).append(key)
    profs: list[QueueProfile] = []
    for cq_name, keys in feeding.items():
        cap = capacities[cq_name]
        synthetic = [k for k in keys if k not in shapes]
        placements = {ps.placement for k in keys if k in shapes for t in shapes[k] for ps in t.pod_sets}
        reasons = [
            why
            for _, _, unusable in cap.groups
            for flavor, why in unusable
            if not any(_usable(state, flavor, p) for p in placements)
        ]
        if synthetic and reasons and not cap.unusable() and check is not None:
            # some quota is out of reach of generated workloads; the rest is usable
            check.unusable_flavors[cq_name] = reasons
        for key in keys:
            lq = state.local_queues[key]
            if key in shapes:
                templates = tuple(shapes[key])
                why = _shapes_never_admitted(state, cq_name, shapes[key], by_placement)
            else:
                templates, why = _synthetic_templates(cap, prios, prio_weights)
            if why and check is not None:
                check.never_admitted[(lq.namespace, lq.name)] = why
            profs.append(QueueProfile(lq.namespace, lq.name, 1.0 / len(keys), "office", templates))
    if shapes and check is not None:
        used = {k: t for k, t in shapes.items() if any(k in keys for keys in feeding.values())}
        objects = sum(int(t.weight) for ts in used.values() for t in ts)
        others = sum(len(keys) for keys in feeding.values()) - len(used)
        check.notes.append(
            f"the generated trace takes the shapes (pod sets, requests, placement, priority) of "
            f"{objects:,} Jobs, JobSets and Workloads of the manifests for {len(used):,} LocalQueue(s)"
            + (f"; {others:,} other LocalQueue(s) submit generated sizes" if others else "")
        )
    return profs


def _usable(state: ClusterState, flavor: str, placement: Placement) -> bool:
    """Pod sets of ``placement`` can use ``flavor`` (its taints, its labels)."""
    rf = state.resource_flavors.get(flavor)
    return rf is not None and flavor_rejection(rf, placement.pod_set()) is None


def _synthetic_templates(
    cap: QueueCapacity, prios: list[int], prio_weights: np.ndarray
) -> tuple[tuple[Template, ...], str]:
    """The five sizes at every priority; why they can never be admitted ("" if they can)."""
    # jobs ask for every resource the ClusterQueue has quota for; a resource
    # no flavor of it can give them makes them wait for ever
    why = cap.unusable()
    target = {r: cap.capacity.get(r, v) for r, v in cap.all_capacity.items()}
    templates = []
    for pods, weight, minutes in SIZES:
        count, per_pod, ok = _size(cap, target, pods)
        if not ok and not why:
            why = f"ClusterQueue {cap.cluster_queue} can never hold {count} pod(s) of {per_pod}"
        for p, pw in zip(prios, prio_weights, strict=True):
            shape = (PodSetShape("main", count, per_pod),)
            templates.append(Template(shape, p, weight * float(pw), minutes * 60.0))
    return tuple(templates), why


def _shapes_never_admitted(
    state: ClusterState,
    cq: str,
    templates: list[Template],
    by_placement: dict[Placement, dict[str, QueueCapacity]],
) -> str:
    """Why some shape of the manifests can never be admitted in ``cq`` ("" if
    all can); ``by_placement`` memoizes queue_capacities per placement."""
    for t in templates:
        for ps in t.pod_sets:
            caps = by_placement.get(ps.placement)
            if caps is None:
                caps = by_placement[ps.placement] = queue_capacities(state, ps.placement)
            cap = caps[cq]
            if ps.count and not cap.fits(ps.count, ps.requests):
                return f"ClusterQueue {cq} can never hold {ps.count} pod(s) of {dict(ps.requests)}" + (
                    f" ({cap.unusable()})" if cap.unusable() else ""
                )
    return ""


def calibrate_per_queue(state: ClusterState, trace: Trace, load: float) -> Trace:
    """Scale the run times of each ClusterQueue's workloads so that the trace
    offers ``load`` x its capacity over the trace's span (capacity.offered_load:
    the same definition the headline prints). Scaling keeps the shape of
    the duration distribution."""
    offered = offered_load(state, trace)
    names, row_cq = queue_of_rows(state, trace)
    factor = np.ones(len(names) + 1, dtype=np.float64)  # the last: rows of no ClusterQueue
    for k, name in enumerate(names):
        q = offered.per_queue.get(name)
        if q is not None and q.load > 0:
            factor[k] = load / q.load
    duration = trace.duration_s * factor[row_cq]
    return replace(trace, duration_s=np.round(np.clip(duration, 1.0, None), 3).astype(np.float64))


def trace_for_state(
    state: ClusterState,
    n: int,
    seed: int = DEFAULT_SEED,
    days: float = DEFAULT_DAYS,
    load: float = DEFAULT_LOAD,
    warnings: list[str] | None = None,
    notes: list[str] | None = None,
) -> Trace:
    """A synthetic trace for the manifests' LocalQueues, offering ``load`` x
    each ClusterQueue's capacity; what can never be admitted is appended to
    ``warnings``, where the shapes came from to ``notes``."""
    check = GeneratedTraceCheck()
    profs = profiles_for_state(state, check)
    if not profs:
        from ..api.errors import InputError

        raise InputError("", "", "no LocalQueue points at a ClusterQueue with quota: nothing to generate for")
    trace = calibrate_per_queue(state, generate(profs, n, seed=seed, days=days), load)
    if warnings is not None:
        warnings.extend(check.warnings(trace))
    if notes is not None:
        notes.extend(check.notes)
    return trace
