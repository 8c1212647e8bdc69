"""What Kueue writes in statuses: Workload conditions and admission,
ClusterQueue and LocalQueue status (pkg/controller/core: workload_controller.go,
clusterqueue_controller.go, localqueue_controller.go), for the
controller and for ``kueue-fast schedule --output yaml`` alike.

Pure functions over slimmed API objects. Conditions follow
``meta.SetStatusCondition``: ``lastTransitionTime`` changes only when the
status flips. Every function returns the *whole* new status; the writer
applies it with server-side apply (Workloads, field manager
``kueue-admission``) or a merge patch of the status subresource (queues).
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..api.model import MULTIKUEUE_CONTROLLER, PROVISIONING_CONTROLLER
from ..api.quantity import format_quantity, parse_quantity
from ..engine.tas import v1beta2_assignment

if TYPE_CHECKING:  # cluster imports this module's readiness rules
    from ..api.model import ClusterQueue, ClusterState, LocalQueue
    from .cluster import Decision, EvictionRecord, WorkloadHistory

JSON = dict[str, Any]

QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
EVICTED = "Evicted"
PREEMPTED = "Preempted"
REQUEUED = "Requeued"
FINISHED = "Finished"


MAX_CONDITION_MESSAGE = 32 * 1024


def truncate_message(message: str) -> str:
    """Kueue api.TruncateConditionMessage: long messages end in " ..."."""
    if len(message) <= MAX_CONDITION_MESSAGE:
        return message
    return message[: MAX_CONDITION_MESSAGE - 4] + " ..."


def rfc3339(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns // 1_000_000_000, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def get_condition(obj: JSON, ctype: str) -> JSON | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c  # type: ignore[no-any-return]
    return None


def condition_true(obj: JSON, ctype: str) -> bool:
    c = get_condition(obj, ctype)
    return c is not None and c.get("status") == "True"


def set_condition(
    conditions: list[JSON],
    ctype: str,
    status: str,
    reason: str,
    message: str,
    now_ns: int,
    generation: int | None,
) -> list[JSON]:
    """meta.SetStatusCondition on a copy."""
    out = [dict(c) for c in conditions]
    new: JSON = {"type": ctype, "status": status, "reason": reason, "message": truncate_message(message)}
    if generation is not None:
        new["observedGeneration"] = generation
    for i, c in enumerate(out):
        if c.get("type") == ctype:
            new["lastTransitionTime"] = (
                c.get("lastTransitionTime") if c.get("status") == status else rfc3339(now_ns)
            )
            if not new["lastTransitionTime"]:
                new["lastTransitionTime"] = rfc3339(now_ns)
            out[i] = new
            return out
    new["lastTransitionTime"] = rfc3339(now_ns)
    out.append(new)
    return out


def _status(wl: JSON) -> JSON:
    return copy.deepcopy(wl.get("status") or {})


PODS_READY = "PodsReady"


def pods_ready_condition(wl: JSON, admitted: bool, ready: bool) -> tuple[str, str, str]:
    """jobframework/reconciler.go generatePodsReadyCondition: (status, reason,
    message) of the PodsReady condition from the job's pods and the current one."""
    not_ready = "Not all pods are ready or succeeded"
    recovering = "At least one pod has failed, waiting for recovery"
    if not admitted:
        return "False", "WaitForStart", not_ready
    cur = get_condition(wl, PODS_READY)
    if ready:
        again = cur is not None and cur.get("reason") in ("WaitForRecovery", "Recovered")
        reason = "Recovered" if again else "Started"
        return "True", reason, "All pods reached readiness and the workload is running"
    if cur is None:
        return "False", "WaitForStart", not_ready
    if cur.get("status") == "True" or cur.get("reason") == "WaitForRecovery":
        return "False", "WaitForRecovery", recovering
    return "False", "WaitForStart", not_ready


