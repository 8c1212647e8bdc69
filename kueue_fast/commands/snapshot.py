"""``kueue-fast snapshot``: the live cluster's objects as one manifest file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..whatif.live import read_cluster


def run_snapshot(args: argparse.Namespace) -> int:
    from ..kube.snapshot import to_text

    snap = read_cluster(args.kubeconfig, args.context, args.kueue_namespace)
    text = to_text(snap, args.output)
    if args.output_file:
        Path(args.output_file).write_text(text)
        print(f"wrote {args.output_file} ({len(snap.documents):,} objects)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
