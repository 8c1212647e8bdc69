"""The Cluster's bulk construction (engine.workloads.PendingBatch -> NativeEngine.add_workloads)
against the exact path (one WorkloadSpec per workload): the same wids, the same engine
state, the same decisions after cycles."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_fast_loading import queues, templates, workloads
from test_native_differential import SECOND, T0, Scenario, scenarios

from kueue_fast import Cluster
from kueue_fast.api.errors import InputError
from kueue_fast.engine.inputs import BLOCK_NAMESPACE_MISMATCH, BLOCK_RESOURCES_INVALID
from kueue_fast.engine.select import native_available
from kueue_fast.engine.workloads import PendingBatch, scheduling_hash
from kueue_fast.loader import build_state

pytestmark = pytest.mark.skipif(not native_available(), reason="the native engine is not built")


@contextmanager
def exact_path() -> Iterator[None]:
    """Every workload compiled to a WorkloadSpec by WorkloadCompiler.compile and
    added one at a time (after prepare(), which interns the flavor classes in
    input order, as the bulk path)."""
    with (
        mock.patch.object(PendingBatch, "rows", lambda self, keys: np.full(len(keys), -1)),
        mock.patch.object(PendingBatch, "compile", lambda self, wl: self.compiler.compile(wl)),
    ):
        yield


def _engine_state(c: Cluster) -> list[tuple[Any, ...]]:
    e = c.engine
    return [(key, e.spec(w), e.workload_view(w)) for w, key in enumerate(c._index.keys)]


def _assert_same(bulk: Cluster, exact: Cluster) -> None:
    assert bulk._index.wid == exact._index.wid
    assert _engine_state(bulk) == _engine_state(exact)
    for cq in range(len(bulk.topology.cluster_queues)):
        assert bulk.engine.queue_state(cq) == exact.engine.queue_state(cq)
    assert bulk.decisions() == exact.decisions()


def _both(state: Any) -> tuple[Cluster, Cluster]:
    bulk = Cluster(copy.deepcopy(state), "native", start_time_ns=T0)
    with exact_path():
        exact = Cluster(copy.deepcopy(state), "native", start_time_ns=T0)
    return bulk, exact


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(scenarios())
def test_bulk_construction_matches_the_exact_path(sc: Scenario) -> None:
    bulk, exact = _both(sc.state)
    for w, key in enumerate(exact._index.keys):  # which ones the arrays carry
        spec, wl = exact.engine.spec(w), sc.state.workloads[key]
        plain = (
            spec.admission is None
            and spec.cluster_queue >= 0
            and not spec.job_uid
            and not wl.admission_checks
        )
        assert (bulk.engine._specs[w] is None) == plain, key
    _assert_same(bulk, exact)
    for i in range(3):
        now = T0 + (i + 1) * SECOND
        assert bulk.run_cycle(now) == exact.run_cycle(now)
        _assert_same(bulk, exact)


def _workload(name: str, template_spec: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "team", "labels": spec.pop("labels", {})},
        "spec": {
            "queueName": spec.pop("queue", "lq"),
            "podSets": [{"name": "main", "count": 1, "template": {"spec": template_spec}}],
            **spec,
        },
    }


def _manifests(workloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    k = "kueue.x-k8s.io/v1beta1"
    return [
        {"apiVersion": k, "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {
            "apiVersion": k,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {"matchLabels": {"team": "yes"}},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "2"}]}],
                    }
                ],
            },
        },
        {
            "apiVersion": k,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "team"},
            "spec": {"clusterQueue": "cq"},
        },
        {
            "apiVersion": k,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "other"},
            "spec": {"clusterQueue": "cq"},
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"team": "yes"}}},
        *workloads,
    ]


def _containers(cpu: object) -> dict[str, Any]:
    return {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}


def test_bulk_keeps_apart_what_the_exact_key_tells_apart() -> None:
    """Templates alike but for a value's JSON type (1 / 1.0 / true) or a NaN
    (orjson writes null) hash apart as compile() hashes them; other namespaces'
    selector misses, invalid resources, missing queues, job uids and inactive
    workloads keep their spec's reasons (the exact path adds those)."""
    ports = [{"containerPort": p} for p in (1, 1.0, True, float("nan"), None)]
    wls = [
        _workload(
            f"w{i}", {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}, "ports": [p]}]}
        )
        for i, p in enumerate(ports)
    ]
    wls.append(_workload("big", _containers("1"), priority=5))
    wls.append(
        _workload(
            "bad",
            {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]},
        )
    )
    wls.append(_workload("noq", _containers("1"), queue="missing"))
    wls.append(_workload("off", _containers("1"), active=False))
    wls.append(_workload("job", _containers("1"), labels={"kueue.x-k8s.io/job-uid": "u-1"}))
    other = _workload("elsewhere", _containers("1"))
    other["metadata"]["namespace"] = "other"
    wls.append(other)
    state = build_state(_manifests(wls))
    bulk, exact = _both(state)
    hashes = {key: bulk.engine.spec(w).scheduling_hash for key, w in bulk._index.wid.items()}
    assert len({hashes[f"team/w{i}"] for i in range(len(ports))}) == len(ports)
    _assert_same(bulk, exact)
    bulk.run_until_stable(20)
    exact.run_until_stable(20)
    _assert_same(bulk, exact)
    reasons = {d.key: (d.state, d.reason, d.message) for d in bulk.decisions()}
    assert reasons["team/noq"][2] == "LocalQueue missing doesn't exist"
    blocks = {key: bulk.engine.spec(w).block for key, w in bulk._index.wid.items()}
    assert blocks["other/elsewhere"] == BLOCK_NAMESPACE_MISMATCH
    assert blocks["team/bad"] == BLOCK_RESOURCES_INVALID


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_bulk_construction_of_loaded_workloads_matches_the_exact_path(data: st.DataObject) -> None:
    """Workloads read by the loader's bulk path (pod sets keyed by their shared
    templates) against the exact path."""
    pool = data.draw(st.lists(templates(), min_size=1, max_size=3))
    wls = data.draw(st.lists(workloads(pool), min_size=1, max_size=8))
    for i, w in enumerate(wls):
        w["metadata"]["name"] = f"w{i}"
    try:
        state = build_state(queues() + wls)
    except InputError:
        return
    bulk, exact = _both(state)
    _assert_same(bulk, exact)
    bulk.run_until_stable(20)
    exact.run_until_stable(20)
    _assert_same(bulk, exact)


