"""The engine's workloads and its cycles (Kueue: pkg/cache, the assume step
and cycle of pkg/scheduler/scheduler.go): the engine rebuilt when a term
starts, configuration changes applied, each Workload held by the engine iff
it should be, the cycles run and their decisions (admitted, preempted,
evicted) recorded on the Tracks for the per-workload flow to write.
:class:`Scheduler` is a part of the controller."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ..api.errors import InputError
from ..api.model import ClusterState, Configuration, Workload, charged_assignments
from ..cluster import status_writer as S
from ..cluster.cluster import ADMITTED, Decision
from ..kube import objects as state
from .engine_handle import EngineHandle
from .events import ADMISSION, WARNING
from .track import JSON, Phase, Track

if TYPE_CHECKING:
    from ..kube.leader_election import Clock
    from .cache import Cache
    from .loop_state import LoopState
    from .outbox import Outbox
    from .prometheus import Metrics
    from .queue_status import QueueStatus
    from .reconciler import Options

log = logging.getLogger("kueue_fast.controller")

Usage = tuple[tuple[str, str, int], ...]  # (flavor, resource, amount) an admission holds


class Scheduler:
    def __init__(
        self,
        shared: LoopState,
        cache: Cache,
        queues: QueueStatus,
        outbox: Outbox,
        opts: Options,
        clock: Clock,
        metrics: Metrics,
    ) -> None:
        self.shared = shared
        self.cache = cache
        self.queues = queues
        self.outbox = outbox
        self.opts = opts
        self.clock = clock
        self.metrics = metrics
        self._usages: dict[Usage, Usage] = {}
        self.last_capacity = 0.0  # when the engine last read TAS's node capacity
        self.last_cycle = 0.0
        self.preemptions = 0

    # --- the engine -------------------------------------------------------------------------------

    def build_engine(self) -> None:
        """Rebuild the engine from the Workloads as the API server has them,
        before anything is decided."""
        started, cpu = time.perf_counter(), time.thread_time()
        self.shared.epoch += 1
        config = self._config_state()
        admitted_evicting: list[tuple[str, str, str]] = []
        deactivated: list[Track] = []  # admitted, inactive, not evicted yet
        wanted = {
            key: wl
            for key, wl in self.cache.workloads.items()
            if self._wants_engine(self.shared.track(key), wl)
        }
        if self.opts.bulk_start:
            wpcs = self.cache.objs["wpc"]
            models, left = state.workload_models(wanted, (wpcs[name] for name in self.cache.wpcs))
            for key in models:
                self.cache.unconverted.discard(("workload", key))
        else:
            models, left = {}, list(wanted)
        for key in left:
            model = self._parse(self.shared.tracks[key], wanted[key])
            if model is not None:
                models[key] = model
        config.workloads = models
        self.shared.engine = EngineHandle(config, self.opts.engine, self.clock.time_ns())
        self.shared.config_dirty = self.shared.capacity_dirty = False
        for key, model in list(config.workloads.items()):
            t = self.shared.tracks[key]
            wl = self.cache.workloads[key]
            self._entered_engine(t, wl, model)
            ev = S.get_condition(wl, S.EVICTED)
            if model.admission is not None and ev is not None and ev.get("status") == "True":
                admitted_evicting.append(
                    (key, str(ev.get("reason") or "Preempted"), str(ev.get("message") or ""))
                )
            elif model.admission is not None and not model.active:
                deactivated.append(t)
        for t in deactivated:
            self._evict_deactivated(t)
        for key, reason, message in admitted_evicting:
            self.shared.engine.evict(key, reason, message)
            t = self.shared.tracks[key]
            t.phase = Phase.EVICTING
            pre = S.get_condition(self.cache.workloads[key], S.PREEMPTED)
            t.evict = (
                reason,
                message,
                str(pre.get("reason")) if pre and pre.get("status") == "True" else None,
            )
        self.shared.dirty.update(dict.fromkeys(self.shared.tracks))
        self.shared.sched_dirty = True
        self.queues.restart()
        self.metrics.engine_rebuilds_total.inc()
        log.info(
            "engine %s built from %d workloads (%d admitted) in %.2fs (%.2fs CPU)",
            self.shared.engine.engine_name,
            len(config.workloads),
            sum(1 for w in config.workloads.values() if w.admission is not None),
            time.perf_counter() - started,
            time.thread_time() - cpu,
        )

    def _config_state(self) -> ClusterState:
        configuration = Configuration(
            resources=self.opts.resources, wait_for_pods_ready=self.opts.wait_for_pods_ready
        )
        return self.cache.config_state(configuration)

    def sync_config(self) -> None:
        """Apply configuration changes (evictions in flight keep their quota),
        and TAS's node capacity (Nodes, non-TAS Pods) at most once per
        ``capacity_interval``: each is a rebuild of the engine."""
        assert self.shared.engine is not None
        now = self.clock.monotonic()
        capacity_only = not self.shared.config_dirty
        if self.shared.capacity_dirty and now - self.last_capacity >= self.opts.capacity_interval:
            self.shared.config_dirty = True
        if self.shared.config_dirty:
            self.shared.engine.reconfigure(self._config_state())
            self.shared.config_dirty = self.shared.capacity_dirty = False
            self.last_capacity = now
            self.shared.sched_dirty = True
            self.shared.dirty.update(dict.fromkeys(self.shared.tracks))
            self.queues.touch_all()
            log.log(
                logging.DEBUG if capacity_only else logging.INFO,
                "configuration applied: %d ClusterQueues, %d LocalQueues, %d flavors, %d nodes",
                len(self.cache.cqs),
                len(self.cache.lqs),
                len(self.cache.flavors),
                len(self.cache.nodes),
            )

    # --- the engine's workloads ---------------------------------------------------------------------------

    def _usage(self, u: Usage) -> Usage:
        """Equal usages are kept once (memory: one per workload otherwise)."""
        got = self._usages.get(u)
        if got is None:
            if len(self._usages) > 10_000:
                self._usages.clear()
            got = self._usages[u] = u
        return got

    def _wants_engine(self, t: Track, wl: JSON | None) -> bool:
        if wl is None or state.deleting(wl) or S.condition_true(wl, S.FINISHED):
            return False
        rv = wl["metadata"].get("resourceVersion")
        if rv == t.quarantined_rv and self.clock.monotonic() < t.quarantined_until:
            return False
        return bool(rv != t.invalid_rv)

    def _parse(self, t: Track, wl: JSON) -> Workload | None:
        try:
            if state.v1beta1_fields(wl):  # before workload_model drops the fields it does not read
                raise InputError(f"Workload/{t.key}", "", "v1beta1 fields")
            model = state.workload_model(wl, self.cache.wpcs)
        except InputError as e:
            self.cache.invalid("workload", t.key, wl, e)
            t.invalid_rv = wl["metadata"].get("resourceVersion")
            return None
        self.cache.unconverted.discard(("workload", t.key))
        return model

    def _entered_engine(self, t: Track, wl: JSON, model: Workload) -> None:
        t.in_engine = True
        t.generation = int(wl["metadata"].get("generation") or 0)
        t.queued_ns = model.creation_ns
        if model.admission is not None:
            t.phase = Phase.ADMITTED
            t.adm_cq = model.admission.cluster_queue
            assert self.shared.engine is not None
            reclaimable = self.shared.engine.cluster.topology.gates.reclaimable_pods
            t.adm_usage = self._usage(  # less what its reclaimed pods released
                tuple(
                    (psa.flavors[r], r, v)
                    for psa, _, usage in charged_assignments(model, reclaimable)
                    for r, v in usage.items()
                    if r in psa.flavors
                )
            )
        else:
            t.phase = Phase.PENDING
            t.adm_cq, t.adm_usage = None, ()

    def engine_sync(self, t: Track, wl: JSON | None) -> bool:
        """Make the engine hold the workload iff it should; False when that has
        to wait (no rebuild while an eviction is in flight)."""
        eng = self.shared.the_engine()
        want = self._wants_engine(t, wl)
        if t.in_engine and not want:
            eng.remove(t.key)
            t.in_engine, t.phase, t.adm_cq, t.adm_usage, t.evict = False, None, None, (), None
            self.shared.sched_dirty = True
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
            elif model.admission is not None and not model.active:
                self._evict_deactivated(t)
            self.shared.sched_dirty = True
        return True

    def _spec_changed(self, t: Track, wl: JSON, gen: int) -> bool:
        if t.phase == Phase.PENDING:
            self._reread(t, wl)
            return True
        t.generation = gen
        if t.phase == Phase.ADMITTED and (wl.get("spec") or {}).get("active") is False:
            self._evict_deactivated(t)
        # else read again once released (released): the engine's model is the one it was admitted with
        return True

    def _reread(self, t: Track, wl: JSON) -> None:
        """The engine's model of a pending workload replaced by the Workload's."""
        eng = self.shared.the_engine()
        eng.remove(t.key)
        t.in_engine, t.phase = False, None
        model = self._parse(t, wl)
        if model is not None:
            eng.add(model)
            self._entered_engine(t, wl, model)
        self.shared.sched_dirty = True

    def _evict_deactivated(self, t: Track) -> None:
        """workload_controller.go Reconcile: an inactive Workload holding quota is
        evicted (WorkloadDeactivated)."""
        eng = self.shared.the_engine()
        eng.evict(t.key, "Deactivated", "The workload is deactivated")
        t.phase = Phase.EVICTING
        t.evict = ("Deactivated", "The workload is deactivated", None)

    def released(self, t: Track) -> None:
        """The evicted workload's job stopped and its admission is gone from the
        API server: its quota is free and it queues again, unless it was
        deactivated meanwhile (the engine's model, read while it was active,
        is replaced by the Workload's: an inactive workload queues nowhere)."""
        eng = self.shared.the_engine()
        eng.release(t.key)
        t.phase = Phase.PENDING
        t.adm_cq, t.adm_usage, t.evict = None, (), None
        t.queued_ns = self.clock.time_ns()
        self.shared.sched_dirty = True
        self.queues.touch(t.key)  # from holding quota to pending in its queues' counts
        wl = self.cache.workloads.get(t.key)
        if wl is not None and (wl.get("spec") or {}).get("active") is False:
            self._reread(t, wl)

    def undo_admission(self, t: Track, why: str) -> None:
        """The admission could not be written: forget it, requeue the workload."""
        eng = self.shared.engine
        if eng is None or not t.in_engine:
            return
        eng.evict(t.key, "AdmissionFailed", why)
        eng.release(t.key)
        t.phase = Phase.PENDING
        t.adm_cq, t.adm_usage = None, ()
        t.failures += 1
        self.shared.sched_dirty = True
        self.queues.touch(t.key)
        if t.failures >= self.opts.max_failures:
            wl = self.cache.workloads.get(t.key)
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
            self.shared.later(t.key, self.opts.quarantine)
            return
        self.shared.later(t.key, min(30.0, 0.2 * 2**t.failures))

    # --- scheduling -----------------------------------------------------------------------------------

    def schedule(self) -> None:
        eng = self.shared.the_engine()
        now = self.clock.monotonic()
        if not self.shared.sched_dirty and now - self.last_cycle < 1.0:
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
            if self.outbox.events is not None:
                self._pending_events(res.attempted, res.admitted)
            for key in res.attempted:
                self.queues.pending_tried(key)
            for key in res.admitted:
                self._on_admitted(key)
            # Victims keep their quota until their job stops, and their preemptor
            # re-issues the eviction each cycle meanwhile: that is no change (as the
            # engine's run_until_settled counts it), nor a new eviction to count.
            preempted = [k for k in res.preempted if self.shared.tracks[k].phase != Phase.EVICTING]
            evicted = [k for k in res.evicted if self.shared.tracks[k].phase != Phase.EVICTING]
            for key in preempted:
                self._on_evicted(key, True)
            for key in evicted:
                self._on_evicted(key, False)
            self.queues.touch(*res.admitted, *preempted, *evicted)
            if not (res.admitted or preempted or evicted or res.newly_parked):
                self.shared.sched_dirty = False
                return
            if self.clock.monotonic() - start > self.opts.max_cycle_time:
                self.shared.sched_dirty = True
                return

    def _pending_events(self, attempted: list[str], admitted: list[str]) -> None:
        """pkg/scheduler/scheduler.go requeueAndUpdate: a Warning with the
        pending reason and message for every head a cycle tried and left
        pending (series keep them to one Event per object version)."""
        eng = self.shared.the_engine()
        done = set(admitted)
        left = [key for key in attempted if key not in done]
        for key, (reason, message) in zip(left, eng.pending_reasons(left), strict=True):
            wl = self.cache.workloads.get(key)
            if wl is not None and reason and message:
                self.outbox.event(wl, WARNING, reason, message, ADMISSION)

    def _on_admitted(self, key: str) -> None:
        eng = self.shared.the_engine()
        t = self.shared.tracks[key]
        d = eng.decision(key)
        why = self._admission_denied(key, d)
        if why:
            log.error("refusing the admission of %s to %s: %s", key, d.cluster_queue, why)
            t.phase = Phase.ADMITTED
            self.undo_admission(t, why)
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
        cq = d.cluster_queue or ""
        wait = max(0.0, (self.clock.time_ns() - t.queued_ns) / 1e9)
        self.metrics.quota_reserved_workloads_total.labels(cq).inc()
        self.metrics.quota_reserved_wait_time_seconds.labels(cq).observe(wait)
        if d.state == ADMITTED:  # else once its admission checks are Ready (WorkloadFlow.admit)
            self.metrics.admitted_workloads_total.labels(cq).inc()
            self.metrics.admission_wait_time_seconds.labels(cq).observe(wait)
        self.shared.hot[key] = None

    def _admission_denied(self, key: str, d: Decision) -> str:
        """Security: a workload goes only to the ClusterQueue its own
        namespace's LocalQueue names, and only if that ClusterQueue's
        namespaceSelector selects the namespace."""
        eng = self.shared.the_engine()
        wl = eng.workload(key)
        if wl is None:
            return "unknown workload"
        lq = self.cache.lqs.get(f"{wl.namespace}/{wl.queue_name}")
        if lq is None:
            return f"LocalQueue {wl.namespace}/{wl.queue_name} does not exist"
        if lq.cluster_queue != d.cluster_queue:
            return f"LocalQueue {wl.namespace}/{wl.queue_name} names ClusterQueue {lq.cluster_queue}"
        cq = self.cache.cqs.get(d.cluster_queue or "")
        if cq is None:
            return f"ClusterQueue {d.cluster_queue} does not exist"
        labels = self.cache.namespace_labels(wl.namespace)
        if cq.namespace_selector is None or not cq.namespace_selector.matches(labels):
            return f"ClusterQueue {cq.name} does not select namespace {wl.namespace}"
        return ""

    def _on_evicted(self, key: str, preempted: bool) -> None:
        eng = self.shared.the_engine()
        t = self.shared.tracks[key]
        d = eng.decision(key)
        message = d.message
        reason = "Preempted" if preempted else (d.reason or "Evicted")
        pre_reason = None
        t.preempted_by = d.preempted_by if preempted else None
        if preempted:
            pre_reason = d.preemption_reason or "InClusterQueue"
            by = d.preempted_by
            if by:
                by_t = self.shared.tracks.get(by)
                pcq = (by_t.adm_cq if by_t else None) or ""
                if not pcq:
                    bwl = eng.workload(by)
                    lq = self.cache.lqs.get(f"{bwl.namespace}/{bwl.queue_name}") if bwl else None
                    pcq = lq.cluster_queue if lq else ""
                self.metrics.preempted_workloads_total.labels(pcq, pre_reason).inc()
            self.preemptions += 1
        t.phase = Phase.EVICTING
        t.evict = (reason, message, pre_reason)
        self.metrics.evicted_workloads_total.labels(t.adm_cq or "", reason).inc()
        self.shared.hot[key] = None
