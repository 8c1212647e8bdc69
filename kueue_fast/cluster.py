"""The embedding API: Kueue's scheduler over a set of Kueue objects.

    >>> from kueue_fast import Cluster
    >>> cluster = Cluster.from_files(["queues.yaml", "workloads.yaml"])
    >>> cluster.run_until_stable()
    >>> cluster.decision("team-a/job-1").state
    'admitted'

A Cluster owns one engine (native by default, or the pure-Python reference)
and the name <-> id mapping around it. Workloads can be added and removed
between cycles; configuration changes rebuild the engine's topology while
keeping every workload and its admission.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from . import admission_checks as ac
from ._gc import no_cyclic_gc
from .compiler import (
    AdmissionSpec,
    CyclesRun,
    PendingBatch,
    WorkloadCompiler,
    WorkloadSpec,
    compile_topology,
)
from .engine_contract import ENGINES, STATE_NAMES, Engine, WorkloadView, make_engine
from .errors import EngineError, NotStableError
from .model import AdmissionCheckState, ClusterState, Workload

ADMITTED, PENDING, EVICTED, FINISHED = "admitted", "pending", "evicted", "finished"
# quota reserved, waiting for admission checks (admission_checks.py)
RESERVED = "reserved"

NS_PER_S = 1_000_000_000


def resolve_engine_name(engine: str | None) -> str:
    name = engine or os.environ.get("KUEUE_FAST_ENGINE") or "native"
    if name not in ENGINES:
        raise EngineError(f"unknown engine {name!r}: expected one of {', '.join(ENGINES)}")
    return name


@dataclass
class PodSetDecision:
    name: str
    count: int
    flavors: dict[str, str] = field(default_factory=dict)  # resource -> flavor
    resource_usage: dict[str, int] = field(default_factory=dict)  # resource -> total


@dataclass
class Decision:
    """Where a workload stands after the cycles run so far."""

    namespace: str
    name: str
    state: str  # admitted | reserved | pending | evicted | finished
    cluster_queue: str | None = None
    pod_sets: list[PodSetDecision] = field(default_factory=list)
    reason: str = ""
    message: str = ""
    preempted_by: str | None = None
    # why it was preempted (Kueue's Preempted condition reason): InClusterQueue,
    # InCohortReclamation, InCohortFairSharing or InCohortReclaimWhileBorrowing
    preemption_reason: str = ""
    admission_time_ns: int | None = None
    # status.admissionChecks of a workload holding quota (admitted or reserved)
    admission_checks: list[AdmissionCheckState] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def holds_quota(self) -> bool:
        """Admitted, or reserved and waiting for admission checks."""
        return self.state in (ADMITTED, RESERVED)


# BulkDecisions.kind: which decisions the engine's arrays give
BULK_OTHER, BULK_ADMITTED, BULK_PENDING = 0, 1, 2


@dataclass
class BulkDecisions:
    """decisions() in their order (by key) without a Decision for the common
    ones: admitted to a ClusterQueue of the topology (``shape``: an index
    into ``shapes``, the ClusterQueue's name and the pod sets, flavors by
    resource, no usage) and plain pending (``reasons`` and ``messages``, in
    key order of the pending ones); every other key (``BULK_OTHER``) needs
    ``Cluster.decision``."""

    keys: list[str]
    kind: list[int]
    shape: list[int]
    shapes: list[tuple[str, list[PodSetDecision]]]
    reasons: list[str]
    messages: list[str]


@dataclass
class EvictionRecord:
    """A workload's last eviction (Kueue's Evicted and Preempted conditions)."""

    cycle: int
    time_ns: int
    reason: str  # the Evicted condition's: Preempted, ClusterQueueStopped, LocalQueueStopped, ...
    message: str
    preemption_reason: str = ""  # the Preempted condition's (InClusterQueue, ...); "" when not preempted
    preempted_by: str | None = None
    admitted_ns: int | None = None  # when the admission it ended began


@dataclass
class WorkloadHistory:
    """What Kueue's statuses remember of earlier cycles, bounded per workload:
    the first time the scheduler tried it (QuotaReserved=False since), its
    last eviction and its eviction counts (status.schedulingStats.evictions)."""

    first_attempt_ns: int | None = None
    last_eviction: EvictionRecord | None = None
    evictions: dict[str, int] = field(default_factory=dict)  # Evicted reason -> count
    # seconds admitted before each eviction, summed (status.accumulatedPastExecutionTimeSeconds)
    past_execution_s: int = 0

    def record_eviction(self, ev: EvictionRecord) -> None:
        self.last_eviction = ev
        self.evictions[ev.reason] = self.evictions.get(ev.reason, 0) + 1
        if ev.admitted_ns is not None:
            self.past_execution_s += max(0, ev.time_ns - ev.admitted_ns) // NS_PER_S


@dataclass
class PodsReadyState:
    """The PodsReady condition of a workload's admission (waitForPodsReady)."""

    admitted_ns: int  # the admission it belongs to (a new admission starts not ready)
    ready: bool
    reason: str = "WaitForStart"  # of PodsReady=False: WaitForStart, WaitForRecovery, ...
    since_ns: int = 0  # its lastTransitionTime


@dataclass
class HeldWorkload:
    """A workload out of its queue after a PodsReady timeout (waitForPodsReady)
    or a Retry check's requeueAfterSeconds: until its backoff ends
    (requeue_at_ns), or for good once deactivated (requeue_at_ns None). The
    engine forgot it; ``wid`` is its old id."""

    wid: int
    evicted_cycle: int
    reason: str  # the Evicted condition's: PodsReadyTimeout or Deactivated
    message: str
    requeue_at_ns: int | None
    evicted_ns: int


@dataclass
class LocalQueueFairSharing:
    """A LocalQueue's admission fair sharing state (Kueue's in-memory usage
    ledger, persisted as status.fairSharing.admissionFairSharingStatus).

    Amounts are exact, in nanos of the base unit (1 cpu = 10**9)."""

    consumed_nanos: dict[str, int]  # the decayed usage history
    pending_penalty_nanos: dict[str, int]  # entry penalties not settled yet
    last_update_ns: int
    usage: float  # weighted usage that orders the ClusterQueue's workloads


@dataclass
class CycleResult:
    cycle: int
    admitted: list[str]
    preempted: list[str]
    evicted: list[str]  # evictions for other reasons (HoldAndDrain)
    newly_parked: int
    heads: int
    # heads the cycle tried and left pending: Kueue writes their pending reason now
    attempted: list[str] = field(default_factory=list)
    # heads parked as inadmissible; newly_parked also counts the equivalent
    # workloads parked with them (SchedulingEquivalenceHashing)
    parked: list[str] = field(default_factory=list)
    time_ns: int = 0  # the cycle's clock

    @property
    def changed(self) -> bool:
        """The scheduling contract's "changes something" for --until-stable."""
        return bool(self.admitted or self.preempted or self.evicted or self.newly_parked)


