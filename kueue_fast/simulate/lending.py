"""The quota tree behind a simulation's numbers: capacity, what each
ClusterQueue can reach, and who lends what a ClusterQueue borrows.

**Capacity** of a flavor-resource is the nominal quota of the whole tree:
every ClusterQueue's and every Cohort's own (a Cohort's
``spec.resourceGroups``, Kueue's cohort-owned quota). It is what
"% of total nominal" divides by. An inactive ClusterQueue's quota counts:
Kueue keeps it in its cohort's totals.

A ClusterQueue's utilization is over its own capacity (``capacity.py``: its
nominal quota plus an equal share of the cohort-owned quota it can reach,
the same capacity the offered load is measured against), so an
unconstrained ClusterQueue's utilization is its offered load. A
ClusterQueue with no capacity at all (no nominal quota, no cohort-owned
quota above it: it can only borrow its siblings' unused quota) is measured
against its **reach**: the most it could hold with nothing else running,
its cohorts' lendable quota within its borrowing limit (Kueue's
``potentialAvailable``).

**Lending** (``attribute``): per flavor-resource, a ClusterQueue borrows
what it uses beyond its nominal quota. Borrowing is covered nearest first:
in the borrower's own cohort, by what the cohort's members leave unused of
their nominal quota (within their lending limits) and by the cohort's own
quota; what that cannot cover goes up to the parent cohort, whose own quota
and whose other members' unused quota cover it, and so on to the root.
Where several lenders meet one cohort's borrowing, each lends in proportion
to what it has to lend there (pro rata). "Lent by X" is what X's own
nominal quota covers of others' usage; a cohort's "borrowed" is what its
subtree takes from its parent. What the root cannot cover is usage above
the tree's quota (``over``: Kueue reserves it only while preempted
workloads are still stopping). So, per flavor-resource and instant:
sum of ClusterQueues' borrowed = sum of everyone's lent + over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..api.model import ClusterState
from ..engine.inputs import NO_LIMIT, Topology, compile_topology

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

__all__ = ["Attribution", "LendingTree", "lending_tree"]


@dataclass
class Attribution:
    """``attribute``'s result, each (nodes, ..., flavor-resources) but ``over``."""

    borrowed: F64  # ClusterQueue: use above its nominal quota; cohort: what its subtree takes from its parent
    lent: F64  # of the node's own nominal quota, what others use
    over: F64  # (..., flavor-resources): use above the quota of the whole tree


