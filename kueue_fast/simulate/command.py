"""The ``simulate`` command: inputs, the run, the summary and the report."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..errors import InputError
from ..model import ClusterState
from ..trace import Trace, read_trace
from . import scenario
from .args import DEFAULT_REPORT_DIR
from .engine import resolve_sim_engine
from .loop import NS, SimResult, simulate
from .metrics import Metrics, compute
from .progress import ProgressBar
from .report import summary_table, write_report

# Above this many workloads the reference engine takes minutes: say so.
REFERENCE_COMFORT = 10_000


@dataclass
class SimulationOutput:
    result: SimResult
    metrics: Metrics
    report_files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def _inputs(
    files: list[str] | None, trace_path: str | None, n: int | None, seed: int, days: float
) -> tuple[ClusterState, Trace, str, int]:
    """(state, trace, title, start time) for the arguments given."""
    if files:
        from ..loader import load

        state = load(files, stdin=sys.stdin)
        title = "Simulation of " + ", ".join(Path(f).name for f in files)
    else:
        state = scenario.default_state()
        title = "Simulation of the default scenario (8 teams, 2 cohorts, one week)"
    prios = {name: pc.value for name, pc in state.priority_classes.items()}
    if trace_path:
        trace = read_trace(trace_path, priority_classes=prios)
        if n is not None:
            trace = trace.sorted_by_arrival().head(n)
        title += f" with trace {Path(trace_path).name}"
    elif files:
        trace = scenario.trace_for_state(
            state, n if n is not None else scenario.DEFAULT_WORKLOADS, seed, days
        )
    else:
        trace = scenario.default_trace(n if n is not None else scenario.DEFAULT_WORKLOADS, seed, days)
    return state, trace, title, scenario.DEFAULT_START_NS


def run(
    files: list[str] | None = None,
    trace_path: str | None = None,
    n: int | None = None,
    seed: int = 0,
    engine: str | None = None,
    report_dir: str | Path | None = DEFAULT_REPORT_DIR,
    days: float = scenario.DEFAULT_DAYS,
    until_s: float | None = None,
    drain: bool = False,
    max_cycles: int = 10_000,
    progress: ProgressBar | None = None,
    err: TextIO | None = None,
) -> SimulationOutput:
    err = err or sys.stderr
    notes: list[str] = []
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    # 1. engine and inputs
    engine_name, note = resolve_sim_engine(engine)
    if note:
        notes.append(note)
        print(f"note: {note}", file=err)
    state, trace, title, start_ns = _inputs(files, trace_path, n, seed, days)
    if engine_name == "reference" and len(trace) > REFERENCE_COMFORT:
        print(
            f"warning: the reference engine is the readable specification, not the fast one: "
            f"{len(trace):,} workloads will take minutes. Try -n 5000, or --engine native.",
            file=err,
        )
    timings["inputs_s"] = time.perf_counter() - t0
    # 2. the run
    until_ns = start_ns + int(until_s * NS) if until_s is not None else None
    result = simulate(state, trace, engine_name, start_ns, until_ns, drain, max_cycles, progress)
    if progress is not None:
        progress.close()
    timings["simulate_s"] = result.wall_s
    if result.unsettled:
        notes.append(
            f"at {result.unsettled} instants the scheduler had not settled after {max_cycles} cycles "
            "(preemptions and re-admissions kept going, as Kueue does with some reclaim/borrowWithinCohort "
            "policies); the clock moved on"
        )
    # 3. metrics and report
    t1 = time.perf_counter()
    metrics = compute(result)
    timings["metrics_s"] = time.perf_counter() - t1
    files_out: list[Path] = []
    if report_dir is not None:
        t2 = time.perf_counter()
        extra = {"seed": seed, "trace_workloads": len(trace)}
        files_out = write_report(Path(report_dir), result, metrics, title, notes, extra)
        timings["report_s"] = time.perf_counter() - t2
    timings["total_s"] = time.perf_counter() - t0
    return SimulationOutput(result, metrics, files_out, notes, timings)


# --- CLI ---------------------------------------------------------------------------------------------


def run_simulate(args: argparse.Namespace) -> int:
    if args.n is not None and args.n < 0:
        raise InputError("", "-n", f"must not be negative, got {args.n}")
    if args.max_cycles < 1:
        raise InputError("", "--max-cycles-per-instant", f"must be at least 1, got {args.max_cycles}")
    if args.write_scenario:
        return _write_scenario(Path(args.write_scenario), args.n, args.seed, args.days)
    bar = ProgressBar(enabled=args.progress)
    out = run(
        files=args.files or None,
        trace_path=args.trace,
        n=args.n,
        seed=args.seed,
        engine=args.engine,
        report_dir=None if args.no_report else args.report,
        days=args.days,
        until_s=args.until,
        drain=args.drain,
        max_cycles=args.max_cycles,
        progress=bar,
    )
    r, m = out.result, out.metrics
    if args.json:
        doc = {
            "engine": r.engine,
            "totals": m.totals,
            "cluster_queues": [q.to_json() for q in m.queues],
            "timings": {k: round(v, 4) for k, v in out.timings.items()},
            "cycles": r.cycles,
        }
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    else:
        t = m.totals
        sys.stdout.write(
            f"{t['workloads']:,} workloads over {t['simulated_s'] / 86400:.1f} simulated days "
            f"({r.engine} engine, {r.cycles:,} cycles, {out.timings['total_s']:.1f} s)\n\n"
        )
        sys.stdout.write(summary_table(m))
        for note in out.notes:
            sys.stdout.write(f"\nnote: {note}\n")
    if out.report_files:
        html = next(p for p in out.report_files if p.suffix == ".html")
        print(f"report: {html}", file=sys.stderr)
    return 0


def _write_scenario(folder: Path, n: int | None, seed: int, days: float) -> int:
    import yaml

    from ..trace import write_trace

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(scenario.default_objects(), sort_keys=False))
    trace = scenario.default_trace(n if n is not None else scenario.DEFAULT_WORKLOADS, seed, days)
    write_trace(trace, folder / "trace.csv")
    print(
        f"wrote {folder / 'cluster.yaml'} and {folder / 'trace.csv'} ({len(trace):,} workloads)",
        file=sys.stderr,
    )
    return 0
