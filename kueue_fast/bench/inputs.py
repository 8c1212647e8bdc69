"""The benchmarks' inputs: generated clusters and workloads (``drain_case``,
``long_drain_case``, ``preemption_case``), the same as Kueue manifests
(``drain_objects``) and as files (``write_case_files``, ``write_load_files``)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..simulate.trace import Trace

NS = 1_000_000_000
# Creation times of generated workloads: 2025-01-06 00:00 UTC plus their index.
BASE_NS = 1736121600 * NS
GI = 1 << 30
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
FLAVORS = ("on-demand", "spot", "reserved")
PRIORITIES = (50, 100, 200)


@dataclass
class Case:
    """Queues as manifests, workloads as a trace (arrival = creation order)."""

    objects: list[dict[str, Any]]
    trace: Trace
    admitted: int = 0  # the first `admitted` workloads of the trace hold quota from the start
    admitted_cq: list[str] = field(default_factory=list)
    admitted_flavor: str = ""


def _cq(
    name: str,
    cohort: str,
    flavors: list[tuple[str, dict[str, str]]],
    within: str = "LowerPriority",
    reclaim: str = "Any",
) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "cohort": cohort,
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": list(RESOURCES),
                    "flavors": [
                        {"name": f, "resources": [{"name": r, "nominalQuota": q[r]} for r in RESOURCES]}
                        for f, q in flavors
                    ],
                }
            ],
            "preemption": {"withinClusterQueue": within, "reclaimWithinCohort": reclaim},
        },
    }


def _common(n_cq: int, cq_names: list[str]) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": f}}
        for f in FLAVORS
    ]
    for i, name in enumerate(cq_names):
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "LocalQueue",
                "metadata": {"name": "lq", "namespace": f"ns-{i:04d}"},
                "spec": {"clusterQueue": name},
            }
        )
    del n_cq
    return objs


def _trace(
    ns_of: np.ndarray[Any, Any],
    n_ns: int,
    priority: np.ndarray[Any, Any],
    count: np.ndarray[Any, Any],
    requests: np.ndarray[Any, Any],
) -> Trace:
    n = ns_of.size
    return Trace(
        arrival_s=np.arange(n, dtype=np.float64),
        duration_s=np.full(n, 600.0),
        namespace=ns_of.astype(np.int32),
        queue=np.zeros(n, dtype=np.int32),
        priority=priority.astype(np.int64),
        ps_offsets=np.arange(n + 1, dtype=np.int64),
        ps_name=np.zeros(n, dtype=np.int32),
        count=count.astype(np.int32),
        min_count=np.full(n, -1, dtype=np.int32),
        requests=requests.astype(np.int64),
        resources=list(RESOURCES),
        namespaces=[f"ns-{i:04d}" for i in range(n_ns)],
        queues=["lq"],
    )


def drain_case(
    n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000, seed: int = 0, quota_scale: int = 1
) -> Case:
    """The drain benchmark: ClusterQueues in cohorts of equal size, each with
    2 or 3 flavors of cpu, memory and GPUs, and pending workloads of three
    sizes and three priorities (Kueue's own scalability test has the same
    shape) spread evenly over the ClusterQueues.

    quota_scale multiplies the cpu and memory quotas: at 1 a ClusterQueue
    admits about a fifth of its workloads (47 cycles until stable); at 4
    (``long_drain_case``) most of them, one head per cycle, for 100+ cycles."""
    rng = np.random.default_rng(seed)
    cq_names = [f"cq-{i:04d}" for i in range(n_cq)]
    objs = _common(n_cq, cq_names)
    for i, name in enumerate(cq_names):
        n_flavors = 2 + (i % 2)
        flavors = [
            (
                f,
                {
                    "cpu": str((20 + 10 * (i % 3)) * quota_scale),
                    "memory": f"{(64 + 32 * (i % 3)) * quota_scale}Gi",
                    "nvidia.com/gpu": str(2 * k),
                },
            )
            for k, f in enumerate(FLAVORS[:n_flavors])
        ]
        # Reclaim Any would not settle on this input (Kueue keeps evicting and
        # re-admitting the same borrowers, cycle after cycle): LowerPriority does.
        objs.append(_cq(name, f"cohort-{i % n_cohorts:03d}", flavors, reclaim="LowerPriority"))
    # three workload classes: small (60%), medium (30%), large (10%)
    cls = rng.choice(3, size=n_workloads, p=[0.6, 0.3, 0.1])
    cpu = np.array([500, 2000, 8000])[cls]
    mem = np.array([1, 4, 16])[cls] * GI
    gpu = np.where((cls == 2) & (rng.random(n_workloads) < 0.5), 1, 0)
    count = np.array([1, 2, 4])[cls]
    prio = np.asarray(PRIORITIES)[rng.choice(3, size=n_workloads, p=[0.5, 0.3, 0.2])]
    ns_of = np.arange(n_workloads) % n_cq
    return Case(objs, _trace(ns_of, n_cq, prio, count, np.stack([cpu, mem, gpu], axis=1)))


def long_drain_case(
    n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000, seed: int = 0
) -> Case:
    """The drain case with quotas close to each ClusterQueue's demand (4x
    the drain case's cpu and memory): most workloads fit, so every queue
    admits a head per cycle and the cycles run 100+ times until stable,
    about 90k heads popped at 100k workloads. (Smaller quotas would not do:
    queues fill sooner and the run is shorter, 30 cycles at half the quota.)"""
    return drain_case(n_cq, n_cohorts, n_workloads, seed, quota_scale=4)


def preemption_case(n_cq: int = 100, n_admitted: int = 10_000, n_arrivals: int = 1000) -> Case:
    """The preemption-heavy case: one cohort of n_cq ClusterQueues,
    each with 100 cpu of nominal quota; n_admitted 1-cpu low-priority
    workloads hold the whole cohort, the first half of the ClusterQueues
    borrowing what the second half lends; then n_arrivals 4-cpu
    high-priority workloads, spread evenly, must preempt: in borrowing
    ClusterQueues within the queue, in lending ones by reclaim."""
    cq_names = [f"cq-{i:04d}" for i in range(n_cq)]
    objs = _common(n_cq, cq_names)
    per_cq = n_admitted // n_cq
    nominal = per_cq  # one cpu per admitted workload fills the cohort exactly
    for name in cq_names:
        q = {"cpu": str(nominal), "memory": f"{4 * nominal}Gi", "nvidia.com/gpu": "0"}
        objs.append(_cq(name, "cohort", [("on-demand", q)]))
    # admitted: half the queues hold 1.5x their nominal quota, the other half 0.5x
    half = n_cq // 2
    held = np.array([per_cq + per_cq // 2] * half + [per_cq - per_cq // 2] * (n_cq - half))
    adm_ns = np.repeat(np.arange(n_cq), held)
    adm_ns = adm_ns[:n_admitted]
    arr_ns = np.arange(n_arrivals) % n_cq
    ns_of = np.concatenate([adm_ns, arr_ns])
    n = ns_of.size
    prio = np.concatenate([np.full(adm_ns.size, 10), np.full(n_arrivals, 1000)])
    cpu = np.concatenate([np.full(adm_ns.size, 1000), np.full(n_arrivals, 4000)])
    mem = cpu // 1000 * GI
    req = np.stack([cpu, mem, np.zeros(n, dtype=np.int64)], axis=1)
    case = Case(objs, _trace(ns_of, n_cq, prio, np.ones(n), req))
    case.admitted = int(adm_ns.size)
    case.admitted_cq = [cq_names[i] for i in adm_ns.tolist()]
    case.admitted_flavor = "on-demand"
    return case


def drain_objects(case: Case) -> list[dict[str, Any]]:
    """The case as Kueue manifests, Workloads included (for loading benchmarks)."""
    from ..api.quantity import format_quantity

    t = case.trace
    objs = list(case.objects)
    text = {
        r: {int(v): format_quantity(r, int(v)) for v in np.unique(t.requests[:, j]).tolist()}
        for j, r in enumerate(t.resources)
    }
    for i in range(len(t)):
        requests = {r: text[r][int(t.requests[i, j])] for j, r in enumerate(t.resources) if t.requests[i, j]}
        ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BASE_NS // NS + i))
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "Workload",
                "metadata": {
                    "name": f"wl-{i:07d}",
                    "namespace": t.namespaces[t.namespace[i]],
                    "creationTimestamp": ts,
                },
                "spec": {
                    "queueName": "lq",
                    "priority": int(t.priority[i]),
                    "podSets": [
                        {
                            "name": "main",
                            "count": int(t.count[i]),
                            "template": {
                                "spec": {
                                    "containers": [
                                        {"name": "c", "image": "busybox", "resources": {"requests": requests}}
                                    ]
                                }
                            },
                        }
                    ],
                },
            }
        )
    return objs


def drain_size(n_workloads: int) -> dict[str, int]:
    """The drain case's shape at n_workloads: 100 workloads per ClusterQueue,
    10 ClusterQueues per cohort (at most 1000 and 100)."""
    return {
        "n_cq": min(1000, max(1, n_workloads // 100)) if n_workloads < 100_000 else 1000,
        "n_cohorts": min(100, max(1, n_workloads // 1000)) if n_workloads < 100_000 else 100,
        "n_workloads": n_workloads,
    }


# The files write_case_files can write: format -> file name suffix. "yaml" is
# block style (kubectl's); "flow-yaml" is PyYAML's default style, where every
# collection of scalars is a flow collection (``metadata: {name: wl-0,
# namespace: ns-0306, creationTimestamp: '2025-01-06T00:00:00Z'}``,
# ``requests: {cpu: 500m, memory: 1Gi}``), as people write them by hand.
CASE_FILES = {"yaml": "yaml", "flow-yaml": "flow.yaml", "json": "json"}


def write_case_files(
    case: Case,
    directory: str,
    stem: str = "workloads",
    json_indent: int | None = 4,
    formats: tuple[str, ...] = ("yaml", "json"),
) -> dict[str, str]:
    """The case's manifests (Workloads included) in each of ``formats``
    (CASE_FILES): a YAML stream or a JSON List, {format: path}. json_indent 4
    is ``kubectl get -o json``'s layout; None writes it compact."""
    import yaml

    objs = drain_objects(case)
    paths = {fmt: os.path.join(directory, f"{stem}.{CASE_FILES[fmt]}") for fmt in formats}
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    for fmt, path in paths.items():
        with open(path, "w", encoding="utf-8") as f:
            if fmt == "json":
                json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f, indent=json_indent)
            else:
                yaml.dump_all(
                    objs,
                    f,
                    Dumper=dumper,
                    sort_keys=False,
                    default_flow_style=None if fmt == "flow-yaml" else False,
                )
    return paths


def write_load_files(directory: str, n_workloads: int) -> dict[str, str]:
    """The drain case's manifests with n_workloads Workloads as one YAML
    stream and one JSON List (``kubectl get -o json``): {"yaml": path, "json": path}."""
    size = {"n_cq": min(1000, max(1, n_workloads // 10)), "n_cohorts": min(100, max(1, n_workloads // 100))}
    return write_case_files(drain_case(n_workloads=n_workloads, **size), directory)
