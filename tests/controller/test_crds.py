"""`kueue-fast manifests crds`: CRDs generated from the loader's field
definitions (kueue_fast/api/fields.py), so that the API server validates what
kueue-fast validates; applied over a cluster whose CRDs stored v1beta1; the
v1beta1 objects they cannot convert left alone by the controller.

The drift tests walk the declarations: every object the loader checks strictly
is closed in the schema and the other way round (an unknown field anywhere is
the loader's error and the schema's pruning), every enum is both, and the
inputs the loader accepts (scenarios, Kueue's examples) pass the schemas."""

from __future__ import annotations

import copy
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_apiserver import FakeAPIServer, _coerce, _structural_errors
from kf_harness import (
    CLUSTER_QUEUES,
    RESOURCE_FLAVORS,
    WORKLOADS,
    ApiError,
    Harness,
    KubeClient,
    Resource,
    cluster_queue,
    flavor,
    job,
    local_queue,
    wait_for,
)

from kueue_fast.api import fields as af
from kueue_fast.api.errors import InputError
from kueue_fast.api.field_types import OBJECT, Field
from kueue_fast.commands import manifests
from kueue_fast.commands.cli import main
from kueue_fast.kube import crds as gen
from kueue_fast.loader import Document, build_state, read_documents

JSON = dict[str, Any]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)
ROOT = Path(__file__).resolve().parent.parent


# --- a cluster whose CRDs stored v1beta1 ------------------------------------------------------------


def older_crds(stored: str) -> list[JSON]:
    """The six CRDs as an earlier Kueue installed them: ``stored`` the only
    version (open schemas: what matters here is the versions)."""
    return [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": c["metadata"]["name"]},
            "spec": {
                "group": c["spec"]["group"],
                "names": c["spec"]["names"],
                "scope": c["spec"]["scope"],
                "versions": [
                    {
                        "name": stored,
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                        "subresources": {"status": {}},
                    }
                ],
            },
        }
        for c in manifests.crds()
    ]


def kubectl_apply(kube: KubeClient, crd: JSON) -> JSON:
    """What `kubectl apply` of a CRD over an existing one sends (the
    merged object, with the live resourceVersion)."""
    live = kube.get(CRDS, crd["metadata"]["name"])
    body = {**copy.deepcopy(crd), "status": live.get("status")}
    body["metadata"] = {**crd["metadata"], "resourceVersion": live["metadata"]["resourceVersion"]}
    return kube.update(CRDS, body)


@pytest.fixture
def bare_api(tmp_path: Path) -> Iterator[tuple[FakeAPIServer, KubeClient]]:
    api = FakeAPIServer(bookmark_interval=0.2).start()
    kube = KubeClient.from_config(api.write_kubeconfig(str(tmp_path / "kc")), qps=1000, burst=1000)
    try:
        yield api, kube
    finally:
        kube.close()
        api.stop()


@pytest.mark.parametrize(
    "stored", [["v1beta1"], ["v1beta1", "v1beta2"]], ids=["stored-v1beta1", "upgraded-to-v1beta2"]
)
def test_manifests_crds_apply_over_crds_that_stored_v1beta1(
    bare_api: tuple[FakeAPIServer, KubeClient], stored: list[str]
) -> None:
    """Issue 12 item 4: the API server answered 422 (status.storedVersions[0]:
    "v1beta1" must appear in spec.versions) to CRDs that served only v1beta2."""
    api, kube = bare_api
    for c in older_crds(stored[-1]):
        api.install_crd(c, stored_versions=stored)
    for c in manifests.crds():
        out = kubectl_apply(kube, c)
        assert out["status"]["storedVersions"] == ["v1beta1", "v1beta2"], c["metadata"]["name"]
        assert [(v["name"], v["storage"]) for v in out["spec"]["versions"]] == [
            ("v1beta2", True),
            ("v1beta1", False),
        ]


