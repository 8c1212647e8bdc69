"""Settled cohort trees: run_until_settled skips the cycles that would only
replay a tree's last attempts (contract.SettledRun, the engines'
tree_dirty_), and that must change nothing. Each simulation below runs
twice on the same engine, skipping on and off, and every record, series,
explanation and counter must be equal (the cycles counted included: the
skipped ones are counted); on the hypothesis clusters of test_long_churn
(cohort trees of several levels with their own quota, fair sharing, every
flavor fungibility policy, StrictFIFO, partial admission, admission fair
sharing, pods stopping or not) and on the built-in scenario."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

import pytest
import test_long_churn as tlc
from hypothesis import HealthCheck, given, settings, strategies as st
from sim_results import differences

from kueue_fast.engine.select import native_available
from kueue_fast.loader import build_state
from kueue_fast.simulate import manifest_trace, run_state, scenario
from kueue_fast.simulate.event_loop import NS, simulate
from kueue_fast.simulate.result import SimResult
from kueue_fast.simulate.trace_files import parse_csv

ENGINES = ["reference"] + (["native"] if native_available() else [])


@contextlib.contextmanager
def skipping(on: bool) -> Iterator[None]:
    """Simulations built meanwhile skip settled trees (the default) or not."""
    make = run_state.make_sim_engine

    def made(*args: Any, **kwargs: Any) -> Any:
        sim = make(*args, **kwargs)
        sim.engine.skip_settled = on
        return sim

    run_state.make_sim_engine = made  # type: ignore[assignment]
    try:
        yield
    finally:
        run_state.make_sim_engine = make  # type: ignore[assignment]


def both_ways(**kwargs: Any) -> tuple[SimResult, SimResult]:
    runs = []
    for on in (True, False):
        with skipping(on):
            runs.append(simulate(**{**kwargs, "state": copy.deepcopy(kwargs["state"])}))
    return runs[0], runs[1]


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(tlc.churn_clusters(), st.sampled_from(ENGINES), st.sampled_from([0, 30]))
def test_skipping_settled_trees_changes_nothing_under_churn(
    churn: tlc.Churn, engine: str, delay_s: int
) -> None:
    n = 120 if engine == "reference" else 400
    trace = manifest_trace.trace_for_state(churn.state, n, churn.seed % 1000, 0.5, 0.9, warnings=[])
    on, off = both_ways(
        state=churn.state, trace=trace, engine=engine, termination_delay_ns=delay_s * NS, drain=True
    )
    assert differences(on, off) == []
    assert off.cycles_run == off.cycles and on.cycles_run <= on.cycles


@pytest.mark.parametrize("engine", ENGINES)
def test_a_settled_tree_is_skipped_and_its_head_still_waits_with_its_reason(engine: str) -> None:
    # Two ClusterQueues outside any cohort: "idle" holds a StrictFIFO head
    # that can never fit (its queue head is tried every cycle and requeued at
    # once); "busy" gets arrivals and finishes. After its first attempt the
    # idle queue's tree settles: the cycles of busy's instants skip it.
    def cq(name: str, strategy: str) -> dict[str, Any]:
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "queueingStrategy": strategy,
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
                    }
                ],
            },
        }

    objs: list[dict[str, Any]] = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        cq("idle", "StrictFIFO"),
        cq("busy", "BestEffortFIFO"),
    ]
    for ns, queue in (("a", "idle"), ("b", "busy")):
        objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "q", "namespace": ns},
                "spec": {"clusterQueue": queue},
            }
        )
    rows = ["0,a,q,too-big,60,8"] + [f"{10 * i},b,q,w{i},25,2" for i in range(1, 40)]
    trace = parse_csv("arrival,namespace,queue,name,duration,cpu\n" + "\n".join(rows) + "\n")
    on, off = both_ways(state=build_state(objs), trace=trace, engine=engine, drain=True)
    assert differences(on, off) == []
    assert on.cycles == off.cycles == off.cycles_run
    # at least the cycle of each of busy's 39 finishes (nothing else pending
    # then) only replays the idle head: skipped
    assert on.cycles - on.cycles_run >= 39
    assert on.messages[on.workloads.explanation[0]].startswith(
        "couldn't assign flavors to pod set main: insufficient quota"
    )


@pytest.mark.skipif(not native_available(), reason="native engine not built")
@pytest.mark.parametrize("delay_s", [0, 30])
def test_skipping_settled_trees_changes_nothing_in_the_built_in_scenario(delay_s: int) -> None:
    trace = scenario.default_trace(3000, seed=5, days=2)
    on, off = both_ways(
        state=scenario.default_state(),
        trace=trace,
        engine="native",
        start_ns=scenario.DEFAULT_START_NS,
        termination_delay_ns=delay_s * NS,
    )
    assert differences(on, off) == []
