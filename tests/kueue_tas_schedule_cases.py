"""The cases of Kueue's TAS scheduling tables, as manifests (for
tests/test_kueue_tas_schedule_table.py).

Facts from kueue ``pkg/scheduler/scheduler_tas_test.go`` at the commit
kueue-fast follows: ``TestScheduleForTAS`` (``SCHEDULE_CASES``),
``TestScheduleForTASPreemption`` (``PREEMPTION_CASES``) and
``TestScheduleForTASCohorts`` (``COHORT_CASES``), converted mechanically
from the Go tables so that each case keeps Kueue's objects and expectations
exactly. Each case's objects are restated with the helpers below, which
build the manifests Kueue's test builders (pkg/util/testing/v1beta2/wrappers.go,
pkg/util/testingjobs/{node,pod}/wrappers.go) make: a ClusterQueue is
BestEffortFIFO with ``namespaceSelector: {}``; a pod set has one container
"c"; ``reserved``/``admitted`` write the conditions ReserveQuotaAt and
AdmittedAt write. Times are seconds relative to the test's "now".

The expectations are Kueue's: the admissions made in the cycle
(``want_admitted``, with their topology assignments as levels and
(values, count) domains), the workloads left pending (``want_pending``: the
union of Kueue's wantLeft and wantInadmissibleLeft), the conditions Kueue's
tables expect on workloads after the cycle (``want_conditions``) and the
messages of the events they compare (``want_events``).
"""

# ruff: noqa: E501  (Kueue's names and messages, whole)

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HOST = "kubernetes.io/hostname"
BLOCK = "cloud.com/topology-block"
RACK = "cloud.provider.com/rack"
KUEUE = "kueue.x-k8s.io/v1beta2"
NOW = "2025-06-01T12:00:00Z"
NOW_S = 1_748_779_200  # NOW in seconds since the epoch


def timestamp(seconds: int) -> str:
    """RFC 3339 of NOW + seconds."""
    import datetime

    t = datetime.datetime.fromtimestamp(NOW_S + seconds, tz=datetime.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# --- objects -----------------------------------------------------------------------------------


def node(
    name: str,
    labels: dict[str, str],
    allocatable: dict[str, str],
    *,
    ready: bool = True,
    unschedulable: bool = False,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints is not None:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": spec,
        "status": {
            "allocatable": dict(allocatable),
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def pod(
    name: str,
    node_name: str | None,
    requests: dict[str, str],
    phase: str | None = None,
    namespace: str = "test-ns",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": dict(requests)}}]}
    if node_name is not None:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": {} if phase is None else {"phase": phase},
    }


def topology(name: str, *levels: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": lv} for lv in levels]},
    }


def flavor(
    name: str,
    node_labels: dict[str, str] | None = None,
    topology_name: str | None = None,
    *,
    taints: list[dict[str, str]] | None = None,
    tolerations: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node_labels is not None:
        spec["nodeLabels"] = dict(node_labels)
    if topology_name is not None:
        spec["topologyName"] = topology_name
    if taints is not None:
        spec["nodeTaints"] = taints
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def quota(nominal: str, borrow: str | None = None, lend: str | None = None) -> dict[str, str]:
    q = {"nominalQuota": nominal}
    if borrow is not None:
        q["borrowingLimit"] = borrow
    if lend is not None:
        q["lendingLimit"] = lend
    return q


def fq(name: str, resources: dict[str, str | dict[str, str]]) -> dict[str, Any]:
    """A flavor's quotas: resource -> nominal quota, or quota(nominal, borrow, lend)."""
    return {
        "name": name,
        "resources": [
            {"name": r, **(q if isinstance(q, dict) else {"nominalQuota": q})} for r, q in resources.items()
        ],
    }


def group(*flavors: dict[str, Any]) -> dict[str, Any]:
    covered = [r["name"] for r in flavors[0]["resources"]] if flavors else []
    return {"coveredResources": covered, "flavors": list(flavors)}


def cluster_queue(
    name: str,
    *groups: dict[str, Any],
    cohort: str | None = None,
    preemption: dict[str, Any] | None = None,
    checks: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
        "resourceGroups": list(groups),
    }
    if cohort is not None:
        spec["cohortName"] = cohort
    if preemption is not None:
        spec["preemption"] = preemption
    if checks is not None:
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def cohort(name: str, *groups: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if parent is not None:
        spec["parentName"] = parent
    if groups:
        spec["resourceGroups"] = list(groups)
    return {"apiVersion": KUEUE, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def local_queue(name: str, cluster_queue_name: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cluster_queue_name},
    }


def admission_check(name: str, controller: str) -> dict[str, Any]:
    """An active AdmissionCheck (Kueue's test sets Active=True)."""
    active = {
        "type": "Active",
        "status": "True",
        "reason": "Active",
        "message": "",
        "lastTransitionTime": NOW,
    }
    return {
        "apiVersion": KUEUE,
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {"controllerName": controller},
        "status": {"conditions": [active]},
    }


def transformations(*rules: dict[str, Any]) -> dict[str, Any]:
    """A Configuration with these resources.transformations."""
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "resources": {"transformations": list(rules)},
    }


# --- workloads ---------------------------------------------------------------------------------


def pod_set(
    name: str,
    count: int,
    requests: dict[str, str],
    *,
    required: str | None = None,
    preferred: str | None = None,
    unconstrained: bool | None = None,
    slice_topology: str | None = None,
    slice_size: int | None = None,
    min_count: int | None = None,
    tolerations: list[dict[str, str]] | None = None,
    node_selector: dict[str, str] | None = None,
    affinity: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "resources": {"requests": dict(requests)}}],
    }
    if tolerations is not None:
        spec["tolerations"] = tolerations
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": affinity}
            }
        }
    out: dict[str, Any] = {"name": name, "count": count, "template": {"spec": spec}}
    if min_count is not None:
        out["minCount"] = min_count
    request = {
        k: val
        for k, val in (
            ("required", required),
            ("preferred", preferred),
            ("unconstrained", unconstrained),
            ("podSetSliceRequiredTopology", slice_topology),
            ("podSetSliceSize", slice_size),
        )
        if val is not None
    }
    if request:
        out["topologyRequest"] = request
    return out


def placement(levels: list[str], *domains: tuple[list[str], int]) -> dict[str, Any]:
    """A topology assignment, in Kueue's internal form (levels; each domain's values and pod count)."""
    return {"levels": list(levels), "domains": [{"values": list(vs), "count": n} for vs, n in domains]}


def psa(
    name: str,
    assign: dict[str, tuple[str, str]],
    *,
    count: int = 1,
    placement: dict[str, Any] | None = None,
    delayed: str | None = None,
) -> dict[str, Any]:
    """A pod set assignment: resource -> (flavor, usage)."""
    out: dict[str, Any] = {
        "name": name,
        "flavors": {r: f for r, (f, _) in assign.items()},
        "resourceUsage": {r: q for r, (_, q) in assign.items()},
        "count": count,
    }
    if placement is not None:
        out["topologyAssignment"] = placement
    if delayed is not None:
        out["delayedTopologyRequest"] = delayed
    return out


def admission(cluster_queue_name: str, *assignments: dict[str, Any]) -> dict[str, Any]:
    return {"clusterQueue": cluster_queue_name, "podSetAssignments": list(assignments)}


def condition(type_: str, status: str, reason: str, message: str, at: int = 0) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": at}


def _v1beta2_assignment(ta: dict[str, Any]) -> dict[str, Any]:
    """Kueue's v1beta2 encoding of a placement: one slice listing every domain."""
    domains = ta["domains"]
    per_level = [
        {"individual": {"roots": [d["values"][i] for d in domains]}} for i in range(len(ta["levels"]))
    ]
    return {
        "levels": ta["levels"],
        "slices": [
            {
                "domainCount": len(domains),
                "valuesPerLevel": per_level,
                "podCounts": {"individual": [d["count"] for d in domains]},
            }
        ],
    }


def workload(
    name: str,
    *pod_sets: dict[str, Any],
    queue: str | None = None,
    priority: int | None = None,
    uid: str | None = None,
    job_uid: str | None = None,
    created: int | None = None,
    admission: dict[str, Any] | None = None,
    reserved_at: int | None = None,
    admitted_at: int | None = None,
    conditions: list[dict[str, Any]] | None = None,
    checks: list[dict[str, Any]] | None = None,
    namespace: str = "default",
) -> dict[str, Any]:
    """A Workload; ``admission`` with ``reserved_at`` is Kueue's ReserveQuotaAt, ``admitted_at`` AdmittedAt(true)."""
    md: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid is not None:
        md["uid"] = uid
    if job_uid is not None:
        md["labels"] = {"kueue.x-k8s.io/job-uid": job_uid}
    if created is not None:
        md["creationTimestamp"] = timestamp(created)
    spec: dict[str, Any] = {"podSets": list(pod_sets)}
    if queue is not None:
        spec["queueName"] = queue
    if priority is not None:
        spec["priority"] = priority
    status: dict[str, Any] = {}
    conds: list[dict[str, Any]] = []
    if admission is not None:
        status["admission"] = {
            "clusterQueue": admission["clusterQueue"],
            "podSetAssignments": [
                {**a, "topologyAssignment": _v1beta2_assignment(a["topologyAssignment"])}
                if "topologyAssignment" in a
                else a
                for a in admission["podSetAssignments"]
            ],
        }
        cq = admission["clusterQueue"]
        if reserved_at is not None:
            conds.append(
                condition(
                    "QuotaReserved", "True", "AdmittedByTest", f"Admitted by ClusterQueue {cq}", reserved_at
                )
            )
        if admitted_at is not None:
            conds.append(
                condition("Admitted", "True", "ByTest", f"Admitted by ClusterQueue {cq}", admitted_at)
            )
    conds.extend(conditions or [])
    if conds:
        status["conditions"] = [
            {**c, "lastTransitionTime": timestamp(c["lastTransitionTime"])} for c in conds
        ]
    if checks is not None:
        status["admissionChecks"] = checks
    out: dict[str, Any] = {"apiVersion": KUEUE, "kind": "Workload", "metadata": md, "spec": spec}
    if status:
        out["status"] = status
    return out


