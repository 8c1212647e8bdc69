"""kueue-fast compare: one frozen trace against several configurations."""

from __future__ import annotations

import json

import numpy as np
import pytest
from whatif_manifests import objects, write

from kueue_fast.commands.cli import main
from kueue_fast.loader import build_state
from kueue_fast.simulate.manifest_trace import trace_for_state
from kueue_fast.simulate.trace_files import read_trace

GPU = "spec.resourceGroups[1].flavors[a100.large].resources[nvidia.com/gpu]"
SMALL = ["-n", "300", "--days", "1", "--no-progress", "--workers", "1"]


@pytest.fixture
def two(tmp_path):
    """The base (team-a: 4 GPUs) and a copy giving team-a 8."""
    return write(tmp_path / "base.yaml", objects()), write(tmp_path / "bigger.yaml", objects(gpu_a="8"))


def test_the_trace_is_generated_once_from_the_first_configuration(two, tmp_path, capsys):
    base, bigger = two
    assert main(["compare", base, bigger, *SMALL, "--report", str(tmp_path / "r")]) == 0
    doc = json.loads((tmp_path / "r" / "comparison.json").read_text())
    # raising a quota does not change the offered work: both ran the base's trace
    frozen = read_trace(tmp_path / "r" / "trace.csv")
    want = trace_for_state(build_state(objects()), 300, 0, 1.0, 0.7)
    np.testing.assert_allclose(frozen.duration_s, want.duration_s)
    np.testing.assert_allclose(frozen.arrival_s, want.arrival_s, atol=1e-3)
    a, b = doc["configurations"]
    assert a["totals"]["workloads"] == b["totals"]["workloads"] == 300
    assert [a["label"], b["label"]] == ["base", "bigger"]
    # a trace generated for "bigger" would be calibrated to its larger quota: more work
    other = trace_for_state(build_state(objects(gpu_a="8")), 300, 0, 1.0, 0.7)
    assert other.duration_s.sum() > want.duration_s.sum() * 1.1


