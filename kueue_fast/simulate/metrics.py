"""Metrics of a simulation, computed from its logs with numpy at the end.

Usage over time is a step function per ClusterQueue and flavor-resource:
+usage at each admission, -usage when that admission ends (finish or
preemption). Means over time are exact integrals of those step functions;
the plotted series are their means over equal time bins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .engine import EVICTION_REASONS
from .loop import FINISHED, PREEMPTED, SimResult

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
NS = 1e9


@dataclass
class QueueStats:
    name: str
    cohort: str
    workloads: int  # arrived in its queue
    admitted: int  # admitted at least once
    pending: int  # still pending at the end
    running: int  # admitted and running at the end
    finished: int
    preemptions: int  # of its workloads
    wait_p50_s: float
    wait_p95_s: float
    wait_p99_s: float
    wait_mean_s: float
    utilization: float  # time-mean usage of its dominant resource / nominal (> 1 when borrowing)
    borrowing_s: float  # time during which it used more than its nominal quota somewhere
    lost_work_s: float  # run time thrown away by preemption

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Series:
    """Bin means over [start, end]: ``edges_s`` are seconds since the start."""

    edges_s: F64
    # resource -> flavor -> fraction of the flavor's total nominal quota in use
    utilization: dict[str, dict[str, F64]] = field(default_factory=dict)
    pending: dict[str, F64] = field(default_factory=dict)  # ClusterQueue -> pending workloads
    # resource -> ClusterQueue -> amount borrowed (>0) and lent (<0), in display units
    borrowed: dict[str, dict[str, F64]] = field(default_factory=dict)
    lent: dict[str, dict[str, F64]] = field(default_factory=dict)
    preemptions: dict[str, F64] = field(default_factory=dict)  # reason -> count per bin


@dataclass
class Metrics:
    queues: list[QueueStats]
    series: Series
    waits_s: dict[str, F64]  # ClusterQueue -> wait of every admission
    totals: dict[str, Any]


def display_unit(resource: str) -> tuple[float, str]:
    """Divisor and unit to show amounts of a resource in."""
    if resource == "cpu":
        return 1000.0, "cores"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return float(1 << 30), "GiB"
    return 1.0, ""


def _integrals(times: I64, levels: F64, x: F64) -> F64:
    """∫ from times[0] to x of a step function that is 0 before times[0] and
    levels[i] from times[i] on (times sorted). levels may be 2-D (E x k)."""
    if times.size == 0:
        return np.zeros((x.size,) + levels.shape[1:], dtype=np.float64)
    t = times.astype(np.float64)
    seg = np.diff(t)
    cum = np.zeros_like(levels, dtype=np.float64)
    if levels.ndim == 1:
        cum[1:] = np.cumsum(levels[:-1] * seg)
    else:
        cum[1:] = np.cumsum(levels[:-1] * seg[:, None], axis=0)
    k = np.searchsorted(t, x, side="right") - 1
    kc = np.clip(k, 0, None)
    dx = x - t[kc]
    out = cum[kc] + (levels[kc] * (dx if levels.ndim == 1 else dx[:, None]))
    out[k < 0] = 0.0
    return out


def _bin_means(times: I64, deltas: F64, edges_ns: F64) -> F64:
    """Mean level per bin of the step function built from deltas at times."""
    if times.size == 0:
        shape = (edges_ns.size - 1,) + deltas.shape[1:]
        return np.zeros(shape, dtype=np.float64)
    order = np.argsort(times, kind="stable")
    t = times[order]
    levels = np.cumsum(deltas[order], axis=0)
    integ = _integrals(t, levels, edges_ns)
    width = np.diff(edges_ns)
    d = np.diff(integ, axis=0)
    return d / (width if d.ndim == 1 else width[:, None])


def _time_mean(times: I64, values: F64, start: int, end: int) -> float:
    """Time mean over [start, end] of a step function whose value becomes
    values[i] at times[i] (sorted), 0 before the first."""
    if end <= start or times.size == 0:
        return 0.0
    t = np.clip(times, start, end).astype(np.float64)
    nxt = np.append(t[1:], float(end))
    return float(np.sum(values * (nxt - t)) / (end - start))


def compute(result: SimResult, bins: int = 336) -> Metrics:
    log = result.log
    cq_names = result.topology_cq_names
    n_cq = len(cq_names)
    n_fr = len(result.fr_pairs)
    # times relative to the start, in int64 ns: float64 cannot hold epoch
    # nanoseconds exactly (its resolution there is 256 ns)
    t0 = result.start_ns
    adm_t, rel_t, arrival = log.adm_t - t0, log.rel_t - t0, log.arrival_ns - t0
    start, end = 0, max(0, result.end_ns - t0)
    edges_ns = np.linspace(0.0, float(max(end, int(NS))), bins + 1)  # at least one second
    res_of_fr = np.array([r for _, r in result.fr_pairs], dtype=np.int64)
    flav_of_fr = np.array([f for f, _ in result.fr_pairs], dtype=np.int64)

    # 1. quota events: + at admission, - when the admission ends
    rel_usage = log.adm_usage[log.rel_adm] if log.rel_adm.size else np.zeros((0, n_fr), np.int64)
    ev_t = np.concatenate([adm_t, rel_t])
    ev_cq = np.concatenate([log.adm_cq, log.adm_cq[log.rel_adm] if log.rel_adm.size else log.rel_adm])
    ev_d = np.concatenate([log.adm_usage, -rel_usage]).astype(np.float64)
    in_window = ev_t <= end
    ev_t, ev_cq, ev_d = ev_t[in_window], ev_cq[in_window], ev_d[in_window]
    # admissions to no ClusterQueue (manifest workloads of a missing one) hold nothing
    valid = ev_cq >= 0
    ev_t, ev_cq, ev_d = ev_t[valid], ev_cq[valid], ev_d[valid]

    # 2. cluster-wide utilization per flavor-resource
    capacity = result.nominal.sum(axis=0).astype(np.float64)
    used = _bin_means(ev_t, ev_d, edges_ns)  # (bins, n_fr)
    series = Series(edges_s=edges_ns / NS)
    for fr in range(n_fr):
        if capacity[fr] <= 0:
            continue
        r = result.resource_names[res_of_fr[fr]]
        f = result.flavor_names[flav_of_fr[fr]]
        series.utilization.setdefault(r, {})[f] = used[:, fr] / capacity[fr]

    # 3. per ClusterQueue: usage step functions, borrowing, utilization
    order = np.lexsort((ev_t, ev_cq))
    ev_t, ev_cq, ev_d = ev_t[order], ev_cq[order], ev_d[order]
    bounds = np.searchsorted(ev_cq, np.arange(n_cq + 1))
    n_res = len(result.resource_names)
    onehot = np.zeros((n_fr, n_res))
    onehot[np.arange(n_fr), res_of_fr] = 1.0
    usage_bins = np.zeros((n_cq, bins, n_fr))
    util = np.zeros(n_cq)
    borrowing = np.zeros(n_cq)
    for c in range(n_cq):
        lo, hi = bounds[c], bounds[c + 1]
        if lo == hi:
            continue
        t = ev_t[lo:hi]
        levels = np.cumsum(ev_d[lo:hi], axis=0)
        usage_bins[c] = np.diff(_integrals(t, levels, edges_ns), axis=0) / np.diff(edges_ns)[:, None]
        nominal = result.nominal[c].astype(np.float64)
        over = (levels > nominal[None, :] + 0.5).any(axis=1).astype(np.float64)
        borrowing[c] = _time_mean(t, over, start, end) * (end - start) / NS
        per_res = levels @ onehot
        nom_res = nominal @ onehot
        has = nom_res > 0
        if has.any():
            dominant = (per_res[:, has] / nom_res[has]).max(axis=1)
            util[c] = _time_mean(t, dominant, start, end)

    # 4. borrowed and lent per resource (on bin means): lending is shared out
    # among the cohort's ClusterQueues in proportion to their unused nominal quota
    nominal_f = result.nominal.astype(np.float64)
    borrowed_fr = np.clip(usage_bins - nominal_f[:, None, :], 0, None)
    unused_fr = np.clip(nominal_f[:, None, :] - usage_bins, 0, None)
    lent_fr = np.zeros_like(borrowed_fr)
    cohorts = sorted(set(result.cq_cohort) - {""})
    for co in cohorts:
        members = np.array([i for i, x in enumerate(result.cq_cohort) if x == co])
        b = borrowed_fr[members].sum(axis=0)
        u = unused_fr[members]
        total_u = u.sum(axis=0)
        share = np.divide(u, total_u[None], out=np.zeros_like(u), where=total_u[None] > 0)
        lent_fr[members] = share * b[None]
    for r_i, r in enumerate(result.resource_names):
        frs = np.flatnonzero((res_of_fr == r_i) & (capacity > 0))
        if frs.size == 0:
            continue
        div, _ = display_unit(r)
        b_map, l_map = {}, {}
        for c, name in enumerate(cq_names):
            b = borrowed_fr[c][:, frs].sum(axis=1) / div
            lt = lent_fr[c][:, frs].sum(axis=1) / div
            if b.any() or lt.any():
                b_map[name], l_map[name] = b, lt
        series.borrowed[r], series.lent[r] = b_map, l_map

    # 5. pending workloads per ClusterQueue: +1 on arrival and on eviction, -1 on admission
    q = log.queue_cq
    pre = log.rel_kind == PREEMPTED
    pre_w = log.adm_wid[log.rel_adm[pre]] if pre.any() else np.zeros(0, np.int64)
    p_t = np.concatenate([arrival, adm_t, rel_t[pre]])
    p_w = np.concatenate([np.arange(q.size), log.adm_wid, pre_w])
    p_d = np.concatenate([np.ones(q.size), -np.ones(adm_t.size), np.ones(pre_w.size)])
    keep = (p_t <= end) & (q[p_w] >= 0)
    p_t, p_w, p_d = p_t[keep], p_w[keep], p_d[keep]
    pend_cq = q[p_w]
    pending_now = np.bincount(pend_cq, weights=p_d, minlength=n_cq)
    for c, name in enumerate(cq_names):
        sel = pend_cq == c
        if sel.any():
            series.pending[name] = _bin_means(p_t[sel], p_d[sel], edges_ns)

    # 6. preemptions per bin by reason
    if pre.any():
        for code, reason in enumerate(EVICTION_REASONS):
            sel = pre & (log.rel_reason == code)
            if sel.any():
                series.preemptions[reason] = np.histogram(rel_t[sel], bins=edges_ns)[0].astype(np.float64)

    # 7. per ClusterQueue counts and waits
    adm_in = adm_t <= end
    rel_in = rel_t <= end
    admitted_once = np.zeros(q.size, dtype=bool)
    admitted_once[log.adm_wid[adm_in]] = True
    n_adm = np.bincount(log.adm_wid[adm_in], minlength=q.size)
    n_rel = np.bincount(log.adm_wid[log.rel_adm[rel_in]], minlength=q.size) if rel_in.any() else 0 * n_adm
    fin = np.zeros(q.size, dtype=bool)
    fin_sel = rel_in & (log.rel_kind == FINISHED)
    fin[log.adm_wid[log.rel_adm[fin_sel]]] = True
    running = (n_adm > n_rel) & ~fin
    arrived = arrival <= end
    victim_cq = log.adm_cq[log.rel_adm[pre & rel_in]] if pre.any() else np.zeros(0, np.int64)
    pre_adm = log.rel_adm[pre & rel_in]
    lost = (rel_t[pre & rel_in] - adm_t[pre_adm]) / NS if pre.any() else np.zeros(0)
    waits: dict[str, F64] = {}
    queues: list[QueueStats] = []
    for c, name in enumerate(cq_names):
        mine = (q == c) & arrived
        w = log.adm_wait_ns[adm_in & (log.adm_cq == c)] / NS
        waits[name] = w
        p50, p95, p99 = np.percentile(w, [50, 95, 99]) if w.size else (0.0, 0.0, 0.0)
        queues.append(
            QueueStats(
                name=name,
                cohort=result.cq_cohort[c],
                workloads=int(mine.sum()),
                admitted=int((admitted_once & mine).sum()),
                pending=int(round(pending_now[c])),
                running=int((running & mine).sum()),
                finished=int((fin & mine).sum()),
                preemptions=int((victim_cq == c).sum()),
                wait_p50_s=float(p50),
                wait_p95_s=float(p95),
                wait_p99_s=float(p99),
                wait_mean_s=float(w.mean()) if w.size else 0.0,
                utilization=float(util[c]),
                borrowing_s=float(borrowing[c]),
                lost_work_s=float(lost[victim_cq == c].sum()) if lost.size else 0.0,
            )
        )
    totals = {
        "workloads": int(arrived.sum()),
        "admissions": int(adm_in.sum()),
        "admitted": int((admitted_once & arrived).sum()),
        "pending": int(sum(s.pending for s in queues)),
        "running": int(running.sum()),
        "finished": int(fin.sum()),
        "preemptions": int((pre & rel_in).sum()),
        "lost_work_s": float(lost.sum()) if lost.size else 0.0,
        "simulated_s": (end - start) / NS,
        "unqueued": int(((q < 0) & arrived).sum()),
    }
    return Metrics(queues=queues, series=series, waits_s=waits, totals=totals)