def pods_ready_status(wl: JSON, cond: tuple[str, str, str], now_ns: int) -> JSON:
    """The Workload's status with its PodsReady condition set."""
    st = _status(wl)
    st["conditions"] = set_condition(st.get("conditions") or [], PODS_READY, *cond, now_ns, _gen(wl))
    return st


def _gen(wl: JSON) -> int | None:
    g = wl["metadata"].get("generation")
    return int(g) if g is not None else None


# --- Workloads ------------------------------------------------------------------------------


def admission_of(d: Decision, api: str | None = None) -> JSON:
    """status.admission; a placement in the Workload's version's encoding
    (v1beta1 levels and domains; Kueue's v1beta2 slices otherwise)."""
    assignments = []
    for ps in d.pod_sets:
        psa: JSON = {
            "name": ps.name,
            "flavors": dict(ps.flavors),
            "resourceUsage": {r: format_quantity(r, v) for r, v in ps.resource_usage.items()},
            "count": ps.count,
        }
        ta = ps.topology_assignment
        if ta is not None:
            psa["topologyAssignment"] = (
                {
                    "levels": list(ta.levels),
                    "domains": [{"values": list(v), "count": n} for v, n in ta.domains],
                }
                if api == "kueue.x-k8s.io/v1beta1"
                else v1beta2_assignment(ta)
            )
        assignments.append(psa)
    return {"clusterQueue": d.cluster_queue, "podSetAssignments": assignments}


def admitted_status(wl: JSON, d: Decision, now_ns: int) -> JSON:
    """status.admission plus QuotaReserved and Admitted (one apply, as Kueue does;
    Admitted=False while admission checks are not all Ready, with
    status.admissionChecks). A workload admitted again after an eviction:
    Evicted and Preempted turn False with "Previously: <old message>"."""
    st = _status(wl)
    finish_backoff(st, now_ns, _gen(wl))  # admitted again: any backoff is over
    _admit(st, d, now_ns, _gen(wl), wl.get("apiVersion"))
    _set_check_states(st, d, now_ns)
    return st


# Requeued=False reasons the workload controller turns True once the backoff
# (requeueState.requeueAt) is over
BACKOFF_REASONS = ("PodsReadyTimeout", "AdmissionCheck")


def finish_backoff(st: JSON, now_ns: int, gen: int | None) -> bool:
    """workload_controller.go Reconcile, for an active Workload: Requeued=False
    after a deactivation turns True, reason Reactivated; after a PodsReady
    timeout or an admission check's Retry, reason BackoffFinished, once
    requeueAt passed (requeueAt cleared); in place, True when changed."""
    rq = next((c for c in st.get("conditions") or [] if c.get("type") == REQUEUED), None)
    if rq is None or rq.get("status") != "False":
        return False
    if rq.get("reason") == "Deactivated":
        message = "The workload was reactivated"
        st["conditions"] = set_condition(
            st["conditions"], REQUEUED, "True", "Reactivated", message, now_ns, gen
        )
        return True
    if rq.get("reason") not in BACKOFF_REASONS:
        return False
    message = "The workload backoff was finished"
    conds = st["conditions"]
    st["conditions"] = set_condition(conds, REQUEUED, "True", "BackoffFinished", message, now_ns, gen)
    rs = st.get("requeueState")
    if isinstance(rs, dict):
        rs.pop("requeueAt", None)
    return True


def check_states_missing(wl: JSON, d: Decision) -> bool:
    """A check the workload's admission needs has no state on the Workload yet."""
    entries = (wl.get("status") or {}).get("admissionChecks") or []
    given = {c.get("name") for c in entries if isinstance(c, dict)}
    return any(c.name not in given for c in d.admission_checks)


