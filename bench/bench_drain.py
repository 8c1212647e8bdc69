"""Drain benchmark: pending workloads over ClusterQueues in cohorts, cycles until stable.

The input is ``kueue_fast.bench.drain_case``, the same generator as
``kueue-fast bench drain`` (the same shape), so that every figure we
publish is on one input: 100k pending workloads over 1000 ClusterQueues in
100 cohorts (10 per cohort), 3 resources (cpu, memory, nvidia.com/gpu) in
one resource group with 2-3 flavors, three workload sizes and three
priorities, preemption within the queue and reclaim of lower priorities in
the cohort. Deterministic (seed 0). Timed: the cycles only, from the first
to the first that changes nothing; building the topology and ingesting the
workloads (bulk arrays) are setup.

    pytest bench/bench_drain.py                      # pytest-benchmark
    python bench/bench_drain.py [--workloads N]      # plain report

The ratio test runs the reference engine and the native engine on the same
10k subset in the same process (100 ClusterQueues in 10 cohorts: the same
100 workloads per queue and 10 queues per cohort as the full case, so the
same contention), checks that every decision agrees, and reports native vs
reference. Absolute times depend on the machine (the report prints a
calibration: a fixed pure-Python loop); the ratio does not.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from kueue_fast.bench import BASE_NS, NS, drain_case
from kueue_fast.engine.contract import STATE_NAMES
from kueue_fast.engine.inputs import Topology, compile_topology
from kueue_fast.engine.workloads import WorkloadCompiler
from kueue_fast.loader import build_state
from kueue_fast.simulate.batch import WorkloadBatch, batch_from_trace
from kueue_fast.simulate.engine_view import SimEngine, make_sim_engine


@dataclass
class DrainInput:
    topology: Topology
    batch: WorkloadBatch
    n_workloads: int


def drain_input(
    n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000, seed: int = 0, quota_scale: int = 1
) -> DrainInput:
    """kueue_fast.bench.drain_case, compiled once (topology and workload arrays);
    quota_scale 4 is the long drain (``long_drain_case``: 100+ cycles)."""
    case = drain_case(
        n_cq=n_cq, n_cohorts=n_cohorts, n_workloads=n_workloads, seed=seed, quota_scale=quota_scale
    )
    state = build_state(case.objects)
    topo = compile_topology(state, extra_resources=set(case.trace.resources))
    batch = batch_from_trace(case.trace, WorkloadCompiler(state, topo), BASE_NS)
    return DrainInput(topo, batch, len(case.trace))


def engine_for(inp: DrainInput, engine: str) -> SimEngine:
    """A fresh engine (the simulator's adapter) holding every workload, pending."""
    sim = make_sim_engine(engine, inp.topology)
    sim.add(inp.batch, 0, inp.n_workloads)
    return sim


def native_engine(inp: DrainInput) -> SimEngine:
    return engine_for(inp, "native")


def drain(sim: SimEngine, max_cycles: int = 1_000_000) -> dict[str, int]:
    """Cycles until one changes nothing (the contract's --until-stable), as
    ``kueue-fast bench drain`` runs them."""
    settled = sim.settle(BASE_NS + 2 * 10**6 * NS, max_cycles)
    if not settled.stable:
        raise RuntimeError("not stable")
    return {
        "admitted": sum(len(s.admitted) for s in settled.steps),
        "preempted": sum(len(s.preempted) for s in settled.steps),
        "decision_cycles": len(settled.steps),
    }


def calibration_ms() -> float:
    """A fixed pure-Python loop (10**7 additions): how fast this machine is right now."""
    t = time.perf_counter()
    s = 0
    for i in range(10**7):
        s += i
    return (time.perf_counter() - t) * 1e3


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def compare_decisions(native: SimEngine, ref: SimEngine) -> None:
    nat, re = native.engine, ref.engine
    state, cq, time_ns = nat.decisions()
    for w in range(re.n_workloads):
        v = re.workload_view(w)
        assert STATE_NAMES[int(state[w])] == v.state, w
        assert int(cq[w]) == v.admitted_cq, w
        assert int(time_ns[w]) == v.admission_time, w
    dense = np.zeros_like(nat.usage)
    for node, d in enumerate(re.tree.usage):  # type: ignore[attr-defined]
        for fr, val in d.items():
            dense[node, fr] = val
    assert (dense == nat.usage).all()
    for w in range(0, re.n_workloads, max(1, re.n_workloads // 500)):
        a, b = re.workload_view(w), nat.workload_view(w)
        assert replace(a, spec=b.spec) == b, w


# --- pytest-benchmark ---------------------------------------------------------------------------

try:
    import pytest
except ImportError:  # pragma: no cover
    pytest = None  # type: ignore[assignment]

if pytest is not None:
    N_FULL = int(os.environ.get("KUEUE_FAST_BENCH_WORKLOADS", "100000"))

    # the drain case (47 cycles) and the long drain (quotas close to demand, 100+ cycles)
    SHAPES = {"drain": 1, "long": 4}

    @pytest.fixture(scope="module", params=list(SHAPES))
    def full_input(request: Any) -> DrainInput:
        return drain_input(n_workloads=N_FULL, quota_scale=SHAPES[request.param])

    def test_drain_native(benchmark: Any, full_input: DrainInput) -> None:
        results: list[dict[str, int]] = []
        engines: list[Any] = []

        def setup() -> tuple[tuple[Any], dict[str, Any]]:
            engines.clear()  # one engine alive at a time (peak RSS)
            eng = native_engine(full_input)
            engines.append(eng)
            return (eng,), {}

        def run(eng: Any) -> None:
            results.append(drain(eng))

        benchmark.pedantic(run, setup=setup, rounds=5, iterations=1)
        res = results[-1]
        assert all(r == res for r in results), "the drain is deterministic"
        benchmark.extra_info.update(res)
        benchmark.extra_info["workloads"] = N_FULL
        benchmark.extra_info["bytes_per_workload"] = engines[-1].engine.memory_bytes() / N_FULL
        benchmark.extra_info["peak_rss_mb"] = peak_rss_mb()
        benchmark.extra_info["candidate_evaluations"] = engines[-1].candidate_evaluations()

    @pytest.mark.parametrize("shape", list(SHAPES))
    def test_drain_ratio_10k(benchmark: Any, shape: str) -> None:
        """Native vs reference on the same 10k subset (same density), same process; decisions must agree."""
        inp = drain_input(n_cq=100, n_cohorts=10, n_workloads=10_000, quota_scale=SHAPES[shape])
        ref = engine_for(inp, "reference")
        t0 = time.perf_counter()
        ref_res = drain(ref)
        ref_s = time.perf_counter() - t0
        results: list[dict[str, int]] = []
        engines: list[Any] = []

        def setup() -> tuple[tuple[Any], dict[str, Any]]:
            eng = native_engine(inp)
            engines.append(eng)
            return (eng,), {}

        benchmark.pedantic(lambda eng: results.append(drain(eng)), setup=setup, rounds=5, iterations=1)
        assert results[-1] == ref_res
        compare_decisions(engines[-1], ref)
        native_s = benchmark.stats.stats.min
        benchmark.extra_info.update(
            {"reference_s": ref_s, "native_s": native_s, "speedup": ref_s / native_s, **ref_res}
        )
        benchmark.extra_info["calibration_ms"] = calibration_ms()


# --- plain report -----------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", type=int, default=100_000)
    p.add_argument("--reference-workloads", type=int, default=10_000)
    p.add_argument(
        "--reference-queues", type=int, default=100, help="ClusterQueues of the subset (10 per cohort)"
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--quota-scale", type=int, default=1, help="4: the long drain (100+ cycles)")
    p.add_argument("--no-reference", action="store_true")
    args = p.parse_args(argv)

    print(f"machine calibration: 10**7 Python additions in {calibration_ms():.0f} ms")
    t0 = time.perf_counter()
    inp = drain_input(n_workloads=args.workloads, quota_scale=args.quota_scale)
    t1 = time.perf_counter()
    times = []
    for _ in range(args.rounds):
        eng = native_engine(inp)
        t2 = time.perf_counter()
        res = drain(eng)
        times.append(time.perf_counter() - t2)
    print(f"generate {t1 - t0:.2f} s; native drain of {args.workloads} workloads: {res}")
    print(f"  native: best {min(times) * 1e3:.1f} ms, median {sorted(times)[len(times) // 2] * 1e3:.1f} ms")
    per_workload = eng.engine.memory_bytes() / args.workloads  # type: ignore[attr-defined]
    print(f"  engine memory {per_workload:.0f} B/workload; peak RSS {peak_rss_mb():.0f} MB")
    print(f"  preemption candidate evaluations {eng.candidate_evaluations()}")
    if not args.no_reference:
        q = args.reference_queues
        sub = drain_input(
            n_cq=q,
            n_cohorts=max(1, q // 10),
            n_workloads=args.reference_workloads,
            quota_scale=args.quota_scale,
        )
        ref = engine_for(sub, "reference")
        t3 = time.perf_counter()
        ref_res = drain(ref)
        ref_s = time.perf_counter() - t3
        nat_times = []
        for _ in range(args.rounds):
            e = native_engine(sub)
            t4 = time.perf_counter()
            nat_res = drain(e)
            nat_times.append(time.perf_counter() - t4)
        assert nat_res == ref_res, (nat_res, ref_res)
        compare_decisions(e, ref)
        print(f"{args.reference_workloads} workloads over {q} queues: {ref_res}")
        print(
            f"  reference {ref_s * 1e3:.0f} ms, native {min(nat_times) * 1e3:.2f} ms, "
            f"ratio {ref_s / min(nat_times):.0f}x (decisions identical)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
