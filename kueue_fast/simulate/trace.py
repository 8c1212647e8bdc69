"""Workload traces: what arrives, when, where, how big and for how long.

A trace is columnar (numpy arrays, one row per workload and one per pod set)
so that 100k workloads are read, generated and handed to an engine without
per-workload Python objects.

TraceBuilder turns rows into one; trace_files.py reads and writes the CSV and
JSON Lines formats, trace_generator.py draws synthetic traces.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..api.errors import InputError, QuantityError
from ..api.quantity import parse_quantity
from .placement import (
    NO_PLACEMENT,
    Placement,
)

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@dataclass
class Trace:
    """Workloads in arrival order, as columns.

    Per workload (length n): ``arrival_s``, ``duration_s``, ``namespace`` and
    ``queue`` (indices into ``namespaces`` / ``queues``), ``priority``,
    ``ps_offsets`` (n+1: the pod sets of workload i are rows
    ``ps_offsets[i]:ps_offsets[i+1]``). Per pod set (length P): ``ps_name``
    (index into ``pod_set_names``), ``count``, ``min_count`` (-1: none),
    ``requests`` (P x len(resources), per-pod amounts in canonical units,
    0 meaning not requested) and ``ps_placement`` (index into
    ``placements``, whose first is the empty placement; None: every pod set
    has the empty one). ``window_s``: the time the trace covers from 0 (a
    generated trace's days, a recording's span); None: up to its last arrival."""

    arrival_s: F64
    duration_s: F64
    namespace: I32
    queue: I32
    priority: I64
    ps_offsets: I64
    ps_name: I32
    count: I32
    min_count: I32
    requests: I64
    resources: list[str]
    namespaces: list[str]
    queues: list[str]
    pod_set_names: list[str] = field(default_factory=lambda: ["main"])
    # Workload names; None: generated from the row number (see name_of).
    names: list[str] | None = None
    ps_placement: I32 | None = None
    placements: list[Placement] = field(default_factory=lambda: [NO_PLACEMENT])
    window_s: float | None = None

    def __len__(self) -> int:
        return int(self.arrival_s.shape[0])

    @property
    def n_pod_sets(self) -> int:
        return int(self.count.shape[0])

    def name_of(self, i: int) -> str:
        return self.names[i] if self.names is not None else default_name(i)

    def placement_ids(self) -> I32:
        """Per pod set, its index into ``placements``."""
        if self.ps_placement is None:
            return np.zeros(self.n_pod_sets, dtype=np.int32)
        return self.ps_placement

    @property
    def placed(self) -> bool:
        """Some pod set has a placement (node selector, tolerations, affinity)."""
        return self.ps_placement is not None and bool(np.any(self.ps_placement))

    @property
    def span_s(self) -> float:
        """The time the trace covers: ``window_s``, else 0 to its last arrival."""
        last = float(self.arrival_s.max()) if len(self) else 0.0
        return max(self.window_s or 0.0, last)

    def all_names(self) -> list[str]:
        if self.names is not None:
            return self.names
        return [default_name(i) for i in range(len(self))]

    def validate(self) -> None:
        n, p = len(self), self.n_pod_sets
        if self.ps_offsets.shape != (n + 1,) or self.ps_offsets[0] != 0 or self.ps_offsets[-1] != p:
            raise InputError("trace", "podSets", "pod set offsets do not match the pod sets")
        if n and np.any(np.diff(self.ps_offsets) < 1):
            raise InputError("trace", "podSets", "every workload needs at least one pod set")
        if self.requests.shape != (p, len(self.resources)):
            raise InputError("trace", "requests", "requests matrix does not match pod sets x resources")
        for col, arr in (("arrival", self.arrival_s), ("duration", self.duration_s)):
            if arr.shape != (n,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise InputError("trace", col, "must be finite and not negative")
        if np.any(self.count < 0) or np.any(self.requests < 0):
            raise InputError("trace", "requests", "counts and requests must not be negative")
        if self.ps_placement is not None and (
            self.ps_placement.shape != (p,) or np.any(self.ps_placement >= len(self.placements))
        ):
            raise InputError("trace", "placement", "placement ids do not match the placements")
        bad = (self.min_count >= 0) & (self.min_count > self.count)
        if np.any(bad):
            raise InputError("trace", "min_count", "min_count must not exceed count")

    def sorted_by_arrival(self) -> Trace:
        """The same trace in arrival order (stable: ties keep file order)."""
        order = np.argsort(self.arrival_s, kind="stable")
        if np.all(order[:-1] < order[1:]):
            return self
        return self.take(order)

    def take(self, rows: npt.NDArray[np.integer[Any]]) -> Trace:
        """The workloads at ``rows``, in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        starts, ends = self.ps_offsets[rows], self.ps_offsets[rows + 1]
        sizes = ends - starts
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        ps_rows = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1], dtype=np.int64)
        return Trace(
            arrival_s=self.arrival_s[rows],
            duration_s=self.duration_s[rows],
            namespace=self.namespace[rows],
            queue=self.queue[rows],
            priority=self.priority[rows],
            ps_offsets=offsets,
            ps_name=self.ps_name[ps_rows],
            count=self.count[ps_rows],
            min_count=self.min_count[ps_rows],
            requests=self.requests[ps_rows],
            resources=list(self.resources),
            namespaces=list(self.namespaces),
            queues=list(self.queues),
            pod_set_names=list(self.pod_set_names),
            names=[self.name_of(int(i)) for i in rows] if self.names is not None else None,
            ps_placement=None if self.ps_placement is None else self.ps_placement[ps_rows],
            placements=list(self.placements),
            window_s=self.window_s,
        )

    def head(self, n: int) -> Trace:
        """The first n workloads (by position)."""
        if n >= len(self):
            return self
        return self.take(np.arange(n, dtype=np.int64))


