"""Offered load: a generated trace offers ``--load`` x each ClusterQueue's
capacity, and the headline says so.

Each cluster shape below states its capacities by hand (the quota each
ClusterQueue's trace can use: its own nominal quota plus an equal share of
the quota its Cohorts own, among the ClusterQueues below them that can use
it); the tests compute the offered load from the generated rows alone (sum of
pods x per-pod request x duration, over capacity x the trace's 7 days) and
compare it with ``--load``.

Tolerance: a generated trace is calibrated per ClusterQueue to the exact
load; what is left is rounding each duration to 1 ms and the 1 s floor on
durations, far below 0.1% with these sizes. TOLERANCE (0.5%) leaves room for
that and for nothing else: a load off by a LocalQueue count (x2, x3) or by a
missing share of cohort quota fails by far.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from kueue_fast.api.quantity import parse_quantity
from kueue_fast.commands.cli import main
from kueue_fast.loader import build_state
from kueue_fast.simulate.manifest_trace import trace_for_state
from kueue_fast.simulate.trace import Trace
from kueue_fast.simulate.trace_files import read_trace

WEEK_S = 7 * 86400.0
TOLERANCE = 0.005
API = "kueue.x-k8s.io/v1beta2"


def flavor(name: str, taint: str | None = None) -> str:
    spec = f"\nspec:\n  nodeTaints: [{{key: {taint}, value: 'true', effect: NoSchedule}}]" if taint else ""
    return f"apiVersion: {API}\nkind: ResourceFlavor\nmetadata: {{name: {name}}}{spec}\n"


def local_queue(namespace: str, name: str, cluster_queue: str) -> str:
    return (
        f"apiVersion: {API}\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
        f"spec: {{clusterQueue: {cluster_queue}}}\n"
    )


def docs(*parts: str) -> str:
    return "---\n".join(parts)


# One ClusterQueue of 90 cpu fed by three namespaces (Kueue's single
# ClusterQueue setup with three teams).
ONE_CQ_THREE_NAMESPACES = docs(
    flavor("default"),
    f"""apiVersion: {API}
kind: ClusterQueue
metadata: {{name: shared}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{{name: cpu, nominalQuota: 90}}]
""",
    local_queue("team-a", "lq", "shared"),
    local_queue("team-b", "lq", "shared"),
    local_queue("team-c", "lq", "shared"),
)
ONE_CQ_CAPACITY = {"shared": {"cpu": 90_000}}


def resource_group(quotas: dict[str, dict[str, str | int]]) -> str:
    """One resource group: per flavor, its resources' nominal quota."""
    flavors = ""
    for f, rs in quotas.items():
        items = ", ".join(f"{{name: {r}, nominalQuota: {q}}}" for r, q in rs.items())
        flavors += f"    - name: {f}\n      resources: [{items}]\n"
    covered = ", ".join(sorted({r for rs in quotas.values() for r in rs}))
    return f"  resourceGroups:\n  - coveredResources: [{covered}]\n    flavors:\n{flavors}"


def cq(name: str, cohort: str | None, quotas: dict[str, dict[str, str | int]]) -> str:
    parent = f"  cohortName: {cohort}\n" if cohort else ""
    return (
        f"apiVersion: {API}\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n{parent}"
        f"  namespaceSelector: {{}}\n{resource_group(quotas)}"
    )


# Several ClusterQueues in a cohort: "big" fed by two LocalQueues of one
# namespace and one of another, "small" by one.
COHORT_OF_QUEUES = docs(
    flavor("default"),
    cq("big", "org", {"default": {"cpu": 40, "memory": "160Gi"}}),
    cq("small", "org", {"default": {"cpu": 8, "memory": "32Gi"}}),
    local_queue("ml", "train", "big"),
    local_queue("ml", "eval", "big"),
    local_queue("data", "etl", "big"),
    local_queue("ci", "default", "small"),
)
COHORT_CAPACITY = {"big": {"cpu": 40_000, "memory": 160 << 30}, "small": {"cpu": 8_000, "memory": 32 << 30}}


def cohort(name: str, parent: str | None, quotas: dict[str, dict[str, str | int]]) -> str:
    up = f"  parentName: {parent}\n" if parent else ""
    return f"apiVersion: {API}\nkind: Cohort\nmetadata: {{name: {name}}}\nspec:\n{up}{resource_group(quotas)}"


