"""The default simulation as a benchmark, parametrized by the number of
workloads (the offered load stays the same: fewer workloads run longer).
Timed: the event loop (no report). The agreement test runs both engines on
a small trace and compares every admission and preemption.

    pytest bench/bench_simulate.py --benchmark-only
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kueue_fast.engine.select import native_available
from kueue_fast.simulate.event_loop import simulate
from kueue_fast.simulate.scenario import DEFAULT_START_NS, default_state, default_trace

pytestmark = pytest.mark.skipif(not native_available(), reason="native engine not built")


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_default_simulation_native(benchmark: Any, n: int) -> None:
    trace = default_trace(n, seed=0)
    result = benchmark.pedantic(
        lambda: simulate(default_state(), trace, "native", DEFAULT_START_NS), rounds=1, iterations=1
    )
    benchmark.extra_info.update(cycles=result.cycles, admissions=int(result.workloads.admissions.sum()))
    assert result.unsettled == 0


def test_native_matches_reference_on_a_small_trace() -> None:
    trace = default_trace(1000, seed=3)
    a = simulate(default_state(), trace, "native", DEFAULT_START_NS)
    b = simulate(default_state(), trace, "reference", DEFAULT_START_NS)
    for field in (
        "admitted_at",
        "evicted_at",
        "finished_ns",
        "admitted_cq",
        "usage",
        "wait_ns",
        "preempted_by",
    ):
        np.testing.assert_array_equal(getattr(a.workloads, field), getattr(b.workloads, field), err_msg=field)
    np.testing.assert_array_equal(a.timeline.usage.integral, b.timeline.usage.integral)
    np.testing.assert_array_equal(a.timeline.preemptions.counts, b.timeline.preemptions.counts)
    assert a.churn.pairs == b.churn.pairs
