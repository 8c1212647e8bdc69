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
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..api.model import ClusterState
from ..loader import build_state
from .defaults import DEFAULT_DAYS, DEFAULT_SEED, DEFAULT_START_NS, DEFAULT_WORKLOADS
from .trace import Trace, work_seconds
from .trace_generator import PodSetShape, QueueProfile, Template, generate

__all__ = [
    "DEFAULT_DAYS",
    "DEFAULT_START_NS",
    "DEFAULT_WORKLOADS",
    "default_objects",
    "default_state",
    "default_trace",
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
    return Template((PodSetShape("main", pods, req, min_count),), prio, weight, minutes * 60.0)


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
    if any(t.gpu) and any("nvidia.com/gpu" in ps.requests for tm in t.templates for ps in tm.pod_sets):
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
