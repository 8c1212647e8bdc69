"""A read-only snapshot of what Kueue decides from, taken from a live cluster.

Lists (GET only, in pages, through :class:`KubeClient` with its rate limit)
Kueue's ResourceFlavors, ClusterQueues, Cohorts, LocalQueues,
WorkloadPriorityClasses, AdmissionChecks and Workloads, the Namespaces,
``scheduling.k8s.io`` PriorityClasses, with a Topology Aware Scheduling
flavor the Topologies, Nodes and the Pods that use node capacity (on a node,
not finished, not placed by TAS), the batch/v1 Jobs that name a
LocalQueue (label ``kueue.x-k8s.io/queue-name``, as the controller watches
them), and Kueue's Configuration from the ConfigMap ``kueue-manager-config``
in ``kueue-system`` (key ``controller_manager_config.yaml``) when it can be
read. The objects come out as plain manifests that ``kueue-fast schedule``
and ``simulate`` read, so a snapshot can be written to a file, shared and
replayed offline.

What is left out: server-managed metadata (managedFields, resourceVersion,
generation, the last-applied annotation), the status of objects whose status
Kueue writes but does not read (queues, flavors, namespaces), finished
Workloads and Jobs (they hold no quota), what TAS does not read of Nodes and
Pods (a Node keeps its labels, spec, allocatable and Ready condition; a Pod
its name, node, containers' resources and phase). Kinds a cluster may not serve (Cohorts
before Kueue 0.11, AdmissionChecks, PriorityClasses the credentials may not
list) are notes, not errors; Kueue's kinds are read in v1beta2, else v1beta1.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..api.errors import InputError
from ..loader.configuration import CONFIG_MAP_KEY, config_map_document
from ..loader.tas import parse_pod
from .client import (
    CLUSTER_QUEUES,
    COHORTS,
    JOBS,
    KUEUE_GROUP,
    LOCAL_QUEUES,
    NAMESPACES,
    NODES,
    PODS,
    PRIORITY_CLASSES,
    RESOURCE_FLAVORS,
    TOPOLOGIES,
    WORKLOADS,
    ApiError,
    KubeClient,
    Resource,
    unreachable,
)
from .objects import object_key, v1beta1_fields

JSON = dict[str, Any]

ADMISSION_CHECKS = Resource(KUEUE_GROUP, "v1beta2", "admissionchecks", "AdmissionCheck", False)
POD_PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False)
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_NAMESPACE = "kueue-system"
CONFIG_MAP = "kueue-manager-config"
CONFIG_KEY = CONFIG_MAP_KEY
PAGE = 500
USER_AGENT = "kueue-fast-snapshot/0.1.0"

# In the order written: what others refer to comes first.
KUEUE_KINDS = (RESOURCE_FLAVORS, ADMISSION_CHECKS, COHORTS, CLUSTER_QUEUES, LOCAL_QUEUES, PRIORITY_CLASSES)
# Kinds Kueue writes the status of without reading it back.
STATUS_DROPPED = ("ResourceFlavor", "Cohort", "ClusterQueue", "Namespace", "PriorityClass")
DROPPED_METADATA = ("managedFields", "resourceVersion", "generation", "selfLink")
DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def _plural(kind: str) -> str:
    return kind + ("es" if kind.endswith("s") else "s")


@dataclass
class Snapshot:
    documents: list[JSON]
    server: str
    taken_at: str  # RFC 3339
    counts: dict[str, int] = field(default_factory=dict)  # kind -> objects kept
    notes: list[str] = field(default_factory=list)  # what was not read, or left out, and why

    def summary(self) -> str:
        kinds = ", ".join(f"{n:,} {k if n == 1 else _plural(k)}" for k, n in self.counts.items())
        return f"read {kinds or 'nothing'} from {self.server} at {self.taken_at}"

    def header(self) -> str:
        return f"# kueue-fast snapshot of {self.server} at {self.taken_at}\n"


def _clean(obj: JSON, res: Resource) -> JSON:
    obj.setdefault("apiVersion", res.api_version)
    obj.setdefault("kind", res.kind)
    md = obj.get("metadata") or {}
    for k in DROPPED_METADATA:
        md.pop(k, None)
    ann = md.get("annotations")
    if isinstance(ann, dict):
        for k in DROPPED_ANNOTATIONS:
            ann.pop(k, None)
        if not ann:
            md.pop("annotations", None)
    if obj["kind"] in STATUS_DROPPED:
        obj.pop("status", None)
    return obj


def _node(obj: JSON) -> JSON:
    """A Node with what TAS reads (loader/tas.py parse_node): its status's
    images, addresses and node info can be large."""
    st = obj.get("status") or {}
    ready = [c for c in st.get("conditions") or [] if c.get("type") == "Ready"][:1]
    obj["status"] = {"allocatable": st.get("allocatable") or {}, "conditions": ready}
    return obj


def _counted(pod: JSON) -> bool:
    """A pod whose requests use its node's capacity, as the loader reads it."""
    try:
        return parse_pod(pod) is not None
    except InputError:
        return False