# --- a case ------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    objects: list[dict[str, Any]]
    want_admitted: dict[str, dict[str, Any]] = field(default_factory=dict)
    want_pending: list[str] = field(default_factory=list)
    # workload key -> [(type, status, reason, message)] Kueue expects after the cycle
    want_conditions: dict[str, list[tuple[str, str, str, str]]] = field(default_factory=dict)
    # (workload key, event reason, message) of the events whose messages Kueue compares
    want_events: list[tuple[str, str, str]] = field(default_factory=list)
    gates: dict[str, bool] = field(default_factory=dict)


# --- objects the tables share ----------------------------------------------------------------

LOCAL_QUEUES_SCHEDULE = [
    local_queue("tas-main", "tas-main"),
]

DEFAULT_SINGLE_LEVEL_TOPOLOGY = topology("tas-single-level", HOST)

DEFAULT_TAS_FLAVOR = flavor("tas-default", {"tas-node": "true"}, "tas-single-level")

DEFAULT_CLUSTER_QUEUE = cluster_queue("tas-main", group(fq("tas-default", {"cpu": "50", "memory": "50Gi"})))

DEFAULT_TWO_LEVEL_TOPOLOGY = topology("tas-two-level", RACK, HOST)

DEFAULT_TAS_TWO_LEVEL_FLAVOR = flavor("tas-default", {"tas-node": "true"}, "tas-two-level")

DEFAULT_SINGLE_NODE = [
    node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "1", "memory": "1Gi", "pods": "10"}),
]

DEFAULT_CUSTOM_CHECK = admission_check("custom-check", "custom-admission-check-controller")

CLUSTER_QUEUE_WITH_CUSTOM_CHECK = cluster_queue(
    "tas-main", group(fq("tas-default", {"cpu": "50", "memory": "50Gi"})), checks=[{"name": "custom-check"}]
)

DEFAULT_FLAVOR = flavor("default")

NODES_WITH_ZERO_CAPACITY_INSTANCE = [
    node("x1", {"tas-node": "true", HOST: "x1", RACK: "r1"}, {"cpu": "0", "pods": "10"}),
    node("x2", {"tas-node": "true", HOST: "x2", RACK: "r1"}, {"cpu": "1", "pods": "10"}),
    node("x3", {"tas-node": "true", HOST: "x3", RACK: "r1"}, {"cpu": "1", "pods": "10"}),
]

CREDITS_FLAVOR = flavor("credits")

LOCAL_QUEUES_PREEMPTION = [
    local_queue("tas-main", "tas-main"),
    local_queue("tas-lq-a", "tas-cq-a"),
    local_queue("tas-lq-b", "tas-cq-b"),
    local_queue("tas-lq-c", "tas-cq-c"),
]

DEFAULT_TWO_NODES = [
    node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "5", "memory": "5Gi", "pods": "10"}),
    node("y1", {"tas-node": "true", HOST: "y1"}, {"cpu": "5", "memory": "5Gi", "pods": "10"}),
]

DEFAULT_SINGLE_NODE_PREEMPTION = [
    node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "5", "memory": "5Gi", "pods": "10"}),
]

DEFAULT_CLUSTER_QUEUE_WITH_PREEMPTION = cluster_queue(
    "tas-main",
    group(fq("tas-default", {"cpu": "50", "memory": "50Gi"})),
    preemption={"withinClusterQueue": "LowerPriority"},
)

LOCAL_QUEUES_COHORTS = [
    local_queue("tas-lq-a", "tas-cq-a"),
    local_queue("tas-lq-b", "tas-cq-b"),
    local_queue("tas-lq-c", "tas-cq-c"),
]

DEFAULT_TWO_NODES_COHORTS = [
    node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "3", "memory": "5Gi", "pods": "10"}),
    node("y1", {"tas-node": "true", HOST: "y1"}, {"cpu": "5", "memory": "3Gi", "pods": "10"}),
]

DEFAULT_CLUSTER_QUEUE_A = cluster_queue(
    "tas-cq-a",
    group(fq("tas-default", {"cpu": "4", "memory": "4Gi"})),
    cohort="tas-cohort-main",
    preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
)

DEFAULT_CLUSTER_QUEUE_B = cluster_queue(
    "tas-cq-b",
    group(fq("tas-default", {"cpu": "4", "memory": "4Gi"})),
    cohort="tas-cohort-main",
    preemption={"reclaimWithinCohort": "Any"},
)

DEFAULT_CLUSTER_QUEUE_C = cluster_queue(
    "tas-cq-c",
    group(fq("tas-default", {"cpu": "4", "memory": "4Gi"})),
    cohort="tas-cohort-main",
    preemption={"reclaimWithinCohort": "Any"},
)

DEFAULT_NODE_Y1 = node("y1", {"tas-node": "true", HOST: "y1"}, {"cpu": "5", "memory": "3Gi", "pods": "10"})


# --- TestScheduleForTAS ---

