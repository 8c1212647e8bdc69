"""The discrete-event loop.

Events are workload arrivals (from the trace) and finishes (admission time +
run time). After each batch of simultaneous events the engine runs
scheduling cycles at that instant until one changes nothing; then the clock
jumps to the next event. A preempted workload loses the work it had done,
goes back to its queue (keeping its creation timestamp) and runs its full
duration again once re-admitted. Everything the loop learns is appended to
flat logs; metrics are computed from them at the end, vectorized.
"""

from __future__ import annotations

import heapq
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..compiler import WorkloadCompiler, compile_topology
from ..model import ClusterState
from ..trace import Trace
from .batch import WorkloadBatch, batch_from_trace
from .engine import SimEngine, make_sim_engine

I64 = npt.NDArray[np.int64]
NS = 1_000_000_000
NEVER = np.iinfo(np.int64).max

FINISHED, PREEMPTED = 0, 1


@dataclass
class Progress:
    """What the progress bar shows."""

    sim_ns: int
    start_ns: int
    end_ns: int
    arrived: int
    total: int
    running: int
    admissions: int
    preemptions: int
    wall_s: float


@dataclass
class SimLog:
    """Flat logs of one run (numpy arrays once the run is over)."""

    # per workload id (manifest workloads first, then the trace's rows)
    queue_cq: I64
    arrival_ns: I64
    # admissions, in order
    adm_t: I64
    adm_wid: I64
    adm_cq: I64
    adm_wait_ns: I64
    adm_usage: I64  # (admissions, flavor-resources)
    # releases of quota: finishes and preemptions, in order
    rel_t: I64
    rel_adm: I64  # index of the admission that ends
    rel_kind: I64  # FINISHED or PREEMPTED
    rel_reason: I64  # eviction reason code (preemptions), -1 otherwise


@dataclass
class SimResult:
    state: ClusterState
    topology_cq_names: list[str]
    resource_names: list[str]
    flavor_names: list[str]
    fr_pairs: list[tuple[int, int]]
    nominal: I64  # (ClusterQueues, flavor-resources)
    cq_cohort: list[str]
    log: SimLog
    engine: str
    start_ns: int
    end_ns: int
    n_workloads: int
    n_manifest: int
    cycles: int
    instants: int
    unsettled: int
    candidate_evaluations: int
    wall_s: float
    schedule_s: float
    notes: list[str] = field(default_factory=list)


def _nominal_matrix(
    state: ClusterState,
    cq_names: list[str],
    topo_fr: dict[tuple[int, int], int],
    rid: dict[str, int],
    fid: dict[str, int],
) -> I64:
    out = np.zeros((len(cq_names), len(topo_fr)), dtype=np.int64)
    for i, name in enumerate(cq_names):
        for g in state.cluster_queues[name].resource_groups:
            for fq in g.flavors:
                for rq in fq.resources:
                    out[i, topo_fr[(fid[fq.name], rid[rq.name])]] = rq.nominal
    return out


