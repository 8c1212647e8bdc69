"""Topology Aware Scheduling inputs: Topology, Node and Pod objects, a pod
set's ``topologyRequest`` (the Workload field; the pod template annotations
Kueue's job integrations read are integrations/topology_annotations.py's), an admission's
``topologyAssignment`` (v1beta1 ``domains`` or v1beta2 ``slices``), and what
kueue-fast refuses of TAS, naming the field.

Kueue's rules: the Topology CRD (apis/kueue/v1beta2/topology_types.go), the
Workload webhook's slice checks (pkg/webhooks/workload_webhook.go
validateTASSliceSize), the job annotations (pkg/controller/jobframework
tas.go NewPodSetTopologyRequest, tas_validation.go ValidateTASPodSetRequest),
the pods counted on nodes (pkg/controller/tas pod_usage_controller.go
belongsToNonTASCache).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import model as m, validation as v
from ..api.errors import InputError, ValidationError
from ..api.requests import pod_requests
from ..integrations.topology_annotations import (
    PREFERRED_TOPOLOGY_ANNOTATION,
    REQUIRED_TOPOLOGY_ANNOTATION,
    SLICE_CONSTRAINTS_ANNOTATION,
    SLICE_TOPOLOGY_ANNOTATION,
    UNCONSTRAINED_TOPOLOGY_ANNOTATION,
)
from .common import _FIELDS, _check_type, _metadata, _spec, _status

# what makes a pod a TAS pod (pkg/util/tas IsTAS): it does not count as non-TAS usage
_TAS_POD_ANNOTATIONS = (
    REQUIRED_TOPOLOGY_ANNOTATION,
    PREFERRED_TOPOLOGY_ANNOTATION,
    SLICE_TOPOLOGY_ANNOTATION,
    SLICE_CONSTRAINTS_ANNOTATION,
    UNCONSTRAINED_TOPOLOGY_ANNOTATION,
)
_MAX_LEVELS = 16  # Topology spec.levels MaxItems
_FEATURE = "Topology Aware Scheduling"


# --- Topology ----------------------------------------------------------------------------------


def parse_topology(obj: Mapping[str, Any]) -> m.Topology:
    """Topology (kueue.x-k8s.io v1beta1/v1beta2): spec.levels, 1 to 16 node
    labels, unique, kubernetes.io/hostname only as the lowest (the CRD's rules)."""
    _check_type(obj, ("Topology",))
    name, _, _ = _metadata(obj, "Topology", namespaced=False)
    ref = m.object_ref("Topology", name)
    fields = _FIELDS["Topology"][str(obj["apiVersion"])]
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    v.check_fields(spec, fields.fields["spec"].names, ref, "spec")
    if spec.get("levels") is None:
        v.required(ref, "spec.levels")
    raw = v.as_list(spec["levels"], ref, "spec.levels", min_items=1, max_items=_MAX_LEVELS)
    levels: list[str] = []
    for i, lraw in enumerate(raw):
        lp = v.index("spec.levels", i)
        level = v.as_map(lraw, ref, lp)
        v.check_fields(level, frozenset({"nodeLabel"}), ref, lp)
        if level.get("nodeLabel") in (None, ""):
            v.required(ref, v.child(lp, "nodeLabel"))
        levels.append(v.label_key(level["nodeLabel"], ref, v.child(lp, "nodeLabel")))
    if len(set(levels)) != len(levels):
        v.invalid(ref, "spec.levels", "array", "must be unique")
    if m.HOSTNAME_LABEL in levels[:-1]:
        v.invalid(
            ref,
            "spec.levels",
            "array",
            "the kubernetes.io/hostname label can only be used at the lowest level of topology",
        )
    return m.Topology(name, levels)


# --- Node and Pod ---------------------------------------------------------------------------------


def parse_node(obj: Mapping[str, Any]) -> m.Node:
    """core v1 Node, as ``kubectl get nodes -o yaml`` prints it: what TAS reads
    (labels, spec.unschedulable, spec.taints, status.allocatable, the Ready
    condition); the rest is not looked at."""
    _check_type(obj, ("Node",))
    name, _, md = _metadata(obj, "Node", namespaced=False)
    ref = m.object_ref("Node", name)
    spec = _spec(obj, ref)
    status = _status(obj, ref)
    labels = dict(md.get("labels") or {})
    unschedulable = False
    if spec.get("unschedulable") is not None:
        unschedulable = v.as_bool(spec["unschedulable"], ref, "spec.unschedulable")
    taints = v.taints(spec["taints"], ref, "spec.taints") if spec.get("taints") is not None else []
    allocatable: dict[str, int] = {}
    ap = "status.allocatable"
    for r, q in v.as_map(status.get("allocatable") or {}, ref, ap).items():
        allocatable[r] = v.quantity(q, r, ref, v.key(ap, r))
    ready = False
    for i, c in enumerate(v.opt_list(status, "conditions", ref, "status")):
        cond = v.as_map(c, ref, v.index("status.conditions", i))
        if cond.get("type") == "Ready":  # the first Ready condition (utiltas IsNodeStatusConditionTrue)
            ready = cond.get("status") == "True"
            break
    return m.Node(name, labels, taints, allocatable, unschedulable, ready)


def is_tas_pod(annotations: Mapping[str, Any]) -> bool:
    """A pod placed by TAS (pkg/util/tas IsTAS): it carries a topology annotation."""
    return any(a in annotations for a in _TAS_POD_ANNOTATIONS)


def parse_pod(obj: Mapping[str, Any]) -> m.NodePod | None:
    """core v1 Pod: its requests use its node's capacity when it is on a node,
    not finished and not a TAS pod (kueue belongsToNonTASCache); None otherwise."""
    _check_type(obj, ("Pod",))
    name, ns, md = _metadata(obj, "Pod", namespaced=True)
    ref = m.object_ref("Pod", name, ns)
    spec = _spec(obj, ref)
    status = _status(obj, ref)
    node = v.opt_str(spec, "nodeName", ref, "spec")
    if not node or is_tas_pod(md.get("annotations") or {}):
        return None
    if v.opt_str(status, "phase", ref, "status") in ("Failed", "Succeeded"):
        return None
    requests, _ = pod_requests(spec, "spec", ref)
    return m.NodePod(ns, name, node, requests)


# --- a pod set's topologyRequest ------------------------------------------------------------------


def topology_request(raw: object, ref: str, path: str, api: str) -> m.TopologyRequest | None:
    """spec.podSets[].topologyRequest: what decides placement, the Workload
    webhook's slice rules (TASValidateWorkloadSliceSize), and a refusal of
    what kueue-fast does not model (pod-set groups, multi-layer slices)."""
    d = v.as_map(raw, ref, path)
    v.check_fields(d, _FIELDS["Workload"][api].at("spec.podSets[].topologyRequest").names, ref, path)
    if d.get("podSetGroupName") is not None:
        v.not_supported_feature(
            ref, v.child(path, "podSetGroupName"), "Topology Aware Scheduling pod-set groups"
        )
    required = _level(d, "required", ref, path)
    preferred = _level(d, "preferred", ref, path)
    unconstrained = None
    if d.get("unconstrained") is not None:
        unconstrained = v.as_bool(d["unconstrained"], ref, v.child(path, "unconstrained"))
    slice_topology = _level(d, "podSetSliceRequiredTopology", ref, path)
    slice_size = None
    if d.get("podSetSliceSize") is not None:
        slice_size = v.as_int32(d["podSetSliceSize"], ref, v.child(path, "podSetSliceSize"))
    # validateTASSliceSize
    sp = v.child(path, "podSetSliceSize")
    if slice_topology is not None and slice_size is None:
        v.required(ref, sp, "must be set when podSetSliceRequiredTopology is specified")
    if slice_size is not None and slice_size <= 0:
        v.invalid(ref, sp, slice_size, "must be greater than 0")
    if slice_topology is None and slice_size is not None:
        v.fail(ref, sp, "Forbidden: may not be set when podSetSliceRequiredTopology is not specified")
    cp = v.child(path, "podsetSliceRequiredTopologyConstraints")
    constraints = v.opt_list(d, "podsetSliceRequiredTopologyConstraints", ref, path, max_items=3)
    if len(constraints) > 1:
        v.not_supported_feature(ref, cp, "Topology Aware Scheduling multi-layer slice constraints")
    if constraints:
        c = v.as_map(constraints[0], ref, v.index(cp, 0))
        v.check_fields(c, frozenset({"topology", "size"}), ref, v.index(cp, 0))
        size = v.as_int32(c.get("size", 0), ref, v.child(v.index(cp, 0), "size"))
        if size <= 0:
            v.invalid(ref, v.child(v.index(cp, 0), "size"), size, "must be greater than 0")
        topology = _level(c, "topology", ref, v.index(cp, 0))
        if topology is None:
            v.required(ref, v.child(v.index(cp, 0), "topology"))
        # kueue PodSetSliceRequiredTopologyConstraints: the list, when set, wins
        slice_topology, slice_size = topology, size
    tr = m.TopologyRequest(required, preferred, unconstrained, slice_topology, slice_size)
    return tr if tr.explicit else None


def _level(d: Mapping[str, Any], name: str, ref: str, path: str) -> str | None:
    if d.get(name) is None:
        return None
    return v.label_key(d[name], ref, v.child(path, name))


# --- an admission's topologyAssignment ------------------------------------------------------------


def topology_assignment(raw: object, ref: str, path: str) -> m.TopologyAssignment:
    """status.admission.podSetAssignments[].topologyAssignment: v1beta1
    ``{levels, domains: [{values, count}]}`` or v1beta2 ``{levels, slices}``
    (pkg/util/tas InternalSeqFrom), as Kueue's internal form."""
    d = v.as_map(raw, ref, path)
    v.check_fields(d, frozenset({"levels", "domains", "slices"}), ref, path)
    lp = v.child(path, "levels")
    levels = tuple(v.as_str(x, ref, v.index(lp, i)) for i, x in enumerate(v.opt_list(d, "levels", ref, path)))
    domains: list[tuple[tuple[str, ...], int]] = []
    dp = v.child(path, "domains")
    for i, draw in enumerate(v.opt_list(d, "domains", ref, path)):
        ip = v.index(dp, i)
        dom = v.as_map(draw, ref, ip)
        v.check_fields(dom, frozenset({"values", "count"}), ref, ip)
        vp = v.child(ip, "values")
        values = tuple(
            v.as_str(x, ref, v.index(vp, j)) for j, x in enumerate(v.opt_list(dom, "values", ref, ip))
        )
        if len(values) != len(levels):
            v.invalid(ref, vp, len(values), f"must have one value per level ({len(levels)})")
        domains.append((values, v.as_int32(dom.get("count", 0), ref, v.child(ip, "count"), minimum=0)))
    sp = v.child(path, "slices")
    for i, sraw in enumerate(v.opt_list(d, "slices", ref, path)):
        domains.extend(_slice(sraw, levels, ref, v.index(sp, i)))
    return m.TopologyAssignment(levels, tuple(domains))


def _slice(raw: object, levels: tuple[str, ...], ref: str, path: str) -> list[tuple[tuple[str, ...], int]]:
    s = v.as_map(raw, ref, path)
    n = v.as_int32(s.get("domainCount", 0), ref, v.child(path, "domainCount"), minimum=0)
    vp = v.child(path, "valuesPerLevel")
    per_level = v.opt_list(s, "valuesPerLevel", ref, path)
    if len(per_level) != len(levels):
        v.invalid(ref, vp, len(per_level), f"must have one entry per level ({len(levels)})")
    columns: list[list[str]] = []
    for i, lraw in enumerate(per_level):
        lp = v.index(vp, i)
        lv = v.as_map(lraw, ref, lp)
        if lv.get("universal") is not None:
            columns.append([v.as_str(lv["universal"], ref, v.child(lp, "universal"))] * n)
            continue
        ip = v.child(lp, "individual")
        ind = v.as_map(lv.get("individual") or {}, ref, ip)
        prefix = v.opt_str(ind, "prefix", ref, ip)
        suffix = v.opt_str(ind, "suffix", ref, ip)
        roots = [
            v.as_str(x, ref, v.index(v.child(ip, "roots"), j))
            for j, x in enumerate(v.opt_list(ind, "roots", ref, ip))
        ]
        if len(roots) != n:
            v.invalid(ref, v.child(ip, "roots"), len(roots), f"must have domainCount ({n}) items")
        columns.append([prefix + r + suffix for r in roots])
    cp = v.child(path, "podCounts")
    counts_raw = v.as_map(s.get("podCounts") or {}, ref, cp)
    if counts_raw.get("universal") is not None:
        counts = [v.as_int32(counts_raw["universal"], ref, v.child(cp, "universal"), minimum=1)] * n
    else:
        ip = v.child(cp, "individual")
        counts = [
            v.as_int32(x, ref, v.index(ip, j), minimum=1)
            for j, x in enumerate(v.opt_list(counts_raw, "individual", ref, cp))
        ]
        if len(counts) != n:
            v.invalid(ref, ip, len(counts), f"must have domainCount ({n}) items")
    return [(tuple(col[k] for col in columns), counts[k]) for k in range(n)]


# --- what kueue-fast refuses of TAS ---------------------------------------------------------------

# Feature gates whose non-default value changes TAS decisions kueue-fast does not model.
TAS_GATES = {
    "TopologyAwareScheduling": True,
    "TASProfileMixed": True,
    "TASBalancedPlacement": False,
    "TASRespectNodeAffinityPreferred": False,
    "TASHandleOverlappingFlavors": True,
    "TASRecomputeAssignmentWithinSchedulingCycle": True,
    "TASAssignmentsEncodingByHostnamePrefix": True,
    "TASValidateWorkloadSliceSize": True,
    "ElasticJobsViaWorkloadSlicesWithTAS": False,
    "SchedulerLibraryIntegration": False,
}


def tas_problems(state: m.ClusterState) -> list[InputError]:
    """Cross-object refusals once everything is read: with a TAS flavor, the
    feature gates kueue-fast's TAS does not model at their non-default value."""
    tas_flavors = {n for n, rf in state.resource_flavors.items() if rf.topology_name is not None}
    if not tas_flavors:
        return []
    out: list[InputError] = []
    delaying = (m.MULTIKUEUE_CONTROLLER, m.PROVISIONING_CONTROLLER)
    for name, cq in sorted(state.cluster_queues.items()):
        flavors = {f.name for g in cq.resource_groups for f in g.flavors}
        for check in cq.admission_checks:
            ac = state.admission_checks.get(check)
            on = cq.admission_check_flavors.get(check) or flavors
            if ac is not None and ac.controller_name in delaying and tas_flavors & set(on):
                out.append(
                    ValidationError(
                        f"ClusterQueue/{name}",
                        "spec.admissionChecksStrategy",
                        f"not supported by kueue-fast: {_FEATURE} with the {ac.controller_name} "
                        f"admission check {check} (it delays the topology assignment); "
                        "it would change admission decisions",
                    )
                )
    for gate, default in TAS_GATES.items():
        if state.configuration.feature_gates.get(gate, default) != default:
            out.append(
                ValidationError(
                    "Configuration",
                    f"featureGates[{gate}]",
                    f"not supported by kueue-fast: {_FEATURE} with {gate}={str(not default).lower()}; "
                    "it would change admission decisions",
                )
            )
    return out