def test_a_template_replaced_after_loading_is_not_trusted() -> None:
    """PodSet.template_spec keys a pod set only while the Workload still holds
    that object: a template replaced after loading is read again (_hash_key)."""
    port = {
        "containers": [
            {"name": "c", "resources": {"requests": {"cpu": "1"}}, "ports": [{"containerPort": 1}]}
        ]
    }
    state = build_state(_manifests([_workload(f"w{i}", copy.deepcopy(port)) for i in range(3)]))
    changed = state.workloads["team/w1"]
    other = copy.deepcopy(port)
    other["containers"][0]["ports"] = [{"containerPort": 2}]
    changed.raw["spec"]["podSets"][0]["template"] = {"spec": other}
    read_again: list[str] = []
    real = PendingBatch._shape

    def spy(self: PendingBatch, wl: Any) -> Any:
        read_again.append(wl.key)
        return real(self, wl)

    with mock.patch.object(PendingBatch, "_shape", spy):
        bulk = Cluster(copy.deepcopy(state), "native", start_time_ns=T0)
    # w0 is the first of its templates (read through the exact key once), w2 shares
    # w0's templates, w1 is read again since it no longer holds its template
    assert read_again == ["team/w0", "team/w1"]
    with exact_path():
        exact = Cluster(copy.deepcopy(state), "native", start_time_ns=T0)
    _assert_same(bulk, exact)
    hashes = {key: bulk.engine.spec(w).scheduling_hash for key, w in bulk._index.wid.items()}
    assert hashes["team/w0"] == hashes["team/w2"] != hashes["team/w1"]
    ignore = bulk.topology.gates.scheduling_equivalence_hashing_ignore_pod_set_name
    assert hashes["team/w1"] == scheduling_hash(changed, [1], ignore)


def test_whole_state_scan_in_c_gives_the_python_values() -> None:
    # _workload_scan.workload_scan, as cluster._start_time, compiler and _read_pods_ready_inputs read it
    from types import SimpleNamespace as NS

    from kueue_fast.engine._workload_scan import workload_scan
    from kueue_fast.engine.workload_scan import WorkloadScan, workload_scan_py

    def w(creation: int, *times: int | None, requests: tuple[dict[str, int], ...] = (), **kw: object) -> NS:
        admission, order, ready = (*times, None, None, None)[:3]
        pod_sets = [NS(requests=r) for r in requests]
        fields = {"admission": None, "requeue_at_ns": None, **kw}
        return NS(
            creation_ns=creation,
            admission_ns=admission,
            queue_order_ns=order,
            pods_ready_ns=ready,
            pod_sets=pod_sets,
            **fields,
        )

    cases = [
        [],
        [w(-5)],
        [w(3, None, 7), w(5)],
        [w(1, 2, 3, 4)],
        [w(1, None, None, 10**21)],  # past 2262: beyond 64 bits
        [w(9, -1, 0, None)],
    ]
    for case in cases:
        want = max(
            [
                0,
                *(
                    t
                    for x in case
                    for t in (x.creation_ns, x.admission_ns, x.queue_order_ns, x.pods_ready_ns)
                    if t
                ),
            ]
        )
        by_key = {f"ns/w{i}": x for i, x in enumerate(case)}
        assert workload_scan(by_key)[0] == workload_scan_py(by_key).latest_ns == want
    admitted = w(0, admission="an admission")
    workloads = {
        "ns/a": w(0, requests=({"cpu": 1, "memory": 2}, {})),
        "ns/b": w(0, None, None, 5, requests=({"nvidia.com/gpu": 1},)),
        "ns/c": w(0, requeue_at_ns=7),
        "ns/d": admitted,
        "ns/e": w(0),
    }
    want_scan = WorkloadScan(5, {"cpu", "memory", "nvidia.com/gpu"}, [admitted], ["ns/b", "ns/c"])
    assert WorkloadScan(*workload_scan(workloads)) == workload_scan_py(workloads) == want_scan


