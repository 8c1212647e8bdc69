"""``kueue-fast bench``: the standard benchmarks (work in progress)."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")


def run_bench(args: argparse.Namespace) -> int:
    raise SystemExit("kueue-fast bench: not implemented yet")
