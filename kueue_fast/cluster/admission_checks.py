"""Admission checks: Kueue's two-phase admission, as its controllers run it
between scheduling cycles.

The scheduler reserves quota (QuotaReserved=True); the workload is admitted
(Admitted=True) only once every admission check that applies to it is
``Ready``. Which checks apply depends on the flavors the workload was
assigned (a check's ``onFlavors``). A ``Retry`` evicts the workload and
requeues it; a ``Rejected`` deactivates it. The engines know nothing of this:
a reserved workload holds quota and is a preemption candidate exactly like an
admitted one (Kueue's cache holds every workload with quota reserved), so the
Cluster keeps the check states (cluster/cluster.py) with the functions here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..api.model import (
    CHECK_PENDING,
    CHECK_READY,
    CHECK_REJECTED,
    CHECK_RETRY,
    CHECK_STATES,
    AdmissionCheckState,
    ClusterQueue,
)

STATES = CHECK_STATES
NS_PER_S = 1_000_000_000

# Evicted condition reasons (apis/kueue/v1beta2 workload_types.go
# WorkloadEvictedByAdmissionCheck; patching.go ReasonWithCause for a
# deactivation caused by a check).
EVICTED_BY_CHECK = "AdmissionCheck"
DEACTIVATED_BY_CHECK = "DeactivatedDueToAdmissionCheck"
# QuotaReserved=False of a pending, deactivated workload (workload_controller.go
# resolveGranularUnadmittedQuotaReservedCondition).
DEACTIVATED, DEACTIVATED_MESSAGE = "Deactivated", "The workload is deactivated"
# Admitted=False of a workload with quota reserved and checks not all Ready
# (admissionchecks.go SyncAdmittedCondition; "UnsatisfiedChecks" with the
# UnadmittedWorkloadsObservability gate off).
UNSATISFIED_CHECKS = "UnsatisfiedAdmissionChecks"
UNSATISFIED_CHECKS_LEGACY = "UnsatisfiedChecks"
UNSATISFIED_CHECKS_MESSAGE = "The workload has not all checks ready"


def _all_flavors(cq: ClusterQueue) -> set[str]:
    return {f.name for g in cq.resource_groups for f in g.flavors}


def checks_for_flavors(cq: ClusterQueue, flavors: Iterable[str]) -> list[str]:
    """The checks that apply to a workload admitted with these flavors, sorted
    (workload.go admissionChecksForAdmission: a check applies when one of its
    flavors is assigned; admissioncheck.go NewAdmissionChecks: a check without
    onFlavors has every flavor of the queue)."""
    assigned = set(flavors)
    everything = _all_flavors(cq)
    out = set()
    for name in cq.admission_checks:
        on = cq.admission_check_flavors.get(name)
        if assigned & (set(on) if on else everything):
            out.add(name)
    return sorted(out)


def checks_for_pending(cq: ClusterQueue) -> list[str]:
    """The checks a workload gets before it has an admission: those applying
    to every flavor of the queue (workload.go AdmissionChecksForWorkload)."""
    everything = _all_flavors(cq)
    return sorted(
        n
        for n in set(cq.admission_checks)
        if set(cq.admission_check_flavors.get(n) or everything) >= everything
    )


def sync_states(states: Sequence[AdmissionCheckState], names: Sequence[str]) -> list[AdmissionCheckState]:
    """workload_controller.go syncAdmissionCheckConditions: a Pending state for
    every check without one, states of checks that do not apply dropped,
    sorted by name."""
    by_name = {s.name: s for s in states}
    return [by_name.get(n) or AdmissionCheckState(n, CHECK_PENDING) for n in sorted(set(names))]


def reset_on_eviction(
    states: Sequence[AdmissionCheckState], now_ns: int | None = None
) -> list[AdmissionCheckState]:
    """evict.go resetChecksOnEviction: every state but Pending goes back to
    Pending (keeping its requeueAfterSeconds); a Retry counts one more retry,
    any other state loses its count (RetryCount nil)."""
    out = []
    for s in states:
        if s.state == CHECK_PENDING:
            out.append(s)
            continue
        retries = s.retry_count + 1 if s.state == CHECK_RETRY else 0
        message = f"Reset to Pending after eviction. Previously: {s.state}"
        out.append(AdmissionCheckState(s.name, CHECK_PENDING, message, retries, s.requeue_after_s, now_ns))
    return out


def retry_time_ns(states: Sequence[AdmissionCheckState]) -> int | None:
    """admissionchecks.go GetMaxRetryTime: the latest lastTransitionTime +
    requeueAfterSeconds of the checks in Retry that give both; None without."""
    times = [
        s.last_transition_ns + s.requeue_after_s * NS_PER_S
        for s in states
        if s.state == CHECK_RETRY and s.requeue_after_s is not None and s.last_transition_ns
    ]
    return max(times, default=None)


def all_ready(states: Sequence[AdmissionCheckState]) -> bool:
    """admissionchecks.go HasAllChecksReady."""
    return all(s.state == CHECK_READY for s in states)


def checks_message(states: Sequence[AdmissionCheckState], state: str) -> str:
    """workload_controller.go buildAdmissionChecksMessage, for the checks in ``state``."""
    matching = sorted((s for s in states if s.state == state), key=lambda s: s.name)
    parts = [f'"{s.name}" ({s.message})' if s.message else f'"{s.name}"' for s in matching]
    noun = "AdmissionChecks" if len(matching) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"


def check_eviction(states: Sequence[AdmissionCheckState]) -> tuple[str, str, bool] | None:
    """What the workload controller does to a workload holding quota whose
    checks failed (workload_controller.go reconcileCheckBasedEviction):
    (Evicted reason, message, requeue) or None. Rejected wins over Retry and
    deactivates the workload (its eviction reason and message are those of
    the deactivation, Reconcile's inactive branch)."""
    if any(s.state == CHECK_REJECTED for s in states):
        detail = checks_message(states, CHECK_REJECTED)
        return DEACTIVATED_BY_CHECK, f"{DEACTIVATED_MESSAGE} due to {detail}", False
    if any(s.state == CHECK_RETRY for s in states):
        return EVICTED_BY_CHECK, f"Evicted due to {checks_message(states, CHECK_RETRY)}", True
    return None


def has_failed(states: Sequence[AdmissionCheckState]) -> bool:
    return any(s.state in (CHECK_RETRY, CHECK_REJECTED) for s in states)
