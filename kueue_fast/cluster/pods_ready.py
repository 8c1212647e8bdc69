"""The Cluster's waitForPodsReady ledger: PodsReady conditions, PodsReady
timeouts, and workloads held out of their queues until their backoff ends
(workload_controller.go, the queue manager's backoff)."""

from __future__ import annotations

from typing import Any

from ..api.model import ClusterState, Workload
from ..engine import arguments as A
from . import admission_checks as ac
from .decisions import ADMITTED, NS_PER_S, HeldWorkload, PodsReadyState
from .handles import Clock, EngineHandle, WorkloadIndex


class PodsReadyLedger:
    """What waitForPodsReady keeps per workload: its PodsReady condition, its
    requeue count and requeueAt, and the workloads held out of their queues."""

    def __init__(self, built: EngineHandle, index: WorkloadIndex, clock: Clock) -> None:
        self._built = built
        self._index = index
        self._clock = clock
        self.ready: dict[str, PodsReadyState] = {}  # PodsReady conditions by key
        self.requeue_count: dict[str, int] = {}
        # set at a timeout eviction, until it is held: (requeueAt or None, eviction time)
        self.requeue_at: dict[str, tuple[int | None, int]] = {}
        self.held: dict[int, HeldWorkload] = {}  # out of their queues, by (old) wid

    def forget(self, key: str, wid: int) -> None:
        """The workload left the cluster."""
        self.held.pop(wid, None)
        self.ready.pop(key, None)
        self.requeue_count.pop(key, None)
        self.requeue_at.pop(key, None)

    def admitted_input(self, wl: Workload) -> None:
        """An admitted input workload's PodsReady condition, if it has one."""
        if wl.admission is not None and wl.pods_ready_ns is not None:
            admitted = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
            self.ready[wl.key] = PodsReadyState(
                admitted, wl.pods_ready, wl.pods_ready_reason, wl.pods_ready_ns
            )

    def set_pods_ready(self, key: str, ready: bool, reason: str = "", now_ns: int | None = None) -> None:
        """Cluster.set_pods_ready (documented there)."""
        wid = self._index.id(key)
        ready, reason = A.flag(ready, "ready"), A.text(reason, "reason")
        if now_ns is not None:
            A.i64(now_ns, "now_ns")
        view = self._built.engine.workload_view(wid)
        t = self._clock.now_ns if now_ns is None else now_ns
        self.ready[key] = PodsReadyState(
            view.admission_time, ready, reason or ("PodsReady" if ready else "WaitForStart"), t
        )
        self._built.engine.set_pods_ready(wid, ready)

    def requeue_state(self, key: str) -> tuple[int, int | None]:
        """status.requeueState: (count, requeueAt ns or None)."""
        held = self.held.get(self._index.wid.get(key, -1))
        wl = self._built.state.workloads.get(key)
        count = self.requeue_count.get(key, wl.requeue_count if wl else 0)
        if held is not None:
            return count, held.requeue_at_ns
        return count, self.requeue_at.get(key, (None, 0))[0]  # evicted, its pods not gone yet

    def read_inputs(self, state: ClusterState, timed: list[str]) -> None:
        """Input Workloads (``timed``: the keys of those with a PodsReady time or
        a requeueAt, WorkloadScan.timed): the PodsReady condition of an admitted
        one, and a pending one still in the backoff its status.requeueState.requeueAt
        sets (workload_controller.go Reconcile: not queued before requeueAt)."""
        for key in sorted(timed):
            wl = state.workloads[key]
            if wl.admission is not None and wl.pods_ready_ns is not None:
                self.admitted_input(wl)
            elif wl.admission is None and wl.active and wl.requeue_at_ns is not None:
                if wl.requeue_at_ns > self._clock.now_ns + NS_PER_S:
                    wid = self._index.wid[key]
                    requeued = _condition(wl, "Requeued")
                    held = HeldWorkload(
                        wid,
                        -1,
                        str(requeued.get("reason") or "Pending"),
                        str(requeued.get("message") or ""),
                        wl.requeue_at_ns,
                        wl.queue_timestamp_ns,
                    )
                    self.held[wid] = held
                    self.engine_hold(held)

    def state_of(self, key: str, admitted_ns: int) -> PodsReadyState:
        st = self.ready.get(key)
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

    def timeouts(self, now_ns: int) -> list[str]:
        """workload_controller.go reconcileNotReadyTimeout: an admitted, active
        workload not PodsReady past waitForPodsReady.timeout since its admission
        (PodsReady missing, WaitForStart or PodsReady reason) or past
        recoveryTimeout since PodsReady turned False with WaitForRecovery is
        evicted (PodsReadyTimeout), its requeueState counted and its requeueAt
        set by the backoff (workload.go UpdateRequeueState); past
        backoffLimitCount it is deactivated instead (triggerDeactivation)."""
        cfg = self._built.state.configuration.wait_for_pods_ready
        if cfg is None:
            return []
        out = []
        for key in sorted(self._index.wid):
            wid = self._index.wid[key]
            if wid in self.held:
                continue
            view = self._built.engine.workload_view(wid)
            wl = self._built.state.workloads[key]
            if view.state != ADMITTED or not wl.active:
                continue
            admitted_ns = view.admission_time
            st = self.state_of(key, admitted_ns)
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
            count = self.requeue_count.get(key, wl.requeue_count)
            if cfg.backoff_limit_count is not None and count + 1 > cfg.backoff_limit_count:
                wl.active = False  # spec.active=false, then evicted as deactivated
                self.requeue_at[key] = (None, now_ns)
                reason = "Deactivated"
                message = (
                    "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
                )
            else:
                self.requeue_count[key] = count + 1
                # wait.Backoff{base, x2, cap max}: base * 2^(count-1) capped; its
                # jitter (up to 0.01%) puts requeueAt just past that second
                wait_s = min(cfg.backoff_base_s * 2**count, cfg.backoff_max_s)
                self.requeue_at[key] = (now_ns + wait_s * NS_PER_S + 1, now_ns)
                reason, message = "PodsReadyTimeout", f"Exceeded the PodsReady timeout {key}"
            self._built.engine.evict(wid, reason, message)
            if self._built.release_evictions:  # offline its quota is free at once: out of its queue now
                self.hold(key, self._clock.cycles + 1)
            out.append(key)
        return out

    def hold(self, key: str, evicted_cycle: int) -> None:
        """A workload evicted by a PodsReady timeout, or by a Retry check with
        requeueAfterSeconds, gave its quota back: out of its queue until
        requeueAt (workload_controller.go Update: a workload back to pending
        with a backoff ahead is not queued; Reconcile queues it once requeueAt
        passed); deactivated, for good."""
        wid = self._index.wid[key]
        view = self._built.engine.workload_view(wid)
        wl = self._built.state.workloads[key]
        # set by the eviction (UpdateRequeueState); none once deactivated
        requeue_at, evicted_ns = self.requeue_at.pop(key, (None, self._clock.now_ns))
        if not wl.active:
            requeue_at = None
        reason, message = view.eviction_reason, view.eviction_message
        held = HeldWorkload(wid, evicted_cycle, reason, message, requeue_at, evicted_ns)
        self.held[wid] = held
        self.engine_hold(held)

    def engine_hold(self, held: HeldWorkload) -> None:
        """The engine keeps the workload out of its queue until requeueAt, then
        queues it by its eviction time (requeuingStrategy.timestamp Eviction) or
        its creation (Creation) (workload.go Ordering.GetQueueOrderTimestamp),
        until it is admitted again (the engines restore the timestamp then);
        a deactivated one leaves the engine."""
        if held.requeue_at_ns is None:
            self._built.engine.remove_workload(held.wid)
            return
        cfg = self._built.state.configuration.wait_for_pods_ready
        queue_ts = self._built.engine.spec(held.wid).queue_ts
        if held.reason == ac.EVICTED_BY_CHECK:  # whatever requeuingStrategy.timestamp says
            queue_ts = held.evicted_ns
        elif held.evicted_cycle >= 0 and cfg is not None:
            wl = self._built.state.workloads[self._index.keys[held.wid]]
            queue_ts = held.evicted_ns if cfg.requeuing_timestamp == "Eviction" else wl.creation_ns
        self._built.engine.hold(held.wid, held.requeue_at_ns, queue_ts)

    def requeue_after_backoff(self, now_ns: int) -> None:
        """Held workloads whose requeueAt passed: the engine queues them again
        at this cycle's start (end_holds); they are pending as any other."""
        for wid, held in list(self.held.items()):
            if held.requeue_at_ns is not None and held.requeue_at_ns <= now_ns:
                del self.held[wid]


def _condition(wl: Workload, ctype: str) -> dict[str, Any]:
    """The input Workload's status condition of that type ({} when absent)."""
    for c in ((wl.raw.get("status") or {}).get("conditions") or []) if wl.raw else []:
        if isinstance(c, dict) and c.get("type") == ctype:
            return c
    return {}
