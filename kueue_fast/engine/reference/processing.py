"""Step 5 of the reference engine's cycle (scheduler.py): process the ordered
entries against the filling snapshot (kueue pkg/scheduler/scheduler.go
processEntry, fits, markSkipped, and the admission in assume/admit), issue
the preemptions of those that need them and reserve capacity for those
that wait. The native twin: csrc/src/scheduler.cpp Engine::process."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..contract import CycleReport
from . import amount
from . import flavor_assigner as fa
from .preemption import HUMAN_REASONS, IN_COHORT_RECLAIM_WHILE_BORROWING, Preemptor, Target
from .queues import (
    REQUEUE_FAILED_AFTER_NOMINATION,
    REQUEUE_NO_FIT,
    REQUEUE_PENDING_PREEMPTION,
    REQUEUE_PREEMPTION_NO_CANDIDATES,
    ClusterQueueQueue,
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
    from ..inputs import Topology
    from .quota import QuotaTree
    from .records import WorkloadRecord
    from .tas import TasState, TasUse


class ProcessingMixin:
    """ReferenceEngine's entry processing (scheduler.py sets the state)."""

    topo: Topology
    tree: QuotaTree
    tas: TasState | None
    workloads: list[WorkloadRecord]
    preemptor: Preemptor
    cycle: int
    cq_admitted: list[set[int]]
    cq_generation: list[int]
    cq_queues: list[ClusterQueueQueue]
    _removed_in_snapshot: set[int]
    _queue_ts_before_preemption: dict[int, int]
    _pods_ready: set[int]
    _blocked: bool

    if TYPE_CHECKING:  # the other parts of ReferenceEngine

        def get_assignments(
            self, wid: int, cq: int, last: fa.LastState | None, nomination: list[dict[int, int]] | None = None
        ) -> tuple[fa.Assignment, list[Target]]: ...
        def _record(self, e: Entry, a: fa.Assignment, targets: list[Target]) -> None: ...
        def tas_snapshot(self, uses: list[tuple[TasUse, list[int]]], sign: int) -> None: ...
        def _set_evicting(self, wid: int) -> None: ...
        def _pods_ready_for_all_admitted(self) -> bool: ...
        def _admit(
            self, wid: int, cq: int, usage: dict[int, int], time_ns: int, listed: bool = True
        ) -> None: ...
        def _push_entry_penalty(self, wid: int, cq: int, now_ns: int) -> None: ...

    def _simulate_removal(self, wids: list[int]) -> None:
        for w in wids:
            self.preemptor.remove(w)
            self._removed_in_snapshot.add(w)
            self.cq_admitted[self.workloads[w].admitted_cq].discard(w)

    def _undo_removal(self, wids: list[int]) -> None:
        for w in wids:
            self.preemptor.restore(w)
            self._removed_in_snapshot.discard(w)
            self.cq_admitted[self.workloads[w].admitted_cq].add(w)

    def _fits(self, cq: int, a: fa.Assignment, victims: dict[int, Target], targets: list[Target]) -> str:
        """Kueue fits (FitsCheck): "ok", "quota" (quota does not fit) or "tas"
        (quota fits, a placement does not: its leaf has no room left)."""
        removed = list(dict.fromkeys([*victims, *(t.wid for t in targets)]))
        for w in removed:
            self.preemptor.remove(w)
        check = "ok"
        if not all(self.tree.available(cq, fr) >= v for fr, v in a.usage.items()):
            check = "quota"
        elif a.tas_usage and self.tas is not None and not self.tas.fits(a.tas_usage):
            check = "tas"
        for w in removed:
            self.preemptor.restore(w)
        return check

    def _reserve(self, cq: int, usage: dict[int, int], tas_usage: list[tuple[TasUse, list[int]]]) -> None:
        """Usage that only lives in this cycle's snapshot."""
        self.tree.add_usage_map(cq, usage)
        if tas_usage:
            self.tas_snapshot(tas_usage, +1)

    def _resources_to_reserve(self, e: Entry) -> dict[int, int]:
        """Kueue quotaResourcesToReserve for a preemptor without candidates."""
        assert e.assignment is not None
        out: dict[int, int] = {}
        for fr, v in e.assignment.usage.items():
            nominal = self.tree.nominal(e.cq, fr)
            used = self.tree.usage[e.cq].get(fr, 0)
            if e.assignment.borrowing > 0:
                bl = self.tree.borrowing_limit(e.cq, fr)
                out[fr] = v if bl == amount.UNLIMITED else min(v, amount.sub(amount.add(nominal, bl), used))
            else:
                out[fr] = max(0, min(v, amount.sub(nominal, used)))
        return out

    def _no_fit_reason(self, e: Entry) -> str:
        """Kueue resolveNoFitReason: the most severe of the NoFit pod sets' reasons."""
        assert e.assignment is not None
        worst = ""
        for ps in e.assignment.pod_sets:
            if ps.mode() == fa.NO_FIT:
                worst = fa.most_severe(worst, ps.no_fit_reason)
        return worst or WAITING_FOR_QUOTA

    def _recompute_if_stale(self, e: Entry, victims: dict[int, Target]) -> tuple[dict[int, int], bool | None]:
        """The usage to process the entry with, its assignment computed again
        when an earlier entry of the cycle made it stale; and whether it fits
        when that was checked on the way (None: not yet)."""
        assert e.assignment is not None
        cq = e.cq
        # Targets taken by an earlier entry: recompute on the projected snapshot
        # (RecomputeAssignmentUponPreemptionTargetsOverlap, beta, on).
        if self.topo.gates.recompute_assignment_upon_preemption_targets_overlap and any(
            t.wid in victims for t in e.targets
        ):
            nomination = [{r: f.flavor for r, f in ps.flavors.items()} for ps in e.assignment.pod_sets]
            self.workloads[e.wid].last_state = None
            gone = list(victims)
            self._simulate_removal(gone)
            a, targets = self.get_assignments(e.wid, cq, None, nomination)
            self._undo_removal(gone)
            self._record(e, a, targets)
            if a.mode() == fa.FIT:
                e.deferred = True
            return a.usage, None
        if e.assignment.tas_usage:
            # A placement that no longer fits (an earlier entry of the cycle took
            # its room) is computed again on the snapshot as it is now
            # (TASRecomputeAssignmentWithinSchedulingCycle, beta, on).
            check = self._fits(cq, e.assignment, victims, e.targets)
            if check == "tas":
                nomination = [{r: f.flavor for r, f in ps.flavors.items()} for ps in e.assignment.pod_sets]
                self.workloads[e.wid].last_state = None
                a, targets = self.get_assignments(e.wid, cq, None, nomination)
                self._record(e, a, targets)
                return a.usage, None
            return e.assignment.usage, check == "ok"
        return e.assignment.usage, None

    def _process(
        self,
        e: Entry,
        victims: dict[int, Target],
        report: CycleReport,
        now_ns: int,
    ) -> None:
        """Kueue processEntry."""
        assert e.assignment is not None
        cq = e.cq
        usage, fits = self._recompute_if_stale(e, victims)
        mode = e.assignment.mode()
        if e.deferred:
            mode = fa.DEFERRED_FIT
        if mode == fa.NO_FIT:
            e.requeue_reason, e.reason = REQUEUE_NO_FIT, self._no_fit_reason(e)
            return
        if mode == fa.PREEMPT and not e.targets:
            e.requeue_reason, e.reason = REQUEUE_PREEMPTION_NO_CANDIDATES, WAITING_FOR_QUOTA
            # Kueue reserveCapacityForUnreclaimablePreempt: unless the
            # ClusterQueue can always reclaim (reclaimWithinCohort: Any), or
            # when the workload is its preemptor (PrioritizePreemptorWorkloads).
            cannot_always_reclaim = self.topo.cluster_queues[cq].reclaim_within_cohort != 3
            if cannot_always_reclaim or (self.topo.gates.prioritize_preemptor_workloads and e.is_preemptor):
                self._reserve(cq, self._resources_to_reserve(e), e.assignment.tas_usage)
            return
        if mode == fa.DEFERRED_FIT:
            e.message, e.reason = MSG_DEFERRED, WAITING_FOR_PREEMPTED
            e.requeue_reason = REQUEUE_PENDING_PREEMPTION
            self.workloads[e.wid].last_state = None
            self._reserve(cq, usage, e.assignment.tas_usage)
            return
        if any(t.wid in victims for t in e.targets):
            self._skip(e, MSG_OVERLAP)
            return
        if fits is None:
            fits = self._fits(cq, e.assignment, victims, e.targets) == "ok"
        if not fits:
            self._skip(e, MSG_NO_LONGER_FITS)
            return
        for t in e.targets:
            victims[t.wid] = t
        if mode == fa.PREEMPT:
            self._reserve(cq, usage, e.assignment.tas_usage)
            issued = self._issue_preemptions(e, now_ns)
            report.preempted.extend(t.wid for t in e.targets)
            self.workloads[e.wid].last_state = None
            e.reason = WAITING_FOR_PREEMPTED
            if issued:
                e.message += f". Pending the preemption of {issued} workload(s)"
                e.requeue_reason = REQUEUE_PENDING_PREEMPTION
            return
        if self.topo.block_admission_for_pods_ready and not self._pods_ready_for_all_admitted():
            # scheduler.go waitForPodsReadyIfNeeded: QuotaReserved=False and the
            # scheduler waits; offline the PodsReady conditions change only
            # between cycles, so the entry and those after it wait for the next.
            e.reason, e.message = WAITING_FOR_PODS_READY, MSG_WAITING_FOR_PODS_READY
            e.requeue_reason = REQUEUE_FAILED_AFTER_NOMINATION
            self._blocked = True
            return
        self._admit_entry(e, now_ns)
        report.admitted.append(e.wid)

    def _scheduling_hash_of(self, wid: int) -> int:
        return self.workloads[wid].spec.scheduling_hash

    def _process_unless_blocked(
        self, e: Entry, victims: dict[int, Target], report: CycleReport, now_ns: int
    ) -> None:
        if self._blocked:  # the scheduler waits for PodsReady (waitForPodsReadyIfNeeded)
            e.status = "waiting"
        else:
            self._process(e, victims, report, now_ns)

    def _skip(self, e: Entry, message: str) -> None:
        """Kueue markSkipped: the scan record is kept only with
        FlavorFungibilityPreserveScanProgress."""
        e.status, e.message, e.reason = "skipped", message, WAITING_FOR_QUOTA
        if not self.topo.gates.flavor_fungibility_preserve_scan_progress:
            self.workloads[e.wid].last_state = None

    def _cq_path(self, cq: int) -> str:
        names = [self.topo.node_names[n] for n in reversed(self.tree.ancestors(cq))]
        return "/" + "/".join([*names, self.topo.node_names[cq]])

    def _issue_preemptions(self, e: Entry, now_ns: int) -> int:
        preemptor = self.workloads[e.wid].spec
        for t in e.targets:
            victim = self.workloads[t.wid]
            if victim.evicting:
                continue  # eviction already under way
            self._set_evicting(t.wid)
            victim.evicted_cycle = self.cycle
            victim.preempted_by = e.wid
            victim.eviction_reason = t.reason
            gates = self.topo.gates
            if t.reason == IN_COHORT_RECLAIM_WHILE_BORROWING and not gates.priority_sorting_within_cohort:
                # Kueue workload.Ordering: without PrioritySortingWithinCohort such a
                # victim queues as if it arrived just after its eviction, until
                # it is admitted again (_admit).
                self._queue_ts_before_preemption.setdefault(t.wid, victim.spec.queue_ts)
                victim.spec.queue_ts = now_ns + 1_000_000
            job_uid = preemptor.job_uid or "UNKNOWN"
            victim.eviction_message = (
                f"Preempted to accommodate a workload (UID: {preemptor.uid}, JobUID: {job_uid}) due to "
                f"{HUMAN_REASONS[t.reason]}; preemptor path: {self._cq_path(e.cq)}; "
                f"preemptee path: {self._cq_path(victim.admitted_cq)}"
            )
        return len(e.targets)

    def _admit_entry(self, e: Entry, now_ns: int) -> None:
        assert e.assignment is not None
        rec = self.workloads[e.wid]
        rec.admitted_pod_sets = [
            (ps.count, {r: f.flavor for r, f in ps.flavors.items()}) for ps in e.assignment.pod_sets
        ]
        rec.admitted_resource_usage = [
            {r: ps.requests[r] for r in ps.flavors} for ps in e.assignment.pod_sets
        ]
        rec.tas_uses = list(e.assignment.tas_usage)
        rec.topology = [ps.topology for ps in e.assignment.pod_sets] if self.tas is not None else None
        # Kueue's cycle snapshot gets only the admission's usage (scheduler.go
        # processEntry: cq.AddUsage), not the workload: it is no preemption
        # candidate for the rest of the cycle (preemption.go findCandidates).
        self._admit(e.wid, e.cq, dict(e.assignment.usage), now_ns, listed=False)
        self._push_entry_penalty(e.wid, e.cq, now_ns)
        self.cq_generation[e.cq] += 1  # the admission's status update reaches the cache
        self.cq_queues[e.cq].clear_preemptor(e.wid)
        rec.reason, rec.message = "", ""
        e.status = "assumed"
        self._pods_ready.discard(e.wid)  # a new admission: its pods start now
