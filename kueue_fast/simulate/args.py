"""Arguments of ``kueue-fast simulate`` (kept free of heavy imports: the CLI
builds every subcommand's parser at start)."""

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
