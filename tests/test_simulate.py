"""The simulator: event semantics on hand-made cases, the default scenario at
a small size, the report folder and the CLI. Reference engine (and the
native one when it is built): small inputs, no timing assertions.

Churn, censored waits, workloads.csv, warnings and the command-line options
are in test_simulate_churn.py and test_simulate_report.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kueue_fast.commands import simulate as command
from kueue_fast.commands.cli import main
from kueue_fast.engine.select import native_available
from kueue_fast.loader import build_state
from kueue_fast.simulate.event_loop import STATE_NAMES, simulate
from kueue_fast.simulate.metrics import compute
from kueue_fast.simulate.trace_files import parse_csv

ENGINES = ["reference"] + (["native"] if native_available() else [])
NS = 1_000_000_000
START = 1_700_000_000 * NS


def cluster(cpu: str = "4", within: str = "LowerPriority", cohort_peer: bool = False) -> list[dict[str, Any]]:
    def cq(name: str, nominal: str) -> dict[str, Any]:
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "cohort": "co",
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": "default", "resources": [{"name": "cpu", "nominalQuota": nominal}]}
                        ],
                    }
                ],
                "preemption": {"withinClusterQueue": within, "reclaimWithinCohort": "Any"},
            },
        }

    objs = [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        cq("cq-a", cpu),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "LocalQueue",
            "metadata": {"name": "q", "namespace": "a"},
            "spec": {"clusterQueue": "cq-a"},
        },
    ]
    if cohort_peer:
        objs += [
            cq("cq-b", cpu),
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "LocalQueue",
                "metadata": {"name": "q", "namespace": "b"},
                "spec": {"clusterQueue": "cq-b"},
            },
        ]
    return objs


def run_csv(objs: list[dict[str, Any]], csv: str, engine: str, **kw: Any):  # type: ignore[no-untyped-def]
    kw.setdefault("bins", 10)
    result = simulate(build_state(objs), parse_csv(csv), engine=engine, start_ns=START, **kw)
    return result, compute(result)


def admissions(result) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    """(seconds since the start, workload id) of every admission kept, in time order."""
    wl = result.workloads
    out = [
        (int((t - START) // NS), w)
        for w in range(result.n_workloads)
        for t in wl.admitted_at[w].tolist()
        if t >= 0
    ]
    return sorted(out)


@pytest.mark.parametrize("engine", ENGINES)
def test_quota_is_released_when_a_workload_finishes(engine: str) -> None:
    csv = "arrival,namespace,queue,name,duration,cpu\n0,a,q,w1,10,2\n0,a,q,w2,10,2\n0,a,q,w3,10,2\n"
    result, m = run_csv(cluster(), csv, engine, drain=True)
    # w1 and w2 fit at t=0; w3 waits for the first finish at t=10
    assert admissions(result) == [(0, 0), (0, 1), (10, 2)]
    assert (result.workloads.wait_ns // NS).tolist() == [0, 0, 10]
    assert m.totals["finished"] == 3 and m.totals["pending"] == 0
    q = m.queues[0]
    assert (q.admitted, q.pending, q.preemptions) == (3, 0, 0)
    assert q.wait_p50_s == 0 and q.wait_p99_s > 9
    # 4 cpu used for 10 s, then 2 cpu for 10 s, over 20 s: 75% of nominal
    assert q.utilization == pytest.approx(0.75)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("delay", [0, 30])
def test_preempted_workload_requeues_and_reruns_its_whole_duration(engine: str, delay: int) -> None:
    """The victim's quota is released once its pods are gone (``delay``
    seconds after its eviction; 0: at the end of the cycle): then the
    preemptor starts, and the victim queues again."""
    csv = "arrival,namespace,queue,name,priority,duration,cpu\n0,a,q,low,0,100,4\n30,a,q,high,10,50,4\n"
    result, m = run_csv(cluster(), csv, engine, drain=True, termination_delay_ns=delay * NS)
    wl = result.workloads
    # low, then high (once low's pods are gone), then low again when high is done
    assert admissions(result) == [(0, 0), (30 + delay, 1), (80 + delay, 0)]
    assert ((wl.evicted_at[0][:1] - START) // NS).tolist() == [30]
    # low ran 30 s for nothing, and needs its full 100 s after re-admission
    assert m.totals["lost_work_s"] == pytest.approx(30.0)
    assert m.queues[0].preemptions == 1
    assert (result.end_ns - START) // NS == 180 + delay
    assert m.totals["finished"] == 2
    # high waited for low's pods; low waited from its return to the queue until high finished
    assert (wl.wait_ns // NS).tolist() == [50, delay]
    # the 4 cpu are in use throughout: low's terminating pods hold them
    assert m.queues[0].utilization == pytest.approx(1.0)


@pytest.mark.parametrize("engine", ENGINES)
def test_reclaim_within_cohort_shows_as_borrowing_and_preemption(engine: str) -> None:
    csv = (
        "arrival,namespace,queue,name,duration,cpu\n"
        "0,a,q,big,1000,8\n"  # borrows b's idle quota
        "100,b,q,mine,10,4\n"  # b reclaims it
    )
    result, m = run_csv(cluster(cohort_peer=True), csv, engine, drain=True, termination_delay_ns=0)
    a, b = m.queues
    assert a.preemptions == 1
    assert [t for t, _ in admissions(result)] == [0, 100, 110], "big comes back when mine is done"
    # big borrows 4 cpu from 0 to 100, and again for its whole rerun from 110
    assert a.borrowing_s == pytest.approx(100.0 + 1000.0)
    assert b.wait_p50_s == 0.0
    assert m.series.preemptions.keys() == {"InCohortReclamation"}


@pytest.mark.parametrize("engine", ENGINES)
def test_run_stops_at_the_last_arrival_unless_draining(engine: str) -> None:
    csv = "arrival,namespace,queue,duration,cpu\n0,a,q,100,4\n10,a,q,100,4\n"
    result, m = run_csv(cluster(), csv, engine)
    assert (result.end_ns - START) // NS == 10
    assert (m.totals["running"], m.totals["pending"], m.totals["finished"]) == (1, 1, 0)


def test_workloads_of_a_missing_local_queue_never_run() -> None:
    csv = "arrival,namespace,queue,duration,cpu\n0,a,nope,10,1\n0,a,q,10,1\n"
    result, m = run_csv(cluster(), csv, "reference", drain=True)
    assert m.totals["unqueued"] == 1
    assert m.totals["admitted"] == 1


def test_default_scenario_small_is_deterministic_and_consistent() -> None:
    a = command.run(n=400, seed=7, engine="reference", report_dir=None)
    b = command.run(n=400, seed=7, engine="reference", report_dir=None)
    assert a.metrics.totals == b.metrics.totals
    assert [q.to_json() for q in a.metrics.queues] == [q.to_json() for q in b.metrics.queues]
    t = a.metrics.totals
    assert t["workloads"] == 400
    assert t["admitted"] + t["pending"] >= t["workloads"] - t["running"] - t["finished"]
    assert len(a.metrics.queues) == 8
    assert {q.cohort for q in a.metrics.queues} == {"research", "platform"}
    assert a.result.unsettled == 0
    # every wait is >= 0 and admissions never exceed arrivals + evictions
    wl = a.result.workloads
    assert np.all(wl.wait_ns >= 0)
    assert np.all(wl.admissions <= 1 + wl.evictions)
    assert sum(q.preemptions for q in a.metrics.queues) == t["preemptions"]


def test_report_folder_has_json_plots_and_a_self_contained_page(tmp_path: Path) -> None:
    out = command.run(n=300, seed=1, engine="reference", report_dir=tmp_path / "rep")
    names = sorted(p.name for p in out.report_files)
    assert names == sorted(
        [
            "borrowing.png",
            "metrics.json",
            "pending.png",
            "preemptions.png",
            "report.html",
            "utilization.png",
            "wait_times.png",
            "workloads.csv",
        ]
    )
    for p in out.report_files:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "rep" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 5
    assert 'src="http' not in page and "<script" not in page, "nothing to fetch: the page stands alone"
    first = page.split("data:image/png;base64,")[1].split('"')[0]
    assert base64.b64decode(first)[:4] == b"\x89PNG"
    doc = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert {q["name"] for q in doc["cluster_queues"]} >= {"team-llm", "team-etl"}
    assert set(doc["series"]) == {
        "bin_s",
        "edges_s",
        "utilization",
        "utilization_stopping",
        "pending",
        "borrowed",
        "lent",
        "cohort_borrowed",
        "cohort_lent",
        "over_quota",
        "preemptions",
    }
    for q in doc["cluster_queues"]:
        assert {
            "admitted",
            "pending",
            "preemptions",
            "wait_p50_s",
            "wait_p95_s",
            "wait_p99_s",
            "utilization",
            "borrowing_s",
        } <= set(q)


def test_cli_with_manifests_and_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(cluster()))
    (tmp_path / "t.csv").write_text("arrival,namespace,queue,duration,cpu\n0,a,q,10,2\n1,a,q,10,4\n")
    rc = main(
        [
            "simulate",
            str(tmp_path / "cluster.yaml"),
            "--trace",
            str(tmp_path / "t.csv"),
            "--engine",
            "reference",
            "--report",
            str(tmp_path / "r"),
            "--drain",
        ]
    )
    out, err = capsys.readouterr()
    assert rc == 0
    assert "cq-a" in out and "wait p50" in out
    assert "report:" in err and (tmp_path / "r" / "report.html").exists()


def test_cli_generates_a_trace_for_manifests_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(cluster(cohort_peer=True)))
    rc = main(
        [
            "simulate",
            str(tmp_path / "cluster.yaml"),
            "-n",
            "200",
            "--engine",
            "reference",
            "--no-report",
            "--json",
        ]
    )
    out, _ = capsys.readouterr()
    assert rc == 0
    doc = json.loads(out)
    assert doc["totals"]["workloads"] == 200
    assert {q["name"] for q in doc["cluster_queues"]} == {"cq-a", "cq-b"}


def test_reference_engine_on_a_big_run_warns_and_suggests_n(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(command, "REFERENCE_COMFORT", 50)
    command.run(n=60, engine="reference", report_dir=None)
    assert "-n 5000" in capsys.readouterr().err


def test_cli_rejects_a_bad_trace_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t.csv").write_text("arrival,namespace,queue,duration,cpu\nsoon,a,q,1,1\n")
    rc = main(["simulate", "--trace", str(tmp_path / "t.csv"), "--engine", "reference", "--no-report"])
    assert rc == 2
    assert "line 2.arrival" in capsys.readouterr().err


def test_write_scenario_gives_files_the_simulator_reads_back(tmp_path: Path) -> None:
    assert main(["simulate", "--write-scenario", str(tmp_path), "-n", "150"]) == 0
    out = command.run(
        [str(tmp_path / "cluster.yaml")], str(tmp_path / "trace.csv"), engine="reference", report_dir=None
    )
    ref = command.run(n=150, engine="reference", report_dir=None)
    assert out.metrics.totals == ref.metrics.totals


def test_a_trace_of_one_instant_still_makes_a_report(tmp_path: Path) -> None:
    """Zero simulated time: bins of at least a second, no division by zero."""
    (tmp_path / "t.csv").write_text("arrival,namespace,queue,duration,cpu\n0,team-llm,default,60,1\n")
    out = command.run(trace_path=str(tmp_path / "t.csv"), engine="reference", report_dir=tmp_path / "r")
    assert out.metrics.totals["admitted"] == 1 and out.metrics.totals["simulated_s"] == 0
    assert (tmp_path / "r" / "report.html").exists()


@pytest.mark.parametrize("engine", ENGINES)
def test_manifest_workloads_are_there_at_the_start(engine: str) -> None:
    """Admitted Workloads of the manifests hold quota from the start; pending
    ones get their first cycles at the start (and never finish)."""
    objs = cluster()

    def wl(name: str, prio: int, admitted: bool) -> dict[str, Any]:
        o: dict[str, Any] = {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": "a", "creationTimestamp": "2023-11-14T00:00:00Z"},
            "spec": {
                "queueName": "q",
                "priority": prio,
                "podSets": [
                    {
                        "name": "main",
                        "count": 1,
                        "template": {
                            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}
                        },
                    }
                ],
            },
        }
        if admitted:
            o["status"] = {
                "admission": {
                    "clusterQueue": "cq-a",
                    "podSetAssignments": [
                        {
                            "name": "main",
                            "count": 1,
                            "flavors": {"cpu": "default"},
                            "resourceUsage": {"cpu": "2"},
                        }
                    ],
                }
            }
        return o

    objs += [wl("low1", 0, True), wl("low2", 0, True), wl("high", 10, False)]
    result, m = run_csv(
        objs, "arrival,namespace,queue,duration,cpu\n10,a,q,5,1\n", engine, drain=True, termination_delay_ns=0
    )
    # high preempts a low one at the start; the trace's workload finds no room
    assert [t for t, _ in admissions(result)] == [0, 0, 0]
    assert m.totals["preemptions"] == 1
    assert (result.end_ns - START) // NS == 10
    assert (m.totals["running"], m.totals["pending"]) == (2, 2)


def test_rows_blocked_by_a_namespace_selector_wait_and_engines_agree() -> None:
    """Rows whose namespace the ClusterQueue's selector rejects reach the
    engine blocked (the native one gets them in its staged arrays with their
    code and message), interleaved with admissible rows: never admitted,
    counted as pending, and the engines agree on everything else."""
    objs = cluster()
    cq = next(o for o in objs if o["kind"] == "ClusterQueue")
    cq["spec"]["namespaceSelector"] = {"matchLabels": {"team": "a"}}
    objs += [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "labels": {"team": "a"}}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "c"}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "LocalQueue",
            "metadata": {"name": "q", "namespace": "c"},
            "spec": {"clusterQueue": "cq-a"},
        },
    ]
    csv = "arrival,namespace,queue,duration,cpu\n" + "".join(
        f"{t},{'c' if t % 3 == 1 else 'a'},q,7,1\n" for t in range(0, 30, 2)
    )
    logs = {}
    for engine in ENGINES:
        result, m = run_csv(objs, csv, engine, drain=True)
        blocked = {w for w in range(15) if (2 * w) % 3 == 1}
        assert not blocked & {w for _, w in admissions(result)}, engine
        assert m.totals["pending"] == len(blocked), engine
        logs[engine] = (admissions(result), result.cycles)
    assert len(set(map(str, logs.values()))) == 1, logs


@pytest.mark.parametrize("afs", [False, True], ids=["plain", "admission-fair-sharing"])
@pytest.mark.parametrize("engine", ENGINES)
def test_admission_fair_sharing_orders_trace_workloads_by_their_local_queue(engine: str, afs: bool) -> None:
    """Trace rows carry their LocalQueue to the engine: with admission fair
    sharing the workload of the LocalQueue without history goes first,
    although the other one sorts first by name."""
    objs = cluster()
    objs[1]["spec"]["preemption"] = {"withinClusterQueue": "Never", "reclaimWithinCohort": "Never"}
    busy = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "LocalQueue",
        "metadata": {"name": "busy", "namespace": "a"},
        "spec": {"clusterQueue": "cq-a"},
        "status": {
            "fairSharing": {
                "weightedShare": 0,
                "admissionFairSharingStatus": {
                    "consumedResources": {"cpu": "64"},
                    "lastUpdate": "2023-11-14T22:13:00Z",
                },
            }
        },
    }
    objs.append(busy)
    if afs:
        objs[1]["spec"]["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
        objs.append(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta1",
                "kind": "Configuration",
                "admissionFairSharing": {"usageHalfLifeTime": "1h", "usageSamplingInterval": "5m"},
            }
        )
    csv = "arrival,namespace,queue,name,duration,cpu\n0,a,busy,w1,10,4\n0,a,q,w2,10,4\n"
    result, _ = run_csv(objs, csv, engine, drain=True)
    order = [w for _, w in admissions(result)]
    assert order == ([1, 0] if afs else [0, 1])


def test_both_engines_simulate_the_default_scenario_alike() -> None:
    """With pod termination (victims hold their quota until released), the
    native engine's run_until_settled and the reference adapter's cycles
    settle every instant the same way."""
    if len(ENGINES) < 2:
        pytest.skip("native engine not built")
    a = command.run(n=800, seed=3, engine="reference", report_dir=None)
    b = command.run(n=800, seed=3, engine="native", report_dir=None)
    assert a.metrics.totals == b.metrics.totals and a.metrics.totals["preemptions"] > 0
    for name in (
        "admitted_at",
        "evicted_at",
        "finished_ns",
        "wait_ns",
        "usage",
        "preempted_by",
        "explanation",
    ):
        np.testing.assert_array_equal(
            getattr(a.result.workloads, name), getattr(b.result.workloads, name), name
        )
    assert a.result.messages == b.result.messages
    assert a.result.cycles == b.result.cycles


@pytest.mark.parametrize("engine", ENGINES)
def test_trace_requests_are_charged_through_the_configurations_resource_transformations(engine: str) -> None:
    # Kueue's admin/shared-quota-setup.yaml with its Configuration (cpu also
    # charges cpu_credits, workload.go applyResourceTransformations): four 3-cpu
    # jobs use 12 of the 14 credits; the fifth waits although spot has cpu left.
    examples = Path(__file__).parent / "data"
    objs = [
        d
        for f in ("kueue-examples/shared-quota-setup.yaml", "shared-quota-configuration.yaml")
        for d in yaml.safe_load_all((examples / f).read_text())
        if d
    ]
    csv = "arrival,namespace,queue,name,duration,cpu,example.com/ignored\n" + "".join(
        f"0,default,team-queue,w{i},100,3,1\n" for i in range(5)
    )
    objs[-1]["resources"]["excludeResourcePrefixes"] = ["example.com/"]
    result, m = run_csv(objs, csv, engine, drain=True)
    assert admissions(result) == [(0, 0), (0, 1), (0, 2), (0, 3), (100, 4)]
    assert m.totals["finished"] == 5


def _with_wait(objs: list[dict[str, Any]], wait: dict[str, Any]) -> list[dict[str, Any]]:
    api = "config.kueue.x-k8s.io/v1beta2"
    config = {"apiVersion": api, "kind": "Configuration", "waitForPodsReady": wait}
    return [*objs, config]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("delay", [0, 30])
def test_pods_ready_timeout_evicts_and_requeues_after_the_backoff(engine: str, delay: int) -> None:
    # pods start in ~30 s (median); a 1 s timeout evicts every admission
    # (workload_controller.go reconcileNotReadyTimeout), the backoff (2 s, 4 s)
    # keeps it out of its queue, the third timeout exceeds backoffLimitCount 2:
    # deactivated (triggerDeactivation)
    wait = {"timeout": "1s", "requeuingStrategy": {"backoffBaseSeconds": 2, "backoffLimitCount": 2}}
    objs = _with_wait(cluster(), wait)
    csv = "arrival,namespace,queue,name,duration,cpu\n0,a,q,w1,10,2\n"
    result, m = run_csv(objs, csv, engine, drain=True, termination_delay_ns=delay * NS)
    wl = result.workloads
    # admitted at 0; evicted at 1; queued again once its pods are gone (the
    # delay) and requeueAt (2 s after the eviction, and Kueue's jitter) passed
    first_back = max(1 + delay, 1 + 2)
    second_back = max(first_back + 1 + delay, first_back + 1 + 4)
    assert [t for t, _ in admissions(result)] == [0, first_back, second_back]
    assert wl.pods_ready_timeouts.tolist() == [3]
    assert m.totals["pods_ready_timeouts"] == 3 and m.totals["preemptions"] == 0
    assert m.totals["deactivated"] == 1 and m.totals["finished"] == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_pods_start_up_delays_the_run_and_block_admission_waits_for_it(engine: str) -> None:
    # blockAdmission: w2 waits until w1's pods are ready (scheduler.go
    # waitForPodsReadyIfNeeded), though quota is free; each run starts when its pods are ready
    objs = _with_wait(cluster(cpu="8"), {"timeout": "1h", "blockAdmission": True})
    csv = "arrival,namespace,queue,name,duration,cpu\n0,a,q,w1,100,2\n0,a,q,w2,100,2\n"
    result, m = run_csv(objs, csv, engine, drain=True, pod_startup_s=20.0)
    (t1, w1), (t2, w2) = admissions(result)
    assert (t1, w1, w2) == (0, 0, 1) and t2 > 0
    wl = result.workloads
    # w1 ran from its pods' start; w2 was admitted at that moment
    assert wl.admitted_at[1, 0] == wl.finished_ns[0] - 100 * NS > START
    assert m.totals["finished"] == 2 and m.totals["pods_ready_timeouts"] == 0


def test_without_wait_for_pods_ready_runs_start_at_admission() -> None:
    csv = "arrival,namespace,queue,name,duration,cpu\n0,a,q,w1,10,2\n"
    result, _ = run_csv(cluster(), csv, "reference", drain=True, pod_startup_s=20.0)
    assert (result.workloads.finished_ns - START).tolist() == [10 * NS]


def test_both_engines_simulate_wait_for_pods_ready_alike() -> None:
    if len(ENGINES) < 2:
        pytest.skip("native engine not built")
    from kueue_fast.api.model import WaitForPodsReadyConfig
    from kueue_fast.simulate import scenario

    out = []
    for engine in ("reference", "native"):
        state = scenario.default_state()
        state.configuration.wait_for_pods_ready = WaitForPodsReadyConfig(
            timeout_s=60.0, block_admission=True, backoff_base_s=10, backoff_limit_count=3
        )
        trace = scenario.default_trace(600, 5, 1.0)
        result = simulate(state, trace, engine=engine, start_ns=START, bins=10, pod_startup_s=40.0)
        out.append((compute(result).totals, result.workloads))
    (ta, a), (tb, b) = out
    assert ta == tb and ta["pods_ready_timeouts"] > 0
    for name in ("admitted_at", "evicted_at", "finished_ns", "pods_ready_timeouts", "state"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), name)


# --- admission checks (simulate/checks.py) -----------------------------------------------------------


def _with_check(flavor_check: bool = False) -> list[dict[str, Any]]:
    objs = cluster()
    cq = objs[1]["spec"]
    rule: dict[str, Any] = {"name": "prov", **({"onFlavors": ["default"]} if flavor_check else {})}
    cq["admissionChecksStrategy"] = {"admissionChecks": [rule]}
    objs[1]["apiVersion"] = objs[0]["apiVersion"] = objs[2]["apiVersion"] = "kueue.x-k8s.io/v1beta2"
    cq["cohortName"] = cq.pop("cohort")
    objs.append(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "AdmissionCheck",
            "metadata": {"name": "prov"},
            "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request"},
            "status": {
                "conditions": [
                    {
                        "type": "Active",
                        "status": "True",
                        "reason": "Active",
                        "message": "",
                        "lastTransitionTime": "2024-01-01T00:00:00Z",
                    }
                ]
            },
        }
    )
    return objs


def test_admission_check_option_is_parsed_with_units_and_probabilities() -> None:
    from kueue_fast.api.errors import InputError
    from kueue_fast.simulate.checks import CheckModel, parse_check_option

    assert parse_check_option("prov=5m,reject=0.1,retry=0.25") == ("prov", CheckModel(300 * NS, 0.1, 0.25))
    assert parse_check_option("x=1.5") == ("x", CheckModel(1_500_000_000))
    for bad in ("prov", "prov=-1", "prov=1,reject=2", "prov=1,reject=0.6,retry=0.6", "prov=1,later=1"):
        with pytest.raises(InputError) as e:
            parse_check_option(bad)
        assert e.value.field == "--admission-check"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("flavor_check", [False, True])
def test_a_job_starts_once_its_checks_are_ready(engine: str, flavor_check: bool) -> None:
    from kueue_fast.simulate.checks import CheckModel

    # quota reserved at 0, the check answers Ready at 60 s, the job runs 100 s from then; the second
    # workload waits for the quota the first holds while its check is pending
    csv = "arrival,namespace,queue,name,duration,cpu\n0,a,q,w1,100,4\n10,a,q,w2,10,4\n"
    result, m = run_csv(
        _with_check(flavor_check), csv, engine, drain=True, admission_checks={"prov": CheckModel(60 * NS)}
    )
    wl = result.workloads
    assert admissions(result) == [(0, 0), (160, 1)]
    assert ((wl.finished_ns - START) // NS).tolist() == [160, 230]
    assert (wl.check_wait_ns // NS).tolist() == [60, 60]
    assert (m.totals["check_retries"], m.totals["rejected"], m.totals["check_wait_s"]) == (0, 0, 120.0)


@pytest.mark.parametrize("engine", ENGINES)
def test_rejected_and_retried_checks(engine: str) -> None:
    from kueue_fast.simulate.checks import CheckModel

    csv = "arrival,namespace,queue,name,duration,cpu\n0,a,q,w1,100,4\n10,a,q,w2,10,4\n"
    # always rejected: deactivated after 30 s, never runs; the quota goes to w2, rejected in turn
    result, m = run_csv(
        _with_check(), csv, engine, drain=True, admission_checks={"prov": CheckModel(30 * NS, reject=1.0)}
    )
    assert admissions(result) == [(0, 0), (30, 1)]
    assert (m.totals["rejected"], m.totals["finished"], m.totals["running"]) == (2, 0, 0)
    # always Retry: evicted every 30 s and reserved again at once (the eviction time orders it
    # behind w2, which arrived at 10 s: they take turns), until --until stops the clock
    result, m = run_csv(
        _with_check(),
        csv,
        engine,
        until_ns=START + 100 * NS,
        admission_checks={"prov": CheckModel(30 * NS, retry=1.0)},
    )
    assert admissions(result)[:4] == [(0, 0), (30, 1), (60, 0), (90, 1)]
    assert m.totals["check_retries"] == 3 and m.totals["finished"] == 0


def test_the_cli_takes_admission_checks_and_notes_the_unmodelled_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    manifests = tmp_path / "cluster.yaml"
    manifests.write_text(yaml.safe_dump_all(_with_check()))
    trace = tmp_path / "trace.csv"
    trace.write_text("arrival,namespace,queue,name,duration,cpu\n0,a,q,w1,100,4\n")
    assert main(["simulate", str(manifests), "--trace", str(trace), "--no-report", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    note = "admission checks without --admission-check are Ready as soon as quota is reserved: prov"
    assert doc["notes"] == [note]
    argv = [
        "simulate",
        str(manifests),
        "--trace",
        str(trace),
        "--no-report",
        "-o",
        "json",
        "--admission-check",
        "prov=1h,reject=1",
        "--drain",
    ]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["totals"]["rejected"] == 1 and not doc["notes"]
    assert main([*argv, "--admission-check", "prov=soon"]) == 2
    assert "--admission-check" in capsys.readouterr().err


@pytest.mark.parametrize("engine", ENGINES)
def test_a_manifest_workload_kueue_admitted_runs_on_whatever_its_checks(engine: str) -> None:
    from kueue_fast.simulate.checks import CheckModel

    t0 = "2023-11-14T22:13:10Z"
    reserved = {
        "type": "QuotaReserved",
        "status": "True",
        "reason": "QuotaReserved",
        "message": "",
        "lastTransitionTime": t0,
    }
    status = {
        "admission": {
            "clusterQueue": "cq-a",
            "podSetAssignments": [
                {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "2"}, "count": 2}
            ],
        }
    }

    def workload(name: str, admitted: bool) -> dict[str, Any]:
        conds = [reserved] + ([{**reserved, "type": "Admitted", "reason": "Admitted"}] if admitted else [])
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": "a", "creationTimestamp": t0},
            "spec": {
                "queueName": "q",
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
            "status": {**status, "conditions": conds},
        }

    objs = [*_with_check(), workload("running", True), workload("waiting", False)]
    csv = "arrival,namespace,queue,name,duration,cpu\n"
    result, m = run_csv(
        objs,
        csv,
        engine,
        until_ns=START + 100 * NS,
        admission_checks={"prov": CheckModel(10 * NS, reject=1.0)},
    )
    # workload.go: an Admitted workload stays admitted; the reserved one is rejected after 10 s
    assert [STATE_NAMES[s] for s in result.workloads.state.tolist()] == ["running", "rejected"]