def _pod(obj: JSON) -> JSON:
    """A Pod with what TAS reads of it: its node, containers' resources, phase."""
    spec = obj.get("spec") or {}
    keep = {"name", "resources", "restartPolicy"}
    out: JSON = {"nodeName": spec["nodeName"]}
    for k in ("containers", "initContainers"):
        if spec.get(k):
            out[k] = [{f: v for f, v in c.items() if f in keep} for c in spec[k]]
    for k in ("overhead", "resources"):
        if spec.get(k):
            out[k] = spec[k]
    md = obj.get("metadata") or {}
    obj["metadata"] = {k: md[k] for k in ("name", "namespace", "uid") if k in md}
    obj["spec"] = out
    obj["status"] = (
        {"phase": (obj.get("status") or {}).get("phase")} if (obj.get("status") or {}).get("phase") else {}
    )
    return obj


def _finished(obj: JSON, kind: str) -> bool:
    conds = (obj.get("status") or {}).get("conditions") or []
    done = ("Finished",) if kind == "Workload" else ("Complete", "Failed")
    return any(c.get("type") in done and c.get("status") == "True" for c in conds)


def _kueue_version(client: KubeClient) -> str:
    """v1beta2 when the cluster serves it, else v1beta1."""
    for version in ("v1beta2", "v1beta1"):
        try:
            client.list(Resource(KUEUE_GROUP, version, "clusterqueues", "ClusterQueue", False), limit=1)
            return version
        except ApiError as e:
            if e.status != 404:
                raise _api_error(e, "clusterqueues.kueue.x-k8s.io", client) from None
    raise InputError(
        "",
        "",
        "the cluster serves no Kueue API (clusterqueues.kueue.x-k8s.io not found): is Kueue installed?",
    )


def _api_error(e: ApiError, what: str, client: KubeClient) -> InputError:
    if e.status == 0:
        return InputError("", "", unreachable(str(client.api.configuration.host), e))
    hint = ""
    if e.status == 403:
        hint = f" (the credentials may not list {what}: grant get/list on it)"
    elif e.status == 401:
        hint = " (the credentials were refused)"
    return InputError("", "", f"cannot list {what}: {' '.join(e.message.split()) or e.reason}{hint}")


