"""Queue status and finalizers: the pending reasons written on Workloads,
ClusterQueue and LocalQueue status and metrics, and Kueue's resource-in-use
finalizer on ClusterQueues and ResourceFlavors (pkg/controller/core
clusterqueue_controller.go, localqueue_controller.go,
resourceflavor_controller.go). :class:`QueueStatus` is a part of the
controller, run from every step of its loop; it reads the Tracks and the
engine (:class:`.loop_state.LoopState`), and writes through the outbox.

Only what changed is looked at: the Workloads a cycle tried or the loop
reconciled (``pending_due``), the Tracks whose place in the engine may have
moved (``touched``: their counts are kept per queue in :class:`QueueCounts`),
and the queues whose counts or objects changed (``queue_due``). Kueue's
rules decide what is written and when:

* a pending reason is written when a try leaves the Workload with another
  reason or message than it has (scheduler.go requeueAndUpdate,
  workload.UnsetQuotaReservationWithCondition: apimeta.SetStatusCondition
  reports no change otherwise), ``pending_interval`` after the try with the
  latest message, and not at all if the Workload is no longer pending then;
* a queue's status is written ``status_interval`` after the first change of
  its Workloads with the counts of that moment, only when it differs
  (clusterqueue_controller.go / localqueue_controller.go: Workload events
  enqueue the queue with AddAfter(constants.UpdatesBatchPeriod, 1 s);
  updateCqStatusIfChanged, updateStatusIfChanged);
* one write of each kind at a time (pending reasons, ClusterQueue status,
  LocalQueue status), as Kueue's scheduler writes pending reasons one after
  the other in its loop and its queue controllers reconcile one queue at a
  time (groupKindConcurrency 1 in Kueue's default Configuration and in
  minimalkueue);
* and they take the client's spare budget (writer.SPARE_WAIT): never a
  token an admission, an eviction or a job's start waits for, unless they
  waited that long.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..api.model import ClusterState
from ..cluster import queue_readiness as Q, status_writer as S
from ..kube import objects as state
from ..kube.client import CLUSTER_QUEUES, LOCAL_QUEUES, RESOURCE_FLAVORS, Resource
from . import job_kinds as J
from .track import JSON, Phase, Write
from .writer import PRIO_CREATE, PRIO_INFORM, SPARE_WAIT

if TYPE_CHECKING:
    from ..kube.leader_election import Clock
    from .cache import Cache
    from .loop_state import LoopState
    from .outbox import Outbox
    from .prometheus import Metrics
    from .reconciler import Options

_deleting = state.deleting

Usage = tuple[tuple[str, str, int], ...]  # (flavor, resource, amount)
# what one Workload adds to its queues: (LocalQueue key, ClusterQueue or None,
# holds quota (else pending), the usage it holds)
Counted = tuple[str, "str | None", bool, Usage]
QUEUE_KINDS = ("cq", "lq", "rf")  # queue_due's kinds: ClusterQueues, LocalQueues, ResourceFlavors


@dataclass
class Tally:
    """One queue's pending and quota-holding Workloads and their usage."""

    pending: int = 0
    admitted: int = 0
    usage: dict[str, dict[str, int]] = field(default_factory=dict)  # flavor -> resource -> amount


class QueueCounts:
    """The counts of every ClusterQueue and LocalQueue, kept one Workload at
    a time: ``set`` replaces what a Workload adds (None: nothing) and says
    which queues changed. The same sums as counting every Workload anew."""

    def __init__(self) -> None:
        self.entries: dict[str, Counted] = {}
        self.cq: dict[str, Tally] = {}
        self.lq: dict[str, Tally] = {}

    def set(self, key: str, entry: Counted | None) -> list[tuple[str, str]]:
        old = self.entries.get(key)
        if old == entry:
            return []
        changed: list[tuple[str, str]] = []
        if old is not None:
            del self.entries[key]
            changed += self._add(old, -1)
        if entry is not None:
            self.entries[key] = entry
            changed += self._add(entry, 1)
        return changed

    def _add(self, entry: Counted, sign: int) -> list[tuple[str, str]]:
        lqk, cq, holds, usage = entry
        tallies = [("lq", lqk, self.lq)] + ([("cq", cq, self.cq)] if cq else [])
        for _, name, by_name in tallies:
            t = by_name.get(name)
            if t is None:
                t = by_name[name] = Tally()
            if not holds:
                t.pending += sign
                continue
            t.admitted += sign
            for f, r, v in usage:
                fr = t.usage.setdefault(f, {})
                fr[r] = fr.get(r, 0) + sign * v
        return [(kind, name) for kind, name, _ in tallies]


_EMPTY = Tally()


