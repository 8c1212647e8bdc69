"""The discrete-event loop.

Events are workload arrivals (from the trace), finishes (admission time +
run time) and, after a preemption, the moment the victim's job has stopped.
After each batch of simultaneous events the engine runs scheduling cycles at
that instant until they settle; then the clock jumps to the next event.

A preempted workload loses the work it had done. As in a cluster, its quota
is released only once its job has stopped: Kueue's job reconciler clears the
admission when the evicted job is no longer active
(pkg/controller/jobframework/reconciler.go, "handle eviction"), after its
pods are gone. The simulator models that as a pod-termination delay
(``termination_delay_ns``); then the workload goes back to its queue
(keeping its creation timestamp) and later runs its full duration again.
With a delay of 0 the quota is released at the end of the cycle (the
offline rule of ``kueue-fast schedule``).

Memory does not grow with the number of events: per workload a fixed record
(counts, the first few admission and eviction times, the last ones, its
accumulated wait), per ClusterQueue and time bin the integrals of
``series``, and per (preemptor ClusterQueue, victim ClusterQueue, reason) a
count.
"""

from __future__ import annotations

import heapq
import time
from array import array
from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..compiler import WorkloadCompiler, compile_topology
from ..model import ClusterState
from .batch import WorkloadBatch, batch_from_trace, charged_trace, unqueued_warnings
from .checks import READY, RETRY, CheckModel, CheckPlan
from .defaults import (
    DEFAULT_BINS,
    DEFAULT_MAX_CYCLES,
    DEFAULT_POD_STARTUP_S,
    DEFAULT_SEED,
    DEFAULT_TERMINATION_DELAY_S,
)
from .engine import EVICTION_REASONS, Settled, SimEngine, make_sim_engine
from .series import Bins, CountSeries, EventCounts, StepSeries, nice_width_ns
from .trace import Trace

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
NS = 1_000_000_000
NEVER = np.iinfo(np.int64).max

# Admission and eviction times kept per workload (the rest are counted).
TIMES_KEPT = 4
# --drain gives up this long after the last arrival (churn can keep
# workloads from ever running to their end).
DRAIN_LIMIT_NS = 30 * 86400 * NS
# Cycles between two looks at the clock inside one instant (progress bar).
INSTANT_SLICE = 500
# Seconds between two progress reports.
PROGRESS_INTERVAL_S = 0.2
# Unsettled instants described in full (the rest are counted).
UNSETTLED_KEPT = 10
# Workloads named per unsettled instant.
NAMED = 10

# A workload's state at the end of the run.
PENDING, RUNNING, EVICTING, FINISHED = 0, 1, 2, 3
# quota reserved, waiting for admission checks; deactivated by a Rejected check
RESERVED, REJECTED = 4, 5
# deactivated by waitForPodsReady's backoffLimitCount
DEACTIVATED = 6
STATE_NAMES = ("pending", "running", "evicting", "finished", "reserved", "rejected", "deactivated")
# waitForPodsReady events (pods_heap): pods ready, timeout, backoff over
POD_READY, POD_TIMEOUT, BACKOFF_OVER = 0, 1, 2


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
    instant_cycles: int = 0  # cycles run so far at the current instant, when it takes long


@dataclass
class WorkloadRecords:
    """Per workload (manifest workloads first, then the trace's rows)."""

    queue_cq: I64  # ClusterQueue of its LocalQueue (-1: none)
    arrival_ns: I64
    state: npt.NDArray[np.int8]  # PENDING, RUNNING, EVICTING, FINISHED, RESERVED, REJECTED at the end
    admitted_cq: I64  # ClusterQueue of its last admission (-1: never admitted)
    admissions: I64
    evictions: I64  # preemptions suffered
    admitted_at: I64  # (n, TIMES_KEPT): the first admission times, -1 beyond the count
    evicted_at: I64  # (n, TIMES_KEPT): the first eviction times
    last_admitted_ns: I64  # -1: never
    last_evicted_ns: I64  # -1: never
    finished_ns: I64  # -1: not finished
    wait_ns: I64  # time spent in its queue, up to the end when still pending
    censored: npt.NDArray[np.bool_]  # still pending at the end: waited at least wait_ns
    usage: I64  # (n, flavor-resources): the usage of its last admission
    preempted_by: I64  # the workload whose preemption last evicted it (-1: none)
    preempting: I64  # evictions this workload's admissions caused
    lost_ns: I64  # run time thrown away by its evictions
    explanation: npt.NDArray[np.int32]  # index into SimResult.messages (-1: none)
    # waitForPodsReady: evictions by the PodsReady timeout (also in ``evictions``)
    pods_ready_timeouts: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # admission checks: Retry evictions suffered, time spent reserved waiting for checks
    check_retries: I64 | None = None
    check_wait_ns: I64 | None = None


@dataclass
class UnsettledInstant:
    """An instant whose cycles kept changing something until the limit."""

    t_ns: int
    cycles: int
    admissions: int
    preemptions: int
    # (preemptor ClusterQueue, victim ClusterQueue, reason code) -> evictions
    pairs: dict[tuple[int, int, int], int]
    # the workloads evicted most often in it: (wid, evictions)
    victims: list[tuple[int, int]]
    # the workloads that preempted most often in it: (wid, evictions caused)
    preemptors: list[tuple[int, int]]


