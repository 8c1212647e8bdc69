"""Topology Aware Scheduling in the controller: Topologies, Nodes and the
running non-TAS Pods read from the cluster and given to the engine; the
placement written into ``status.admission`` as ``kueue-fast schedule -o
yaml`` prints it; the job started with Kueue's topology scheduling gate
(jobframework getPodSetsInfoFromStatus, podset.FromAssignment); its pods
ungated with the node selectors of their domains as Kueue's TopologyUngater
does (pkg/controller/tas/topology_ungater.go: by rank when the pods carry
their pod set's podIndexLabel, else greedily). Runs on the in-process API
server only: a real cluster's nodes are not the test's to make up."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kf_harness import (
    CLUSTER_QUEUES,
    JOBS,
    JOBSETS,
    WORKLOADS,
    Harness,
    cluster_queue,
    job,
    jobset,
    local_queue,
    wait_for,
)
from test_e2e import cond, running

from kueue_fast.api.model import TopologyAssignment
from kueue_fast.commands.cli import main
from kueue_fast.controller.ungater import assign_domains, ungate_patch
from kueue_fast.integrations.jobset import workload_name as jobset_workload_name_of
from kueue_fast.kube.client import PODS

JSON = dict[str, Any]
RACK = "example.com/rack"
HOST = "kubernetes.io/hostname"
GATE = {"name": "kueue.x-k8s.io/topology"}
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
INDEX = "batch.kubernetes.io/job-completion-index"


def topology(name: str) -> JSON:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": RACK}, {"nodeLabel": HOST}]},
    }


def tas_flavor(name: str, topo: str) -> JSON:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": {"nodeLabels": {"pool": "tas"}, "topologyName": topo},
    }


def node(name: str, rack: str, cpu: str = "2") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"pool": "tas", RACK: rack, HOST: name}},
        "spec": {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def running_pod(ns: str, name: str, node_name: str, cpu: str) -> JSON:
    """A pod Kueue does not manage, running on a node: it takes node capacity."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
        },
        "status": {"phase": "Running"},
    }


def tas_job(ns: str, name: str, pods: int, level: str = RACK) -> JSON:
    j = job(ns, name, "lq", cpu="1", parallelism=pods)
    j["spec"]["template"]["metadata"] = {"annotations": {REQUIRED: level}}
    return j


def job_pod(j: JSON, name: str, index: int | None = None) -> JSON:
    """A pod as the Job controller makes it from the started Job's template."""
    t = copy.deepcopy(j["spec"]["template"])
    md = t.setdefault("metadata", {})
    md.update({"name": name, "namespace": j["metadata"]["namespace"]})
    if index is not None:
        md.setdefault("labels", {})[INDEX] = str(index)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": t["spec"]}


def setup(h: Harness) -> tuple[str, list[JSON]]:
    """Two racks of two 2-cpu nodes; a non-TAS pod holds 1 cpu of r1-a."""
    ns = h.namespace("team-a")
    objs = [
        topology("topo"),
        tas_flavor("tas", "topo"),
        cluster_queue("cq", {"tas": {"cpu": "16"}}),
        local_queue(ns, "lq", "cq"),
        node("r1-a", "r1"),
        node("r1-b", "r1"),
        node("r2-a", "r2"),
        node("r2-b", "r2"),
        running_pod(ns, "not-kueue", "r1-a", "1"),
    ]
    for o in objs:
        h.create(o)
    return ns, objs


def admitted_workload(h: Harness, ns: str, name: str) -> JSON:
    return wait_for(  # type: ignore[no-any-return]
        lambda: (w := h.workload_of(ns, name)) and (cond(w, "Admitted") or {}).get("status") == "True" and w,
        what=f"{name} admitted",
    )


def jobset_workload_name(name: str, js: JSON | None) -> str:
    return jobset_workload_name_of(name, js["metadata"]["uid"]) if js else "-"


