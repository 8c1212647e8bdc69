"""Metrics of a simulation, from what the loop kept: the per-workload
records and the binned series (see event_loop.py and series.py).

Usage over time is a step function per ClusterQueue and flavor-resource; its
time means (utilization, time spent borrowing) are exact integrals, the
plotted series its means over equal time bins.

Waits are per workload: the time it spent in its queue, from its arrival to
its admission plus, after each eviction, from its return to the queue to its
next admission. A workload still pending at the end counts with the time it
has waited so far (a lower bound: it is *censored*). Percentiles are taken by
nearest rank over every workload of the ClusterQueue, censored ones
included; a percentile that falls on a censored wait is itself a lower bound
(``*_censored``, shown as ``>`` in the table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .engine_view import EVICTION_REASONS
from .result import DEACTIVATED, EVICTING, FINISHED, PENDING, REJECTED, RESERVED, RUNNING, SimResult
from .series import StepSeries

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
NS = 1e9
PERCENTILES = (50, 95, 99)


@dataclass
class QueueStats:
    """One ClusterQueue's figures. Its workloads end in exactly one state:
    workloads = pending + reserved + running + evicting + finished + rejected
    + deactivated (STATE_COUNTS); ``admitted`` counts those admitted at
    least once, whatever their state at the end."""

    name: str
    cohort: str
    workloads: int  # arrived in its queue
    admitted: int  # admitted at least once: quota reserved and every admission check Ready
    pending: int  # still pending at the end
    running: int  # admitted and running at the end
    evicting: int  # evicted, their job still stopping at the end
    finished: int
    preemptions: int  # evictions of its workloads by preemption
    wait_p50_s: float
    wait_p95_s: float
    wait_p99_s: float
    wait_p50_censored: bool  # the percentile is a lower bound
    wait_p95_censored: bool
    wait_p99_censored: bool
    wait_mean_s: float  # a lower bound when censored > 0
    censored: int  # workloads still waiting at the end
    # time-mean usage of its dominant resource over its capacity (capacity.py: nominal quota plus an
    # equal share of cohort-owned quota; > 1 when it borrows beyond that), or, without any capacity,
    # over its reach: the most its cohorts could lend it (lending.py)
    utilization: float
    borrowing_s: float  # time during which it used more than its nominal quota somewhere
    lost_work_s: float  # run time thrown away by preemption
    reserved: int = 0  # quota reserved at the end, waiting for admission checks
    rejected: int = 0  # deactivated by a Rejected admission check: never ran
    deactivated: int = 0  # deactivated by waitForPodsReady's backoffLimitCount
    check_retries: int = 0  # evictions by an admission check in Retry
    pods_ready_timeouts: int = 0  # evictions by waitForPodsReady's timeout (not preemptions)
    utilization_of: str = "capacity"  # what utilization divides by: "capacity", or "reach"
    active: bool = True  # False: Kueue admits nothing in it (inactive_reason, inactive_message say why)
    inactive_reason: str = ""
    inactive_message: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


# The states a ClusterQueue's workloads end in (records.STATE_NAMES): they add up to its workloads.
STATE_COUNTS = ("pending", "reserved", "running", "evicting", "finished", "rejected", "deactivated")


@dataclass
class Series:
    """Bin means over [start, end]: ``edges_s`` are seconds since the start;
    every bin is ``bin_s`` wide but the last, cut at the end."""

    edges_s: F64
    bin_s: float
    # resource -> flavor -> fraction of the flavor's capacity in use (capacity.py)
    utilization: dict[str, dict[str, F64]] = field(default_factory=dict)
    # resource -> flavor -> of that, the fraction evicted workloads hold while their pods stop
    utilization_stopping: dict[str, dict[str, F64]] = field(default_factory=dict)
    pending: dict[str, F64] = field(default_factory=dict)  # ClusterQueue -> pending workloads
    # resource -> ClusterQueue -> amount borrowed and lent, in display units (capacity.py: who lends)
    borrowed: dict[str, dict[str, F64]] = field(default_factory=dict)
    lent: dict[str, dict[str, F64]] = field(default_factory=dict)
    # resource -> cohort -> what its subtree takes from its parent, and what others use of its own quota
    cohort_borrowed: dict[str, dict[str, F64]] = field(default_factory=dict)
    cohort_lent: dict[str, dict[str, F64]] = field(default_factory=dict)
    # resource -> use above the quota of the whole tree (victims still stopping), in display units
    over_quota: dict[str, F64] = field(default_factory=dict)
    preemptions: dict[str, F64] = field(default_factory=dict)  # reason -> count per bin


@dataclass
class Metrics:
    queues: list[QueueStats]
    series: Series
    waits_s: dict[str, F64]  # ClusterQueue -> wait of each of its workloads
    waits_censored: dict[str, npt.NDArray[np.bool_]]  # ClusterQueue -> censored flags of those waits
    totals: dict[str, Any]
    churn: Churn


def display_unit(resource: str) -> tuple[float, str]:
    """Divisor and unit to show amounts of a resource in."""
    if resource == "cpu":
        return 1000.0, "cores"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return float(1 << 30), "GiB"
    return 1.0, ""


def fmt_duration(s: float) -> str:
    if s < 1:
        return "0s" if s <= 0 else f"{s:.2f}s"
    if s < 60:
        return f"{s:.0f}s"
    if s < 3600:
        return f"{s / 60:.1f}m"
    if s < 86400:
        return f"{s / 3600:.1f}h"
    return f"{s / 86400:.1f}d"


def fmt_bin(s: float) -> str:
    """A bin width in words: 30-min, 1-h, 2-day..."""
    if s < 60:
        return f"{s:g}-s"
    if s < 3600:
        return f"{s / 60:g}-min"
    if s < 86400:
        return f"{s / 3600:g}-h"
    return f"{s / 86400:g}-day"


def censored_percentiles(
    waits: F64, censored: npt.NDArray[np.bool_], qs: tuple[int, ...] = PERCENTILES
) -> list[tuple[float, bool]]:
    """(value, is a lower bound) per percentile, by nearest rank; among equal
    waits the exact ones rank first."""
    if waits.size == 0:
        return [(0.0, False) for _ in qs]
    order = np.lexsort((censored, waits))
    out = []
    for q in qs:
        k = max(0, int(np.ceil(q / 100.0 * waits.size)) - 1)
        out.append((float(waits[order[k]]), bool(censored[order[k]])))
    return out


def compute(result: SimResult) -> Metrics:
    tl = result.timeline
    edges_ns = tl.bins.edges(result.end_ns)
    usage_bins = _bin_means(result, tl.usage)  # (n_cq, bins, n_fr)
    capacity = result.tree.capacity.astype(np.float64)
    series = Series(edges_s=edges_ns / NS, bin_s=tl.bins.width_ns / NS)
    _utilization_series(result, usage_bins, capacity, series)
    _borrowed_and_lent_series(result, usage_bins, capacity, series)
    _pending_and_preemption_series(result, edges_ns, series)
    queues, waits, waits_c = _queue_stats(result)
    return Metrics(
        queues=queues,
        series=series,
        waits_s=waits,
        waits_censored=waits_c,
        totals=_totals(result, queues),
        churn=find_churn(result),
    )


def _utilization_series(result: SimResult, usage_bins: F64, capacity: F64, series: Series) -> None:
    """Cluster-wide utilization per flavor-resource: of the flavor's capacity,
    the nominal quota of the whole tree (ClusterQueues' and Cohorts'); and the
    part of it evicted workloads hold while their pods stop."""
    used = usage_bins.sum(axis=0)
    stopping = _bin_means(result, result.timeline.stopping).sum(axis=0)
    for fr, (f_i, r_i) in enumerate(result.fr_pairs):
        if capacity[fr] <= 0:
            continue
        r = result.resource_names[r_i]
        f = result.flavor_names[f_i]
        series.utilization.setdefault(r, {})[f] = used[:, fr] / capacity[fr]
        if stopping[:, fr].any():
            series.utilization_stopping.setdefault(r, {})[f] = stopping[:, fr] / capacity[fr]


def _bin_means(result: SimResult, steps: StepSeries) -> F64:
    """(keys, bins, flavor-resources): a step series' mean level per bin."""
    edges_ns = result.timeline.bins.edges(result.end_ns)
    nb = edges_ns.size - 1
    out: F64 = steps.integral[:, :nb, :] / np.diff(edges_ns)[None, :, None]
    return out


