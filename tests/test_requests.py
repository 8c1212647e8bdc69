# ruff: noqa: E501  (case tables read better one case per line)
"""Per-pod requests (Kueue pkg/workload/workload.go, resources.go; k8s component-helpers PodRequests)."""

from __future__ import annotations

from typing import Any

import pytest

from kueue_fast.api.errors import ValidationError
from kueue_fast.api.model import ResourceRules
from kueue_fast.api.quantity import parse_quantity
from kueue_fast.api.requests import pod_requests, quota_requests, resources_validation_message
from kueue_fast.loader import parse_configuration

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
        "the largest init container beats the sum: max(2, 3) + 0.5 overhead",
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
    # issue 21 item 6: the API server's rules for extended resources (k8s pkg/apis/core/validation
    # validateResourceRequirements, ValidateResourceQuantityValue): whole numbers, request == limit
    (
        "half a GPU",
        {"containers": [c({"nvidia.com/gpu": "0.5"}, {"nvidia.com/gpu": "0.5"})]},
        f"{PATH}.containers[0].resources.requests[nvidia.com/gpu]",
        'Invalid value: "0.5": must be an integer',
    ),
    (
        "a tenth of a GPU as a limit of an init container",
        {"containers": [c()], "initContainers": [c(None, {"example.com/fpga": "100m"})]},
        f"{PATH}.initContainers[0].resources.limits[example.com/fpga]",
        'Invalid value: "100m": must be an integer',
    ),
    (
        "a GPU request below its limit",
        {"containers": [c(), c({"nvidia.com/gpu": 1}, {"nvidia.com/gpu": 2})]},
        f"{PATH}.containers[1].resources.requests",
        'Invalid value: "1": must be equal to nvidia.com/gpu limit of 2',
    ),
    (
        "a hugepages request below its limit",
        {"containers": [c({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "4Mi"})]},
        f"{PATH}.containers[0].resources.requests",
        'Invalid value: "2Mi": must be equal to hugepages-2Mi limit of 4Mi',
    ),
    (
        "a fraction of an extended resource in the overhead",
        {"containers": [c()], "overhead": {"example.com/nic": 1.5}},
        f"{PATH}.overhead[example.com/nic]",
        'Invalid value: "1.5": must be an integer',
    ),
]


@pytest.mark.parametrize(
    "spec",
    [
        {"containers": [c({"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": 2})]},  # equal, written differently
        {"containers": [c({"nvidia.com/gpu": "1000m"})]},  # a whole number in milli units
        {"containers": [c({"cpu": "500m", "kubernetes.io/custom": "0.5"}, {"cpu": "1"})]},  # native
        {"containers": [c({"nvidia.com/gpu": 0.9999999})]},  # MilliValue rounds up to 1000m: accepted
    ],
)
def test_extended_resources_the_api_server_accepts(spec: dict[str, Any]) -> None:
    pod_requests(spec, PATH, REF)


@pytest.mark.parametrize(
    ("spec", "field", "words"), [(s, f, w) for _, s, f, w in BAD], ids=[n for n, *_ in BAD]
)
def test_invalid_templates(spec: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(ValidationError) as e:
        pod_requests(spec, PATH, REF)
    assert e.value.obj == REF
    assert e.value.field == field
    assert words in e.value.message


# --- Configuration resources: excluded prefixes and transformations -------------------------


def _rules(config: dict[str, Any]) -> ResourceRules:
    doc = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "resources": config}
    return parse_configuration(doc).resources


def _canonical(reqs: dict[str, str]) -> dict[str, int]:
    return {r: parse_quantity(q, r) for r, q in reqs.items()}