def read_snapshot(
    client: KubeClient,
    *,
    kueue_namespace: str = KUEUE_NAMESPACE,
    config_map: str = CONFIG_MAP,
    server: str = "",
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc),
    keep_finished: bool = False,
) -> Snapshot:
    """Read the cluster (see the module docstring); errors on the kinds Kueue
    cannot do without raise :class:`InputError` naming the kind.
    ``keep_finished``: finished Workloads and Jobs too (``trace record``)."""
    taken = now().replace(microsecond=0).isoformat().replace("+00:00", "Z")
    snap = Snapshot([], server, taken)
    version = _kueue_version(client)

    def kueue(res: Resource) -> Resource:
        return Resource(res.group, version, res.plural, res.kind, res.namespaced)

    def take(res: Resource, *, optional: bool = False, label_selector: str | None = None) -> list[JSON]:
        what = f"{res.plural}.{res.group}" if res.group else res.plural
        try:
            items, _ = client.list_all(res, label_selector=label_selector, page_size=PAGE)
        except ApiError as e:
            if optional and e.status in (403, 404):
                why = "not served by this cluster" if e.status == 404 else "forbidden to these credentials"
                snap.notes.append(f"{what} not read: {why}")
                return []
            raise _api_error(e, what, client) from None
        out = [_clean(it, res) for it in items]
        relabelled = [o for o in out if v1beta1_fields(o)]
        for o in relabelled:  # stored in v1beta1, served unconverted: read them as what they are
            o["apiVersion"] = f"{KUEUE_GROUP}/v1beta1"
        if relabelled:
            snap.notes.append(
                f"{len(relabelled)} {res.kind}s stored as kueue.x-k8s.io/v1beta1 and served unconverted "
                f"({', '.join(object_key(o) for o in relabelled[:3])}): written as v1beta1"
            )
        return out

    def keep(kind: str, objs: list[JSON]) -> None:
        snap.documents.extend(objs)
        if objs:
            snap.counts[kind] = snap.counts.get(kind, 0) + len(objs)

    # 1. Kueue's Configuration, if the ConfigMap can be read
    config = _configuration(client, kueue_namespace, config_map, snap.notes)
    if config is not None:
        keep("Configuration", [config])
    # 2. namespaces and priority classes, then Kueue's objects
    keep("Namespace", take(NAMESPACES))
    keep("PriorityClass", take(POD_PRIORITY_CLASSES, optional=True))
    for res in KUEUE_KINDS:
        optional = res.kind in ("Cohort", "AdmissionCheck")
        keep(res.kind, take(kueue(res), optional=optional))
    # 3. with a Topology Aware Scheduling flavor: Topologies, Nodes and the pods that use node capacity
    if any(
        (d.get("spec") or {}).get("topologyName") for d in snap.documents if d.get("kind") == "ResourceFlavor"
    ):
        keep("Topology", take(kueue(TOPOLOGIES), optional=True))
        keep("Node", [_node(n) for n in take(NODES)])
        pods = take(PODS)
        counted = [_pod(p) for p in pods if _counted(p)]
        if len(counted) < len(pods):
            snap.notes.append(
                f"{len(pods) - len(counted):,} Pods left out (not on a node, finished, placed by TAS "
                "or invalid: they use no node capacity Kueue counts)"
            )
        keep("Pod", counted)
    # 4. Workloads and the Jobs that name a LocalQueue, without the finished ones
    for res, selector in ((kueue(WORKLOADS), None), (JOBS, QUEUE_LABEL)):
        objs = take(res, label_selector=selector)
        live = objs if keep_finished else [o for o in objs if not _finished(o, res.kind)]
        if len(live) < len(objs):
            snap.notes.append(f"{len(objs) - len(live):,} finished {res.kind}s left out (they hold no quota)")
        keep(res.kind, live)
    return snap


def _configuration(client: KubeClient, namespace: str, name: str, notes: list[str]) -> JSON | None:
    where = f"ConfigMap {namespace}/{name}"
    try:
        cm = client.get(CONFIG_MAPS, name, namespace)
    except ApiError as e:
        why = {404: "not found", 403: "forbidden to these credentials"}.get(e.status, e.message or e.reason)
        notes.append(f"Kueue's Configuration not read ({where}: {why}): Kueue's defaults apply")
        return None
    # read as the loader reads Kueue's ConfigMap in files (errors name the ConfigMap and key)
    doc = config_map_document({"metadata": {"name": name, "namespace": namespace}, **cm})
    if doc is None:
        notes.append(f"Kueue's Configuration not read ({where} has no {CONFIG_KEY}): Kueue's defaults apply")
    return doc


def to_text(snap: Snapshot, fmt: str) -> str:
    """The snapshot as YAML documents (with a header comment) or a JSON v1 List."""
    if fmt == "json":
        import json

        return json.dumps({"apiVersion": "v1", "kind": "List", "items": snap.documents}, indent=1) + "\n"
    return snap.header() + yaml.safe_dump_all(snap.documents, sort_keys=False)


def take_snapshot(
    kubeconfig: str | None,
    context: str | None,
    kueue_namespace: str = KUEUE_NAMESPACE,
    keep_finished: bool = False,
) -> Snapshot:
    """Connect as the controller does (``--kubeconfig``, ``$KUBECONFIG``, in
    cluster, ``~/.kube/config``) and read the snapshot."""
    client = KubeClient.from_config(
        kubeconfig, context, qps=50.0, burst=100, max_retries=2, pool_size=4, user_agent=USER_AGENT
    )
    try:
        return read_snapshot(
            client,
            kueue_namespace=kueue_namespace,
            server=str(client.api.configuration.host),
            keep_finished=keep_finished,
        )
    finally:
        client.close()
