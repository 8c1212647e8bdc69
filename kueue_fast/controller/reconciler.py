"""The reconciler: Kueue's scheduler against a real cluster. This module is
the coordinator: :class:`Controller` sets up its parts and routes what the
informers deliver; the parts are its mixins (docs/architecture/index.md, the controller file by file):
:mod:`.loop` (the loop and leadership), :mod:`.scheduling` (the engine's
workloads and cycles), :mod:`.flow` (the per-workload flow) and
:mod:`.queues` (queue status and finalizers), on the informer cache
:mod:`.cache`.

Shaped like Kueue's own loop (pkg/scheduler/scheduler.go, pkg/controller/core):

* informers (one per kind) list and watch, and put every change on one
  queue;
* one scheduling loop thread owns all state: the objects as last seen, the
  engine, and one :class:`Track` per Job/Workload pair. It applies the
  queued changes, runs scheduling cycles, and decides the next write for
  each pair whose state moved;
* the writer (:mod:`.writer`) is the only component that writes; it posts
  each result back to the loop.

The engine *assumes* an admission the moment a cycle decides it; the API
writes follow. A write that fails for good undoes the assumption (the
admission is evicted and released in the engine, the workload requeued).

Safety (nothing lost, nothing double counted):

* the engine is built only when every informer has listed its kind and this
  instance leads, from the Workloads' admissions as the API server has them;
* a Job starts only after its Workload's admission is written;
* a victim's quota is released in the engine only after its Job stopped and
  its admission was removed in the API server, so that at no moment do the
  Workloads that hold an admission exceed quota, whenever the controller is
  killed;
* every write names the resourceVersion it was decided on (409 means
  "decide again on fresh state"); creates are idempotent (an existing
  Workload of the same Job is adopted);
* only the leader decides and writes; a write of an older leadership term
  is ignored when it completes.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..api.model import ResourceRules, WaitForPodsReadyConfig
from ..kube.client import (
    ADMISSION_CHECKS,
    CLUSTER_QUEUES,
    COHORTS,
    LOCAL_QUEUES,
    NAMESPACES,
    NODES,
    POD_PRIORITY_CLASSES,
    PODS,
    PRIORITY_CLASSES,
    RESOURCE_FLAVORS,
    TOPOLOGIES,
    WORKLOADS,
    KubeClient,
    Resource,
)
from ..kube.informers import Informer, Slimmer, job_selector
from ..kube.leader_election import Clock, LeaderElector
from . import job_kinds as J
from .cache import ALL_KINDS, CAPACITY_KINDS, CONFIG_KINDS, Cache, job_key, owner_job
from .events import EventRecorder
from .flow import WorkloadFlow
from .job_kinds import JOB_KINDS
from .prometheus import Metrics
from .queue_status import QUEUE_KINDS, QueueCounts, QueueStatus
from .scheduling import Scheduling
from .scheduling_loop import Loop
from .track import JSON, Track
from .ungater import TopologyUngater
from .writer import Writer

log = logging.getLogger("kueue_fast.controller")


@dataclass
class Options:
    engine: str | None = None
    identity: str = ""
    leader_elect: bool = True
    lease_namespace: str = "kueue-system"
    lease_name: str = "kueue-fast-leader"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    workers: int = 32
    # a queue's status is written this long after the first change of its
    # Workloads (Kueue's constants.UpdatesBatchPeriod), a pending reason this
    # long after the try that gave it (queues.py)
    status_interval: float = 1.0
    capacity_interval: float = 1.0  # seconds between rebuilds of the engine for node capacity changes (TAS)
    pending_interval: float = 1.0
    max_cycle_time: float = 0.05  # seconds of cycles before the loop looks at events again
    page_size: int = 500
    watch_timeout: int = 300
    missing_kind_retry: float = 30.0  # seconds between looks for a job kind whose CRD is not installed
    max_queued: int = 64  # writes waiting in the writer's queue at most
    max_failures: int = 5  # failed admission writes before a workload is set aside
    quarantine: float = 60.0  # seconds it stays aside (unless it changes)
    events: bool = True  # Kueue's Events on Workloads and Jobs
    events_qps: float = 100.0  # their own write budget, apart from the client's
    events_burst: int = 300
    # Kueue's Configuration (--config): its resources section (transformations,
    # excluded prefixes) decides what pending workloads are charged;
    # waitForPodsReady (PodsReady from the jobs, blockAdmission, timeouts)
    resources: ResourceRules = field(default_factory=ResourceRules)
    wait_for_pods_ready: WaitForPodsReadyConfig | None = None
    # the engine is rebuilt from the Workloads through the loader's bulk path
    # (state.workload_models); False parses each on its own (tests, bench)
    bulk_start: bool = True


class Controller(Loop, Scheduling, WorkloadFlow, QueueStatus, TopologyUngater):
    """kueue-fast standing in for Kueue's scheduler in a cluster."""

    def __init__(
        self,
        client: KubeClient,
        options: Options | None = None,
        *,
        clock: Clock | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.client = client
        self.opts = options or Options()
        self.clock = clock or Clock()
        self.metrics = metrics or Metrics()
        self.identity = self.opts.identity or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
        client.observers.append(self.metrics.observe_request)
        self.q = queue.SimpleQueue()
        self.slim = Slimmer()
        self.writer = Writer(client, self.q.put, workers=self.opts.workers)
        self.cache = Cache()
        self.tracks = {}
        self._usages = {}
        self.dirty, self.hot, self.inflight = {}, {}, {}
        self.timers = []
        self.synced = set()
        self.engine = None
        self.leader = not self.opts.leader_elect
        self.epoch = 0
        self.config_dirty = self.sched_dirty = self.capacity_dirty = False
        self.last_capacity = self.last_cycle = 0.0
        self.touched, self.counts, self.pending_due, self.lanes = set(), QueueCounts(), {}, {}
        self.queue_due = {kind: {} for kind in QUEUE_KINDS}
        self.heartbeat = self.clock.monotonic()
        self.stopped = threading.Event()
        self.fatal = None
        self.admissions = self.preemptions = 0
        self.informers = self._informers()
        self.elector = self._elector()
        if self.elector is None:
            self.metrics.is_leader.set(1)  # no election: this instance decides
        self.events = self._event_recorder()
        self.thread = threading.Thread(target=self._run, name="scheduling-loop", daemon=True)

    @property
    def unconverted(self) -> set[tuple[str, str]]:
        """(kind, key) of the objects left alone (Cache.invalid)."""
        return self.cache.unconverted

    def _elector(self) -> LeaderElector | None:
        if not self.opts.leader_elect:
            return None
        return LeaderElector(
            self.client,
            namespace=self.opts.lease_namespace,
            name=self.opts.lease_name,
            identity=self.identity,
            on_change=lambda leading: self.q.put(("leader", leading)),
            lease_duration=self.opts.lease_duration,
            renew_deadline=self.opts.renew_deadline,
            retry_period=self.opts.retry_period,
            clock=self.clock,
        )

    def _event_recorder(self) -> EventRecorder | None:
        if not self.opts.events:
            return None
        m = self.metrics
        return EventRecorder(
            self.client,
            qps=self.opts.events_qps,
            burst=self.opts.events_burst,
            time_ns=self.clock.time_ns,
            on_record=lambda type_, reason: m.events_total.labels(type_, reason).inc(),
            on_drop=m.events_dropped_total.inc,
        )

    # --- informers ---------------------------------------------------------------------------------

    def _informers(self) -> list[Informer]:
        s = self.slim

        def informer(res: Resource, kind: str, slim: Callable[[JSON], JSON], **kw: Any) -> Informer:
            return Informer(
                self.client,
                res,
                kind,
                self._sink,
                slim,
                page_size=self.opts.page_size,
                watch_timeout=self.opts.watch_timeout,
                **kw,
            )

        return [
            informer(RESOURCE_FLAVORS, "flavor", s.config),
            informer(CLUSTER_QUEUES, "cq", s.config),
            informer(COHORTS, "cohort", s.config),
            informer(LOCAL_QUEUES, "lq", s.config),
            informer(PRIORITY_CLASSES, "wpc", s.config),
            informer(POD_PRIORITY_CLASSES, "pc", s.config),
            informer(NAMESPACES, "namespace", s.namespace),
            # AdmissionChecks: optional (CRDs installed before kueue-fast read them lack the kind)
            informer(
                ADMISSION_CHECKS, "ac", s.config, optional=True, retry_missing=self.opts.missing_kind_retry
            ),
            # Topology Aware Scheduling: Topologies (optional like AdmissionChecks), Nodes, Pods
            informer(
                TOPOLOGIES, "topology", s.config, optional=True, retry_missing=self.opts.missing_kind_retry
            ),
            informer(NODES, "node", s.node),
            informer(PODS, "pod", s.pod),
            informer(WORKLOADS, "workload", s.workload),
            *(
                informer(
                    k.resource,
                    k.name,
                    functools.partial(k.slim, s),
                    label_selector=job_selector(),
                    optional=k.optional,
                    retry_missing=self.opts.missing_kind_retry,
                )
                for k in JOB_KINDS
            ),
        ]

    def _sink(self, kind: str, etype: str, key: str, obj: JSON | None) -> None:
        self.q.put(("obj", kind, etype, key, obj))

    # --- objects in ------------------------------------------------------------------------------------

    def _on_object(self, kind: str, etype: str, key: str, obj: JSON | None) -> None:
        """An informer's event (or an object a write returned) into the cache,
        and the pairs it concerns marked to reconcile."""
        if etype == "SYNCED":
            self.synced.add(kind)
            return
        changed, old = self.cache.store(kind, etype, key, obj)
        if not changed:
            return
        if etype == "DELETED":
            obj = None
        if kind in CONFIG_KINDS:
            if kind in ("cq", "lq", "flavor"):  # its status or finalizers may need a write
                self._queue_changed("rf" if kind == "flavor" else kind, key)
            if self.cache.apply_config(kind, key, obj, old):
                self.config_dirty = True
        elif kind == "workload":
            t = self._track(key)
            if obj is not None:
                jk = owner_job(obj)
                if jk is not None:
                    t.job_key = jk
                    self.cache.job_unit[jk] = key
            self.dirty[key] = None
        elif kind in J.BY_NAME:
            self._on_job(J.BY_NAME[kind], key, obj)
        elif kind in CAPACITY_KINDS:
            if self.cache.apply_capacity(kind, key, obj) and self.cache.tas:
                self.capacity_dirty = True  # the nodes' free capacity changed (applied by _sync_config)
            if kind == "pod":
                self._on_tas_pod(key, obj)

    def _on_job(self, kind: J.JobKind, key: str, obj: JSON | None) -> None:
        """A job's change dirties the Workload it is queued as (and the one
        it was queued as, when that changed)."""
        jk = job_key(kind, key)
        job_unit = self.cache.job_unit
        if obj is not None:
            ukey = kind.workload_key(obj)
            prev = job_unit.get(jk)
            if prev is not None and prev != ukey:
                self.dirty[prev] = None
            job_unit[jk] = ukey
            self._track(ukey).job_key = jk
            self.dirty[ukey] = None
        else:
            ukey = job_unit.get(jk, "")
            if ukey:
                self.dirty[ukey] = None

    def _track(self, key: str) -> Track:
        t = self.tracks.get(key)
        if t is None:
            t = self.tracks[key] = Track(key)
        return t


def default_identity() -> str:
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


__all__ = ["ALL_KINDS", "Controller", "Options", "Track", "default_identity", "field"]
