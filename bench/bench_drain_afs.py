"""Drain benchmark with admission fair sharing, side by side with the plain drain.

The cluster and workloads of bench_drain.py (100k pending workloads over 1000
ClusterQueues in 100 cohorts), once as they are and once with admission fair
sharing: every ClusterQueue UsageBasedAdmissionFairSharing, four LocalQueues
per ClusterQueue (in the workload's namespace) with some persisted history,
each workload in one of them, a Configuration with admissionFairSharing
(half-life 60 s, sampling every 5 s; the drain's cycles are one second apart,
so every LocalQueue is sampled every fifth cycle, every admission pushes and
settles an entry penalty and every pop compares LocalQueue usages).

Both runs are timed in the same process, alternating, best and median of
--rounds; the AFS run is checked against the reference engine on a 10k subset
(every decision and the whole usage ledger must agree).

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


def timed(inp: bd.DrainInput) -> tuple[float, dict[str, int], NativeEngine]:
    eng = bd.native_engine(inp)
    t = time.perf_counter()
    res = bd.drain(eng)
    return time.perf_counter() - t, res, eng


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-reference", action="store_true")
    args = p.parse_args(argv)
    print(f"machine calibration: 10**7 Python additions in {bd.calibration_ms():.0f} ms")
    plain = bd.drain_input(n_workloads=args.workloads)
    afs = afs_input(n_workloads=args.workloads)
    times: dict[str, list[float]] = {"without AFS": [], "with AFS": []}
    results: dict[str, Any] = {}
    for _ in range(args.rounds):
        for label, inp in (("without AFS", plain), ("with AFS", afs)):
            s, res, _ = timed(inp)
            times[label].append(s)
            results[label] = res
    print(f"native drain of {args.workloads} workloads over 1000 ClusterQueues, {args.rounds} rounds each:")
    for label, ts in times.items():
        ts.sort()
        print(
            f"  {label:12s} best {ts[0] * 1e3:7.1f} ms, median {ts[len(ts) // 2] * 1e3:7.1f} ms  {results[label]}"
        )
    if not args.no_reference:
        sub = afs_input(n_cq=100, n_cohorts=10, n_workloads=10_000)
        ref = reference_engine(sub)
        t = time.perf_counter()
        ref_res = bd.drain(ref)
        ref_s = time.perf_counter() - t
        nat_s, nat_res, nat = timed(sub)
        assert nat_res == ref_res, (nat_res, ref_res)
        bd.compare_decisions(nat, ref)
        assert nat.afs_ledger_state() == ref.afs_ledger_state(), "the usage ledgers differ"
        print(
            f"10k workloads over 100 queues with AFS: {ref_res}; reference {ref_s * 1e3:.0f} ms, "
            f"native {nat_s * 1e3:.1f} ms (decisions and ledger identical)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
