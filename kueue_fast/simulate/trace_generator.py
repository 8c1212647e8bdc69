"""Synthetic workload traces: queue profiles of job templates, daily arrival
rhythms, heavy-tailed durations, drawn into a Trace (deterministic for a
seed). scenario.py and manifest_trace.py build the profiles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .placement import (
    NO_PLACEMENT,
    Placement,
)
from .trace import F64, I32, I64, Trace

# --- generation -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodSetShape:
    """One pod set of a template: per-pod requests in canonical units."""

    name: str
    count: int
    requests: Mapping[str, int]
    min_count: int = -1  # partial admission (-1: none)
    placement: Placement = NO_PLACEMENT


@dataclass(frozen=True)
class Template:
    """A kind of job a team submits again and again (same shape and priority):
    users submit from a few templates, so workloads of one team fall in few
    scheduling-equivalence classes, as in real clusters."""

    pod_sets: tuple[PodSetShape, ...]
    priority: int
    weight: float  # popularity among the queue's submissions
    median_duration_s: float


@dataclass(frozen=True)
class QueueProfile:
    """How one LocalQueue submits: its share of all arrivals, its daily rhythm,
    its templates and the load it aims at on its ClusterQueue."""

    namespace: str
    queue: str
    share: float
    rhythm: str  # "office" (working hours), "nightly" (cron bursts), "steady"
    templates: tuple[Template, ...]
    sigma: float = 1.3  # spread of log-normal durations: heavy right tail


def arrival_intensity(rhythm: str, minutes: F64) -> F64:
    """Relative arrival rate per minute of the week (minute 0: Monday 00:00)."""
    hour = (minutes / 60.0) % 24.0
    day = (minutes // (24 * 60)) % 7
    weekend = day >= 5
    if rhythm == "office":
        # a working-day bump peaking mid-afternoon, a trickle at night
        bump = np.clip(np.cos((hour - 14.0) / 24.0 * 2 * np.pi), 0.0, None) ** 2
        rate = 0.08 + bump
        return np.where(weekend, 0.25 * rate, rate)
    if rhythm == "nightly":
        # cron: a burst at 01:00-02:00 every day, a low steady background
        burst = np.where((hour >= 1.0) & (hour < 2.0), 12.0, 0.0)
        return 0.3 + burst
    return np.ones_like(minutes)


def generate(
    profiles: Sequence[QueueProfile],
    n: int,
    seed: int = 0,
    days: float = 7.0,
) -> Trace:
    """n workloads over ``days`` days, split between the queues by share, each
    from its queue's templates by popularity, with log-normal (heavy-tailed)
    durations around each template's median. Deterministic for a seed."""
    if n < 0:
        raise ValueError("n must not be negative")
    drawn = _draw_workloads(profiles, n, np.random.default_rng(seed), days)
    order = np.argsort(drawn.arrival, kind="stable")
    tmpl_of, which = drawn.template[order], drawn.profile[order]
    pod_sets = _expand_pod_sets(drawn.templates, tmpl_of)
    rows = pod_sets.rows
    namespaces = sorted({p.namespace for p in profiles})
    queues = sorted({p.queue for p in profiles})
    ns_of = np.array([namespaces.index(p.namespace) for p in profiles], dtype=np.int32)
    q_of = np.array([queues.index(p.queue) for p in profiles], dtype=np.int32)
    prio = np.array([t.priority for _, t in drawn.templates], dtype=np.int64)
    trace = Trace(
        arrival_s=np.round(drawn.arrival[order], 3),
        duration_s=np.round(drawn.duration[order], 3),
        namespace=ns_of[which],
        queue=q_of[which],
        priority=prio[tmpl_of],
        ps_offsets=pod_sets.offsets,
        ps_name=pod_sets.name[rows],
        count=pod_sets.count[rows],
        min_count=pod_sets.min_count[rows],
        requests=pod_sets.requests[rows],
        resources=pod_sets.resources,
        namespaces=namespaces,
        queues=queues,
        pod_set_names=pod_sets.names,
        ps_placement=pod_sets.placement[rows] if len(pod_sets.placements) > 1 else None,
        placements=pod_sets.placements,
        window_s=days * 86400.0,
    )
    trace.validate()
    return trace


