"""simulate --existing-runtime: the Workloads a live cluster already holds
finish ("what would Kueue do this week"), and the clock
starts at the snapshot's time."""

from __future__ import annotations

from whatif_manifests import objects, write

from kueue_fast.commands.simulate import run
from kueue_fast.loader import parse_time_ns

NS = 1_000_000_000


def workload(name: str, created: str, admitted_at: str | None) -> dict:
    wl: dict = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "a", "creationTimestamp": created},
        "spec": {
            "queueName": "default",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
                    },
                }
            ],
        },
    }
    if admitted_at:
        wl["status"] = {
            "admission": {
                "clusterQueue": "team-a",
                "podSetAssignments": [
                    {"name": "main", "count": 1, "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "1"}}
                ],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "",
                    "lastTransitionTime": admitted_at,
                }
            ],
        }
    return wl


def test_the_clusters_workloads_finish_after_the_given_run_time(tmp_path):
    docs = objects() + [
        workload("running", "2026-01-01T00:00:00Z", "2026-01-01T00:30:00Z"),
        workload("queued", "2026-01-01T01:00:00Z", None),
    ]
    path = write(tmp_path / "snapshot.yaml", docs)
    start = parse_time_ns("2026-01-01T01:00:00Z", "", "")  # the latest creation: the snapshot's time
    out = run(
        files=[path], n=1, days=0.1, report_dir=None, engine="reference", drain=True, existing_runtime_s=3600
    )
    r = out.result
    assert r.start_ns == start
    names = [m[1] for m in r.manifest]
    finished = dict(zip(names, r.workloads.finished_ns[: len(names)].tolist(), strict=True))
    assert finished["running"] == start + 1800 * NS  # ran 30 minutes before the start, 30 more after
    assert finished["queued"] == start + 3600 * NS  # admitted at the start, runs its hour
    # without the option they hold their quota for the whole run (as before)
    out = run(files=[path], n=1, days=0.1, report_dir=None, engine="reference", drain=True)
    assert (out.result.workloads.finished_ns[:2] == -1).all()


def test_the_headline_says_which_workloads_of_the_manifests_hold_quota_and_until_when(tmp_path, capsys):
    """issue 20, item 6: one Workload holds quota at the snapshot's time; the
    queued one is admitted in the run and, without --existing-runtime, never
    finishes either: both are said."""
    import json

    from kueue_fast.commands.cli import main

    docs = objects() + [
        workload("running", "2026-01-01T00:00:00Z", "2026-01-01T00:30:00Z"),
        workload("queued", "2026-01-01T01:00:00Z", None),
    ]
    path = write(tmp_path / "snapshot.yaml", docs)
    argv = ["simulate", path, "-n", "5", "--days", "0.1", "--no-progress", "--report", str(tmp_path / "r")]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == (
        "1 Workload of the manifests holds quota from the start to the end of the run; 1 pending Workload of "
        "the manifests never finishes once admitted: it holds quota from admission to the end of the run "
        "(--existing-runtime SECONDS gives them a run time)"
    )
    doc = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert (doc["run"]["manifest_holding_quota"], doc["run"]["manifest_pending_never_finish"]) == (1, 1)
    assert main([*argv, "--existing-runtime", "3600"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == (
        "1 Workload of the manifests holds quota from the start until 30.0m into the run "
        "(--existing-runtime, less what each had run); 1 pending Workload of the manifests runs 1.0h "
        "once admitted (--existing-runtime)"
    )
    doc = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert (doc["run"]["manifest_holding_quota"], doc["run"]["manifest_held_until_s"]) == (1, 1800.0)
    assert doc["run"]["manifest_pending_never_finish"] == 0
    assert doc["run"]["manifest_pending_with_runtime"] == 1
