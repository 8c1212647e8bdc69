"""``kueue-fast trace record`` from files (``kubectl get workloads,jobs -A -o
yaml``): arrivals, run times, pod sets, placement, priority, LocalQueue, what
is left out and why; and the recorded trace replays through simulate.
The live-cluster path is in tests/controller/test_live_trace_record.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueue_fast.commands.cli import main
from kueue_fast.simulate.record import record

API = "kueue.x-k8s.io/v1beta2"
T0 = "2025-03-03T08:00:00Z"


def at(seconds: int) -> str:
    """T0 + seconds, RFC 3339."""
    import datetime as dt

    base = dt.datetime(2025, 3, 3, 8, 0, 0, tzinfo=dt.timezone.utc)
    return (base + dt.timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def cond(kind: str, t: int, status: str = "True") -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": kind, "message": "", "lastTransitionTime": at(t)}


def pod_spec(cpu: str, tolerate_spot: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if tolerate_spot:
        spec["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]
        spec["nodeSelector"] = {"lifecycle": "spot"}
    return spec


def workload(
    name: str,
    created: int,
    conditions: list[dict[str, Any]],
    *,
    ns: str = "ml",
    queue: str = "lq",
    count: int = 1,
    cpu: str = "2",
    priority: int = 0,
    owner: str | None = None,
    tolerate_spot: bool = False,
) -> dict[str, Any]:
    md: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "creationTimestamp": at(created),
        "uid": f"uid-{name}",
    }
    if owner:
        md["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": owner,
                "uid": f"uid-{owner}",
                "controller": True,
            }
        ]
    status: dict[str, Any] = {"conditions": conditions}
    if any(c["type"] == "QuotaReserved" and c["status"] == "True" for c in conditions):
        status["admission"] = {
            "clusterQueue": "cq",
            "podSetAssignments": [{"name": "main", "count": count, "flavors": {"cpu": "default"}}],
        }
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": md,
        "spec": {
            "queueName": queue,
            "priority": priority,
            "podSets": [{"name": "main", "count": count, "template": {"spec": pod_spec(cpu, tolerate_spot)}}],
        },
        "status": status,
    }


def job(name: str, created: int, status: dict[str, Any], queue: str = "lq", cpu: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"uid-{name}",
            "creationTimestamp": at(created),
            "labels": {"kueue.x-k8s.io/queue-name": queue},
        },
        "spec": {"parallelism": 2, "completions": 2, "template": {"spec": pod_spec(cpu)}},
        "status": status,
    }


def admitted(t: int) -> list[dict[str, Any]]:
    return [cond("QuotaReserved", t), cond("Admitted", t)]


def history() -> list[dict[str, Any]]:
    """A week's end in a cluster, by hand (seconds after T0):

    * done-1: created 0, admitted 60, finished 3660: 3600 s, 4 pods of 2 cpu,
      priority 100, tolerates spot and selects spot nodes;
    * job-w: the Workload of Job "trainer": its conditions say admitted 120,
      finished 7320, the Job says started 150, completed 7350: 7200 s from
      the Job; 1 pod of 2 cpu;
    * lonely: a Job whose Workload is not in the files (the loader makes it),
      created 200, started 300, completed 1300: 1000 s, 2 pods of 1 cpu;
    * running: created 500, admitted 600, not finished: runs up to the end
      of the recording (the latest time in the files, 7350): 6750 s, a lower bound;
    * waiting: created 700, never admitted: left out (pending);
    * rejected: created 800, finished at 900 without an admission: left out."""
    return [
        workload(
            "done-1", 0, [*admitted(60), cond("Finished", 3660)], count=4, priority=100, tolerate_spot=True
        ),
        workload("job-w", 100, [*admitted(120), cond("Finished", 7320)], owner="trainer"),
        job("trainer", 100, {"startTime": at(150), "completionTime": at(7350)}),
        job("lonely", 200, {"startTime": at(300), "completionTime": at(1300)}),
        workload("running", 500, admitted(600), ns="data", queue="etl"),
        workload("waiting", 700, [cond("QuotaReserved", 700, "False")]),
        workload("rejected", 800, [cond("Finished", 900)]),
    ]


def test_record_from_objects_by_hand() -> None:
    rec = record(history())
    t = rec.trace
    rows = {t.name_of(i): i for i in range(len(t))}
    # the Workload Kueue makes for Job "lonely" is named job-lonely-<hash>
    lonely = next(n for n in rows if n.startswith("job-lonely-"))
    assert set(rows) == {"done-1", "job-w", lonely, "running"}
    got = {n: (t.arrival_s[i], t.duration_s[i]) for n, i in rows.items()}
    assert got == {"done-1": (0, 3600), "job-w": (100, 7200), lonely: (200, 1000), "running": (500, 6750)}
    i = rows["done-1"]
    assert (int(t.count[i]), int(t.priority[i])) == (4, 100)
    assert t.requests[i, t.resources.index("cpu")] == 2000
    p = t.placements[int(t.placement_ids()[i])]
    assert dict(p.node_selector) == {"lifecycle": "spot"} and p.tolerations[0].key == "spot"
    assert (
        t.queues[t.queue[rows["running"]]] == "etl" and t.namespaces[t.namespace[rows["running"]]] == "data"
    )
    assert (rec.finished, rec.running) == (3, 1)
    assert rec.left_out == {"still pending at the end (run time unknown)": 1, "finished without running": 1}
    assert t.window_s == 7350
    assert rec.summary() == (
        "recorded 4 workloads of 2 LocalQueue(s) created from 2025-03-03T08:00:00Z to "
        "2025-03-03T10:02:30Z (2.0h): 3 finished, 1 still running (their run time so far is their "
        "duration: a lower bound); left out: 1 still pending at the end (run time unknown), "
        "1 finished without running"
    )


def test_record_window_since_and_until() -> None:
    """From 150 s (850 s before --until) to 1000 s after T0: done-1 and job-w
    were created before; lonely (started 300, completes 1300) and running
    (started 600) are still running at 1000; waiting never started; rejected
    finished without running."""
    rec = record(history(), until_ns=_ns(1000), since_before_s=850)
    t = rec.trace
    got = {t.name_of(i): (t.arrival_s[i], t.duration_s[i]) for i in range(len(t))}
    lonely = next(n for n in got if n.startswith("job-lonely-"))
    assert got == {lonely: (50, 700), "running": (350, 400)}
    assert (rec.finished, rec.running) == (0, 2)
    assert rec.left_out == {
        "created outside the window": 2,
        "still pending at the end (run time unknown)": 1,
        "finished without running": 1,
    }
    assert t.window_s == 850


def _ns(seconds: int) -> int:
    """T0 + seconds in ns since the epoch."""
    return (1740988800 + seconds) * 1_000_000_000


def test_trace_record_cli_writes_a_trace_that_simulate_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": history()}))
    out = tmp_path / "week.jsonl"
    assert main(["trace", "record", str(dump), "--output-file", str(out)]) == 0
    err = capsys.readouterr().err
    assert "recorded 4 workloads of 2 LocalQueue(s)" in err and f"wrote {out}: 4 workloads" in err
    lines = out.read_text().splitlines()
    assert json.loads(lines[0]) == {"window": 7350}
    line = json.loads(lines[1])
    assert line["name"] == "done-1" and line["podSets"][0]["tolerations"] == [
        {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}
    ]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    assert (
        main(["simulate", str(cluster), "--trace", str(out), "--no-report", "--no-progress", "--drain"]) == 0
    )
    assert "4 workloads" in capsys.readouterr().out


CLUSTER = f"""\
apiVersion: {API}
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: {API}
kind: ResourceFlavor
metadata: {{name: spot}}
spec:
  nodeLabels: {{lifecycle: spot}}
  nodeTaints: [{{key: spot, value: "true", effect: NoSchedule}}]
---
apiVersion: {API}
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources: [{{name: cpu, nominalQuota: 4}}, {{name: memory, nominalQuota: 16Gi}}]
    - name: spot
      resources: [{{name: cpu, nominalQuota: 8}}, {{name: memory, nominalQuota: 16Gi}}]
---
apiVersion: {API}
kind: LocalQueue
metadata: {{name: lq, namespace: ml}}
spec: {{clusterQueue: cq}}
---
apiVersion: {API}
kind: LocalQueue
metadata: {{name: etl, namespace: data}}
spec: {{clusterQueue: cq}}
"""


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "give the files to read or --kubeconfig, one of them"),
        (["--since", "yesterday"], "--since: expects an RFC 3339 time such as 2025-01-06T00:00:00Z"),
        (
            ["--until", "2025-03-03T08:00:00Z", "--since", "2025-03-04T00:00:00Z"],
            "--until: must be after --since",
        ),
    ],
)
def test_trace_record_bad_options_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump_all(history()))
    files = [str(dump)] if args else []
    assert main(["trace", "record", *files, *args, "--output-file", str(tmp_path / "t.csv")]) == 2
    assert needle in capsys.readouterr().err
