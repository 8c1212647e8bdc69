"""Proof that the simulator's waits are right: queueing theory.

One ClusterQueue, one flavor, workloads of one pod each, Poisson arrivals and
exponential run times is an M/M/c queue, c = nominal quota / per-pod request.
No preemption is configured (Kueue's default ``withinClusterQueue: Never``),
no waitForPodsReady (so ``--pod-startup`` plays no part) and no admission
checks; ``--termination-delay`` only matters for evictions, of which there are
none (asserted).

1. Every simulated wait equals an exact replay of the same trace, computed
   here by a few lines that know nothing of Kueue: c servers and a FIFO queue
   (Kiefer-Wolfowitz), and, for priorities and mixed sizes, a small event loop
   for each queueing discipline (StrictFIFO and BestEffortFIFO as
   kueue-semantics.md §3.3-3.4 states them).
2. The mean wait agrees with the closed forms (Erlang C; Cobham's formula for
   non-preemptive priority classes) within a 99% confidence interval computed
   by batch means (the waits of a queue are correlated: independent-sample
   formulas would claim a precision the data do not have).

Bounded for CI: ``HYPOTHESIS_PROFILE=dev`` (the conftest profile with 20x the
examples) runs 20x more workloads. Seeds are fixed: each run is the same.
"""

from __future__ import annotations

import csv
import heapq
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from builders import ENGINES, engine_marks
from hypothesis import settings

from kueue_fast.commands.cli import main
from kueue_fast.engine.select import choose_engine
from kueue_fast.loader import build_state
from kueue_fast.simulate.event_loop import FINISHED, simulate
from kueue_fast.simulate.result import SimResult
from kueue_fast.simulate.trace_files import parse_csv

NS = 1_000_000_000
MS = 1_000_000
START = 1_736_121_600 * NS  # Monday 2025-01-06 00:00 UTC
# Longer runs under the dev profile (its max_examples is 20x the ci profile's).
SCALE = max(1, settings.default.max_examples // 100)
# Student's t, 0.995 quantile with 19 degrees of freedom: a two-sided 99%
# interval over 20 batch means.
BATCHES = 20
T_995_19 = 2.861
MEAN_RUN_S = 600.0
# c = 2 cpu / 500m: the milli-units are part of what is checked.
QUOTA, REQUEST, SERVERS = "2", "500m", 4

PARAMS = [pytest.param(e, marks=engine_marks(e)) for e in ENGINES]


def one_queue(cpu: str = QUOTA, strategy: str = "BestEffortFIFO") -> list[dict[str, Any]]:
    """A ClusterQueue of ``cpu`` cpu on one flavor, no cohort, no preemption,
    fed by the LocalQueue ``ns/q``."""
    return [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "queueingStrategy": strategy,
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "LocalQueue",
            "metadata": {"name": "q", "namespace": "ns"},
            "spec": {"clusterQueue": "cq"},
        },
    ]


