"""The ``simulate`` command: inputs, the run, the summary and the report."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..api.errors import InputError
from ..api.model import ClusterState
from ..engine.select import choose_engine
from ..simulate import manifest_trace, scenario
from ..simulate.capacity import OfferedLoad, offered_load
from ..simulate.checks import CheckModel, parse_check_option
from ..simulate.defaults import (
    DEFAULT_DAYS,
    DEFAULT_LOAD,
    DEFAULT_MAX_CYCLES,
    DEFAULT_POD_STARTUP_S,
    DEFAULT_REPORT_DIR,
    DEFAULT_SEED,
    DEFAULT_START_NS,
    DEFAULT_TERMINATION_DELAY_S,
    DEFAULT_WORKLOADS,
    SIMULATE_FORMATS,
)
from ..simulate.event_loop import NS, SimResult, simulate
from ..simulate.metrics import Metrics, compute
from ..simulate.plots import NO_CHARTS, charts_available
from ..simulate.progress import ProgressBar
from ..simulate.report import churn_lines, manifest_line, summary_table, write_report
from ..simulate.trace import Trace
from ..simulate.trace_files import read_trace, write_trace
from .simulate_args import manifest_paths

# Above this many workloads the reference engine takes minutes: say so.
REFERENCE_COMFORT = 10_000


@dataclass
class SimulationOutput:
    result: SimResult
    metrics: Metrics
    report_files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    title: str = ""
    run_label: str = ""
    said_notes: list[str] = field(default_factory=list)  # the first notes, said as the run started
    offered: OfferedLoad | None = None


@dataclass
class Inputs:
    state: ClusterState
    trace: Trace
    title: str
    start_ns: int
    generated: bool  # the trace was generated here (a seed applies)
    warnings: list[str]
    notes: list[str] = field(default_factory=list)
    offered: OfferedLoad | None = None  # the load the trace offers each ClusterQueue


def make_trace(
    state: ClusterState,
    builtin: bool,
    trace_path: str | None,
    n: int | None,
    seed: int,
    days: float,
    load: float | None,
    warnings: list[str],
    notes: list[str] | None = None,
) -> Trace:
    """The trace of a run: read from ``trace_path`` (its first n rows by
    arrival), else the built-in scenario's, else one generated for the
    LocalQueues of ``state`` (what can never be admitted goes to ``warnings``,
    where its shapes came from to ``notes``)."""
    prios = {name: pc.value for name, pc in state.priority_classes.items()}
    if trace_path:
        trace = read_trace(trace_path, priority_classes=prios)
        return trace.sorted_by_arrival().head(n) if n is not None else trace
    if builtin:
        return scenario.default_trace(n if n is not None else DEFAULT_WORKLOADS, seed, days)
    return manifest_trace.trace_for_state(
        state,
        n if n is not None else DEFAULT_WORKLOADS,
        seed,
        days,
        load if load is not None else DEFAULT_LOAD,
        warnings=warnings,
        notes=notes,
    )


def start_ns(state: ClusterState) -> int:
    """When the simulated clock starts: Monday 2025-01-06 00:00 UTC, or, when
    the manifests hold Workloads created later (a snapshot of a live
    cluster), the latest of their creation times, so that the trace's
    workloads queue behind the cluster's own."""
    latest = max((wl.creation_ns for wl in state.workloads.values()), default=0)
    return max(DEFAULT_START_NS, latest)


def _inputs(
    files: list[str] | None,
    trace_path: str | None,
    n: int | None,
    seed: int,
    days: float,
    load: float | None,
    state: ClusterState | None = None,
    title: str = "",
    builtin: bool | None = None,
) -> Inputs:
    """The state (``state``, else ``files``, else the built-in scenario) and
    the trace; ``builtin``: the state is the built-in cluster (changed), so
    its own trace applies."""
    warnings: list[str] = []
    notes: list[str] = []
    if builtin is None:
        builtin = state is None and not files
    if state is not None:
        title = title or "Simulation"
    elif files:
        from ..loader import load as load_files

        state = load_files(files, stdin=sys.stdin)
        title = "Simulation of " + ", ".join(Path(f).name for f in files)
    else:
        state = scenario.default_state()
        # the span of its generated trace (a trace file's own span shows on the next line)
        span = "" if trace_path else f", {days:g} day{'' if days == 1 else 's'}"
        title = f"Simulation of the built-in scenario (8 teams, 2 cohorts{span})"
    trace = make_trace(state, builtin, trace_path, n, seed, days, load, warnings, notes)
    if trace_path:
        title += f" with trace {Path(trace_path).name}"
    offered = offered_load(state, trace)
    return Inputs(state, trace, title, start_ns(state), not trace_path, warnings, notes, offered)


