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
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .._gc import no_cyclic_gc
from ..api.errors import EngineError, NotStableError
from ..api.model import AdmissionCheckState, CheckState, ClusterState, Workload
from ..engine import arguments as A
from ..engine.contract import ENGINES, Engine
from ..engine.inputs import CyclesRun, Topology, WorkloadSpec
from ..engine.select import choose_engine
from ..engine.workload_scan import WorkloadScan, workload_scan
from ..engine.workloads import WorkloadCompiler
from .check_ledger import AdmissionCheckLedger
from .decisions import (
    ADMITTED,
    BULK_ADMITTED,
    BULK_OTHER,
    BULK_PENDING,
    EVICTED,
    FINISHED,
    NS_PER_S,
    PENDING,
    RESERVED,
    BulkDecisions,
    CycleResult,
    Decision,
    EvictionRecord,
    HeldWorkload,
    LocalQueueFairSharing,
    PodSetDecision,
    PodsReadyState,
    WorkloadHistory,
    WorkloadState,
)
from .handles import Clock, EngineHandle, WorkloadIndex
from .history import HistoryLedger, cycle_results
from .pods_ready import PodsReadyLedger
from .reading import DecisionReader

# the names other modules import from here (the records live in cluster/decisions.py)
__all__ = [
    "ADMITTED",
    "BULK_ADMITTED",
    "BULK_OTHER",
    "BULK_PENDING",
    "ENGINES",
    "EVICTED",
    "FINISHED",
    "NS_PER_S",
    "PENDING",
    "RESERVED",
    "BulkDecisions",
    "Cluster",
    "CycleResult",
    "Decision",
    "EvictionRecord",
    "HeldWorkload",
    "LocalQueueFairSharing",
    "PodSetDecision",
    "PodsReadyState",
    "WorkloadHistory",
]


