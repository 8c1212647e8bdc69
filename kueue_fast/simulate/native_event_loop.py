"""The event loop in the native engine (kueue_fast._core.SimLoop,
csrc/src/sim_loop.cpp): the same instants, cycles and records as event_loop.py's,
without a return to Python per instant.

It runs when the native engine decides and every event is an arrival, a
finish or the release of an evicted workload's quota: no admission check
is modelled (``--admission-check`` or a ClusterQueue with checks) and
waitForPodsReady is off; event_loop.py runs the rest. The records are the
RunState's own arrays, written in place. The time series take the calls
event_loop.py makes, from the loop's log, in their order: a run of calls whose
times all fall within the bins is applied at once (each array then gets
its additions in the same order; only widening the bins, which merges
them, would make the order between two series matter), the calls at and
past the bins' end one at a time. tests/test_simulate_native_loop.py
checks that both loops give the same result, to the last bit.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .result import NEVER, UnsettledInstant

if TYPE_CHECKING:
    from collections.abc import Callable

    from .run_state import RunState

# log ops (csrc sim_loop.hpp SimOp)
USAGE_ADD, USAGE_REMOVE, STOPPING_ADD, STOPPING_REMOVE, PENDING_UP, PENDING_DOWN, EVICTIONS = range(7)
DONE, PROGRESS, LOG_FULL = 0, 1, 2
# rows of log between two applications to the series (about 14 MB with 6 flavor-resources)
LOG_ROWS = 1 << 18


def native_loop_applies(run: RunState) -> bool:
    """Can the native loop run this simulation?"""
    return run.sim.name == "native" and run.n > 0 and not run.plan.any() and run.wait_cfg is None


def run_native(
    run: RunState,
    report_progress: Callable[[int, int], None],
    progress_interval_s: float,
    unsettled_kept: int,
    named: int,
    slice_: int,
) -> int:
    """The loop's events() in the native engine (``report_progress(t,
    instant_cycles)``: the progress bar's report); returns when the clock stopped."""
    arrays: dict[str, Any] = {
        "state": run.state_of,
        "adm_cq": run.adm_cq,
        "n_adm": run.n_adm,
        "n_evi": run.n_evi,
        "adm_at": run.adm_at,
        "evi_at": run.evi_at,
        "last_adm": run.last_adm,
        "last_evi": run.last_evi,
        "fin_at": run.fin_at,
        "wait": run.wait,
        "enq": run.enq,
        "epoch": run.epoch,
        "preempted_by": run.preempted_by,
        "preempting": run.preempting,
        "lost": run.lost,
        "ever_admitted": run.ever_admitted,
        "usage": run.usage,
        "unexplained": run.unexplained,
        "pre_per_cq": run.pre_per_cq,
        "lost_per_cq": run.lost_per_cq,
        "queue_cq": np.ascontiguousarray(run.queue_cq, dtype=np.int64),
        "dur": run.dur,
        "arrival": np.ascontiguousarray(run.batch.queue_ts, dtype=np.int64),
    }
    params = {
        "total": run.total,
        "manifest": run.m,
        "rows": run.n,
        "start_ns": run.start_ns,
        "end_ns": run.end_ns if run.end_ns is not None else NEVER,
        "drain_stop": run.drain_stop,
        "termination_delay_ns": run.termination_delay_ns,
        "max_cycles": run.max_cycles,
        "instant_slice": slice_,
        "start_instant": int(bool(run.m) and run.instants == 0),
        "unsettled_kept": max(0, unsettled_kept - len(run.churn.unsettled)),
        "named": named,
    }
    loop = run.sim.sim_loop(run.batch, arrays, params)
    loop.resume_from(run.arrived, run.finish_heap, run.running, run.admissions, run.preemptions)
    budget = progress_interval_s if run.progress is not None else 3600.0
    while True:
        status = loop.advance(budget, LOG_ROWS)
        _apply_log(run, loop.log())
        c = loop.counters()
        run.arrived, run.running, run.admissions = c["arrived"], c["running"], c["admissions"]
        run.preemptions, run.instants, run.cycles = c["preemptions"], c["instants"], c["cycles"]
        run.cycles_run, run.unsettled, run.schedule_s = c["cycles_run"], c["unsettled"], c["schedule_s"]
        run.drain_limited = c["drain_limited"]
        if status == DONE:
            break
        if status == PROGRESS and time.perf_counter() >= run.next_report:
            run.next_report = time.perf_counter() + progress_interval_s
            report_progress(c["now"] or c["last_t"], c["instant_cycles"])
    for key, count in loop.pairs():
        run.churn.pairs[key] = run.churn.pairs.get(key, 0) + count
    for t, cycles, adm, pre, pairs, victims, preemptors in loop.unsettled():
        run.churn.unsettled.append(UnsettledInstant(t, cycles, adm, pre, dict(pairs), victims, preemptors))
    run.sim.sim_loop_done(run.arrived == run.n)
    return int(c["final_t"])


