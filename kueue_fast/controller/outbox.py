"""Everything the controller's parts send to the API server: writes handed
to the writer (:mod:`.writer`, one in flight per key, tagged with the
leadership term; the result comes back to the loop), the server-side apply
of a Workload's status, and Kueue's Events (:mod:`.events`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..kube.client import KUEUE_API, WORKLOADS, Resource
from .track import JSON, Then, Track, Write

if TYPE_CHECKING:
    from .events import EventRecorder
    from .loop_state import LoopState
    from .writer import Writer

FIELD_MANAGER = "kueue-admission"


class Outbox:
    def __init__(self, shared: LoopState, writer: Writer, events: EventRecorder | None) -> None:
        self.shared = shared
        self.writer = writer
        self.events = events  # None: no Events (--events=false)

    def submit(
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
        shared = self.shared
        shared.inflight[key] = write.value
        self.writer.submit(
            key, write.value, prio, fn, refetch=refetch, epoch=shared.epoch, data=(*data, then)
        )

    def apply_status(
        self,
        t: Track,
        wl: JSON,
        write: Write,
        status: JSON,
        prio: int,
        then: Then | None = None,
        *,
        spare_wait: float | None = None,
    ) -> None:
        """The Workload's status, server-side applied on the resourceVersion
        it was decided on (a 409 means: decide again on fresh state)."""
        md = wl["metadata"]
        body = {
            "apiVersion": KUEUE_API,
            "kind": "Workload",
            "metadata": {
                "name": md["name"],
                "namespace": md["namespace"],
                "resourceVersion": md["resourceVersion"],
            },
            "status": status,
        }
        self.submit(
            t.key,
            write,
            prio,
            lambda c: c.apply(
                WORKLOADS, body, field_manager=FIELD_MANAGER, sub="status", spare_wait=spare_wait
            ),
            (WORKLOADS, md["name"], md["namespace"]),
            ("workload", t.key),
            then,
        )

    def event(self, obj: JSON, type_: str, reason: str, note: str, controller: str) -> None:
        if self.events is not None:
            self.events.record(obj, type_, reason, note, controller=controller)
