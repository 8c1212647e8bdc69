"""Topology Aware Scheduling in plain Python: the reference twin of
csrc/src/tas.cpp.

Same algorithm as kueue pkg/cache/scheduler/tas_flavor_snapshot.go
(findTopologyAssignment and what it calls) over the dense topology the front
end compiles (kueue_fast/engine/tas.py ``TasSpec``): per flavor the domains of each
level, sorted by their level values (so that comparing two domains of a level
is comparing their ids), parents, contiguous children, and per leaf the free
capacity (allocatable minus the requests of the running non-TAS pods).

What the common slice of TAS needs and nothing else: one pod set at a time
(no pod-set groups, so no leader counts: every ``*WithLeader`` count of Kueue
equals the plain one), a single slice layer, BestFit and, for unconstrained
requests, LeastFreeCapacity (TASProfileMixed, beta, on), no balanced
placement, no preferred node affinity scores, no node replacement.

The usage the placement reads is the cycle's snapshot (``working``), taken
from the cache (``host_usage`` for flavors whose lowest level is the
hostname: Kueue adds the usage of every such flavor on a node to each of
them, TASHandleOverlappingFlavors; ``cache`` per leaf for the others), and
rebuilt from it when the cache changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tas import TasClassFlavor, TasFlavorSpec, TasPodSetRequest, TasSpec

INT32_MAX = (1 << 31) - 1

# TasPodSetRequest.level codes besides a level name id (kueue_fast/engine/tas.py)
LEVEL_NONE, LEVEL_HIGHEST, LEVEL_LOWEST = -1, -2, -3


@dataclass
class TasPodSetAsk:
    """One pod set's TAS request in one flavor (kueue TASPodSetRequests):
    ``index`` its position in the workload, ``count`` the pods to place,
    ``requests`` its per-pod requests by TAS resource id (pods excluded),
    ``klass`` its flavor class (which leaves it may use)."""

    index: int
    count: int
    request: TasPodSetRequest
    requests: list[int]
    klass: int


@dataclass
class TasFailure:
    """Why a pod set has no placement: ``kind`` one of the FAIL_* codes and
    its numbers; ``text`` Kueue's message (TASPodSetAssignmentResult.FailureReason)."""

    pod_set: int
    flavor: int  # TAS flavor index
    text: str


# TAS usage of a pod set: (TAS flavor, leaf or -1, hostname id or -1, pods)
TasUse = tuple[int, int, int, int]