def over_quota_peaks(result: SimResult) -> list[dict[str, Any]]:
    """Per quota tree and flavor-resource, the most it held above the tree's
    nominal quota at the end of an instant (in display units), where it did:
    Kueue's scheduler checks a later workload of a cycle with the preemption
    targets of that cycle removed (scheduler.go fits()), so it reserves
    quota that victims still hold until their pods are gone."""
    tree = result.tree
    roots = sorted(set(tree.cluster_queue_roots().tolist()))
    out = []
    for k, root in enumerate(roots):
        for fr in np.flatnonzero(result.timeline.trees.peak_over[k] > 0).tolist():
            f_i, r_i = result.fr_pairs[fr]
            r = result.resource_names[r_i]
            div, _ = display_unit(r)
            out.append(
                {
                    "tree": tree.names[root],
                    "cohort": root >= tree.n_cq,
                    "flavor": result.flavor_names[f_i],
                    "resource": r,
                    "amount": float(result.timeline.trees.peak_over[k, fr] / div),
                }
            )
    return out


def _borrowed_and_lent_series(result: SimResult, usage_bins: F64, capacity: F64, series: Series) -> None:
    """Borrowed and lent per resource, ClusterQueue and cohort, summed over
    the flavors: lending.LendingTree.attribute on each bin's mean usage (not
    the mean of the attribution at every instant: within a bin that goes
    above and below nominal quota, the borrowing is a lower bound)."""
    res_of_fr = np.array([r for _, r in result.fr_pairs], dtype=np.int64)
    att = result.tree.attribute(usage_bins)
    n_cq = result.tree.n_cq
    for r_i, r in enumerate(result.resource_names):
        frs = np.flatnonzero((res_of_fr == r_i) & (capacity > 0))
        if frs.size == 0:
            continue
        div, _ = display_unit(r)
        maps: list[dict[str, F64]] = [
            {},
            {},
            {},
            {},
        ]  # ClusterQueues' borrowed, lent; cohorts' borrowed, lent
        for node, name in enumerate(result.tree.names):
            b = att.borrowed[node][:, frs].sum(axis=1) / div
            lt = att.lent[node][:, frs].sum(axis=1) / div
            if b.any() or lt.any():
                k = 0 if node < n_cq else 2
                maps[k][name], maps[k + 1][name] = b, lt
        series.borrowed[r], series.lent[r], series.cohort_borrowed[r], series.cohort_lent[r] = maps
        over = att.over[:, frs].sum(axis=1) / div
        if over.any():
            series.over_quota[r] = over