def run_label(inputs: Inputs, seed: int) -> str:
    """Seed, workloads and offered load of a run, for titles."""
    parts = [f"seed {seed}"] if inputs.generated else []
    parts.append(f"{len(inputs.trace):,} workloads")
    if inputs.offered is not None and inputs.offered.per_queue:
        parts.append(inputs.offered.text())
    return ", ".join(parts)


# long: by its signature (the 20 run options simulate, compare, sweep and bench
# pass); the body is the three steps below, about 60 lines.
def run(
    files: list[str] | None = None,
    trace_path: str | None = None,
    n: int | None = None,
    seed: int = DEFAULT_SEED,
    engine: str | None = None,
    report_dir: str | Path | None = DEFAULT_REPORT_DIR,
    days: float = DEFAULT_DAYS,
    until_s: float | None = None,
    drain: bool = False,
    max_cycles: int = DEFAULT_MAX_CYCLES,
    progress: ProgressBar | None = None,
    err: TextIO | None = None,
    termination_delay_s: float = DEFAULT_TERMINATION_DELAY_S,
    pod_startup_s: float = DEFAULT_POD_STARTUP_S,
    load: float | None = None,
    admission_checks: dict[str, CheckModel] | None = None,
    state: ClusterState | None = None,
    title: str = "",
    builtin: bool | None = None,
    existing_runtime_s: float | None = None,
) -> SimulationOutput:
    """Simulate ``files`` (or ``state``, the configuration given as objects,
    with ``title``; neither: the built-in scenario) and write the report."""
    err = err or sys.stderr
    notes: list[str] = []
    warnings: list[str] = []
    timings: dict[str, float] = {}
    t0 = time.perf_counter()

    def warn(message: str) -> None:
        warnings.append(message)
        if progress is not None:
            progress.clear()
        print(f"warning: {message}", file=err)

    # 1. engine and inputs
    engine_name, note = choose_engine(engine)
    if note:
        notes.append(note)
        print(f"note: {note}", file=err)
    inputs = _inputs(files, trace_path, n, seed, days, load, state, title, builtin)
    for w in inputs.warnings:
        warn(w)
    for note in inputs.notes:
        notes.append(note)
        print(f"note: {note}", file=err)
    said = list(notes)
    if engine_name == "reference" and len(inputs.trace) > REFERENCE_COMFORT:
        print(
            f"warning: the reference engine is the readable specification, not the fast one: "
            f"{len(inputs.trace):,} workloads will take minutes. Try -n 5000, or --engine native.",
            file=err,
        )
    timings["inputs_s"] = time.perf_counter() - t0
    # 2. the run
    start_ns = inputs.start_ns
    until_ns = start_ns + int(until_s * NS) if until_s is not None else None
    result = simulate(
        inputs.state,
        inputs.trace,
        engine_name,
        start_ns,
        until_ns,
        drain,
        max_cycles,
        progress,
        termination_delay_ns=int(round(termination_delay_s * NS)),
        pod_startup_s=pod_startup_s,
        warn=warn,
        admission_checks=admission_checks,
        seed=seed,
        manifest_duration_ns=int(round(existing_runtime_s * NS)) if existing_runtime_s is not None else None,
    )
    timings["simulate_s"] = result.wall_s
    notes.extend(_run_notes(result, warnings, max_cycles))
    if report_dir is not None and not charts_available():
        notes.append(NO_CHARTS)
    # 3. metrics and report
    t1 = time.perf_counter()
    metrics = compute(result)
    timings["metrics_s"] = time.perf_counter() - t1
    label = run_label(inputs, seed)
    files_out: list[Path] = []
    if report_dir is not None:
        messages = [*warnings, *notes]
        files_out = _write_run_report(
            Path(report_dir), inputs, result, metrics, label, seed, messages, progress, timings
        )
    timings["total_s"] = time.perf_counter() - t0
    return SimulationOutput(
        result, metrics, files_out, notes, timings, warnings, inputs.title, label, said, inputs.offered
    )


