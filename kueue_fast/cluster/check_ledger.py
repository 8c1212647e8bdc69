"""The Cluster's admission check bookkeeping (the check model is
cluster/admission_checks.py): each workload's check states, the workloads holding quota
until their checks are Ready, and the evictions a Retry or Rejected check
asks for (workload_controller.go, evict.go)."""

from __future__ import annotations

from ..api.errors import EngineError
from ..api.fields import CHECK_STATE_NAMES
from ..api.model import AdmissionCheckState, CheckState, Workload
from ..engine import arguments as A
from . import admission_checks as ac
from .base import ClusterBase


class AdmissionChecksMixin(ClusterBase):
    def set_check_state(
        self,
        key: str,
        check: str,
        state: CheckState,
        message: str = "",
        requeue_after_s: int | None = None,
        transition_ns: int | None = None,
    ) -> None:
        """A check controller wrote the state of ``check`` for the workload
        (status.admissionChecks). A workload holding quota whose checks are
        all Ready is admitted at once (the workload controller's
        SyncAdmittedCondition); Retry and Rejected act at the end of the next
        cycle (reconcileCheckBasedEviction), as the scheduling contract has it.
        A Retry's ``requeue_after_s`` keeps the evicted workload out of its
        queue until ``transition_ns`` (the state's lastTransitionTime: now, or
        the earlier one when the state did not change) plus that many seconds."""
        self._id(key)
        check, message = A.text(check, "check"), A.text(message, "message")
        if state not in CHECK_STATE_NAMES:
            known = ", ".join(CHECK_STATE_NAMES)
            raise EngineError(f'set_check_state: state "{state}" is not one of {known}')
        if requeue_after_s is not None and A.i64(requeue_after_s, "requeue_after_s") < 0:
            raise EngineError(f"set_check_state: requeue_after_s must be 0 or more, got {requeue_after_s}")
        if transition_ns is not None:
            A.i64(transition_ns, "transition_ns")
        states = [s for s in self._checks.get(key, ()) if s.name != check]
        old = next((s for s in self._checks.get(key, ()) if s.name == check), None)
        if transition_ns is None:
            same = old is not None and old.state == state and old.last_transition_ns is not None
            transition_ns = old.last_transition_ns if same and old is not None else self._clock_ns
        retries = old.retry_count if old else 0
        states.append(AdmissionCheckState(check, state, message, retries, requeue_after_s, transition_ns))
        states.sort(key=lambda s: s.name)
        self._checks[key] = states
        if ac.has_failed(states):
            self._check_failures.add(key)
        if key in self._reserved and ac.all_ready(states):
            self._reserved.discard(key)

    def check_states(self, key: str) -> list[AdmissionCheckState]:
        """The workload's status.admissionChecks as Kueue's controllers keep it."""
        self._id(key)
        return list(self._checks.get(key, ()))

    def _init_checks(self, wl: Workload) -> None:
        """The check states an input workload comes with. A workload holding
        quota gets the checks of its admission's flavors; a pending one only
        those applying to every flavor of its queue (workload.go
        AdmissionChecksForWorkload, workload_controller.go
        reconcileSyncAdmissionChecks)."""
        key = wl.key
        if wl.admission_checks:
            self._checks[key] = list(wl.admission_checks)
        elif wl.admission is None or wl.admission.cluster_queue not in self._check_cqs:
            return  # the common case: nothing to keep
        if not wl.active:
            return
        if wl.admission is not None and self.decision(key).holds_quota:
            self._quota_reserved(key, admitted=wl.admitted_condition)
        elif wl.admission is None and key in self._checks:
            lq = self.state.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
            cq = self.state.cluster_queues.get(lq.cluster_queue) if lq is not None else None
            if cq is not None:
                self._set_checks(key, ac.sync_states(self._checks[key], ac.checks_for_pending(cq)))
        if ac.has_failed(self._checks.get(key, ())):
            self._check_failures.add(key)

    def _set_checks(self, key: str, states: list[AdmissionCheckState]) -> None:
        if states:
            self._checks[key] = states
        else:
            self._checks.pop(key, None)

    def _quota_reserved(self, key: str, *, admitted: bool) -> None:
        """Quota was reserved for the workload: the checks of its flavors get
        a state (Pending when new); it is admitted at once when they are all
        Ready (scheduler.go prepareWorkload), or when Kueue had already
        admitted it (an Admitted workload stays so: workload_controller.go
        syncs Admitted only for workloads not admitted)."""
        d = self.decision(key)
        cq = self.state.cluster_queues.get(d.cluster_queue or "")
        if cq is None or not cq.admission_checks:
            self._checks.pop(key, None)
            return
        flavors = {f for ps in d.pod_sets for f in ps.flavors.values()}
        states = ac.sync_states(self._checks.get(key, ()), ac.checks_for_flavors(cq, flavors))
        self._set_checks(key, states)
        if not admitted and not ac.all_ready(states):
            self._reserved.add(key)

    def _checks_evicted(self, key: str) -> None:
        """An eviction resets the check states (evict.go resetChecksOnEviction)."""
        self._reserved.discard(key)
        if key in self._checks:
            self._set_checks(key, ac.reset_on_eviction(self._checks[key], self._clock_ns))

    def _evict_for_failed_checks(self, now_ns: int) -> list[str]:
        """End of a cycle: workloads holding quota with a Retry check are
        evicted and requeued, ordered by the eviction time until admitted
        again; with a Rejected one, deactivated (reconcileCheckBasedEviction).
        A Retry with requeueAfterSeconds ending after now sets requeueAt
        (workload_controller.go Reconcile: NeedsRequeueAtUpdate, then
        SetRequeueState without counting): the workload is held out of its
        queue until then, as after a PodsReady timeout (_hold)."""
        out: list[str] = []
        for key in sorted(self._check_failures):
            if key not in self._wid or not self.decision(key).holds_quota:
                continue
            self._check_failures.discard(key)
            states = self._checks.get(key, ())
            what = ac.check_eviction(states)
            if what is None:
                continue
            reason, message, requeue = what
            requeue_at = ac.retry_time_ns(states) if requeue else None
            if requeue_at is not None and requeue_at > now_ns:
                self._requeue_at[key] = (requeue_at, now_ns)
            self.engine.evict_after_cycle(self._wid[key], reason, message, now_ns if requeue else -1, requeue)
            self._checks_evicted(key)
            if self.release_evictions and key in self._requeue_at:
                self._hold(key, self.cycles)
            if not requeue:
                self._deactivated.add(key)
                self.state.workloads[key].active = False  # a rebuild queues it nowhere
            out.append(key)
        return out

    def _unsatisfied_checks_reason(self) -> str:
        gates = self.state.configuration.feature_gates
        if gates.get("UnadmittedWorkloadsObservability", True):
            return ac.UNSATISFIED_CHECKS
        return ac.UNSATISFIED_CHECKS_LEGACY
