"""The informer cache: the objects as the informers last delivered them
(slimmed, by kind and key), the configuration parsed into model objects, and
which Workload each job is queued as. Owned by the scheduling loop's thread,
like Kueue's cache (pkg/cache) is owned by its scheduler: nothing else reads
or writes it, so nothing locks it.

The API objects stay JSON (``dict[str, Any]``): they go as they are to the
status builders (kueue_fast/cluster/status_writer.py, cluster/queue_readiness.py)
and the job integrations, which take JSON; what the reconciler derives from
them is typed here."""

from __future__ import annotations

import logging
from typing import Any

from ..api.errors import InputError
from ..api.model import (
    AdmissionCheck,
    ClusterQueue,
    ClusterState,
    Cohort,
    Configuration,
    LocalQueue,
    Namespace,
    Node,
    NodePod,
    ResourceFlavor,
    Topology,
    WorkloadPriorityClass,
)
from ..integrations import Environment
from ..kube import objects as state
from . import job_kinds as J
from .job_kinds import JOB_KINDS, JobKind
from .track import JSON
from .ungater import workload_key

log = logging.getLogger("kueue_fast.controller")

CONFIG_KINDS = tuple(state.CONFIG_KINDS)
CAPACITY_KINDS = tuple(state.CAPACITY_KINDS)
JOB_KIND_NAMES = tuple(k.name for k in JOB_KINDS)
ALL_KINDS = (*CONFIG_KINDS, "workload", *JOB_KIND_NAMES, *CAPACITY_KINDS)

# the controller manages the kinds it has integrations for, whatever a Configuration says
_CONTROLLER_CONFIGURATION = Configuration(frameworks=tuple(k.integration.FRAMEWORK for k in JOB_KINDS))

_TOMBSTONES_MAX = 100_000  # deletions remembered per kind; the oldest half goes past that


def job_key(kind: JobKind, key: str) -> str:
    """How the cache names a job: "<job kind>:<namespace>/<name>"."""
    return f"{kind.name}:{key}"


def owner_job(wl: JSON) -> str | None:
    """The job key (job_key) of the job that controls the Workload."""
    owner = J.owner_of(wl)
    return job_key(*owner) if owner is not None else None


def rv_newer(new: JSON, old: JSON | None) -> bool:
    """``new`` is a later version of the object than ``old``."""
    if old is None:
        return True
    a = str(new["metadata"].get("resourceVersion", ""))
    b = str(old["metadata"].get("resourceVersion", ""))
    if a.isdigit() and b.isdigit():
        return int(a) > int(b)
    return a != b


def _rv_int(obj: JSON | None) -> int:
    rv = str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")
    return int(rv) if rv.isdigit() else 0


