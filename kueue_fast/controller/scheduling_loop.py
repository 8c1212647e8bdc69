"""The scheduling loop (Kueue: pkg/scheduler/scheduler.go's loop): one
thread owns all state; it applies the queued changes (objects, write
results, leadership), runs scheduling cycles and decides the next writes
while the writer has room. :class:`Loop` is a part of the controller; it
calls the other parts in the order of one step."""

from __future__ import annotations

import heapq
import logging
import queue
import threading
from typing import TYPE_CHECKING, Any

from .cache import ALL_KINDS

if TYPE_CHECKING:
    from ..kube.client import KubeClient
    from ..kube.leader_election import Clock
    from .events import EventRecorder
    from .flow import WorkloadFlow
    from .intake import Intake
    from .loop_state import LoopState
    from .prometheus import Metrics
    from .queue_status import QueueStatus
    from .reconciler import Options
    from .scheduling import Scheduler
    from .writer import Writer

log = logging.getLogger("kueue_fast.controller")


class Loop:
    def __init__(
        self,
        shared: LoopState,
        inbox: queue.SimpleQueue[tuple[Any, ...]],
        intake: Intake,
        scheduler: Scheduler,
        flow: WorkloadFlow,
        queues: QueueStatus,
        writer: Writer,
        events: EventRecorder | None,
        client: KubeClient,
        opts: Options,
        clock: Clock,
        metrics: Metrics,
    ) -> None:
        self.shared = shared
        self.inbox = inbox  # objects, write results, leadership
        self.intake = intake
        self.scheduler = scheduler
        self.flow = flow
        self.queues = queues
        self.writer = writer
        self.events = events
        self.client = client
        self.opts = opts
        self.clock = clock
        self.metrics = metrics
        self.heartbeat = clock.monotonic()
        self.stopped = threading.Event()
        self.fatal: BaseException | None = None
        self.thread = threading.Thread(target=self.run, name="scheduling-loop", daemon=True)

    def synced_all(self) -> bool:
        """Every informer has listed its kind once."""
        return len(self.shared.synced) == len(ALL_KINDS)

    # --- the loop -------------------------------------------------------------------------------------

    def run(self) -> None:
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
        shared = self.shared
        if shared.sched_dirty or (
            (shared.dirty or shared.hot)
            and shared.engine is not None
            and self.writer.depth() < self.opts.max_queued
        ):
            return 0.0
        dues = [shared.timers[0][0]] if shared.timers else []
        if shared.engine is not None:
            dues += self.queues.next_due()
        t = 0.5
        if dues:
            t = min(t, max(0.0, min(dues) - self.clock.monotonic()))
        return t

    def _drain(self, timeout: float) -> list[tuple[Any, ...]]:
        items = []
        try:
            items.append(self.inbox.get(timeout=timeout) if timeout > 0 else self.inbox.get_nowait())
        except queue.Empty:
            return items
        while len(items) < 20000:
            try:
                items.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        return items

    def _dispatch(self, it: tuple[Any, ...]) -> None:
        kind = it[0]
        if kind == "obj":
            self.intake.on_object(it[1], it[2], it[3], it[4])
        elif kind == "done":
            self.intake.observe_result(it[1], it[2])
            self.flow.on_done(it[1], it[2])
        elif kind == "leader":
            self._on_leader(bool(it[1]))

    def _step(self) -> None:
        shared = self.shared
        now = self.clock.monotonic()
        while shared.timers and shared.timers[0][0] <= now:
            _, key = heapq.heappop(shared.timers)
            shared.dirty[key] = None
        if not self.synced_all() or not shared.leader:
            return
        # 1. the engine, built when a term starts, and the configuration's changes
        if shared.engine is None:
            self.scheduler.build_engine()
        self.scheduler.sync_config()
        # 2. cycles: their decisions recorded on the Tracks
        if not shared.config_dirty:
            self.scheduler.schedule()
        # 3. the next writes of the pairs that moved
        self._reconcile_dirty()
        # 4. pending reasons and queue status
        self.queues.pending_pass()
        self.queues.status_pass()
        self.metrics.write_queue_depth.set(self.writer.depth())
        if self.events is not None:
            self.metrics.event_queue_depth.set(self.events.depth())

    # --- leadership ---------------------------------------------------------------------------------

    def _on_leader(self, leading: bool) -> None:
        self.metrics.is_leader.set(1 if leading else 0)
        shared = self.shared
        if leading:
            shared.leader = True
            return
        # Lost it: stop deciding and writing; a new term starts from the cluster's state.
        shared.leader = False
        shared.engine = None
        shared.epoch += 1
        self.writer.drain()
        shared.inflight.clear()
        for t in shared.tracks.values():
            t.in_engine = False
            t.phase = None
        log.warning("not the leader any more: scheduling stopped")

    # --- deciding writes ------------------------------------------------------------------------------

    def _reconcile_dirty(self) -> None:
        """Decide the next writes, oldest change first, while the writer has
        room: its queue stays short (memory), the rest waits here as keys."""
        limit = self.opts.max_queued
        budget = 20_000
        shared = self.shared
        for keys in (shared.hot, shared.dirty):
            while keys and budget > 0 and self.writer.depth() < limit:
                budget -= 1
                key = next(iter(keys))
                del keys[key]
                if key.startswith("#") or key in shared.inflight:
                    continue
                self.flow.reconcile(key)