def simulate(
    state: ClusterState,
    trace: Trace,
    engine: str = "reference",
    start_ns: int = 0,
    until_ns: int | None = None,
    drain: bool = False,
    max_cycles: int = 10_000,
    progress: Callable[[Progress], None] | None = None,
) -> SimResult:
    """Run the trace against the cluster. The run ends after the last
    arrival's instant (workloads still pending or running then are reported
    as such), at ``until_ns`` if given, or, with ``drain``, once every
    workload has finished."""
    t_wall = time.perf_counter()
    trace = trace.sorted_by_arrival()
    # 1. compile: topology (with the trace's resources), engine, the trace as arrays
    topo = compile_topology(state, extra_resources=set(trace.resources))
    compiler = WorkloadCompiler(state, topo)
    sim: SimEngine = make_sim_engine(engine, topo)
    batch: WorkloadBatch = batch_from_trace(trace, compiler, start_ns)
    manifest = [state.workloads[k] for k in sorted(state.workloads)]
    m, n = len(manifest), len(trace)
    total = m + n

    queue_cq = np.empty(total, dtype=np.int64)
    queue_cq[m:] = batch.cluster_queue
    arrival = np.empty(total, dtype=np.int64)
    arrival[m:] = batch.queue_ts
    duration = np.empty(total, dtype=np.int64)
    duration[m:] = np.round(trace.duration_s * 1e9).astype(np.int64)
    duration[:m] = NEVER  # manifest workloads carry no run time: they never finish

    # logs as Python lists while running (cheap appends), arrays at the end
    adm_t: list[int] = []
    adm_wid: list[int] = []
    adm_cq: list[I64] = []
    adm_wait: list[int] = []
    adm_usage: list[I64] = []
    rel_t: list[int] = []
    rel_adm: list[int] = []
    rel_kind: list[int] = []
    rel_reason: list[I64] = []
    epoch = [0] * total  # bumps on every admission and eviction: stale finishes are skipped
    enq = arrival.tolist()  # when the workload last entered its queue
    enq[:m] = [start_ns] * m
    cur_adm = [-1] * total
    finish_heap: list[tuple[int, int, int]] = []
    dur = duration.tolist()

    def admitted(t: int, wids: list[int]) -> None:
        cqs, usage = sim.admitted_usage(wids)
        base = len(adm_t)
        adm_cq.append(cqs)
        adm_usage.append(usage)
        for k, w in enumerate(wids):
            epoch[w] += 1
            cur_adm[w] = base + k
            adm_t.append(t)
            adm_wid.append(w)
            adm_wait.append(t - enq[w])
            if dur[w] != NEVER:
                heapq.heappush(finish_heap, (t + dur[w], w, epoch[w]))

    preemptions = [0]

    def released(t: int, wids: list[int], kind: int) -> None:
        if kind == PREEMPTED:
            preemptions[0] += len(wids)
        for w in wids:
            epoch[w] += 1
            rel_t.append(t)
            rel_adm.append(cur_adm[w])
            rel_kind.append(kind)
            if kind == PREEMPTED:
                enq[w] = t
        if kind == PREEMPTED:
            rel_reason.append(sim.eviction_reasons(wids))
        else:
            rel_reason.append(np.full(len(wids), -1, dtype=np.int64))

    # 2. the manifest's workloads are there at the start; admitted ones hold quota
    if m:
        specs = [compiler.compile(wl) for wl in manifest]
        queue_cq[:m] = [s.cluster_queue for s in specs]
        arrival[:m] = start_ns
        sim.add_specs(specs)
        held = [i for i, s in enumerate(specs) if s.admission is not None and s.admission.cluster_queue >= 0]
        if held:
            admitted(start_ns, held)
            for w in held:
                adm_wait[cur_adm[w]] = 0

    arr_list = (batch.queue_ts).tolist()
    last_arrival = arr_list[-1] if n else start_ns
    end_ns = until_ns if until_ns is not None else (None if drain else last_arrival)
    cycles = instants = unsettled = 0
    schedule_s = 0.0
    i = 0
    last_t = start_ns
    next_report = time.perf_counter() + 0.2
    t = start_ns
    # 3. events in time order
    while True:
        next_arr = arr_list[i] if i < n else NEVER
        next_fin = finish_heap[0][0] if finish_heap else NEVER
        # the manifest's pending workloads get their first cycles at the start
        t = min(next_arr, next_fin, start_ns if m and instants == 0 else NEVER)
        if t == NEVER or (end_ns is not None and t > end_ns):
            break
        # 3a. arrivals at t
        if next_arr == t:
            j = bisect_right(arr_list, t, i)
            sim.add(batch, i, j)
            i = j
        # 3b. finishes at t (skipping those of workloads preempted since)
        done: list[int] = []
        while finish_heap and finish_heap[0][0] == t:
            _, w, ep = heapq.heappop(finish_heap)
            if epoch[w] == ep:
                done.append(w)
        if done:
            released(t, done, FINISHED)
            sim.remove(done)
        # 3c. cycles at t until one changes nothing
        t0 = time.perf_counter()
        res = sim.settle(t, max_cycles)
        schedule_s += time.perf_counter() - t0
        cycles += res.cycles
        instants += 1
        last_t = t
        if not res.stable:
            unsettled += 1
        # 3d. in cycle order: admissions start their run; victims lose theirs
        for step in res.steps:
            if step.admitted:
                admitted(t, step.admitted)
            if step.preempted:
                released(t, step.preempted, PREEMPTED)
        if progress is not None and (instants & 255) == 0 and time.perf_counter() >= next_report:
            next_report = time.perf_counter() + 0.2
            progress(
                Progress(
                    t,
                    start_ns,
                    end_ns or last_arrival,
                    i,
                    n,
                    len(adm_t) - len(rel_t),
                    len(adm_t),
                    preemptions[0],
                    time.perf_counter() - t_wall,
                )
            )
    # the clock stops at --until, else at the last instant simulated
    final_t = end_ns if end_ns is not None else last_t
    log = SimLog(
        queue_cq=queue_cq,
        arrival_ns=arrival,
        adm_t=np.asarray(adm_t, dtype=np.int64),
        adm_wid=np.asarray(adm_wid, dtype=np.int64),
        adm_cq=np.concatenate(adm_cq) if adm_cq else np.zeros(0, dtype=np.int64),
        adm_wait_ns=np.asarray(adm_wait, dtype=np.int64),
        adm_usage=np.concatenate(adm_usage) if adm_usage else np.zeros((0, len(topo.fr_pairs)), np.int64),
        rel_t=np.asarray(rel_t, dtype=np.int64),
        rel_adm=np.asarray(rel_adm, dtype=np.int64),
        rel_kind=np.asarray(rel_kind, dtype=np.int64),
        rel_reason=np.concatenate(rel_reason) if rel_reason else np.zeros(0, dtype=np.int64),
    )
    if progress is not None:
        progress(
            Progress(
                final_t,
                start_ns,
                end_ns or last_arrival,
                i,
                n,
                len(adm_t) - len(rel_t),
                len(adm_t),
                preemptions[0],
                time.perf_counter() - t_wall,
            )
        )
    rid = {r: k for k, r in enumerate(topo.resource_names)}
    fid = {f: k for k, f in enumerate(topo.flavor_names)}
    fr_index = {p: k for k, p in enumerate(topo.fr_pairs)}
    cq_names = [cq.name for cq in topo.cluster_queues]
    return SimResult(
        state=state,
        topology_cq_names=cq_names,
        resource_names=list(topo.resource_names),
        flavor_names=list(topo.flavor_names),
        fr_pairs=list(topo.fr_pairs),
        nominal=_nominal_matrix(state, cq_names, fr_index, rid, fid),
        cq_cohort=[state.cluster_queues[c].cohort or "" for c in cq_names],
        log=log,
        engine=sim.name,
        start_ns=start_ns,
        end_ns=final_t,
        n_workloads=total,
        n_manifest=m,
        cycles=cycles,
        instants=instants,
        unsettled=unsettled,
        candidate_evaluations=sim.candidate_evaluations(),
        wall_s=time.perf_counter() - t_wall,
        schedule_s=schedule_s,
    )
