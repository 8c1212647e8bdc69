"""The ``kueue-fast`` command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..api.errors import EngineUnavailableError, InputError, KueueFastError

# kueue-fast schedule --output (commands.schedule.FORMATS, kept here free of imports)
SCHEDULE_FORMATS = ("json", "yaml", "table", "usage", "summary")


def _add_schedule(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from .simulate_args import add_engine_argument, add_recursive_argument

    p = sub.add_parser(
        "schedule",
        help="run Kueue's scheduler on manifests and print the decisions",
        description="Read Kueue objects, run scheduling cycles and print what is admitted, "
        "where, and what is preempted (the offline rules: docs/concepts/scheduling-contract.md).",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="YAML or JSON file of Kueue objects or Jobs, a directory of them, or - for standard input "
        "(with --kubeconfig: objects added to the cluster's)",
    )
    add_recursive_argument(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--cycles", type=int, default=None, metavar="N", help="run exactly N cycles (default: 1)")
    g.add_argument(
        "--until-stable",
        action="store_true",
        help="run until a cycle admits, evicts and parks nothing (default: off)",
    )
    p.add_argument(
        "--max-cycles",
        type=int,
        default=100000,
        metavar="N",
        help="give up --until-stable after N cycles, exit status 1 (default: 100000)",
    )
    add_engine_argument(p)
    p.add_argument(
        "-o",
        "--output",
        choices=SCHEDULE_FORMATS,
        default="json",
        metavar="FORMAT",
        help="json (the scheduling contract), yaml (the input with the statuses Kueue would write), "
        "table (workloads with kueue-fast's explanation, then usage), usage (quota per ClusterQueue "
        "and cohort) or summary (counts per ClusterQueue) (default: json)",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="json: give each pending or evicted workload an explanation field (default: off; "
        "the table always explains)",
    )
    p.add_argument(
        "--events",
        action="store_true",
        help="print each cycle's admissions, preemptions (by whom, why), evictions and parked "
        "workloads on standard error (default: off)",
    )
    p.add_argument(
        "--stats", action="store_true", help="print timings as one JSON line on standard error (default: off)"
    )
    from .whatif_args import add_source_arguments

    add_source_arguments(p)
    # a one-shot command: the process may end without tearing down its objects (entry())
    p.set_defaults(func=_run_schedule, fast_exit=True)


def _run_schedule(args: argparse.Namespace) -> int:
    from .schedule import run_schedule

    return run_schedule(args)


def _add_lint(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "lint",
        help="validate manifests and warn about what a reviewer of Kueue configs would flag",
        description="Validate as schedule does (every error at once), then warn about likely "
        "mistakes. Exit 0 with warnings, 2 on errors (--strict: on warnings too).",
    )
    from .lint import add_arguments

    add_arguments(p)
    p.set_defaults(func=_run_lint)


def _run_lint(args: argparse.Namespace) -> int:
    from .lint import run_lint

    return run_lint(args)


def _add_controller(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "controller",
        help="run the reconciler against a Kubernetes cluster (needs kueue-fast[controller])",
        description="Stand in for Kueue's scheduler: watch Kueue's objects and queued batch/v1 Jobs, "
        "admit them with the engine and write the decisions back as Kueue does.",
    )
    from .controller import add_arguments

    add_arguments(p)
    p.set_defaults(func=_run_controller)


def _run_controller(args: argparse.Namespace) -> int:
    try:
        from .controller import run
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        print(f"error: {e}; install kueue-fast[controller]", file=sys.stderr)
        return 2
    return run(args)


def _add_status(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "status",
        help="the pending workloads of a cluster's queues, in admission order, and why each waits "
        "(needs kueue-fast[controller])",
        description="Read a cluster's Kueue objects (read-only), build the engine as the controller does, "
        "and print per ClusterQueue (or for one LocalQueue) the pending workloads in the order Kueue would "
        "admit them, with their positions (as Kueue's visibility API counts them, from 0) and why each "
        "waits.",
    )
    from .status import add_arguments

    add_arguments(p)
    p.set_defaults(func=_run_status)


def _run_status(args: argparse.Namespace) -> int:
    from .status import run

    return run(args)


def _add_manifests(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "manifests",
        help="print the CRDs or the controller's deployment (RBAC, ServiceAccount, Deployment)",
        description="crds: Kueue's six kinds (ResourceFlavor, ClusterQueue, Cohort, LocalQueue, "
        "WorkloadPriorityClass, Workload) for a cluster without Kueue, with schemas generated from the "
        "fields kueue-fast validates. Do not apply them where Kueue's own CRDs are installed: those "
        "convert v1beta1 with Kueue's webhook and hold fields kueue-fast does not read, and the "
        "controller runs on them as they are. v1beta2 is stored; v1beta1 is listed so that they apply "
        "over CRDs that stored it, and served only for the kinds whose fields v1beta1 and v1beta2 share "
        "(not ClusterQueue and Workload). deploy: the controller's Namespace, RBAC and Deployment.",
    )
    p.add_argument("what", choices=("crds", "deploy"), help="crds: Kueue's six kinds; deploy: the controller")
    p.add_argument(
        "--namespace",
        default="kueue-system",
        help="namespace of the deployment (deploy; default: kueue-system)",
    )
    p.add_argument(
        "--image",
        default=None,
        help="image built from the Dockerfile (deploy; default: kueue-fast:0.1.0, with a warning)",
    )
    p.add_argument(
        "-o",
        "--output",
        choices=("yaml", "json"),
        default="yaml",
        metavar="FORMAT",
        help="yaml (documents) or json (a List) (default: yaml)",
    )
    p.set_defaults(func=_run_manifests)


def _run_manifests(args: argparse.Namespace) -> int:
    from . import manifests

    return manifests.run(args)


def _add_simulate(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "simulate",
        help="simulate queues under load on a simulated clock and write a report",
        description="Discrete-event simulation: workloads arrive, are admitted by Kueue's scheduling "
        "cycles, run, finish or are preempted. With no FILE, a default shared cluster with 100k "
        "workloads over a week.",
    )
    from .simulate_args import add_arguments
    from .whatif_args import add_source_arguments

    add_arguments(p)
    add_source_arguments(p)
    p.set_defaults(func=_run_simulate)


def _run_simulate(args: argparse.Namespace) -> int:
    from .simulate import run_simulate

    return run_simulate(args)


def _add_compare(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "compare",
        help="simulate one trace against several configurations and compare them side by side",
        description="What changes if I change this quota, limit or policy? One trace (given, or generated "
        "once from the first configuration) runs against every configuration with the same options; the "
        "output says what differs between them and compares every ClusterQueue side by side.",
    )
    from .whatif_args import add_compare_arguments

    add_compare_arguments(p)
    p.set_defaults(func=_run_compare)


def _run_compare(args: argparse.Namespace) -> int:
    from ..whatif.compare import run_compare

    return run_compare(args)


def _add_sweep(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "sweep",
        help="simulate a grid of variations of a configuration on one trace, in parallel",
        description="Expand the sweep spec (the last file) into configurations of the base, validate them "
        "all, simulate each on the same frozen trace (local processes, or a Dask cluster with --scheduler) "
        "and tabulate the chosen metrics, the best marked.",
    )
    from .whatif_args import add_sweep_arguments

    add_sweep_arguments(p)
    p.set_defaults(func=_run_sweep)


def _run_sweep(args: argparse.Namespace) -> int:
    from ..whatif.sweep import run_sweep

    return run_sweep(args)


def _add_snapshot(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "snapshot",
        help="read Kueue's objects, Workloads and queued Jobs from a cluster (read-only) into manifests",
        description="List what Kueue decides from (read-only) and write it as manifests that schedule, "
        "simulate, compare and sweep read offline. Needs kueue-fast[controller].",
    )
    from .whatif_args import add_snapshot_arguments

    add_snapshot_arguments(p)
    p.set_defaults(func=_run_snapshot)


def _run_snapshot(args: argparse.Namespace) -> int:
    from .snapshot import run_snapshot

    return run_snapshot(args)


def _add_trace(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("trace", help="make and convert workload traces")
    from .simulate_args import add_trace_arguments

    add_trace_arguments(p)


def _add_bench(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("bench", help="run the standard benchmarks and print a table")
    from .simulate_args import add_bench_arguments

    add_bench_arguments(p)
    p.set_defaults(func=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    from ..bench import run_bench

    return run_bench(args)


def _add_completion(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "completion",
        help="print a shell completion script",
        description="Print the completion script of a shell, generated from these options. "
        "bash: source <(kueue-fast completion bash); zsh: source <(kueue-fast completion zsh); "
        "fish: kueue-fast completion fish | source.",
    )
    p.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete in")
    p.set_defaults(func=_run_completion)


def _run_completion(args: argparse.Namespace) -> int:
    from .completion import script

    sys.stdout.write(script(build_parser(), args.shell))
    return 0


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("kueue-fast")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kueue-fast",
        description="Kueue's admission decisions, fast: schedule, simulate, compare, sweep, bench, "
        "controller.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in _COMMANDS.values():
        add(sub)
    return parser


_COMMANDS = {
    "schedule": _add_schedule,
    "lint": _add_lint,
    "controller": _add_controller,
    "status": _add_status,
    "manifests": _add_manifests,
    "simulate": _add_simulate,
    "compare": _add_compare,
    "sweep": _add_sweep,
    "snapshot": _add_snapshot,
    "trace": _add_trace,
    "bench": _add_bench,
    "completion": _add_completion,
}


class _OneCommand:
    """Stands in for build_parser's subparsers action: add_parser makes the
    parser argparse would make for the command (same prog, so the same usage,
    help and errors), on its own. Building every command's options imports
    what each needs (lint, the controller, what-if: a tenth of a second);
    `kueue-fast schedule` needs only its own."""

    def __init__(self) -> None:
        self.parser: argparse.ArgumentParser | None = None

    def add_parser(self, name: str, **kw: Any) -> argparse.ArgumentParser:
        kw.pop("help", None)  # the command list's line, not the command's own help
        self.parser = argparse.ArgumentParser(prog=f"kueue-fast {name}", **kw)
        self.parser.set_defaults(command=name)
        return self.parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of one command, as build_parser() would parse ``kueue-fast NAME ...``."""
    one = _OneCommand()
    _COMMANDS[name](one)  # type: ignore[arg-type]
    assert one.parser is not None
    return one.parser


