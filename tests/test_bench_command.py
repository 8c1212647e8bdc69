"""`kueue-fast bench` at tiny sizes: the table, --json, the generators.
No timing assertions: this checks the command works, not how fast."""

from __future__ import annotations

import json

import pytest

from kueue_fast.bench import drain_case, drain_objects, format_table, preemption_case
from kueue_fast.commands.cli import main
from kueue_fast.loader import build_state


def test_bench_quick_json_has_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--quick", "--json", "--in-process", "--engine", "reference"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["case"]: r for r in doc["results"]}
    assert set(rows) == {"drain", "preemption", "simulate"}
    for r in rows.values():
        ref = r["reference"]
        assert ref["time_s"] > 0 and ref["decisions"] > 0 and ref["cycles"] > 0
    assert rows["preemption"]["reference"]["victims_per_preemptor"] > 0
    assert rows["preemption"]["reference"]["candidate_evaluations"] > 0
    assert rows["drain"]["reference"]["stable"]


def test_bench_table_in_subprocesses_reports_peak_memory(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "drain", "--quick", "--engine", "reference"]) == 0
    out = capsys.readouterr().out
    assert "drain" in out and "decisions/s" in out and "MB" in out


def test_table_shows_the_ratio_and_scaling() -> None:
    base = {
        "time_s": 0.01,
        "decisions_per_s": 1.0,
        "workloads": 10,
        "cycles": 1,
        "case": "drain",
        "stable": True,
    }
    rows = [
        {
            "case": "drain",
            "native": {**base, "scale": 1.0, "time_full_s": 0.01},
            "reference": {**base, "scale": 10.0, "time_full_s": 2.0},
            "ratio": 200.0,
        }
    ]
    table = format_table(rows)
    assert "native 200x faster" in table
    assert "time x10" in table


def test_unknown_case_is_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "nope", "--quick"]) == 2
    assert "unknown case" in capsys.readouterr().err


def test_drain_generator_shape() -> None:
    case = drain_case(n_cq=20, n_cohorts=4, n_workloads=300)
    state = build_state(case.objects)
    assert len(state.cluster_queues) == 20
    assert {cq.cohort for cq in state.cluster_queues.values()} == {f"cohort-{i:03d}" for i in range(4)}
    flavors = {len(cq.resource_groups[0].flavors) for cq in state.cluster_queues.values()}
    assert flavors == {2, 3}
    assert case.trace.resources == ["cpu", "memory", "nvidia.com/gpu"]
    assert len(case.trace) == 300
    objs = drain_objects(case)
    assert sum(o["kind"] == "Workload" for o in objs) == 300
    assert len(build_state(objs).workloads) == 300


def test_preemption_generator_fills_the_cohort() -> None:
    case = preemption_case(n_cq=10, n_admitted=200, n_arrivals=20)
    assert case.admitted == 200 and len(case.trace) == 220
    assert case.trace.priority[:200].max() < case.trace.priority[200:].min()


def test_bench_e2e_quick_reports_the_split_per_stage(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kueue-fast bench e2e`: kueue-fast schedule in a child process, per input and format."""
    monkeypatch.setenv("KUEUE_FAST_BENCH_CACHE", str(tmp_path))
    args = ["bench", "e2e", "--quick", "--repeat", "1", "--engine", "reference"]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert {(r["input"], r["format"]) for r in rows} == {
        (i, f) for i in ("drain", "long") for f in ("yaml", "flow-yaml", "json")
    }
    for r in rows:
        ref = r["reference"]
        parts = ref["parse_s"] + ref["build_s"] + ref["schedule_s"] + ref["output_s"]
        assert 0 < parts <= ref["wall_s"] and ref["peak_rss_mb"] > 0 and ref["runs"] == 1
        assert ref["workloads"] == 500 and ref["cycles"] > 1
    # the inputs are cached: a second run reads the same files
    cached = sorted(p.name for p in tmp_path.iterdir())
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "parse" in table and "output" in table and "peak RSS" in table
    assert sorted(p.name for p in tmp_path.iterdir()) == cached


def test_bench_e2e_1m_is_the_drain_input_alone(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kueue-fast bench e2e-1m`: the drain input in each format (--quick: at 500 Workloads)."""
    monkeypatch.setenv("KUEUE_FAST_BENCH_CACHE", str(tmp_path))
    assert main(["bench", "e2e-1m", "--quick", "--repeat", "1", "--engine", "reference", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [(r["input"], r["format"]) for r in rows] == [("drain", f) for f in ("yaml", "flow-yaml", "json")]
    assert {r["reference"]["workloads"] for r in rows} == {500}


def test_bench_repeat_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "drain", "--quick", "--repeat", "0"]) == 2
    assert "--repeat" in capsys.readouterr().err