def _admit(st: JSON, d: Decision, now_ns: int, gen: int | None, api: str | None = None) -> None:
    """kueue workload.go SetQuotaReservation + SyncAdmittedCondition, in place."""
    st["admission"] = admission_of(d, api)
    conds = st.get("conditions") or []
    conds = set_condition(
        conds,
        QUOTA_RESERVED,
        "True",
        "QuotaReserved",
        f"Quota reserved in ClusterQueue {d.cluster_queue}",
        now_ns,
        gen,
    )
    if d.state == "reserved":  # waiting for admission checks
        conds = set_condition(conds, ADMITTED, "False", d.reason, d.message, now_ns, gen)
    else:
        conds = set_condition(conds, ADMITTED, "True", "Admitted", "The workload is admitted", now_ns, gen)
    for ctype in (EVICTED, PREEMPTED):
        old = next((c for c in conds if c.get("type") == ctype), None)
        if old is not None and old.get("status") == "True":
            conds = set_condition(
                conds, ctype, "False", "QuotaReserved", f"Previously: {old.get('message', '')}", now_ns, gen
            )
    st["conditions"] = conds


def has_admission(wl: JSON) -> bool:
    return bool((wl.get("status") or {}).get("admission"))


def admission_matches(wl: JSON, d: Decision) -> bool:
    """The Workload holds the decision's admission with QuotaReserved=True."""
    want = admission_of(d)
    got = (wl.get("status") or {}).get("admission") or {}
    if got.get("clusterQueue") != want["clusterQueue"]:
        return False
    gp = {p.get("name"): p for p in got.get("podSetAssignments") or []}
    for p in want["podSetAssignments"]:
        g = gp.get(p["name"])
        if g is None or (g.get("flavors") or {}) != p["flavors"] or int(g.get("count", -1)) != p["count"]:
            return False
    # Admitted is the caller's to compare: a reserved workload has it False
    return condition_true(wl, QUOTA_RESERVED)


def evicted_status(wl: JSON, reason: str, message: str, preempted_reason: str | None, now_ns: int) -> JSON:
    """Eviction issued: Evicted=True (and Preempted=True for preemption); the
    admission is kept: quota stays reserved until the Job has stopped."""
    st = _status(wl)
    gen = _gen(wl)
    conds = set_condition(st.get("conditions") or [], EVICTED, "True", reason, message, now_ns, gen)
    if preempted_reason:
        conds = set_condition(conds, PREEMPTED, "True", preempted_reason, message, now_ns, gen)
    st["conditions"] = conds
    _reset_check_states(st, now_ns)
    return st


def _reset_check_states(st: JSON, now_ns: int) -> None:
    """evict.go resetChecksOnEviction on status.admissionChecks."""
    out = []
    for c in st.get("admissionChecks") or []:
        state = c.get("state")
        if state in (None, "Pending"):
            out.append(c)
            continue
        entry = {
            **c,
            "state": "Pending",
            "message": f"Reset to Pending after eviction. Previously: {state}",
            "lastTransitionTime": rfc3339(now_ns),
        }
        if state == "Retry":
            entry["retryCount"] = int(c.get("retryCount") or 0) + 1
        else:  # RetryCount nil but after a Retry
            entry.pop("retryCount", None)
        out.append(entry)
    if out:
        st["admissionChecks"] = out


def requeued_status(wl: JSON, now_ns: int) -> JSON:
    """The Job stopped: the admission is removed, the workload waits again."""
    st = _status(wl)
    gen = _gen(wl)
    ev = get_condition(wl, EVICTED) or {}
    reason = str(ev.get("reason") or "Preempted")
    message = str(ev.get("message") or "")
    st.pop("admission", None)
    conds = st.get("conditions") or []
    conds = set_condition(conds, QUOTA_RESERVED, "False", "Pending", message, now_ns, gen)
    conds = set_condition(
        conds, ADMITTED, "False", "NoReservation", "The workload has no reservation", now_ns, gen
    )
    # jobframework reconciler.go: Requeued True only after a preemption or node failures
    requeued = "True" if reason in ("Preempted", "NodeFailures") else "False"
    conds = set_condition(conds, REQUEUED, requeued, reason, message, now_ns, gen)
    st["conditions"] = conds
    stats = st.setdefault("schedulingStats", {})
    evictions = [dict(e) for e in stats.get("evictions") or []]
    for e in evictions:
        if e.get("reason") == reason and not e.get("underlyingCause"):
            e["count"] = int(e.get("count", 0)) + 1
            break
    else:
        # underlyingCause is required by the CRD; it may be empty
        evictions.append({"reason": reason, "underlyingCause": "", "count": 1})
    stats["evictions"] = evictions
    return st