def test_a_crd_update_that_drops_a_stored_version_is_refused_as_the_api_server_does(
    bare_api: tuple[FakeAPIServer, KubeClient],
) -> None:
    api, kube = bare_api
    (cq,) = [c for c in older_crds("v1beta1") if c["spec"]["names"]["kind"] == "ClusterQueue"]
    api.install_crd(cq, stored_versions=["v1beta1"])
    only_v1beta2 = copy.deepcopy(manifests.crds()[1])
    assert only_v1beta2["spec"]["names"]["kind"] == "ClusterQueue"
    only_v1beta2["spec"]["versions"] = only_v1beta2["spec"]["versions"][:1]
    with pytest.raises(ApiError) as e:
        kubectl_apply(kube, only_v1beta2)
    assert e.value.status == 422
    assert e.value.message == (
        'CustomResourceDefinition.apiextensions.k8s.io "clusterqueues.kueue.x-k8s.io" is invalid: '
        'status.storedVersions[0]: Invalid value: "v1beta1": must appear in spec.versions'
    )


def test_v1beta1_is_served_only_where_the_api_server_converts_it_exactly(
    bare_api: tuple[FakeAPIServer, KubeClient],
) -> None:
    api, kube = bare_api
    for c in manifests.crds():
        kube.create(CRDS, c)
    served = {
        c["spec"]["names"]["kind"]: gen.served_old_version(c["spec"]["names"]["kind"])
        for c in manifests.crds()
    }
    assert served == {
        "ResourceFlavor": True,
        "ClusterQueue": False,  # cohort -> cohortName, admissionChecks -> admissionChecksStrategy
        "Cohort": True,
        "LocalQueue": True,
        "WorkloadPriorityClass": True,
        "Workload": False,  # priorityClassName/Source -> priorityClassRef
        "AdmissionCheck": False,  # v1beta1 spec.retryDelayMinutes
        "Topology": True,
    }
    old_rf = Resource("kueue.x-k8s.io", "v1beta1", "resourceflavors", "ResourceFlavor", False)
    rf = {**flavor("spot", {"pool": "spot"}), "apiVersion": "kueue.x-k8s.io/v1beta1"}
    kube.create(old_rf, rf)
    got = kube.get(RESOURCE_FLAVORS, "spot")
    assert got["apiVersion"] == "kueue.x-k8s.io/v1beta2" and got["spec"] == {"nodeLabels": {"pool": "spot"}}
    old_cq = Resource("kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue", False)
    with pytest.raises(ApiError) as e:
        kube.create(
            old_cq, {**cluster_queue("cq", {"spot": {"cpu": "1"}}), "apiVersion": "kueue.x-k8s.io/v1beta1"}
        )
    assert e.value.status == 404


def test_the_api_server_validates_with_the_loaders_rules(bare_api: tuple[FakeAPIServer, KubeClient]) -> None:
    api, kube = bare_api
    for c in manifests.crds():
        kube.create(CRDS, c)
    bad = cluster_queue("cq", {"rf": {"cpu": "1"}})
    bad["spec"]["queueingStrategy"] = "FIFO"
    with pytest.raises(ApiError) as e:
        kube.create(CLUSTER_QUEUES, bad)
    assert e.value.status == 422
    assert (
        'spec.queueingStrategy: Unsupported value: "FIFO": supported values: "StrictFIFO", "BestEffortFIFO"'
        in (e.value.message)
    )
    typo = cluster_queue("cq", {"rf": {"cpu": "1"}})
    typo["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuoto"] = "2"
    path = CLUSTER_QUEUES.path()
    with pytest.raises(ApiError) as e:  # kubectl's default: fieldValidation=Strict
        kube.request("POST", path, query={"fieldValidation": "Strict"}, body=typo)
    assert e.value.status == 400
    assert 'unknown field "spec.resourceGroups[0].flavors[0].resources[0].nominalQuoto"' in e.value.message
    bad_quantity = cluster_queue("cq", {"rf": {"cpu": "one"}})
    with pytest.raises(ApiError) as e:
        kube.create(CLUSTER_QUEUES, bad_quantity)
    assert "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value" in e.value.message