@dataclass
class Churn:
    """Who preempted whom, and the instants that did not settle."""

    # (preemptor ClusterQueue, victim ClusterQueue, reason code) -> evictions
    pairs: dict[tuple[int, int, int], int] = field(default_factory=dict)
    unsettled: list[UnsettledInstant] = field(default_factory=list)  # the first UNSETTLED_KEPT


@dataclass
class Timeline:
    """The run's time series (see series.py), finished at the end of the run."""

    bins: Bins
    usage: StepSeries  # per ClusterQueue x flavor-resource; totals: dominant share, borrowing
    pending: CountSeries  # per ClusterQueue
    preemptions: EventCounts  # per eviction reason


@dataclass
class SimResult:
    state: ClusterState
    topology_cq_names: list[str]
    resource_names: list[str]
    flavor_names: list[str]
    fr_pairs: list[tuple[int, int]]
    nominal: I64  # (ClusterQueues, flavor-resources)
    cq_cohort: list[str]
    workloads: WorkloadRecords
    timeline: Timeline
    churn: Churn
    messages: list[str]  # explanations, by WorkloadRecords.explanation
    trace: Trace  # the trace's rows are workloads m.. (in arrival order)
    manifest: list[tuple[str, str, str, int]]  # workloads 0..m-1: (namespace, name, LocalQueue, priority)
    engine: str
    start_ns: int
    end_ns: int
    n_workloads: int
    n_manifest: int
    cycles: int
    instants: int
    unsettled: int
    preemptions_per_cq: I64  # evictions by the victim's ClusterQueue
    lost_ns_per_cq: F64
    candidate_evaluations: int
    wall_s: float
    schedule_s: float
    termination_delay_ns: int
    max_cycles: int
    drain_limited: bool = False
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


def _usage_measure(nominal: I64, res_of_fr: I64, n_res: int) -> Callable[[int, I64], F64]:
    """Per usage level of ClusterQueue k: (its dominant resource's use over
    nominal quota, 1 when above nominal quota on some flavor-resource)."""
    onehot = np.zeros((nominal.shape[1], n_res))
    onehot[np.arange(nominal.shape[1]), res_of_fr] = 1.0
    nom_res = nominal.astype(np.float64) @ onehot

    def measure(k: int, levels: I64) -> F64:
        out = np.zeros((levels.shape[0], 2))
        has = nom_res[k] > 0
        if has.any():
            out[:, 0] = ((levels.astype(np.float64) @ onehot)[:, has] / nom_res[k][has]).max(axis=1)
        out[:, 1] = (levels > nominal[k]).any(axis=1)
        return out

    return measure


def _last_usage(arrays: list[I64 | None], rows: array, n_fr: int) -> I64:  # type: ignore[type-arg]
    """(workloads, flavor-resources): each workload's usage at its last admission."""
    out = np.zeros((len(arrays), n_fr), dtype=np.int64)
    for w, (a, r) in enumerate(zip(arrays, rows, strict=True)):
        if a is not None:
            out[w] = a[r]
    return out


def simulate(
    state: ClusterState,
    trace: Trace,
    engine: str = "reference",
    start_ns: int = 0,
    until_ns: int | None = None,
    drain: bool = False,
    max_cycles: int = DEFAULT_MAX_CYCLES,
    progress: Callable[[Progress], None] | None = None,
    termination_delay_ns: int = int(DEFAULT_TERMINATION_DELAY_S * NS),
    bins: int = DEFAULT_BINS,
    warn: Callable[[str], None] | None = None,
    pod_startup_s: float = DEFAULT_POD_STARTUP_S,
    admission_checks: dict[str, CheckModel] | None = None,
    seed: int = DEFAULT_SEED,
    manifest_duration_ns: int | None = None,
) -> SimResult:
    """Run the trace against the cluster. The run ends after the last
    arrival's instant (workloads still pending or running then are reported
    as such), at ``until_ns`` if given, or, with ``drain``, once every
    workload has finished (at most DRAIN_LIMIT_NS after the last arrival).
    ``bins``: at most this many time bins for the series. ``warn`` hears
    about trace rows that match no LocalQueue (they never run).
    ``admission_checks``: how each AdmissionCheck decides (checks.py; one
    without a model is Ready at once); ``seed`` drives their draws.
    ``manifest_duration_ns``: the run time of the manifests' Workloads (a
    live snapshot's); one admitted before the start has run since its
    admission already. None: they never finish."""
    run = _Run(
        state,
        trace,
        engine,
        start_ns,
        until_ns,
        drain,
        max_cycles,
        progress,
        termination_delay_ns,
        bins,
        warn,
        pod_startup_s,
        admission_checks,
        seed,
        manifest_duration_ns,
    )
    run.start()
    final_t = run.events()
    return run.result(final_t)


def _zeros(code: str, fill: int, size: int) -> array:  # type: ignore[type-arg]
    return array(code, [fill]) * size


def _copy(a: array, dtype: type) -> Any:  # type: ignore[type-arg]
    return np.frombuffer(a, dtype=dtype).copy()


