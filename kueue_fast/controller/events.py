"""Kubernetes Events as Kueue records them: events.k8s.io/v1, through the
logic of client-go's ``tools/events`` recorder (``event_broadcaster.go``).

* :meth:`EventRecorder.record` is called by the scheduling loop and never
  blocks: it notes the Event and queues its write.
* Series: Events that are isomorphic (same type, action, reason, reporting
  controller and instance, regarding and related objects, client-go's
  ``getKey``; the note is not part of it, and the object references carry
  their resourceVersion) are one Event. The first occurrence creates it, the
  second patches ``series: {count: 2, lastObservedTime}``, later ones only
  count in memory; the count is written when the series ends (no occurrence
  for ``finish_time``, 6 minutes) or every ``refresh_time`` (30 minutes) while
  it goes on. A write still queued sends the latest count. A series patch
  answered 404 (the Event expired) creates the Event again.
* Rate limit: one thread sends the writes through a token bucket of its own
  (``qps``, ``burst``), apart from the client's budget for decisions, so that
  a storm of Events never slows admissions down nor writes faster than
  ``qps`` (and slower when the API server slows down: one write at a time).
  At most ``max_queued`` writes wait; beyond, newer ones are dropped and
  counted (client-go's broadcaster drops when its queue is full too).
  Warnings and the Events of evictions go first and are dropped last: a
  storm of admissions loses QuotaReserved before a preemption's Events.
* Memory: an Event seen once is remembered for ``finish_time`` (to notice a
  second occurrence) by the hash of its identity and, once written, by its
  namespace and name only: a few hundred bytes each.
"""

from __future__ import annotations

import collections
import datetime as dt
import logging
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..kube.client import EVENTS, STRATEGIC, ApiError, ClientClosed, KubeClient, TokenBucket

log = logging.getLogger("kueue_fast.controller.events")

JSON = dict[str, Any]

NORMAL, WARNING = "Normal", "Warning"

# Kueue's reporting controllers (mgr.GetEventRecorder names in cmd/kueue/main.go,
# pkg/constants and jobframework/setup.go)
ADMISSION = "kueue-admission"  # the scheduler: QuotaReserved, Admitted, Pending, preemption
WORKLOAD_CONTROLLER = "kueue-workload-controller"  # evictions for stop policies, deactivation
JOB_CONTROLLER = "batch/job-kueue-controller"  # events on batch/v1 Jobs

FINISH_TIME = 360.0  # client-go finishTime
REFRESH_TIME = 1800.0  # client-go refreshTime
NOTE_LIMIT = 1024  # Kueue's api.TruncateEventMessage, the API server's note limit
# Normal Events that matter as much as Warnings: evictions and their consequences
_URGENT = frozenset(
    (
        "EvictedDueToPreempted",
        "EvictedDueToClusterQueueStopped",
        "EvictedDueToLocalQueueStopped",
        "EvictedDueToDeactivated",
        "Preempted",
        "PreemptedWorkload",
        "Stopped",
    )
)
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

Ref = tuple[str, str, str, str, str, str]  # apiVersion, kind, namespace, name, uid, resourceVersion
# client-go's eventKey: type, action, reason, reporting controller and instance, regarding, related
Key = tuple[str, str, str, str, str, Ref, Ref | None]
# what an Event is made of: its key and its note
Spec = tuple[Key, str]


def truncate_note(note: str) -> str:
    """Kueue's api.TruncateEventMessage: at most 1024 bytes, " ..." at the end when cut."""
    raw = note.encode()
    if len(raw) <= NOTE_LIMIT:
        return note
    return raw[: NOTE_LIMIT - 4].decode("utf-8", "ignore") + " ..."


def _micro_time(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def reference(obj: JSON) -> Ref:
    """client-go's reference.GetReference of an object (resourceVersion included)."""
    md = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion") or ""),
        str(obj.get("kind") or ""),
        str(md.get("namespace") or ""),
        str(md.get("name") or ""),
        str(md.get("uid") or ""),
        str(md.get("resourceVersion") or ""),
    )


def _ref_json(ref: Ref) -> JSON:
    keys = ("apiVersion", "kind", "namespace", "name", "uid", "resourceVersion")
    return {k: v for k, v in zip(keys, ref, strict=True) if v}