def unadmitted_status(wl: JSON, message: str, now_ns: int) -> JSON:
    """An admission the engine does not hold (a write it gave up on that landed
    after all): taken back before any Job could start with it."""
    st = _status(wl)
    gen = _gen(wl)
    st.pop("admission", None)
    conds = set_condition(
        st.get("conditions") or [], QUOTA_RESERVED, "False", "Pending", message, now_ns, gen
    )
    if get_condition(wl, ADMITTED) is not None:
        conds = set_condition(
            conds, ADMITTED, "False", "NoReservation", "The workload has no reservation", now_ns, gen
        )
    st["conditions"] = conds
    return st


def pending_status(wl: JSON, reason: str, message: str, now_ns: int) -> JSON:
    st = _status(wl)
    st["conditions"] = set_condition(
        st.get("conditions") or [], QUOTA_RESERVED, "False", reason, message, now_ns, _gen(wl)
    )
    return st


def pending_matches(wl: JSON, reason: str, message: str) -> bool:
    c = get_condition(wl, QUOTA_RESERVED)
    return (
        c is not None
        and c.get("status") == "False"
        and c.get("reason") == reason
        and c.get("message") == message
    )


def finished_status(wl: JSON, failed: bool, message: str, now_ns: int) -> JSON:
    st = _status(wl)
    st["conditions"] = set_condition(
        st.get("conditions") or [],
        FINISHED,
        "True",
        "Failed" if failed else "Succeeded",
        message,
        now_ns,
        _gen(wl),
    )
    return st


# --- Workloads after offline cycles (kueue-fast schedule --output yaml) -----------------------

PENDING_EVALUATION = "PendingEvaluation"
NO_RESERVATION = ("NoReservation", "The workload has no reservation")
# Decision.reason of a pending workload the scheduler has not tried (cluster/cluster.py
# _waiting_reason): Kueue writes no condition for it.
NOT_TRIED = "Pending"


def _unset_quota_reservation(
    conds: list[JSON], reason: str, message: str, now_ns: int, gen: int | None
) -> list[JSON]:
    """kueue workload.go UnsetQuotaReservationWithCondition: QuotaReserved=False
    and, through SyncAdmittedCondition, Admitted=False."""
    conds = set_condition(conds, QUOTA_RESERVED, "False", reason, message, now_ns, gen)
    return set_condition(conds, ADMITTED, "False", *NO_RESERVATION, now_ns, gen)