# Kueue docs tasks/manage/administer_cluster_quotas.md "Transform resources for quota management"
_DOC_TRANSFORMATIONS = {
    "transformations": [
        {
            "input": "example.com/gpu-type1",
            "strategy": "Replace",
            "outputs": {"example.com/gpu-memory": "5Gi", "example.com/credits": 10},
        },
        {
            "input": "example.com/gpu-type2",
            "strategy": "Replace",
            "outputs": {"example.com/gpu-memory": "20Gi", "example.com/credits": 40},
        },
        {"input": "cpu", "strategy": "Retain", "outputs": {"example.com/credits": 1}},
    ]
}
# Kueue docs tasks/run/using_hami.md: per-vGPU values times the number of vGPUs
_HAMI = {
    "transformations": [
        {
            "input": "nvidia.com/gpumem",
            "strategy": "Replace",
            "multiplyBy": "nvidia.com/gpu",
            "outputs": {"nvidia.com/total-gpumem": "1"},
        },
    ]
}


@pytest.mark.parametrize(
    ("config", "requests", "want"),
    [
        pytest.param(
            _DOC_TRANSFORMATIONS,
            {"cpu": "1", "memory": "100Gi", "example.com/gpu-type1": "2", "example.com/gpu-type2": "1"},
            {"cpu": "1", "memory": "100Gi", "example.com/gpu-memory": "30Gi", "example.com/credits": "61"},
            id="administer_cluster_quotas-doc-example",
        ),
        pytest.param(
            _HAMI,
            {"nvidia.com/gpu": "2", "nvidia.com/gpumem": "1024"},
            {"nvidia.com/gpu": "2", "nvidia.com/total-gpumem": "2048"},
            id="using_hami-multiplyBy",
        ),
        pytest.param(
            _HAMI,
            {"nvidia.com/gpumem": "1024"},
            {"nvidia.com/total-gpumem": "1024"},
            id="multiplyBy-resource-not-requested-leaves-the-input-value",
        ),
        pytest.param(
            {"transformations": [{"input": "cpu", "outputs": {"cpu_credits": "1"}}]},
            {"cpu": "500m"},
            {"cpu": "500m", "cpu_credits": "1"},
            id="default-Retain-and-output-rounded-up-as-Value",
        ),
        pytest.param(
            {
                "transformations": [
                    {"input": "cpu", "strategy": "Replace", "outputs": {"credits": "-1"}},
                    {"input": "memory", "outputs": {"credits": "1"}},
                ]
            },
            {"cpu": "4", "memory": "3", "credits": "2"},
            {"memory": "3", "credits": "2"},
            id="generated-sum-below-zero-is-zero-and-does-not-reduce-a-request",
        ),
        pytest.param(
            {"transformations": [{"input": "example.com/license", "strategy": "Replace"}]},
            {"cpu": "1", "example.com/license": "1"},
            {"cpu": "1"},
            id="Replace-without-outputs-ignores-the-input",
        ),
        pytest.param(
            {
                "excludeResourcePrefixes": ["example.com/"],
                "transformations": [{"input": "example.com/gpu", "outputs": {"credits": "1"}}],
            },
            {"cpu": "1", "example.com/gpu": "1"},
            {"cpu": "1"},
            id="excluded-before-transformed",
        ),
    ],
)
def test_quota_requests(config: dict[str, Any], requests: dict[str, str], want: dict[str, str]) -> None:
    # pkg/workload/workload.go totalRequestsFromPodSets: dropExcludedResources, applyResourceTransformations
    assert quota_requests(_canonical(requests), _rules(config)) == _canonical(want)


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (
            {"transformations": [{"input": "cpu", "strategy": "Drop"}]},
            'resources.transformations[0].strategy: Unsupported value: "Drop"',
        ),
        (
            {"transformations": [{"input": "cpu"}, {"input": "cpu"}]},
            'resources.transformations[1].input: Duplicate value: "cpu"',
        ),
        (
            {"transformations": [{"input": "cpu", "outputs": {"x": "lots"}}]},
            "resources.transformations[0].outputs[x]",
        ),
        ({"excludeResourcePrefixes": [3]}, "resources.excludeResourcePrefixes[0]"),
    ],
)
def test_invalid_resource_rules(config: dict[str, Any], words: str) -> None:
    # pkg/config/validation.go validateResourceTransformations
    with pytest.raises(ValidationError) as e:
        _rules(config)
    assert words in str(e.value)
