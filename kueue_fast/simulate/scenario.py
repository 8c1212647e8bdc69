"""The default scenario: a shared cluster as a platform team would run it.

Eight teams (ClusterQueues) in two cohorts:

* ``research``: four ML teams with GPU quota on two GPU models (H100, A100)
  besides CPU and memory; the LLM team borrows GPUs and may preempt
  best-effort work of others while borrowing, the sandbox (students) has a
  small quota, StrictFIFO and no preemption at all;
* ``platform``: data engineering (nightly ETL bursts, prefers spot), office
  hours analytics, CI (many short jobs, a borrowing limit) and production
  batch (high priority, keeps half of its quota from lending).

CPU and memory come in two flavors, ``on-demand`` and ``spot`` (tried in the
order each team lists them); GPUs in ``h100`` and ``a100``. Three
WorkloadPriorityClasses (best-effort 100, standard 1000, urgent 10000).

Each team submits from a handful of job templates with Zipf-like popularity
(most jobs small, a few very large) and heavy-tailed log-normal run times;
arrivals follow office hours, nightly cron bursts or a steady rate over one
week, starting Monday 00:00 UTC. Durations are calibrated so that every team
offers a chosen share of its nominal quota on its dominant resource: some
teams run hot and borrow, others lend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..loader import build_state
from ..model import ClusterState
from .defaults import DEFAULT_DAYS, DEFAULT_LOAD, DEFAULT_SEED, DEFAULT_START_NS, DEFAULT_WORKLOADS
from .trace import QueueProfile, Template, Trace, generate, work_seconds

__all__ = [
    "DEFAULT_DAYS",
    "DEFAULT_START_NS",
    "DEFAULT_WORKLOADS",
    "default_objects",
    "default_state",
    "default_trace",
    "trace_for_state",
]

GI = 1 << 30

PRIORITIES = {"best-effort": 100, "standard": 1000, "urgent": 10000}
BE, STD, URG = PRIORITIES["best-effort"], PRIORITIES["standard"], PRIORITIES["urgent"]


@dataclass(frozen=True)
class Team:
    name: str
    cohort: str
    cpu: tuple[int, int]  # nominal cores: on-demand, spot
    memory_gi: tuple[int, int]
    gpu: tuple[int, int] = (0, 0)  # nominal: h100, a100
    cpu_order: tuple[str, str] = ("on-demand", "spot")
    within: str = "LowerPriority"
    # Reclaim "Any" lets two ClusterQueues that each borrow one flavor while
    # under nominal on another reclaim from each other for ever (Kueue does
    # that too): only production batch, which never borrows GPUs, uses it.
    reclaim: str = "LowerPriority"
    borrow_within: tuple[str, int] | None = None  # (policy, maxPriorityThreshold)
    strategy: str = "BestEffortFIFO"
    cpu_borrowing_limit: int | None = None
    cpu_lending_limit: int | None = None
    gpu_borrowing_limit: int | None = None
    share: float = 0.1  # of all arrivals
    rhythm: str = "office"
    load: float = 0.7  # offered load on the dominant resource, over nominal
    templates: tuple[Template, ...] = ()


def _cpu(cores: float, mem_gi: float, gpu: int = 0, gpu_model: str = "") -> dict[str, int]:
    req = {"cpu": int(cores * 1000), "memory": int(mem_gi * GI)}
    if gpu:
        req["nvidia.com/gpu"] = gpu
    return req


def _t(
    pods: int, req: dict[str, int], prio: int, weight: float, minutes: float, min_count: int = -1
) -> Template:
    return Template((("main", pods, req),), prio, weight, minutes * 60.0, min_count)


TEAMS: tuple[Team, ...] = (
    Team(
        "team-llm",
        "research",
        cpu=(256, 256),
        memory_gi=(2048, 2048),
        gpu=(48, 32),
        gpu_borrowing_limit=32,
        share=0.10,
        load=1.05,
        templates=(
            _t(1, _cpu(2, 8, 1), BE, 0.35, 20),  # evaluation
            _t(1, _cpu(4, 32, 1), URG, 0.08, 45),  # debugging session
            _t(1, _cpu(32, 256, 8), STD, 0.15, 120),  # fine-tuning, one node
            _t(4, _cpu(32, 256, 8), STD, 0.03, 360),  # pre-training shard, 32 GPUs
            _t(4, _cpu(8, 64, 2), BE, 0.07, 60),  # hyper-parameter sweep
            _t(8, _cpu(4, 16), BE, 0.32, 30),  # data preparation, CPU only
        ),
    ),
    Team(
        "team-vision",
        "research",
        cpu=(192, 192),
        memory_gi=(1536, 1536),
        gpu=(8, 48),
        reclaim="Never",
        share=0.12,
        load=0.75,
        templates=(
            _t(1, _cpu(4, 32, 1), STD, 0.40, 40),
            _t(1, _cpu(16, 128, 4), STD, 0.15, 180),
            _t(2, _cpu(32, 256, 8), STD, 0.03, 480),
            _t(1, _cpu(2, 8, 1), URG, 0.07, 15),
            _t(16, _cpu(2, 8), BE, 0.35, 25),  # augmentation, CPU only
        ),
    ),
    Team(
        "team-speech",
        "research",
        cpu=(128, 128),
        memory_gi=(1024, 1024),
        gpu=(8, 32),
        within="LowerOrNewerEqualPriority",
        reclaim="Never",
        share=0.08,
        load=0.6,
        rhythm="steady",
        templates=(
            _t(1, _cpu(4, 32, 1), STD, 0.50, 50),
            _t(1, _cpu(16, 128, 4), STD, 0.15, 240),
            _t(4, _cpu(4, 16), BE, 0.35, 20),
        ),
    ),
    Team(
        "team-sandbox",
        "research",
        cpu=(32, 64),
        memory_gi=(256, 512),
        gpu=(0, 8),
        within="Never",
        reclaim="Never",
        strategy="StrictFIFO",
        gpu_borrowing_limit=0,
        share=0.05,
        load=0.6,
        templates=(
            _t(1, _cpu(2, 8, 1), BE, 0.55, 30),
            _t(1, _cpu(8, 64, 4), BE, 0.10, 90),
            _t(1, _cpu(2, 8), BE, 0.35, 15),
        ),
    ),
    Team(
        "team-etl",
        "platform",
        cpu=(256, 768),
        memory_gi=(1024, 3072),
        cpu_order=("spot", "on-demand"),
        share=0.25,
        rhythm="nightly",
        load=0.8,
        templates=(
            _t(4, _cpu(2, 8), STD, 0.45, 12),
            _t(16, _cpu(4, 16), STD, 0.25, 40),
            _t(64, _cpu(4, 32), STD, 0.04, 90),  # the big nightly join
            _t(1, _cpu(1, 4), BE, 0.26, 5),
        ),
    ),
    Team(
        "team-analytics",
        "platform",
        cpu=(192, 128),
        memory_gi=(1536, 1024),
        reclaim="LowerPriority",
        share=0.15,
        load=0.6,
        templates=(
            _t(1, _cpu(2, 16), URG, 0.30, 8),  # interactive query
            _t(8, _cpu(4, 32), STD, 0.45, 25),
            _t(32, _cpu(4, 32), STD, 0.05, 120),
            _t(2, _cpu(1, 4), BE, 0.20, 10),
        ),
    ),
    Team(
        "team-ci",
        "platform",
        cpu=(128, 256),
        memory_gi=(512, 1024),
        cpu_order=("spot", "on-demand"),
        within="Never",
        cpu_borrowing_limit=128,
        share=0.20,
        load=0.7,
        templates=(
            _t(1, _cpu(2, 4), STD, 0.60, 6),  # unit tests
            _t(4, _cpu(4, 8), STD, 0.30, 15),  # integration tests
            _t(8, _cpu(8, 16), URG, 0.10, 30),  # release build
        ),
    ),
    Team(
        "team-prod-batch",
        "platform",
        cpu=(256, 0),
        memory_gi=(1024, 0),
        cpu_lending_limit=128,
        share=0.05,
        rhythm="steady",
        load=0.5,
        templates=(
            _t(8, _cpu(4, 16), URG, 0.50, 30),
            _t(32, _cpu(4, 16), URG, 0.10, 60),
            _t(2, _cpu(2, 8), STD, 0.40, 15),
        ),
    ),
)


# --- manifests ------------------------------------------------------------------------------------

API = "kueue.x-k8s.io/v1beta2"


def _quota(
    name: str, nominal: str, borrowing: int | None = None, lending: int | None = None
) -> dict[str, Any]:
    q: dict[str, Any] = {"name": name, "nominalQuota": nominal}
    if borrowing is not None:
        q["borrowingLimit"] = str(borrowing)
    if lending is not None:
        q["lendingLimit"] = str(lending)
    return q


def _cluster_queue(t: Team) -> dict[str, Any]:
    cpu_flavors = []
    for flavor in t.cpu_order:
        i = 0 if flavor == "on-demand" else 1
        cpu_flavors.append(
            {
                "name": flavor,
                "resources": [
                    _quota(
                        "cpu",
                        str(t.cpu[i]),
                        t.cpu_borrowing_limit,
                        t.cpu_lending_limit if t.cpu[i] and t.cpu_lending_limit is not None else None,
                    ),
                    _quota("memory", f"{t.memory_gi[i]}Gi"),
                ],
            }
        )
    groups: list[dict[str, Any]] = [{"coveredResources": ["cpu", "memory"], "flavors": cpu_flavors}]
    if any(t.gpu):
        groups.append(
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [
                    {"name": f, "resources": [_quota("nvidia.com/gpu", str(n), t.gpu_borrowing_limit)]}
                    for f, n in (("h100", t.gpu[0]), ("a100", t.gpu[1]))
                ],
            }
        )
    preemption: dict[str, Any] = {"withinClusterQueue": t.within, "reclaimWithinCohort": t.reclaim}
    if t.borrow_within is not None:
        preemption["borrowWithinCohort"] = {
            "policy": t.borrow_within[0],
            "maxPriorityThreshold": t.borrow_within[1],
        }
    return {
        "apiVersion": API,
        "kind": "ClusterQueue",
        "metadata": {"name": t.name},
        "spec": {
            "cohortName": t.cohort,
            "namespaceSelector": {},
            "queueingStrategy": t.strategy,
            "resourceGroups": groups,
            "preemption": preemption,
        },
    }


def default_objects() -> list[dict[str, Any]]:
    """The default cluster as Kueue manifests (what ``--write-scenario`` prints)."""
    objs: list[dict[str, Any]] = []
    flavors = {
        "on-demand": {"node.kubernetes.io/lifecycle": "on-demand"},
        "spot": {"node.kubernetes.io/lifecycle": "spot"},
        "h100": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        "a100": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
    }
    for name, labels in flavors.items():
        objs.append(
            {
                "apiVersion": API,
                "kind": "ResourceFlavor",
                "metadata": {"name": name},
                "spec": {"nodeLabels": labels},
            }
        )
    for name, value in PRIORITIES.items():
        objs.append(
            {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}
        )
    for t in TEAMS:
        objs.append(_cluster_queue(t))
        objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": t.name}})
        objs.append(
            {
                "apiVersion": API,
                "kind": "LocalQueue",
                "metadata": {"name": "default", "namespace": t.name},
                "spec": {"clusterQueue": t.name},
            }
        )
    return objs


def default_state() -> ClusterState:
    return build_state(default_objects())


# --- the workload trace ----------------------------------------------------------------------------


def _dominant(t: Team) -> tuple[str, float]:
    """The team's scarce resource and its nominal quota in trace units."""
    if any(t.gpu) and any("nvidia.com/gpu" in ps[2] for tm in t.templates for ps in tm.pod_sets):
        return "nvidia.com/gpu", float(sum(t.gpu))
    return "cpu", float(sum(t.cpu) * 1000)