def test_the_table_says_what_differs_and_compares_every_cluster_queue(two, tmp_path, capsys):
    base, bigger = two
    assert main(["compare", base, bigger, *SMALL, "--report", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "What differs from base:" in out
    assert f"ClusterQueue/team-a {GPU}.nominalQuota: 4 -> 8" in out
    for heading in ("all ClusterQueues", "team-a", "team-b", "  wait p95", "  utilization", "  borrowing"):
        assert f"\n{heading}" in out
    assert "Runs:" in out and "this process" in out
    doc = json.loads((tmp_path / "r" / "comparison.json").read_text())
    a, b = doc["configurations"]
    qa = {q["name"]: q for q in a["cluster_queues"]}
    qb = {q["name"]: q for q in b["cluster_queues"]}
    # the deltas are the second configuration's values minus the base's
    for metric in ("admitted", "pending", "preemptions"):
        assert b["deltas_from_base"]["team-a"][metric] == qb["team-a"][metric] - qa["team-a"][metric]
    assert (
        b["deltas_from_base"]["team-a"]["wait_p95"] == qb["team-a"]["wait_p95_s"] - qa["team-a"]["wait_p95_s"]
    )
    # twice the quota: team-a's waits do not grow, its utilization (over a larger nominal) falls
    assert qb["team-a"]["wait_p95_s"] <= qa["team-a"]["wait_p95_s"]
    assert qb["team-a"]["utilization"] < qa["team-a"]["utilization"]
    assert b["diff_from_base"][0]["after"] == "8"
    for name in ("report.html", "wait_times.png", "utilization.png", "pending.png", "trace.csv"):
        assert (tmp_path / "r" / name).stat().st_size > 0
    html = (tmp_path / "r" / "report.html").read_text()
    assert "What differs from base" in html and "nominalQuota: 4 -&gt; 8" in html


def test_biggest_changes_rank_what_moved_most(tmp_path, capsys):
    base = write(tmp_path / "base.yaml", objects(gpu_a="2"))
    bigger = write(tmp_path / "bigger.yaml", objects(gpu_a="16"))
    assert main(["compare", base, bigger, *SMALL, "--no-report", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    top = doc["biggest_changes"]
    assert top, "eight times the quota changes something"
    assert [x["score"] for x in top] == sorted((x["score"] for x in top), reverse=True)
    # waits weigh most: team-a's p95 (hours -> 0) leads
    assert top[0]["metric"].startswith("wait") and top[0]["value"] < top[0]["base"]


def test_compare_a_file_with_a_change_given_by_set(tmp_path, capsys):
    base = write(tmp_path / "cluster.yaml", objects())
    setting = (
        "cq/team-b.spec.resourceGroups[1].flavors[a100.large].resources[nvidia.com/gpu].borrowingLimit=0"
    )
    assert main(["compare", base, "--set", setting, *SMALL, "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "cluster+set:" in out
    assert f"ClusterQueue/team-b {GPU}.borrowingLimit: (unset) -> 0" in out
    header = next(
        line
        for line in out.splitlines()
        if line.startswith(" ") and line.split() == ["cluster", "cluster+set"]
    )
    assert header


def test_identical_configurations_say_so(tmp_path, capsys):
    a = write(tmp_path / "a.yaml", objects())
    b = write(tmp_path / "b.yaml", objects())
    assert main(["compare", a, b, *SMALL, "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "b: the same specs as a" in out
    assert "No change stands out." in out


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda objs: [
                o for o in objs if not (o["kind"] == "LocalQueue" and o["metadata"]["namespace"] == "b")
            ],
            "configuration other lacks LocalQueues b/default: the configurations must share their LocalQ",
        ),
        (
            lambda objs: [
                {**o, "spec": {**o["spec"], "queueingStrategy": "Fastest"}}
                if o["kind"] == "ClusterQueue"
                else o
                for o in objs
            ],
            "configuration other: ",
        ),
    ],
)
def test_configurations_that_cannot_be_compared_exit_2_naming_them(tmp_path, capsys, change, message):
    base = write(tmp_path / "base.yaml", objects())
    other = write(tmp_path / "other.yaml", change(objects()))
    assert main(["compare", base, other, *SMALL, "--no-report"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert all(line.startswith(("error:", "warning:")) for line in err.splitlines())


def test_invalid_configuration_error_names_it_and_the_field(tmp_path, capsys):
    base = write(tmp_path / "base.yaml", objects())
    other = objects()
    other[4]["spec"]["queueingStrategy"] = "Fastest"
    path = write(tmp_path / "other.yaml", other)
    assert main(["compare", base, path, *SMALL, "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("error: configuration other: ")
    assert "ClusterQueue/team-a spec.queueingStrategy" in err[0]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["compare"], "give at least two configurations"),
        (["compare", "{base}"], "one configuration is nothing to compare"),
        (
            ["compare", "{base}", "{base}", "-o", "yaml"],
            "-o/--output: expects the output format (table or json)",
        ),
        (["compare", "{base}", "{base}", "--workers", "0"], "--workers: must be at least 1"),
        (["compare", "{base}", "--set", "cq/nope.spec.x=1"], "no ClusterQueue named 'nope'"),
    ],
)
def test_bad_invocations_exit_2_with_one_line(tmp_path, capsys, argv, message):
    base = write(tmp_path / "base.yaml", objects())
    assert main([a.format(base=base) for a in argv] + ["--no-report"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["compare", "sweep", "snapshot"])
def test_every_option_has_a_help_line_with_its_default(name):
    import argparse

    from kueue_fast.commands.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for action in sub.choices[name]._actions:
        if isinstance(action, argparse._HelpAction) or not action.option_strings:
            continue
        assert action.help and "default" in action.help, f"{name} {action.option_strings}"
