"""What the controller's parts share: the pairs (:class:`.track.Track`), the
engine of the current leadership term, and which pairs to reconcile next.
One object, made by :class:`.reconciler.Controller` and passed to each part
that reads or writes it; everything else a part keeps is its own. Only the
scheduling loop's thread touches it, so nothing locks it."""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from .track import Track

if TYPE_CHECKING:
    from ..kube.leader_election import Clock
    from .engine_handle import EngineHandle


class LoopState:
    def __init__(self, clock: Clock, *, leader: bool) -> None:
        self.clock = clock
        self.tracks: dict[str, Track] = {}  # Workload key -> its Job/Workload pair
        self.engine: EngineHandle | None = None  # built once this instance leads and has listed all
        # keys to reconcile, ordered sets: first dirtied, first reconciled; hot ones
        # (their admission flow moves on: a decision, a write done) before the others
        self.dirty: dict[str, None] = {}
        self.hot: dict[str, None] = {}
        self.inflight: dict[str, str] = {}  # key -> the write in flight for it (Outbox.submit)
        self.timers: list[tuple[float, str]] = []  # a heap of (monotonic time, key to reconcile then)
        self.synced: set[str] = set()  # kinds whose informer has listed once
        self.leader = leader
        self.epoch = 0  # the leadership term (a rebuild of the engine starts a new one)
        self.config_dirty = False  # the configuration changed since the engine read it
        self.capacity_dirty = False  # TAS's nodes or non-TAS pods changed since the engine read them
        self.sched_dirty = False  # a cycle may decide something new

    def track(self, key: str) -> Track:
        t = self.tracks.get(key)
        if t is None:
            t = self.tracks[key] = Track(key)
        return t

    def later(self, key: str, seconds: float) -> None:
        """Reconcile ``key`` again in ``seconds``."""
        heapq.heappush(self.timers, (self.clock.monotonic() + seconds, key))

    def the_engine(self) -> EngineHandle:
        """The engine, for the parts that run only while it exists."""
        eng = self.engine
        assert eng is not None
        return eng
