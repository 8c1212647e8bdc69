"""Kueue's API as kueue-fast reads it: the fields of the kinds it reads
(ResourceFlavor, ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass,
Workload, AdmissionCheck, Topology), declared once per API version.

Two readers, so that they cannot drift apart:

* the loader's strict decoding (``loader/``, ``api/validation.py``) takes from
  here which fields an object may have (an unknown one is an error, with the
  same messages as before), the values of every enum and the list limits;
* the CRD generator (``kube/crds.py``) turns the same declarations into
  the structural openAPIV3Schema of ``kueue-fast manifests crds``.

Where the loader checks fields, the schema is closed (unknown fields are
refused or pruned by the API server); where the loader reads only what it
needs (pod templates, most of a status), the schema is open
(``x-kubernetes-preserve-unknown-fields``) with the fields it reads declared.
Validation that needs code (names, quantities' signs, cross-field rules) stays
in ``api/validation.py``; the schema states it in the field's description.

The Field type and its shorthands (obj, arr, string...) are api/field_types.py's.
Field sets follow apis/kueue/v1beta1 and v1beta2 ``*_types.go`` as the
loader accepts them (the renames: v1beta2 clusterqueue_types.go, workload_types.go).
"""

from __future__ import annotations

from . import model as m
from .field_types import (
    BOOLEAN,
    INTEGER,
    MAP,
    OBJECT,
    Field,
    arr,
    int32,
    obj,
    open_object,
    quantity,
    string,
    string_map,
)

V1ALPHA1 = "kueue.x-k8s.io/v1alpha1"
V1BETA1 = "kueue.x-k8s.io/v1beta1"
V1BETA2 = "kueue.x-k8s.io/v1beta2"

# --- shared pieces -------------------------------------------------------------------------------

TOP = ("apiVersion", "kind", "metadata", "spec", "status")

_API_VERSION = string("The version of the object's schema.")
_KIND = string("The kind of the object.")
# the API server checks metadata itself; the loader its name, namespace, labels and annotations
_METADATA = open_object("The object's metadata (name, namespace, labels...).")

SELECTOR_REQUIREMENT = obj(
    "A requirement on one label.",
    required=("key", "operator"),
    key=string("The label key."),
    operator=string("In, NotIn, Exists or DoesNotExist."),
    values=arr(string(), "The values for In and NotIn; empty for Exists and DoesNotExist."),
)
LABEL_SELECTOR = obj(
    "A label selector; {} selects everything, null nothing.",
    matchLabels=string_map("Labels that must all be present with these values."),
    matchExpressions=arr(SELECTOR_REQUIREMENT, "Requirements that must all hold."),
)

TAINT = obj(
    "A taint of the nodes of the flavor.",
    required=("key", "effect"),
    key=string("The taint key (a label name)."),
    value=string("The taint value (a label value)."),
    effect=string("NoSchedule, PreferNoSchedule or NoExecute.", enum=m.TAINT_EFFECTS),
    timeAdded=string("When a NoExecute taint was added (RFC 3339)."),
)
TOLERATION = obj(
    "A toleration added to the pods admitted to the flavor.",
    key=string("The taint key it tolerates; empty with operator Exists: every taint."),
    operator=string("Equal (default) or Exists."),
    value=string("The taint value, for operator Equal."),
    effect=string("The taint effect it tolerates; empty: all."),
    tolerationSeconds=Field(INTEGER, "For NoExecute: how long the pod stays once tainted."),
)