def _evict_and_requeue(
    st: JSON, ev: EvictionRecord, count_by_reason: dict[str, int], past_execution_s: int, gen: int | None
) -> None:
    """The eviction (kueue evict.go Evict: Evicted, Preempted, schedulingStats)
    and, offline at the end of the same cycle, the requeue once the job
    stopped (jobframework reconciler.go: admission removed, QuotaReserved and
    Admitted False, Requeued True only after a preemption), in place."""
    t = ev.time_ns
    conds = set_condition(st.get("conditions") or [], EVICTED, "True", ev.reason, ev.message, t, gen)
    if ev.preemption_reason:
        conds = set_condition(conds, PREEMPTED, "True", ev.preemption_reason, ev.message, t, None)
    st.pop("admission", None)
    for c in conds:  # it held quota until now: an older False is stale, both flip at t
        if c.get("type") in (QUOTA_RESERVED, ADMITTED):
            c["status"] = "True"
    if past_execution_s:  # SyncAdmittedCondition adds each admitted stretch as Admitted turns False
        before = int(st.get("accumulatedPastExecutionTimeSeconds") or 0)
        st["accumulatedPastExecutionTimeSeconds"] = before + past_execution_s
    conds = _unset_quota_reservation(conds, PENDING_EVALUATION, ev.message, t, gen)
    requeued = "True" if ev.reason == "Preempted" else "False"
    st["conditions"] = set_condition(conds, REQUEUED, requeued, ev.reason, ev.message, t, gen)
    stats = st.setdefault("schedulingStats", {})
    evictions = [dict(e) for e in stats.get("evictions") or []]
    for reason, n in sorted(count_by_reason.items()):
        for e in evictions:
            if e.get("reason") == reason and not e.get("underlyingCause"):
                e["count"] = int(e.get("count", 0)) + n
                break
        else:
            evictions.append({"reason": reason, "underlyingCause": "", "count": n})
    stats["evictions"] = evictions


def set_requeue_state(st: JSON, count: int, requeue_at_ns: int | None) -> None:
    """status.requeueState (waitForPodsReady's backoff): the requeue count and,
    while the backoff lasts, requeueAt (workload.go UpdateRequeueState); in
    place, left as given when there is none."""
    if count <= 0 and requeue_at_ns is None:
        return
    rs: JSON = {"count": count} if count > 0 else {}  # a Retry's backoff counts nothing (SetRequeueState)
    if requeue_at_ns is not None:
        rs["requeueAt"] = rfc3339(requeue_at_ns)
    st["requeueState"] = rs


def scheduled_workload_status(wl: JSON, d: Decision, history: WorkloadHistory | None, start_ns: int) -> JSON:
    """A Workload's status as Kueue leaves it after the cycles run offline:
    the input's status, then in time order the first time the scheduler left
    it pending, its last eviction and requeue, its admission, and the reason
    of its last scheduling attempt (lastTransitionTime moves only when a
    condition flips, as meta.SetStatusCondition does)."""
    st = _status(wl)
    gen = _gen(wl)
    first = history.first_attempt_ns if history else None
    ev = history.last_eviction if history else None
    waiting = d.state == "pending" and d.reason != NOT_TRIED
    steps: list[tuple[int, int]] = []  # (time, step) in the order they happened
    if waiting:
        steps.append((first if first is not None else start_ns, 0))
    if ev is not None and history is not None:
        steps.append((ev.time_ns, 1))
    if d.state in ("admitted", "reserved"):
        steps.append((d.admission_time_ns or start_ns, 2))
    for t, step in sorted(steps):
        if step == 0:
            st["conditions"] = _unset_quota_reservation(
                st.get("conditions") or [], d.reason, d.message, t, gen
            )
        elif step == 1:
            assert ev is not None and history is not None
            _evict_and_requeue(st, ev, history.evictions, history.past_execution_s, gen)
        else:
            _admit(st, d, t, gen, wl.get("apiVersion"))
    if waiting:  # the last attempt's words; the transition time stays the first one's
        st["conditions"] = _unset_quota_reservation(
            st.get("conditions") or [], d.reason, d.message, start_ns, gen
        )
    _set_check_states(st, d, d.admission_time_ns or start_ns)
    return st


def _set_check_states(st: JSON, d: Decision, now_ns: int) -> None:
    """status.admissionChecks as the workload controller keeps them (an entry
    whose state did not change keeps the input's fields)."""
    if not d.admission_checks:
        st.pop("admissionChecks", None)
        return
    given = {c.get("name"): c for c in st.get("admissionChecks") or [] if isinstance(c, dict)}
    out = []
    for c in d.admission_checks:
        old = given.get(c.name)
        if old is not None and old.get("state") == c.state:
            out.append(old)
            continue
        entry: JSON = {"name": c.name, "state": c.state, "message": c.message}
        changed_ns = now_ns if c.last_transition_ns is None else c.last_transition_ns
        entry["lastTransitionTime"] = rfc3339(changed_ns)
        if c.requeue_after_s is not None:
            entry["requeueAfterSeconds"] = c.requeue_after_s
        if c.retry_count:
            entry["retryCount"] = c.retry_count
        out.append(entry)
    st["admissionChecks"] = out


