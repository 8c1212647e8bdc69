"""Queue status and finalizers: the pending reasons written on Workloads,
ClusterQueue and LocalQueue status and metrics, and Kueue's resource-in-use
finalizer on ClusterQueues and ResourceFlavors (pkg/controller/core
clusterqueue_controller.go, localqueue_controller.go,
resourceflavor_controller.go). A part of :class:`.reconciler.Controller`,
run from its loop every ``pending_interval`` and ``status_interval``; it
reads the Tracks and the engine, and writes through the controller's writer."""

from __future__ import annotations

from .. import status as S
from ..model import ClusterState
from . import jobs as J
from . import state
from .kube import CLUSTER_QUEUES, LOCAL_QUEUES, RESOURCE_FLAVORS, Resource
from .parts import ControllerParts
from .track import JSON, Phase, Write
from .writer import PRIO_CREATE, PRIO_PENDING, PRIO_STATUS

_deleting = state.deleting


class QueueStatus(ControllerParts):
    """The queue status pass of the Controller."""

    def _pending_pass(self) -> None:
        """Kueue's QuotaReserved=False reason and message on the pending
        Workloads the scheduler tried, written only when they change."""
        eng = self.engine
        assert eng is not None
        for key, t in self.tracks.items():
            if t.phase != Phase.PENDING or not t.in_engine or key in self.inflight:
                continue
            d = eng.decision(key)
            if d.state != "pending" or not d.message:
                continue
            if d.reason == "Pending" and d.message.startswith("waiting for its turn"):
                continue
            if t.pending_written == (d.reason, d.message):
                continue
            wl = self.cache.workloads.get(key)
            if wl is None or S.pending_matches(wl, d.reason, d.message):
                t.pending_written = (d.reason, d.message)
                continue
            t.pending_written = (d.reason, d.message)
            st = S.pending_status(wl, d.reason, d.message, self.clock.time_ns())
            self._apply_status(t, wl, Write.PENDING, st, PRIO_PENDING)

    def _status_pass(self) -> None:
        eng = self.engine
        assert eng is not None
        now_ns = self.clock.time_ns()
        cq_pending: dict[str, int] = {}
        cq_admitted: dict[str, int] = {}
        cq_usage: dict[str, dict[str, dict[str, int]]] = {}
        lq_pending: dict[str, int] = {}
        lq_admitted: dict[str, int] = {}
        lq_usage: dict[str, dict[str, dict[str, int]]] = {}
        for key, t in self.tracks.items():
            if not t.in_engine:
                continue
            m = eng.workload(key)
            if m is None:
                continue
            lqk = f"{m.namespace}/{m.queue_name}"
            if t.phase == Phase.PENDING:
                queue = self.cache.lqs.get(lqk)
                lq_pending[lqk] = lq_pending.get(lqk, 0) + 1
                if queue is not None:
                    cq_pending[queue.cluster_queue] = cq_pending.get(queue.cluster_queue, 0) + 1
            elif t.adm_cq:
                cq_admitted[t.adm_cq] = cq_admitted.get(t.adm_cq, 0) + 1
                lq_admitted[lqk] = lq_admitted.get(lqk, 0) + 1
                for usage in (cq_usage.setdefault(t.adm_cq, {}), lq_usage.setdefault(lqk, {})):
                    for f, r, v in t.adm_usage:
                        fr = usage.setdefault(f, {})
                        fr[r] = fr.get(r, 0) + v
        for name, cq in self.cache.objs["cq"].items():
            self._cq_metrics(
                name, cq, cq_pending.get(name, 0), cq_admitted.get(name, 0), cq_usage.get(name, {})
            )
            if f"#cq/{name}" in self.inflight or ("cq", name) in self.cache.unconverted:
                continue
            if self._queue_finalizer(f"#cq/{name}", CLUSTER_QUEUES, cq, in_use=cq_admitted.get(name, 0) > 0):
                continue
            st = S.cluster_queue_status(
                cq,
                cq_pending.get(name, 0),
                cq_admitted.get(name, 0),
                cq_usage.get(name, {}),
                self._cq_active(name, cq),
                now_ns,
            )
            if S.status_differs(cq.get("status"), st):
                self._write_queue_status(f"#cq/{name}", CLUSTER_QUEUES, cq, st)
        for key, lq in self.cache.objs["lq"].items():
            cqname = (lq.get("spec") or {}).get("clusterQueue", "")
            ns, name = key.split("/", 1)
            self.metrics.local_queue_pending_workloads.labels(name, ns, "active").set(lq_pending.get(key, 0))
            self.metrics.local_queue_reserving_active_workloads.labels(name, ns).set(lq_admitted.get(key, 0))
            if f"#lq/{key}" in self.inflight:
                continue
            st = S.local_queue_status(
                lq,
                self.cache.objs["cq"].get(cqname),
                lq_pending.get(key, 0),
                lq_admitted.get(key, 0),
                lq_usage.get(key, {}),
                self._lq_active(lq),
                now_ns,
            )
            if S.status_differs(lq.get("status"), st):
                self._write_queue_status(f"#lq/{key}", LOCAL_QUEUES, lq, st)
        used_flavors = {
            f.name for cq in self.cache.cqs.values() for g in cq.resource_groups for f in g.flavors
        }
        for name, rf in self.cache.objs["flavor"].items():
            if f"#rf/{name}" not in self.inflight:
                self._queue_finalizer(f"#rf/{name}", RESOURCE_FLAVORS, rf, in_use=name in used_flavors)

    def _cq_active(self, name: str, cq: JSON) -> tuple[bool, str, str]:
        if _deleting(cq):
            return False, "Terminating", "Can't admit new workloads; clusterQueue is terminating"
        m = self.cache.cqs.get(name)
        if m is None:
            return False, "Invalid", "Can't admit new workloads: the ClusterQueue is invalid"
        # stopped, missing flavors or checks, MultiKueue rules (clusterqueue.go inactiveReason)
        known = ClusterState(resource_flavors=self.cache.flavors, admission_checks=self.cache.acs)
        return S.cluster_queue_readiness(m, known).as_tuple()

    def _lq_active(self, lq: JSON) -> tuple[bool, str, str]:
        cqname = (lq.get("spec") or {}).get("clusterQueue", "")
        if (lq.get("spec") or {}).get("stopPolicy", "None") not in ("None", None):
            return False, "Stopped", "LocalQueue is stopped"
        cq = self.cache.objs["cq"].get(cqname)
        if cq is None:
            return False, "ClusterQueueDoesNotExist", "Can't submit new workloads to clusterQueue"
        if not self._cq_active(cqname, cq)[0]:
            return False, "ClusterQueueIsInactive", "Can't submit new workloads to clusterQueue"
        return True, "Ready", "Can submit new workloads to localQueue"

    def _cq_metrics(
        self, name: str, cq: JSON, pending: int, admitted: int, usage: dict[str, dict[str, int]]
    ) -> None:
        m = self.metrics
        m.pending_workloads.labels(name, "active").set(pending)
        m.reserving_active_workloads.labels(name).set(admitted)
        m.admitted_active_workloads.labels(name).set(admitted)
        active = self._cq_active(name, cq)
        for st in ("pending", "active", "terminating"):
            on = (
                (st == "active" and active[0])
                or (st == "terminating" and _deleting(cq))
                or (st == "pending" and not active[0] and not _deleting(cq))
            )
            m.cluster_queue_status.labels(name, st).set(1 if on else 0)
        model = self.cache.cqs.get(name)
        if model is None:
            return
        cohort = model.cohort or ""
        for g in model.resource_groups:
            for fq in g.flavors:
                for rq in fq.resources:
                    labels = (cohort, name, fq.name, rq.name)
                    # Kueue reports quantities as numbers of the base unit (cores, bytes)
                    unit = 1000.0 if rq.name == "cpu" else 1.0
                    v = usage.get(fq.name, {}).get(rq.name, 0) / unit
                    m.cluster_queue_resource_usage.labels(*labels).set(v)
                    m.cluster_queue_resource_reservation.labels(*labels).set(v)
                    m.cluster_queue_nominal_quota.labels(*labels).set(rq.nominal / unit)
                    if rq.borrowing_limit is not None:
                        m.cluster_queue_borrowing_limit.labels(*labels).set(rq.borrowing_limit / unit)
                    if rq.lending_limit is not None:
                        m.cluster_queue_lending_limit.labels(*labels).set(rq.lending_limit / unit)

    def _queue_finalizer(self, key: str, res: Resource, obj: JSON, *, in_use: bool) -> bool:
        """Kueue's resource-in-use finalizer on ClusterQueues and ResourceFlavors:
        added while they live, removed once they are deleted and unused."""
        md = obj["metadata"]
        fins = list(md.get("finalizers") or [])
        has = J.RESOURCE_IN_USE in fins
        if _deleting(obj):
            if not has or in_use:
                return False
            fins.remove(J.RESOURCE_IN_USE)
        elif has:
            return False
        else:
            fins.append(J.RESOURCE_IN_USE)
        patch = {"metadata": {"resourceVersion": md["resourceVersion"], "finalizers": fins or None}}
        name = md["name"]
        self._submit(
            key,
            Write.QUEUE_FINALIZER,
            PRIO_CREATE,
            lambda c: c.patch(res, name, patch),
            (res, name, None),
            (self._kind_of(res), name),
        )
        return True

    @staticmethod
    def _kind_of(res: Resource) -> str:
        return {"clusterqueues": "cq", "localqueues": "lq", "resourceflavors": "flavor"}[res.plural]

    def _write_queue_status(self, key: str, res: Resource, obj: JSON, st: JSON) -> None:
        md = obj["metadata"]
        name, ns = md["name"], md.get("namespace")
        patch = {"status": st}
        okey = f"{ns}/{name}" if ns else name
        self._submit(
            key,
            Write.QUEUE_STATUS,
            PRIO_STATUS,
            lambda c: c.patch(res, name, patch, namespace=ns, sub="status"),
            (res, name, ns),
            (self._kind_of(res), okey),
        )
