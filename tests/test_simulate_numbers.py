"""The numbers simulate, compare and sweep print, checked by hand on a
cluster of our own (tests/data/nested-pool-cluster.yaml):

    cohort org          own quota 16 GPUs (a pool)
      cohort research   own quota  4 GPUs
        cq llm          nominal    8 GPUs
        cohort vision   no quota
          cq vision     nominal    0 GPUs (Kueue's pool pattern)
      cq shared         nominal    8 GPUs, AdmissionCheck prov, fed by team-a, team-b, team-c
      cq gated          nominal    4 GPUs, AdmissionCheck gate (not Active: inactive)

The tree holds 16 + 4 + 8 + 0 + 8 + 4 = 40 GPUs of a100.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kueue_fast.engine.select import native_available
from kueue_fast.loader import build_state
from kueue_fast.simulate.checks import CheckModel
from kueue_fast.simulate.event_loop import simulate
from kueue_fast.simulate.metrics import compute
from kueue_fast.simulate.trace_files import parse_csv

ENGINES = ["reference"] + (["native"] if native_available() else [])
NS = 1_000_000_000
START = 1_700_000_000 * NS
CLUSTER = Path(__file__).parent / "data" / "nested-pool-cluster.yaml"
HEADER = "arrival,namespace,queue,name,duration,nvidia.com/gpu\n"
# the states a workload of a ClusterQueue ends in: exactly one each
STATE_COUNTS = ("pending", "reserved", "running", "evicting", "finished", "rejected", "deactivated")


def objects() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(CLUSTER.read_text()) if d]


def run(csv: str, objs: list[dict[str, Any]] | None = None, engine: str = "reference", **kw: Any) -> Any:
    kw.setdefault("bins", 10)
    state = build_state(objs if objs is not None else objects())
    result = simulate(state, parse_csv(HEADER + csv), engine=engine, start_ns=START, **kw)
    return result, compute(result)


def queue(m: Any, name: str) -> Any:
    return next(q for q in m.queues if q.name == name)


def random_trace(seed: int, n: int = 300) -> str:
    """n one-to-four-GPU jobs from every namespace over about a day."""
    rng = np.random.default_rng(seed)
    namespaces = ["llm", "vision", "team-a", "team-b", "team-c", "gated"]
    rows = []
    t = 0.0
    for k in range(n):
        t += float(rng.exponential(300.0))
        ns = namespaces[int(rng.integers(len(namespaces)))]
        rows.append(f"{t:.0f},{ns},q,w{k},{rng.exponential(3600.0):.0f},{int(rng.integers(1, 5))}")
    return "\n".join(rows) + "\n"


# --- admission checks: a rejected workload was never admitted (issue 20, item 5) -----------------------


def test_a_workload_its_admission_check_rejected_is_not_admitted() -> None:
    """Three jobs of team-a, each rejected 5 minutes after its quota was
    reserved: they held quota but never ran, so none was admitted."""
    csv = "0,team-a,q,a1,600,2\n0,team-b,q,b1,600,2\n60,team-c,q,c1,600,2\n"
    result, m = run(csv, drain=True, admission_checks={"prov": CheckModel(300 * NS, reject=1.0)})
    assert (m.totals["admitted"], m.totals["rejected"], m.totals["admissions"]) == (0, 3, 3)
    shared = queue(m, "shared")
    assert (shared.workloads, shared.admitted, shared.rejected) == (3, 0, 3)
    # a check that is always Ready admits them all
    _, m = run(csv, drain=True, admission_checks={"prov": CheckModel(300 * NS)})
    assert (queue(m, "shared").admitted, queue(m, "shared").finished, m.totals["rejected"]) == (3, 3, 0)


def _wait_for_pods_ready(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    wait = {"timeout": "60s", "requeuingStrategy": {"backoffBaseSeconds": 10, "backoffLimitCount": 1}}
    return [
        *objs,
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "waitForPodsReady": wait},
    ]


RUNS = [
    # (seed, check model, termination delay s, waitForPodsReady, --until s)
    (1, CheckModel(300 * NS, reject=0.1, retry=0.2), 30, False, None),
    (2, CheckModel(60 * NS, reject=0.3), 0, False, 40_000),
    (3, CheckModel(0, retry=0.5), 30, True, None),
    (4, CheckModel(600 * NS), 120, True, 20_000),
]


@pytest.mark.parametrize(("seed", "check", "delay", "wait", "until"), RUNS)
def test_counts_add_up_per_cluster_queue(
    seed: int, check: CheckModel, delay: int, wait: bool, until: int | None
) -> None:
    """Every workload of a ClusterQueue ends in exactly one state: pending +
    reserved + running + evicting + finished + rejected + deactivated =
    workloads, per ClusterQueue and in the totals (with unqueued ones);
    admitted counts those whose job ever started (never a rejected one)."""
    objs = _wait_for_pods_ready(objects()) if wait else objects()
    result, m = run(
        random_trace(seed),
        objs,
        admission_checks={"prov": check},
        termination_delay_ns=delay * NS,
        until_ns=START + until * NS if until else None,
        pod_startup_s=40.0,
    )
    wl = result.workloads
    for q in m.queues:
        assert sum(getattr(q, k) for k in STATE_COUNTS) == q.workloads, q.name
        c = result.topology_cq_names.index(q.name)
        mine = (wl.queue_cq == c) & (wl.arrival_ns <= result.end_ns)
        assert q.admitted == int((mine & wl.ever_admitted).sum()), q.name
        # a finished job was admitted; a workload rejected at its only reservation never was
        assert wl.ever_admitted[mine & (wl.state == 3)].all()
        assert not wl.ever_admitted[mine & (wl.state == 5) & (wl.admissions == 1)].any()
    t = m.totals
    assert sum(t[k] for k in STATE_COUNTS) + t["unqueued"] == t["workloads"]
    for k in ("admitted", *STATE_COUNTS, "check_retries", "pods_ready_timeouts", "preemptions"):
        assert t[k] == sum(getattr(q, k) for q in m.queues), k
    assert queue(m, "gated").admitted == 0


def test_compare_runs_the_admission_checks_and_counts_rejections(tmp_path: Path, capsys: Any) -> None:
    """compare takes --admission-check as simulate does: the rejected row,
    and no workload of the always-rejected check counted as admitted."""
    from kueue_fast.commands.cli import main

    trace = tmp_path / "trace.csv"
    trace.write_text(HEADER + "0,team-a,q,a1,600,2\n0,team-b,q,b1,600,2\n60,team-c,q,c1,600,2\n")
    argv = ["compare", str(CLUSTER), "--set", "cq/shared.spec.stopPolicy=Hold", "--trace", str(trace)]
    argv += ["--admission-check", "prov=5m,reject=1", "--workers", "1", "--no-progress", "--no-report"]
    argv += ["--drain", "-o", "json"]
    assert main(argv) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    base = doc["configurations"][0]
    assert (base["totals"]["admitted"], base["totals"]["rejected"]) == (0, 3)
    assert base["overall"]["rejected"] == 3
    assert doc["configurations"][0]["deltas_from_base"] == {}
    assert doc["configurations"][1]["deltas_from_base"]["shared"]["rejected"] == -3
    assert main([*argv[:-2]]) == 0
    table = capsys.readouterr().out
    assert "\n  rejected " in table


# --- capacity and lending along the quota tree (issue 20, items 2 and 3) ---------------------------------

# From 0 to 1,000 s: llm runs 12 GPUs (8 nominal: borrows 4), vision 6 (nominal 0: borrows 6),
# shared 10 (8 nominal: borrows 2); gated (inactive) lends its 4. By hand, nearest lender first:
#   cohort vision: nothing to lend; its 6 go up (vision borrows 6 from research)
#   cohort research: needs 4 (llm) + 6 (vision); its own 4 cover 4; 6 go up
#   cohort org: needs 6 (research) + 2 (shared); its own 16 and gated's unused 4 (20 in all)
#     cover 8 pro rata: org lends 8 x 16/20 = 6.4, gated 8 x 4/20 = 1.6
# borrowed 4 + 6 + 2 = 12 = lent 4 + 6.4 + 1.6. Used 28 of the tree's 40 GPUs: 70%.
STATIC = "0,llm,q,l1,10000,12\n0,vision,q,v1,10000,6\n0,team-a,q,a1,10000,10\n"


@pytest.mark.parametrize("engine", ENGINES)
def test_lending_is_attributed_along_the_tree_with_cohort_pools_as_lenders(engine: str) -> None:
    _, m = run(STATIC, engine=engine, until_ns=START + 1000 * NS)
    s = m.series

    def mean(d: dict[str, Any], name: str) -> float:
        return round(float(d["nvidia.com/gpu"].get(name, np.zeros(1)).mean()), 6)

    assert {q: mean(s.borrowed, q) for q in ("llm", "vision", "shared", "gated")} == {
        "llm": 4.0,
        "vision": 6.0,
        "shared": 2.0,
        "gated": 0.0,
    }
    assert {q: mean(s.lent, q) for q in ("llm", "vision", "shared", "gated")} == {
        "llm": 0.0,
        "vision": 0.0,
        "shared": 0.0,
        "gated": 1.6,
    }
    assert {k: mean(s.cohort_lent, k) for k in ("org", "research", "vision")} == {
        "org": 6.4,
        "research": 4.0,
        "vision": 0.0,
    }
    assert {k: mean(s.cohort_borrowed, k) for k in ("org", "research", "vision")} == {
        "org": 0.0,
        "research": 6.0,
        "vision": 6.0,
    }
    assert "nvidia.com/gpu" not in s.over_quota


def test_capacity_is_the_whole_trees_quota_and_a_pool_queue_has_a_utilization() -> None:
    """The tree holds 40 GPUs (16 of them in org's pool, 4 in research's):
    28 in use is 70%, not 140% of the ClusterQueues' 20. Each ClusterQueue's
    utilization is over its capacity (capacity.py), the one its offered load
    is measured against: org's 16 shared by the 4 ClusterQueues below it,
    research's 4 by llm and vision. llm 12 of 8+4+2, vision 6 of 0+4+2 (the
    pool pattern: not 0%), shared 10 of 8+4, gated 0 of 4+4."""
    from kueue_fast.simulate.report import summary_table

    result, m = run(STATIC, until_ns=START + 1000 * NS)
    assert result.tree.capacity.sum() == 40
    assert np.allclose(m.series.utilization["nvidia.com/gpu"]["a100"], 0.7)
    util = {q.name: (round(q.utilization, 6), q.utilization_of) for q in m.queues}
    assert util == {
        "gated": (0.0, "capacity"),
        "llm": (round(12 / 14, 6), "capacity"),
        "shared": (round(10 / 12, 6), "capacity"),
        "vision": (1.0, "capacity"),
    }
    table = summary_table(m)
    assert " 100% " in table and "*:" not in table


def test_a_queue_without_any_capacity_is_measured_against_its_reach() -> None:
    """A ClusterQueue at nominalQuota 0 with no cohort-owned quota above it
    only borrows its siblings' unused quota: its utilization is over its
    reach (Kueue's potentialAvailable), marked '*'."""
    from kueue_fast.simulate.report import summary_table

    objs = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
        *[
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": name},
                "spec": {
                    "cohortName": "c",
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["nvidia.com/gpu"],
                            "flavors": [
                                {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": q}]}
                            ],
                        }
                    ],
                },
            }
            for name, q in (("owner", 8), ("pool-user", 0))
        ],
        *[
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "q", "namespace": ns},
                "spec": {"clusterQueue": ns},
            }
            for ns in ("owner", "pool-user")
        ],
    ]
    state = build_state(objs)
    trace = parse_csv(
        "arrival,namespace,queue,name,priority,duration,nvidia.com/gpu\n0,pool-user,q,a,0,5000,2\n"
    )
    result = simulate(state, trace, engine="reference", start_ns=START, until_ns=START + 1000 * NS)
    m = compute(result)
    util = {q.name: (round(q.utilization, 6), q.utilization_of) for q in m.queues}
    assert util == {"owner": (0.0, "capacity"), "pool-user": (0.25, "reach")}
    assert " 25%* " in summary_table(m)


