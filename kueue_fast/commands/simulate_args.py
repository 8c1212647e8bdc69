"""Arguments of ``kueue-fast simulate``, ``trace`` and ``bench`` (kept free of
heavy imports: the CLI builds every subcommand's parser at start).

Conventions shared by these commands: ``-o/--output`` is always an output
*format*; paths have long names (``--report DIR``, ``--trace FILE``,
``--output-file PATH``). Every option's help states its default.
"""

from __future__ import annotations

import argparse
import sys

from ..simulate.defaults import (
    DEFAULT_DAYS,
    DEFAULT_LOAD,
    DEFAULT_MAX_CYCLES,
    DEFAULT_POD_STARTUP_S,
    DEFAULT_REPORT_DIR,
    DEFAULT_SEED,
    DEFAULT_TERMINATION_DELAY_S,
    DEFAULT_WORKLOADS,
    ENGINES,
)

# What `kueue-fast bench` runs, per case (the bench tables' titles, commands/bench.py).
BENCH_CASES = {
    "drain": "drain: 100k pending, 1000 CQs / 100 cohorts",
    "preemption": "preemption: 100 CQs, 10k admitted, 1k preemptors",
    "simulate": "simulate: the built-in simulation, 100k workloads, report included",
    "load": "load: 100k Workloads, YAML and JSON, to a Cluster",
    "e2e": "e2e: kueue-fast schedule end to end, 100k Workloads, 2 inputs, YAML (block, flow) and JSON",
    "e2e-1m": "e2e-1m: the e2e drain input at 1M Workloads",
    "kueue-perf": "kueue-perf: Kueue's performance test shapes (baseline, large-scale) through simulate",
}
BENCH_DEFAULT_CASES = ("drain", "preemption", "simulate")


def add_recursive_argument(p: argparse.ArgumentParser) -> None:
    """-R as ``kubectl apply -f DIR -R``: every command that reads manifests takes it."""
    p.add_argument(
        "-R", "--recursive", action="store_true", help="read directories' subdirectories too (default: off)"
    )


def add_engine_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help="which engine decides (default: $KUEUE_FAST_ENGINE or native)",
    )


def manifest_paths(files: list[str], recursive: bool) -> list[str]:
    """``files`` with each directory read as ``kubectl apply -f`` reads it
    when ``recursive`` (without it, the loader reads a directory's own files)."""
    if not recursive:
        return files
    from ..api.errors import InputWarning
    from ..loader import manifest_files

    skipped: list[InputWarning] = []  # special files, unreadable subdirectories
    paths = [f for path in files for f in manifest_files(path, recursive=True, warnings=skipped)]
    for w in skipped:
        print(f"warning: {w}", file=sys.stderr)
    return paths


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="Kueue manifests (YAML/JSON) or directories of them; none: the built-in scenario "
        "(8 teams, 2 cohorts)",
    )
    add_recursive_argument(p)
    add_workload_arguments(p)
    add_engine_argument(p)
    p.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FORMAT",
        help="what to print: table or json (default table)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="deprecated: the same as -o json",
    )
    add_report_arguments(p, DEFAULT_REPORT_DIR)
    add_clock_arguments(p)
    add_progress_arguments(p)
    p.add_argument(
        "--write-scenario",
        metavar="DIR",
        default=None,
        help="write the inputs of this run (cluster.yaml, trace.csv) to DIR and exit (default: run)",
    )


def add_workload_arguments(p: argparse.ArgumentParser) -> None:
    """Where the workloads come from: --trace, or a generated trace (-n, --seed, --days, --load)."""
    p.add_argument(
        "--trace",
        "-t",
        metavar="FILE",
        help="workload trace (.csv or .jsonl); default: one generated for the manifests",
    )
    p.add_argument(
        "-n",
        "--workloads",
        type=int,
        default=None,
        dest="n",
        metavar="N",
        help=f"number of workloads (default {DEFAULT_WORKLOADS:,}; with --trace: all of its rows)",
    )
    p.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"seed of the generated trace (default {DEFAULT_SEED})"
    )
    p.add_argument(
        "--days",
        type=float,
        default=DEFAULT_DAYS,
        help=f"span of the generated trace in days (default {DEFAULT_DAYS:g})",
    )
    p.add_argument(
        "--load",
        type=float,
        default=None,
        help=f"offered load of a trace generated for manifests, per ClusterQueue, over the quota its "
        f"workloads can use (default {DEFAULT_LOAD:g}; "
        "the built-in scenario has its own per-team loads)",
    )