def count_in(requests: list[int], capacity: list[int]) -> tuple[int, int]:
    """kueue resources CountInWithLimitingResource: how many times the
    requests fit (resources asked with 0 do not limit; capacity may be
    negative: 0 fits) and the limiting resource (the lowest id among the
    resources giving the minimum; -1 when nothing is requested)."""
    best = -1
    best_r = -1
    for r, want in enumerate(requests):
        if want < 0:  # not requested
            continue
        n = INT32_MAX if want == 0 else max(0, min(capacity[r] // want if capacity[r] >= 0 else 0, INT32_MAX))
        if best < 0 or n < best:
            best, best_r = n, r
    return (0, -1) if best < 0 else (best, best_r)


class TasState:
    """The TAS flavors' cache and cycle snapshot, and the placement algorithm."""

    def __init__(self, spec: TasSpec) -> None:
        self.spec = spec
        n_res = len(spec.resources)
        self.n_res = n_res
        self.pods_r = spec.resources.index("pods")
        self.host_usage: list[list[int]] = [[0] * n_res for _ in spec.hostnames]
        self.cache: list[list[list[int]]] = [
            [[0] * n_res for _ in range(f.n_leaves)] if not f.hostname_lowest else [] for f in spec.flavors
        ]
        self.working: list[list[list[int]]] = [[[0] * n_res for _ in range(f.n_leaves)] for f in spec.flavors]
        self.dirty = False

    # --- usage ---------------------------------------------------------------------------

    def _vector(self, requests: list[int], count: int) -> list[int]:
        """requests x count, plus ``pods: count`` (kueue updateTASUsage)."""
        out = [0 if r < 0 else r * count for r in requests]
        out[self.pods_r] += count
        return out

    def _add(self, row: list[int], vec: list[int], sign: int) -> None:
        for r, x in enumerate(vec):
            row[r] += sign * x

    def charge(self, uses: list[tuple[TasUse, list[int]]], sign: int) -> None:
        """A workload's TAS usage joins (or leaves) Kueue's cache, and its
        flavor's snapshot (clusterqueue_snapshot.go AddUsage)."""
        for (f, leaf, host, count), requests in uses:
            vec = self._vector(requests, count)
            if host >= 0:
                self._add(self.host_usage[host], vec, sign)
            elif leaf >= 0:
                self._add(self.cache[f][leaf], vec, sign)
            if leaf >= 0:
                self._add(self.working[f][leaf], vec, sign)
        if uses:
            self.dirty = True

    def add_snapshot(self, uses: list[tuple[TasUse, list[int]]], sign: int) -> None:
        """A change that lives only in the cycle's snapshot (a simulated
        removal, an admission of the cycle, a reservation)."""
        for (f, leaf, _host, count), requests in uses:
            if leaf >= 0:
                self._add(self.working[f][leaf], self._vector(requests, count), sign)

    def discard_snapshot(self) -> None:
        """The cycle is over: the next snapshot is taken from the cache."""
        self.dirty = True

    def take_snapshot(self) -> None:
        """kueue TASFlavorCache.snapshot: every leaf's usage from the cache
        (the aggregate over hostname flavors for the hostname ones)."""
        if not self.dirty:
            return
        for f, flavor in enumerate(self.spec.flavors):
            rows = self.working[f]
            for leaf in range(flavor.n_leaves):
                src = (
                    self.host_usage[flavor.leaf_host[leaf]] if flavor.hostname_lowest else self.cache[f][leaf]
                )
                rows[leaf][:] = src
        self.dirty = False

    # --- fits (kueue TASFlavorSnapshot.Fits) -----------------------------------------------

    def fits(self, uses: list[tuple[TasUse, list[int]]]) -> bool:
        """Every pod of the usage fits its leaf's remaining capacity; the
        per-pod requests without ``pods`` (Kueue compares them so)."""
        for (f, leaf, _host, count), requests in uses:
            if leaf < 0:
                return False
            rem = self._remaining(f, leaf, False)
            fit, _ = count_in(requests, rem)
            if fit < count:
                return False
        return True

    def _remaining(self, f: int, leaf: int, simulate_empty: bool) -> list[int]:
        free = self.spec.flavors[f].free[leaf]
        if simulate_empty:
            return list(free)
        used = self.working[f][leaf]
        return [a - b for a, b in zip(free, used, strict=True)]

    # --- placement --------------------------------------------------------------------------

    def capacity(
        self, f: int, requests: list[int], klass: int, slice_size: int, slice_idx: int, simulate_empty: bool
    ) -> tuple[list[int], list[int], dict[int, int]]:
        """Per domain of flavor ``f``: the pods (and slices) of these per-pod
        requests that fit now (or on empty nodes), and the leaves where not one
        fits by limiting resource id: phase 1 of the placement, for
        explanations."""
        with_pod = list(requests)
        with_pod[self.pods_r] = 1
        cls = self.spec.classes[klass][f]
        n_levels = len(self.spec.flavors[f].levels)
        return self._fill_in_counts(f, with_pod, cls, simulate_empty, {}, {}, slice_size, slice_idx, n_levels)

    def find_for_workload(
        self, asks: list[tuple[int, list[TasPodSetAsk]]], simulate_empty: bool
    ) -> tuple[dict[int, tuple[int, list[tuple[int, int]]]], TasFailure | None]:
        """kueue ClusterQueueSnapshot.FindTopologyAssignmentsForWorkload: the
        flavors by name (TAS flavor index order), their pod sets in order, each
        placed with the usage the earlier ones assumed (shared by hostname
        among hostname flavors, TASHandleOverlappingFlavors; per flavor
        otherwise). Returns per pod set index (TAS flavor, [(leaf, pods)]) and
        the first failure (flavor order, then pod set order; Kueue takes any)."""
        result: dict[int, tuple[int, list[tuple[int, int]]]] = {}
        failure: TasFailure | None = None
        host_assumed: dict[int, list[int]] = {}
        for f, flavor_asks in asks:
            flavor = self.spec.flavors[f]
            leaf_assumed: dict[int, list[int]] = {}
            for ask in flavor_asks:
                placed, text = self.find_for_pod_set(f, ask, simulate_empty, host_assumed, leaf_assumed)
                if text is not None:
                    if failure is None:
                        failure = TasFailure(ask.index, f, text)
                    break  # FindTopologyAssignmentsForFlavor returns at its first failure
                result[ask.index] = (f, placed)
                for leaf, pods in placed:  # addAssumedUsage
                    vec = self._vector(ask.requests, pods)
                    if flavor.hostname_lowest:
                        self._add(host_assumed.setdefault(flavor.leaf_host[leaf], [0] * self.n_res), vec, 1)
                    else:
                        self._add(leaf_assumed.setdefault(leaf, [0] * self.n_res), vec, 1)
        return result, failure

    def find_for_pod_set(
        self,
        f: int,
        ask: TasPodSetAsk,
        simulate_empty: bool,
        host_assumed: dict[int, list[int]],
        leaf_assumed: dict[int, list[int]],
    ) -> tuple[list[tuple[int, int]], str | None]:
        """kueue TASFlavorSnapshot.findTopologyAssignment for one pod set (no
        leader): (leaf, pods) by leaf id, or Kueue's failure reason."""
        flavor = self.spec.flavors[f]
        req = ask.request
        n_levels = len(flavor.levels)
        # levelKeyWithImpliedFallback / sliceLevelKeyWithDefault, resolved to indices
        level_idx = self.level_index(flavor, req.level)
        slice_idx = self.level_index(flavor, req.slice_level)
        if level_idx < 0 or slice_idx < 0:
            # HasLevel is checked when the flavor is chosen (flavor classes): not reachable
            return [], "topology level not specified"
        if level_idx > slice_idx:
            names = self.spec.level_names
            return [], (
                f"podset slice topology {names[flavor.levels[slice_idx]]} is above the podset "
                f"topology {names[flavor.levels[level_idx]]}"
            )
        unconstrained = req.unconstrained
        slice_size = req.slice_size
        count = ask.count
        cls = self.spec.classes[ask.klass][f]
        requests = list(ask.requests)
        requests[self.pods_r] = 1  # + OnePodRequest
        # phase 1: fillInCounts
        pods, slices, res_excluded = self._fill_in_counts(
            f, requests, cls, simulate_empty, host_assumed, leaf_assumed, slice_size, slice_idx, n_levels
        )
        # phase 2a: findLevelWithFitDomains
        fit = self._find_level_with_fit_domains(
            flavor, level_idx, count, slice_size, req.required, unconstrained, pods, slices, cls, res_excluded
        )
        if isinstance(fit, str):
            return [], fit
        fit_level, domains = fit
        # phase 2b: down level by level, keeping the fewest domains
        domains = self._update_counts_to_minimum(
            domains, count, slice_size, unconstrained, True, pods, slices
        )
        level = fit_level
        while level < min(n_levels - 1, slice_idx):  # above the slice level: slices, greedily
            lower = [c for d in domains for c in range(flavor.child_lo[d], flavor.child_hi[d])]
            lower = self._sorted(lower, unconstrained, pods, slices)
            domains = self._update_counts_to_minimum(
                lower, count, slice_size, unconstrained, True, pods, slices
            )
            level += 1
        while level < n_levels - 1:  # at and below the slice level: each domain's pods to its children
            lower_all: list[int] = []
            for d in domains:
                children = self._sorted(
                    list(range(flavor.child_lo[d], flavor.child_hi[d])), unconstrained, pods, slices
                )
                lower_all += self._update_counts_to_minimum(
                    children, pods[d], 1, unconstrained, False, pods, slices
                )
            domains = lower_all
            level += 1
        # buildAssignment: leaves by level values (their ids), the empty ones left out
        first_leaf = flavor.level_start[n_levels - 1]
        return [(d - first_leaf, pods[d]) for d in sorted(domains) if pods[d] != 0], None

    @staticmethod
    def level_index(flavor: TasFlavorSpec, level: int) -> int:
        if level == LEVEL_HIGHEST:
            return 0
        if level == LEVEL_LOWEST:
            return len(flavor.levels) - 1
        if level == LEVEL_NONE:
            return -1
        return flavor.levels.index(level) if level in flavor.levels else -1

    def _fill_in_counts(
        self,
        f: int,
        requests: list[int],
        cls: TasClassFlavor,
        simulate_empty: bool,
        host_assumed: dict[int, list[int]],
        leaf_assumed: dict[int, list[int]],
        slice_size: int,
        slice_idx: int,
        n_levels: int,
    ) -> tuple[list[int], list[int], dict[int, int]]:
        """kueue fillInCounts / fillLeafCounts / fillInCountsHelper: per leaf
        the pods that fit its remaining capacity (minus what earlier pod sets
        of the workload assumed), rolled up; slices counted at the slice level
        and summed above it. Leaves the pod set may not use stay at 0. Also
        the resource exclusions (leaves where not one pod fits, by limiting
        resource)."""
        flavor = self.spec.flavors[f]
        n = flavor.level_start[n_levels]
        pods = [0] * n
        slices = [0] * n
        excluded: dict[int, int] = {}
        first_leaf = flavor.level_start[n_levels - 1]
        eligible = cls.eligible
        for leaf in range(flavor.n_leaves):
            if eligible is not None and not eligible[leaf]:
                continue
            rem = self._remaining(f, leaf, simulate_empty)
            assumed = (
                host_assumed.get(flavor.leaf_host[leaf]) if flavor.hostname_lowest else leaf_assumed.get(leaf)
            )
            if assumed is not None:
                rem = [a - b for a, b in zip(rem, assumed, strict=True)]
            fit, limiting = count_in(requests, rem)
            pods[first_leaf + leaf] = fit
            if fit == 0 and limiting >= 0:
                excluded[limiting] = excluded.get(limiting, 0) + 1
        # roll up, lowest level first (children of level l are in level l + 1)
        if n_levels - 1 == slice_idx:
            for d in range(first_leaf, n):
                slices[d] = pods[d] // slice_size
        for level in range(n_levels - 2, -1, -1):
            for d in range(flavor.level_start[level], flavor.level_start[level + 1]):
                lo, hi = flavor.child_lo[d], flavor.child_hi[d]
                pods[d] = sum(pods[lo:hi])
                slices[d] = pods[d] // slice_size if level == slice_idx else sum(slices[lo:hi])
        return pods, slices, excluded

    @staticmethod
    def _sorted(domains: list[int], unconstrained: bool, pods: list[int], slices: list[int]) -> list[int]:
        """kueue sortedDomains (and sortedDomainsWithLeader, the same without
        leaders): BestFit by slices descending, LeastFreeCapacity (an
        unconstrained request) ascending; then pods ascending, then level values."""
        if unconstrained:
            return sorted(domains, key=lambda d: (slices[d], pods[d], d))
        return sorted(domains, key=lambda d: (-slices[d], pods[d], d))

    @staticmethod
    def _best_fit(domains: list[int], needed: int, counts: list[int]) -> int:
        """kueue findBestFitDomainBy: the first domain with the smallest count
        still >= needed; the first one when none is."""
        best, best_count = domains[0], INT32_MAX
        for d in domains:
            if needed <= counts[d] < best_count:
                best, best_count = d, counts[d]
        return best

    def _find_level_with_fit_domains(
        self,
        flavor: TasFlavorSpec,
        level: int,
        count: int,
        slice_size: int,
        required: bool,
        unconstrained: bool,
        pods: list[int],
        slices: list[int],
        cls: TasClassFlavor,
        res_excluded: dict[int, int],
    ) -> tuple[int, list[int]] | str:
        """kueue findLevelWithFitDomains: the domains at ``level`` (or, for a
        preferred request, the closest level above) that take all the slices,
        or Kueue's reason why none does."""
        lo, hi = flavor.level_start[level], flavor.level_start[level + 1]
        if lo == hi:
            return f"no topology domains at level: {self.spec.level_names[flavor.levels[level]]}"
        ordered = self._sorted(list(range(lo, hi)), unconstrained, pods, slices)
        top = ordered[0]
        slice_count = count // slice_size

        def not_fit(fit_count: int) -> str:
            return self._not_fit_message(flavor, fit_count, slice_count, slice_size, cls, res_excluded)

        if not unconstrained and slices[top] >= slice_count:
            top = self._best_fit(ordered, slice_count, slices)  # optimize the potentially last domain
        if unconstrained:  # LeastFreeCapacity: the first, least free, that takes them all
            for d in ordered:
                if slices[d] >= slice_count:
                    return level, [d]
            if required:
                return not_fit(pods[ordered[-1]])
        if slices[top] < slice_count:
            if required:
                return not_fit(slices[top])
            if level > 0 and not unconstrained:
                return self._find_level_with_fit_domains(
                    flavor,
                    level - 1,
                    count,
                    slice_size,
                    required,
                    unconstrained,
                    pods,
                    slices,
                    cls,
                    res_excluded,
                )
            # greedily, at the top
            results: list[int] = []
            remaining = slice_count
            ordered = self._sorted(ordered, unconstrained, pods, slices)
            for i, d in enumerate(ordered):
                if remaining <= 0:
                    break
                if not unconstrained and slices[d] >= remaining:
                    d = self._best_fit(ordered[i:], remaining, slices)  # optimize the last domain
                results.append(d)
                remaining -= slices[d]
            if remaining > 0:
                return not_fit(slice_count - remaining)
            return level, results
        return level, [top]

    def _update_counts_to_minimum(
        self,
        domains: list[int],
        count: int,
        slice_size: int,
        unconstrained: bool,
        by_slices: bool,
        pods: list[int],
        slices: list[int],
    ) -> list[int]:
        """kueue updateCountsToMinimumGeneric (no leader): take the domains in
        order until ``count`` pods (``count // slice_size`` slices) are placed,
        the last one the best fit (BestFit); set what each takes. Kueue logs
        an error and places nothing when they do not add up (not reached)."""
        result: list[int] = []
        remaining = count // slice_size if by_slices else count
        counts = slices if by_slices else pods
        for i, d in enumerate(domains):
            if not unconstrained and counts[d] >= remaining:
                d = self._best_fit(domains[i:], remaining, counts)  # optimize the last domain
            if counts[d] >= remaining:
                if by_slices:
                    pods[d] = remaining * slice_size
                    slices[d] = remaining
                else:
                    pods[d] = remaining
                result.append(d)
                return result
            if by_slices:
                pods[d] = slices[d] * slice_size
            remaining -= counts[d]
            result.append(d)
        return []

    def _not_fit_message(
        self,
        flavor: TasFlavorSpec,
        fit: int,
        total: int,
        slice_size: int,
        cls: TasClassFlavor,
        res_excluded: dict[int, int],
    ) -> str:
        """kueue notFitMessage, with the exclusion stats (formatReasons)."""
        unit = "pod" if slice_size == 1 else "slice"
        if fit == 0:
            out = f'topology "{flavor.topology}" doesn\'t allow to fit any of {total} {unit}(s)'
        else:
            out = f'topology "{flavor.topology}" allows to fit only {fit} out of {total} {unit}(s)'
        reasons = list(cls.static_reasons)
        for r, n in res_excluded.items():
            reasons.append(f'resource "{self.spec.resources[r]}": {n}')
        if reasons:
            reasons.sort()
            out += f". Total nodes: {cls.total_nodes}; excluded: {', '.join(reasons)}"
        return out
