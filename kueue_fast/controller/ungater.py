"""Kueue's TopologyUngater (pkg/controller/tas/topology_ungater.go) for the
controller: a job admitted with a ``topologyAssignment`` starts with the
``kueue.x-k8s.io/topology`` scheduling gate on its pods (flow.py,
integrations/framework.py ``admitted_info``); once its pods exist, each
gated one is given a domain of the assignment, as node selectors (the
assignment's levels and the domain's values), and its gate removed, in one
patch. :class:`TopologyUngater` is a part of the controller.

Pods are found as Kueue finds them: in the Workload's namespace, with the
``kueue.x-k8s.io/workload`` annotation naming it and the pod set label, not
Succeeded or Failed. They are given domains by rank when every one carries
the pod set's ``podIndexLabel`` (and sub-group label) within range and the
ungated ones sit where their rank says (readRanksIfAvailable), else greedily:
each domain, in the assignment's order, gets the gated pods (by name) it
lacks (assignGatedPodsToDomainsGreedy)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..api.errors import InputError
from ..api.model import TopologyAssignment
from ..integrations.framework import PODSET_LABEL, TOPOLOGY_SCHEDULING_GATE, WORKLOAD_ANNOTATION
from ..kube.client import PODS
from ..loader.tas import is_tas_pod, topology_assignment
from .track import JSON, Write
from .writer import PRIO_ADMISSION, Conflict

if TYPE_CHECKING:
    from .cache import Cache
    from .loop_state import LoopState
    from .outbox import Outbox

log = logging.getLogger("kueue_fast.controller")

UNGATE_KEY = "#pod/"  # the writer's key of a pod's ungating: "#pod/<namespace>/<name>"
POD_INDEX_OFFSET_ANNOTATION = "kueue.x-k8s.io/pod-index-offset"

Domain = tuple[str, ...]


def gated(pod: JSON) -> bool:
    return any(g.get("name") == TOPOLOGY_SCHEDULING_GATE for g in pod["spec"].get("schedulingGates") or [])


def workload_key(pod: JSON) -> str | None:
    """The key of the Workload a TAS pod belongs to (its annotation), else None."""
    md = pod["metadata"]
    ann = md.get("annotations") or {}
    name = ann.get(WORKLOAD_ANNOTATION)
    return f"{md['namespace']}/{name}" if name and is_tas_pod(ann) else None


def _domain(levels: Sequence[str], selector: Mapping[str, str]) -> Domain:
    """utiltas LevelValues: a pod's domain from its node selectors."""
    return tuple(selector.get(k, "") for k in levels)


def _index(pod: JSON, label: str, bound: int) -> int | None:
    """utilpod ReadUIntFromLabelBelowBound: None when missing or out of range."""
    value = (pod["metadata"].get("labels") or {}).get(label)
    if value is None or not value.isdigit() or int(value) >= bound:
        return None
    return int(value)


def _ranks(
    count: int, pods: Sequence[JSON], request: Mapping[str, Any], offset: int
) -> dict[int, JSON] | None:
    """readRanksIfAvailable / readRanksForLabels: each pod's rank, or None to
    fall back to the greedy way."""
    label = request.get("podIndexLabel")
    if not label:
        return None
    sub_label = request.get("subGroupIndexLabel")
    sub_count = request.get("subGroupCount")
    groups = sub_count if isinstance(sub_count, int) else 0
    if sub_label and groups <= 0:
        return None  # errInvalidSubGroupCount
    single = count // groups if sub_label else count
    out: dict[int, JSON] = {}
    for pod in pods:
        index = _index(pod, label, count + offset)
        if index is None:
            return None
        rank = index - offset
        if sub_label:
            job = _index(pod, sub_label, groups)
            if job is None or index >= single:
                return None
            rank = index + job * single - offset
        if not 0 <= rank < count or rank in out:
            return None
        out[rank] = pod
    return out


def assign_domains(
    ta: TopologyAssignment, count: int, pods: Sequence[JSON], request: Mapping[str, Any]
) -> list[tuple[JSON, Domain]]:
    """assignGatedPodsToDomains: (gated pod, its domain) for the pod set's
    live pods, by rank when they carry their index, else greedily."""
    by_rank = [values for values, n in ta.domains for _ in range(n)]  # rankToDomainID
    offset_text = (
        (pods[0]["metadata"].get("annotations") or {}).get(POD_INDEX_OFFSET_ANNOTATION) if pods else None
    )
    offset = int(offset_text) if offset_text and offset_text.isdigit() else 0
    ranks = _ranks(count, pods, request, offset)
    if ranks is not None and all(
        r < len(by_rank)
        and (gated(p) or _domain(ta.levels, p["spec"].get("nodeSelector") or {}) == by_rank[r])
        for r, p in ranks.items()
    ):
        return [(p, by_rank[r]) for r, p in sorted(ranks.items()) if gated(p)]
    waiting = [p for p in pods if gated(p)]
    placed: dict[Domain, int] = {}
    for p in pods:
        if not gated(p):
            d = _domain(ta.levels, p["spec"].get("nodeSelector") or {})
            placed[d] = placed.get(d, 0) + 1
    out: list[tuple[JSON, Domain]] = []
    for values, n in ta.domains:
        take = min(max(n - placed.get(values, 0), 0), len(waiting) - len(out))
        out.extend((p, values) for p in waiting[len(out) : len(out) + take])
    return out