def test_crds_are_structural_and_describe_every_field() -> None:
    for c in manifests.crds():
        for i, v in enumerate(c["spec"]["versions"]):
            s = v["schema"]["openAPIV3Schema"]
            assert _structural_errors(s, "openAPIV3Schema") == []
            undescribed = [
                p
                for p, node in _nodes(s, "")
                if p and not p.endswith("metadata") and not node.get("description")
            ]
            # items and map values are described by their array or map
            assert [p for p in undescribed if not p.endswith(("[]", "{}"))] == [], (c["metadata"]["name"], i)


def _nodes(s: JSON, path: str) -> Iterator[tuple[str, JSON]]:
    yield path, s
    for k, sub in (s.get("properties") or {}).items():
        yield from _nodes(sub, f"{path}.{k}" if path else k)
    if isinstance(s.get("items"), dict):
        yield from _nodes(s["items"], path + "[]")
    if isinstance(s.get("additionalProperties"), dict):
        yield from _nodes(s["additionalProperties"], path + "{}")


def test_manifests_crds_says_when_not_to_apply_them(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["manifests", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Kueue's own CRDs" in help_text and "do not apply" in help_text.lower()
    assert main(["manifests", "crds"]) == 0
    out = capsys.readouterr().out
    assert (
        out.startswith("# Kueue's API") and "Do NOT apply these where Kueue's own CRDs are installed" in out
    )
    assert "&id" not in out  # no YAML anchors


# --- drift: the declarations, the loader and the schemas agree -----------------------------------------

QUOTA = {"name": "cpu", "nominalQuota": "4", "borrowingLimit": "2", "lendingLimit": "1"}
GROUPS = [{"coveredResources": ["cpu"], "flavors": [{"name": "rf", "resources": [QUOTA]}]}]
SELECTOR = {
    "matchLabels": {"team": "a"},
    "matchExpressions": [{"key": "env", "operator": "In", "values": ["x"]}],
}
COND = {
    "type": "QuotaReserved",
    "status": "True",
    "reason": "QuotaReserved",
    "message": "m",
    "lastTransitionTime": "2024-01-01T00:00:00Z",
    "observedGeneration": 1,
}
QUEUE_STATUS = {
    "pendingWorkloads": 1,
    "reservingWorkloads": 1,
    "admittedWorkloads": 1,
    "flavorsReservation": [{"name": "rf", "resources": [{"name": "cpu", "total": "1", "borrowed": "0"}]}],
    "flavorsUsage": [{"name": "rf", "resources": [{"name": "cpu", "total": "1", "borrowed": "0"}]}],
    "conditions": [{**COND, "type": "Active", "reason": "Ready"}],
}
POD_SET = {
    "name": "main",
    "count": 2,
    "minCount": 1,
    "template": {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    },
}
WL_STATUS = {
    "conditions": [COND],
    "admission": {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": "rf"}, "resourceUsage": {"cpu": "2"}, "count": 2}
        ],
    },
    "reclaimablePods": [{"name": "main", "count": 1}],
    "admissionChecks": [
        {
            "name": "ac",
            "state": "Retry",
            "message": "m",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
            "retryCount": 1,
            "requeueAfterSeconds": 60,
        }
    ],
}


def _cq_spec(api: str) -> JSON:
    spec: JSON = {
        "resourceGroups": GROUPS,
        "queueingStrategy": "StrictFIFO",
        "namespaceSelector": SELECTOR,
        "flavorFungibility": {
            "whenCanBorrow": "TryNextFlavor",
            "whenCanPreempt": "TryNextFlavor",
            "preference": "BorrowingOverPreemption",
        },
        "preemption": {
            "reclaimWithinCohort": "Any",
            "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 10},
            "withinClusterQueue": "LowerPriority",
        },
        "stopPolicy": "None",
        "fairSharing": {"weight": "2"},
        "admissionScope": {"admissionMode": "NoAdmissionFairSharing"},
    }
    spec["cohort" if api == af.V1BETA1 else "cohortName"] = "co"
    return spec


def _meta(name: str, namespaced: bool = False) -> JSON:
    return {"name": name, **({"namespace": "ns"} if namespaced else {})}


# (kind, apiVersion) -> objects that together hold every declared field the loader supports
EXAMPLES: dict[tuple[str, str], list[JSON]] = {}
for _api in (af.V1BETA1, af.V1BETA2):
    EXAMPLES[("ResourceFlavor", _api)] = [
        {
            "apiVersion": _api,
            "kind": "ResourceFlavor",
            "metadata": _meta("rf"),
            "spec": {
                "nodeLabels": {"pool": "a"},
                "topologyName": "topo",
                "nodeTaints": [
                    {"key": "k", "value": "v", "effect": "NoSchedule", "timeAdded": "2024-01-01T00:00:00Z"}
                ],
                "tolerations": [
                    {
                        "key": "k",
                        "operator": "Equal",
                        "value": "v",
                        "effect": "NoExecute",
                        "tolerationSeconds": 5,
                    }
                ],
            },
            "status": {},
        }
    ]
    cq = {
        "apiVersion": _api,
        "kind": "ClusterQueue",
        "metadata": _meta("cq"),
        "spec": _cq_spec(_api),
        "status": {**QUEUE_STATUS, "fairSharing": {"weightedShare": 0}},
    }
    strategy = {"admissionChecksStrategy": {"admissionChecks": [{"name": "ac", "onFlavors": ["rf"]}]}}
    checks = [strategy, {"admissionChecks": ["ac"]}] if _api == af.V1BETA1 else [strategy]
    EXAMPLES[("ClusterQueue", _api)] = [cq] + [{**cq, "spec": {**cq["spec"], **c}} for c in checks]
    EXAMPLES[("LocalQueue", _api)] = [
        {
            "apiVersion": _api,
            "kind": "LocalQueue",
            "metadata": _meta("lq", True),
            "spec": {"clusterQueue": "cq", "stopPolicy": "Hold", "fairSharing": {"weight": "1"}},
            "status": {
                **QUEUE_STATUS,
                "fairSharing": {"admissionFairSharingStatus": {"consumedResources": {"cpu": "1"}}},
            },
        }
    ]
    EXAMPLES[("WorkloadPriorityClass", _api)] = [
        {
            "apiVersion": _api,
            "kind": "WorkloadPriorityClass",
            "metadata": _meta("p"),
            "value": 10,
            "description": "d",
        }
    ]
    prio: JSON = (
        {"priorityClassName": "p", "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass"}
        if _api == af.V1BETA1
        else {"priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "p"}}
    )
    placement: JSON = (
        {"levels": ["rack"], "domains": [{"values": ["r1"], "count": 2}]}
        if _api == af.V1BETA1
        else {
            "levels": ["rack"],
            "slices": [
                {"domainCount": 1, "valuesPerLevel": [{"universal": "r1"}], "podCounts": {"universal": 2}}
            ],
        }
    )
    tas_status = {
        **WL_STATUS,
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {
                    **WL_STATUS["admission"]["podSetAssignments"][0],  # type: ignore[index]
                    "topologyAssignment": placement,
                    "delayedTopologyRequest": "Ready",
                }
            ],
        },
    }
    sliced = {
        "required": "block",
        "podIndexLabel": "batch.kubernetes.io/job-completion-index",
        "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
        "subGroupCount": 1,
        "podSetSliceRequiredTopology": "rack",
        "podSetSliceSize": 2,
    }
    requests: list[JSON] = [sliced, {"preferred": "rack"}, {"unconstrained": True}]
    if _api == af.V1BETA2:
        requests.append({"podsetSliceRequiredTopologyConstraints": [{"topology": "rack", "size": 2}]})
    EXAMPLES[("Workload", _api)] = [
        {
            "apiVersion": _api,
            "kind": "Workload",
            "metadata": _meta("wl", True),
            "spec": {
                "podSets": [{**POD_SET, **({"topologyRequest": tr} if tr else {})}],
                "queueName": "lq",
                "priority": 10,
                "active": True,
                "maximumExecutionTimeSeconds": 60,
                **prio,
            },
            "status": tas_status if tr is sliced else WL_STATUS,
        }
        for tr in [None, *requests]
    ]
    EXAMPLES[("Topology", _api)] = [
        {
            "apiVersion": _api,
            "kind": "Topology",
            "metadata": _meta("topo"),
            "spec": {"levels": [{"nodeLabel": "block"}, {"nodeLabel": "rack"}]},
            "status": {},
        }
    ]