class Workloads:
    """A trace as plain columns, in arrival order: times in whole ``tick_ms``
    milliseconds (the trace formats keep milliseconds), so that the replay and
    the simulator see the same nanoseconds. Names sort in arrival order
    (Kueue breaks ties of priority and creation time by namespace, then name)."""

    def __init__(
        self,
        arrival_s: np.ndarray,
        run_s: np.ndarray,
        pods: np.ndarray,
        priority: np.ndarray,
        tick_ms: int = 1,
    ) -> None:
        self.arrival_ms = (np.round(arrival_s * 1000 / tick_ms) * tick_ms).astype(np.int64).tolist()
        # at least one tick: a run of 0 would finish in the instant it started
        self.run_ms = (np.maximum(1, np.round(run_s * 1000 / tick_ms)) * tick_ms).astype(np.int64).tolist()
        self.pods = pods.astype(np.int64).tolist()
        self.priority = priority.astype(np.int64).tolist()
        self.names = [f"w-{i:06d}" for i in range(len(self.arrival_ms))]

    def __len__(self) -> int:
        return len(self.names)

    @property
    def arrival_ns(self) -> list[int]:
        return [a * MS for a in self.arrival_ms]

    @property
    def run_ns(self) -> list[int]:
        return [d * MS for d in self.run_ms]

    def csv(self) -> str:
        rows = ["arrival,namespace,queue,name,priority,duration,count,cpu"]
        for a, d, n, p, name in zip(
            self.arrival_ms, self.run_ms, self.pods, self.priority, self.names, strict=True
        ):
            rows.append(f"{a / 1000},ns,q,{name},{p},{d / 1000},{n},{REQUEST}")
        return "\n".join(rows) + "\n"

    def jsonl(self) -> str:
        lines = []
        for a, d, n, p, name in zip(
            self.arrival_ms, self.run_ms, self.pods, self.priority, self.names, strict=True
        ):
            pod_sets = [{"name": "main", "count": n, "requests": {"cpu": REQUEST}}]
            doc = {"arrival": a / 1000, "namespace": "ns", "queue": "q", "name": name, "priority": p}
            lines.append(json.dumps({**doc, "duration": d / 1000, "podSets": pod_sets}))
        return "\n".join(lines) + "\n"


def poisson(
    seed: int,
    n: int,
    load: float,
    pods: tuple[int, ...] = (1,),
    pod_weights: tuple[float, ...] = (1.0,),
    priorities: tuple[int, ...] = (0,),
    tick_ms: int = 1,
) -> Workloads:
    """n workloads with Poisson arrivals and exponential run times (mean
    MEAN_RUN_S) offering ``load`` x SERVERS pods' worth of work; each one of
    ``pods`` pods (drawn with ``pod_weights``) and one of ``priorities``
    (equally likely); times rounded to ``tick_ms``."""
    rng = np.random.default_rng(seed)
    size = rng.choice(np.array(pods), size=n, p=np.array(pod_weights) / sum(pod_weights))
    mean_pods = float(np.dot(pods, pod_weights) / sum(pod_weights))
    rate = load * SERVERS / (MEAN_RUN_S * mean_pods)  # workloads per second
    arrival = np.cumsum(rng.exponential(1 / rate, n))
    run = rng.exponential(MEAN_RUN_S, n)
    prio = rng.choice(np.array(priorities), size=n)
    return Workloads(arrival, run, size, prio, tick_ms)


def run_api(wls: Workloads, engine: str, strategy: str = "BestEffortFIFO") -> SimResult:
    """The simulator's Python entry point, run until every workload finished."""
    state = build_state(one_queue(strategy=strategy))
    return simulate(
        state, parse_csv(wls.csv()), engine=engine, start_ns=START, drain=True, termination_delay_ns=0
    )


def simulated_waits(result: SimResult) -> list[int]:
    """Per workload (trace order) its wait in ns; every one admitted once, finished, never evicted."""
    wl = result.workloads
    assert (wl.state == FINISHED).all() and (wl.admissions == 1).all() and (wl.evictions == 0).all()
    return wl.wait_ns.tolist()  # type: ignore[no-any-return]


# --- exact replays, knowing nothing of Kueue ------------------------------------------------------


def fifo_waits(arrival: list[int], run: list[int], servers: int) -> list[int]:
    """M/M/c FIFO (Kiefer-Wolfowitz): in arrival order, each job starts on the
    server that frees up first, or at its arrival if one is idle."""
    free = [0] * servers  # when each server frees up (a heap)
    waits = []
    for a, d in zip(arrival, run, strict=True):
        start = max(a, heapq.heappop(free))
        waits.append(start - a)
        heapq.heappush(free, start + d)
    return waits