def _pending_and_preemption_series(result: SimResult, edges_ns: F64, series: Series) -> None:
    """Pending workloads per ClusterQueue, preemptions per reason."""
    tl = result.timeline
    pending_bins = tl.pending.means(edges_ns)
    for c, name in enumerate(result.topology_cq_names):
        if tl.pending.steps[c].any():
            series.pending[name] = pending_bins[c]
    for code, reason in enumerate(EVICTION_REASONS):
        counts = tl.preemptions.counts[code, : edges_ns.size - 1]
        if counts.any():
            series.preemptions[reason] = counts.copy()


def _queue_stats(
    result: SimResult,
) -> tuple[list[QueueStats], dict[str, F64], dict[str, npt.NDArray[np.bool_]]]:
    """Per ClusterQueue: counts, waits (and their censored flags) and the
    exact time means of the dominant share and of borrowing."""
    wl = result.workloads
    usage = result.timeline.usage
    span = max(0, result.end_ns - result.start_ns)
    util = usage.totals[:, 0] / span if span else np.zeros(len(result.topology_cq_names))
    borrowing_s = usage.totals[:, 1] / NS
    q = wl.queue_cq
    arrived = wl.arrival_ns <= result.end_ns
    st = wl.state
    n_cq = len(result.topology_cq_names)
    _, by_reach = result.tree.utilization_basis()
    timeouts = _per_cq(q, arrived, wl.pods_ready_timeouts, n_cq)
    retries = _per_cq(q, arrived, wl.check_retries, n_cq)
    waits: dict[str, F64] = {}
    waits_c: dict[str, npt.NDArray[np.bool_]] = {}
    queues: list[QueueStats] = []
    for c, name in enumerate(result.topology_cq_names):
        mine = (q == c) & arrived
        w = wl.wait_ns[mine] / NS
        cen = wl.censored[mine]
        waits[name], waits_c[name] = w, cen
        (p50, c50), (p95, c95), (p99, c99) = censored_percentiles(w, cen)
        queues.append(
            QueueStats(
                name=name,
                cohort=result.cq_cohort[c],
                workloads=int(mine.sum()),
                admitted=int((mine & wl.ever_admitted).sum()),
                pending=int((mine & (st == PENDING)).sum()),
                running=int((mine & (st == RUNNING)).sum()),
                evicting=int((mine & (st == EVICTING)).sum()),
                finished=int((mine & (st == FINISHED)).sum()),
                preemptions=int(result.preemptions_per_cq[c]),
                wait_p50_s=p50,
                wait_p95_s=p95,
                wait_p99_s=p99,
                wait_p50_censored=c50,
                wait_p95_censored=c95,
                wait_p99_censored=c99,
                wait_mean_s=float(w.mean()) if w.size else 0.0,
                censored=int(cen.sum()),
                utilization=float(util[c]),
                borrowing_s=float(borrowing_s[c]),
                lost_work_s=float(result.lost_ns_per_cq[c]),
                reserved=int((mine & (st == RESERVED)).sum()),
                rejected=int((mine & (st == REJECTED)).sum()),
                deactivated=int((mine & (st == DEACTIVATED)).sum()),
                check_retries=int(retries[c]),
                pods_ready_timeouts=int(timeouts[c]),
                utilization_of="reach" if by_reach[c] else "capacity",
                active=not result.inactive[c][0],
                inactive_reason=result.inactive[c][0],
                inactive_message=result.inactive[c][1],
            )
        )
    return queues, waits, waits_c


