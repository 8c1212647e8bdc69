"""Step 5 of the reference engine's cycle (scheduler.py): process the ordered
entries against the filling snapshot (kueue pkg/scheduler/scheduler.go
processEntry, fits, markSkipped, and the admission in assume/admit), issue
the preemptions of those that need them and reserve capacity for those
that wait. The native twin: csrc/src/scheduler.cpp Engine::process. Functions
over the engine's state (``eng``, scheduler.py's ReferenceEngine) or the
narrower part of it they read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..contract import CycleReport
from . import amount, flavor_assigner as fa, nomination
from .preemption import HUMAN_REASONS, IN_COHORT_RECLAIM_WHILE_BORROWING, Target
from .queues import (
    REQUEUE_FAILED_AFTER_NOMINATION,
    REQUEUE_NO_FIT,
    REQUEUE_PENDING_PREEMPTION,
    REQUEUE_PREEMPTION_NO_CANDIDATES,
)
from .records import (
    MSG_DEFERRED,
    MSG_NO_LONGER_FITS,
    MSG_OVERLAP,
    MSG_WAITING_FOR_PODS_READY,
    WAITING_FOR_PODS_READY,
    WAITING_FOR_PREEMPTED,
    WAITING_FOR_QUOTA,
    Entry,
)

if TYPE_CHECKING:
    from .quota import QuotaTree
    from .scheduler import ReferenceEngine
    from .tas import TasUse


def _simulate_removal(eng: ReferenceEngine, wids: list[int]) -> None:
    for w in wids:
        eng.preemptor.remove(w)
        eng.cq_admitted[eng.workloads[w].admitted_cq].discard(w)


def _undo_removal(eng: ReferenceEngine, wids: list[int]) -> None:
    for w in wids:
        eng.preemptor.restore(w)
        eng.cq_admitted[eng.workloads[w].admitted_cq].add(w)


def _fits(
    eng: ReferenceEngine, cq: int, a: fa.Assignment, victims: dict[int, Target], targets: list[Target]
) -> str:
    """Kueue fits (FitsCheck): "ok", "quota" (quota does not fit) or "tas"
    (quota fits, a placement does not: its leaf has no room left)."""
    removed = list(dict.fromkeys([*victims, *(t.wid for t in targets)]))
    for w in removed:
        eng.preemptor.remove(w)
    check = "ok"
    if not all(eng.tree.available(cq, fr) >= v for fr, v in a.usage.items()):
        check = "quota"
    elif a.tas_usage and eng.tas is not None and not eng.tas.fits(a.tas_usage):
        check = "tas"
    for w in removed:
        eng.preemptor.restore(w)
    return check


def _reserve(
    eng: ReferenceEngine, cq: int, usage: dict[int, int], tas_usage: list[tuple[TasUse, list[int]]]
) -> None:
    """Usage that only lives in this cycle's snapshot."""
    eng.tree.add_usage_map(cq, usage)
    if tas_usage:
        eng.tas_snapshot(tas_usage, +1)


def _resources_to_reserve(tree: QuotaTree, e: Entry) -> dict[int, int]:
    """Kueue quotaResourcesToReserve for a preemptor without candidates."""
    assert e.assignment is not None
    out: dict[int, int] = {}
    for fr, v in e.assignment.usage.items():
        nominal = tree.nominal(e.cq, fr)
        used = tree.usage[e.cq].get(fr, 0)
        if e.assignment.borrowing > 0:
            bl = tree.borrowing_limit(e.cq, fr)
            out[fr] = v if bl == amount.UNLIMITED else min(v, amount.sub(amount.add(nominal, bl), used))
        else:
            out[fr] = max(0, min(v, amount.sub(nominal, used)))
    return out


def _no_fit_reason(e: Entry) -> str:
    """Kueue resolveNoFitReason: the most severe of the NoFit pod sets' reasons."""
    assert e.assignment is not None
    worst = ""
    for ps in e.assignment.pod_sets:
        if ps.mode() == fa.NO_FIT:
            worst = fa.most_severe(worst, ps.no_fit_reason)
    return worst or WAITING_FOR_QUOTA