SCHEDULE_CASES = [
    Case(
        "initial scheduling; one-byte memory request fits on a 2Gi node with vectorized requests disabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("x1", {"tas-node": "true", HOST: "x1"}, {"memory": "2Gi", "pods": "10"}),
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("tiny-memory", pod_set("one", 1, {"memory": "1"}, required=HOST), queue="tas-main"),
        ],
        want_admitted={
            "default/tiny-memory": admission(
                "tas-main",
                psa("one", {"memory": ("tas-default", "1")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
        gates={"VectorizedResourceRequests": False},
    ),
    Case(
        "initial scheduling; TAS uses podspec memory for placement",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "4", "memory": "2Gi", "pods": "10"}),
            node("x2", {"tas-node": "true", HOST: "x2"}, {"cpu": "4", "memory": "2Gi", "pods": "10"}),
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo", pod_set("one", 2, {"cpu": "1", "memory": "1536Mi"}, preferred=HOST), queue="tas-main"
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-default", "2000m"), "memory": ("tas-default", "3Gi")},
                    count=2,
                    placement=placement([HOST], (["x1"], 1), (["x2"], 1)),
                ),
            ),
        },
    ),
    Case(
        "workload with a PodSet of size zero",
        objects=[
            DEFAULT_TWO_LEVEL_TOPOLOGY,
            DEFAULT_TAS_TWO_LEVEL_FLAVOR,
            node("x1", {"tas-node": "true", RACK: "r1", HOST: "x1"}, {"cpu": "3", "pods": "10"}),
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set("launcher", 1, {"cpu": "1"}, preferred=HOST),
                pod_set("worker", 0, {"cpu": "1"}, preferred=HOST),
                queue="tas-main",
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("launcher", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
                psa("worker", {"cpu": ("tas-default", "0")}, count=0),
            ),
        },
    ),
    Case(
        "workload with a custom AdmissionCheck gets TAS assigned",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CUSTOM_CHECK,
            CLUSTER_QUEUE_WITH_CUSTOM_CHECK,
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                queue="tas-main",
                checks=[{"name": "custom-check", "state": "Pending"}],
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "workload which does not specify TAS annotation uses the only TAS flavor",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            DEFAULT_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            cluster_queue("tas-main", group(fq("tas-default", {"cpu": "50"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "workload requiring TAS skips the non-TAS flavor",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            DEFAULT_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            cluster_queue("tas-main", group(fq("default", {"cpu": "50"}), fq("tas-default", {"cpu": "50"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}, required=HOST), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "workload which does not need TAS skips the TAS flavor",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            DEFAULT_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            cluster_queue("tas-main", group(fq("tas-default", {"cpu": "50"}), fq("default", {"cpu": "50"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission("tas-main", psa("one", {"cpu": ("default", "1000m")})),
        },
    ),
    Case(
        "workload with mixed PodSets (requiring TAS and not)",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            DEFAULT_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            cluster_queue("tas-main", group(fq("tas-default", {"cpu": "50"}), fq("default", {"cpu": "50"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set("launcher", 1, {"cpu": "500m"}),
                pod_set("worker", 1, {"cpu": "500m"}, required=HOST),
                queue="tas-main",
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("launcher", {"cpu": ("default", "500m")}),
                psa("worker", {"cpu": ("tas-default", "500m")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "workload required TAS gets scheduled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}, required=HOST), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "workload requests topology level which is not present in topology",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo", pod_set("one", 1, {"cpu": "1"}, required="cloud.com/non-existing"), queue="tas-main"
            ),
        ],
        want_pending=["default/foo"],
        want_events=[
            (
                "default/foo",
                "NoMatchingFlavor",
                'couldn\'t assign flavors to pod set one: Flavor "tas-default" does not contain the requested level',
            ),
        ],
    ),
    Case(
        "workload requests topology level which is only present in second flavor",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            topology("tas-custom-topology", "cloud.com/custom-level"),
            DEFAULT_TAS_FLAVOR,
            flavor("tas-custom-flavor", {"tas-node": "true"}, "tas-custom-topology"),
            node("x1", {"tas-node": "true", "cloud.com/custom-level": "x1"}, {"cpu": "1", "pods": "10"}),
            cluster_queue(
                "tas-main", group(fq("tas-default", {"cpu": "50"}), fq("tas-custom-flavor", {"cpu": "50"}))
            ),
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo", pod_set("one", 1, {"cpu": "1"}, required="cloud.com/custom-level"), queue="tas-main"
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-custom-flavor", "1")},
                    placement=placement(["cloud.com/custom-level"], (["x1"], 1)),
                ),
            ),
        },
    ),
    Case(
        "workload does not get scheduled as it does not fit within the node capacity",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 2, {"cpu": "1"}, required=HOST), queue="tas-main"),
        ],
        want_pending=["default/foo"],
        want_events=[
            (
                "default/foo",
                "TopologyPlacementFailed",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 1 out of 2 pod(s)',
            ),
        ],
    ),
    Case(
        "workload does not get scheduled as the node capacity is already used by another TAS workload",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}, required=HOST), queue="tas-main"),
            workload(
                "bar-admitted",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                queue="tas-main",
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/foo"],
        want_events=[
            (
                "default/foo",
                "WaitingForQuota",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
            ),
        ],
    ),
    Case(
        "workload does not get scheduled as the node capacity is already used by a non-TAS pod",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            pod("test-pending", "x1", {"cpu": "600m"}, "Pending"),
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}, required=HOST), queue="tas-main"),
        ],
        want_pending=["default/foo"],
        want_events=[
            (
                "default/foo",
                "TopologyPlacementFailed",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
            ),
        ],
    ),
    Case(
        "workload does not get scheduled as node capacity is completely used by non-TAS pod",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "1", "memory": "1Gi", "pods": "1"}),
            pod("test-pending", "x1", {"cpu": "1", "memory": "1Gi"}, "Running"),
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}, required=HOST), queue="tas-main"),
        ],
        want_pending=["default/foo"],
        want_events=[
            (
                "default/foo",
                "TopologyPlacementFailed",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
            ),
        ],
    ),
    Case(
        "workload gets admitted next to already admitted workload, multiple resources used",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo", pod_set("one", 1, {"cpu": "500m", "memory": "500Mi"}, required=HOST), queue="tas-main"
            ),
            workload(
                "bar-admitted",
                pod_set("one", 1, {"cpu": "500m", "memory": "500Mi"}, required=HOST),
                queue="tas-main",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "500m"), "memory": ("tas-default", "500Mi")},
                        placement=placement([HOST], (["x1"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-default", "500m"), "memory": ("tas-default", "500Mi")},
                    placement=placement([HOST], (["x1"], 1)),
                ),
            ),
        },
    ),
    Case(
        "workload with multiple PodSets requesting the same TAS flavor; multiple levels",
        objects=[
            DEFAULT_TWO_LEVEL_TOPOLOGY,
            DEFAULT_TAS_TWO_LEVEL_FLAVOR,
            node("x1", {"tas-node": "true", RACK: "r1", HOST: "x1"}, {"cpu": "3", "pods": "10"}),
            node("y1", {"tas-node": "true", RACK: "r1", HOST: "y1"}, {"cpu": "3", "pods": "10"}),
            cluster_queue("tas-main", group(fq("tas-default", {"cpu": "50"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set("launcher", 1, {"cpu": "1"}, preferred=HOST),
                pod_set("worker", 1, {"cpu": "7"}, preferred=HOST),
                queue="tas-main",
            ),
        ],
        want_pending=["default/foo"],
        want_events=[
            (
                "default/foo",
                "TopologyPlacementFailed",
                'couldn\'t assign flavors to pod set worker: topology "tas-two-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 2; excluded: resource "cpu": 2',
            ),
        ],
    ),
    Case(
        "scheduling workload with multiple PodSets requesting TAS flavor and will succeed",
        objects=[
            DEFAULT_TWO_LEVEL_TOPOLOGY,
            DEFAULT_TAS_TWO_LEVEL_FLAVOR,
            node("x1", {"tas-node": "true", RACK: "r1", HOST: "x1"}, {"cpu": "8", "pods": "10"}),
            node("y1", {"tas-node": "true", RACK: "r1", HOST: "y1"}, {"cpu": "8", "pods": "10"}),
            cluster_queue("tas-main", group(fq("tas-default", {"cpu": "16"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set("launcher", 1, {"cpu": "1"}, required=HOST),
                pod_set("worker", 15, {"cpu": "1"}, preferred=HOST),
                queue="tas-main",
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("launcher", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
                psa(
                    "worker",
                    {"cpu": ("tas-default", "15000m")},
                    count=15,
                    placement=placement([HOST], (["x1"], 7), (["y1"], 8)),
                ),
            ),
        },
    ),
    Case(
        "scheduling workload with multiple PodSets requesting higher level topology",
        objects=[
            DEFAULT_TWO_LEVEL_TOPOLOGY,
            DEFAULT_TAS_TWO_LEVEL_FLAVOR,
            node("x1", {"tas-node": "true", RACK: "r1", HOST: "x1"}, {"cpu": "8", "pods": "10"}),
            node("y1", {"tas-node": "true", RACK: "r1", HOST: "y1"}, {"cpu": "8", "pods": "10"}),
            cluster_queue("tas-main", group(fq("tas-default", {"cpu": "16"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set("launcher", 1, {"cpu": "1"}, required=RACK),
                pod_set("worker", 15, {"cpu": "1"}, required=RACK),
                queue="tas-main",
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("launcher", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
                psa(
                    "worker",
                    {"cpu": ("tas-default", "15000m")},
                    count=15,
                    placement=placement([HOST], (["x1"], 7), (["y1"], 8)),
                ),
            ),
        },
    ),
    Case(
        "scheduling workload when the node for another admitted workload is deleted",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("y1", {"tas-node": "true", HOST: "y1"}, {"cpu": "1", "pods": "10"}),
            cluster_queue("tas-main", group(fq("tas-default", {"cpu": "50"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}, preferred=HOST), queue="tas-main"),
            workload(
                "bar-admitted",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                queue="tas-main",
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["y1"], 1))),
            ),
        },
    ),
    Case(
        "scheduling workload on a tainted node when the toleration is on ResourceFlavor",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            flavor(
                "tas-default",
                {"tas-node": "true"},
                "tas-single-level",
                tolerations=[{"key": "example.com/gpu", "operator": "Exists"}],
            ),
            node(
                "x1",
                {"tas-node": "true", HOST: "x1"},
                {"cpu": "1", "pods": "10"},
                taints=[{"key": "example.com/gpu", "value": "present", "effect": "NoSchedule"}],
            ),
            cluster_queue("tas-main", group(fq("tas-default", {"cpu": "50"}))),
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}, preferred=HOST), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "two ResourceFlavors share nodes: pending workload lands on the fallback flavor when the primary flavor is full",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            flavor("tas-flavor-a", {"tas-node": "true"}, "tas-single-level"),
            flavor(
                "tas-flavor-b",
                {"tas-node": "true"},
                "tas-single-level",
                taints=[{"key": "tas-class", "value": "b", "effect": "NoSchedule"}],
            ),
            node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "400m", "memory": "400Mi", "pods": "10"}),
            node("x2", {"tas-node": "true", HOST: "x2"}, {"cpu": "400m", "memory": "400Mi", "pods": "10"}),
            cluster_queue(
                "tas-main",
                group(
                    fq("tas-flavor-a", {"cpu": "400m", "memory": "400Mi"}),
                    fq("tas-flavor-b", {"cpu": "100m", "memory": "100Mi"}),
                ),
                preemption={"reclaimWithinCohort": "Never"},
            ),
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "primary-admitted-1",
                pod_set("one", 1, {"cpu": "200m", "memory": "200Mi"}, preferred=HOST),
                queue="tas-main",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("tas-flavor-a", "200m"), "memory": ("tas-flavor-a", "200Mi")},
                        placement=placement([HOST], (["x1"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "primary-admitted-2",
                pod_set("one", 1, {"cpu": "200m", "memory": "200Mi"}, preferred=HOST),
                queue="tas-main",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("tas-flavor-a", "200m"), "memory": ("tas-flavor-a", "200Mi")},
                        placement=placement([HOST], (["x1"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "pending-wl",
                pod_set(
                    "one",
                    1,
                    {"cpu": "100m", "memory": "100Mi"},
                    preferred=HOST,
                    tolerations=[
                        {"key": "tas-class", "operator": "Equal", "value": "b", "effect": "NoSchedule"}
                    ],
                ),
                queue="tas-main",
            ),
        ],
        want_admitted={
            "default/pending-wl": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-flavor-b", "100m"), "memory": ("tas-flavor-b", "100Mi")},
                    placement=placement([HOST], (["x2"], 1)),
                ),
            ),
        },
    ),
    Case(
        "multi-PodSet workload across sibling flavors must not self-overlap on shared node",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            flavor(
                "flavor-a",
                {"tas-node": "true"},
                "tas-single-level",
                taints=[{"key": "example.com/flavor", "value": "a", "effect": "NoSchedule"}],
            ),
            flavor(
                "flavor-b",
                {"tas-node": "true"},
                "tas-single-level",
                taints=[{"key": "example.com/flavor", "value": "b", "effect": "NoSchedule"}],
            ),
            node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "400m", "memory": "400Mi", "pods": "10"}),
            node("x2", {"tas-node": "true", HOST: "x2"}, {"cpu": "400m", "memory": "400Mi", "pods": "10"}),
            cluster_queue(
                "tas-main",
                group(
                    fq("flavor-a", {"cpu": "400m", "memory": "400Mi"}),
                    fq("flavor-b", {"cpu": "400m", "memory": "400Mi"}),
                ),
            ),
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "multi-podset-wl",
                pod_set(
                    "ps-a",
                    1,
                    {"cpu": "300m", "memory": "300Mi"},
                    preferred=HOST,
                    tolerations=[
                        {
                            "key": "example.com/flavor",
                            "operator": "Equal",
                            "value": "a",
                            "effect": "NoSchedule",
                        }
                    ],
                ),
                pod_set(
                    "ps-b",
                    1,
                    {"cpu": "300m", "memory": "300Mi"},
                    preferred=HOST,
                    tolerations=[
                        {
                            "key": "example.com/flavor",
                            "operator": "Equal",
                            "value": "b",
                            "effect": "NoSchedule",
                        }
                    ],
                ),
                queue="tas-main",
            ),
        ],
        want_admitted={
            "default/multi-podset-wl": admission(
                "tas-main",
                psa(
                    "ps-a",
                    {"cpu": ("flavor-a", "300m"), "memory": ("flavor-a", "300Mi")},
                    placement=placement([HOST], (["x1"], 1)),
                ),
                psa(
                    "ps-b",
                    {"cpu": ("flavor-b", "300m"), "memory": ("flavor-b", "300Mi")},
                    placement=placement([HOST], (["x2"], 1)),
                ),
            ),
        },
    ),
    Case(
        "TAS workload gets scheduled as trimmed by partial admission",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 5, {"cpu": "1"}, required=HOST, min_count=1), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "workload does not get scheduled as the node capacity (.status.allocatable['pods']) is already used by non-TAS and TAS workloads",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "1000m", "pods": "3"}),
            pod("test-running", "x1", {"cpu": "300m"}, "Running"),
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "300m"}, required=HOST), queue="tas-main"),
            workload(
                "bar-admitted",
                pod_set("one", 2, {"cpu": "150m"}, required=HOST),
                queue="tas-main",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "150m")},
                        count=2,
                        placement=placement([HOST], (["x1"], 2)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/foo"],
        want_events=[
            (
                "default/foo",
                "WaitingForQuota",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "pods": 1',
            ),
        ],
    ),
    Case(
        "workload with zero value request gets scheduled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "0", "memory": "10Mi"}), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-default", "0"), "memory": ("tas-default", "10Mi")},
                    placement=placement([HOST], (["x1"], 1)),
                ),
            ),
        },
    ),
    Case(
        "does not admit workload when node does not match required affinity",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set(
                    "one",
                    1,
                    {"cpu": "1"},
                    preferred=HOST,
                    affinity=[
                        {"matchExpressions": [{"key": "unused-key", "operator": "In", "values": ["value"]}]}
                    ],
                ),
                queue="tas-main",
            ),
        ],
        want_pending=["default/foo"],
    ),
    Case(
        "admits workload when node matches required affinity",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node(
                "x1",
                {"tas-node": "true", HOST: "x1", "expected-label": "expected-value"},
                {"cpu": "1", "memory": "1Gi", "pods": "10"},
            ),
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set(
                    "one",
                    1,
                    {"cpu": "1"},
                    preferred=HOST,
                    affinity=[
                        {
                            "matchExpressions": [
                                {"key": "expected-label", "operator": "In", "values": ["expected-value"]}
                            ]
                        }
                    ],
                ),
                queue="tas-main",
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "admits workload when nodes are partially empty; unconstrained",
        objects=[
            DEFAULT_TWO_LEVEL_TOPOLOGY,
            DEFAULT_TAS_TWO_LEVEL_FLAVOR,
            *NODES_WITH_ZERO_CAPACITY_INSTANCE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 2, {"cpu": "1"}, unconstrained=True), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-default", "2000m")},
                    count=2,
                    placement=placement([HOST], (["x2"], 1), (["x3"], 1)),
                ),
            ),
        },
    ),
    Case(
        "admits workload when nodes are partially empty; preferred",
        objects=[
            DEFAULT_TWO_LEVEL_TOPOLOGY,
            DEFAULT_TAS_TWO_LEVEL_FLAVOR,
            *NODES_WITH_ZERO_CAPACITY_INSTANCE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 2, {"cpu": "1"}, preferred=RACK), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-default", "2000m")},
                    count=2,
                    placement=placement([HOST], (["x2"], 1), (["x3"], 1)),
                ),
            ),
        },
    ),
    Case(
        "admits workload when nodes are partially empty; required",
        objects=[
            DEFAULT_TWO_LEVEL_TOPOLOGY,
            DEFAULT_TAS_TWO_LEVEL_FLAVOR,
            *NODES_WITH_ZERO_CAPACITY_INSTANCE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 2, {"cpu": "1"}, required=RACK), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-default", "2000m")},
                    count=2,
                    placement=placement([HOST], (["x2"], 1), (["x3"], 1)),
                ),
            ),
        },
    ),
    Case(
        "admits workload with zero-quantity request for resource not in ClusterQueue with TAS",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            DEFAULT_CLUSTER_QUEUE,
            *LOCAL_QUEUES_SCHEDULE,
            workload(
                "foo",
                pod_set("one", 1, {"cpu": "1", "example.com/gpu": "0"}, preferred=HOST),
                queue="tas-main",
            ),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa("one", {"cpu": ("tas-default", "1000m")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
    ),
    Case(
        "workload with Resource Transformation (Retain CPU → cpu_credits)",
        objects=[
            transformations({"input": "cpu", "strategy": "Retain", "outputs": {"cpu_credits": "1"}}),
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            CREDITS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            cluster_queue(
                "tas-main", group(fq("tas-default", {"cpu": "1"})), group(fq("credits", {"cpu_credits": "1"}))
            ),
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "1"}, required=HOST), queue="tas-main"),
        ],
        want_admitted={
            "default/foo": admission(
                "tas-main",
                psa(
                    "one",
                    {"cpu": ("tas-default", "1000m"), "cpu_credits": ("credits", "1000m")},
                    placement=placement([HOST], (["x1"], 1)),
                ),
            ),
        },
    ),
    Case(
        "workload with Resource Transformation (Retain CPU → cpu_credits, not enough credits)",
        objects=[
            transformations({"input": "cpu", "strategy": "Retain", "outputs": {"cpu_credits": "1"}}),
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            CREDITS_FLAVOR,
            *DEFAULT_SINGLE_NODE,
            cluster_queue(
                "tas-main", group(fq("tas-default", {"cpu": "2"})), group(fq("credits", {"cpu_credits": "1"}))
            ),
            *LOCAL_QUEUES_SCHEDULE,
            workload("foo", pod_set("one", 1, {"cpu": "2"}, required=HOST), queue="tas-main"),
        ],
        want_pending=["default/foo"],
        want_events=[
            (
                "default/foo",
                "ExceedsMaxQuota",
                "couldn't assign flavors to pod set one: insufficient quota for cpu_credits in flavor credits, previously considered podsets requests (0) + current podset request (2) > maximum capacity (1)",
            ),
        ],
    ),
]

