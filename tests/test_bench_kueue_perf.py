"""`kueue-fast bench kueue-perf`: Kueue's scheduler performance test shapes
(test/performance/scheduler/configs in kubernetes-sigs/kueue) as kueue-fast
inputs, and the figures read back from the simulator's workloads.csv.
No timing assertions."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest

from kueue_fast.bench import kueue_perf as K
from kueue_fast.commands.cli import main
from kueue_fast.engine.select import native_available
from kueue_fast.loader import build_state


def test_shapes_are_kueues_generator_configs() -> None:
    base, large = K.SHAPES["baseline"], K.SHAPES["large-scale"]
    assert (base.n_cluster_queues, base.n_workloads) == (30, 15_000)  # 5 x 6 x (350 + 100 + 50)
    assert (large.n_cluster_queues, large.n_workloads) == (1000, 50_000)  # 10 x 100 x (35 + 11 + 4)
    assert [(s.cls, s.cpu_milli, s.priority, s.runtime_ms) for s in base.sets] == [
        ("small", 1000, 50, 200),
        ("medium", 5000, 100, 500),
        ("large", 20000, 200, 1000),
    ]


def test_names_and_creation_times_follow_kueues_generator() -> None:
    arr = K.arrivals(K.BASELINE)
    assert len(arr) == 15_000
    first = arr[0]
    assert (first.at_ms, first.namespace, first.name) == (100, "cq-0-0-cohort-0", "small-0-0-0")
    last = {a.set.cls: a for a in arr}  # the last of each class, in creation order
    assert (last["small"].at_ms, last["small"].name) == (35_000, "small-0-349-0")
    assert (last["medium"].at_ms, last["medium"].name) == (50_000, "medium-1-99-0")
    assert (last["large"].at_ms, last["large"].name) == (60_000, "large-2-49-0")
    assert [a.at_ms for a in arr] == sorted(a.at_ms for a in arr)
    assert K.class_of("medium-1-99-0") == "medium"


def test_manifests_and_workloads_load_as_kueue_would_read_them() -> None:
    shape = dataclasses.replace(K.BASELINE, cohorts=2, queues=2)
    objs = K.config_objects(shape) + [K.workload_object(a) for a in K.arrivals(shape)[:6]]
    state = build_state(objs)
    assert sorted(state.cluster_queues) == [
        "cq-0-0-cohort-0",
        "cq-0-0-cohort-1",
        "cq-0-1-cohort-0",
        "cq-0-1-cohort-1",
    ]
    cq = state.cluster_queues["cq-0-1-cohort-1"]
    assert cq.cohort == "cohort-1"
    assert cq.preemption.reclaim_within_cohort == "Any"
    assert cq.preemption.within_cluster_queue == "LowerPriority"
    quota = cq.resource_groups[0].flavors[0].resources[0]
    assert (quota.nominal, quota.borrowing_limit) == (20_000, 100_000)
    wl = state.workloads["cq-0-0-cohort-0/small-0-0-0"]
    assert wl.priority == 50 and wl.queue_name == "cq-0-0-cohort-0"
    assert wl.pod_sets[0].requests == {"cpu": 1000}


def test_figures_from_workloads_csv_checked_by_hand(tmp_path: Path) -> None:
    """One ClusterQueue (20 cpu): a small run 0.1-0.3 s; a medium created at
    0.5 s, evicted after 0.2 s of run, admitted again at 1.0 s until 1.5 s; a
    large 1.2-2.2 s. Held: 1 x 0.2 + 5 x (0.5 + 0.2) + 20 x 1.0 = 23.7 cpu-s
    over 20 cpu x 2.2 s = 53.86%."""
    shape = dataclasses.replace(K.BASELINE, cohorts=1, queues=1)
    path = tmp_path / "workloads.csv"
    cols = ["name", "arrival_s", "state", "evictions", "last_admitted_s", "finished_s", "lost_work_s"]
    rows = [
        ["small-0-0-0", "0.1", "finished", "0", "0.1", "0.3", "0"],
        ["medium-1-0-0", "0.5", "finished", "1", "1.0", "1.5", "0.2"],
        ["large-2-0-0", "1.2", "finished", "0", "1.2", "2.2", "0"],
    ]
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([cols, *rows])
    fig = K.simulation_figures(shape, str(path))
    assert fig["makespan_s"] == pytest.approx(2.2)
    assert fig["usage_pct"] == pytest.approx(100 * 23.7 / 44.0)
    assert fig["classes"]["medium"] == {
        "workloads": 1,
        "mean_admission_s": pytest.approx(0.5),
        "evictions": 1,
    }
    assert fig["classes"]["small"]["mean_admission_s"] == pytest.approx(0.0)
    assert fig["unfinished"] == 0


@pytest.mark.skipif(not native_available(), reason="the native engine is not built")
def test_bench_kueue_perf_quick_both_engines_agree(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "kueue-perf", "--quick", "--repeat", "1", "--engine", "both"]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [r["shape"] for r in rows] == ["baseline", "large-scale"]
    for r in rows:
        nat, ref = r["native"], r["reference"]
        assert nat["unfinished"] == 0 and nat["makespan_s"] > 0 and nat["cycles"] > 0
        same = ("makespan_s", "usage_pct", "classes", "admissions", "preemptions", "cycles")
        assert {k: nat[k] for k in same} == {k: ref[k] for k in same}
    assert rows[0]["workloads"] == 1500


def test_kueue_perf_table_names_kueues_figures() -> None:
    res = {
        "makespan_s": 76.8,
        "classes": {c: {"mean_admission_s": 1.0, "evictions": 0} for c in ("small", "medium", "large")},
        "usage_pct": 80.0,
        "preemptions": 5910,
        "cycles": 1030,
        "simulate_s": 0.75,
        "wall_s": 2.0,
        "peak_rss_mb": 120.0,
        "runs": 3,
    }
    table = K.format_kueue_perf_table(
        [{"case": "kueue-perf", "shape": "baseline", "workloads": 15_000, "scale": 1.0, "native": res}]
    )
    assert "351.1 s (425.0 s)" in table  # Kueue's mean wall and maxWallMs
    assert "215.5 s (260.0 s)" in table  # small: mean and threshold
    assert "55.9% (50%)" in table
    assert "76.8 s" in table and "5,910" in table
