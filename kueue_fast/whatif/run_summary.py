"""What one simulation of a what-if returns: compact and picklable.

A :class:`RunSummary` holds the simulator's own :class:`Metrics` (per
ClusterQueue figures, the binned series and the waits the plots need; about
1 MB for 100k workloads) and a few cluster-wide figures, never the
per-workload records of the run. Metrics are named ``METRIC`` (cluster-wide)
or ``METRIC:CLUSTERQUEUE``; each knows whether smaller is better.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..simulate.metrics import Metrics, censored_percentiles, fmt_duration
from ..simulate.result import SimResult

NS = 1_000_000_000


@dataclass
class RunSummary:
    index: int
    label: str
    metrics: Metrics
    overall: dict[str, Any]  # cluster-wide figures (see cluster_figures)
    engine: str
    cycles: int
    unsettled: int
    wall_s: float = 0.0  # in the worker: simulation and metrics
    cpu_s: float = 0.0  # the worker process's CPU time for it (wall_s above it: the machine was busy)
    where: str = ""  # which process or Dask worker ran it
    warnings: list[str] = field(default_factory=list)

    def deterministic(self) -> dict[str, Any]:
        """Everything that must not depend on where or when it ran (equal
        between serial, pool and Dask runs), as JSON data."""
        m = self.metrics
        s = m.series
        return {
            "label": self.label,
            "engine": self.engine,
            "cycles": self.cycles,
            "unsettled": self.unsettled,
            "overall": self.overall,
            "totals": m.totals,
            "cluster_queues": [q.to_json() for q in m.queues],
            "churn": m.churn.to_json(),
            "series": {
                "edges_s": s.edges_s.tolist(),
                "utilization": {r: {f: v.tolist() for f, v in d.items()} for r, d in s.utilization.items()},
                "pending": {k: v.tolist() for k, v in s.pending.items()},
                "borrowed": {r: {k: v.tolist() for k, v in d.items()} for r, d in s.borrowed.items()},
                "preemptions": {k: v.tolist() for k, v in s.preemptions.items()},
            },
            "waits_s": {k: v.tolist() for k, v in m.waits_s.items()},
            "waits_censored": {k: v.tolist() for k, v in m.waits_censored.items()},
        }


def cluster_figures(result: SimResult, metrics: Metrics, dominant: str) -> dict[str, Any]:
    """Cluster-wide figures: waits over every workload, utilization per
    resource (time-mean usage over the capacity, the nominal quota of the
    whole tree: capacity.py) and of the
    trace's dominant resource, counts from the totals."""
    waits = [w for w in metrics.waits_s.values() if w.size]
    cens = [c for c in metrics.waits_censored.values() if c.size]
    all_w = np.concatenate(waits) if waits else np.zeros(0)
    all_c = np.concatenate(cens) if cens else np.zeros(0, dtype=bool)
    (p50, c50), (p95, c95), (p99, c99) = censored_percentiles(all_w, all_c)
    span = max(1, result.end_ns - result.start_ns)
    integral = result.timeline.usage.integral.sum(axis=(0, 1))  # per flavor-resource, level x ns
    capacity = result.tree.capacity.astype(np.float64)
    util: dict[str, float] = {}
    for r_i, r in enumerate(result.resource_names):
        frs = [k for k, (_, res) in enumerate(result.fr_pairs) if res == r_i]
        cap = float(capacity[frs].sum()) if frs else 0.0
        if cap > 0:
            util[r] = float(integral[frs].sum()) / (cap * span)
    t = metrics.totals
    return {
        "admitted": t["admitted"],
        "pending": t["pending"],
        "preemptions": t["preemptions"],
        **{k: t[k] for k in EVICTION_COUNTS},
        "wait_p50_s": p50,
        "wait_p95_s": p95,
        "wait_p99_s": p99,
        "wait_p50_censored": c50,
        "wait_p95_censored": c95,
        "wait_p99_censored": c99,
        "wait_mean_s": float(all_w.mean()) if all_w.size else 0.0,
        "lost_work_s": t["lost_work_s"],
        "dominant_resource": dominant,
        "utilization": util.get(dominant, 0.0),
        "utilization_by_resource": util,
    }


# --- metrics by name -----------------------------------------------------------------------------------

