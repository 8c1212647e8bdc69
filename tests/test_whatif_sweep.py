"""kueue-fast sweep: the spec, its expansion and
validation, the table and files, and the same results whether the
simulations run in this process, on a local pool or on a Dask cluster."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from whatif_manifests import objects, write

from kueue_fast.commands.cli import main
from kueue_fast.loader import build_state
from kueue_fast.simulate.manifest_trace import trace_for_state
from kueue_fast.simulate.scenario import DEFAULT_START_NS
from kueue_fast.whatif import runner
from kueue_fast.whatif.runner import SimOptions, SimTask, run_all
from kueue_fast.whatif.sweep import finish_spec, read_spec

GPU = "spec.resourceGroups[*].flavors[a100.large].resources[nvidia.com/gpu]"
SMALL = ["-n", "300", "--days", "1", "--no-progress"]


def spec(tmp_path: Path, **over: object) -> str:
    doc = {
        "parameters": [
            {"name": "gpus", "set": f"clusterqueue/team-a.{GPU}.nominalQuota", "values": [2, 8]},
            {
                "name": "reclaim",
                "set": [
                    "clusterqueue/team-a.spec.preemption.reclaimWithinCohort",
                    "clusterqueue/team-b.spec.preemption.reclaimWithinCohort",
                ],
                "values": ["Never", "Any"],
            },
        ],
        "metrics": ["wait_p95:team-a", "wait_p95", "preemptions", "utilization"],
        **over,
    }
    p = tmp_path / "sweep.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(p)


def test_a_grid_runs_every_combination_and_marks_the_best(tmp_path, capsys):
    base = write(tmp_path / "cluster.yaml", objects())
    assert (
        main(["sweep", base, spec(tmp_path), *SMALL, "--workers", "1", "--report", str(tmp_path / "r")]) == 0
    )
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("config"))
    rows = lines[head + 2 : head + 7]
    assert [r.split()[:3] for r in rows] == [
        ["base", "4", "LowerPriority"],  # what the base has
        ["#1", "2", "Never"],
        ["#2", "2", "Any"],
        ["#3", "8", "Never"],
        ["#4", "8", "Any"],
    ]
    assert sum("<- best" in r for r in rows) >= 1
    assert "objective: minimize wait_p95:team-a" in lines[0]
    # every metric cluster-wide and per ClusterQueue in sweep.csv, and the parquet twin
    with open(tmp_path / "r" / "sweep.csv") as f:
        table = list(csv.DictReader(f))
    assert [r["config"] for r in table] == ["base", "#1", "#2", "#3", "#4"]
    assert {
        "gpus",
        "reclaim",
        "wait_p95_s",
        "wait_p95:team-a_s",
        "utilization:team-b",
        "best",
        "where",
    } <= set(table[0])
    best = [r for r in table if r["best"] == "true"]
    assert best and all(
        float(r["wait_p95:team-a_s"]) == min(float(x["wait_p95:team-a_s"]) for x in table) for r in best
    )
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(tmp_path / "r" / "sweep.parquet").num_rows == 5
    for name in ("report.html", "metrics_by_parameter.png", "sweep.json", "trace.csv"):
        assert (tmp_path / "r" / name).stat().st_size > 0
    doc = json.loads((tmp_path / "r" / "sweep.json").read_text())
    assert doc["configurations"][1]["changes"] == [
        f"ClusterQueue/team-a {GPU}.nominalQuota=2",
        "ClusterQueue/team-a spec.preemption.reclaimWithinCohort=Never",
        "ClusterQueue/team-b spec.preemption.reclaimWithinCohort=Never",
    ]


def test_zip_takes_the_values_together_and_base_false_leaves_the_base_out(tmp_path, capsys):
    base = write(tmp_path / "cluster.yaml", objects())
    s = spec(tmp_path, combine="zip", base=False)
    assert main(["sweep", base, s, *SMALL, "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines() == ["#1: gpus=2, reclaim=Never", "#2: gpus=8, reclaim=Any"]


def test_the_built_in_cluster_is_the_base_when_only_the_spec_is_given(tmp_path, capsys):
    p = tmp_path / "s.yaml"
    p.write_text(
        yaml.safe_dump(
            {"parameters": [{"set": "cq/team-llm.spec.preemption.withinClusterQueue", "values": ["Never"]}]}
        )
    )
    assert main(["sweep", str(p), "--dry-run", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "base: team-llm/withinClusterQueue=LowerPriority",
        "#1: team-llm/withinClusterQueue=Never",
    ]


@pytest.mark.parametrize(
    "over, message",
    [
        ({"combine": "cross"}, "sweep spec combine: grid or zip, not 'cross'"),
        ({"metric": ["x"]}, 'sweep spec metric: unknown field (did you mean "metrics"?)'),
        ({"parameters": []}, "sweep spec parameters: a list of at least one"),
        ({"parameters": [{"set": "cq/team-a.spec.x", "value": [1]}]}, "parameters[0].value: unknown field"),
        ({"parameters": [{"set": "cq/team-a.spec.x=1", "values": [1]}]}, "a target without =VALUE"),
        (
            {
                "combine": "zip",
                "parameters": [{"set": "cq/a.x", "values": [1]}, {"set": "cq/b.x", "values": [1, 2]}],
            },
            "zip needs the same number of values",
        ),
        ({"metrics": ["wait_p42"]}, "sweep spec metrics[0]: unknown metric 'wait_p42'"),
        ({"metrics": ["wait_p95:team-z"]}, "no ClusterQueue 'team-z'"),
        ({"objective": {"minimise": "wait_p95"}}, "{minimize: METRIC} or {maximize: METRIC}"),
    ],
)
def test_bad_specs_exit_2_naming_the_field(tmp_path, capsys, over, message):
    base = write(tmp_path / "cluster.yaml", objects())
    assert main(["sweep", base, spec(tmp_path, **over), *SMALL, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and err.startswith("error: ")


def test_every_configuration_is_validated_before_anything_runs(tmp_path, capsys):
    base = write(tmp_path / "cluster.yaml", objects())
    s = tmp_path / "s.yaml"
    s.write_text(
        yaml.safe_dump(
            {
                "parameters": [
                    {"name": "lend", "set": f"cq/team-a.{GPU}.lendingLimit", "values": [1, 9, 2, 10]},
                ]
            }
        )
    )
    report = tmp_path / "r"
    assert main(["sweep", base, str(s), *SMALL, "--report", str(report)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # both bad ones, each naming its variation and the field (Kueue: lendingLimit <= nominalQuota)
    assert len(err) == 2
    assert err[0].startswith("error: sweep configuration #2 (lend=9): ")
    assert (
        "cluster.yaml (document 5): ClusterQueue/team-a spec.resourceGroups[1].flavors[0].resources[0]"
        in err[0]
    )
    assert "lendingLimit: Invalid value" in err[0]
    assert err[1].startswith("error: sweep configuration #4 (lend=10): ")
    assert not report.exists()  # nothing ran


def test_a_target_that_resolves_in_no_configuration_names_the_parameter(tmp_path, capsys):
    base = write(tmp_path / "cluster.yaml", objects())
    s = tmp_path / "s.yaml"
    s.write_text(
        yaml.safe_dump(
            {"parameters": [{"set": "cq/team-a.spec.resourceGroups[*].flavors[h100].x", "values": [1]}]}
        )
    )
    assert main(["sweep", base, str(s), *SMALL, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "sweep configuration #1 (team-a/h100/x=1): ClusterQueue/team-a" in err
    assert "no element has flavors[h100]" in err


def test_scheduler_without_the_distributed_extra_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    base = write(tmp_path / "cluster.yaml", objects())
    assert (
        main(["sweep", base, spec(tmp_path), *SMALL, "--no-report", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "error: --scheduler: running on a Dask cluster needs the distributed extra: "
        "pip install 'kueue-fast[distributed]'"
    )


def test_an_unreachable_scheduler_is_an_error_naming_it(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT_S", 1.0)
    base = write(tmp_path / "cluster.yaml", objects())
    argv = ["sweep", base, spec(tmp_path), *SMALL, "--no-report", "--scheduler", "tcp://127.0.0.1:9"]
    assert main(argv) == 2
    assert (
        "error: --scheduler: cannot connect to the Dask scheduler tcp://127.0.0.1:9"
        in capsys.readouterr().err
    )


def test_the_scheduler_address_may_come_from_the_environment(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT_S", 1.0)
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:9")
    base = write(tmp_path / "cluster.yaml", objects())
    assert main(["sweep", base, spec(tmp_path), *SMALL, "--no-report"]) == 2
    assert "cannot connect to the Dask scheduler tcp://127.0.0.1:9" in capsys.readouterr().err


def test_default_metrics_follow_the_cluster_queues_the_parameters_change(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump({"parameters": [{"set": f"cq/team-b.{GPU}.nominalQuota", "values": [1]}]}))
    s = read_spec(str(p))
    finish_spec(s, ["team-a", "team-b"])
    assert s.metrics == ["wait_p95:team-b", "wait_p95", "wait_p99", "preemptions", "utilization"]
    assert (s.objective, s.maximize) == ("wait_p95:team-b", False)
    assert s.parameters[0].name == "team-b/a100.large/nvidia.com/gpu/nominalQuota"


# --- the same results wherever they run ----------------------------------------------------------------


def tasks_and_trace() -> tuple[list[SimTask], object, SimOptions]:
    states = [build_state(objects(gpu_a=g)) for g in ("2", "4", "8")]
    trace = trace_for_state(states[0], 400, seed=5, days=1.0)
    tasks = [SimTask(i, f"gpus={g}", s) for i, (g, s) in enumerate(zip(("2", "4", "8"), states, strict=True))]
    options = SimOptions(engine="reference", start_ns=DEFAULT_START_NS, dominant="nvidia.com/gpu")
    return tasks, trace, options


@pytest.fixture(scope="module")
def serial():
    tasks, trace, options = tasks_and_trace()
    return run_all(tasks, trace, options, workers=1)


def test_a_local_pool_gives_the_serial_results(serial):
    tasks, trace, options = tasks_and_trace()
    pooled = run_all(tasks, trace, options, workers=2)
    assert [r.deterministic() for r in pooled] == [r.deterministic() for r in serial]
    assert {r.where.split(" (")[0] for r in pooled} == {"local process"}
    # in worker processes (one that started late may have done none of the work)
    assert all(f"pid {os.getpid()})" not in r.where for r in pooled)
    assert serial[0].metrics.totals["preemptions"] != serial[2].metrics.totals["preemptions"] or (
        serial[0].overall != serial[2].overall
    )  # the configurations differ, so the comparison is not vacuous


@pytest.mark.distributed
def test_a_dask_cluster_of_worker_processes_gives_the_serial_results(serial):
    distributed = pytest.importorskip("distributed")
    tasks, trace, options = tasks_and_trace()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        on_dask = run_all(tasks, trace, options, scheduler=cluster.scheduler_address)
    assert [r.deterministic() for r in on_dask] == [r.deterministic() for r in serial]
    assert all(r.where.startswith("dask worker ") for r in on_dask)


@pytest.mark.distributed
def test_sweep_on_dask_from_the_command_line(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    base = write(tmp_path / "cluster.yaml", objects())
    s = spec(tmp_path)
    assert main(["sweep", base, s, *SMALL, "--workers", "1", "-o", "json", "--no-report"]) == 0
    local = json.loads(capsys.readouterr().out)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        argv = [
            "sweep",
            base,
            s,
            *SMALL,
            "-o",
            "json",
            "--no-report",
            "--scheduler",
            cluster.scheduler_address,
        ]
        assert main(argv) == 0
    remote = json.loads(capsys.readouterr().out)

    def strip(doc: dict) -> list[dict]:
        run_facts = ("wall_s", "cpu_s", "where")
        return [{k: v for k, v in c.items() if k not in run_facts} for c in doc["configurations"]]

    assert strip(remote) == strip(local)
    assert all(c["where"].startswith("dask worker") for c in remote["configurations"])


def test_a_parameter_can_move_quota_between_queues(tmp_path, capsys):
    base = write(tmp_path / "cluster.yaml", objects())
    p = tmp_path / "s.yaml"
    moved = {
        f"cq/team-a.{GPU}.nominalQuota": [4, 2, 0],
        f"cq/team-b.{GPU}.nominalQuota": [4, 6, 8],
    }
    p.write_text(yaml.safe_dump({"parameters": [{"name": "moved", "values": [0, 2, 4], "set": moved}]}))
    assert main(["sweep", base, str(p), *SMALL, "--dry-run"]) == 0
    # the base holds 4 and 4: moved=0
    assert capsys.readouterr().out.splitlines() == [
        "base: moved=0",
        "#1: moved=0",
        "#2: moved=2",
        "#3: moved=4",
    ]
    p.write_text(yaml.safe_dump({"parameters": [{"name": "moved", "values": [0, 2], "set": moved}]}))
    assert main(["sweep", base, str(p), *SMALL, "--dry-run"]) == 2
    assert "parameters[0].set: every target needs 2 values" in capsys.readouterr().err


def test_the_progress_bar_counts_configurations_and_names_where_they_run():
    import io

    from kueue_fast.whatif.runner import SweepBar

    tasks, trace, options = tasks_and_trace()
    stream = io.StringIO()
    run_all(tasks, trace, options, workers=1, bar=SweepBar(stream, enabled=True))
    last = stream.getvalue().split("\r")[-1]
    assert last.startswith("[########################] 3/3 configurations") and "1 process" in last


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ml-platform"


def test_the_readme_worked_example_files_expand_to_eight_valid_configurations(capsys):
    args = ["sweep", str(EXAMPLE / "cluster.yaml"), str(EXAMPLE / "sweep.yaml"), *SMALL, "--dry-run"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "#1: moved=0, research-borrow=8"
    assert lines[-1] == "#8: moved=12, research-borrow=16"
    assert len(lines) == 8


def test_the_table_rules_only_the_named_columns(tmp_path, capsys):
    # the '<- best' column has no header: no rule under it either
    base = write(tmp_path / "cluster.yaml", objects())
    s = spec(tmp_path, combine="zip", base=False)
    assert main(["sweep", base, s, *SMALL, "--workers", "1", "--no-report"]) == 0
    header, rule = capsys.readouterr().out.splitlines()[2:4]
    assert header.startswith("config") and header.endswith("ran on")
    assert len(rule.split()) == len(header.replace("ran on", "ran_on").split())