class Cache:
    """What the informers delivered, as the reconciler reads it."""

    def __init__(self) -> None:
        # objects as last seen (slimmed), by kind, then key
        self.objs: dict[str, dict[str, JSON]] = {k: {} for k in ALL_KINDS}
        # resourceVersion of each deleted key: an older event does not bring it back
        self.tombstones: dict[str, dict[str, int]] = {k: {} for k in ALL_KINDS}
        # the configuration as model objects (a kind's invalid objects are absent)
        self.flavors: dict[str, ResourceFlavor] = {}
        self.cqs: dict[str, ClusterQueue] = {}
        self.cohorts: dict[str, Cohort] = {}
        self.lqs: dict[str, LocalQueue] = {}
        self.wpcs: dict[str, WorkloadPriorityClass] = {}
        self.pcs: dict[str, WorkloadPriorityClass] = {}  # scheduling.k8s.io PriorityClasses
        self.namespaces: dict[str, Namespace] = {}
        self.acs: dict[str, AdmissionCheck] = {}
        self.topologies: dict[str, Topology] = {}
        # Topology Aware Scheduling's capacity: the Nodes, and the Pods that use
        # their node's capacity (state.CAPACITY_KINDS), by key
        self.nodes: dict[str, Node] = {}
        self.node_pods: dict[str, NodePod] = {}
        # the TAS pods of each Workload (ungater.py): Workload key -> pod keys, and back
        self.tas_pods: dict[str, set[str]] = {}
        self._pod_workload: dict[str, str] = {}
        # (kind, key) of objects stored in v1beta1 and served unconverted: never written
        self.unconverted: set[tuple[str, str]] = set()
        # job key -> the key of the Workload it is queued as
        self.job_unit: dict[str, str] = {}
        self._models: dict[str, dict[str, Any]] = {
            "flavor": self.flavors,
            "cq": self.cqs,
            "cohort": self.cohorts,
            "lq": self.lqs,
            "wpc": self.wpcs,
            "pc": self.pcs,
            "namespace": self.namespaces,
            "ac": self.acs,
            "topology": self.topologies,
        }

    @property
    def workloads(self) -> dict[str, JSON]:
        return self.objs["workload"]

    def store(self, kind: str, etype: str, key: str, obj: JSON | None) -> tuple[bool, JSON | None]:
        """Keep an event's object (None for DELETED): (whether it changed
        the cache, the object it replaced). An event older than what is kept,
        or than the key's deletion, changes nothing."""
        store = self.objs[kind]
        tombs = self.tombstones[kind]
        if etype == "DELETED":
            old = store.pop(key, None)
            tombs[key] = _rv_int(obj)
            if len(tombs) > _TOMBSTONES_MAX:
                for k in list(tombs)[: _TOMBSTONES_MAX // 2]:
                    del tombs[k]
            return old is not None, old
        assert obj is not None
        old = store.get(key)
        if not rv_newer(obj, old):
            return False, old
        rv = str(obj["metadata"].get("resourceVersion") or "")
        tomb = tombs.get(key)
        if tomb is not None:
            if rv.isdigit() and int(rv) <= tomb:
                return False, old  # older than its deletion
            del tombs[key]
        store[key] = obj
        return True, old

    def apply_config(self, kind: str, key: str, obj: JSON | None, old: JSON | None) -> bool:
        """A configuration object's new version (None: deleted) into its
        model; True when the engine's configuration changed."""
        models = self._models[kind]
        parse = state.CONFIG_KINDS[kind][1]
        if kind == "namespace" and obj is not None and old is not None:
            if (obj["metadata"].get("labels") or {}) == (old["metadata"].get("labels") or {}):
                return False  # only labels matter (namespaceSelector)
        if kind != "namespace" and obj is not None and old is not None and _same_config(kind, obj, old):
            return False  # a status or metadata update (ours, mostly)
        if obj is None:
            models.pop(key, None)
        else:
            try:
                model = parse(obj)
            except InputError as e:
                self.invalid(kind, key, obj, e)
                models.pop(key, None)
            else:
                self.unconverted.discard((kind, key))
                if kind == "cq" and state.deleting(obj):
                    model.stop_policy = "Hold"  # terminating: admits nothing, keeps what runs
                models[key] = model
        # priorities are read when a Workload is created, not by the engine
        return kind not in ("wpc", "pc")

    @property
    def tas(self) -> bool:
        """Some ResourceFlavor is a Topology Aware Scheduling one."""
        return any(f.topology_name is not None for f in self.flavors.values())

    def apply_capacity(self, kind: str, key: str, obj: JSON | None) -> bool:
        """A Node's or Pod's new version (None: deleted) into the capacity
        TAS reads; True when what TAS reads of it changed."""
        models: dict[str, Any] = self.nodes if kind == "node" else self.node_pods
        model = None
        if obj is not None:
            try:
                model = state.CAPACITY_KINDS[kind][1](obj)
            except InputError as e:
                log.error("ignoring %s/%s: %s", obj.get("kind"), key, e)
        if models.get(key) == model:
            return False
        if model is None:
            del models[key]
        else:
            models[key] = model
        return True

    def index_tas_pod(self, key: str, pod: JSON | None) -> str | None:
        """A Pod's new version (None: deleted) into the index of TAS pods by
        Workload: the key of its Workload, None when it is not a TAS pod."""
        wk = workload_key(pod) if pod is not None else None
        prev = self._pod_workload.pop(key, None)
        if prev is not None and prev != wk:
            keys = self.tas_pods[prev]
            keys.discard(key)
            if not keys:
                del self.tas_pods[prev]
        if wk is not None:
            self._pod_workload[key] = wk
            self.tas_pods.setdefault(wk, set()).add(key)
        return wk

    def invalid(self, kind: str, key: str, obj: JSON, e: InputError | None) -> None:
        """An object the controller cannot use. One stored in v1beta1 before
        kueue-fast's CRDs (which do not convert renamed fields) reaches us with
        its v1beta1 fields: any write would store it as v1beta2 and lose them,
        so it is left untouched (kube/crds.py, docs/controller.md)."""
        if state.stored_in_v1beta1(obj):
            if (kind, key) not in self.unconverted:
                log.error("leaving %s/%s alone: %s", obj.get("kind"), key, state.unconverted_message(obj, e))
            self.unconverted.add((kind, key))
        else:
            log.error("ignoring %s/%s: %s", obj.get("kind"), key, e)

    def config_state(self, configuration: Configuration) -> ClusterState:
        """The engine's configuration (no workloads), copied: the cache moves on."""
        return ClusterState(
            resource_flavors=dict(self.flavors),
            cluster_queues=dict(self.cqs),
            cohorts=dict(self.cohorts),
            local_queues=dict(self.lqs),
            priority_classes=dict(self.wpcs),
            namespaces=dict(self.namespaces),
            configuration=configuration,
            admission_checks=dict(self.acs),
            topologies=dict(self.topologies),
            nodes={k: self.nodes[k] for k in sorted(self.nodes)},
            node_pods=list(self.node_pods.values()),
        )

    def environment(self) -> Environment:
        """What Kueue's job integrations read from the cluster besides the job."""

        def labels(ns: str) -> dict[str, str]:
            m = self.namespaces.get(ns)
            return dict(m.labels) if m is not None else {"kubernetes.io/metadata.name": ns}

        return Environment(self.wpcs, self.pcs, self.lqs.keys(), labels, _CONTROLLER_CONFIGURATION)

    def namespace_labels(self, ns: str) -> dict[str, str]:
        m = self.namespaces.get(ns)
        return m.labels if m is not None else {"kubernetes.io/metadata.name": ns}

    def job(self, key: str | None) -> tuple[JobKind | None, JSON | None]:
        """The job a job key names (its kind even when the job is gone)."""
        if not key:
            return None, None
        name, _, okey = key.partition(":")
        kind = J.BY_NAME.get(name)
        return kind, (self.objs[name].get(okey) if kind is not None else None)

    def orphaned(self, wl: JSON) -> bool:
        """A job's Workload whose job is gone (or no longer queued)."""
        uid = (wl["metadata"].get("labels") or {}).get(J.JOB_UID_LABEL)
        owner = J.owner_of(wl)
        if owner is not None:
            kind, key = owner
            job = self.objs[kind.name].get(key)
            return job is None or (uid is not None and job["metadata"].get("uid") != uid)
        if not uid:
            return False
        prefix = wl["metadata"]["namespace"] + "/"
        return not any(
            j["metadata"].get("uid") == uid
            for k in JOB_KINDS
            for key, j in self.objs[k.name].items()
            if key.startswith(prefix)
        )


def _same_config(kind: str, obj: JSON, old: JSON) -> bool:
    """Two versions of a configuration object the engine reads alike."""
    return bool(
        obj.get("spec") == old.get("spec")
        and state.deleting(obj) == state.deleting(old)
        and obj.get("value") == old.get("value")
        and obj.get("globalDefault") == old.get("globalDefault")
        and (kind != "ac" or obj.get("status") == old.get("status"))  # an AdmissionCheck's Active
    )
