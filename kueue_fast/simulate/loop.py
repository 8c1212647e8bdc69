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

import numpy as np
import numpy.typing as npt

from ..compiler import WorkloadCompiler, compile_topology
from ..model import ClusterState
from .batch import WorkloadBatch, batch_from_trace, charged_trace, unqueued_warnings
from .checks import READY, RETRY, CheckModel, CheckPlan
from .defaults import DEFAULT_BINS, DEFAULT_MAX_CYCLES, DEFAULT_POD_STARTUP_S, DEFAULT_TERMINATION_DELAY_S
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
    seed: int = 0,
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
    t_wall = time.perf_counter()
    trace = charged_trace(trace.sorted_by_arrival(), state.configuration.resources)
    # 1. compile: topology (with the trace's resources), engine, the trace as arrays
    topo = compile_topology(state, extra_resources=set(trace.resources))
    compiler = WorkloadCompiler(state, topo)
    release_at_once = termination_delay_ns <= 0
    sim: SimEngine = make_sim_engine(engine, topo, release_evictions=release_at_once)
    plan = CheckPlan(state, topo, dict(admission_checks or {}), seed)
    batch: WorkloadBatch = batch_from_trace(trace, compiler, start_ns)
    notes = unqueued_warnings(batch, trace)
    if warn is not None:
        for note in notes:
            warn(note)
    if plan.any() and plan.unmodelled:
        notes.append(
            "admission checks without --admission-check are Ready as soon as quota is reserved: "
            + ", ".join(plan.unmodelled)
        )
    manifest = [state.workloads[k] for k in sorted(state.workloads)]
    m, n = len(manifest), len(trace)
    total = m + n
    n_cq, n_fr = len(topo.cluster_queues), len(topo.fr_pairs)
    cq_names = [cq.name for cq in topo.cluster_queues]
    rid = {r: k for k, r in enumerate(topo.resource_names)}
    fid = {f: k for k, f in enumerate(topo.flavor_names)}
    nominal = _nominal_matrix(state, cq_names, {p: k for k, p in enumerate(topo.fr_pairs)}, rid, fid)
    res_of_fr = np.array([r for _, r in topo.fr_pairs], dtype=np.int64)

    # 2. per workload: fixed records (array.array: cheap single-element updates)
    specs = [compiler.compile(wl) for wl in manifest]
    queue_cq = np.empty(total, dtype=np.int64)
    queue_cq[:m] = [s.cluster_queue for s in specs]
    queue_cq[m:] = batch.cluster_queue
    arrival = np.empty(total, dtype=np.int64)
    arrival[:m] = start_ns
    arrival[m:] = batch.queue_ts
    dur = [NEVER] * m + np.round(trace.duration_s * 1e9).astype(np.int64).tolist()
    if manifest_duration_ns is not None:
        for k, wl in enumerate(manifest):
            since = wl.admission_ns if wl.admission is not None and wl.admission_ns is not None else start_ns
            dur[k] = max(0, manifest_duration_ns - max(0, start_ns - since))

    def zeros(code: str, fill: int = 0, size: int = total) -> array:  # type: ignore[type-arg]
        return array(code, [fill]) * size

    state_of = zeros("b", PENDING)
    adm_cq = zeros("q", -1)
    n_adm = zeros("q")
    n_evi = zeros("q")
    adm_at = zeros("q", -1, total * TIMES_KEPT)
    evi_at = zeros("q", -1, total * TIMES_KEPT)
    last_adm = zeros("q", -1)
    last_evi = zeros("q", -1)
    fin_at = zeros("q", -1)
    wait = zeros("q")
    enq = array("q", arrival.tolist())  # when it last entered its queue
    epoch = zeros("q")  # bumps on every admission and eviction: stale finishes are skipped
    preempted_by = zeros("q", -1)
    preempting = zeros("q")
    lost = zeros("q")
    # the usage of each workload's last admission: its step's array and row
    usage_arr: list[I64 | None] = [None] * total
    usage_row = zeros("q")
    check_retries = zeros("q")
    check_wait = zeros("q")
    # (when the deciding check answers, wid, epoch, READY/RETRY/REJECTED, the check)
    check_heap: list[tuple[int, int, int, int, str]] = []
    explained = zeros("i", -1)  # index into messages: why it waited (-1: nothing yet)
    unexplained = np.ones(total, dtype=np.uint8)  # not tried and left pending yet
    messages: list[str] = []
    message_id: dict[str, int] = {}
    qcq = queue_cq.tolist()

    # 3. the series: bins over the expected span (they widen if the run goes on)
    last_arrival = int(batch.queue_ts[-1]) if n else start_ns
    end_ns = until_ns if until_ns is not None else (None if drain else last_arrival)
    if bins < 2 or bins % 2:
        raise ValueError("bins must be even and at least 2")
    span = (end_ns if end_ns is not None else last_arrival) - start_ns
    tbins = Bins(start_ns, nice_width_ns(max(span, NS), bins), bins)
    timeline = Timeline(
        tbins,
        StepSeries(tbins, n_cq, n_fr, _usage_measure(nominal, res_of_fr, len(topo.resource_names)), 2),
        CountSeries(tbins, n_cq),
        EventCounts(tbins, len(EVICTION_REASONS)),
    )
    churn = Churn()
    pre_per_cq = np.zeros(n_cq, dtype=np.int64)
    lost_per_cq = np.zeros(n_cq, dtype=np.float64)
    # (finish time, wid, epoch); an evicted workload's entry goes stale and is
    # dropped when it comes up, or when stale entries are half the heap
    finish_heap: list[tuple[int, int, int]] = []
    stale = [0]
    releases: deque[tuple[int, list[int]]] = deque()  # (when the victims' jobs have stopped, victims)
    counts = {"running": 0, "admissions": 0, "preemptions": 0}
    fr_flavor = [f for f, _ in topo.fr_pairs]

    def admitted(t: int, wids: list[int]) -> None:
        """Quota reserved: the job starts at once, or once its admission checks are Ready."""
        cqs, usage = sim.admitted_usage(wids)
        cq_l = cqs.tolist()
        started = 0
        for k, w in enumerate(wids):
            usage_arr[w] = usage
            usage_row[w] = k
            c = cq_l[k]
            if c < 0:
                # admitted and evicted again within this instant (quota
                # released at the end of its cycle): to its own ClusterQueue
                c = cq_l[k] = qcq[w]
                cqs = np.array(cq_l, dtype=np.int64)
            state_of[w] = RUNNING
            j = n_adm[w]
            if j < TIMES_KEPT:
                adm_at[w * TIMES_KEPT + j] = t
            else:  # pending counts come from the records, beyond them from here
                timeline.pending.add(t, queue_cq[w : w + 1], -1)
            n_adm[w] = j + 1
            wait[w] += t - enq[w]
            last_adm[w] = t
            adm_cq[w] = c
            epoch[w] += 1
            decided = None
            # a manifest's workload Kueue already admitted runs on (Admitted stays True)
            if plan.with_checks[c] and not (w < m and manifest[w].admitted_condition):
                flavors = {fr_flavor[fr] for fr in np.flatnonzero(usage[k]).tolist()}
                decided = plan.draw(c, flavors, t)
            if decided is not None:
                state_of[w] = RESERVED
                heapq.heappush(check_heap, (decided[0], w, epoch[w], decided[1], decided[2]))
                continue
            started += 1
            job_started(t, w)
        timeline.usage.add(t, cqs, usage)
        counts["running"] += started
        counts["admissions"] += len(wids)

    def checks_decided(t: int) -> None:
        """Checks that answer at t: all Ready starts the job; Retry evicts it
        (it queues again at once, ordered by the eviction time); Rejected
        deactivates it (workload_controller.go reconcileCheckBasedEviction).
        Its job never started: its quota is free at once."""
        while check_heap and check_heap[0][0] == t:
            _, w, ep, outcome, name = heapq.heappop(check_heap)
            if epoch[w] != ep:
                continue  # preempted while waiting for its checks
            check_wait[w] += t - last_adm[w]
            if outcome == READY:  # Admitted: the job starts (and waitForPodsReady's timeout with it)
                state_of[w] = RUNNING
                counts["running"] += 1
                job_started(t, w)
                continue
            epoch[w] += 1
            quota_released_by_cycle(t, [w])
            retry = outcome == RETRY
            reason = "AdmissionCheck" if retry else "DeactivatedDueToAdmissionCheck"
            message = f'AdmissionCheck in {"Retry" if retry else "Rejected"} state: "{name}"'
            sim.evict_for_check(w, reason, message, t if retry else -1, retry)
            if not release_at_once:
                sim.release([w])
            if retry:
                check_retries[w] += 1
                state_of[w] = PENDING
                enq[w] = t
                timeline.pending.add(t, queue_cq[w : w + 1], 1)
            else:
                state_of[w] = REJECTED

    one_key = [np.array([c], dtype=np.int64) for c in range(n_cq)]  # keys of a single change

    def quota_released(t: int, wids: list[int]) -> None:
        """Their quota is free (finished, or evicted and stopped); the engine
        still holds it (call before remove or release)."""
        if len(wids) == 1:  # the usual case: the usage its admission recorded
            w = wids[0]
            r = usage_row[w]
            timeline.usage.add(t, one_key[adm_cq[w]], usage_arr[w][r : r + 1], -1)  # type: ignore[index]
            return
        cqs, usage = sim.admitted_usage(wids)
        timeline.usage.add(t, cqs, usage, -1)

    def quota_released_by_cycle(t: int, wids: list[int]) -> None:
        """Victims whose quota the engine released at the end of their cycle."""
        cqs = np.array([adm_cq[w] for w in wids], dtype=np.int64)
        rows = [usage_arr[w][usage_row[w]] for w in wids]  # type: ignore[index]
        timeline.usage.add(t, cqs, np.stack(rows), -1)

    def requeued(t: int, wids: list[int]) -> None:
        for w in wids:
            state_of[w] = PENDING
            enq[w] = t
            if n_evi[w] > TIMES_KEPT:  # pending counts come from the records, beyond them from here
                timeline.pending.add(t, queue_cq[w : w + 1], 1)

    def evicted(t: int, wids: list[int], detail: Counter[tuple[int, int, int]] | None) -> None:
        # a workload the PodsReady timeout evicted (engine.evict marks the next
        # cycle) may be named again as a target while its pods stop: not a new eviction
        wids = [w for w in wids if state_of[w] != EVICTING]
        if not wids:
            return
        reasons = sim.eviction_reasons(wids)
        by = sim.preemptors(wids).tolist()
        timeline.preemptions.add(t, np.bincount(reasons, minlength=len(EVICTION_REASONS)))
        running = 0
        for k, w in enumerate(wids):
            was_running = state_of[w] == RUNNING
            running += was_running
            if state_of[w] == RESERVED:  # its checks were still pending: nothing ran
                check_wait[w] += t - last_adm[w]
            state_of[w] = EVICTING
            j = n_evi[w]
            if j < TIMES_KEPT:
                evi_at[w * TIMES_KEPT + j] = t
            n_evi[w] = j + 1
            last_evi[w] = t
            epoch[w] += 1
            c = adm_cq[w]
            pre_per_cq[c] += 1
            ran = t - last_adm[w] if was_running else 0
            lost[w] += ran
            lost_per_cq[c] += ran / NS
            p = by[k]
            preempted_by[w] = p
            if p >= 0:
                preempting[p] += 1
            key = (qcq[p] if p >= 0 else -1, c, int(reasons[k]))
            churn.pairs[key] = churn.pairs.get(key, 0) + 1
            if detail is not None:
                detail[key] += 1
        counts["running"] -= running
        counts["preemptions"] += len(wids)
        stale[0] += len(wids)
        if stale[0] > 1024 and 2 * stale[0] > len(finish_heap):
            finish_heap[:] = [e for e in finish_heap if epoch[e[1]] == e[2]]
            heapq.heapify(finish_heap)
            stale[0] = 0
        if termination_delay_ns > 0:
            releases.append((t + termination_delay_ns, list(wids)))
        else:
            quota_released_by_cycle(t, wids)
            requeued(t, wids)

    # waitForPodsReady (when the Configuration enables it): each admission's
    # pods are ready after a start-up time (log-normal, median pod_startup_s,
    # sigma 1, fixed seed) and the job runs its duration from then; a timeout
    # first evicts it (workload_controller.go reconcileNotReadyTimeout), its
    # requeue waits for the backoff, past backoffLimitCount it is deactivated.
    wait_cfg = state.configuration.wait_for_pods_ready
    startup_ns = (
        np.round(np.random.default_rng(0).lognormal(np.log(pod_startup_s), 1.0, total) * NS).astype(np.int64)
        if wait_cfg is not None and pod_startup_s > 0
        else np.zeros(total, dtype=np.int64)
    )
    pods_heap: list[tuple[int, int, int, int]] = []  # (time, POD_*, wid, epoch)
    timeouts = zeros("q")
    requeue_count = zeros("q")
    # evicted by a timeout, quota not released yet: (requeueAt, queue-order timestamp)
    hold_until: dict[int, tuple[int, int]] = {}

    def job_started(t: int, w: int) -> None:
        """The workload is admitted at t: its job runs its duration from then,
        or, under waitForPodsReady, from when its pods are ready."""
        start = t if wait_cfg is None else pods_started(t, w)
        if dur[w] != NEVER and start != NEVER:
            heapq.heappush(finish_heap, (start + dur[w], w, epoch[w]))

    def pods_started(t: int, w: int) -> int:
        """An admission at t under waitForPodsReady: its PodsReady or timeout
        event; returns when its run starts (NEVER if it times out first)."""
        assert wait_cfg is not None
        if w < m and n_adm[w] == 1 and specs[w].pods_ready:  # the manifest says its pods are ready
            sim.set_pods_ready(w, True)
            return t
        up = int(startup_ns[w])
        timeout = int(wait_cfg.timeout_s * NS)
        if up < timeout:
            heapq.heappush(pods_heap, (t + up, POD_READY, w, epoch[w]))
            return t + up
        heapq.heappush(pods_heap, (t + timeout, POD_TIMEOUT, w, epoch[w]))
        return NEVER

    def timed_out(t: int, w: int) -> None:
        """workload_controller.go reconcileNotReadyTimeout: evicted (reason
        PodsReadyTimeout) with its requeueState's count and requeueAt (backoff
        base * 2^(count-1), capped), or deactivated past backoffLimitCount."""
        assert wait_cfg is not None
        count = requeue_count[w]
        limit = wait_cfg.backoff_limit_count
        deactivate = limit is not None and count + 1 > limit
        if deactivate:
            message = "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
            sim.evict(w, "Deactivated", message)
        else:
            requeue_count[w] = count + 1
            sim.evict(w, "PodsReadyTimeout", f"Exceeded the PodsReady timeout {key_of(w)}")
        timeouts[w] += 1
        state_of[w] = EVICTING
        j = n_evi[w]
        if j < TIMES_KEPT:
            evi_at[w * TIMES_KEPT + j] = t
        n_evi[w] = j + 1
        last_evi[w] = t
        epoch[w] += 1
        lost[w] += t - last_adm[w]
        counts["running"] -= 1
        wait_s = min(wait_cfg.backoff_base_s * 2 ** (requeue_count[w] - 1), wait_cfg.backoff_max_s)
        # -1: deactivated, never queued again; else requeueAt (+1 ns: Kueue's jitter)
        until = -1 if deactivate else t + wait_s * NS + 1
        queue_ts = t if wait_cfg.requeuing_timestamp == "Eviction" else int(arrival[w])
        if termination_delay_ns > 0:
            hold_until[w] = (until, queue_ts)
            releases.append((t + termination_delay_ns, [w]))
        else:  # the engine released its quota at once
            quota_released(t, [w])
            stopped_after_timeout(t, w, until, queue_ts)

    def key_of(w: int) -> str:
        if w < m:
            return manifest[w].key
        return f"{trace.namespaces[int(trace.namespace[w - m])]}/{trace.name_of(w - m)}"

    def stopped_after_timeout(t: int, w: int, until: int, queue_ts: int) -> None:
        """Its job stopped: out of its queue until requeueAt, or for good."""
        if until < 0:
            state_of[w] = DEACTIVATED
            sim.remove([w])
            return
        requeued(t, [w])
        sim.hold(w, until, queue_ts)
        heapq.heappush(pods_heap, (until, BACKOFF_OVER, w, 0))

    def explain(wids: list[int]) -> None:
        """Keep the engine's current pending message of each workload."""
        for w, msg in zip(wids, sim.messages(wids), strict=True):
            if msg:
                idx = message_id.get(msg)
                if idx is None:
                    idx = message_id[msg] = len(messages)
                    messages.append(msg)
                explained[w] = idx

    # 4. the manifest's workloads are there at the start; admitted ones hold quota
    if m:
        sim.add_specs(specs)
        held = [i for i, s in enumerate(specs) if s.admission is not None and s.admission.cluster_queue >= 0]
        if held:
            admitted(start_ns, held)
        for i, s in enumerate(specs):
            if s.admission is not None and s.admission.cluster_queue < 0:
                # admitted to a ClusterQueue that does not exist: holds nothing, never finishes
                state_of[i] = RUNNING
                n_adm[i] = 1
                adm_at[i * TIMES_KEPT] = start_ns

    arr_list = batch.queue_ts.tolist()
    cycles = instants = unsettled = 0
    schedule_s = 0.0
    i = 0
    last_t = start_ns
    next_report = time.perf_counter() + PROGRESS_INTERVAL_S
    drain_stop = last_arrival + DRAIN_LIMIT_NS if drain and until_ns is None else NEVER
    drain_limited = False

    def report_progress(t: int, instant_cycles: int = 0) -> None:
        if progress is not None:
            progress(
                Progress(
                    t,
                    start_ns,
                    end_ns or last_arrival,
                    i,
                    n,
                    counts["running"],
                    counts["admissions"],
                    counts["preemptions"],
                    time.perf_counter() - t_wall,
                    instant_cycles,
                )
            )

    def long_instant(t: int, res: Settled) -> tuple[int, float]:
        """An instant that did not settle in one slice of cycles: go on in
        slices (the progress bar moves), noting who preempts whom; if it
        never settles, keep its description. Returns (cycles, time in the
        engine)."""
        nonlocal next_report, unsettled
        detail: Counter[tuple[int, int, int]] = Counter()
        victims: Counter[int] = Counter()
        preemptors: Counter[int] = Counter()
        run = n_adm_i = n_pre_i = 0
        engine_s = 0.0
        while True:
            run += res.cycles
            for step in res.steps:
                if step.admitted:
                    admitted(t, step.admitted)
                if step.preempted:
                    evicted(t, step.preempted, detail)
                n_adm_i += len(step.admitted)
                n_pre_i += len(step.preempted)
                victims.update(step.preempted)
                preemptors.update(preempted_by[w] for w in step.preempted)
            if res.attempted.size:
                explain(res.attempted.tolist())
            if res.stable or run >= max_cycles:
                break
            if time.perf_counter() >= next_report:
                next_report = time.perf_counter() + PROGRESS_INTERVAL_S
                report_progress(t, run)
            t0 = time.perf_counter()
            res = sim.settle(t, min(INSTANT_SLICE, max_cycles - run), unexplained)
            engine_s += time.perf_counter() - t0
        if not res.stable:
            unsettled += 1
            if len(churn.unsettled) < UNSETTLED_KEPT:
                named = [(p, c) for p, c in preemptors.most_common(NAMED + 1) if p >= 0][:NAMED]
                churn.unsettled.append(
                    UnsettledInstant(
                        t, run, n_adm_i, n_pre_i, dict(detail), victims.most_common(NAMED), named
                    )
                )
        return run, engine_s

    # 5. events in time order
    first_slice = min(INSTANT_SLICE, max_cycles)
    while True:
        next_arr = arr_list[i] if i < n else NEVER
        next_fin = finish_heap[0][0] if finish_heap else NEVER
        next_rel = releases[0][0] if releases else NEVER
        next_pod = pods_heap[0][0] if pods_heap else NEVER
        next_chk = check_heap[0][0] if check_heap else NEVER
        # the manifest's pending workloads get their first cycles at the start
        t = min(next_arr, next_fin, next_rel, next_pod, next_chk, start_ns if m and instants == 0 else NEVER)
        if t == NEVER or (end_ns is not None and t > end_ns):
            break
        if t > drain_stop:
            drain_limited = True
            break
        # 5a. arrivals at t
        if next_arr == t:
            j = bisect_right(arr_list, t, i)
            sim.add(batch, i, j)
            i = j
        # 5b. finishes at t (skipping those of workloads evicted since)
        done: list[int] = []
        while finish_heap and finish_heap[0][0] == t:
            _, w, ep = heapq.heappop(finish_heap)
            if epoch[w] == ep:
                done.append(w)
            else:
                stale[0] -= 1
        if done:
            for w in done:
                state_of[w] = FINISHED
                fin_at[w] = t
            counts["running"] -= len(done)
            quota_released(t, done)
            sim.remove(done)
        # 5c. evicted workloads whose jobs have stopped: quota free, back to their queues
        stopped: list[int] = []
        while releases and releases[0][0] == t:
            stopped += releases.popleft()[1]
        if stopped:
            quota_released(t, stopped)
            timed = [w for w in stopped if w in hold_until]
            if timed:
                stopped = [w for w in stopped if w not in hold_until]
            requeued(t, stopped)
            sim.release(stopped)
            for w in timed:
                sim.release([w])
                until, queue_ts = hold_until.pop(w)
                stopped_after_timeout(t, w, until, queue_ts)
        # 5c'. waitForPodsReady: pods ready, timeouts (the backoff's end needs no
        # call: the engine queues a held workload again when its time came)
        while pods_heap and pods_heap[0][0] == t:
            _, kind, w, ep = heapq.heappop(pods_heap)
            if kind == BACKOFF_OVER or epoch[w] != ep:
                continue
            if kind == POD_READY:
                sim.set_pods_ready(w, True)
            else:
                timed_out(t, w)
        # 5d. admission checks that answer at t
        if next_chk == t:
            checks_decided(t)
        # 5e. cycles at t until they settle
        instants += 1
        last_t = t
        t0 = time.perf_counter()
        res = sim.settle(t, first_slice, unexplained)
        schedule_s += time.perf_counter() - t0
        if res.stable:  # the usual case
            cycles += res.cycles
            # in cycle order: admissions start their run; victims lose theirs
            for step in res.steps:
                if step.admitted:
                    admitted(t, step.admitted)
                if step.preempted:
                    evicted(t, step.preempted, None)
            if res.attempted.size:
                explain(res.attempted.tolist())  # the first time a workload is left pending: why
        else:
            run, dt = long_instant(t, res)
            cycles += run
            schedule_s += dt
        if (instants & 255) == 0 and time.perf_counter() >= next_report:
            next_report = time.perf_counter() + PROGRESS_INTERVAL_S
            report_progress(t)

    # 6. the clock stops at --until, else at the last instant simulated
    final_t = end_ns if end_ns is not None else last_t
    report_progress(final_t)
    timeline.usage.finish(final_t)
    # workloads still pending waited at least until the end
    st = np.frombuffer(state_of, dtype=np.int8).copy()
    wait_ns = np.frombuffer(wait, dtype=np.int64).copy()
    arrived = arrival <= final_t
    censored = (st == PENDING) & arrived & (queue_cq >= 0)
    wait_ns[censored] += final_t - np.frombuffer(enq, dtype=np.int64)[censored]
    if censored.any():
        explain(np.flatnonzero(censored).tolist())  # still pending: why, now
    records = WorkloadRecords(
        queue_cq=queue_cq,
        arrival_ns=arrival,
        state=st,
        admitted_cq=np.frombuffer(adm_cq, dtype=np.int64).copy(),
        admissions=np.frombuffer(n_adm, dtype=np.int64).copy(),
        evictions=np.frombuffer(n_evi, dtype=np.int64).copy(),
        admitted_at=np.frombuffer(adm_at, dtype=np.int64).reshape(total, TIMES_KEPT).copy(),
        evicted_at=np.frombuffer(evi_at, dtype=np.int64).reshape(total, TIMES_KEPT).copy(),
        last_admitted_ns=np.frombuffer(last_adm, dtype=np.int64).copy(),
        last_evicted_ns=np.frombuffer(last_evi, dtype=np.int64).copy(),
        finished_ns=np.frombuffer(fin_at, dtype=np.int64).copy(),
        wait_ns=wait_ns,
        censored=censored,
        usage=_last_usage(usage_arr, usage_row, n_fr),
        preempted_by=np.frombuffer(preempted_by, dtype=np.int64).copy(),
        preempting=np.frombuffer(preempting, dtype=np.int64).copy(),
        lost_ns=np.frombuffer(lost, dtype=np.int64).copy(),
        explanation=np.frombuffer(explained, dtype=np.int32).copy(),
        pods_ready_timeouts=np.frombuffer(timeouts, dtype=np.int64).copy(),
        check_retries=np.frombuffer(check_retries, dtype=np.int64).copy(),
        check_wait_ns=np.frombuffer(check_wait, dtype=np.int64).copy(),
    )
    # pending workloads over time, from the records: +1 at arrival, -1 at
    # each admission kept, +1 when each eviction kept had released its quota
    pending = timeline.pending
    pending.add(records.arrival_ns[arrived], queue_cq[arrived], 1)
    for k in range(TIMES_KEPT):
        at = records.admitted_at[:, k]
        kept = at >= 0
        pending.add(at[kept], queue_cq[kept], -1)
        back = records.evicted_at[:, k] + max(0, termination_delay_ns)
        kept = (records.evicted_at[:, k] >= 0) & (back <= final_t)
        pending.add(back[kept], queue_cq[kept], 1)
    return SimResult(
        state=state,
        topology_cq_names=cq_names,
        resource_names=list(topo.resource_names),
        flavor_names=list(topo.flavor_names),
        fr_pairs=list(topo.fr_pairs),
        nominal=nominal,
        cq_cohort=[state.cluster_queues[c].cohort or "" for c in cq_names],
        workloads=records,
        timeline=timeline,
        churn=churn,
        messages=messages,
        trace=trace,
        manifest=[(wl.namespace, wl.name, wl.queue_name, wl.priority) for wl in manifest],
        engine=sim.name,
        start_ns=start_ns,
        end_ns=final_t,
        n_workloads=total,
        n_manifest=m,
        cycles=cycles,
        instants=instants,
        unsettled=unsettled,
        preemptions_per_cq=pre_per_cq,
        lost_ns_per_cq=lost_per_cq,
        candidate_evaluations=sim.candidate_evaluations(),
        wall_s=time.perf_counter() - t_wall,
        schedule_s=schedule_s,
        termination_delay_ns=max(0, termination_delay_ns),
        max_cycles=max_cycles,
        drain_limited=drain_limited,
        notes=notes,
    )