def add_report_arguments(p: argparse.ArgumentParser, default_dir: str) -> None:
    p.add_argument(
        "--report",
        default=default_dir,
        metavar="DIR",
        help=f"report folder (default ./{default_dir})",
    )
    p.add_argument(
        "--no-report", action="store_true", help="print the summary only (default: write the report)"
    )


def add_clock_arguments(p: argparse.ArgumentParser) -> None:
    """How long the clock runs and how evictions behave."""
    p.add_argument(
        "--until",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop the clock this many seconds after the start (default: the last arrival)",
    )
    p.add_argument(
        "--drain",
        action="store_true",
        help="go on after the last arrival until every workload finished (default: stop at the last "
        "arrival; at most 30 simulated days more)",
    )
    p.add_argument(
        "--termination-delay",
        type=float,
        default=DEFAULT_TERMINATION_DELAY_S,
        metavar="SECONDS",
        help="time from a preemption until the victim's pods are gone and its quota is released "
        f"(default {DEFAULT_TERMINATION_DELAY_S:g}, Kubernetes' terminationGracePeriodSeconds; "
        "0: at the end of the cycle, as kueue-fast schedule)",
    )
    p.add_argument(
        "--pod-startup",
        type=float,
        default=DEFAULT_POD_STARTUP_S,
        metavar="SECONDS",
        help="with a Configuration that enables waitForPodsReady: median time from an admission until "
        f"the job's pods are ready, log-normal with sigma 1 (default {DEFAULT_POD_STARTUP_S:g}; 0: at once)",
    )
    p.add_argument(
        "--admission-check",
        action="append",
        default=[],
        dest="admission_checks",
        metavar="NAME=DELAY[,reject=P][,retry=P]",
        help="how the AdmissionCheck NAME decides: DELAY seconds (or 90s, 5m, 1h) after quota is reserved, "
        "Rejected with probability reject (deactivated), Retry with probability retry (evicted, queued "
        "again at once: no requeueAfterSeconds backoff), else Ready; "
        "repeatable (default: a check the ClusterQueues name is Ready at once)",
    )
    p.add_argument(
        "--existing-runtime",
        type=float,
        default=None,
        metavar="SECONDS",
        help="run time of the Workloads the manifests already hold (a live cluster's); those admitted "
        "before the start have run since their admission (default: they never finish)",
    )
    p.add_argument(
        "--max-cycles-per-instant",
        type=int,
        default=DEFAULT_MAX_CYCLES,
        dest="max_cycles",
        metavar="N",
        help=f"give up settling one instant after N cycles and say why (default {DEFAULT_MAX_CYCLES:,})",
    )


def add_progress_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--progress",
        action="store_true",
        default=None,
        help="always show the progress bar (default: on a terminal)",
    )
    g.add_argument(
        "--no-progress", action="store_false", dest="progress", help="never show it (default: on a terminal)"
    )


def add_trace_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="trace_command", required=True, metavar="SUBCOMMAND")
    _add_trace_generate(sub)
    _add_trace_convert(sub)
    _add_trace_record(sub)


def _add_trace_generate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    g = sub.add_parser(
        "generate",
        help="write a synthetic trace",
        description="Synthetic workloads: for the built-in scenario, or for the LocalQueues of the "
        "manifests given (five job sizes from 1/64 to 1/4 of each ClusterQueue's nominal quota, whole "
        "units of integer resources, never more than the ClusterQueue can ever hold; office-hours "
        "arrivals, log-normal run times calibrated to --load).",
    )
    g.add_argument("files", nargs="*", metavar="FILE", help="Kueue manifests; none: the built-in scenario")
    add_recursive_argument(g)
    g.add_argument(
        "-n",
        "--workloads",
        type=int,
        default=DEFAULT_WORKLOADS,
        dest="n",
        metavar="N",
        help=f"number of workloads (default {DEFAULT_WORKLOADS:,})",
    )
    g.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})")
    g.add_argument(
        "--days",
        type=float,
        default=DEFAULT_DAYS,
        help=f"span of the arrivals in days (default {DEFAULT_DAYS:g})",
    )
    g.add_argument(
        "--load",
        type=float,
        default=DEFAULT_LOAD,
        help=f"offered load per ClusterQueue over the quota its workloads can use, for manifests "
        f"(default {DEFAULT_LOAD:g})",
    )
    g.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FORMAT",
        help="csv or jsonl (default: from the suffix of --output-file)",
    )
    g.add_argument(
        "--output-file", default=None, metavar="PATH", help="where to write the trace (required; no default)"
    )
    g.set_defaults(func=_run_trace_generate)


