"""The reconciler: Kueue's scheduler against a real cluster. This module is
the coordinator: :class:`Controller` makes its parts, each an object given
what it depends on (docs/architecture/index.md, the controller file by
file): :mod:`.intake` (informer events into the cache), :mod:`.loop` (the
loop and leadership), :mod:`.scheduling` (the engine's workloads and
cycles), :mod:`.flow` (the per-workload flow and the admission write),
:mod:`.queues` (queue status and finalizers), :mod:`.ungater` (TAS pods),
:mod:`.outbox` (writes and Events), on the informer cache :mod:`.cache`;
what several parts share is one :class:`.loop_state.LoopState`.

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
from .cache import ALL_KINDS, Cache
from .events import EventRecorder
from .flow import WorkloadFlow
from .intake import Intake
from .job_kinds import JOB_KINDS
from .loop_state import LoopState
from .outbox import Outbox
from .prometheus import Metrics
from .queue_status import QueueStatus
from .scheduling import Scheduler
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


class Controller:
    """kueue-fast standing in for Kueue's scheduler in a cluster: its parts
    made and wired, their threads started and stopped."""

    def __init__(
        self,
        client: KubeClient,
        options: Options | None = None,
        *,
        clock: Clock | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.client = client
        opts = self.opts = options or Options()
        clock = self.clock = clock or Clock()
        metrics = self.metrics = metrics or Metrics()
        self.identity = opts.identity or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
        client.observers.append(metrics.observe_request)
        inbox: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()  # the loop's
        self.inbox = inbox
        self.slim = Slimmer()
        self.writer = Writer(client, inbox.put, workers=opts.workers)
        self.events = self._event_recorder()
        self.cache = Cache()
        # the parts; what several of them read and write is in `shared`
        shared = self.shared = LoopState(clock, leader=not opts.leader_elect)
        outbox = Outbox(shared, self.writer, self.events)
        self.queues = QueueStatus(shared, self.cache, outbox, opts, clock, metrics)
        self.ungater = TopologyUngater(shared, self.cache, outbox)
        self.scheduler = Scheduler(shared, self.cache, self.queues, outbox, opts, clock, metrics)
        self.flow = WorkloadFlow(
            shared, self.cache, self.scheduler, self.queues, self.ungater, outbox, opts, clock, metrics
        )
        self.intake = Intake(shared, self.cache, self.slim, self.queues, self.ungater)
        self.loop = Loop(
            shared,
            inbox,
            self.intake,
            self.scheduler,
            self.flow,
            self.queues,
            self.writer,
            self.events,
            client,
            opts,
            clock,
            metrics,
        )
        self.informers = self._informers()
        self.elector = self._elector()
        if self.elector is None:
            metrics.is_leader.set(1)  # no election: this instance decides

    @property
    def unconverted(self) -> set[tuple[str, str]]:
        """(kind, key) of the objects left alone (Cache.invalid)."""
        return self.cache.unconverted

    @property
    def leader(self) -> bool:
        """This instance holds the Lease (or runs without election)."""
        return self.shared.leader

    @property
    def is_leader(self) -> bool:
        """It leads and its engine is built: it decides."""
        return self.shared.leader and self.shared.engine is not None

    @property
    def fatal(self) -> BaseException | None:
        """What crashed the scheduling loop, if it did."""
        return self.loop.fatal

    @property
    def preemptions(self) -> int:
        return self.scheduler.preemptions

    def _elector(self) -> LeaderElector | None:
        if not self.opts.leader_elect:
            return None
        inbox = self.inbox
        return LeaderElector(
            self.client,
            namespace=self.opts.lease_namespace,
            name=self.opts.lease_name,
            identity=self.identity,
            on_change=lambda leading: inbox.put(("leader", leading)),
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

    def _informers(self) -> list[Informer]:
        s = self.slim
        inbox = self.inbox

        def sink(kind: str, etype: str, key: str, obj: JSON | None) -> None:
            inbox.put(("obj", kind, etype, key, obj))

        def informer(res: Resource, kind: str, slim: Callable[[JSON], JSON], **kw: Any) -> Informer:
            return Informer(
                self.client,
                res,
                kind,
                sink,
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

    # --- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> Controller:
        self.writer.start()
        if self.events is not None:
            self.events.start()
        for inf in self.informers:
            inf.start()
        self.loop.thread.start()
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
        thread = self.loop.thread
        self.loop.stopped.set()
        self.inbox.put(("stop",))
        if thread.is_alive() and threading.current_thread() is not thread:
            thread.join(timeout)
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
        self.loop.stopped.set()
        self.inbox.put(("stop",))
        if self.elector is not None:
            self.elector.stop_event.set()
        if self.events is not None:
            self.events.stop()
        self.writer.stop()

    def readiness(self) -> list[tuple[str, str]]:
        """The /readyz checks as (name, why not, "" when passing). A standby
        is ready: readiness never requires leading (a rolling update would
        wait forever for the new pod); one that could not take over (its
        Lease unreachable) is not."""
        missing = [k for k in ALL_KINDS if k not in self.shared.synced]
        checks = [("informers-synced", f"waiting for {', '.join(missing)}" if missing else "")]
        if self.elector is not None:
            checks.append(("leader-election", self.elector.readiness_error()))
        return checks

    def ready(self) -> bool:
        return not any(err for _, err in self.readiness())

    def healthy(self) -> bool:
        loop = self.loop
        return loop.thread.is_alive() and self.clock.monotonic() - loop.heartbeat < 60 and loop.fatal is None


def default_identity() -> str:
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


__all__ = ["ALL_KINDS", "Controller", "Options", "Track", "default_identity", "field"]