def _run_notes(result: SimResult, warnings: list[str], max_cycles: int) -> list[str]:
    """What the summary notes about a run: its own notes (admission checks)
    not already given as warnings, instants that did not settle, --drain's limit."""
    notes = [x for x in result.notes if x not in warnings]
    if result.unsettled:
        notes.append(
            f"at {result.unsettled:,} instants the scheduler had not settled after {max_cycles:,} cycles "
            "(preemptions and re-admissions kept going); the clock moved on (see the churn section)"
        )
    if result.drain_limited:
        notes.append(
            "--drain stopped 30 simulated days after the last arrival: some workloads never ran to their "
            "end (preemption churn keeps evicting them)"
        )
    return notes


def _write_run_report(
    report_dir: Path,
    inputs: Inputs,
    result: SimResult,
    metrics: Metrics,
    label: str,
    seed: int,
    messages: list[str],
    progress: ProgressBar | None,
    timings: dict[str, float],
) -> list[Path]:
    """The report folder of a run (its time goes to ``timings["report_s"]``)."""
    if progress is not None:
        progress.phase(f"writing the report to {report_dir}")
    t0 = time.perf_counter()
    extra = {
        "seed": seed if inputs.generated else None,
        "trace_workloads": len(inputs.trace),
        "label": label,
        "offered_load": inputs.offered.to_json() if inputs.offered is not None else None,
    }
    files = write_report(report_dir, result, metrics, inputs.title, label, messages, extra)
    timings["report_s"] = time.perf_counter() - t0
    return files


# --- CLI ---------------------------------------------------------------------------------------------


def _output_format(args: argparse.Namespace) -> str:
    fmt = args.output
    if args.json:
        if fmt not in (None, "json"):
            raise InputError(
                "", "--json", f"contradicts -o {fmt}; --json is the deprecated spelling of -o json"
            )
        print("note: --json is deprecated: use -o json", file=sys.stderr)
        fmt = "json"
    fmt = fmt or "table"
    if fmt not in SIMULATE_FORMATS:
        raise InputError(
            "",
            "-o/--output",
            f"expects the output format (table or json), not {fmt!r}; "
            f"for the report folder use --report {fmt}",
        )
    return str(fmt)


def check_options(args: argparse.Namespace) -> None:
    """The run options (also of compare and sweep) as exit-2 errors."""
    if args.n is not None and args.n < 0:
        raise InputError("", "-n", f"must not be negative, got {args.n}")
    if args.max_cycles < 1:
        raise InputError("", "--max-cycles-per-instant", f"must be at least 1, got {args.max_cycles}")
    if not math.isfinite(args.termination_delay) or args.termination_delay < 0:
        raise InputError(
            "", "--termination-delay", f"must be a number of seconds >= 0, got {args.termination_delay}"
        )
    if not math.isfinite(args.pod_startup) or args.pod_startup < 0:
        raise InputError("", "--pod-startup", f"must be a number of seconds >= 0, got {args.pod_startup}")
    if not math.isfinite(args.days) or args.days <= 0:
        raise InputError("", "--days", f"must be positive, got {args.days}")
    if args.load is not None and (not math.isfinite(args.load) or args.load <= 0):
        raise InputError("", "--load", f"must be positive, got {args.load}")
    if args.until is not None and (not math.isfinite(args.until) or args.until < 0):
        raise InputError("", "--until", f"must be a number of seconds >= 0, got {args.until}")
    runtime = args.existing_runtime
    if runtime is not None and (not math.isfinite(runtime) or runtime < 0):
        raise InputError("", "--existing-runtime", f"must be a number of seconds >= 0, got {runtime}")