# --- an inactive ClusterQueue is said (issue 20, item 4) --------------------------------------------------


def test_an_inactive_cluster_queue_is_said_with_kueues_reason(tmp_path: Path, capsys: Any) -> None:
    """gated's AdmissionCheck is not Active: the table, metrics.json and the
    report say so with Kueue's reason and message; the note on checks without
    --admission-check does not call gate Ready; every workload still pending
    at the end has its explanation in workloads.csv."""
    import csv
    import io
    import json

    from kueue_fast.commands.cli import main

    trace = tmp_path / "trace.csv"
    trace.write_text(HEADER + random_trace(5, 60))
    rep = tmp_path / "rep"
    assert main(["simulate", str(CLUSTER), "--trace", str(trace), "--report", str(rep), "--no-progress"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the lines under the table wrap at 120 columns
    message = "Can't admit new workloads: references inactive AdmissionCheck(s): gate."
    assert "gated (inactive)" in out
    assert f"inactive: gated admits nothing (AdmissionCheckInactive: {message})" in out
    assert "Ready as soon as quota is reserved: gate" not in out
    assert "Ready as soon as quota is reserved: prov" in out
    doc = json.loads((rep / "metrics.json").read_text())
    gated = next(q for q in doc["cluster_queues"] if q["name"] == "gated")
    assert (gated["active"], gated["inactive_reason"], gated["inactive_message"]) == (
        False,
        "AdmissionCheckInactive",
        message,
    )
    assert gated["pending"] > 0 and all(q["active"] for q in doc["cluster_queues"] if q["name"] != "gated")
    assert "inactive: gated admits nothing" in (rep / "report.html").read_text()
    rows = list(csv.DictReader(io.StringIO((rep / "workloads.csv").read_text())))
    pending = [r for r in rows if r["state"] in ("pending", "unqueued")]
    assert pending and all(r["explanation"] for r in pending)
    assert {r["explanation"] for r in pending if r["cluster_queue"] == "gated"} == {
        "ClusterQueue gated is inactive"
    }


# --- quota above quota while victims stop (issue 21, item 15) ---------------------------------------------


@pytest.mark.parametrize("delay", [30, 0])
def test_quota_goes_above_the_trees_quota_only_while_victims_stop(delay: int) -> None:
    """examples/ml-platform (56 A100s): a cycle that preempts lets a later
    workload of the cycle reserve the quota its victims still hold (Kueue's
    scheduler.go fits() removes the targets): 57 of 56 held until their pods
    are gone. The excess is reported per flavor and never exceeds what
    stopping workloads hold; with no termination delay there is none."""
    from kueue_fast.loader import load
    from kueue_fast.simulate.manifest_trace import trace_for_state

    state = load([str(Path(__file__).parent.parent / "examples" / "ml-platform" / "cluster.yaml")])
    trace = trace_for_state(state, 2000, seed=3, days=1.0)
    result = simulate(state, trace, ENGINES[-1], START, termination_delay_ns=delay * NS)
    m = compute(result)
    s = m.series
    if delay == 0:
        assert m.totals["peak_over_quota"] == {} and not s.utilization_stopping and not s.over_quota
        return
    assert m.totals["peak_over_quota"] == {"nvidia.com/gpu": {"a100": 1.0}}
    fr = result.fr_pairs.index(
        (result.flavor_names.index("a100"), result.resource_names.index("nvidia.com/gpu"))
    )
    assert result.tree.capacity[fr] == 56
    held = s.utilization_stopping["nvidia.com/gpu"]["a100"] * 56  # GPUs held by stopping workloads, per bin
    over = s.over_quota.get("nvidia.com/gpu", np.zeros_like(held))
    assert (held > 0).any() and (over <= held + 1e-6).all()


# --- compare and sweep: one meaning of --set/--patch, every difference listed (issue 20, item 7) ----------


def test_compares_diff_lists_status_a_patch_changed(tmp_path: Path, capsys: Any) -> None:
    """A patch that makes gate Active changes no spec: the diff still says
    what changed (its condition), and gated admits in the patched run."""
    import json

    from kueue_fast.commands.cli import main

    patch = tmp_path / "gate.yaml"
    patch.write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: gate}\n"
        "status:\n  conditions: [{type: Active, status: 'True', reason: Active, message: up, "
        "lastTransitionTime: '2025-01-01T00:00:00Z'}]\n"
    )
    trace = tmp_path / "trace.csv"
    trace.write_text(HEADER + random_trace(7, 60))
    argv = ["compare", str(CLUSTER), "--patch", str(patch), "--trace", str(trace), "--workers", "1"]
    assert main([*argv, "--no-progress", "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "AdmissionCheck/gate status.conditions[0].status: False -> True" in out
    assert "AdmissionCheck/gate status.conditions[0].reason: NotReady -> Active" in out
    assert main([*argv, "--no-progress", "--no-report", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    before, after = ({q["name"]: q for q in c["cluster_queues"]} for c in doc["configurations"])
    assert (before["gated"]["active"], before["gated"]["admitted"]) == (False, 0)
    assert after["gated"]["active"] and after["gated"]["admitted"] > 0


def test_sweep_changes_the_configurations_under_test_and_runs_the_base_as_given(tmp_path: Path) -> None:
    """--set means what it means to compare: the configurations under test
    are changed, the base (the reference) runs as given."""
    import json

    from kueue_fast.commands.cli import main

    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        "parameters:\n- name: pool\n  set: cohort/org.spec.resourceGroups[0].flavors[a100].resources"
        "[nvidia.com/gpu].nominalQuota\n  values: [8, 16]\n"
    )
    trace = tmp_path / "trace.csv"
    trace.write_text(HEADER + random_trace(8, 60))
    argv = ["sweep", str(CLUSTER), str(spec), "--set", "cq/llm.spec.stopPolicy=Hold", "--trace", str(trace)]
    assert main([*argv, "--workers", "1", "--no-progress", "--report", str(tmp_path / "r")]) == 0
    doc = json.loads((tmp_path / "r" / "sweep.json").read_text())
    base, *grid = doc["configurations"]
    assert base["config"] == "base" and base["changes"] == []
    llm = {
        c["config"]: next(q for q in c["cluster_queues"] if q["name"] == "llm") for c in doc["configurations"]
    }
    assert llm["base"]["active"] and llm["base"]["admitted"] > 0
    for c in grid:
        assert "ClusterQueue/llm spec.stopPolicy=Hold" in c["changes"]
        assert not llm[c["config"]]["active"] and llm[c["config"]]["admitted"] == 0


# --- said once, readable axes, 120 columns (issue 20, item 9) ----------------------------------------------


def test_each_warning_is_said_once(tmp_path: Path, capsys: Any) -> None:
    from kueue_fast.commands.cli import main

    trace = tmp_path / "trace.csv"
    trace.write_text(HEADER + "0,nowhere,q,x1,60,1\n0,llm,q,l1,60,1\n")
    assert main(["simulate", str(CLUSTER), "--trace", str(trace), "--no-report", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    said = (out + err).count("trace workloads of LocalQueue nowhere/q never run")
    assert said == 1


def test_wait_axis_is_ticked_in_minutes_hours_and_days() -> None:
    pytest.importorskip("matplotlib")
    from kueue_fast.simulate.plots import RunCanvas, wait_times_plot

    result, m = run(random_trace(3, 120), until_ns=START + 86400 * NS)
    fig = wait_times_plot(RunCanvas(m, result.topology_cq_names, "a run"), "waits")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels and set(labels) <= {"1s", "10s", "1m", "10m", "1h", "6h", "1d", "7d", "30d", "1y"}
    gated = f"gated (inactive) ({queue(m, 'gated').censored} censored)"
    assert gated in [t.get_text() for t in fig.axes[0].get_yticklabels()]


def test_compares_utilization_panels_skip_flavors_no_configuration_uses() -> None:
    pytest.importorskip("matplotlib")
    from kueue_fast.simulate.plots import OverlayCanvas, overlay_utilization_plot

    objs = objects()
    objs.insert(
        0, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "h100"}}
    )
    pool = next(o for o in objs if o["kind"] == "Cohort" and o["metadata"]["name"] == "org")
    pool["spec"]["resourceGroups"][0]["flavors"].append(
        {"name": "h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}
    )
    _, m = run(STATIC, objs, until_ns=START + 1000 * NS)
    assert set(m.series.utilization["nvidia.com/gpu"]) == {"a100", "h100"}  # h100: capacity, no use
    fig = overlay_utilization_plot(OverlayCanvas([("a", m), ("b", m)], "one trace"), "utilization")
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()]
    assert titles == ["nvidia.com/gpu in a100"]


def test_schedules_table_fits_120_columns(tmp_path: Path, capsys: Any) -> None:
    """Long names and Kueue's long messages: WHY and MESSAGE wrap in their
    columns, or go on lines of their own under each row."""
    from kueue_fast.commands.cli import main

    def workload(name: str, ns: str, gpus: int) -> dict[str, Any]:
        container = {"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": {
                "queueName": "q",
                "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}],
            },
        }

    for name in ("train-llama-70b-finetune-with-a-long-name", "ft"):
        objs = [
            *objects(),
            workload(name, "llm", 4),
            workload("big", "vision", 64),
            workload("b", "gated", 1),
        ]
        path = tmp_path / "cluster.yaml"
        path.write_text(yaml.safe_dump_all(objs))
        assert main(["schedule", str(path), "-o", "table"]) == 0
        table = capsys.readouterr().out.split("\n\n")[0]
        assert max(len(line) for line in table.splitlines()) <= 120, table
        assert "maximum capacity" in table and "ClusterQueue gated is inactive" in table


def test_each_note_is_said_once(tmp_path: Path, capsys: Any) -> None:
    """The note on where a generated trace's shapes came from was said as the
    run started and again after the table."""
    from kueue_fast.commands.cli import main

    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "llm", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}],
                }
            },
        },
    }
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([*objects(), job]))
    assert main(["simulate", str(path), "-n", "50", "--no-report", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert (out + err).count("note: the generated trace takes the shapes") == 1
