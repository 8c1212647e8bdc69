"""From model Workloads to the WorkloadSpecs both engines take (engine/inputs.py
holds the specs and the Topology they are compiled against): one at a time
(WorkloadCompiler), or a run of plain pending ones as arrays (PendingBatch),
and the SchedulingEquivalenceHashing hash both use (scheduling_hash)."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from .. import _compiled
from ..api import node_affinity
from ..api.model import (
    Admission,
    ClusterState,
    PodSet,
    TopologyAssignment,
    Workload,
    charged_assignments,
    count_after_reclaim,
)
from ..api.requests import quota_requests
from ..loader.fastjson import exact_key
from .inputs import (
    BLOCK_NAMESPACE_MISMATCH,
    BLOCK_RESOURCES_INVALID,
    JOB_UID_LABEL,
    NAMESPACE_MISMATCH_MESSAGE,
    AdmissionSpec,
    PodSetSpec,
    Topology,
    WorkloadSpec,
)
from .tas import class_flavors, cluster_queue_tas_only, pod_set_request, tas_flavor_rejection


class WorkloadCompiler:
    """Turns model Workloads into WorkloadSpecs against one Topology.

    Keeps the interned flavor-eligibility classes, so that workloads added
    later (simulator, controller) share rows with earlier ones."""

    def __init__(self, state: ClusterState, topology: Topology) -> None:
        self.state = state
        self.topology = topology
        self._rid = {n: i for i, n in enumerate(topology.resource_names)}
        self._fid = {n: i for i, n in enumerate(topology.flavor_names)}
        self._cq_id = {cq.name: i for i, cq in enumerate(topology.cluster_queues)}
        self._lq_id = {lq.name: i for i, lq in enumerate(topology.local_queues)}
        self._class_of: dict[tuple[object, ...], int] = {}
        topology.flavor_classes.clear()
        # Topology Aware Scheduling: whether any flavor names a topology (then
        # classes tell TAS pod sets and flavors apart: checkPodSetAndFlavorMatchForTAS),
        # and which ClusterQueues have TAS flavors only (their pod sets ask for TAS implicitly)
        self._tas_flavors = any(rf.topology_name is not None for rf in state.resource_flavors.values())
        self._tas_only = [
            self._tas_flavors and cluster_queue_tas_only(state.cluster_queues[cq.name], state)
            for cq in topology.cluster_queues
        ]
        if topology.tas is not None:
            topology.tas.classes.clear()
        # scheduling_hash by an exact key of what it depends on (see _hash_key)
        self._hash_of: dict[tuple[object, ...], tuple[list[dict[str, Any]], int]] = {}

    def flavor_class(self, ps: PodSet, cq: int = -1) -> int:
        """The pod set's flavor eligibility row (which flavors its pods may
        use, Kueue's reason for each they may not), in the ClusterQueue ``cq``
        (-1: none) when TAS flavors exist."""
        shape: tuple[object, ...] = node_affinity.pod_set_shape(ps)
        implied = False
        if self._tas_flavors:
            tr = ps.topology_request
            implied = tr is None and cq >= 0 and self._tas_only[cq]
            shape = (shape, (tr, frozenset(ps.requests), cq) if tr is not None else implied)
        cid = self._class_of.get(shape)
        if cid is None:
            row: list[str | None] = []
            for fname in self.topology.flavor_names:
                flavor = self.state.resource_flavors.get(fname)
                rejection = None
                if flavor is not None and self._tas_flavors:
                    covered = self._covered(cq, fname)
                    rejection = tas_flavor_rejection(ps, flavor, covered, implied, self.state)
                if flavor is not None and rejection is None:
                    rejection = node_affinity.flavor_rejection(flavor, ps)
                row.append(rejection)
            cid = len(self.topology.flavor_classes)
            self.topology.flavor_classes.append(row)
            if self.topology.tas is not None:  # the leaves its pods may use, per TAS flavor
                self.topology.tas.classes.append(class_flavors(ps, self.topology.tas, self.state))
            self._class_of[shape] = cid
        return cid

    def _covered(self, cq: int, flavor: str) -> list[str]:
        """The resources of the resource group of ``cq`` that lists ``flavor``."""
        if cq < 0:
            return []
        for g in self.state.cluster_queues[self.topology.cluster_queues[cq].name].resource_groups:
            if any(f.name == flavor for f in g.flavors):
                return g.covered_resources
        return []

    def resource_id(self, name: str) -> int:
        rid = self._rid.get(name)
        if rid is None:
            raise KeyError(name)
        return rid

    def _pod_sets(self, wl: Workload) -> tuple[list[PodSetSpec], list[int], list[dict[str, int]]]:
        """The pod sets as the engines take them, their effective counts and charged requests."""
        reclaimable = self.topology.gates.reclaimable_pods
        pod_sets = []
        counts = []
        charged = self.charged_requests(wl)
        cq = self._queue_of(wl.namespace, wl.queue_name)[0] if self._tas_flavors else -1
        tas = self.topology.tas
        for ps, per_pod in zip(wl.pod_sets, charged, strict=True):
            # ReclaimablePods: pods the job declared done no longer need quota.
            count = count_after_reclaim(ps, reclaimable)
            counts.append(count)
            requests = sorted(((self._rid[r], v) for r, v in per_pod.items()), key=lambda x: x[0])
            spec = PodSetSpec(ps.name, count, requests, ps.min_count, self.flavor_class(ps, cq))
            if tas is not None:
                implied = ps.topology_request is None and cq >= 0 and self._tas_only[cq]
                spec.tas = pod_set_request(ps.topology_request, implied, tas)
                spec.tas_requests = tas.resource_vector(ps.requests)
            pod_sets.append(spec)
        return pod_sets, counts, charged

    def compile(self, wl: Workload) -> WorkloadSpec:
        pod_sets, counts, charged = self._pod_sets(wl)
        ignore_name = self.topology.gates.scheduling_equivalence_hashing_ignore_pod_set_name
        spec = WorkloadSpec(
            namespace=wl.namespace,
            name=wl.name,
            uid=wl.uid or wl.key,
            cluster_queue=-1,
            priority=wl.priority,
            queue_ts=self._queue_ts(wl),
            scheduling_hash=self._scheduling_hash(wl, counts, ignore_name, charged),
            pod_sets=pod_sets,
            local_queue=self._lq_id.get(f"{wl.namespace}/{wl.queue_name}", -1),
            queue_name=wl.queue_name,
            job_uid=_job_uid(wl),
        )
        if wl.admission is not None:
            spec.admission = self._admission(wl)
            spec.pods_ready = wl.pods_ready
        self._resolve_queue(wl, spec)
        return spec

    def _queue_ts(self, wl: Workload) -> int:
        """workload.go Ordering.GetQueueOrderTimestamp: the loader's eviction time
        of a workload evicted by the PodsReady timeout counts only when
        waitForPodsReady.requeuingStrategy.timestamp is Eviction (the default)."""
        wait = self.state.configuration.wait_for_pods_ready
        if wl.queue_order_ns is not None and wait is not None and wait.requeuing_timestamp == "Creation":
            for c in ((wl.raw.get("status") or {}).get("conditions") or []) if wl.raw else []:
                if isinstance(c, dict) and c.get("type") == "Evicted":
                    return wl.creation_ns if c.get("reason") == "PodsReadyTimeout" else wl.queue_timestamp_ns
        return wl.queue_timestamp_ns

    def charged_requests(self, wl: Workload) -> list[dict[str, int]]:
        """Per pod set, the per-pod requests charged to quota (Configuration
        resources: excluded prefixes, transformations)."""
        rules = self.state.configuration.resources
        return [quota_requests(ps.requests, rules) for ps in wl.pod_sets]

    def _scheduling_hash(
        self, wl: Workload, counts: list[int], ignore_pod_set_name: bool, requests: list[dict[str, int]]
    ) -> int:
        """scheduling_hash(wl, ...), computed once per distinct key: JSON
        encoding and hashing the pod templates is most of a compile."""
        found = _hash_key(wl, counts, ignore_pod_set_name, requests)
        if found is None:
            return scheduling_hash(wl, counts, ignore_pod_set_name, requests)
        key, templates = found
        hit = self._hash_of.get(key)
        if hit is not None and all(a is b or a == b for a, b in zip(hit[0], templates, strict=True)):
            return hit[1]
        h = scheduling_hash(wl, counts, ignore_pod_set_name, requests)
        self._hash_of[key] = (templates, h)
        return h

    def _admission(self, wl: Workload) -> AdmissionSpec:
        assert wl.admission is not None
        cq = self._cq_id.get(wl.admission.cluster_queue, -1)
        by_name = {psa.name: psa for psa in wl.admission.pod_set_assignments}
        # the quota it holds: the usage of pods reclaimed since is not charged
        charged = {
            psa.name: (count, usage)
            for psa, count, usage in charged_assignments(wl, self.topology.gates.reclaimable_pods)
        }
        pod_sets: list[tuple[int, list[tuple[int, int, int]]]] = []
        for ps in wl.pod_sets:
            psa = by_name.get(ps.name)
            if psa is None:
                pod_sets.append((0, []))
                continue
            count, amounts = charged[ps.name]
            usage = [
                (self._rid[r], self._fid[psa.flavors[r]] if r in psa.flavors else -1, amount)
                for r, amount in sorted(amounts.items())
            ]
            pod_sets.append((count, usage))
        time_ns = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
        spec = AdmissionSpec(cq, pod_sets, time_ns)
        if self.topology.tas is not None:
            spec.tas = [
                self.tas_uses(psa.flavors, psa.topology_assignment) if (psa := by_name.get(ps.name)) else []
                for ps in wl.pod_sets
            ]
        return spec

    def tas_uses(
        self, flavors: dict[str, str], assignment: TopologyAssignment | None
    ) -> list[tuple[int, int, int, int]]:
        """An admitted pod set's topologyAssignment as TAS usage: per TAS flavor
        of its flavors and per domain, the leaf (the flavor's snapshot) and the
        hostname (the cache shared by hostname flavors) it is counted on
        (kueue workload.Info.TASUsage, TASFlavorCache.addUsage)."""
        tas = self.topology.tas
        if assignment is None or tas is None:
            return []
        uses = []
        for fname in sorted(set(flavors.values())):
            f = tas.flavor_of.get(self._fid.get(fname, -1))
            if f is None:
                continue
            hostname_lowest = tas.flavors[f].hostname_lowest
            for values, count in assignment.domains:
                domain = ",".join(values)
                leaf = tas.leaf_of(f, domain)
                host = tas.host_of(domain) if hostname_lowest else -1
                if leaf >= 0 or host >= 0:
                    uses.append((f, leaf, host, count))
        return uses

    def _resolve_queue(self, wl: Workload, spec: WorkloadSpec) -> None:
        """Which ClusterQueue the workload is offered to when pending, or why none."""
        if not wl.active:
            spec.unqueued_reason = "The workload is deactivated"
            return
        cq_id, reason, selected = self._queue_of(wl.namespace, wl.queue_name)
        spec.cluster_queue, spec.unqueued_reason = cq_id, reason
        if cq_id < 0:
            return
        if not selected:
            spec.block = BLOCK_NAMESPACE_MISMATCH
            spec.block_message = NAMESPACE_MISMATCH_MESSAGE
            return
        error = _resources_error(wl)
        if error:
            spec.block = BLOCK_RESOURCES_INVALID
            spec.block_message = error

    def _queue_of(self, namespace: str, queue_name: str) -> tuple[int, str, bool]:
        """An active workload's (ClusterQueue id or -1, why none, whether the
        ClusterQueue's namespaceSelector selects the namespace)."""
        lq = self.state.local_queues.get(f"{namespace}/{queue_name}")
        if lq is None:
            return -1, f"LocalQueue {queue_name} doesn't exist", False
        if lq.stop_policy != "None":
            return -1, f"LocalQueue {queue_name} is stopped", False
        cq_id = self._cq_id.get(lq.cluster_queue)
        if cq_id is None:
            return -1, f"ClusterQueue {lq.cluster_queue} doesn't exist", False
        cq = self.state.cluster_queues[lq.cluster_queue]
        labels = self.state.namespace_labels(namespace)
        return cq_id, "", cq.namespace_selector is not None and cq.namespace_selector.matches(labels)

    def pending_batch(self) -> PendingBatch | None:
        """An empty :class:`PendingBatch` over this compiler; None without a
        compiled engine._pending from these sources (_compiled): then compile() each."""
        # with TAS flavors a pod set's flavor class also depends on its ClusterQueue
        return PendingBatch(self) if _pending is not None and not self._tas_flavors else None


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _resources_error(wl: Workload) -> str:
    """The first pod set's resources validation error ("" when none)."""
    for ps in wl.pod_sets:
        if ps.resources_validation_error:
            return ps.resources_validation_error
    return ""


# PendingBatch's filling half is compiled only (engine/_pending.pyx): without a
# module from these sources (_compiled) every workload goes through compile(),
# the same arrays, slower.
_pending = _compiled.module("engine._pending")
if TYPE_CHECKING:
    from ._pending import PendingFill
else:
    PendingFill = _pending.PendingFill if _pending is not None else object


class PendingBatch(PendingFill):
    """Pending workloads compiled straight into the native engine's bulk
    arrays (``NativeEngine.add_workloads``), without a WorkloadSpec each:
    ``prepare(workloads)`` reads them all once into typed rows (the compiled
    half, ``engine._pending.PendingFill``), ``rows(keys)`` finds each key's row (-1:
    compile() must add it) and ``arrays(rows)`` gathers a run of rows.

    What depends only on a workload's pod sets and priority (the engine's pod
    set rows, the scheduling hash) is computed once per distinct shape, and
    what depends only on its namespace and queue name once per pair. A shape
    is keyed by the identities of the templates the loader read
    (PodSet.template_spec), else by the exact key ``_hash_key`` gives
    (templates compared with == on a hit; :meth:`_shape`). The values are the
    ones :meth:`WorkloadCompiler.compile` gives; a workload whose spec the
    arrays cannot carry (an admission, admission checks, a job-uid label, no
    ClusterQueue) gets no row: the caller compiles that one as usual. The
    memos live as long as the batch: build one per bulk construction, while
    the workloads do not change."""

    def __init__(self, compiler: WorkloadCompiler) -> None:
        super().__init__(compiler)
        self._shapes: dict[tuple[object, ...], tuple[list[dict[str, Any]], list[PodSetSpec], int, str]] = {}
        # compile(): (namespace, queue name) -> (ClusterQueue id, why none, selected, LocalQueue id),
        # _admission_key -> (ClusterQueue id, rows)
        self._queues_of: dict[tuple[str, str], tuple[int, str, bool, int]] = {}
        self._admissions: dict[
            tuple[object, ...], tuple[int, list[tuple[int, list[tuple[int, int, int]]]]]
        ] = {}

    def _shape(self, wl: Workload) -> tuple[list[PodSetSpec], int, str] | None:
        """(pod sets, scheduling hash, resources error) as compile() gives them; None: not keyable."""
        c = self.compiler
        ignore_name = c.topology.gates.scheduling_equivalence_hashing_ignore_pod_set_name
        charged = c.charged_requests(wl)
        reclaimable = c.topology.gates.reclaimable_pods
        counts = [count_after_reclaim(ps, reclaimable) for ps in wl.pod_sets]
        found = _hash_key(wl, counts, ignore_name, charged)
        if found is None:
            return None
        parts, templates = found
        # what the hash key leaves out: the names (when ignored) and what decides the flavor class
        key = (
            parts,
            tuple(ps.name for ps in wl.pod_sets),
            tuple(node_affinity.pod_set_shape(ps) for ps in wl.pod_sets),
            _resources_error(wl),
        )
        hit = self._shapes.get(key)
        if hit is not None and all(a is b or a == b for a, b in zip(hit[0], templates, strict=True)):
            return hit[1], hit[2], hit[3]
        shape = self._computed_shape(wl)
        if shape is not None:
            self._shapes[key] = (templates, *shape)
        return shape

    def _computed_shape(self, wl: Workload) -> tuple[list[PodSetSpec], int, str] | None:
        """(pod sets, scheduling hash, resources error) computed as compile() does; None when a
        request is beyond int64 (the engine refuses it, one workload at a time)."""
        c = self.compiler
        pod_sets, counts, charged = c._pod_sets(wl)
        if any(not _INT64_MIN <= v <= _INT64_MAX for ps in pod_sets for _, v in ps.requests):
            return None
        ignore_name = c.topology.gates.scheduling_equivalence_hashing_ignore_pod_set_name
        return pod_sets, c._scheduling_hash(wl, counts, ignore_name, charged), _resources_error(wl)

    def compile(self, wl: Workload) -> WorkloadSpec:
        """``compiler.compile(wl)`` for a workload the arrays do not carry (an
        admitted one...), with its pod sets and hash from the shapes memo
        (:meth:`shape`), its queue and admission rows once per distinct value."""
        c = self.compiler
        found = self.shape(wl)
        if found is None:
            return c.compile(wl)
        pod_sets, scheduling_hash, resources_error = found
        ns, queue_name = wl.namespace, wl.queue_name
        queue = self._queues_of.get((ns, queue_name))
        if queue is None:
            queue = (*c._queue_of(ns, queue_name), c._lq_id.get(f"{ns}/{queue_name}", -1))
            self._queues_of[(ns, queue_name)] = queue
        cq_id, reason, selected, lq_id = queue
        spec = WorkloadSpec(
            namespace=ns,
            name=wl.name,
            uid=wl.uid or wl.key,
            cluster_queue=-1,
            priority=wl.priority,
            queue_ts=c._queue_ts(wl),
            scheduling_hash=scheduling_hash,
            pod_sets=list(pod_sets),
            local_queue=lq_id,
            queue_name=queue_name,
            job_uid=_job_uid(wl),
        )
        if wl.admission is not None:
            spec.admission = self._admission(wl)
            spec.pods_ready = wl.pods_ready
        # as WorkloadCompiler._resolve_queue
        if not wl.active:
            spec.unqueued_reason = "The workload is deactivated"
        else:
            spec.cluster_queue, spec.unqueued_reason = cq_id, reason
            if cq_id >= 0 and not selected:
                spec.block = BLOCK_NAMESPACE_MISMATCH
                spec.block_message = NAMESPACE_MISMATCH_MESSAGE
            elif cq_id >= 0 and resources_error:
                spec.block = BLOCK_RESOURCES_INVALID
                spec.block_message = resources_error
        return spec

    def _admission(self, wl: Workload) -> AdmissionSpec:
        """WorkloadCompiler._admission, its rows once per distinct (ClusterQueue,
        pod set names, assignments) of plain ints and strings."""
        adm = wl.admission
        assert adm is not None
        key = _admission_key(adm, wl.pod_sets)
        if key is None:
            return self.compiler._admission(wl)
        hit = self._admissions.get(key)
        if hit is None:
            spec = self.compiler._admission(wl)
            self._admissions[key] = (spec.cluster_queue, spec.pod_sets)
            return spec
        time_ns = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
        return AdmissionSpec(hit[0], hit[1], time_ns)

    def arrays(self, rows: Any) -> Any:
        """The workloads of ``rows`` (from :meth:`rows`, none -1) as
        ``kueue_fast.engine.contract.WorkloadArrays``."""
        from .contract import WorkloadArrays

        return WorkloadArrays(**self.columns(rows))


def _admission_key(adm: Admission, pod_sets: list[PodSet]) -> tuple[object, ...] | None:
    """All that WorkloadCompiler._admission reads but the time, when it is plain
    strings and ints (exact: True is not 1 here); None otherwise."""
    # the pod sets' counts after reclaim scale the charged usage
    parts: list[object] = [adm.cluster_queue, *((ps.name, ps.count, ps.reclaimable) for ps in pod_sets)]
    if any(type(ps.count) is not int or type(ps.reclaimable) is not int for ps in pod_sets):
        return None
    for psa in adm.pod_set_assignments:
        usage = tuple(psa.resource_usage.items())
        if type(psa.count) is not int or any(type(a) is not int for _, a in usage):
            return None
        parts.append((psa.name, psa.count, tuple(psa.flavors.items()), usage))
    return tuple(parts)


def _job_uid(wl: Workload) -> str:
    labels = (wl.raw.get("metadata") or {}).get("labels") if wl.raw else None
    uid = labels.get(JOB_UID_LABEL) if isinstance(labels, dict) else None
    return uid if isinstance(uid, str) else ""


# The pod template fields that make two workloads schedule alike (kueue
# pkg/util/pod SpecShape): requests and ports of every container, and what
# decides where pods may run.
_SHAPE_FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "runtimeClassName",
    "priority",
    "topologySpreadConstraints",
    "overhead",
    "resourceClaims",
)


