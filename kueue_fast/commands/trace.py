"""The ``trace`` command: generate a synthetic trace, record one from a cluster, convert one."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..api.errors import InputError
from ..simulate import manifest_trace, scenario
from ..simulate.defaults import TRACE_FORMATS
from ..simulate.trace_files import JSONL_SUFFIXES, read_trace, write_csv, write_jsonl, write_trace


def _generate_format(fmt: str | None, path: str | None) -> str:
    """csv or jsonl: -o/--output if given, else from the file's suffix."""
    if fmt is not None and fmt not in TRACE_FORMATS:
        raise InputError(
            "",
            "-o/--output",
            f"expects the trace format (csv or jsonl), not {fmt!r}; "
            f"for the file to write use --output-file {fmt}",
        )
    if path is None:
        raise InputError("", "--output-file", "is required: the file to write (trace.csv or trace.jsonl)")
    if fmt is None:
        return "jsonl" if Path(path).suffix.lower() in JSONL_SUFFIXES else "csv"
    return fmt


def run_generate(args: argparse.Namespace) -> int:
    fmt = _generate_format(args.output, args.output_file)
    if args.n < 0:
        raise InputError("", "-n", f"must not be negative, got {args.n}")
    if not math.isfinite(args.days) or args.days <= 0:
        raise InputError("", "--days", f"must be positive, got {args.days}")
    if not math.isfinite(args.load) or args.load <= 0:
        raise InputError("", "--load", f"must be positive, got {args.load}")
    warnings: list[str] = []
    notes: list[str] = []
    if args.files:
        from ..loader import load

        state = load(args.files, recursive=args.recursive)
        trace = manifest_trace.trace_for_state(
            state, args.n, args.seed, args.days, args.load, warnings, notes
        )
    else:
        trace = scenario.default_trace(args.n, args.seed, args.days)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    with Path(args.output_file).open("w", newline="") as f:
        (write_jsonl if fmt == "jsonl" else write_csv)(trace, f)
    print(
        f"wrote {args.output_file}: {len(trace):,} workloads, {trace.n_pod_sets:,} pod sets ({fmt})",
        file=sys.stderr,
    )
    return 0


def run_convert(args: argparse.Namespace) -> int:
    write_trace(read_trace(args.input), args.output)
    return 0


def run_record(args: argparse.Namespace) -> int:
    from ..simulate.record import configuration, duration_s, record, time_ns

    fmt = _generate_format(args.output, args.output_file)
    if bool(args.files) == bool(args.kubeconfig):
        raise InputError("", "FILE", "give the files to read or --kubeconfig, one of them")
    if args.context and not args.kubeconfig:
        raise InputError("", "--context", "names a context of a kubeconfig: give --kubeconfig PATH too")
    until = time_ns(args.until, "--until") if args.until else None
    before = duration_s(args.since) if args.since else None
    since = time_ns(args.since, "--since") if args.since and before is None else None
    if args.kubeconfig:
        from ..loader.common import parse_time_ns
        from ..whatif.live import read_cluster

        snap = read_cluster(args.kubeconfig, args.context, "kueue-system", keep_finished=True)
        docs = snap.documents
        if until is None:  # the cluster's time when read
            until = parse_time_ns(snap.taken_at, "", "")
    else:
        from ..loader import read_documents

        docs = [d.obj for d in read_documents(args.files, recursive=args.recursive)]
    rec = record(docs, since, until, before)
    with Path(args.output_file).open("w", newline="") as f:
        (write_jsonl if fmt == "jsonl" else write_csv)(rec.trace, f)
    print(rec.summary(), file=sys.stderr)
    config = args.write_configuration or "CLUSTER.yaml"
    if args.write_configuration:
        import yaml

        objs = configuration(docs)
        Path(config).write_text(yaml.safe_dump_all(objs, sort_keys=False))
        print(
            f"wrote {config}: the configuration, {len(objs):,} objects (no Workloads, no jobs)",
            file=sys.stderr,
        )
    print(
        f"wrote {args.output_file}: {len(rec.trace):,} workloads, {rec.trace.n_pod_sets:,} pod sets ({fmt}); "
        f"replay it with: kueue-fast simulate {config} --trace {args.output_file}",
        file=sys.stderr,
    )
    return 0
