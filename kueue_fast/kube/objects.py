"""Cluster objects -> the engine's ``ClusterState``, as the controller reads
them. Shared by the reconciler (object by object, as informers deliver them)
and by read-only commands (``kueue-fast status``: :func:`read_objects` lists
everything once, :func:`build_state` builds the state the controller would
build from it), so that both see the same queues and workloads.

* configuration objects go through the loader's parsers (Kueue's
  validation): an invalid one is left out, with the reason;
* a Workload counts unless it is finished or being deleted; only the spec
  fields the engine reads are parsed (a Workload written by Kueue with fields
  kueue-fast does not know still queues);
* a Workload that holds an admission and has ``Evicted=True`` is an eviction
  in progress: it keeps its quota until its job has stopped;
* ClusterQueues and Workloads stored as v1beta1 under earlier CRDs and served
  unconverted (``spec.cohort``, ``spec.priorityClassName``) are recognised
  (:func:`stored_in_v1beta1`): kueue-fast's CRDs do not convert their renamed
  fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import loader
from ..api import fields as api_fields
from ..api.errors import InputError
from ..api.model import ClusterState, Workload, WorkloadPriorityClass
from ..cluster import status_writer as S
from ..loader import (
    POD_SET_FIELDS as _PODSET_FIELDS,
    V1BETA2_SPEC_FIELDS as _WL_SPEC_FIELDS,
    parse_admission_check,
    parse_cluster_queue,
    parse_cohort,
    parse_local_queue,
    parse_namespace,
    parse_priority_class,
    parse_resource_flavor,
    parse_workload,
    parse_workload_priority_class,
)
from ..loader.tas import parse_node, parse_pod, parse_topology
from .client import (
    ADMISSION_CHECKS,
    CLUSTER_QUEUES,
    COHORTS,
    KUEUE_API,
    LOCAL_QUEUES,
    NAMESPACES,
    NODES,
    POD_PRIORITY_CLASSES,
    PODS,
    PRIORITY_CLASSES,
    RESOURCE_FLAVORS,
    TOPOLOGIES,
    WORKLOADS,
    ApiError,
    KubeClient,
    Resource,
)

JSON = dict[str, Any]

# the controller's names of the configuration kinds, their resources and parsers
# ("pc": scheduling.k8s.io PriorityClasses, read for jobs' priorities)
CONFIG_KINDS: dict[str, tuple[Resource, Callable[[JSON], Any]]] = {
    "flavor": (RESOURCE_FLAVORS, parse_resource_flavor),
    "cq": (CLUSTER_QUEUES, parse_cluster_queue),
    "cohort": (COHORTS, parse_cohort),
    "lq": (LOCAL_QUEUES, parse_local_queue),
    "wpc": (PRIORITY_CLASSES, parse_workload_priority_class),
    "pc": (POD_PRIORITY_CLASSES, parse_priority_class),
    "namespace": (NAMESPACES, parse_namespace),
    "ac": (ADMISSION_CHECKS, parse_admission_check),
    "topology": (TOPOLOGIES, parse_topology),
}

# Topology Aware Scheduling's view of the nodes: Nodes, and the Pods whose
# requests use their node's capacity (parse_pod: None for the others)
CAPACITY_KINDS: dict[str, tuple[Resource, Callable[[JSON], Any]]] = {
    "node": (NODES, parse_node),
    "pod": (PODS, parse_pod),
}


def object_key(obj: JSON) -> str:
    md = obj["metadata"]
    ns = md.get("namespace")
    return f"{ns}/{md['name']}" if ns else str(md["name"])


def deleting(obj: JSON) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


def counts(wl: JSON) -> bool:
    """Whether a Workload is the engine's: not finished, not being deleted."""
    return not deleting(wl) and not S.condition_true(wl, S.FINISHED)


