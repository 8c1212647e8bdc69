"""`kueue-fast schedule`: run Kueue's scheduler on manifests, print the decisions."""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable

from .._gc import no_cyclic_gc
from ..api.errors import InputError, NotStableError
from ..api.model import ClusterState
from ..cluster.cluster import ADMITTED, EVICTED, PENDING, RESERVED, Cluster, CycleResult
from ..engine.select import choose_engine, native_available
from ..loader import load
from . import schedule_output as output

# The text of each output, for standard output; -o json writes itself there in pieces as it is made
# and gives "" (output.to_json: the whole text of a million workloads never exists at once).
FORMATS: dict[str, Callable[[Cluster, argparse.Namespace], str]] = {
    "json": lambda c, a: output.to_json(c, explain=a.explain, write=sys.stdout.write),
    "yaml": lambda c, a: output.to_yaml(c),
    "table": lambda c, a: output.to_table(c),
    "usage": lambda c, a: output.to_usage(c),
    "summary": lambda c, a: output.to_summary(c),
}


def run_schedule(args: argparse.Namespace) -> int:
    engine, note = choose_engine(args.engine)
    if note:
        print(f"warning: {note}", file=sys.stderr)
    if args.cycles is not None and args.cycles < 1:
        raise InputError("", "--cycles", f"must be at least 1, got {args.cycles}")
    if args.max_cycles < 1:
        raise InputError("", "--max-cycles", f"must be at least 1, got {args.max_cycles}")
    t0 = time.perf_counter()
    with no_cyclic_gc():  # load and build in one stretch, no collection in between
        state = _state(args)
        for w in state.warnings:
            print(f"warning: {' '.join(str(w).split())}", file=sys.stderr)
        t_parsed = time.perf_counter()
        cluster = Cluster(state, engine)
    if getattr(args, "kept", None) is not None:  # the process ends with os._exit: no teardown on return
        args.kept.append(cluster)
    t1 = time.perf_counter()
    # The input's objects (millions: documents, models, compiled specs) live to the end; frozen, no
    # collection traverses them again (the output's allocations would otherwise trigger full ones).
    gc.freeze()
    try:
        return _schedule_and_print(args, cluster, [t0, t_parsed, t1])
    finally:
        gc.unfreeze()


def _schedule_and_print(args: argparse.Namespace, cluster: Cluster, times: list[float]) -> int:
    on_cycle = _print_events(cluster) if args.events else None
    if args.until_stable:
        cluster.run_until_stable(args.max_cycles, on_cycle)
    else:
        cluster.run(args.cycles or 1, on_cycle)
    times.append(time.perf_counter())
    sys.stdout.write(FORMATS[args.output](cluster, args))
    sys.stdout.flush()
    times.append(time.perf_counter())
    if args.stats:
        t0, t_parsed, t1, t2, t3 = times
        counts = cluster.state_counts()
        stats = {
            "engine": cluster.engine_name,
            # load_s = parse_s + build_s (the contract's "reading and validating the input", and the Cluster)
            "load_s": round(t1 - t0, 6),
            "schedule_s": round(t2 - t1, 6),
            "parse_s": round(t_parsed - t0, 6),  # read, parse, validate: the ClusterState
            "build_s": round(t1 - t_parsed, 6),  # the Cluster: compile and add every workload to the engine
            "output_s": round(t3 - t2, 6),  # format and write the output
            "cycles": cluster.cycles,
            "admitted": counts.get(ADMITTED, 0),
            "evicted": counts.get(EVICTED, 0),
            "pending": counts.get(PENDING, 0),
            "reserved": counts.get(RESERVED, 0),
            "workloads": sum(counts.values()),
        }
        print(json.dumps(stats), file=sys.stderr)
    if not args.until_stable:
        note = _more_cycles_note(cluster)
        if note:
            print(note, file=sys.stderr)
    return 0


# how many cycles past the ones asked for _more_cycles_note looks: the answer for the common case (heads
# behind heads, a few cycles) at a bounded cost where the cycles never settle (a preemption loop)
MORE_CYCLES_LOOKED_AT = 100


def _more_cycles_note(cluster: Cluster) -> str | None:
    """After the cycles asked for (the output is written): would Kueue's
    scheduler, which keeps running cycles, admit more? One head per
    ClusterQueue per cycle leaves the rest untried: run on, at most
    MORE_CYCLES_LOOKED_AT cycles, until a cycle changes nothing. The
    reference engine's run is replayed on the native engine for that (the
    same decisions, tests/test_native_differential.py): a hundred cycles of
    the reference engine on a churning input take seconds."""
    cycles = cluster.cycles
    if cluster.engine_name == "reference" and native_available():
        cluster = Cluster(cluster.state, "native")
        cluster.run(cycles)

    def held() -> int:
        counts = cluster.state_counts()
        return counts.get(ADMITTED, 0) + counts.get(RESERVED, 0)

    admitted = held()
    try:
        cluster.run_until_stable(MORE_CYCLES_LOOKED_AT)
        settled = True
    except NotStableError:
        settled = False
    later = held()
    if later == admitted:
        return None
    plural = "s" if cycles != 1 else ""
    first = f"note: {admitted} admitted after {cycles} cycle{plural}; Kueue's scheduler goes on:"
    total = cluster.cycles
    if settled:
        return f"{first} until nothing changes (--until-stable, {total} cycles) {later} would be admitted"
    return f"{first} after {total} cycles {later} would be admitted, and cycles still change the outcome"


def _state(args: argparse.Namespace) -> ClusterState:
    """The files; with --kubeconfig the live cluster (plus the files' objects);
    changed by --set and --patch."""
    from .whatif_args import changes_given

    if not changes_given(args):
        if not args.files:
            raise InputError("", "FILE", "give manifest files (- for standard input), or --kubeconfig PATH")
        return load(args.files, stdin=sys.stdin, recursive=args.recursive)
    from ..whatif.sources import base_variant, changed, validate

    base = base_variant(args, args.files)
    if base is None:
        raise InputError("", "FILE", "--set and --patch change manifests: give files or --kubeconfig PATH")
    return validate(changed(base, args))


def _print_events(cluster: Cluster) -> Callable[[CycleResult], None]:
    """--events: the timeline on standard error, each cycle as it ends."""

    def on_cycle(result: CycleResult) -> None:
        print("\n".join(output.cycle_events(cluster, result)), file=sys.stderr, flush=True)

    return on_cycle