RESOURCE_QUOTA = obj(
    "The quota of one resource in one flavor.",
    required=("name", "nominalQuota"),
    name=string("The resource, as listed in coveredResources (same position)."),
    nominalQuota=quantity("The quantity this queue or cohort holds (>= 0)."),
    borrowingLimit=quantity(
        "How much it may borrow from its cohort beyond nominalQuota; unset: no limit. Needs a cohort."
    ),
    lendingLimit=quantity(
        "How much of nominalQuota the cohort may borrow; unset: all of it. Needs a cohort."
    ),
)
FLAVOR_QUOTAS = obj(
    "The quotas of one ResourceFlavor, in the order of coveredResources.",
    required=("name", "resources"),
    name=string("The ResourceFlavor."),
    resources=arr(
        RESOURCE_QUOTA, "One quota per covered resource.", keys=("name",), min_items=1, max_items=64
    ),
)
RESOURCE_GROUP = obj(
    "Resources whose flavors are assigned together, in the order of the flavors.",
    required=("coveredResources", "flavors"),
    coveredResources=arr(string(), "The resources of the group.", min_items=1, max_items=64),
    flavors=arr(
        FLAVOR_QUOTAS,
        "The flavors, tried in this order.",
        keys=("name",),
        min_items=1,
        max_items=64,
    ),
)
RESOURCE_GROUPS = arr(RESOURCE_GROUP, "The quota, by group of resources.", max_items=16)

FAIR_SHARING = obj(
    "Fair sharing settings.",
    weight=quantity("The weight in fair sharing (default 1); 0 means it borrows last."),
)

CONDITION = obj(
    "A condition (metav1.Condition).",
    required=("type", "status", "lastTransitionTime"),
    open=True,
    type=string("The condition type."),
    status=string("True, False or Unknown.", enum=("True", "False", "Unknown")),
    reason=string("Why, in one CamelCase word."),
    message=string("Why, for people."),
    lastTransitionTime=string("When the status last changed (RFC 3339)."),
    observedGeneration=Field(INTEGER, "The generation the condition was set for."),
)
CONDITIONS = arr(CONDITION, "The object's conditions.", keys=("type",), max_items=16)

_RESOURCE_USAGE = obj(
    "A resource's quantity.",
    required=("name",),
    open=True,
    name=string("The resource."),
    total=quantity("The quantity used or reserved."),
    borrowed=quantity("The part of it borrowed from the cohort."),
)
_FLAVOR_USAGE = obj(
    "Quantities per resource of one flavor.",
    required=("name",),
    open=True,
    name=string("The ResourceFlavor."),
    resources=arr(_RESOURCE_USAGE, "Quantities per resource.", keys=("name",)),
)


# the loader does not read queue conditions: only their type is declared (the list-map key)
_QUEUE_CONDITIONS = arr(
    obj("A condition (metav1.Condition).", required=("type",), open=True, type=string("The condition type.")),
    "The queue's conditions (Active).",
    keys=("type",),
)


def _queue_status(kind: str) -> Field:
    return obj(
        f"The {kind}'s observed state, written by the controller.",
        open=True,
        pendingWorkloads=int32("Workloads waiting for quota."),
        reservingWorkloads=int32("Workloads holding quota."),
        admittedWorkloads=int32("Admitted workloads that have not finished."),
        flavorsReservation=arr(_FLAVOR_USAGE, "Quota reserved, per flavor.", keys=("name",)),
        flavorsUsage=arr(_FLAVOR_USAGE, "Quota used by admitted workloads, per flavor.", keys=("name",)),
        conditions=_QUEUE_CONDITIONS,
        fairSharing=open_object("Fair sharing state."),
    )


# --- ResourceFlavor ------------------------------------------------------------------------------

_RF_SPEC = obj(
    "What nodes a flavor stands for.",
    nodeLabels=string_map(
        "Labels of the flavor's nodes, added to the nodeSelector of admitted pods.", max_properties=8
    ),
    nodeTaints=arr(
        TAINT, "Taints of the flavor's nodes: only workloads that tolerate them fit.", max_items=8
    ),
    tolerations=arr(TOLERATION, "Tolerations added to the pods admitted to the flavor.", max_items=8),
    topologyName=string("The Topology of the flavor's nodes (Topology Aware Scheduling)."),
)
_RF = obj(
    "ResourceFlavor: a kind of node (its labels, taints, tolerations) that ClusterQueues hold quota of.",
    apiVersion=_API_VERSION,
    kind=_KIND,
    metadata=_METADATA,
    spec=_RF_SPEC,
    status=open_object("Unused."),
)

# --- ClusterQueue --------------------------------------------------------------------------------

