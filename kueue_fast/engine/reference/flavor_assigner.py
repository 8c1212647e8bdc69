"""Flavor assignment: which flavor each requested resource of each pod set gets.

Same rules as kueue pkg/scheduler/flavorassigner/flavorassigner.go
(assignFlavors, findFlavorForPodSets, fitsResourceQuota, isPreferred,
shouldTryNextFlavor). Pod sets are assigned in order; within a pod set the
resources of one resource group share one flavor, chosen by scanning the
group's flavors in order (resuming after the last tried flavor when a
previous attempt recorded one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from ...api.quantity import format_amount, format_quantity
from ..inputs import ClusterQueueSpec, WorkloadSpec
from . import amount
from .tas import TasPodSetAsk, TasUse

if TYPE_CHECKING:
    from ..tas import TasSpec
    from .scheduler import ReferenceEngine

# FlavorAssignmentMode (ordered from worst to best).
NO_FIT, PREEMPT, DEFERRED_FIT, FIT = 0, 1, 2, 3
MODE_NAMES = {NO_FIT: "NoFit", PREEMPT: "Preempt", DEFERRED_FIT: "DeferredFit", FIT: "Fit"}

# preemptionMode: the finer mode used inside the assigner (worst to best).
PM_NO_FIT, PM_NO_CANDIDATES, PM_PREEMPT, PM_RECLAIM, PM_FIT = range(5)
_PM_TO_MODE = {
    PM_NO_FIT: NO_FIT,
    PM_NO_CANDIDATES: PREEMPT,
    PM_PREEMPT: PREEMPT,
    PM_RECLAIM: PREEMPT,
    PM_FIT: FIT,
}

TRY_NEXT_FLAVOR = 1
PREEMPTION_OVER_BORROWING = 2
BORROW_UNLIMITED = 1 << 62  # borrowing level of "no flavor yet"

# Why a flavor or a pod set does not fit (QuotaReserved=False reasons), by
# severity: Kueue's reasonSeverity / mostSevereReason.
WAITING_FOR_QUOTA = "WaitingForQuota"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
NO_MATCHING_FLAVOR = "NoMatchingFlavor"
TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"
NO_FIT_SEVERITY = {
    "": 0,
    TOPOLOGY_PLACEMENT_FAILED: 1,
    WAITING_FOR_QUOTA: 2,
    EXCEEDS_MAX_QUOTA: 3,
    NO_MATCHING_FLAVOR: 4,
}


def most_severe(a: str, b: str) -> str:
    return b if NO_FIT_SEVERITY[b] > NO_FIT_SEVERITY[a] else a


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


@lru_cache(maxsize=64)
def resource_visit_order(resource_names: tuple[str, ...]) -> tuple[int, ...]:
    """Resource ids in the order Kueue walks a pod set's requests: its
    SliceRequests (VectorizedResourceRequests, beta, on) keep them sorted by
    the FNV-1a 64 hash of the name, then the name (pkg/resources/slice_requests.go).
    It decides which resource group is tried first, so which failing group a
    message names."""
    return tuple(
        sorted(
            range(len(resource_names)), key=lambda r: (fnv1a64(resource_names[r].encode()), resource_names[r])
        )
    )


@dataclass
class FlavorAssignment:
    flavor: int
    mode: int
    borrow: int
    tried_idx: int = -1


@dataclass
class PodSetAssignment:
    name: str
    count: int
    requests: dict[int, int]  # resource id -> total for the pod set (pods included when covered)
    flavors: dict[int, FlavorAssignment] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    # When NoFit: Kueue's resolveNoFitReason for this pod set ("" otherwise).
    no_fit_reason: str = ""
    # Topology Aware Scheduling: the placement (TAS flavor, [(leaf, pods)]),
    # Kueue's Status error ("no TAS flavor assigned"...), the flavors tried
    # (to mark the TAS flavor TopologyPlacementFailed)
    topology: tuple[int, list[tuple[int, int]]] | None = None
    error: str = ""
    attempts: FlavorAttempts | None = None

    def mode(self) -> int:
        if self.error:
            return NO_FIT
        if not self.reasons:
            return FIT
        if not self.flavors:
            return NO_FIT
        return min(fa.mode for fa in self.flavors.values())

    def set_mode(self, mode: int) -> None:
        """kueue PodSetAssignment.updateMode: every flavor of the pod set."""
        for fa in self.flavors.values():
            fa.mode = mode


@dataclass
class LastState:
    """Per pod set, resource -> index of the last flavor tried (-1: scan ended)."""

    tried: list[dict[int, int]]
    generation: int
    cycle: int

    def next_flavor(self, pod_set: int, resource: int) -> int:
        if pod_set >= len(self.tried):
            return 0
        idx = self.tried[pod_set].get(resource)
        return 0 if idx is None else idx + 1

    def pending_flavors(self) -> bool:
        return any(idx != -1 for ps in self.tried for idx in ps.values())


@dataclass
class Assignment:
    pod_sets: list[PodSetAssignment] = field(default_factory=list)
    borrowing: int = 0
    usage: dict[int, int] = field(default_factory=dict)  # fr -> amount
    last_tried: list[dict[int, int]] = field(default_factory=list)
    # Topology Aware Scheduling: the placements' usage (kueue ComputeTASNetUsage)
    tas_usage: list[tuple[TasUse, list[int]]] = field(default_factory=list)

    def mode(self) -> int:
        if not self.pod_sets:
            return NO_FIT
        return min(ps.mode() for ps in self.pod_sets)

    def message(self) -> str:
        parts = []
        for ps in self.pod_sets:
            if ps.error:
                return f"failed to assign flavors to pod set {ps.name}: {ps.error}"
            if not ps.reasons:
                continue
            parts.append(f"couldn't assign flavors to pod set {ps.name}: " + ", ".join(sorted(ps.reasons)))
        return "; ".join(parts)

    def append(self, topo_fr: Callable[[int, int], int], psa: PodSetAssignment) -> None:
        tried: dict[int, int] = {}
        self.pod_sets.append(psa)
        for rid, fa in psa.flavors.items():
            self.borrowing = max(self.borrowing, fa.borrow)
            fr = topo_fr(fa.flavor, rid)
            self.usage[fr] = amount.add(self.usage.get(fr, 0), psa.requests.get(rid, 0))
            tried[rid] = fa.tried_idx
        self.last_tried.append(tried)

    def frs_need_preemption(self, topo_fr: Callable[[int, int], int]) -> set[int]:
        return {
            topo_fr(fa.flavor, rid)
            for ps in self.pod_sets
            for rid, fa in ps.flavors.items()
            if fa.mode == PREEMPT
        }


@dataclass
class FlavorAttempts:
    """The flavors tried for one pod set, as Kueue's resolveNoFitReason reads
    its FlavorAssignmentAttempts (flavorassigner.go, flavor_assigner_attempts.go):
    per resource group the least severe reason among its NoFit flavors (they
    are alternatives); the groups are co-requisites, so the most severe of
    those decides, with the pod set's own status reason ("resource unavailable"
    is NoMatchingFlavor). No flavor tried at all: NoMatchingFlavor."""

    group_min: dict[int, str] = field(default_factory=dict)
    tried: bool = False
    status_reason: str = ""

    def mark_topology_failed(self, group: int) -> None:
        """kueue markFlavorAttempt(flavor, NoFit, TopologyPlacementFailed) on
        the pod set's TAS flavor (chosen, so tried, in ``group``)."""
        self.add(group, True, TOPOLOGY_PLACEMENT_FAILED)

    def add(self, group: int, no_fit: bool, reason: str) -> None:
        self.tried = True
        if no_fit:
            cur = self.group_min.get(group)
            if cur is None or NO_FIT_SEVERITY[reason] < NO_FIT_SEVERITY[cur]:
                self.group_min[group] = reason

    def resolve(self) -> str:
        if not self.tried:
            return NO_MATCHING_FLAVOR
        out = self.status_reason
        for reason in self.group_min.values():
            out = most_severe(out, reason)
        return out


