"""Dominant resource share (DRS) of ClusterQueues and cohorts.

Same rules as kueue pkg/cache/scheduler/fair_sharing.go: a node borrows on a
flavor-resource when usage exceeds its subtree quota; what it borrows, summed
per resource name across flavors, is compared with what its parent could lend
(the parent's potential available quota summed over every flavor-resource of
the root). The largest ratio (x1000) is the dominant share, divided by the
node's weight for comparisons. Roots have DRS 0. Sums and differences are
Kueue's Amount arithmetic (amount.py); the ratio is taken on the int64 values
(an Unlimited amount counts as INT64_MAX).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .amount import add, sub
from .quota import QuotaTree


@dataclass
class DRS:
    fair_weight: float = 1.0
    unweighted_ratio: float = 0.0
    dominant_resource: str = ""
    borrowing: bool = False
    borrowed_frs: list[int] = field(default_factory=list)

    def is_zero(self) -> bool:
        return self.unweighted_ratio == 0

    def zero_weight_borrows(self) -> bool:
        return self.fair_weight == 0 and self.borrowing

    def weighted_share(self) -> float:
        if self.zero_weight_borrows():
            return math.inf
        if self.is_zero():
            return 0.0
        return self.unweighted_ratio / self.fair_weight

    def is_borrowing_on(self, requested: dict[int, int]) -> bool:
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed_frs)


NEGATIVE_DRS = DRS(unweighted_ratio=-1.0)


def compare_drs(a: DRS, b: DRS) -> int:
    """Kueue CompareDRS: <0 when a is the smaller (fairer to schedule) share."""
    if a.zero_weight_borrows() and b.zero_weight_borrows():
        return _cmp(a.unweighted_ratio, b.unweighted_ratio)
    if a.zero_weight_borrows():
        return 1
    if b.zero_weight_borrows():
        return -1
    return _cmp(a.weighted_share(), b.weighted_share())


def _cmp(x: float, y: float) -> int:
    return (x > y) - (x < y)


def lendable(tree: QuotaTree, node: int, resource_of_fr: list[int]) -> dict[int, int]:
    """Per resource id: what node could lend, over every fr of the root's subtree quota."""
    root = tree.root_of(node)
    out: dict[int, int] = {}
    for fr in tree.subtree_quota[root]:
        r = resource_of_fr[fr]
        out[r] = add(out.get(r, 0), tree.potential_available(node, fr))
    return out


def dominant_resource_share(
    tree: QuotaTree,
    node: int,
    weight: float,
    resource_of_fr: list[int],
    resource_names: list[str],
) -> DRS:
    drs = DRS(fair_weight=weight)
    parent = tree.parent[node]
    if parent < 0:
        return drs
    borrowed: dict[int, int] = {}
    borrowed_frs: list[int] = []
    usage = tree.usage[node]
    for fr, quota in tree.subtree_quota[node].items():
        amount = sub(usage.get(fr, 0), quota)
        if amount > 0:
            r = resource_of_fr[fr]
            borrowed[r] = add(borrowed.get(r, 0), amount)
            borrowed_frs.append(fr)
    if not borrowed:
        return drs
    drs.borrowing = True
    drs.borrowed_frs = borrowed_frs
    lend = lendable(tree, parent, resource_of_fr)
    for r, b in borrowed.items():
        lr = lend.get(r, 0)
        if lr > 0:
            ratio = float(b) * 1000.0 / float(lr)
            name = resource_names[r]
            if ratio > drs.unweighted_ratio or (
                ratio == drs.unweighted_ratio and name < drs.dominant_resource
            ):
                drs.unweighted_ratio = ratio
                drs.dominant_resource = name
    return drs
