"""Drain benchmark with admission fair sharing, side by side with the plain drain.

The input of bench_drain.py (kueue_fast.bench.drain_case: 100k pending
workloads over 1000 ClusterQueues in 100 cohorts), once as it is and once
with admission fair sharing: every ClusterQueue UsageBasedAdmissionFairSharing,
four LocalQueues per namespace (the case's "lq" and three more, with some
persisted history), each workload in one of them, and a Configuration with
admissionFairSharing (half-life 60 s, sampling every 5 s; every admission
pushes and settles an entry penalty and every pop compares LocalQueue usages).
Both go through the simulator's engine adapters, as bench_drain.py does.

With admission fair sharing this input need not settle: the LocalQueue order
changes which workloads reclaim from borrowers, and reclaimed workloads come
back by borrowing (kueue_fast.bench describes the same churn for reclaim Any;
Kueue, which gives preempted workloads no backoff, would go on the same way).
So both runs are capped at the same number of cycles (CYCLES, more than the
plain drain needs to settle: it stops earlier).

Both runs are timed in the same process, alternating, best and median of
--rounds; the AFS run is checked against the reference engine on a 10k subset
(every decision and the whole usage ledger must agree).

    pytest bench/bench_drain_afs.py                          # pytest-benchmark
    python bench/bench_drain_afs.py [--workloads N] [--rounds R] [--no-reference]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_drain as bd  # noqa: E402

from kueue_fast.bench import BASE_NS, NS, drain_case  # noqa: E402
from kueue_fast.engine.inputs import compile_topology  # noqa: E402
from kueue_fast.engine.workloads import WorkloadCompiler  # noqa: E402
from kueue_fast.loader import build_state  # noqa: E402
from kueue_fast.simulate.batch import batch_from_trace  # noqa: E402
from kueue_fast.simulate.engine_view import SimEngine  # noqa: E402

LQS = ["lq", "lq-1", "lq-2", "lq-3"]  # per namespace; "lq" is the case's own
CYCLES = 150  # about what the plain drain needs to settle


def afs_input(n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000) -> bd.DrainInput:
    """drain_case with admission fair sharing (see the module docstring), compiled once."""
    case = drain_case(n_cq=n_cq, n_cohorts=n_cohorts, n_workloads=n_workloads)
    rng = np.random.default_rng(1)
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "admissionFairSharing": {"usageHalfLifeTime": "60s", "usageSamplingInterval": "5s"},
        }
    ]
    for obj in case.objects:
        objs.append(obj)
        if obj["kind"] == "ClusterQueue":
            obj["spec"]["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
        elif obj["kind"] == "LocalQueue":
            for name in LQS[1:]:
                history = {"consumedResources": {"cpu": str(int(rng.integers(0, 64)))}}
                history["lastUpdate"] = "2023-11-14T00:00:00Z"
                status = {"fairSharing": {"weightedShare": 0, "admissionFairSharingStatus": history}}
                objs.append({**obj, "metadata": {**obj["metadata"], "name": name}, "status": status})
    queue = np.random.default_rng(2).integers(0, len(LQS), size=len(case.trace)).astype(np.int32)
    trace = dataclasses.replace(case.trace, queue=queue, queues=list(LQS))
    state = build_state(objs)
    topo = compile_topology(state, extra_resources=set(trace.resources))
    batch = batch_from_trace(trace, WorkloadCompiler(state, topo), BASE_NS)
    return bd.DrainInput(topo, batch, len(trace))


def run_cycles(sim: SimEngine, cycles: int = CYCLES) -> dict[str, int]:
    """`cycles` cycles at one instant, as bench_drain.drain runs them (stable or not)."""
    settled = sim.settle(BASE_NS + 2 * 10**6 * NS, cycles)
    return {
        "cycles": settled.cycles,
        "admitted": sum(len(s.admitted) for s in settled.steps),
        "preempted": sum(len(s.preempted) for s in settled.steps),
    }


def timed(inp: bd.DrainInput, cycles: int) -> tuple[float, dict[str, int], SimEngine]:
    sim = bd.native_engine(inp)
    t = time.perf_counter()
    res = run_cycles(sim, cycles)
    return time.perf_counter() - t, res, sim


def check_against_reference(cycles: int = CYCLES) -> tuple[float, float, dict[str, int]]:
    """The AFS run on the 10k subset (100 ClusterQueues in 10 cohorts), both
    engines: every decision and the whole ledger agree. (reference s, native s, result)."""
    sub = afs_input(n_cq=100, n_cohorts=10, n_workloads=10_000)
    ref = bd.engine_for(sub, "reference")
    t = time.perf_counter()
    ref_res = run_cycles(ref, cycles)
    ref_s = time.perf_counter() - t
    nat_s, nat_res, nat = timed(sub, cycles)
    assert nat_res == ref_res, (nat_res, ref_res)
    bd.compare_decisions(nat, ref)
    ledgers = [sim.engine.afs_ledger_state() for sim in (nat, ref)]  # type: ignore[attr-defined]
    assert ledgers[0] == ledgers[1], "the usage ledgers differ"
    return ref_s, nat_s, ref_res


# --- pytest-benchmark ---------------------------------------------------------------------------

try:
    import pytest
except ImportError:  # pragma: no cover
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    @pytest.mark.parametrize("afs", [False, True], ids=["plain", "afs"])
    def test_drain_native_fixed_cycles(benchmark: Any, afs: bool) -> None:
        inp = afs_input(n_workloads=bd.N_FULL) if afs else bd.drain_input(n_workloads=bd.N_FULL)
        results: list[dict[str, int]] = []

        def setup() -> tuple[tuple[SimEngine], dict[str, Any]]:
            return (bd.native_engine(inp),), {}

        benchmark.pedantic(lambda sim: results.append(run_cycles(sim)), setup=setup, rounds=3)
        assert all(r == results[-1] for r in results), "the run is deterministic"
        benchmark.extra_info.update(results[-1])

    def test_afs_native_matches_reference_10k() -> None:
        check_against_reference()


# --- plain report -----------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--cycles", type=int, default=CYCLES, help="cycles per run")
    p.add_argument("--no-reference", action="store_true")
    args = p.parse_args(argv)
    print(f"machine calibration: 10**7 Python additions in {bd.calibration_ms():.0f} ms")
    plain = bd.drain_input(n_workloads=args.workloads)
    afs = afs_input(n_workloads=args.workloads)
    times: dict[str, list[float]] = {"without AFS": [], "with AFS": []}
    results: dict[str, Any] = {}
    for _ in range(args.rounds):
        for label, inp in (("without AFS", plain), ("with AFS", afs)):
            s, res, _ = timed(inp, args.cycles)
            times[label].append(s)
            results[label] = res
    print(f"native, {args.workloads} workloads over 1000 ClusterQueues, {args.rounds} rounds each:")
    for label, ts in times.items():
        ts.sort()
        best, median = ts[0] * 1e3, ts[len(ts) // 2] * 1e3
        print(f"  {label:12s} best {best:7.1f} ms, median {median:7.1f} ms  {results[label]}")
    if not args.no_reference:
        ref_s, nat_s, res = check_against_reference(args.cycles)
        print(
            f"10k workloads over 100 queues with AFS: {res}; reference {ref_s * 1e3:.0f} ms, "
            f"native {nat_s * 1e3:.1f} ms (decisions and ledger identical)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