def _apply_log(run: RunState, log: tuple[Any, ...]) -> None:
    """The series calls of the log, in order (see the module's doc), and the
    explanations of the workloads tried the first time."""
    op, t, rows, key, usage, expl_wid, expl_msg, messages = log
    if expl_wid.size:
        ids = np.array([run.message_index(m) for m in messages], dtype=np.int32)
        np.frombuffer(run.explained, dtype=np.int32)[expl_wid] = ids[expl_msg]
    if not op.size:
        return
    tl = run.timeline
    first = np.concatenate([[0], np.cumsum(rows)])
    has_usage = op <= STOPPING_REMOVE
    ufirst = np.concatenate([[0], np.cumsum(np.where(has_usage, rows, 0))])
    n_fr = run.n_fr
    deltas = usage.reshape(-1, n_fr)
    i, n = 0, op.size
    while i < n:
        limit = tl.bins.limit
        j = i + int(np.searchsorted(t[i:], limit, side="left"))
        if j > i:
            _apply_ops(run, op, t, rows, key, deltas, first, ufirst, i, j)
        i = j
        # at and past the bins' end: one call at a time until the bins widen
        while i < n and tl.bins.limit == limit:
            _apply_ops(run, op, t, rows, key, deltas, first, ufirst, i, i + 1)
            i += 1


def _apply_ops(
    run: RunState,
    op: Any,
    t: Any,
    rows: Any,
    key: Any,
    deltas: Any,
    first: Any,
    ufirst: Any,
    i: int,
    j: int,
) -> None:
    """Ops [i, j) of the log: each series gets its calls in their order."""
    tl = run.timeline
    ops = op[i:j]
    for kinds, series in (
        ((USAGE_ADD, USAGE_REMOVE), (tl.usage, tl.trees)),
        ((STOPPING_ADD, STOPPING_REMOVE), (tl.stopping,)),
    ):
        sel = np.flatnonzero((ops == kinds[0]) | (ops == kinds[1])) + i
        if not sel.size:
            continue
        ns = rows[sel].astype(np.int64)
        signs = np.where(op[sel] == kinds[0], 1, -1)
        row_idx = _rows_of(first, sel, ns)
        urow_idx = _rows_of(ufirst, sel, ns)
        k, d = key[row_idx], deltas[urow_idx]
        for s in series:
            s.add_blocks(t[sel], ns, signs, k, d)
    sel = np.flatnonzero((ops == PENDING_UP) | (ops == PENDING_DOWN)) + i
    if sel.size:  # one row each
        if j - i == 1:
            tl.pending.add(int(t[i]), key[first[i] : first[i] + 1], 1 if op[i] == PENDING_UP else -1)
        else:
            tl.pending.add_many(t[sel], key[first[sel]], np.where(op[sel] == PENDING_UP, 1, -1))
    sel = np.flatnonzero(ops == EVICTIONS) + i
    if sel.size:
        ns = rows[sel].astype(np.int64)
        reasons = key[_rows_of(first, sel, ns)]
        if j - i == 1:
            tl.preemptions.add(int(t[i]), np.bincount(reasons, minlength=tl.preemptions.counts.shape[0]))
        else:
            tl.preemptions.add_each(np.repeat(t[sel], ns), reasons)


def _rows_of(first: Any, sel: Any, ns: Any) -> Any:
    """The row indexes of ops ``sel`` (``ns`` rows each, from ``first``), in order."""
    starts = np.repeat(first[sel] - np.concatenate([[0], np.cumsum(ns)[:-1]]), ns)
    return starts + np.arange(int(ns.sum()))
