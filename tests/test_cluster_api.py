"""The embedding API (kueue_fast.Cluster) as a controller drives it: evictions
that hold quota until the job stops, removal and re-adding, reconfiguration
during an eviction, what a cycle tried, why a workload was preempted."""

from __future__ import annotations

import pytest
from builders import ENGINES, NOW, build_state, cq, engine_marks, wl

from kueue_fast import Cluster
from kueue_fast.api.errors import EngineError

PARAMS = [pytest.param(e, marks=engine_marks(e)) for e in ENGINES]


def two_queues_state(*workloads):  # type: ignore[no-untyped-def]
    return build_state(
        ["default"],
        [
            cq("a").cohort("co").flavor("default", cpu="4").preemption(within="LowerPriority", reclaim="Any"),
            cq("b").cohort("co").flavor("default", cpu="4"),
        ],
        workloads,
    )


@pytest.mark.parametrize("engine", PARAMS)
def test_removed_workload_is_forgotten_and_can_come_back(engine: str) -> None:
    cluster = Cluster(two_queues_state(wl("w").queue("a").request(cpu="3")), engine)
    cluster.run_cycle()
    assert cluster.decision("default/w").state == "admitted"
    again = cluster.state.workloads["default/w"]
    cluster.remove_workload("default/w")
    assert cluster.keys() == [] and cluster.decisions() == []
    with pytest.raises(EngineError, match="not in the cluster"):
        cluster.decision("default/w")
    cluster.add_workload(again)  # the same key, e.g. a Workload recreated
    result = cluster.run_cycle()
    assert result.admitted == ["default/w"]
    assert [d.key for d in cluster.decisions()] == ["default/w"]


@pytest.mark.parametrize("engine", PARAMS)
def test_eviction_holds_quota_until_released_and_survives_reconfigure(engine: str) -> None:
    state = two_queues_state(
        wl("running").queue("a").request(cpu="4"),
        wl("next").queue("a").request(cpu="4").created(NOW + 1),
    )
    cluster = Cluster(state, engine, release_evictions=False)
    cluster.run_cycle()
    cluster.run_cycle()  # "next" borrows b's quota
    cluster.evict("default/running", "Deactivated", "The workload is deactivated")
    d = cluster.decision("default/running")
    assert (d.state, d.reason, d.cluster_queue) == ("evicted", "Deactivated", "a")
    assert d.pod_sets and d.pod_sets[0].flavors == {"cpu": "default"}

    cluster.reconfigure(cluster.state)  # e.g. a quota edit while the job stops
    d = cluster.decision("default/running")
    assert (d.state, d.cluster_queue, d.message) == ("evicted", "a", "The workload is deactivated")
    cluster.add_workload(wl("third").queue("b").request(cpu="1").obj())
    assert cluster.run_cycle().admitted == []  # the cohort is still full: 4 held + 4 borrowed

    cluster.release_eviction("default/running")
    assert cluster.run_cycle().admitted  # freed quota goes to a pending workload
    assert cluster.decision("default/running").state in ("pending", "admitted")


@pytest.mark.parametrize("engine", PARAMS)
def test_run_until_stable_ends_while_a_victim_stops(engine: str) -> None:
    """With release_evictions=False a preemptor re-issues its victim's eviction
    every cycle until the victim's job stops: that is no change (as the
    engine's run_until_settled counts it), so run_until_stable ends instead
    of running out of cycles (NotStableError after 100,000)."""
    state = two_queues_state(wl("low").queue("a").priority(1).request(cpu="8"))  # a's 4 and b's
    cluster = Cluster(state, engine, release_evictions=False)
    cluster.run_cycle()
    cluster.add_workload(wl("high").queue("a").priority(100).request(cpu="4").created(NOW + 1).obj())
    assert cluster.run_cycle().preempted == ["default/low"]
    assert cluster.run_until_stable(max_cycles=50) == 1
    states = [(d.key, d.state) for d in cluster.decisions()]
    assert states == [("default/high", "pending"), ("default/low", "evicted")]
    cluster.release_eviction("default/low")
    cluster.run_until_stable(max_cycles=50)
    assert cluster.decision("default/high").state == "admitted"


@pytest.mark.parametrize("engine", PARAMS)
def test_decision_names_the_preemption_reason(engine: str) -> None:
    state = two_queues_state(
        wl("low").queue("a").priority(-1).request(cpu="4").reserve("a", "default", at=NOW),
        wl("high").queue("a").priority(5).request(cpu="4"),
        wl("borrower").queue("b").request(cpu="4").reserve("b", "default", at=NOW),
    )
    state.workloads["default/high"].raw = {"metadata": {"labels": {"kueue.x-k8s.io/job-uid": "job-123"}}}
    cluster = Cluster(state, engine)
    result = cluster.run_cycle()
    assert result.preempted == ["default/low"]
    d = cluster.decision("default/low")
    assert (d.state, d.reason, d.preemption_reason) == ("evicted", "Preempted", "InClusterQueue")
    assert d.preempted_by == "default/high"
    assert "(UID: default/high, JobUID: job-123)" in d.message


