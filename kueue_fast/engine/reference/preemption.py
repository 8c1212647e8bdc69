"""Preemption targets: which admitted workloads to evict so that a workload fits.

Classical preemption follows kueue pkg/scheduler/preemption/preemption.go
(classicalPreemptions, fillBackWorkloads) with the candidates of
classical/candidate_generator.go and classical/hierarchical_preemption.go;
fair-sharing preemption follows fair_strategy.go and fairsharing/ordering.go.

Every trial removal happens on the engine's working quota tree and is undone
before returning, on every path: the tree is identical before and after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from .fair_sharing import DRS, compare_drs
from .fair_sharing_ordering import TargetOrdering

if TYPE_CHECKING:
    from .records import WorkloadRecord
    from .scheduler import ReferenceEngine
    from .tas import TasPodSetAsk

# Policy codes (engine.inputs.POLICY_CODES).
NEVER, LOWER_PRIORITY, LOWER_OR_NEWER_EQUAL, ANY = 0, 1, 2, 3

# Preemption reasons (Kueue's Preempted condition reasons).
IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"

HUMAN_REASONS = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}

# Candidate variants (classical/hierarchical_preemption.go preemptionVariant).
V_NEVER, V_WITHIN_CQ, V_HIERARCHICAL, V_RECLAIM_WITHOUT_BORROWING, V_RECLAIM_WHILE_BORROWING = range(5)
_VARIANT_REASON = {
    V_WITHIN_CQ: IN_CLUSTER_QUEUE,
    V_HIERARCHICAL: IN_COHORT_RECLAMATION,
    V_RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
    V_RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING,
}


_C = TypeVar("_C")  # a preemption candidate, however a list holds it


def merge_sort(items: list[_C], before: Callable[[_C, _C], bool]) -> list[_C]:
    """Stable top-down merge sort: halves of len // 2, the right element taken
    only when strictly before the left one. Its result is defined for any
    comparison, transitive or not (the native engine has the same one:
    csrc/include/kueue_fast/admission_fair_sharing.hpp merge_sort)."""
    if len(items) <= 1:
        return list(items)
    mid = len(items) // 2
    left, right = merge_sort(items[:mid], before), merge_sort(items[mid:], before)
    out: list[_C] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if before(right[j], left[i]):
            out.append(right[j])
            j += 1
        else:
            out.append(left[i])
            i += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


@dataclass
class Target:
    wid: int
    reason: str


@dataclass
class PreemptionCtx:
    preemptor: int  # workload id
    cq: int
    frs_need_preemption: set[int]
    usage: dict[int, int]  # the incoming workload's usage per fr
    # Topology Aware Scheduling: its pod sets to place, per TAS flavor (kueue preemptionCtx.tasRequests)
    tas: list[tuple[int, list[TasPodSetAsk]]] = field(default_factory=list)


class Preemptor:
    """Target search over the engine's working state."""

    def __init__(self, engine: ReferenceEngine) -> None:
        self.e = engine
        self.tree = engine.tree
        self.evaluations = 0  # candidate removals tried, for benchmarks

    # --- helpers shared by both strategies -------------------------------------------

    def _wl(self, wid: int) -> WorkloadRecord:
        return self.e.workloads[wid]

    def candidate_order_key(self, wid: int, preemptor_cq: int) -> tuple[object, ...]:
        """Kueue CandidatesOrdering: evicted first, other ClusterQueues first,
        lower priority first, most recently admitted first, then name."""
        w = self._wl(wid)
        return (
            0 if w.evicting else 1,
            1 if w.admitted_cq == preemptor_cq else 0,
            w.spec.priority,
            -w.admission_time,
            w.spec.namespace,
            w.spec.name,
        )

    def candidate_cmp(self, a: int, b: int, preemptor_cq: int) -> int:
        """Kueue CandidatesOrdering with admission fair sharing: after "evicted
        first" and "other ClusterQueues first", two workloads of the same
        ClusterQueue from LocalQueues of different names, both with a
        LocalQueue usage (usage-based ClusterQueue), go higher usage first;
        then lower priority, most recently admitted, name."""
        ka, kb = self.candidate_order_key(a, preemptor_cq), self.candidate_order_key(b, preemptor_cq)
        if ka[:2] != kb[:2]:
            return -1 if ka[:2] < kb[:2] else 1
        wa, wb = self._wl(a), self._wl(b)
        if wa.admitted_cq == wb.admitted_cq and wa.spec.queue_name != wb.spec.queue_name:
            ua, ub = self.e.lq_fs.lq_fs_usage(a), self.e.lq_fs.lq_fs_usage(b)
            if ua is not None and ub is not None and ua != ub:
                return -1 if ua > ub else 1
        return -1 if ka[2:] < kb[2:] else (1 if ka[2:] > kb[2:] else 0)

    def sort_candidates(self, items: list[_C], wid_of: Callable[[_C], int], preemptor_cq: int) -> None:
        """Sort preemption candidates (Kueue CandidatesOrdering).

        With admission fair sharing the LocalQueue-usage rule only applies to
        pairs in one ClusterQueue, so the order is a comparison, not a key. Mixed
        with other ClusterQueues' candidates (or LocalQueues of one name in
        several namespaces) it need not be transitive; Kueue's result then
        depends on its (randomised) map order. kueue-fast defines it: the
        candidates in the plain order (a total order, whatever order they were
        collected in), then merge_sort with the comparison. Whenever the
        comparison is a strict order on the candidates, that is the one sorted
        order, Kueue's."""
        items.sort(key=lambda x: self.candidate_order_key(wid_of(x), preemptor_cq))
        if self.e.afs is None:
            return
        items[:] = merge_sort(items, lambda x, y: self.candidate_cmp(wid_of(x), wid_of(y), preemptor_cq) < 0)

    def uses_resources(self, wid: int, frs: set[int]) -> bool:
        return any(fr in frs for fr in self._wl(wid).usage)

    def satisfies_policy(self, preemptor: int, candidate: int, policy: int) -> bool:
        """Kueue SatisfiesPreemptionPolicy."""
        p = self._wl(preemptor).spec
        c = self._wl(candidate).spec
        if policy == LOWER_PRIORITY:
            return c.priority < p.priority
        if policy == LOWER_OR_NEWER_EQUAL:
            return c.priority < p.priority or (c.priority == p.priority and p.queue_ts < c.queue_ts)
        return policy == ANY

    def remove(self, wid: int) -> None:
        w = self._wl(wid)
        self.tree.add_usage_map(w.admitted_cq, w.usage, -1)
        if w.tas_uses:
            self.e.tas_snapshot(w.tas_uses, -1)

    def restore(self, wid: int) -> None:
        w = self._wl(wid)
        self.tree.add_usage_map(w.admitted_cq, w.usage, +1)
        if w.tas_uses:
            self.e.tas_snapshot(w.tas_uses, +1)

    def workload_fits(self, ctx: PreemptionCtx, allow_borrowing: bool) -> bool:
        """Kueue workloadFits: quota, then the topology placement."""
        for fr, v in ctx.usage.items():
            if not allow_borrowing and self.tree.borrowing_with(ctx.cq, fr, v):
                return False
            if v > self.tree.available(ctx.cq, fr):
                return False
        if ctx.tas:
            assert self.e.tas is not None
            return self.e.tas.find_for_workload(ctx.tas, False)[1] is None
        return True

    def fill_back(self, ctx: PreemptionCtx, targets: list[Target], allow_borrowing: bool) -> list[Target]:
        """Put back, newest removal first, every target the workload does not need."""
        for i in range(len(targets) - 2, -1, -1):
            self.restore(targets[i].wid)
            if self.workload_fits(ctx, allow_borrowing):
                # O(1) deletion as Kueue does it: the last target takes slot i.
                targets[i] = targets[-1]
                targets.pop()
            else:
                self.remove(targets[i].wid)
        return targets

    def _restore_all(self, targets: list[Target]) -> None:
        for t in targets:
            self.restore(t.wid)

    def get_targets(self, ctx: PreemptionCtx) -> list[Target]:
        if self.e.topo.fair_sharing:
            return self.fair_preemptions(ctx)
        return self.classical_preemptions(ctx)

    # --- classical -----------------------------------------------------------------------

    def _borrow_within_cohort(self, cq: int) -> tuple[bool, int | None]:
        spec = self.e.topo.cluster_queues[cq]
        if spec.borrow_within_cohort == NEVER:
            return False, None
        return True, spec.max_priority_threshold

    def _variant(self, ctx: PreemptionCtx, cand: int, hierarchical_advantage: bool) -> int:
        """Kueue classifyPreemptionVariant."""
        if not self.uses_resources(cand, ctx.frs_need_preemption):
            return V_NEVER
        spec = self.e.topo.cluster_queues[ctx.cq]
        same_cq = self._wl(cand).admitted_cq == ctx.cq
        policy = spec.within_cluster_queue if same_cq else spec.reclaim_within_cohort
        if not self.satisfies_policy(ctx.preemptor, cand, policy):
            return V_NEVER
        if same_cq:
            return V_WITHIN_CQ
        if hierarchical_advantage:
            return V_HIERARCHICAL
        allowed, threshold = self._borrow_within_cohort(ctx.cq)
        if not allowed:
            return V_RECLAIM_WITHOUT_BORROWING
        cand_prio = self._wl(cand).spec.priority
        if cand_prio >= self._wl(ctx.preemptor).spec.priority:
            return V_RECLAIM_WITHOUT_BORROWING
        if threshold is not None and cand_prio > threshold:
            return V_RECLAIM_WITHOUT_BORROWING
        return V_RECLAIM_WHILE_BORROWING

    def _candidates_from_cq(
        self, ctx: PreemptionCtx, cq: int, lca: int, advantage: bool, out: list[tuple[int, int, int]]
    ) -> None:
        for wid in sorted(self.e.cq_admitted[cq]):
            v = self._variant(ctx, wid, advantage)
            if v != V_NEVER:
                out.append((wid, lca, v))

    def _collect_in_subtree(
        self,
        ctx: PreemptionCtx,
        cohort: int,
        subtree_root: int,
        skip: int,
        advantage: bool,
        out: list[tuple[int, int, int]],
    ) -> None:
        """Kueue collectCandidatesInSubtree: each child cohort's subtree (but
        ``skip`` and those within nominal) before the cohort's own
        ClusterQueues; Kueue recurses, the loop takes the cohorts in that order
        (reversed: a cohort before its children, the last child first)."""
        frs = ctx.frs_need_preemption
        cohorts = []
        stack = [cohort]
        while stack:
            node = stack.pop()
            cohorts.append(node)
            stack.extend(
                c for c in self.tree.child_cohorts(node) if c != skip and not self.tree.within_nominal(c, frs)
            )
        for node in reversed(cohorts):
            for child in self.tree.child_cqs(node):
                if child == ctx.cq:
                    continue
                if not self.tree.within_nominal(child, frs):
                    self._candidates_from_cq(ctx, child, subtree_root, advantage, out)

    def _hierarchical_candidates(
        self, ctx: PreemptionCtx
    ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """Kueue collectCandidatesForHierarchicalReclaim: (hierarchy, priority) candidates."""
        hierarchy: list[tuple[int, int, int]] = []
        priority: list[tuple[int, int, int]] = []
        spec = self.e.topo.cluster_queues[ctx.cq]
        if self.tree.parent[ctx.cq] < 0 or spec.reclaim_within_cohort == NEVER:
            return hierarchy, priority
        advantage, remaining = self.tree.quantities_fit_in_quota(ctx.cq, ctx.usage)
        previous = -1
        for node in self.tree.ancestors(ctx.cq):
            self._collect_in_subtree(
                ctx, node, node, previous, advantage, hierarchy if advantage else priority
            )
            fits, remaining = self.tree.quantities_fit_in_quota(node, remaining)
            advantage = advantage or fits
            previous = node
        return hierarchy, priority

    def _candidate_valid(self, ctx: PreemptionCtx, cand: tuple[int, int, int], borrowing: bool) -> bool:
        """Kueue candidateIsValid: earlier removals may make a candidate's
        ClusterQueue (or an ancestor below the common one) no longer borrow."""
        wid, lca, variant = cand
        cq = self._wl(wid).admitted_cq
        if cq == ctx.cq:
            return True
        if borrowing and variant == V_RECLAIM_WITHOUT_BORROWING:
            return False
        frs = ctx.frs_need_preemption
        if self.tree.within_nominal(cq, frs):
            return False
        for node in self.tree.ancestors(cq):
            if node == lca:
                break
            if self.tree.within_nominal(node, frs):
                return False
        return True

    def _queue_under_nominal(self, ctx: PreemptionCtx) -> bool:
        """Strictly below nominal on every fr needing preemption."""
        return all(
            self.tree.nominal(ctx.cq, fr) > self.tree.usage[ctx.cq].get(fr, 0)
            for fr in ctx.frs_need_preemption
        )

    def classical_preemptions(self, ctx: PreemptionCtx) -> list[Target]:
        spec = self.e.topo.cluster_queues[ctx.cq]
        same: list[tuple[int, int, int]] = []
        if spec.within_cluster_queue != NEVER:
            self._candidates_from_cq(ctx, ctx.cq, -1, False, same)
        hierarchy, priority = self._hierarchical_candidates(ctx)
        for candidates in (same, hierarchy, priority):
            self.sort_candidates(candidates, lambda c: c[0], ctx.cq)

        def evicting(c: tuple[int, int, int]) -> bool:
            return self._wl(c[0]).evicting

        ordered = (
            [c for c in hierarchy if evicting(c)]
            + [c for c in priority if evicting(c)]
            + [c for c in same if evicting(c)]
            + [c for c in hierarchy if not evicting(c)]
            + [c for c in priority if not evicting(c)]
            + [c for c in same if not evicting(c)]
        )
        forbidden = spec.borrow_within_cohort == NEVER
        if (not hierarchy and not priority) or (forbidden and not self._queue_under_nominal(ctx)):
            attempts = [True]
        elif forbidden and not hierarchy:
            attempts = [False, True]
        else:
            attempts = [True, False]
        for borrowing in attempts:
            targets: list[Target] = []
            for cand in ordered:
                if not self._candidate_valid(ctx, cand, borrowing):
                    continue
                self.remove(cand[0])
                self.evaluations += 1
                targets.append(Target(cand[0], _VARIANT_REASON[cand[2]]))
                if self.workload_fits(ctx, borrowing):
                    targets = self.fill_back(ctx, targets, borrowing)
                    self._restore_all(targets)
                    return targets
            self._restore_all(targets)
        return []

    # --- fair sharing ------------------------------------------------------------------------

    def drs(self, node: int) -> DRS:
        return self.e.drs(node)

    def _fair_candidates(self, ctx: PreemptionCtx) -> list[int]:
        """Kueue findCandidates: own ClusterQueue by withinClusterQueue; every
        borrowing ClusterQueue of the whole tree by reclaimWithinCohort."""
        spec = self.e.topo.cluster_queues[ctx.cq]
        frs = ctx.frs_need_preemption
        out: list[int] = []

        def add_from(cq: int, policy: int) -> None:
            for wid in self.e.cq_admitted[cq]:
                if self.satisfies_policy(ctx.preemptor, wid, policy) and self.uses_resources(wid, frs):
                    out.append(wid)

        if spec.within_cluster_queue != NEVER:
            add_from(ctx.cq, spec.within_cluster_queue)
        if self.tree.parent[ctx.cq] >= 0 and spec.reclaim_within_cohort != NEVER:
            for cq in self.tree.subtree_cqs(self.tree.root_of(ctx.cq)):
                if cq == ctx.cq or not self._cq_borrowing(cq, frs):
                    continue
                add_from(cq, spec.reclaim_within_cohort)
        return out

    def _cq_borrowing(self, cq: int, frs: set[int]) -> bool:
        if self.tree.parent[cq] < 0:
            return False
        return any(self.tree.borrowing_with(cq, fr, 0) for fr in frs)

    def _fits_for_fair_sharing(self, ctx: PreemptionCtx) -> bool:
        # The incoming usage is simulated for share computations; take it out to check fit.
        self.tree.add_usage_map(ctx.cq, ctx.usage, -1)
        ok = self.workload_fits(ctx, True)
        self.tree.add_usage_map(ctx.cq, ctx.usage, +1)
        return ok

    def fair_preemptions(self, ctx: PreemptionCtx) -> list[Target]:
        candidates = self._fair_candidates(ctx)
        if not candidates:
            return []
        self.sort_candidates(candidates, lambda w: w, ctx.cq)
        strategies = self.e.topo.fair_strategies or [0, 1]
        self.tree.add_usage_map(ctx.cq, ctx.usage, +1)
        targets: list[Target] = []
        fits, retry = self._first_fair_strategy(ctx, candidates, strategies[0], targets)
        if (
            not fits
            and self.e.topo.gates.fair_sharing_reevaluate_preemption_candidates
            and any(self.e.workloads[t.wid].admitted_cq == ctx.cq for t in targets)
        ):
            # Taking the preemptor's own workloads lowered its share: candidates
            # that failed the strategy get one more chance (fair_strategy.go).
            fits, retry = self._first_fair_strategy(ctx, retry, strategies[0], targets)
        if not fits and len(strategies) > 1:
            fits = self._second_fair_strategy(ctx, retry, targets)
        self.tree.add_usage_map(ctx.cq, ctx.usage, -1)
        if not fits:
            self._restore_all(targets)
            return []
        targets = self.fill_back(ctx, targets, True)
        self._restore_all(targets)
        return targets

    def _first_fair_strategy(
        self, ctx: PreemptionCtx, candidates: list[int], strategy: int, targets: list[Target]
    ) -> tuple[bool, list[int]]:
        ordering = TargetOrdering(self, ctx, candidates)
        retry: list[int] = []
        within_nominal = self.e.topo.gates.fair_sharing_preempt_within_nominal and not any(
            self.tree.borrowing_with(ctx.cq, fr, 0) for fr in ctx.frs_need_preemption
        )
        for target_cq in ordering:
            if target_cq == ctx.cq:
                wid = ordering.pop(target_cq)
                self._take(wid, IN_CLUSTER_QUEUE, targets)
                if self._fits_for_fair_sharing(ctx):
                    return True, retry
                continue
            if within_nominal:
                wid = ordering.pop(target_cq)
                self._take(wid, IN_COHORT_RECLAMATION, targets)
                if self._fits_for_fair_sharing(ctx):
                    return True, retry
                continue
            preemptor_new, target_old = ordering.shares(target_cq)
            if preemptor_new.zero_weight_borrows() and not target_old.zero_weight_borrows():
                # No candidate of this ClusterQueue can pass either strategy.
                while ordering.has_workload(target_cq):
                    retry.append(ordering.pop(target_cq))
                continue
            while ordering.has_workload(target_cq):
                wid = ordering.pop(target_cq)
                self.evaluations += 1
                target_new = ordering.target_share_after_removal(target_cq, wid)
                if strategy == 0:
                    passed = compare_drs(preemptor_new, target_new) <= 0
                else:
                    passed = compare_drs(preemptor_new, target_old) < 0
                if passed:
                    self._take(wid, IN_COHORT_FAIR_SHARING, targets)
                    if self._fits_for_fair_sharing(ctx):
                        return True, retry
                    break  # shares changed: choose the next target ClusterQueue again
                retry.append(wid)
        return False, retry

    def _second_fair_strategy(self, ctx: PreemptionCtx, retry: list[int], targets: list[Target]) -> bool:
        """Rule S2-b on the candidates the first strategy passed over."""
        ordering = TargetOrdering(self, ctx, retry)
        for target_cq in ordering:
            preemptor_new, target_old = ordering.shares(target_cq)
            wid = ordering.pop(target_cq)
            self.evaluations += 1
            if compare_drs(preemptor_new, target_old) < 0:
                self._take(wid, IN_COHORT_FAIR_SHARING, targets)
                if self._fits_for_fair_sharing(ctx):
                    return True
            ordering.drop(target_cq)
        return False

    def _take(self, wid: int, reason: str, targets: list[Target]) -> None:
        self.remove(wid)
        targets.append(Target(wid, reason))


__all__ = ["Preemptor", "PreemptionCtx", "Target", "HUMAN_REASONS", "Callable"]
