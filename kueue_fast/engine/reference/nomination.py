"""Steps 3 and 4 of the reference engine's cycle (scheduler.py): nominate the
heads (kueue pkg/scheduler/scheduler.go nominate, getInitialAssignments;
flavorassigner PodSetReducer for partial admission) and order the entries
(scheduler.go entryOrdering; fair_sharing_iterator.go for the tournament).
Functions over the engine's state (``eng``, scheduler.py's ReferenceEngine)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ..inputs import BLOCK_NAMESPACE_MISMATCH, BLOCK_NONE
from . import amount, flavor_assigner as fa
from .fair_sharing import DRS, compare_drs
from .preemption import PreemptionCtx, Target
from .queues import REQUEUE_NAMESPACE_MISMATCH
from .records import MISCONFIGURED, SUSPENDED, Entry

if TYPE_CHECKING:
    from ...api.features import FeatureGates
    from .records import WorkloadRecord
    from .scheduler import ReferenceEngine


# --- nomination ------------------------------------------------------------------------------


def _oracle(eng: ReferenceEngine, wid: int, cq: int) -> Callable[[int, int], tuple[int, int]]:
    def simulate(fr: int, quantity: int) -> tuple[int, int]:
        ctx = PreemptionCtx(wid, cq, {fr}, {fr: quantity})
        targets = eng.preemptor.get_targets(ctx)
        if not targets:
            borrow, _ = eng.tree.lowest_subtree_that_fits(cq, fr, quantity)
            return fa.PM_NO_CANDIDATES, borrow
        for t in targets:
            eng.preemptor.remove(t.wid)
        borrow, _ = eng.tree.lowest_subtree_that_fits(cq, fr, quantity)
        for t in targets:
            eng.preemptor.restore(t.wid)
        if any(eng.workloads[t.wid].admitted_cq == cq for t in targets):
            return fa.PM_PREEMPT, borrow
        return fa.PM_RECLAIM, borrow

    return simulate


def _preemption_ctx(
    eng: ReferenceEngine, wid: int, cq: int, a: fa.Assignment, counts: list[int] | None
) -> PreemptionCtx:
    """Kueue buildContext: the workload's own requests (TotalRequestsFor: no
    `pods`, no zero amounts) and the flavor-resources needing preemption."""
    spec = eng.workloads[wid].spec
    usage: dict[int, int] = {}
    for i, ps in enumerate(a.pod_sets):
        count = ps.count
        for r, per_pod in spec.pod_sets[i].requests:
            q = amount.saturating_mul(per_pod, count)
            if q == 0 or r not in ps.flavors:
                continue
            fr = eng.topo.fr_id(ps.flavors[r].flavor, r)
            usage[fr] = amount.add(usage.get(fr, 0), q)
    ctx = PreemptionCtx(wid, cq, a.frs_need_preemption(eng.topo.fr_id), usage)
    if eng.topo.tas is not None:
        ctx.tas = fa.tas_asks(eng.topo.tas, spec, a)[0]
    return ctx


def scan_state(eng: ReferenceEngine, wid: int, cq: int) -> fa.LastState | None:
    """The recorded flavor scan, unless outdated (FlavorFungibilityPreserveScanProgress)."""
    last = eng.workloads[wid].last_state
    if last is None:
        return None
    if eng.topo.gates.flavor_fungibility_preserve_scan_progress and eng.cycle - last.cycle <= 1:
        return last
    if eng.snapshot_generation[cq] > last.generation:
        return None
    return last


def get_assignments(
    eng: ReferenceEngine,
    wid: int,
    cq: int,
    last: fa.LastState | None,
    nomination: list[dict[int, int]] | None = None,
) -> tuple[fa.Assignment, list[Target]]:
    """Kueue getInitialAssignments: full assignment, its targets, else partial admission."""
    a, targets = _initial_assignments(eng, wid, cq, last, nomination)
    _update_assignment_for_tas(eng, wid, cq, a, targets)
    return a, targets


def _initial_assignments(
    eng: ReferenceEngine,
    wid: int,
    cq: int,
    last: fa.LastState | None,
    nomination: list[dict[int, int]] | None,
) -> tuple[fa.Assignment, list[Target]]:
    """Kueue getInitialAssignments."""
    spec = eng.workloads[wid].spec
    assigner = fa.FlavorAssigner(eng, spec, cq, last, _oracle(eng, wid, cq), nomination)
    full = assigner.assign()
    mode = full.mode()
    if mode == fa.FIT:
        return full, []
    if mode == fa.PREEMPT:
        targets = eng.preemptor.get_targets(_preemption_ctx(eng, wid, cq, full, None))
        if targets:
            return full, targets
    deltas = [ps.count - (ps.min_count if ps.min_count is not None else ps.count) for ps in spec.pod_sets]
    total = sum(deltas)
    if total > 0 and eng.topo.gates.partial_admission:
        found = _partial_search(eng, wid, cq, assigner, deltas, total)
        if found is not None:
            return found
    return full, []


def _update_assignment_for_tas(
    eng: ReferenceEngine, wid: int, cq: int, a: fa.Assignment, targets: list[Target]
) -> None:
    """Kueue updateAssignmentForTAS: a TAS workload that needs preemption
    gets the placement it would have once its targets are gone, or, with
    none, on the empty topology (what it reserves while it waits)."""
    tas, spec_tas = eng.tas, eng.topo.tas
    spec = eng.workloads[wid].spec
    if tas is None or spec_tas is None or a.mode() != fa.PREEMPT:
        return
    if not any(ps.tas is not None for ps in spec.pod_sets):
        return
    asks, _ = fa.tas_asks(spec_tas, spec, a)
    if targets:
        for t in targets:
            eng.preemptor.remove(t.wid)
        placed, _ = tas.find_for_workload(asks, False)
        for t in targets:
            eng.preemptor.restore(t.wid)
    else:
        placed, _ = tas.find_for_workload(asks, True)
    fa.update_for_tas_result(spec_tas, spec, a, placed)


def _partial_search(
    eng: ReferenceEngine, wid: int, cq: int, assigner: fa.FlavorAssigner, deltas: list[int], total: int
) -> tuple[fa.Assignment, list[Target]] | None:
    """Kueue PodSetReducer.Search: the smallest reduction k in [0, D] whose
    counts count_i - floor(delta_i * k / D) fit, by binary search."""
    spec = eng.workloads[wid].spec
    last_good: tuple[fa.Assignment, list[Target]] | None = None
    last_good_k = -1

    def fits(k: int) -> bool:
        nonlocal last_good, last_good_k
        counts = [ps.count - (d * k) // total for ps, d in zip(spec.pod_sets, deltas, strict=True)]
        a = assigner.assign(counts)
        m = a.mode()
        result: tuple[fa.Assignment, list[Target]] | None = None
        if m == fa.FIT:
            result = (a, [])
        elif m == fa.PREEMPT:
            t = eng.preemptor.get_targets(_preemption_ctx(eng, wid, cq, a, counts))
            if t:
                result = (a, t)
        if result is not None:
            last_good, last_good_k = result, k
            return True
        return False

    lo, hi = 0, total + 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if not fits(mid):
            lo = mid + 1
        else:
            hi = mid
    return last_good if lo == last_good_k else None


def record(eng: ReferenceEngine, e: Entry, a: fa.Assignment, targets: list[Target]) -> None:
    e.assignment = a
    e.targets = targets
    e.message = a.message()
    rec = eng.workloads[e.wid]
    rec.last_state = fa.LastState(a.last_tried, eng.snapshot_generation[e.cq], eng.cycle)


def nominate(eng: ReferenceEngine, wid: int) -> tuple[Entry, bool]:
    """(entry, nominated?) for a head. Not nominated: inadmissible for a reason."""
    rec = eng.workloads[wid]
    cq = rec.spec.cluster_queue
    e = Entry(wid, cq)
    spec = eng.topo.cluster_queues[cq]
    if not spec.active:
        e.message, e.reason = spec.inactive_message, SUSPENDED
        return e, False
    if rec.spec.block != BLOCK_NONE:
        e.message, e.reason = rec.spec.block_message, MISCONFIGURED
        if rec.spec.block == BLOCK_NAMESPACE_MISMATCH:
            e.requeue_reason = REQUEUE_NAMESPACE_MISMATCH
        return e, False
    last = scan_state(eng, wid, cq)
    # it resumes where an earlier scan stopped (flavor_assigner next_flavor past 0)
    e.resumed = last is not None and eng.topo.gates.flavor_fungibility and last.pending_flavors()
    a, targets = get_assignments(eng, wid, cq, last)
    record(eng, e, a, targets)
    return e, True


# --- ordering of entries ---------------------------------------------------------------------


def ordered(eng: ReferenceEngine, entries: list[Entry]) -> Iterator[Entry]:
    """The entries in processing order: classical (scheduler.go entryOrdering),
    or with fair sharing the tournament's winners one at a time, each pop
    seeing the snapshot as the entries processed before it left it."""
    if not eng.topo.fair_sharing:
        yield from classical_order(entries, eng.workloads, eng.topo.gates)
        return
    remaining = {e.cq: e for e in entries}
    while remaining:
        yield fair_sharing_pop(eng, remaining)


def classical_order(
    entries: list[Entry], workloads: list[WorkloadRecord], gates: FeatureGates
) -> list[Entry]:
    """Kueue entryOrdering."""

    def key(e: Entry) -> tuple[object, ...]:
        s = workloads[e.wid].spec
        assert e.assignment is not None
        return (
            0 if gates.prioritize_preemptor_workloads and e.is_preemptor else 1,
            e.assignment.borrowing,
            -s.priority if gates.priority_sorting_within_cohort else 0,
            s.queue_ts,
            s.namespace,
            s.name,
        )

    return sorted(entries, key=key)


def fair_sharing_pop(eng: ReferenceEngine, remaining: dict[int, Entry]) -> Entry:
    """Kueue fairSharingIterator.pop: the tournament winner of one cohort tree."""
    cq = min(remaining)
    if eng.tree.parent[cq] < 0:
        return remaining.pop(cq)
    root = eng.tree.root_of(cq)
    drs_at: dict[tuple[int, int], DRS] = {}
    requested: dict[int, dict[int, int]] = {}
    for c in eng.tree.subtree_cqs(root):
        e = remaining.get(c)
        if e is None:
            continue
        assert e.assignment is not None
        usage = e.assignment.usage
        eng.tree.add_usage_map(c, usage)
        requested[e.wid] = usage
        share = eng.drs(c)
        for anc in eng.tree.ancestors(c):
            drs_at[(anc, e.wid)] = share
            share = eng.drs(anc)
        eng.tree.add_usage_map(c, usage, -1)

    def less(a: Entry, b: Entry, cohort: int) -> bool:
        gates = eng.topo.gates
        if gates.prioritize_preemptor_workloads and a.is_preemptor != b.is_preemptor:
            return a.is_preemptor
        ad, bd = drs_at[(cohort, a.wid)], drs_at[(cohort, b.wid)]
        if gates.fair_sharing_prioritize_non_borrowing:
            ab, bb = ad.is_borrowing_on(requested[a.wid]), bd.is_borrowing_on(requested[b.wid])
            if ab != bb:
                return not ab
        c = compare_drs(ad, bd)
        if c != 0:
            return c < 0
        sa, sb = eng.workloads[a.wid].spec, eng.workloads[b.wid].spec
        if gates.priority_sorting_within_cohort and sa.priority != sb.priority:
            return sa.priority > sb.priority
        if sa.queue_ts != sb.queue_ts:
            return sa.queue_ts < sb.queue_ts
        return (sa.namespace, sa.name) < (sb.namespace, sb.name)

    def tournament(top: int) -> Entry | None:
        """Each cohort's winner among its child cohorts' winners and its
        ClusterQueues' heads, child cohorts first (Kueue recurses)."""
        winners: dict[int, Entry | None] = {}
        for cohort in reversed([n for n in eng.tree.preorder(top) if not eng.tree.is_cq[n]]):
            candidates = [w for c in eng.tree.child_cohorts(cohort) if (w := winners[c]) is not None]
            candidates += [remaining[c] for c in eng.tree.child_cqs(cohort) if c in remaining]
            if not candidates:
                winners[cohort] = None
                continue
            best = candidates[0]
            for cur in candidates[1:]:
                if less(cur, best, cohort):
                    best = cur
            winners[cohort] = best
        return winners[top]

    winner = tournament(root)
    assert winner is not None
    return remaining.pop(winner.cq)
