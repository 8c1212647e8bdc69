"""One simulation's state: the engine, the event queues and the
per-workload records (array.array: cheap single-element updates), with a
method for each way an event changes them (an admission, an eviction, a
check's answer, a PodsReady timeout, a release of quota) and the result at
the end. ``event_loop.py`` runs the clock over it."""

from __future__ import annotations

import heapq
import time
from array import array
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..api.errors import ValidationError
from ..api.model import ClusterState
from ..cluster.queue_readiness import cluster_queue_readiness
from ..engine.inputs import ClusterQueueSpec, compile_topology, queue_waiting_reason
from ..engine.workloads import WorkloadCompiler
from .batch import WorkloadBatch, batch_from_trace, charged_trace, trace_ns, unqueued_warnings
from .capacity import capacity
from .checks import READY, RETRY, CheckModel, CheckPlan
from .engine_view import EVICTION_REASONS, SimEngine, make_sim_engine
from .lending import lending_tree
from .result import (
    BACKOFF_OVER,
    DEACTIVATED,
    EVICTING,
    I64,
    NEVER,
    NS,
    PENDING,
    POD_READY,
    POD_TIMEOUT,
    REJECTED,
    RESERVED,
    RUNNING,
    TIMES_KEPT,
    Churn,
    Progress,
    Timeline,
    WorkloadRecords,
    copy,
    usage_measure,
    zeros,
)
from .series import Bins, CountSeries, EventCounts, StepSeries, nice_width_ns
from .trace import Trace


def inactive_reason(state: ClusterState, cq: ClusterQueueSpec) -> tuple[str, str]:
    """Why Kueue admits nothing in a ClusterQueue: (reason, message) of its
    Active=False condition (status.cluster_queue_readiness), or of a cohort
    cycle (left out of scheduling); ("", "") when it is active."""
    if cq.active:
        return "", ""
    obj = state.cluster_queues[cq.name]
    ready = cluster_queue_readiness(obj, state)
    if not ready.active:
        return ready.reason, ready.message
    return "CohortCycle", f"its cohort {obj.cohort} is in a cycle: Kueue leaves it out of scheduling"