def profiles(teams: Sequence[Team] = TEAMS) -> list[QueueProfile]:
    return [QueueProfile(t.name, "default", t.share, t.rhythm, t.templates) for t in teams]


def calibrate(trace: Trace, loads: dict[str, tuple[str, float, float]], days: float) -> Trace:
    """Scale run times per namespace so that each offers ``load`` x nominal of
    its dominant resource over the trace: loads[namespace] = (resource,
    nominal, load). Scaling keeps the shape of the duration distribution."""
    duration = trace.duration_s.copy()
    span = days * 86400.0
    for ns, (resource, nominal, load) in loads.items():
        if ns not in trace.namespaces or nominal <= 0:
            continue
        rows = trace.namespace == trace.namespaces.index(ns)
        work = work_seconds(trace, resource)[rows].sum()
        if work <= 0:
            continue
        duration[rows] *= load * nominal * span / work
    out = np.round(np.clip(duration, 1.0, None), 3).astype(np.float64)
    return replace(trace, duration_s=out)


def default_trace(n: int = DEFAULT_WORKLOADS, seed: int = DEFAULT_SEED, days: float = DEFAULT_DAYS) -> Trace:
    """n workloads of the default scenario. The offered load does not depend
    on n: fewer workloads run proportionally longer."""
    trace = generate(profiles(), n, seed=seed, days=days)
    loads = {t.name: (*_dominant(t), t.load) for t in TEAMS}
    return calibrate(trace, loads, days)


