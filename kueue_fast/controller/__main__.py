"""``python -m kueue_fast.controller``: the same as ``kueue-fast controller``."""

from __future__ import annotations

import argparse
import sys

from ..api.errors import InputError
from ..commands.controller import add_arguments, run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kueue-fast controller", description=__doc__)
    add_arguments(p)
    try:
        return run(p.parse_args(argv))
    except InputError as e:  # as the kueue-fast command does: one line, status 2
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
