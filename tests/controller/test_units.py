"""Pieces of the controller on their own: Kueue's Job rules, statuses, the
token bucket, manifests, metrics endpoint."""

from __future__ import annotations

import hashlib
import threading
import urllib.request

import pytest
from kf_harness import Harness, cluster_queue, flavor, job, local_queue, wait_for
from test_e2e import running

from kueue_fast.cluster import status_writer as S
from kueue_fast.commands import manifests
from kueue_fast.controller import job_kinds as J
from kueue_fast.controller.prometheus import HealthServer
from kueue_fast.integrations import job as job_integration
from kueue_fast.integrations.framework import admitted_info
from kueue_fast.kube.client import TokenBucket


def test_workload_name_is_kueues() -> None:
    h = hashlib.sha1(b"Job\nbatch\nmy-job\nuid-1").hexdigest()[:5]
    assert J.workload_name("my-job", "uid-1") == f"job-my-job-{h}"
    long = "a" * 300
    name = J.workload_name(long, "u")
    assert len(name) == 253 and name.startswith("job-aaa") and name[-6] == "-"


def test_pods_count_and_finished() -> None:
    assert J.pods_count({"parallelism": 4, "completions": 2}) == 2
    assert J.pods_count({"parallelism": 3}) == 3
    assert J.finished({"status": {"conditions": [{"type": "Failed", "status": "True", "message": "m"}]}}) == (
        True,
        True,
        "m",
    )
    assert J.finished({"status": {}})[0] is False