SCHEDULE_CASES_NOT_PORTED = {
    "workload in CQ with ProvisioningRequest; second pass; baseline scenario": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "workload in CQ with ProvisioningRequest; second pass; multi-resource workload fully consumes quota": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "workload in CQ with two TAS flavors, only the second is using Provisioning Admission Check": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "second pass replacement must not take a domain claimed by another workload in the same cycle": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; baseline scenario": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; preferred; fit in different rack": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; preferred; no fit": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; podspec constraints apply": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; preferred; no fit; FailFast": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; preferred; no fit; FailFast (not found error on patch)": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; preferred; no fit; FailFast (test error on patch)": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; required rack; fit": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; required rack for a single node; fit": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; required rack; no fit": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode annotation; second pass; two podsets": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode; second pass; slices; baseline": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode; second pass; slices; unhealthy node hosts incomplete slice": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode; second pass; slices; unhealthy node hosts whole slices": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode; second pass; slices; unhealthy node hosts whole slice and incomplete slice": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode; second pass; slices; unhealthy node hosts the whole workload": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "workload with unhealthyNode; second pass; slices; finds correct slice domain": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "large workload in CQ with ProvisioningRequest; second pass": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "workload in CQ with ProvisioningRequest when two TAS flavors; second pass": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "workload in CQ with two TAS flavors - one with ProvisioningRequest, one regular; second pass": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "workload in CQ with ProvisioningRequest gets QuotaReserved only; implicit defaulting": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "workload in CQ with ProvisioningRequest when two TAS flavors; second pass; implicit defaulting": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "workload in CQ with ProvisioningRequest gets QuotaReserved only": "a ProvisioningRequest admission check on a TAS flavor (delayed topology requests): refused by kueue-fast",
    "workload with unhealthyNode annotation; second pass; preferred; no fit when using slices; FailFast": "node replacement (status.unhealthyNodes): a second-pass feature kueue-fast refuses",
    "multi-layer topology: block required with rack and host slices; workload fits": "multi-layer slice constraints (TASMultiLayerTopology): refused by kueue-fast",
    "multi-layer topology: host slice rounding makes rack slice impossible; NoFit": "multi-layer slice constraints (TASMultiLayerTopology): refused by kueue-fast",
    "SchedulerLibraryIntegration enabled: generic TAS workload admitted on healthy node": "SchedulerLibraryIntegration (the kube-scheduler simulator): refused by kueue-fast",
    "SchedulerLibraryIntegration enabled: non-hostname lowest-level TAS excludes unschedulable node": "SchedulerLibraryIntegration (the kube-scheduler simulator): refused by kueue-fast",
    "SchedulerLibraryIntegration enabled: hostname lowest-level TAS filters unschedulable node via WAS": "SchedulerLibraryIntegration (the kube-scheduler simulator): refused by kueue-fast",
}

# --- TestScheduleForTASPreemption ---

