"""Arguments of ``kueue-fast simulate``, ``trace`` and ``bench`` (kept free of
heavy imports: the CLI builds every subcommand's parser at start)."""

from __future__ import annotations

import argparse

DEFAULT_REPORT_DIR = "simulation-report"
DEFAULT_WORKLOADS = 100_000
DEFAULT_DAYS = 7.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files", nargs="*", metavar="FILE", help="Kueue manifests (YAML/JSON); none: the default scenario"
    )
    p.add_argument(
        "--trace",
        "-t",
        metavar="TRACE",
        help="workload trace (.csv or .jsonl); default: generated for the manifests",
    )
    p.add_argument(
        "-n",
        "--workloads",
        type=int,
        default=None,
        dest="n",
        help=f"number of workloads (default {DEFAULT_WORKLOADS:,}; with --trace: all)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the generated trace (default 0)")
    p.add_argument(
        "--days", type=float, default=DEFAULT_DAYS, help="span of the generated trace in days (default 7)"
    )
    p.add_argument(
        "--engine",
        choices=("native", "reference"),
        default=None,
        help="which engine decides (default: $KUEUE_FAST_ENGINE or native)",
    )
    p.add_argument(
        "--report",
        "-o",
        default=DEFAULT_REPORT_DIR,
        metavar="DIR",
        help=f"report folder (default ./{DEFAULT_REPORT_DIR})",
    )
    p.add_argument("--no-report", action="store_true", help="print the summary only")
    p.add_argument(
        "--until",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop the clock this many seconds after the start (default: the last arrival)",
    )
    p.add_argument(
        "--drain", action="store_true", help="go on after the last arrival until every workload finished"
    )
    p.add_argument(
        "--max-cycles-per-instant",
        type=int,
        default=10_000,
        dest="max_cycles",
        help="give up settling one instant after this many cycles (default 10000)",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", action="store_true", default=None, help="always show the progress bar")
    g.add_argument("--no-progress", action="store_false", dest="progress", help="never show it")
    p.add_argument("--json", action="store_true", help="print metrics.json's summary instead of the table")
    p.add_argument(
        "--write-scenario",
        metavar="DIR",
        default=None,
        help="write the default scenario (cluster.yaml, trace.csv) to DIR and exit",
    )


def add_trace_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="trace_command", required=True, metavar="SUBCOMMAND")
    g = sub.add_parser(
        "generate",
        help="write a synthetic trace",
        description="Synthetic workloads: for the default scenario, or for the LocalQueues of the "
        "manifests given (five job sizes from 1/64 to 1/4 of each ClusterQueue's nominal quota, "
        "office-hours arrivals, log-normal run times calibrated to --load).",
    )
    g.add_argument("files", nargs="*", metavar="FILE", help="Kueue manifests; none: the default scenario")
    g.add_argument("-n", "--workloads", type=int, default=100_000, dest="n", help="number of workloads")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--days", type=float, default=7.0, help="span of the arrivals (default 7)")
    g.add_argument(
        "--load", type=float, default=0.7, help="offered load over nominal quota, for manifests (default 0.7)"
    )
    g.add_argument("-o", "--output", required=True, metavar="PATH", help="trace.csv or trace.jsonl")
    g.set_defaults(func=_run_trace_generate)
    c = sub.add_parser("convert", help="convert a trace between CSV and JSON Lines")
    c.add_argument("input")
    c.add_argument("output")
    c.set_defaults(func=_run_trace_convert)


def _run_trace_generate(args: argparse.Namespace) -> int:
    from ..trace import run_generate

    return run_generate(args)


def _run_trace_convert(args: argparse.Namespace) -> int:
    from ..trace import run_convert

    return run_convert(args)


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("cases", nargs="*", metavar="CASE", help="drain, preemption, simulate (default: all)")
    p.add_argument(
        "--engine",
        choices=("native", "reference", "both"),
        default="both",
        help="which engines to run (default both, native if built)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test, not a benchmark)")
    p.add_argument(
        "--in-process", action="store_true", help="run cases in this process (no peak RSS per case)"
    )
