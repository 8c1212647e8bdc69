"""Drain benchmark: pending workloads over ClusterQueues in cohorts, cycles until stable.

Default size: 100k pending workloads over 1000 ClusterQueues in 100 cohorts
(10 per cohort), 3 resources (cpu, memory, example.com/gpu) in two resource
groups ([cpu, memory] and [example.com/gpu]) with 2-3 flavors each,
BestEffortFIFO queues preempting lower priorities within the queue, half of
them also reclaiming from lower priorities in the cohort. The queues settle
after ~140 cycles of up to 1000 heads. (With reclaimWithinCohort: Any, or
LowerPriority everywhere, these cohorts never settle: reclaimed workloads
come back by borrowing, in the first case on another flavor-resource, in the
second because the preemptor is skipped for entries of its cohort that do
not borrow; both engines agree on that.) Deterministic (seed 0). Timed: the cycles only, from the first to the
first that changes nothing; building the topology and ingesting the
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
from dataclasses import dataclass
from typing import Any

import numpy as np

from kueue_fast._native import STATE_NAMES, NativeEngine, WorkloadArrays
from kueue_fast._reference.scheduler import ReferenceEngine
from kueue_fast.compiler import PodSetSpec, Topology, WorkloadSpec, compile_topology
from kueue_fast.model import (
    ClusterQueue,
    ClusterState,
    FlavorQuotas,
    LabelSelector,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)

SECOND = 1_000_000_000
BASE_NS = 1_736_121_600 * SECOND
GI = 1 << 30
CPU_FLAVORS = ("on-demand", "spot", "reserved")
GPU_FLAVORS = ("gpu-a", "gpu-b", "gpu-c")
PRIORITIES = np.array([50, 100, 200])


@dataclass
class DrainInput:
    topology: Topology
    arrays: WorkloadArrays
    n_workloads: int


def drain_topology(n_cq: int = 1000, n_cohorts: int = 100) -> Topology:
    state = ClusterState()
    for f in CPU_FLAVORS + GPU_FLAVORS:
        state.resource_flavors[f] = ResourceFlavor(f)
    for i in range(n_cq):
        size = 1 + i % 3  # small, medium, large ClusterQueues
        cpu_flavors = [
            FlavorQuotas(
                f,
                [
                    ResourceQuota("cpu", (64 * size - 16 * k) * 1000),
                    ResourceQuota("memory", (192 * size - 48 * k) * GI),
                ],
            )
            for k, f in enumerate(CPU_FLAVORS[: 2 + i % 2])
        ]
        gpu_flavors = [
            FlavorQuotas(f, [ResourceQuota("example.com/gpu", 4 * size - 2 * k)])
            for k, f in enumerate(GPU_FLAVORS[: 2 + (i // 2) % 2])
        ]
        state.cluster_queues[f"cq-{i:04d}"] = ClusterQueue(
            name=f"cq-{i:04d}",
            resource_groups=[
                ResourceGroup(["cpu", "memory"], cpu_flavors),
                ResourceGroup(["example.com/gpu"], gpu_flavors),
            ],
            cohort=f"cohort-{i % n_cohorts:03d}",
            namespace_selector=LabelSelector(),
            # Half the queues reclaim from lower priorities in their cohort.
            preemption=Preemption("LowerPriority", "LowerPriority" if i % 2 else "Never"),
        )
    topo = compile_topology(state)
    topo.flavor_classes.append([None] * len(topo.flavor_names))  # class 0: every flavor usable
    return topo


def drain_input(
    n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000, seed: int = 0
) -> DrainInput:
    """Pending workloads spread uniformly over the queues: 1-4 pods of 0.25-8
    cpu with 2-4 GiB memory per cpu, a fifth of them with 1-2 GPUs per pod,
    three priorities, 5% with a minCount (partial admission). About 300
    shapes x 3 priorities: workloads of one shape and priority share their
    scheduling hash (equivalence parking), but rarely within one queue."""
    topo = drain_topology(n_cq, n_cohorts)
    rng = np.random.default_rng(seed)
    rid = {n: i for i, n in enumerate(topo.resource_names)}
    cpu_choices = np.array([250, 500, 1000, 1500, 2000, 3000, 4000, 6000, 8000])
    cpu_i = rng.choice(
        len(cpu_choices), size=n_workloads, p=[0.1, 0.15, 0.2, 0.15, 0.15, 0.1, 0.08, 0.04, 0.03]
    )
    cpu = cpu_choices[cpu_i]
    mem_per_cpu = rng.integers(2, 5, size=n_workloads)
    mem = cpu * mem_per_cpu * GI // 1000
    gpu = np.where(rng.random(n_workloads) < 0.2, rng.integers(1, 3, size=n_workloads), 0)
    count = rng.integers(1, 5, size=n_workloads)
    min_count = np.where((count > 1) & (rng.random(n_workloads) < 0.05), 1, -1)
    prio = PRIORITIES[rng.choice(3, size=n_workloads, p=[0.5, 0.3, 0.2])]
    cq = rng.integers(0, n_cq, size=n_workloads)
    # Requests per pod set: cpu, memory and (when requested) gpu, by resource id.
    order = sorted(["cpu", "memory", "example.com/gpu"], key=lambda r: rid[r])
    amounts = {"cpu": cpu, "memory": mem, "example.com/gpu": gpu}
    present = {r: (amounts[r] > 0) for r in order}
    n_req = sum(present[r].astype(np.int64) for r in order)
    req_offsets = np.concatenate([[0], np.cumsum(n_req)])
    req_resource = np.empty(int(req_offsets[-1]), dtype=np.int64)
    req_amount = np.empty(int(req_offsets[-1]), dtype=np.int64)
    pos = req_offsets[:-1].copy()
    for r in order:
        m = present[r]
        req_resource[pos[m]] = rid[r]
        req_amount[pos[m]] = amounts[r][m]
        pos[m] += 1
    # Workloads of one shape and priority fail alike (scheduling equivalence).
    shape = ((cpu_i * 3 + (mem_per_cpu - 2)) * 3 + gpu) * 5 + count
    shape = shape * 2 + (min_count > 0)
    scheduling_hash = (shape.astype(np.uint64) * np.uint64(1000) + prio.astype(np.uint64)) * np.uint64(
        2654435761
    )
    arrays = WorkloadArrays(
        cluster_queue=cq,
        priority=prio,
        queue_ts=BASE_NS + np.arange(n_workloads, dtype=np.int64) * SECOND,
        scheduling_hash=scheduling_hash,
        pod_set_offsets=np.arange(n_workloads + 1, dtype=np.int64),
        pod_set_count=count,
        pod_set_min_count=min_count,
        pod_set_flavor_class=np.zeros(n_workloads, dtype=np.int64),
        request_offsets=req_offsets,
        request_resource=req_resource,
        request_amount=req_amount,
        namespaces=[f"ns-{c:04d}" for c in cq.tolist()],
        names=[f"wl-{i:07d}" for i in range(n_workloads)],
    )
    return DrainInput(topo, arrays, n_workloads)


def specs_of(inp: DrainInput) -> list[WorkloadSpec]:
    """The same workloads as WorkloadSpecs (for the reference engine)."""
    a = inp.arrays
    out = []
    for i in range(inp.n_workloads):
        p = int(a.pod_set_offsets[i])
        r0, r1 = int(a.request_offsets[p]), int(a.request_offsets[p + 1])
        reqs = [(int(a.request_resource[k]), int(a.request_amount[k])) for k in range(r0, r1)]
        mc = int(a.pod_set_min_count[p])
        out.append(
            WorkloadSpec(
                namespace=a.namespaces[i],
                name=a.names[i],
                uid=f"{a.namespaces[i]}/{a.names[i]}",
                cluster_queue=int(a.cluster_queue[i]),
                priority=int(a.priority[i]),
                queue_ts=int(a.queue_ts[i]),
                scheduling_hash=int(a.scheduling_hash[i]),
                pod_sets=[PodSetSpec("main", int(a.pod_set_count[p]), reqs, None if mc < 0 else mc, 0)],
            )
        )
    return out


def native_engine(inp: DrainInput) -> NativeEngine:
    eng = NativeEngine(inp.topology)
    eng.add_workloads(inp.arrays)
    return eng


def drain(engine: Any, max_cycles: int = 100_000) -> dict[str, int]:
    """Cycles until one changes nothing (the contract's --until-stable)."""
    admitted = preempted = 0
    native = isinstance(engine, NativeEngine)
    for n in range(1, max_cycles + 1):
        now = BASE_NS + (10**6 + n) * SECOND
        if native:
            _, adm, pre, parked, _ = engine.run_cycle_arrays(now)
            a, p = len(adm), len(pre)
        else:
            r = engine.run_cycle(now)
            a, p, parked = len(r.admitted), len(r.preempted), r.newly_parked
        admitted += a
        preempted += p
        if not (a or p or parked):
            return {"cycles": n, "admitted": admitted, "preempted": preempted}
    raise RuntimeError("not stable")


def calibration_ms() -> float:
    """A fixed pure-Python loop (10**7 additions): how fast this machine is right now."""
    t = time.perf_counter()
    s = 0
    for i in range(10**7):
        s += i
    return (time.perf_counter() - t) * 1e3


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def compare_decisions(native: NativeEngine, ref: ReferenceEngine) -> None:
    state, cq, time_ns = native.decisions()
    for w in range(len(ref.workloads)):
        v = ref.workload_view(w)
        assert STATE_NAMES[int(state[w])] == v["state"], w
        assert int(cq[w]) == v["admitted_cq"], w
        assert int(time_ns[w]) == v["admission_time"], w
    dense = np.zeros_like(native.usage)
    for node, d in enumerate(ref.tree.usage):
        for fr, val in d.items():
            dense[node, fr] = val
    assert (dense == native.usage).all()
    for w in range(0, len(ref.workloads), max(1, len(ref.workloads) // 500)):
        a, b = ref.workload_view(w), native.workload_view(w)
        a.pop("spec")
        b.pop("spec")
        assert a == b, w


# --- pytest-benchmark ---------------------------------------------------------------------------

try:
    import pytest
except ImportError:  # pragma: no cover
    pytest = None  # type: ignore[assignment]

if pytest is not None:
    N_FULL = int(os.environ.get("KUEUE_FAST_BENCH_WORKLOADS", "100000"))

    @pytest.fixture(scope="module")
    def full_input() -> DrainInput:
        return drain_input(n_workloads=N_FULL)

    def test_drain_native(benchmark: Any, full_input: DrainInput) -> None:
        results: list[dict[str, int]] = []
        engines: list[NativeEngine] = []

        def setup() -> tuple[tuple[NativeEngine], dict[str, Any]]:
            engines.clear()  # one engine alive at a time (peak RSS)
            eng = native_engine(full_input)
            engines.append(eng)
            return (eng,), {}

        def run(eng: NativeEngine) -> None:
            results.append(drain(eng))

        benchmark.pedantic(run, setup=setup, rounds=5, iterations=1)
        res = results[-1]
        assert all(r == res for r in results), "the drain is deterministic"
        benchmark.extra_info.update(res)
        benchmark.extra_info["workloads"] = N_FULL
        benchmark.extra_info["bytes_per_workload"] = engines[-1].memory_bytes() / N_FULL
        benchmark.extra_info["peak_rss_mb"] = peak_rss_mb()
        benchmark.extra_info["candidate_evaluations"] = engines[-1].evaluations

    def test_drain_ratio_10k(benchmark: Any) -> None:
        """Native vs reference on the same 10k subset (same density), same process; decisions must agree."""
        inp = drain_input(n_cq=100, n_cohorts=10, n_workloads=10_000)
        ref = ReferenceEngine(inp.topology)
        for s in specs_of(inp):
            ref.add_workload(s)
        t0 = time.perf_counter()
        ref_res = drain(ref)
        ref_s = time.perf_counter() - t0
        results: list[dict[str, int]] = []
        engines: list[NativeEngine] = []

        def setup() -> tuple[tuple[NativeEngine], dict[str, Any]]:
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
    p.add_argument("--no-reference", action="store_true")
    args = p.parse_args(argv)

    print(f"machine calibration: 10**7 Python additions in {calibration_ms():.0f} ms")
    t0 = time.perf_counter()
    inp = drain_input(n_workloads=args.workloads)
    t1 = time.perf_counter()
    times = []
    for _ in range(args.rounds):
        eng = native_engine(inp)
        t2 = time.perf_counter()
        res = drain(eng)
        times.append(time.perf_counter() - t2)
    print(f"generate {t1 - t0:.2f} s; native drain of {args.workloads} workloads: {res}")
    print(f"  native: best {min(times) * 1e3:.1f} ms, median {sorted(times)[len(times) // 2] * 1e3:.1f} ms")
    per_workload = eng.memory_bytes() / args.workloads
    print(f"  engine memory {per_workload:.0f} B/workload; peak RSS {peak_rss_mb():.0f} MB")
    print(f"  preemption candidate evaluations {eng.evaluations}")
    if not args.no_reference:
        q = args.reference_queues
        sub = drain_input(n_cq=q, n_cohorts=max(1, q // 10), n_workloads=args.reference_workloads)
        ref = ReferenceEngine(sub.topology)
        for s in specs_of(sub):
            ref.add_workload(s)
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