for _api in (af.V1ALPHA1, af.V1BETA1, af.V1BETA2):
    EXAMPLES[("Cohort", _api)] = [
        {
            "apiVersion": _api,
            "kind": "Cohort",
            "metadata": _meta("co"),
            "spec": {"parentName": "root", "resourceGroups": GROUPS, "fairSharing": {"weight": "1"}},
            "status": {},
        }
    ]
for _api in (af.V1BETA1, af.V1BETA2):
    EXAMPLES[("AdmissionCheck", _api)] = [
        {
            "apiVersion": _api,
            "kind": "AdmissionCheck",
            "metadata": _meta("ac"),
            "spec": {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": "p",
                },
                **({"retryDelayMinutes": 15} if _api == af.V1BETA1 else {}),
            },
            "status": {"conditions": [{**COND, "type": "Active", "reason": "Active"}]},
        }
    ]
EXAMPLES[("Cohort", af.V1ALPHA1)].append({**EXAMPLES[("Cohort", af.V1ALPHA1)][0], "spec": {"parent": "root"}})

# declared so that they get kueue-fast's "not supported" error instead of "unknown field"
NOT_SUPPORTED = {
    "spec.concurrentAdmissionPolicy",
    "spec.excludeResourcePrefixes",
    "spec.podSets[].topologyRequest.podSetGroupName",
}
ALL_VERSIONS = sorted((k, a) for k, versions in af.KINDS.items() for a in versions)


