"""The reconciler: Kueue's scheduler against a real cluster.

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

Safety (issue "nothing lost, nothing double counted"):

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

import copy
import functools
import heapq
import logging
import os
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import admission_checks as AC
from .. import status as S
from ..cluster import ADMITTED, RESERVED, Decision
from ..errors import InputError, MissingReferenceError
from ..integrations import Environment
from ..integrations.framework import PRIORITY_LABEL, Patch, PodSetConflict, PodSetInfo, admitted_info
from ..model import ClusterState, Configuration, ResourceRules, WaitForPodsReadyConfig, Workload
from . import jobs as J
from . import state
from .engine import EngineHandle
from .events import ADMISSION, NORMAL, WARNING, WORKLOAD_CONTROLLER, EventRecorder
from .informers import Informer, Slimmer, job_selector
from .jobs import JOB_KINDS, JobKind
from .kube import (
    ADMISSION_CHECKS,
    CLUSTER_QUEUES,
    COHORTS,
    KUEUE_API,
    LOCAL_QUEUES,
    NAMESPACES,
    POD_PRIORITY_CLASSES,
    PRIORITY_CLASSES,
    RESOURCE_FLAVORS,
    WORKLOADS,
    KubeClient,
    Resource,
)
from .leader import Clock, LeaderElector
from .metrics import Metrics
from .queues import QueueStatus
from .track import Phase, Then, Track, Write
from .writer import PRIO_ADMISSION, PRIO_CREATE, Conflict, Gone, Op, Writer

log = logging.getLogger("kueue_fast.controller")

JSON = dict[str, Any]

FIELD_MANAGER = "kueue-admission"
QUEUE_FIELD_MANAGER = "kueue-fast"


# "pc": scheduling.k8s.io PriorityClasses (a job's priority may come from its pods')
CONFIG_KINDS = tuple(state.CONFIG_KINDS)
JOB_KIND_NAMES = tuple(k.name for k in JOB_KINDS)
ALL_KINDS = (*CONFIG_KINDS, "workload", *JOB_KIND_NAMES)


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
    status_interval: float = 1.0
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


def _rv_newer(new: JSON, old: JSON | None) -> bool:
    if old is None:
        return True
    a = str(new["metadata"].get("resourceVersion", ""))
    b = str(old["metadata"].get("resourceVersion", ""))
    if a.isdigit() and b.isdigit():
        return int(a) > int(b)
    return a != b


# the controller manages the kinds it has integrations for, whatever a Configuration says
_CONTROLLER_CONFIGURATION = Configuration(frameworks=tuple(k.integration.FRAMEWORK for k in JOB_KINDS))


def _job_key(kind: JobKind, key: str) -> str:
    return f"{kind.name}:{key}"


def _owner_job(wl: JSON) -> str | None:
    """The job key (_job_key) of the job that controls the Workload."""
    owner = J.owner_of(wl)
    return _job_key(*owner) if owner is not None else None


_deleting = state.deleting


class Controller(QueueStatus):
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
        self.q: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.slim = Slimmer()
        self.writer = Writer(client, self.q.put, workers=self.opts.workers)
        # objects as last seen (slimmed), by key
        self.objs: dict[str, dict[str, JSON]] = {k: {} for k in ALL_KINDS}
        self.tombstones: dict[str, dict[str, int]] = {k: {} for k in ALL_KINDS}
        # configuration as model objects
        self.m_flavors: dict[str, Any] = {}
        self.m_cqs: dict[str, Any] = {}
        self.m_cohorts: dict[str, Any] = {}
        self.m_lqs: dict[str, Any] = {}
        self.m_wpcs: dict[str, Any] = {}
        self.m_pcs: dict[str, Any] = {}
        self.m_namespaces: dict[str, Any] = {}
        self.m_acs: dict[str, Any] = {}
        self.tracks: dict[str, Track] = {}
        # (kind, key) of objects stored in v1beta1 and served unconverted: never written
        self.unconverted: set[tuple[str, str]] = set()
        self._usages: dict[tuple[tuple[str, str, int], ...], tuple[tuple[str, str, int], ...]] = {}
        self.job_unit: dict[str, str] = {}
        self.dirty: dict[str, None] = {}  # an ordered set: first dirtied, first reconciled
        # keys whose admission flow moves on (a decision, a write done): before the others
        self.hot: dict[str, None] = {}
        self.inflight: dict[str, str] = {}
        self.timers: list[tuple[float, str]] = []
        self.synced: set[str] = set()
        self.engine: EngineHandle | None = None
        self.leader = not self.opts.leader_elect
        self.epoch = 0
        self.config_dirty = False
        self.sched_dirty = False
        self.queues_dirty = True
        self.last_status = 0.0
        self.last_pending = 0.0
        self.last_cycle = 0.0
        self.heartbeat = self.clock.monotonic()
        self.stopped = threading.Event()
        self.fatal: BaseException | None = None
        self.admissions = 0
        self.preemptions = 0
        self.informers = self._informers()
        self.elector: LeaderElector | None = None
        if self.opts.leader_elect:
            self.elector = LeaderElector(
                client,
                namespace=self.opts.lease_namespace,
                name=self.opts.lease_name,
                identity=self.identity,
                on_change=lambda leading: self.q.put(("leader", leading)),
                lease_duration=self.opts.lease_duration,
                renew_deadline=self.opts.renew_deadline,
                retry_period=self.opts.retry_period,
                clock=self.clock,
            )
        else:
            self.metrics.is_leader.set(1)  # no election: this instance decides
        self.events: EventRecorder | None = None
        if self.opts.events:
            m = self.metrics
            self.events = EventRecorder(
                client,
                qps=self.opts.events_qps,
                burst=self.opts.events_burst,
                time_ns=self.clock.time_ns,
                on_record=lambda type_, reason: m.events_total.labels(type_, reason).inc(),
                on_drop=m.events_dropped_total.inc,
            )
        self.thread = threading.Thread(target=self._run, name="scheduling-loop", daemon=True)

    # --- lifecycle ----------------------------------------------------------------------------------

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

    def start(self) -> Controller:
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
        t = 0.5
        if self.timers:
            t = min(t, max(0.0, self.timers[0][0] - self.clock.monotonic()))
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
        if now - self.last_pending >= self.opts.pending_interval:
            self.last_pending = now
            self._pending_pass()
        if now - self.last_status >= self.opts.status_interval:
            self.last_status = now
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

    def _build_engine(self) -> None:
        """Rebuild the engine from the Workloads as the API server has them,
        before anything is decided."""
        started, cpu = time.perf_counter(), time.thread_time()
        self.epoch += 1
        config = self._config_state()
        admitted_evicting: list[tuple[str, str, str]] = []
        wanted = {
            key: wl for key, wl in self.objs["workload"].items() if self._wants_engine(self._track(key), wl)
        }
        if self.opts.bulk_start:
            wpcs = self.objs["wpc"]
            models, left = state.workload_models(wanted, (wpcs[name] for name in self.m_wpcs))
            for key in models:
                self.unconverted.discard(("workload", key))
        else:
            models, left = {}, list(wanted)
        for key in left:
            model = self._parse(self.tracks[key], wanted[key])
            if model is not None:
                models[key] = model
        config.workloads = models
        self.engine = EngineHandle(config, self.opts.engine, self.clock.time_ns())
        self.config_dirty = False
        for key, model in list(config.workloads.items()):
            t = self.tracks[key]
            wl = self.objs["workload"][key]
            self._entered_engine(t, wl, model)
            ev = S.get_condition(wl, S.EVICTED)
            if model.admission is not None and ev is not None and ev.get("status") == "True":
                admitted_evicting.append(
                    (key, str(ev.get("reason") or "Preempted"), str(ev.get("message") or ""))
                )
        for key, reason, message in admitted_evicting:
            self.engine.evict(key, reason, message)
            t = self.tracks[key]
            t.phase = Phase.EVICTING
            pre = S.get_condition(self.objs["workload"][key], S.PREEMPTED)
            t.evict = (
                reason,
                message,
                str(pre.get("reason")) if pre and pre.get("status") == "True" else None,
            )
        self.dirty.update(dict.fromkeys(self.tracks))
        self.sched_dirty = True
        self.queues_dirty = True
        self.metrics.engine_rebuilds_total.inc()
        log.info(
            "engine %s built from %d workloads (%d admitted) in %.2fs (%.2fs CPU)",
            self.engine.engine_name,
            len(config.workloads),
            sum(1 for w in config.workloads.values() if w.admission is not None),
            time.perf_counter() - started,
            time.thread_time() - cpu,
        )

    # --- objects in ------------------------------------------------------------------------------------

    def _on_object(self, kind: str, etype: str, key: str, obj: JSON | None) -> None:
        if etype == "SYNCED":
            self.synced.add(kind)
            return
        store = self.objs[kind]
        tombs = self.tombstones[kind]
        if etype == "DELETED":
            old = store.pop(key, None)
            rv = str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")
            tombs[key] = int(rv) if rv.isdigit() else 0
            if len(tombs) > 100_000:
                for k in list(tombs)[:50_000]:
                    del tombs[k]
            if old is None:
                return
            obj = None
        else:
            assert obj is not None
            if not _rv_newer(obj, store.get(key)):
                return
            rv = str(obj["metadata"].get("resourceVersion") or "")
            tomb = tombs.get(key)
            if tomb is not None:
                if rv.isdigit() and int(rv) <= tomb:
                    return  # older than its deletion
                del tombs[key]
            old = store.get(key)
            store[key] = obj
        if kind in CONFIG_KINDS:
            self._on_config(kind, key, obj, old)
        elif kind == "workload":
            t = self._track(key)
            if obj is not None:
                jk = _owner_job(obj)
                if jk is not None:
                    t.job_key = jk
                    self.job_unit[jk] = key
            self.dirty[key] = None
        elif kind in J.BY_NAME:
            jk = _job_key(J.BY_NAME[kind], key)
            if obj is not None:
                ukey = J.BY_NAME[kind].workload_key(obj)
                prev = self.job_unit.get(jk)
                if prev is not None and prev != ukey:
                    self.dirty[prev] = None
                self.job_unit[jk] = ukey
                self._track(ukey).job_key = jk
                self.dirty[ukey] = None
            else:
                ukey = self.job_unit.get(jk, "")
                if ukey:
                    self.dirty[ukey] = None

    def _on_config(self, kind: str, key: str, obj: JSON | None, old: JSON | None) -> None:
        models = {
            "flavor": self.m_flavors,
            "cq": self.m_cqs,
            "cohort": self.m_cohorts,
            "lq": self.m_lqs,
            "wpc": self.m_wpcs,
            "pc": self.m_pcs,
            "namespace": self.m_namespaces,
            "ac": self.m_acs,
        }[kind]
        parse = state.CONFIG_KINDS[kind][1]
        self.queues_dirty = True
        if kind == "namespace" and obj is not None and old is not None:
            if (obj["metadata"].get("labels") or {}) == (old["metadata"].get("labels") or {}):
                return  # only labels matter (namespaceSelector)
        if kind != "namespace" and obj is not None and old is not None:
            if (
                obj.get("spec") == old.get("spec")
                and _deleting(obj) == _deleting(old)
                and obj.get("value") == old.get("value")
                and obj.get("globalDefault") == old.get("globalDefault")
                and (kind != "ac" or obj.get("status") == old.get("status"))  # an AdmissionCheck's Active
            ):
                return  # a status or metadata update (ours, mostly)
        if obj is None:
            models.pop(key, None)
            if kind in ("wpc", "pc"):
                return
        else:
            try:
                model = parse(obj)
            except InputError as e:
                self._invalid(kind, key, obj, e)
                models.pop(key, None)
            else:
                self.unconverted.discard((kind, key))
                if kind == "cq" and _deleting(obj):
                    model.stop_policy = "Hold"  # terminating: admits nothing, keeps what runs
                models[key] = model
        if kind in ("wpc", "pc"):
            return  # priorities are read when a Workload is created, not by the engine
        self.config_dirty = True

    def _config_state(self) -> ClusterState:
        return ClusterState(
            resource_flavors=dict(self.m_flavors),
            cluster_queues=dict(self.m_cqs),
            cohorts=dict(self.m_cohorts),
            local_queues=dict(self.m_lqs),
            priority_classes=dict(self.m_wpcs),
            namespaces=dict(self.m_namespaces),
            configuration=Configuration(
                resources=self.opts.resources, wait_for_pods_ready=self.opts.wait_for_pods_ready
            ),
            admission_checks=dict(self.m_acs),
        )

    def _sync_config(self) -> None:
        """Apply configuration changes (evictions in flight keep their quota)."""
        assert self.engine is not None
        if self.config_dirty:
            self.engine.reconfigure(self._config_state())
            self.config_dirty = False
            self.sched_dirty = True
            self.dirty.update(dict.fromkeys(self.tracks))
            log.info(
                "configuration applied: %d ClusterQueues, %d LocalQueues, %d flavors",
                len(self.m_cqs),
                len(self.m_lqs),
                len(self.m_flavors),
            )

    # --- the engine's workloads ---------------------------------------------------------------------------

    def _track(self, key: str) -> Track:
        t = self.tracks.get(key)
        if t is None:
            t = self.tracks[key] = Track(key)
        return t

    def _usage(self, u: tuple[tuple[str, str, int], ...]) -> tuple[tuple[str, str, int], ...]:
        """Equal usages are kept once (memory: one per workload otherwise)."""
        got = self._usages.get(u)
        if got is None:
            if len(self._usages) > 10_000:
                self._usages.clear()
            got = self._usages[u] = u
        return got

    def _wants_engine(self, t: Track, wl: JSON | None) -> bool:
        if wl is None or _deleting(wl) or S.condition_true(wl, S.FINISHED):
            return False
        rv = wl["metadata"].get("resourceVersion")
        if rv == t.quarantined_rv and self.clock.monotonic() < t.quarantined_until:
            return False
        return bool(rv != t.invalid_rv)

    def _parse(self, t: Track, wl: JSON) -> Workload | None:
        try:
            if state.v1beta1_fields(wl):  # before workload_model drops the fields it does not read
                raise InputError(f"Workload/{t.key}", "", "v1beta1 fields")
            model = state.workload_model(wl, self.m_wpcs)
        except InputError as e:
            self._invalid("workload", t.key, wl, e)
            t.invalid_rv = wl["metadata"].get("resourceVersion")
            return None
        self.unconverted.discard(("workload", t.key))
        return model

    def _invalid(self, kind: str, key: str, obj: JSON, e: InputError | None) -> None:
        """An object the controller cannot use. One stored in v1beta1 before
        kueue-fast's CRDs (which do not convert renamed fields) reaches us with
        its v1beta1 fields: any write would store it as v1beta2 and lose them,
        so it is left untouched (crds.py, README)."""
        if state.stored_in_v1beta1(obj):
            if (kind, key) not in self.unconverted:
                log.error("leaving %s/%s alone: %s", obj.get("kind"), key, state.unconverted_message(obj, e))
            self.unconverted.add((kind, key))
        else:
            log.error("ignoring %s/%s: %s", obj.get("kind"), key, e)

    def _entered_engine(self, t: Track, wl: JSON, model: Workload) -> None:
        t.in_engine = True
        t.generation = int(wl["metadata"].get("generation") or 0)
        t.queued_ns = model.creation_ns
        if model.admission is not None:
            t.phase = Phase.ADMITTED
            t.adm_cq = model.admission.cluster_queue
            t.adm_usage = self._usage(
                tuple(
                    (psa.flavors[r], r, v)
                    for psa in model.admission.pod_set_assignments
                    for r, v in psa.resource_usage.items()
                    if r in psa.flavors
                )
            )
        else:
            t.phase = Phase.PENDING
            t.adm_cq, t.adm_usage = None, ()

    def _engine_sync(self, t: Track, wl: JSON | None) -> bool:
        """Make the engine hold the workload iff it should; False when that has
        to wait (no rebuild while an eviction is in flight)."""
        eng = self.engine
        assert eng is not None
        want = self._wants_engine(t, wl)
        if t.in_engine and not want:
            eng.remove(t.key)
            t.in_engine, t.phase, t.adm_cq, t.adm_usage, t.evict = False, None, None, (), None
            self.sched_dirty = True
            return True
        if want and wl is not None and t.in_engine:
            gen = int(wl["metadata"].get("generation") or 0)
            if gen != t.generation:
                return self._spec_changed(t, wl, gen)
            return True
        if want and wl is not None and not t.in_engine:
            model = self._parse(t, wl)
            if model is None:
                return True
            eng.add(model)
            self._entered_engine(t, wl, model)
            ev = S.get_condition(wl, S.EVICTED)
            if model.admission is not None and ev is not None and ev.get("status") == "True":
                eng.evict(t.key, str(ev.get("reason") or "Preempted"), str(ev.get("message") or ""))
                t.phase = Phase.EVICTING
                t.evict = (str(ev.get("reason") or "Preempted"), str(ev.get("message") or ""), None)
            self.sched_dirty = True
        return True

    def _spec_changed(self, t: Track, wl: JSON, gen: int) -> bool:
        eng = self.engine
        assert eng is not None
        spec = wl.get("spec") or {}
        if t.phase == Phase.PENDING:
            eng.remove(t.key)
            t.in_engine, t.phase = False, None
            model = self._parse(t, wl)
            if model is not None:
                eng.add(model)
                self._entered_engine(t, wl, model)
            self.sched_dirty = True
            return True
        t.generation = gen
        if t.phase == Phase.ADMITTED and spec.get("active") is False:
            eng.evict(t.key, "Deactivated", "The workload is deactivated")
            t.phase = Phase.EVICTING
            t.evict = ("Deactivated", "The workload is deactivated", None)
        return True

    def _undo_admission(self, t: Track, why: str) -> None:
        """The admission could not be written: forget it, requeue the workload."""
        eng = self.engine
        if eng is None or not t.in_engine:
            return
        eng.evict(t.key, "AdmissionFailed", why)
        eng.release(t.key)
        t.phase = Phase.PENDING
        t.adm_cq, t.adm_usage = None, ()
        t.failures += 1
        self.sched_dirty = True
        if t.failures >= self.opts.max_failures:
            wl = self.objs["workload"].get(t.key)
            log.error(
                "Workload %s: admission failed %d times (%s); set aside until it changes",
                t.key,
                t.failures,
                why,
            )
            eng.remove(t.key)
            t.in_engine, t.phase = False, None
            t.quarantined_rv = wl["metadata"].get("resourceVersion") if wl else None
            t.quarantined_until = self.clock.monotonic() + self.opts.quarantine
            t.failures = 0
            self._later(t.key, self.opts.quarantine)
            return
        self._later(t.key, min(30.0, 0.2 * 2**t.failures))

    # --- scheduling -----------------------------------------------------------------------------------

    def _schedule(self) -> None:
        eng = self.engine
        assert eng is not None
        now = self.clock.monotonic()
        if not self.sched_dirty and now - self.last_cycle < 1.0:
            return
        start = now
        while True:
            t0 = time.perf_counter()
            res = eng.run_cycle(self.clock.time_ns())
            dt = time.perf_counter() - t0
            self.last_cycle = self.clock.monotonic()
            self.metrics.cycles_total.inc()
            self.metrics.cycle_duration_seconds.observe(dt)
            if res.heads:
                failed = max(0, res.heads - len(res.admitted))
                if res.admitted:
                    self.metrics.admission_attempts_total.labels("success").inc(len(res.admitted))
                    self.metrics.admission_attempt_duration_seconds.labels("success").observe(dt)
                if failed:
                    self.metrics.admission_attempts_total.labels("inadmissible").inc(failed)
                    self.metrics.admission_attempt_duration_seconds.labels("inadmissible").observe(dt)
            if self.events is not None:
                self._pending_events(res.attempted)
            for key in res.admitted:
                self._on_admitted(key)
            for key in res.preempted:
                self._on_evicted(key, True)
            for key in res.evicted:
                self._on_evicted(key, False)
            if not res.changed:
                self.sched_dirty = False
                return
            if self.clock.monotonic() - start > self.opts.max_cycle_time:
                self.sched_dirty = True
                return

    def _pending_events(self, attempted: list[str]) -> None:
        """pkg/scheduler/scheduler.go requeueAndUpdate: a Warning with the
        pending reason and message for every head a cycle tried and left
        pending (series keep them to one Event per object version)."""
        eng = self.engine
        assert eng is not None
        for key in attempted:
            wl = self.objs["workload"].get(key)
            d = eng.decision(key)
            if wl is not None and d.reason and d.message:
                self._event(wl, WARNING, d.reason, d.message, ADMISSION)

    def _on_admitted(self, key: str) -> None:
        eng = self.engine
        assert eng is not None
        t = self.tracks[key]
        d = eng.decision(key)
        why = self._admission_denied(key, d)
        if why:
            log.error("refusing the admission of %s to %s: %s", key, d.cluster_queue, why)
            t.phase = Phase.ADMITTED
            self._undo_admission(t, why)
            return
        t.phase = Phase.ADMITTED
        t.adm_cq = d.cluster_queue
        t.adm_usage = self._usage(
            tuple(
                (ps.flavors[r], r, v)
                for ps in d.pod_sets
                for r, v in ps.resource_usage.items()
                if r in ps.flavors
            )
        )
        t.evict = None
        t.pending_written = None
        self.admissions += 1
        cq = d.cluster_queue or ""
        wait = max(0.0, (self.clock.time_ns() - t.queued_ns) / 1e9)
        self.metrics.quota_reserved_workloads_total.labels(cq).inc()
        self.metrics.quota_reserved_wait_time_seconds.labels(cq).observe(wait)
        if d.state == ADMITTED:  # else once its admission checks are Ready (_reconcile)
            self.metrics.admitted_workloads_total.labels(cq).inc()
            self.metrics.admission_wait_time_seconds.labels(cq).observe(wait)
        self.hot[key] = None
        self.queues_dirty = True

    def _admission_denied(self, key: str, d: Decision) -> str:
        """Security: a workload goes only to the ClusterQueue its own
        namespace's LocalQueue names, and only if that ClusterQueue's
        namespaceSelector selects the namespace."""
        eng = self.engine
        assert eng is not None
        wl = eng.workload(key)
        if wl is None:
            return "unknown workload"
        lq = self.m_lqs.get(f"{wl.namespace}/{wl.queue_name}")
        if lq is None:
            return f"LocalQueue {wl.namespace}/{wl.queue_name} does not exist"
        if lq.cluster_queue != d.cluster_queue:
            return f"LocalQueue {wl.namespace}/{wl.queue_name} names ClusterQueue {lq.cluster_queue}"
        cq = self.m_cqs.get(d.cluster_queue or "")
        if cq is None:
            return f"ClusterQueue {d.cluster_queue} does not exist"
        ns = self.m_namespaces.get(wl.namespace)
        labels = ns.labels if ns is not None else {"kubernetes.io/metadata.name": wl.namespace}
        if cq.namespace_selector is None or not cq.namespace_selector.matches(labels):
            return f"ClusterQueue {cq.name} does not select namespace {wl.namespace}"
        return ""

    def _on_evicted(self, key: str, preempted: bool) -> None:
        eng = self.engine
        assert eng is not None
        t = self.tracks[key]
        d = eng.decision(key)
        message = d.message
        reason = "Preempted" if preempted else (d.reason or "Evicted")
        pre_reason = None
        t.preempted_by = d.preempted_by if preempted else None
        if preempted:
            pre_reason = d.preemption_reason or "InClusterQueue"
            by = d.preempted_by
            if by:
                by_t = self.tracks.get(by)
                pcq = (by_t.adm_cq if by_t else None) or ""
                if not pcq:
                    bwl = eng.workload(by)
                    lq = self.m_lqs.get(f"{bwl.namespace}/{bwl.queue_name}") if bwl else None
                    pcq = lq.cluster_queue if lq else ""
                self.metrics.preempted_workloads_total.labels(pcq, pre_reason).inc()
            self.preemptions += 1
        t.phase = Phase.EVICTING
        t.evict = (reason, message, pre_reason)
        self.metrics.evicted_workloads_total.labels(t.adm_cq or "", reason).inc()
        self.hot[key] = None

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
        self.inflight[key] = write.value
        self.writer.submit(key, write.value, prio, fn, refetch=refetch, epoch=self.epoch, data=(*data, then))

    def _reconcile(self, key: str) -> None:
        t = self.tracks.get(key)
        if t is None:
            return
        if t.not_before > self.clock.monotonic():
            return
        wl = self.objs["workload"].get(key)
        kind, job = self._job_of(t)
        if job is not None and self.job_unit.get(t.job_key or "") != key:
            job = None  # the job of that name is another one now
        if not self._engine_sync(t, wl):
            return
        if wl is not None and ("workload", key) in self.unconverted:
            return  # stored in v1beta1: a write would lose its renamed fields (_invalid)
        if wl is None:
            if job is None:
                if not t.in_engine:
                    self.tracks.pop(key, None)
                    if t.job_key and self.job_unit.get(t.job_key) == key:
                        self.job_unit.pop(t.job_key, None)
                return
            assert kind is not None
            self._reconcile_job_alone(t, kind, job)
            return
        md = wl["metadata"]
        ns, name = md["namespace"], md["name"]
        if _deleting(wl):
            if J.RESOURCE_IN_USE in (md.get("finalizers") or []):
                self._write_finalizers(t, wl)
            return
        if job is None and self._orphaned(wl):
            self._submit(
                key,
                Write.DELETE_WORKLOAD,
                PRIO_CREATE,
                lambda c: c.delete(WORKLOADS, name, ns, uid=md.get("uid")),
                (WORKLOADS, name, ns),
                ("workload", key),
            )
            return
        if S.condition_true(wl, S.FINISHED):
            if J.RESOURCE_IN_USE in (md.get("finalizers") or []):
                self._write_finalizers(t, wl)
            return
        if job is not None:
            assert kind is not None
            done, failed, message = kind.integration.finished(job)
            if done:
                st = S.finished_status(wl, failed, message, self.clock.time_ns())
                note = f"Workload '{key}' is declared finished"
                then = self._then_event(kind, job, "FinishedWorkload", note)
                self._apply_status(t, wl, Write.FINISH, st, PRIO_CREATE, then)
                return
        if not t.in_engine:
            return
        eng = self.engine
        assert eng is not None
        if t.phase == Phase.ADMITTED:
            if self._sync_checks(t, wl):
                self.hot[key] = None  # the decision may have moved: look again
                return
            d = eng.decision(key)
            if d.state not in (ADMITTED, RESERVED):
                return
            if (
                not S.admission_matches(wl, d)
                or S.condition_true(wl, S.ADMITTED) != (d.state == ADMITTED)
                or S.check_states_missing(wl, d)
            ):
                st = S.admitted_status(wl, d, self.clock.time_ns())
                then = self._then_quota_reserved(t, admitted=d.state == ADMITTED)
                if d.state == ADMITTED and S.condition_true(wl, S.QUOTA_RESERVED):  # its checks became Ready
                    then = self._then_checks_ready(wl)
                    cq = d.cluster_queue or ""
                    self.metrics.admitted_workloads_total.labels(cq).inc()
                    wait = max(0.0, (self.clock.time_ns() - t.queued_ns) / 1e9)
                    self.metrics.admission_wait_time_seconds.labels(cq).observe(wait)
                self._apply_status(t, wl, Write.ADMIT, st, PRIO_ADMISSION, then)
                return
            if d.state == RESERVED:
                return  # the job starts once every admission check is Ready
            if job is not None:
                assert kind is not None
                if not self._start_job(t, kind, job, wl, d):
                    self._sync_pods_ready(t, kind, job, wl)
            return
        if t.phase == Phase.EVICTING:
            reason, message, pre = t.evict or ("Preempted", "", None)
            if reason == AC.DEACTIVATED_BY_CHECK and (wl.get("spec") or {}).get("active") is not False:
                self._deactivate(t, wl, self._then_check_rejected(message))  # spec.active=false, then evicted
                return
            if not S.condition_true(wl, S.EVICTED):
                st = S.evicted_status(wl, reason, message, pre, self.clock.time_ns())
                # evict with UpdateRequeueState (PodsReady) or after NeedsRequeueAtUpdate (a Retry's
                # requeueAfterSeconds) (workload_controller.go)
                if reason in ("PodsReadyTimeout", AC.EVICTED_BY_CHECK):
                    S.set_requeue_state(st, *eng.requeue_state(key))
                self._apply_status(t, wl, Write.EVICT, st, PRIO_ADMISSION, self._then_evicted(t, wl))
                return
            if job is not None:
                assert kind is not None
                ev = S.get_condition(wl, S.EVICTED) or {}
                if self._stop_job(t, kind, job, wl, str(ev.get("message") or message)):
                    return
            self._apply_status(
                t, wl, Write.REQUEUE, S.requeued_status(wl, self.clock.time_ns()), PRIO_ADMISSION
            )
            return
        # pending
        if S.has_admission(wl):
            st = S.unadmitted_status(wl, "The admission was not confirmed", self.clock.time_ns())
            self._apply_status(t, wl, Write.UNADMIT, st, PRIO_ADMISSION)
            return
        now = self.clock.time_ns()
        requeue_at = eng.requeue_state(key)[1]
        if requeue_at is None or requeue_at <= now:  # the backoff is over (or there was none)
            st = copy.deepcopy(wl.get("status") or {})
            if S.finish_backoff(st, now, wl["metadata"].get("generation")):
                self._apply_status(t, wl, Write.BACKOFF_FINISHED, st, PRIO_ADMISSION)
                return
        if job is not None:
            assert kind is not None
            self._stop_job(t, kind, job, wl, "Not admitted by cluster queue")

    def _sync_checks(self, t: Track, wl: JSON) -> bool:
        """Check states other controllers wrote on the Workload reach the
        engine (Ready admits; Retry and Rejected evict at the end of the next
        cycle). True when one changed."""
        eng = self.engine
        assert eng is not None
        known = {c.name: c.state for c in eng.check_states(t.key)}
        changed = False
        for c in (wl.get("status") or {}).get("admissionChecks") or []:
            name, st = str(c.get("name") or ""), str(c.get("state") or "")
            if name in known and st in AC.STATES and known[name] != st:
                after = c.get("requeueAfterSeconds")
                after_s = after if isinstance(after, int) and after >= 0 else None
                eng.set_check_state(t.key, name, st, str(c.get("message") or ""), after_s, _time_ns(c))
                changed = True
        if changed:
            self.sched_dirty = True
        return changed

    def _deactivate(self, t: Track, wl: JSON, then: Then | None = None) -> None:
        md = wl["metadata"]
        ns, name = md["namespace"], md["name"]
        patch = {"metadata": {"resourceVersion": md["resourceVersion"]}, "spec": {"active": False}}
        self._submit(
            t.key,
            Write.DEACTIVATE,
            PRIO_ADMISSION,
            lambda c: c.patch(WORKLOADS, name, patch, namespace=ns),
            (WORKLOADS, name, ns),
            ("workload", t.key),
            then,
        )

    def _job_of(self, t: Track) -> tuple[JobKind | None, JSON | None]:
        if not t.job_key:
            return None, None
        name, _, key = t.job_key.partition(":")
        kind = J.BY_NAME.get(name)
        return kind, (self.objs[name].get(key) if kind is not None else None)

    def _sync_pods_ready(self, t: Track, kind: JobKind, job: JSON, wl: JSON) -> None:
        """waitForPodsReady (jobframework/reconciler.go, step 5): the PodsReady
        condition from the running job's pods (its integration's pods_ready),
        written when its status or reason changes, and told to the engine
        (blockAdmission, the PodsReady timeout)."""
        pods_ready = getattr(kind.integration, "pods_ready", None)
        if self.opts.wait_for_pods_ready is None or pods_ready is None:
            return
        ready = bool(pods_ready(kind.full(job)))
        cond = S.pods_ready_condition(wl, True, ready)
        cur = S.get_condition(wl, S.PODS_READY) or {}
        if (cur.get("status"), cur.get("reason")) == cond[:2]:
            return
        now = self.clock.time_ns()
        eng = self.engine
        assert eng is not None
        eng.set_pods_ready(t.key, ready, cond[1], now)
        self._apply_status(t, wl, Write.PODS_READY, S.pods_ready_status(wl, cond, now), PRIO_ADMISSION)

    def _start_job(self, t: Track, kind: JobKind, job: JSON, wl: JSON, d: Decision) -> bool:
        """jobframework startJob: the admission (each pod set's count, its
        flavors' nodeLabels and tolerations, the pod set label) merged into
        the job; Started when this unsuspends it. An admission that cannot
        merge (podset.Merge conflict) finishes the Workload as FailedToStart."""
        infos: list[PodSetInfo] = []
        for ps in d.pod_sets:
            names = sorted(set(ps.flavors.values()))
            infos.append(
                admitted_info(
                    ps.name, ps.count, [self.objs["flavor"][f] for f in names if f in self.objs["flavor"]]
                )
            )
        full = kind.full(job)
        try:
            patch = kind.integration.start_patch(full, infos)
        except PodSetConflict as e:
            st = S.finished_status(wl, True, str(e), self.clock.time_ns())
            for c in st.get("conditions") or []:
                if c.get("type") == S.FINISHED:
                    c["reason"] = "FailedToStart"  # jobframework FailedToStartFinishedReason
            self._apply_status(t, wl, Write.FINISH, st, PRIO_CREATE)
            return True
        if patch is None:
            return False
        note = f"Admitted by clusterQueue {d.cluster_queue}"
        then = self._then_event(kind, None, "Started", note) if kind.integration.is_suspended(full) else None
        self._patch_job(t, kind, job, Write.START_JOB, patch, then)
        return True

    def _stop_job(self, t: Track, kind: JobKind, job: JSON, wl: JSON | None, why: str) -> bool:
        """The next of the writes that stop a job (its integration's
        stop_step, templates restored from ``wl``; None: nothing to restore);
        Stopped (jobframework stopJob) when this one suspends it. False when
        the job is stopped already."""
        step = kind.integration.stop_step(kind.full(job), wl)
        if step is None:
            return False
        name, patch = step
        then = self._then_event(kind, None, "Stopped", why) if name == "suspend" else None
        self._patch_job(t, kind, job, Write(f"stop-{name}"), patch, then)
        return True

    def _orphaned(self, wl: JSON) -> bool:
        """A job's Workload whose job is gone (or no longer queued)."""
        uid = (wl["metadata"].get("labels") or {}).get(J.JOB_UID_LABEL)
        owner = J.owner_of(wl)
        if owner is not None:
            kind, key = owner
            job = self.objs[kind.name].get(key)
            return job is None or (uid is not None and job["metadata"].get("uid") != uid)
        if not uid:
            return False
        prefix = wl["metadata"]["namespace"] + "/"
        return not any(
            j["metadata"].get("uid") == uid
            for k in JOB_KINDS
            for key, j in self.objs[k.name].items()
            if key.startswith(prefix)
        )

    def _environment(self) -> Environment:
        """What Kueue's job integrations read from the cluster besides the job."""

        def labels(ns: str) -> dict[str, str]:
            m = self.m_namespaces.get(ns)
            return dict(m.labels) if m is not None else {"kubernetes.io/metadata.name": ns}

        return Environment(self.m_wpcs, self.m_pcs, self.m_lqs.keys(), labels, _CONTROLLER_CONFIGURATION)

    def _reconcile_job_alone(self, t: Track, kind: JobKind, job: JSON) -> None:
        """A queued job with no Workload yet: keep it suspended, create the
        Workload the integration makes of it (as `kueue-fast schedule` does)."""
        full = kind.full(job)
        if kind.integration.finished(full)[0] or _deleting(job):
            return
        if self._stop_job(t, kind, job, None, "Missing Workload; unable to restore pod templates"):
            return
        rv = job["metadata"].get("resourceVersion")
        try:
            conv = kind.integration.workloads_for(full, self._environment())
        except MissingReferenceError as e:
            log.warning("%s %s: %s; trying again in 5s", kind.integration.KIND, t.job_key, e)
            if e.field == f"metadata.labels[{PRIORITY_LABEL}]":
                self._event(job, WARNING, "WorkloadPriorityClassNotFound", e.message, kind.events_controller)
            self._later(t.key, 5.0)
            return
        except InputError as e:
            if t.invalid_rv != rv:  # once per version of the job
                log.error("%s %s is invalid, no Workload is created: %s", kind.integration.KIND, t.job_key, e)
                t.invalid_rv = rv
            return
        if not conv.workloads:
            if conv.warnings and t.invalid_rv != rv:
                path, why = conv.warnings[0]
                log.info("%s %s: %s %s", kind.integration.KIND, t.job_key, path, why)
                t.invalid_rv = rv
            return
        body = conv.workloads[0]
        ns = job["metadata"]["namespace"]
        name = body["metadata"]["name"]
        self._submit(
            t.key,
            Write.CREATE_WORKLOAD,
            PRIO_CREATE,
            lambda c: c.create(WORKLOADS, body, ns),
            (WORKLOADS, name, ns),
            ("workload", t.key),
            self._then_event(kind, job, "CreatedWorkload", f"Created Workload: {ns}/{name}"),
        )

    # --- Kueue's Events (README: which ones); recorded once the write landed, as Kueue does ---

    def _event(self, obj: JSON, type_: str, reason: str, note: str, controller: str) -> None:
        if self.events is not None:
            self.events.record(obj, type_, reason, note, controller=controller)

    def _then_event(self, kind: JobKind, job: JSON | None, reason: str, note: str) -> Then | None:
        """A Normal Event on a job once the write landed: on ``job`` as it was,
        or (None) on the job the write returned."""
        if self.events is None:
            return None
        return lambda fresh: self._event(job or fresh, NORMAL, reason, note, kind.events_controller)

    def _then_quota_reserved(self, t: Track, *, admitted: bool) -> Then | None:
        """pkg/scheduler/scheduler.go recordWorkloadAdmissionMetrics, after the
        admission status was written: QuotaReserved, and Admitted when no
        admission check applies (else it waits for them: _then_checks_ready)."""
        if self.events is None:
            return None
        queued_ns = t.queued_ns

        def then(wl: JSON) -> None:
            cq = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue", "")
            wait = max(0.0, (self.clock.time_ns() - queued_ns) / 1e9)
            note = f"Quota reserved in ClusterQueue {cq}, wait time since queued was {wait:.0f}s"
            self._event(wl, NORMAL, "QuotaReserved", note, ADMISSION)
            if admitted:
                note = f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s"
                self._event(wl, NORMAL, "Admitted", note, ADMISSION)

        return then

    def _then_checks_ready(self, wl: JSON) -> Then | None:
        """workload_controller.go Reconcile, a reserved workload turning
        Admitted: "Admitted" with the wait since the quota reservation (the
        scheduler's QuotaReserved Event is not repeated)."""
        if self.events is None:
            return None
        reserved_ns = _time_ns(S.get_condition(wl, S.QUOTA_RESERVED) or {})

        def then(fresh: JSON) -> None:
            cq = ((fresh.get("status") or {}).get("admission") or {}).get("clusterQueue", "")
            now = self.clock.time_ns()
            wait = 0.0 if reserved_ns is None else max(0.0, (now - reserved_ns) / 1e9)
            note = f"Admitted by ClusterQueue {cq}, wait time since reservation was {wait:.0f}s"
            self._event(fresh, NORMAL, "Admitted", note, WORKLOAD_CONTROLLER)

        return then

    def _then_check_rejected(self, message: str) -> Then | None:
        """workload_controller.go reconcileCheckBasedEviction: a Warning
        "AdmissionCheckRejected", "Deactivated due to <the rejected checks>"."""
        if self.events is None:
            return None
        note = "Deactivated due to " + message.partition(" due to ")[2]
        return lambda fresh: self._event(fresh, WARNING, "AdmissionCheckRejected", note, WORKLOAD_CONTROLLER)

    def _then_evicted(self, t: Track, wl: JSON) -> Then | None:
        """pkg/workload/evict: EvictedDueTo<reason>; for a preemption also
        pkg/scheduler/preemption IssuePreemptions' Preempted (on the victim) and
        PreemptedWorkload (on the preemptor). kueue-fast has no priority boost:
        effective priorities are the base ones."""
        if self.events is None:
            return None
        reason, message, pre = t.evict or ("Preempted", "", None)
        eng = self.engine
        victim = eng.workload(t.key) if eng is not None else None
        by = self.objs["workload"].get(t.preempted_by or "") if pre else None
        preemptor = eng.workload(t.preempted_by or "") if eng is not None and pre else None
        victim_cq = t.adm_cq or ""
        victim_uid = str(wl["metadata"].get("uid") or "")

        def then(fresh: JSON) -> None:
            controller = ADMISSION if pre else WORKLOAD_CONTROLLER
            self._event(fresh, NORMAL, f"EvictedDueTo{reason}", message, controller)
            if by is None or preemptor is None or victim is None:
                return
            pp, vp = preemptor.priority, victim.priority
            priorities = (
                f"; preemptor effective priority: {pp} (base: {pp}, boost: 0); "
                f"preemptee effective priority: {vp} (base: {vp}, boost: 0)"
            )
            self._event(fresh, NORMAL, "Preempted", message + priorities, ADMISSION)
            note = f"Preempted workload {t.key} (UID: {victim_uid}) in ClusterQueue {victim_cq}{priorities}"
            self._event(by, NORMAL, "PreemptedWorkload", note, ADMISSION)

        return then

    def _apply_status(
        self, t: Track, wl: JSON, write: Write, status: JSON, prio: int, then: Then | None = None
    ) -> None:
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
        self._submit(
            t.key,
            write,
            prio,
            lambda c: c.apply(WORKLOADS, body, field_manager=FIELD_MANAGER, sub="status"),
            (WORKLOADS, md["name"], md["namespace"]),
            ("workload", t.key),
            then,
        )

    def _patch_job(
        self, t: Track, kind: JobKind, job: JSON, write: Write, patch: Patch, then: Then | None = None
    ) -> None:
        md = job["metadata"]
        ns, jname = md["namespace"], md["name"]
        res = kind.resource
        self._submit(
            t.key,
            write,
            PRIO_ADMISSION,
            lambda c: c.patch(
                res, jname, patch.body, namespace=ns, sub=patch.sub, content_type=patch.content_type
            ),
            (res, jname, ns),
            (kind.name, f"{ns}/{jname}"),
            then,
        )

    def _write_finalizers(self, t: Track, wl: JSON) -> None:
        md = wl["metadata"]
        keep = [f for f in md.get("finalizers") or [] if f != J.RESOURCE_IN_USE]
        patch = {"metadata": {"resourceVersion": md["resourceVersion"], "finalizers": keep or None}}
        ns, name = md["namespace"], md["name"]
        self._submit(
            t.key,
            Write.FINALIZER,
            PRIO_CREATE,
            lambda c: c.patch(WORKLOADS, name, patch, namespace=ns),
            (WORKLOADS, name, ns),
            ("workload", t.key),
        )

    # --- results -------------------------------------------------------------------------------------

    def _on_done(self, op: Op, result: Any) -> None:
        kind = op.data[0] if op.data else ""
        # whatever the term, an object the server returned is the truth (but a
        # deleted object is not brought back)
        fresh = (
            result.fresh if isinstance(result, Conflict) else (result if isinstance(result, dict) else None)
        )
        if fresh is not None and kind and fresh.get("metadata") and op.name != Write.DELETE_WORKLOAD:
            self._observe(kind, fresh)
        if op.epoch != self.epoch:
            return
        then = op.data[2] if op.data and len(op.data) > 2 else None
        if then is not None and isinstance(result, dict) and result.get("metadata"):
            then(result)
        if self.inflight.get(op.key) == op.name:
            del self.inflight[op.key]
        self.hot[op.key] = None
        if op.key.startswith(("#cq/", "#lq/", "#rf/")):
            return
        t = self.tracks.get(op.key)
        if t is None:
            return
        if isinstance(result, Conflict):
            t.conflicts += 1
            if t.conflicts > 20:
                self._later(op.key, min(5.0, 0.05 * t.conflicts))
            return
        t.conflicts = 0
        if isinstance(result, Gone):
            if op.name == Write.ADMIT:
                self._undo_admission(t, "the Workload is gone")
            return
        if isinstance(result, BaseException):
            self.metrics.write_failures_total.labels(op.name).inc()
            if op.name == Write.ADMIT:
                self._undo_admission(t, f"writing the admission failed: {result}")
            else:
                t.failures += 1
                self._later(op.key, min(30.0, 0.2 * 2 ** min(t.failures, 8)))
            return
        if op.name == Write.CREATE_WORKLOAD:
            t.failures = 0
        elif op.name == Write.ADMIT:
            t.failures = 0
        elif (
            op.name == Write.REQUEUE and self.engine is not None and t.in_engine and t.phase == Phase.EVICTING
        ):
            # the Job stopped and the admission is gone from the API server: release
            self.engine.release(t.key)
            t.phase = Phase.PENDING
            t.adm_cq, t.adm_usage, t.evict = None, (), None
            t.queued_ns = self.clock.time_ns()
            self.sched_dirty = True
            self.queues_dirty = True

    def _observe(self, kind: str, obj: JSON) -> None:
        """An object returned by a write: as good as a watch event."""
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
        self._on_object(kind, "MODIFIED", key, o)


def default_identity() -> str:
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


def _time_ns(obj: dict[str, Any]) -> int | None:
    """An object's lastTransitionTime in ns, None when absent or not a time."""
    from ..loader import parse_time_ns

    try:
        return parse_time_ns(obj.get("lastTransitionTime"), "", "lastTransitionTime")
    except InputError:
        return None


__all__ = ["Controller", "Options", "Track", "default_identity", "field"]