def default_name(i: int) -> str:
    return f"wl-{i:07d}"


class TraceBuilder:
    """Accumulates rows as Python lists; converts to arrays once."""

    def __init__(self, source: str, priority_classes: Mapping[str, int] | None) -> None:
        self.source = source
        self.priority_classes = priority_classes or {}
        self.arrival: list[float] = []
        self.duration: list[float] = []
        self.namespace: list[int] = []
        self.queue: list[int] = []
        self.priority: list[int] = []
        self.names: list[str] = []
        self.ps_sizes: list[int] = []
        self.ps_name: list[int] = []
        self.count: list[int] = []
        self.min_count: list[int] = []
        # Per resource: raw quantity values, one per pod set (None: absent).
        self.raw_requests: dict[str, list[object]] = {}
        self.ns_ids: dict[str, int] = {}
        self.q_ids: dict[str, int] = {}
        self.ps_ids: dict[str, int] = {"main": 0}
        self.any_name = False
        self.placement: list[int] = []
        self.pl_ids: dict[Placement, int] = {NO_PLACEMENT: 0}

    def error(self, where: str, message: str) -> InputError:
        return InputError("trace", where, message, source=self.source)

    def number(self, value: object, where: str) -> float:
        if isinstance(value, bool):
            raise self.error(where, f"expected a number, got {value!r}")
        try:
            x = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise self.error(where, f"expected a number of seconds, got {value!r}") from None
        if not math.isfinite(x) or x < 0:
            raise self.error(where, f"must be a finite number >= 0, got {value!r}")
        return x

    def integer(self, value: object, where: str, minimum: int = 0) -> int:
        if isinstance(value, bool):
            raise self.error(where, f"expected an integer, got {value!r}")
        try:
            x = int(value) if isinstance(value, int) else int(str(value).strip())
        except ValueError:
            raise self.error(where, f"expected an integer, got {value!r}") from None
        if x < minimum:
            raise self.error(where, f"must be at least {minimum}, got {x}")
        return x

    def prio(self, value: object, where: str) -> int:
        if value is None or value == "":
            return 0
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        s = str(value).strip()
        try:
            return int(s)
        except ValueError:
            pass
        if s in self.priority_classes:
            return self.priority_classes[s]
        raise self.error(where, f"priority {s!r} is neither an integer nor a WorkloadPriorityClass")

    def start_workload(
        self,
        arrival: object,
        namespace: str,
        queue: str,
        name: str,
        priority: object,
        duration: object,
        where: str,
    ) -> None:
        if not namespace:
            raise self.error(f"{where}.namespace", "must not be empty")
        if not queue:
            raise self.error(f"{where}.queue", "must not be empty")
        self.arrival.append(self.number(arrival, f"{where}.arrival"))
        self.duration.append(self.number(duration, f"{where}.duration"))
        self.namespace.append(self.ns_ids.setdefault(namespace, len(self.ns_ids)))
        self.queue.append(self.q_ids.setdefault(queue, len(self.q_ids)))
        self.priority.append(self.prio(priority, f"{where}.priority"))
        self.names.append(name)
        self.ps_sizes.append(0)

    def add_pod_set(
        self,
        name: str,
        count: object,
        min_count: object,
        requests: Mapping[str, object],
        where: str,
        placement: Placement = NO_PLACEMENT,
    ) -> None:
        n_ps = len(self.count)
        self.ps_sizes[-1] += 1
        self.placement.append(self.pl_ids.setdefault(placement, len(self.pl_ids)))
        self.ps_name.append(self.ps_ids.setdefault(name or "main", len(self.ps_ids)))
        c = 1 if count is None or count == "" else self.integer(count, f"{where}.count")
        self.count.append(c)
        mc = -1 if min_count is None or min_count == "" else self.integer(min_count, f"{where}.min_count")
        if mc > c:
            raise self.error(f"{where}.min_count", f"must not exceed count ({mc} > {c})")
        self.min_count.append(mc)
        for r, v in requests.items():
            col = self.raw_requests.get(r)
            if col is None:
                col = self.raw_requests[r] = [None] * n_ps
            col.append(v)
        for col in self.raw_requests.values():
            if len(col) == n_ps:
                col.append(None)

    def build(self) -> Trace:
        resources = sorted(self.raw_requests)
        n_ps = len(self.count)
        req = np.zeros((n_ps, len(resources)), dtype=np.int64)
        for j, r in enumerate(resources):
            req[:, j] = self._parse_column(r, self.raw_requests[r])
        offsets = np.zeros(len(self.arrival) + 1, dtype=np.int64)
        np.cumsum(np.asarray(self.ps_sizes, dtype=np.int64), out=offsets[1:])
        t = Trace(
            arrival_s=np.asarray(self.arrival, dtype=np.float64),
            duration_s=np.asarray(self.duration, dtype=np.float64),
            namespace=np.asarray(self.namespace, dtype=np.int32),
            queue=np.asarray(self.queue, dtype=np.int32),
            priority=np.asarray(self.priority, dtype=np.int64),
            ps_offsets=offsets,
            ps_name=np.asarray(self.ps_name, dtype=np.int32),
            count=np.asarray(self.count, dtype=np.int32),
            min_count=np.asarray(self.min_count, dtype=np.int32),
            requests=req,
            resources=resources,
            namespaces=list(self.ns_ids),
            queues=list(self.q_ids),
            pod_set_names=list(self.ps_ids),
            names=self.names if self.any_name else None,
            ps_placement=np.asarray(self.placement, dtype=np.int32) if len(self.pl_ids) > 1 else None,
            placements=list(self.pl_ids),
        )
        if self.any_name:
            seen: set[tuple[int, str]] = set()
            for i, (ns, nm) in enumerate(zip(t.namespace.tolist(), self.names, strict=True)):
                if (ns, nm) in seen:
                    raise self.error(f"workload {i + 1}", f"duplicate name {t.namespaces[ns]}/{nm}")
                seen.add((ns, nm))
        t.validate()
        return t

    def _parse_column(self, resource: str, values: list[object]) -> I64:
        """Quantities of one resource, parsed once per distinct spelling."""
        cache: dict[object, int] = {}
        out = np.zeros(len(values), dtype=np.int64)
        for i, v in enumerate(values):
            if v is None or v == "":
                continue
            amount = cache.get(v)
            if amount is None:
                try:
                    amount = parse_quantity(v, resource)
                except QuantityError as e:
                    raise self.error(f"pod set {i + 1}.{resource}", f"{v!r}: {e}") from None
                if amount < 0:
                    raise self.error(f"pod set {i + 1}.{resource}", f"must not be negative, got {v!r}")
                cache[v] = amount
            out[i] = amount
        return out


def work_seconds(trace: Trace, resource: str) -> F64:
    """Per workload: per-pod request x pods x duration, for one resource."""
    if resource not in trace.resources:
        return np.zeros(len(trace), dtype=np.float64)
    j = trace.resources.index(resource)
    per_ps = trace.requests[:, j].astype(np.float64) * trace.count
    per_wl = np.add.reduceat(per_ps, trace.ps_offsets[:-1]) if len(trace) else per_ps[:0]
    out: F64 = per_wl * trace.duration_s
    return out