def _engine_fields(wl: JSON, pod_sets: dict[int, list[JSON]] | None = None) -> JSON:
    """The Workload with only the spec fields the engine reads (a Workload
    written by Kueue with fields kueue-fast does not know still queues).
    ``pod_sets`` caches the filtered pod sets by the identity of the list the
    informer shares among Workloads (Slimmer.share). Nothing is copied when
    nothing is left out: the loader and the engine only read the object
    (cluster/status_writer.py changes a Workload's status on copies)."""
    spec = wl.get("spec") or {}
    if not spec.keys() <= _WL_SPEC_FIELDS:
        spec = {k: v for k, v in spec.items() if k in _WL_SPEC_FIELDS}
    raw_sets = spec.get("podSets") or []
    got = pod_sets.get(id(raw_sets)) if pod_sets is not None else None
    if got is None:
        got = (
            raw_sets
            if all(ps.keys() <= _PODSET_FIELDS for ps in raw_sets)
            else [{k: v for k, v in ps.items() if k in _PODSET_FIELDS} for ps in raw_sets]
        )
        if pod_sets is not None:
            pod_sets[id(raw_sets)] = got
    if spec.get("podSets") is not got:
        spec = {**spec, "podSets": got}
    obj = {
        "apiVersion": wl.get("apiVersion") or KUEUE_API,
        "kind": "Workload",
        "metadata": wl["metadata"],
        "spec": spec,
    }
    st = wl.get("status")
    if st:
        obj["status"] = st
    return obj


def workload_model(wl: JSON, wpcs: Mapping[str, WorkloadPriorityClass]) -> Workload:
    """The engine's Workload (InputError when the loader refuses it): only
    the spec fields the engine reads are parsed."""
    return parse_workload(_engine_fields(wl), wpcs)


# Workloads per loader.build_state call of workload_models: an invalid one
# sends its chunk to the exact path, so it costs at most this many slow parses.
BULK_CHUNK = 2000


def workload_models(
    wls: Mapping[str, JSON], wpc_objects: Iterable[JSON]
) -> tuple[dict[str, Workload], list[str]]:
    """workload_model of many Workloads at once, through the loader's bulk
    path (``loader.build_state``, as ``kueue-fast schedule`` reads its
    input): ``(models by key, keys left to workload_model)``. Left over:
    Workloads with v1beta1 fields or without a creationTimestamp (the loader
    would date them by position), and every Workload of a chunk the loader
    refused (one invalid Workload, a missing priority class): the exact path
    names each one's error, as before. ``wpc_objects``: the valid
    WorkloadPriorityClasses, the classes workload_model is given."""
    classes = list(wpc_objects)
    models: dict[str, Workload] = {}
    left: list[str] = []
    chunk: list[tuple[str, JSON]] = []
    pod_sets: dict[int, list[JSON]] = {}

    def flush() -> None:
        try:
            state = loader.build_state([*classes, *(obj for _, obj in chunk)])
        except InputError:
            left.extend(key for key, _ in chunk)
        else:
            for key, _ in chunk:
                models[key] = state.workloads[key]
        chunk.clear()

    for key, wl in wls.items():
        if v1beta1_fields(wl) or not wl["metadata"].get("creationTimestamp"):
            left.append(key)
            continue
        chunk.append((key, _engine_fields(wl, pod_sets)))
        if len(chunk) >= BULK_CHUNK:
            flush()
    if chunk:
        flush()
    return models, left


def eviction(wl: JSON, model: Workload) -> tuple[str, str, str | None] | None:
    """(reason, message, preemption reason) of an eviction in progress: the
    Workload holds an admission and has Evicted=True."""
    ev = S.get_condition(wl, S.EVICTED)
    if model.admission is None or ev is None or ev.get("status") != "True":
        return None
    pre = S.get_condition(wl, S.PREEMPTED)
    pre_reason = str(pre.get("reason")) if pre and pre.get("status") == "True" else None
    return str(ev.get("reason") or "Preempted"), str(ev.get("message") or ""), pre_reason


# --- objects stored in v1beta1 --------------------------------------------------------------------

# kinds whose v1beta1 renamed fields (kueue-fast's CRDs do not serve their v1beta1)
_RENAMED_KINDS = {"ClusterQueue": parse_cluster_queue, "Workload": parse_workload}
# spec fields only v1beta1 has: spec.cohort, spec.priorityClassName...
_V1BETA1_ONLY = {
    kind: api_fields.KINDS[kind][api_fields.V1BETA1].at("spec").names
    - api_fields.KINDS[kind][api_fields.V1BETA2].at("spec").names
    for kind in _RENAMED_KINDS
}