class _Run:
    """One simulation: the engine, the event queues and the per-workload
    records (array.array: cheap single-element updates), with one method per
    kind of event. ``simulate()`` drives it."""

    def __init__(
        self,
        state: ClusterState,
        trace: Trace,
        engine: str,
        start_ns: int,
        until_ns: int | None,
        drain: bool,
        max_cycles: int,
        progress: Callable[[Progress], None] | None,
        termination_delay_ns: int,
        bins: int,
        warn: Callable[[str], None] | None,
        pod_startup_s: float,
        admission_checks: dict[str, CheckModel] | None,
        seed: int,
        manifest_duration_ns: int | None,
    ) -> None:
        self.t_wall = time.perf_counter()
        self.state, self.start_ns, self.until_ns, self.drain = state, start_ns, until_ns, drain
        self.max_cycles, self.progress, self.warn = max_cycles, progress, warn
        self.termination_delay_ns = termination_delay_ns
        self._compile(trace, engine, admission_checks, seed)
        self._records(manifest_duration_ns)
        self._series(bins)
        self._pods_ready(pod_startup_s)

    def _compile(
        self, trace: Trace, engine: str, admission_checks: dict[str, CheckModel] | None, seed: int
    ) -> None:
        """The topology (with the trace's resources), the engine, the trace as arrays."""
        state = self.state
        self.trace = trace = charged_trace(trace.sorted_by_arrival(), state.configuration.resources)
        self.topo = topo = compile_topology(state, extra_resources=set(trace.resources))
        self.compiler = WorkloadCompiler(state, topo)
        self.release_at_once = self.termination_delay_ns <= 0
        self.sim: SimEngine = make_sim_engine(engine, topo, release_evictions=self.release_at_once)
        self.plan = plan = CheckPlan(state, topo, dict(admission_checks or {}), seed)
        self.batch: WorkloadBatch = batch_from_trace(trace, self.compiler, self.start_ns)
        self.notes = notes = unqueued_warnings(self.batch, trace)
        if self.warn is not None:
            for note in notes:
                self.warn(note)
        if plan.any() and plan.unmodelled:
            notes.append(
                "admission checks without --admission-check are Ready as soon as quota is reserved: "
                + ", ".join(plan.unmodelled)
            )
        self.manifest = [state.workloads[k] for k in sorted(state.workloads)]
        self.m, self.n = len(self.manifest), len(trace)
        self.total = self.m + self.n
        self.n_cq, self.n_fr = len(topo.cluster_queues), len(topo.fr_pairs)
        self.cq_names = [cq.name for cq in topo.cluster_queues]
        rid = {r: k for k, r in enumerate(topo.resource_names)}
        fid = {f: k for k, f in enumerate(topo.flavor_names)}
        topo_fr = {p: k for k, p in enumerate(topo.fr_pairs)}
        self.nominal = _nominal_matrix(state, self.cq_names, topo_fr, rid, fid)
        self.res_of_fr = np.array([r for _, r in topo.fr_pairs], dtype=np.int64)
        self.fr_flavor = [f for f, _ in topo.fr_pairs]

    def _records(self, manifest_duration_ns: int | None) -> None:
        """Per workload: fixed records (manifest workloads first, then the trace's rows)."""
        m, total, start_ns = self.m, self.total, self.start_ns
        self.specs = specs = [self.compiler.compile(wl) for wl in self.manifest]
        self.queue_cq = queue_cq = np.empty(total, dtype=np.int64)
        queue_cq[:m] = [s.cluster_queue for s in specs]
        queue_cq[m:] = self.batch.cluster_queue
        self.arrival = arrival = np.empty(total, dtype=np.int64)
        arrival[:m] = start_ns
        arrival[m:] = self.batch.queue_ts
        self.dur = dur = [NEVER] * m + np.round(self.trace.duration_s * 1e9).astype(np.int64).tolist()
        if manifest_duration_ns is not None:
            for k, wl in enumerate(self.manifest):
                since = start_ns if wl.admission is None or wl.admission_ns is None else wl.admission_ns
                dur[k] = max(0, manifest_duration_ns - max(0, start_ns - since))
        self.state_of = _zeros("b", PENDING, total)
        self.adm_cq = _zeros("q", -1, total)
        self.n_adm = _zeros("q", 0, total)
        self.n_evi = _zeros("q", 0, total)
        self.adm_at = _zeros("q", -1, total * TIMES_KEPT)
        self.evi_at = _zeros("q", -1, total * TIMES_KEPT)
        self.last_adm = _zeros("q", -1, total)
        self.last_evi = _zeros("q", -1, total)
        self.fin_at = _zeros("q", -1, total)
        self.wait = _zeros("q", 0, total)
        self.enq = array("q", arrival.tolist())  # when it last entered its queue
        self.epoch = _zeros(
            "q", 0, total
        )  # bumps on every admission and eviction: stale finishes are skipped
        self.preempted_by = _zeros("q", -1, total)
        self.preempting = _zeros("q", 0, total)
        self.lost = _zeros("q", 0, total)
        # the usage of each workload's last admission: its step's array and row
        self.usage_arr: list[I64 | None] = [None] * total
        self.usage_row = _zeros("q", 0, total)
        self.check_retries = _zeros("q", 0, total)
        self.check_wait = _zeros("q", 0, total)
        # (when the deciding check answers, wid, epoch, READY/RETRY/REJECTED, the check)
        self.check_heap: list[tuple[int, int, int, int, str]] = []
        self.explained = _zeros("i", -1, total)  # index into messages: why it waited (-1: nothing yet)
        self.unexplained = np.ones(total, dtype=np.uint8)  # not tried and left pending yet
        self.messages: list[str] = []
        self.message_id: dict[str, int] = {}
        self.qcq = queue_cq.tolist()

    def _series(self, bins: int) -> None:
        """The series: bins over the expected span (they widen if the run goes on)."""
        start_ns, until_ns = self.start_ns, self.until_ns
        if bins < 2 or bins % 2:
            raise ValueError("bins must be even and at least 2")
        self.last_arrival = int(self.batch.queue_ts[-1]) if self.n else start_ns
        self.end_ns = until_ns if until_ns is not None else (None if self.drain else self.last_arrival)
        span = (self.end_ns if self.end_ns is not None else self.last_arrival) - start_ns
        tbins = Bins(start_ns, nice_width_ns(max(span, NS), bins), bins)
        measure = _usage_measure(self.nominal, self.res_of_fr, len(self.topo.resource_names))
        self.timeline = Timeline(
            tbins,
            StepSeries(tbins, self.n_cq, self.n_fr, measure, 2),
            CountSeries(tbins, self.n_cq),
            EventCounts(tbins, len(EVICTION_REASONS)),
        )
        self.churn = Churn()
        self.pre_per_cq = np.zeros(self.n_cq, dtype=np.int64)
        self.lost_per_cq = np.zeros(self.n_cq, dtype=np.float64)
        # (finish time, wid, epoch); an evicted workload's entry goes stale and is
        # dropped when it comes up, or when stale entries are half the heap
        self.finish_heap: list[tuple[int, int, int]] = []
        self.stale = 0
        self.releases: deque[tuple[int, list[int]]] = (
            deque()
        )  # (when the victims' jobs have stopped, victims)
        self.running = self.admissions = self.preemptions = 0
        self.one_key = [np.array([c], dtype=np.int64) for c in range(self.n_cq)]  # keys of a single change

    def _pods_ready(self, pod_startup_s: float) -> None:
        """waitForPodsReady (when the Configuration enables it): each admission's
        pods are ready after a start-up time (log-normal, median pod_startup_s,
        sigma 1, fixed seed) and the job runs its duration from then; a timeout
        first evicts it (workload_controller.go reconcileNotReadyTimeout), its
        requeue waits for the backoff, past backoffLimitCount it is deactivated."""
        total = self.total
        self.wait_cfg = wait_cfg = self.state.configuration.wait_for_pods_ready
        self.startup_ns = (
            np.round(np.random.default_rng(0).lognormal(np.log(pod_startup_s), 1.0, total) * NS).astype(
                np.int64
            )
            if wait_cfg is not None and pod_startup_s > 0
            else np.zeros(total, dtype=np.int64)
        )
        self.pods_heap: list[tuple[int, int, int, int]] = []  # (time, POD_*, wid, epoch)
        self.timeouts = _zeros("q", 0, total)
        self.requeue_count = _zeros("q", 0, total)
        # evicted by a timeout, quota not released yet: (requeueAt, queue-order timestamp)
        self.hold_until: dict[int, tuple[int, int]] = {}

    # --- admissions and the jobs' runs ------------------------------------------------------------

    def admitted(self, t: int, wids: list[int]) -> None:
        """Quota reserved: the job starts at once, or once its admission checks are Ready."""
        cqs, usage = self.sim.admitted_usage(wids)
        cq_l = cqs.tolist()
        started = 0
        state_of, n_adm, adm_at, epoch, plan = self.state_of, self.n_adm, self.adm_at, self.epoch, self.plan
        for k, w in enumerate(wids):
            self.usage_arr[w] = usage
            self.usage_row[w] = k
            c = cq_l[k]
            if c < 0:
                # admitted and evicted again within this instant (quota
                # released at the end of its cycle): to its own ClusterQueue
                c = cq_l[k] = self.qcq[w]
                cqs = np.array(cq_l, dtype=np.int64)
            state_of[w] = RUNNING
            j = n_adm[w]
            if j < TIMES_KEPT:
                adm_at[w * TIMES_KEPT + j] = t
            else:  # pending counts come from the records, beyond them from here
                self.timeline.pending.add(t, self.queue_cq[w : w + 1], -1)
            n_adm[w] = j + 1
            self.wait[w] += t - self.enq[w]
            self.last_adm[w] = t
            self.adm_cq[w] = c
            epoch[w] += 1
            decided = None
            # a manifest's workload Kueue already admitted runs on (Admitted stays True)
            if plan.with_checks[c] and not (w < self.m and self.manifest[w].admitted_condition):
                flavors = {self.fr_flavor[fr] for fr in np.flatnonzero(usage[k]).tolist()}
                decided = plan.draw(c, flavors, t)
            if decided is not None:
                state_of[w] = RESERVED
                heapq.heappush(self.check_heap, (decided[0], w, epoch[w], decided[1], decided[2]))
                continue
            started += 1
            self.job_started(t, w)
        self.timeline.usage.add(t, cqs, usage)
        self.running += started
        self.admissions += len(wids)

    def job_started(self, t: int, w: int) -> None:
        """The workload is admitted at t: its job runs its duration from then,
        or, under waitForPodsReady, from when its pods are ready."""
        start = t if self.wait_cfg is None else self.pods_started(t, w)
        if self.dur[w] != NEVER and start != NEVER:
            heapq.heappush(self.finish_heap, (start + self.dur[w], w, self.epoch[w]))

    def pods_started(self, t: int, w: int) -> int:
        """An admission at t under waitForPodsReady: its PodsReady or timeout
        event; returns when its run starts (NEVER if it times out first)."""
        wait_cfg = self.wait_cfg
        assert wait_cfg is not None
        # the manifest says its pods are ready
        if w < self.m and self.n_adm[w] == 1 and self.specs[w].pods_ready:
            self.sim.set_pods_ready(w, True)
            return t
        up = int(self.startup_ns[w])
        timeout = int(wait_cfg.timeout_s * NS)
        if up < timeout:
            heapq.heappush(self.pods_heap, (t + up, POD_READY, w, self.epoch[w]))
            return t + up
        heapq.heappush(self.pods_heap, (t + timeout, POD_TIMEOUT, w, self.epoch[w]))
        return NEVER

    def checks_decided(self, t: int) -> None:
        """Checks that answer at t: all Ready starts the job; Retry evicts it
        (it queues again at once, ordered by the eviction time); Rejected
        deactivates it (workload_controller.go reconcileCheckBasedEviction).
        Its job never started: its quota is free at once."""
        check_heap, epoch, state_of = self.check_heap, self.epoch, self.state_of
        while check_heap and check_heap[0][0] == t:
            _, w, ep, outcome, name = heapq.heappop(check_heap)
            if epoch[w] != ep:
                continue  # preempted while waiting for its checks
            self.check_wait[w] += t - self.last_adm[w]
            if outcome == READY:  # Admitted: the job starts (and waitForPodsReady's timeout with it)
                state_of[w] = RUNNING
                self.running += 1
                self.job_started(t, w)
                continue
            epoch[w] += 1
            self.quota_released_by_cycle(t, [w])
            retry = outcome == RETRY
            reason = "AdmissionCheck" if retry else "DeactivatedDueToAdmissionCheck"
            message = f'AdmissionCheck in {"Retry" if retry else "Rejected"} state: "{name}"'
            self.sim.evict_for_check(w, reason, message, t if retry else -1, retry)
            if not self.release_at_once:
                self.sim.release([w])
            if retry:
                self.check_retries[w] += 1
                state_of[w] = PENDING
                self.enq[w] = t
                self.timeline.pending.add(t, self.queue_cq[w : w + 1], 1)
            else:
                state_of[w] = REJECTED

    # --- quota released, evictions ----------------------------------------------------------------

    def quota_released(self, t: int, wids: list[int]) -> None:
        """Their quota is free (finished, or evicted and stopped); the engine
        still holds it (call before remove or release)."""
        if len(wids) == 1:  # the usual case: the usage its admission recorded
            w = wids[0]
            r = self.usage_row[w]
            usage = self.usage_arr[w][r : r + 1]  # type: ignore[index]
            self.timeline.usage.add(t, self.one_key[self.adm_cq[w]], usage, -1)
            return
        cqs, usage = self.sim.admitted_usage(wids)
        self.timeline.usage.add(t, cqs, usage, -1)

    def quota_released_by_cycle(self, t: int, wids: list[int]) -> None:
        """Victims whose quota the engine released at the end of their cycle."""
        cqs = np.array([self.adm_cq[w] for w in wids], dtype=np.int64)
        rows = [self.usage_arr[w][self.usage_row[w]] for w in wids]  # type: ignore[index]
        self.timeline.usage.add(t, cqs, np.stack(rows), -1)

    def requeued(self, t: int, wids: list[int]) -> None:
        for w in wids:
            self.state_of[w] = PENDING
            self.enq[w] = t
            if self.n_evi[w] > TIMES_KEPT:  # pending counts come from the records, beyond them from here
                self.timeline.pending.add(t, self.queue_cq[w : w + 1], 1)

    # One loop over the victims updating eleven records: split, it would walk them eleven times.
    def evicted(self, t: int, wids: list[int], detail: Counter[tuple[int, int, int]] | None) -> None:
        # a workload the PodsReady timeout evicted (engine.evict marks the next
        # cycle) may be named again as a target while its pods stop: not a new eviction
        state_of = self.state_of
        wids = [w for w in wids if state_of[w] != EVICTING]
        if not wids:
            return
        reasons = self.sim.eviction_reasons(wids)
        by = self.sim.preemptors(wids).tolist()
        self.timeline.preemptions.add(t, np.bincount(reasons, minlength=len(EVICTION_REASONS)))
        n_evi, evi_at, last_adm, epoch, qcq = self.n_evi, self.evi_at, self.last_adm, self.epoch, self.qcq
        pairs = self.churn.pairs
        running = 0
        for k, w in enumerate(wids):
            was_running = state_of[w] == RUNNING
            running += was_running
            if state_of[w] == RESERVED:  # its checks were still pending: nothing ran
                self.check_wait[w] += t - last_adm[w]
            state_of[w] = EVICTING
            j = n_evi[w]
            if j < TIMES_KEPT:
                evi_at[w * TIMES_KEPT + j] = t
            n_evi[w] = j + 1
            self.last_evi[w] = t
            epoch[w] += 1
            c = self.adm_cq[w]
            self.pre_per_cq[c] += 1
            ran = t - last_adm[w] if was_running else 0
            self.lost[w] += ran
            self.lost_per_cq[c] += ran / NS
            p = by[k]
            self.preempted_by[w] = p
            if p >= 0:
                self.preempting[p] += 1
            key = (qcq[p] if p >= 0 else -1, c, int(reasons[k]))
            pairs[key] = pairs.get(key, 0) + 1
            if detail is not None:
                detail[key] += 1
        self.running -= running
        self.preemptions += len(wids)
        self._drop_stale_finishes(len(wids))
        if self.termination_delay_ns > 0:
            self.releases.append((t + self.termination_delay_ns, list(wids)))
        else:
            self.quota_released_by_cycle(t, wids)
            self.requeued(t, wids)

    def _drop_stale_finishes(self, evicted: int) -> None:
        """Evictions leave finish entries stale: compact the heap when they are half of it."""
        self.stale += evicted
        if self.stale > 1024 and 2 * self.stale > len(self.finish_heap):
            self.finish_heap[:] = [e for e in self.finish_heap if self.epoch[e[1]] == e[2]]
            heapq.heapify(self.finish_heap)
            self.stale = 0

    # --- waitForPodsReady -------------------------------------------------------------------------

    def timed_out(self, t: int, w: int) -> None:
        """workload_controller.go reconcileNotReadyTimeout: evicted (reason
        PodsReadyTimeout) with its requeueState's count and requeueAt (backoff
        base * 2^(count-1), capped), or deactivated past backoffLimitCount."""
        wait_cfg = self.wait_cfg
        assert wait_cfg is not None
        count = self.requeue_count[w]
        limit = wait_cfg.backoff_limit_count
        deactivate = limit is not None and count + 1 > limit
        if deactivate:
            message = "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
            self.sim.evict(w, "Deactivated", message)
        else:
            self.requeue_count[w] = count + 1
            self.sim.evict(w, "PodsReadyTimeout", f"Exceeded the PodsReady timeout {self.key_of(w)}")
        self.timeouts[w] += 1
        self.state_of[w] = EVICTING
        j = self.n_evi[w]
        if j < TIMES_KEPT:
            self.evi_at[w * TIMES_KEPT + j] = t
        self.n_evi[w] = j + 1
        self.last_evi[w] = t
        self.epoch[w] += 1
        self.lost[w] += t - self.last_adm[w]
        self.running -= 1
        wait_s = min(wait_cfg.backoff_base_s * 2 ** (self.requeue_count[w] - 1), wait_cfg.backoff_max_s)
        # -1: deactivated, never queued again; else requeueAt (+1 ns: Kueue's jitter)
        until = -1 if deactivate else t + wait_s * NS + 1
        queue_ts = t if wait_cfg.requeuing_timestamp == "Eviction" else int(self.arrival[w])
        if self.termination_delay_ns > 0:
            self.hold_until[w] = (until, queue_ts)
            self.releases.append((t + self.termination_delay_ns, [w]))
        else:  # the engine released its quota at once
            self.quota_released(t, [w])
            self.stopped_after_timeout(t, w, until, queue_ts)

    def key_of(self, w: int) -> str:
        if w < self.m:
            return self.manifest[w].key
        trace = self.trace
        return f"{trace.namespaces[int(trace.namespace[w - self.m])]}/{trace.name_of(w - self.m)}"

    def stopped_after_timeout(self, t: int, w: int, until: int, queue_ts: int) -> None:
        """Its job stopped: out of its queue until requeueAt, or for good."""
        if until < 0:
            self.state_of[w] = DEACTIVATED
            self.sim.remove([w])
            return
        self.requeued(t, [w])
        self.sim.hold(w, until, queue_ts)
        heapq.heappush(self.pods_heap, (until, BACKOFF_OVER, w, 0))

    def explain(self, wids: list[int]) -> None:
        """Keep the engine's current pending message of each workload."""
        for w, msg in zip(wids, self.sim.messages(wids), strict=True):
            if msg:
                idx = self.message_id.get(msg)
                if idx is None:
                    idx = self.message_id[msg] = len(self.messages)
                    self.messages.append(msg)
                self.explained[w] = idx

    # --- the clock --------------------------------------------------------------------------------

    def start(self) -> None:
        """The manifest's workloads are there at the start; admitted ones hold quota."""
        specs, start_ns = self.specs, self.start_ns
        if self.m:
            self.sim.add_specs(specs)
            held = [
                i for i, s in enumerate(specs) if s.admission is not None and s.admission.cluster_queue >= 0
            ]
            if held:
                self.admitted(start_ns, held)
            for i, s in enumerate(specs):
                if s.admission is not None and s.admission.cluster_queue < 0:
                    # admitted to a ClusterQueue that does not exist: holds nothing, never finishes
                    self.state_of[i] = RUNNING
                    self.n_adm[i] = 1
                    self.adm_at[i * TIMES_KEPT] = start_ns
        self.arr_list = self.batch.queue_ts.tolist()
        self.cycles = self.instants = self.unsettled = 0
        self.schedule_s = 0.0
        self.arrived = 0  # trace rows added to the engine so far
        self.next_report = time.perf_counter() + PROGRESS_INTERVAL_S
        drain = self.drain and self.until_ns is None
        self.drain_stop = self.last_arrival + DRAIN_LIMIT_NS if drain else NEVER
        self.drain_limited = False

    def events(self) -> int:
        """Events in time order until the end; returns when the clock stops:
        at --until, else at the last instant simulated."""
        last_t = self.start_ns
        first_slice = min(INSTANT_SLICE, self.max_cycles)
        while True:
            next_arr = self.arr_list[self.arrived] if self.arrived < self.n else NEVER
            next_chk = self.check_heap[0][0] if self.check_heap else NEVER
            t = min(
                next_arr,
                self.finish_heap[0][0] if self.finish_heap else NEVER,
                self.releases[0][0] if self.releases else NEVER,
                self.pods_heap[0][0] if self.pods_heap else NEVER,
                next_chk,
                # the manifest's pending workloads get their first cycles at the start
                self.start_ns if self.m and self.instants == 0 else NEVER,
            )
            if t == NEVER or (self.end_ns is not None and t > self.end_ns):
                break
            if t > self.drain_stop:
                self.drain_limited = True
                break
            if next_arr == t:
                j = bisect_right(self.arr_list, t, self.arrived)
                self.sim.add(self.batch, self.arrived, j)
                self.arrived = j
            self.finishes(t)
            self.jobs_stopped(t)
            self.pods_events(t)
            if next_chk == t:
                self.checks_decided(t)
            self.instants += 1
            last_t = t
            self.settle(t, first_slice)
            if (self.instants & 255) == 0 and time.perf_counter() >= self.next_report:
                self.next_report = time.perf_counter() + PROGRESS_INTERVAL_S
                self.report_progress(t)
        return self.end_ns if self.end_ns is not None else last_t

    def finishes(self, t: int) -> None:
        """Finishes at t (skipping those of workloads evicted since)."""
        done: list[int] = []
        finish_heap, epoch = self.finish_heap, self.epoch
        while finish_heap and finish_heap[0][0] == t:
            _, w, ep = heapq.heappop(finish_heap)
            if epoch[w] == ep:
                done.append(w)
            else:
                self.stale -= 1
        if done:
            for w in done:
                self.state_of[w] = FINISHED
                self.fin_at[w] = t
            self.running -= len(done)
            self.quota_released(t, done)
            self.sim.remove(done)

    def jobs_stopped(self, t: int) -> None:
        """Evicted workloads whose jobs have stopped at t: quota free, back to their queues."""
        stopped: list[int] = []
        while self.releases and self.releases[0][0] == t:
            stopped += self.releases.popleft()[1]
        if not stopped:
            return
        self.quota_released(t, stopped)
        hold_until = self.hold_until
        timed = [w for w in stopped if w in hold_until]
        if timed:
            stopped = [w for w in stopped if w not in hold_until]
        self.requeued(t, stopped)
        self.sim.release(stopped)
        for w in timed:
            self.sim.release([w])
            until, queue_ts = hold_until.pop(w)
            self.stopped_after_timeout(t, w, until, queue_ts)

    def pods_events(self, t: int) -> None:
        """waitForPodsReady at t: pods ready, timeouts (the backoff's end needs
        no call: the engine queues a held workload again when its time came)."""
        pods_heap = self.pods_heap
        while pods_heap and pods_heap[0][0] == t:
            _, kind, w, ep = heapq.heappop(pods_heap)
            if kind == BACKOFF_OVER or self.epoch[w] != ep:
                continue
            if kind == POD_READY:
                self.sim.set_pods_ready(w, True)
            else:
                self.timed_out(t, w)

    def settle(self, t: int, first_slice: int) -> None:
        """Cycles at t until they settle."""
        t0 = time.perf_counter()
        res = self.sim.settle(t, first_slice, self.unexplained)
        self.schedule_s += time.perf_counter() - t0
        if res.stable:  # the usual case
            self.cycles += res.cycles
            # in cycle order: admissions start their run; victims lose theirs
            for step in res.steps:
                if step.admitted:
                    self.admitted(t, step.admitted)
                if step.preempted:
                    self.evicted(t, step.preempted, None)
            if res.attempted.size:
                self.explain(res.attempted.tolist())  # the first time a workload is left pending: why
        else:
            run, dt = self.long_instant(t, res)
            self.cycles += run
            self.schedule_s += dt

    def report_progress(self, t: int, instant_cycles: int = 0) -> None:
        if self.progress is not None:
            self.progress(
                Progress(
                    t,
                    self.start_ns,
                    self.end_ns or self.last_arrival,
                    self.arrived,
                    self.n,
                    self.running,
                    self.admissions,
                    self.preemptions,
                    time.perf_counter() - self.t_wall,
                    instant_cycles,
                )
            )

    def long_instant(self, t: int, res: Settled) -> tuple[int, float]:
        """An instant that did not settle in one slice of cycles: go on in
        slices (the progress bar moves), noting who preempts whom; if it
        never settles, keep its description. Returns (cycles, time in the
        engine)."""
        detail: Counter[tuple[int, int, int]] = Counter()
        victims: Counter[int] = Counter()
        preemptors: Counter[int] = Counter()
        run = n_adm_i = n_pre_i = 0
        engine_s = 0.0
        max_cycles = self.max_cycles
        while True:
            run += res.cycles
            for step in res.steps:
                if step.admitted:
                    self.admitted(t, step.admitted)
                if step.preempted:
                    self.evicted(t, step.preempted, detail)
                n_adm_i += len(step.admitted)
                n_pre_i += len(step.preempted)
                victims.update(step.preempted)
                preemptors.update(self.preempted_by[w] for w in step.preempted)
            if res.attempted.size:
                self.explain(res.attempted.tolist())
            if res.stable or run >= max_cycles:
                break
            if time.perf_counter() >= self.next_report:
                self.next_report = time.perf_counter() + PROGRESS_INTERVAL_S
                self.report_progress(t, run)
            t0 = time.perf_counter()
            res = self.sim.settle(t, min(INSTANT_SLICE, max_cycles - run), self.unexplained)
            engine_s += time.perf_counter() - t0
        if not res.stable:
            self.unsettled += 1
            if len(self.churn.unsettled) < UNSETTLED_KEPT:
                named = [(p, c) for p, c in preemptors.most_common(NAMED + 1) if p >= 0][:NAMED]
                self.churn.unsettled.append(
                    UnsettledInstant(
                        t, run, n_adm_i, n_pre_i, dict(detail), victims.most_common(NAMED), named
                    )
                )
        return run, engine_s

    # --- the result -------------------------------------------------------------------------------

    def final_records(self, final_t: int) -> WorkloadRecords:
        """The records as arrays; workloads still pending waited at least until the end."""
        total = self.total
        st = np.frombuffer(self.state_of, dtype=np.int8).copy()
        wait_ns = np.frombuffer(self.wait, dtype=np.int64).copy()
        arrived = self.arrival <= final_t
        censored = (st == PENDING) & arrived & (self.queue_cq >= 0)
        wait_ns[censored] += final_t - np.frombuffer(self.enq, dtype=np.int64)[censored]
        if censored.any():
            self.explain(np.flatnonzero(censored).tolist())  # still pending: why, now
        i64 = np.int64
        return WorkloadRecords(
            queue_cq=self.queue_cq,
            arrival_ns=self.arrival,
            state=st,
            admitted_cq=_copy(self.adm_cq, i64),
            admissions=_copy(self.n_adm, i64),
            evictions=_copy(self.n_evi, i64),
            admitted_at=np.frombuffer(self.adm_at, dtype=i64).reshape(total, TIMES_KEPT).copy(),
            evicted_at=np.frombuffer(self.evi_at, dtype=i64).reshape(total, TIMES_KEPT).copy(),
            last_admitted_ns=_copy(self.last_adm, i64),
            last_evicted_ns=_copy(self.last_evi, i64),
            finished_ns=_copy(self.fin_at, i64),
            wait_ns=wait_ns,
            censored=censored,
            usage=_last_usage(self.usage_arr, self.usage_row, self.n_fr),
            preempted_by=_copy(self.preempted_by, i64),
            preempting=_copy(self.preempting, i64),
            lost_ns=_copy(self.lost, i64),
            explanation=_copy(self.explained, np.int32),
            pods_ready_timeouts=_copy(self.timeouts, i64),
            check_retries=_copy(self.check_retries, i64),
            check_wait_ns=_copy(self.check_wait, i64),
        )

    def pending_series(self, records: WorkloadRecords, final_t: int) -> None:
        """Pending workloads over time, from the records: +1 at arrival, -1 at
        each admission kept, +1 when each eviction kept had released its quota."""
        pending, queue_cq = self.timeline.pending, self.queue_cq
        arrived = records.arrival_ns <= final_t
        pending.add(records.arrival_ns[arrived], queue_cq[arrived], 1)
        for k in range(TIMES_KEPT):
            at = records.admitted_at[:, k]
            kept = at >= 0
            pending.add(at[kept], queue_cq[kept], -1)
            back = records.evicted_at[:, k] + max(0, self.termination_delay_ns)
            kept = (records.evicted_at[:, k] >= 0) & (back <= final_t)
            pending.add(back[kept], queue_cq[kept], 1)

    def result(self, final_t: int) -> SimResult:
        self.report_progress(final_t)
        self.timeline.usage.finish(final_t)
        records = self.final_records(final_t)
        self.pending_series(records, final_t)
        state, topo = self.state, self.topo
        return SimResult(
            state=state,
            topology_cq_names=self.cq_names,
            resource_names=list(topo.resource_names),
            flavor_names=list(topo.flavor_names),
            fr_pairs=list(topo.fr_pairs),
            nominal=self.nominal,
            cq_cohort=[state.cluster_queues[c].cohort or "" for c in self.cq_names],
            workloads=records,
            timeline=self.timeline,
            churn=self.churn,
            messages=self.messages,
            trace=self.trace,
            manifest=[(wl.namespace, wl.name, wl.queue_name, wl.priority) for wl in self.manifest],
            engine=self.sim.name,
            start_ns=self.start_ns,
            end_ns=final_t,
            n_workloads=self.total,
            n_manifest=self.m,
            cycles=self.cycles,
            instants=self.instants,
            unsettled=self.unsettled,
            preemptions_per_cq=self.pre_per_cq,
            lost_ns_per_cq=self.lost_per_cq,
            candidate_evaluations=self.sim.candidate_evaluations(),
            wall_s=time.perf_counter() - self.t_wall,
            schedule_s=self.schedule_s,
            termination_delay_ns=max(0, self.termination_delay_ns),
            max_cycles=self.max_cycles,
            drain_limited=self.drain_limited,
            notes=self.notes,
        )
