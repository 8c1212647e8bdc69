"""An admitted Workload's quota after reclaim: kueue pkg/workload/workload.go
totalRequestsFromAdmission charges the admission's resourceUsage divided by
the assignment's count and multiplied by the pod set's count after reclaim
(spec count less status.reclaimablePods, podSetsCountsAfterReclaim; integer
arithmetic, Requests.Divide then Mul) when that count is the lower one. The
admission written in the Workload's status stays as it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from kueue_fast import Cluster
from kueue_fast.commands.schedule_output import to_json, to_yaml
from kueue_fast.engine.contract import ENGINES
from kueue_fast.engine.select import native_available


def objects(reclaimable: int | None, gate: bool = True) -> list[dict[str, Any]]:
    """ClusterQueue cq with 10 cpu; "running" admitted with 4 pods of 2 cpu
    (8 cpu) of which ``reclaimable`` finished for good; "waiting" asks 4 cpu."""
    running: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "running", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "queueName": "lq",
            "podSets": [{"name": "main", "count": 4, "template": _template("2")}],
        },
        "status": {
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {"name": "main", "count": 4, "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "8"}}
                ],
            },
            "conditions": [_cond("QuotaReserved"), _cond("Admitted")],
        },
    }
    if reclaimable is not None:
        running["status"]["reclaimablePods"] = [{"name": "main", "count": reclaimable}]
    waiting = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "waiting", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:01Z"},
        "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": _template("4")}]},
    }
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "featureGates": {"ReclaimablePods": gate},
    }
    return [
        config,
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "10"}]}
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "default"},
            "spec": {"clusterQueue": "cq"},
        },
        running,
        waiting,
    ]


def _template(cpu: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def _cond(kind: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "reason": kind,
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }


def _run(objs: list[dict[str, Any]], engine: str) -> Cluster:
    if engine == "native" and not native_available():
        pytest.skip("the native engine is not built")
    cluster = Cluster.from_objects(objs, engine=engine)
    cluster.run_cycle()
    return cluster


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("reclaimable", "gate", "waiting"),
    [
        (None, True, "pending"),  # 8 + 4 > 10
        (1, True, "admitted"),  # 6 + 4 <= 10: one pod's 2 cpu released
        (1, False, "pending"),  # ReclaimablePods off: the admission's 8 cpu
    ],
)
def test_reclaimable_pods_of_an_admitted_workload(
    engine: str, reclaimable: int | None, gate: bool, waiting: str
) -> None:
    cluster = _run(objects(reclaimable, gate), engine)
    assert cluster.decision("default/waiting").state == waiting
    running = cluster.decision("default/running")
    assert running.state == "admitted"
    # the decision is the Workload's admission, unchanged
    assert [(ps.count, ps.resource_usage) for ps in running.pod_sets] == [(4, {"cpu": 8000})]


@pytest.mark.parametrize("engine", ENGINES)
def test_yaml_keeps_the_admission_and_charges_the_reclaimed_usage(engine: str) -> None:
    cluster = _run(objects(1), engine)
    docs = {(d["kind"], d.get("metadata", {}).get("name")): d for d in yaml.safe_load_all(to_yaml(cluster))}
    psa = docs["Workload", "running"]["status"]["admission"]["podSetAssignments"][0]
    assert (psa["count"], psa["resourceUsage"]) == (4, {"cpu": "8"})
    # 6 cpu for running (3 pods left) + 4 for waiting
    usage = docs["ClusterQueue", "cq"]["status"]["flavorsUsage"][0]["resources"][0]["total"]
    assert usage == "10"
    lq_usage = docs["LocalQueue", "lq"]["status"]["flavorsUsage"][0]["resources"][0]["total"]
    assert lq_usage == "10"
    # -o json (whose admitted entries come from the engine's arrays) says the same
    entries = {w["name"]: w for w in json.loads(to_json(cluster))["workloads"]}
    assert [ps["count"] for ps in entries["running"]["podSets"]] == [4]


@pytest.mark.parametrize("engine", ENGINES)
def test_usage_is_divided_then_multiplied(engine: str) -> None:
    """7001m over 4 pods (no count in the assignment: the pod set's), 3 left:
    7001 / 4 * 3 = 5250m in integers (Requests.Divide then Mul), so 4750m fits
    the 10 cpu (5250.75m would not)."""
    objs = objects(1)
    psa = objs[4]["status"]["admission"]["podSetAssignments"][0]
    del psa["count"]
    psa["resourceUsage"] = {"cpu": "7001m"}
    objs[5]["spec"]["podSets"][0]["template"] = _template("4750m")
    cluster = _run(objs, engine)
    assert cluster.decision("default/waiting").state == "admitted"
    objs[5]["spec"]["podSets"][0]["template"] = _template("4751m")
    cluster = _run(objs, engine)
    assert cluster.decision("default/waiting").state == "pending"