# --- synthetic traces for the user's own manifests --------------------------------------------------

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
    """What a pod set without node selectors or tolerations (a trace's) can
    use in one ClusterQueue: per resource group, its usable flavors with the
    most each could ever hold (Kueue's potentialAvailable: nominal quota plus
    what the cohort can lend, within the borrowing limit), and the flavors
    it cannot use, with Kueue's reason."""

    cluster_queue: str
    groups: list[tuple[list[str], list[tuple[str, dict[str, int]]], list[tuple[str, str]]]]
    nominal: dict[str, float]  # resource -> nominal quota summed over the usable flavors
    all_nominal: dict[str, float]  # resource -> nominal quota summed over every flavor

    def fits(self, pods: int, per_pod: dict[str, int]) -> bool:
        """Could ``pods`` pods of ``per_pod`` ever be admitted here?"""
        for r in per_pod:
            if not any(r in covered for covered, _, _ in self.groups):
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
        missing = sorted(set(self.all_nominal) - set(self.nominal))
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


def queue_capacities(state: ClusterState) -> dict[str, QueueCapacity]:
    """QueueCapacity of every ClusterQueue."""
    from .._reference.quota import QuotaTree
    from ..compiler import compile_topology
    from ..model import PodSet
    from ..node_affinity import flavor_rejection

    topo = compile_topology(state)
    tree = QuotaTree(topo)
    rid = {r: k for k, r in enumerate(topo.resource_names)}
    fid = {f: k for k, f in enumerate(topo.flavor_names)}
    probe = PodSet("main", 1)
    rules = state.configuration.resources
    charged_only = {out for t in rules.transformations.values() for out, _ in t.outputs}
    out: dict[str, QueueCapacity] = {}
    for node, name in enumerate(topo.node_names[: topo.n_cq]):
        cq = state.cluster_queues[name]
        groups = []
        nominal: dict[str, float] = {}
        every: dict[str, float] = {}
        for g in cq.resource_groups:
            usable: list[tuple[str, dict[str, int]]] = []
            unusable: list[tuple[str, str]] = []
            for fq in g.flavors:
                for rq in fq.resources:
                    every[rq.name] = every.get(rq.name, 0.0) + rq.nominal
                rf = state.resource_flavors.get(fq.name)
                why = f"ResourceFlavor {fq.name} doesn't exist" if rf is None else flavor_rejection(rf, probe)
                if why is not None:
                    unusable.append((fq.name, why))
                    continue
                caps = {
                    rq.name: tree.potential_available(node, topo.fr_id(fid[fq.name], rid[rq.name]))
                    for rq in fq.resources
                }
                usable.append((fq.name, caps))
                for rq in fq.resources:
                    nominal[rq.name] = nominal.get(rq.name, 0.0) + rq.nominal
            groups.append((list(g.covered_resources), usable, unusable))

        def quota(d: dict[str, float]) -> dict[str, float]:
            # pods and transformation outputs (cpu_credits...) are charged, never requested
            return {r: v for r, v in d.items() if v > 0 and r != "pods" and r not in charged_only}

        out[name] = QueueCapacity(name, groups, quota(nominal), quota(every))
    return out