@pytest.mark.parametrize("engine", PARAMS)
def test_cycle_result_lists_the_heads_it_tried_and_left_pending(engine: str) -> None:
    state = two_queues_state(
        wl("fits").queue("a").request(cpu="2"),
        wl("too-big").queue("b").request(cpu="9"),
    )
    cluster = Cluster(state, engine)
    result = cluster.run_cycle()
    assert result.admitted == ["default/fits"]
    assert result.attempted == ["default/too-big"]
    assert cluster.decision("default/too-big").reason  # its pending reason, written now


@pytest.mark.parametrize("engine", PARAMS)
def test_cycle_result_lists_the_heads_it_parked(engine: str) -> None:
    # BestEffortFIFO: a head that can never fit is parked as inadmissible, and
    # an equivalent workload (same shape) is parked with it without being tried.
    state = two_queues_state(
        wl("too-big").queue("b").request(cpu="9"),
        wl("too-big-twin").queue("b").request(cpu="9").created(NOW + 1),
        wl("fits").queue("a").request(cpu="2"),
    )
    cluster = Cluster(state, engine)
    result = cluster.run_cycle()
    assert result.parked == ["default/too-big"]
    assert result.newly_parked == 2
    assert result.time_ns == cluster.now_ns()
    assert cluster.run_cycle().parked == []


@pytest.mark.parametrize("engine", PARAMS)
def test_history_keeps_the_last_eviction_and_counts_after_requeue_and_readmission(engine: str) -> None:
    state = two_queues_state(
        wl("low").queue("a").priority(-1).request(cpu="4").reserve("a", "default", at=NOW),
        wl("high").queue("a").priority(5).request(cpu="4"),
        wl("borrower").queue("b").request(cpu="4").reserve("b", "default", at=NOW),
    )
    cluster = Cluster(state, engine)
    assert cluster.history("default/low") is None
    first = cluster.run_cycle()
    assert first.preempted == ["default/low"]
    cluster.run_until_stable()
    low = cluster.history("default/low")
    assert low is not None and low.last_eviction is not None
    ev = low.last_eviction
    assert (ev.cycle, ev.time_ns, ev.reason) == (1, first.time_ns, "Preempted")
    assert (ev.preemption_reason, ev.preempted_by) == ("InClusterQueue", "default/high")
    assert ev.message.startswith("Preempted to accommodate a workload")
    assert low.evictions == {"Preempted": 1}
    assert ev.admitted_ns == NOW and low.past_execution_s == (first.time_ns - NOW) // 1_000_000_000
    assert low.first_attempt_ns is not None and low.first_attempt_ns > first.time_ns  # tried after requeue
    high = cluster.history("default/high")
    assert high is not None and high.first_attempt_ns == first.time_ns and high.last_eviction is None
    cluster.remove_workload("default/low")
    assert cluster.history("default/low") is None


def _drain_with_preemptions() -> list[dict[str, object]]:
    """The drain benchmark's shape, small: 36 cycles until stable, 7
    preemptions (reclaim within the cohorts), one victim admitted again."""
    from kueue_fast.bench import drain_case, drain_objects

    return drain_objects(drain_case(n_cq=20, n_cohorts=4, n_workloads=1000, seed=0))


@pytest.mark.parametrize("engine", PARAMS)
def test_cycles_inside_the_engine_match_cycle_by_cycle(engine: str) -> None:
    """Without on_cycle, run() and run_until_stable() run their cycles inside
    the engine (run_cycles); the results, decisions, history (first attempts,
    evictions) and outputs are those of the cycles run one by one."""
    from kueue_fast.commands import schedule_output as output

    objs = _drain_with_preemptions()
    bulk, one_by_one = Cluster.from_objects(objs, engine), Cluster.from_objects(objs, engine)
    seen: list[object] = []
    assert bulk.run(5) == one_by_one.run(5, on_cycle=seen.append) and len(seen) == 5
    preempted: list[str] = []
    n = one_by_one.run_until_stable(on_cycle=lambda r: preempted.extend(r.preempted))  # type: ignore[attr-defined]
    assert bulk.run_until_stable() == n and len(preempted) == 7
    assert bulk.cycles == one_by_one.cycles and bulk.now_ns() == one_by_one.now_ns()
    assert bulk.decisions() == one_by_one.decisions()
    keys = bulk.keys()
    assert [bulk.history(k) for k in keys] == [one_by_one.history(k) for k in keys]
    assert sum(1 for k in keys if (h := bulk.history(k)) is not None and h.first_attempt_ns) > 100
    assert output.to_yaml(bulk) == output.to_yaml(one_by_one)
    assert output.to_json(bulk, explain=True) == output.to_json(one_by_one, explain=True)
    # and on from there: more cycles, per cycle again
    assert bulk.run(2) == one_by_one.run(2, on_cycle=lambda r: None)


