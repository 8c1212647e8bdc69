"""A sweep of 16 configurations of the built-in cluster (100k workloads each)
on one frozen trace: serial (1 worker), on the local process pool (2
workers), and on a Dask cluster of 2 worker processes on this machine;
the speed-ups and the Dask overhead over the pool, measured in one run.

    python bench/bench_sweep.py [-n 100000] [--skip-dask]
    pytest bench/bench_sweep.py --benchmark-only

Targets (issue 10): the pool finishes in under 2 x (16 x one simulation) /
cores, i.e. near-linear speed-up; Dask adds under 10% over the pool. Every
way of running gives the same results (checked here too).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import pytest

from kueue_fast.loader import Document
from kueue_fast.simulate.engine import native_available
from kueue_fast.simulate.scenario import DEFAULT_START_NS, default_objects, default_trace
from kueue_fast.whatif.overrides import Variant
from kueue_fast.whatif.results import RunSummary
from kueue_fast.whatif.runner import SimOptions, SimTask, run_all
from kueue_fast.whatif.sweep import Parameter, SweepSpec, expand, validate_all

GPU = "spec.resourceGroups[*].flavors[{}].resources[nvidia.com/gpu]"
# 4 x 4 = 16 configurations: team-llm's A100 quota and its GPU borrowing limit
SPEC = SweepSpec(
    "bench",
    [
        Parameter(
            "llm-a100", ["clusterqueue/team-llm." + GPU.format("a100") + ".nominalQuota"], [16, 24, 32, 40]
        ),
        Parameter(
            "llm-borrow", ["clusterqueue/team-llm." + GPU.format("*") + ".borrowingLimit"], [0, 8, 16, 32]
        ),
    ],
    include_base=False,
)


def sweep_inputs(n: int, engine: str = "native") -> tuple[list[SimTask], Any, SimOptions]:
    base = Variant("base", [Document("built-in", i, d) for i, d in enumerate(default_objects())])
    configs = expand(SPEC, base)
    states = validate_all(configs)
    tasks = [SimTask(i, c.label, s) for i, (c, s) in enumerate(zip(configs, states, strict=True))]
    options = SimOptions(engine=engine, start_ns=DEFAULT_START_NS, dominant="nvidia.com/gpu")
    return tasks, default_trace(n, seed=0), options


def same(a: list[RunSummary], b: list[RunSummary]) -> bool:
    return [r.deterministic() for r in a] == [r.deterministic() for r in b]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100_000, help="workloads per simulation (default 100,000)")
    ap.add_argument("--skip-dask", action="store_true", help="only serial and the pool (default: all three)")
    args = ap.parse_args()
    tasks, trace, options = sweep_inputs(args.n)
    cores = len(os.sched_getaffinity(0))
    print(f"{len(tasks)} configurations of the built-in cluster, {args.n:,} workloads each, {cores} cores")
    rows = []

    t0 = time.perf_counter()
    serial = run_all(tasks, trace, options, workers=1)
    t_serial = time.perf_counter() - t0
    one = sum(r.wall_s for r in serial) / len(serial)
    rows.append(("serial (1 worker, this process)", t_serial))

    t0 = time.perf_counter()
    pooled = run_all(tasks, trace, options, workers=2)
    t_pool = time.perf_counter() - t0
    rows.append(("local pool, 2 worker processes", t_pool))
    assert same(serial, pooled), "the pool's results differ from the serial run"

    t_dask = t_dask_all = None
    if not args.skip_dask:
        from distributed import LocalCluster

        t0 = time.perf_counter()
        with LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            t1 = time.perf_counter()
            on_dask = run_all(tasks, trace, options, scheduler=cluster.scheduler_address)
            t_dask = time.perf_counter() - t1
        t_dask_all = time.perf_counter() - t0
        rows.append(("Dask, 2 worker processes (existing cluster)", t_dask))
        rows.append(("Dask, 2 worker processes (cluster start included)", t_dask_all))
        assert same(serial, on_dask), "Dask's results differ from the serial run"

    print(f"one simulation: {one:.1f} s (mean over the serial run); 16 x one = {16 * one:.1f} s")
    target = 2 * 16 * one / cores
    for label, t in rows:
        print(f"  {label:<52} {t:7.1f} s   speed-up {t_serial / t:4.2f}x")
    print(
        f"pool target: under 2 x (16 x one) / {cores} cores = {target:.1f} s: "
        + ("met" if t_pool < target else "MISSED")
    )
    print(f"pool speed-up at 2 workers over 1: {t_serial / t_pool:.2f}x (ideal {min(2, cores)}x)")
    if t_dask is not None and t_dask_all is not None:
        print(
            f"Dask over the pool: {(t_dask / t_pool - 1) * 100:+.1f}% on an existing cluster, "
            f"{(t_dask_all / t_pool - 1) * 100:+.1f}% with its start (target: under +10%)"
        )
    print("results identical in every mode")


# --- pytest-benchmark ---------------------------------------------------------------------------------

pytestmark = pytest.mark.skipif(not native_available(), reason="native engine not built")


@pytest.mark.parametrize("n", [10_000, 100_000])
@pytest.mark.parametrize("mode", ["serial", "pool-2", "dask-2"])
def test_sweep_of_16(benchmark: Any, n: int, mode: str) -> None:
    tasks, trace, options = sweep_inputs(n)
    if mode == "dask-2":
        distributed = pytest.importorskip("distributed")
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            out = benchmark.pedantic(
                lambda: run_all(tasks, trace, options, scheduler=cluster.scheduler_address),
                rounds=1,
                iterations=1,
            )
    else:
        workers = 1 if mode == "serial" else 2
        out = benchmark.pedantic(
            lambda: run_all(tasks, trace, options, workers=workers), rounds=1, iterations=1
        )
    benchmark.extra_info.update(configurations=len(out), simulation_s=sum(r.wall_s for r in out))
    assert len(out) == 16


def test_native_sweep_matches_reference_on_a_small_trace() -> None:
    tasks, trace, options = sweep_inputs(1000)
    native = run_all(tasks[:3], trace, options, workers=1)
    ref_options = SimOptions(**{**options.__dict__, "engine": "reference"})
    reference = run_all(tasks[:3], trace, ref_options, workers=1)
    for a, b in zip(native, reference, strict=True):
        da, db = a.deterministic(), b.deterministic()
        da.pop("engine")
        db.pop("engine")
        assert da == db


if __name__ == "__main__":
    main()