PREEMPTION_CASES = [
    Case(
        "workload preempted due to quota is using deleted Node",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES,
            cluster_queue(
                "tas-main",
                group(fq("tas-default", {"cpu": "10", "memory": "10Gi"})),
                preemption={"withinClusterQueue": "LowerPriority"},
            ),
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "foo",
                pod_set("one", 10, {"cpu": "1"}, preferred=HOST),
                queue="tas-main",
                priority=3,
                uid="wl-foo",
                job_uid="job-foo",
            ),
            workload(
                "low-priority-admitted",
                pod_set("one", 1, {"cpu": "5"}, required=HOST),
                queue="tas-main",
                priority=1,
                uid="low-priority-admitted-uid",
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "5")}, placement=placement([HOST], (["z1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/foo"],
        want_conditions={
            "default/foo": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    "couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor tas-default, 5 more needed. Pending the preemption of 1 workload(s)",
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/low-priority-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
        },
        want_events=[
            (
                "default/foo",
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor tas-default, 5 more needed. Pending the preemption of 1 workload(s)",
            ),
        ],
    ),
    Case(
        "preemption; TAS uses podspec memory for fit",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE_PREEMPTION,
            DEFAULT_CLUSTER_QUEUE_WITH_PREEMPTION,
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "foo",
                pod_set("one", 1, {"cpu": "1", "memory": "4Gi"}, preferred=HOST),
                queue="tas-main",
                priority=3,
                uid="wl-foo",
                job_uid="job-foo",
            ),
            workload(
                "low-priority-admitted",
                pod_set("one", 1, {"cpu": "1", "memory": "2Gi"}, required=HOST),
                queue="tas-main",
                priority=1,
                uid="low-priority-admitted-uid",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "1"), "memory": ("tas-default", "2Gi")},
                        placement=placement([HOST], (["x1"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/foo"],
        want_conditions={
            "default/foo": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "memory": 1. Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/low-priority-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
        },
        want_events=[
            (
                "default/foo",
                "WaitingForPreemptedWorkloads",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "memory": 1. Pending the preemption of 1 workload(s)',
            ),
        ],
    ),
    Case(
        "only low priority workload is preempted",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE_PREEMPTION,
            DEFAULT_CLUSTER_QUEUE_WITH_PREEMPTION,
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "foo",
                pod_set("one", 1, {"cpu": "2"}, preferred=HOST),
                queue="tas-main",
                priority=3,
                uid="wl-foo",
                job_uid="job-foo",
            ),
            workload(
                "low-priority-admitted",
                pod_set("one", 1, {"cpu": "5"}, required=HOST),
                queue="tas-main",
                priority=1,
                uid="low-priority-admitted-uid",
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "5")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/foo"],
        want_conditions={
            "default/foo": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1. Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/low-priority-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
        },
        want_events=[
            (
                "default/foo",
                "WaitingForPreemptedWorkloads",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1. Pending the preemption of 1 workload(s)',
            ),
        ],
    ),
    Case(
        "With pods count usage pressure on nodes: only low priority workload is preempted",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "5", "memory": "5Gi", "pods": "1"}),
            DEFAULT_CLUSTER_QUEUE_WITH_PREEMPTION,
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "high-priority-waiting",
                pod_set("one", 1, {"cpu": "2"}, preferred=HOST),
                queue="tas-main",
                priority=3,
                uid="wl-high-priority-waiting",
                job_uid="job-high-priority-waiting",
            ),
            workload(
                "low-priority-admitted",
                pod_set("one", 1, {"cpu": "5"}, required=HOST),
                queue="tas-main",
                priority=1,
                uid="low-priority-admitted-uid",
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "5")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/high-priority-waiting"],
        want_conditions={
            "default/high-priority-waiting": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1. Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/low-priority-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-high-priority-waiting, JobUID: job-high-priority-waiting) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-high-priority-waiting, JobUID: job-high-priority-waiting) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
        },
        want_events=[
            (
                "default/high-priority-waiting",
                "WaitingForPreemptedWorkloads",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1. Pending the preemption of 1 workload(s)',
            ),
        ],
    ),
    Case(
        "low priority workload is preempted, mid-priority workload survives",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE_PREEMPTION,
            DEFAULT_CLUSTER_QUEUE_WITH_PREEMPTION,
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "foo",
                pod_set("one", 1, {"cpu": "2"}, preferred=HOST),
                queue="tas-main",
                priority=3,
                uid="wl-foo",
                job_uid="job-foo",
            ),
            workload(
                "mid-priority-admitted",
                pod_set("one", 1, {"cpu": "2"}, required=HOST),
                queue="tas-main",
                priority=2,
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "2")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "low-priority-admitted",
                pod_set("one", 1, {"cpu": "2"}, required=HOST),
                queue="tas-main",
                priority=1,
                uid="low-priority-admitted-uid",
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "2")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/foo"],
        want_conditions={
            "default/foo": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1. Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/low-priority-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
        },
        want_events=[
            (
                "default/foo",
                "WaitingForPreemptedWorkloads",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1. Pending the preemption of 1 workload(s)',
            ),
        ],
    ),
    Case(
        "low priority workload is preempted even though there is enough capacity, but fragmented",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES,
            DEFAULT_CLUSTER_QUEUE_WITH_PREEMPTION,
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "foo",
                pod_set("one", 2, {"cpu": "1"}, required=HOST),
                queue="tas-main",
                priority=3,
                uid="wl-foo",
                job_uid="job-foo",
            ),
            workload(
                "mid-priority-admitted",
                pod_set("one", 1, {"cpu": "4"}, required=HOST),
                queue="tas-main",
                priority=2,
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "4")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "low-priority-admitted",
                pod_set("one", 1, {"cpu": "4"}, required=HOST),
                queue="tas-main",
                priority=1,
                uid="low-priority-admitted-uid",
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "4")}, placement=placement([HOST], (["y1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/foo"],
        want_conditions={
            "default/foo": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 1 out of 2 pod(s). Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/low-priority-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
        },
        want_events=[
            (
                "default/foo",
                "WaitingForPreemptedWorkloads",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 1 out of 2 pod(s). Pending the preemption of 1 workload(s)',
            ),
        ],
    ),
    Case(
        "workload with equal priority awaits for other workloads to complete",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_SINGLE_NODE_PREEMPTION,
            DEFAULT_CLUSTER_QUEUE_WITH_PREEMPTION,
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "low-priority-which-would-fit",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                queue="tas-main",
                priority=1,
            ),
            workload(
                "mid-priority-waiting",
                pod_set("one", 2, {"cpu": "1"}, required=HOST),
                queue="tas-main",
                priority=2,
            ),
            workload(
                "mid-priority-admitted",
                pod_set("one", 1, {"cpu": "4"}, required=HOST),
                queue="tas-main",
                priority=2,
                admission=admission(
                    "tas-main",
                    psa("one", {"cpu": ("tas-default", "4")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/low-priority-which-would-fit", "default/mid-priority-waiting"],
        want_conditions={
            "default/mid-priority-waiting": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForQuota",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 1 out of 2 pod(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
        want_events=[
            (
                "default/mid-priority-waiting",
                "WaitingForQuota",
                'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 1 out of 2 pod(s)',
            ),
        ],
    ),
    Case(
        "preempt in multiple flavors out of which one requires update Fit -> Preempt due to fragmentation",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES,
            cluster_queue(
                "tas-main",
                group(fq("tas-default", {"cpu": "10", "memory": "10Gi"})),
                preemption={"withinClusterQueue": "LowerPriority"},
            ),
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "low-cpu",
                pod_set("one", 2, {"cpu": "3"}, required=HOST),
                queue="tas-main",
                priority=-1000,
                uid="wl-low-cpu",
                job_uid="job-low-cpu",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "6")},
                        placement=placement([HOST], (["x1"], 1), (["y1"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "low-mem",
                pod_set("one", 2, {"cpu": "10m", "memory": "5Gi"}, required=HOST),
                queue="tas-main",
                priority=-1000,
                uid="wl-low-mem",
                job_uid="job-low-mem",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "20m"), "memory": ("tas-default", "10Gi")},
                        placement=placement([HOST], (["x1"], 1), (["y1"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "high-priority",
                pod_set("one", 1, {"cpu": "3", "memory": "5Gi"}, required=HOST),
                queue="tas-main",
                priority=0,
                uid="wl-high-priority",
                job_uid="job-high-priority",
            ),
        ],
        want_pending=["default/high-priority"],
        want_conditions={
            "default/high-priority": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    "couldn't assign flavors to pod set one: insufficient unused quota for memory in flavor tas-default, 5Gi more needed. Pending the preemption of 2 workload(s)",
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/low-cpu": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-high-priority, JobUID: job-high-priority) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-high-priority, JobUID: job-high-priority) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
            "default/low-mem": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-high-priority, JobUID: job-high-priority) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-high-priority, JobUID: job-high-priority) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
        },
    ),
    Case(
        "sibling-flavor usage on the shared node forces same-flavor preemption",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            flavor(
                "flavor-a",
                {"tas-node": "true"},
                "tas-single-level",
                taints=[{"key": "example.com/flavor", "value": "a", "effect": "NoSchedule"}],
            ),
            flavor(
                "flavor-b",
                {"tas-node": "true"},
                "tas-single-level",
                taints=[{"key": "example.com/flavor", "value": "b", "effect": "NoSchedule"}],
            ),
            *DEFAULT_SINGLE_NODE_PREEMPTION,
            cluster_queue(
                "tas-main",
                group(
                    fq("flavor-a", {"cpu": "5", "memory": "5Gi"}),
                    fq("flavor-b", {"cpu": "5", "memory": "5Gi"}),
                ),
                preemption={"withinClusterQueue": "LowerPriority"},
            ),
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "w3-pending",
                pod_set(
                    "one",
                    1,
                    {"cpu": "2", "memory": "2Gi"},
                    preferred=HOST,
                    tolerations=[
                        {
                            "key": "example.com/flavor",
                            "operator": "Equal",
                            "value": "a",
                            "effect": "NoSchedule",
                        }
                    ],
                ),
                queue="tas-main",
                priority=5,
                uid="wl-w3",
                job_uid="job-w3",
            ),
            workload(
                "w1-low-prio-a",
                pod_set(
                    "one",
                    1,
                    {"cpu": "1", "memory": "1Gi"},
                    preferred=HOST,
                    tolerations=[
                        {
                            "key": "example.com/flavor",
                            "operator": "Equal",
                            "value": "a",
                            "effect": "NoSchedule",
                        }
                    ],
                ),
                queue="tas-main",
                priority=1,
                uid="wl-w1",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("flavor-a", "1"), "memory": ("flavor-a", "1Gi")},
                        placement=placement([HOST], (["x1"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "w2-sibling-b",
                pod_set(
                    "one",
                    1,
                    {"cpu": "3", "memory": "3Gi"},
                    preferred=HOST,
                    tolerations=[
                        {
                            "key": "example.com/flavor",
                            "operator": "Equal",
                            "value": "b",
                            "effect": "NoSchedule",
                        }
                    ],
                ),
                queue="tas-main",
                priority=1,
                uid="wl-w2",
                admission=admission(
                    "tas-main",
                    psa(
                        "one",
                        {"cpu": ("flavor-b", "3"), "memory": ("flavor-b", "3Gi")},
                        placement=placement([HOST], (["x1"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
        ],
        want_pending=["default/w3-pending"],
        want_conditions={
            "default/w1-low-prio-a": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-w3, JobUID: job-w3) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-w3, JobUID: job-w3) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main",
                ),
            ],
            "default/w3-pending": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1. Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
    ),
    Case(
        "preempting workload recomputes both overlapping preemption targets and TAS topology assignment; both features enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES,
            cohort("tas-cohort-main", group(fq("tas-default", {"cpu": "0"}))),
            cluster_queue(
                "tas-cq-a",
                group(fq("tas-default", {"cpu": quota("5", borrow="10")})),
                cohort="tas-cohort-main",
                preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            ),
            cluster_queue(
                "tas-cq-b",
                group(fq("tas-default", {"cpu": quota("5", borrow="10")})),
                cohort="tas-cohort-main",
                preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            ),
            cluster_queue(
                "tas-cq-c",
                group(fq("tas-default", {"cpu": quota("0", borrow="10")})),
                cohort="tas-cohort-main",
                preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            ),
            *LOCAL_QUEUES_PREEMPTION,
            workload(
                "wl-low-admitted",
                pod_set("one", 1, {"cpu": "3"}, required=HOST),
                queue="tas-lq-c",
                priority=1,
                uid="wl-low-admitted-uid",
                admission=admission(
                    "tas-cq-c",
                    psa("one", {"cpu": ("tas-default", "3000m")}, placement=placement([HOST], (["x1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "wl-mid-admitted",
                pod_set("one", 1, {"cpu": "3"}, required=HOST),
                queue="tas-lq-c",
                priority=2,
                uid="wl-mid-admitted-uid",
                admission=admission(
                    "tas-cq-c",
                    psa("one", {"cpu": ("tas-default", "3000m")}, placement=placement([HOST], (["y1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "wl-high-1",
                pod_set("one", 1, {"cpu": "3"}, required=HOST),
                queue="tas-lq-a",
                priority=10,
                uid="wl-high-1-uid",
                job_uid="job-high-1-uid",
                created=0,
            ),
            workload(
                "wl-high-2",
                pod_set("one", 1, {"cpu": "3"}, required=HOST),
                queue="tas-lq-b",
                priority=10,
                uid="wl-high-2-uid",
                job_uid="job-high-2-uid",
                created=1,
            ),
        ],
        want_pending=["default/wl-high-1", "default/wl-high-2"],
        want_conditions={
            "default/wl-high-1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 2; excluded: resource "cpu": 2. Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/wl-high-2": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 2; excluded: resource "cpu": 2. Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/wl-low-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-high-1-uid, JobUID: job-high-1-uid) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-a; preemptee path: /tas-cohort-main/tas-cq-c",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclamation",
                    "Preempted to accommodate a workload (UID: wl-high-1-uid, JobUID: job-high-1-uid) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-a; preemptee path: /tas-cohort-main/tas-cq-c",
                ),
            ],
            "default/wl-mid-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-high-2-uid, JobUID: job-high-2-uid) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-c",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclamation",
                    "Preempted to accommodate a workload (UID: wl-high-2-uid, JobUID: job-high-2-uid) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-c",
                ),
            ],
        },
        gates={
            "RecomputeAssignmentUponPreemptionTargetsOverlap": True,
            "TASRecomputeAssignmentWithinSchedulingCycle": True,
        },
    ),
]

PREEMPTION_CASES_NOT_PORTED = {
    "TAS disabled, preemption succeeds even with ResourceFlavor topologyName": "TopologyAwareScheduling=false: refused by kueue-fast",
}

# --- TestScheduleForTASCohorts ---

COHORT_CASES = [
    Case(
        "reclaim within cohort; capacity reserved by preempting workload does not allow to schedule last workload; TASRecomputeAssignmentWithinSchedulingCycle enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            DEFAULT_CLUSTER_QUEUE_C,
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1-admitted",
                pod_set("one", 5, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=2,
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "5")},
                        count=5,
                        placement=placement([HOST], (["x1"], 3), (["y1"], 2)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "a2-admitted",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=1,
                admission=admission(
                    "tas-cq-a",
                    psa("one", {"cpu": ("tas-default", "1")}, placement=placement([HOST], (["y1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "a3-admitted",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=1,
                admission=admission(
                    "tas-cq-a",
                    psa("one", {"cpu": ("tas-default", "1")}, placement=placement([HOST], (["y1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "b1",
                pod_set("one", 3, {"cpu": "1"}, required=HOST),
                queue="tas-lq-b",
                priority=3,
                uid="wl-b1",
                job_uid="job-b1",
            ),
            workload(
                "c1",
                pod_set("one", 1, {"cpu": "1"}, preferred=HOST),
                queue="tas-lq-c",
                priority=1,
                uid="wl-c1",
                job_uid="job-c1",
            ),
        ],
        want_pending=["default/b1", "default/c1"],
        want_conditions={
            "default/a1-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-c1, JobUID: job-c1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-c; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclamation",
                    "Preempted to accommodate a workload (UID: wl-c1, JobUID: job-c1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-c; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/a2-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclamation",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/a3-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclamation",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 1 out of 3 pod(s). Total nodes: 2; excluded: resource "cpu": 1. Pending the preemption of 2 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/c1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 2; excluded: resource "cpu": 2. Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
        gates={"TASRecomputeAssignmentWithinSchedulingCycle": True},
    ),
    Case(
        "two flavors in cohort; re-evaluation is sticky and does not switch to second flavor; TASRecomputeAssignmentWithinSchedulingCycle enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            flavor("tas-flavor-1", {"tas-flavor": "f1"}, "tas-single-level"),
            flavor("tas-flavor-2", {"tas-flavor": "f2"}, "tas-single-level"),
            node(
                "node-1", {"tas-node": "true", "tas-flavor": "f1", HOST: "node-1"}, {"cpu": "8", "pods": "10"}
            ),
            node(
                "node-2", {"tas-node": "true", "tas-flavor": "f2", HOST: "node-2"}, {"cpu": "8", "pods": "10"}
            ),
            cluster_queue("tas-cq-a", group(fq("tas-flavor-1", {"cpu": "8"})), cohort="tas-cohort-main"),
            cluster_queue(
                "tas-cq-b",
                group(fq("tas-flavor-1", {"cpu": "8"}), fq("tas-flavor-2", {"cpu": "8"})),
                cohort="tas-cohort-main",
            ),
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1",
                pod_set("one", 1, {"cpu": "8"}, required=HOST),
                queue="tas-lq-a",
                priority=10,
                created=-60,
            ),
            workload(
                "b1", pod_set("one", 1, {"cpu": "8"}, required=HOST), queue="tas-lq-b", priority=5, created=0
            ),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa("one", {"cpu": ("tas-flavor-1", "8")}, placement=placement([HOST], (["node-1"], 1))),
            ),
        },
        want_pending=["default/b1"],
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForQuota",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
        gates={"TASRecomputeAssignmentWithinSchedulingCycle": True},
    ),
    Case(
        "two workloads in cohort nominated to the same node; enough capacity to admit both; TASRecomputeAssignmentWithinSchedulingCycle enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("node-1", {"tas-node": "true", HOST: "node-1"}, {"cpu": "8", "pods": "10"}),
            node("node-2", {"tas-node": "true", HOST: "node-2"}, {"cpu": "8", "pods": "10"}),
            cluster_queue("tas-cq-a", group(fq("tas-default", {"cpu": "8"})), cohort="tas-cohort-main"),
            cluster_queue("tas-cq-b", group(fq("tas-default", {"cpu": "8"})), cohort="tas-cohort-main"),
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1",
                pod_set("one", 1, {"cpu": "8"}, required=HOST),
                queue="tas-lq-a",
                priority=10,
                created=-60,
            ),
            workload(
                "b1", pod_set("one", 1, {"cpu": "8"}, required=HOST), queue="tas-lq-b", priority=5, created=0
            ),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa("one", {"cpu": ("tas-default", "8")}, placement=placement([HOST], (["node-1"], 1))),
            ),
            "default/b1": admission(
                "tas-cq-b",
                psa("one", {"cpu": ("tas-default", "8")}, placement=placement([HOST], (["node-2"], 1))),
            ),
        },
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "default/b1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-b"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
        gates={"TASRecomputeAssignmentWithinSchedulingCycle": True},
    ),
    Case(
        "two workloads considered; both overlapping in the initial flavor assignment; TASRecomputeAssignmentWithinSchedulingCycle enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload("a1", pod_set("one", 1, {"cpu": "2"}, preferred=HOST), queue="tas-lq-a", priority=2),
            workload("b1", pod_set("one", 1, {"cpu": "2"}, preferred=HOST), queue="tas-lq-b", priority=1),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa("one", {"cpu": ("tas-default", "2")}, placement=placement([HOST], (["x1"], 1))),
            ),
            "default/b1": admission(
                "tas-cq-b",
                psa("one", {"cpu": ("tas-default", "2")}, placement=placement([HOST], (["y1"], 1))),
            ),
        },
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "default/b1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-b"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
        gates={"TASRecomputeAssignmentWithinSchedulingCycle": True},
    ),
    Case(
        "two small workloads considered; there is only space for one of them on the initial node; TASRecomputeAssignmentWithinSchedulingCycle enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload("a1", pod_set("one", 1, {"cpu": "1"}, preferred=HOST), queue="tas-lq-a", priority=2),
            workload("b1", pod_set("one", 3, {"cpu": "1"}, preferred=HOST), queue="tas-lq-b", priority=1),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa("one", {"cpu": ("tas-default", "1")}, placement=placement([HOST], (["x1"], 1))),
            ),
            "default/b1": admission(
                "tas-cq-b",
                psa("one", {"cpu": ("tas-default", "3")}, count=3, placement=placement([HOST], (["y1"], 3))),
            ),
        },
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "default/b1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-b"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
        gates={"TASRecomputeAssignmentWithinSchedulingCycle": True},
    ),
    Case(
        "preempting workload with targets reserves capacity so that lower priority workload cannot use it; TASRecomputeAssignmentWithinSchedulingCycle enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            DEFAULT_NODE_Y1,
            cluster_queue(
                "tas-cq-a",
                group(fq("tas-default", {"cpu": quota("8", borrow="0"), "memory": quota("4Gi", borrow="0")})),
                cohort="tas-cohort-main",
                preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            ),
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1-admitted",
                pod_set("one", 2, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=1,
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "2")},
                        count=2,
                        placement=placement([HOST], (["y1"], 2)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "a2",
                pod_set("one", 4, {"cpu": "1"}, preferred=HOST),
                queue="tas-lq-a",
                priority=2,
                uid="wl-a2",
                job_uid="job-a2",
            ),
            workload("b1", pod_set("one", 3, {"cpu": "1"}, preferred=HOST), queue="tas-lq-b", priority=1),
        ],
        want_pending=["default/a2", "default/b1"],
        want_conditions={
            "default/a1-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-a2, JobUID: job-a2) due to prioritization in the ClusterQueue; preemptor path: /tas-cohort-main/tas-cq-a; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-a2, JobUID: job-a2) due to prioritization in the ClusterQueue; preemptor path: /tas-cohort-main/tas-cq-a; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/a2": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 3 out of 4 pod(s). Pending the preemption of 1 workload(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForQuota",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 3 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
        gates={"TASRecomputeAssignmentWithinSchedulingCycle": True},
    ),
    Case(
        "preempting workload without targets reserves capacity so that lower priority workload cannot use it; TASRecomputeAssignmentWithinSchedulingCycle enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            DEFAULT_NODE_Y1,
            cluster_queue(
                "tas-cq-a",
                group(fq("tas-default", {"cpu": quota("8", borrow="0"), "memory": quota("4Gi", borrow="0")})),
                cohort="tas-cohort-main",
                preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "LowerPriority"},
            ),
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1-admitted",
                pod_set("one", 2, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=2,
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "2")},
                        count=2,
                        placement=placement([HOST], (["y1"], 2)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload("a2", pod_set("one", 4, {"cpu": "1"}, preferred=HOST), queue="tas-lq-a", priority=2),
            workload("b1", pod_set("one", 3, {"cpu": "1"}, preferred=HOST), queue="tas-lq-b", priority=1),
        ],
        want_pending=["default/a2", "default/b1"],
        want_conditions={
            "default/a2": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForQuota",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 3 out of 4 pod(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForQuota",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any of 3 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
        gates={"TASRecomputeAssignmentWithinSchedulingCycle": True},
    ),
    Case(
        "workload with preemption target recomputes stale TAS assignment in cohort; TASRecomputeAssignmentWithinSchedulingCycle enabled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("node-1", {"tas-node": "true", HOST: "node-1"}, {"cpu": "1", "pods": "10"}),
            node("node-2", {"tas-node": "true", HOST: "node-2"}, {"cpu": "2", "pods": "10"}),
            node("node-3", {"tas-node": "true", HOST: "node-3"}, {"cpu": "2", "pods": "10"}),
            cluster_queue("tas-cq-a", group(fq("tas-default", {"cpu": "2"})), cohort="tas-cohort-main"),
            cluster_queue(
                "tas-cq-b",
                group(fq("tas-default", {"cpu": quota("2", borrow="0")})),
                cohort="tas-cohort-main",
                preemption={"withinClusterQueue": "LowerPriority"},
            ),
            *LOCAL_QUEUES_COHORTS,
            workload(
                "b-low-admitted",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                queue="tas-lq-b",
                priority=1,
                uid="wl-b-low",
                job_uid="job-b-low",
                admission=admission(
                    "tas-cq-b",
                    psa("one", {"cpu": ("tas-default", "1")}, placement=placement([HOST], (["node-1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "a1",
                pod_set("one", 1, {"cpu": "2"}, preferred=HOST),
                queue="tas-lq-a",
                priority=2,
                uid="wl-a1",
                job_uid="job-a1",
                created=-60,
            ),
            workload(
                "b1",
                pod_set("one", 1, {"cpu": "2"}, preferred=HOST),
                queue="tas-lq-b",
                priority=2,
                uid="wl-b1",
                job_uid="job-b1",
                created=0,
            ),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa("one", {"cpu": ("tas-default", "2")}, placement=placement([HOST], (["node-2"], 1))),
            ),
        },
        want_pending=["default/b1"],
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "default/b-low-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to prioritization in the ClusterQueue; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-b",
                ),
                (
                    "Preempted",
                    "True",
                    "InClusterQueue",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to prioritization in the ClusterQueue; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-b",
                ),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    "couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor tas-default, 1 more needed. Pending the preemption of 1 workload(s)",
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
        gates={"TASRecomputeAssignmentWithinSchedulingCycle": True},
    ),
    Case(
        "workload with two PodSets exceeds node pods capacity",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            node("x1", {"tas-node": "true", HOST: "x1"}, {"cpu": "2", "pods": "1"}),
            DEFAULT_CLUSTER_QUEUE_A,
            *LOCAL_QUEUES_COHORTS,
            workload(
                "foo",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                pod_set("two", 1, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
            ),
        ],
        want_pending=["default/foo"],
        want_conditions={
            "default/foo": [
                (
                    "QuotaReserved",
                    "False",
                    "TopologyPlacementFailed",
                    'couldn\'t assign flavors to pod set two: topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "pods": 1',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
    ),
    Case(
        "workload which requires borrowing gets scheduled",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload("a1", pod_set("one", 6, {"cpu": "1"}, preferred=HOST), queue="tas-lq-a"),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa(
                    "one",
                    {"cpu": ("tas-default", "6")},
                    count=6,
                    placement=placement([HOST], (["x1"], 1), (["y1"], 5)),
                ),
            ),
        },
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
    ),
    Case(
        "reclaim within cohort; single borrowing workload gets preempted",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1-admitted",
                pod_set("one", 5, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "5")},
                        count=5,
                        placement=placement([HOST], (["x1"], 5)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "b1",
                pod_set("one", 4, {"cpu": "1"}, preferred=HOST),
                queue="tas-lq-b",
                uid="wl-b1",
                job_uid="job-b1",
            ),
        ],
        want_pending=["default/b1"],
        want_conditions={
            "default/a1-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclamation",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    "couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor tas-default, 1 more needed. Pending the preemption of 1 workload(s)",
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
    ),
    Case(
        "reclaim within cohort; single workload is preempted out three candidates",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1-admitted",
                pod_set("one", 5, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=1,
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "5")},
                        count=5,
                        placement=placement([HOST], (["x1"], 5)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "a2-admitted",
                pod_set("one", 2, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=2,
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "2")},
                        count=2,
                        placement=placement([HOST], (["y1"], 2)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "a3-admitted",
                pod_set("one", 1, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=2,
                admission=admission(
                    "tas-cq-a",
                    psa("one", {"cpu": ("tas-default", "1")}, placement=placement([HOST], (["y1"], 1))),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "b1",
                pod_set("one", 3, {"cpu": "1"}, preferred=HOST),
                queue="tas-lq-b",
                priority=3,
                uid="wl-b1",
                job_uid="job-b1",
            ),
        ],
        want_pending=["default/b1"],
        want_conditions={
            "default/a1-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclamation",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    "couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor tas-default, 3 more needed. Pending the preemption of 1 workload(s)",
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
    ),
    Case(
        "reclaim within cohort; preempting with partial admission",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1-admitted",
                pod_set("one", 4, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=3,
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "5")},
                        count=5,
                        placement=placement([HOST], (["y1"], 5)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "a2-admitted",
                pod_set("one", 3, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=2,
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "3")},
                        count=3,
                        placement=placement([HOST], (["x1"], 3)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "b1",
                pod_set("one", 4, {"cpu": "1", "memory": "1"}, required=HOST, min_count=3),
                queue="tas-lq-b",
                priority=3,
                uid="wl-b1",
                job_uid="job-b1",
            ),
        ],
        want_pending=["default/b1"],
        want_conditions={
            "default/a2-admitted": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclamation",
                    "Preempted to accommodate a workload (UID: wl-b1, JobUID: job-b1) due to reclamation within the cohort; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    "couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor tas-default, 2 more needed. Pending the preemption of 1 workload(s)",
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
    ),
    Case(
        "two small workloads considered; both get scheduled on different nodes",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload("a1", pod_set("one", 1, {"cpu": "5"}, preferred=HOST), queue="tas-lq-a", priority=2),
            workload("b1", pod_set("one", 1, {"memory": "5"}, preferred=HOST), queue="tas-lq-b", priority=1),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa("one", {"cpu": ("tas-default", "5")}, placement=placement([HOST], (["y1"], 1))),
            ),
            "default/b1": admission(
                "tas-cq-b",
                psa("one", {"memory": ("tas-default", "5")}, placement=placement([HOST], (["x1"], 1))),
            ),
        },
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "default/b1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-b"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
    ),
    Case(
        "two small workloads considered; both get scheduled on the same node",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload("a1", pod_set("one", 1, {"cpu": "1"}, preferred=HOST), queue="tas-lq-a", priority=2),
            workload("b1", pod_set("one", 2, {"cpu": "1"}, preferred=HOST), queue="tas-lq-b", priority=1),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa("one", {"cpu": ("tas-default", "1")}, placement=placement([HOST], (["x1"], 1))),
            ),
            "default/b1": admission(
                "tas-cq-b",
                psa("one", {"cpu": ("tas-default", "2")}, count=2, placement=placement([HOST], (["x1"], 2))),
            ),
        },
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "default/b1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-b"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
    ),
    Case(
        "two workloads considered; there is enough space only for the first",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            *DEFAULT_TWO_NODES_COHORTS,
            DEFAULT_CLUSTER_QUEUE_A,
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload("a1", pod_set("one", 5, {"cpu": "1"}, preferred=HOST), queue="tas-lq-a", priority=2),
            workload("b1", pod_set("one", 5, {"cpu": "1"}, preferred=HOST), queue="tas-lq-b", priority=1),
        ],
        want_admitted={
            "default/a1": admission(
                "tas-cq-a",
                psa("one", {"cpu": ("tas-default", "5")}, count=5, placement=placement([HOST], (["y1"], 5))),
            ),
        },
        want_pending=["default/b1"],
        want_conditions={
            "default/a1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-a"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "default/b1": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForQuota",
                    "Workload no longer fits after processing another workload",
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
        want_events=[
            ("default/b1", "WaitingForQuota", "Workload no longer fits after processing another workload"),
        ],
    ),
    Case(
        "preempting workload without targets doesn't reserve capacity when it can always reclaim",
        objects=[
            DEFAULT_SINGLE_LEVEL_TOPOLOGY,
            DEFAULT_TAS_FLAVOR,
            DEFAULT_NODE_Y1,
            cluster_queue(
                "tas-cq-a",
                group(fq("tas-default", {"cpu": quota("8", borrow="0"), "memory": quota("4Gi", borrow="0")})),
                cohort="tas-cohort-main",
                preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            ),
            DEFAULT_CLUSTER_QUEUE_B,
            *LOCAL_QUEUES_COHORTS,
            workload(
                "a1-admitted",
                pod_set("one", 2, {"cpu": "1"}, required=HOST),
                queue="tas-lq-a",
                priority=2,
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "2")},
                        count=2,
                        placement=placement([HOST], (["y1"], 2)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload("a2", pod_set("one", 4, {"cpu": "1"}, preferred=HOST), queue="tas-lq-a", priority=2),
            workload("b1", pod_set("one", 3, {"cpu": "1"}, preferred=HOST), queue="tas-lq-b", priority=1),
        ],
        want_admitted={
            "default/b1": admission(
                "tas-cq-b",
                psa("one", {"cpu": ("tas-default", "3")}, count=3, placement=placement([HOST], (["y1"], 3))),
            ),
        },
        want_pending=["default/a2"],
        want_conditions={
            "default/a2": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForQuota",
                    'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 3 out of 4 pod(s)',
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
            "default/b1": [
                ("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue tas-cq-b"),
                ("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
    ),
    Case(
        "preempt in multiple flavors out of which one requires update Fit -> Preempt due to fragmentation",
        objects=[
            topology("tas-topology", HOST),
            flavor("tas-default", {"tas-node": "true"}, "tas-topology"),
            node(
                "node-1",
                {"tas-node": "true", HOST: "node-1"},
                {"cpu": "8", "example.com/gpu": "8", "pods": "10"},
            ),
            node(
                "node-2",
                {"tas-node": "true", HOST: "node-2"},
                {"cpu": "8", "example.com/gpu": "8", "pods": "10"},
            ),
            cohort("tas-cohort-main", group(fq("tas-default", {"cpu": "16", "example.com/gpu": "16"}))),
            cluster_queue(
                "tas-cq-a",
                group(
                    fq(
                        "tas-default",
                        {"cpu": quota("0", borrow="16"), "example.com/gpu": quota("0", borrow="16")},
                    )
                ),
                cohort="tas-cohort-main",
                preemption={
                    "reclaimWithinCohort": "Any",
                    "withinClusterQueue": "LowerPriority",
                    "borrowWithinCohort": {"policy": "LowerPriority"},
                },
            ),
            cluster_queue(
                "tas-cq-b",
                group(
                    fq(
                        "tas-default",
                        {"cpu": quota("0", borrow="16"), "example.com/gpu": quota("0", borrow="16")},
                    )
                ),
                cohort="tas-cohort-main",
                preemption={
                    "reclaimWithinCohort": "Any",
                    "withinClusterQueue": "LowerPriority",
                    "borrowWithinCohort": {"policy": "LowerPriority"},
                },
            ),
            *LOCAL_QUEUES_COHORTS,
            workload(
                "low-cpu",
                pod_set("one", 2, {"cpu": "5"}, required=HOST),
                queue="tas-lq-a",
                priority=-1000,
                uid="wl-low-cpu",
                job_uid="job-low-cpu",
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "10")},
                        placement=placement([HOST], (["node-1"], 1), (["node-2"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "low-gpu",
                pod_set("one", 2, {"cpu": "10m", "example.com/gpu": "8"}, required=HOST),
                queue="tas-lq-a",
                priority=-1000,
                uid="wl-low-gpu",
                job_uid="job-low-gpu",
                admission=admission(
                    "tas-cq-a",
                    psa(
                        "one",
                        {"cpu": ("tas-default", "20m"), "example.com/gpu": ("tas-default", "16")},
                        placement=placement([HOST], (["node-1"], 1), (["node-2"], 1)),
                    ),
                ),
                reserved_at=0,
                admitted_at=0,
            ),
            workload(
                "standard",
                pod_set("one", 1, {"cpu": "5", "example.com/gpu": "8"}, required=HOST),
                queue="tas-lq-b",
                priority=0,
                uid="wl-standard",
                job_uid="job-standard",
            ),
        ],
        want_pending=["default/standard"],
        want_conditions={
            "default/low-cpu": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-standard, JobUID: job-standard) due to reclamation within the cohort while borrowing; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclaimWhileBorrowing",
                    "Preempted to accommodate a workload (UID: wl-standard, JobUID: job-standard) due to reclamation within the cohort while borrowing; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/low-gpu": [
                (
                    "Evicted",
                    "True",
                    "Preempted",
                    "Preempted to accommodate a workload (UID: wl-standard, JobUID: job-standard) due to reclamation within the cohort while borrowing; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
                (
                    "Preempted",
                    "True",
                    "InCohortReclaimWhileBorrowing",
                    "Preempted to accommodate a workload (UID: wl-standard, JobUID: job-standard) due to reclamation within the cohort while borrowing; preemptor path: /tas-cohort-main/tas-cq-b; preemptee path: /tas-cohort-main/tas-cq-a",
                ),
            ],
            "default/standard": [
                (
                    "QuotaReserved",
                    "False",
                    "WaitingForPreemptedWorkloads",
                    "couldn't assign flavors to pod set one: insufficient unused quota for example.com/gpu in flavor tas-default, 8 more needed. Pending the preemption of 2 workload(s)",
                ),
                ("Admitted", "False", "NoReservation", "The workload has no reservation"),
            ],
        },
    ),
]

COHORT_CASES_NOT_PORTED = {
    "workload with preemption target recomputes stale TAS assignment in cohort; TASRecomputeAssignmentWithinSchedulingCycle disabled": "TASRecomputeAssignmentWithinSchedulingCycle=false: kueue-fast follows the gate's default (true) and refuses false",
    "two flavors in cohort; re-evaluation is sticky and does not switch to second flavor; TASRecomputeAssignmentWithinSchedulingCycle disabled": "TASRecomputeAssignmentWithinSchedulingCycle=false: kueue-fast follows the gate's default (true) and refuses false",
    "two workloads in cohort nominated to the same node; enough capacity to admit both; TASRecomputeAssignmentWithinSchedulingCycle disabled": "TASRecomputeAssignmentWithinSchedulingCycle=false: kueue-fast follows the gate's default (true) and refuses false",
    "reclaim within cohort; capacity reserved by preempting workload does not allow to schedule last workload; TASRecomputeAssignmentWithinSchedulingCycle disabled": "TASRecomputeAssignmentWithinSchedulingCycle=false: kueue-fast follows the gate's default (true) and refuses false",
    "two small workloads considered; there is only space for one of them on the initial node; TASRecomputeAssignmentWithinSchedulingCycle disabled": "TASRecomputeAssignmentWithinSchedulingCycle=false: kueue-fast follows the gate's default (true) and refuses false",
    "two workloads considered; both overlapping in the initial flavor assignment; TASRecomputeAssignmentWithinSchedulingCycle disabled": "TASRecomputeAssignmentWithinSchedulingCycle=false: kueue-fast follows the gate's default (true) and refuses false",
    "preempting workload with targets reserves capacity so that lower priority workload cannot use it; TASRecomputeAssignmentWithinSchedulingCycle disabled": "TASRecomputeAssignmentWithinSchedulingCycle=false: kueue-fast follows the gate's default (true) and refuses false",
    "preempting workload without targets reserves capacity so that lower priority workload cannot use it; TASRecomputeAssignmentWithinSchedulingCycle disabled": "TASRecomputeAssignmentWithinSchedulingCycle=false: kueue-fast follows the gate's default (true) and refuses false",
}