_BORROW_WITHIN_COHORT = obj(
    "Preemption of workloads in the cohort while borrowing.",
    policy=string("Never or LowerPriority.", enum=m.BORROW_WITHIN_COHORT_POLICIES),
    maxPriorityThreshold=int32("Only workloads of this priority or lower may be preempted."),
)
PREEMPTION = obj(
    "Which workloads a pending workload may preempt.",
    reclaimWithinCohort=string(
        "Preempting workloads of other queues of the cohort that borrow: Never, LowerPriority or Any.",
        enum=m.RECLAIM_POLICIES,
    ),
    borrowWithinCohort=_BORROW_WITHIN_COHORT,
    withinClusterQueue=string(
        "Preempting workloads of this queue: Never, LowerPriority or LowerOrNewerEqualPriority.",
        enum=m.WITHIN_CQ_POLICIES,
    ),
)
# v1beta1 also accepts the deprecated spellings Borrow and Preempt
FUNGIBILITY_V1BETA1 = {"whenCanBorrow": ("Borrow",), "whenCanPreempt": ("Preempt",)}


def _fungibility(api: str) -> Field:
    old = FUNGIBILITY_V1BETA1 if api == V1BETA1 else {}
    return obj(
        "Whether the next flavor is tried when one fits only by borrowing or preempting.",
        whenCanBorrow=string(
            "MayStopSearch (default) or TryNextFlavor.",
            enum=m.FUNGIBILITY_POLICIES + old.get("whenCanBorrow", ()),
        ),
        whenCanPreempt=string(
            "MayStopSearch or TryNextFlavor (default).",
            enum=m.FUNGIBILITY_POLICIES + old.get("whenCanPreempt", ()),
        ),
        preference=string(
            "BorrowingOverPreemption or PreemptionOverBorrowing (both policies TryNextFlavor).",
            enum=m.FUNGIBILITY_PREFERENCES,
        ),
    )


ADMISSION_CHECK_RULE = obj(
    "An admission check and the flavors it applies to.",
    name=string("The AdmissionCheck."),
    onFlavors=arr(string(), "The flavors it applies to; empty: all.", max_items=64),
)
ADMISSION_MODES = ("UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing")


def _cluster_queue(api: str) -> Field:
    common: dict[str, Field] = {
        "resourceGroups": RESOURCE_GROUPS,
        "queueingStrategy": string("StrictFIFO or BestEffortFIFO (default).", enum=m.QUEUEING_STRATEGIES),
        "namespaceSelector": Field(
            OBJECT,
            "The namespaces whose LocalQueues may use this queue; unset selects none, {} all.",
            fields=LABEL_SELECTOR.fields,
        ),
        "flavorFungibility": _fungibility(api),
        "preemption": PREEMPTION,
        "admissionChecksStrategy": obj(
            "Admission checks, each on every flavor or on the flavors it names.",
            admissionChecks=arr(ADMISSION_CHECK_RULE, "The checks.", max_items=64),
        ),
        "stopPolicy": string("None (default), Hold or HoldAndDrain.", enum=m.STOP_POLICIES),
        "fairSharing": FAIR_SHARING,
        "admissionScope": obj(
            "Admission fair sharing among the queue's LocalQueues.",
            required=("admissionMode",),
            admissionMode=string(
                "UsageBasedAdmissionFairSharing or NoAdmissionFairSharing.", enum=ADMISSION_MODES
            ),
        ),
        "concurrentAdmissionPolicy": open_object("Concurrent admission (not supported by kueue-fast)."),
        "excludeResourcePrefixes": arr(string(), "Not supported by kueue-fast."),
    }
    if api == V1BETA1:
        common["cohort"] = string("The cohort the queue borrows and lends in.")
        common["admissionChecks"] = arr(string(), "Admission checks (see admissionChecksStrategy).")
    else:
        common["cohortName"] = string("The cohort the queue borrows and lends in.")
    spec = Field(OBJECT, "The queue's quota and policies.", fields=common)
    return obj(
        "ClusterQueue: quota of resources per flavor, and how workloads queued to it are admitted.",
        apiVersion=_API_VERSION,
        kind=_KIND,
        metadata=_METADATA,
        spec=spec,
        status=_queue_status("ClusterQueue"),
    )


