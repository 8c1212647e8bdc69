"""The outputs of `kueue-fast schedule`: JSON (the contract), YAML, table."""

from __future__ import annotations

import copy
import datetime as dt
import json
from typing import Any

from .cluster import ADMITTED, EVICTED, PENDING, Cluster, Decision
from .quantity import format_quantity


def decision_json(d: Decision, owner: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"namespace": d.namespace, "name": d.name}
    if owner is not None:
        out["owner"] = owner  # the job the Workload was made from, "Job/name"
    out["state"] = d.state
    if d.state == ADMITTED:
        out["clusterQueue"] = d.cluster_queue
        out["podSets"] = [{"name": ps.name, "count": ps.count, "flavors": ps.flavors} for ps in d.pod_sets]
        return out
    out["reason"] = d.reason
    if d.preempted_by is not None:
        out["preemptedBy"] = d.preempted_by
    out["message"] = d.message
    return out


def to_json(cluster: Cluster) -> str:
    owners = {key: wl.owner for key, wl in cluster.state.workloads.items() if wl.owner is not None}
    workloads = [decision_json(d, owners.get(d.key)) for d in cluster.decisions()]
    doc = {"cycles": cluster.cycles, "workloads": workloads}
    return json.dumps(doc, indent=2) + "\n"


def _rfc3339(ns: int | None) -> str:
    t = dt.datetime.fromtimestamp((ns or 0) / 1e9, tz=dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(type_: str, status: str, reason: str, message: str, ns: int | None) -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": _rfc3339(ns),
    }


def workload_status(d: Decision, now_ns: int) -> dict[str, Any]:
    """status of a Workload as Kueue would have written it."""
    if d.state == ADMITTED:
        t = d.admission_time_ns
        return {
            "admission": {
                "clusterQueue": d.cluster_queue,
                "podSetAssignments": [
                    {
                        "name": ps.name,
                        "flavors": ps.flavors,
                        "resourceUsage": {r: format_quantity(r, v) for r, v in ps.resource_usage.items()},
                        "count": ps.count,
                    }
                    for ps in d.pod_sets
                ],
            },
            "conditions": [
                _condition(
                    "QuotaReserved",
                    "True",
                    "QuotaReserved",
                    f"Quota reserved in ClusterQueue {d.cluster_queue}",
                    t,
                ),
                _condition("Admitted", "True", "Admitted", "The workload is admitted", t),
            ],
        }
    if d.state == EVICTED:
        conditions = [
            _condition("Evicted", "True", d.reason, d.message, now_ns),
            _condition("QuotaReserved", "False", "Pending", d.message, now_ns),
        ]
        return {"conditions": conditions}
    if d.state == PENDING:
        return {"conditions": [_condition("QuotaReserved", "False", d.reason, d.message, now_ns)]}
    return {"conditions": [_condition("Finished", "True", "Succeeded", d.message, now_ns)]}


def to_yaml(cluster: Cluster) -> str:
    import yaml

    by_key = {d.key: d for d in cluster.decisions()}
    docs = []
    for doc in cluster.state.documents:
        doc = copy.deepcopy(doc)
        if doc.get("kind") == "Workload":
            md = doc.get("metadata") or {}
            d = by_key.get(f"{md.get('namespace', '')}/{md.get('name', '')}")
            if d is not None:
                status = dict(doc.get("status") or {})
                status.pop("admission", None)
                status.update(workload_status(d, cluster.now_ns()))
                doc["status"] = status
        docs.append(doc)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all(docs, Dumper=dumper, sort_keys=False)


def to_table(cluster: Cluster) -> str:
    rows = [("WORKLOAD", "STATE", "CLUSTERQUEUE", "FLAVORS / REASON")]
    for d in cluster.decisions():
        if d.state == ADMITTED:
            detail = "; ".join(
                f"{ps.name}x{ps.count}: " + ",".join(f"{r}={f}" for r, f in ps.flavors.items())
                for ps in d.pod_sets
            )
            rows.append((d.key, d.state, d.cluster_queue or "", detail))
        else:
            who = f" by {d.preempted_by}" if d.preempted_by else ""
            rows.append((d.key, d.state, "", f"{d.reason}{who}: {d.message}"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3] for r in rows]
    counts = {s: sum(1 for d in cluster.decisions() if d.state == s) for s in (ADMITTED, PENDING, EVICTED)}
    lines.append("")
    summary = f"{counts[ADMITTED]} admitted, {counts[PENDING]} pending, {counts[EVICTED]} evicted"
    lines.append(f"{cluster.cycles} cycle(s): {summary}")
    return "\n".join(lines) + "\n"