# Kueue's pool pattern, nested: the root Cohort "org" owns 24 GPUs and 96 cpu,
# its child "research" 8 GPUs; r1 and r2 (in research) have nominalQuota 0,
# p1 (in org) 4 GPUs of its own.
#   org's 24 GPUs and 96 cpu: shared by r1, r2, p1 -> 8 GPUs, 32 cpu each
#   research's 8 GPUs: shared by r1, r2 -> 4 each
#   r1 = r2 = 0 + 4 + 8 = 12 GPUs, p1 = 4 + 8 = 12 GPUs; 32 cpu each
NESTED_POOL = docs(
    flavor("a100"),
    cohort("org", None, {"a100": {"cpu": 96, "nvidia.com/gpu": 24}}),
    cohort("research", "org", {"a100": {"nvidia.com/gpu": 8}}),
    cq("r1", "research", {"a100": {"cpu": 0, "nvidia.com/gpu": 0}}),
    cq("r2", "research", {"a100": {"cpu": 0, "nvidia.com/gpu": 0}}),
    cq("p1", "org", {"a100": {"cpu": 0, "nvidia.com/gpu": 4}}),
    local_queue("nlp", "default", "r1"),
    local_queue("vision", "default", "r2"),
    local_queue("vision", "batch", "r2"),
    local_queue("prod", "default", "p1"),
)
NESTED_CAPACITY = {
    "r1": {"cpu": 32_000, "nvidia.com/gpu": 12},
    "r2": {"cpu": 32_000, "nvidia.com/gpu": 12},
    "p1": {"cpu": 32_000, "nvidia.com/gpu": 12},
}

# A tainted spot flavor (64 cpu) besides on-demand (32 cpu): a generated
# workload tolerates no taint, so only on-demand is the trace's.
TAINTED = docs(
    flavor("on-demand"),
    flavor("spot", taint="spot"),
    cq("batch", None, {"on-demand": {"cpu": 32}, "spot": {"cpu": 64}}),
    local_queue("batch", "default", "batch"),
    local_queue("batch-2", "default", "batch"),
)
TAINTED_CAPACITY = {"batch": {"cpu": 32_000}}


def tolerating_job(name: str, namespace: str, cpu: str, pods: int) -> str:
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
  labels: {{kueue.x-k8s.io/queue-name: default}}
spec:
  parallelism: {pods}
  suspend: true
  template:
    spec:
      restartPolicy: Never
      tolerations: [{{key: spot, operator: Exists, effect: NoSchedule}}]
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


# The same cluster with Jobs of both namespaces that tolerate the spot taint:
# the generated trace takes their shapes, and spot is the trace's too.
TAINTED_TOLERATED = docs(
    TAINTED, tolerating_job("etl", "batch", "2", 4), tolerating_job("train", "batch-2", "500m", 8)
)
TAINTED_TOLERATED_CAPACITY = {"batch": {"cpu": 96_000}}

SHAPES = {
    "one ClusterQueue fed by three namespaces": (ONE_CQ_THREE_NAMESPACES, ONE_CQ_CAPACITY),
    "two ClusterQueues in a cohort, one fed by three LocalQueues": (COHORT_OF_QUEUES, COHORT_CAPACITY),
    "nested Cohorts owning the quota, ClusterQueues at nominalQuota 0": (NESTED_POOL, NESTED_CAPACITY),
    "a tainted flavor no generated workload tolerates": (TAINTED, TAINTED_CAPACITY),
    "a tainted flavor the manifests' Jobs tolerate": (TAINTED_TOLERATED, TAINTED_TOLERATED_CAPACITY),
}


def loads_by_hand(
    text: str, trace: Trace, capacity: dict[str, dict[str, int]], span_s: float
) -> dict[str, float]:
    """Per ClusterQueue: max over resources of sum(pods x per-pod request x
    duration) / (capacity x span), from the trace's rows and the LocalQueues
    of the manifests (read here from the YAML, not through kueue-fast)."""
    queue_of = {
        (d["metadata"]["namespace"], d["metadata"]["name"]): d["spec"]["clusterQueue"]
        for d in yaml.safe_load_all(text)
        if d["kind"] == "LocalQueue"
    }
    work: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for i in range(len(trace)):
        target = queue_of[(trace.namespaces[trace.namespace[i]], trace.queues[trace.queue[i]])]
        for k in range(int(trace.ps_offsets[i]), int(trace.ps_offsets[i + 1])):
            for j, r in enumerate(trace.resources):
                work[target][r] += (
                    float(trace.count[k]) * float(trace.requests[k, j]) * float(trace.duration_s[i])
                )
    return {q: max(work[q][r] / (cap * span_s) for r, cap in capacity[q].items()) for q in capacity}


def csv_loads_by_hand(text: str, path: Path, capacity: dict[str, dict[str, int]]) -> dict[str, float]:
    """The same from a CSV file's text, with the quantity parser only."""
    import csv

    queue_of = {
        (d["metadata"]["namespace"], d["metadata"]["name"]): d["spec"]["clusterQueue"]
        for d in yaml.safe_load_all(text)
        if d["kind"] == "LocalQueue"
    }
    work: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    with path.open() as f:
        lines = list(f)
    assert lines[0] == "# window: 604800\n", "the trace says the 7 days it covers"
    for row in csv.DictReader(lines[1:]):
        target = queue_of[(row["namespace"], row["queue"])]
        for r in capacity[target]:
            if row.get(r):
                work[target][r] += int(row["count"]) * parse_quantity(row[r], r) * float(row["duration"])
    return {q: max(work[q][r] / (cap * WEEK_S) for r, cap in capacity[q].items()) for q in capacity}


