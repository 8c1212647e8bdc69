"""Preemption-heavy benchmark: one cohort of ClusterQueues full of
admitted low-priority workloads, then high-priority arrivals that must
preempt within their ClusterQueue and by reclaim. Timed: the cycles until
stable after the arrivals (setup is not timed).

    pytest bench/bench_preemption.py --benchmark-only
    kueue-fast bench preemption          # the table, native vs reference

Parametrized by size (ClusterQueues, admitted, arrivals); the agreement test
runs both engines on a small instance and compares every decision.
"""

from __future__ import annotations

from typing import Any

import pytest

from kueue_fast.bench import BASE_NS, _engine_for, preemption_case
from kueue_fast.engine.select import native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="native engine not built")

SIZES = [(10, 1000, 100), (100, 10_000, 1000)]


def _settle(engine: str, size: tuple[int, int, int]) -> tuple[Any, Any]:
    case = preemption_case(*size)
    sim, _, batch = _engine_for(case, engine)
    sim.add(batch, case.admitted, len(batch))
    return sim, case


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"cq{s[0]}-adm{s[1]}-arr{s[2]}")
def test_preemption_native(benchmark: Any, size: tuple[int, int, int]) -> None:
    def setup() -> tuple[tuple[Any], dict[str, Any]]:
        sim, _ = _settle("native", size)
        return (sim,), {}

    result = benchmark.pedantic(lambda sim: sim.settle(BASE_NS, 1_000_000), setup=setup, rounds=3)
    preempted = sum(len(s.preempted) for s in result.steps)
    benchmark.extra_info["victims_per_preemptor"] = preempted / size[2]
    assert result.stable


def test_native_matches_reference_on_a_small_instance() -> None:
    out = {}
    for engine in ("native", "reference"):
        sim, case = _settle(engine, (10, 200, 20))
        settled = sim.settle(BASE_NS, 10_000)
        out[engine] = (
            # cycles may differ by the final no-op one: the reference adapter
            # skips a cycle with no head to pop, the native one runs it
            [(s.admitted, s.preempted) for s in settled.steps],
            sim.candidate_evaluations(),
        )
    assert out["native"] == out["reference"]