def test_columns_of_a_run_are_the_rows_one_by_one() -> None:
    """PendingFill.columns gathers any run of rows (CSR offsets rebased): all
    rows at once, in any order, equal the rows gathered one at a time."""
    wls = [_workload(f"w{i}", _containers(str(i % 3 + 1)), priority=i % 2) for i in range(6)]
    wls.append(
        _workload(
            "bad",
            {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]},
        )
    )
    state = build_state(_manifests(wls))
    batch = Cluster(state, "native", start_time_ns=T0).compiler.pending_batch()
    assert batch is not None
    batch.prepare(state.workloads)
    keys = sorted(state.workloads)[::-1]
    rows = batch.rows(keys)
    assert (rows >= 0).all() and len(set(rows.tolist())) == len(keys)
    assert batch.rows(["team/none"]).tolist() == [-1]
    whole = batch.columns(rows)
    singles = [batch.columns(rows[i : i + 1]) for i in range(len(keys))]
    per_pod_set = ("pod_set_count", "pod_set_min_count", "pod_set_flavor_class", "pod_set_name")
    for field in ("cluster_queue", "priority", "queue_ts", "scheduling_hash", "block", "block_message"):
        assert whole[field].tolist() == [s[field][0] for s in singles], field
    for field in (*per_pod_set, "request_resource", "request_amount"):
        assert whole[field].tolist() == [x for s in singles for x in s[field].tolist()], field
    assert whole["names"] == [k.split("/")[1] for k in keys]
    assert whole["pod_set_offsets"].tolist() == list(range(len(keys) + 1))
    assert whole["request_offsets"].tolist() == [0, *np.cumsum([len(s["request_resource"]) for s in singles])]
    messages = [whole["block_messages"][m] for m in whole["block_message"].tolist() if m >= 0]
    assert len(messages) == 1 and "cpu" in messages[0]
    with pytest.raises(IndexError):
        batch.columns(np.array([len(batch)], dtype=np.int64))


def _admitted(name: str, reserved_at: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    wl = _workload(name, _containers(cpu), **spec)
    wl["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    wl["status"] = {
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "r", "lastTransitionTime": reserved_at},
            {"type": "Admitted", "status": "True", "reason": "r", "lastTransitionTime": reserved_at},
        ],
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {"name": "main", "count": 1, "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": cpu}}
            ],
        },
    }
    return wl


def test_memo_compile_is_compile_for_every_kind_of_workload() -> None:
    """PendingBatch.compile (shapes, queues and admission rows memoized) gives
    WorkloadCompiler.compile's spec: admissions alike but for their time,
    deactivated, in a namespace the ClusterQueue does not select, over their
    limits, with a job-uid label, in no queue."""
    over = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]}
    wls = [
        _admitted("a0", "2024-01-01T00:00:05Z"),
        _admitted("a1", "2024-01-01T00:00:07Z"),
        _admitted("a2", "2024-01-01T00:00:09Z", cpu="2", priority=3),
        _admitted("a3", "2024-01-01T00:00:09Z", active=False),
        _admitted("a4", "2024-01-01T00:00:11Z", labels={"kueue.x-k8s.io/job-uid": "u4"}),
        _workload("p0", _containers("1"), active=False),
        _workload("p1", over),
        _workload("p2", _containers("1"), queue="missing"),
        {**_workload("p3", _containers("1")), "metadata": {"name": "p3", "namespace": "other"}},
    ]
    state = build_state(_manifests(wls))
    batch = Cluster(copy.deepcopy(state), "native", start_time_ns=T0).compiler.pending_batch()
    assert batch is not None
    batch.prepare(state.workloads)
    assert all(batch.shape(state.workloads[f"team/a{i}"]) is not None for i in range(5))  # not compile()'s
    memo = {key: batch.compile(wl) for key, wl in sorted(state.workloads.items())}
    exact = {key: batch.compiler.compile(wl) for key, wl in sorted(state.workloads.items())}
    assert memo == exact
    assert len({memo[f"team/a{i}"].admission.time_ns for i in range(3)}) == 3  # type: ignore[union-attr]
    assert memo["other/p3"].block == BLOCK_NAMESPACE_MISMATCH
    assert memo["team/p1"].block == BLOCK_RESOURCES_INVALID