def discipline_waits(wls: Workloads, capacity: int, strict: bool) -> list[int]:
    """An event loop over ``capacity`` pods. The queue is ordered by higher
    priority, then earlier arrival (then name: trace order). At each instant,
    finishes free their pods, arrivals join, then the head is taken while it
    fits. StrictFIFO: a head that does not fit blocks everything behind it.
    BestEffortFIFO: a head that does not fit is set aside, the next one is
    tried; the set-aside ones are tried again only at an instant where pods
    were freed (Kueue moves its inadmissible workloads back when quota is
    released, not when another workload arrives or is admitted)."""
    arrival, run, size, prio = wls.arrival_ns, wls.run_ns, wls.pods, wls.priority
    n, never = len(arrival), math.inf
    waits = [-1] * n
    free = capacity
    finishes: list[tuple[int, int]] = []  # (time, job)
    queue: list[tuple[int, int, int]] = []  # (-priority, arrival, job)
    set_aside: list[tuple[int, int, int]] = []
    i = 0
    while i < n or finishes:
        t = min(arrival[i] if i < n else never, finishes[0][0] if finishes else never)
        freed = False
        while finishes and finishes[0][0] == t:
            free += size[heapq.heappop(finishes)[1]]
            freed = True
        while i < n and arrival[i] == t:
            heapq.heappush(queue, (-prio[i], arrival[i], i))
            i += 1
        if freed:
            for key in set_aside:
                heapq.heappush(queue, key)
            set_aside.clear()
        while queue:
            j = queue[0][2]
            if size[j] <= free:
                heapq.heappop(queue)
                free -= size[j]
                waits[j] = int(t) - arrival[j]
                heapq.heappush(finishes, (int(t) + run[j], j))
            elif strict:
                break
            else:
                set_aside.append(heapq.heappop(queue))
    return waits


