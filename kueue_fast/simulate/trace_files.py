"""Trace files: read and write a Trace as CSV or JSON Lines.

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
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..api.errors import InputError
from ..api.quantity import format_quantity
from .placement import (
    NO_PLACEMENT,
    PLACEMENT_COLUMNS,
    Placement,
    placement_from_json,
    placement_from_text,
    placement_to_json,
    placement_to_text,
)
from .trace import Trace, TraceBuilder, default_name

WORKLOAD_COLUMNS = ("arrival", "namespace", "queue", "name", "priority", "duration")
POD_SET_COLUMNS = ("pod_set", "count", "min_count")
KNOWN_COLUMNS = WORKLOAD_COLUMNS + POD_SET_COLUMNS + PLACEMENT_COLUMNS
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


# --- reading --------------------------------------------------------------------------------------


def read_trace(path: str | Path, priority_classes: Mapping[str, int] | None = None) -> Trace:
    """Read a CSV (``.csv``) or JSON Lines (``.jsonl``, ``.ndjson``, ``.json``) trace."""
    from ..loader.documents import read_text  # as manifests are read: UTF-8, within the input limit

    p = Path(path)
    text = read_text(str(p))
    if p.suffix.lower() in JSONL_SUFFIXES or text.lstrip()[:1] == "{":
        return parse_jsonl(text, source=str(p), priority_classes=priority_classes)
    return parse_csv(text, source=str(p), priority_classes=priority_classes)


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
