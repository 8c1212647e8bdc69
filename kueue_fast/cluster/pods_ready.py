"""The Cluster's waitForPodsReady bookkeeping: PodsReady conditions, PodsReady
timeouts, and workloads held out of their queues until their backoff ends
(workload_controller.go, the queue manager's backoff)."""

from __future__ import annotations

from typing import Any

from ..api.model import ClusterState, Workload
from ..engine import arguments as A
from . import admission_checks as ac
from .base import ClusterBase
from .decisions import ADMITTED, EVICTED, NS_PER_S, PENDING, Decision, HeldWorkload, PodsReadyState


class PodsReadyMixin(ClusterBase):
    def set_pods_ready(self, key: str, ready: bool, reason: str = "", now_ns: int | None = None) -> None:
        """The PodsReady condition of the workload's current admission changed
        (the simulator's pod start-up, the controller's job status); reason
        WaitForRecovery for pods that were ready and failed."""
        wid = self._id(key)
        ready, reason = A.flag(ready, "ready"), A.text(reason, "reason")
        if now_ns is not None:
            A.i64(now_ns, "now_ns")
        view = self.engine.workload_view(wid)
        t = self._clock_ns if now_ns is None else now_ns
        self._pods_ready[key] = PodsReadyState(
            view.admission_time, ready, reason or ("PodsReady" if ready else "WaitForStart"), t
        )
        self.engine.set_pods_ready(wid, ready)

    def requeue_state(self, key: str) -> tuple[int, int | None]:
        """status.requeueState: (count, requeueAt ns or None)."""
        held = self._held.get(self._wid.get(key, -1))
        wl = self.state.workloads.get(key)
        count = self._requeue_count.get(key, wl.requeue_count if wl else 0)
        if held is not None:
            return count, held.requeue_at_ns
        return count, self._requeue_at.get(key, (None, 0))[0]  # evicted, its pods not gone yet

    def _read_pods_ready_inputs(self, state: ClusterState, timed: list[str]) -> None:
        """Input Workloads (``timed``: the keys of those with a PodsReady time or
        a requeueAt, WorkloadScan.timed): the PodsReady condition of an admitted
        one, and a pending one still in the backoff its status.requeueState.requeueAt
        sets (workload_controller.go Reconcile: not queued before requeueAt)."""
        for key in sorted(timed):
            wl = state.workloads[key]
            if wl.admission is not None and wl.pods_ready_ns is not None:
                admitted = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
                self._pods_ready[key] = PodsReadyState(
                    admitted, wl.pods_ready, wl.pods_ready_reason, wl.pods_ready_ns
                )
            elif wl.admission is None and wl.active and wl.requeue_at_ns is not None:
                if wl.requeue_at_ns > self._clock_ns + NS_PER_S:
                    wid = self._wid[key]
                    requeued = _condition(wl, "Requeued")
                    held = HeldWorkload(
                        wid,
                        -1,
                        str(requeued.get("reason") or "Pending"),
                        str(requeued.get("message") or ""),
                        wl.requeue_at_ns,
                        wl.queue_timestamp_ns,
                    )
                    self._held[wid] = held
                    self._engine_hold(held)

    def _pods_ready_state(self, key: str, admitted_ns: int) -> PodsReadyState:
        st = self._pods_ready.get(key)
        if st is None or st.admitted_ns != admitted_ns:  # admitted in a cycle: its pods have not started
            return PodsReadyState(admitted_ns, False, "WaitForStart", admitted_ns)
        return st

    def _admitted_condition_ns(self, wl: Workload, admitted_ns: int) -> int:
        """When the Admitted condition turned True: the input's for the input's
        admission (it may follow the quota reservation), else the admission's."""
        input_ns = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
        if wl.admission is None or admitted_ns != input_ns:
            return admitted_ns
        c = _condition(wl, "Admitted")
        if c.get("status") != "True" or not c.get("lastTransitionTime"):
            return admitted_ns
        from ..loader import parse_time_ns

        path = "status.conditions[Admitted].lastTransitionTime"
        return parse_time_ns(c["lastTransitionTime"], f"Workload/{wl.key}", path)

    def _pods_ready_timeouts(self, now_ns: int) -> list[str]:
        """workload_controller.go reconcileNotReadyTimeout: an admitted, active
        workload not PodsReady past waitForPodsReady.timeout since its admission
        (PodsReady missing, WaitForStart or PodsReady reason) or past
        recoveryTimeout since PodsReady turned False with WaitForRecovery is
        evicted (PodsReadyTimeout), its requeueState counted and its requeueAt
        set by the backoff (workload.go UpdateRequeueState); past
        backoffLimitCount it is deactivated instead (triggerDeactivation)."""
        cfg = self.state.configuration.wait_for_pods_ready
        if cfg is None:
            return []
        out = []
        for key in sorted(self._wid):
            wid = self._wid[key]
            if wid in self._held:
                continue
            view = self.engine.workload_view(wid)
            wl = self.state.workloads[key]
            if view.state != ADMITTED or not wl.active:
                continue
            admitted_ns = view.admission_time
            st = self._pods_ready_state(key, admitted_ns)
            if st.ready:
                continue
            if st.reason in ("", "WaitForStart", "PodsReady"):
                since = self._admitted_condition_ns(wl, admitted_ns)
                deadline = since + int(cfg.timeout_s * NS_PER_S)
            elif st.reason == "WaitForRecovery" and cfg.recovery_timeout_s is not None:
                deadline = st.since_ns + int(cfg.recovery_timeout_s * NS_PER_S)
            else:
                continue
            if now_ns < deadline:
                continue
            count = self._requeue_count.get(key, wl.requeue_count)
            if cfg.backoff_limit_count is not None and count + 1 > cfg.backoff_limit_count:
                wl.active = False  # spec.active=false, then evicted as deactivated
                self._requeue_at[key] = (None, now_ns)
                reason = "Deactivated"
                message = (
                    "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
                )
            else:
                self._requeue_count[key] = count + 1
                # wait.Backoff{base, x2, cap max}: base * 2^(count-1) capped; its
                # jitter (up to 0.01%) puts requeueAt just past that second
                wait_s = min(cfg.backoff_base_s * 2**count, cfg.backoff_max_s)
                self._requeue_at[key] = (now_ns + wait_s * NS_PER_S + 1, now_ns)
                reason, message = "PodsReadyTimeout", f"Exceeded the PodsReady timeout {key}"
            self.engine.evict(wid, reason, message)
            if self.release_evictions:  # offline its quota is free at once: out of its queue now
                self._hold(key, self.cycles + 1)
            out.append(key)
        return out

    def _hold(self, key: str, evicted_cycle: int) -> None:
        """A workload evicted by a PodsReady timeout, or by a Retry check with
        requeueAfterSeconds, gave its quota back: out of its queue until
        requeueAt (workload_controller.go Update: a workload back to pending
        with a backoff ahead is not queued; Reconcile queues it once requeueAt
        passed); deactivated, for good."""
        wid = self._wid[key]
        view = self.engine.workload_view(wid)
        wl = self.state.workloads[key]
        # set by the eviction (UpdateRequeueState); none once deactivated
        requeue_at, evicted_ns = self._requeue_at.pop(key, (None, self._clock_ns))
        if not wl.active:
            requeue_at = None
        reason, message = view.eviction_reason, view.eviction_message
        held = HeldWorkload(wid, evicted_cycle, reason, message, requeue_at, evicted_ns)
        self._held[wid] = held
        self._engine_hold(held)

    def _engine_hold(self, held: HeldWorkload) -> None:
        """The engine keeps the workload out of its queue until requeueAt, then
        queues it by its eviction time (requeuingStrategy.timestamp Eviction) or
        its creation (Creation) (workload.go Ordering.GetQueueOrderTimestamp),
        until it is admitted again (the engines restore the timestamp then);
        a deactivated one leaves the engine."""
        if held.requeue_at_ns is None:
            self.engine.remove_workload(held.wid)
            return
        cfg = self.state.configuration.wait_for_pods_ready
        queue_ts = self.engine.spec(held.wid).queue_ts
        if held.reason == ac.EVICTED_BY_CHECK:  # whatever requeuingStrategy.timestamp says
            queue_ts = held.evicted_ns
        elif held.evicted_cycle >= 0 and cfg is not None:
            wl = self.state.workloads[self._keys[held.wid]]
            queue_ts = held.evicted_ns if cfg.requeuing_timestamp == "Eviction" else wl.creation_ns
        self.engine.hold(held.wid, held.requeue_at_ns, queue_ts)

    def _requeue_after_backoff(self, now_ns: int) -> None:
        """Held workloads whose requeueAt passed: the engine queues them again
        at this cycle's start (end_holds); they are pending as any other."""
        for wid, held in list(self._held.items()):
            if held.requeue_at_ns is not None and held.requeue_at_ns <= now_ns:
                del self._held[wid]

    def _held_decision(self, held: HeldWorkload) -> Decision:
        key = self._keys[held.wid]
        ns, name = key.split("/", 1)
        if held.evicted_cycle == self.cycles and self.cycles > 0:
            return Decision(ns, name, EVICTED, reason=held.reason, message=held.message)
        if held.requeue_at_ns is None:  # deactivated: in no queue, as an inactive workload
            reason, message = self._waiting_reason(self.compiler.compile(self.state.workloads[key]))
            return Decision(ns, name, PENDING, reason=reason, message=message)
        # QuotaReserved=False as the job reconciler leaves an evicted workload
        reason = "Pending" if held.evicted_cycle >= 0 else held.reason
        return Decision(ns, name, PENDING, reason=reason, message=held.message)


def _condition(wl: Workload, ctype: str) -> dict[str, Any]:
    """The input Workload's status condition of that type ({} when absent)."""
    for c in ((wl.raw.get("status") or {}).get("conditions") or []) if wl.raw else []:
        if isinstance(c, dict) and c.get("type") == ctype:
            return c
    return {}