@pytest.mark.parametrize("engine", PARAMS)
def test_state_counts_are_those_of_the_decisions(engine: str) -> None:
    # Cluster.state_counts (--stats) counts without making decisions; a removed
    # workload and an eviction under way are counted as decisions() shows them
    from collections import Counter

    from kueue_fast.cluster import reading as cluster_module  # where state_counts lives
    from kueue_fast.engine.contract import STATE_NAMES

    assert cluster_module.STATE_NAMES is STATE_NAMES  # one definition of the state codes
    cluster = Cluster.from_objects(_drain_with_preemptions(), engine, release_evictions=False)
    cluster.run(3)
    keys = cluster.keys()
    cluster.evict(next(k for k in keys if cluster.decision(k).state == "admitted"), "Deactivated", "off")
    cluster.remove_workload(next(k for k in keys if cluster.decision(k).state == "pending"))
    want = Counter(d.state for d in cluster.decisions())
    assert set(want) == {"admitted", "evicted", "pending"}
    assert cluster.state_counts() == dict(want)


@pytest.mark.parametrize("engine", PARAMS)
def test_queue_state_counts_are_those_of_the_decisions(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Cluster.queue_state_counts (-o summary): where each decision is admitted or queued, and its state
    from collections import Counter

    from kueue_fast.cluster.explain import ClusterView
    from kueue_fast.commands.schedule_output import NONE, _queued_in

    cluster = Cluster.from_objects(_drain_with_preemptions(), engine, release_evictions=False)
    cluster.run(3)
    keys = cluster.keys()
    cluster.evict(next(k for k in keys if cluster.decision(k).state == "admitted"), "Deactivated", "off")
    cluster.remove_workload(next(k for k in keys if cluster.decision(k).state == "pending"))
    view = ClusterView(cluster)
    want = Counter((_queued_in(view, d), d.state) for d in cluster.decisions())
    made: list[int] = []
    from kueue_fast.cluster.reading import DecisionReader

    decision = DecisionReader.decision
    monkeypatch.setattr(DecisionReader, "decision", lambda self, wid: made.append(wid) or decision(self, wid))
    specs: list[int] = []
    spec = cluster.engine.spec
    monkeypatch.setattr(cluster.engine, "spec", lambda wid: specs.append(wid) or spec(wid))
    got = {(q if q is not None else NONE, s): n for (q, s), n in cluster.queue_state_counts().items()}
    assert got == dict(want) and len(want) > 20
    # the engine's arrays (both engines have them) tell all but the one eviction under way:
    # neither a decision nor a spec per pending workload
    assert len(made) == 1 and set(specs) <= set(made)


@pytest.mark.parametrize("collector_on", [True, False])
def test_bulk_loading_gives_the_collector_back_as_it_found_it(tmp_path, capsys, collector_on: bool) -> None:
    # load/build_state/Cluster and schedule (main) turn the cyclic GC off and freeze
    # objects while they work: afterwards it is on (or off) as before, nothing frozen
    import gc
    import json

    from kueue_fast.commands.cli import main
    from kueue_fast.loader import load

    path = tmp_path / "drain.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _drain_with_preemptions()}))
    was = gc.isenabled()
    (gc.enable if collector_on else gc.disable)()
    try:
        Cluster(load([str(path)]))
        assert gc.isenabled() is collector_on and gc.get_freeze_count() == 0
        assert main(["schedule", str(path), "--until-stable", "-o", "summary"]) == 0
        assert gc.isenabled() is collector_on and gc.get_freeze_count() == 0
        assert "TOTAL" in capsys.readouterr().out
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("engine", PARAMS)
def test_pending_reasons_are_those_of_the_decisions(engine: str) -> None:
    # the controller reads a cycle's heads left pending in bulk (its pending Events)
    waiting = [wl(f"w{i}").queue("a").request(cpu="3") for i in range(4)]
    cluster = Cluster(two_queues_state(*waiting, wl("too-big").queue("b").request(cpu="9")), engine)
    tried: list[str] = []
    for _ in range(3):
        tried += cluster.run_cycle().attempted
    pending = [k for k in cluster.keys() if cluster.decision(k).state == "pending"]
    assert set(tried) & set(pending) and set(pending) - set(tried)  # tried ones and never-tried ones
    want = [(cluster.decision(k).reason, cluster.decision(k).message) for k in pending]
    assert cluster.pending_reasons(pending) == want
    # any other workload: its decision's, whatever the engine kept from its tries
    everyone = cluster.keys()
    assert {cluster.decision(k).state for k in everyone} >= {"admitted", "pending"}
    assert cluster.pending_reasons(everyone) == [
        (cluster.decision(k).reason, cluster.decision(k).message) for k in everyone
    ]
    assert cluster.pending_reasons([]) == []
