"""What comes in: an informer's event, or an object a write returned (as good
as a watch event), stored in the cache, and the Job/Workload pairs it
concerns marked to reconcile (Kueue: the event handlers of its controllers,
which enqueue the objects they concern). :class:`Intake` is a part of the
controller."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import job_kinds as J
from .cache import CAPACITY_KINDS, CONFIG_KINDS, job_key, owner_job
from .track import JSON, Write
from .writer import Conflict

if TYPE_CHECKING:
    from ..kube.informers import Slimmer
    from .cache import Cache
    from .loop_state import LoopState
    from .queue_status import QueueStatus
    from .ungater import TopologyUngater
    from .writer import Op


class Intake:
    def __init__(
        self, shared: LoopState, cache: Cache, slim: Slimmer, queues: QueueStatus, ungater: TopologyUngater
    ) -> None:
        self.shared = shared
        self.cache = cache
        self.slim = slim
        self.queues = queues
        self.ungater = ungater

    def on_object(self, kind: str, etype: str, key: str, obj: JSON | None) -> None:
        """An informer's event (or an object a write returned) into the cache,
        and the pairs it concerns marked to reconcile."""
        shared = self.shared
        if etype == "SYNCED":
            shared.synced.add(kind)
            return
        changed, old = self.cache.store(kind, etype, key, obj)
        if not changed:
            return
        if etype == "DELETED":
            obj = None
        if kind in CONFIG_KINDS:
            if kind in ("cq", "lq", "flavor"):  # its status or finalizers may need a write
                self.queues.queue_changed("rf" if kind == "flavor" else kind, key)
            if self.cache.apply_config(kind, key, obj, old):
                shared.config_dirty = True
        elif kind == "workload":
            t = shared.track(key)
            if obj is not None:
                jk = owner_job(obj)
                if jk is not None:
                    t.job_key = jk
                    self.cache.job_unit[jk] = key
            shared.dirty[key] = None
        elif kind in J.BY_NAME:
            self._on_job(J.BY_NAME[kind], key, obj)
        elif kind in CAPACITY_KINDS:
            if self.cache.apply_capacity(kind, key, obj) and self.cache.tas:
                shared.capacity_dirty = True  # the nodes' free capacity changed (Scheduler.sync_config)
            if kind == "pod":
                self.ungater.on_tas_pod(key, obj)

    def _on_job(self, kind: J.JobKind, key: str, obj: JSON | None) -> None:
        """A job's change dirties the Workload it is queued as (and the one
        it was queued as, when that changed)."""
        jk = job_key(kind, key)
        job_unit = self.cache.job_unit
        dirty = self.shared.dirty
        if obj is not None:
            ukey = kind.workload_key(obj)
            prev = job_unit.get(jk)
            if prev is not None and prev != ukey:
                dirty[prev] = None
            job_unit[jk] = ukey
            self.shared.track(ukey).job_key = jk
            dirty[ukey] = None
        else:
            ukey = job_unit.get(jk, "")
            if ukey:
                dirty[ukey] = None

    def observe_result(self, op: Op, result: Any) -> None:
        """The object a write returned, whatever the term: the truth (but a
        deleted object is not brought back)."""
        kind = op.data[0] if op.data else ""
        fresh = (
            result.fresh if isinstance(result, Conflict) else (result if isinstance(result, dict) else None)
        )
        if fresh is not None and kind and fresh.get("metadata") and op.name != Write.DELETE_WORKLOAD:
            self._observe(kind, fresh)

    def _observe(self, kind: str, obj: JSON) -> None:
        if obj.get("kind") == "Status":
            return
        if kind == "workload":
            o = self.slim.workload(obj)
        elif kind in J.BY_NAME:
            o = J.BY_NAME[kind].slim(self.slim, obj)
        else:
            o = self.slim.config(obj)
        md = obj["metadata"]
        key = f"{md['namespace']}/{md['name']}" if md.get("namespace") else str(md["name"])
        self.on_object(kind, "MODIFIED", key, o)
