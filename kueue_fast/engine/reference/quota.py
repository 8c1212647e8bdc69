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

Every sum and difference is Kueue's Amount arithmetic (amount.py): INT64_MAX
is Unlimited and sticky, bounded results saturate. Comparisons are plain.

Kueue recurses over the tree (parent first for what a node may get, children
first for what it holds); here each walk is a loop over the path to the root
or over the nodes in depth-first order, in the same order and with the same
arithmetic: a Cohort chain 1,000 deep is within Kueue's limits, not within
Python's recursion limit.
"""

from __future__ import annotations

from ..inputs import NO_LIMIT, Topology
from .amount import add, sub

_HUGE = 1 << 61


def _huge(v: int) -> bool:
    return not -_HUGE <= v < _HUGE


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
        # Usage in the cycle's snapshot, and in Kueue's cache (what admitted
        # workloads hold); they differ only while a cycle runs.
        self.usage: list[dict[int, int]] = [{} for _ in range(n)]
        self.cache_usage: list[dict[int, int]] = [{} for _ in range(n)]
        self._touched: set[int] = set()
        for root in self.roots():
            self._accumulate_quota(root)
        self._potential: dict[tuple[int, int], int] = {}  # potential_available, computed once
        self._root = list(range(n))
        for root in self.roots():
            for node in self.preorder(root):
                self._root[node] = root
        # Has any quota or usage reached 2^61 in magnitude (the native
        # QuotaTree::may_saturate)? Until then no sum saturates: a removal
        # undone by an addition leaves every usage as it was.
        self._huge = any(
            _huge(v) or _huge(self.local_quota(node, fr))
            for node, sq in enumerate(self.subtree_quota)
            for fr, v in sq.items()
        )

    def may_saturate(self) -> bool:
        return self._huge

    # --- structure --------------------------------------------------------------

    def roots(self) -> list[int]:
        return [i for i, p in enumerate(self.parent) if p < 0]

    def root_of(self, node: int) -> int:
        return self._root[node]

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

    def preorder(self, node: int) -> list[int]:
        """The subtree's nodes, depth first: a node, then each child's subtree in order."""
        out: list[int] = []
        stack = [node]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(reversed(self.children[n]))
        return out

    def subtree_cqs(self, node: int) -> list[int]:
        """Active ClusterQueues of the subtree, in depth-first order."""
        return [n for n in self.preorder(node) if self.is_cq[n] and self.in_snapshot[n]]

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
        return max(0, sub(self.subtree_quota[node].get(fr, 0), ll))

    def _accumulate_quota(self, root: int) -> None:
        # Kueue updateCohortResourceNode / accumulateFromChild: a cohort's
        # subtree quota has an entry (possibly 0) for every fr of its children;
        # children before their parent.
        for node in reversed(self.preorder(root)):
            sq = {fr: q[0] for fr, q in self.quota[node].items()}
            for c in self.children[node]:
                for fr, v in self.subtree_quota[c].items():
                    sq[fr] = add(sq.get(fr, 0), sub(v, self.local_quota(c, fr)))
            self.subtree_quota[node] = sq

    # --- usage --------------------------------------------------------------------

    def local_available(self, node: int, fr: int, usage: list[dict[int, int]] | None = None) -> int:
        u = (self.usage if usage is None else usage)[node].get(fr, 0)
        return max(0, sub(self.local_quota(node, fr), u))

    def add_usage(self, node: int, fr: int, value: int, usage: list[dict[int, int]] | None = None) -> None:
        """Charge value to node; the part beyond its free local quota goes to the parent."""
        table = self.usage if usage is None else usage
        while node >= 0:
            local_avail = self.local_available(node, fr, table)
            u = table[node]
            u[fr] = add(u.get(fr, 0), value)
            self._huge = self._huge or _huge(u[fr])
            self._touched.add(node)
            if value <= local_avail:
                return
            node, value = self.parent[node], sub(value, local_avail)

    def remove_usage(self, node: int, fr: int, value: int, usage: list[dict[int, int]] | None = None) -> None:
        """Inverse of add_usage: release what the node stored in its parent first."""
        table = self.usage if usage is None else usage
        while node >= 0:
            u = table[node]
            stored_in_parent = sub(u.get(fr, 0), self.local_quota(node, fr))
            u[fr] = sub(u.get(fr, 0), value)
            self._huge = self._huge or _huge(u[fr])
            self._touched.add(node)
            if stored_in_parent <= 0:
                return
            node, value = self.parent[node], min(value, stored_in_parent)

    def add_usage_map(self, node: int, usage: dict[int, int], sign: int = 1) -> None:
        """A change that lives only in the cycle's snapshot (a simulation, a reservation)."""
        for fr, v in usage.items():
            if sign > 0:
                self.add_usage(node, fr, v)
            else:
                self.remove_usage(node, fr, v)

    def charge(self, cq: int, usage: dict[int, int], sign: int = 1) -> None:
        """A workload's usage joins (or leaves) a ClusterQueue for good: Kueue's
        cache and the cycle's snapshot both take it."""
        self.add_usage_map(cq, usage, sign)
        for fr, v in usage.items():
            if sign > 0:
                self.add_usage(cq, fr, v, self.cache_usage)
            else:
                self.remove_usage(cq, fr, v, self.cache_usage)

    def discard_snapshot(self) -> None:
        """The cycle is over: its snapshot is thrown away and the next one is
        taken from the cache. Without Unlimited amounts every change of the
        snapshot (simulated removals, the incoming usage of a fair-sharing
        search, reservations) was undone exactly already; Unlimited - x =
        Unlimited is not undone by adding x back, nor is a negative
        reservation (add_usage does not propagate it)."""
        for node in self._touched:
            if self.usage[node] != self.cache_usage[node]:
                self.usage[node] = dict(self.cache_usage[node])
        self._touched.clear()

    def available_raw(self, node: int, fr: int) -> int:
        """Kueue available(): may be negative when over-admitted. The root's
        is what its subtree does not use; each node below adds its free local
        quota to its parent's (at most its borrowing limit of it)."""
        path = [node, *self.ancestors(node)]
        root = path[-1]
        available = sub(self.subtree_quota[root].get(fr, 0), self.usage[root].get(fr, 0))
        for n in reversed(path[:-1]):
            bl = self.borrowing_limit(n, fr)
            if bl != NO_LIMIT:
                sq = self.subtree_quota[n].get(fr, 0)
                lq = self.local_quota(n, fr)
                stored_in_parent = sub(sq, lq)
                used_in_parent = max(0, sub(self.usage[n].get(fr, 0), lq))
                available = min(add(sub(stored_in_parent, used_in_parent), bl), available)
            available = add(self.local_available(n, fr), available)
        return available

    def available(self, cq: int, fr: int) -> int:
        """What a ClusterQueue can still admit on fr now (ClusterQueueSnapshot.Available, >= 0)."""
        return max(0, self.available_raw(cq, fr))

    def potential_available(self, node: int, fr: int) -> int:
        """The most the node could get if nothing else were used: the root's
        subtree quota, then down the path each node's local quota plus its
        parent's potential (at most its subtree quota plus its borrowing
        limit). It depends on quotas alone, which never change in a tree (a
        new configuration builds a new one): each node's is computed once."""
        known = self._potential.get((node, fr))
        if known is not None:
            return known
        path = [node]
        while self.parent[path[-1]] >= 0 and (self.parent[path[-1]], fr) not in self._potential:
            path.append(self.parent[path[-1]])
        top = path[-1]
        p = self.parent[top]
        if p < 0:
            avail = self.subtree_quota[top].get(fr, 0)
            self._potential[(top, fr)] = avail
            path.pop()
        else:
            avail = self._potential[(p, fr)]
        for n in reversed(path):
            avail = add(self.local_quota(n, fr), avail)
            bl = self.borrowing_limit(n, fr)
            if bl != NO_LIMIT:
                avail = min(add(self.subtree_quota[n].get(fr, 0), bl), avail)
            self._potential[(n, fr)] = avail
        return avail

    # --- borrowing ------------------------------------------------------------------

    def borrowing_with(self, node: int, fr: int, value: int) -> bool:
        """Would usage + value exceed the node's own quota (nominal for a
        ClusterQueue, subtree quota for a cohort)?"""
        limit = self.nominal(node, fr) if self.is_cq[node] else self.subtree_quota[node].get(fr, 0)
        return limit < add(self.usage[node].get(fr, 0), value)

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
            if add(self.usage[node].get(fr, 0), v) > self.subtree_quota[node].get(fr, 0):
                fits = False
            remaining[fr] = max(0, sub(v, self.local_available(node, fr)))
        return fits, remaining

    def height(self, cohort: int) -> int:
        """Distance to the furthest leaf (Kueue getNodeHeight): 1 over
        ClusterQueues alone, 0 for an empty cohort; child cohorts first."""
        heights: dict[int, int] = {}
        for c in reversed(self.preorder(cohort)):
            if self.is_cq[c]:
                continue
            h = min(len(self.child_cohorts(c)) + len(self.child_cqs(c)), 1)
            for child in self.child_cohorts(c):
                h = max(h, heights[child] + 1)
            heights[c] = h
        return heights[cohort]

    def lowest_subtree_that_fits(self, cq: int, fr: int, value: int) -> tuple[int, bool]:
        """Kueue FindHeightOfLowestSubtreeThatFits: the borrowing height of
        value on fr (0: no borrowing) and whether that subtree is smaller than
        the whole tree ("may reclaim in hierarchy")."""
        has_parent = self.parent[cq] >= 0
        if not (self.borrowing_with(cq, fr, value) and has_parent):
            return 0, has_parent
        remaining = sub(value, self.local_available(cq, fr))
        node = cq
        for node in self.ancestors(cq):
            if not self.borrowing_with(node, fr, remaining):
                return self.height(node), self.parent[node] >= 0
            remaining = sub(remaining, self.local_available(node, fr))
        return self.height(node), self.parent[node] >= 0
