"""The order in which fair-sharing preemption visits target ClusterQueues
(kueue pkg/scheduler/preemption/fairsharing/ordering.go and
least_common_ancestor.go), for preemption.py's fair strategies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .fair_sharing import DRS, NEGATIVE_DRS, compare_drs

if TYPE_CHECKING:
    from .preemption import PreemptionCtx, Preemptor


class TargetOrdering:
    """Kueue fairsharing.TargetClusterQueueOrdering: repeatedly descend from the
    root to the child with the highest share to find the next target ClusterQueue."""

    def __init__(self, p: Preemptor, ctx: PreemptionCtx, candidates: list[int]) -> None:
        self.p = p
        self.tree = p.tree
        self.ctx = ctx
        self.ancestors = set(self.tree.ancestors(ctx.cq))
        self.by_cq: dict[int, list[int]] = {}
        for wid in candidates:
            self.by_cq.setdefault(p.e.workloads[wid].admitted_cq, []).append(wid)
        self.pruned_cqs: set[int] = set()
        self.pruned_cohorts: set[int] = set()

    def has_workload(self, cq: int) -> bool:
        return bool(self.by_cq.get(cq))

    def pop(self, cq: int) -> int:
        return self.by_cq[cq].pop(0)

    def drop(self, cq: int) -> None:
        self.pruned_cqs.add(cq)

    def __iter__(self) -> Iterator[int]:
        cq = self.ctx.cq
        if self.tree.parent[cq] < 0:
            while self.has_workload(cq):
                yield cq
            return
        root = self.tree.root_of(cq)
        while root not in self.pruned_cohorts:
            target = self._next_target(root)
            if target >= 0:
                yield target

    def _next_target(self, cohort: int) -> int:
        """From cohort down to the child with the highest share (Kueue
        recurses into the chosen cohort; here the loop goes on with it)."""
        while True:
            target = self._best_child(cohort)
            if target < 0 or self.tree.is_cq[target]:
                return target
            cohort = target

    def _best_child(self, cohort: int) -> int:
        """The ClusterQueue or child cohort to descend to, or -1 (cohort pruned)."""
        best_cq, best_cq_drs = -1, NEGATIVE_DRS
        for cq in self.tree.child_cqs(cohort):
            if cq in self.pruned_cqs:
                continue
            drs = self.p.drs(cq)
            if (drs.is_zero() and cq != self.ctx.cq) or not self.has_workload(cq):
                self.pruned_cqs.add(cq)
                continue
            c = compare_drs(drs, best_cq_drs)
            if c == 0 and best_cq >= 0:
                # Tie: the ClusterQueue whose first candidate orders first.
                new_key = self.p.candidate_order_key(self.by_cq[cq][0], self.ctx.cq)
                cur_key = self.p.candidate_order_key(self.by_cq[best_cq][0], self.ctx.cq)
                if new_key < cur_key:
                    best_cq = cq
            elif c > 0:
                best_cq, best_cq_drs = cq, drs
        best_cohort, best_cohort_drs = -1, NEGATIVE_DRS
        for child in self.tree.child_cohorts(cohort):
            if child in self.pruned_cohorts:
                continue
            drs = self.p.drs(child)
            if drs.is_zero() and child not in self.ancestors:
                self.pruned_cohorts.add(child)
                continue
            c = compare_drs(drs, best_cohort_drs)
            # Kueue keeps the last of equal cohorts (unordered set); kueue-fast
            # keeps the one whose name sorts first (scheduling contract).
            if c > 0 or (
                c == 0
                and best_cohort >= 0
                and self.tree.topo.node_names[child] < self.tree.topo.node_names[best_cohort]
            ):
                best_cohort, best_cohort_drs = child, drs
        if best_cohort < 0 and best_cq < 0:
            self.pruned_cohorts.add(cohort)
            return -1
        if best_cohort >= 0 and compare_drs(best_cohort_drs, best_cq_drs) >= 0:
            return best_cohort
        return best_cq

    # --- shares at the almost-lowest-common-ancestor (fairsharing/least_common_ancestor.go)

    def _almost_lcas(self, target_cq: int) -> tuple[int, int]:
        lca = next(a for a in self.tree.ancestors(target_cq) if a in self.ancestors)

        def below(cq: int) -> int:
            node = cq
            for a in self.tree.ancestors(cq):
                if a == lca:
                    return node
                node = a
            raise AssertionError("no common ancestor")

        return below(self.ctx.cq), below(target_cq)

    def shares(self, target_cq: int) -> tuple[DRS, DRS]:
        preemptor_side, target_side = self._almost_lcas(target_cq)
        return self.p.drs(preemptor_side), self.p.drs(target_side)

    def target_share_after_removal(self, target_cq: int, wid: int) -> DRS:
        self.p.remove(wid)
        _, target_side = self._almost_lcas(target_cq)
        drs = self.p.drs(target_side)
        self.p.restore(wid)
        return drs