class RunState:
    """One simulation: the engine, the event queues and the per-workload
    records (array.array: cheap single-element updates), with one method per
    kind of event. ``simulate()`` drives it."""

    # the clock's counters: event_loop.py's _Run sets them, simulate/native_event_loop.py carries them on
    arrived: int  # trace rows added to the engine so far
    instants: int
    cycles: int
    cycles_run: int
    unsettled: int
    schedule_s: float
    drain_stop: int
    drain_limited: bool
    next_report: float  # perf_counter time of the next progress report

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
        if topo.tas is not None:  # trace workloads ask no topology, the arrays carry no placements
            raise ValidationError(
                f"ResourceFlavor/{topo.tas.flavors[0].name}",
                "spec.topologyName",
                "not supported by kueue-fast simulate: Topology Aware Scheduling (kueue-fast schedule "
                "decides it)",
            )
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
        self.tree = lending_tree(state, capacity(state).per_queue, topo)
        self.inactive = [inactive_reason(state, cq) for cq in topo.cluster_queues]
        self.nominal = self.tree.nominal[: self.n_cq]
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
        self.dur: I64 = np.empty(total, dtype=np.int64)  # run time (NEVER: runs until the end)
        dur = self.dur
        dur[:m] = NEVER
        dur[m:] = trace_ns(self.trace.duration_s)
        if manifest_duration_ns is not None:
            for k, wl in enumerate(self.manifest):
                since = start_ns if wl.admission is None or wl.admission_ns is None else wl.admission_ns
                dur[k] = max(0, manifest_duration_ns - max(0, start_ns - since))
        self.state_of = zeros("b", PENDING, total)
        self.adm_cq = zeros("q", -1, total)
        self.n_adm = zeros("q", 0, total)
        self.n_evi = zeros("q", 0, total)
        self.adm_at = zeros("q", -1, total * TIMES_KEPT)
        self.evi_at = zeros("q", -1, total * TIMES_KEPT)
        self.last_adm = zeros("q", -1, total)
        self.last_evi = zeros("q", -1, total)
        self.fin_at = zeros("q", -1, total)
        self.wait = zeros("q", 0, total)
        self.enq = array("q", arrival.tobytes())  # when it last entered its queue
        self.epoch = zeros("q", 0, total)  # bumps on every admission and eviction: stale finishes are skipped
        self.preempted_by = zeros("q", -1, total)
        self.preempting = zeros("q", 0, total)
        self.lost = zeros("q", 0, total)
        # the usage of each workload's last admission, per flavor-resource
        self.usage: I64 = np.zeros((total, self.n_fr), dtype=np.int64)
        self.check_retries = zeros("q", 0, total)
        self.check_wait = zeros("q", 0, total)
        self.ever_admitted = zeros("b", 0, total)  # its job started once: Kueue's Admitted
        # (when the deciding check answers, wid, epoch, READY/RETRY/REJECTED, the check)
        self.check_heap: list[tuple[int, int, int, int, str]] = []
        self.explained = zeros("i", -1, total)  # index into messages: why it waited (-1: nothing yet)
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
        basis, _ = self.tree.utilization_basis()
        measure = usage_measure(self.nominal, basis, self.res_of_fr, len(self.topo.resource_names))
        # quota trees: each ClusterQueue's root; a tree's quota is its nodes' nominal quota
        roots = self.tree.cluster_queue_roots()
        root_ids, tree_of = np.unique(roots, return_inverse=True)
        node_root = np.array([self.tree.root_of(node) for node in range(len(self.tree.names))])
        tree_cap = np.stack([self.tree.nominal[node_root == r].sum(axis=0) for r in root_ids.tolist()])
        self.timeline = Timeline(
            tbins,
            StepSeries(tbins, self.n_cq, self.n_fr, measure, 2),
            StepSeries(tbins, self.n_cq, self.n_fr),
            StepSeries(tbins, len(root_ids), self.n_fr, cap=tree_cap, binned=False, key_map=tree_of),
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
        self.timeouts = zeros("q", 0, total)
        self.requeue_count = zeros("q", 0, total)
        # evicted by a timeout, quota not released yet: (requeueAt, queue-order timestamp)
        self.hold_until: dict[int, tuple[int, int]] = {}

    # --- admissions and the jobs' runs ------------------------------------------------------------

    def admitted(self, t: int, wids: list[int]) -> None:
        """Quota reserved: the job starts at once, or once its admission checks are Ready."""
        cqs, usage = self.sim.admitted_usage(wids)
        cq_l = cqs.tolist()
        started = 0
        state_of, n_adm, adm_at, epoch, plan = self.state_of, self.n_adm, self.adm_at, self.epoch, self.plan
        self.usage[wids] = usage
        for k, w in enumerate(wids):
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
        self.usage_changed(t, cqs, usage, 1)
        self.running += started
        self.admissions += len(wids)

    def job_started(self, t: int, w: int) -> None:
        """The workload is admitted at t: its job runs its duration from then,
        or, under waitForPodsReady, from when its pods are ready."""
        self.ever_admitted[w] = 1
        start = t if self.wait_cfg is None else self.pods_started(t, w)
        dur = int(self.dur[w])
        if dur != NEVER and start != NEVER:
            heapq.heappush(self.finish_heap, (start + dur, w, self.epoch[w]))

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
            # a copy: the series holds its rows until it folds them, the record moves on
            self.usage_changed(t, self.one_key[self.adm_cq[w]], self.usage[w : w + 1].copy(), -1)
            return
        cqs, usage = self.sim.admitted_usage(wids)
        self.usage_changed(t, cqs, usage, -1)

    def quota_released_by_cycle(self, t: int, wids: list[int]) -> None:
        """Victims whose quota the engine released at the end of their cycle."""
        cqs = np.array([self.adm_cq[w] for w in wids], dtype=np.int64)
        self.usage_changed(t, cqs, self.usage_rows(wids), -1)

    def usage_rows(self, wids: list[int]) -> I64:
        """The usage of each workload's last admission, a row each."""
        return self.usage[wids]

    def usage_changed(self, t: int, cqs: npt.NDArray[np.integer[Any]], usage: I64, sign: int) -> None:
        """Usage of ClusterQueues ``cqs`` changes by ``sign`` x a row of ``usage`` each, at t."""
        tl = self.timeline
        tl.usage.add(t, cqs, usage, sign)
        tl.trees.add(t, cqs, usage, sign)  # mapped to their trees when folded

    def stopping_changed(self, t: int, wids: list[int], sign: int) -> None:
        """Evicted workloads whose pods start (+1) or finish (-1) stopping: their usage."""
        cqs = np.array([self.adm_cq[w] for w in wids], dtype=np.int64)
        self.timeline.stopping.add(t, cqs, self.usage_rows(wids), sign)

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
            self.stopping_changed(t, wids, 1)
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
            self.stopping_changed(t, [w], 1)
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
                self.explained[w] = self.message_index(msg)

    def message_index(self, msg: str) -> int:
        idx = self.message_id.get(msg)
        if idx is None:
            idx = self.message_id[msg] = len(self.messages)
            self.messages.append(msg)
        return idx

    def explain_untried(self, wids: list[int]) -> None:
        """Workloads pending with no message (never tried: an inactive
        ClusterQueue, no ClusterQueue, behind others): Kueue's reason."""
        topo, m = self.topo, self.m
        for w in wids:
            if self.explained[w] >= 0:
                continue
            c = self.qcq[w]
            if c >= 0:
                msg = queue_waiting_reason(topo.cluster_queues[c])[1]
            elif w < m:
                msg = self.specs[w].unqueued_reason
            else:
                msg = self.batch.unqueued_reasons[int(self.batch.block_msg[w - m])]
            if msg:
                self.explained[w] = self.message_index(msg)

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
        self.explain_untried(np.flatnonzero((st == PENDING) & arrived).tolist())
        i64 = np.int64
        return WorkloadRecords(
            queue_cq=self.queue_cq,
            arrival_ns=self.arrival,
            state=st,
            admitted_cq=copy(self.adm_cq, i64),
            admissions=copy(self.n_adm, i64),
            evictions=copy(self.n_evi, i64),
            admitted_at=np.frombuffer(self.adm_at, dtype=i64).reshape(total, TIMES_KEPT).copy(),
            evicted_at=np.frombuffer(self.evi_at, dtype=i64).reshape(total, TIMES_KEPT).copy(),
            last_admitted_ns=copy(self.last_adm, i64),
            last_evicted_ns=copy(self.last_evi, i64),
            finished_ns=copy(self.fin_at, i64),
            wait_ns=wait_ns,
            censored=censored,
            usage=self.usage,
            preempted_by=copy(self.preempted_by, i64),
            preempting=copy(self.preempting, i64),
            lost_ns=copy(self.lost, i64),
            explanation=copy(self.explained, np.int32),
            pods_ready_timeouts=copy(self.timeouts, i64),
            check_retries=copy(self.check_retries, i64),
            check_wait_ns=copy(self.check_wait, i64),
            ever_admitted=copy(self.ever_admitted, np.int8).astype(bool),
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
