"""Admission fair sharing: LocalQueues' decaying usage history.

Kueue keeps, per LocalQueue, a usage ledger (pkg/cache/queue/afs/usage_ledger.go,
AfsUsageLedger after kueue#14153): the decayed consumed history, the entry
penalties not yet settled into it (one record per Workload), and the time the
history was last decayed. Three writers keep it:

* the LocalQueue reconciler (pkg/controller/core/localqueue_controller.go) seeds
  an entry from the LocalQueue's persisted status (kueue#12891) and, once every
  usageSamplingInterval, decays it towards the LocalQueue's admitted usage
  (reconcileConsumedUsage; history is reset when usageHalfLifeTime is 0);
* the scheduler (pkg/scheduler/scheduler.go updateEntryPenalty) pushes an entry
  penalty, alpha x the workload's total requests, when it assumes a workload of a
  usage-based ClusterQueue (shouldApplyEntryPenalty: first pass only);
* the workload controller (pkg/controller/core/workload_controller.go
  updateAfsConsumedUsage) settles it when the workload becomes Admitted: the
  history is decayed towards the admitted usage, the recorded penalty is folded
  into it and LastUpdate moves to now.

The usage that orders workloads is admissionfairsharing.CalculateUsage:
sum over resources (by name) of weight x (history + pending penalty), divided by
the LocalQueue's weight (+Inf for a weight <= 0, kueue#13481).

Arithmetic follows Kueue's: amounts are resource.Quantity values, which the
ledger keeps as exact decimals at nano scale; MulByFloat multiplies by the
float's shortest decimal spelling and rounds down to 1e-9 (pkg/util/resource).
Here an amount is an int in nanos of the base unit (1 cpu = 10**9), so every
step is exact integer arithmetic, and AsApproximateFloat64 is nanos * 1e-9.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from ..inputs import AdmissionFairSharingSpec

NS_PER_S = 1_000_000_000

Amounts = dict[int, int]  # resource id -> nanos of the base unit


def go_pow_half(y: float) -> float:
    """Go's math.Pow(0.5, y) for y >= 0, step by step (pkg math/pow.go): the
    fractional part through Exp(yf*Log(x)), the integer part exactly."""
    if y == 0:
        return 1.0
    if y == 1:
        return 0.5
    if y == 0.5:
        return math.sqrt(0.5)
    yf, yi = math.modf(y)
    if yf > 0.5:
        yf -= 1
        yi += 1
    a1 = math.exp(yf * math.log(0.5)) if yf != 0 else 1.0
    return math.ldexp(a1, -int(yi))


def alpha_rate(sampling_s: float, half_life_s: float) -> float:
    """admissionfairsharing.calculateAlphaRate: 1 - 0.5^(sampling/halfLife), 0 without half-life."""
    if half_life_s == 0:
        return 0.0
    return 1.0 - go_pow_half(sampling_s / half_life_s)


def mul_by_float(amounts: Amounts, f: float) -> Amounts:
    """resource.MulByFloat: exact product with the float's shortest decimal,
    rounded down (towards zero) to nano scale."""
    factor = Fraction(Decimal(repr(f)))
    return {r: int(v * factor) for r, v in amounts.items()}


def merge_sum(a: Amounts, b: Amounts) -> Amounts:
    """resource.MergeResourceListKeepSum."""
    out = dict(a)
    for r, v in b.items():
        out[r] = out.get(r, 0) + v
    return out


def go_seconds(ns: int) -> float:
    """time.Duration.Seconds()."""
    sec, nsec = divmod(ns, NS_PER_S) if ns >= 0 else (-((-ns) // NS_PER_S), -((-ns) % NS_PER_S))
    return float(sec) + float(nsec) / 1e9


def decayed(old: Amounts, new: Amounts, elapsed_s: float, half_life_s: float) -> Amounts:
    """admissionfairsharing.CalculateDecayedConsumed: old*(1-a) + new*a with a
    the alpha rate of the elapsed time."""
    a = alpha_rate(elapsed_s, half_life_s)
    return merge_sum(mul_by_float(old, 1 - a), mul_by_float(new, a))


@dataclass
class LedgerEntry:
    """afs.UsageLedgerEntry."""

    resources: Amounts = field(default_factory=dict)  # the decayed consumed history
    last_update_ns: int = 0  # anchors the decay clock
    penalties: dict[int, Amounts] = field(default_factory=dict)  # pending, per workload id

    def pending_penalty(self) -> Amounts:
        out: Amounts = {}
        for p in self.penalties.values():
            out = merge_sum(out, p)
        return out


class UsageLedger:
    """The per-LocalQueue ledger and the rules of its three writers."""

    def __init__(self, cfg: AdmissionFairSharingSpec, resource_names: list[str]) -> None:
        self.cfg = cfg
        self.entries: dict[int, LedgerEntry] = {}
        # canonical engine units (cpu in milli, the rest in base units) -> nanos
        self._nanos_per_unit = [10**6 if r == "cpu" else 10**9 for r in resource_names]

    def to_nanos(self, per_resource: dict[int, int]) -> Amounts:
        return {r: v * self._nanos_per_unit[r] for r, v in per_resource.items()}

    # --- LocalQueue reconciler -------------------------------------------------------------

    def seeded(self, lq: int) -> bool:
        return lq in self.entries

    def seed(self, lq: int, persisted: Amounts, now_ns: int) -> None:
        """initializeAfsIfNeeded (kueue#12891): no entry yet, so start from the
        LocalQueue's persisted status, stamped now, so that the sampling pass of
        the same reconcile folds no live usage in."""
        self.entries[lq] = LedgerEntry(dict(persisted), now_ns)

    def due(self, lq: int, now_ns: int) -> bool:
        """Reconcile's guard: sample when the interval has passed since the
        entry's LastUpdate, or when a penalty is pending."""
        e = self.entries[lq]
        interval_ns = round(self.cfg.usage_sampling_interval_s * NS_PER_S)
        return now_ns - e.last_update_ns >= interval_ns or bool(e.penalties)

    def sample(self, lq: int, admitted: Amounts, now_ns: int) -> None:
        """reconcileConsumedUsage: decay the history towards the LocalQueue's
        admitted usage over the elapsed time (clamped at 0; LastUpdate never
        goes back), or reset it when the half-life is 0. Penalties stay pending."""
        e = self.entries[lq]
        if self.cfg.usage_half_life_s == 0:
            e.resources = {}
        else:
            elapsed = go_seconds(max(0, now_ns - e.last_update_ns))
            e.resources = decayed(e.resources, admitted, elapsed, self.cfg.usage_half_life_s)
        e.last_update_ns = max(e.last_update_ns, now_ns)

    # --- scheduler ---------------------------------------------------------------------------

    def entry_penalty(self, total_requests: Amounts) -> Amounts:
        """admissionfairsharing.CalculateEntryPenalty: the requests times the
        alpha rate of one sampling interval."""
        a = alpha_rate(self.cfg.usage_sampling_interval_s, self.cfg.usage_half_life_s)
        return mul_by_float(total_requests, a)

    def push_penalty(self, lq: int, wid: int, penalty: Amounts, now_ns: int) -> None:
        """AfsUsageLedger.PushPenalty: the workload's record replaces any earlier
        one; a push creating the entry starts its decay clock."""
        e = self.entries.get(lq)
        if e is None:
            e = self.entries[lq] = LedgerEntry(last_update_ns=now_ns)
        e.penalties[wid] = dict(penalty)

    # --- workload controller ---------------------------------------------------------------

    def settle(self, lq: int, wid: int, admitted: Amounts, now_ns: int) -> None:
        """updateAfsConsumedUsage on the transition into Admitted: decay towards
        the admitted usage (which now includes the workload), fold in the
        penalty recorded for the workload, stamp LastUpdate."""
        e = self.entries.get(lq)
        if e is None:
            e = self.entries[lq] = LedgerEntry(last_update_ns=now_ns)
        elapsed = go_seconds(now_ns - e.last_update_ns)
        e.resources = decayed(e.resources, admitted, elapsed, self.cfg.usage_half_life_s)
        e.resources = merge_sum(e.resources, e.penalties.pop(wid, {}))
        e.last_update_ns = now_ns

    # --- readers ----------------------------------------------------------------------------

    def usage(self, lq: int, weight: float) -> float:
        """admissionfairsharing.CalculateUsage over the entry's history and its
        pending penalties (workload.Info.ComputeLocalQueueFSUsage)."""
        e = self.entries.get(lq)
        total: Amounts = merge_sum(e.resources, e.pending_penalty()) if e is not None else {}
        usage = 0.0
        for r in sorted(total):  # resource ids are in name order, as Kueue sums
            usage += self.cfg.resource_weights[r] * (float(total[r]) * 1e-9)
        if weight <= 0:
            return math.inf
        return usage / weight
