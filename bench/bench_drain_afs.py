"""Drain benchmark with admission fair sharing, side by side with the plain drain.

The cluster and workloads of bench_drain.py (100k pending workloads over 1000
ClusterQueues in 100 cohorts), once as they are and once with admission fair
sharing: every ClusterQueue UsageBasedAdmissionFairSharing, four LocalQueues
per ClusterQueue (in the workload's namespace) with some persisted history,
each workload in one of them, a Configuration with admissionFairSharing
(half-life 60 s, sampling every 5 s; the cycles are one second apart, so every
LocalQueue is sampled every fifth cycle, every admission pushes and settles an
entry penalty and every pop compares LocalQueue usages).

With admission fair sharing these cohorts never settle: the LocalQueue order
changes which workloads reclaim from borrowers, and reclaimed workloads come
back by borrowing (bench_drain.py describes the same churn for reclaimWithin
Cohort: Any); Kueue, which gives preempted workloads no backoff, would go on
the same way. So both runs are timed over the same fixed number of cycles
(CYCLES, about as many as the plain drain needs to settle).

Both runs are timed in the same process, alternating, best and median of
--rounds; the AFS run is checked against the reference engine on a 10k subset
(every decision and the whole usage ledger must agree).

    pytest bench/bench_drain_afs.py                          # pytest-benchmark
    python bench/bench_drain_afs.py [--workloads N] [--rounds R] [--no-reference]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_drain as bd  # noqa: E402

from kueue_fast._native import NativeEngine  # noqa: E402
from kueue_fast._reference.scheduler import ReferenceEngine  # noqa: E402
from kueue_fast.compiler import Topology  # noqa: E402
from kueue_fast.model import AdmissionFairSharingConfig, ClusterState, LocalQueue  # noqa: E402

LQS_PER_CQ = 4
CYCLES = 150  # about what the plain drain needs to settle


@contextlib.contextmanager
def admission_fair_sharing(lqs_per_cq: int) -> Iterator[None]:
    """bench_drain builds its ClusterState and compiles it in one call; while
    this is active its compile step first turns admission fair sharing on, so
    that both runs use exactly bench_drain's cluster."""
    plain = bd.compile_topology

    def with_afs(state: ClusterState) -> Topology:
        rng = np.random.default_rng(1)
        state.configuration.admission_fair_sharing = AdmissionFairSharingConfig(60.0, 5.0, {"memory": 1e-9})
        for c, (name, cq) in enumerate(sorted(state.cluster_queues.items())):
            cq.usage_based_admission_fair_sharing = True
            for k in range(lqs_per_cq):
                q = LocalQueue(f"ns-{c:04d}", f"lq-{k}", name)
                q.afs_consumed_nanos = {"cpu": int(rng.integers(0, 64)) * 10**9}
                state.local_queues[f"{q.namespace}/{q.name}"] = q
        return plain(state)

    bd.compile_topology = with_afs
    try:
        yield
    finally:
        bd.compile_topology = plain


def afs_input(n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000) -> bd.DrainInput:
    with admission_fair_sharing(LQS_PER_CQ):
        inp = bd.drain_input(n_cq=n_cq, n_cohorts=n_cohorts, n_workloads=n_workloads)
    # LocalQueue ids: sorted "ns-CCCC/lq-K", so ClusterQueue c's are c * LQS_PER_CQ + K.
    rng = np.random.default_rng(2)
    cq = np.asarray(inp.arrays.cluster_queue, dtype=np.int64)
    inp.arrays.local_queue = cq * LQS_PER_CQ + rng.integers(0, LQS_PER_CQ, size=len(cq))
    return inp


def reference_engine(inp: bd.DrainInput) -> ReferenceEngine:
    ref = ReferenceEngine(inp.topology)
    lqs = np.asarray(inp.arrays.local_queue).tolist()
    for spec, lq in zip(bd.specs_of(inp), lqs, strict=True):
        spec.local_queue = lq
        spec.queue_name = inp.topology.local_queues[lq].name.split("/", 1)[1]
        ref.add_workload(spec)
    return ref


def run_cycles(engine: Any, cycles: int = 0) -> dict[str, int]:
    """`cycles` cycles one second apart (bench_drain.drain's clock); 0: until stable."""
    if cycles == 0:
        return bd.drain(engine)
    admitted = preempted = 0
    for n in range(1, cycles + 1):
        r = engine.run_cycle(bd.BASE_NS + (10**6 + n) * bd.SECOND)
        admitted += len(r.admitted)
        preempted += len(r.preempted)
    return {"cycles": cycles, "admitted": admitted, "preempted": preempted}


def timed(inp: bd.DrainInput, cycles: int) -> tuple[float, dict[str, int], NativeEngine]:
    eng = bd.native_engine(inp)
    t = time.perf_counter()
    res = run_cycles(eng, cycles)
    return time.perf_counter() - t, res, eng


def check_against_reference(cycles: int = CYCLES) -> tuple[float, float, dict[str, int]]:
    """The AFS run on the 10k subset (100 ClusterQueues in 10 cohorts), both
    engines: every decision and the whole ledger agree. (reference s, native s, result)."""
    sub = afs_input(n_cq=100, n_cohorts=10, n_workloads=10_000)
    ref = reference_engine(sub)
    t = time.perf_counter()
    ref_res = run_cycles(ref, cycles)
    ref_s = time.perf_counter() - t
    nat_s, nat_res, nat = timed(sub, cycles)
    assert nat_res == ref_res, (nat_res, ref_res)
    bd.compare_decisions(nat, ref)
    assert nat.afs_ledger_state() == ref.afs_ledger_state(), "the usage ledgers differ"
    return ref_s, nat_s, ref_res


# --- pytest-benchmark ---------------------------------------------------------------------------

try:
    import pytest
except ImportError:  # pragma: no cover
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    @pytest.mark.parametrize("afs", [False, True], ids=["plain", "afs"])
    def test_drain_native_fixed_cycles(benchmark: Any, afs: bool) -> None:
        n = bd.N_FULL
        inp = afs_input(n_workloads=n) if afs else bd.drain_input(n_workloads=n)
        results: list[dict[str, int]] = []

        def setup() -> tuple[tuple[NativeEngine], dict[str, Any]]:
            return (bd.native_engine(inp),), {}

        benchmark.pedantic(lambda eng: results.append(run_cycles(eng, CYCLES)), setup=setup, rounds=3)
        assert all(r == results[-1] for r in results), "the run is deterministic"
        benchmark.extra_info.update(results[-1])

    def test_afs_native_matches_reference_10k() -> None:
        check_against_reference()


# --- plain report -----------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--cycles", type=int, default=CYCLES, help="cycles per run (0: until stable)")
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