def main(argv: Sequence[str] | None = None) -> int:
    return _main(argv)[0]


def entry() -> None:
    """The ``kueue-fast`` program (console script and ``python -m kueue_fast``):
    main(), then exit. A command that set ``fast_exit`` (schedule) ends with
    os._exit once standard output and error are flushed: tearing down the
    millions of objects of a 100k-Workload input takes seconds and nothing
    needs it (every file it read is closed; it writes only to stdout and
    stderr). Never in the library API: main() returns normally."""
    kept: list[object] = []  # what the command built, alive until os._exit (no teardown on return)
    rc, fast_exit = _main(None, kept)
    if not fast_exit:
        sys.exit(rc)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # reader gone or stream closed: nothing left to write
            pass
    os._exit(rc)


def _main(argv: Sequence[str] | None, kept: list[object] | None = None) -> tuple[int, bool]:
    """main()'s status and whether the process may end without teardown;
    such a command appends what it built to ``kept`` (args.kept)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _COMMANDS:
        args = command_parser(argv[0]).parse_args(argv[1:])
    else:
        args = build_parser().parse_args(argv)
    fast_exit = bool(getattr(args, "fast_exit", False))
    if fast_exit:
        args.kept = kept
    return _dispatch(args), fast_exit


def _dispatch(args: argparse.Namespace) -> int:
    try:
        rc: int = args.func(args)
        return rc
    except InputError as e:
        for err in e.errors:
            print(f"error: {_one_line(str(err))}", file=sys.stderr)
        return 2
    except EngineUnavailableError as e:  # a usage error, like a bad option
        print(f"error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except KueueFastError as e:
        print(f"error: {_one_line(str(e))}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


def _one_line(s: str) -> str:
    return " ".join(s.split())


if __name__ == "__main__":
    entry()