def _add_trace_convert(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = sub.add_parser(
        "convert",
        help="convert a trace between CSV and JSON Lines",
        description="Read a trace and write it in the format of the output's suffix.",
    )
    c.add_argument("input", metavar="INPUT", help="trace to read (.csv, or .jsonl/.ndjson/.json)")
    c.add_argument("output", metavar="OUTPUT", help="trace to write (format from its suffix: .csv or .jsonl)")
    c.set_defaults(func=_run_trace_convert)


def _add_trace_record(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    r = sub.add_parser(
        "record",
        help="write the trace of what a cluster ran (its Workloads), to replay it",
        description="What a cluster ran, as a trace: each Workload created in the window, with its "
        "creation time (arrival), pod sets, requests, placement, priority and LocalQueue, and its run "
        "time (from its Job's startTime and completionTime, else its Admitted and Finished conditions; a "
        "Workload still running has its run time so far, a lower bound). Pending Workloads are left out "
        "and counted. Read from the cluster (--kubeconfig, read-only) or from files "
        "(kubectl get workloads,jobs,workloadpriorityclasses -A -o yaml).",
    )
    r.add_argument(
        "files", nargs="*", metavar="FILE", help="Workloads and Jobs as YAML or JSON (none: --kubeconfig)"
    )
    add_recursive_argument(r)
    r.add_argument(
        "--kubeconfig",
        metavar="PATH",
        default=None,
        help="read the Workloads and Jobs of this cluster, finished ones too, read-only "
        "(default: none; needs kueue-fast[controller])",
    )
    r.add_argument(
        "--context", default=None, help="kubeconfig context (default: the kubeconfig's current context)"
    )
    r.add_argument(
        "--since",
        default=None,
        metavar="WHEN",
        help="record Workloads created from then: an RFC 3339 time or a duration before --until "
        "(7d, 36h; default: the first creation)",
    )
    r.add_argument(
        "--until",
        default=None,
        metavar="WHEN",
        help="the end of the recording: an RFC 3339 time (default: the cluster's time when read, else "
        "the latest time in the files)",
    )
    r.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FORMAT",
        help="csv or jsonl (default: from the suffix of --output-file)",
    )
    r.add_argument(
        "--output-file", default=None, metavar="PATH", help="where to write the trace (required; no default)"
    )
    r.add_argument(
        "--write-configuration",
        default=None,
        metavar="PATH",
        help="also write the configuration read (every object but Workloads and jobs) as YAML, to replay "
        "the trace against (default: none)",
    )
    r.set_defaults(func=_run_trace_record)


def _run_trace_record(args: argparse.Namespace) -> int:
    from .trace import run_record

    return run_record(args)


def _run_trace_generate(args: argparse.Namespace) -> int:
    from .trace import run_generate

    return run_generate(args)


def _run_trace_convert(args: argparse.Namespace) -> int:
    from .trace import run_convert

    return run_convert(args)


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Time the standard cases, each in its own process: wall time, decisions per second, peak RSS, "
        "native against reference measured in the same run (the reference runs a subset where it "
        "would take minutes, and its time is scaled)."
    )
    p.add_argument(
        "cases",
        nargs="*",
        metavar="CASE",
        help="cases to run (default: "
        + ", ".join(BENCH_DEFAULT_CASES)
        + "): "
        + "; ".join(f"{name} ({title.split(': ', 1)[-1]})" for name, title in BENCH_CASES.items())
        + "; load, e2e, e2e-1m and kueue-perf run only when named",
    )
    p.add_argument(
        "--engine",
        choices=(*ENGINES, "both"),
        default="both",
        help="which engines to run (default both, native if built)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON (default: a table)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes, a smoke test and not a benchmark (default: full sizes)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        metavar="N",
        help="runs per case and engine, the best one reported (default 3)",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="run cases in this process, without peak RSS per case (default: one process per case)",
    )