# --- Cohort --------------------------------------------------------------------------------------


def _cohort(api: str) -> Field:
    fields: dict[str, Field] = {
        "parentName": string("The parent Cohort (hierarchical cohorts)."),
        "resourceGroups": RESOURCE_GROUPS,
        "fairSharing": FAIR_SHARING,
    }
    if api == V1ALPHA1:
        fields["parent"] = string("The parent Cohort (v1alpha1 name of parentName).")
    return obj(
        "Cohort: a group of ClusterQueues (and Cohorts) that borrow from each other, with quota of its own.",
        apiVersion=_API_VERSION,
        kind=_KIND,
        metadata=_METADATA,
        spec=Field(OBJECT, "The cohort's parent and quota.", fields=fields),
        status=open_object("The cohort's observed state."),
    )


# --- LocalQueue ----------------------------------------------------------------------------------

_LOCAL_QUEUE = obj(
    "LocalQueue: where a namespace's workloads queue, for one ClusterQueue.",
    apiVersion=_API_VERSION,
    kind=_KIND,
    metadata=_METADATA,
    spec=obj(
        "The ClusterQueue workloads go to.",
        required=("clusterQueue",),
        clusterQueue=string("The ClusterQueue."),
        stopPolicy=string("None (default), Hold or HoldAndDrain.", enum=m.STOP_POLICIES),
        fairSharing=FAIR_SHARING,
    ),
    status=Field(
        OBJECT,
        "The LocalQueue's observed state, written by the controller.",
        open=True,
        fields={
            **_queue_status("LocalQueue").fields,
            "fairSharing": obj(
                "Admission fair sharing state.",
                open=True,
                admissionFairSharingStatus=obj(
                    "What the LocalQueue consumed.",
                    open=True,
                    consumedResources=Field(MAP, "Resources consumed, decayed over time.", values=quantity()),
                ),
            ),
        },
    ),
)

# --- WorkloadPriorityClass -----------------------------------------------------------------------

_WPC = obj(
    "WorkloadPriorityClass: a priority for workloads, apart from pods' PriorityClasses.",
    required=("value",),
    apiVersion=_API_VERSION,
    kind=_KIND,
    metadata=_METADATA,
    value=int32("The priority: higher is admitted first and may preempt lower."),
    description=string("What the class is for."),
)

# --- AdmissionCheck ------------------------------------------------------------------------------

_ADMISSION_CHECK_PARAMETERS = obj(
    "The object that configures the check, read by its controller.",
    required=("apiGroup", "kind", "name"),
    apiGroup=string("The parameters' API group."),
    kind=string("The parameters' kind."),
    name=string("The parameters' object."),
)


def _admission_check(api: str) -> Field:
    spec: dict[str, Field] = {
        "controllerName": string("The controller that decides the check (immutable)."),
        "parameters": _ADMISSION_CHECK_PARAMETERS,
    }
    if api == V1BETA1:
        spec["retryDelayMinutes"] = Field(INTEGER, "Deprecated, ignored by Kueue.")
    return obj(
        "AdmissionCheck: a condition, decided by another controller, a workload must meet to be admitted.",
        apiVersion=_API_VERSION,
        kind=_KIND,
        metadata=_METADATA,
        spec=Field(OBJECT, "Which controller decides the check.", fields=spec, required=("controllerName",)),
        status=obj(
            "The check's state, written by its controller.",
            open=True,
            conditions=CONDITIONS,
        ),
    )


# --- Workload ------------------------------------------------------------------------------------

CHECK_STATE_NAMES = m.CHECK_STATES
_ADMISSION_CHECK_STATE = obj(
    "The state of one admission check for the workload.",
    required=("name", "state"),
    open=True,
    name=string("The AdmissionCheck."),
    state=string("Pending, Ready, Retry or Rejected.", enum=CHECK_STATE_NAMES),
    message=string("Why, for people."),
    lastTransitionTime=string("When the state last changed (RFC 3339)."),
    retryCount=int32("How many times the check asked for a retry.", minimum=0),
    requeueAfterSeconds=int32("How long to wait before the retry.", minimum=0),
)


