"""The quota tree: ClusterQueues and cohorts with quota and usage per flavor-resource.

Same arithmetic as kueue pkg/cache/scheduler/resource_node.go. Every node has,
per flavor-resource (fr):

* ``quota``: nominal, borrowing limit, lending limit (only the fr's the node
  declares; a missing entry reads as nominal 0 and no limits);
* ``subtree_quota``: a ClusterQueue's nominal; for a cohort its own nominal
  plus what each child lends it (child subtree quota minus child local quota);
* ``local_quota`` (Kueue: guaranteed quota): the part the node never lends,
  ``max(0, subtree_quota - lending_limit)`` when a lending limit is set;
* ``usage``: a ClusterQueue's admitted usage; for a cohort, the sum of what
  its children use beyond their local quota.

Usage may exceed quota (over-admission after a quota cut); ``available`` can
then be negative and is clipped at 0 only for ClusterQueues, as in Kueue.
"""

from __future__ import annotations

from ..compiler import NO_LIMIT, Topology


class QuotaTree:
    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        n = topo.n_nodes
        self.parent = list(topo.node_parent)
        self.is_cq = [i < topo.n_cq for i in range(n)]
        # Inactive ClusterQueues are not nodes of Kueue's scheduling snapshot:
        # they are never traversed, but their quota and usage still count in
        # their cohort's totals (kueue pkg/cache/scheduler/snapshot.go).
        self.in_snapshot = [not self.is_cq[i] or topo.cluster_queues[i].active for i in range(n)]
        self.quota = [dict(q) for q in topo.quotas]
        self.children: list[list[int]] = [[] for _ in range(n)]
        for node, p in enumerate(self.parent):
            if p >= 0:
                self.children[p].append(node)
        self.subtree_quota: list[dict[int, int]] = [{} for _ in range(n)]
        self.usage: list[dict[int, int]] = [{} for _ in range(n)]
        for root in self.roots():
            self._accumulate_quota(root)

    # --- structure --------------------------------------------------------------

    def roots(self) -> list[int]:
        return [i for i, p in enumerate(self.parent) if p < 0]

    def root_of(self, node: int) -> int:
        while self.parent[node] >= 0:
            node = self.parent[node]
        return node

    def ancestors(self, node: int) -> list[int]:
        """Parent first, root last (Kueue PathParentToRoot)."""
        out = []
        p = self.parent[node]
        while p >= 0:
            out.append(p)
            p = self.parent[p]
        return out

    def child_cohorts(self, node: int) -> list[int]:
        return [c for c in self.children[node] if not self.is_cq[c]]

    def child_cqs(self, node: int) -> list[int]:
        return [c for c in self.children[node] if self.is_cq[c] and self.in_snapshot[c]]

    def subtree_cqs(self, node: int) -> list[int]:
        """Active ClusterQueues of the subtree, children before grandchildren order."""
        if self.is_cq[node]:
            return [node] if self.in_snapshot[node] else []
        out: list[int] = []
        for c in self.children[node]:
            out.extend(self.subtree_cqs(c))
        return out

    # --- quota --------------------------------------------------------------------

    def nominal(self, node: int, fr: int) -> int:
        q = self.quota[node].get(fr)
        return q[0] if q else 0

    def borrowing_limit(self, node: int, fr: int) -> int:
        q = self.quota[node].get(fr)
        return q[1] if q else NO_LIMIT

    def lending_limit(self, node: int, fr: int) -> int:
        q = self.quota[node].get(fr)
        return q[2] if q else NO_LIMIT

    def local_quota(self, node: int, fr: int) -> int:
        """Quota only this subtree can use; never lent to the parent (>= 0)."""
        ll = self.lending_limit(node, fr)
        if ll == NO_LIMIT:
            return 0
        return max(0, self.subtree_quota[node].get(fr, 0) - ll)

    def _accumulate_quota(self, node: int) -> None:
        # Kueue updateCohortResourceNode / accumulateFromChild: a cohort's
        # subtree quota has an entry (possibly 0) for every fr of its children.
        sq = {fr: q[0] for fr, q in self.quota[node].items()}
        for c in self.children[node]:
            self._accumulate_quota(c)
            for fr, v in self.subtree_quota[c].items():
                sq[fr] = sq.get(fr, 0) + v - self.local_quota(c, fr)
        self.subtree_quota[node] = sq

    # --- usage --------------------------------------------------------------------

    def local_available(self, node: int, fr: int) -> int:
        return max(0, self.local_quota(node, fr) - self.usage[node].get(fr, 0))

    def add_usage(self, node: int, fr: int, value: int) -> None:
        """Charge value to node; the part beyond its free local quota goes to the parent."""
        local_avail = self.local_available(node, fr)
        u = self.usage[node]
        u[fr] = u.get(fr, 0) + value
        p = self.parent[node]
        if p >= 0 and value > local_avail:
            self.add_usage(p, fr, value - local_avail)

    def remove_usage(self, node: int, fr: int, value: int) -> None:
        """Inverse of add_usage: release what the node stored in its parent first."""
        u = self.usage[node]
        stored_in_parent = u.get(fr, 0) - self.local_quota(node, fr)
        u[fr] = u.get(fr, 0) - value
        p = self.parent[node]
        if stored_in_parent <= 0 or p < 0:
            return
        self.remove_usage(p, fr, min(value, stored_in_parent))

    def rederive_ancestors(self, node: int, frs: list[int]) -> None:
        """Recompute the ancestors' usage of frs from their children's.

        Kueue may reserve a negative amount for a preemptor within one cycle
        (quotaResourcesToReserve when the ClusterQueue is over its limit), and
        add_usage does not propagate negative values; Kueue then throws the
        snapshot away. Undoing such a reservation therefore re-derives the
        cohorts rather than inverting add_usage step by step.
        """
        for p in self.ancestors(node):
            u = self.usage[p]
            for fr in frs:
                u[fr] = sum(
                    max(0, self.usage[c].get(fr, 0) - self.local_quota(c, fr)) for c in self.children[p]
                )

    def add_usage_map(self, node: int, usage: dict[int, int], sign: int = 1) -> None:
        for fr, v in usage.items():
            if sign > 0:
                self.add_usage(node, fr, v)
            else:
                self.remove_usage(node, fr, v)

    def available_raw(self, node: int, fr: int) -> int:
        """Kueue available(): may be negative when over-admitted."""
        sq = self.subtree_quota[node].get(fr, 0)
        u = self.usage[node].get(fr, 0)
        p = self.parent[node]
        if p < 0:
            return sq - u
        parent_available = self.available_raw(p, fr)
        bl = self.borrowing_limit(node, fr)
        if bl != NO_LIMIT:
            lq = self.local_quota(node, fr)
            stored_in_parent = sq - lq
            used_in_parent = max(0, u - lq)
            parent_available = min(stored_in_parent - used_in_parent + bl, parent_available)
        return self.local_available(node, fr) + parent_available

    def available(self, cq: int, fr: int) -> int:
        """What a ClusterQueue can still admit on fr now (ClusterQueueSnapshot.Available, >= 0)."""
        return max(0, self.available_raw(cq, fr))

    def potential_available(self, node: int, fr: int) -> int:
        """The most the node could get if nothing else were used."""
        p = self.parent[node]
        if p < 0:
            return self.subtree_quota[node].get(fr, 0)
        avail = self.local_quota(node, fr) + self.potential_available(p, fr)
        bl = self.borrowing_limit(node, fr)
        if bl != NO_LIMIT:
            avail = min(self.subtree_quota[node].get(fr, 0) + bl, avail)
        return avail

    # --- borrowing ------------------------------------------------------------------

    def borrowing_with(self, node: int, fr: int, value: int) -> bool:
        """Would usage + value exceed the node's own quota (nominal for a
        ClusterQueue, subtree quota for a cohort)?"""
        limit = self.nominal(node, fr) if self.is_cq[node] else self.subtree_quota[node].get(fr, 0)
        return limit < self.usage[node].get(fr, 0) + value

    def within_nominal(self, node: int, frs: set[int] | list[int]) -> bool:
        """Kueue IsWithinNominalInResources: usage <= subtree quota on every fr."""
        u = self.usage[node]
        sq = self.subtree_quota[node]
        return all(u.get(fr, 0) <= sq.get(fr, 0) for fr in frs)

    def quantities_fit_in_quota(self, node: int, requests: dict[int, int]) -> tuple[bool, dict[int, int]]:
        """Kueue QuantitiesFitInQuota: whether requests fit the node's subtree
        quota, and what exceeds the node's free local quota."""
        fits = True
        remaining: dict[int, int] = {}
        for fr, v in requests.items():
            if self.usage[node].get(fr, 0) + v > self.subtree_quota[node].get(fr, 0):
                fits = False
            remaining[fr] = max(0, v - self.local_available(node, fr))
        return fits, remaining

    def height(self, cohort: int) -> int:
        """Distance to the furthest leaf (Kueue getNodeHeight)."""
        h = min(len(self.child_cohorts(cohort)) + len(self.child_cqs(cohort)), 1)
        for c in self.child_cohorts(cohort):
            h = max(h, self.height(c) + 1)
        return h

    def lowest_subtree_that_fits(self, cq: int, fr: int, value: int) -> tuple[int, bool]:
        """Kueue FindHeightOfLowestSubtreeThatFits: the borrowing height of
        value on fr (0: no borrowing) and whether that subtree is smaller than
        the whole tree ("may reclaim in hierarchy")."""
        has_parent = self.parent[cq] >= 0
        if not (self.borrowing_with(cq, fr, value) and has_parent):
            return 0, has_parent
        remaining = value - self.local_available(cq, fr)
        node = cq
        for node in self.ancestors(cq):
            if not self.borrowing_with(node, fr, remaining):
                return self.height(node), self.parent[node] >= 0
            remaining -= self.local_available(node, fr)
        return self.height(node), self.parent[node] >= 0