class QueueStatus:
    """The queue status pass: what changed since it was looked at, and its writes."""

    def __init__(
        self,
        shared: LoopState,
        cache: Cache,
        outbox: Outbox,
        opts: Options,
        clock: Clock,
        metrics: Metrics,
    ) -> None:
        self.shared = shared
        self.cache = cache
        self.outbox = outbox
        self.opts = opts
        self.clock = clock
        self.metrics = metrics
        self.touched: set[str] = set()  # Workload keys whose counts in their queues may have moved
        self.counts = QueueCounts()
        self.pending_due: dict[str, float] = {}  # Workload key -> when to look at its pending reason
        # "cq" | "lq" | "rf" -> name -> when to look at it
        self.queue_due: dict[str, dict[str, float]] = {kind: {} for kind in QUEUE_KINDS}
        self.lanes: dict[str, tuple[str, str]] = {}  # "pending" | "cq" | "lq" -> (key, write) last sent

    # --- what changed ------------------------------------------------------------------------------

    def touch(self, *keys: str) -> None:
        """These Workloads' place in their queues' counts may have moved."""
        self.touched.update(keys)

    def restart(self) -> None:
        """A new engine: the counts made anew, everything looked at again."""
        self.counts = QueueCounts()
        self.touch_all()

    def touch_all(self) -> None:
        """Everything may have changed (a new term, new configuration)."""
        tracks = self.shared.tracks
        self.touched.update(tracks)
        for key, t in tracks.items():
            if t.phase == Phase.PENDING:
                self.pending_tried(key)
        for kind, objs in (("cq", "cq"), ("lq", "lq"), ("rf", "flavor")):
            for name in self.cache.objs[objs]:
                self.queue_changed(kind, name)

    def queue_changed(self, kind: str, name: str) -> None:
        """Look at queue ``name`` one batch period from its first change."""
        self.queue_due[kind].setdefault(name, self.clock.monotonic() + self.opts.status_interval)

    def pending_tried(self, key: str) -> None:
        """A pending Workload that may have a new reason (a cycle tried it,
        it changed): looked at one pending_interval from now."""
        self.pending_due.setdefault(key, self.clock.monotonic() + self.opts.pending_interval)

    def next_due(self) -> list[float]:
        """When the passes have something to do next, for the loop's wait: the
        first entry of each due dict is its earliest (one delay each); a kind
        whose write is in flight waits for its result instead."""
        dues = []
        for lane, due in (("pending", self.pending_due), *self.queue_due.items()):
            if due and (lane == "rf" or self._lane_free(lane)):
                dues.append(next(iter(due.values())))
        return dues

    def _lane_free(self, lane: str) -> bool:
        """No write of this kind in flight (one at a time: module docstring)."""
        held = self.lanes.get(lane)
        return held is None or self.shared.inflight.get(held[0]) != held[1]

    # --- pending reasons ---------------------------------------------------------------------------

    def pending_pass(self) -> None:
        """The pending reasons due, until one is written (one at a time)."""
        due = self.pending_due
        if not due or not self._lane_free("pending"):
            return
        now = self.clock.monotonic()
        while due:
            key, when = next(iter(due.items()))
            if when > now:
                return
            del due[key]
            if self._write_pending(key):
                return

    def _write_pending(self, key: str) -> bool:
        """Kueue's QuotaReserved=False reason and message on a pending
        Workload the scheduler tried, when they differ from what it has.
        True when written."""
        eng = self.shared.the_engine()
        t = self.shared.tracks.get(key)
        if t is None or t.phase != Phase.PENDING or not t.in_engine or key in self.shared.inflight:
            return False  # a write in flight comes back to WorkloadFlow.reconcile, which looks again
        d = eng.decision(key)
        if d.state != "pending" or not d.message:
            return False
        if d.reason == S.NOT_TRIED and d.message.startswith("waiting for its turn"):
            return False
        if t.pending_written == (d.reason, d.message):
            return False
        t.pending_written = (d.reason, d.message)
        wl = self.cache.workloads.get(key)
        if wl is None or S.pending_matches(wl, d.reason, d.message):
            return False
        st = S.pending_status(wl, d.reason, d.message, self.clock.time_ns())
        self.outbox.apply_status(t, wl, Write.PENDING, st, PRIO_INFORM, spare_wait=SPARE_WAIT)
        self.lanes["pending"] = (key, Write.PENDING.value)
        return True

    # --- queues ------------------------------------------------------------------------------------

    def counted(self, key: str) -> Counted | None:
        """What a Workload adds to its queues' counts: pending in its
        LocalQueue (and that queue's ClusterQueue), or holding quota in the
        ClusterQueue it was admitted to (also while its eviction is written)."""
        eng = self.shared.engine
        t = self.shared.tracks.get(key)
        if eng is None or t is None or not t.in_engine:
            return None
        m = eng.workload(key)
        if m is None:
            return None
        lqk = f"{m.namespace}/{m.queue_name}"
        if t.phase == Phase.PENDING:
            lq = self.cache.lqs.get(lqk)
            return (lqk, lq.cluster_queue if lq is not None else None, False, ())
        if t.adm_cq:
            return (lqk, t.adm_cq, True, t.adm_usage)
        return None

    def status_pass(self) -> None:
        """The touched Workloads into the counts; the queues due looked at,
        one status write of each kind at a time."""
        counts = self.counts
        for key in self.touched:
            for kind, name in counts.set(key, self.counted(key)):
                self.queue_changed(kind, name)
        self.touched.clear()
        now = self.clock.monotonic()
        for kind in QUEUE_KINDS:
            due = self.queue_due[kind]
            while due and (kind == "rf" or self._lane_free(kind)):
                name, when = next(iter(due.items()))
                if when > now:
                    break
                del due[name]
                if kind == "cq":
                    self._cluster_queue_due(name)
                elif kind == "lq":
                    self._local_queue_due(name)
                else:
                    self._flavor_due(name)

    def _cluster_queue_due(self, name: str) -> None:
        cq = self.cache.objs["cq"].get(name)
        if cq is None:
            return
        tally = self.counts.cq.get(name, _EMPTY)
        self._cq_metrics(name, cq, tally.pending, tally.admitted, tally.usage)
        key = f"#cq/{name}"
        if key in self.shared.inflight or ("cq", name) in self.cache.unconverted:
            return  # a write in flight: its result makes the queue due again (WorkloadFlow.on_done)
        if self._queue_finalizer(key, CLUSTER_QUEUES, cq, in_use=tally.admitted > 0):
            return
        st = Q.cluster_queue_status(
            cq, tally.pending, tally.admitted, tally.usage, self._cq_active(name, cq), self.clock.time_ns()
        )
        if Q.status_differs(cq.get("status"), st):
            self._write_queue_status(key, CLUSTER_QUEUES, cq, st)
            self.lanes["cq"] = (key, Write.QUEUE_STATUS.value)

    def _local_queue_due(self, lqk: str) -> None:
        lq = self.cache.objs["lq"].get(lqk)
        if lq is None:
            return
        tally = self.counts.lq.get(lqk, _EMPTY)
        ns, name = lqk.split("/", 1)
        self.metrics.local_queue_pending_workloads.labels(name, ns, "active").set(tally.pending)
        self.metrics.local_queue_reserving_active_workloads.labels(name, ns).set(tally.admitted)
        key = f"#lq/{lqk}"
        if key in self.shared.inflight:
            return
        cqname = (lq.get("spec") or {}).get("clusterQueue", "")
        st = Q.local_queue_status(
            lq,
            self.cache.objs["cq"].get(cqname),
            tally.pending,
            tally.admitted,
            tally.usage,
            self._lq_active(lq),
            self.clock.time_ns(),
        )
        if Q.status_differs(lq.get("status"), st):
            self._write_queue_status(key, LOCAL_QUEUES, lq, st)
            self.lanes["lq"] = (key, Write.QUEUE_STATUS.value)

    def _flavor_due(self, name: str) -> None:
        rf = self.cache.objs["flavor"].get(name)
        if rf is None or f"#rf/{name}" in self.shared.inflight:
            return
        used = any(
            f.name == name for cq in self.cache.cqs.values() for g in cq.resource_groups for f in g.flavors
        )
        self._queue_finalizer(f"#rf/{name}", RESOURCE_FLAVORS, rf, in_use=used)

    def _cq_active(self, name: str, cq: JSON) -> tuple[bool, str, str]:
        if _deleting(cq):
            return False, "Terminating", "Can't admit new workloads; clusterQueue is terminating"
        m = self.cache.cqs.get(name)
        if m is None:
            return False, "Invalid", "Can't admit new workloads: the ClusterQueue is invalid"
        # stopped, missing flavors or checks, MultiKueue rules (clusterqueue.go inactiveReason)
        known = ClusterState(resource_flavors=self.cache.flavors, admission_checks=self.cache.acs)
        return Q.cluster_queue_readiness(m, known).as_tuple()

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
        self.outbox.submit(
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
        self.outbox.submit(
            key,
            Write.QUEUE_STATUS,
            PRIO_INFORM,
            lambda c: c.patch(res, name, patch, namespace=ns, sub="status", spare_wait=SPARE_WAIT),
            (res, name, ns),
            (self._kind_of(res), okey),
        )