def _per_cq(q: I64, arrived: npt.NDArray[np.bool_], counts: I64 | None, n_cq: int) -> I64:
    """Per ClusterQueue, the sum of a per-workload count over its arrived workloads."""
    out = np.zeros(n_cq, dtype=np.int64)
    if counts is None or not counts.size:
        return out
    mine = arrived & (q >= 0)
    np.add.at(out, q[mine], counts[mine])
    return out


def _totals(result: SimResult, queues: list[QueueStats]) -> dict[str, Any]:
    """The run's totals (the summary's last line, metrics.json's ``totals``):
    the per-ClusterQueue counts summed, and the run's own figures."""
    wl = result.workloads
    q = wl.queue_cq
    arrived = wl.arrival_ns <= result.end_ns
    summed = {k: int(sum(getattr(s, k) for s in queues)) for k in ("admitted", *STATE_COUNTS)}
    peak: dict[str, dict[str, float]] = {}
    for x in over_quota_peaks(result):
        at = peak.setdefault(x["resource"], {})
        at[x["flavor"]] = max(at.get(x["flavor"], 0.0), x["amount"])
    return {
        "workloads": int(arrived.sum()),
        "admissions": int(wl.admissions.sum()),  # quota reservations, repeats included
        **summed,
        "preemptions": int(sum(s.preemptions for s in queues)),
        # waitForPodsReady: evictions by the PodsReady timeout, workloads deactivated
        "pods_ready_timeouts": int(sum(s.pods_ready_timeouts for s in queues)),
        # admission checks: evictions by a Retry, workloads rejected, time spent reserved
        "check_retries": int(sum(s.check_retries for s in queues)),
        "check_wait_s": float(wl.check_wait_ns.sum() / NS) if wl.check_wait_ns is not None else 0.0,
        "lost_work_s": float(wl.lost_ns.sum() / NS),
        "simulated_s": max(0, result.end_ns - result.start_ns) / NS,
        "unqueued": int(((q < 0) & arrived).sum()),
        "censored_waits": int(wl.censored.sum()),
        # resource -> flavor -> the most one quota tree held above its quota (over_quota_peaks)
        "peak_over_quota": peak,
    }