def v1beta1_fields(obj: JSON) -> list[str]:
    """The v1beta1-only spec fields of an object served as v1beta2."""
    only = _V1BETA1_ONLY.get(str(obj.get("kind")), frozenset())
    return [f"spec.{k}" for k in (obj.get("spec") or {}) if k in only]


def stored_in_v1beta1(obj: JSON) -> bool:
    """A v1beta2 object with v1beta1 fields, or an invalid one that is valid
    as v1beta1 (a deprecated value such as whenCanBorrow: Borrow): stored in
    v1beta1 and served unconverted."""
    if v1beta1_fields(obj):
        return True
    parse = _RENAMED_KINDS.get(str(obj.get("kind")))
    if parse is None or obj.get("apiVersion") != KUEUE_API:
        return False
    try:
        parse({**obj, "apiVersion": api_fields.V1BETA1})  # type: ignore[operator]
    except InputError:
        return False
    return True


def unconverted_message(obj: JSON, e: InputError | None) -> str:
    fields = v1beta1_fields(obj)
    return (
        "it was stored as kueue.x-k8s.io/v1beta1 and is served unconverted "
        f"({', '.join(fields) if fields else e}); "
        "rewrite it in v1beta2 (kubectl get -o yaml, rename the fields, kubectl replace), "
        "or install Kueue's CRDs with their conversion webhook"
    )


# --- read-only: the cluster at once -----------------------------------------------------------------

# kinds a cluster may not serve: none of them then
_OPTIONAL = ("cohort", "pc", "ac", "topology")


def read_objects(
    client: KubeClient, kinds: Iterable[str] = (*CONFIG_KINDS, "workload")
) -> dict[str, list[JSON]]:
    """Every object of these kinds, listed in pages (``KubeClient.list_all``,
    which the controller's informers list with too). An ApiError names the
    kind that could not be read."""
    resources = {**{k: r for k, (r, _) in CONFIG_KINDS.items()}, "workload": WORKLOADS}
    out: dict[str, list[JSON]] = {}
    for kind in kinds:
        res = resources[kind]
        try:
            out[kind], _ = client.list_all(res)
        except ApiError as e:
            if e.status == 404 and kind in _OPTIONAL:
                out[kind] = []
                continue
            raise
    return out


@dataclass
class Snapshot:
    """What the controller would hold after reading the cluster once."""

    state: ClusterState
    workloads: dict[str, JSON]  # key -> the Workload object, for those in the state
    evictions: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # objects left out, and why


def build_state(objects: Mapping[str, list[JSON]]) -> Snapshot:
    """The engine's state from listed objects, as the controller builds it."""
    models: dict[str, dict[str, Any]] = {k: {} for k in CONFIG_KINDS}
    problems: list[str] = []
    for kind, (_, parse) in CONFIG_KINDS.items():
        for obj in objects.get(kind) or []:
            key = object_key(obj)
            try:
                m = parse(obj)
            except InputError as e:
                why = unconverted_message(obj, e) if stored_in_v1beta1(obj) else str(e)
                problems.append(f"{obj.get('kind')}/{key} ignored: {why}")
                continue
            if kind == "cq" and deleting(obj):
                m.stop_policy = "Hold"  # terminating: admits nothing, keeps what runs
            models[kind][key] = m
    state = ClusterState(
        resource_flavors=models["flavor"],
        cluster_queues=models["cq"],
        cohorts=models["cohort"],
        local_queues=models["lq"],
        priority_classes=models["wpc"],
        namespaces=models["namespace"],
        admission_checks=models["ac"],
        topologies=models["topology"],
    )
    state.pod_priority_classes = models["pc"]
    snap = Snapshot(state, {}, problems=problems)
    for wl in objects.get("workload") or []:
        if not counts(wl):
            continue
        key = object_key(wl)
        try:
            if v1beta1_fields(wl):
                raise InputError(f"Workload/{key}", "", "v1beta1 fields")
            model = workload_model(wl, state.priority_classes)
        except InputError as e:
            why = unconverted_message(wl, e) if stored_in_v1beta1(wl) else str(e)
            problems.append(f"Workload/{key} ignored: {why}")
            continue
        state.workloads[key] = model
        snap.workloads[key] = wl
        ev = eviction(wl, model)
        if ev is not None:
            snap.evictions[key] = ev
    return snap
