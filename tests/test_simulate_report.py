"""What the simulator tells its user: censored waits, workloads.csv, warnings
about trace rows that never run, --write-scenario with manifests, the
report's labels, the progress bar's last line, and the command-line options
of simulate, trace and bench."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kueue_fast.commands import simulate as command
from kueue_fast.commands.cli import build_parser, main
from kueue_fast.loader import build_state
from kueue_fast.simulate.event_loop import Progress, simulate
from kueue_fast.simulate.metrics import censored_percentiles, compute
from kueue_fast.simulate.progress import ProgressBar
from kueue_fast.simulate.report import WORKLOAD_COLUMNS, summary_table, write_workloads_csv
from kueue_fast.simulate.trace_files import parse_csv, read_trace

NS = 1_000_000_000
START = 1_700_000_000 * NS
API = "kueue.x-k8s.io/v1beta2"


def one_queue(cpu: str = "4") -> list[dict[str, Any]]:
    return [
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {
            "apiVersion": API,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq-a"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
                    }
                ],
                "preemption": {"withinClusterQueue": "LowerPriority"},
            },
        },
        {
            "apiVersion": API,
            "kind": "LocalQueue",
            "metadata": {"name": "q", "namespace": "a"},
            "spec": {"clusterQueue": "cq-a"},
        },
    ]


# --- censored waits (issue 9, item 4) -----------------------------------------------------------------


def test_workloads_never_admitted_count_as_waiting_until_the_end() -> None:
    """One job holds the queue; seven arrive behind it and are still pending
    at the end: their waits are end - arrival, flagged, and the percentiles
    fall on them (the table shows '>')."""
    rows = ["0,a,q,hog,0,100000,4"] + [f"{10 * k},a,q,w{k},0,60,4" for k in range(1, 8)]
    trace = parse_csv("arrival,namespace,queue,name,priority,duration,cpu\n" + "\n".join(rows) + "\n")
    result = simulate(
        build_state(one_queue()), trace, "reference", START, until_ns=START + 1000 * NS, bins=10
    )
    m = compute(result)
    q = m.queues[0]
    assert (q.workloads, q.admitted, q.pending, q.censored) == (8, 1, 7, 7)
    assert (result.workloads.wait_ns // NS).tolist() == [0] + [1000 - 10 * k for k in range(1, 8)]
    assert (q.wait_p50_s, q.wait_p50_censored) == (950.0, True)  # nearest rank: the 4th of 8
    assert (q.wait_p99_s, q.wait_p99_censored) == (990.0, True)
    table = summary_table(m)
    assert ">15.8m" in table and ">16.5m" in table
    assert "still waiting at the end" in table
    assert "util: mean use of the dominant resource over capacity (nominal quota plus" in table


def test_a_percentile_on_an_exact_wait_is_not_censored() -> None:
    waits = np.array([1.0, 2.0, 3.0, 50.0])
    cen = np.array([False, False, False, True])
    assert censored_percentiles(waits, cen, (50, 99)) == [(2.0, False), (50.0, True)]
    # equal waits: the exact one ranks first
    assert censored_percentiles(np.array([5.0, 5.0]), np.array([True, False]), (50,)) == [(5.0, False)]


# --- workloads.csv -------------------------------------------------------------------------------------


def test_workloads_csv_has_a_row_per_workload_with_its_history(tmp_path: Path) -> None:
    csv_text = (
        "arrival,namespace,queue,name,priority,duration,cpu\n"
        "0,a,q,low,0,100,4\n"
        "30,a,q,high,10,50,4\n"
        "40,a,q,late,0,10,4\n"
    )
    result = simulate(
        build_state(one_queue()), parse_csv(csv_text), "reference", START, until_ns=START + 200 * NS, bins=10
    )
    path = tmp_path / "workloads.csv"
    write_workloads_csv(path, result)
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(WORKLOAD_COLUMNS)
    low, high, late = rows
    assert (low["name"], low["cluster_queue"], low["local_queue"], low["priority"]) == (
        "low",
        "cq-a",
        "q",
        "0",
    )
    # low: admitted at 0, evicted at 30 (pods gone at 60), back when high finishes at 110
    assert low["admitted_at_s"] == "0.000 110.000" and low["admissions"] == "2"
    assert low["evicted_at_s"] == "30.000" and low["evictions"] == "1"
    assert low["preempted_by"] == "a/high" and low["lost_work_s"] == "30.000"
    assert low["wait_s"] == "50.000" and low["state"] == "running" and low["flavors"] == "cpu=default"
    assert (
        high["admitted_at_s"] == "60.000" and high["finished_s"] == "110.000" and high["wait_s"] == "30.000"
    )
    assert "Pending the preemption of 1 workload(s)" in high["explanation"]
    # late is still waiting at the end: censored, and says why
    assert late["state"] == "pending" and late["wait_censored"] == "true" and late["wait_s"] == "160.000"
    assert "insufficient unused quota for cpu in flavor default" in late["explanation"]


# --- warnings: trace rows that match no LocalQueue (item 7) --------------------------------------------


def test_trace_rows_of_a_missing_local_queue_are_a_warning_with_counts_and_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(one_queue()))
    rows = "".join(f"{k},a,{'nope' if k % 2 else 'q'},j{k},1,1\n" for k in range(9))
    (tmp_path / "t.csv").write_text("arrival,namespace,queue,name,duration,cpu\n" + rows)
    args = [str(tmp_path / "cluster.yaml"), "--trace", str(tmp_path / "t.csv"), "--engine", "reference"]
    assert main(["simulate", *args, "--no-report"]) == 0
    out, err = capsys.readouterr()
    expected = (
        "4 trace workloads of LocalQueue a/nope never run (LocalQueue nope doesn't exist): j1, j3, j5, ..."
    )
    assert err.count(f"warning: {expected}") == 1
    assert expected not in out, "said once, as it came (issue 20, item 9)"
    assert main(["simulate", *args, "--no-report", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["warnings"] == [expected] and doc["totals"]["unqueued"] == 4


# --- --write-scenario with manifests (item 8) -----------------------------------------------------------


def test_write_scenario_writes_the_given_manifests_and_their_trace(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(one_queue()))
    out = tmp_path / "scenario"
    rc = main(
        ["simulate", str(tmp_path / "cluster.yaml"), "-n", "60", "--seed", "4", "--write-scenario", str(out)]
    )
    assert rc == 0
    names = {d["metadata"]["name"] for d in yaml.safe_load_all((out / "cluster.yaml").read_text())}
    assert names == {"default", "cq-a", "q"}, "the user's cluster, not the built-in one"
    trace = read_trace(out / "trace.csv")
    assert len(trace) == 60 and trace.namespaces == ["a"]
    again = command.run(
        [str(out / "cluster.yaml")], str(out / "trace.csv"), engine="reference", report_dir=None
    )
    direct = command.run([str(tmp_path / "cluster.yaml")], n=60, seed=4, engine="reference", report_dir=None)
    assert again.metrics.totals == direct.metrics.totals


# --- the report's labels, one wall time, the progress bar ---------------------------------------------


def test_the_report_names_the_run_its_bins_and_one_wall_time(tmp_path: Path) -> None:
    out = command.run(n=300, seed=1, engine="reference", report_dir=tmp_path / "rep")
    assert out.run_label.startswith("seed 1, 300 workloads, offered load ")
    page = (tmp_path / "rep" / "report.html").read_text()
    assert out.run_label in page
    assert page.count("Bins of 30-min.") == 5
    assert page.count(" s wall") == 0 and page.count("simulated in ") == 1
    doc = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert doc["series"]["bin_s"] == 1800.0 and doc["run"]["label"] == out.run_label
    assert doc["run"]["termination_delay_s"] == 30.0


def test_the_bar_says_the_report_is_being_written_and_ends_its_line() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, enabled=True)
    bar(Progress(10 * NS, 0, 10 * NS, 5, 5, 1, 5, 0, 0.5))
    bar.phase("writing the report to r")
    bar.close()
    text = stream.getvalue()
    assert "100%" in text and text.rstrip().endswith("writing the report to r...")
    assert text.endswith("\n")


def test_ctrl_c_leaves_the_terminal_on_a_new_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(**kw: Any) -> None:
        kw["progress"](Progress(5 * NS, 0, 10 * NS, 1, 2, 1, 1, 0, 0.1))
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "run", interrupted)
    assert main(["simulate", "--progress", "--no-report"]) == 130
    err = capsys.readouterr().err
    assert "50%" in err and err.endswith("\ninterrupted\n")


# --- command-line options ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["simulate", "-o", "my-report"],
            "-o/--output: expects the output format (table or json), not 'my-report'; "
            "for the report folder use --report my-report",
        ),
        (["simulate", "-o", "json", "--json", "--no-report"], None),
        (["simulate", "-o", "table", "--json"], "--json: contradicts -o table"),
        (["simulate", "--termination-delay", "-1"], "--termination-delay: must be a number of seconds >= 0"),
        (["trace", "generate", "-o", "trace.csv"], "for the file to write use --output-file trace.csv"),
        (["trace", "generate", "-n", "5"], "--output-file: is required"),
    ],
)
def test_option_errors_are_one_line_with_a_hint(
    argv: list[str], needle: str | None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if needle is None:  # -o json and --json agree: runs (a tiny run)
        argv = [*argv, "-n", "50", "--engine", "reference"]
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["totals"]["workloads"] == 50
        assert "--json is deprecated: use -o json" in err
        return
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and needle in err


@pytest.mark.parametrize(
    ("flags", "suffix", "first"),
    [([], ".jsonl", '{"window":604800}\n{'), (["-o", "csv"], ".txt", "# window: 604800\narrival,")],
)
def test_trace_generate_writes_the_format_asked_or_the_suffix_says(
    tmp_path: Path, flags: list[str], suffix: str, first: str
) -> None:
    path = tmp_path / f"trace{suffix}"
    assert main(["trace", "generate", "-n", "20", *flags, "--output-file", str(path)]) == 0
    assert path.read_text().startswith(first)


def _subparser(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


@pytest.mark.parametrize("path", [("simulate",), ("trace", "generate"), ("bench",)])
def test_every_option_has_a_help_line_with_its_default(path: tuple[str, ...]) -> None:
    parser = _subparser(build_parser(), *path)
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        text = action.help or ""
        assert "default" in text or "deprecated" in text or "never" in text, (action.option_strings, text)


def test_bench_help_lists_every_case() -> None:
    from kueue_fast.bench import CASES

    text = _subparser(build_parser(), "bench").format_help()
    for name in CASES:
        assert name in text
    assert "1000 CQs" in text and "10k admitted" in text


def test_workloads_csv_is_the_same_in_small_chunks_across_manifest_and_trace_rows(tmp_path: Path) -> None:
    objs = one_queue()
    objs.append(
        {
            "apiVersion": API,
            "kind": "Workload",
            "metadata": {"name": "held", "namespace": "a", "creationTimestamp": "2023-11-14T00:00:00Z"},
            "spec": {
                "queueName": "q",
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
    )
    trace = parse_csv("arrival,namespace,queue,name,duration,cpu\n0,a,q,x,5,2\n1,a,q,y,5,2\n2,a,q,z,5,2\n")
    result = simulate(build_state(objs), trace, "reference", START, drain=True, bins=10)
    write_workloads_csv(tmp_path / "one.csv", result)
    write_workloads_csv(tmp_path / "small.csv", result, chunk=1)
    assert (tmp_path / "one.csv").read_text() == (tmp_path / "small.csv").read_text()
    names = [line.split(",")[1] for line in (tmp_path / "one.csv").read_text().splitlines()[1:]]
    assert names == ["held", "x", "y", "z"]


def test_workloads_after_until_are_not_arrived_in_workloads_csv(tmp_path: Path) -> None:
    trace = parse_csv("arrival,namespace,queue,name,duration,cpu\n0,a,q,x,5,2\n100,a,q,y,5,2\n")
    result = simulate(build_state(one_queue()), trace, "reference", START, until_ns=START + 50 * NS, bins=10)
    write_workloads_csv(tmp_path / "w.csv", result)
    with (tmp_path / "w.csv").open() as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    assert rows["x"]["state"] == "finished" and rows["y"]["state"] == "not-arrived"


@pytest.mark.parametrize(("days", "span"), [("30", "30 days"), ("1", "1 day"), ("0.5", "0.5 days")])
def test_the_built_in_scenarios_headline_says_the_span_of_its_trace(capsys, days, span):
    # it said "one week" whatever --days asked
    assert main(["simulate", "-n", "20", "--days", days, "--no-report", "--no-progress"]) == 0
    title = capsys.readouterr().out.splitlines()[0]
    assert title == f"Simulation of the built-in scenario (8 teams, 2 cohorts, {span})"
