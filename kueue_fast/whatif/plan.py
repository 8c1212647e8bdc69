"""What compare and sweep share: one frozen trace for every configuration,
the simulation options, the run on the chosen workers, the summary of where
each configuration ran."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..api.errors import InputError
from ..api.model import ClusterState
from ..commands.simulate import check_options, make_trace, start_ns
from ..engine.select import choose_engine
from ..simulate.capacity import offered_load
from ..simulate.checks import parse_check_option
from ..simulate.trace import Trace
from ..simulate.trace_files import write_trace
from .diff import local_queues
from .overrides import Variant
from .run_summary import RunSummary
from .runner import SimOptions, SimTask, SweepBar, run_all, scheduler_address

NS = 1_000_000_000


@dataclass
class Plan:
    variants: list[Variant]
    states: list[ClusterState]
    trace: Trace
    options: SimOptions
    label: str  # the trace: seed, workloads, offered load
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_run_arguments(args: argparse.Namespace) -> None:
    check_options(args)
    if args.workers is not None and args.workers < 1:
        raise InputError("", "--workers", f"must be at least 1, got {args.workers}")


def check_shared_local_queues(variants: list[Variant]) -> None:
    """The trace names LocalQueues: every configuration must have the same ones."""
    base = local_queues(variants[0].documents)
    for v in variants[1:]:
        mine = local_queues(v.documents)
        if mine != base:
            missing, extra = sorted(base - mine), sorted(mine - base)
            parts = []
            if missing:
                parts.append(f"lacks LocalQueues {', '.join(missing[:5])}")
            if extra:
                parts.append(f"has LocalQueues {', '.join(extra[:5])} that {variants[0].label} does not")
            raise InputError(
                "",
                "",
                f"configuration {v.label} {' and '.join(parts)}: the configurations must share their "
                "LocalQueues (one trace runs against all of them)",
            )


def prepare(
    args: argparse.Namespace, variants: list[Variant], states: list[ClusterState], builtin: bool = False
) -> Plan:
    """The trace (``--trace``, or generated once from the first configuration)
    and the options every simulation runs with."""
    engine, note = choose_engine(args.engine)
    warnings: list[str] = []
    notes = [note] if note else []
    trace = make_trace(
        states[0], builtin, args.trace, args.n, args.seed, args.days, args.load, warnings, notes
    )
    start = start_ns(states[0])
    offered = offered_load(states[0], trace)
    options = SimOptions(
        engine=engine,
        start_ns=start,
        until_ns=start + int(args.until * NS) if args.until is not None else None,
        drain=args.drain,
        max_cycles=args.max_cycles,
        termination_delay_ns=int(round(args.termination_delay * NS)),
        dominant=offered.resource,
        manifest_duration_ns=(
            int(round(args.existing_runtime * NS)) if args.existing_runtime is not None else None
        ),
        pod_startup_s=args.pod_startup,
        admission_checks=dict(parse_check_option(x) for x in args.admission_checks),
        seed=args.seed,
    )
    parts = [f"trace {Path(args.trace).name}"] if args.trace else [f"seed {args.seed}"]
    parts.append(f"{len(trace):,} workloads")
    if offered.per_queue:
        parts.append(f"{offered.text()} (in {variants[0].label})")
    label = ", ".join(parts)
    return Plan(variants, states, trace, options, label, warnings, notes)


def execute(plan: Plan, args: argparse.Namespace) -> list[RunSummary]:
    address, origin = scheduler_address(args.scheduler)
    if address and args.workers is not None:
        raise InputError(
            "", "--workers", f"applies to local processes; the Dask cluster ({origin}) has its own"
        )
    if address and origin.startswith("$"):
        print(f"note: running on the Dask scheduler {address} ({origin})", file=sys.stderr)
    tasks = [SimTask(i, v.label, s) for i, (v, s) in enumerate(zip(plan.variants, plan.states, strict=True))]
    bar = SweepBar(enabled=args.progress)
    try:
        return run_all(tasks, plan.trace, plan.options, workers=args.workers, scheduler=address, bar=bar)
    finally:
        bar.close()


def print_notes(plan: Plan) -> None:
    for w in plan.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for n in plan.notes:
        print(f"note: {n}", file=sys.stderr)


def run_warnings(results: list[RunSummary]) -> list[str]:
    """Warnings of the runs, each once (the same trace gives the same ones)."""
    seen: dict[str, None] = {}
    for r in results:
        for w in r.warnings:
            seen.setdefault(w)
    return list(seen)


def where_lines(results: list[RunSummary]) -> list[str]:
    """How long each configuration took (and its CPU time) and where it ran."""
    width = max(len(r.label) for r in results)
    return [f"  {r.label.ljust(width)}  {r.wall_s:6.1f} s (cpu {r.cpu_s:5.1f} s)  {r.where}" for r in results]


def write_frozen_trace(plan: Plan, folder: Path) -> Path:
    p = folder / "trace.csv"
    write_trace(plan.trace, p)
    return p