def _job(
    suspend: bool,
    selector: dict[str, str],
    tolerations: list[dict[str, str]],
    start: bool = False,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict:  # type: ignore[type-arg]
    template: dict = {"spec": {"nodeSelector": selector, "tolerations": tolerations}}  # type: ignore[type-arg]
    if labels:
        template["metadata"] = {"labels": labels}
    return {
        "metadata": {"name": "j", "namespace": "n", "resourceVersion": "7", "annotations": annotations or {}},
        "spec": {"suspend": suspend, "parallelism": 1, "template": template},
        "status": {"startTime": "t"} if start else {},
    }


def _workload(selector: dict[str, str], tolerations: list[dict[str, str]]) -> dict:  # type: ignore[type-arg]
    template = {"spec": {"nodeSelector": selector, "tolerations": tolerations}}
    return {"spec": {"podSets": [{"name": "main", "count": 1, "template": template}]}}


def test_start_patch_merges_labels_and_tolerations_once() -> None:
    """podset.Merge: the flavor's nodeLabels and tolerations (once), the pod set label."""
    t1 = {"key": "a", "operator": "Exists"}
    f = {"spec": {"nodeLabels": {"pool": "x"}, "tolerations": [t1]}}
    info = admitted_info("main", 1, [f])
    start = job_integration.start_patch(_job(True, {"team": "t"}, [t1]), [info])
    assert start is not None and start.content_type == "application/merge-patch+json" and start.sub is None
    assert start.body == {
        "metadata": {"resourceVersion": "7"},
        "spec": {
            "suspend": False,
            "template": {
                "metadata": {"labels": {"kueue.x-k8s.io/podset": "main"}},
                "spec": {"nodeSelector": {"team": "t", "pool": "x"}},
            },
        },
    }
    running_job = _job(False, {"team": "t", "pool": "x"}, [t1], labels={"kueue.x-k8s.io/podset": "main"})
    assert job_integration.start_patch(running_job, [info]) is None


def test_stop_takes_three_steps() -> None:
    wl = _workload({"team": "t"}, [])
    podset = {"kueue.x-k8s.io/podset": "main"}
    running_job = _job(False, {"team": "t", "pool": "x"}, [{"key": "a"}], start=True, labels=podset)
    name, patch = job_integration.stop_step(running_job, wl)  # type: ignore[misc]
    assert name == "suspend" and patch.body["metadata"]["annotations"] == {J.STOPPING_ANNOTATION: "true"}
    stopping = {J.STOPPING_ANNOTATION: "true"}
    suspended = _job(
        True, {"team": "t", "pool": "x"}, [{"key": "a"}], start=True, annotations=stopping, labels=podset
    )
    name, patch = job_integration.stop_step(suspended, wl)  # type: ignore[misc]
    assert name == "clear-start" and patch.body["status"] == {"startTime": None} and patch.sub == "status"
    not_started = _job(True, {"team": "t", "pool": "x"}, [{"key": "a"}], annotations=stopping, labels=podset)
    name, patch = job_integration.stop_step(not_started, wl)  # type: ignore[misc]
    assert name == "restore"
    assert patch.body["spec"]["template"] == {
        "metadata": {"labels": None},
        "spec": {"nodeSelector": {"pool": None, "team": "t"}, "tolerations": None},
    }
    assert patch.body["metadata"]["annotations"] == {J.STOPPING_ANNOTATION: None}
    assert job_integration.stop_step(_job(True, {"team": "t"}, []), wl) is None


def test_conditions_keep_transition_time_unless_status_flips() -> None:
    c = S.set_condition([], "A", "True", "r", "m", 10**18, 1)
    c2 = S.set_condition(c, "A", "True", "r2", "m2", 2 * 10**18, 2)
    assert c2[0]["lastTransitionTime"] == c[0]["lastTransitionTime"] and c2[0]["reason"] == "r2"
    c3 = S.set_condition(c2, "A", "False", "r", "m", 2 * 10**18, 2)
    assert c3[0]["lastTransitionTime"] != c[0]["lastTransitionTime"]


def test_token_bucket() -> None:
    now = [0.0]
    b = TokenBucket(10, 2, clock=lambda: now[0])
    assert b.reserve() == 0 and b.reserve() == 0
    assert b.reserve() == pytest.approx(0.1)
    now[0] = 1.0
    assert b.reserve() == 0  # refilled (up to the burst)
    stop = threading.Event()
    stop.set()
    from kueue_fast.kube.client import ClientClosed

    tb = TokenBucket(1, 1, clock=lambda: 0.0)
    tb.take(stop)  # the burst: no wait
    with pytest.raises(ClientClosed):  # would wait a second: the client is closing
        tb.take(stop)


def test_manifests() -> None:
    crds = manifests.crds()
    assert sorted(c["spec"]["names"]["kind"] for c in crds) == sorted(
        [
            "ResourceFlavor",
            "ClusterQueue",
            "Cohort",
            "LocalQueue",
            "WorkloadPriorityClass",
            "Workload",
            "AdmissionCheck",
            "Topology",
        ]
    )
    for c in crds:
        v = c["spec"]["versions"][0]
        assert v["name"] == "v1beta2" and v["storage"] and v["schema"]["openAPIV3Schema"]["type"] == "object"
    docs = manifests.deploy(namespace="kf", image="example/kueue-fast:1")
    kinds = [d["kind"] for d in docs]
    assert {
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Deployment",
    } <= set(kinds)
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    verbs = {v for r in role["rules"] for v in r["verbs"]}
    assert "*" not in verbs and not verbs & {"deletecollection", "escalate", "bind", "impersonate"}
    resources = {res for r in role["rules"] for res in r["resources"]}
    assert not resources & {"secrets", "*"}
    # pods: read, and patched to ungate TAS pods (Kueue's TopologyUngater); never created or deleted
    assert [r["verbs"] for r in role["rules"] if "pods" in r["resources"]] == [
        ["get", "list", "watch", "patch"]
    ]
    dep = next(d for d in docs if d["kind"] == "Deployment")
    assert dep["metadata"]["namespace"] == "kf"
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "example/kueue-fast:1"
    with pytest.raises(ValueError):
        manifests.deploy_yaml(namespace="Bad Name")


def test_metrics_health_and_ready_endpoints(fake_cluster: Harness) -> None:
    h = fake_cluster
    ns = h.namespace("m")
    h.create(flavor("rf"))
    h.create(cluster_queue("cq", {"rf": {"cpu": "1"}}))
    h.create(local_queue(ns, "lq", "cq"))
    ctl = h.controller()
    srv = HealthServer("127.0.0.1:0", ctl.metrics, ctl.healthy, ctl.readiness)
    srv.start()
    try:
        h.create(job(ns, "a", "lq"))
        wait_for(lambda: running(h, ns, "a"), what="a running")
        base = f"http://{srv.address}"
        wait_for(lambda: urllib.request.urlopen(base + "/readyz").status == 200)
        with urllib.request.urlopen(base + "/healthz") as r:
            assert r.status == 200
        body = wait_for(
            lambda: (
                (b := urllib.request.urlopen(base + "/metrics").read().decode())
                and 'kueue_cluster_queue_resource_usage{cluster_queue="cq",cohort="",flavor="rf",resource="cpu"} 1.0'  # noqa: E501
                in b
                and b
            ),
            what="usage metric",
        )
        assert 'kueue_admitted_workloads_total{cluster_queue="cq"} 1.0' in body
        assert 'kueue_admission_attempts_total{result="success"}' in body
        assert (
            'kueue_cluster_queue_nominal_quota{cluster_queue="cq",cohort="",flavor="rf",resource="cpu"} 1.0'
            in body
        )
        assert "kueue_admission_wait_time_seconds_bucket" in body
        assert 'kueue_fast_api_requests_total{code="200",resource="workloads",verb="create"}' in body
    finally:
        srv.stop()
