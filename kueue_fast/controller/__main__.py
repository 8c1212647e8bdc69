"""``python -m kueue_fast.controller``: the same as ``kueue-fast controller``."""

from __future__ import annotations

import argparse
import sys

from .main import add_arguments, run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kueue-fast controller", description=__doc__)
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