@dataclass(slots=True, eq=False)
class _Event:
    """One Event and its series (client-go's eventCache entry)."""

    namespace: str
    name: str
    first_ns: int  # eventTime
    last_ns: int  # the last occurrence
    # what to create it from; dropped once created if seen once (memory), set
    # again by a second occurrence (a series patch answered 404 creates it)
    spec: Spec | None
    count: int = 1  # occurrences so far
    written: int = 0  # the count the API server has (0: not created yet)
    refreshed_ns: int = 0
    queued: bool = False  # a write of it waits in the queue
    urgent: bool = False  # a Warning or an eviction: written first, dropped last

    def body(self, series: JSON | None) -> JSON:
        assert self.spec is not None
        (type_, action, reason, controller, instance, ref, rel), note = self.spec
        out: JSON = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "eventTime": _micro_time(self.first_ns),
            "reportingController": controller,
            "reportingInstance": instance,
            "action": action,
            "reason": reason,
            "regarding": _ref_json(ref),
            "note": note,
            "type": type_,
        }
        if rel is not None:
            out["related"] = _ref_json(rel)
        if series is not None:
            out["series"] = series
        return out


class EventRecorder:
    def __init__(
        self,
        client: KubeClient,
        *,
        qps: float = 100.0,
        burst: int = 300,
        max_queued: int = 10_000,
        max_cached: int = 200_000,
        finish_time: float = FINISH_TIME,
        refresh_time: float = REFRESH_TIME,
        sweep_interval: float = 30.0,
        time_ns: Callable[[], int] = time.time_ns,
        on_record: Callable[[str, str], None] | None = None,
        on_drop: Callable[[], None] | None = None,
    ) -> None:
        self.client = client
        self.bucket = TokenBucket(qps, burst)
        self.max_queued = max_queued
        self.max_cached = max_cached
        self.finish_ns = int(finish_time * 1e9)
        self.refresh_ns = int(refresh_time * 1e9)
        self.sweep_interval = sweep_interval
        self.time_ns = time_ns
        self.on_record = on_record
        self.on_drop = on_drop
        self.host = socket.gethostname()
        self.recorded = 0
        self.dropped = 0
        # by hash(key): a collision (about 1e-10 among 100k Events) would only
        # count an Event in another's series
        self._cache: dict[int, _Event] = {}
        self._instances: dict[str, str] = {}
        self._queue: collections.deque[_Event] = collections.deque()
        self._urgent: collections.deque[_Event] = collections.deque()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._last_name_ns = 0
        self._last_drop_log = 0.0
        self.thread = threading.Thread(target=self._run, name="event-writer", daemon=True)

    def start(self) -> EventRecorder:
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop writing (the Events still queued are not written)."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()

    def depth(self) -> int:
        return len(self._queue) + len(self._urgent)

    # --- recording (the scheduling loop) ------------------------------------------------------

    def record(
        self,
        regarding: JSON,
        type_: str,
        reason: str,
        note: str,
        *,
        controller: str,
        action: str | None = None,
        related: JSON | None = None,
    ) -> None:
        """Recorder.Eventf(regarding, related, type, reason, action, note);
        ``action`` defaults to the reason, as Kueue's calls have it."""
        ref = reference(regarding)
        if not ref[3]:
            return
        instance = self._instances.get(controller)
        if instance is None:
            instance = self._instances[controller] = f"{controller}-{self.host}"[:128]
        rel = reference(related) if related is not None else None
        key: Key = (type_, action or reason, reason, controller, instance, ref, rel)
        h = hash(key)
        now = self.time_ns()
        self.recorded += 1
        if self.on_record is not None:
            self.on_record(type_, reason)
        with self._cond:
            ev = self._cache.get(h)
            if ev is not None:
                ev.count += 1
                ev.last_ns = now
                if ev.count == 2:  # client-go patches the second occurrence, counts the later ones
                    if ev.spec is None:
                        ev.spec = (key, truncate_note(note))
                    self._enqueue(ev)
                return
            namespace = sys.intern(ref[2] or "default")
            spec = (key, truncate_note(note))
            ev = self._cache[h] = _Event(namespace, self._name(ref[3], now), now, now, spec, refreshed_ns=now)
            ev.urgent = type_ == WARNING or reason in _URGENT
            if len(self._cache) > self.max_cached:
                self._forget(next(iter(self._cache)))
            self._enqueue(ev)

    def _name(self, regarding_name: str, now: int) -> str:
        """client-go's util.GenerateEventName, unique per recorder."""
        ns = max(now, self._last_name_ns + 1)
        self._last_name_ns = ns
        name = f"{regarding_name}.{ns:x}"
        if len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
            name = str(uuid.uuid4())
        return name

    def _enqueue(self, ev: _Event) -> None:
        """Under the lock. A write already queued sends the latest count."""
        if ev.queued:
            return
        if self.depth() >= self.max_queued:
            self._dropped_one()
            if not (ev.urgent and self._queue):
                return
            self._queue.pop().queued = False  # make room: the newest ordinary write goes
        ev.queued = True
        (self._urgent if ev.urgent else self._queue).append(ev)
        self._cond.notify()

    def _dropped_one(self) -> None:
        self.dropped += 1
        if self.on_drop is not None:
            self.on_drop()
        now = time.monotonic()
        if now - self._last_drop_log >= 60:
            self._last_drop_log = now
            log.warning(
                "Events come faster than --events-qps writes them: %d waiting, %d dropped so far",
                self.depth(),
                self.dropped,
            )

    def _forget(self, h: int) -> None:
        """Under the lock: drop a cache entry, writing its last count first."""
        ev = self._cache.pop(h)
        if ev.count > max(ev.written, 1):
            self._enqueue(ev)

    # --- writing (the event-writer thread) ---------------------------------------------------------

    def _run(self) -> None:
        next_sweep = time.monotonic() + self.sweep_interval
        while not self._stop.is_set() and not self.client.closed:
            with self._cond:
                while not self.depth() and not self._stop.is_set():
                    wait = next_sweep - time.monotonic()
                    if wait <= 0:
                        break
                    self._cond.wait(wait)
                if time.monotonic() >= next_sweep:
                    self._sweep()
                    next_sweep = time.monotonic() + self.sweep_interval
                if not self.depth() or self._stop.is_set():
                    continue
                ev = (self._urgent or self._queue).popleft()
                ev.queued = False
                count, last_ns, written = ev.count, ev.last_ns, ev.written
            try:
                self._send(ev, count, last_ns, written)
            except ClientClosed:
                return
            except Exception:  # a bug must not end the Events silently
                log.exception("writing an Event")

    def sweep(self) -> None:
        with self._cond:
            self._sweep()

    def _sweep(self) -> None:
        """client-go's finishSeries and refreshExistingEventSeries."""
        now = self.time_ns()
        for h, ev in list(self._cache.items()):
            if now - ev.last_ns >= self.finish_ns:
                self._forget(h)
            elif ev.count > ev.written and ev.written and now - ev.refreshed_ns >= self.refresh_ns:
                ev.refreshed_ns = now
                self._enqueue(ev)

    def _send(self, ev: _Event, count: int, last_ns: int, written: int) -> None:
        series = {"count": count, "lastObservedTime": _micro_time(last_ns)} if count > 1 else None
        try:
            if written and series is not None:
                try:
                    self._request("PATCH", EVENTS.path(ev.namespace, ev.name), {"series": series}, STRATEGIC)
                except ApiError as e:
                    if e.status != 404 or ev.spec is None:
                        raise
                    self._create(ev, series)  # the Event expired meanwhile
            elif not written:
                self._create(ev, series)
            else:
                return
            ev.written = count
            with self._cond:
                if ev.count == 1:
                    ev.spec = None  # seen once: its name is all a second occurrence needs
        except ApiError as e:
            # client-go gives up on an Event the server rejects: a namespace gone
            # or terminating, an Event that exists already
            if e.status == 422:
                log.error("the API server rejects an Event %s/%s: %s", ev.namespace, ev.name, e)
            else:
                log.debug("Event %s/%s not written: %s", ev.namespace, ev.name, e)

    def _create(self, ev: _Event, series: JSON | None) -> None:
        self._request("POST", EVENTS.path(ev.namespace), ev.body(series), None)

    def _request(self, method: str, path: str, body: JSON, content_type: str | None) -> None:
        self.client.request(
            method,
            path,
            body=body,
            content_type=content_type,
            verb="create" if method == "POST" else "patch",
            resource="events",
            retries=3,
            bucket=self.bucket,
        )
