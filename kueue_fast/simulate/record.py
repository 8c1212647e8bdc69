"""``kueue-fast trace record``: what a cluster ran, as a trace.

From the Workloads of a cluster (read from it, read-only, or from files such
as ``kubectl get workloads,jobs -A -o yaml``) and the batch/v1 Jobs that own
them: per Workload its creation time (the arrival), its pod sets with their
per-pod requests and placement, its priority and LocalQueue, and its run time:

* start: the Job's ``status.startTime`` (set when the Job last started:
  Kueue clears it when it stops a Job, kueue-cluster-facts.md), else the
  Workload's ``Admitted`` (else ``QuotaReserved``) condition, True, its
  ``lastTransitionTime`` (the last admission);
* end: the Job's ``status.completionTime``, else the time of its ``Complete``
  or ``Failed`` condition, else the Workload's ``Finished`` condition.

A Workload that has started and not ended is still running: its run time so
far (up to the end of the recording) is its duration, a lower bound. A
pending one (never started), one that ended without a start (deactivated,
rejected by a check) and one created outside the recording's window are left
out; the summary counts each kind.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..api.errors import InputError
from ..api.model import Workload
from ..api.quantity import format_quantity
from ..integrations import integration_for
from ..loader import build_state
from ..loader.common import parse_time_ns
from .metrics import fmt_duration
from .placement import Placement
from .trace import Trace, TraceBuilder

NS = 1_000_000_000
JSON = dict[str, Any]
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(s|m|h|d)")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass
class Recording:
    trace: Trace
    since_ns: int
    until_ns: int
    finished: int = 0
    running: int = 0  # still running at the end: run time so far (a lower bound)
    left_out: dict[str, int] = field(default_factory=dict)  # why -> how many

    def summary(self) -> str:
        span = fmt_duration((self.until_ns - self.since_ns) / NS)
        lqs = len({(int(n), int(q)) for n, q in zip(self.trace.namespace, self.trace.queue, strict=True)})
        parts = [
            f"recorded {len(self.trace):,} workloads of {lqs:,} LocalQueue(s) created from "
            f"{_rfc3339(self.since_ns)} to {_rfc3339(self.until_ns)} ({span}): {self.finished:,} finished"
        ]
        if self.running:
            parts.append(
                f"{self.running:,} still running (their run time so far is their duration: a lower bound)"
            )
        text = ", ".join(parts)
        if self.left_out:
            text += "; left out: " + ", ".join(f"{n:,} {why}" for why, n in self.left_out.items())
        return text


def duration_s(text: str) -> float | None:
    """``7d``, ``36h``, ``90m``, ``1d12h`` in seconds; None when ``text`` is not one."""
    s = text.strip()
    pos, total = 0, 0.0
    for mt in _DURATION.finditer(s):
        if mt.start() != pos:
            return None
        total += float(mt.group(1)) * _UNITS[mt.group(2)]
        pos = mt.end()
    return total if s and pos == len(s) else None


def time_ns(text: str, option: str) -> int:
    """An RFC 3339 time given on the command line."""
    try:
        return parse_time_ns(text.strip(), "", option)
    except InputError:
        raise InputError(
            "", option, f"expects an RFC 3339 time such as 2025-01-06T00:00:00Z, got {text!r}"
        ) from None


def _rfc3339(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns // NS, dt.timezone.utc).isoformat().replace("+00:00", "Z")


def _time(obj: Mapping[str, Any], ref: str, path: str, value: object) -> int | None:
    return None if value in (None, "") else parse_time_ns(value, ref, path)


def _condition_time(status: Mapping[str, Any], ref: str, *types: str) -> int | None:
    """lastTransitionTime of the first of ``types`` that is True."""
    conds = {c.get("type"): c for c in status.get("conditions") or () if isinstance(c, dict)}
    for t in types:
        c = conds.get(t)
        if c is not None and c.get("status") == "True":
            return _time(c, ref, f"status.conditions[{t}].lastTransitionTime", c.get("lastTransitionTime"))
    return None


def configuration(documents: Iterable[JSON]) -> list[JSON]:
    """The objects a replay runs against: all but Workloads and the jobs of
    Kueue's integrations (their work is the trace's)."""
    return [
        d
        for d in documents
        if isinstance(d, dict)
        and d.get("kind") != "Workload"
        and not integration_for(d.get("apiVersion"), d.get("kind"))
    ]


def _without_status(d: JSON) -> JSON:
    """A job of a Kueue integration (Job, JobSet...) without its status."""
    if isinstance(d, dict) and "status" in d and integration_for(d.get("apiVersion"), d.get("kind")):
        return {k: v for k, v in d.items() if k != "status"}
    return d


def _job_of(wl: Workload, jobs: Mapping[tuple[str, str], JSON]) -> JSON | None:
    """The batch/v1 Job a Workload was made for (its owner), when given."""
    if wl.owner is not None:
        kind, _, name = wl.owner.partition("/")
        return jobs.get((wl.namespace, name)) if kind == "Job" else None
    for r in (wl.raw.get("metadata") or {}).get("ownerReferences") or ():
        if (
            isinstance(r, dict)
            and r.get("kind") == "Job"
            and str(r.get("apiVersion", "")).startswith("batch/")
        ):
            return jobs.get((wl.namespace, str(r.get("name"))))
    return None


def run_times(wl: Workload, job: JSON | None) -> tuple[int | None, int | None]:
    """(start, end) in ns since the epoch, None when unknown (module docstring)."""
    ref = wl.key
    wl_status = wl.raw.get("status") or {}
    start = end = None
    if job is not None:
        st = job.get("status") or {}
        jref = f"Job/{wl.namespace}/{(job.get('metadata') or {}).get('name')}"
        start = _time(st, jref, "status.startTime", st.get("startTime"))
        end = _time(st, jref, "status.completionTime", st.get("completionTime"))
        if end is None:
            end = _condition_time(st, jref, "Complete", "Failed")
    if start is None:
        start = _condition_time(wl_status, ref, "Admitted", "QuotaReserved")
    if end is None:
        end = _condition_time(wl_status, ref, "Finished")
    return start, end


def record(
    documents: Iterable[JSON],
    since_ns: int | None = None,
    until_ns: int | None = None,
    since_before_s: float | None = None,
) -> Recording:
    """The trace of the Workloads in ``documents`` created in [since, until]
    (default: from the first creation, or ``since_before_s`` before until; to
    the latest time the objects hold)."""
    docs = list(documents)
    # the loader skips finished jobs (they queue nothing); their shapes are wanted here
    state = build_state([_without_status(d) for d in docs])
    jobs: dict[tuple[str, str], JSON] = {}
    for d in docs:
        if (
            isinstance(d, dict)
            and d.get("kind") == "Job"
            and str(d.get("apiVersion", "")).startswith("batch/")
        ):
            md = d.get("metadata") or {}
            jobs[(str(md.get("namespace") or "default"), str(md.get("name")))] = d
    # 1. each Workload's times
    rows: list[tuple[Workload, int, int | None, int | None]] = []
    for wl in state.workloads.values():
        if not wl.queue_name:
            continue  # Kueue does not queue it
        start, end = run_times(wl, _job_of(wl, jobs))
        rows.append((wl, wl.creation_ns, start, end))
    if not rows:
        raise InputError("", "", "no Workload (or Job with a LocalQueue) to record")
    latest = max(max(t for t in (c, s, e) if t is not None) for _, c, s, e in rows)
    until = latest if until_ns is None else until_ns
    if since_ns is not None:
        since = since_ns
    elif since_before_s is not None:
        since = until - int(round(since_before_s * NS))
    else:
        since = min(c for _, c, _, _ in rows)
    if until <= since:
        raise InputError("", "--until", f"must be after --since ({_rfc3339(since)})")
    # 2. what can be replayed
    b = TraceBuilder("recording", None)
    b.any_name = True
    finished = running = 0
    left_out: dict[str, int] = {}
    for wl, created, start, end in sorted(rows, key=lambda r: (r[1], r[0].key)):
        why = ""
        if created < since or created > until:
            why = "created outside the window"
        elif start is None and end is not None:
            why = "finished without running"
        elif start is None or start > until:
            why = "still pending at the end (run time unknown)"
        if why:
            left_out[why] = left_out.get(why, 0) + 1
            continue
        assert start is not None
        if end is not None and end <= until:
            duration = max(0, end - start)
            finished += 1
        else:
            duration = until - start
            running += 1
        b.start_workload(
            (created - since) / NS, wl.namespace, wl.queue_name, wl.name, wl.priority, duration / NS, wl.key
        )
        for ps in wl.pod_sets:
            requests = {r: format_quantity(r, v) for r, v in ps.requests.items() if v}
            b.add_pod_set(ps.name, ps.count, ps.min_count, requests, wl.key, Placement.of(ps))
    if not b.arrival:
        raise InputError(
            "",
            "",
            f"no Workload ran from {_rfc3339(since)} to {_rfc3339(until)}: "
            + ", ".join(f"{n:,} {why}" for why, n in left_out.items()),
        )
    trace = b.build()
    trace.window_s = (until - since) / NS
    return Recording(trace, since, until, finished, running, left_out)
