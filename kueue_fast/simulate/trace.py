"""Workload traces: what arrives, when, where, how big and for how long.

A trace is columnar (numpy arrays, one row per workload and one per pod set)
so that 100k workloads are read, generated and handed to an engine without
per-workload Python objects.

Formats (documented in docs/commands/trace.md):

* CSV, one row per pod set. Columns ``arrival`` (seconds since the start of
  the trace), ``namespace``, ``queue`` (the LocalQueue), ``duration``
  (seconds of run time once admitted), optional ``name``, ``priority``
  (an integer, or the name of a WorkloadPriorityClass of the manifests),
  ``pod_set`` (default ``main``), ``count`` (default 1), ``min_count``
  (partial admission); every other column is a resource whose value is the
  per-pod request as a Kubernetes quantity (``500m``, ``4Gi``; empty or 0:
  not requested). Consecutive rows with the same namespace and name are the
  pod sets of one workload; without a ``name`` column every row is one.
  Optional placement columns ``node_selector``, ``tolerations``,
  ``affinity`` (placement.py has their form). Leading ``#`` lines are
  comments; ``# window: SECONDS`` is the time the trace covers from 0.
* JSON Lines, one workload per line: ``{"arrival": 0, "namespace": "ml",
  "queue": "default", "name": "job-1", "priority": 1000, "duration": 3600,
  "podSets": [{"name": "main", "count": 4, "minCount": 2,
  "requests": {"cpu": "2", "memory": "8Gi"}}]}``; a pod set may carry the
  pod template's ``nodeSelector``, ``tolerations`` and ``affinity``. A first
  line ``{"window": SECONDS}`` is the time the trace covers from 0.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from ..api.errors import InputError, QuantityError
from ..api.quantity import format_quantity, parse_quantity
from .placement import (
    NO_PLACEMENT,
    PLACEMENT_COLUMNS,
    Placement,
    placement_from_json,
    placement_from_text,
    placement_to_json,
    placement_to_text,
)

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

WORKLOAD_COLUMNS = ("arrival", "namespace", "queue", "name", "priority", "duration")
POD_SET_COLUMNS = ("pod_set", "count", "min_count")
KNOWN_COLUMNS = WORKLOAD_COLUMNS + POD_SET_COLUMNS + PLACEMENT_COLUMNS
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


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


# --- reading --------------------------------------------------------------------------------------


def read_trace(path: str | Path, priority_classes: Mapping[str, int] | None = None) -> Trace:
    """Read a CSV (``.csv``) or JSON Lines (``.jsonl``, ``.ndjson``, ``.json``) trace."""
    from ..loader.documents import read_text  # as manifests are read: UTF-8, within the input limit

    p = Path(path)
    text = read_text(str(p))
    if p.suffix.lower() in JSONL_SUFFIXES or text.lstrip()[:1] == "{":
        return parse_jsonl(text, source=str(p), priority_classes=priority_classes)
    return parse_csv(text, source=str(p), priority_classes=priority_classes)


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


def _window_comments(text: str, source: str) -> tuple[float | None, int, str]:
    """A CSV trace's leading ``#`` lines: (the ``# window: SECONDS`` value,
    how many lines, the rest of the text)."""
    window: float | None = None
    pos = lines = 0
    while text.startswith("#", pos):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        key, colon, value = text[pos + 1 : end].partition(":")
        lines += 1
        if colon and key.strip() == "window":
            window = TraceBuilder(source, None).number(value.strip(), f"line {lines}.window")
        pos = end + 1
    return window, lines, text[pos:]


def parse_csv(text: str, source: str = "<trace>", priority_classes: Mapping[str, int] | None = None) -> Trace:
    window, comments, text = _window_comments(text, source)
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise InputError("trace", "", "empty CSV: expected a header row", source=source) from None
    col = {h: i for i, h in enumerate(header)}
    for required in ("arrival", "namespace", "queue", "duration"):
        if required not in col:
            raise InputError("trace", required, f"CSV header lacks the column {required!r}", source=source)
    resources = [(h, i) for i, h in enumerate(header) if h and h not in KNOWN_COLUMNS]
    if not resources:
        raise InputError("trace", "", "CSV header names no resource column (cpu, memory, ...)", source=source)
    b = TraceBuilder(source, priority_classes)
    i_name = col.get("name")
    b.any_name = i_name is not None
    i_prio, i_ps = col.get("priority"), col.get("pod_set")
    i_count, i_min = col.get("count"), col.get("min_count")
    i_placement = [col.get(c) for c in PLACEMENT_COLUMNS]
    placed = any(i is not None for i in i_placement)
    last_key: tuple[str, str] | None = None
    width = len(header)
    for line, row in enumerate(reader, start=2 + comments):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < width:
            row = row + [""] * (width - len(row))
        where = f"line {line}"
        ns, q = row[col["namespace"]].strip(), row[col["queue"]].strip()
        name = row[i_name].strip() if i_name is not None else ""
        key = (ns, name)
        if i_name is None or not name or key != last_key:
            b.start_workload(
                row[col["arrival"]].strip(),
                ns,
                q,
                name or default_name(len(b.arrival)),
                row[i_prio].strip() if i_prio is not None else "",
                row[col["duration"]].strip(),
                where,
            )
        last_key = key
        b.add_pod_set(
            row[i_ps].strip() if i_ps is not None else "main",
            row[i_count].strip() if i_count is not None else "",
            row[i_min].strip() if i_min is not None else "",
            {r: row[i].strip() for r, i in resources if row[i].strip() not in ("", "0")},
            where,
            _csv_placement(row, i_placement, b, where) if placed else NO_PLACEMENT,
        )
    trace = b.build()
    trace.window_s = window
    return trace


def _csv_placement(row: list[str], columns: list[int | None], b: TraceBuilder, where: str) -> Placement:
    cells = [row[i].strip() if i is not None else "" for i in columns]
    if not any(cells):
        return NO_PLACEMENT
    try:
        return placement_from_text(cells[0], cells[1], cells[2], where)
    except InputError as e:
        raise b.error(e.field, e.message) from None


def parse_jsonl(
    text: str, source: str = "<trace>", priority_classes: Mapping[str, int] | None = None
) -> Trace:
    b = TraceBuilder(source, priority_classes)
    b.any_name = True
    window: float | None = None
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {line_no}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise b.error(where, f"invalid JSON: {e.msg}") from None
        except RecursionError:
            raise b.error(where, "invalid JSON: exceeded maximum nesting depth") from None
        if not isinstance(obj, dict):
            raise b.error(where, "expected one JSON object per line")
        if not b.arrival and window is None and set(obj) == {"window"}:
            window = b.number(obj["window"], f"{where}.window")  # the header line
            continue
        for required in ("arrival", "namespace", "queue", "duration", "podSets"):
            if required not in obj:
                raise b.error(where, f"missing {required!r}")
        name = obj.get("name") or default_name(len(b.arrival))
        b.start_workload(
            obj["arrival"],
            str(obj["namespace"]),
            str(obj["queue"]),
            str(name),
            obj.get("priority"),
            obj["duration"],
            where,
        )
        pod_sets = obj["podSets"]
        if not isinstance(pod_sets, list) or not pod_sets:
            raise b.error(f"{where}.podSets", "must be a non-empty list")
        for j, ps in enumerate(pod_sets):
            pw = f"{where}.podSets[{j}]"
            if not isinstance(ps, dict):
                raise b.error(pw, "expected an object")
            reqs = ps.get("requests") or {}
            if not isinstance(reqs, dict):
                raise b.error(f"{pw}.requests", "expected an object of resource: quantity")
            b.add_pod_set(
                str(ps.get("name") or "main"),
                ps.get("count"),
                ps.get("minCount"),
                {str(k): v for k, v in reqs.items() if v not in (None, "", 0, "0")},
                pw,
                _json_placement(ps, b, pw),
            )
    if not b.arrival:
        raise b.error("", "the trace has no workloads")
    trace = b.build()
    trace.window_s = window
    return trace


def _json_placement(ps: Mapping[str, Any], b: TraceBuilder, where: str) -> Placement:
    if not any(k in ps for k in ("nodeSelector", "tolerations", "affinity")):
        return NO_PLACEMENT
    try:
        return placement_from_json(ps, where)
    except InputError as e:
        raise b.error(e.field, e.message) from None


# --- writing --------------------------------------------------------------------------------------


def _formatted(trace: Trace) -> list[list[str]]:
    """Per resource column, the quantity strings (formatted once per distinct value)."""
    cols: list[list[str]] = []
    for j, r in enumerate(trace.resources):
        values, inverse = np.unique(trace.requests[:, j], return_inverse=True)
        text = ["" if v == 0 else format_quantity(r, int(v)) for v in values.tolist()]
        cols.append([text[k] for k in inverse.ravel().tolist()])
    return cols


def _seconds(x: float) -> str:
    return repr(round(x, 3)).removesuffix(".0")


def write_csv(trace: Trace, out: IO[str]) -> None:
    w = csv.writer(out, lineterminator="\n")
    placed = trace.placed  # the placement columns only when some pod set has one
    if trace.window_s is not None:
        out.write(f"# window: {_seconds(trace.window_s)}\n")
    w.writerow(
        [*WORKLOAD_COLUMNS, *POD_SET_COLUMNS, *(PLACEMENT_COLUMNS if placed else ()), *trace.resources]
    )
    req = _formatted(trace)
    cells = [list(placement_to_text(p)) for p in trace.placements]
    placement = trace.placement_ids().tolist()
    offsets = trace.ps_offsets.tolist()
    arrival, duration = trace.arrival_s.tolist(), trace.duration_s.tolist()
    ns, q, prio = trace.namespace.tolist(), trace.queue.tolist(), trace.priority.tolist()
    ps_name, count, min_count = trace.ps_name.tolist(), trace.count.tolist(), trace.min_count.tolist()
    rows = []
    for i in range(len(trace)):
        head = [
            _seconds(arrival[i]),
            trace.namespaces[ns[i]],
            trace.queues[q[i]],
            trace.name_of(i),
            str(prio[i]),
            _seconds(duration[i]),
        ]
        for k in range(offsets[i], offsets[i + 1]):
            mc = min_count[k]
            rows.append(
                head
                + [trace.pod_set_names[ps_name[k]], str(count[k]), "" if mc < 0 else str(mc)]
                + (cells[placement[k]] if placed else [])
                + [c[k] for c in req]
            )
    w.writerows(rows)


def write_jsonl(trace: Trace, out: IO[str]) -> None:
    req = _formatted(trace)
    fields = [placement_to_json(p) for p in trace.placements]
    placement = trace.placement_ids().tolist()
    offsets = trace.ps_offsets.tolist()
    arrival, duration = trace.arrival_s.tolist(), trace.duration_s.tolist()
    ns, q, prio = trace.namespace.tolist(), trace.queue.tolist(), trace.priority.tolist()
    ps_name, count, min_count = trace.ps_name.tolist(), trace.count.tolist(), trace.min_count.tolist()
    lines = [] if trace.window_s is None else ['{"window":' + _seconds(trace.window_s) + "}"]
    for i in range(len(trace)):
        pod_sets = []
        for k in range(offsets[i], offsets[i + 1]):
            ps: dict[str, Any] = {"name": trace.pod_set_names[ps_name[k]], "count": count[k]}
            if min_count[k] >= 0:
                ps["minCount"] = min_count[k]
            ps["requests"] = {r: c[k] for r, c in zip(trace.resources, req, strict=True) if c[k]}
            ps.update(fields[placement[k]])
            pod_sets.append(ps)
        obj = {
            "arrival": round(arrival[i], 3),
            "namespace": trace.namespaces[ns[i]],
            "queue": trace.queues[q[i]],
            "name": trace.name_of(i),
            "priority": prio[i],
            "duration": round(duration[i], 3),
            "podSets": pod_sets,
        }
        lines.append(json.dumps(obj, separators=(",", ":")))
    out.write("\n".join(lines) + "\n")


def write_trace(trace: Trace, path: str | Path) -> None:
    p = Path(path)
    with p.open("w", newline="") as f:
        if p.suffix.lower() in JSONL_SUFFIXES:
            write_jsonl(trace, f)
        else:
            write_csv(trace, f)


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


def work_seconds(trace: Trace, resource: str) -> F64:
    """Per workload: per-pod request x pods x duration, for one resource."""
    if resource not in trace.resources:
        return np.zeros(len(trace), dtype=np.float64)
    j = trace.resources.index(resource)
    per_ps = trace.requests[:, j].astype(np.float64) * trace.count
    per_wl = np.add.reduceat(per_ps, trace.ps_offsets[:-1]) if len(trace) else per_ps[:0]
    out: F64 = per_wl * trace.duration_s
    return out