class Cluster:
    def __init__(
        self,
        state: ClusterState,
        engine: str | None = None,
        *,
        release_evictions: bool = True,
        start_time_ns: int | None = None,
    ) -> None:
        """release_evictions: quota of an evicted workload is released at the end
        of the cycle (offline, the scheduling contract); the controller passes
        False and calls release_eviction() once the workload's job stopped."""
        self.engine_name = resolve_engine_name(engine)
        self.release_evictions = release_evictions
        self.state = state
        self.cycles = 0
        self._wid: dict[str, int] = {}
        self._keys: list[str] = []
        # history (bounded per workload): first attempt time by wid (-1: never
        # tried; grown to the wids in use by _first_attempts), evictions
        self._first_attempt_ns: npt.NDArray[np.int64] = np.full(0, -1, dtype=np.int64)
        self._evictions: dict[str, WorkloadHistory] = {}
        self._clock_ns = start_time_ns if start_time_ns is not None else _start_time(state)
        self.start_ns = self._clock_ns  # the clock before the first cycle
        # waitForPodsReady: PodsReady conditions by key, requeue counts, and
        # the workloads held out of their queues (by old wid)
        self._pods_ready: dict[str, PodsReadyState] = {}
        self._requeue_count: dict[str, int] = {}
        # set at a timeout eviction, until it is held: (requeueAt or None, eviction time)
        self._requeue_at: dict[str, tuple[int | None, int]] = {}
        self._held: dict[int, HeldWorkload] = {}
        # admission checks (admission_checks.py): each workload's check
        # states, those holding quota but not admitted yet, those with a
        # Retry or Rejected state still to act on, and those deactivated by one
        self._checks: dict[str, list[AdmissionCheckState]] = {}
        self._reserved: set[str] = set()
        self._check_failures: set[str] = set()
        self._deactivated: set[str] = set()
        self._build(state)
        # the topology already knows every resource and flavor of the state's workloads
        check_cqs = self._check_cqs
        # runs of plain pending workloads go to the engine as arrays (same wids, same order)
        batch = self.compiler.pending_batch()
        with no_cyclic_gc():
            for key in sorted(state.workloads):
                wl = state.workloads[key]
                if batch is not None and batch.add(key, wl):
                    continue
                if batch:
                    batch = self._add_batch(batch)
                self._add_compiled(key, self.compiler.compile(wl))
                adm = wl.admission
                if wl.admission_checks or (adm is not None and adm.cluster_queue in check_cqs):
                    self._init_checks(wl)
            if batch:
                self._add_batch(batch)
        self._read_pods_ready_inputs(state)

    # --- construction ----------------------------------------------------------------------

    @classmethod
    def from_files(cls, paths: Sequence[str], engine: str | None = None, **kw: Any) -> Cluster:
        from .loader import load

        return cls(load(list(paths)), engine, **kw)

    @classmethod
    def from_objects(cls, objects: Iterable[dict[str, Any]], engine: str | None = None, **kw: Any) -> Cluster:
        from .loader import build_state

        return cls(build_state(objects), engine, **kw)

    def _build(self, state: ClusterState) -> None:
        self._check_cqs = {name for name, cq in state.cluster_queues.items() if cq.admission_checks}
        self.topology = compile_topology(state)
        self.compiler = WorkloadCompiler(state, self.topology)
        self.engine: Engine = make_engine(self.engine_name, self.topology, self.release_evictions)

    # --- workloads -----------------------------------------------------------------------------

    def add_workload(self, wl: Workload) -> None:
        """Add a pending workload (queued by its LocalQueue) or an admitted one."""
        if wl.key in self._wid:
            raise EngineError(f"Workload/{wl.key} is already in the cluster")
        self.state.workloads[wl.key] = wl
        self._ensure_known(wl)
        self._add_compiled(wl.key, self.compiler.compile(wl))
        if wl.admission is not None and wl.pods_ready_ns is not None:
            admitted = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
            ready = PodsReadyState(admitted, wl.pods_ready, wl.pods_ready_reason, wl.pods_ready_ns)
            self._pods_ready[wl.key] = ready
        self._init_checks(wl)

    def _add_batch(self, batch: PendingBatch) -> PendingBatch:
        """Add the batch's workloads to the engine; an empty batch with the same memos."""
        first = self.engine.add_workloads(batch.arrays())
        for wid, key in zip(first, batch.keys, strict=True):
            self._wid[key] = wid
        self._keys.extend(batch.keys)
        return batch.emptied()

    def _add_compiled(self, key: str, spec: WorkloadSpec) -> None:
        self._wid[key] = self.engine.add_workload(spec)
        self._keys.append(key)

    def _ensure_known(self, wl: Workload) -> None:
        """A workload naming a resource or flavor the topology lacks forces a rebuild."""
        names = set(self.topology.resource_names)
        flavors = set(self.topology.flavor_names)
        missing = any(r not in names for per_pod in self.compiler.charged_requests(wl) for r in per_pod)
        if wl.admission is not None:
            for psa in wl.admission.pod_set_assignments:
                missing |= any(r not in names for r in psa.resource_usage)
                missing |= any(f not in flavors for f in psa.flavors.values())
        if missing:
            self.reconfigure(self.state)

    def remove_workload(self, key: str) -> None:
        """The workload finished or was deleted: its quota (if any) is released
        and the cluster forgets it (the same key may be added again)."""
        wid = self._id(key)
        self._held.pop(wid, None)
        self.engine.remove_workload(wid)
        del self._wid[key]  # its wid (and first attempt) is never used again
        self._pods_ready.pop(key, None)
        self._requeue_count.pop(key, None)
        self._requeue_at.pop(key, None)
        self._evictions.pop(key, None)
        self.state.workloads.pop(key, None)
        self._checks.pop(key, None)
        self._reserved.discard(key)
        self._check_failures.discard(key)
        self._deactivated.discard(key)

    def evict(self, key: str, reason: str, message: str) -> None:
        """Evict an admitted workload (deactivation, a stop policy, an admission
        that could not be written...). Its quota is released at once offline, or
        by release_eviction() when the cluster was built with
        release_evictions=False; it then queues again."""
        before = self.decision(key)
        self.engine.evict(self._id(key), reason, message)
        if before.holds_quota:  # else the engine had nothing to evict
            ev = EvictionRecord(self.cycles + 1, self._clock_ns, reason, message)
            ev.admitted_ns = before.admission_time_ns
            self._record_eviction(key, ev)
            self._checks_evicted(key)

    def release_eviction(self, key: str) -> None:
        """The evicted workload's job stopped: its quota is free, it queues again
        (after a PodsReady timeout, once its backoff ends)."""
        wid = self._id(key)
        if wid in self._held:  # released already, waiting for its requeueAt
            return
        reason = self.engine.workload_view(wid).eviction_reason
        self.engine.release_eviction(wid)
        waits = self.state.configuration.wait_for_pods_ready is not None
        pods_ready = waits and reason in ("PodsReadyTimeout", "Deactivated")
        if pods_ready or key in self._requeue_at:  # a backoff (or deactivation) ahead
            self._hold(key, self.cycles)

    def _id(self, key: str) -> int:
        try:
            return self._wid[key]
        except KeyError:
            raise EngineError(f"Workload/{key} is not in the cluster") from None

    def reconfigure(self, state: ClusterState) -> None:
        """New configuration (quotas, queues, flavors): rebuild the topology and
        re-add every workload, keeping admissions as they are (an eviction still
        holding its quota stays so, until release_eviction())."""
        held = {self._keys[w]: h for w, h in self._held.items()}  # out of their queues: stay so
        old = [self.decision(k) for k in self._wid if k not in held]
        first_attempts = self._first_attempts()
        first_ns = {k: int(first_attempts[w]) for k, w in self._wid.items() if first_attempts[w] >= 0}
        afs_history = self.engine.afs_ledger_state()
        self.state = state
        self._build(state)
        if afs_history:
            self.engine.restore_afs_ledger(afs_history)
        self._keys, self._wid = [], {}
        for d in old:
            wl = state.workloads.get(d.key)
            if wl is None or d.state == FINISHED:
                continue
            spec = self.compiler.compile(wl)
            holds_quota = d.holds_quota or (d.state == EVICTED and d.cluster_queue is not None)
            spec.admission = self._admission_of(d, spec) if holds_quota else None
            self._add_compiled(d.key, spec)
            if d.state == EVICTED and holds_quota:
                self.engine.evict(self._wid[d.key], d.preemption_reason or d.reason, d.message)
            if d.state == ADMITTED and d.admission_time_ns is not None:
                if self._pods_ready_state(d.key, d.admission_time_ns).ready:
                    self.engine.set_pods_ready(self._wid[d.key], True)
        self._held = {}
        for key, h in held.items():
            wl = state.workloads.get(key)
            if wl is None:
                continue
            spec = self.compiler.compile(wl)
            spec.admission = None
            self._add_compiled(key, spec)
            wid = self._wid[key]
            self._held[wid] = replace(h, wid=wid)
            self._engine_hold(self._held[wid])
        self._first_attempt_ns = np.full(len(self._keys), -1, dtype=np.int64)
        for key, t in first_ns.items():
            if key in self._wid:
                self._first_attempt_ns[self._wid[key]] = t
        # the checks that apply may have changed (workload_controller.go syncs them on a
        # ClusterQueue update): a reserved workload whose checks are now all Ready is admitted
        for key in sorted(self._reserved):
            self._reserved.discard(key)
            if key in self._wid:
                self._quota_reserved(key, admitted=False)

    def _admission_of(self, d: Decision, spec: WorkloadSpec) -> AdmissionSpec | None:
        cq_ids = {cq.name: i for i, cq in enumerate(self.topology.cluster_queues)}
        rid = {n: i for i, n in enumerate(self.topology.resource_names)}
        fid = {n: i for i, n in enumerate(self.topology.flavor_names)}
        by_name = {ps.name: ps for ps in d.pod_sets}
        pod_sets: list[tuple[int, list[tuple[int, int, int]]]] = []
        for ps in spec.pod_sets:
            psd = by_name.get(ps.name)
            if psd is None:
                pod_sets.append((0, []))
                continue
            use = [
                (rid[r], fid[psd.flavors[r]] if r in psd.flavors else -1, v)
                for r, v in psd.resource_usage.items()
            ]
            pod_sets.append((psd.count, use))
        return AdmissionSpec(cq_ids.get(d.cluster_queue or "", -1), pod_sets, d.admission_time_ns or 0)

    # --- scheduling ------------------------------------------------------------------------------

    def now_ns(self) -> int:
        return self._clock_ns

    def run_cycle(self, now_ns: int | None = None) -> CycleResult:
        """One scheduling cycle. Offline, the clock advances one second per cycle."""
        if now_ns is None:
            now_ns = self._clock_ns + NS_PER_S
        self._clock_ns = now_ns
        evicted = self._drain_stopped_queues()
        self._requeue_after_backoff(now_ns)
        timed_out = self._pods_ready_timeouts(now_ns)
        evicted += timed_out
        report = self.engine.run_cycle(now_ns)
        self.cycles += 1
        keys = self._keys  # by wid, removed workloads included
        result = CycleResult(
            cycle=self.cycles,
            admitted=[keys[w] for w in report.admitted],
            preempted=[keys[w] for w in report.preempted],
            evicted=evicted,
            newly_parked=report.newly_parked,
            heads=report.heads,
            attempted=[keys[w] for w in report.attempted],
            parked=[keys[w] for w in report.parked],
            time_ns=now_ns,
        )
        for key in [*result.preempted, *evicted]:
            self._checks_evicted(key)
        if self._check_cqs:
            cq_names = self.topology.cluster_queues
            for w in report.admitted:
                if cq_names[self.engine.workload_view(w).admitted_cq].name in self._check_cqs:
                    self._quota_reserved(keys[w], admitted=False)
        if self._check_failures:
            result.evicted.extend(self._evict_for_failed_checks(now_ns))
        self._record_cycle(result, report.attempted)
        return result

    def run(self, cycles: int, on_cycle: Callable[[CycleResult], None] | None = None) -> list[CycleResult]:
        """Run `cycles` cycles; their results. on_cycle sees every cycle's
        result as it ends."""
        if on_cycle is None and self._bulk_ok():
            return self._cycle_results(self._run_bulk(cycles, until_stable=False))
        out = []
        for _ in range(cycles):
            out.append(self.run_cycle())
            if on_cycle is not None:
                on_cycle(out[-1])
        return out

    def run_until_stable(
        self, max_cycles: int = 100_000, on_cycle: Callable[[CycleResult], None] | None = None
    ) -> int:
        """Run cycles until one changes nothing; return how many ran.
        on_cycle sees every cycle's result as it ends."""
        if on_cycle is None and self._bulk_ok():
            run = self._run_bulk(max_cycles, until_stable=True)
            if run.stable:
                return int(run.cycles)
        else:
            for n in range(1, max_cycles + 1):
                result = self.run_cycle()
                if on_cycle is not None:
                    on_cycle(result)
                if not result.changed:
                    return n
        raise NotStableError(f"still changing after {max_cycles} cycles (--max-cycles)")

    # --- many cycles in one engine call ----------------------------------------------------------

    def _bulk_ok(self) -> bool:
        """May the cycles run inside the engine (run_cycles), with nothing to do
        between them? Not when HoldAndDrain queues drain before every cycle,
        nor when victims keep their quota until release_eviction (a victim
        can then be preempted again while its eviction is under way, and its
        eviction record is that of the cycle)."""
        if not self.release_evictions or self._check_cqs or self._check_failures:
            return False  # admission checks act between cycles (_quota_reserved, _evict_for_failed_checks)
        if self.state.configuration.wait_for_pods_ready is not None or self._held:
            return False  # timeouts and backoffs act between cycles (_pods_ready_timeouts)
        return not any(
            cq.stop_policy == "HoldAndDrain" for cq in self.state.cluster_queues.values()
        ) and not any(lq.stop_policy == "HoldAndDrain" for lq in self.state.local_queues.values())

    def _run_bulk(self, max_cycles: int, until_stable: bool) -> CyclesRun:
        """run_cycle's cycles inside the engine, one second apart as run_cycle
        spaces them, then what the history keeps of them (_record_cycle's)."""
        start, step = self._clock_ns, NS_PER_S
        first = self._first_attempts()
        not_tried = (first < 0).view(np.uint8)
        run: CyclesRun = self.engine.run_cycles(start, step, max_cycles, until_stable, not_tried)
        first_cycle = self.cycles
        self.cycles += int(run.cycles)
        self._clock_ns = start + int(run.cycles) * step
        attempted = np.asarray(run.attempted, dtype=np.int64)
        if attempted.size:
            first[attempted] = start + (np.asarray(run.attempted_cycle, dtype=np.int64) + 1) * step
        if len(run.preempted):
            self._record_preemptions(run, first_cycle, start, step)
        return run

    def _record_preemptions(self, run: CyclesRun, first_cycle: int, start: int, step: int) -> None:
        """_record_cycle's eviction records of a bulk run. Every victim was
        preempted (offline: each eviction is a fresh preemption), so the
        engine's eviction fields, read now, are those of its last one."""
        views: dict[int, WorkloadView] = {}
        keys = self._keys
        rows = zip(run.preempted, run.preempted_cycle, run.preempted_admission_ns, strict=True)
        for w, c, admitted_ns in rows:
            w, c = int(w), int(c)
            rec = views.get(w)
            if rec is None:
                rec = views[w] = self.engine.workload_view(w)
            by = rec.preempted_by
            reason = rec.eviction_reason
            ev = EvictionRecord(
                first_cycle + c + 1,
                start + (c + 1) * step,
                "Preempted" if by >= 0 else reason,
                rec.eviction_message,
                reason if by >= 0 else "",
                keys[by] if by >= 0 else None,
            )
            ev.admitted_ns = int(admitted_ns)
            self._record_eviction(keys[w], ev)

    def _cycle_results(self, run: CyclesRun) -> list[CycleResult]:
        """run()'s results of a bulk run, cycle by cycle (wids sorted, as run_cycle gives them)."""
        keys = np.asarray(self._keys, dtype=object)
        first_cycle = self.cycles - int(run.cycles)
        start = self._clock_ns - int(run.cycles) * NS_PER_S

        def per_cycle(wids: Any, cycle_of: Any, sort: bool) -> list[list[str]]:
            w = np.asarray(wids, dtype=np.int64)
            c = np.asarray(cycle_of, dtype=np.int64)
            if sort:
                order = np.lexsort((w, c))
                w, c = w[order], c[order]
            ends = np.searchsorted(c, np.arange(int(run.cycles)), side="right")
            names: list[str] = keys[w].tolist()
            return [names[a:b] for a, b in zip([0, *ends[:-1].tolist()], ends.tolist(), strict=True)]

        admitted = per_cycle(run.admitted, run.admitted_cycle, False)
        preempted = per_cycle(run.preempted, run.preempted_cycle, False)
        attempted = per_cycle(run.attempted, run.attempted_cycle, True)
        parked = per_cycle(run.parked, run.parked_cycle, True)
        return [
            CycleResult(
                cycle=first_cycle + k + 1,
                admitted=admitted[k],
                preempted=preempted[k],
                evicted=[],
                newly_parked=int(run.newly_parked[k]),
                heads=int(run.heads[k]),
                attempted=attempted[k],
                parked=parked[k],
                time_ns=start + (k + 1) * NS_PER_S,
            )
            for k in range(int(run.cycles))
        ]

    # --- history (what Kueue's statuses remember) -------------------------------------------------

    def history(self, key: str) -> WorkloadHistory | None:
        """The workload's first attempt, last eviction and eviction counts; None
        when the scheduler never tried it and it was never evicted."""
        wid = self._wid.get(key)
        first_attempts = self._first_attempts()
        first = int(first_attempts[wid]) if wid is not None and first_attempts[wid] >= 0 else None
        h = self._evictions.get(key)
        if h is None:
            return None if first is None else WorkloadHistory(first_attempt_ns=first)
        return WorkloadHistory(first, h.last_eviction, dict(h.evictions), h.past_execution_s)

    def _record_eviction(self, key: str, ev: EvictionRecord) -> None:
        self._evictions.setdefault(key, WorkloadHistory()).record_eviction(ev)

    def _first_attempts(self) -> npt.NDArray[np.int64]:
        """The first attempt time by wid (-1: never tried), one per wid in use."""
        grow = len(self._keys) - len(self._first_attempt_ns)
        if grow > 0:
            self._first_attempt_ns = np.concatenate(
                [self._first_attempt_ns, np.full(grow, -1, dtype=np.int64)]
            )
        return self._first_attempt_ns

    def _record_cycle(self, result: CycleResult, attempted: list[int]) -> None:
        """Only what this cycle tried or evicted: nothing grows with the cycle count."""
        first = self._first_attempts()
        if attempted:
            tried = np.asarray(attempted, dtype=np.int64)
            first[tried[first[tried] < 0]] = result.time_ns
        for key in [*result.evicted, *result.preempted]:
            d = self.decision(key)
            reason = d.reason if d.preempted_by is None else "Preempted"
            ev = EvictionRecord(
                result.cycle, result.time_ns, reason, d.message, d.preemption_reason, d.preempted_by
            )
            ev.admitted_ns = int(self.engine.workload_view(self._wid[key]).admission_time)
            self._record_eviction(key, ev)

    def _drain_stopped_queues(self) -> list[str]:
        """HoldAndDrain: admitted workloads of a stopped ClusterQueue or
        LocalQueue are evicted (Kueue's workload controller does it)."""
        drained_cqs = {n for n, cq in self.state.cluster_queues.items() if cq.stop_policy == "HoldAndDrain"}
        drained_lqs = {k for k, lq in self.state.local_queues.items() if lq.stop_policy == "HoldAndDrain"}
        if not drained_cqs and not drained_lqs:
            return []
        out = []
        for key in list(self._wid):
            d = self.decision(key)
            if not d.holds_quota:
                continue
            wl = self.state.workloads[key]
            if d.cluster_queue in drained_cqs:
                self.engine.evict(self._wid[key], "ClusterQueueStopped", "The ClusterQueue is stopped")
            elif f"{wl.namespace}/{wl.queue_name}" in drained_lqs:
                self.engine.evict(self._wid[key], "LocalQueueStopped", "The LocalQueue is stopped")
            else:
                continue
            out.append(key)
        return out

    # --- results ----------------------------------------------------------------------------------

    def __contains__(self, key: object) -> bool:
        return key in self._wid

    def keys(self) -> list[str]:
        """The workloads in the cluster, in the order they were added."""
        return list(self._wid)

    def wid_of(self, key: str) -> int:
        """The engine's id of a workload (``Cluster.engine`` speaks in ids)."""
        return self._id(key)

    def key_of(self, wid: int) -> str:
        return self._keys[wid]

    def local_queue_fair_sharing(self, key: str) -> LocalQueueFairSharing | None:
        """Admission fair sharing state of LocalQueue ``namespace/name``; None
        when it has none (not configured, or not sampled yet)."""
        entry = self.engine.afs_ledger_state().get(key)
        if entry is None:
            return None
        return LocalQueueFairSharing(
            dict(entry["consumed"]),
            dict(entry["pending_penalty"]),
            entry["last_update_ns"],
            entry["usage"],
        )

    def decision(self, key: str) -> Decision:
        return self._decision(self._id(key))

    # --- waitForPodsReady (workload_controller.go, the queue manager's backoff) --------------------

    def set_pods_ready(self, key: str, ready: bool, reason: str = "", now_ns: int | None = None) -> None:
        """The PodsReady condition of the workload's current admission changed
        (the simulator's pod start-up, the controller's job status); reason
        WaitForRecovery for pods that were ready and failed."""
        wid = self._id(key)
        view = self.engine.workload_view(wid)
        t = self._clock_ns if now_ns is None else now_ns
        self._pods_ready[key] = PodsReadyState(
            view.admission_time, ready, reason or ("PodsReady" if ready else "WaitForStart"), t
        )
        self.engine.set_pods_ready(wid, ready)

    def requeue_state(self, key: str) -> tuple[int, int | None]:
        """status.requeueState: (count, requeueAt ns or None)."""
        held = self._held.get(self._wid.get(key, -1))
        wl = self.state.workloads.get(key)
        count = self._requeue_count.get(key, wl.requeue_count if wl else 0)
        if held is not None:
            return count, held.requeue_at_ns
        return count, self._requeue_at.get(key, (None, 0))[0]  # evicted, its pods not gone yet

    def _read_pods_ready_inputs(self, state: ClusterState) -> None:
        """Input Workloads: the PodsReady condition of an admitted one, and a
        pending one still in the backoff its status.requeueState.requeueAt sets
        (workload_controller.go Reconcile: not queued before requeueAt)."""
        for key in sorted(state.workloads):
            wl = state.workloads[key]
            if wl.admission is not None and wl.pods_ready_ns is not None:
                admitted = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
                self._pods_ready[key] = PodsReadyState(
                    admitted, wl.pods_ready, wl.pods_ready_reason, wl.pods_ready_ns
                )
            elif wl.admission is None and wl.active and wl.requeue_at_ns is not None:
                if wl.requeue_at_ns > self._clock_ns + NS_PER_S:
                    wid = self._wid[key]
                    requeued = _condition(wl, "Requeued")
                    held = HeldWorkload(
                        wid,
                        -1,
                        str(requeued.get("reason") or "Pending"),
                        str(requeued.get("message") or ""),
                        wl.requeue_at_ns,
                        wl.queue_timestamp_ns,
                    )
                    self._held[wid] = held
                    self._engine_hold(held)

    def _pods_ready_state(self, key: str, admitted_ns: int) -> PodsReadyState:
        st = self._pods_ready.get(key)
        if st is None or st.admitted_ns != admitted_ns:  # admitted in a cycle: its pods have not started
            return PodsReadyState(admitted_ns, False, "WaitForStart", admitted_ns)
        return st

    def _admitted_condition_ns(self, wl: Workload, admitted_ns: int) -> int:
        """When the Admitted condition turned True: the input's for the input's
        admission (it may follow the quota reservation), else the admission's."""
        input_ns = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
        if wl.admission is None or admitted_ns != input_ns:
            return admitted_ns
        c = _condition(wl, "Admitted")
        if c.get("status") != "True" or not c.get("lastTransitionTime"):
            return admitted_ns
        from .loader import parse_time_ns

        path = "status.conditions[Admitted].lastTransitionTime"
        return parse_time_ns(c["lastTransitionTime"], f"Workload/{wl.key}", path)

    def _pods_ready_timeouts(self, now_ns: int) -> list[str]:
        """workload_controller.go reconcileNotReadyTimeout: an admitted, active
        workload not PodsReady past waitForPodsReady.timeout since its admission
        (PodsReady missing, WaitForStart or PodsReady reason) or past
        recoveryTimeout since PodsReady turned False with WaitForRecovery is
        evicted (PodsReadyTimeout), its requeueState counted and its requeueAt
        set by the backoff (workload.go UpdateRequeueState); past
        backoffLimitCount it is deactivated instead (triggerDeactivation)."""
        cfg = self.state.configuration.wait_for_pods_ready
        if cfg is None:
            return []
        out = []
        for key in sorted(self._wid):
            wid = self._wid[key]
            if wid in self._held:
                continue
            view = self.engine.workload_view(wid)
            wl = self.state.workloads[key]
            if view.state != ADMITTED or not wl.active:
                continue
            admitted_ns = view.admission_time
            st = self._pods_ready_state(key, admitted_ns)
            if st.ready:
                continue
            if st.reason in ("", "WaitForStart", "PodsReady"):
                since = self._admitted_condition_ns(wl, admitted_ns)
                deadline = since + int(cfg.timeout_s * NS_PER_S)
            elif st.reason == "WaitForRecovery" and cfg.recovery_timeout_s is not None:
                deadline = st.since_ns + int(cfg.recovery_timeout_s * NS_PER_S)
            else:
                continue
            if now_ns < deadline:
                continue
            count = self._requeue_count.get(key, wl.requeue_count)
            if cfg.backoff_limit_count is not None and count + 1 > cfg.backoff_limit_count:
                wl.active = False  # spec.active=false, then evicted as deactivated
                self._requeue_at[key] = (None, now_ns)
                reason = "Deactivated"
                message = (
                    "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
                )
            else:
                self._requeue_count[key] = count + 1
                # wait.Backoff{base, x2, cap max}: base * 2^(count-1) capped; its
                # jitter (up to 0.01%) puts requeueAt just past that second
                wait_s = min(cfg.backoff_base_s * 2**count, cfg.backoff_max_s)
                self._requeue_at[key] = (now_ns + wait_s * NS_PER_S + 1, now_ns)
                reason, message = "PodsReadyTimeout", f"Exceeded the PodsReady timeout {key}"
            self.engine.evict(wid, reason, message)
            if self.release_evictions:  # offline its quota is free at once: out of its queue now
                self._hold(key, self.cycles + 1)
            out.append(key)
        return out

    def _hold(self, key: str, evicted_cycle: int) -> None:
        """A workload evicted by a PodsReady timeout, or by a Retry check with
        requeueAfterSeconds, gave its quota back: out of its queue until
        requeueAt (workload_controller.go Update: a workload back to pending
        with a backoff ahead is not queued; Reconcile queues it once requeueAt
        passed); deactivated, for good."""
        wid = self._wid[key]
        view = self.engine.workload_view(wid)
        wl = self.state.workloads[key]
        # set by the eviction (UpdateRequeueState); none once deactivated
        requeue_at, evicted_ns = self._requeue_at.pop(key, (None, self._clock_ns))
        if not wl.active:
            requeue_at = None
        reason, message = view.eviction_reason, view.eviction_message
        held = HeldWorkload(wid, evicted_cycle, reason, message, requeue_at, evicted_ns)
        self._held[wid] = held
        self._engine_hold(held)

    def _engine_hold(self, held: HeldWorkload) -> None:
        """The engine keeps the workload out of its queue until requeueAt, then
        queues it by its eviction time (requeuingStrategy.timestamp Eviction) or
        its creation (Creation) (workload.go Ordering.GetQueueOrderTimestamp),
        until it is admitted again (the engines restore the timestamp then);
        a deactivated one leaves the engine."""
        if held.requeue_at_ns is None:
            self.engine.remove_workload(held.wid)
            return
        cfg = self.state.configuration.wait_for_pods_ready
        queue_ts = self.engine.spec(held.wid).queue_ts
        if held.reason == ac.EVICTED_BY_CHECK:  # whatever requeuingStrategy.timestamp says
            queue_ts = held.evicted_ns
        elif held.evicted_cycle >= 0 and cfg is not None:
            wl = self.state.workloads[self._keys[held.wid]]
            queue_ts = held.evicted_ns if cfg.requeuing_timestamp == "Eviction" else wl.creation_ns
        self.engine.hold(held.wid, held.requeue_at_ns, queue_ts)

    def _requeue_after_backoff(self, now_ns: int) -> None:
        """Held workloads whose requeueAt passed: the engine queues them again
        at this cycle's start (end_holds); they are pending as any other."""
        for wid, held in list(self._held.items()):
            if held.requeue_at_ns is not None and held.requeue_at_ns <= now_ns:
                del self._held[wid]

    def _held_decision(self, held: HeldWorkload) -> Decision:
        key = self._keys[held.wid]
        ns, name = key.split("/", 1)
        if held.evicted_cycle == self.cycles and self.cycles > 0:
            return Decision(ns, name, EVICTED, reason=held.reason, message=held.message)
        if held.requeue_at_ns is None:  # deactivated: in no queue, as an inactive workload
            reason, message = self._waiting_reason(self.compiler.compile(self.state.workloads[key]))
            return Decision(ns, name, PENDING, reason=reason, message=message)
        # QuotaReserved=False as the job reconciler leaves an evicted workload
        reason = "Pending" if held.evicted_cycle >= 0 else held.reason
        return Decision(ns, name, PENDING, reason=reason, message=held.message)

    def decisions(self) -> list[Decision]:
        return [self._decision(self._wid[k]) for k in sorted(self._wid)]

    def state_counts(self) -> dict[str, int]:
        """How many of decisions() are in each state, without making them (the
        engine's state codes, read in bulk)."""
        wids, rest = self._bulk_countable()
        codes = np.bincount(self.engine.decisions()[0][wids], minlength=len(STATE_NAMES))
        counts = {name: int(n) for name, n in zip(STATE_NAMES, codes.tolist(), strict=False) if n}
        for wid in rest:
            state = self._decision(wid).state
            counts[state] = counts.get(state, 0) + 1
        return counts

    def _bulk_countable(self) -> tuple[npt.NDArray[np.int64], list[int]]:
        """The wids whose decision the engine's state alone gives, and the
        rest: the workloads whose state the Cluster keeps between cycles
        (reserved or checked by admission checks, deactivated, held by
        waitForPodsReady's backoff) need their decision."""
        wids = np.fromiter(self._wid.values(), dtype=np.int64, count=len(self._wid))
        mask = self._kept_mask(wids)
        if mask is None:
            return wids, []
        return wids[~mask], wids[mask].tolist()

    def _kept_mask(self, wids: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_] | None:
        """Which of ``wids`` are workloads whose state the Cluster keeps
        (_bulk_countable); None when there are none."""
        own = set(self._held)
        for keys in (self._reserved, self._deactivated, self._checks):
            own.update(self._wid[k] for k in keys if k in self._wid)
        if not own:
            return None
        return np.isin(wids, np.fromiter(own, dtype=np.int64, count=len(own)))

    def bulk_decisions(self) -> BulkDecisions:
        """decisions() from the engine's arrays where they tell (BulkDecisions)."""
        keys = sorted(self._wid)
        ids = self._wid
        wids = np.fromiter((ids[k] for k in keys), dtype=np.int64, count=len(keys))
        codes, admitted_cq, _ = self.engine.decisions()
        codes, admitted_cq = codes[wids], admitted_cq[wids]
        plain = ~kept if (kept := self._kept_mask(wids)) is not None else np.ones(len(wids), dtype=bool)
        kind = np.full(len(wids), BULK_OTHER, dtype=np.int8)
        shape = np.full(len(wids), -1, dtype=np.int32)
        admitted = plain & (codes == STATE_NAMES.index(ADMITTED)) & (admitted_cq >= 0)
        admitted_shape, raw_shapes = self.engine.admitted_shapes(wids[admitted])
        shape[admitted] = admitted_shape
        kind[admitted & (shape >= 0)] = BULK_ADMITTED
        pending = np.flatnonzero(plain & (codes == STATE_NAMES.index(PENDING)))
        pending_wids = wids[pending]
        reasons, messages = self.engine.reasons(pending_wids), self.engine.messages(pending_wids)
        # one the scheduler never tried has no message: why it waits in its queue (_waiting_reason)
        waiting = [self._queue_waiting_reason(cq) for cq in range(len(self.topology.cluster_queues))]
        queues = self.engine.queues(pending_wids).tolist()
        unqueued = []  # in no queue: their decision says why
        for i, (message, cq) in enumerate(zip(messages, queues, strict=True)):
            if not message:
                if cq < 0:
                    unqueued.append(i)
                else:
                    reasons[i], messages[i] = waiting[cq]
        kind[pending] = BULK_PENDING
        if unqueued:
            kind[pending[unqueued]] = BULK_OTHER
            for i in reversed(unqueued):
                del reasons[i], messages[i]
        topo = self.topology
        shapes = [
            (
                topo.cluster_queues[cq].name,
                [
                    PodSetDecision(
                        name,
                        count,
                        {topo.resource_names[r]: topo.flavor_names[f] for r, f in sorted(flavors)},
                    )
                    for name, count, flavors in pod_sets
                ],
            )
            for cq, pod_sets in raw_shapes
        ]
        return BulkDecisions(
            keys,
            kind.tolist(),
            shape.tolist(),
            shapes,
            reasons,
            messages,
        )

    def queue_state_counts(self) -> dict[tuple[str | None, str], int]:
        """How many of decisions() are in each (ClusterQueue the workload is
        admitted to, else the one it queues in, or None; state), without
        making them where the native engine's arrays tell (pending, admitted
        to a ClusterQueue of the topology); the rest one decision at a time."""
        names = [cq.name for cq in self.topology.cluster_queues]
        counts: dict[tuple[str | None, str], int] = {}

        def add(cqs: npt.NDArray[np.int64], state: str) -> None:
            ids, ns = np.unique(cqs, return_counts=True)
            for cq, n in zip(ids.tolist(), ns.tolist(), strict=True):
                key = (names[cq] if cq >= 0 else None, state)
                counts[key] = counts.get(key, 0) + n

        wids, own = self._bulk_countable()
        codes, admitted_cq, _ = self.engine.decisions()
        codes, admitted_cq = codes[wids], admitted_cq[wids].astype(np.int64)
        admitted = (codes == STATE_NAMES.index(ADMITTED)) & (admitted_cq >= 0)
        pending = codes == STATE_NAMES.index(PENDING)
        add(admitted_cq[admitted], ADMITTED)
        spec = self.engine.spec
        add(np.array([spec(w).cluster_queue for w in wids[pending].tolist()], dtype=np.int64), PENDING)
        rest = wids[~(admitted | pending)]
        for wid in rest.tolist() + own:
            d = self._decision(wid)
            queue = d.cluster_queue
            if queue is None:
                cq = self.engine.spec(wid).cluster_queue
                queue = names[cq] if cq >= 0 else None
            counts[(queue, d.state)] = counts.get((queue, d.state), 0) + 1
        return counts

    def _decision(self, wid: int) -> Decision:
        held = self._held.get(wid)
        d = self._held_decision(held) if held is not None else self._engine_decision(wid)
        if self._checks and not d.admission_checks:
            d.admission_checks = list(self._checks.get(self._keys[wid], ()))
        return d

    def _engine_decision(self, wid: int) -> Decision:
        rec = self.engine.workload_view(wid)
        spec = rec.spec
        topo = self.topology
        d = Decision(spec.namespace, spec.name, rec.state)
        if d.state == ADMITTED or (d.state == EVICTED and rec.holds_quota):
            # an evicted workload whose job has not stopped yet still holds its admission
            cq = rec.admitted_cq
            if cq >= 0:
                d.cluster_queue = topo.cluster_queues[cq].name
            elif spec.admission is not None:
                wl = self.state.workloads.get(f"{spec.namespace}/{spec.name}")
                d.cluster_queue = wl.admission.cluster_queue if wl and wl.admission else None
            d.admission_time_ns = rec.admission_time
            rows = zip(spec.pod_sets, rec.pod_sets, rec.resource_usage, strict=True)
            for ps, (count, flavors), usage in rows:
                d.pod_sets.append(
                    PodSetDecision(
                        ps.name,
                        count,
                        {topo.resource_names[r]: topo.flavor_names[f] for r, f in sorted(flavors.items())},
                        {topo.resource_names[r]: v for r, v in sorted(usage.items())},
                    )
                )
            if d.state == ADMITTED:
                key = self._keys[wid]
                d.admission_checks = list(self._checks.get(key, ()))
                if key in self._reserved:
                    d.state = RESERVED
                    d.reason, d.message = self._unsatisfied_checks_reason(), ac.UNSATISFIED_CHECKS_MESSAGE
                return d
        if d.state == EVICTED:
            d.reason = rec.eviction_reason
            d.message = rec.eviction_message
            by = rec.preempted_by
            if by >= 0:
                d.preempted_by = self._keys[by]
                d.preemption_reason = d.reason
                d.reason = "Preempted"
            return d
        if d.state == FINISHED:
            d.reason, d.message = "Finished", "The workload is finished"
            return d
        if self._keys[wid] in self._deactivated:
            d.reason, d.message = ac.DEACTIVATED, ac.DEACTIVATED_MESSAGE
            return d
        d.reason, d.message = rec.reason, rec.message
        if not d.message:
            d.reason, d.message = self._waiting_reason(spec)
        return d

    # --- admission checks (admission_checks.py) ------------------------------------------------

    def set_check_state(
        self,
        key: str,
        check: str,
        state: str,
        message: str = "",
        requeue_after_s: int | None = None,
        transition_ns: int | None = None,
    ) -> None:
        """A check controller wrote the state of ``check`` for the workload
        (status.admissionChecks). A workload holding quota whose checks are
        all Ready is admitted at once (the workload controller's
        SyncAdmittedCondition); Retry and Rejected act at the end of the next
        cycle (reconcileCheckBasedEviction), as the scheduling contract has it.
        A Retry's ``requeue_after_s`` keeps the evicted workload out of its
        queue until ``transition_ns`` (the state's lastTransitionTime: now, or
        the earlier one when the state did not change) plus that many seconds."""
        self._id(key)
        states = [s for s in self._checks.get(key, ()) if s.name != check]
        old = next((s for s in self._checks.get(key, ()) if s.name == check), None)
        if transition_ns is None:
            same = old is not None and old.state == state and old.last_transition_ns is not None
            transition_ns = old.last_transition_ns if same and old is not None else self._clock_ns
        retries = old.retry_count if old else 0
        states.append(AdmissionCheckState(check, state, message, retries, requeue_after_s, transition_ns))
        states.sort(key=lambda s: s.name)
        self._checks[key] = states
        if ac.has_failed(states):
            self._check_failures.add(key)
        if key in self._reserved and ac.all_ready(states):
            self._reserved.discard(key)

    def check_states(self, key: str) -> list[AdmissionCheckState]:
        """The workload's status.admissionChecks as Kueue's controllers keep it."""
        self._id(key)
        return list(self._checks.get(key, ()))

    def _init_checks(self, wl: Workload) -> None:
        """The check states an input workload comes with. A workload holding
        quota gets the checks of its admission's flavors; a pending one only
        those applying to every flavor of its queue (workload.go
        AdmissionChecksForWorkload, workload_controller.go
        reconcileSyncAdmissionChecks)."""
        key = wl.key
        if wl.admission_checks:
            self._checks[key] = list(wl.admission_checks)
        elif wl.admission is None or wl.admission.cluster_queue not in self._check_cqs:
            return  # the common case: nothing to keep
        if not wl.active:
            return
        if wl.admission is not None and self.decision(key).holds_quota:
            self._quota_reserved(key, admitted=wl.admitted_condition)
        elif wl.admission is None and key in self._checks:
            lq = self.state.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
            cq = self.state.cluster_queues.get(lq.cluster_queue) if lq is not None else None
            if cq is not None:
                self._set_checks(key, ac.sync_states(self._checks[key], ac.checks_for_pending(cq)))
        if ac.has_failed(self._checks.get(key, ())):
            self._check_failures.add(key)

    def _set_checks(self, key: str, states: list[AdmissionCheckState]) -> None:
        if states:
            self._checks[key] = states
        else:
            self._checks.pop(key, None)

    def _quota_reserved(self, key: str, *, admitted: bool) -> None:
        """Quota was reserved for the workload: the checks of its flavors get
        a state (Pending when new); it is admitted at once when they are all
        Ready (scheduler.go prepareWorkload), or when Kueue had already
        admitted it (an Admitted workload stays so: workload_controller.go
        syncs Admitted only for workloads not admitted)."""
        d = self.decision(key)
        cq = self.state.cluster_queues.get(d.cluster_queue or "")
        if cq is None or not cq.admission_checks:
            self._checks.pop(key, None)
            return
        flavors = {f for ps in d.pod_sets for f in ps.flavors.values()}
        states = ac.sync_states(self._checks.get(key, ()), ac.checks_for_flavors(cq, flavors))
        self._set_checks(key, states)
        if not admitted and not ac.all_ready(states):
            self._reserved.add(key)

    def _checks_evicted(self, key: str) -> None:
        """An eviction resets the check states (evict.go resetChecksOnEviction)."""
        self._reserved.discard(key)
        if key in self._checks:
            self._set_checks(key, ac.reset_on_eviction(self._checks[key], self._clock_ns))

    def _evict_for_failed_checks(self, now_ns: int) -> list[str]:
        """End of a cycle: workloads holding quota with a Retry check are
        evicted and requeued, ordered by the eviction time until admitted
        again; with a Rejected one, deactivated (reconcileCheckBasedEviction).
        A Retry with requeueAfterSeconds ending after now sets requeueAt
        (workload_controller.go Reconcile: NeedsRequeueAtUpdate, then
        SetRequeueState without counting): the workload is held out of its
        queue until then, as after a PodsReady timeout (_hold)."""
        out: list[str] = []
        for key in sorted(self._check_failures):
            if key not in self._wid or not self.decision(key).holds_quota:
                continue
            self._check_failures.discard(key)
            states = self._checks.get(key, ())
            what = ac.check_eviction(states)
            if what is None:
                continue
            reason, message, requeue = what
            requeue_at = ac.retry_time_ns(states) if requeue else None
            if requeue_at is not None and requeue_at > now_ns:
                self._requeue_at[key] = (requeue_at, now_ns)
            self.engine.evict_after_cycle(self._wid[key], reason, message, now_ns if requeue else -1, requeue)
            self._checks_evicted(key)
            if self.release_evictions and key in self._requeue_at:
                self._hold(key, self.cycles)
            if not requeue:
                self._deactivated.add(key)
                self.state.workloads[key].active = False  # a rebuild queues it nowhere
            out.append(key)
        return out

    def _unsatisfied_checks_reason(self) -> str:
        gates = self.state.configuration.feature_gates
        if gates.get("UnadmittedWorkloadsObservability", True):
            return ac.UNSATISFIED_CHECKS
        return ac.UNSATISFIED_CHECKS_LEGACY

    def _waiting_reason(self, spec: WorkloadSpec) -> tuple[str, str]:
        """Why a pending workload the scheduler never tried is still waiting."""
        if spec.cluster_queue < 0:
            # workload_controller.go resolveGranularUnadmittedQuotaReservedCondition
            if spec.unqueued_reason == ac.DEACTIVATED_MESSAGE:
                return ac.DEACTIVATED, ac.DEACTIVATED_MESSAGE
            return ("Misconfigured" if "exist" in spec.unqueued_reason else "Suspended"), spec.unqueued_reason
        return self._queue_waiting_reason(spec.cluster_queue)

    def _queue_waiting_reason(self, cq_id: int) -> tuple[str, str]:
        cq = self.topology.cluster_queues[cq_id]
        if not cq.active:
            return "Suspended", cq.inactive_message
        return "Pending", f"waiting for its turn in ClusterQueue {cq.name}"


def _condition(wl: Workload, ctype: str) -> dict[str, Any]:
    """The input Workload's status condition of that type ({} when absent)."""
    for c in ((wl.raw.get("status") or {}).get("conditions") or []) if wl.raw else []:
        if isinstance(c, dict) and c.get("type") == ctype:
            return c
    return {}


def _start_time(state: ClusterState) -> int:
    """Offline clock: cycles happen after every timestamp of the input."""
    latest = 0
    for wl in state.workloads.values():
        times = (wl.admission_ns, wl.queue_order_ns, wl.pods_ready_ns)
        latest = max(latest, wl.creation_ns, *(t or 0 for t in times))
    return (latest // NS_PER_S) * NS_PER_S
