"""The Cluster's admission check ledger (the check model is
cluster/admission_checks.py): each workload's check states, the workloads holding quota
until their checks are Ready, and the evictions a Retry or Rejected check
asks for (workload_controller.go, evict.go)."""

from __future__ import annotations

from collections.abc import Callable

from ..api.errors import EngineError
from ..api.fields import CHECK_STATE_NAMES
from ..api.model import AdmissionCheckState, CheckState, ClusterState, Workload
from ..engine import arguments as A
from . import admission_checks as ac
from .decisions import CycleResult, Decision
from .handles import Clock, EngineHandle, WorkloadIndex
from .pods_ready import PodsReadyLedger


class AdmissionCheckLedger:
    """Per workload, its check states; the workloads holding quota until their
    checks are Ready (reserved), those with a Retry or Rejected state still to
    act on, and those a Rejected check deactivated. A Retry with
    requeueAfterSeconds holds the workload out of its queue through the
    PodsReady ledger's backoff. The calls that read a decision take
    ``decide``, the Cluster's decision(key), as an argument: a reference kept
    to it would tie the Cluster in a cycle, freed only by the cyclic GC."""

    def __init__(
        self,
        built: EngineHandle,
        index: WorkloadIndex,
        clock: Clock,
        pods_ready: PodsReadyLedger,
    ) -> None:
        self._built = built
        self._index = index
        self._clock = clock
        self._pods_ready = pods_ready
        self.cluster_queues: set[str] = set()  # the ClusterQueues with admission checks
        self.states: dict[str, list[AdmissionCheckState]] = {}
        self.reserved: set[str] = set()  # quota held, not admitted yet
        self.failures: set[str] = set()  # a Retry or Rejected state still to act on
        self.deactivated: set[str] = set()  # by a Rejected check

    def rebuild(self, state: ClusterState) -> None:
        """The configuration changed (the Cluster built a new engine)."""
        self.cluster_queues = {name for name, cq in state.cluster_queues.items() if cq.admission_checks}

    def forget(self, key: str) -> None:
        """The workload left the cluster."""
        self.states.pop(key, None)
        self.reserved.discard(key)
        self.failures.discard(key)
        self.deactivated.discard(key)

    def input_workload(self, wl: Workload, decide: Callable[[str], Decision]) -> None:
        """An input workload: the check states it comes with, when it has some
        or holds quota in a ClusterQueue with checks (else nothing to keep)."""
        adm = wl.admission
        if wl.admission_checks or (adm is not None and adm.cluster_queue in self.cluster_queues):
            self.init(wl, decide)

    def after_cycle(
        self, result: CycleResult, admitted: list[int], decide: Callable[[str], Decision]
    ) -> None:
        """What the cycle's admissions (wids) and evictions do to the checks: an
        eviction resets them, quota reserved in a ClusterQueue with checks waits
        for them, and a Retry or Rejected state evicts (added to result.evicted)."""
        for key in [*result.preempted, *result.evicted]:
            self.evicted(key)
        if self.cluster_queues:
            engine, cqs, keys = self._built.engine, self._built.topology.cluster_queues, self._index.keys
            for w in admitted:
                if cqs[engine.workload_view(w).admitted_cq].name in self.cluster_queues:
                    self.quota_reserved(keys[w], decide, admitted=False)
        if self.failures:
            result.evicted.extend(self._evict_for_failed_checks(result.time_ns, decide))

    def recheck_reserved(self, decide: Callable[[str], Decision]) -> None:
        """After a rebuild the checks that apply may have changed
        (workload_controller.go syncs them on a ClusterQueue update): a
        reserved workload whose checks are now all Ready is admitted."""
        for key in sorted(self.reserved):
            self.reserved.discard(key)
            if key in self._index.wid:
                self.quota_reserved(key, decide, admitted=False)

    def set_check_state(
        self,
        key: str,
        check: str,
        state: CheckState,
        message: str = "",
        requeue_after_s: int | None = None,
        transition_ns: int | None = None,
    ) -> None:
        """Cluster.set_check_state (documented there)."""
        self._index.id(key)
        check, message = A.text(check, "check"), A.text(message, "message")
        if state not in CHECK_STATE_NAMES:
            known = ", ".join(CHECK_STATE_NAMES)
            raise EngineError(f'set_check_state: state "{state}" is not one of {known}')
        if requeue_after_s is not None and A.i64(requeue_after_s, "requeue_after_s") < 0:
            raise EngineError(f"set_check_state: requeue_after_s must be 0 or more, got {requeue_after_s}")
        if transition_ns is not None:
            A.i64(transition_ns, "transition_ns")
        states = [s for s in self.states.get(key, ()) if s.name != check]
        old = next((s for s in self.states.get(key, ()) if s.name == check), None)
        if transition_ns is None:
            same = old is not None and old.state == state and old.last_transition_ns is not None
            transition_ns = old.last_transition_ns if same and old is not None else self._clock.now_ns
        retries = old.retry_count if old else 0
        states.append(AdmissionCheckState(check, state, message, retries, requeue_after_s, transition_ns))
        states.sort(key=lambda s: s.name)
        self.states[key] = states
        if ac.has_failed(states):
            self.failures.add(key)
        if key in self.reserved and ac.all_ready(states):
            self.reserved.discard(key)

    def states_of(self, key: str) -> list[AdmissionCheckState]:
        """Cluster.check_states (documented there)."""
        self._index.id(key)
        return list(self.states.get(key, ()))

    def init(self, wl: Workload, decide: Callable[[str], Decision]) -> None:
        """The check states an input workload comes with. A workload holding
        quota gets the checks of its admission's flavors; a pending one only
        those applying to every flavor of its queue (workload.go
        AdmissionChecksForWorkload, workload_controller.go
        reconcileSyncAdmissionChecks)."""
        key = wl.key
        if wl.admission_checks:
            self.states[key] = list(wl.admission_checks)
        elif wl.admission is None or wl.admission.cluster_queue not in self.cluster_queues:
            return  # the common case: nothing to keep
        if not wl.active:
            return
        if wl.admission is not None and decide(key).holds_quota:
            self.quota_reserved(key, decide, admitted=wl.admitted_condition)
        elif wl.admission is None and key in self.states:
            lq = self._built.state.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
            cq = self._built.state.cluster_queues.get(lq.cluster_queue) if lq is not None else None
            if cq is not None:
                self._set(key, ac.sync_states(self.states[key], ac.checks_for_pending(cq)))
        if ac.has_failed(self.states.get(key, ())):
            self.failures.add(key)

    def _set(self, key: str, states: list[AdmissionCheckState]) -> None:
        if states:
            self.states[key] = states
        else:
            self.states.pop(key, None)

    def quota_reserved(self, key: str, decide: Callable[[str], Decision], *, admitted: bool) -> None:
        """Quota was reserved for the workload: the checks of its flavors get
        a state (Pending when new); it is admitted at once when they are all
        Ready (scheduler.go prepareWorkload), or when Kueue had already
        admitted it (an Admitted workload stays so: workload_controller.go
        syncs Admitted only for workloads not admitted)."""
        d = decide(key)
        cq = self._built.state.cluster_queues.get(d.cluster_queue or "")
        if cq is None or not cq.admission_checks:
            self.states.pop(key, None)
            return
        flavors = {f for ps in d.pod_sets for f in ps.flavors.values()}
        states = ac.sync_states(self.states.get(key, ()), ac.checks_for_flavors(cq, flavors))
        self._set(key, states)
        if not admitted and not ac.all_ready(states):
            self.reserved.add(key)

    def evicted(self, key: str) -> None:
        """An eviction resets the check states (evict.go resetChecksOnEviction)."""
        self.reserved.discard(key)
        if key in self.states:
            self._set(key, ac.reset_on_eviction(self.states[key], self._clock.now_ns))

    def _evict_for_failed_checks(self, now_ns: int, decide: Callable[[str], Decision]) -> list[str]:
        """End of a cycle: workloads holding quota with a Retry check are
        evicted and requeued, ordered by the eviction time until admitted
        again; with a Rejected one, deactivated (reconcileCheckBasedEviction).
        A Retry with requeueAfterSeconds ending after now sets requeueAt
        (workload_controller.go Reconcile: NeedsRequeueAtUpdate, then
        SetRequeueState without counting): the workload is held out of its
        queue until then, as after a PodsReady timeout (PodsReadyLedger.hold)."""
        out: list[str] = []
        for key in sorted(self.failures):
            if key not in self._index.wid or not decide(key).holds_quota:
                continue
            self.failures.discard(key)
            states = self.states.get(key, ())
            what = ac.check_eviction(states)
            if what is None:
                continue
            reason, message, requeue = what
            requeue_at = ac.retry_time_ns(states) if requeue else None
            if requeue_at is not None and requeue_at > now_ns:
                self._pods_ready.requeue_at[key] = (requeue_at, now_ns)
            self._built.engine.evict_after_cycle(
                self._index.wid[key], reason, message, now_ns if requeue else -1, requeue
            )
            self.evicted(key)
            if self._built.release_evictions and key in self._pods_ready.requeue_at:
                self._pods_ready.hold(key, self._clock.cycles)
            if not requeue:
                self.deactivated.add(key)
                self._built.state.workloads[key].active = False  # a rebuild queues it nowhere
            out.append(key)
        return out

    def unsatisfied_reason(self) -> str:
        gates = self._built.state.configuration.feature_gates
        if gates.get("UnadmittedWorkloadsObservability", True):
            return ac.UNSATISFIED_CHECKS
        return ac.UNSATISFIED_CHECKS_LEGACY
