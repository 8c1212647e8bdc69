"""The in-process API server speaks the API as the controller needs it, to
the official client: list/watch with resourceVersions, bookmarks and 410,
patches of every kind, server-side apply, the status subresource,
optimistic concurrency, owner references, label selectors, Job rules."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_apiserver import (
    FakeAPIServer,
    json_patch,
    merge_patch,
    parse_label_selector,
    selector_matches,
    strategic_merge,
)
from kf_harness import JOBS, NAMESPACES, RESOURCE_FLAVORS, WORKLOADS, job, wait_for

from kueue_fast.commands import manifests
from kueue_fast.kube.client import EVENTS, KUEUE_API, LEASES, STRATEGIC, ApiError, KubeClient

JSON = dict[str, Any]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[FakeAPIServer, KubeClient]]:
    api = FakeAPIServer(crds=manifests.crds(), bookmark_interval=0.1, job_controller=False)
    api.start()
    client = KubeClient.from_config(api.write_kubeconfig(str(tmp_path / "kc")), max_retries=0)
    client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    try:
        yield api, client
    finally:
        client.close()
        api.stop()


def wl(name: str, labels: dict[str, str] | None = None) -> JSON:
    return {
        "apiVersion": KUEUE_API,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ns", "labels": labels or {}},
        "spec": {
            "queueName": "lq",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
                    },
                }
            ],
        },
    }


def test_the_official_typed_client_works_against_it(
    env: tuple[FakeAPIServer, KubeClient], tmp_path: Path
) -> None:
    from kubernetes import client, config

    api, _ = env
    cfg = client.Configuration()
    config.load_kube_config(config_file=api.write_kubeconfig(str(tmp_path / "kc2")), client_configuration=cfg)
    with client.ApiClient(cfg) as ac:
        batch = client.BatchV1Api(ac)
        created = batch.create_namespaced_job("ns", job("ns", "typed", "lq"))
        assert created.spec.parallelism == 1 and created.metadata.uid
        got = batch.read_namespaced_job("typed", "ns")
        assert got.metadata.resource_version == created.metadata.resource_version
        jobs = batch.list_namespaced_job("ns", label_selector="kueue.x-k8s.io/queue-name=lq")
        assert [j.metadata.name for j in jobs.items] == ["typed"]
        co = client.CustomObjectsApi(ac)
        co.create_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", "ns", "workloads", wl("w"))
        lst = co.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", "ns", "workloads")
        assert [i["metadata"]["name"] for i in lst["items"]] == ["w"]


def test_optimistic_concurrency_and_status_subresource(env: tuple[FakeAPIServer, KubeClient]) -> None:
    _, c = env
    w = c.create(WORKLOADS, wl("w"), "ns")
    assert w["metadata"]["generation"] == 1 and "status" not in w
    # the main resource ignores status; /status ignores the rest
    w2 = c.patch(WORKLOADS, "w", {"spec": {"queueName": "other"}, "status": {"x": 1}}, namespace="ns")
    assert w2["spec"]["queueName"] == "other" and "status" not in w2 and w2["metadata"]["generation"] == 2
    w3 = c.patch(
        WORKLOADS, "w", {"spec": {"queueName": "again"}, "status": {"x": 1}}, namespace="ns", sub="status"
    )
    assert (
        w3["spec"]["queueName"] == "other" and w3["status"] == {"x": 1} and w3["metadata"]["generation"] == 2
    )
    with pytest.raises(ApiError) as e:
        c.patch(
            WORKLOADS,
            "w",
            {"metadata": {"resourceVersion": w["metadata"]["resourceVersion"]}, "spec": {"active": False}},
            namespace="ns",
        )
    assert e.value.status == 409
    with pytest.raises(ApiError) as e:
        c.update(WORKLOADS, w)
    assert e.value.status == 409
    with pytest.raises(ApiError) as e:
        c.create(WORKLOADS, wl("w"), "ns")
    assert e.value.status == 409 and e.value.reason == "AlreadyExists"
    with pytest.raises(ApiError) as e:
        c.patch(
            WORKLOADS,
            "w",
            {"spec": {}},
            namespace="ns",
            content_type="application/strategic-merge-patch+json",
        )
    assert e.value.status == 415  # custom resources take no strategic merge patch


def test_server_side_apply_owns_and_removes_fields(env: tuple[FakeAPIServer, KubeClient]) -> None:
    _, c = env
    c.create(WORKLOADS, wl("w"), "ns")

    def apply(status: JSON, manager: str = "m") -> JSON:
        body = {
            "apiVersion": KUEUE_API,
            "kind": "Workload",
            "metadata": {"name": "w", "namespace": "ns"},
            "status": status,
        }
        return c.apply(WORKLOADS, body, field_manager=manager, sub="status")

    cnd = [
        {
            "type": "A",
            "status": "True",
            "reason": "r",
            "message": "",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
        }
    ]
    adm = {"clusterQueue": "cq", "podSetAssignments": [{"name": "main", "flavors": {"cpu": "f"}, "count": 1}]}
    out = apply({"admission": adm, "conditions": cnd})
    assert out["status"]["admission"] == adm
    other = apply({"conditions": [{**cnd[0], "type": "B"}]}, manager="other")
    assert [x["type"] for x in other["status"]["conditions"]] == ["A", "B"]
    out = apply({"conditions": cnd})  # admission no longer applied by its owner: removed
    assert "admission" not in out["status"]
    assert [x["type"] for x in out["status"]["conditions"]] == ["A", "B"]


def test_patch_flavours() -> None:
    assert merge_patch({"a": {"b": 1, "c": 2}}, {"a": {"b": None, "d": 3}}) == {"a": {"c": 2, "d": 3}}
    got = strategic_merge(
        {"containers": [{"name": "a", "image": "x"}], "finalizers": ["f"]},
        {"containers": [{"name": "a", "image": "y"}, {"name": "b"}], "finalizers": ["g"]},
    )
    assert got == {"containers": [{"name": "a", "image": "y"}, {"name": "b"}], "finalizers": ["f", "g"]}
    doc = {"a": [1, 2], "b": {"c~d": 1}}
    assert json_patch(
        doc,
        [
            {"op": "add", "path": "/a/-", "value": 3},
            {"op": "remove", "path": "/b/c~0d"},
            {"op": "test", "path": "/a/0", "value": 1},
        ],
    ) == {"a": [1, 2, 3], "b": {}}


def test_label_selectors() -> None:
    sel = parse_label_selector("a=1,b!=2,c in (x, y),!d,e")
    assert selector_matches(sel, {"a": "1", "c": "x", "e": ""})
    assert not selector_matches(sel, {"a": "1", "c": "z", "e": ""})
    assert not selector_matches(sel, {"a": "1", "c": "x", "e": "", "d": "1"})


def test_list_pages_and_watch_with_bookmarks_and_410(env: tuple[FakeAPIServer, KubeClient]) -> None:
    api, c = env
    for i in range(5):
        c.create(WORKLOADS, wl(f"w{i}", {"keep": "yes" if i % 2 == 0 else "no"}), "ns")
    page = c.list(WORKLOADS, limit=2)
    names = [i["metadata"]["name"] for i in page["items"]]
    while page["metadata"].get("continue"):
        page = c.list(WORKLOADS, limit=2, continue_=page["metadata"]["continue"])
        names += [i["metadata"]["name"] for i in page["items"]]
    assert names == [f"w{i}" for i in range(5)]
    rv = page["metadata"]["resourceVersion"]
    events: list[tuple[str, str]] = []

    def watch() -> None:
        for ev in c.watch(WORKLOADS, resource_version=rv, label_selector="keep=yes", timeout_seconds=2):
            events.append((ev["type"], ev["object"]["metadata"].get("name", "")))

    t = threading.Thread(target=watch)
    t.start()
    time.sleep(0.2)
    c.patch(
        WORKLOADS, "w1", {"metadata": {"labels": {"keep": "yes"}}}, namespace="ns"
    )  # starts matching: ADDED
    c.patch(
        WORKLOADS, "w0", {"metadata": {"labels": {"keep": "no"}}}, namespace="ns"
    )  # stops matching: DELETED
    c.delete(WORKLOADS, "w2", "ns")
    t.join(5)
    real = [e for e in events if e[0] != "BOOKMARK"]
    assert real == [("ADDED", "w1"), ("DELETED", "w0"), ("DELETED", "w2")]
    assert ("BOOKMARK", "") in events
    api.compact()
    first = next(iter(c.watch(WORKLOADS, resource_version=rv, timeout_seconds=1)))
    assert first["type"] == "ERROR" and first["object"]["code"] == 410


def test_owner_references_and_finalizers(env: tuple[FakeAPIServer, KubeClient]) -> None:
    api, c = env
    j = c.create(JOBS, job("ns", "owner", "lq"), "ns")
    w = wl("dep")
    w["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "owner",
            "uid": j["metadata"]["uid"],
            "controller": True,
        }
    ]
    w["metadata"]["finalizers"] = ["kueue.x-k8s.io/resource-in-use"]
    c.create(WORKLOADS, w, "ns")
    c.delete(JOBS, "owner", "ns", propagation="Background")
    got = c.get(WORKLOADS, "dep", "ns")
    assert got["metadata"]["deletionTimestamp"]  # held by its finalizer
    c.patch(WORKLOADS, "dep", {"metadata": {"finalizers": None}}, namespace="ns")
    with pytest.raises(ApiError) as e:
        c.get(WORKLOADS, "dep", "ns")
    assert e.value.status == 404


def test_job_template_is_mutable_only_while_suspended_and_not_started(
    env: tuple[FakeAPIServer, KubeClient],
) -> None:
    api, c = env
    c.create(JOBS, job("ns", "j", "lq", suspend=True), "ns")
    ok = c.patch(
        JOBS,
        "j",
        {"spec": {"suspend": False, "template": {"spec": {"nodeSelector": {"a": "b"}}}}},
        namespace="ns",
    )
    assert ok["spec"]["template"]["spec"]["nodeSelector"] == {"a": "b"}
    c.patch(JOBS, "j", {"status": {"startTime": "2024-01-01T00:00:00Z"}}, namespace="ns", sub="status")
    c.patch(JOBS, "j", {"spec": {"suspend": True}}, namespace="ns")
    with pytest.raises(ApiError) as e:  # suspended, but started
        c.patch(JOBS, "j", {"spec": {"template": {"spec": {"nodeSelector": None}}}}, namespace="ns")
    assert e.value.status == 422
    c.patch(JOBS, "j", {"status": {"startTime": None}}, namespace="ns", sub="status")
    c.patch(JOBS, "j", {"spec": {"template": {"spec": {"nodeSelector": None}}}}, namespace="ns")
    with pytest.raises(ApiError) as e:  # containers are never mutable
        c.patch(
            JOBS,
            "j",
            {"spec": {"template": {"spec": {"containers": [{"name": "x", "image": "y"}]}}}},
            namespace="ns",
        )
    assert e.value.status == 422


def test_faults_and_retries(env: tuple[FakeAPIServer, KubeClient], tmp_path: Path) -> None:
    api, _ = env
    c = KubeClient.from_config(api.write_kubeconfig(str(tmp_path / "kc3")), max_retries=3, backoff_base=0.01)
    api.inject(status=429, retry_after=0, verb="get", resource="namespaces", count=2)
    api.inject(status=500, verb="get", resource="namespaces", count=1)
    assert c.get(NAMESPACES, "ns")["metadata"]["name"] == "ns"
    api.inject(status=500, verb="get", resource="namespaces", count=-1)
    with pytest.raises(ApiError) as e:
        c.get(NAMESPACES, "ns")
    assert e.value.status == 500
    api.clear_faults()
    api.inject(status=409, verb="get", resource="namespaces", count=1)
    with pytest.raises(ApiError) as e:  # a conflict is the caller's to handle
        c.get(NAMESPACES, "ns")
    assert e.value.status == 409
    c.close()
    wait_for(lambda: c.closed)


def test_namespaced_create_in_a_missing_or_terminating_namespace(
    env: tuple[FakeAPIServer, KubeClient],
) -> None:
    """As the real API server: 404 naming the namespace (so a Lease cannot
    be created without its namespace), 403 while it terminates; reads of a
    missing namespace's objects are plain 404s."""
    api, c = env
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {}}
    with pytest.raises(ApiError) as e:
        c.create(LEASES, lease, "nowhere")
    assert (e.value.status, e.value.message) == (404, 'namespaces "nowhere" not found')
    assert e.value.body["details"] == {"name": "nowhere", "kind": "namespaces"}
    with pytest.raises(ApiError) as e:
        c.get(LEASES, "l", "nowhere")
    assert e.value.status == 404 and "leases" in e.value.message
    # server-side apply creating an object is a create too
    with pytest.raises(ApiError) as e:
        c.apply(WORKLOADS, {**wl("w"), "metadata": {"name": "w", "namespace": "nowhere"}}, field_manager="m")
    assert e.value.status == 404 and "nowhere" in e.value.message
    # cluster-scoped objects have no namespace to miss
    c.create(
        RESOURCE_FLAVORS, {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": "rf"}}
    )

    c.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t", "finalizers": ["x"]}}
    )
    c.delete(NAMESPACES, "t")
    with pytest.raises(ApiError) as e:
        c.create(LEASES, lease, "t")
    assert e.value.status == 403 and "being terminated" in e.value.message


