# ruff: noqa: E501  (case tables read better one case per line)
"""One case per validation rule (Kueue webhooks and CRD markers): each must be
rejected with a ValidationError naming the object and the field path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kueue_fast import loader
from kueue_fast.api.errors import MissingReferenceError, ValidationError

B1 = "kueue.x-k8s.io/v1beta1"
B2 = "kueue.x-k8s.io/v1beta2"

# --- small builders -------------------------------------------------------------------


def rq(name: str, nominal: Any, **limits: Any) -> dict[str, Any]:
    return {"name": name, "nominalQuota": nominal, **limits}


def fq(name: str, *resources: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "resources": list(resources)}


def rg(covered: list[str], *flavors: dict[str, Any]) -> dict[str, Any]:
    return {"coveredResources": covered, "flavors": list(flavors)}


def cq(*groups: dict[str, Any], api: str = B1, name: str = "team-a", **spec: Any) -> dict[str, Any]:
    if groups:
        spec["resourceGroups"] = list(groups)
    return {"apiVersion": api, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def cohort(*groups: dict[str, Any], api: str = B1, **spec: Any) -> dict[str, Any]:
    if groups:
        spec["resourceGroups"] = list(groups)
    return {"apiVersion": api, "kind": "Cohort", "metadata": {"name": "root"}, "spec": spec}


def rf(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": B1, "kind": "ResourceFlavor", "metadata": {"name": "spot"}, "spec": spec}


def lq(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": B1,
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": spec,
    }


def container(**requests: Any) -> dict[str, Any]:
    return {"name": "c", "resources": {"requests": requests or {"cpu": "1"}}}


def podset(name: str = "main", count: Any = 1, **extra: Any) -> dict[str, Any]:
    return {"name": name, "count": count, "template": {"spec": {"containers": [container()]}}, **extra}


def wl(
    *pod_sets: dict[str, Any], api: str = B1, status: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    spec.setdefault("queueName", "lq")
    if pod_sets or "podSets" not in spec:
        spec["podSets"] = list(pod_sets) if pod_sets else [podset()]
    obj: dict[str, Any] = {
        "apiVersion": api,
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "ns"},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def reserved(*assignments: dict[str, Any]) -> dict[str, Any]:
    return {
        "admission": {"clusterQueue": "cq", "podSetAssignments": list(assignments)},
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }


def config(api: str = "config.kueue.x-k8s.io/v1beta1", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": "Configuration", **fields}


CQ = "ClusterQueue/team-a"
CPU = rg(["cpu"], fq("default", rq("cpu", 4)))
Q0 = "spec.resourceGroups[0].flavors[0].resources[0]"


def many_flavors(groups: int, flavors: int, resources: int) -> list[dict[str, Any]]:
    out = []
    for g in range(groups):
        names = [f"r{g}-{r}" for r in range(resources)]
        out.append(rg(names, *(fq(f"f{g}-{f}", *(rq(n, 1) for n in names)) for f in range(flavors))))
    return out


# (case name, object, want object ref, want field path, words in the message)
CASES: list[tuple[str, dict[str, Any], str, str, str]] = [
    # --- ClusterQueue: clusterqueue_webhook.go / CRD --------------------------------------
    (
        "negative nominal quota",
        cq(rg(["cpu"], fq("default", rq("cpu", "-1")))),
        CQ,
        f"{Q0}.nominalQuota",
        "greater than or equal to 0",
    ),
    (
        "borrowing limit without a cohort",
        cq(rg(["cpu"], fq("default", rq("cpu", 4, borrowingLimit=1)))),
        CQ,
        f"{Q0}.borrowingLimit",
        "must be nil when cohort is empty",
    ),
    (
        "lending limit without a cohort",
        cq(rg(["cpu"], fq("default", rq("cpu", 4, lendingLimit=1)))),
        CQ,
        f"{Q0}.lendingLimit",
        "must be nil when cohort is empty",
    ),
    (
        "lending limit above nominal",
        cq(rg(["cpu"], fq("default", rq("cpu", 4, lendingLimit=5))), cohort="c"),
        CQ,
        f"{Q0}.lendingLimit",
        "less than or equal to the nominalQuota",
    ),
    (
        "lending limit above nominal by a fraction",
        cq(rg(["cpu"], fq("d", rq("cpu", "0.0001", lendingLimit="0.0002"))), cohort="c"),
        CQ,
        f"{Q0}.lendingLimit",
        "nominalQuota",
    ),
    (
        "negative borrowing limit",
        cq(rg(["cpu"], fq("default", rq("cpu", 4, borrowingLimit="-1"))), cohort="c"),
        CQ,
        f"{Q0}.borrowingLimit",
        "greater than or equal to 0",
    ),
    (
        "negative lending limit",
        cq(rg(["cpu"], fq("default", rq("cpu", 4, lendingLimit="-1m"))), cohort="c"),
        CQ,
        f"{Q0}.lendingLimit",
        "greater than or equal to 0",
    ),
    (
        "a resource in two groups",
        cq(CPU, rg(["cpu"], fq("spot", rq("cpu", 1)))),
        CQ,
        "spec.resourceGroups[1].coveredResources[0]",
        'Duplicate value: "cpu"',
    ),
    (
        "a flavor in two groups",
        cq(CPU, rg(["memory"], fq("default", rq("memory", 1)))),
        CQ,
        "spec.resourceGroups[1].flavors[0].name",
        'Duplicate value: "default"',
    ),
    (
        "resources out of order",
        cq(rg(["cpu", "memory"], fq("default", rq("memory", 1), rq("cpu", 1)))),
        CQ,
        f"{Q0}.name",
        "must match the name in coveredResources",
    ),
    (
        "fewer resources than covered",
        cq(rg(["cpu", "memory"], fq("default", rq("cpu", 1)))),
        CQ,
        "spec.resourceGroups[0].flavors[0].resources",
        "same number of resources",
    ),
    (
        "no covered resources",
        cq(rg([], fq("default", rq("cpu", 1)))),
        CQ,
        "spec.resourceGroups[0].coveredResources",
        "at least 1",
    ),
    ("no flavors", cq(rg(["cpu"])), CQ, "spec.resourceGroups[0].flavors", "at least 1"),
    (
        "65 covered resources",
        cq(*many_flavors(1, 1, 65)),
        CQ,
        "spec.resourceGroups[0].coveredResources",
        "at most 64",
    ),
    ("17 resource groups", cq(*many_flavors(17, 1, 1)), CQ, "spec.resourceGroups", "at most 16"),
    (
        "more than 256 flavors in all",
        cq(*many_flavors(5, 60, 1)),
        CQ,
        "spec.resourceGroups",
        "total number of flavors across all resourceGroups must be ≤ 256",
    ),
    (
        "more than 256 covered resources in all",
        cq(*many_flavors(5, 1, 60)),
        CQ,
        "spec.resourceGroups",
        "total number of covered resources",
    ),
    (
        "more than 512 flavor-resource pairs in a group",
        cq(*many_flavors(1, 64, 9)),
        CQ,
        "spec.resourceGroups[0]",
        "flavor-resource combinations",
    ),
    (
        "a resource name that is not a qualified name",
        cq(rg(["cpu!"], fq("default", rq("cpu!", 1)))),
        CQ,
        "spec.resourceGroups[0].coveredResources[0]",
        "name part must consist",
    ),
    (
        "a flavor name that is not a DNS subdomain",
        cq(rg(["cpu"], fq("Default", rq("cpu", 1)))),
        CQ,
        "spec.resourceGroups[0].flavors[0].name",
        "RFC 1123",
    ),
    (
        "a bad quantity",
        cq(rg(["cpu"], fq("default", rq("cpu", "4 cores")))),
        CQ,
        f"{Q0}.nominalQuota",
        "not a quantity",
    ),
    (
        "an unknown queueing strategy",
        cq(CPU, queueingStrategy="FIFO"),
        CQ,
        "spec.queueingStrategy",
        'Unsupported value: "FIFO"',
    ),
    ("an unknown stop policy", cq(CPU, stopPolicy="Pause"), CQ, "spec.stopPolicy", "Unsupported value"),
    (
        "an unknown withinClusterQueue policy",
        cq(CPU, preemption={"withinClusterQueue": "Always"}),
        CQ,
        "spec.preemption.withinClusterQueue",
        "LowerOrNewerEqualPriority",
    ),
    (
        "borrowWithinCohort without reclaimWithinCohort",
        cq(CPU, cohort="c", preemption={"borrowWithinCohort": {"policy": "LowerPriority"}}),
        CQ,
        "spec.preemption",
        "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
    ),
    (
        "fungibility preference with default policies",
        cq(CPU, flavorFungibility={"preference": "PreemptionOverBorrowing"}),
        CQ,
        "spec.flavorFungibility.preference",
        "requires both whenCanBorrow and whenCanPreempt to be TryNextFlavor",
    ),
    (
        "v1beta1-only Borrow spelling in v1beta2",
        cq(CPU, api=B2, flavorFungibility={"whenCanBorrow": "Borrow"}),
        CQ,
        "spec.flavorFungibility.whenCanBorrow",
        "Unsupported value",
    ),
    (
        "negative fair sharing weight",
        cq(CPU, fairSharing={"weight": "-1"}),
        CQ,
        "spec.fairSharing.weight",
        "greater than or equal to 0",
    ),
    (
        "a fair sharing weight that collapses to zero",
        cq(CPU, fairSharing={"weight": "0.5n"}),
        CQ,
        "spec.fairSharing.weight",
        "weight must be > 10e-9",
    ),
    (
        "namespace selector In without values",
        cq(CPU, namespaceSelector={"matchExpressions": [{"key": "team", "operator": "In"}]}),
        CQ,
        "spec.namespaceSelector.matchExpressions[0].values",
        "must be specified",
    ),
    (
        "namespace selector Exists with values",
        cq(
            CPU,
            namespaceSelector={"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["a"]}]},
        ),
        CQ,
        "spec.namespaceSelector.matchExpressions[0].values",
        "may not be specified",
    ),
    (
        "namespace selector with an unknown operator",
        cq(CPU, namespaceSelector={"matchExpressions": [{"key": "team", "operator": "Gt", "values": ["1"]}]}),
        CQ,
        "spec.namespaceSelector.matchExpressions[0].operator",
        "not a valid selector operator",
    ),
    (
        "namespace selector with a bad label key",
        cq(CPU, namespaceSelector={"matchLabels": {"-team": "a"}}),
        CQ,
        "spec.namespaceSelector.matchLabels",
        "name part must consist",
    ),
    (
        "namespace selector with a bad label value",
        cq(CPU, namespaceSelector={"matchLabels": {"team": "a b"}}),
        CQ,
        "spec.namespaceSelector.matchLabels[team]",
        "a valid label must be",
    ),
    (
        "a typo in a quota field",
        cq(rg(["cpu"], fq("default", {"name": "cpu", "nominalQuoto": 4}))),
        CQ,
        f"{Q0}.nominalQuoto",
        'unknown field "nominalQuoto"',
    ),
    ("v1beta2 field name in v1beta1", cq(CPU, cohortName="c"), CQ, "spec.cohortName", "unknown field"),
    ("v1beta1 field name in v1beta2", cq(CPU, api=B2, cohort="c"), CQ, "spec.cohort", "unknown field"),
    ("a cohort name that is not a DNS subdomain", cq(CPU, cohort="Team_A"), CQ, "spec.cohort", "RFC 1123"),
    (
        "admission checks given twice",
        cq(CPU, admissionChecks=["a"], admissionChecksStrategy={"admissionChecks": [{"name": "b"}]}),
        CQ,
        "spec.admissionChecksStrategy",
        "cannot be used together",
    ),
    (
        "excluded resource prefixes are not supported",
        cq(CPU, excludeResourcePrefixes=["example.com"]),
        CQ,
        "spec.excludeResourcePrefixes",
        "not supported by kueue-fast",
    ),
    (
        "concurrent admission is not supported",
        cq(CPU, concurrentAdmissionPolicy={"migration": {"mode": "TryPreferredFlavors"}}),
        CQ,
        "spec.concurrentAdmissionPolicy",
        "not supported",
    ),
    (
        "resource groups that are not a list",
        cq(resourceGroups={"cpu": 4}),
        CQ,
        "spec.resourceGroups",
        "must be of type array",
    ),
    (
        "a quota that is a list",
        cq(rg(["cpu"], fq("default", rq("cpu", [4])))),
        CQ,
        f"{Q0}.nominalQuota",
        "expected a quantity",
    ),
    ("a name with upper case", cq(CPU, name="Team-A"), "ClusterQueue", "metadata.name", "RFC 1123"),
    (
        "a missing name",
        {"apiVersion": B1, "kind": "ClusterQueue", "metadata": {}},
        "ClusterQueue",
        "metadata.name",
        "Required value",
    ),
    # --- Cohort: cohort_webhook.go -------------------------------------------------------
    (
        "cohort limits without a parent",
        cohort(rg(["cpu"], fq("default", rq("cpu", 4, lendingLimit=1)))),
        "Cohort/root",
        f"{Q0}.lendingLimit",
        "must be nil when parent is empty",
    ),
    (
        "cohort borrowing limit without a parent",
        cohort(rg(["cpu"], fq("default", rq("cpu", 4, borrowingLimit=1)))),
        "Cohort/root",
        f"{Q0}.borrowingLimit",
        "must be nil when parent is empty",
    ),
    (
        "cohort negative nominal",
        cohort(rg(["cpu"], fq("default", rq("cpu", "-4")))),
        "Cohort/root",
        f"{Q0}.nominalQuota",
        "greater than or equal to 0",
    ),
    (
        "cohort negative weight",
        cohort(fairSharing={"weight": "-2"}),
        "Cohort/root",
        "spec.fairSharing.weight",
        "greater than or equal to 0",
    ),
    (
        "cohort with a v1alpha1 field in v1beta1",
        cohort(parent="x"),
        "Cohort/root",
        "spec.parent",
        "unknown field",
    ),
    # --- ResourceFlavor: resourceflavor_webhook.go / CRD ----------------------------------
    (
        "node label with a bad key",
        rf(nodeLabels={"a/b/c": "x"}),
        "ResourceFlavor/spot",
        "spec.nodeLabels",
        "qualified name",
    ),
    (
        "node label with a bad value",
        rf(nodeLabels={"zone": "-x"}),
        "ResourceFlavor/spot",
        "spec.nodeLabels[zone]",
        "a valid label must be",
    ),
    (
        "nine node labels",
        rf(nodeLabels={f"k{i}": "v" for i in range(9)}),
        "ResourceFlavor/spot",
        "spec.nodeLabels",
        "at most 8",
    ),
    (
        "taint with an unknown effect",
        rf(nodeTaints=[{"key": "k", "effect": "NoAdmit"}]),
        "ResourceFlavor/spot",
        "spec.nodeTaints[0].effect",
        "Unsupported value",
    ),
    (
        "taint without a key",
        rf(nodeTaints=[{"effect": "NoSchedule"}]),
        "ResourceFlavor/spot",
        "spec.nodeTaints[0].key",
        "Required value",
    ),
    (
        "taint with a bad value",
        rf(nodeTaints=[{"key": "k", "value": "a b", "effect": "NoSchedule"}]),
        "ResourceFlavor/spot",
        "spec.nodeTaints[0].value",
        "a valid label must be",
    ),
    (
        "taints duplicated by key and effect",
        rf(
            nodeTaints=[
                {"key": "k", "value": "1", "effect": "NoSchedule"},
                {"key": "k", "value": "2", "effect": "NoSchedule"},
            ]
        ),
        "ResourceFlavor/spot",
        "spec.nodeTaints[1]",
        "unique by key and effect",
    ),
    (
        "toleration without key and not Exists",
        rf(tolerations=[{"operator": "Equal", "value": "x"}]),
        "ResourceFlavor/spot",
        "spec.tolerations[0].operator",
        "operator must be Exists when 'key' is empty",
    ),
    (
        "toleration Exists with a value",
        rf(tolerations=[{"key": "k", "operator": "Exists", "value": "x"}]),
        "ResourceFlavor/spot",
        "spec.tolerations[0].value",
        "a value must be empty",
    ),
    (
        "toleration seconds without NoExecute",
        rf(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        "ResourceFlavor/spot",
        "spec.tolerations[0].effect",
        "NoExecute",
    ),
    (
        "toleration with an unknown operator",
        rf(tolerations=[{"key": "k", "operator": "In"}]),
        "ResourceFlavor/spot",
        "spec.tolerations[0].operator",
        "supported toleration values",
    ),
    (
        "toleration with a bad key",
        rf(tolerations=[{"key": "k k", "operator": "Exists"}]),
        "ResourceFlavor/spot",
        "spec.tolerations[0].key",
        "name part must consist",
    ),
    (
        "a topology name that is not a name",
        rf(topologyName="Not A Name"),
        "ResourceFlavor/spot",
        "spec.topologyName",
        "RFC 1123",
    ),
    # --- LocalQueue -----------------------------------------------------------------------
    ("local queue without a cluster queue", lq(), "LocalQueue/ns/lq", "spec.clusterQueue", "Required value"),
    (
        "local queue with an unknown stop policy",
        lq(clusterQueue="cq", stopPolicy="Stop"),
        "LocalQueue/ns/lq",
        "spec.stopPolicy",
        "Unsupported value",
    ),
    (
        "local queue in a bad namespace",
        {
            "apiVersion": B1,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "a.b"},
            "spec": {"clusterQueue": "cq"},
        },
        "LocalQueue/lq",
        "metadata.namespace",
        "RFC 1123 label",
    ),
    # --- WorkloadPriorityClass ------------------------------------------------------------
    (
        "priority class without a value",
        {"apiVersion": B1, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}},
        "WorkloadPriorityClass/high",
        "value",
        "Required value",
    ),
    (
        "priority class value that is not an integer",
        {"apiVersion": B1, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": "100"},
        "WorkloadPriorityClass/high",
        "value",
        "must be of type integer",
    ),
    # --- Workload: workload_webhook.go / CRD ------------------------------------------------
    ("no pod sets", wl(podSets=[]), "Workload/ns/wl", "spec.podSets", "at least 1"),
    (
        "nine pod sets",
        wl(*(podset(f"p{i}") for i in range(9))),
        "Workload/ns/wl",
        "spec.podSets",
        "at most 8",
    ),
    (
        "two pod sets with the same name",
        wl(podset("a"), podset("a")),
        "Workload/ns/wl",
        "spec.podSets[1].name",
        "Duplicate value",
    ),
    (
        "a pod set name that is not a DNS label",
        wl(podset("Main")),
        "Workload/ns/wl",
        "spec.podSets[0].name",
        "RFC 1123 label",
    ),
    (
        "a negative count",
        wl(podset(count=-1)),
        "Workload/ns/wl",
        "spec.podSets[0].count",
        "greater than or equal to 0",
    ),
    (
        "a count that is not an integer",
        wl(podset(count="3")),
        "Workload/ns/wl",
        "spec.podSets[0].count",
        "type integer",
    ),
    (
        "minCount zero",
        wl(podset(count=3, minCount=0)),
        "Workload/ns/wl",
        "spec.podSets[0].minCount",
        "greater than or equal to 1",
    ),
    (
        "minCount above count",
        wl(podset(count=3, minCount=4)),
        "Workload/ns/wl",
        "spec.podSets[0].minCount",
        "less or equal to count",
    ),
    (
        "two pod sets with minCount",
        wl(podset("a", 4, minCount=2), podset("b", 4, minCount=2)),
        "Workload/ns/wl",
        "spec.podSets",
        "at most one podSet can use minCount",
    ),
    (
        "a pod set without a template",
        wl({"name": "main", "count": 1}),
        "Workload/ns/wl",
        "spec.podSets[0].template",
        "Required value",
    ),
    (
        "topology requests in pod-set groups are not supported",
        wl(podset(topologyRequest={"required": "rack", "podSetGroupName": "g"})),
        "Workload/ns/wl",
        "spec.podSets[0].topologyRequest.podSetGroupName",
        "Topology Aware Scheduling",
    ),
    (
        "pods requested by a container",
        wl({"name": "main", "count": 1, "template": {"spec": {"containers": [container(pods="1")]}}}),
        "Workload/ns/wl",
        "spec.podSets[0].template.spec.containers[0].resources.requests[pods]",
        "reserved",
    ),
    (
        "quota reserved without an admission",
        wl(status={"conditions": reserved()["conditions"]}),
        "Workload/ns/wl",
        "status.admission",
        "Required value",
    ),
    (
        "an admission for an unknown pod set",
        wl(
            status=reserved(
                {"name": "other", "count": 1, "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": "1"}}
            )
        ),
        "Workload/ns/wl",
        "status.admission.podSetAssignments[0].name",
        "Not found",
    ),
    (
        "a resource usage that is not a multiple of the count",
        wl(
            podset(count=3),
            status=reserved(
                {"name": "main", "count": 3, "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": "1"}}
            ),
        ),
        "Workload/ns/wl",
        "status.admission.podSetAssignments[0].resourceUsage[cpu]",
        "is not a multiple of 3",
    ),
    (
        "more reclaimable pods than pods",
        wl(podset(count=2), status={"reclaimablePods": [{"name": "main", "count": 3}]}),
        "Workload/ns/wl",
        "status.reclaimablePods[main].count",
        "should be less or equal to 2",
    ),
    (
        "reclaimable pods of an unknown pod set",
        wl(status={"reclaimablePods": [{"name": "x", "count": 1}]}),
        "Workload/ns/wl",
        "status.reclaimablePods[x].name",
        "Unsupported value",
    ),
    (
        "a condition with a bad status",
        wl(
            status={
                "conditions": [
                    {"type": "Finished", "status": "Yes", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                ]
            }
        ),
        "Workload/ns/wl",
        "status.conditions[0].status",
        "Unsupported value",
    ),
    (
        "a bad creation timestamp",
        {**wl(), "metadata": {"name": "wl", "namespace": "ns", "creationTimestamp": "yesterday"}},
        "Workload/ns/wl",
        "metadata.creationTimestamp",
        "RFC 3339",
    ),
    (
        "a priority class source outside the enum",
        wl(priorityClassName="high", priorityClassSource="k8s"),
        "Workload/ns/wl",
        "spec.priorityClassSource",
        "Unsupported value",
    ),
    (
        "a priority class ref with a mismatched kind",
        wl(
            api=B2,
            priorityClassRef={"group": "scheduling.k8s.io", "kind": "WorkloadPriorityClass", "name": "high"},
            priority=1,
        ),
        "Workload/ns/wl",
        "spec.priorityClassRef",
        "only the PriorityClass kind",
    ),
    (
        "v1beta1 priority class name in v1beta2",
        wl(api=B2, priorityClassName="high"),
        "Workload/ns/wl",
        "spec.priorityClassName",
        "unknown field",
    ),
    ("a priority that is not an int32", wl(priority=2**31), "Workload/ns/wl", "spec.priority", "int32"),
    # --- Configuration: pkg/config/validation.go ---------------------------------------------
    (
        "fair sharing strategies in the wrong order",
        config(
            fairSharing={
                "enable": True,
                "preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"],
            }
        ),
        "Configuration",
        "fairSharing.preemptionStrategies",
        "Unsupported value",
    ),
    (
        "an unknown fair sharing strategy",
        config(fairSharing={"enable": True, "preemptionStrategies": ["Greedy"]}),
        "Configuration",
        "fairSharing.preemptionStrategies",
        "supported values",
    ),
    (
        "v1beta2 fair sharing has no enable field",
        config("config.kueue.x-k8s.io/v1beta2", fairSharing={"enable": True}),
        "Configuration",
        "fairSharing.enable",
        "unknown field",
    ),
    (
        "a resource transformed twice (config/validation.go validateResourceTransformations)",
        config(
            resources={
                "transformations": [{"input": "nvidia.com/mig-1g.5gb"}, {"input": "nvidia.com/mig-1g.5gb"}]
            }
        ),
        "Configuration",
        "resources.transformations[1].input",
        "Duplicate value",
    ),
    (
        "Dynamic Resource Allocation quota is not supported",
        config(resources={"deviceClassMappings": [{"name": "gpu", "deviceClassNames": ["gpu.example.com"]}]}),
        "Configuration",
        "resources.deviceClassMappings",
        "not supported",
    ),
    (
        "a feature gate that is not a boolean",
        config(featureGates={"PartialAdmission": "off"}),
        "Configuration",
        "featureGates[PartialAdmission]",
        "type boolean",
    ),
    (
        "a bad admission fair sharing duration",
        config(admissionFairSharing={"usageHalfLifeTime": "a week"}),
        "Configuration",
        "admissionFairSharing.usageHalfLifeTime",
        "not a valid duration",
    ),
]

CONVERTERS: dict[str, Callable[[dict[str, Any]], object]] = {
    "ClusterQueue": loader.parse_cluster_queue,
    "Cohort": loader.parse_cohort,
    "ResourceFlavor": loader.parse_resource_flavor,
    "LocalQueue": loader.parse_local_queue,
    "WorkloadPriorityClass": loader.parse_workload_priority_class,
    "Workload": loader.parse_workload,
    "Configuration": loader.parse_configuration,
}


@pytest.mark.parametrize(("obj", "ref", "field", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(obj: dict[str, Any], ref: str, field: str, words: str) -> None:
    with pytest.raises(ValidationError) as e:
        CONVERTERS[obj["kind"]](obj)
    assert (e.value.obj, e.value.field) == (ref, field), str(e.value)
    assert words in e.value.message
    # the one-line message names the object and the field
    assert ref in str(e.value) and field in str(e.value)


def test_rule_names_are_unique() -> None:
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))


# --- valid edge cases that must NOT be rejected ----------------------------------------------


def test_cohort_lending_limit_may_exceed_nominal() -> None:
    co = loader.parse_cohort(
        cohort(rg(["cpu"], fq("default", rq("cpu", 4, lendingLimit=10))), parentName="up")
    )
    assert co.resource_groups[0].flavors[0].resources[0].lending_limit == 10_000


def test_lending_limit_equal_to_nominal_is_fine() -> None:
    q = loader.parse_cluster_queue(
        cq(rg(["cpu"], fq("default", rq("cpu", 4, lendingLimit="4000m"))), cohort="c")
    )
    assert q.resource_groups[0].flavors[0].resources[0].lending_limit == 4000


def test_fungibility_preference_with_both_try_next_flavor() -> None:
    q = loader.parse_cluster_queue(
        cq(
            CPU,
            flavorFungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "PreemptionOverBorrowing",
            },
        )
    )
    assert q.flavor_fungibility.preference == "PreemptionOverBorrowing"


def test_zero_fair_weight_is_allowed() -> None:
    assert loader.parse_cluster_queue(cq(CPU, fairSharing={"weight": 0})).fair_weight == 0.0


def test_missing_priority_class_is_a_missing_reference() -> None:
    with pytest.raises(MissingReferenceError) as e:
        loader.parse_workload(wl(priorityClassName="high"))
    assert (e.value.obj, e.value.field) == ("Workload/ns/wl", "spec.priorityClassName")
    # v1beta2: a ref comes with its priority (CEL rule), which is what counts: the class is not looked up
    ref = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
    assert loader.parse_workload(wl(api=B2, priorityClassRef=ref, priority=5)).priority == 5


# Go's regexp anchors ($ is the end of the text) and ASCII classes, as apimachinery's
# validation and time.Parse(RFC3339) use them: Python's $ also matches before a final
# newline, and its \d matches every Unicode digit.
@pytest.mark.parametrize(
    "check, text",
    [
        ("dns1123_subdomain_errors", "a\n"),
        ("dns1123_label_errors", "a\n"),
        ("qualified_name_errors", "a\n"),
        ("label_value_errors", "a\n"),
    ],
)
def test_a_final_newline_is_not_part_of_a_valid_name(check: str, text: str) -> None:
    from kueue_fast.api import validation

    assert getattr(validation, check)(text) is not None
    assert getattr(validation, check)(text[:-1]) is None


@pytest.mark.parametrize(
    "stamp", ["2025-01-06T00:00:00Z\n", "\u0662025-01-06T00:00:00Z", "2025-01-06T00:00:0\u0660Z"]
)
def test_creation_timestamp_is_rfc3339_in_ascii_to_its_end(stamp: str) -> None:
    obj = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "default", "creationTimestamp": stamp},
        "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": []}}}]},
    }
    with pytest.raises(ValidationError, match="metadata.creationTimestamp"):
        loader.build_state([obj])


def test_a_workload_named_with_a_final_newline_is_rejected() -> None:
    obj = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "w\n", "namespace": "default"},
        "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": []}}}]},
    }
    with pytest.raises(ValidationError, match="metadata.name"):
        loader.build_state([obj])