def first_difference(got: list[int], want: list[int], names: list[str]) -> str:
    bad = [k for k, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    if not bad:
        return ""
    k = bad[0]
    return f"{len(bad)} waits differ; first {names[k]}: simulated {got[k] / NS} s, replay {want[k] / NS} s"


# --- closed forms and their statistical error -------------------------------------------------------


def erlang_c(c: int, a: float) -> float:
    """Probability that an arrival waits in M/M/c with offered load a = lambda/mu < c."""
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


def batch_interval(values: np.ndarray, batches: int = BATCHES) -> tuple[float, float]:
    """Mean and 99% half-width by batch means: ``batches + 1`` equal
    consecutive batches in arrival order, the first dropped (the queue starts
    empty, not in its steady state), each remaining batch's mean one
    observation of Student's t with ``batches - 1`` degrees of freedom."""
    size = len(values) // (batches + 1)
    means = values[size : size * (batches + 1)].reshape(batches, size).mean(axis=1)
    return float(means.mean()), T_995_19 * float(means.std(ddof=1)) / math.sqrt(batches)


def class_batch_interval(
    values: np.ndarray, member: np.ndarray, batches: int = BATCHES
) -> tuple[float, float]:
    """batch_interval of one class's waits: per batch of arrivals, the mean over its members."""
    size = len(values) // (batches + 1)
    v = values[size : size * (batches + 1)].reshape(batches, size)
    m = member[size : size * (batches + 1)].reshape(batches, size)
    means = (v * m).sum(axis=1) / m.sum(axis=1)
    return float(means.mean()), T_995_19 * float(means.std(ddof=1)) / math.sqrt(batches)


def default_engine() -> str:
    return choose_engine(None)[0]


# --- 1. M/M/c FIFO ------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", PARAMS)
def test_every_wait_equals_an_exact_fifo_replay(engine: str) -> None:
    n = (4_000 if engine == "reference" else 20_000) * SCALE
    wls = poisson(seed=11, n=n, load=0.85)
    got = simulated_waits(run_api(wls, engine))
    want = fifo_waits(wls.arrival_ns, wls.run_ns, SERVERS)
    assert not first_difference(got, want, wls.names)
    assert sum(w > 0 for w in want) > n // 4  # the queue was busy: most of the work is the queueing


def test_the_cli_waits_in_workloads_csv_equal_the_fifo_replay(tmp_path: Path) -> None:
    """Through the command line: manifests and a JSON Lines trace written
    here, the waits read back from workloads.csv (milliseconds, the
    precision of the trace)."""
    wls = poisson(seed=5, n=3_000 * SCALE, load=0.9)
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(one_queue()))
    (tmp_path / "trace.jsonl").write_text(wls.jsonl())
    report = tmp_path / "report"
    code = main(
        [
            "simulate",
            str(tmp_path / "cluster.yaml"),
            "--trace",
            str(tmp_path / "trace.jsonl"),
            "--drain",
            "--no-progress",
            "--report",
            str(report),
        ]
    )
    assert code == 0
    with (report / "workloads.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["name"] for r in rows] == wls.names
    assert {r["state"] for r in rows} == {"finished"}
    got = [round(float(r["wait_s"]) * 1000) * MS for r in rows]
    want = fifo_waits(wls.arrival_ns, wls.run_ns, SERVERS)
    assert not first_difference(got, want, wls.names)


def test_the_mean_wait_agrees_with_erlang_c() -> None:
    """Utilization 0.7 on 4 servers: 43% of the workloads wait, 214 s on
    average. The 99% interval is about +-14% of the mean at this size; the
    same trace with run times a fifth longer waits 780 s on average, and
    with 3 servers the queue is nearly unstable."""
    n, load = 42_000 * SCALE, 0.7
    wls = poisson(seed=2025, n=n, load=load)
    waits = np.array(simulated_waits(run_api(wls, default_engine())), dtype=np.float64) / NS
    a = load * SERVERS
    p_wait = erlang_c(SERVERS, a)
    exact_mean = p_wait / (SERVERS - a) * MEAN_RUN_S  # Wq = C(c, a) / (c mu - lambda)
    mean, half = batch_interval(waits)
    assert abs(mean - exact_mean) <= half, (
        f"mean wait {mean:.1f} s +- {half:.1f}, Erlang C {exact_mean:.1f} s"
    )
    assert half < 0.2 * exact_mean  # the interval is narrow enough to mean something
    share, share_half = batch_interval((waits > 0).astype(np.float64))
    assert abs(share - p_wait) <= share_half, (
        f"share waiting {share:.3f} +- {share_half:.3f}, Erlang C {p_wait:.3f}"
    )


# --- 2. non-preemptive priority classes ---------------------------------------------------------------


@pytest.mark.parametrize("engine", PARAMS)
def test_with_priorities_every_wait_equals_a_non_preemptive_priority_replay(engine: str) -> None:
    n = (4_000 if engine == "reference" else 20_000) * SCALE
    wls = poisson(seed=7, n=n, load=0.85, priorities=(0, 100, 1000))
    got = simulated_waits(run_api(wls, engine))
    want = discipline_waits(wls, SERVERS, strict=False)
    assert not first_difference(got, want, wls.names)
    # the replay is not FIFO: priorities reorder the queue
    assert want != fifo_waits(wls.arrival_ns, wls.run_ns, SERVERS)


def test_class_mean_waits_agree_with_cobhams_formula() -> None:
    """M/M/c with non-preemptive priority classes of equal run times (Cobham
    1954): class k (1 = highest) waits W0 / ((1 - s[k-1]) (1 - s[k])) on
    average, W0 = C(c, a) / (c mu) the mean time until a server frees up,
    s[k] the utilization of classes 1..k."""
    n, load, prios = 45_000 * SCALE, 0.7, (1000, 100, 0)
    wls = poisson(seed=31, n=n, load=load, priorities=prios)
    waits = np.array(simulated_waits(run_api(wls, default_engine())), dtype=np.float64) / NS
    prio = np.array(wls.priority)
    w0 = erlang_c(SERVERS, load * SERVERS) * MEAN_RUN_S / SERVERS
    above = 0.0
    for p in prios:
        share = load / len(prios)
        exact = w0 / ((1 - above) * (1 - above - share))
        above += share
        mean, half = class_batch_interval(waits, prio == p)
        assert abs(mean - exact) <= half, (
            f"priority {p}: mean wait {mean:.1f} s +- {half:.1f}, Cobham {exact:.1f} s"
        )
        assert half < 0.3 * exact


# --- 3. StrictFIFO and BestEffortFIFO with mixed sizes ------------------------------------------------


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize("strategy", ["StrictFIFO", "BestEffortFIFO"])
def test_mixed_sizes_wait_as_the_exact_replay_of_their_queueing_strategy(engine: str, strategy: str) -> None:
    """Workloads of 1, 2 or 3 pods on 4 (a 3-pod head often does not fit),
    two priorities. StrictFIFO holds everything behind a head that does not
    fit; BestEffortFIFO lets smaller ones past it."""
    n = (3_000 if engine == "reference" else 12_000) * SCALE
    wls = poisson(seed=13, n=n, load=0.75, pods=(1, 2, 3), pod_weights=(3, 1, 1), priorities=(0, 10))
    got = simulated_waits(run_api(wls, engine, strategy))
    strict = discipline_waits(wls, SERVERS, strict=True)
    best_effort = discipline_waits(wls, SERVERS, strict=False)
    want = strict if strategy == "StrictFIFO" else best_effort
    assert not first_difference(got, want, wls.names)
    # the two disciplines are told apart: many workloads wait differently, and head-of-line blocking costs
    assert sum(s != b for s, b in zip(strict, best_effort, strict=True)) > n // 10
    assert sum(strict) > sum(best_effort)


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize("strategy", ["StrictFIFO", "BestEffortFIFO"])
def test_on_a_coarse_clock_simultaneous_events_wait_as_the_replay(engine: str, strategy: str) -> None:
    """Times in whole 5 minutes: many workloads arrive together, and finishes
    fall on arrivals. At one instant every finish frees its pods and every
    arrival joins before the first cycle; ties in priority and arrival go by
    name."""
    n = (2_000 if engine == "reference" else 8_000) * SCALE
    wls = poisson(
        seed=17, n=n, load=0.8, pods=(1, 2, 3), pod_weights=(3, 1, 1), priorities=(0, 10), tick_ms=300_000
    )
    assert len(set(wls.arrival_ms)) < 0.7 * n  # ties are common
    got = simulated_waits(run_api(wls, engine, strategy))
    want = discipline_waits(wls, SERVERS, strict=strategy == "StrictFIFO")
    assert not first_difference(got, want, wls.names)


@pytest.mark.parametrize("engine", PARAMS)
def test_times_stay_exact_months_into_a_trace(engine: str) -> None:
    """Trace times are decimal seconds (the formats keep milliseconds), the
    simulator's clock nanoseconds. 97 days in, a double holds a time of the
    trace only to about a nanosecond: converted straight to nanoseconds,
    8400000.291 s became 8400000290999999 ns, and waits came out a
    nanosecond off (the long runs of the replay tests found it)."""
    trace = "arrival,namespace,queue,name,duration,cpu\n"
    trace += "8400000.291,ns,q,w-1,600.001,2\n8400000.292,ns,q,w-2,0.5,2\n9000000.123,ns,q,w-3,1.001,2\n"
    result = simulate(build_state(one_queue()), parse_csv(trace), engine=engine, start_ns=START, drain=True)
    wl = result.workloads
    ms = [((t - START) // MS, (t - START) % MS) for t in wl.arrival_ns.tolist()]
    assert ms == [(8400000291, 0), (8400000292, 0), (9000000123, 0)]
    assert ((wl.finished_ns - START) // MS).tolist() == [8400600292, 8400600792, 9000001124]
    assert ((wl.finished_ns - START) % MS).tolist() == [0, 0, 0]
    assert wl.wait_ns.tolist() == [0, 600_000 * MS, 0]