@dataclass
class LendingTree:
    """The nodes of a topology's quota tree (ClusterQueues first, in
    topology order, then cohorts) with their quotas per flavor-resource."""

    names: list[str]
    n_cq: int
    parent: list[int]  # -1: a root
    nominal: I64  # (nodes, flavor-resources): the node's own nominal quota
    lending_limit: I64  # (nodes, flavor-resources); NO_LIMIT when none
    reach: I64  # (ClusterQueues, flavor-resources): potentialAvailable
    cq_capacity: I64  # (ClusterQueues, flavor-resources): capacity.capacity(), nominal + cohort share

    @property
    def capacity(self) -> I64:
        """Per flavor-resource, the nominal quota of the whole tree."""
        out: I64 = self.nominal.sum(axis=0)
        return out

    @property
    def cohorts(self) -> list[str]:
        return self.names[self.n_cq :]

    def root_of(self, node: int) -> int:
        while self.parent[node] >= 0:
            node = self.parent[node]
        return node

    def cluster_queue_roots(self) -> I64:
        """The root node of each ClusterQueue (itself without a cohort)."""
        return np.array([self.root_of(c) for c in range(self.n_cq)], dtype=np.int64)

    def utilization_basis(self) -> tuple[I64, list[bool]]:
        """Per ClusterQueue and flavor-resource what its utilization divides
        by: its capacity, or, for a ClusterQueue without any, its reach; and
        per ClusterQueue whether it is its reach."""
        own = self.cq_capacity
        by_reach = [not bool((own[c] > 0).any()) for c in range(self.n_cq)]
        basis = np.where(np.array(by_reach)[:, None], self.reach, own)
        return basis, by_reach

    def _post_order(self) -> list[int]:
        """The cohorts, every one after the cohorts below it."""
        depth = []
        for k in range(self.n_cq, len(self.names)):
            d, node = 0, k
            while self.parent[node] >= 0:
                d, node = d + 1, self.parent[node]
            depth.append((-d, k))
        return [k for _, k in sorted(depth)]

    def attribute(self, usage: F64) -> Attribution:
        """Borrowed and lent per node for ``usage`` (ClusterQueues, ...,
        flavor-resources): the rule of the module docstring, element-wise."""
        shape = usage.shape[1:]
        nominal = self.nominal.astype(np.float64)
        limit = np.where(self.lending_limit == NO_LIMIT, np.inf, self.lending_limit.astype(np.float64))
        n = len(self.names)
        borrowed = np.zeros((n, *shape))
        lent = np.zeros((n, *shape))
        over = np.zeros(shape)
        # per node: its subtree's borrowing not covered yet, and the lenders below with what they still lend
        demand: dict[int, F64] = {}
        supply: dict[int, list[tuple[int, F64]]] = {}
        for c in range(self.n_cq):
            # a node's (flavor-resources,) row broadcasts over the trailing axis of ``shape``
            u = usage[c]
            demand[c] = np.clip(u - nominal[c], 0, None)
            supply[c] = [(c, np.minimum(np.clip(nominal[c] - u, 0, None), limit[c]))]
        children: list[list[int]] = [[] for _ in range(n)]
        for node, p in enumerate(self.parent):
            if p >= 0:
                children[p].append(node)
        for k in self._post_order():
            need = sum((demand[ch] for ch in children[k]), np.zeros(shape))
            lenders = [(k, np.broadcast_to(nominal[k], shape).astype(np.float64))]
            for ch in children[k]:
                lenders += supply[ch]
            have = sum((a for _, a in lenders), np.zeros(shape))
            covered = np.minimum(need, have)
            frac = np.divide(covered, have, out=np.zeros(shape), where=have > 0)
            left = have - covered
            scale = np.divide(np.minimum(left, limit[k]), left, out=np.zeros(shape), where=left > 0)
            supply[k] = []
            for x, a in lenders:
                lent[x] += a * frac
                supply[k].append((x, a * (1 - frac) * scale))
            demand[k] = need - covered
        for node in range(n):
            borrowed[node] = demand.get(node, 0.0)
            if self.parent[node] < 0:
                over += demand.get(node, 0.0)
        # bin means of usage sum with rounding errors: what is below a billionth of the capacity is 0
        tol = 1e-9 * np.maximum(1.0, self.capacity.astype(np.float64))
        for a in (borrowed, lent, over):
            a[np.abs(a) < tol] = 0.0
        return Attribution(borrowed, lent, over)


def lending_tree(
    state: ClusterState,
    cq_capacity: Mapping[str, Mapping[tuple[str, str], float]],
    topo: Topology | None = None,
) -> LendingTree:
    """The quota tree of ``state`` (``topo``: its compiled topology, when
    the caller has it; its flavor-resources index the arrays)."""
    from ..engine.reference.quota import QuotaTree as ReferenceTree

    if topo is None:
        topo = compile_topology(state)
    n, n_fr = topo.n_nodes, len(topo.fr_pairs)
    nominal = np.zeros((n, n_fr), dtype=np.int64)
    lending = np.full((n, n_fr), NO_LIMIT, dtype=np.int64)
    for node, table in enumerate(topo.quotas):
        for fr, (nom, _, ll) in table.items():
            nominal[node, fr] = nom
            lending[node, fr] = ll
    ref = ReferenceTree(topo)
    reach = np.array(
        [[ref.potential_available(c, fr) for fr in range(n_fr)] for c in range(topo.n_cq)], dtype=np.int64
    ).reshape(topo.n_cq, n_fr)
    own = np.zeros((topo.n_cq, n_fr), dtype=np.int64)
    fr_index = {(topo.flavor_names[f], topo.resource_names[r]): k for k, (f, r) in enumerate(topo.fr_pairs)}
    for c in range(topo.n_cq):
        for pair, amount in cq_capacity.get(topo.node_names[c], {}).items():
            own[c, fr_index[pair]] = round(amount)
    return LendingTree(list(topo.node_names), topo.n_cq, list(topo.node_parent), nominal, lending, reach, own)
