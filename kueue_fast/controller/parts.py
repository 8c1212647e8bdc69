"""What the Controller's parts share: its attributes, and the calls the
parts make on each other, declared once for mypy. Each part (the loop with
leadership, the scheduling of the engine's workloads, the per-workload flow,
queue status, the TAS pods' ungater) is a mixin of :class:`.reconciler.Controller`, which sets all
of this up; nothing here runs."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .track import JSON, Track

if TYPE_CHECKING:
    from ..kube.client import KubeClient
    from ..kube.informers import Informer, Slimmer
    from ..kube.leader_election import Clock, LeaderElector
    from .cache import Cache
    from .engine_handle import EngineHandle
    from .events import EventRecorder
    from .prometheus import Metrics
    from .queue_status import QueueCounts
    from .reconciler import Options
    from .writer import Writer


class ControllerParts:
    client: KubeClient
    opts: Options
    clock: Clock
    metrics: Metrics
    identity: str
    q: queue.SimpleQueue[tuple[Any, ...]]  # the loop's inbox: objects, write results, leadership
    slim: Slimmer
    writer: Writer
    events: EventRecorder | None
    informers: list[Informer]
    elector: LeaderElector | None
    thread: threading.Thread
    cache: Cache
    tracks: dict[str, Track]
    engine: EngineHandle | None
    # keys to reconcile, ordered sets: first dirtied, first reconciled; hot ones
    # (their admission flow moves on: a decision, a write done) before the others
    dirty: dict[str, None]
    hot: dict[str, None]
    inflight: dict[str, str]  # key -> the write in flight for it
    timers: list[tuple[float, str]]  # a heap of (monotonic time, key to reconcile then)
    synced: set[str]  # kinds whose informer has listed once
    leader: bool
    epoch: int  # the leadership term (a rebuild of the engine starts a new one)
    config_dirty: bool
    capacity_dirty: bool  # TAS's nodes or non-TAS pods changed since the engine last read them
    last_capacity: float
    sched_dirty: bool
    last_cycle: float
    # queue status and pending reasons (queues.py): what changed since they were looked at
    touched: set[str]  # Workload keys whose counts in their queues may have moved
    counts: QueueCounts
    pending_due: dict[str, float]  # Workload key -> when to look at its pending reason
    queue_due: dict[str, dict[str, float]]  # "cq" | "lq" | "rf" -> name -> when to look at it
    lanes: dict[str, tuple[str, str]]  # "pending" | "cq" | "lq" -> (key, write) last sent
    heartbeat: float
    stopped: threading.Event
    fatal: BaseException | None
    admissions: int
    preemptions: int

    # the loop (loop.py)
    _later: Callable[[str, float], None]
    _submit: Callable[..., None]
    # the informer side (reconciler.py)
    _on_object: Callable[[str, str, str, JSON | None], None]
    _track: Callable[[str], Track]
    # the engine's workloads and cycles (scheduling.py)
    _build_engine: Callable[[], None]
    _sync_config: Callable[[], None]
    _schedule: Callable[[], None]
    _engine_sync: Callable[[Track, JSON | None], bool]
    _undo_admission: Callable[[Track, str], None]
    _released: Callable[[Track], None]
    # the per-workload flow (flow.py)
    _reconcile: Callable[[str], None]
    _on_done: Callable[[Any, Any], None]
    _event: Callable[[JSON, str, str, str, str], None]
    _apply_status: Callable[..., None]
    # Topology Aware Scheduling's pods (ungater.py)
    _ungate: Callable[[JSON], None]
    _ungated: Callable[[str, Any], None]
    # queue status (queues.py)
    _pending_pass: Callable[[], None]
    _status_pass: Callable[[], None]
    _touch_all: Callable[[], None]
    _queue_changed: Callable[[str, str], None]
    _pending_tried: Callable[[str], None]
    _next_due: Callable[[], list[float]]
