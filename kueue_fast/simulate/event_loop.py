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
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable

from ..api.model import ClusterState
from .checks import CheckModel
from .defaults import (
    DEFAULT_BINS,
    DEFAULT_MAX_CYCLES,
    DEFAULT_POD_STARTUP_S,
    DEFAULT_SEED,
    DEFAULT_TERMINATION_DELAY_S,
)
from .engine_view import Settled
from .native_event_loop import native_loop_applies, run_native
from .result import (
    BACKOFF_OVER,
    DEACTIVATED,
    EVICTING,
    FINISHED,
    NEVER,
    NS,
    PENDING,
    POD_READY,
    REJECTED,
    RESERVED,
    RUNNING,
    STATE_NAMES,
    TIMES_KEPT,
    Progress,
    SimResult,
    UnsettledInstant,
)
from .run_state import RunState
from .trace import Trace

__all__ = [  # the records' names stay importable from here
    "DEACTIVATED",
    "EVICTING",
    "FINISHED",
    "NS",
    "PENDING",
    "REJECTED",
    "RESERVED",
    "RUNNING",
    "STATE_NAMES",
    "TIMES_KEPT",
    "Progress",
    "SimResult",
    "simulate",
]

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


class _Run(RunState):
    """The clock over a simulation's state: events in time order, cycles at
    each instant until they settle, progress reports."""

    # --- the clock --------------------------------------------------------------------------------

    def start(self) -> None:
        """The manifest's workloads are there at the start; admitted ones hold quota."""
        specs, start_ns = self.specs, self.start_ns
        self.manifest_held_until: list[int] = []
        self.manifest_pending_never_finish = 0
        self.manifest_pending_run: list[int] = []
        if self.m:
            dur = self.dur[: self.m].tolist()
            self.sim.add_specs(specs)
            held = [
                i for i, s in enumerate(specs) if s.admission is not None and s.admission.cluster_queue >= 0
            ]
            if held:
                self.admitted(start_ns, held)
            self.manifest_held_until = [start_ns + dur[i] if dur[i] != NEVER else NEVER for i in held]
            # pending ones run for ever once admitted, unless --existing-runtime gives them a run time
            self.manifest_pending_never_finish = sum(
                1 for i, s in enumerate(specs) if s.admission is None and dur[i] == NEVER
            )
            self.manifest_pending_run = [
                dur[i] for i, s in enumerate(specs) if s.admission is None and dur[i] != NEVER
            ]
            for i, s in enumerate(specs):
                if s.admission is not None and s.admission.cluster_queue < 0:
                    # admitted to a ClusterQueue that does not exist: holds nothing, never finishes
                    self.state_of[i] = RUNNING
                    self.n_adm[i] = 1
                    self.ever_admitted[i] = 1
                    self.adm_at[i * TIMES_KEPT] = start_ns
        self.cycles = self.cycles_run = self.instants = self.unsettled = 0
        self.schedule_s = 0.0
        self.arrived = 0  # trace rows added to the engine so far
        self.next_report = time.perf_counter() + PROGRESS_INTERVAL_S
        drain = self.drain and self.until_ns is None
        self.drain_stop = self.last_arrival + DRAIN_LIMIT_NS if drain else NEVER
        self.drain_limited = False

    def events(self) -> int:
        """Events in time order until the end; returns when the clock stops:
        at --until, else at the last instant simulated. The native engine
        runs them itself when it can (simulate/native_event_loop.py)."""
        if native_loop_applies(self):
            return run_native(
                self, self.report_progress, PROGRESS_INTERVAL_S, UNSETTLED_KEPT, NAMED, INSTANT_SLICE
            )
        arrivals = self.batch.queue_ts.tolist()
        last_t = self.start_ns
        first_slice = min(INSTANT_SLICE, self.max_cycles)
        while True:
            next_arr = arrivals[self.arrived] if self.arrived < self.n else NEVER
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
                j = bisect_right(arrivals, t, self.arrived)
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
        self.stopping_changed(t, stopped, -1)
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
        self.cycles_run += res.run
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
            self.cycles_run += res.run
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

    def result(self, final_t: int) -> SimResult:
        self.report_progress(final_t)
        for series in (self.timeline.usage, self.timeline.stopping, self.timeline.trees):
            series.finish(final_t)
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
            tree=self.tree,
            cq_cohort=[state.cluster_queues[c].cohort or "" for c in self.cq_names],
            inactive=self.inactive,
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
            cycles_run=self.cycles_run,
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
            manifest_held_until_ns=self.manifest_held_until,
            manifest_pending_never_finish=self.manifest_pending_never_finish,
            manifest_pending_run_ns=self.manifest_pending_run,
        )
