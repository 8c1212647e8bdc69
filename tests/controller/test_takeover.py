"""A leader taking over a cluster with Workloads already admitted and
pending: the engine is rebuilt through the loader's bulk path
(state.workload_models) and holds exactly what the per-object path holds.

The controllers here are not started: the objects reach them as the
informers deliver them (slimmed, through ``Intake.on_object``), and the engine is
built as the loop builds it on a new term (``Scheduler.build_engine``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fake_apiserver import FakeAPIServer
from kf_harness import cluster_queue, flavor, local_queue, priority_class

from kueue_fast.api.quantity import parse_quantity
from kueue_fast.cluster import status_writer as S
from kueue_fast.cluster.cluster import Cluster
from kueue_fast.cluster.explain import ClusterView
from kueue_fast.controller.reconciler import ALL_KINDS, Controller, Options
from kueue_fast.kube import objects as state
from kueue_fast.kube.client import KubeClient
from kueue_fast.loader import build_state

JSON = dict[str, Any]
KINDS = {"ResourceFlavor": "flavor", "ClusterQueue": "cq", "LocalQueue": "lq", "WorkloadPriorityClass": "wpc"}
T0 = "2025-01-06T00:00:00Z"


def _workload(ns: str, i: int, cpu: str, *, priority_class: str | None = None) -> JSON:
    spec: JSON = {
        "queueName": "lq",
        "podSets": [
            {
                "name": "main",
                "count": 1 + i % 2,
                "template": {
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
                },
            }
        ],
    }
    if priority_class:
        spec["priorityClassRef"] = {
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": priority_class,
        }
        spec["priority"] = 1000  # Kueue's webhook sets it from the class
    else:
        spec["priority"] = i % 3
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": f"wl-{i:03d}",
            "namespace": ns,
            "uid": f"uid-{ns}-{i}",
            "generation": 1,
            "resourceVersion": str(100 + i),
            "creationTimestamp": f"2025-01-06T00:{i // 60:02d}:{i % 60:02d}Z",
        },
        "spec": spec,
    }


def _cluster_objects() -> tuple[list[JSON], list[JSON]]:
    """(configuration, Workloads): 3 ClusterQueues in a cohort; about half the
    Workloads admitted by an offline run (statuses as the controller writes
    them), one of those with an eviction in progress, one finished, one
    invalid, one with a priority class but no priority (invalid too)."""
    config: list[JSON] = [flavor("default"), flavor("spot"), priority_class("high", 1000)]
    for q in range(3):
        config.append(cluster_queue(f"cq-{q}", {"default": {"cpu": "6"}, "spot": {"cpu": "4"}}, cohort="all"))
        config.append(local_queue(f"ns-{q}", "lq", f"cq-{q}"))
    wls = [
        _workload(f"ns-{i % 3}", i, ["500m", "1", "2"][i % 3], priority_class="high" if i % 7 == 0 else None)
        for i in range(60)
    ]
    offline = Cluster(build_state([*config, *wls]))
    for _ in range(5):  # a head per ClusterQueue each cycle
        offline.run_cycle()
    for wl in wls:
        d = offline.decision(state.object_key(wl))
        if d.state == "admitted":
            wl["status"] = S.admitted_status(wl, d, d.admission_time_ns or 0)
    admitted = [wl for wl in wls if "status" in wl]
    assert 10 <= len(admitted) < len(wls) - 10
    admitted[0]["status"] = S.evicted_status(admitted[0], "Preempted", "preempted by x", "InCohortReclaim", 0)
    admitted[1]["status"] = S.finished_status(admitted[1], False, "done", 0)
    wls[-1]["spec"]["podSets"][0]["count"] = -1  # invalid: left out, with its error
    wls[-2]["spec"]["priorityClassRef"] = {
        "group": "kueue.x-k8s.io",
        "kind": "WorkloadPriorityClass",
        "name": "x",
    }
    del wls[-2]["spec"]["priority"]
    return config, wls


def _controller(api: FakeAPIServer, tmp: str, config: list[JSON], wls: list[JSON], bulk: bool) -> Controller:
    client = KubeClient.from_config(api.write_kubeconfig(f"{tmp}/kubeconfig"))
    c = Controller(client, Options(leader_elect=False, events=False, bulk_start=bulk))
    namespaces = sorted({wl["metadata"]["namespace"] for wl in wls})
    for ns in namespaces:
        obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "resourceVersion": "1"}}
        c.intake.on_object("namespace", "ADDED", ns, c.slim.namespace(obj))
    for obj in config:
        obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": "1"}}
        c.intake.on_object(KINDS[obj["kind"]], "ADDED", state.object_key(obj), c.slim.config(obj))
    for wl in wls:
        c.intake.on_object("workload", "ADDED", state.object_key(wl), c.slim.workload(copy.deepcopy(wl)))
    c.shared.synced = set(ALL_KINDS)
    c.scheduler.build_engine()
    return c


def _engine_view(c: Controller) -> JSON:
    eng = c.shared.engine
    assert eng is not None
    cluster = eng.cluster
    return {
        "decisions": [
            (d.key, d.state, d.cluster_queue, d.reason, d.message, [ps.flavors for ps in d.pod_sets])
            for d in cluster.decisions()
        ],
        "tracks": {
            k: (t.in_engine, t.phase, t.adm_cq, t.adm_usage, t.evict, t.queued_ns)
            for k, t in c.shared.tracks.items()
        },
        "queues": cluster.queue_state_counts(),
        "models": dict(cluster.state.workloads),
        "specs": {k: cluster.engine.spec(cluster.wid_of(k)) for k in cluster.keys()},
    }


def _admitted_cpu(wls: list[JSON]) -> dict[str, int]:
    """cpu held per ClusterQueue by the Workloads' admissions (finished ones release it)."""
    out: dict[str, int] = {}
    for wl in wls:
        if not state.counts(wl):
            continue
        adm = (wl.get("status") or {}).get("admission")
        if adm:
            cpu = sum(parse_quantity(psa["resourceUsage"]["cpu"], "cpu") for psa in adm["podSetAssignments"])
            out[adm["clusterQueue"]] = out.get(adm["clusterQueue"], 0) + cpu
    return out