# --- readiness (the Active conditions) --------------------------------------------------------


@dataclass(frozen=True)
class Readiness:
    """A queue's Active condition: status, Kueue's reason and message."""

    active: bool
    reason: str
    message: str

    def as_tuple(self) -> tuple[bool, str, str]:
        return self.active, self.reason, self.message


CLUSTER_QUEUE_READY = Readiness(True, "Ready", "Can admit new workloads")


def admission_check_problems(cq: ClusterQueue, state: ClusterState) -> tuple[list[str], list[str]]:
    """(missing, inactive) AdmissionChecks the ClusterQueue names, each sorted
    (kueue clusterqueue.go updateWithAdmissionChecks)."""
    known = state.admission_checks
    missing = sorted(n for n in set(cq.admission_checks) if n not in known)
    inactive = sorted(n for n in set(cq.admission_checks) if n in known and not known[n].active)
    return missing, inactive


def _controller_check_problems(cq: ClusterQueue, state: ClusterState) -> list[tuple[str, str]]:
    """(reason, message) for the rules on MultiKueue and ProvisioningRequest
    checks (clusterqueue.go updateWithAdmissionChecks, inactiveReason)."""
    names = sorted(set(cq.admission_checks))
    known = state.admission_checks
    by_controller = {n: known[n].controller_name for n in names if n in known}
    multikueue = [n for n, c in by_controller.items() if c == MULTIKUEUE_CONTROLLER]
    provisioning = [n for n, c in by_controller.items() if c == PROVISIONING_CONTROLLER]
    per_flavor = [n for n in multikueue if _check_flavors(cq, n) != _all_flavors(cq)]
    out = []
    if len(multikueue) > 1:
        out.append(
            (
                "MultipleMultiKueueAdmissionChecks",
                "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, found: "
                + ",".join(multikueue),
            )
        )
    if per_flavor:
        out.append(
            (
                "MultiKueueAdmissionCheckAppliedPerFlavor",
                f"Cannot specify MultiKueue AdmissionCheck per flavor, found: {','.join(per_flavor)}",
            )
        )
    if multikueue and provisioning:
        out.append(
            (
                "MultiKueueWithProvisioningRequest",
                "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, found: "
                f"{','.join(multikueue)}, {','.join(provisioning)}",
            )
        )
    return out


def _all_flavors(cq: ClusterQueue) -> set[str]:
    return {f.name for g in cq.resource_groups for f in g.flavors}


def _check_flavors(cq: ClusterQueue, check: str) -> set[str]:
    """The flavors a check applies to (admissioncheck.go NewAdmissionChecks:
    no onFlavors means every flavor of the queue)."""
    on = cq.admission_check_flavors.get(check)
    return set(on) if on else _all_flavors(cq)


