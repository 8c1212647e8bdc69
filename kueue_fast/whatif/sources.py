"""Where a configuration comes from: manifest files, a live cluster (through
the controller extra's client, read-only), or both (the files add objects to
what the cluster holds), then changed by ``--set`` and ``--patch``; and its
validation, with the configuration named in every error."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..api.errors import InputError, raise_all
from ..api.model import ClusterState
from ..commands.whatif_args import (
    changes_given as changes_given,  # its home: whatif_args.py has no heavy imports
)
from ..loader import Document, build_state, read_documents
from .live import CONTROLLER_EXTRA as CONTROLLER_EXTRA, read_cluster
from .overrides import Variant, apply_changes


def file_label(paths: Sequence[str]) -> str:
    """A short name for a configuration read from files: the file's stem."""
    if len(paths) == 1:
        p = Path(paths[0])
        return p.stem if p.suffix in (".yaml", ".yml", ".json") else p.name
    return "+".join(Path(p).stem for p in paths)


def read_variant(paths: Sequence[str], label: str | None = None, recursive: bool = False) -> Variant:
    docs = read_documents(list(paths), stdin=sys.stdin, recursive=recursive)
    return Variant(label or file_label(paths), docs, files=list(paths))


def cluster_variant(kubeconfig: str | None, context: str | None, kueue_namespace: str) -> Variant:
    snap = read_cluster(kubeconfig, context, kueue_namespace)
    source = f"cluster {snap.server}"
    return Variant("live", [Document(source, i, d) for i, d in enumerate(snap.documents)])


def base_variant(args: argparse.Namespace, files: Sequence[str]) -> Variant | None:
    """The configuration ``args`` name before changes: the live cluster (plus
    ``files``, whose objects are added), or the files; None for neither."""
    kubeconfig = getattr(args, "kubeconfig", None)
    if kubeconfig is None and getattr(args, "context", None):
        raise InputError("", "--context", "names a context of a kubeconfig: give --kubeconfig PATH too")
    if kubeconfig is not None:
        live = cluster_variant(kubeconfig, args.context, args.kueue_namespace)
        if files:
            extra = read_variant(files, recursive=getattr(args, "recursive", False))
            live.documents.extend(extra.documents)
            live.files = list(files)
        return live
    if files:
        return read_variant(files, recursive=getattr(args, "recursive", False))
    return None


def changed(base: Variant, args: argparse.Namespace) -> Variant:
    """``base`` with ``--patch`` and ``--set`` applied (itself when there are none)."""
    settings, patches = getattr(args, "settings", []), getattr(args, "patches", [])
    if not settings and not patches:
        return base
    what = "+".join(w for w, given in (("patch", patches), ("set", settings)) if given)
    return apply_changes(base, settings, patches, f"{base.label}+{what}")


def validate(variant: Variant, what: str = "") -> ClusterState:
    """The configuration as Kueue would take it; every error names ``what``
    (the configuration) before its source."""
    try:
        return build_state(variant.documents)
    except InputError as e:
        if not what:
            raise
        errors = [
            type(x)(x.obj, x.field, x.message, source=f"{what}: {x.source}" if x.source else what)
            if type(x).__init__ is InputError.__init__
            else InputError(x.obj, x.field, x.message, source=f"{what}: {x.source}" if x.source else what)
            for x in e.errors
        ]
        raise_all(errors)
        raise


def print_warnings(state: ClusterState, what: str = "") -> None:
    prefix = f"{what}: " if what else ""
    for w in state.warnings:
        print(f"warning: {prefix}{' '.join(str(w).split())}", file=sys.stderr)
