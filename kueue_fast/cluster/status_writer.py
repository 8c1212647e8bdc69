"""What Kueue writes in a Workload's status: conditions, admission, requeue
state and admission check states (pkg/controller/core/workload_controller.go,
pkg/workload), for the controller and for ``kueue-fast schedule --output
yaml`` alike; the condition helpers the queue statuses use too
(cluster/queue_readiness.py).

Pure functions over slimmed API objects. Conditions follow
``meta.SetStatusCondition``: ``lastTransitionTime`` changes only when the
status flips. Every function returns the *whole* new status; the writer
applies it with server-side apply (Workloads, field manager
``kueue-admission``) or a merge patch of the status subresource (queues).
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import TYPE_CHECKING, Any

from ..api.quantity import format_quantity
from ..engine.tas import v1beta2_assignment

if TYPE_CHECKING:
    from .decisions import Decision, EvictionRecord, WorkloadHistory

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
    st["conditions"] = set_condition(
        st.get("conditions") or [], PODS_READY, *cond, now_ns, observed_generation(wl)
    )
    return st


def observed_generation(wl: JSON) -> int | None:
    """metadata.generation, for a condition's observedGeneration."""
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
    finish_backoff(st, now_ns, observed_generation(wl))  # admitted again: any backoff is over
    _admit(st, d, now_ns, observed_generation(wl), wl.get("apiVersion"))
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
    gen = observed_generation(wl)
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
    gen = observed_generation(wl)
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
    gen = observed_generation(wl)
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
        st.get("conditions") or [], QUOTA_RESERVED, "False", reason, message, now_ns, observed_generation(wl)
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
        observed_generation(wl),
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
    gen = observed_generation(wl)
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
