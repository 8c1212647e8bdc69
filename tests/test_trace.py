"""Traces: CSV and JSON Lines read/write, generation, errors naming the line."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kueue_fast.api.errors import InputError
from kueue_fast.commands.cli import main
from kueue_fast.loader import build_state
from kueue_fast.simulate.batch import scheduling_hashes
from kueue_fast.simulate.manifest_trace import trace_for_state
from kueue_fast.simulate.scenario import default_trace
from kueue_fast.simulate.trace_files import (
    parse_csv,
    parse_jsonl,
    read_trace,
    write_csv,
    write_jsonl,
    write_trace,
)

GI = 1 << 30


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    np.testing.assert_array_equal(a.arrival_s, b.arrival_s)
    np.testing.assert_array_equal(a.duration_s, b.duration_s)
    assert [a.namespaces[i] for i in a.namespace] == [b.namespaces[i] for i in b.namespace]
    assert [a.queues[i] for i in a.queue] == [b.queues[i] for i in b.queue]
    np.testing.assert_array_equal(a.priority, b.priority)
    np.testing.assert_array_equal(a.ps_offsets, b.ps_offsets)
    np.testing.assert_array_equal(a.count, b.count)
    np.testing.assert_array_equal(a.min_count, b.min_count)
    for r in a.resources:
        np.testing.assert_array_equal(
            a.requests[:, a.resources.index(r)], b.requests[:, b.resources.index(r)]
        )
    assert a.all_names() == b.all_names()


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_generated_trace_round_trips_through_both_formats(tmp_path, suffix) -> None:  # type: ignore[no-untyped-def]
    t = default_trace(n=400, seed=3)
    path = tmp_path / f"trace{suffix}"
    write_trace(t, path)
    _same(t, read_trace(path))


def test_generation_is_deterministic_per_seed() -> None:
    a, b, c = default_trace(300, seed=1), default_trace(300, seed=1), default_trace(300, seed=2)
    _same(a, b)
    assert not np.array_equal(a.arrival_s, c.arrival_s)
    assert np.all(np.diff(a.arrival_s) >= 0), "generated traces come in arrival order"
    assert a.arrival_s.max() < 7 * 86400


def test_csv_rows_with_the_same_name_are_pod_sets_of_one_workload() -> None:
    text = (
        "arrival,namespace,queue,name,priority,duration,pod_set,count,min_count,cpu,memory\n"
        "0,ml,default,train,high,3600,driver,1,,1,4Gi\n"
        "0,ml,default,train,high,3600,workers,8,2,4,16Gi\n"
        "5.5,ml,default,eval,0,60,main,1,,500m,\n"
    )
    t = parse_csv(text, priority_classes={"high": 10000})
    assert len(t) == 2 and t.n_pod_sets == 3
    assert t.all_names() == ["train", "eval"]
    assert t.priority.tolist() == [10000, 0]
    assert t.count.tolist() == [1, 8, 1]
    assert t.min_count.tolist() == [-1, 2, -1]
    assert t.resources == ["cpu", "memory"]
    assert t.requests.tolist() == [[1000, 4 * GI], [4000, 16 * GI], [500, 0]]
    assert [t.pod_set_names[i] for i in t.ps_name] == ["driver", "workers", "main"]


def test_csv_without_names_makes_one_workload_per_row() -> None:
    t = parse_csv("arrival,namespace,queue,duration,cpu\n0,a,q,1,1\n0,a,q,1,2\n")
    assert len(t) == 2
    assert t.all_names() == ["wl-0000000", "wl-0000001"]


def test_jsonl_reads_pod_sets_and_min_count() -> None:
    line = (
        '{"arrival": 1, "namespace": "ml", "queue": "q", "name": "j", "priority": 5, "duration": 2,'
        ' "podSets": [{"name": "w", "count": 4, "minCount": 1, "requests": {"nvidia.com/gpu": 2}}]}\n'
    )
    t = parse_jsonl(line)
    assert t.count.tolist() == [4] and t.min_count.tolist() == [1]
    assert t.resources == ["nvidia.com/gpu"] and t.requests.tolist() == [[2]]
    out = io.StringIO()
    write_jsonl(t, out)
    _same(t, parse_jsonl(out.getvalue()))
    out = io.StringIO()
    write_csv(t, out)
    _same(t, parse_csv(out.getvalue()))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("arrival,namespace,duration,cpu\n0,a,1,1\n", "lacks the column 'queue'"),
        ("arrival,namespace,queue,duration\n0,a,q,1\n", "no resource column"),
        ("arrival,namespace,queue,duration,cpu\n0,a,q,1,lots\n", "'lots'"),
        ("arrival,namespace,queue,duration,cpu\n-1,a,q,1,1\n", "line 2.arrival"),
        ("arrival,namespace,queue,duration,cpu,count,min_count\n0,a,q,1,1,2,3\n", "must not exceed count"),
        ("arrival,namespace,queue,duration,cpu,priority\n0,a,q,1,1,vip\n", "neither an integer nor"),
        (
            "arrival,namespace,queue,name,duration,cpu\n0,a,q,x,1,1\n0,a,q,y,1,1\n0,a,q,x,1,1\n",
            "duplicate name",
        ),
        ("", "empty CSV"),
    ],
)
def test_bad_csv_is_rejected_with_where_and_why(text: str, needle: str) -> None:
    with pytest.raises(InputError, match=None) as e:
        parse_csv(text, source="t.csv")
    assert needle in str(e.value)
    assert "t.csv" in str(e.value)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[1]\n", "one JSON object per line"),
        ('{"arrival": 0}\n', "missing 'namespace'"),
        ('{"arrival": 0, "namespace": "a", "queue": "q", "duration": 1, "podSets": []}\n', "non-empty list"),
        ("{nope\n", "invalid JSON"),
    ],
)
def test_bad_jsonl_is_rejected(text: str, needle: str) -> None:
    with pytest.raises(InputError) as e:
        parse_jsonl(text)
    assert needle in str(e.value)


def test_scheduling_hash_groups_equal_shapes_only() -> None:
    offsets = np.array([0, 1, 2, 3, 5, 7], dtype=np.int64)
    names = np.zeros(7, dtype=np.int32)
    count = np.array([1, 1, 2, 1, 1, 1, 1], dtype=np.int32)
    min_count = np.full(7, -1, dtype=np.int32)
    req = np.array([[1000], [1000], [1000], [1000], [2000], [2000], [1000]], dtype=np.int64)
    prio = np.array([0, 0, 0, 0, 0], dtype=np.int64)
    h = scheduling_hashes(prio, offsets, names, count, min_count, req)
    assert h[0] == h[1], "same priority and pod sets"
    assert h[0] != h[2], "count differs"
    assert h[3] != h[4], "pod set order matters"
    assert np.all(h >= 0)
    h2 = scheduling_hashes(np.array([0, 1, 0, 0, 0]), offsets, names, count, min_count, req)
    assert h2[0] != h2[1], "priority differs"


# --- traces generated for the user's manifests (issue 9, item 2) ------------------------------------------

API = "kueue.x-k8s.io/v1beta2"
GPU = "nvidia.com/gpu"


def gpu_cluster() -> list[dict[str, Any]]:
    """The issue's GPU cluster in small: a tainted h100 flavor no trace
    workload tolerates; eval may hold 8 + 4 GPUs, eval-h100 only h100s."""

    def cq(name: str, cohort: str, gpus: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        return {
            "apiVersion": API,
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "cohortName": cohort,
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "cpu-pool",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": 64},
                                    {"name": "memory", "nominalQuota": "512Gi"},
                                ],
                            }
                        ],
                    },
                    {
                        "coveredResources": [GPU],
                        "flavors": [{"name": f, "resources": [{"name": GPU, **q}]} for f, q in gpus],
                    },
                ],
            },
        }

    objs: list[dict[str, Any]] = [
        {
            "apiVersion": API,
            "kind": "ResourceFlavor",
            "metadata": {"name": "h100"},
            "spec": {"nodeTaints": [{"key": GPU, "value": "present", "effect": "NoSchedule"}]},
        },
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "cpu-pool"}},
        cq("inference-batch", "product", [("a100", {"nominalQuota": 16})]),
        cq("eval", "product", [("a100", {"nominalQuota": 8, "borrowingLimit": 4})]),
        cq(
            "nlp",
            "research",
            [("h100", {"nominalQuota": 16}), ("a100", {"nominalQuota": 16, "borrowingLimit": 8})],
        ),
        cq("h100-only", "lab", [("h100", {"nominalQuota": 8})]),
    ]
    for ns, name in (
        ("inference", "inference-batch"),
        ("eval", "eval"),
        ("nlp", "nlp"),
        ("lab", "h100-only"),
    ):
        objs.append(
            {
                "apiVersion": API,
                "kind": "LocalQueue",
                "metadata": {"name": "default", "namespace": ns},
                "spec": {"clusterQueue": name},
            }
        )
    return objs


def test_generated_sizes_are_whole_gpus_within_what_each_queue_can_ever_hold() -> None:
    """eval: 8 nominal + 4 borrowable GPUs; 1/64 of 8 GPUs per pod used to
    round up to a whole GPU per pod while the count stayed 16."""
    state = build_state(gpu_cluster())
    trace = trace_for_state(state, 3000, seed=2)
    j = trace.resources.index(GPU)
    per_pod = trace.requests[:, j]
    total = per_pod * trace.count
    assert np.all(per_pod >= 1), "whole GPUs, at least one per pod"
    most = {"inference": 24, "eval": 12, "nlp": 24, "lab": 8}  # potentialAvailable of a usable flavor
    for k, ns in enumerate(trace.namespaces):
        rows = trace.namespace == k
        if ns != "lab":  # lab's jobs can never run (below), their size does not matter
            assert total[rows].max() <= most[ns], ns
    eval_rows = trace.namespace == trace.namespaces.index("eval")
    assert total[eval_rows].max() == 2, "the largest size is 1/4 of eval's 8 GPUs"
    # nlp's 1/4 of its usable nominal quota (a100: 16 GPUs): 4 pods of one GPU
    nlp_rows = trace.namespace == trace.namespaces.index("nlp")
    assert total[nlp_rows].max() == 4


def test_generated_workloads_that_no_flavor_can_admit_are_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(gpu_cluster()))
    out = tmp_path / "t.csv"
    assert (
        main(["trace", "generate", str(tmp_path / "cluster.yaml"), "-n", "400", "--output-file", str(out)])
        == 0
    )
    err = capsys.readouterr().err
    trace = read_trace(out)
    lab = int((trace.namespace == trace.namespaces.index("lab")).sum())
    assert lab > 0
    assert (
        f"warning: {lab:,} generated workloads of LocalQueue lab/default can never be admitted: no flavor of "
        "ClusterQueue h100-only for nvidia.com/gpu is usable "
        "(untolerated taint {nvidia.com/gpu present NoSchedule <nil>} in flavor h100)"
    ) in err
    assert "warning: ClusterQueue nlp has quota that no generated workload can use: untolerated taint" in err