def cluster_queue_readiness(cq: ClusterQueue, state: ClusterState) -> Readiness:
    """The Active condition Kueue writes on a ClusterQueue (kueue cache.go
    ClusterQueueReadiness, clusterqueue.go inactiveReason): every problem is
    listed in the message, the first one gives the reason. A cohort cycle is
    not among them: Kueue leaves such a ClusterQueue out of its scheduling
    snapshot (snapshot.go skipInactiveCQReason) while its condition stays Ready."""
    reasons: list[str] = []
    messages: list[str] = []
    if cq.stop_policy != "None":
        reasons.append("Stopped")
        messages.append("is stopped")
    missing_flavors = [
        f.name for g in cq.resource_groups for f in g.flavors if f.name not in state.resource_flavors
    ]
    if missing_flavors:
        reasons.append("FlavorNotFound")
        messages.append(f"references missing ResourceFlavor(s): {','.join(missing_flavors)}")
    missing_checks, inactive_checks = admission_check_problems(cq, state)
    if missing_checks:
        reasons.append("AdmissionCheckNotFound")
        messages.append(f"references missing AdmissionCheck(s): {','.join(missing_checks)}")
    if inactive_checks:
        reasons.append("AdmissionCheckInactive")
        messages.append(f"references inactive AdmissionCheck(s): {','.join(inactive_checks)}")
    for reason, message in _controller_check_problems(cq, state):
        reasons.append(reason)
        messages.append(message)
    for flavor, topology in _missing_topologies(cq, state):
        reasons.append("TopologyNotFound")
        messages.append(f'there is no Topology "{topology}" for TAS flavor "{flavor}"')
    if not reasons:
        return CLUSTER_QUEUE_READY
    return Readiness(
        False, reasons[0], truncate_message(f"Can't admit new workloads: {', '.join(messages)}.")
    )


def _missing_topologies(cq: ClusterQueue, state: ClusterState) -> list[tuple[str, str]]:
    """The TAS flavors of the ClusterQueue whose Topology does not exist, by
    name (kueue clusterqueue.go inactiveReason: their TAS cache is missing)."""
    out = []
    for name in sorted({f.name for g in cq.resource_groups for f in g.flavors}):
        rf = state.resource_flavors.get(name)
        if rf is not None and rf.topology_name is not None and rf.topology_name not in state.topologies:
            out.append((name, rf.topology_name))
    return out


def local_queue_readiness(lq: LocalQueue, state: ClusterState) -> Readiness:
    """The Active condition Kueue writes on a LocalQueue (kueue
    localqueue_controller.go Reconcile)."""
    if lq.stop_policy != "None":
        return Readiness(False, "Stopped", "LocalQueue is stopped")
    cq = state.cluster_queues.get(lq.cluster_queue)
    if cq is None:
        return Readiness(False, "ClusterQueueDoesNotExist", "Can't submit new workloads to clusterQueue")
    if not cluster_queue_readiness(cq, state).active:
        return Readiness(False, "ClusterQueueIsInactive", "Can't submit new workloads to clusterQueue")
    return Readiness(True, "Ready", "Can submit new workloads to localQueue")


# --- queues -----------------------------------------------------------------------------------


FlavorUsage = dict[str, dict[str, int]]  # flavor -> resource -> amount


def flavors_usage(
    cq_obj: JSON, usage: FlavorUsage, *, borrowed: bool, has_parent: bool | None = None
) -> list[JSON]:
    """``flavorsReservation`` / ``flavorsUsage`` (kueue cache.go getUsage):
    every flavor of the ClusterQueue in spec order, each with its group's
    covered resources sorted by name, with total (and borrowed: the part
    above nominal quota, always 0 for a ClusterQueue without a cohort).
    has_parent: the ClusterQueue is in a cohort (default: from its spec)."""
    spec = cq_obj.get("spec") or {}
    if has_parent is None:
        has_parent = bool(spec.get("cohortName") or spec.get("cohort"))
    out: list[JSON] = []
    for rg in spec.get("resourceGroups") or []:
        for fq in rg.get("flavors") or []:
            fname = fq.get("name")
            resources = []
            nominal = {r.get("name"): r.get("nominalQuota") for r in fq.get("resources") or []}
            for rname in sorted(rg.get("coveredResources") or []):
                total = usage.get(fname, {}).get(rname, 0)
                entry: JSON = {"name": rname, "total": format_quantity(rname, total)}
                if borrowed:
                    nq = nominal.get(rname)
                    nom = parse_quantity(nq, rname) if nq is not None else 0
                    over = total - nom if has_parent else 0
                    entry["borrowed"] = format_quantity(rname, max(0, over))
                resources.append(entry)
            out.append({"name": fname, "resources": resources})
    return out


