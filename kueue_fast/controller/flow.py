"""The per-workload flow (Kueue: pkg/controller/jobframework/reconciler.go
for the job side, pkg/controller/core/workload_controller.go for the
Workload side): for one Job/Workload pair, the next write that brings the
API server to what the engine decided (create the Workload, write the
admission, start the job, evict, stop the job, requeue, finish, remove the
finalizer), Kueue's Events once a write landed, and the results of the
writes. A part of :class:`.reconciler.Controller`."""

from __future__ import annotations

import copy
import logging
from typing import Any

from ..api.errors import InputError, MissingReferenceError
from ..cluster import admission_checks as AC
from ..cluster import workload_status as S
from ..cluster.cluster import ADMITTED, RESERVED, Decision
from ..integrations.framework import PRIORITY_LABEL, Patch, PodSetConflict, PodSetInfo, admitted_info
from ..kube import objects as state
from ..kube.client import KUEUE_API, WORKLOADS
from . import job_kinds as J
from .events import ADMISSION, NORMAL, WARNING, WORKLOAD_CONTROLLER
from .job_kinds import JobKind
from .parts import ControllerParts
from .track import JSON, Phase, Then, Track, Write
from .ungater import UNGATE_KEY
from .writer import PRIO_ADMISSION, PRIO_CREATE, Conflict, Gone, Op

log = logging.getLogger("kueue_fast.controller")

FIELD_MANAGER = "kueue-admission"


