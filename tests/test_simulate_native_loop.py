"""The simulator's native event loop (simulate/native_event_loop.py, csrc
sim_loop.cpp) against event_loop.py's, both driving the native engine: every
per-workload record, every series array to the last bit, the churn, the
unsettled instants, the explanations and the counters must be equal. On the
hypothesis clusters of test_long_churn, and on the built-in scenario with
what stresses the loop's own logic: pods that stop or not, --drain past
the bins (they widen), --until, instants that never settle, long instants
interrupted by the progress bar, the manifests' own Workloads."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import test_long_churn as tlc
from hypothesis import HealthCheck, given, settings, strategies as st
from sim_results import differences
from whatif_manifests import objects

from kueue_fast.engine.select import native_available
from kueue_fast.loader import build_state
from kueue_fast.simulate import event_loop as loop, manifest_trace, scenario
from kueue_fast.simulate.event_loop import NS, simulate
from kueue_fast.simulate.result import Progress, SimResult

pytestmark = pytest.mark.skipif(not native_available(), reason="native engine not built")

START = scenario.DEFAULT_START_NS


def both_loops(monkeypatch: pytest.MonkeyPatch | None = None, **kwargs: Any) -> tuple[SimResult, SimResult]:
    """(native loop, Python loop) on the native engine."""
    native = simulate(**{**kwargs, "state": copy.deepcopy(kwargs["state"])})
    applies = loop.native_loop_applies
    loop.native_loop_applies = lambda run: False  # type: ignore[assignment]
    try:
        python = simulate(**{**kwargs, "state": copy.deepcopy(kwargs["state"])})
    finally:
        loop.native_loop_applies = applies  # type: ignore[assignment]
    return native, python


def test_the_native_loop_runs_where_it_applies() -> None:
    calls: list[bool] = []
    applies = loop.native_loop_applies

    def spy(run: Any) -> bool:
        calls.append(applies(run))
        return calls[-1]

    loop.native_loop_applies = spy  # type: ignore[assignment]
    try:
        simulate(scenario.default_state(), scenario.default_trace(50, seed=1, days=1), "native", START)
        simulate(scenario.default_state(), scenario.default_trace(50, seed=1, days=1), "reference", START)
    finally:
        loop.native_loop_applies = applies  # type: ignore[assignment]
    assert calls == [True, False]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    tlc.churn_clusters(), st.sampled_from([0, 30]), st.sampled_from([2, 8, 336]), st.sampled_from([3, 10_000])
)
def test_both_loops_agree_under_churn(churn: tlc.Churn, delay_s: int, bins: int, max_cycles: int) -> None:
    trace = manifest_trace.trace_for_state(churn.state, 400, churn.seed % 1000, 0.5, 0.9, warnings=[])
    native, python = both_loops(
        state=churn.state,
        trace=trace,
        engine="native",
        termination_delay_ns=delay_s * NS,
        drain=True,
        bins=bins,
        max_cycles=max_cycles,
    )
    assert differences(native, python) == []


CASES: dict[str, dict[str, Any]] = {
    "pods stop in 30 s": {},
    "quota released at once": {"termination_delay_ns": 0},
    "drain past the bins": {"drain": True, "bins": 8},
    "until": {"until_ns": START + 36 * 3600 * NS},
    "instants that never settle": {"max_cycles": 3},
}


@pytest.mark.parametrize("case", list(CASES))
def test_both_loops_agree_on_the_built_in_scenario(case: str) -> None:
    native, python = both_loops(
        state=scenario.default_state(),
        trace=scenario.default_trace(4000, seed=2, days=2),
        engine="native",
        start_ns=START,
        **CASES[case],
    )
    assert differences(native, python) == []
    if case == "instants that never settle":
        assert native.unsettled > 0 and native.churn.unsettled
    if case == "drain past the bins":
        assert native.timeline.bins.width_ns > 86400 * NS // 4  # widened (2 days in 8 bins: 6 h)


def test_long_instants_interrupted_by_the_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    # slices of 2 cycles, a progress report due at every look at the clock:
    # the native loop returns between two slices of an instant and resumes it
    monkeypatch.setattr(loop, "INSTANT_SLICE", 2)
    monkeypatch.setattr(loop, "PROGRESS_INTERVAL_S", 0.0)
    seen: list[Progress] = []
    report: Callable[[Progress], None] = seen.append
    native, python = both_loops(
        state=scenario.default_state(),
        trace=scenario.default_trace(3000, seed=4, days=2),
        engine="native",
        start_ns=START,
        max_cycles=40,
        progress=report,
    )
    assert differences(native, python) == []
    assert any(p.instant_cycles > 0 for p in seen)


def test_the_manifests_workloads_hold_quota_and_finish_alike() -> None:
    def workload(name: str, admitted: bool) -> dict[str, Any]:
        wl: dict[str, Any] = {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": "a", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {
                "queueName": "default",
                "podSets": [
                    {
                        "name": "main",
                        "count": 2,
                        "template": {
                            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
                        },
                    }
                ],
            },
        }
        if admitted:
            wl["status"] = {
                "admission": {
                    "clusterQueue": "team-a",
                    "podSetAssignments": [
                        {
                            "name": "main",
                            "count": 2,
                            "flavors": {"cpu": "default"},
                            "resourceUsage": {"cpu": "2"},
                        }
                    ],
                },
                "conditions": [
                    {
                        "type": "QuotaReserved",
                        "status": "True",
                        "reason": "QuotaReserved",
                        "message": "",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ],
            }
        return wl

    state = build_state(
        objects() + [workload(f"held-{i}", True) for i in range(3)] + [workload("queued", False)]
    )
    trace = manifest_trace.trace_for_state(state, 300, 3, 0.2, 0.9, warnings=[])
    for duration in (None, 1800 * NS):
        native, python = both_loops(
            state=state, trace=trace, engine="native", drain=True, manifest_duration_ns=duration
        )
        assert differences(native, python) == []
        assert native.n_manifest == 4