def _changed_state(args: argparse.Namespace) -> tuple[ClusterState | None, str, bool]:
    """With --kubeconfig, --set or --patch: the configuration they give (the
    cluster or the files, else the built-in scenario, changed), its title,
    and whether it is the built-in scenario; else (None, "", False)."""
    from ..whatif.overrides import Variant
    from ..whatif.sources import base_variant, changed, changes_given, print_warnings, validate

    if not changes_given(args):
        return None, "", False
    base = base_variant(args, args.files)
    builtin = base is None
    if base is None:
        from ..loader import Document

        docs = [Document("built-in scenario", i, d) for i, d in enumerate(scenario.default_objects())]
        base = Variant("the built-in scenario", docs)
    variant = changed(base, args)
    state = validate(variant)
    print_warnings(state)
    what = "the live cluster" if args.kubeconfig else base.label
    title = f"Simulation of {what}" + (f" with {len(variant.changes)} change(s)" if variant.changes else "")
    return state, title, builtin


def run_simulate(args: argparse.Namespace) -> int:
    fmt = _output_format(args)
    check_options(args)
    state, title, builtin = _changed_state(args)
    if args.write_scenario:
        return _write_scenario(Path(args.write_scenario), args, state, builtin)
    bar = ProgressBar(enabled=args.progress)
    try:
        out = run(
            files=manifest_paths(args.files, args.recursive) or None,
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
            termination_delay_s=args.termination_delay,
            pod_startup_s=args.pod_startup,
            load=args.load,
            admission_checks=dict(parse_check_option(x) for x in args.admission_checks),
            state=state,
            title=title,
            builtin=builtin if state is not None else None,
            existing_runtime_s=args.existing_runtime,
        )
    except KeyboardInterrupt:
        bar.close()
        print("interrupted", file=sys.stderr)
        raise
    finally:
        bar.close()
    r, m = out.result, out.metrics
    if fmt == "json":
        doc = {
            "engine": r.engine,
            "label": out.run_label,
            "offered_load": out.offered.to_json() if out.offered is not None else None,
            "totals": m.totals,
            "cluster_queues": [q.to_json() for q in m.queues],
            "churn": m.churn.to_json(),
            "warnings": out.warnings,
            "notes": out.notes,
            "timings": {k: round(v, 4) for k, v in out.timings.items()},
            "cycles": r.cycles,
        }
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    else:
        t = m.totals
        sys.stdout.write(
            f"{out.title}\n{out.run_label}; {t['simulated_s'] / 86400:.1f} simulated days, "
            f"{r.engine} engine, {r.cycles:,} cycles, simulated in {r.wall_s:.1f} s\n"
        )
        held = manifest_line(r)
        sys.stdout.write(f"{held}\n\n" if held else "\n")
        sys.stdout.write(summary_table(m))
        churn = churn_lines(m.churn)
        if churn:
            sys.stdout.write("\n" + "\n".join(churn) + "\n")
        # warnings, and the engine's note, were said on standard error as they came: not again
        for note in out.notes[len(out.said_notes) :]:
            sys.stdout.write(f"\nnote: {note}\n")
    if out.report_files:
        html = next(p for p in out.report_files if p.suffix == ".html")
        print(f"report: {html}", file=sys.stderr)
    return 0


def _write_scenario(
    folder: Path, args: argparse.Namespace, state: ClusterState | None = None, builtin: bool = False
) -> int:
    """The inputs this run would use, as files: the manifests (or the
    built-in cluster) and the trace (given, or generated with the same
    options), so that ``simulate DIR/cluster.yaml --trace DIR/trace.csv``
    runs the same simulation."""
    import yaml

    files = manifest_paths(args.files, args.recursive) or None
    given = builtin if state is not None else None
    inputs = _inputs(files, args.trace, args.n, args.seed, args.days, args.load, state, "", given)
    for w in inputs.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for note in inputs.notes:
        print(f"note: {note}", file=sys.stderr)
    docs = inputs.state.documents if files or state is not None else scenario.default_objects()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    write_trace(inputs.trace.sorted_by_arrival(), folder / "trace.csv")
    print(
        f"wrote {folder / 'cluster.yaml'} and {folder / 'trace.csv'} ({len(inputs.trace):,} workloads)",
        file=sys.stderr,
    )
    return 0
