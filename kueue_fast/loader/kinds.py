"""Kueue's queueing objects -> ``model``: ResourceFlavor, ClusterQueue,
Cohort, LocalQueue, AdmissionCheck, WorkloadPriorityClass, scheduling.k8s.io
PriorityClass and Namespace. Each converter takes one object (a document, or
an object from the API server: the controller uses them too), applies Kueue's
defaults and validation (``kueue_fast.api.validation``, the webhooks and CRD rules
cited per function) and raises an error naming the object and field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import error_collection as collect, fields as api_fields, model as m, validation as v
from ..api.errors import InputError
from ..api.field_types import Field
from ..api.resource_groups import resource_groups
from .common import (
    _FIELDS,
    _TOP,
    V1ALPHA1,
    V1BETA1,
    V1BETA2,
    _check_type,
    _conditions,
    _metadata,
    _spec,
    _status,
)

# --- ResourceFlavor ------------------------------------------------------------------------


def parse_resource_flavor(obj: Mapping[str, Any]) -> m.ResourceFlavor:
    """ResourceFlavor: nodeLabels (<= 8), nodeTaints, tolerations
    (resourceflavor_webhook.go ValidateResourceFlavor + CRD rules)."""
    _check_type(obj, ("ResourceFlavor",))
    name, _, _ = _metadata(obj, "ResourceFlavor", namespaced=False)
    ref = m.object_ref("ResourceFlavor", name)
    fields = _FIELDS["ResourceFlavor"][str(obj["apiVersion"])]
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    spec_fields = fields.fields["spec"]
    v.check_fields(spec, spec_fields.names, ref, "spec")
    rf = m.ResourceFlavor(name)
    try:  # each field of the spec on its own (error_collection.report)
        if spec.get("topologyName"):
            rf.topology_name = v.object_name(spec["topologyName"], ref, "spec.topologyName")
    except InputError as e:
        collect.report(e)
    with collect.reported():
        if spec.get("nodeLabels") is not None:
            limit = spec_fields.fields["nodeLabels"].max_properties
            rf.node_labels = dict(v.labels(spec["nodeLabels"], ref, "spec.nodeLabels", max_properties=limit))
    with collect.reported():
        if spec.get("nodeTaints") is not None:
            rf.node_taints = v.taints(spec["nodeTaints"], ref, "spec.nodeTaints")
    with collect.reported():
        if spec.get("tolerations") is not None:
            rf.tolerations = v.tolerations(spec["tolerations"], ref, "spec.tolerations", strict=True)
    return rf


# --- ClusterQueue ---------------------------------------------------------------------------

# (concurrentAdmissionPolicy and excludeResourcePrefixes are known fields so
# that they get a "not supported" error instead of "unknown field")
_CQ_SPEC = {api: f.fields["spec"] for api, f in _FIELDS["ClusterQueue"].items()}
# Fields the other API version spells differently (apis/kueue/v1beta1 and v1beta2 clusterqueue_types.go).
_CQ_RENAMED = {
    V1BETA1: {"cohortName": v.version_rename(V1BETA1, "cohort", "v1beta2", "cohortName")},
    V1BETA2: {
        "cohort": v.version_rename(V1BETA2, "cohortName", "v1beta1", "cohort"),
        "admissionChecks": v.version_rename(
            V1BETA2, "admissionChecksStrategy.admissionChecks", "v1beta1", "admissionChecks"
        ),
    },
}
# v1beta1 deprecated spellings (apis/kueue/v1beta1/clusterqueue_types.go)
_FUNGIBILITY_V1BETA1 = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}
_PREEMPTION = api_fields.PREEMPTION
_BORROW_WITHIN_COHORT = _PREEMPTION.fields["borrowWithinCohort"]


def _preemption(raw: object, ref: str, path: str) -> m.Preemption:
    """spec.preemption; CEL rule "reclaimWithinCohort=Never and
    borrowWithinCohort.Policy!=Never" (also clusterqueue_webhook.go validatePreemption)."""
    d = v.as_map(raw, ref, path)
    v.check_fields(d, _PREEMPTION.names, ref, path)
    within = _PREEMPTION.fields["withinClusterQueue"].enum
    reclaim = _PREEMPTION.fields["reclaimWithinCohort"].enum
    p = m.Preemption(
        within_cluster_queue=v.opt_enum(d, "withinClusterQueue", within, ref, path, "Never"),
        reclaim_within_cohort=v.opt_enum(d, "reclaimWithinCohort", reclaim, ref, path, "Never"),
    )
    bwc = v.opt_map(d, "borrowWithinCohort", ref, path)
    if bwc is not None:
        bp = v.child(path, "borrowWithinCohort")
        v.check_fields(bwc, _BORROW_WITHIN_COHORT.names, ref, bp)
        p.borrow_within_cohort_policy = v.opt_enum(
            bwc, "policy", _BORROW_WITHIN_COHORT.fields["policy"].enum, ref, bp, "Never"
        )
        if bwc.get("maxPriorityThreshold") is not None:
            p.max_priority_threshold = v.as_int32(
                bwc["maxPriorityThreshold"], ref, v.child(bp, "maxPriorityThreshold")
            )
    if p.reclaim_within_cohort == "Never" and p.borrow_within_cohort_policy != "Never":
        v.invalid(ref, path, "object", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never")
    return p


def _fungibility(raw: object, ref: str, path: str, api: str) -> m.FlavorFungibility:
    """spec.flavorFungibility; CEL/webhook: preference requires both policies
    TryNextFlavor (checked after defaulting, as the webhook sees the object)."""
    d = v.as_map(raw, ref, path)
    fields = _CQ_SPEC[api].fields["flavorFungibility"]
    v.check_fields(d, fields.names, ref, path)
    borrow_vals = fields.fields["whenCanBorrow"].enum  # v1beta1: also Borrow
    preempt_vals = fields.fields["whenCanPreempt"].enum  # v1beta1: also Preempt
    wb = v.opt_enum(d, "whenCanBorrow", borrow_vals, ref, path, "MayStopSearch") or "MayStopSearch"
    wp = v.opt_enum(d, "whenCanPreempt", preempt_vals, ref, path, "TryNextFlavor") or "TryNextFlavor"
    wb = _FUNGIBILITY_V1BETA1.get(wb, wb)
    wp = _FUNGIBILITY_V1BETA1.get(wp, wp)
    pref = None
    if d.get("preference") is not None:
        pref = v.enum(d["preference"], fields.fields["preference"].enum, ref, v.child(path, "preference"))
        if wb != "TryNextFlavor" or wp != "TryNextFlavor":
            v.invalid(
                ref,
                v.child(path, "preference"),
                pref,
                f'preference "{pref}" requires both whenCanBorrow and whenCanPreempt to be TryNextFlavor',
            )
    return m.FlavorFungibility(wb, wp, pref)


def _admission_checks(spec: Mapping[str, Any], ref: str, cq: m.ClusterQueue, *, check_flavors: bool) -> None:
    """spec.admissionChecks (v1beta1) or spec.admissionChecksStrategy: the names
    and, per strategy rule with onFlavors, the flavors the check applies to.
    The two fields are mutually exclusive (v1beta1 CEL rule); every flavor in
    onFlavors must be one of the queue's (clusterqueue_webhook.go
    validateAdmissionCheckOnFlavors; not checked when ``check_flavors`` is
    false: the resource groups were invalid); names are unique (listType=map)."""
    names: list[str] = []
    if spec.get("admissionChecks") is not None:
        p = "spec.admissionChecks"
        for i, x in enumerate(v.as_list(spec["admissionChecks"], ref, p)):
            n = v.as_str(x, ref, v.index(p, i))
            if not n:
                v.required(ref, v.index(p, i))
            if n not in names:  # an atomic list: Kueue keeps a set
                names.append(n)
    acs = v.opt_map(spec, "admissionChecksStrategy", ref, "spec")
    if acs is not None:
        p = "spec.admissionChecksStrategy"
        if names:
            v.invalid(ref, p, "object", "admissionChecks and admissionChecksStrategy cannot be used together")
        fields = _CQ_SPEC[V1BETA2].fields["admissionChecksStrategy"]
        v.check_fields(acs, fields.names, ref, p)
        lp = v.child(p, "admissionChecks")
        rules = v.opt_list(
            acs, "admissionChecks", ref, p, max_items=fields.fields["admissionChecks"].max_items
        )
        rule_fields = api_fields.ADMISSION_CHECK_RULE
        cq_flavors = [f.name for g in cq.resource_groups for f in g.flavors]
        for i, raw in enumerate(rules):
            ip = v.index(lp, i)
            rule = v.as_map(raw, ref, ip)
            v.check_fields(rule, rule_fields.names, ref, ip)
            if not rule.get("name"):
                v.required(ref, v.child(ip, "name"))
            name = v.as_str(rule["name"], ref, v.child(ip, "name"))
            if name in names:
                v.duplicate(ref, v.child(ip, "name"), name)
            names.append(name)
            on_flavors = v.opt_list(
                rule, "onFlavors", ref, ip, max_items=rule_fields.fields["onFlavors"].max_items
            )
            fp = v.child(ip, "onFlavors")
            flavors: list[str] = []
            for j, f in enumerate(on_flavors):
                flavor = v.object_name(f, ref, v.index(fp, j))
                if flavor in flavors:  # listType=set
                    v.duplicate(ref, v.index(fp, j), flavor)
                if check_flavors and flavor not in cq_flavors:
                    v.unsupported(ref, v.index(fp, j), flavor, cq_flavors)
                flavors.append(flavor)
            if flavors:
                cq.admission_check_flavors[name] = flavors
    cq.admission_checks = names


def parse_cluster_queue(obj: Mapping[str, Any]) -> m.ClusterQueue:
    """ClusterQueue with Kueue's defaults (CRD defaults in apis/kueue/v1beta2/clusterqueue_types.go,
    pkg/cache/scheduler/clusterqueue.go) and the clusterqueue_webhook.go / CRD rules."""
    api = _check_type(obj, ("ClusterQueue",))
    name, _, _ = _metadata(obj, "ClusterQueue", namespaced=False)
    ref = m.object_ref("ClusterQueue", name)
    v.check_fields(obj, _FIELDS["ClusterQueue"][api].names, ref, "")
    spec = _spec(obj, ref)
    spec_fields = _CQ_SPEC[api]
    v.check_fields(spec, spec_fields.names, ref, "spec", _CQ_RENAMED[api])
    for feature, what in (
        ("concurrentAdmissionPolicy", "ConcurrentAdmission"),
        ("excludeResourcePrefixes", "excluding resources from quota"),
    ):
        if spec.get(feature):
            with collect.reported():
                v.not_supported_feature(ref, f"spec.{feature}", what)
    # each field of the spec on its own (error_collection.report: every error at once)
    cohort_field = "cohort" if api == V1BETA1 else "cohortName"
    cq = m.ClusterQueue(name=name)
    with collect.reported():
        cq.cohort = v.opt_str(spec, cohort_field, ref, "spec") or None
        if cq.cohort is not None:
            v.object_name(cq.cohort, ref, f"spec.{cohort_field}")
    groups_read = True
    if spec.get("resourceGroups") is not None:
        try:
            cq.resource_groups = resource_groups(
                spec["resourceGroups"],
                ref,
                "spec.resourceGroups",
                has_parent=bool(spec.get(cohort_field)),
                is_cohort=False,
            )
        except InputError as e:
            collect.report(e)
            groups_read = False
    with collect.reported():
        cq.queueing_strategy = v.opt_enum(
            spec,
            "queueingStrategy",
            spec_fields.fields["queueingStrategy"].enum,
            ref,
            "spec",
            "BestEffortFIFO",
        )
    with collect.reported():
        if spec.get("namespaceSelector") is not None:
            cq.namespace_selector = v.label_selector(spec["namespaceSelector"], ref, "spec.namespaceSelector")
    with collect.reported():
        if spec.get("preemption") is not None:
            cq.preemption = _preemption(spec["preemption"], ref, "spec.preemption")
    with collect.reported():
        if spec.get("flavorFungibility") is not None:
            cq.flavor_fungibility = _fungibility(
                spec["flavorFungibility"], ref, "spec.flavorFungibility", api
            )
    _stop_policy_and_weight(spec, spec_fields, ref, cq)
    with collect.reported():
        _admission_checks(spec, ref, cq, check_flavors=groups_read)
    with collect.reported():
        scope = v.opt_map(spec, "admissionScope", ref, "spec")
        if scope is not None:
            scope_fields = spec_fields.fields["admissionScope"]
            v.check_fields(scope, scope_fields.names, ref, "spec.admissionScope")
            if "admissionMode" not in scope:
                v.required(ref, "spec.admissionScope.admissionMode")
            mode = v.enum(
                scope["admissionMode"],
                scope_fields.fields["admissionMode"].enum,
                ref,
                "spec.admissionScope.admissionMode",
            )
            cq.usage_based_admission_fair_sharing = mode == "UsageBasedAdmissionFairSharing"
    _status(obj, ref)
    return cq


# --- Cohort ---------------------------------------------------------------------------------


def parse_cohort(obj: Mapping[str, Any]) -> m.Cohort:
    """Cohort (cohort_webhook.go validateCohort): resource groups as for a
    ClusterQueue, limits need a parent, lendingLimit may exceed nominal."""
    api = _check_type(obj, ("Cohort",))
    name, _, _ = _metadata(obj, "Cohort", namespaced=False)
    ref = m.object_ref("Cohort", name)
    fields = _FIELDS["Cohort"][api]
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    # v1alpha1 called the parent "parent" (apis/kueue/v1alpha1/cohort_types.go)
    parent_field = "parent" if api == V1ALPHA1 and "parent" in spec else "parentName"
    old_parent = v.version_rename(api, "parentName", "v1alpha1", "parent")
    renamed = None if api == V1ALPHA1 else {"parent": old_parent}
    v.check_fields(spec, fields.fields["spec"].names, ref, "spec", renamed)
    co = m.Cohort(name=name)
    try:  # each field of the spec on its own (error_collection.report)
        if api == V1ALPHA1 and "parent" in spec and "parentName" in spec:
            v.invalid(ref, "spec.parent", spec["parent"], "parent and parentName cannot both be set")
        co.parent = v.opt_str(spec, parent_field, ref, "spec") or None
        if co.parent is not None:
            v.object_name(co.parent, ref, f"spec.{parent_field}")
    except InputError as e:
        collect.report(e)
    with collect.reported():
        if spec.get("resourceGroups") is not None:
            co.resource_groups = resource_groups(
                spec["resourceGroups"],
                ref,
                "spec.resourceGroups",
                has_parent=bool(spec.get(parent_field)),
                is_cohort=True,
            )
    with collect.reported():
        if spec.get("fairSharing") is not None:
            co.fair_weight = v.fair_sharing_weight(spec["fairSharing"], ref, "spec.fairSharing")
    _status(obj, ref)
    return co


# --- LocalQueue -----------------------------------------------------------------------------


def parse_local_queue(obj: Mapping[str, Any]) -> m.LocalQueue:
    """LocalQueue: spec.clusterQueue is required (a missing ClusterQueue is not
    an error: its workloads stay pending)."""
    fields = _FIELDS["LocalQueue"][_check_type(obj, ("LocalQueue",))]
    name, ns, _ = _metadata(obj, "LocalQueue", namespaced=True)
    ref = m.object_ref("LocalQueue", name, ns)
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    spec_fields = fields.fields["spec"]
    v.check_fields(spec, spec_fields.names, ref, "spec")
    lq = m.LocalQueue(namespace=ns, name=name, cluster_queue="")
    try:  # each field of the spec on its own (error_collection.report)
        if not spec.get("clusterQueue"):
            v.required(ref, "spec.clusterQueue")
        lq.cluster_queue = v.object_name(spec["clusterQueue"], ref, "spec.clusterQueue")
    except InputError as e:
        collect.report(e)
    _stop_policy_and_weight(spec, spec_fields, ref, lq)
    lq.afs_consumed_nanos = _afs_consumed(_status(obj, ref), ref)
    return lq


def _stop_policy_and_weight(
    spec: Mapping[str, Any], spec_fields: Field, ref: str, queue: m.ClusterQueue | m.LocalQueue
) -> None:
    """spec.stopPolicy and spec.fairSharing of a ClusterQueue or LocalQueue,
    each on its own (error_collection.report)."""
    with collect.reported():
        queue.stop_policy = v.opt_enum(
            spec, "stopPolicy", spec_fields.fields["stopPolicy"].enum, ref, "spec", "None"
        )
    with collect.reported():
        if spec.get("fairSharing") is not None:
            queue.fair_weight = v.fair_sharing_weight(spec["fairSharing"], ref, "spec.fairSharing")


def _afs_consumed(status: Mapping[str, Any], ref: str) -> dict[str, int]:
    """status.fairSharing.admissionFairSharingStatus.consumedResources, exact
    (admission fair sharing seeds a LocalQueue's usage history from it)."""
    p = "status.fairSharing"
    fs = v.opt_map(status, "fairSharing", ref, "status")
    afs = v.opt_map(fs, "admissionFairSharingStatus", ref, p) if fs else None
    p = v.child(p, "admissionFairSharingStatus")
    consumed = v.opt_map(afs, "consumedResources", ref, p) if afs else None
    p = v.child(p, "consumedResources")
    out: dict[str, int] = {}
    for name, q in (consumed or {}).items():
        out[name] = v.nanos(q, ref, v.key(p, name))
    return out


# --- priority classes, namespaces ---------------------------------------------------------


def parse_admission_check(obj: Mapping[str, Any]) -> m.AdmissionCheck:
    """AdmissionCheck: spec.controllerName (required) and whether its Active
    condition is True (cache.go AddOrUpdateAdmissionCheck)."""
    api = _check_type(obj, ("AdmissionCheck",))
    name, _, _ = _metadata(obj, "AdmissionCheck", namespaced=False)
    ref = m.object_ref("AdmissionCheck", name)
    fields = _FIELDS["AdmissionCheck"][api]
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    v.check_fields(spec, fields.fields["spec"].names, ref, "spec")
    controller = ""
    try:  # each field on its own (error_collection.report)
        controller = v.opt_str(spec, "controllerName", ref, "spec")
        if not controller:
            v.required(ref, "spec.controllerName")
        if len(controller) > 253:
            v.invalid(ref, "spec.controllerName", controller, "may not be more than 253 characters")
    except InputError as e:
        collect.report(e)
    with collect.reported():
        params = v.opt_map(spec, "parameters", ref, "spec")
        if params is not None:
            pp = "spec.parameters"
            v.check_fields(params, fields.fields["spec"].fields["parameters"].names, ref, pp)
            for f in ("apiGroup", "kind", "name"):
                try:
                    if not params.get(f):
                        v.required(ref, v.child(pp, f))
                    v.as_str(params[f], ref, v.child(pp, f))
                except InputError as e:
                    collect.report(e)
    conds = _conditions(_status(obj, ref), ref)
    active = conds.get("Active", {}).get("status") == "True"
    return m.AdmissionCheck(name, controller, active)


def parse_workload_priority_class(obj: Mapping[str, Any]) -> m.WorkloadPriorityClass:
    """WorkloadPriorityClass: top-level ``value`` (int32, required), ``description``."""
    fields = _FIELDS["WorkloadPriorityClass"][_check_type(obj, ("WorkloadPriorityClass",))]
    name, _, _ = _metadata(obj, "WorkloadPriorityClass", namespaced=False)
    ref = m.object_ref("WorkloadPriorityClass", name)
    v.check_fields(obj, fields.names, ref, "")
    value = 0
    try:  # value and description on their own (error_collection.report)
        if obj.get("value") is None:
            v.required(ref, "value")
        value = v.as_int32(obj["value"], ref, "value")
    except InputError as e:
        collect.report(e)
    return m.WorkloadPriorityClass(name, value, v.opt_str(obj, "description", ref, ""))


def parse_priority_class(obj: Mapping[str, Any]) -> m.WorkloadPriorityClass:
    """scheduling.k8s.io/v1 PriorityClass (a Workload may take its priority from
    one); kept in the same shape as a WorkloadPriorityClass."""
    _check_type(obj, ("PriorityClass",))
    name, _, _ = _metadata(obj, "PriorityClass", namespaced=False)
    ref = m.object_ref("PriorityClass", name)
    v.check_fields(
        obj,
        ("apiVersion", "kind", "metadata", "value", "description", "globalDefault", "preemptionPolicy"),
        ref,
        "",
    )
    value = 0
    try:  # each field on its own (error_collection.report)
        if obj.get("value") is None:
            v.required(ref, "value")
        value = v.as_int32(obj["value"], ref, "value")
        if value > 1_000_000_000 and not name.startswith("system-"):
            # kubernetes pkg/apis/scheduling/validation: user classes are <= HighestUserDefinablePriority
            v.invalid(ref, "value", value, "maximum allowed value of a user defined priority is 1000000000")
    except InputError as e:
        collect.report(e)
    description = ""
    with collect.reported():
        description = v.opt_str(obj, "description", ref, "")
    default = obj.get("globalDefault")
    return m.WorkloadPriorityClass(
        name,
        value,
        description,
        global_default=False if default is None else v.as_bool(default, ref, "globalDefault"),
    )


def parse_namespace(obj: Mapping[str, Any]) -> m.Namespace:
    """core v1 Namespace. The API server always labels a namespace with
    ``kubernetes.io/metadata.name: NAME``; so do we."""
    _check_type(obj, ("Namespace",))
    name, _, md = _metadata(obj, "Namespace", namespaced=False, label_name=True)
    ref = m.object_ref("Namespace", name)
    v.check_fields(obj, _TOP, ref, "")
    labels = dict(md.get("labels") or {})
    labels["kubernetes.io/metadata.name"] = name
    return m.Namespace(name, labels)
