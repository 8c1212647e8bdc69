"""The live cluster, read-only: its snapshot (kube/snapshot.py) with
what was read and what could not be said on standard error. Apart from
``sources`` so that ``trace record`` reads a cluster without the whatif
arguments' imports."""

from __future__ import annotations

import sys
from typing import Any

from ..api.errors import InputError

CONTROLLER_EXTRA = "pip install 'kueue-fast[controller]'"


def read_cluster(
    kubeconfig: str | None, context: str | None, kueue_namespace: str, keep_finished: bool = False
) -> Any:
    """The live cluster's snapshot (kube/snapshot.py; ``keep_finished``:
    with finished Workloads and Jobs); what could not be read is said on
    standard error."""
    try:
        import kubernetes  # noqa: F401
    except ImportError:
        raise InputError(
            "", "--kubeconfig", f"reading a cluster needs the controller extra: {CONTROLLER_EXTRA}"
        ) from None
    from ..kube.snapshot import take_snapshot

    snap = take_snapshot(kubeconfig, context, kueue_namespace, keep_finished)
    print(snap.summary(), file=sys.stderr)
    for note in snap.notes:
        print(f"note: {note}", file=sys.stderr)
    return snap