class WorkloadFlow(ControllerParts):
    def _reconcile(self, key: str) -> None:
        """The next write for one pair, on the state the loop has now."""
        t = self.tracks.get(key)
        if t is None:
            return
        self.touched.add(key)
        if t.not_before > self.clock.monotonic():
            return
        wl = self.cache.workloads.get(key)
        kind, job = self.cache.job(t.job_key)
        if job is not None and self.cache.job_unit.get(t.job_key or "") != key:
            job = None  # the job of that name is another one now
        if not self._engine_sync(t, wl):
            return
        if wl is not None and ("workload", key) in self.cache.unconverted:
            return  # stored in v1beta1: a write would lose its renamed fields (Cache.invalid)
        if wl is None:
            self._reconcile_no_workload(t, kind, job)
            return
        if self._reconcile_ended(t, wl, kind, job) or not t.in_engine:
            return
        if t.phase == Phase.PENDING:
            self._pending_tried(key)
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
                self.tracks.pop(t.key, None)
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
            self._submit(
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
                self._apply_status(t, wl, Write.FINISH, st, PRIO_CREATE, then)
                return True
        return False

    def _reconcile_admitted(self, t: Track, wl: JSON, kind: JobKind | None, job: JSON | None) -> None:
        """Admitted (or reserved) in the engine: check states in, the
        admission written, then the job started and its PodsReady kept."""
        eng = self.engine
        assert eng is not None
        if self._sync_checks(t, wl):
            self.hot[t.key] = None  # the decision may have moved: look again
            return
        d = eng.decision(t.key)
        if d.state not in (ADMITTED, RESERVED):
            return
        if (
            not S.admission_matches(wl, d)
            or S.condition_true(wl, S.ADMITTED) != (d.state == ADMITTED)
            or S.check_states_missing(wl, d)
        ):
            self._write_admission(t, wl, d)
            return
        if d.state == RESERVED:
            return  # the job starts once every admission check is Ready
        if job is not None:
            assert kind is not None
            if self._start_job(t, kind, job, wl, d):
                return
            self._sync_pods_ready(t, kind, job, wl)
        self._ungate(wl)

    def _write_admission(self, t: Track, wl: JSON, d: Decision) -> None:
        st = S.admitted_status(wl, d, self.clock.time_ns())
        then = self._then_quota_reserved(t, admitted=d.state == ADMITTED)
        if d.state == ADMITTED and S.condition_true(wl, S.QUOTA_RESERVED):  # its checks became Ready
            then = self._then_checks_ready(wl)
            cq = d.cluster_queue or ""
            self.metrics.admitted_workloads_total.labels(cq).inc()
            wait = max(0.0, (self.clock.time_ns() - t.queued_ns) / 1e9)
            self.metrics.admission_wait_time_seconds.labels(cq).observe(wait)
        self._apply_status(t, wl, Write.ADMIT, st, PRIO_ADMISSION, then)

    def _reconcile_evicting(self, t: Track, wl: JSON, kind: JobKind | None, job: JSON | None) -> None:
        """Evicted in the engine: the Evicted condition written, the job
        stopped, then the requeue (whose result releases the quota: _on_done)."""
        eng = self.engine
        assert eng is not None
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
            self._apply_status(t, wl, Write.EVICT, st, PRIO_ADMISSION, self._then_evicted(t, wl))
            return
        if job is not None:
            assert kind is not None
            ev = S.get_condition(wl, S.EVICTED) or {}
            if self._stop_job(t, kind, job, wl, str(ev.get("message") or message)):
                return
        self._apply_status(t, wl, Write.REQUEUE, S.requeued_status(wl, self.clock.time_ns()), PRIO_ADMISSION)

    def _reconcile_pending(self, t: Track, wl: JSON, kind: JobKind | None, job: JSON | None) -> None:
        """Pending in the engine: no admission left on the Workload, its
        backoff finished when it is over, its job kept stopped."""
        eng = self.engine
        assert eng is not None
        if S.has_admission(wl):
            st = S.unadmitted_status(wl, "The admission was not confirmed", self.clock.time_ns())
            self._apply_status(t, wl, Write.UNADMIT, st, PRIO_ADMISSION)
            return
        now = self.clock.time_ns()
        requeue_at = eng.requeue_state(t.key)[1]
        active = (wl.get("spec") or {}).get("active") is not False
        if active and (requeue_at is None or requeue_at <= now):  # the backoff is over (or there was none)
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

    # --- Kueue's Events (docs/controller.md says which); recorded once the write landed, as Kueue does ---

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
        by = self.cache.workloads.get(t.preempted_by or "") if pre else None
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

    # --- writes -------------------------------------------------------------------------------------

    def _apply_status(
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
            lambda c: c.apply(
                WORKLOADS, body, field_manager=FIELD_MANAGER, sub="status", spare_wait=spare_wait
            ),
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
        # the write is over whatever the epoch: a workload whose write was in flight
        # across an engine rebuild was skipped by the rebuild's look, so look again
        done = self.inflight.get(op.key) == op.name
        if done:
            del self.inflight[op.key]
        if op.epoch != self.epoch:
            if done and not op.key.startswith(UNGATE_KEY):
                self.hot[op.key] = None
            return
        then = op.data[2] if op.data and len(op.data) > 2 else None
        if then is not None and isinstance(result, dict) and result.get("metadata"):
            then(result)
        if op.key.startswith(UNGATE_KEY):
            self._ungated(op.key, result)
            return
        self.hot[op.key] = None
        if op.key.startswith(("#cq/", "#lq/", "#rf/")):
            # looked at again, whatever the result (a failed write is tried again then)
            kind, _, name = op.key[1:].partition("/")
            self._queue_changed(kind, name)
            return
        t = self.tracks.get(op.key)
        if t is None:
            return
        self.touched.add(op.key)
        if op.name == Write.PENDING and not isinstance(result, dict):
            t.pending_written = None  # not written: the next look writes it again
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
            self._released(t)

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


def _time_ns(obj: dict[str, Any]) -> int | None:
    """An object's lastTransitionTime in ns, None when absent or not a time."""
    from ..loader import parse_time_ns

    try:
        return parse_time_ns(obj.get("lastTransitionTime"), "", "lastTransitionTime")
    except InputError:
        return None