def _size(cap: QueueCapacity, nominal: dict[str, float], pods: int) -> tuple[int, dict[str, int], bool]:
    """(pods, per-pod requests, can ever be admitted) for the size of
    ``pods`` pods: p/64 of the nominal quota, whole units of integer
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
    workloads can never be admitted, why; flavors trace workloads cannot use."""

    never_admitted: dict[tuple[str, str], str] = field(default_factory=dict)  # (namespace, queue) -> why
    unusable_flavors: dict[str, list[str]] = field(default_factory=dict)  # ClusterQueue -> reasons

    def warnings(self, trace: Trace) -> list[str]:
        out = [
            f"ClusterQueue {cq} has quota that no generated workload can use: {'; '.join(reasons)} "
            "(trace workloads carry no tolerations or node selectors)"
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


def profiles_for_state(
    state: ClusterState, load: float = DEFAULT_LOAD, check: GeneratedTraceCheck | None = None
) -> tuple[list[QueueProfile], dict[str, tuple[str, float, float]]]:
    """Queue profiles for any set of manifests: every LocalQueue whose
    ClusterQueue has quota submits jobs of five sizes (1/64 to 1/4 of the
    usable nominal quota, small ones most often, see _size) at the
    priorities of the WorkloadPriorityClasses given (low ones most often).
    Also returns the calibration target per namespace (dominant resource,
    nominal, load). ``check`` collects what can never be admitted."""
    prios = sorted(p.value for p in state.priority_classes.values()) or [0]
    prio_weights = np.linspace(2.0, 1.0, len(prios))
    capacities = queue_capacities(state)
    profs: list[QueueProfile] = []
    loads: dict[str, tuple[str, float, float]] = {}
    per_ns: dict[str, float] = {}
    for name, every in capacities.items():
        reasons = [why for _, _, unusable in every.groups for _, why in unusable]
        if reasons and not every.unusable() and check is not None:
            # some quota is out of reach; the rest is usable (else: never_admitted)
            check.unusable_flavors[name] = reasons
    for key in sorted(state.local_queues):
        lq = state.local_queues[key]
        found = capacities.get(lq.cluster_queue)
        if found is None or not found.all_nominal:
            continue
        cap = found
        # jobs ask for every resource the ClusterQueue has quota for; a
        # resource no flavor of it can give them makes them wait for ever
        why = cap.unusable()
        nominal = {r: cap.nominal.get(r, v) for r, v in cap.all_nominal.items()}
        templates = []
        for pods, weight, minutes in SIZES:
            count, per_pod, ok = _size(cap, nominal, pods)
            if not ok and not why:
                why = f"ClusterQueue {cap.cluster_queue} can never hold {count} pod(s) of {per_pod}"
            for p, pw in zip(prios, prio_weights, strict=True):
                templates.append(Template((("main", count, per_pod),), p, weight * float(pw), minutes * 60.0))
        if why and check is not None:
            check.never_admitted[(lq.namespace, lq.name)] = why
        profs.append(QueueProfile(lq.namespace, lq.name, 1.0, "office", tuple(templates)))
        # several LocalQueues of one namespace share its calibration target
        dominant = (
            "nvidia.com/gpu"
            if "nvidia.com/gpu" in nominal
            else ("cpu" if "cpu" in nominal else sorted(nominal)[0])
        )
        per_ns[lq.namespace] = per_ns.get(lq.namespace, 0.0) + nominal[dominant]
        loads[lq.namespace] = (dominant, per_ns[lq.namespace], load)
    return profs, loads


def trace_for_state(
    state: ClusterState,
    n: int,
    seed: int = DEFAULT_SEED,
    days: float = DEFAULT_DAYS,
    load: float = DEFAULT_LOAD,
    warnings: list[str] | None = None,
) -> Trace:
    """A synthetic trace for the manifests' LocalQueues; what can never be
    admitted is appended to ``warnings``."""
    check = GeneratedTraceCheck()
    profs, loads = profiles_for_state(state, load, check)
    if not profs:
        from ..errors import InputError

        raise InputError("", "", "no LocalQueue points at a ClusterQueue with quota: nothing to generate for")
    trace = calibrate(generate(profs, n, seed=seed, days=days), loads, days)
    if warnings is not None:
        warnings.extend(check.warnings(trace))
    return trace


def offered_load(state: ClusterState, trace: Trace, span_s: float) -> tuple[str, float]:
    """(resource, load): the trace's work on the resource it asks most of,
    relative to the manifests' nominal quota of it over ``span_s``."""
    nominal: dict[str, float] = {}
    for cq in state.cluster_queues.values():
        for g in cq.resource_groups:
            for fq in g.flavors:
                for rq in fq.resources:
                    nominal[rq.name] = nominal.get(rq.name, 0.0) + rq.nominal
    best = ("", 0.0)
    if span_s <= 0:
        return best
    for r in trace.resources:
        if nominal.get(r, 0.0) > 0:
            x = float(work_seconds(trace, r).sum()) / (nominal[r] * span_s)
            if x > best[1]:
                best = (r, x)
    return best
