"""Two installs of kueue-fast measured side by side, in one run: `kueue-fast
bench e2e --json` alternately in each venv, the best run per input and
format kept, then the figures and their ratios (after / before).

    python bench/side_by_side.py BEFORE_VENV AFTER_VENV [--rounds 2] [--repeat 2]

Alternating runs (before, after, before, after...) share the machine's
load between the two sides; the ratios are what to quote.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

PARTS = ("wall_s", "parse_s", "build_s", "schedule_s", "output_s", "other_s", "peak_rss_mb")


def run_side(venv: Path, repeat: int) -> list[dict[str, Any]]:
    exe = venv / "bin" / "kueue-fast"
    cmd = [str(exe), "bench", "e2e", "--engine", "native", "--repeat", str(repeat), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    results: list[dict[str, Any]] = json.loads(out)["results"]
    return results


def keep_best(best: dict[tuple[str, str], dict[str, Any]], results: list[dict[str, Any]]) -> None:
    for r in results:
        key, n = (r["input"], r["format"]), r["native"]
        if key not in best or n["wall_s"] < best[key]["wall_s"]:
            best[key] = n


def table(before: dict[tuple[str, str], dict[str, Any]], after: dict[tuple[str, str], dict[str, Any]]) -> str:
    head = ["input", "format", "side", *(p.removesuffix("_s").removesuffix("_mb") for p in PARTS)]
    rows = [head]
    for key in sorted(before):
        for side, figures in (("before", before[key]), ("after", after[key])):
            rows.append([*key, side, *(f"{figures[p]:.3f}" for p in PARTS)])
        rows.append(["", "", "after/before", *(f"{after[key][p] / before[key][p]:.2f}x" for p in PARTS)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path, help="venv of the 'before' install")
    ap.add_argument("after", type=Path, help="venv of the 'after' install")
    ap.add_argument("--rounds", type=int, default=2, help="alternations (default 2)")
    ap.add_argument("--repeat", type=int, default=2, help="bench e2e --repeat per run (default 2)")
    args = ap.parse_args()
    best: dict[str, dict[tuple[str, str], dict[str, Any]]] = {"before": {}, "after": {}}
    for i in range(args.rounds):
        for side in ("before", "after"):
            print(f"round {i + 1}: {side}", file=sys.stderr)
            keep_best(best[side], run_side(getattr(args, side), args.repeat))
    print(table(best["before"], best["after"]))
    print(f"best of {args.rounds * args.repeat} runs per side (wall time); seconds, peak RSS in MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