def cluster_queue_status(
    cq_obj: JSON,
    pending: int,
    admitted: int,
    usage: FlavorUsage,
    active: tuple[bool, str, str],
    now_ns: int,
    *,
    reserving: int | None = None,
    admitted_usage: FlavorUsage | None = None,
    has_parent: bool | None = None,
    weighted_share: int | None = None,
) -> JSON:
    """ClusterQueue status (kueue clusterqueue_controller.go updateCqStatusIfChanged).

    ``usage`` and ``reserving`` count workloads holding quota (flavorsReservation,
    reservingWorkloads); ``admitted`` and ``admitted_usage`` the ones also
    admitted (flavorsUsage, admittedWorkloads): the same unless admission
    checks hold some back (by default they are). ``weighted_share``: with fair
    sharing on, status.fairSharing.weightedShare; None leaves fairSharing as it was."""
    st = copy.deepcopy(cq_obj.get("status") or {})
    st["pendingWorkloads"] = pending
    st["reservingWorkloads"] = admitted if reserving is None else reserving
    st["admittedWorkloads"] = admitted
    reserved = flavors_usage(cq_obj, usage, borrowed=True, has_parent=has_parent)
    used = (
        reserved
        if admitted_usage is None
        else flavors_usage(cq_obj, admitted_usage, borrowed=True, has_parent=has_parent)
    )
    _set_or_drop(st, "flavorsReservation", reserved)
    _set_or_drop(st, "flavorsUsage", copy.deepcopy(used))
    if weighted_share is not None:
        st["fairSharing"] = {"weightedShare": weighted_share}
    ok, reason, message = active
    st["conditions"] = set_condition(
        st.get("conditions") or [], "Active", "True" if ok else "False", reason, message, now_ns, _gen(cq_obj)
    )
    return st


def local_queue_status(
    lq_obj: JSON,
    cq_obj: JSON | None,
    pending: int,
    admitted: int,
    usage: FlavorUsage,
    active: tuple[bool, str, str],
    now_ns: int,
    *,
    reserving: int | None = None,
    admitted_usage: FlavorUsage | None = None,
) -> JSON:
    """LocalQueue status (kueue localqueue_controller.go updateStatusIfChanged);
    the flavors are its ClusterQueue's, without ``borrowed``. The caller
    gives a stopped LocalQueue 0 pending workloads, as Kueue counts none."""
    st = copy.deepcopy(lq_obj.get("status") or {})
    st["pendingWorkloads"] = pending
    st["reservingWorkloads"] = admitted if reserving is None else reserving
    st["admittedWorkloads"] = admitted
    reserved = flavors_usage(cq_obj, usage, borrowed=False) if cq_obj is not None else []
    used = reserved
    if cq_obj is not None and admitted_usage is not None:
        used = flavors_usage(cq_obj, admitted_usage, borrowed=False)
    _set_or_drop(st, "flavorsReservation", reserved)
    _set_or_drop(st, "flavorsUsage", copy.deepcopy(used))
    ok, reason, message = active
    st["conditions"] = set_condition(
        st.get("conditions") or [], "Active", "True" if ok else "False", reason, message, now_ns, _gen(lq_obj)
    )
    return st


def _set_or_drop(st: JSON, key: str, value: list[JSON]) -> None:
    """Kueue's status lists are omitempty: an empty one is not written."""
    if value:
        st[key] = value
    else:
        st.pop(key, None)


def status_differs(old: JSON | None, new: JSON) -> bool:
    """Compare statuses ignoring condition transition times."""

    def norm(s: JSON | None) -> JSON:
        s = copy.deepcopy(s or {})
        for c in s.get("conditions") or []:
            c.pop("lastTransitionTime", None)
        return s

    return norm(old) != norm(new)
