"""Topology Aware Scheduling inputs: Nodes as ``kubectl get nodes -o yaml``
prints them, the Pods whose requests use node capacity, pod-set topology
requests (the Workload field and the annotations Kueue's Job and JobSet
integrations read), and what kueue-fast refuses of TAS, naming the field."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from kueue_tas_schedule_cases import (
    HOST,
    RACK,
    admission,
    admission_check,
    cluster_queue,
    flavor as rflavor,
    fq,
    group,
    local_queue,
    node,
    placement,
    pod,
    pod_set,
    psa,
    topology,
    workload,
)

from kueue_fast import Cluster, loader
from kueue_fast.api import model as m
from kueue_fast.api.errors import InputError
from kueue_fast.engine.contract import ENGINES
from kueue_fast.engine.select import native_available
from kueue_fast.loader.tas import TAS_GATES

BLOCK = "cloud.com/topology-block"
LAYERS = '[{"topology": "a", "size": 1}, {"topology": "b", "size": 1}]'


def rack_cluster() -> list[dict[str, Any]]:
    """Two racks of two 2-cpu nodes, a TAS flavor over them, a ClusterQueue
    "tas" with LocalQueue default/tas."""
    nodes = [
        node(f"{r}-n{i}", {"pool": "tas", RACK: r, HOST: f"{r}-n{i}"}, {"cpu": "2", "pods": "10"})
        for r in ("r1", "r2")
        for i in (1, 2)
    ]
    return [
        topology("racks", RACK, HOST),
        rflavor("tas-flavor", {"pool": "tas"}, "racks"),
        *nodes,
        cluster_queue("tas", group(fq("tas-flavor", {"cpu": "100"}))),
        local_queue("tas", "tas"),
    ]


# --- Nodes and Pods ----------------------------------------------------------------------------


KUBECTL_NODES = {
    "apiVersion": "v1",
    "kind": "List",
    "metadata": {"resourceVersion": ""},
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
                "creationTimestamp": "2025-05-01T10:00:00Z",
                "labels": {
                    "beta.kubernetes.io/arch": "amd64",
                    "kubernetes.io/hostname": "gpu-a-1",
                    "cloud.com/topology-block": "b1",
                    "cloud.provider.com/rack": "r1",
                },
                "name": "gpu-a-1",
                "resourceVersion": "123456",
                "uid": "2f0c9c8e-0000-4000-8000-000000000001",
            },
            "spec": {
                "podCIDR": "10.244.1.0/24",
                "providerID": "gce://p/z/gpu-a-1",
                "taints": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}],
                "unschedulable": True,
            },
            "status": {
                "addresses": [{"address": "10.0.0.5", "type": "InternalIP"}],
                "allocatable": {"cpu": "15890m", "memory": "57Gi", "nvidia.com/gpu": "8", "pods": "110"},
                "capacity": {"cpu": "16", "memory": "60Gi", "nvidia.com/gpu": "8", "pods": "110"},
                "conditions": [
                    {
                        "lastHeartbeatTime": "2025-06-01T11:59:00Z",
                        "lastTransitionTime": "2025-05-01T10:00:00Z",
                        "message": "kubelet has sufficient memory available",
                        "reason": "KubeletHasSufficientMemory",
                        "status": "False",
                        "type": "MemoryPressure",
                    },
                    {
                        "lastHeartbeatTime": "2025-06-01T11:59:00Z",
                        "lastTransitionTime": "2025-05-01T10:01:00Z",
                        "message": "kubelet is posting ready status",
                        "reason": "KubeletReady",
                        "status": "True",
                        "type": "Ready",
                    },
                ],
                "nodeInfo": {"kubeletVersion": "v1.33.1", "architecture": "amd64"},
                "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320000}],
            },
        }
    ],
}


def test_nodes_as_kubectl_prints_them() -> None:
    state = loader.build_state([KUBECTL_NODES])
    n = state.nodes["gpu-a-1"]
    assert n.labels[BLOCK] == "b1"
    assert n.allocatable == {"cpu": 15890, "memory": 57 * 2**30, "nvidia.com/gpu": 8, "pods": 110}
    assert n.taints == [m.Taint("nvidia.com/gpu", "present", "NoSchedule")]
    assert n.unschedulable and n.ready


# kueue pkg/controller/tas/pod_usage_controller_test.go TestBelongsToNonTASCache
@pytest.mark.parametrize(
    ("name", "manifest", "counted"),
    [
        ("scheduled non-TAS pod", pod("pod", "node-a", {"cpu": "1"}), True),
        ("running non-TAS pod", pod("pod", "node-a", {"cpu": "1"}, "Running"), True),
        ("unscheduled pod", pod("pod", None, {"cpu": "1"}), False),
        ("scheduled succeeded non-TAS pod", pod("pod", "node-a", {"cpu": "1"}, "Succeeded"), False),
        ("scheduled failed non-TAS pod", pod("pod", "node-a", {"cpu": "1"}, "Failed"), False),
        (
            "scheduled TAS pod",
            {
                **pod("pod", "node-a", {"cpu": "1"}),
                "metadata": {
                    "name": "pod",
                    "namespace": "ns",
                    "annotations": {"kueue.x-k8s.io/podset-required-topology": RACK},
                },
            },
            False,
        ),
    ],
)
def test_pods_that_use_node_capacity(name: str, manifest: dict[str, Any], counted: bool) -> None:
    state = loader.build_state([manifest])
    assert [p.name for p in state.node_pods] == (["pod"] if counted else [])


@pytest.mark.parametrize("engine", ENGINES)
def test_a_running_pod_takes_capacity_from_its_node(engine: str) -> None:
    """r1-n1 runs a 2-cpu pod: the 2-pod workload asking for one rack gets r2."""
    if engine == "native" and not native_available():
        pytest.skip("the native engine is not built")
    objs = rack_cluster() + [
        pod("busy", "r1-n1", {"cpu": "2"}, "Running"),
        workload("w", pod_set("main", 2, {"cpu": "2"}, required=RACK), queue="tas"),
    ]
    cluster = Cluster.from_objects(objs, engine=engine)
    cluster.run_cycle()
    ta = cluster.decision("default/w").pod_sets[0].topology_assignment
    assert ta is not None
    assert (list(ta.levels), list(ta.domains)) == ([HOST], [(("r2-n1",), 1), (("r2-n2",), 1)])


# --- topology requests from jobs -----------------------------------------------------------------


def a_job(annotations: dict[str, str], parallelism: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "tas"}},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "suspend": True,
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                    ],
                },
            },
        },
    }


@pytest.mark.parametrize(
    ("annotations", "request_"),
    [
        ({"kueue.x-k8s.io/podset-required-topology": RACK}, m.TopologyRequest(required=RACK)),
        ({"kueue.x-k8s.io/podset-preferred-topology": RACK}, m.TopologyRequest(preferred=RACK)),
        ({"kueue.x-k8s.io/podset-unconstrained-topology": "true"}, m.TopologyRequest(unconstrained=True)),
        (
            {
                "kueue.x-k8s.io/podset-required-topology": BLOCK,
                "kueue.x-k8s.io/podset-slice-required-topology": RACK,
                "kueue.x-k8s.io/podset-slice-size": "2",
            },
            m.TopologyRequest(required=BLOCK, slice_topology=RACK, slice_size=2),
        ),
        ({}, None),
    ],
)
def test_job_annotations_ask_for_a_topology(annotations: dict[str, str], request_: Any) -> None:
    state = loader.build_state([*rack_cluster(), a_job(annotations)])
    (wl,) = state.workloads.values()
    assert wl.pod_sets[0].topology_request == request_


@pytest.mark.parametrize(
    ("annotations", "field", "text"),
    [
        (
            {"kueue.x-k8s.io/podset-slice-required-topology": RACK},
            "annotations[kueue.x-k8s.io/podset-slice-size]",
            "must be set when",
        ),
        (
            {"kueue.x-k8s.io/podset-slice-required-topology": RACK, "kueue.x-k8s.io/podset-slice-size": "3"},
            "annotations[kueue.x-k8s.io/podset-slice-size]",
            "must not be greater than pod set count 2",
        ),
        (
            {
                "kueue.x-k8s.io/podset-required-topology": RACK,
                "kueue.x-k8s.io/podset-preferred-topology": RACK,
            },
            "annotations",
            "must not contain more than one topology annotation",
        ),
        (
            {"kueue.x-k8s.io/podset-unconstrained-topology": "yes"},
            "annotations[kueue.x-k8s.io/podset-unconstrained-topology]",
            "must be a boolean value",
        ),
        (
            {"kueue.x-k8s.io/podset-slice-required-topology-constraints": LAYERS},
            "annotations[kueue.x-k8s.io/podset-slice-required-topology-constraints]",
            "multi-layer slice constraints",
        ),
    ],
)
def test_bad_job_topology_annotations_name_the_annotation(
    annotations: dict[str, str], field: str, text: str
) -> None:
    with pytest.raises(InputError) as e:
        loader.build_state([*rack_cluster(), a_job(annotations)])
    assert e.value.obj == "Job/default/j"
    assert e.value.field == f"spec.template.metadata.{field}"
    assert text in str(e.value)


def test_jobset_replicated_jobs_are_sub_groups() -> None:
    """Kueue's JobSet integration: each replicated job's pods are a sub-group
    (the job index label), as many as its replicas."""
    job_template = a_job({"kueue.x-k8s.io/podset-required-topology": RACK})["spec"]
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "tas"}},
        "spec": {
            "suspend": True,
            "replicatedJobs": [{"name": "workers", "replicas": 2, "template": {"spec": job_template}}],
        },
    }
    state = loader.build_state([*rack_cluster(), jobset])
    (wl,) = state.workloads.values()
    assert wl.pod_sets[0].count == 4
    assert wl.pod_sets[0].topology_request == m.TopologyRequest(required=RACK)
    raw_request = wl.raw["spec"]["podSets"][0]["topologyRequest"]
    assert raw_request["subGroupIndexLabel"] == "jobset.sigs.k8s.io/job-index"
    assert raw_request["subGroupCount"] == 2


# --- refusals ------------------------------------------------------------------------------------


def _with_unhealthy_node(objs: list[dict[str, Any]]) -> None:
    w = workload(
        "w",
        pod_set("main", 1, {"cpu": "1"}, required=RACK),
        queue="tas",
        admission=admission(
            "tas", psa("main", {"cpu": ("tas-flavor", "1")}, placement=placement([HOST], (["r1-n1"], 1)))
        ),
        reserved_at=0,
    )
    w["status"]["unhealthyNodes"] = [{"name": "r1-n1"}]
    objs.append(w)


def _with_layers(objs: list[dict[str, Any]]) -> None:
    ps = pod_set("main", 4, {"cpu": "1"}, required=RACK)
    ps["topologyRequest"]["podsetSliceRequiredTopologyConstraints"] = [
        {"topology": RACK, "size": 2},
        {"topology": HOST, "size": 1},
    ]
    objs.append(workload("w", ps, queue="tas"))


def _with_provisioning(objs: list[dict[str, Any]]) -> None:
    objs.append(admission_check("prov", "kueue.x-k8s.io/provisioning-request"))
    cq = next(o for o in objs if o["kind"] == "ClusterQueue")
    cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "prov"}]}


@pytest.mark.parametrize(
    ("change", "obj", "field", "text"),
    [
        (_with_unhealthy_node, "Workload/default/w", "status.unhealthyNodes", "node replacement"),
        (
            _with_layers,
            "Workload/default/w",
            "spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints",
            "multi-layer slice constraints",
        ),
        (
            _with_provisioning,
            "ClusterQueue/tas",
            "spec.admissionChecksStrategy",
            "delays the topology assignment",
        ),
    ],
    ids=["unhealthy nodes", "multi-layer slices", "provisioning request on a TAS flavor"],
)
def test_what_is_refused_names_the_field(change: Any, obj: str, field: str, text: str) -> None:
    objs = copy.deepcopy(rack_cluster())
    change(objs)
    with pytest.raises(InputError) as e:
        loader.build_state(objs)
    errors = getattr(e.value, "errors", [e.value])
    assert any(x.obj == obj and x.field == field and text in str(x) for x in errors), [str(x) for x in errors]


@pytest.mark.parametrize(("gate", "default"), sorted(TAS_GATES.items()))
def test_tas_gates_other_than_kueues_default_are_refused(gate: str, default: bool) -> None:
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "featureGates": {gate: not default},
    }
    with pytest.raises(InputError) as e:
        loader.build_state([config, *rack_cluster()])
    assert (e.value.obj, e.value.field) == ("Configuration", f"featureGates[{gate}]")
    # the default value is accepted, and the gates do not matter without a TAS flavor
    loader.build_state([{**config, "featureGates": {gate: default}}, *rack_cluster()])
    loader.build_state([config])