def offline_assignment(tmp: Path, objs: list[JSON], j: JSON) -> JSON:
    """What `kueue-fast schedule -o yaml` writes for the job on the same objects."""
    f = tmp / "cluster.yaml"
    f.write_text(yaml.safe_dump_all([*objs, j]))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["schedule", str(f), "-o", "yaml"]) == 0
    wls = [d for d in yaml.safe_load_all(buf.getvalue()) if d and d.get("kind") == "Workload"]
    (wl,) = [w for w in wls if w["metadata"]["name"].startswith(f"job-{j['metadata']['name']}-")]
    return wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]  # type: ignore[no-any-return]


def selectors(h: Harness, ns: str, names: list[str]) -> dict[str, JSON]:
    return {n: h.kube.get(PODS, n, ns)["spec"] for n in names}


def test_a_tas_job_is_placed_started_gated_and_its_pods_ungated(
    fake_cluster: Harness, tmp_path: Path
) -> None:
    h = fake_cluster
    ns, objs = setup(h)
    h.controller()
    train = tas_job(ns, "train", 3)
    h.create(train)

    # the best fitting rack: r1 fits 3 (1 + 2, the non-TAS pod holds 1 cpu of r1-a), r2 fits 4
    wl = admitted_workload(h, ns, "train")
    psa = wl["status"]["admission"]["podSetAssignments"][0]
    want = {
        "levels": [HOST],
        "slices": [
            {
                "domainCount": 2,
                "valuesPerLevel": [{"individual": {"prefix": "r1-", "roots": ["a", "b"]}}],
                "podCounts": {"individual": [1, 2]},
            }
        ],
    }
    assert psa["topologyAssignment"] == want
    assert psa["topologyAssignment"] == offline_assignment(tmp_path, objs, train)

    # started as Kueue starts it: the topology gate and the Workload's name on the pod template
    j = wait_for(lambda: running(h, ns, "train"), what="train started")
    t = j["spec"]["template"]
    assert t["spec"]["schedulingGates"] == [GATE]
    assert t["spec"]["nodeSelector"] == {"pool": "tas"}
    assert t["metadata"]["annotations"] == {REQUIRED: RACK, WORKLOAD_ANNOTATION: wl["metadata"]["name"]}
    assert t["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "main"

    # the Job controller's pods (NonIndexed: no index label) are ungated greedily, domain by domain
    names = ["train-x", "train-y", "train-z"]
    for n in names:
        h.create(job_pod(j, n))
    specs = wait_for(
        lambda: (
            (s := selectors(h, ns, names)) and all(not p.get("schedulingGates") for p in s.values()) and s
        ),
        what="the pods ungated",
    )
    hosts = sorted(p["nodeSelector"][HOST] for p in specs.values())
    assert hosts == ["r1-a", "r1-b", "r1-b"]
    assert all(p["nodeSelector"]["pool"] == "tas" and len(p["nodeSelector"]) == 2 for p in specs.values())

    # the next rack-sized job takes r2; one more fits no rack until a node joins r3
    h.create(tas_job(ns, "second", 4))
    wl2 = admitted_workload(h, ns, "second")
    ta2 = wl2["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert ta2["slices"][0]["valuesPerLevel"] == [{"individual": {"prefix": "r2-", "roots": ["a", "b"]}}]
    h.create(tas_job(ns, "third", 2))
    pending = wait_for(
        lambda: (w := h.workload_of(ns, "third")) and (c := cond(w, "QuotaReserved")) and c,
        what="third pending",
    )
    assert pending["status"] == "False"
    assert pending["message"] == (
        "couldn't assign flavors to pod set main: topology \"topo\" doesn't allow to fit any of 2 pod(s). "
        'Total nodes: 4; excluded: resource "cpu": 4'
    )
    h.create(node("r3-a", "r3"))
    wl3 = admitted_workload(h, ns, "third")
    ta3 = wl3["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert ta3 == {
        "levels": [HOST],
        "slices": [
            {"domainCount": 1, "valuesPerLevel": [{"universal": "r3-a"}], "podCounts": {"universal": 2}}
        ],
    }


def test_indexed_pods_are_ungated_by_rank(fake_cluster: Harness) -> None:
    """With the pod set's podIndexLabel on the pods (an Indexed Job), pod i
    goes to the i-th pod of the assignment (readRanksIfAvailable), whatever
    the pods' names."""
    h = fake_cluster
    ns, _ = setup(h)
    h.controller()
    train = tas_job(ns, "train", 3)
    train["spec"]["completionMode"] = "Indexed"
    h.create(train)
    admitted_workload(h, ns, "train")
    j = wait_for(lambda: running(h, ns, "train"), what="train started")
    # names in the opposite order of the indexes: a greedy pass would put p-a on r1-a
    for name, index in (("p-c", 0), ("p-b", 1), ("p-a", 2)):
        h.create(job_pod(j, name, index))
    specs = wait_for(
        lambda: (
            (s := selectors(h, ns, ["p-a", "p-b", "p-c"]))
            and all(not p.get("schedulingGates") for p in s.values())
            and s
        ),
        what="the pods ungated",
    )
    assert {n: p["nodeSelector"][HOST] for n, p in specs.items()} == {
        "p-c": "r1-a",
        "p-b": "r1-b",
        "p-a": "r1-b",
    }


def test_a_stopped_tas_job_gets_its_template_back(fake_cluster: Harness) -> None:
    """Evicted (here: its ClusterQueue drained), the Job's template is
    restored from the Workload: the gate and the annotation go away with the
    rest of the admission."""
    h = fake_cluster
    ns, _ = setup(h)
    h.controller()
    h.create(tas_job(ns, "train", 3))
    wl = admitted_workload(h, ns, "train")
    wait_for(lambda: running(h, ns, "train"), what="train started")
    assert wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    h.patch(CLUSTER_QUEUES, "cq", {"spec": {"stopPolicy": "HoldAndDrain"}})
    j = wait_for(
        lambda: (
            (x := h.get(JOBS, "train", ns))
            and x["spec"]["suspend"]
            and not x["spec"]["template"]["spec"].get("schedulingGates")
            and x
        ),
        what="train stopped and restored",
    )
    assert j["spec"]["template"]["metadata"]["annotations"] == {REQUIRED: RACK}
    assert "nodeSelector" not in j["spec"]["template"]["spec"]


def test_schedule_and_snapshot_read_the_nodes_and_pods_of_a_tas_cluster(
    fake_cluster: Harness, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`schedule --kubeconfig` places on the live cluster's nodes, counting the
    pods that use them; the snapshot keeps what TAS reads of Nodes and Pods
    and leaves out the pods TAS places."""
    h = fake_cluster
    ns, objs = setup(h)
    h.create(tas_job(ns, "train", 3))
    placed = running_pod(ns, "placed-by-tas", "r2-a", "1")
    placed["metadata"]["annotations"] = {REQUIRED: RACK}
    h.create(placed)
    assert main(["schedule", "--kubeconfig", h.kubeconfig, "-o", "json"]) == 0
    (wl,) = json.loads(capsys.readouterr().out)["workloads"]
    assert wl["state"] == "admitted"
    ta = wl["podSets"][0]["topologyAssignment"]
    assert ta["slices"][0]["valuesPerLevel"] == [{"individual": {"prefix": "r1-", "roots": ["a", "b"]}}]
    assert ta["slices"][0]["podCounts"] == {"individual": [1, 2]}  # r1-a holds the non-TAS pod's cpu

    out = tmp_path / "snap.yaml"
    assert main(["snapshot", "--kubeconfig", h.kubeconfig, "--output-file", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 Topology, 4 Nodes, 1 Pod," in err
    assert "1 Pods left out (not on a node, finished, placed by TAS or invalid" in err
    docs = list(yaml.safe_load_all(out.read_text()))
    (pod,) = [d for d in docs if d and d["kind"] == "Pod"]
    assert pod == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "not-kueue", "namespace": ns, "uid": pod["metadata"]["uid"]},
        "spec": {"nodeName": "r1-a", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Pending"},
    }
    node_doc = next(d for d in docs if d and d["kind"] == "Node")
    assert node_doc["status"] == {
        "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True"}],
    }
    assert main(["schedule", str(out), "-o", "json"]) == 0  # the snapshot decides as the cluster does
    assert json.loads(capsys.readouterr().out)["workloads"][0]["podSets"][0]["topologyAssignment"] == ta


def test_implied_tas_pods_are_not_counted_twice(fake_cluster: Harness) -> None:
    """In a ClusterQueue whose flavors are all TAS flavors a job asking for no
    topology is placed anyway (implied TAS); Kueue starts it with the
    unconstrained annotation, so its running pods are TAS pods: their usage is
    the Workload's topologyAssignment, not their nodes' pods."""
    h = fake_cluster
    ns, _ = setup(h)
    ctl = h.controller(capacity_interval=0.0)
    h.create(job(ns, "first", "lq", cpu="1", parallelism=4))
    wl = admitted_workload(h, ns, "first")
    assert (
        sum(
            wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]["slices"][0][
                "podCounts"
            ].get("individual", [4])
        )
        == 4
    )
    j = wait_for(lambda: running(h, ns, "first"), what="first started")
    ann = j["spec"]["template"]["metadata"]["annotations"]
    assert ann == {
        "kueue.x-k8s.io/podset-unconstrained-topology": "true",
        WORKLOAD_ANNOTATION: wl["metadata"]["name"],
    }
    # its pods run where the assignment put them (7 of 8 cpus were free; 4 are now taken)
    ta = wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    from kueue_fast.loader.tas import topology_assignment

    hosts = [values[-1] for values, n in topology_assignment(ta, "", "").domains for _ in range(n)]
    for i, host in enumerate(hosts):
        p = job_pod(j, f"first-{i}")
        p["spec"].pop("schedulingGates")
        p["spec"]["nodeName"] = host
        h.create(p)
    pods = ctl.cache.objs["pod"]
    wait_for(
        lambda: all(f"{ns}/first-{i}" in pods for i in range(4)) and not ctl.shared.capacity_dirty,
        what="the controller to see the pods",
    )
    # 3 cpus are left: counted twice, the pods would leave none
    h.create(job(ns, "second", "lq", cpu="1", parallelism=3))
    admitted_workload(h, ns, "second")


def test_a_new_leader_keeps_the_placements_it_finds(fake_cluster: Harness) -> None:
    """The engine is rebuilt from the Workloads' topologyAssignments: the nodes
    they use stay used."""
    h = fake_cluster
    ns, _ = setup(h)
    first = h.controller()
    h.create(tas_job(ns, "train", 3))
    admitted_workload(h, ns, "train")  # r1, the best fitting rack
    first.stop()
    h.controller()
    h.create(tas_job(ns, "next", 3))
    wl = admitted_workload(h, ns, "next")
    ta = wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert ta["slices"][0]["valuesPerLevel"] == [{"individual": {"prefix": "r2-", "roots": ["a", "b"]}}]


# --- the ungater's choice of domains, on its own (topology_ungater.go assignGatedPodsToDomains) ---


def _pod(
    name: str, *, gated: bool = True, host: str | None = None, labels: dict[str, str] | None = None
) -> JSON:
    spec: JSON = {"containers": []}
    if gated:
        spec["schedulingGates"] = [GATE]
    if host is not None:
        spec["nodeSelector"] = {HOST: host}
    return {"metadata": {"name": name, "labels": labels or {}, "resourceVersion": "1"}, "spec": spec}


TA = TopologyAssignment((HOST,), ((("n1",), 2), (("n2",), 1)))
BY_INDEX = {"podIndexLabel": INDEX}


def _placed(pairs: list[tuple[JSON, tuple[str, ...]]]) -> dict[str, str]:
    return {p["metadata"]["name"]: values[0] for p, values in pairs}


def test_greedy_fills_each_domain_with_the_pods_it_lacks() -> None:
    """assignGatedPodsToDomainsGreedy: an ungated pod already on n1 counts;
    gated pods go, in order, to the domains still short."""
    pods = [_pod("a", gated=False, host="n1"), _pod("b"), _pod("c"), _pod("d")]
    assert _placed(assign_domains(TA, 3, pods, {})) == {"b": "n1", "c": "n2"}


def test_ranks_decide_when_every_pod_has_its_index() -> None:
    pods = [_pod("a", labels={INDEX: "2"}), _pod("b", labels={INDEX: "0"}), _pod("c", labels={INDEX: "1"})]
    assert _placed(assign_domains(TA, 3, pods, BY_INDEX)) == {"b": "n1", "c": "n1", "a": "n2"}


def test_ranks_with_sub_groups() -> None:
    """A JobSet's replicated job: rank = index + job index x pods per job."""
    request = {**BY_INDEX, "subGroupIndexLabel": "job", "subGroupCount": 3}
    pods = [_pod(n, labels={INDEX: "0", "job": j}) for n, j in (("x", "2"), ("y", "0"), ("z", "1"))]
    assert _placed(assign_domains(TA, 3, pods, request)) == {"y": "n1", "z": "n1", "x": "n2"}


def test_ranks_fall_back_to_greedy() -> None:
    """readRanksIfAvailable gives up on a missing, out-of-range or repeated
    index, and on an ungated pod away from the domain its rank names."""
    greedy = {"a": "n1", "b": "n1", "c": "n2"}
    for labels in (
        [{INDEX: "2"}, {}, {INDEX: "1"}],
        [{INDEX: "2"}, {INDEX: "3"}, {INDEX: "1"}],
        [{INDEX: "1"}, {INDEX: "1"}, {INDEX: "0"}],
    ):
        pods = [_pod(n, labels=lab) for n, lab in zip("abc", labels, strict=True)]
        assert _placed(assign_domains(TA, 3, pods, BY_INDEX)) == greedy
    misplaced = [_pod("a", labels={INDEX: "2"}, gated=False, host="n1"), _pod("b", labels={INDEX: "0"})]
    assert _placed(assign_domains(TA, 3, [*misplaced, _pod("c", labels={INDEX: "1"})], BY_INDEX)) == {
        "b": "n1",
        "c": "n2",
    }


def test_the_ungate_patch_removes_only_kueues_gate() -> None:
    pod = _pod("a")
    pod["spec"]["schedulingGates"].append({"name": "other"})
    assert ungate_patch(pod, (RACK, HOST), ("r1", "n1")) == {
        "metadata": {"resourceVersion": "1"},
        "spec": {"schedulingGates": [{"name": "other"}], "nodeSelector": {RACK: "r1", HOST: "n1"}},
    }


def test_a_jobset_with_slices_is_placed_and_started_gated(fake_cluster: Harness) -> None:
    """A JobSet's replicated job asking for slices of 2 pods per rack (2 Jobs
    of 2 pods, 1 cpu each): r1 fits one slice only (the non-TAS pod holds 1
    cpu of r1-a), r2 both, so both go to r2; each replicated job's pod
    template starts with the gate (JSON patches on the JobSet)."""
    h = fake_cluster
    h.ensure_jobset_crd()
    ns, _ = setup(h)
    h.controller()
    js = jobset(ns, "train", "lq", [("workers", 2, 2, "1")])
    js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"] = {
        "annotations": {
            "kueue.x-k8s.io/podset-slice-required-topology": RACK,
            "kueue.x-k8s.io/podset-slice-size": "2",
        }
    }
    h.create(js)
    wl = wait_for(
        lambda: (
            (w := h.get(WORKLOADS, jobset_workload_name("train", h.get(JOBSETS, "train", ns)), ns))
            and (cond(w, "Admitted") or {}).get("status") == "True"
            and w
        ),
        what="the JobSet admitted",
    )
    ta = wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert ta == {
        "levels": [HOST],
        "slices": [
            {
                "domainCount": 2,
                "valuesPerLevel": [{"individual": {"prefix": "r2-", "roots": ["a", "b"]}}],
                "podCounts": {"universal": 2},
            }
        ],
    }
    started = wait_for(
        lambda: (x := h.get(JOBSETS, "train", ns)) and not x["spec"]["suspend"] and x,
        what="the JobSet started",
    )
    t = started["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert t["spec"]["schedulingGates"] == [GATE]
    assert t["metadata"]["annotations"][WORKLOAD_ANNOTATION] == wl["metadata"]["name"]