def _assign_again(eng: ReferenceEngine, e: Entry, gone: list[int]) -> fa.Assignment:
    """The entry's assignment computed again on the flavors it was nominated
    with, against the snapshot without ``gone``; recorded on the entry."""
    assert e.assignment is not None
    flavors = [{r: f.flavor for r, f in ps.flavors.items()} for ps in e.assignment.pod_sets]
    eng.workloads[e.wid].last_state = None
    _simulate_removal(eng, gone)
    a, targets = nomination.get_assignments(eng, e.wid, e.cq, None, flavors)
    _undo_removal(eng, gone)
    nomination.record(eng, e, a, targets)
    return a


def _recompute_if_stale(
    eng: ReferenceEngine, e: Entry, victims: dict[int, Target]
) -> tuple[dict[int, int], bool | None]:
    """The usage to process the entry with, its assignment computed again
    when an earlier entry of the cycle made it stale; and whether it fits
    when that was checked on the way (None: not yet)."""
    assert e.assignment is not None
    cq = e.cq
    # Targets taken by an earlier entry: recompute on the projected snapshot
    # (RecomputeAssignmentUponPreemptionTargetsOverlap, beta, on).
    if eng.topo.gates.recompute_assignment_upon_preemption_targets_overlap and any(
        t.wid in victims for t in e.targets
    ):
        a = _assign_again(eng, e, list(victims))
        if a.mode() == fa.FIT:
            e.deferred = True
        return a.usage, None
    if e.assignment.tas_usage:
        # A placement that no longer fits (an earlier entry of the cycle took
        # its room) is computed again on the snapshot as it is now
        # (TASRecomputeAssignmentWithinSchedulingCycle, beta, on).
        check = _fits(eng, cq, e.assignment, victims, e.targets)
        if check == "tas":
            return _assign_again(eng, e, []).usage, None
        return e.assignment.usage, check == "ok"
    return e.assignment.usage, None


def process(
    eng: ReferenceEngine, e: Entry, victims: dict[int, Target], report: CycleReport, now_ns: int
) -> bool:
    """Kueue processEntry; True when the scheduler must now wait for PodsReady
    (waitForPodsReadyIfNeeded): the entries after this one are not processed."""
    assert e.assignment is not None
    cq = e.cq
    usage, fits = _recompute_if_stale(eng, e, victims)
    mode = e.assignment.mode()
    if e.deferred:
        mode = fa.DEFERRED_FIT
    if mode == fa.NO_FIT:
        e.requeue_reason, e.reason = REQUEUE_NO_FIT, _no_fit_reason(e)
        return False
    if mode == fa.PREEMPT and not e.targets:
        e.requeue_reason, e.reason = REQUEUE_PREEMPTION_NO_CANDIDATES, WAITING_FOR_QUOTA
        # Kueue reserveCapacityForUnreclaimablePreempt: unless the
        # ClusterQueue can always reclaim (reclaimWithinCohort: Any), or
        # when the workload is its preemptor (PrioritizePreemptorWorkloads).
        cannot_always_reclaim = eng.topo.cluster_queues[cq].reclaim_within_cohort != 3
        if cannot_always_reclaim or (eng.topo.gates.prioritize_preemptor_workloads and e.is_preemptor):
            _reserve(eng, cq, _resources_to_reserve(eng.tree, e), e.assignment.tas_usage)
        return False
    if mode == fa.DEFERRED_FIT:
        e.message, e.reason = MSG_DEFERRED, WAITING_FOR_PREEMPTED
        e.requeue_reason = REQUEUE_PENDING_PREEMPTION
        eng.workloads[e.wid].last_state = None
        _reserve(eng, cq, usage, e.assignment.tas_usage)
        return False
    if any(t.wid in victims for t in e.targets):
        _skip(eng, e, MSG_OVERLAP)
        return False
    if fits is None:
        fits = _fits(eng, cq, e.assignment, victims, e.targets) == "ok"
    if not fits:
        _skip(eng, e, MSG_NO_LONGER_FITS)
        return False
    for t in e.targets:
        victims[t.wid] = t
    if mode == fa.PREEMPT:
        _reserve(eng, cq, usage, e.assignment.tas_usage)
        issued = _issue_preemptions(eng, e, now_ns)
        report.preempted.extend(t.wid for t in e.targets)
        eng.workloads[e.wid].last_state = None
        e.reason = WAITING_FOR_PREEMPTED
        if issued:
            e.message += f". Pending the preemption of {issued} workload(s)"
            e.requeue_reason = REQUEUE_PENDING_PREEMPTION
        return False
    if eng.topo.block_admission_for_pods_ready and not eng.pods_ready_for_all_admitted():
        # scheduler.go waitForPodsReadyIfNeeded: QuotaReserved=False and the
        # scheduler waits; offline the PodsReady conditions change only
        # between cycles, so the entry and those after it wait for the next.
        e.reason, e.message = WAITING_FOR_PODS_READY, MSG_WAITING_FOR_PODS_READY
        e.requeue_reason = REQUEUE_FAILED_AFTER_NOMINATION
        return True
    _admit_entry(eng, e, now_ns)
    report.admitted.append(e.wid)
    return False


