# ruff: noqa: E501  (case tables read better one case per line)
"""Per-pod requests (kueue-semantics.md §2; k8s component-helpers PodRequests)."""

from __future__ import annotations

from typing import Any

import pytest

from kueue_fast.errors import ValidationError
from kueue_fast.requests import pod_requests, resources_validation_message

REF = "Workload/ns/wl"
PATH = "spec.podSets[0].template.spec"


def c(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """A container with the given requests/limits."""
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": "c", "resources": res, **extra}


def sidecar(requests: dict[str, Any]) -> dict[str, Any]:
    return c(requests, restartPolicy="Always")


CASES = [
    ("one container", {"containers": [c({"cpu": "1", "memory": "1Gi"})]}, {"cpu": 1000, "memory": 2**30}),
    ("containers are summed", {"containers": [c({"cpu": "1"}), c({"cpu": "500m"})]}, {"cpu": 1500}),
    (
        "a limit stands in for a missing request",
        {"containers": [c(None, {"cpu": "2", "memory": "1Gi"})]},
        {"cpu": 2000, "memory": 2**30},
    ),
    (
        "a request wins over its limit",
        {"containers": [c({"cpu": "1"}, {"cpu": "2", "memory": "3"})]},
        {"cpu": 1000, "memory": 3},
    ),
    (
        "the semantics doc example: max(2, 3) + 0.5 overhead",
        {
            "containers": [c({"cpu": "1"}), c({"cpu": "1"})],
            "initContainers": [c({"cpu": "3"})],
            "overhead": {"cpu": "0.5"},
        },
        {"cpu": 3500},
    ),
    (
        "init containers below the sum do not count",
        {"containers": [c({"cpu": "2"})], "initContainers": [c({"cpu": "1"}), c({"cpu": "1500m"})]},
        {"cpu": 2000},
    ),
    (
        "an init container's own resource shows up",
        {"containers": [c({"cpu": "1"})], "initContainers": [c({"memory": "1Ki"})]},
        {"cpu": 1000, "memory": 1024},
    ),
    (
        "a sidecar is added to the containers",
        {"containers": [c({"cpu": "1"})], "initContainers": [sidecar({"cpu": "500m"})]},
        {"cpu": 1500},
    ),
    (
        "an init container after a sidecar needs the sidecar too",
        {"containers": [c({"cpu": "1"})], "initContainers": [sidecar({"cpu": "1"}), c({"cpu": "2"})]},
        {"cpu": 3000},
    ),
    (
        "an init container before a sidecar does not",
        {"containers": [c({"cpu": "1"})], "initContainers": [c({"cpu": "2"}), sidecar({"cpu": "1"})]},
        {"cpu": 2000},
    ),
    (
        "pod-level requests replace the aggregate for cpu and memory only",
        {
            "resources": {"requests": {"cpu": "4", "example.com/gpu": "9"}},
            "containers": [c({"cpu": "1", "example.com/gpu": "1", "memory": "1"})],
        },
        {"cpu": 4000, "example.com/gpu": 1, "memory": 1},
    ),
    (
        "a pod-level limit stands in for a missing pod-level request",
        {"resources": {"limits": {"memory": "2Gi"}}, "containers": [c({"memory": "1Gi"})]},
        {"memory": 2 * 2**30},
    ),
    (
        "overhead is added after the pod-level replacement",
        {
            "resources": {"requests": {"cpu": "4"}},
            "overhead": {"cpu": "100m"},
            "containers": [c({"cpu": "1"})],
        },
        {"cpu": 4100},
    ),
    (
        "quantities add exactly before rounding",
        {"containers": [c({"memory": "0.5"}), c({"memory": "0.5"})]},
        {"memory": 1},
    ),
    (
        "milli-cpu fractions add exactly too",
        {"containers": [c({"cpu": "0.0005"}), c({"cpu": "0.0005"})]},
        {"cpu": 1},
    ),
    ("no resources at all", {"containers": [{"name": "c"}]}, {}),
    ("zero requests are kept", {"containers": [c({"cpu": "0"})]}, {"cpu": 0}),
    (
        "YAML numbers are quantities",
        {"containers": [c({"cpu": 2, "memory": 0.5})]},
        {"cpu": 2000, "memory": 1},
    ),
]


@pytest.mark.parametrize(("spec", "want"), [(s, w) for _, s, w in CASES], ids=[n for n, _, _ in CASES])
def test_pod_requests(spec: dict[str, Any], want: dict[str, int]) -> None:
    got, over = pod_requests(spec, PATH, REF)
    assert got == want
    assert over == []


def test_requests_above_limits_are_reported_not_rejected() -> None:
    spec = {
        "initContainers": [c({"cpu": "3", "memory": "2"}, {"cpu": "2", "memory": "1"})],
        "containers": [c({"cpu": "1"}), c({"memory": "2Gi"}, {"memory": "1Gi"})],
    }
    got, over = pod_requests(spec, PATH, REF)
    assert got == {"cpu": 3000, "memory": 2**31}
    # pkg/workload/resources.go ValidateResources: init containers first
    assert over == [("initContainers[0]", ("cpu", "memory")), ("containers[1]", ("memory",))]
    assert resources_validation_message([[], over]) == (
        "resources validation failed: ["
        'spec.podSets[1].template.spec.initContainers[0]: Invalid value: ["cpu","memory"]: '
        "requests must not exceed its limits, "
        'spec.podSets[1].template.spec.containers[1]: Invalid value: ["memory"]: '
        "requests must not exceed its limits]"
    )


def test_pod_level_requests_above_limits_are_reported() -> None:
    spec = {"containers": [c()], "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}
    _, over = pod_requests(spec, PATH, REF)
    assert over == [("resources", ("cpu",))]
    assert resources_validation_message([over]) == (
        "resources validation failed: spec.podSets[0].template.spec.resources: "
        'Invalid value: ["cpu"]: requests must not exceed its limits'
    )


BAD = [
    (
        "pods requested by a container",
        {"containers": [c({"pods": "1"})]},
        f"{PATH}.containers[0].resources.requests[pods]",
        "reserved for internal kueue use",
    ),
    (
        "pods limited by an init container",
        {"containers": [c()], "initContainers": [c(None, {"pods": "1"})]},
        f"{PATH}.initContainers[0].resources.limits[pods]",
        "reserved",
    ),
    (
        "negative request",
        {"containers": [c({"cpu": "-1"})]},
        f"{PATH}.containers[0].resources.requests[cpu]",
        "greater than or equal to 0",
    ),
    (
        "negative limit",
        {"containers": [c(None, {"memory": "-1Gi"})]},
        f"{PATH}.containers[0].resources.limits[memory]",
        "greater than or equal to 0",
    ),
    (
        "bad quantity",
        {"containers": [c({"cpu": "one"})]},
        f"{PATH}.containers[0].resources.requests[cpu]",
        "not a quantity",
    ),
    ("containers missing", {"initContainers": []}, f"{PATH}.containers", "Required value"),
    ("containers not a list", {"containers": {"name": "c"}}, f"{PATH}.containers", "type array"),
    ("container not a map", {"containers": ["c"]}, f"{PATH}.containers[0]", "type object"),
    (
        "resources not a map",
        {"containers": [{"resources": ["cpu"]}]},
        f"{PATH}.containers[0].resources",
        "object",
    ),
    (
        "restartPolicy not a string",
        {"containers": [c()], "initContainers": [c(restartPolicy=1)]},
        f"{PATH}.initContainers[0].restartPolicy",
        "type string",
    ),
]


@pytest.mark.parametrize(
    ("spec", "field", "words"), [(s, f, w) for _, s, f, w in BAD], ids=[n for n, *_ in BAD]
)
def test_invalid_templates(spec: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(ValidationError) as e:
        pod_requests(spec, PATH, REF)
    assert e.value.obj == REF
    assert e.value.field == field
    assert words in e.value.message
