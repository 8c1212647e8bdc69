"""The same Workloads in each YAML style people write, and as JSON, measured
side by side in one run: the parse alone per reader (in this process, best
of --repeat, cyclic GC off as the loader runs it) and ``kueue-fast schedule
FILE --until-stable -o json`` end to end (a fresh process each, best of
--repeat, peak RSS from its rusage).

    python bench/yaml_styles.py [--workloads 100000] [--repeat 3]

The styles, written once into the bench cache (``kueue-fast bench e2e``'s
drain input, ``e2e_input_files``):

- block: ``kubectl get -o yaml``'s style (the e2e ``yaml`` file);
- flow: PyYAML's default style, every collection of scalars a flow
  collection (the e2e ``flow-yaml`` file);
- hand: the flow file as people write it by hand: quoted scalars
  (``cpu: '500m'``, ``image: "busybox"``), a comment before each Workload;
- crlf: the block file with CRLF line breaks;
- json: the compact JSON List (the e2e ``json`` file).

Every style must give the same documents: checked before anything is timed.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from kueue_fast.bench.e2e import e2e_input_files, run_schedule_e2e
from kueue_fast.loader import _yaml_block, documents


def _hand(flow_text: str) -> str:
    text = re.sub(r"\{cpu: ([0-9]+m?)", r"{cpu: '\1'", flow_text)
    text = text.replace("image: busybox", 'image: "busybox"')
    return text.replace(
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n",
        "---\n# a Workload\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n",
    )


def style_files(n: int) -> dict[str, str]:
    """{style: path}, the derived styles written beside the e2e files once."""
    e2e = e2e_input_files("drain", n)
    paths = {"block": e2e["yaml"], "flow": e2e["flow-yaml"]}
    stem = e2e["yaml"].removesuffix(".yaml")
    derived: dict[str, tuple[str, Callable[[], str]]] = {
        "hand": (f"{stem}.hand.yaml", lambda: _hand(_read(e2e["flow-yaml"]))),
        "crlf": (f"{stem}.crlf.yaml", lambda: _read(e2e["yaml"]).replace("\n", "\r\n")),
    }
    for style, (path, make) in derived.items():
        if not os.path.exists(path):
            with open(path + ".tmp", "w", encoding="utf-8", newline="") as f:
                f.write(make())
            os.replace(path + ".tmp", path)
        paths[style] = path
    paths["json"] = e2e["json"]
    return paths


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:  # universal newlines, as the loader reads
        return f.read()


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        value = None
        gc.disable()
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
        gc.enable()
    return best, value


def parse_figures(style: str, path: str, repeat: int) -> tuple[list[Any], str, float, float]:
    """The documents, the reader the loader takes, its parse time, yaml-rs's (NaN for JSON)."""
    text = _read(path)
    if style == "json":
        parse_s, value = _best(lambda: documents._json_loads(text), repeat)
        return value["items"], "orjson by item", parse_s, float("nan")
    reader = "_yaml_block" if _yaml_block.load_all(text) is not None else "yaml-rs"
    parse_s, docs = _best(lambda: documents.parse_yaml(text), repeat)
    rs_s, _ = _best(lambda: documents.parse_yaml_rs(text), 1)
    return [d for d in docs if d is not None], reader, parse_s, rs_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    paths = style_files(args.workloads)
    # the processes first: a child forked from a process that holds the
    # documents would count that process's memory in its peak RSS
    e2e = {style: run_schedule_e2e(path, "native", args.repeat) for style, path in paths.items()}
    rows = [["style", "MB", "reader", "parse", "yaml-rs parse", "schedule wall", "its parse", "peak RSS"]]
    want = None
    for style, path in paths.items():
        docs, reader, parse_s, rs_s = parse_figures(style, path, args.repeat)
        if want is None:
            want = docs
        elif docs != want:
            raise SystemExit(f"{style}: not the same documents as {next(iter(paths))}")
        del docs
        r = e2e[style]
        rows.append(
            [
                style,
                f"{os.path.getsize(path) / 1e6:.1f}",
                reader,
                f"{parse_s:.3f} s",
                "" if rs_s != rs_s else f"{rs_s:.3f} s",
                f"{r['wall_s']:.3f} s",
                f"{r['parse_s']:.3f} s",
                f"{r['peak_rss_mb']:.0f} MB",
            ]
        )
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows[1:]:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
