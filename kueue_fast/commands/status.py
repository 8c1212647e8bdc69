"""``kueue-fast status``: the pending workloads of ClusterQueues (or of one
LocalQueue) in the order Kueue would admit them, their positions, and why
each waits, computed by the engine from the cluster's state.

What Kueue's visibility API gives (``visibility.kueue.x-k8s.io``
``.../clusterqueues/<cq>/pendingworkloads`` and
``.../namespaces/<ns>/localqueues/<lq>/pendingworkloads``, which
``kueuectl list workloads`` shows), without Kueue running: the same fields
(``priority``, ``localQueueName``, ``positionInClusterQueue`` and
``positionInLocalQueue`` from 0, the owner), plus Kueue's last pending
reason and message on the Workload and kueue-fast's explanation
(``kueue_fast.cluster.explain``: which head it waits behind, what it needs per flavor
and what is free).

Read-only: the cluster is listed once (``state.read_objects``, the listing the
controller's informers use) and the engine is built from it as the controller
builds it (``state.build_state``); nothing is written. The order is Kueue's
(pkg/cache/queue cluster_queue.go Snapshot: every pending workload of the
ClusterQueue sorted as its heap pops them; pkg/visibility/storage
pending_workloads_cq.go and pending_workloads_lq.go count the positions).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from ..api.errors import InputError
from ..cluster.cluster import Cluster
from ..cluster.explain import ClusterView
from ..engine.contract import ENGINES
from ..kube.objects import Snapshot

JSON = dict[str, Any]

FORMATS = ("table", "json", "yaml")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kubeconfig",
        default=None,
        metavar="PATH",
        help="kubeconfig file (default: in-cluster configuration in a pod, "
        "else $KUBECONFIG or ~/.kube/config)",
    )
    p.add_argument("--context", default=None, help="kubeconfig context (default: the current one)")
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--cluster-queue", default=None, metavar="NAME", help="one ClusterQueue (default: every ClusterQueue)"
    )
    which.add_argument(
        "--local-queue",
        default=None,
        metavar="NAME",
        help="one LocalQueue, in --namespace (default: every one)",
    )
    p.add_argument(
        "-n", "--namespace", default="default", help="namespace of --local-queue (default: default)"
    )
    p.add_argument(
        "-o",
        "--output",
        choices=FORMATS,
        default="table",
        metavar="FORMAT",
        help="table, json or yaml (default: table)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help="which engine explains (default: $KUEUE_FAST_ENGINE or native)",
    )


# --- the report, from a snapshot ------------------------------------------------------------------


def _owners(obj: JSON) -> list[JSON]:
    return [
        {k: r[k] for k in ("apiVersion", "kind", "name", "uid") if k in r}
        for r in obj["metadata"].get("ownerReferences") or []
    ]


def _kueue_says(obj: JSON) -> tuple[str, str]:
    """The reason and message Kueue's scheduler last wrote (QuotaReserved=False)."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "QuotaReserved" and c.get("status") == "False":
            return str(c.get("reason") or ""), str(c.get("message") or "")
    return "", ""


def _item(snap: Snapshot, cluster: Cluster, view: ClusterView, key: str, in_cq: int, in_lq: int) -> JSON:
    obj = snap.workloads[key]
    model = snap.state.workloads[key]
    md = obj["metadata"]
    item: JSON = {
        "metadata": {
            "name": md["name"],
            "namespace": md["namespace"],
            "creationTimestamp": md.get("creationTimestamp"),
            "ownerReferences": _owners(obj),
        },
        "priority": model.priority,
        "localQueueName": model.queue_name,
        "positionInClusterQueue": in_cq,
        "positionInLocalQueue": in_lq,
    }
    reason, message = _kueue_says(obj)
    if reason:
        item["reason"], item["message"] = reason, message
    e = view.explain(cluster.decision(key))
    if e is not None:
        item["explanation"] = e.to_json()
    return item


def _queue_order(cluster: Cluster, view: ClusterView, cq_name: str) -> list[str]:
    """Every pending workload of the ClusterQueue in Kueue's order (the heap's
    pop order, then the parked ones; on an engine just built none is parked)."""
    cq = view.cq_id(cq_name)
    if cq < 0:
        return []
    q = view.queue(cq)
    return [cluster.key_of(w) for w in q.order] + sorted(cluster.key_of(w) for w in q.parked)


