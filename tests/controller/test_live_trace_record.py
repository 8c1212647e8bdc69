"""``kueue-fast trace record --kubeconfig`` on the in-process API server:
finished Workloads and Jobs become trace rows with their run times, read
only; the recorded trace replays through simulate and compare on the same
cluster. (From files: tests/test_trace_record.py.)"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kf_harness import JOBS, WORKLOADS, Harness, cluster_queue, flavor, job, local_queue

from kueue_fast.commands.cli import main
from kueue_fast.kube.snapshot import USER_AGENT
from kueue_fast.simulate.trace_files import read_trace

JSON = dict[str, Any]


def parse(t: str) -> dt.datetime:
    return dt.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)


def fmt(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def cond(kind: str, t: dt.datetime, status: str = "True") -> JSON:
    return {"type": kind, "status": status, "reason": kind, "message": "m", "lastTransitionTime": fmt(t)}


def workload(ns: str, name: str, cpu: str) -> JSON:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "queueName": "lq",
            "priority": 10,
            "podSets": [
                {
                    "name": "main",
                    "count": 2,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
                            ],
                        }
                    },
                }
            ],
        },
    }


def admission(cq: str, rf: str, cpu: str) -> JSON:
    return {
        "clusterQueue": cq,
        "podSetAssignments": [
            {"name": "main", "count": 2, "flavors": {"cpu": rf}, "resourceUsage": {"cpu": cpu}}
        ],
    }


def test_trace_record_reads_the_cluster_read_only_and_replays(
    fake_cluster: Harness, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = fake_cluster
    ns = h.namespace("rec")
    h.create(flavor("rf"))
    h.create(cluster_queue("cq", {"rf": {"cpu": "8"}}))
    h.create(local_queue(ns, "lq", "cq"))
    # done: admitted 60 s after its creation, finished 3660 s after: a run of 3600 s
    done = h.create(workload(ns, "done", "1"))
    c0 = parse(done["metadata"]["creationTimestamp"])
    status = {
        "admission": admission("cq", "rf", "2"),
        "conditions": [
            cond("QuotaReserved", c0 + dt.timedelta(seconds=60)),
            cond("Admitted", c0 + dt.timedelta(seconds=60)),
            cond("Finished", c0 + dt.timedelta(seconds=3660)),
        ],
    }
    h.patch(WORKLOADS, "done", {"status": status}, ns, sub="status")
    # trainer: a Job whose Workload is gone; the Job ran from +100 s to +1900 s
    trainer = h.create(job(ns, "trainer", "lq", cpu="500m", parallelism=3, suspend=False))
    c1 = parse(trainer["metadata"]["creationTimestamp"])
    finished = c1 + dt.timedelta(seconds=1900)
    job_status = {
        "startTime": fmt(c1 + dt.timedelta(seconds=100)),
        "completionTime": fmt(finished),
        "succeeded": 3,
        "conditions": [cond("SuccessCriteriaMet", finished), cond("Complete", finished)],
    }
    h.patch(JOBS, "trainer", {"status": job_status}, ns, sub="status")
    # running: admitted 30 s after its creation, not finished; waiting: never admitted
    running = h.create(workload(ns, "running", "1"))
    c2 = parse(running["metadata"]["creationTimestamp"])
    status = {
        "admission": admission("cq", "rf", "2"),
        "conditions": [
            cond("QuotaReserved", c2 + dt.timedelta(seconds=30)),
            cond("Admitted", c2 + dt.timedelta(seconds=30)),
        ],
    }
    h.patch(WORKLOADS, "running", {"status": status}, ns, sub="status")
    h.create(workload(ns, "waiting", "1"))

    until = c0 + dt.timedelta(hours=2)
    out, config = tmp_path / "week.csv", tmp_path / "config.yaml"
    args = ["trace", "record", "--kubeconfig", h.kubeconfig, "--since", fmt(c0), "--until", fmt(until)]
    assert main([*args, "--output-file", str(out), "--write-configuration", str(config)]) == 0
    err = capsys.readouterr().err
    assert "recorded 3 workloads of 1 LocalQueue(s)" in err
    assert "2 finished, 1 still running" in err and "left out: 1 still pending at the end" in err
    trace = read_trace(out)
    assert trace.window_s == 7200
    rows = {trace.name_of(i): i for i in range(len(trace))}
    lonely = next(n for n in rows if n.startswith("job-trainer-"))
    got = {
        n: (float(trace.arrival_s[i]), float(trace.duration_s[i]), int(trace.count[i]))
        for n, i in rows.items()
    }
    assert got == {
        "done": (0.0, 3600.0, 2),
        lonely: ((c1 - c0).total_seconds(), 1800.0, 3),
        "running": ((c2 - c0).total_seconds(), (until - c2).total_seconds() - 30, 2),
    }
    assert trace.requests[rows[lonely], trace.resources.index("cpu")] == 500
    # read only
    assert h.fake is not None
    verbs = {v for (agent, v, _, _), n in h.fake.request_counts.items() if agent == USER_AGENT and n}
    assert verbs <= {"get", "list"}, verbs

    kinds = sorted(d["kind"] for d in yaml.safe_load_all(config.read_text()))
    assert kinds == ["ClusterQueue", "LocalQueue", "Namespace", "Namespace", "ResourceFlavor"]

    # replay on the configuration recorded, as it is and with twice the quota
    small = ["--no-progress", "--no-report", "--drain"]
    assert main(["simulate", str(config), "--trace", str(out), *small, "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["totals"]["workloads"] == 3 and doc["totals"]["finished"] == 3
    assert doc["offered_load"]["cluster_queues"]["cq"]["capacity"] == 8000
    setting = "cq/cq.spec.resourceGroups[0].flavors[rf].resources[cpu].nominalQuota=16"
    args = ["compare", str(config), "--set", setting, "--trace", str(out), *small]
    assert main([*args, "--workers", "1"]) == 0
    assert "nominalQuota: 8 -> 16" in capsys.readouterr().out