def _event(**kw: Any) -> JSON:
    ev: JSON = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "w.1", "namespace": "ns"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "type": "Normal",
        "reason": "QuotaReserved",
        "action": "QuotaReserved",
        "reportingController": "kueue-admission",
        "reportingInstance": "kueue-admission-host",
        "regarding": {"kind": "Workload", "namespace": "ns", "name": "w"},
        "note": "n",
    }
    ev.update(kw)
    return ev


def test_events_are_validated_as_the_api_server_does(env: tuple[FakeAPIServer, KubeClient]) -> None:
    _, c = env
    for bad in (
        {"eventTime": None},
        {"type": "Info"},
        {"action": ""},
        {"reportingInstance": "x" * 129},
        {"note": "x" * 1025},
        {"series": {"count": 1, "lastObservedTime": "2024-01-01T00:00:00.000000Z"}},
    ):
        with pytest.raises(ApiError) as e:
            c.create(EVENTS, _event(**bad), "ns")
        assert e.value.status == 422, bad
    c.create(EVENTS, _event(), "ns")
    series = {"series": {"count": 2, "lastObservedTime": "2024-01-01T00:00:01.000000Z"}}
    got = c.patch(EVENTS, "w.1", series, namespace="ns", content_type=STRATEGIC)
    assert got["series"]["count"] == 2 and got["note"] == "n"
    with pytest.raises(ApiError) as e:  # only the series may change
        c.patch(EVENTS, "w.1", {"note": "other"}, namespace="ns", content_type=STRATEGIC)
    assert e.value.status == 422 and "immutable" in e.value.message
