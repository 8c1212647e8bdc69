"""Comparing two simulation results field by field (test helper)."""

from __future__ import annotations

import dataclasses

import numpy as np

from kueue_fast.simulate.result import SimResult


def differences(a: SimResult, b: SimResult) -> list[str]:
    """What differs between two runs: every per-workload record, every
    series array to the last bit, the churn, the explanations and the
    counters of the run (cycles_run, heads and timings aside)."""
    out = []
    for f in dataclasses.fields(a.workloads):
        x, y = getattr(a.workloads, f.name), getattr(b.workloads, f.name)
        if (x is None) != (y is None) or (x is not None and not np.array_equal(np.asarray(x), np.asarray(y))):
            out.append(f"workloads.{f.name}")
    ta, tb = a.timeline, b.timeline
    for name in ("usage", "stopping", "trees"):
        for attr in ("integral", "totals", "peak_over", "level", "last_t"):
            if not np.array_equal(getattr(getattr(ta, name), attr), getattr(getattr(tb, name), attr)):
                out.append(f"timeline.{name}.{attr}")
    for attr in ("steps", "moments"):
        if not np.array_equal(getattr(ta.pending, attr), getattr(tb.pending, attr)):
            out.append(f"timeline.pending.{attr}")
    if not np.array_equal(ta.preemptions.counts, tb.preemptions.counts):
        out.append("timeline.preemptions")
    if ta.bins.width_ns != tb.bins.width_ns:
        out.append("timeline.bins")
    if list(a.churn.pairs.items()) != list(b.churn.pairs.items()):
        out.append("churn.pairs")
    if a.churn.unsettled != b.churn.unsettled:
        out.append("churn.unsettled")
    for f in ("messages", "cycles", "instants", "unsettled", "end_ns", "drain_limited", "n_workloads"):
        if getattr(a, f) != getattr(b, f):
            out.append(f"{f}: {getattr(a, f)!r:.80} != {getattr(b, f)!r:.80}")
    for f in ("preemptions_per_cq", "lost_ns_per_cq"):
        if not np.array_equal(getattr(a, f), getattr(b, f)):
            out.append(f)
    return out