def report(
    snap: Snapshot,
    engine: str | None = None,
    *,
    cluster_queue: str | None = None,
    local_queue: tuple[str, str] | None = None,
    now_ns: int | None = None,
) -> JSON:
    """The pending workloads, as ``kueue-fast status -o json`` prints them.
    Raises InputError for a queue the cluster does not have."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    state = snap.state
    cluster = Cluster(state, engine, release_evictions=False, start_time_ns=now_ns)
    for key, (reason, message, _) in snap.evictions.items():
        cluster.evict(key, reason, message)  # its job has not stopped yet: it holds its quota
    view = ClusterView(cluster)
    if local_queue is not None:
        ns, name = local_queue
        lq = state.local_queues.get(f"{ns}/{name}")
        if lq is None:
            raise InputError(f"LocalQueue/{ns}/{name}", "", "not found")
        order = _queue_order(cluster, view, lq.cluster_queue)

        def of_lq(k: str) -> bool:
            w = state.workloads[k]
            return (w.namespace, w.queue_name) == (ns, name)

        # its ClusterQueue missing (or inactive and empty): its workloads are in no queue
        mine = [k for k in order if of_lq(k)] if order else _not_queued(snap, cluster, of_lq)
        position = {k: i for i, k in enumerate(order)}
        items = [_item(snap, cluster, view, k, position.get(k, -1), i) for i, k in enumerate(mine)]
        return {
            "localQueue": {"namespace": ns, "name": name, "clusterQueue": lq.cluster_queue},
            "pendingWorkloads": items,
        }
    if cluster_queue is not None and cluster_queue not in state.cluster_queues:
        raise InputError(f"ClusterQueue/{cluster_queue}", "", "not found")
    names = [cluster_queue] if cluster_queue is not None else sorted(state.cluster_queues)
    queues = []
    queued: set[str] = set()
    for name in names:
        order = _queue_order(cluster, view, name)
        queued.update(order)
        in_lq: dict[tuple[str, str], int] = {}
        items = []
        for i, key in enumerate(order):
            w = state.workloads[key]
            lq_key = (w.namespace, w.queue_name)
            items.append(_item(snap, cluster, view, key, i, in_lq.get(lq_key, 0)))
            in_lq[lq_key] = in_lq.get(lq_key, 0) + 1
        cq = state.cluster_queues[name]
        queues.append({"name": name, "queueingStrategy": cq.queueing_strategy, "pendingWorkloads": items})
    out: JSON = {"clusterQueues": queues}
    if cluster_queue is None:
        # pending in no ClusterQueue (its LocalQueue or ClusterQueue does not exist): still waiting
        rest = _not_queued(snap, cluster, lambda k: k not in queued)
        if rest:
            out["notQueued"] = [_item(snap, cluster, view, k, -1, -1) for k in rest]
    return out


def _not_queued(snap: Snapshot, cluster: Cluster, keep: Callable[[str], bool]) -> list[str]:
    keys = [
        k
        for k, w in snap.state.workloads.items()
        if w.admission is None and keep(k) and cluster.decision(k).state == "pending"
    ]
    return sorted(
        keys, key=lambda k: (-snap.state.workloads[k].priority, snap.state.workloads[k].creation_ns, k)
    )


# --- printing -----------------------------------------------------------------------------------------


def _age(ts: str | None, now_ns: int) -> str:
    """kubectl's HumanDuration, roughly: 45s, 12m, 5h, 3d."""
    if not ts:
        return ""
    from ..loader import parse_time_ns

    try:
        s = max(0, (now_ns - parse_time_ns(ts, "", "")) // 1_000_000_000)
    except InputError:
        return ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= 2 * size or (unit == "m" and s >= size):
            return f"{s // size}{unit}"
    return f"{s}s"


def _rows(items: list[JSON], now_ns: int) -> list[list[str]]:
    rows = [["POSITION", "IN LQ", "WORKLOAD", "LOCALQUEUE", "PRIORITY", "AGE", "WHY"]]
    for it in items:
        md = it["metadata"]
        why = (it.get("explanation") or {}).get("summary") or it.get("message", "")
        pos = it["positionInClusterQueue"]
        rows.append(
            [
                str(pos) if pos >= 0 else "-",
                str(it["positionInLocalQueue"]) if it["positionInLocalQueue"] >= 0 else "-",
                f"{md['namespace']}/{md['name']}",
                it["localQueueName"],
                str(it["priority"]),
                _age(md.get("creationTimestamp"), now_ns),
                why,
            ]
        )
    return rows


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join([*(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)), r[-1]]).rstrip() for r in rows
    )


def to_table(doc: JSON, now_ns: int) -> str:
    out = []
    if "localQueue" in doc:
        lq = doc["localQueue"]
        items = doc["pendingWorkloads"]
        where = f"LocalQueue {lq['namespace']}/{lq['name']} (ClusterQueue {lq['clusterQueue']})"
        out.append(f"{where}: {len(items)} pending")
        if items:
            out.append(_table(_rows(items, now_ns)))
        return "\n".join(out) + "\n"
    for q in doc["clusterQueues"]:
        items = q["pendingWorkloads"]
        out.append(f"ClusterQueue {q['name']} ({q['queueingStrategy']}): {len(items)} pending")
        if items:
            out.append(_table(_rows(items, now_ns)))
        out.append("")
    if doc.get("notQueued"):
        out.append(f"In no ClusterQueue: {len(doc['notQueued'])} pending")
        out.append(_table(_rows(doc["notQueued"], now_ns)))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# --- the command --------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    try:
        import kubernetes  # noqa: F401
    except ImportError as e:
        print(f"error: {e}: kueue-fast status needs pip install 'kueue-fast[controller]'", file=sys.stderr)
        return 2
    from ..kube.client import ApiError, KubeClient, unreachable
    from ..kube.objects import build_state, read_objects

    # a one-shot read: a server that does not answer is said after two retries, as snapshot does
    client = KubeClient.from_config(
        args.kubeconfig, args.context, max_retries=2, user_agent="kueue-fast-status/0.1.0"
    )
    try:
        try:
            objects = read_objects(client)
        except ApiError as e:
            if e.status == 0:
                print(f"error: {unreachable(str(client.api.configuration.host), e)}", file=sys.stderr)
                return 1
            where = f" ({e.body.get('details', {}).get('kind', '')})" if e.status == 404 else ""
            hint = "; are Kueue's CRDs installed?" if e.status == 404 else ""
            print(f"error: reading the cluster: {' '.join(str(e).split())}{where}{hint}", file=sys.stderr)
            return 1
    finally:
        client.close()
    snap = build_state(objects)
    for problem in snap.problems:
        print(f"warning: {' '.join(problem.split())}", file=sys.stderr)
    now_ns = time.time_ns()
    local = (args.namespace, args.local_queue) if args.local_queue else None
    doc = report(snap, args.engine, cluster_queue=args.cluster_queue, local_queue=local, now_ns=now_ns)
    if args.output == "json":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif args.output == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, width=1000))
    else:
        sys.stdout.write(to_table(doc, now_ns))
    return 0