# --- preemption churn --------------------------------------------------------------------------------

# A workload evicted this many times or more churns.
CHURN_MIN_EVICTIONS = 10
TOP = 10


def workload_key(result: SimResult, w: int) -> str:
    """namespace/name of workload id w."""
    if w < result.n_manifest:
        ns, name, _, _ = result.manifest[w]
        return f"{ns}/{name}"
    k = w - result.n_manifest
    tr = result.trace
    return f"{tr.namespaces[int(tr.namespace[k])]}/{tr.name_of(k)}"


def policy_text(result: SimResult, preemptor_cq: int, victim_cq: int, reason: str) -> str:
    """Which setting of the preemptor's ClusterQueue lets it evict the victim
    (Kueue pkg/scheduler/preemption/classical/hierarchical_preemption.go,
    classifyPreemptionVariant; fair sharing: pkg/scheduler/preemption/preemption.go)."""
    if preemptor_cq < 0:
        return "evicted by a workload of no ClusterQueue"
    names = result.topology_cq_names
    p = result.state.cluster_queues[names[preemptor_cq]]
    v = names[victim_cq] if victim_cq >= 0 else "?"
    pre = p.preemption
    if reason == "InClusterQueue":
        return f"{p.name} withinClusterQueue: {pre.within_cluster_queue} (victim in the same ClusterQueue)"
    if reason == "InCohortReclamation":
        return (
            f"{p.name} reclaimWithinCohort: {pre.reclaim_within_cohort} "
            f"({v} was using more than its nominal quota"
            + (", whatever its priority)" if pre.reclaim_within_cohort == "Any" else ")")
        )
    if reason == "InCohortReclaimWhileBorrowing":
        thr = pre.max_priority_threshold
        return (
            f"{p.name} borrowWithinCohort: {pre.borrow_within_cohort_policy}"
            + (f" (maxPriorityThreshold {thr})" if thr is not None else "")
            + f" with reclaimWithinCohort: {pre.reclaim_within_cohort} "
            f"(the preemptor borrows too; {v} was using more than its nominal quota)"
        )
    if reason == "InCohortFairSharing":
        fs = result.state.configuration.fair_sharing
        strategies = ", ".join(fs.preemption_strategies) if fs is not None else ""
        return f"fair sharing ({strategies}): {v} had a larger share of the cohort than {p.name}"
    return "evicted for another reason"


