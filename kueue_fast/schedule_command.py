"""`kueue-fast schedule`: run Kueue's scheduler on manifests, print the decisions."""

from __future__ import annotations

import argparse
import json
import sys
import time

from . import output
from .cluster import ADMITTED, EVICTED, PENDING, Cluster, resolve_engine_name
from .errors import InputError
from .loader import load


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
    if args.until_stable:
        cluster.run_until_stable(args.max_cycles)
    else:
        cluster.run(args.cycles or 1)
    t2 = time.perf_counter()
    if args.output == "json":
        sys.stdout.write(output.to_json(cluster))
    elif args.output == "yaml":
        sys.stdout.write(output.to_yaml(cluster))
    else:
        sys.stdout.write(output.to_table(cluster))
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
            "workloads": len(states),
        }
        print(json.dumps(stats), file=sys.stderr)
    return 0
