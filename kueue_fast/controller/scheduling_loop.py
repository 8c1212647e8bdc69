"""The scheduling loop and leadership (Kueue: pkg/scheduler/scheduler.go's
loop, controller-runtime's leader election): one thread owns all state; it
applies the queued changes (objects, write results, leadership), runs
scheduling cycles and decides the next writes while the writer has room. A
part of :class:`.reconciler.Controller`."""

from __future__ import annotations

import heapq
import logging
import queue
import threading
from typing import Any, TypeVar

from ..kube.client import Resource
from .cache import ALL_KINDS
from .parts import ControllerParts
from .track import Then, Write

log = logging.getLogger("kueue_fast.controller")

_Self = TypeVar("_Self", bound="Loop")


class Loop(ControllerParts):
    # --- lifecycle ----------------------------------------------------------------------------------

    def start(self: _Self) -> _Self:
        self.writer.start()
        if self.events is not None:
            self.events.start()
        for inf in self.informers:
            inf.start()
        self.thread.start()
        if self.elector is not None:
            self.elector.start()
        return self

    def stop(self, release_lease: bool = True, timeout: float = 10.0) -> None:
        """Graceful stop (SIGTERM): 1. stop deciding; 2. let the writes in
        flight land (the queued ones are dropped: the next leader decides them
        again); 3. give the Lease up, so that a standby or the restarted
        process takes over at once. Releasing before the last write lands would
        let the next leader decide on a state that write then changes
        (client-go's ReleaseOnCancel asks the same of its callers). A write
        still hanging after ``timeout`` keeps the Lease: it expires instead."""
        self.stopped.set()
        self.q.put(("stop",))
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout)
        self.writer.drain()
        quiet = self.writer.stop(wait=timeout)
        if self.events is not None:
            self.events.stop()
        if self.elector is not None:
            if release_lease and not quiet:
                log.warning("writes still in flight after %.0fs: the Lease is left to expire", timeout)
            self.elector.stop(release=release_lease and quiet)
        self.client.close()

    def kill(self) -> None:
        """Die at once, as a killed process would: nothing more is sent."""
        self.client.close()
        self.stopped.set()
        self.q.put(("stop",))
        if self.elector is not None:
            self.elector.stop_event.set()
        if self.events is not None:
            self.events.stop()
        self.writer.stop()

    def synced_all(self) -> bool:
        """Every informer has listed its kind once."""
        return len(self.synced) == len(ALL_KINDS)

    def readiness(self) -> list[tuple[str, str]]:
        """The /readyz checks as (name, why not, "" when passing). A standby
        is ready: readiness never requires leading (a rolling update would
        wait forever for the new pod); one that could not take over (its
        Lease unreachable) is not."""
        missing = [k for k in ALL_KINDS if k not in self.synced]
        checks = [("informers-synced", f"waiting for {', '.join(missing)}" if missing else "")]
        if self.elector is not None:
            checks.append(("leader-election", self.elector.readiness_error()))
        return checks

    def ready(self) -> bool:
        return not any(err for _, err in self.readiness())

    def healthy(self) -> bool:
        return self.thread.is_alive() and self.clock.monotonic() - self.heartbeat < 60 and self.fatal is None

    @property
    def is_leader(self) -> bool:
        return self.leader and self.engine is not None

    # --- the loop -------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self.stopped.is_set():
                self.heartbeat = self.clock.monotonic()
                items = self._drain(self._timeout())
                for it in items:
                    if it[0] == "stop":
                        return
                    self._dispatch(it)
                if self.stopped.is_set():
                    return
                self._step()
        except BaseException as e:  # noqa: BLE001 - the loop must report, not vanish
            if not self.client.closed:
                log.exception("scheduling loop crashed")
                self.fatal = e

    def _timeout(self) -> float:
        if self.sched_dirty or (
            (self.dirty or self.hot)
            and self.engine is not None
            and self.writer.depth() < self.opts.max_queued
        ):
            return 0.0
        dues = [self.timers[0][0]] if self.timers else []
        if self.engine is not None:
            dues += self._next_due()
        t = 0.5
        if dues:
            t = min(t, max(0.0, min(dues) - self.clock.monotonic()))
        return t

    def _drain(self, timeout: float) -> list[tuple[Any, ...]]:
        items = []
        try:
            items.append(self.q.get(timeout=timeout) if timeout > 0 else self.q.get_nowait())
        except queue.Empty:
            return items
        while len(items) < 20000:
            try:
                items.append(self.q.get_nowait())
            except queue.Empty:
                break
        return items

    def _dispatch(self, it: tuple[Any, ...]) -> None:
        kind = it[0]
        if kind == "obj":
            self._on_object(it[1], it[2], it[3], it[4])
        elif kind == "done":
            self._on_done(it[1], it[2])
        elif kind == "leader":
            self._on_leader(bool(it[1]))

    def _step(self) -> None:
        now = self.clock.monotonic()
        while self.timers and self.timers[0][0] <= now:
            _, key = heapq.heappop(self.timers)
            self.dirty[key] = None
        if not self.synced_all() or not self.leader:
            return
        if self.engine is None:
            self._build_engine()
        assert self.engine is not None
        self._sync_config()
        if not self.config_dirty:
            self._schedule()
        self._reconcile_dirty()
        self._pending_pass()
        self._status_pass()
        self.metrics.write_queue_depth.set(self.writer.depth())
        if self.events is not None:
            self.metrics.event_queue_depth.set(self.events.depth())

    # --- leadership ---------------------------------------------------------------------------------

    def _on_leader(self, leading: bool) -> None:
        self.metrics.is_leader.set(1 if leading else 0)
        if leading:
            self.leader = True
            return
        # Lost it: stop deciding and writing; a new term starts from the cluster's state.
        self.leader = False
        self.engine = None
        self.epoch += 1
        self.writer.drain()
        self.inflight.clear()
        for t in self.tracks.values():
            t.in_engine = False
            t.phase = None
        log.warning("not the leader any more: scheduling stopped")

    # --- deciding writes ------------------------------------------------------------------------------

    def _later(self, key: str, seconds: float) -> None:
        heapq.heappush(self.timers, (self.clock.monotonic() + seconds, key))

    def _reconcile_dirty(self) -> None:
        """Decide the next writes, oldest change first, while the writer has
        room: its queue stays short (memory), the rest waits here as keys."""
        limit = self.opts.max_queued
        budget = 20_000
        for keys in (self.hot, self.dirty):
            while keys and budget > 0 and self.writer.depth() < limit:
                budget -= 1
                key = next(iter(keys))
                del keys[key]
                if key.startswith("#") or key in self.inflight:
                    continue
                self._reconcile(key)

    def _submit(
        self,
        key: str,
        write: Write,
        prio: int,
        fn: Any,
        refetch: tuple[Resource, str, str | None] | None,
        data: tuple[str, str],
        then: Then | None = None,
    ) -> None:
        """Hand a write to the writer (one in flight per key); its result
        comes back to the loop with ``data`` (kind and key of the object the
        server returns) and ``then`` (run once it landed)."""
        self.inflight[key] = write.value
        self.writer.submit(key, write.value, prio, fn, refetch=refetch, epoch=self.epoch, data=(*data, then))