@pytest.mark.parametrize("load", [0.7, 1.3])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_generated_trace_offers_load_times_each_cluster_queues_capacity(shape: str, load: float) -> None:
    text, capacity = SHAPES[shape]
    trace = trace_for_state(build_state(list(yaml.safe_load_all(text))), 4000, seed=5, load=load)
    got = loads_by_hand(text, trace, capacity, WEEK_S)
    assert set(got) == set(capacity), "every ClusterQueue gets workloads"
    for q, x in got.items():
        assert abs(x - load) <= TOLERANCE * load, f"{shape}: ClusterQueue {q} offered {x:.4f}, --load {load}"


def test_trace_generate_offers_load_shared_by_the_local_queues(tmp_path: Path) -> None:
    """The issue's reproduction: 5,000 workloads, --load 0.7, one ClusterQueue of
    90 cpu and three namespaces used to offer 2.10 x the quota."""
    (tmp_path / "cluster.yaml").write_text(ONE_CQ_THREE_NAMESPACES)
    out = tmp_path / "t.csv"
    args = ["trace", "generate", str(tmp_path / "cluster.yaml"), "-n", "5000", "--load", "0.7"]
    assert main([*args, "--output-file", str(out)]) == 0
    got = csv_loads_by_hand(ONE_CQ_THREE_NAMESPACES, out, ONE_CQ_CAPACITY)
    assert got["shared"] == pytest.approx(0.7, rel=TOLERANCE)


def test_headline_offered_load_is_the_load_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cluster.yaml").write_text(ONE_CQ_THREE_NAMESPACES)
    args = ["simulate", str(tmp_path / "cluster.yaml"), "-n", "2000", "--load", "0.7", "--no-report"]
    assert main([*args, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "offered load 0.70 x the nominal quota the trace can use, per ClusterQueue, on cpu" in out


def test_headline_names_cohort_quota_when_it_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cluster.yaml").write_text(NESTED_POOL)
    args = ["simulate", str(tmp_path / "cluster.yaml"), "-n", "2000", "--load", "0.9", "--no-report"]
    assert main([*args, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert (
        "offered load 0.90 x the quota the trace can use (nominal + share of cohort quota), per ClusterQueue"
    ) in out


def test_headline_of_a_trace_file_measures_over_its_arrivals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace read from a file carries no window: its load is over the time
    from 0 to its last arrival, and the headline shows each ClusterQueue's
    range when they differ. Two rows: a 4-cpu job of 1 h at 0 s and a 2-cpu
    job of 2 h at 3600 s, both in team-a: 4*3600 + 2*7200 = 28800 cpu-s over
    90 cpu x 3600 s = 0.0889."""
    (tmp_path / "cluster.yaml").write_text(ONE_CQ_THREE_NAMESPACES)
    (tmp_path / "t.csv").write_text(
        "arrival,namespace,queue,duration,cpu\n0,team-a,lq,3600,4\n3600,team-a,lq,7200,2\n"
    )
    args = ["simulate", str(tmp_path / "cluster.yaml"), "--trace", str(tmp_path / "t.csv"), "--no-report"]
    assert main([*args, "--no-progress"]) == 0
    assert (
        "offered load 0.09 x the nominal quota the trace can use, per ClusterQueue, on cpu, "
        "over the 1.0h to the last arrival" in capsys.readouterr().out
    )


def test_a_written_trace_keeps_its_window_and_its_offered_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--write-scenario's trace.csv says the 7 days it covers (``# window:``):
    replayed, the headline gives the load of the run that generated it."""
    (tmp_path / "cluster.yaml").write_text(NESTED_POOL)
    args = ["simulate", str(tmp_path / "cluster.yaml"), "-n", "1500", "--load", "0.8"]
    assert main([*args, "--write-scenario", str(tmp_path / "s")]) == 0
    trace = read_trace(tmp_path / "s" / "trace.csv")
    assert trace.window_s == WEEK_S
    got = loads_by_hand(NESTED_POOL, trace, NESTED_CAPACITY, WEEK_S)
    assert all(x == pytest.approx(0.8, rel=TOLERANCE) for x in got.values()), got
    capsys.readouterr()
    replay = ["simulate", str(tmp_path / "s" / "cluster.yaml"), "--trace", str(tmp_path / "s" / "trace.csv")]
    assert main([*replay, "--no-report", "--no-progress"]) == 0
    assert "offered load 0.80 x the quota the trace can use (nominal + share of cohort quota)" in (
        capsys.readouterr().out
    )
