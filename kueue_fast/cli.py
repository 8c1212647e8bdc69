"""The ``kueue-fast`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import InputError, KueueFastError


def _add_schedule(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "schedule",
        help="run Kueue's scheduler on manifests and print the decisions",
        description="Read Kueue objects, run scheduling cycles and print what is admitted, "
        "where, and what is preempted (see the scheduling contract in the README).",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="YAML or JSON file, or - for standard input")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--cycles", type=int, default=None, help="run exactly N cycles (default 1)")
    g.add_argument("--until-stable", action="store_true", help="run until a cycle changes nothing")
    p.add_argument("--max-cycles", type=int, default=100000, help="limit for --until-stable")
    p.add_argument("--engine", choices=("native", "reference"), default=None,
                   help="which engine decides (default: $KUEUE_FAST_ENGINE or native)")
    p.add_argument("--output", "-o", choices=("json", "yaml", "table"), default="json")
    p.add_argument("--stats", action="store_true", help="print timings as one JSON line on stderr")
    p.set_defaults(func=_run_schedule)


def _run_schedule(args: argparse.Namespace) -> int:
    from .schedule_command import run_schedule

    return run_schedule(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kueue-fast",
        description="Kueue's admission decisions, fast: schedule, simulate, bench, controller.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_schedule(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rc: int = args.func(args)
        return rc
    except InputError as e:
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
    sys.exit(main())
