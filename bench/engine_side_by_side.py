"""The engine alone, two compiled cores side by side: each run is a fresh
process that loads the input, builds the Cluster and times
`run_until_stable` (what `schedule --stats` reports as schedule_s); the
two sides' runs alternate, best of N kept. (Not a fork of one built
process: the engine's writes would then pay copy-on-write faults.)

    python bench/engine_side_by_side.py BEFORE_CORE.so AFTER_CORE.so \\
        [--input ~/.cache/kueue-fast/bench/long-100000-v1.json] [--rounds 5]

A core is a built kueue_fast/_core*.so (copy the previous build's aside
before rebuilding); the Python package is the one this interpreter imports.
Instruction counts of the cycles alone (one core):

    ENGINE_SBS_CALLGRIND=1 valgrind --tool=callgrind --instr-atstart=no \\
        python bench/engine_side_by_side.py x x --run CORE.so

Each child also reports a digest of every workload's state, admission
and message: both sides must print the same one.

A time profile of the cycles (this machine's perf has no hardware
counters, only cpu-clock sampling), one load and N builds in one process:

    perf record -e cpu-clock -F 20000 python bench/engine_side_by_side.py \\
        x x --run CORE.so --repeat 15
    perf report --dso CORE.so --no-children

Callgrind's --cache-sim=yes models no prefetching (neither the hardware's
nor __builtin_prefetch): its misses in the code that prefetches (the heap
pops, prefetch_head, prefetch_entry) are mostly not waited for here. A 4-ary heap of 16-byte
entries cut its simulated 2 MB-L2 read misses by 15% and the time not at all.
The prefetches do pay (long drain, 7 alternating rounds, best cpu): without
prefetch_head 1.26x slower, without prefetch_entry 1.03x slower.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_INPUT = Path.home() / ".cache" / "kueue-fast" / "bench" / "long-100000-v1.json"


def load_core(path: str) -> None:
    """kueue_fast._core from `path`, installed before the package imports it."""
    spec = importlib.util.spec_from_file_location("kueue_fast._core", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kueue_fast._core"] = module
    spec.loader.exec_module(module)


def digest(cluster: Any) -> str:
    engine = cluster.engine
    h = hashlib.sha256()
    for wid in range(engine.n_workloads):
        v = engine.workload_view(wid)
        h.update(repr((v.state, v.admitted_cq, v.reason, v.message, v.pod_sets)).encode())
    return h.hexdigest()[:16]


def run_once(core: str, path: str, with_digest: bool) -> dict[str, Any]:
    load_core(core)
    from kueue_fast.cluster.cluster import Cluster
    from kueue_fast.loader import load

    gc.disable()
    cluster = Cluster(load([path]), "native")
    gc.freeze()
    callgrind = os.environ.get("ENGINE_SBS_CALLGRIND") == "1"
    if callgrind:  # valgrind --tool=callgrind --instr-atstart=no: count the cycles only
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    t0, c0 = time.perf_counter(), time.process_time()
    cycles = cluster.run_until_stable()
    t1, c1 = time.perf_counter(), time.process_time()
    if callgrind:
        subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
    out = {"wall_s": t1 - t0, "cpu_s": c1 - c0, "cycles": cycles, "stats": cluster.engine.stats()}
    if with_digest:
        out["digest"] = digest(cluster)
    return out


def run_repeated(core: str, path: str, repeat: int) -> dict[str, Any]:
    """The cycles `repeat` times, each on a Cluster built afresh from one load."""
    load_core(core)
    from kueue_fast.cluster.cluster import Cluster
    from kueue_fast.loader import load

    gc.disable()
    documents = load([path])
    walls = []
    for _ in range(repeat):
        cluster = Cluster(documents, "native")
        t0 = time.perf_counter()
        cluster.run_until_stable()
        walls.append(time.perf_counter() - t0)
    return {"wall_s": walls}


def run_side(core: str, path: str, with_digest: bool) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "x", "x", "--input", path, "--run", core]
    if with_digest:
        cmd.append("--digest")
    out: dict[str, Any] = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", help="the 'before' _core*.so")
    ap.add_argument("after", help="the 'after' _core*.so")
    ap.add_argument("--input", default=str(DEFAULT_INPUT))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--digest", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=0, help="with --run: N times in one process")
    args = ap.parse_args()
    if args.run and args.repeat > 0:
        print(json.dumps(run_repeated(args.run, args.input, args.repeat)))
        return 0
    if args.run:
        print(json.dumps(run_once(args.run, args.input, args.digest)))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for i in range(args.rounds):
        for name in runs:
            runs[name].append(run_side(getattr(args, name), args.input, i == 0))
    best = {name: {k: min(r[k] for r in rs) for k in ("wall_s", "cpu_s")} for name, rs in runs.items()}
    for name, rs in runs.items():
        walls = " ".join(f"{1000 * r['wall_s']:.1f}" for r in rs)
        print(f"{name:6} cycles {rs[0]['cycles']} digest {rs[0]['digest']} runs(ms) {walls}")
    for k in ("wall_s", "cpu_s"):
        b, a = best["before"][k], best["after"][k]
        print(f"best {k}: before {1000 * b:.1f} ms, after {1000 * a:.1f} ms, after/before {a / b:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
