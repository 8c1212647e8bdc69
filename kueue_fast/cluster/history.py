"""What the cycles leave behind: what Kueue's Workload statuses remember of them
(the first attempt, the evictions), the Cluster's history ledger read by
history() and the status writers (cluster/status_writer.py); and a bulk
run's results, cycle by cycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..engine.contract import WorkloadView
from ..engine.inputs import CyclesRun
from .decisions import NS_PER_S, CycleResult, Decision, EvictionRecord, WorkloadHistory
from .handles import EngineHandle, WorkloadIndex


class HistoryLedger:
    """Per workload, bounded: its first attempt time (by wid, -1: never tried)
    and its evictions. Only what a cycle tried or evicted is written: nothing
    grows with the cycle count."""

    def __init__(self, built: EngineHandle, index: WorkloadIndex) -> None:
        self._built = built
        self._index = index
        # grown to the wids in use by first_attempts()
        self._first_ns: npt.NDArray[np.int64] = np.full(0, -1, dtype=np.int64)
        self._by_key: dict[str, WorkloadHistory] = {}

    def forget(self, key: str) -> None:
        """The workload left the cluster (its wid, and first attempt, is never used again)."""
        self._by_key.pop(key, None)

    def first_attempts_by_key(self) -> dict[str, int]:
        """The first attempts of the workloads tried, by key (kept across a rebuild)."""
        first = self.first_attempts()
        return {k: int(first[w]) for k, w in self._index.wid.items() if first[w] >= 0}

    def restore_first_attempts(self, first_ns: dict[str, int]) -> None:
        """After a rebuild (new wids): first_attempts_by_key()'s times again."""
        self._first_ns = np.full(len(self._index.keys), -1, dtype=np.int64)
        for key, t in first_ns.items():
            if key in self._index.wid:
                self._first_ns[self._index.wid[key]] = t

    def record_bulk_run(self, run: CyclesRun, first_cycle: int, start: int, step: int) -> None:
        """The first attempts and evictions of cycles run inside the engine
        (run_cycles), ``step`` ns apart from ``start``."""
        first = self.first_attempts()
        attempted = np.asarray(run.attempted, dtype=np.int64)
        if attempted.size:
            first[attempted] = start + (np.asarray(run.attempted_cycle, dtype=np.int64) + 1) * step
        if len(run.preempted):
            self._record_preemptions(run, first_cycle, start, step)

    def history(self, key: str) -> WorkloadHistory | None:
        """Cluster.history (documented there)."""
        wid = self._index.wid.get(key)
        first_attempts = self.first_attempts()
        first = int(first_attempts[wid]) if wid is not None and first_attempts[wid] >= 0 else None
        h = self._by_key.get(key)
        if h is None:
            return None if first is None else WorkloadHistory(first_attempt_ns=first)
        return WorkloadHistory(first, h.last_eviction, dict(h.evictions), h.past_execution_s)

    def record_eviction(self, key: str, ev: EvictionRecord) -> None:
        self._by_key.setdefault(key, WorkloadHistory()).record_eviction(ev)

    def first_attempts(self) -> npt.NDArray[np.int64]:
        """The first attempt time by wid (-1: never tried), one per wid in use."""
        grow = len(self._index.keys) - len(self._first_ns)
        if grow > 0:
            self._first_ns = np.concatenate([self._first_ns, np.full(grow, -1, dtype=np.int64)])
        return self._first_ns

    def record_cycle(
        self, result: CycleResult, attempted: list[int], decide: Callable[[str], Decision]
    ) -> None:
        """Only what this cycle tried or evicted: nothing grows with the cycle count."""
        first = self.first_attempts()
        if attempted:
            tried = np.asarray(attempted, dtype=np.int64)
            first[tried[first[tried] < 0]] = result.time_ns
        for key in [*result.evicted, *result.preempted]:
            d = decide(key)
            reason = d.reason if d.preempted_by is None else "Preempted"
            ev = EvictionRecord(
                result.cycle, result.time_ns, reason, d.message, d.preemption_reason, d.preempted_by
            )
            ev.admitted_ns = int(self._built.engine.workload_view(self._index.wid[key]).admission_time)
            self.record_eviction(key, ev)

    def _record_preemptions(self, run: CyclesRun, first_cycle: int, start: int, step: int) -> None:
        """record_cycle's eviction records of a bulk run. Every victim was
        preempted (offline: each eviction is a fresh preemption), so the
        engine's eviction fields, read now, are those of its last one."""
        views: dict[int, WorkloadView] = {}
        keys = self._index.keys
        rows = zip(run.preempted, run.preempted_cycle, run.preempted_admission_ns, strict=True)
        for w, c, admitted_ns in rows:
            w, c = int(w), int(c)
            rec = views.get(w)
            if rec is None:
                rec = views[w] = self._built.engine.workload_view(w)
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
            self.record_eviction(keys[w], ev)


def cycle_results(run: CyclesRun, keys_by_wid: list[str], cycles: int, now_ns: int) -> list[CycleResult]:
    """Cluster.run()'s results of a bulk run that ended at cycle ``cycles``,
    time ``now_ns``, cycle by cycle (wids sorted, as run_cycle gives them)."""
    keys = np.asarray(keys_by_wid, dtype=object)
    first_cycle = cycles - int(run.cycles)
    start = now_ns - int(run.cycles) * NS_PER_S

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