# name -> (what it is, smaller is better, kind: count|duration|share)
METRICS: dict[str, tuple[str, bool, str]] = {
    "admitted": ("workloads admitted at least once", False, "count"),
    "pending": ("workloads still pending at the end", True, "count"),
    "preemptions": ("evictions by preemption", True, "count"),
    "rejected": ("workloads a Rejected admission check deactivated (never ran)", True, "count"),
    "check_retries": ("evictions by an admission check in Retry", True, "count"),
    "pods_ready_timeouts": ("evictions by waitForPodsReady's timeout", True, "count"),
    "deactivated": ("workloads deactivated past waitForPodsReady's backoffLimitCount", True, "count"),
    "wait_p50": ("median wait", True, "duration"),
    "wait_p95": ("95th percentile wait", True, "duration"),
    "wait_p99": ("99th percentile wait", True, "duration"),
    "wait_mean": ("mean wait", True, "duration"),
    "utilization": ("time-mean use over capacity (dominant resource)", False, "share"),
    "borrowing": ("share of the time spent above nominal quota", False, "share"),
    "lost_work": ("run time thrown away by preemption", True, "duration"),
}
# admission checks' and waitForPodsReady's counts: rows of the compare table when
# some configuration has them
EVICTION_COUNTS = ("rejected", "check_retries", "pods_ready_timeouts", "deactivated")
# columns of the compare table, in order, with their titles
COMPARE_METRICS = (
    ("admitted", "admitted"),
    ("pending", "pending"),
    ("preemptions", "preempted"),
    ("rejected", "rejected"),
    ("check_retries", "retries"),
    ("pods_ready_timeouts", "timeouts"),
    ("deactivated", "deactivated"),
    ("wait_p50", "wait p50"),
    ("wait_p95", "wait p95"),
    ("wait_p99", "wait p99"),
    ("utilization", "utilization"),
    ("borrowing", "borrowing"),
)


def split_metric(name: str) -> tuple[str, str]:
    """``wait_p95:team-a`` -> (``wait_p95``, ``team-a``); cluster-wide: ``""``."""
    base, _, cq = name.partition(":")
    return base, cq


def check_metric(name: str, cluster_queues: list[str]) -> str:
    """'' when ``name`` is a metric of these ClusterQueues, else why not."""
    base, cq = split_metric(name)
    if base not in METRICS:
        return f"unknown metric {base!r} (metrics: {', '.join(METRICS)})"
    if cq and cq not in cluster_queues:
        return f"no ClusterQueue {cq!r} (ClusterQueues: {', '.join(cluster_queues)})"
    if not cq and base == "borrowing":
        return "borrowing is per ClusterQueue: borrowing:NAME"
    return ""


def metric_value(run: RunSummary, name: str) -> tuple[float, bool]:
    """(value, is a lower bound) of a metric: counts, seconds, or a share (1 = 100%)."""
    base, cq = split_metric(name)
    if not cq:
        o = run.overall
        if base.startswith("wait_") and base != "wait_mean":
            return float(o[f"{base}_s"]), bool(o[f"{base}_censored"])
        if base in ("wait_mean", "lost_work"):
            return float(o[f"{base}_s"]), False
        return float(o[base]), False
    q = next(q for q in run.metrics.queues if q.name == cq)
    simulated = run.metrics.totals["simulated_s"]
    if base in ("wait_p50", "wait_p95", "wait_p99"):
        return float(getattr(q, f"{base}_s")), bool(getattr(q, f"{base}_censored"))
    if base == "wait_mean":
        return q.wait_mean_s, q.censored > 0
    if base == "utilization":
        return q.utilization, False
    if base == "borrowing":
        return (q.borrowing_s / simulated if simulated > 0 else 0.0), False
    if base == "lost_work":
        return q.lost_work_s, False
    if base == "preemptions":
        return float(q.preemptions), False
    return float(getattr(q, base)), False


def smaller_is_better(name: str) -> bool:
    return METRICS[split_metric(name)[0]][1]


def fmt_metric(name: str, value: float, lower_bound: bool = False) -> str:
    kind = METRICS[split_metric(name)[0]][2]
    if kind == "count":
        text = f"{value:,.0f}"
    elif kind == "duration":
        text = fmt_duration(value)
    else:
        text = f"{value * 100:.0f}%"
    return (">" if lower_bound else "") + text


def fmt_delta(name: str, base: float, value: float) -> str:
    """The change from ``base`` to ``value``: ``+236``, ``-5.4h (-36%)``, ``-11 pts``; '' when none."""
    kind = METRICS[split_metric(name)[0]][2]
    d = value - base
    if kind == "share":
        pts = d * 100
        return "" if round(pts) == 0 else f"{pts:+.0f} pts"
    if kind == "count":
        if round(d) == 0:
            return ""
        text = f"{d:+,.0f}"
    else:
        if fmt_duration(abs(value)) == fmt_duration(abs(base)):
            return ""
        text = ("+" if d > 0 else "-") + fmt_duration(abs(d))
    if base > 0:
        text += f", {d / base * 100:+.0f}%"
    return text