def ungate_patch(pod: JSON, levels: Sequence[str], values: Domain) -> JSON:
    """utilpod.Ungate plus the domain's node selectors (NodeLabelsFromKeysAndValues),
    on the pod's resourceVersion."""
    gates = [g for g in pod["spec"].get("schedulingGates") or [] if g.get("name") != TOPOLOGY_SCHEDULING_GATE]
    return {
        "metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]},
        "spec": {"schedulingGates": gates or None, "nodeSelector": dict(zip(levels, values, strict=True))},
    }


class TopologyUngater:
    def __init__(self, shared: LoopState, cache: Cache, outbox: Outbox) -> None:
        self.shared = shared
        self.cache = cache
        self.outbox = outbox

    def on_tas_pod(self, key: str, pod: JSON | None) -> None:
        """A Pod event: the index of TAS pods by Workload kept, and a gated
        pod's Workload reconciled."""
        wk = self.cache.index_tas_pod(key, pod)
        if wk is not None and pod is not None and gated(pod) and wk in self.shared.tracks:
            self.shared.dirty[wk] = None

    def ungate(self, wl: JSON) -> None:
        """Reconcile of an admitted Workload: its gated pods ungated."""
        md = wl["metadata"]
        ns, name = md["namespace"], md["name"]
        key = f"{ns}/{name}"
        pod_keys = self.cache.tas_pods.get(key)
        if not pod_keys:
            return
        requests = {
            p.get("name"): p.get("topologyRequest") or {} for p in (wl.get("spec") or {}).get("podSets") or []
        }
        pods_by_key = self.cache.objs["pod"]
        for i, psa in enumerate(
            ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []
        ):
            if not psa.get("topologyAssignment"):
                continue
            try:
                ta = topology_assignment(
                    psa["topologyAssignment"], f"Workload/{key}", f"status.admission.podSetAssignments[{i}]"
                )
            except InputError as e:
                log.error("not ungating the pods of Workload/%s: %s", key, e)
                continue
            pods = sorted(
                (
                    p
                    for k in pod_keys
                    if (p := pods_by_key.get(k)) is not None
                    and (p["metadata"].get("labels") or {}).get(PODSET_LABEL) == psa.get("name")
                    and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
                ),
                key=lambda p: str(p["metadata"]["name"]),
            )
            count = int(psa.get("count") or sum(n for _, n in ta.domains))
            for pod, values in assign_domains(ta, count, pods, requests.get(psa.get("name")) or {}):
                self._submit_ungate(pod, ta.levels, values)

    def _submit_ungate(self, pod: JSON, levels: Sequence[str], values: Domain) -> None:
        md = pod["metadata"]
        ns, name = md["namespace"], md["name"]
        wkey = f"{UNGATE_KEY}{ns}/{name}"
        if wkey in self.shared.inflight:
            return  # its ungating is on its way (Kueue's expectations store)
        patch = ungate_patch(pod, levels, values)
        self.outbox.submit(
            wkey,
            Write.UNGATE,
            PRIO_ADMISSION,
            lambda c: c.patch(PODS, name, patch, namespace=ns),
            (PODS, name, ns),
            ("pod", f"{ns}/{name}"),
        )

    def ungated(self, wkey: str, result: Any) -> None:
        """A pod's ungating landed (its new version came back as an event) or
        failed: its Workload is looked at again (at once on a conflict, after
        a second otherwise)."""
        pod = self.cache.objs["pod"].get(wkey[len(UNGATE_KEY) :])
        wk = workload_key(pod) if pod is not None else None
        if wk is None or wk not in self.shared.tracks:
            return
        if isinstance(result, Conflict):
            self.shared.dirty[wk] = None
        elif isinstance(result, BaseException):
            self.shared.later(wk, 1.0)


__all__ = ["UNGATE_KEY", "TopologyUngater", "assign_domains", "gated", "ungate_patch", "workload_key"]