def _declared(f: Field, path: str = "") -> Iterator[tuple[str, Field]]:
    """(path, field) of every declared field; "[]" stands for any item."""
    yield path, f
    for name, sub in f.fields.items():
        if not (path == "" and name == "metadata"):
            yield from _declared(sub, f"{path}.{name}" if path else name)
    if f.items is not None:
        yield from _declared(f.items, path + "[]")


def _instances(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(concrete path, value) of the values of ``value`` at a declared path."""
    if not path:
        yield "", value
        return
    head, _, rest = path.partition(".")
    name, items = (head[:-2], True) if head.endswith("[]") else (head, False)
    if not isinstance(value, dict) or name not in value:
        return
    sub = value[name]
    if not items:
        for p, v in _instances(sub, rest):
            yield (f"{name}.{p}" if p else name), v
    elif isinstance(sub, list):
        for i, x in enumerate(sub):
            for p, v in _instances(x, rest):
                yield (f"{name}[{i}].{p}" if p else f"{name}[{i}]"), v


def _load(obj: JSON) -> None:
    build_state([Document("example.yaml", 0, copy.deepcopy(obj))])


def _schema_of(kind: str, api: str) -> JSON:
    return gen.schema(af.KINDS[kind][api], root=True)


def _api_server(obj: JSON, kind: str, api: str) -> tuple[list[str], list[str]]:
    errs: list[str] = []
    pruned: list[str] = []
    _coerce(copy.deepcopy(obj), _schema_of(kind, api), "", errs, pruned, root=True)
    return errs, pruned


@pytest.mark.parametrize("kind,api", ALL_VERSIONS)
def test_examples_are_valid_for_the_loader_and_the_schema(kind: str, api: str) -> None:
    for obj in EXAMPLES[(kind, api)]:
        _load(obj)
        assert _api_server(obj, kind, api) == ([], [])


@pytest.mark.parametrize("kind,api", ALL_VERSIONS)
def test_examples_hold_every_declared_field(kind: str, api: str) -> None:
    missing = [
        p
        for p, _ in _declared(af.KINDS[kind][api])
        if p
        and p not in NOT_SUPPORTED
        and not any(p.startswith(n) for n in NOT_SUPPORTED)
        and not any(next(_instances(o, p), None) for o in EXAMPLES[(kind, api)])
    ]
    assert missing == []


@pytest.mark.parametrize("kind,api", ALL_VERSIONS)
def test_an_unknown_field_is_the_loaders_error_exactly_where_the_schema_prunes_it(
    kind: str, api: str
) -> None:
    """Closed in the declarations: refused by the loader and pruned by the
    API server; open: accepted by both."""
    for path, f in _declared(af.KINDS[kind][api]):
        if f.type != OBJECT or any(path.startswith(n) for n in NOT_SUPPORTED):
            continue
        for obj in EXAMPLES[(kind, api)]:
            found = next(_instances(obj, path), None)
            if found is None:
                continue
            where, value = found
            value["bogusField"] = 1
            try:
                field_path = f"{where}.bogusField" if where else "bogusField"
                errs, pruned = _api_server(obj, kind, api)
                if f.open:
                    _load(obj)
                    assert (errs, pruned) == ([], []), path
                else:
                    with pytest.raises(InputError) as e:
                        _load(obj)
                    assert e.value.field == field_path and 'unknown field "bogusField"' in str(e.value), path
                    assert (errs, pruned) == ([], [field_path]), path
            finally:
                del value["bogusField"]
            break


@pytest.mark.parametrize("kind,api", ALL_VERSIONS)
def test_every_enum_is_the_loaders(kind: str, api: str) -> None:
    for path, f in _declared(af.KINDS[kind][api]):
        if not f.enum:
            continue
        for obj in EXAMPLES[(kind, api)]:
            parent_path, _, name = path.rpartition(".")
            found = next(_instances(obj, parent_path), None)
            if found is None or not isinstance(found[1], dict) or name not in found[1]:
                continue
            where, parent = found
            old, parent[name] = parent[name], "Bogus"
            try:
                with pytest.raises(InputError) as e:
                    _load(obj)
                field_path = f"{where}.{name}" if where else name
                assert e.value.field == field_path and 'Unsupported value: "Bogus"' in str(e.value), path
                errs, _ = _api_server(obj, kind, api)
                assert any(x.startswith(f'{field_path}: Unsupported value: "Bogus"') for x in errs), path
            finally:
                parent[name] = old
            break
        else:
            raise AssertionError(f"no example holds {path}")


def _inputs() -> list[Path]:
    files = sorted((ROOT / "scenarios").glob("**/*.yaml")) + sorted((ROOT / "data").glob("**/*.yaml"))
    return [f for f in files if f.name != "jobset-crd.yaml"]


def test_what_the_loader_accepts_the_crds_accept() -> None:
    """Every object of Kueue's kinds in the scenarios and Kueue's examples
    that the loader reads passes the schema of its version, nothing pruned."""
    checked = 0
    for f in _inputs():
        try:
            docs = [d for d in read_documents([str(f)]) if d.obj.get("kind") != "Scenario"]
            build_state(docs)
        except InputError:
            continue  # a scenario of invalid input
        for d in docs:
            kind, api = d.obj.get("kind"), d.obj.get("apiVersion")
            if (kind, api) not in {(k, a) for k, a in ALL_VERSIONS if a != af.V1ALPHA1}:
                continue
            assert _api_server(d.obj, str(kind), str(api)) == ([], []), d.where
            checked += 1
    assert checked > 100


# --- the controller and objects stored in v1beta1 ------------------------------------------------------


def test_controller_leaves_objects_stored_in_v1beta1_alone(
    fake_cluster: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """A ClusterQueue and a Workload stored as v1beta1 under earlier CRDs come
    back unconverted (spec.cohort, spec.priorityClassName): any write would
    store them as v1beta2 and lose those fields. They are named in the log
    and never written."""
    h = fake_cluster
    assert h.fake is not None
    ns = h.namespace("team-a")
    h.create(flavor("rf"))
    old_cq = cluster_queue("old-cq", {"rf": {"cpu": "4"}})
    old_cq["spec"]["cohort"] = old_cq["spec"].pop("cohortName", "co")
    h.fake.put_stored(old_cq)
    h.create(local_queue(ns, "lq", "old-cq"))
    wl = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "old-wl", "namespace": ns},
        "spec": {"queueName": "lq", "priorityClassName": "high", "podSets": [POD_SET]},
    }
    h.fake.put_stored(wl)
    before = {
        k: h.get(r, n, s)
        for k, r, n, s in (("cq", CLUSTER_QUEUES, "old-cq", None), ("wl", WORKLOADS, "old-wl", ns))
    }
    with caplog.at_level(logging.ERROR, logger="kueue_fast.controller"):
        ctl = h.controller()
        wait_for(lambda: ctl.is_leader, what="leading")
        wait_for(
            lambda: ("cq", "old-cq") in ctl.unconverted and ("workload", f"{ns}/old-wl") in ctl.unconverted
        )
        time.sleep(1.0)  # a few status passes
    after = {
        k: h.get(r, n, s)
        for k, r, n, s in (("cq", CLUSTER_QUEUES, "old-cq", None), ("wl", WORKLOADS, "old-wl", ns))
    }
    assert after == before
    logged = [r.getMessage() for r in caplog.records if "leaving" in r.getMessage()]
    assert any("ClusterQueue/old-cq" in m and "spec.cohort" in m and "v1beta1" in m for m in logged), logged
    assert any(f"Workload/{ns}/old-wl" in m and "spec.priorityClassName" in m for m in logged), logged
    # once rewritten in v1beta2, it is used (and written) again
    fixed = h.get(CLUSTER_QUEUES, "old-cq")
    assert fixed is not None
    fixed["spec"]["cohortName"] = fixed["spec"].pop("cohort")
    h.kube.update(CLUSTER_QUEUES, fixed)
    wait_for(
        lambda: ((h.get(CLUSTER_QUEUES, "old-cq") or {}).get("status") or {}).get("conditions"), what="status"
    )
    assert ("cq", "old-cq") not in ctl.unconverted


def test_kubectl_apply_of_a_v1beta1_clusterqueue_is_refused_not_mistranslated(fake_cluster: Harness) -> None:
    h = fake_cluster
    old = Resource("kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue", False)
    cq = {**cluster_queue("cq", {"rf": {"cpu": "1"}}, cohort="co"), "apiVersion": "kueue.x-k8s.io/v1beta1"}
    cq["spec"]["cohort"] = cq["spec"].pop("cohortName")
    with pytest.raises(ApiError) as e:
        h.kube.create(old, cq)
    assert e.value.status == 404
    assert h.get(CLUSTER_QUEUES, "cq") is None


def test_job_fits_the_crds(fake_cluster: Harness) -> None:
    """A plain flow writes nothing the CRDs prune (the harness checks every test)."""
    h = fake_cluster
    ns = h.namespace("a")
    h.create(flavor("rf"))
    h.create(cluster_queue("cq", {"rf": {"cpu": "2"}}))
    h.create(local_queue(ns, "lq", "cq"))
    h.controller()
    h.create(job(ns, "j", "lq"))
    wait_for(lambda: (h.workload_of(ns, "j") or {}).get("status", {}).get("admission"), what="admission")
    assert h.fake is not None and h.fake.pruned == []
    assert json.dumps(manifests.crds())  # plain JSON data
