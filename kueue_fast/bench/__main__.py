"""``python -m kueue_fast.bench _case NAME ENGINE SIZE_JSON``: one case, one
JSON line (how ``run_in_subprocess`` runs a case in a fresh process)."""

from __future__ import annotations

import json
import sys

from .cases import run_case


def _main(argv: list[str]) -> int:
    """``python -m kueue_fast.bench _case NAME ENGINE SIZE_JSON``: one case, one JSON line."""
    if len(argv) == 4 and argv[0] == "_case":
        res = run_case(argv[1], argv[2], json.loads(argv[3]))
        sys.stdout.write(json.dumps(res, default=str) + "\n")
        return 0
    print("usage: python -m kueue_fast.bench _case NAME ENGINE SIZE_JSON", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
