"""The per-workload flow (Kueue: pkg/controller/jobframework/reconciler.go
for the job side, pkg/controller/core/workload_controller.go for the
Workload side): for one Job/Workload pair, the next write that brings the
API server to what the engine decided (create the Workload, write the
admission, start the job, evict, stop the job, requeue, finish, remove the
finalizer), Kueue's Events once a write landed, and the results of the
writes. :class:`WorkloadFlow` is a part of the controller."""

from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Any

from ..api.errors import InputError, MissingReferenceError
from ..cluster import admission_checks as AC, status_writer as S
from ..cluster.cluster import ADMITTED, RESERVED, Decision
from ..integrations.framework import PRIORITY_LABEL, Patch, PodSetConflict, PodSetInfo, admitted_info
from ..kube import objects as state
from ..kube.client import WORKLOADS
from . import job_kinds as J
from .events import ADMISSION, NORMAL, WARNING, WORKLOAD_CONTROLLER
from .job_kinds import JobKind
from .track import JSON, Phase, Then, Track, Write
from .ungater import UNGATE_KEY
from .writer import PRIO_ADMISSION, PRIO_CREATE, Conflict, Gone, Op

if TYPE_CHECKING:
    from ..kube.leader_election import Clock
    from .cache import Cache
    from .loop_state import LoopState
    from .outbox import Outbox
    from .prometheus import Metrics
    from .queue_status import QueueStatus
    from .reconciler import Options
    from .scheduling import Scheduler
    from .ungater import TopologyUngater

log = logging.getLogger("kueue_fast.controller")