def _topology_request(api: str) -> Field:
    fields = dict(
        required=string("A topology level whose one domain must hold all the pods."),
        preferred=string("A topology level whose one domain should hold the pods, else the closest above."),
        unconstrained=Field(BOOLEAN, "true: the pods may go anywhere in the topology."),
        podIndexLabel=string("The label holding a pod's index (written by job integrations)."),
        subGroupIndexLabel=string("The label holding a pod's sub-group index."),
        subGroupCount=int32("How many sub-groups.", minimum=0),
        podSetGroupName=string("Pod sets placed together (not supported by kueue-fast)."),
        podSetSliceRequiredTopology=string("A topology level whose one domain must hold each slice."),
        podSetSliceSize=int32("The pods of a slice.", minimum=1),
    )
    if api != V1BETA1:
        fields["podsetSliceRequiredTopologyConstraints"] = arr(
            obj(
                "One slice layer: its level and size (one layer only in kueue-fast).",
                topology=string("The level."),
                size=int32("The pods of a slice.", minimum=1),
            ),
            "Slice layers, outermost first.",
            max_items=3,
        )
    return Field(
        OBJECT, "Topology Aware Scheduling: the topology domain the pods must or should share.", fields=fields
    )


def _pod_set(api: str) -> Field:
    return obj(
        "A group of identical pods.",
        required=("template",),
        name=string("The pod set's name (a DNS label).", default="main"),
        template=obj(
            "The pods' template (the pod spec's resource requests are what the workload asks for).",
            open=True,
            metadata=open_object("The pods' labels and annotations."),
            spec=open_object("The pod spec."),
        ),
        count=int32("How many pods.", minimum=0),
        minCount=int32("Partial admission: the fewest pods the workload may run with.", minimum=1),
        topologyRequest=_topology_request(api),
    )


POD_SET = _pod_set(V1BETA2)
PRIORITY_CLASS_GROUPS = ("kueue.x-k8s.io", "scheduling.k8s.io")
PRIORITY_CLASS_KINDS = ("WorkloadPriorityClass", "PriorityClass")
PRIORITY_CLASS_SOURCES = ("kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass", "")


def _pod_set_assignment(api: str) -> Field:
    placement: dict[str, Field] = {"levels": arr(string(), "The topology levels the values are given at.")}
    if api == V1BETA1:
        placement["domains"] = arr(
            obj(
                "A domain: its values at the levels, and its pods.",
                values=arr(string(), "The domain's node label values."),
                count=int32("Its pods.", minimum=1),
            ),
            "The domains.",
        )
    else:
        placement["slices"] = arr(
            open_object("Domains encoded together: domainCount, valuesPerLevel, podCounts."), "The domains."
        )
    return obj(
        "What one pod set was admitted with.",
        open=True,
        name=string("The pod set.", default="main"),
        flavors=string_map("The flavor of each resource."),
        resourceUsage=Field(MAP, "The quota used, per resource (all pods).", values=quantity()),
        count=int32("How many pods were admitted."),
        topologyAssignment=Field(
            OBJECT, "Topology Aware Scheduling: the domains the pods go to.", fields=placement
        ),
        delayedTopologyRequest=string("Pending or Ready: a topology assignment made later."),
    )


