"""Arguments of ``kueue-fast compare``, ``sweep`` and ``snapshot``, and the
live-cluster and change options ``schedule`` and ``simulate`` share with
them (free of heavy imports: the CLI builds every parser at start).

Conventions: ``-o/--output`` is an output format; paths have long names
(``--report DIR``, ``--output-file PATH``, ``--patch FILE``).
"""

from __future__ import annotations

import argparse

from ..simulate.defaults import COMPARE_REPORT_DIR, SIMULATE_FORMATS, SWEEP_REPORT_DIR
from .simulate_args import (
    add_clock_arguments,
    add_engine_argument,
    add_progress_arguments,
    add_recursive_argument,
    add_report_arguments,
    add_workload_arguments,
)

SNAPSHOT_FORMATS = ("yaml", "json")


def changes_given(args: object) -> bool:
    """Whether the configuration is the live cluster or changed (--kubeconfig,
    --set, --patch): here, so that a plain run does not import whatif.sources."""
    return bool(
        getattr(args, "kubeconfig", None) or getattr(args, "settings", None) or getattr(args, "patches", None)
    )


def add_cluster_arguments(p: argparse.ArgumentParser, always: bool = False) -> None:
    """Read the configuration from a live cluster (read-only); ``always``:
    the command always reads one, found as the controller finds it."""
    found = "$KUBECONFIG, else the in-cluster service account, else ~/.kube/config" if always else "none"
    p.add_argument(
        "--kubeconfig",
        metavar="PATH",
        default=None,
        help="read Kueue's objects, Workloads and queued Jobs from this cluster, read-only "
        f"(default: {found}; needs kueue-fast[controller])",
    )
    p.add_argument(
        "--context", default=None, help="kubeconfig context (default: the kubeconfig's current context)"
    )
    p.add_argument(
        "--kueue-namespace",
        default="kueue-system",
        metavar="NAMESPACE",
        help="where Kueue's ConfigMap kueue-manager-config is (default: kueue-system)",
    )


def add_change_arguments(p: argparse.ArgumentParser) -> None:
    """Changes to the configuration before it runs."""
    p.add_argument(
        "--set",
        action="append",
        default=[],
        dest="settings",
        metavar="KIND/NAME.PATH=VALUE",
        help="change one field, e.g. clusterqueue/team-a.spec.resourceGroups[0].flavors[default]."
        "resources[cpu].nominalQuota=24 (repeatable; default: none)",
    )
    p.add_argument(
        "--patch",
        action="append",
        default=[],
        dest="patches",
        metavar="FILE",
        help="YAML documents merged into the objects they name (JSON merge patch; new objects are added) "
        "(repeatable; default: none)",
    )


def add_source_arguments(p: argparse.ArgumentParser) -> None:
    add_cluster_arguments(p)
    add_change_arguments(p)


def _add_run_arguments(p: argparse.ArgumentParser, report_dir: str) -> None:
    """What compare and sweep share with simulate, and where they run."""
    add_workload_arguments(p)
    add_engine_argument(p)
    p.add_argument(
        "-o",
        "--output",
        default="table",
        metavar="FORMAT",
        help="what to print: table or json (default table)",
    )
    add_report_arguments(p, report_dir)
    add_clock_arguments(p)
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="simulations at once, one local process each (default: the usable cores; 1: in this process)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run on this Dask scheduler (tcp://HOST:8786) instead of local processes "
        "(default: $DASK_SCHEDULER_ADDRESS, else local; needs kueue-fast[distributed])",
    )
    add_progress_arguments(p)


def add_compare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "configs",
        nargs="*",
        metavar="CONFIG",
        help="one configuration each: a manifest file or a directory of them; the first is the base "
        "(with --kubeconfig, the live cluster is the base)",
    )
    add_recursive_argument(p)
    add_cluster_arguments(p)
    p.add_argument(
        "--set",
        action="append",
        default=[],
        dest="settings",
        metavar="KIND/NAME.PATH=VALUE",
        help="one more configuration: the base with this field changed (repeatable: all in one "
        "configuration; default: none)",
    )
    p.add_argument(
        "--patch",
        action="append",
        default=[],
        dest="patches",
        metavar="FILE",
        help="one more configuration: the base with these objects merged in (with --set: one "
        "configuration with both; default: none)",
    )
    _add_run_arguments(p, COMPARE_REPORT_DIR)


def add_sweep_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="BASE... SWEEP.yaml: the base configuration (manifest files or directories; none: the built-in "
        "scenario), then the sweep spec (the last file)",
    )
    add_recursive_argument(p)
    add_cluster_arguments(p)
    add_change_arguments(p)
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="expand and validate the configurations, list them, run nothing (default: run)",
    )
    _add_run_arguments(p, SWEEP_REPORT_DIR)


def add_snapshot_arguments(p: argparse.ArgumentParser) -> None:
    add_cluster_arguments(p, always=True)
    p.add_argument(
        "-o",
        "--output",
        choices=SNAPSHOT_FORMATS,
        default="yaml",
        metavar="FORMAT",
        help="yaml (documents) or json (a v1 List) (default: yaml)",
    )
    p.add_argument(
        "--output-file",
        default=None,
        metavar="PATH",
        help="where to write the manifests (default: standard output)",
    )


def check_output(fmt: str) -> str:
    from ..api.errors import InputError

    if fmt not in SIMULATE_FORMATS:
        raise InputError(
            "",
            "-o/--output",
            f"expects the output format (table or json), not {fmt!r}; for a folder use --report",
        )
    return fmt