@dataclass
class _Drawn:
    """Generated workloads in the order drawn (by queue, not by arrival)."""

    arrival: F64  # seconds since the start
    template: I64  # index into templates
    duration: F64
    profile: I64  # index into the profiles
    templates: list[tuple[int, Template]]  # (profile index, template)


def _draw_workloads(
    profiles: Sequence[QueueProfile], n: int, rng: np.random.Generator, days: float
) -> _Drawn:
    """Each workload's queue by share, then per queue (in this order, for
    the random stream): arrival times, templates and run times."""
    span_min = max(1, int(days * 24 * 60))
    minutes = np.arange(span_min, dtype=np.float64)
    shares = np.array([p.share for p in profiles], dtype=np.float64)
    shares /= shares.sum()
    which = rng.choice(len(profiles), size=n, p=shares)

    arrival = np.empty(n, dtype=np.float64)
    tmpl_of = np.empty(n, dtype=np.int64)
    tmpl_list: list[tuple[int, Template]] = []  # (profile index, template)
    duration = np.empty(n, dtype=np.float64)
    for qi, prof in enumerate(profiles):
        rows = np.flatnonzero(which == qi)
        # 1. arrival times: inverse CDF of the queue's weekly rhythm
        cdf = np.cumsum(arrival_intensity(prof.rhythm, minutes))
        u = rng.random(rows.size) * cdf[-1]
        idx = np.searchsorted(cdf, u)
        arrival[rows] = (idx + rng.random(rows.size)) * 60.0
        # 2. template by popularity
        w = np.array([t.weight for t in prof.templates], dtype=np.float64)
        pick = rng.choice(len(prof.templates), size=rows.size, p=w / w.sum())
        base = len(tmpl_list)
        tmpl_list.extend((qi, t) for t in prof.templates)
        tmpl_of[rows] = base + pick
        # 3. heavy-tailed run times around the template's median
        med = np.array([t.median_duration_s for t in prof.templates], dtype=np.float64)[pick]
        d = med * np.exp(prof.sigma * rng.standard_normal(rows.size))
        duration[rows] = np.clip(d, 10.0, 3 * 86400.0)
    return _Drawn(arrival, tmpl_of, duration, which, tmpl_list)


@dataclass
class _PodSets:
    """The templates' pod sets (name, count, minCount, requests, placement per
    row) and, per workload, which of those rows it has (``rows``, split by
    ``offsets``)."""

    resources: list[str]
    names: list[str]
    name: I32
    count: I32
    min_count: I32
    requests: I64
    placement: I32
    placements: list[Placement]
    offsets: I64
    rows: I64


def _expand_pod_sets(tmpl_list: list[tuple[int, Template]], tmpl_of: I64) -> _PodSets:
    """Pod sets per template, then per workload (template ``tmpl_of[i]``)."""
    resources = sorted({r for _, t in tmpl_list for ps in t.pod_sets for r in ps.requests})
    ps_names: dict[str, int] = {"main": 0}
    pl_ids: dict[Placement, int] = {NO_PLACEMENT: 0}
    t_ps_sizes = np.array([len(t.pod_sets) for _, t in tmpl_list], dtype=np.int64)
    t_ps_start = np.concatenate([[0], np.cumsum(t_ps_sizes)])
    t_ps_name, t_count, t_min, t_req, t_pl = [], [], [], [], []
    for _, t in tmpl_list:
        for ps in t.pod_sets:
            t_ps_name.append(ps_names.setdefault(ps.name, len(ps_names)))
            t_count.append(ps.count)
            t_min.append(ps.min_count)
            t_req.append([ps.requests.get(r, 0) for r in resources])
            t_pl.append(pl_ids.setdefault(ps.placement, len(pl_ids)))
    sizes = t_ps_sizes[tmpl_of]
    offsets = np.zeros(tmpl_of.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    ps_rows = np.repeat(t_ps_start[tmpl_of] - offsets[:-1], sizes) + np.arange(offsets[-1])
    return _PodSets(
        resources=resources,
        names=list(ps_names),
        name=np.asarray(t_ps_name, dtype=np.int32),
        count=np.asarray(t_count, dtype=np.int32),
        min_count=np.asarray(t_min, dtype=np.int32),
        requests=np.asarray(t_req, dtype=np.int64).reshape(-1, len(resources)),
        placement=np.asarray(t_pl, dtype=np.int32),
        placements=list(pl_ids),
        offsets=offsets,
        rows=ps_rows,
    )
