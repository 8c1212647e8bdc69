"""`kueue-fast status`: the pending workloads of a cluster's queues in the
order Kueue would admit them, with the positions Kueue's visibility API gives
(pkg/visibility/storage pending_workloads_cq.go / _lq.go: from 0, counted in
the ClusterQueue's order) and why each waits; read-only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kf_harness import Harness, job, priority_class, wait_for
from test_e2e import running, setup_queues

from kueue_fast.api.errors import InputError
from kueue_fast.commands.cli import main
from kueue_fast.commands.status import report, to_table
from kueue_fast.kube.objects import build_state

JSON = dict[str, Any]
B2 = "kueue.x-k8s.io/v1beta2"
NOW = 1_704_067_200 * 10**9 + 3600 * 10**9  # 2024-01-01T01:00:00Z


def rf() -> JSON:
    return {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": "rf"}}


def cq(name: str, cpu: str, strategy: str = "BestEffortFIFO") -> JSON:
    return {
        "apiVersion": B2,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "queueingStrategy": strategy,
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "rf", "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
                }
            ],
        },
    }


def lq(ns: str, name: str, cq_name: str) -> JSON:
    return {
        "apiVersion": B2,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterQueue": cq_name},
    }


def wl(
    ns: str, name: str, queue: str, cpu: str, *, priority: int = 0, second: int = 0, admitted_in: str = ""
) -> JSON:
    obj: JSON = {
        "apiVersion": B2,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": f"2024-01-01T00:00:{second:02d}Z"},
        "spec": {
            "queueName": queue,
            "priority": priority,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
                    },
                }
            ],
        },
    }
    if admitted_in:
        t = "2024-01-01T00:00:00Z"
        obj["status"] = {
            "admission": {
                "clusterQueue": admitted_in,
                "podSetAssignments": [
                    {"name": "main", "count": 1, "flavors": {"cpu": "rf"}, "resourceUsage": {"cpu": cpu}}
                ],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "",
                    "lastTransitionTime": t,
                },
                {
                    "type": "Admitted",
                    "status": "True",
                    "reason": "Admitted",
                    "message": "",
                    "lastTransitionTime": t,
                },
            ],
        }
    else:
        t = "2024-01-01T00:00:30Z"
        obj["status"] = {
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "False",
                    "reason": "WaitingForQuota",
                    "message": "couldn't assign flavors to pod set main: insufficient unused quota",
                    "lastTransitionTime": t,
                }
            ]
        }
    return obj


def objects(*docs: JSON) -> dict[str, list[JSON]]:
    kinds = {"ResourceFlavor": "flavor", "ClusterQueue": "cq", "LocalQueue": "lq", "Workload": "workload"}
    out: dict[str, list[JSON]] = {}
    for d in docs:
        out.setdefault(kinds[d["kind"]], []).append(d)
    return out


def positions(items: list[JSON]) -> list[tuple[str, int, int]]:
    return [(i["metadata"]["name"], i["positionInClusterQueue"], i["positionInLocalQueue"]) for i in items]


def test_order_and_positions_are_kueues() -> None:
    """Priority first, then creation (the queue order timestamp), then
    namespace and name; positions from 0 in the ClusterQueue and, counted in
    the same order, in each LocalQueue."""
    snap = build_state(
        objects(
            rf(),
            cq("cq", "2"),
            lq("a", "lq", "cq"),
            lq("b", "lq", "cq"),
            wl("a", "running", "lq", "2", admitted_in="cq"),
            wl("a", "old-low", "lq", "1", priority=1, second=1),
            wl("b", "new-high", "lq", "1", priority=100, second=5),
            wl("a", "new-low", "lq", "1", priority=1, second=3),
            wl("b", "old-high", "lq", "1", priority=100, second=2),
        )
    )
    doc = report(snap, now_ns=NOW)
    (q,) = doc["clusterQueues"]
    assert positions(q["pendingWorkloads"]) == [
        ("old-high", 0, 0),
        ("new-high", 1, 1),
        ("old-low", 2, 0),
        ("new-low", 3, 1),
    ]
    head, second = q["pendingWorkloads"][:2]
    assert head["explanation"]["kind"] == "Head"
    assert "needs 1 cpu in flavor rf, 0 free now" in head["explanation"]["summary"]
    assert (
        second["explanation"]["kind"] == "BehindHead"
        and second["explanation"]["queue"]["head"] == "b/old-high"
    )
    assert (head["reason"], head["priority"], head["localQueueName"]) == ("WaitingForQuota", 100, "lq")
    # one LocalQueue: its workloads, the ClusterQueue's positions kept
    doc = report(snap, local_queue=("a", "lq"), now_ns=NOW)
    assert doc["localQueue"] == {"namespace": "a", "name": "lq", "clusterQueue": "cq"}
    assert positions(doc["pendingWorkloads"]) == [("old-low", 2, 0), ("new-low", 3, 1)]
    table = to_table(report(snap, now_ns=NOW), NOW)
    assert table.splitlines()[0] == "ClusterQueue cq (BestEffortFIFO): 4 pending"
    assert table.splitlines()[1].split() == [
        "POSITION",
        "IN",
        "LQ",
        "WORKLOAD",
        "LOCALQUEUE",
        "PRIORITY",
        "AGE",
        "WHY",
    ]
    assert table.splitlines()[2].startswith(
        "0         0      b/old-high  lq          100       59m  next in line"
    )


def test_strict_fifo_head_that_never_fits_and_workloads_in_no_queue() -> None:
    snap = build_state(
        objects(
            rf(),
            cq("strict", "2", "StrictFIFO"),
            lq("a", "lq", "strict"),
            lq("a", "orphan", "missing-cq"),
            wl("a", "huge", "lq", "3", second=1),
            wl("a", "small", "lq", "1", second=2),
            wl("a", "lost", "orphan", "1", second=3),
        )
    )
    doc = report(snap, now_ns=NOW)
    (q,) = doc["clusterQueues"]
    huge, small = q["pendingWorkloads"]
    assert "can never fit" in huge["explanation"]["summary"]
    assert small["explanation"]["kind"] == "BlockedByStrictFIFOHead"
    (lost,) = doc["notQueued"]
    assert lost["metadata"]["name"] == "lost" and lost["positionInClusterQueue"] == -1
    assert "missing-cq" in lost["explanation"]["summary"]
    assert (
        report(snap, local_queue=("a", "orphan"), now_ns=NOW)["pendingWorkloads"][0]["metadata"]["name"]
        == "lost"
    )


def test_unknown_queues_are_input_errors() -> None:
    snap = build_state(objects(rf(), cq("cq", "1")))
    with pytest.raises(InputError, match="ClusterQueue/nope: not found"):
        report(snap, cluster_queue="nope")
    with pytest.raises(InputError, match="LocalQueue/a/nope: not found"):
        report(snap, local_queue=("a", "nope"))


def test_an_eviction_in_progress_holds_its_quota() -> None:
    """The controller releases a victim's quota once its job stopped: until
    then the pending workloads do not fit in it."""
    victim = wl("a", "victim", "lq", "2", admitted_in="cq")
    victim["status"]["conditions"].append(
        {
            "type": "Evicted",
            "status": "True",
            "reason": "Preempted",
            "message": "m",
            "lastTransitionTime": "2024-01-01T00:00:40Z",
        }
    )
    snap = build_state(
        objects(rf(), cq("cq", "2"), lq("a", "lq", "cq"), victim, wl("a", "next", "lq", "2", second=1))
    )
    assert set(snap.evictions) == {"a/victim"}
    (q,) = report(snap, now_ns=NOW)["clusterQueues"]
    (nxt,) = q["pendingWorkloads"]
    assert "0 free now" in nxt["explanation"]["summary"]


def test_status_reads_the_cluster_and_writes_nothing(
    cluster: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    h = cluster
    ns, rf_name, cq_name = setup_queues(h, cpu="1")
    low, high = h.name("low"), h.name("high")
    h.create(priority_class(low, 10))
    h.create(priority_class(high, 100))
    h.controller()
    first = job(ns, "first", "lq", priority=low)
    first["spec"]["template"]["spec"]["containers"][0]["command"] = [
        "sh",
        "-c",
        "sleep 600",
    ]  # holds the quota
    h.create(first)
    wait_for(lambda: running(h, ns, "first"), what="first running")
    h.create(job(ns, "second", "lq", priority=low))
    h.create(job(ns, "urgent", "lq", priority=high))
    wait_for(lambda: h.workload_of(ns, "second") and h.workload_of(ns, "urgent"), what="their workloads")
    writes_before = _writes(h)
    assert main(["status", "--kubeconfig", h.kubeconfig, "--cluster-queue", cq_name, "-o", "json"]) == 0
    out = capsys.readouterr()
    (q,) = json.loads(out.out)["clusterQueues"]
    got = [
        (i["metadata"]["ownerReferences"][0]["name"], i["positionInClusterQueue"], i["priority"])
        for i in q["pendingWorkloads"]
    ]
    assert got == [("urgent", 0, 100), ("second", 1, 10)]
    assert q["pendingWorkloads"][1]["explanation"]["queue"]["head"].endswith(
        h.workload_of(ns, "urgent")["metadata"]["name"]
    )  # type: ignore[index]
    assert _writes(h) == writes_before  # read-only
    assert main(["status", "--kubeconfig", h.kubeconfig, "--local-queue", "lq", "-n", ns, "-o", "yaml"]) == 0
    doc = yaml.safe_load(capsys.readouterr().out)
    assert [i["positionInLocalQueue"] for i in doc["pendingWorkloads"]] == [0, 1]
    assert main(["status", "--kubeconfig", h.kubeconfig]) == 0
    assert f"ClusterQueue {cq_name} (BestEffortFIFO): 2 pending" in capsys.readouterr().out


def _writes(h: Harness) -> int:
    if h.fake is None:
        return 0
    return sum(n for (verb, _), n in h.fake.counts("kueue-fast-status").items() if verb != "list")


def test_status_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_cluster: Harness
) -> None:
    assert main(["status", "--kubeconfig", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "no such file" in err[0]
    assert main(["status", "--kubeconfig", fake_cluster.kubeconfig, "--cluster-queue", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: ClusterQueue/nope: not found"]