@pytest.mark.parametrize("chunk", [1, 7, state.BULK_CHUNK])
def test_bulk_start_holds_what_the_per_object_start_holds(
    fake_api: FakeAPIServer, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(state, "BULK_CHUNK", chunk)
    config, wls = _cluster_objects()
    bulk = _controller(fake_api, str(tmp_path), config, wls, bulk=True)
    one_by_one = _controller(fake_api, str(tmp_path), config, wls, bulk=False)
    assert _engine_view(bulk) == _engine_view(one_by_one)
    # the invalid ones are left out either way
    for c in (bulk, one_by_one):
        assert c.shared.engine is not None
        assert (
            state.object_key(wls[-1]) not in c.shared.engine
            and state.object_key(wls[-2]) not in c.shared.engine
        )
    # the next cycles decide alike: the pending order is the same
    for _ in range(3):
        for c in (bulk, one_by_one):
            assert c.shared.engine is not None
            c.shared.engine.run_cycle(c.clock.time_ns())
        assert _engine_view(bulk) == _engine_view(one_by_one)


def test_takeover_neither_loses_nor_double_counts_an_admission(
    fake_api: FakeAPIServer, tmp_path: Any
) -> None:
    config, wls = _cluster_objects()
    c = _controller(fake_api, str(tmp_path), config, wls, bulk=True)
    assert c.shared.engine is not None
    cluster = c.shared.engine.cluster
    # the engine's quota tree: cpu used per ClusterQueue (the eviction in progress keeps its quota)
    view = ClusterView(cluster)
    topo = view.topo
    cpu = topo.resource_names.index("cpu")
    held: dict[str, int] = {}
    for node in range(topo.n_cq):
        used = sum(v for fr, v in view.tree.usage[node].items() if topo.fr_pairs[fr][1] == cpu)
        if used:
            held[topo.node_names[node]] = used
    assert held == _admitted_cpu(wls)
    admitted_keys = {
        state.object_key(wl) for wl in wls if state.counts(wl) and (wl.get("status") or {}).get("admission")
    }
    holding = {d.key for d in cluster.decisions() if d.holds_quota or d.state == "evicted"}
    assert holding == admitted_keys
    evicting = state.object_key(next(wl for wl in wls if S.condition_true(wl, S.EVICTED)))
    assert c.shared.tracks[evicting].phase == "evicting"