# A preemption oracle answers: for this fr and total, are there targets, in
# the ClusterQueue itself (PM_PREEMPT) or only elsewhere (PM_RECLAIM), and at
# which borrowing height would the workload be once they are gone.
Oracle = Callable[[int, int], tuple[int, int]]


class FlavorAssigner:
    def __init__(
        self,
        engine: ReferenceEngine,
        wl: WorkloadSpec,
        cq: int,
        last_state: LastState | None,
        oracle: Oracle,
        nomination: list[dict[int, int]] | None = None,
    ) -> None:
        self.e = engine
        self.tree = engine.tree
        self.topo = engine.topo
        self.wl = wl
        self.cq = cq
        self.spec: ClusterQueueSpec = engine.topo.cluster_queues[cq]
        self.last = last_state
        self.oracle = oracle
        # Flavors pinned by a recomputation within the cycle: pod set -> resource -> flavor.
        self.nomination = nomination
        self.fungibility = engine.topo.gates.flavor_fungibility

    # --- preferences between modes ----------------------------------------------------------

    def is_preferred(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """Is granular mode a = (preemption mode, borrowing level) better than b?"""
        if a[0] == PM_NO_FIT:
            return False
        if b[0] == PM_NO_FIT:
            return True
        a_nc, b_nc = a[0] == PM_NO_CANDIDATES, b[0] == PM_NO_CANDIDATES
        if a_nc != b_nc:
            return not a_nc
        if self.spec.preference == PREEMPTION_OVER_BORROWING:
            if a[1] != b[1]:
                return a[1] < b[1]
            return a[0] > b[0]
        if a[0] != b[0]:
            return a[0] > b[0]
        return a[1] < b[1]

    def should_try_next_flavor(self, mode: tuple[int, int]) -> bool:
        if mode[0] in (PM_NO_FIT, PM_NO_CANDIDATES):
            return True
        if mode[0] in (PM_PREEMPT, PM_RECLAIM) and self.spec.when_can_preempt == TRY_NEXT_FLAVOR:
            return True
        return mode[1] != 0 and self.spec.when_can_borrow == TRY_NEXT_FLAVOR

    def can_preempt_while_borrowing(self) -> bool:
        return self.spec.borrow_within_cohort != 0 or (
            self.topo.fair_sharing and self.spec.reclaim_within_cohort != 0
        )

    # --- quota check of one flavor-resource ---------------------------------------------------

    def fits_resource_quota(self, fr: int, assumed: int, request: int) -> tuple[int, int, list[str], str]:
        """(preemption mode, borrowing level, reasons, no-fit reason) for `request`
        more on fr; the no-fit reason is "" unless the mode is NoFit."""
        tree, cq = self.tree, self.cq
        flavor, resource = self.topo.fr_pairs[fr]
        rname = self.topo.resource_names[resource]
        fname = self.topo.flavor_names[flavor]
        available = tree.available(cq, fr)
        max_capacity = tree.potential_available(cq, fr)
        val = amount.add(assumed, request)
        if val > max_capacity:
            return (
                PM_NO_FIT,
                0,
                [
                    f"insufficient quota for {rname} in flavor {fname}, previously considered podsets "
                    f"requests ({format_amount(rname, assumed)}) + current podset request "
                    f"({format_quantity(rname, request)}) > maximum capacity "
                    f"({format_amount(rname, max_capacity)})"
                ],
                EXCEEDS_MAX_QUOTA,
            )
        borrow, may_reclaim_in_hierarchy = tree.lowest_subtree_that_fits(cq, fr, val)
        if val <= available:
            return PM_FIT, borrow, [], ""
        reasons = [
            f"insufficient unused quota for {rname} in flavor {fname}, "
            f"{format_amount(rname, amount.sub(val, available))} more needed"
        ]
        if tree.nominal(cq, fr) >= val or may_reclaim_in_hierarchy or self.can_preempt_while_borrowing():
            possibility, borrow_after = self.oracle(fr, val)
            return possibility, borrow_after, reasons, WAITING_FOR_QUOTA if possibility == PM_NO_FIT else ""
        return PM_NO_FIT, borrow, reasons, WAITING_FOR_QUOTA

    # --- one resource group of one pod set -------------------------------------------------------

    def find_flavor(
        self,
        ps_index: int,
        requests: dict[int, int],
        resource: int,
        assumed: dict[int, int],
        attempts: FlavorAttempts,
    ) -> tuple[dict[int, FlavorAssignment] | None, list[str]]:
        """The flavor for the group of `resource`; None and reasons when none
        is usable. Every flavor tried is recorded in `attempts`."""
        g = self.spec.group_of(resource)
        if g < 0:
            attempts.status_reason = NO_MATCHING_FLAVOR
            return None, [f"resource {self.topo.resource_names[resource]} unavailable in ClusterQueue"]
        group = self.spec.groups[g]
        group_requests = [(r, requests[r]) for r in sorted(requests) if r in group.resources]
        ps_class = self.topo.flavor_classes[self.wl.pod_sets[ps_index].flavor_class]
        reasons: list[str] = []
        best: dict[int, FlavorAssignment] | None = None
        best_mode = (PM_NO_FIT, BORROW_UNLIMITED)
        attempted = -1
        start = self.last.next_flavor(ps_index, resource) if self.last is not None and self.fungibility else 0
        for idx in range(start, len(group.flavors)):
            attempted = idx
            flavor = group.flavors[idx]
            if self.nomination is not None and self.nomination[ps_index].get(resource) != flavor:
                reasons.append(
                    f"skipping flavor {self.topo.flavor_names[flavor]} as it is not found in the nomination "
                    f"mapping for resource {self.topo.resource_names[resource]}"
                )
                continue
            rejection = ps_class[flavor]
            if rejection is not None:
                reasons.append(rejection)
                attempts.add(g, True, NO_MATCHING_FLAVOR)
                continue
            assignments: dict[int, FlavorAssignment] = {}
            mode = (PM_FIT, 0)
            flavor_reason = ""
            for r, val in group_requests:
                fr = self.topo.fr_id(flavor, r)
                pm, borrow, rs, why = self.fits_resource_quota(fr, assumed.get(fr, 0), val)
                reasons.extend(rs)
                flavor_reason = most_severe(flavor_reason, why)
                if self.is_preferred(mode, (pm, borrow)):
                    mode = (pm, borrow)  # the representative mode is the worst one
                if mode[0] == PM_NO_FIT:
                    continue
                assignments[r] = FlavorAssignment(flavor, _PM_TO_MODE[pm], borrow)
            attempts.add(g, mode[0] == PM_NO_FIT, flavor_reason)
            if not self.fungibility:
                # FlavorFungibility off: the first flavor that fits wins; otherwise
                # the best preemption mode, the earliest flavor on ties.
                if mode[0] > best_mode[0]:
                    best, best_mode = assignments, mode
                    if mode[0] == PM_FIT:
                        return best, []
                continue
            if not self.should_try_next_flavor(mode):
                best, best_mode = assignments, mode
                break
            if self.is_preferred(mode, best_mode):
                best, best_mode = assignments, mode
        if not self.fungibility:
            # No scan record then: every tried index stays 0, Kueue's zero value.
            for fa in (best or {}).values():
                fa.tried_idx = 0
            return best, reasons
        tried = -1 if attempted == len(group.flavors) - 1 else attempted
        for fa in (best or {}).values():
            fa.tried_idx = tried
        if best_mode[0] == PM_FIT:
            return best, []
        return best, reasons

    # --- the whole workload ---------------------------------------------------------------------------

    def assign(self, counts: list[int] | None = None) -> Assignment:
        a = Assignment()
        pods_rid = self.topo.pods_rid
        covers_pods = pods_rid >= 0 and self.spec.group_of(pods_rid) >= 0
        visit_order = resource_visit_order(tuple(self.topo.resource_names))
        for i, ps in enumerate(self.wl.pod_sets):
            count = counts[i] if counts is not None else ps.count
            requests = {r: amount.saturating_mul(v, count) for r, v in ps.requests}
            if covers_pods:
                requests[pods_rid] = count
            psa = PodSetAssignment(ps.name, count, requests)
            group_flavors: dict[int, FlavorAssignment] | None = {}
            reasons: list[str] = []
            attempts = FlavorAttempts()
            for r in visit_order:
                if r not in requests or (self.spec.group_of(r) < 0 and requests[r] == 0):
                    continue  # zero request of an uncovered resource: ignored
                assert group_flavors is not None
                if r in group_flavors:
                    continue
                flavors, rs = self.find_flavor(i, requests, r, a.usage, attempts)
                if not flavors:
                    group_flavors = None
                    reasons = rs
                    break
                group_flavors.update(flavors)
                reasons.extend(rs)
            if group_flavors is not None:
                psa.flavors = {r: fa for r, fa in group_flavors.items() if r in requests}
            psa.reasons = reasons
            psa.attempts = attempts
            if psa.mode() == NO_FIT:
                psa.no_fit_reason = attempts.resolve()
            a.append(self.topo.fr_id, psa)
            if group_flavors is None:
                return a  # later pod sets are not assigned
        if (
            self.e.tas is not None
            and a.mode() != NO_FIT
            and any(ps.tas is not None for ps in self.wl.pod_sets)
        ):
            self.assign_topology(a)
        return a

    # --- Topology Aware Scheduling (kueue flavorassigner.go assignFlavors, its TAS part) -----------

    def assign_topology(self, a: Assignment) -> None:
        """Quota first, then the topology: with every pod set fitting quota,
        a pod set that cannot be placed needs preemption (Preempt, Kueue's
        reason added); whenever preemption is needed, a placement on the empty
        topology must exist, or the pod set does not fit at all (NoFit,
        TopologyPlacementFailed)."""
        tas, spec = self.e.tas, self.topo.tas
        assert tas is not None and spec is not None
        asks, errors = tas_asks(spec, self.wl, a)
        for i, error in errors:
            a.pod_sets[i].error = error  # psError
        if a.mode() == FIT:
            placed, failure = tas.find_for_workload(asks, False)
            if failure is not None:
                psa = a.pod_sets[failure.pod_set]
                psa.reasons.append(failure.text)
                psa.set_mode(PREEMPT)
            else:
                update_for_tas_result(spec, self.wl, a, placed)
        if a.mode() == PREEMPT:
            _, failure = tas.find_for_workload(asks, True)
            if failure is not None:
                psa = a.pod_sets[failure.pod_set]
                if psa.attempts is not None:
                    flavor = spec.flavors[failure.flavor].flavor
                    group = next(g for g, grp in enumerate(self.spec.groups) if flavor in grp.flavors)
                    psa.attempts.mark_topology_failed(group)
                psa.set_mode(NO_FIT)
                psa.no_fit_reason = psa.attempts.resolve() if psa.attempts is not None else ""
            else:
                for _, flavor_asks in asks:
                    for ask in flavor_asks:
                        a.pod_sets[ask.index].set_mode(PREEMPT)


def tas_asks(
    spec: TasSpec, wl: WorkloadSpec, a: Assignment
) -> tuple[list[tuple[int, list[TasPodSetAsk]]], list[tuple[int, str]]]:
    """kueue Assignment.WorkloadsTopologyRequests: per TAS flavor (index
    order, which is name order), the pod sets that ask for TAS, have quota, a
    count and no placement yet; and the pod sets given no single TAS flavor,
    with Kueue's error (onlyTASFlavor)."""
    by_flavor: dict[int, list[TasPodSetAsk]] = {}
    errors: list[tuple[int, str]] = []
    for i, psa in enumerate(a.pod_sets):
        ps = wl.pod_sets[i]
        if ps.tas is None or psa.error or psa.count == 0 or psa.topology is not None:
            continue
        flavors = sorted(
            {spec.flavor_of[fa.flavor] for fa in psa.flavors.values() if fa.flavor in spec.flavor_of}
        )
        if not flavors:
            errors.append((i, "no TAS flavor assigned"))
            continue
        if len(flavors) > 1:
            names = ", ".join(spec.flavors[f].name for f in flavors)
            errors.append((i, f"more than one TAS flavor assigned: {names}"))
            continue
        assert ps.tas_requests is not None
        by_flavor.setdefault(flavors[0], []).append(
            TasPodSetAsk(i, psa.count, ps.tas, ps.tas_requests, ps.flavor_class)
        )
    return sorted(by_flavor.items()), errors


def update_for_tas_result(
    spec: TasSpec, wl: WorkloadSpec, a: Assignment, placed: dict[int, tuple[int, list[tuple[int, int]]]]
) -> None:
    """kueue Assignment.UpdateForTASResult: the placements on their pod sets,
    and the assignment's TAS usage (ComputeTASNetUsage: nothing admitted before)."""
    for i, placement in placed.items():
        a.pod_sets[i].topology = placement
    a.tas_usage = []
    for i, psa in enumerate(a.pod_sets):
        if psa.topology is None:
            continue
        f, leaves = psa.topology
        flavor = spec.flavors[f]
        requests = wl.pod_sets[i].tas_requests
        assert requests is not None
        for leaf, pods in leaves:
            host = flavor.leaf_host[leaf] if flavor.hostname_lowest else -1
            a.tas_usage.append(((f, leaf, host, pods), requests))
