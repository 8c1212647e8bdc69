"""Placement in traces: node selectors, tolerations and node affinity per pod
set, in both formats, through the simulator (flavors a pod set cannot use
are Kueue's: untolerated taints, labels that do not match), convert,
--write-scenario and compare; and generated traces that take their shapes
from the manifests' Jobs, JobSets and Workloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kueue_fast.api.errors import InputError
from kueue_fast.commands.cli import main
from kueue_fast.engine.select import native_available
from kueue_fast.loader import build_state
from kueue_fast.simulate.event_loop import STATE_NAMES, simulate
from kueue_fast.simulate.placement import Placement, placement_from_text, placement_to_text
from kueue_fast.simulate.trace_files import parse_csv, parse_jsonl, read_trace, write_trace

ENGINES = ["reference"] + (["native"] if native_available() else [])
NS = 1_000_000_000
START = 1_700_000_000 * NS
API = "kueue.x-k8s.io/v1beta2"


def spot_cluster() -> list[dict[str, Any]]:
    """One ClusterQueue with 4 cpu on-demand and 8 cpu on a tainted, labelled
    spot flavor (tried in that order)."""
    return [
        {
            "apiVersion": API,
            "kind": "ResourceFlavor",
            "metadata": {"name": "on-demand"},
            "spec": {"nodeLabels": {"lifecycle": "on-demand"}},
        },
        {
            "apiVersion": API,
            "kind": "ResourceFlavor",
            "metadata": {"name": "spot"},
            "spec": {
                "nodeLabels": {"lifecycle": "spot"},
                "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
            },
        },
        {
            "apiVersion": API,
            "kind": "ClusterQueue",
            "metadata": {"name": "batch"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": "on-demand", "resources": [{"name": "cpu", "nominalQuota": 4}]},
                            {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": 8}]},
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": API,
            "kind": "LocalQueue",
            "metadata": {"name": "q", "namespace": "ml"},
            "spec": {"clusterQueue": "batch"},
        },
    ]


# Four 6-cpu jobs at once: none fits on-demand (4 cpu). Only those that
# tolerate the spot taint can use spot (8 cpu, one at a time); the one that
# selects on-demand nodes, and the one that tolerates nothing, never run.
PLACED_CSV = (
    "arrival,namespace,queue,name,duration,node_selector,tolerations,affinity,cpu\n"
    "0,ml,q,tolerates,100,,spot=true:NoSchedule,,6\n"
    "0,ml,q,plain,100,,,,6\n"
    "0,ml,q,wants-on-demand,100,lifecycle=on-demand,spot:NoSchedule,,6\n"
    "1,ml,q,exists-any,100,,*,lifecycle in (spot),6\n"
)


@pytest.mark.parametrize("engine", ENGINES)
def test_tolerating_pod_sets_use_the_tainted_flavor_and_others_cannot(engine: str) -> None:
    trace = parse_csv(PLACED_CSV)
    result = simulate(build_state(spot_cluster()), trace, engine=engine, start_ns=START, drain=True)
    wl = result.workloads
    states = {result.trace.name_of(i): STATE_NAMES[s] for i, s in enumerate(wl.state.tolist())}
    # tolerates runs first, exists-any (one second later) once it has finished
    assert states == {
        "tolerates": "finished",
        "plain": "pending",
        "wants-on-demand": "pending",
        "exists-any": "finished",
    }
    messages = {
        result.trace.name_of(i): result.messages[int(k)]
        for i, k in enumerate(wl.explanation.tolist())
        if k >= 0
    }
    assert "untolerated taint {spot true NoSchedule <nil>} in flavor spot" in messages["plain"]
    assert "flavor spot doesn't match node affinity" in messages["wants-on-demand"]


def test_placement_round_trips_through_csv_jsonl_and_convert(tmp_path: Path) -> None:
    t = parse_csv(PLACED_CSV)
    assert [str(p) for p in t.placements][0] == str(Placement()), "the first placement is the empty one"
    write_trace(t, tmp_path / "a.jsonl")
    line = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[3])
    assert line["podSets"][0]["tolerations"] == [{"operator": "Exists"}]
    assert line["podSets"][0]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "lifecycle", "operator": "In", "values": ["spot"]}]}
                ]
            }
        }
    }
    assert main(["trace", "convert", str(tmp_path / "a.jsonl"), str(tmp_path / "b.csv")]) == 0
    back = read_trace(tmp_path / "b.csv")
    assert [back.placements[i] for i in back.placement_ids()] == [t.placements[i] for i in t.placement_ids()]
    assert (tmp_path / "b.csv").read_text().splitlines()[1:] == [
        "0,ml,q,tolerates,0,100,main,1,,,spot=true:NoSchedule,,6",
        "0,ml,q,plain,0,100,main,1,,,,,6",
        "0,ml,q,wants-on-demand,0,100,main,1,,lifecycle=on-demand,spot:NoSchedule,,6",
        "1,ml,q,exists-any,0,100,main,1,,,*,lifecycle in (spot),6",
    ]


def test_a_trace_without_placement_is_written_as_before() -> None:
    import io

    from kueue_fast.simulate.trace_files import write_csv

    out = io.StringIO()
    write_csv(parse_csv("arrival,namespace,queue,duration,cpu\n0,ml,q,10,1\n"), out)
    assert out.getvalue().splitlines()[0] == (
        "arrival,namespace,queue,name,priority,duration,pod_set,count,min_count,cpu"
    )


@pytest.mark.parametrize(
    "cells",
    [
        ("a=b,c=d", "", ""),
        ("", "k=v:NoExecute,k2:NoSchedule,k3,*,*:NoSchedule,k4=", ""),
        ("", "", "zone in (a,b),gpu|!spot,n>3|n<10,x notin (y)"),
    ],
)
def test_placement_text_round_trips(cells: tuple[str, str, str]) -> None:
    p = placement_from_text(*cells, "line 2")
    assert placement_from_text(*placement_to_text(p), "line 2") == p


def test_an_affinity_term_without_expressions_is_no_constraint() -> None:
    """Kueue matches flavors on matchExpressions only: a term of matchFields
    alone matches every flavor, and so does the whole (ORed) affinity."""
    from kueue_fast.api import model as m

    fields_only = m.NodeSelectorTerm((), (m.NodeSelectorRequirement("metadata.name", "In", ("n1",)),))
    zone = m.NodeSelectorTerm((m.NodeSelectorRequirement("zone", "In", ("a",)),))
    ps = m.PodSet("main", 1, required_affinity=(zone, fields_only))
    assert Placement.of(ps) == Placement()
    ps = m.PodSet("main", 1, required_affinity=(zone,))
    assert placement_to_text(Placement.of(ps)) == ("", "", "zone in (a)")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "arrival,namespace,queue,duration,tolerations,cpu\n0,a,q,1,spot:NoEffect,1\n",
            "line 2.tolerations: 'spot:NoEffect': the effect must be one of",
        ),
        (
            "arrival,namespace,queue,duration,node_selector,cpu\n0,a,q,1,zone,1\n",
            "line 2.node_selector: expected key=value, got 'zone'",
        ),
        (
            "arrival,namespace,queue,duration,affinity,cpu\n0,a,q,1,zone in a,1\n",
            "line 2.affinity: 'zone in a': expected key in (value,...)",
        ),
        (
            '{"arrival":0,"namespace":"a","queue":"q","duration":1,"podSets":[{"tolerations":{"key":"x"}}]}\n',
            "line 1.podSets[0].tolerations: Invalid value: ",
        ),
        (
            '{"arrival":0,"namespace":"a","queue":"q","duration":1,"podSets":[{"affinity":{"nodeAffinity":'
            '{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":'
            '[{"key":"k","operator":"Near"}]}]}}}}]}\n',
            'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Near"',
        ),
    ],
)
def test_bad_placement_is_an_error_naming_the_line_and_field(text: str, needle: str) -> None:
    with pytest.raises(InputError) as e:
        (parse_jsonl if text.startswith("{") else parse_csv)(text, source="t")
    assert needle in str(e.value)


def test_placed_trace_through_write_scenario_and_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(spot_cluster()))
    (tmp_path / "t.csv").write_text(PLACED_CSV)
    base = str(tmp_path / "cluster.yaml")
    assert (
        main(["simulate", base, "--trace", str(tmp_path / "t.csv"), "--write-scenario", str(tmp_path / "s")])
        == 0
    )
    assert read_trace(tmp_path / "s" / "trace.csv").placed
    bigger = yaml.safe_dump_all(spot_cluster()).replace("nominalQuota: 8", "nominalQuota: 16")
    (tmp_path / "bigger.yaml").write_text(bigger)
    capsys.readouterr()
    args = ["compare", base, str(tmp_path / "bigger.yaml"), "--trace", str(tmp_path / "s" / "trace.csv")]
    assert main([*args, "--drain", "--no-report", "-o", "json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # the two tolerating 6-cpu jobs: one after the other on 8 spot cpu (the
    # second waits 99 s), both at once on 16
    assert [c["overall"]["wait_p50_s"] for c in doc["configurations"]] == [99.0, 0.0]


# --- shapes from the manifests --------------------------------------------------------------------


def job(name: str, namespace: str, queue: str, cpu: str, parallelism: int, tolerate: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    if tolerate:
        spec["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {"parallelism": parallelism, "suspend": True, "template": {"spec": spec}},
    }


def test_generated_trace_takes_the_shapes_of_the_manifests_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objs = [*spot_cluster(), job("a", "ml", "q", "2", 3, True), job("b", "ml", "q", "2", 3, True)]
    objs.append(job("c", "ml", "q", "500m", 1, False))
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objs))
    out = tmp_path / "t.csv"
    assert (
        main(["trace", "generate", str(tmp_path / "cluster.yaml"), "-n", "3000", "--output-file", str(out)])
        == 0
    )
    err = capsys.readouterr().err
    assert (
        "note: the generated trace takes the shapes (pod sets, requests, placement, priority) of 3 Jobs, "
        "JobSets and Workloads of the manifests for 1 LocalQueue(s)"
    ) in err
    assert "has quota that no generated workload can use" not in err
    trace = read_trace(out)
    j = trace.resources.index("cpu")
    shapes = {
        (int(trace.count[k]), int(trace.requests[k, j]), trace.placements[int(trace.placement_ids()[k])])
        for k in range(trace.n_pod_sets)
    }
    tolerating = placement_from_text("", "spot:NoSchedule", "", "")
    assert shapes == {(3, 2000, tolerating), (1, 500, Placement())}
    big = np.array([trace.count[k] == 3 for k in range(trace.n_pod_sets)])
    assert 0.6 < big.mean() < 0.73, "two of the three objects have the tolerating shape"
    # the load counts spot: the tolerating shape can use it (4 + 8 cpu)
    work = float((trace.count * trace.requests[:, j] * trace.duration_s).sum())
    assert work / (12_000 * 7 * 86400) == pytest.approx(0.7, rel=0.005)


def test_no_warning_for_a_flavor_the_shapes_of_another_local_queue_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ClusterQueue fed by two LocalQueues: ml's Jobs tolerate spot, ops
    submits generated sizes. Spot is used (by ml's shapes): no warning that
    no generated workload can use it (it used to say so)."""
    ops = {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ops"}}
    ops["spec"] = {"clusterQueue": "batch"}
    objs = [*spot_cluster(), ops, job("a", "ml", "q", "2", 3, True)]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objs))
    out = tmp_path / "t.csv"
    assert (
        main(["trace", "generate", str(tmp_path / "cluster.yaml"), "-n", "500", "--output-file", str(out)])
        == 0
    )
    err = capsys.readouterr().err
    assert "1 other LocalQueue(s) submit generated sizes" in err
    assert "has quota that no generated workload can use" not in err