@dataclass
class Churn:
    """Preemptions that repeat: who preempts whom, under which policy, and
    the instants that did not settle (see loop.Churn)."""

    threshold: int  # evictions of one workload from which it counts as churning
    churning: int  # workloads evicted at least threshold times
    workloads: list[dict[str, Any]]  # the workloads evicted most
    preemptors: list[dict[str, Any]]  # the workloads that evicted most
    pairs: list[dict[str, Any]]  # (preemptor ClusterQueue, victim ClusterQueue, reason) with its policy
    cluster_queues: list[str]
    cohorts: list[str]
    unsettled: int
    unsettled_instants: list[dict[str, Any]]

    def __bool__(self) -> bool:
        return bool(self.churning or self.unsettled)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def find_churn(result: SimResult, threshold: int = CHURN_MIN_EVICTIONS) -> Churn:
    wl = result.workloads
    names = result.topology_cq_names
    churning = np.flatnonzero(wl.evictions >= threshold)
    by = np.flatnonzero(wl.preempting >= threshold)
    # the pairs behind the churning workloads' evictions: every pair with a churning victim queue
    involved = {int(wl.queue_cq[w]) for w in churning} | {int(wl.queue_cq[w]) for w in by}
    pairs = _pair_rows(
        result,
        {k: c for k, c in result.churn.pairs.items() if k[1] in involved or k[0] in involved}
        if churning.size
        else {},
    )
    instants = _unsettled_instants(result)
    every_pair = pairs + [row for i in instants for row in i["pairs"]]
    cqs = sorted(
        {str(row[k]) for row in every_pair for k in ("preemptor_cluster_queue", "victim_cluster_queue")}
        - {""}
    )
    cohorts = sorted({result.cq_cohort[names.index(c)] for c in cqs} - {""})
    return Churn(
        threshold=threshold,
        churning=int(churning.size),
        workloads=_top_victims(result, churning),
        preemptors=_top_preemptors(result, by),
        pairs=pairs,
        cluster_queues=cqs,
        cohorts=cohorts,
        unsettled=result.unsettled,
        unsettled_instants=instants,
    )


def _cq_name(result: SimResult, c: int) -> str:
    return result.topology_cq_names[c] if c >= 0 else ""


def _pair_rows(result: SimResult, pairs: dict[tuple[int, int, int], int]) -> list[dict[str, Any]]:
    """(preemptor ClusterQueue, victim ClusterQueue, reason) -> evictions, as
    rows with the policy that allows them, the most evictions first."""
    rows = []
    for (p, v, r), count in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])):
        reason = EVICTION_REASONS[r]
        rows.append(
            {
                "preemptor_cluster_queue": _cq_name(result, p),
                "victim_cluster_queue": _cq_name(result, v),
                "reason": reason,
                "evictions": count,
                "policy": policy_text(result, p, v, reason),
            }
        )
    return rows


def _top_victims(result: SimResult, churning: I64) -> list[dict[str, Any]]:
    """The TOP churning workloads evicted most."""
    wl = result.workloads
    top_victims = churning[np.argsort(-wl.evictions[churning], kind="stable")][:TOP]
    return [
        {
            "workload": workload_key(result, int(w)),
            "cluster_queue": _cq_name(result, int(wl.queue_cq[w])),
            "evictions": int(wl.evictions[w]),
            "admissions": int(wl.admissions[w]),
            "last_preempted_by": workload_key(result, int(wl.preempted_by[w]))
            if wl.preempted_by[w] >= 0
            else "",
        }
        for w in top_victims
    ]


def _top_preemptors(result: SimResult, by: I64) -> list[dict[str, Any]]:
    """The TOP workloads among ``by`` that evicted most."""
    wl = result.workloads
    top_by = by[np.argsort(-wl.preempting[by], kind="stable")][:TOP]
    return [
        {
            "workload": workload_key(result, int(w)),
            "cluster_queue": _cq_name(result, int(wl.queue_cq[w])),
            "evictions_caused": int(wl.preempting[w]),
        }
        for w in top_by
    ]


def _unsettled_instants(result: SimResult) -> list[dict[str, Any]]:
    """The instants the scheduler did not settle at within the cycle limit."""
    return [
        {
            "time_s": (u.t_ns - result.start_ns) / NS,
            "cycles": u.cycles,
            "admissions": u.admissions,
            "preemptions": u.preemptions,
            "pairs": _pair_rows(result, u.pairs),
            "victims": [{"workload": workload_key(result, w), "evictions": c} for w, c in u.victims],
            "preemptors": [
                {"workload": workload_key(result, w), "evictions_caused": c} for w, c in u.preemptors
            ],
        }
        for u in result.churn.unsettled
    ]