class WorkloadFlow:
    def __init__(
        self,
        shared: LoopState,
        cache: Cache,
        scheduler: Scheduler,
        queues: QueueStatus,
        ungater: TopologyUngater,
        outbox: Outbox,
        opts: Options,
        clock: Clock,
        metrics: Metrics,
    ) -> None:
        self.shared = shared
        self.cache = cache
        self.scheduler = scheduler
        self.queues = queues
        self.ungater = ungater
        self.outbox = outbox
        self.opts = opts
        self.clock = clock
        self.metrics = metrics

    def reconcile(self, key: str) -> None:
        """The next write for one pair, on the state the loop has now."""
        t = self.shared.tracks.get(key)
        if t is None:
            return
        self.queues.touch(key)
        if t.not_before > self.clock.monotonic():
            return
        wl = self.cache.workloads.get(key)
        kind, job = self.cache.job(t.job_key)
        if job is not None and self.cache.job_unit.get(t.job_key or "") != key:
            job = None  # the job of that name is another one now
        if not self.scheduler.engine_sync(t, wl):
            return
        if wl is not None and ("workload", key) in self.cache.unconverted:
            return  # stored in v1beta1: a write would lose its renamed fields (Cache.invalid)
        if wl is None:
            self._reconcile_no_workload(t, kind, job)
            return
        if self._reconcile_ended(t, wl, kind, job) or not t.in_engine:
            return
        if t.phase == Phase.PENDING:
            self.queues.pending_tried(key)
        if t.phase == Phase.ADMITTED:
            self._reconcile_admitted(t, wl, kind, job)
        elif t.phase == Phase.EVICTING:
            self._reconcile_evicting(t, wl, kind, job)
        else:
            self._reconcile_pending(t, wl, kind, job)

    def _reconcile_no_workload(self, t: Track, kind: JobKind | None, job: JSON | None) -> None:
        """No Workload: a queued job gets one; a pair with neither is forgotten."""
        if job is None:
            if not t.in_engine:
                self.shared.tracks.pop(t.key, None)
                if t.job_key and self.cache.job_unit.get(t.job_key) == t.key:
                    self.cache.job_unit.pop(t.job_key, None)
            return
        assert kind is not None
        self._reconcile_job_alone(t, kind, job)

    def _reconcile_ended(self, t: Track, wl: JSON, kind: JobKind | None, job: JSON | None) -> bool:
        """A Workload at its end (deleted, orphaned, finished, or its job
        finished): its last writes. False when it is not at its end."""
        md = wl["metadata"]
        ns, name = md["namespace"], md["name"]
        if state.deleting(wl):
            if J.RESOURCE_IN_USE in (md.get("finalizers") or []):
                self._write_finalizers(t, wl)
            return True
        if job is None and self.cache.orphaned(wl):
            self.outbox.submit(
                t.key,
                Write.DELETE_WORKLOAD,
                PRIO_CREATE,
                lambda c: c.delete(WORKLOADS, name, ns, uid=md.get("uid")),
                (WORKLOADS, name, ns),
                ("workload", t.key),
            )
            return True
        if S.condition_true(wl, S.FINISHED):
            if J.RESOURCE_IN_USE in (md.get("finalizers") or []):
                self._write_finalizers(t, wl)
            return True
        if job is not None:
            assert kind is not None
            done, failed, message = kind.integration.finished(job)
            if done:
                st = S.finished_status(wl, failed, message, self.clock.time_ns())
                note = f"Workload '{t.key}' is declared finished"
                then = self._then_event(kind, job, "FinishedWorkload", note)
                self.outbox.apply_status(t, wl, Write.FINISH, st, PRIO_CREATE, then)
                return True
        return False

    def _reconcile_admitted(self, t: Track, wl: JSON, kind: JobKind | None, job: JSON | None) -> None:
        """Admitted (or reserved) in the engine: check states in, the
        admission written, then the job started and its PodsReady kept."""
        eng = self.shared.the_engine()
        if self._sync_checks(t, wl):
            self.shared.hot[t.key] = None  # the decision may have moved: look again
            return
        d = eng.decision(t.key)
        if d.state not in (ADMITTED, RESERVED):
            return
        if (
            not S.admission_matches(wl, d)
            or S.condition_true(wl, S.ADMITTED) != (d.state == ADMITTED)
            or S.check_states_missing(wl, d)
        ):
            self.admit(t, wl, d)
            return
        if d.state == RESERVED:
            return  # the job starts once every admission check is Ready
        if job is not None:
            assert kind is not None
            if self._start_job(t, kind, job, wl, d):
                return
            self._sync_pods_ready(t, kind, job, wl)
        self.ungater.ungate(wl)

    def admit(self, t: Track, wl: JSON, d: Decision) -> None:
        """The admission write, from the engine's decision to the Workload's
        status patch: Kueue's pkg/scheduler/scheduler.go admit() (the quota
        is assumed in the engine already, by the cycle: Scheduler._on_admitted).
        Also the second write of an admission with checks, once they are all
        Ready (workload_controller.go Reconcile turns it Admitted)."""
        now = self.clock.time_ns()
        admitted = d.state == ADMITTED
        checks_ready = admitted and S.condition_true(wl, S.QUOTA_RESERVED)
        # 1. the status: status.admission (each pod set's flavors, counts, topology
        #    assignment), QuotaReserved, Admitted when no check waits, the check states
        #    (workload.SetQuotaReservation, SetAdmittedCondition)
        status = S.admitted_status(wl, d, now)
        if checks_ready:  # counted here; the first write was counted by the cycle (_on_admitted)
            cq = d.cluster_queue or ""
            self.metrics.admitted_workloads_total.labels(cq).inc()
            self.metrics.admission_wait_time_seconds.labels(cq).observe(max(0.0, (now - t.queued_ns) / 1e9))
        # 2. Kueue's Events once the write landed, on the Workload the server returned
        #    (recordWorkloadAdmissionMetrics: QuotaReserved, then Admitted)
        then: Then | None = None
        if self.outbox.events is not None:
            event, clock = self.outbox.event, self.clock
            queued_ns = t.queued_ns
            reserved_ns = _time_ns(S.get_condition(wl, S.QUOTA_RESERVED) or {}) if checks_ready else None

            def landed(fresh: JSON) -> None:
                cq = ((fresh.get("status") or {}).get("admission") or {}).get("clusterQueue", "")
                if checks_ready:  # the wait since the reservation; QuotaReserved is not repeated
                    later = clock.time_ns()
                    wait = 0.0 if reserved_ns is None else max(0.0, (later - reserved_ns) / 1e9)
                    note = f"Admitted by ClusterQueue {cq}, wait time since reservation was {wait:.0f}s"
                    event(fresh, NORMAL, "Admitted", note, WORKLOAD_CONTROLLER)
                    return
                wait = max(0.0, (clock.time_ns() - queued_ns) / 1e9)
                note = f"Quota reserved in ClusterQueue {cq}, wait time since queued was {wait:.0f}s"
                event(fresh, NORMAL, "QuotaReserved", note, ADMISSION)
                if admitted:
                    note = f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s"
                    event(fresh, NORMAL, "Admitted", note, ADMISSION)

            then = landed
        # 3. the patch: the status applied on the resourceVersion it was decided on, ahead
        #    of every other kind of write (applyAdmission); its result comes back to
        #    on_done, which undoes the assumption if it failed for good (ForgetWorkload)
        self.outbox.apply_status(t, wl, Write.ADMIT, status, PRIO_ADMISSION, then)

    def _reconcile_evicting(self, t: Track, wl: JSON, kind: JobKind | None, job: JSON | None) -> None:
        """Evicted in the engine: the Evicted condition written, the job
        stopped, then the requeue (whose result releases the quota: on_done)."""
        eng = self.shared.the_engine()
        reason, message, pre = t.evict or ("Preempted", "", None)
        if reason == AC.DEACTIVATED_BY_CHECK and (wl.get("spec") or {}).get("active") is not False:
            self._deactivate(t, wl, self._then_check_rejected(message))  # spec.active=false, then evicted
            return
        if not S.condition_true(wl, S.EVICTED):
            st = S.evicted_status(wl, reason, message, pre, self.clock.time_ns())
            # evict with UpdateRequeueState (PodsReady) or after NeedsRequeueAtUpdate (a Retry's
            # requeueAfterSeconds) (workload_controller.go)
            if reason in ("PodsReadyTimeout", AC.EVICTED_BY_CHECK):
                S.set_requeue_state(st, *eng.requeue_state(t.key))
            self.outbox.apply_status(t, wl, Write.EVICT, st, PRIO_ADMISSION, self._then_evicted(t, wl))
            return
        if job is not None:
            assert kind is not None
            ev = S.get_condition(wl, S.EVICTED) or {}
            if self._stop_job(t, kind, job, wl, str(ev.get("message") or message)):
                return
        self.outbox.apply_status(
            t, wl, Write.REQUEUE, S.requeued_status(wl, self.clock.time_ns()), PRIO_ADMISSION
        )

    def _reconcile_pending(self, t: Track, wl: JSON, kind: JobKind | None, job: JSON | None) -> None:
        """Pending in the engine: no admission left on the Workload, its
        backoff finished when it is over, its job kept stopped."""
        eng = self.shared.the_engine()
        if S.has_admission(wl):
            st = S.unadmitted_status(wl, "The admission was not confirmed", self.clock.time_ns())
            self.outbox.apply_status(t, wl, Write.UNADMIT, st, PRIO_ADMISSION)
            return
        now = self.clock.time_ns()
        requeue_at = eng.requeue_state(t.key)[1]
        active = (wl.get("spec") or {}).get("active") is not False
        if active and (requeue_at is None or requeue_at <= now):  # the backoff is over (or there was none)
            st = copy.deepcopy(wl.get("status") or {})
            if S.finish_backoff(st, now, wl["metadata"].get("generation")):
                self.outbox.apply_status(t, wl, Write.BACKOFF_FINISHED, st, PRIO_ADMISSION)
                return
        if job is not None:
            assert kind is not None
            self._stop_job(t, kind, job, wl, "Not admitted by cluster queue")

    def _sync_checks(self, t: Track, wl: JSON) -> bool:
        """Check states other controllers wrote on the Workload reach the
        engine (Ready admits; Retry and Rejected evict at the end of the next
        cycle). True when one changed."""
        eng = self.shared.the_engine()
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
            self.shared.sched_dirty = True
        return changed

    def _deactivate(self, t: Track, wl: JSON, then: Then | None = None) -> None:
        md = wl["metadata"]
        ns, name = md["namespace"], md["name"]
        patch = {"metadata": {"resourceVersion": md["resourceVersion"]}, "spec": {"active": False}}
        self.outbox.submit(
            t.key,
            Write.DEACTIVATE,
            PRIO_ADMISSION,
            lambda c: c.patch(WORKLOADS, name, patch, namespace=ns),
            (WORKLOADS, name, ns),
            ("workload", t.key),
            then,
        )

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
        eng = self.shared.the_engine()
        eng.set_pods_ready(t.key, ready, cond[1], now)
        self.outbox.apply_status(t, wl, Write.PODS_READY, S.pods_ready_status(wl, cond, now), PRIO_ADMISSION)

    def _start_job(self, t: Track, kind: JobKind, job: JSON, wl: JSON, d: Decision) -> bool:
        """jobframework startJob: the admission (each pod set's count, its
        flavors' nodeLabels and tolerations, the pod set label, TAS's gate)
        merged into the job; Started when this unsuspends it. An admission that cannot
        merge (podset.Merge conflict) finishes the Workload as FailedToStart."""
        infos: list[PodSetInfo] = []
        flavors = self.cache.objs["flavor"]
        requests = {
            p.get("name"): p.get("topologyRequest") for p in (wl.get("spec") or {}).get("podSets") or []
        }
        for ps in d.pod_sets:
            names = sorted(set(ps.flavors.values()))
            tas = ps.topology_assignment is not None
            implied = tas and not any(
                k in (requests.get(ps.name) or {}) for k in ("required", "preferred", "unconstrained")
            )
            infos.append(
                admitted_info(
                    ps.name,
                    ps.count,
                    [flavors[f] for f in names if f in flavors],
                    wl["metadata"]["name"] if tas else None,
                    implied,
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
            self.outbox.apply_status(t, wl, Write.FINISH, st, PRIO_CREATE)
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

    def _reconcile_job_alone(self, t: Track, kind: JobKind, job: JSON) -> None:
        """A queued job with no Workload yet: keep it suspended, create the
        Workload the integration makes of it (as `kueue-fast schedule` does)."""
        full = kind.full(job)
        if kind.integration.finished(full)[0] or state.deleting(job):
            return
        if self._stop_job(t, kind, job, None, "Missing Workload; unable to restore pod templates"):
            return
        rv = job["metadata"].get("resourceVersion")
        try:
            conv = kind.integration.workloads_for(full, self.cache.environment())
        except MissingReferenceError as e:
            log.warning("%s %s: %s; trying again in 5s", kind.integration.KIND, t.job_key, e)
            if e.field == f"metadata.labels[{PRIORITY_LABEL}]":
                self.outbox.event(
                    job, WARNING, "WorkloadPriorityClassNotFound", e.message, kind.events_controller
                )
            self.shared.later(t.key, 5.0)
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
        self.outbox.submit(
            t.key,
            Write.CREATE_WORKLOAD,
            PRIO_CREATE,
            lambda c: c.create(WORKLOADS, body, ns),
            (WORKLOADS, name, ns),
            ("workload", t.key),
            self._then_event(kind, job, "CreatedWorkload", f"Created Workload: {ns}/{name}"),
        )

    # --- Kueue's Events (docs/controller.md says which); recorded once the write landed, as Kueue does ---

    def _then_event(self, kind: JobKind, job: JSON | None, reason: str, note: str) -> Then | None:
        """A Normal Event on a job once the write landed: on ``job`` as it was,
        or (None) on the job the write returned."""
        if self.outbox.events is None:
            return None
        return lambda fresh: self.outbox.event(job or fresh, NORMAL, reason, note, kind.events_controller)

    def _then_check_rejected(self, message: str) -> Then | None:
        """workload_controller.go reconcileCheckBasedEviction: a Warning
        "AdmissionCheckRejected", "Deactivated due to <the rejected checks>"."""
        if self.outbox.events is None:
            return None
        note = "Deactivated due to " + message.partition(" due to ")[2]
        return lambda fresh: self.outbox.event(
            fresh, WARNING, "AdmissionCheckRejected", note, WORKLOAD_CONTROLLER
        )

    def _then_evicted(self, t: Track, wl: JSON) -> Then | None:
        """pkg/workload/evict: EvictedDueTo<reason>; for a preemption also
        pkg/scheduler/preemption IssuePreemptions' Preempted (on the victim) and
        PreemptedWorkload (on the preemptor). kueue-fast has no priority boost:
        effective priorities are the base ones."""
        if self.outbox.events is None:
            return None
        reason, message, pre = t.evict or ("Preempted", "", None)
        eng = self.shared.engine
        victim = eng.workload(t.key) if eng is not None else None
        by = self.cache.workloads.get(t.preempted_by or "") if pre else None
        preemptor = eng.workload(t.preempted_by or "") if eng is not None and pre else None
        victim_cq = t.adm_cq or ""
        victim_uid = str(wl["metadata"].get("uid") or "")

        def then(fresh: JSON) -> None:
            controller = ADMISSION if pre else WORKLOAD_CONTROLLER
            self.outbox.event(fresh, NORMAL, f"EvictedDueTo{reason}", message, controller)
            if by is None or preemptor is None or victim is None:
                return
            pp, vp = preemptor.priority, victim.priority
            priorities = (
                f"; preemptor effective priority: {pp} (base: {pp}, boost: 0); "
                f"preemptee effective priority: {vp} (base: {vp}, boost: 0)"
            )
            self.outbox.event(fresh, NORMAL, "Preempted", message + priorities, ADMISSION)
            note = f"Preempted workload {t.key} (UID: {victim_uid}) in ClusterQueue {victim_cq}{priorities}"
            self.outbox.event(by, NORMAL, "PreemptedWorkload", note, ADMISSION)

        return then

    # --- writes -------------------------------------------------------------------------------------

    def _patch_job(
        self, t: Track, kind: JobKind, job: JSON, write: Write, patch: Patch, then: Then | None = None
    ) -> None:
        md = job["metadata"]
        ns, jname = md["namespace"], md["name"]
        res = kind.resource
        self.outbox.submit(
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
        self.outbox.submit(
            t.key,
            Write.FINALIZER,
            PRIO_CREATE,
            lambda c: c.patch(WORKLOADS, name, patch, namespace=ns),
            (WORKLOADS, name, ns),
            ("workload", t.key),
        )

    # --- results -------------------------------------------------------------------------------------

    def on_done(self, op: Op, result: Any) -> None:
        """A write's result (the object it returned is in the cache already:
        Intake.observe_result): the pair looked at again, a failed admission
        undone, a landed requeue's quota released."""
        # the write is over whatever the epoch: a workload whose write was in flight
        # across an engine rebuild was skipped by the rebuild's look, so look again
        done = self.shared.inflight.get(op.key) == op.name
        if done:
            del self.shared.inflight[op.key]
        if op.epoch != self.shared.epoch:
            if done and not op.key.startswith(UNGATE_KEY):
                self.shared.hot[op.key] = None
            return
        then = op.data[2] if op.data and len(op.data) > 2 else None
        if then is not None and isinstance(result, dict) and result.get("metadata"):
            then(result)
        if op.key.startswith(UNGATE_KEY):
            self.ungater.ungated(op.key, result)
            return
        self.shared.hot[op.key] = None
        if op.key.startswith(("#cq/", "#lq/", "#rf/")):
            # looked at again, whatever the result (a failed write is tried again then)
            kind, _, name = op.key[1:].partition("/")
            self.queues.queue_changed(kind, name)
            return
        t = self.shared.tracks.get(op.key)
        if t is None:
            return
        self.queues.touch(op.key)
        if op.name == Write.PENDING and not isinstance(result, dict):
            t.pending_written = None  # not written: the next look writes it again
        if isinstance(result, Conflict):
            t.conflicts += 1
            if t.conflicts > 20:
                self.shared.later(op.key, min(5.0, 0.05 * t.conflicts))
            return
        t.conflicts = 0
        if isinstance(result, Gone):
            if op.name == Write.ADMIT:
                self.scheduler.undo_admission(t, "the Workload is gone")
            return
        if isinstance(result, BaseException):
            self.metrics.write_failures_total.labels(op.name).inc()
            if op.name == Write.ADMIT:
                self.scheduler.undo_admission(t, f"writing the admission failed: {result}")
            else:
                t.failures += 1
                self.shared.later(op.key, min(30.0, 0.2 * 2 ** min(t.failures, 8)))
            return
        if op.name == Write.CREATE_WORKLOAD:
            t.failures = 0
        elif op.name == Write.ADMIT:
            t.failures = 0
        elif (
            op.name == Write.REQUEUE
            and self.shared.engine is not None
            and t.in_engine
            and t.phase == Phase.EVICTING
        ):
            self.scheduler.released(t)


def _time_ns(obj: dict[str, Any]) -> int | None:
    """An object's lastTransitionTime in ns, None when absent or not a time."""
    from ..loader import parse_time_ns

    try:
        return parse_time_ns(obj.get("lastTransitionTime"), "", "lastTransitionTime")
    except InputError:
        return None