def _spec_shape(template_spec: dict[str, Any]) -> dict[str, Any]:
    shape: dict[str, Any] = {k: template_spec[k] for k in _SHAPE_FIELDS if k in template_spec}
    for kind in ("initContainers", "containers"):
        shape[kind] = [
            {"requests": (c.get("resources") or {}).get("requests"), "ports": c.get("ports")}
            for c in template_spec.get(kind) or []
            if isinstance(c, dict)
        ]
    return shape


def _raw_templates(wl: Workload) -> list[object]:
    """Each pod set's template spec as scheduling_hash reads it from wl.raw."""
    raw_pod_sets = (wl.raw.get("spec") or {}).get("podSets") or [] if wl.raw else []
    out: list[object] = []
    for i in range(len(wl.pod_sets)):
        raw = raw_pod_sets[i] if i < len(raw_pod_sets) and isinstance(raw_pod_sets[i], dict) else {}
        out.append(((raw.get("template") or {}).get("spec")) or {})
    return out


def _hash_key(
    wl: Workload, counts: list[int], ignore_pod_set_name: bool, charged: list[dict[str, int]]
) -> tuple[tuple[object, ...], list[dict[str, Any]]] | None:
    """An exact key of everything scheduling_hash reads, and the templates to
    compare on a hit; None when a value is not plain JSON-like data (then the
    hash is computed). Exact: values are checked to be of their exact types
    (True is not 1 in the payload), templates are keyed by their orjson
    serialization and compared with == on a hit (fastjson.exact_key)."""
    if type(wl.priority) is not int:
        return None
    templates: list[dict[str, Any]] = []
    parts: list[object] = [wl.priority, ignore_pod_set_name]
    for ps, per_pod, count, template in zip(wl.pod_sets, charged, counts, _raw_templates(wl), strict=True):
        if type(template) is not dict or type(ps.name) is not str:
            return None
        if ps.min_count is not None and type(ps.min_count) is not int:
            return None
        requests = tuple(per_pod.items())
        for r, amount in requests:
            if type(r) is not str or type(amount) is not int:
                return None
        tkey = exact_key(template)
        if tkey is None:
            return None
        templates.append(template)
        parts.append((None if ignore_pod_set_name else ps.name, count, ps.min_count, requests, tkey))
        if ps.topology_request is not None:
            parts.append(ps.topology_request)
    return tuple(parts), templates