def _workload(api: str) -> Field:
    fields: dict[str, Field] = {
        "podSets": arr(_pod_set(api), "The workload's pods.", keys=("name",), min_items=1, max_items=8),
        "queueName": string("The LocalQueue, in the workload's namespace."),
        "priority": int32("The priority; taken from the priority class when unset."),
        "active": Field(BOOLEAN, "false: the workload is deactivated (evicted, not admitted)."),
        "maximumExecutionTimeSeconds": int32("Evicted after running this long in total.", minimum=1),
    }
    if api == V1BETA1:
        fields["priorityClassName"] = string("The priority class.")
        fields["priorityClassSource"] = string(
            "Where priorityClassName is: a WorkloadPriorityClass or a PriorityClass.",
            enum=PRIORITY_CLASS_SOURCES,
        )
    else:
        fields["priorityClassRef"] = obj(
            "The priority class.",
            required=("group", "kind", "name"),
            group=string("kueue.x-k8s.io or scheduling.k8s.io.", enum=PRIORITY_CLASS_GROUPS),
            kind=string("WorkloadPriorityClass or PriorityClass.", enum=PRIORITY_CLASS_KINDS),
            name=string("The class."),
        )
    status = obj(
        "The workload's admission and conditions, written by the scheduler.",
        open=True,
        conditions=CONDITIONS,
        admission=obj(
            "Where the workload holds quota.",
            open=True,
            clusterQueue=string("The ClusterQueue."),
            podSetAssignments=arr(_pod_set_assignment(api), "One per pod set.", keys=("name",), max_items=8),
        ),
        admissionChecks=arr(
            _ADMISSION_CHECK_STATE,
            "The admission checks of the workload's ClusterQueue and their states.",
            keys=("name",),
            max_items=8,
        ),
        reclaimablePods=arr(
            obj(
                "Pods of a pod set that finished and whose quota is given back.",
                required=("name", "count"),
                open=True,
                name=string("The pod set."),
                count=int32("How many of its pods.", minimum=0),
            ),
            "Pods that finished, per pod set.",
            keys=("name",),
            max_items=8,
        ),
    )
    return obj(
        "Workload: pods that are admitted together, in a LocalQueue.",
        required=("spec",),
        apiVersion=_API_VERSION,
        kind=_KIND,
        metadata=_METADATA,
        spec=Field(OBJECT, "What the workload needs.", fields=fields, required=("podSets",)),
        status=status,
    )


# --- Topology ------------------------------------------------------------------------------------

_TOPOLOGY = obj(
    "Topology: the node labels of a hierarchy of domains (blocks, racks, hosts), highest first.",
    required=("spec",),
    apiVersion=_API_VERSION,
    kind=_KIND,
    metadata=_METADATA,
    spec=obj(
        "The levels.",
        levels=arr(
            obj("One level.", nodeLabel=string("The node label whose value names a node's domain.")),
            "The levels, highest first; kubernetes.io/hostname only as the lowest.",
            min_items=1,
            max_items=16,
        ),
    ),
    status=open_object("Unused."),
)

# --- by kind and version -----------------------------------------------------------------------

KINDS: dict[str, dict[str, Field]] = {
    "ResourceFlavor": {V1BETA1: _RF, V1BETA2: _RF},
    "ClusterQueue": {V1BETA1: _cluster_queue(V1BETA1), V1BETA2: _cluster_queue(V1BETA2)},
    "Cohort": {api: _cohort(api) for api in (V1ALPHA1, V1BETA1, V1BETA2)},
    "LocalQueue": {V1BETA1: _LOCAL_QUEUE, V1BETA2: _LOCAL_QUEUE},
    "WorkloadPriorityClass": {V1BETA1: _WPC, V1BETA2: _WPC},
    "Workload": {V1BETA1: _workload(V1BETA1), V1BETA2: _workload(V1BETA2)},
    "AdmissionCheck": {V1BETA1: _admission_check(V1BETA1), V1BETA2: _admission_check(V1BETA2)},
    "Topology": {V1BETA1: _TOPOLOGY, V1BETA2: _TOPOLOGY},
}


def same_spec(kind: str, a: str = V1BETA1, b: str = V1BETA2) -> bool:
    """Whether what users write (everything but status) is the same in both
    versions: then the API server can convert by relabelling the apiVersion
    (conversion strategy None) without losing a field."""
    fa, fb = KINDS[kind][a], KINDS[kind][b]
    return {k: f for k, f in fa.fields.items() if k != "status"} == {
        k: f for k, f in fb.fields.items() if k != "status"
    }


__all__ = [
    "KINDS",
    "TOP",
    "V1ALPHA1",
    "V1BETA1",
    "V1BETA2",
    "same_spec",
]
