"""`kueue-fast schedule`: run Kueue's scheduler on manifests, print the decisions."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

from . import output
from .cluster import ADMITTED, EVICTED, PENDING, RESERVED, Cluster, CycleResult, resolve_engine_name
from .errors import InputError
from .loader import load

FORMATS: dict[str, Callable[[Cluster, argparse.Namespace], str]] = {
    "json": lambda c, a: output.to_json(c, explain=a.explain),
    "yaml": lambda c, a: output.to_yaml(c),
    "table": lambda c, a: output.to_table(c),
    "usage": lambda c, a: output.to_usage(c),
    "summary": lambda c, a: output.to_summary(c),
}


def run_schedule(args: argparse.Namespace) -> int:
    engine = resolve_engine_name(args.engine)
    if args.cycles is not None and args.cycles < 1:
        raise InputError("", "--cycles", f"must be at least 1, got {args.cycles}")
    if args.max_cycles < 1:
        raise InputError("", "--max-cycles", f"must be at least 1, got {args.max_cycles}")
    t0 = time.perf_counter()
    state = load(args.files, stdin=sys.stdin, recursive=args.recursive)
    for w in state.warnings:
        print(f"warning: {' '.join(str(w).split())}", file=sys.stderr)
    cluster = Cluster(state, engine)
    t1 = time.perf_counter()
    on_cycle = _print_events(cluster) if args.events else None
    if args.until_stable:
        cluster.run_until_stable(args.max_cycles, on_cycle)
    else:
        cluster.run(args.cycles or 1, on_cycle)
    t2 = time.perf_counter()
    sys.stdout.write(FORMATS[args.output](cluster, args))
    if args.stats:
        states = [d.state for d in cluster.decisions()]
        stats = {
            "engine": engine,
            "load_s": round(t1 - t0, 6),
            "schedule_s": round(t2 - t1, 6),
            "cycles": cluster.cycles,
            "admitted": states.count(ADMITTED),
            "evicted": states.count(EVICTED),
            "pending": states.count(PENDING),
            "reserved": states.count(RESERVED),
            "workloads": len(states),
        }
        print(json.dumps(stats), file=sys.stderr)
    return 0


def _print_events(cluster: Cluster) -> Callable[[CycleResult], None]:
    """--events: the timeline on standard error, each cycle as it ends."""

    def on_cycle(result: CycleResult) -> None:
        print("\n".join(output.cycle_events(cluster, result)), file=sys.stderr, flush=True)

    return on_cycle