def scheduling_hash(
    wl: Workload, counts: list[int], ignore_pod_set_name: bool, charged: list[dict[str, int]] | None = None
) -> int:
    """Kueue computeSchedulingHash (pkg/workload/workload.go): workloads with the
    same priority and the same pod sets (template shape, effective count and
    requests, minCount) fail the same way, so one failure parks them all
    (SchedulingEquivalenceHashing). ``charged``: per pod set the requests
    charged to quota (default: the pod sets' requests), as TotalRequests."""
    if charged is None:
        charged = [ps.requests for ps in wl.pod_sets]
    raw_pod_sets = (wl.raw.get("spec") or {}).get("podSets") or [] if wl.raw else []
    shapes = []
    for i, ps in enumerate(wl.pod_sets):
        raw = raw_pod_sets[i] if i < len(raw_pod_sets) and isinstance(raw_pod_sets[i], dict) else {}
        template = ((raw.get("template") or {}).get("spec")) or {}
        shape: dict[str, Any] = {
            "spec": _spec_shape(template) if isinstance(template, dict) else None,
            "count": counts[i],
            "requests": sorted((r, v * counts[i]) for r, v in charged[i].items()),
            "minCount": ps.min_count,
        }
        if not ignore_pod_set_name:
            shape["name"] = ps.name
        if ps.topology_request is not None:  # kueue hashes the topologyRequest too
            shape["topologyRequest"] = repr(ps.topology_request)
        shapes.append(shape)
    payload = json.dumps({"podSets": shapes, "priority": wl.priority}, sort_keys=True, default=str)
    return int.from_bytes(hashlib.blake2b(payload.encode(), digest_size=8).digest(), "little") >> 1