class Cluster:
    """Kueue's scheduler over a ClusterState. What Kueue's other controllers keep
    between cycles lives in ledgers the Cluster owns and delegates to: admission
    checks (cluster/check_ledger.py), waitForPodsReady (cluster/pods_ready.py),
    the statuses' history (cluster/history.py); its decisions are read by
    cluster/reading.py. They share the engine handle, the key <-> wid index and
    the clock (cluster/handles.py), passed to their constructors."""

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
        A.expect_type(state, ClusterState, "Cluster")
        if start_time_ns is not None:
            A.i64(start_time_ns, "start_time_ns")
        engine_name, note = choose_engine(engine)
        if note:
            warnings.warn(note, RuntimeWarning, stacklevel=2)
        scan = workload_scan(state.workloads)  # one pass over every workload for what follows
        self._built = EngineHandle(engine_name, release_evictions)
        self._index = WorkloadIndex()
        self._clock = Clock(start_time_ns if start_time_ns is not None else _start_time(scan.latest_ns))
        self.start_ns = self._clock.now_ns  # the clock before the first cycle
        self._pods_ready = PodsReadyLedger(self._built, self._index, self._clock)
        self._checks = AdmissionCheckLedger(self._built, self._index, self._clock, self._pods_ready)
        self._history = HistoryLedger(self._built, self._index)
        self._reader = DecisionReader(self._built, self._index, self._clock, self._checks, self._pods_ready)
        self._build(state, scan)
        self._add_inputs(state)
        self._pods_ready.read_inputs(state, scan.timed)

    # the engine and what it was built from (reconfigure rebuilds them)

    @property
    def engine_name(self) -> str:
        """``"native"`` or ``"reference"``: the engine in use."""
        return self._built.engine_name

    @property
    def release_evictions(self) -> bool:
        """Is an evicted workload's quota released at the end of its cycle (offline)?"""
        return self._built.release_evictions

    @property
    def state(self) -> ClusterState:
        """The Kueue objects the cluster was built (or last reconfigured) from."""
        return self._built.state

    @property
    def topology(self) -> Topology:
        """The compiled topology: the engine's dense ids for names."""
        return self._built.topology

    @property
    def compiler(self) -> WorkloadCompiler:
        """Compiles a Workload into the engine's WorkloadSpec."""
        return self._built.compiler

    @property
    def engine(self) -> Engine:
        """The engine (ids instead of names, arrays instead of objects)."""
        return self._built.engine

    @property
    def cycles(self) -> int:
        """How many scheduling cycles ran."""
        return self._clock.cycles

    # --- construction ----------------------------------------------------------------------

    @classmethod
    def from_files(
        cls,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        engine: str | None = None,
        **kw: Any,
    ) -> Cluster:
        """A Cluster of the objects in these YAML or JSON files (a path, or
        several; a directory reads its manifests, as ``kubectl apply -f``),
        validated as ``kueue-fast schedule`` validates them: bad input raises
        :class:`~kueue_fast.api.errors.InputError`. ``engine``: ``"native"`` or
        ``"reference"`` (default: native, or ``$KUEUE_FAST_ENGINE``); ``kw`` go
        to :class:`Cluster`."""
        from ..loader import load

        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        elif not isinstance(paths, Sequence):
            raise EngineError(f"from_files: expected file paths, got {type(paths).__name__}")
        return cls(load([os.fspath(p) for p in paths]), engine, **kw)

    @classmethod
    def from_objects(cls, objects: Iterable[dict[str, Any]], engine: str | None = None, **kw: Any) -> Cluster:
        """A Cluster of these Kubernetes objects (dicts as ``yaml.safe_load``
        gives them), validated as :meth:`from_files` does. The dicts are kept
        (``Workload.raw``): treat them as read-only afterwards, or give copies."""
        from ..loader import build_state

        if isinstance(objects, (dict, str, bytes)) or not isinstance(objects, Iterable):
            raise EngineError(f"from_objects: expected objects, got {type(objects).__name__}")
        return cls(build_state(objects), engine, **kw)

    def _build(self, state: ClusterState, scan: WorkloadScan | None = None) -> None:
        self._built.build(state, scan)
        self._checks.rebuild(state)

    def _add_inputs(self, state: ClusterState) -> None:
        """The input's workloads, wids following the sorted keys. The plain
        pending ones the compiler's batch carries are staged in the engine as
        arrays once and each run of them added from there (_add_staged); the
        others (admitted, with check states, ...: rows < 0), or all of them when
        the engine takes no arrays (no batch), one WorkloadSpec at a time
        (_add_input), compiled from the batch's memos. Two ways in because the
        arrays are the fast form of the common case, not a copy of the other."""
        keys = sorted(state.workloads)
        batch = self.compiler.pending_batch()
        with no_cyclic_gc():
            if batch is None:
                for key in keys:
                    self._add_input(key, state.workloads[key], self.compiler.compile)
                return
            batch.prepare(state.workloads)
            rows = batch.rows(keys)
            others = np.flatnonzero(rows < 0).tolist()
            if len(others) < len(keys):
                self.engine.stage_workloads(batch.arrays(rows[rows >= 0]))
            start = 0
            for n_before, i in enumerate([*others, len(keys)]):
                if start < i:  # keys[start] is staged row start - n_before
                    self._add_staged(keys[start:i], start - n_before)
                if i < len(keys):
                    key = keys[i]
                    self._add_input(key, state.workloads[key], batch.compile)
                start = i + 1
            self.engine.clear_staged()

    # --- workloads -----------------------------------------------------------------------------

    def add_workload(self, wl: Workload) -> None:
        """Add a pending workload (queued by its LocalQueue) or an admitted one."""
        A.expect_type(wl, Workload, "add_workload")
        if wl.key in self._index.wid:
            raise EngineError(f"Workload/{wl.key} is already in the cluster")
        self.state.workloads[wl.key] = wl
        if not self._built.knows(wl):  # a resource or flavor the topology lacks: rebuild it
            self.reconfigure(self.state)
        self._add_compiled(wl.key, self.compiler.compile(wl))
        self._pods_ready.admitted_input(wl)
        self._checks.init(wl, self.decision)

    def _add_staged(self, keys: list[str], lo: int) -> None:
        """Add pending workloads from the engine's staged rows ``lo:lo+len(keys)``, one per key."""
        first = self.engine.add_staged(lo, lo + len(keys))
        self._index.wid.update(zip(keys, first, strict=True))
        self._index.keys.extend(keys)

    def _add_input(self, key: str, wl: Workload, compile: Callable[[Workload], WorkloadSpec]) -> None:
        """An input workload the arrays cannot carry, with its admission checks."""
        self._add_compiled(key, compile(wl))
        self._checks.input_workload(wl, self.decision)

    def _add_compiled(self, key: str, spec: WorkloadSpec) -> None:
        self._index.add(key, self.engine.add_workload(spec))
        if spec.admission is not None and self._reader.charged_less(self.state.workloads.get(key)):
            self._reader.reclaimed.add(key)

    def remove_workload(self, key: str) -> None:
        """The workload finished or was deleted: its quota (if any) is released
        and the cluster forgets it (the same key may be added again)."""
        wid = self._index.id(key)
        self.engine.remove_workload(wid)
        del self._index.wid[key]  # its wid (and first attempt) is never used again
        self._pods_ready.forget(key, wid)
        self._history.forget(key)
        self.state.workloads.pop(key, None)
        self._checks.forget(key)
        self._reader.reclaimed.discard(key)

    def evict(self, key: str, reason: str, message: str) -> None:
        """Evict an admitted workload (deactivation, a stop policy, an admission
        that could not be written...). Its quota is released at once offline, or
        by release_eviction() when the cluster was built with
        release_evictions=False; it then queues again."""
        before = self.decision(key)
        self.engine.evict(self._index.id(key), reason, message)
        if before.holds_quota:  # else the engine had nothing to evict
            ev = EvictionRecord(self.cycles + 1, self._clock.now_ns, reason, message)
            ev.admitted_ns = before.admission_time_ns
            self._history.record_eviction(key, ev)
            self._checks.evicted(key)

    def release_eviction(self, key: str) -> None:
        """The evicted workload's job stopped: its quota is free, it queues again
        (after a PodsReady timeout, once its backoff ends)."""
        wid = self._index.id(key)
        if wid in self._pods_ready.held:  # released already, waiting for its requeueAt
            return
        reason = self.engine.workload_view(wid).eviction_reason
        self.engine.release_eviction(wid)
        waits = self.state.configuration.wait_for_pods_ready is not None
        pods_ready = waits and reason in ("PodsReadyTimeout", "Deactivated")
        if pods_ready or key in self._pods_ready.requeue_at:  # a backoff (or deactivation) ahead
            self._pods_ready.hold(key, self.cycles)

    def reconfigure(self, state: ClusterState) -> None:
        """New configuration (quotas, queues, flavors): rebuild the topology and
        re-add every workload, keeping admissions as they are (an eviction still
        holding its quota stays so, until release_eviction())."""
        A.expect_type(state, ClusterState, "reconfigure")
        index, pods_ready = self._index, self._pods_ready
        held = {index.keys[w]: h for w, h in pods_ready.held.items()}  # out of their queues: stay so
        old = [self.decision(k) for k in index.wid if k not in held]
        first_ns = self._history.first_attempts_by_key()
        afs_history = self.engine.afs_ledger_state()
        self._reader.given_topology = {}
        self._build(state)
        if afs_history:
            self.engine.restore_afs_ledger(afs_history)
        index.clear()
        for d in old:
            wl = state.workloads.get(d.key)
            if wl is None or d.state == FINISHED:
                continue
            spec = self.compiler.compile(wl)
            holds_quota = d.holds_quota or (d.state == EVICTED and d.cluster_queue is not None)
            spec.admission = self._reader.admission_of(d, spec) if holds_quota else None
            self._add_compiled(d.key, spec)
            if d.state == EVICTED and holds_quota:
                self.engine.evict(index.wid[d.key], d.preemption_reason or d.reason, d.message)
            if d.state == ADMITTED and d.admission_time_ns is not None:
                if pods_ready.state_of(d.key, d.admission_time_ns).ready:
                    self.engine.set_pods_ready(index.wid[d.key], True)
        pods_ready.held.clear()
        for key, h in held.items():
            wl = state.workloads.get(key)
            if wl is None:
                continue
            spec = self.compiler.compile(wl)
            spec.admission = None
            self._add_compiled(key, spec)
            wid = index.wid[key]
            pods_ready.held[wid] = replace(h, wid=wid)
            pods_ready.engine_hold(pods_ready.held[wid])
        self._history.restore_first_attempts(first_ns)
        self._checks.recheck_reserved(self.decision)

    # --- scheduling ------------------------------------------------------------------------------

    def now_ns(self) -> int:
        """The cluster's clock (ns since the epoch): the time of the last cycle,
        or before the first one the latest time the input holds."""
        return self._clock.now_ns

    def run_cycle(self, now_ns: int | None = None) -> CycleResult:
        """One scheduling cycle. Offline, the clock advances one second per cycle."""
        if now_ns is None:
            now_ns = self._clock.now_ns + NS_PER_S
        now_ns = A.i64(now_ns, "now_ns")
        self._clock.now_ns = now_ns
        # 1. what Kueue's controllers did since the last cycle
        evicted = self._drain_stopped_queues()
        self._pods_ready.requeue_after_backoff(now_ns)
        evicted += self._pods_ready.timeouts(now_ns)
        # 2. the cycle
        report = self.engine.run_cycle(now_ns)
        self._clock.cycles += 1
        keys = self._index.keys  # by wid, removed workloads included
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
        # 3. its admissions and evictions seen by the admission check controllers
        self._checks.after_cycle(result, report.admitted, self.decision)
        # 4. what the statuses remember of it
        self._history.record_cycle(result, report.attempted, self.decision)
        return result

    def run(self, cycles: int, on_cycle: Callable[[CycleResult], None] | None = None) -> list[CycleResult]:
        """Run `cycles` cycles; their results. on_cycle sees every cycle's
        result as it ends."""
        cycles = _count(cycles, "run", "cycles")
        if cycles == 0:
            return []
        if on_cycle is None and self._bulk_ok():
            run = self._run_bulk(cycles, until_stable=False)
            return cycle_results(run, self._index.keys, self.cycles, self._clock.now_ns)
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
        max_cycles = _count(max_cycles, "run_until_stable", "max_cycles")
        if on_cycle is None and self._bulk_ok():
            run = self._run_bulk(max_cycles, until_stable=True)
            if run.stable:
                return int(run.cycles)
        else:
            # Victims keep their quota until release_eviction(): a preemptor re-issues
            # their evictions each cycle, which changes nothing (the engine's
            # run_until_settled counts it so too).
            under_way = None if self.release_evictions else self._evictions_under_way()
            for n in range(1, max_cycles + 1):
                result = self.run_cycle()
                if on_cycle is not None:
                    on_cycle(result)
                if not self._changed(result, under_way):
                    return n
        raise NotStableError(f"still changing after {max_cycles} cycles (--max-cycles)")

    def _evictions_under_way(self) -> set[str]:
        """Keys of the workloads evicted (holding their quota until release_eviction)."""
        return {d.key for d in self.decisions() if d.state == "evicted"}

    @staticmethod
    def _changed(result: CycleResult, under_way: set[str] | None) -> bool:
        """Did the cycle change anything? Given the evictions under way, an
        eviction issued again is no change (and a new one joins them)."""
        if under_way is None:
            return result.changed
        new = [k for k in (*result.preempted, *result.evicted) if k not in under_way]
        under_way.update(new)
        return bool(result.admitted or new or result.newly_parked)

    # --- many cycles in one engine call ----------------------------------------------------------
    # Why two ways to run cycles: run_cycle() returns to Python after each cycle
    # for what Kueue's other controllers do between cycles (drains, PodsReady
    # timeouts and backoffs, admission checks); when none of that can happen
    # (_bulk_ok) the engine runs the same cycles without returning (run_cycles).
    # The scheduling is the engine's in both; only the between-cycle steps differ,
    # and _bulk_ok says they have nothing to do.

    def _bulk_ok(self) -> bool:
        """May the cycles run inside the engine (run_cycles), with nothing to do
        between them? Not when HoldAndDrain queues drain before every cycle,
        nor when victims keep their quota until release_eviction (a victim
        can then be preempted again while its eviction is under way, and its
        eviction record is that of the cycle)."""
        checks = self._checks
        if not self.release_evictions or checks.cluster_queues or checks.failures:
            return False  # admission checks act between cycles (AdmissionCheckLedger.after_cycle)
        if self.state.configuration.wait_for_pods_ready is not None or self._pods_ready.held:
            return False  # timeouts and backoffs act between cycles (PodsReadyLedger.timeouts)
        return not any(
            cq.stop_policy == "HoldAndDrain" for cq in self.state.cluster_queues.values()
        ) and not any(lq.stop_policy == "HoldAndDrain" for lq in self.state.local_queues.values())

    def _run_bulk(self, max_cycles: int, until_stable: bool) -> CyclesRun:
        """run_cycle's cycles inside the engine, one second apart as run_cycle
        spaces them, then what the history keeps of them (as run_cycle records it)."""
        start, step = self._clock.now_ns, NS_PER_S
        not_tried = (self._history.first_attempts() < 0).view(np.uint8)
        run: CyclesRun = self.engine.run_cycles(start, step, max_cycles, until_stable, not_tried)
        first_cycle = self.cycles
        self._clock.cycles += int(run.cycles)
        self._clock.now_ns = start + int(run.cycles) * step
        self._history.record_bulk_run(run, first_cycle, start, step)
        return run

    def _drain_stopped_queues(self) -> list[str]:
        """HoldAndDrain: admitted workloads of a stopped ClusterQueue or
        LocalQueue are evicted (Kueue's workload controller does it)."""
        drained_cqs = {n for n, cq in self.state.cluster_queues.items() if cq.stop_policy == "HoldAndDrain"}
        drained_lqs = {k for k, lq in self.state.local_queues.items() if lq.stop_policy == "HoldAndDrain"}
        if not drained_cqs and not drained_lqs:
            return []
        out = []
        wids = self._index.wid
        for key in list(wids):
            d = self.decision(key)
            if not d.holds_quota:
                continue
            wl = self.state.workloads[key]
            if d.cluster_queue in drained_cqs:
                self.engine.evict(wids[key], "ClusterQueueStopped", "The ClusterQueue is stopped")
            elif f"{wl.namespace}/{wl.queue_name}" in drained_lqs:
                self.engine.evict(wids[key], "LocalQueueStopped", "The LocalQueue is stopped")
            else:
                continue
            out.append(key)
        return out

    # --- the ledgers' bookkeeping between cycles ---------------------------------------------------

    def set_check_state(
        self,
        key: str,
        check: str,
        state: CheckState,
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
        self._checks.set_check_state(key, check, state, message, requeue_after_s, transition_ns)

    def check_states(self, key: str) -> list[AdmissionCheckState]:
        """The workload's status.admissionChecks as Kueue's controllers keep it."""
        return self._checks.states_of(key)

    def set_pods_ready(self, key: str, ready: bool, reason: str = "", now_ns: int | None = None) -> None:
        """The PodsReady condition of the workload's current admission changed
        (the simulator's pod start-up, the controller's job status); reason
        WaitForRecovery for pods that were ready and failed."""
        self._pods_ready.set_pods_ready(key, ready, reason, now_ns)

    def requeue_state(self, key: str) -> tuple[int, int | None]:
        """status.requeueState: (count, requeueAt ns or None)."""
        return self._pods_ready.requeue_state(key)

    def history(self, key: str) -> WorkloadHistory | None:
        """The workload's first attempt, last eviction and eviction counts; None
        when the scheduler never tried it and it was never evicted."""
        return self._history.history(key)

    # --- results ----------------------------------------------------------------------------------

    def __contains__(self, key: object) -> bool:
        return key in self._index.wid

    def keys(self) -> list[str]:
        """The workloads in the cluster, in the order they were added."""
        return list(self._index.wid)

    def wid_of(self, key: str) -> int:
        """The engine's id of a workload (``Cluster.engine`` speaks in ids)."""
        return self._index.id(key)

    def key_of(self, wid: int) -> str:
        """The ``namespace/name`` of the workload with engine id ``wid`` (wid_of's inverse)."""
        keys = self._index.keys
        return keys[A.known(A.wid(wid), len(keys))]

    def local_queue_fair_sharing(self, key: str) -> LocalQueueFairSharing | None:
        """Admission fair sharing state of LocalQueue ``namespace/name``; None
        when it has none (not configured, or not sampled yet)."""
        return self._reader.local_queue_fair_sharing(key)

    # Decisions are read one at a time (a Decision with everything) or in bulk
    # from the engine's arrays (counts, what -o json prints); cluster/reading.py
    # says why both, and sends every workload the arrays cannot tell to the first.

    def decision(self, key: str) -> Decision:
        """Where workload ``namespace/name`` stands after the cycles run so far."""
        return self._reader.decision(self._index.id(key))

    def decisions(self) -> list[Decision]:
        """Every workload's :class:`Decision`, sorted by namespace and name."""
        return self._reader.decisions()

    def pending_reasons(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        """(reason, message) of pending workloads, as ``decision(key)`` gives
        them, read from the engine in one call (a cycle's heads left pending)."""
        return self._reader.pending_reasons(keys)

    def state_counts(self) -> dict[WorkloadState, int]:
        """How many of decisions() are in each state, without making them (the
        engine's state codes, read in bulk)."""
        return self._reader.state_counts()

    def queue_state_counts(self) -> dict[tuple[str | None, str], int]:
        """How many of decisions() are in each (ClusterQueue the workload is
        admitted to, else the one it queues in, or None; state), without
        making them where the native engine's arrays tell (pending, admitted
        to a ClusterQueue of the topology); the rest one decision at a time."""
        return self._reader.queue_state_counts()

    def bulk_decisions(self) -> BulkDecisions:
        """decisions() from the engine's arrays where they tell (BulkDecisions)."""
        return self._reader.bulk_decisions()


def _count(n: object, call: str, what: str) -> int:
    """A number of cycles: an integer, 0 or more."""
    value = A.i64(n, f"{call}: {what}")
    if value < 0:
        raise EngineError(f"{call}: {what} must be 0 or more, got {value}")
    return value


def _start_time(latest_ns: int) -> int:
    """Offline clock: cycles happen after every timestamp of the input (WorkloadScan.latest_ns)."""
    return (latest_ns // NS_PER_S) * NS_PER_S
