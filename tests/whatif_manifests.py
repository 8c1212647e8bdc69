"""A small cluster as manifests for the what-if tests (compare, sweep, --set):
two teams in one cohort, a CPU flavor and a GPU flavor with a dotted name."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

API = "kueue.x-k8s.io/v1beta2"
JSON = dict[str, Any]


def cluster_queue(name: str, cpu: str = "8", gpu: str = "4", borrow: str | None = None) -> JSON:
    cpu_quota: JSON = {"name": "cpu", "nominalQuota": cpu}
    if borrow is not None:
        cpu_quota["borrowingLimit"] = borrow
    return {
        "apiVersion": API,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "cohortName": "research",
            "namespaceSelector": {},
            "resourceGroups": [
                {"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [cpu_quota]}]},
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {"name": "a100.large", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpu}]}
                    ],
                },
            ],
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "LowerPriority"},
        },
    }


def objects(cpu_a: str = "8", cpu_b: str = "8", gpu_a: str = "4") -> list[JSON]:
    """GPUs are what the generated traces' work is calibrated on (the dominant resource)."""
    out: list[JSON] = [
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "a100.large"}},
        {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": "low"}, "value": 100},
        {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 1000},
        cluster_queue("team-a", cpu_a, gpu_a),
        cluster_queue("team-b", cpu_b),
    ]
    for ns, cq in (("a", "team-a"), ("b", "team-b")):
        out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        out.append(
            {
                "apiVersion": API,
                "kind": "LocalQueue",
                "metadata": {"name": "default", "namespace": ns},
                "spec": {"clusterQueue": cq},
            }
        )
    return copy.deepcopy(out)


def write(path: Path, objs: list[JSON]) -> str:
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)