def _skip(eng: ReferenceEngine, e: Entry, message: str) -> None:
    """Kueue markSkipped: the scan record is kept only with
    FlavorFungibilityPreserveScanProgress."""
    e.status, e.message, e.reason = "skipped", message, WAITING_FOR_QUOTA
    if not eng.topo.gates.flavor_fungibility_preserve_scan_progress:
        eng.workloads[e.wid].last_state = None


def _cq_path(node_names: list[str], tree: QuotaTree, cq: int) -> str:
    names = [node_names[n] for n in reversed(tree.ancestors(cq))]
    return "/" + "/".join([*names, node_names[cq]])


def _issue_preemptions(eng: ReferenceEngine, e: Entry, now_ns: int) -> int:
    preemptor = eng.workloads[e.wid].spec
    for t in e.targets:
        victim = eng.workloads[t.wid]
        if victim.evicting:
            continue  # eviction already under way
        eng.set_evicting(t.wid)
        victim.evicted_cycle = eng.cycle
        victim.preempted_by = e.wid
        victim.eviction_reason = t.reason
        gates = eng.topo.gates
        if t.reason == IN_COHORT_RECLAIM_WHILE_BORROWING and not gates.priority_sorting_within_cohort:
            # Kueue workload.Ordering: without PrioritySortingWithinCohort such a
            # victim queues as if it arrived just after its eviction, until
            # it is admitted again (_admit).
            eng.queue_ts_before_preemption.setdefault(t.wid, victim.spec.queue_ts)
            victim.spec.queue_ts = now_ns + 1_000_000
        job_uid = preemptor.job_uid or "UNKNOWN"
        victim.eviction_message = (
            f"Preempted to accommodate a workload (UID: {preemptor.uid}, JobUID: {job_uid}) due to "
            f"{HUMAN_REASONS[t.reason]}; preemptor path: {_cq_path(eng.topo.node_names, eng.tree, e.cq)}; "
            f"preemptee path: {_cq_path(eng.topo.node_names, eng.tree, victim.admitted_cq)}"
        )
    return len(e.targets)


def _admit_entry(eng: ReferenceEngine, e: Entry, now_ns: int) -> None:
    assert e.assignment is not None
    rec = eng.workloads[e.wid]
    rec.admitted_pod_sets = [
        (ps.count, {r: f.flavor for r, f in ps.flavors.items()}) for ps in e.assignment.pod_sets
    ]
    rec.admitted_resource_usage = [{r: ps.requests[r] for r in ps.flavors} for ps in e.assignment.pod_sets]
    rec.tas_uses = list(e.assignment.tas_usage)
    rec.topology = [ps.topology for ps in e.assignment.pod_sets] if eng.tas is not None else None
    # Kueue's cycle snapshot gets only the admission's usage (scheduler.go
    # processEntry: cq.AddUsage), not the workload: it is no preemption
    # candidate for the rest of the cycle (preemption.go findCandidates).
    eng.admit(e.wid, e.cq, dict(e.assignment.usage), now_ns, listed=False)
    eng.lq_fs.push_entry_penalty(e.wid, e.cq, now_ns)
    eng.cq_generation[e.cq] += 1  # the admission's status update reaches the cache
    eng.cq_queues[e.cq].clear_preemptor(e.wid)
    rec.reason, rec.message = "", ""
    e.status = "assumed"
    eng.pods_ready.discard(e.wid)  # a new admission: its pods start now
