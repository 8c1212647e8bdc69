"""The embedding API misused (issue 21 item 13): every public call of
``kueue_fast.Cluster`` and of the engine contract (``contract.Engine``)
crossed with bad arguments, on both engines. Each must raise a typed error
(EngineError, or InputError for input) with a message, the same from both
engines, and leave the engine usable; never an IndexError, an
AttributeError, a pybind11 TypeError, a wrong answer or nothing."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from builders import ENGINES
from test_native_api import BAD_ARRAYS, T0, arrays_of, small_state, specs_for

from kueue_fast import Cluster
from kueue_fast.api.errors import EngineError, EngineUnavailableError, KueueFastError
from kueue_fast.api.model import ClusterState
from kueue_fast.engine.contract import Engine, WorkloadArrays
from kueue_fast.engine.inputs import AdmissionSpec, WorkloadSpec
from kueue_fast.engine.select import make_engine

BIG = 1 << 63
B2 = "kueue.x-k8s.io/v1beta2"


# --- the engine contract ---------------------------------------------------------------------------

Call = Callable[[Engine, list[WorkloadSpec], WorkloadArrays], object]


def pod_set(spec: WorkloadSpec, **change: Any) -> WorkloadSpec:
    return replace(spec, pod_sets=[replace(spec.pod_sets[0], **change)])


BAD_IDS: list[tuple[str, object, str]] = [
    ("-1", -1, "unknown workload id -1"),
    ("one past the last", 3, "unknown workload id 3"),
    ("2**63", BIG, "workload id: integer out of the int64 range"),
    ("a str", "0", "workload id: expected an integer"),
    ("a float", 1.0, "workload id: expected an integer"),
    ("None", None, "workload id: expected an integer"),
]
ONE_ID_CALLS: list[tuple[str, Callable[[Engine, object], object]]] = [
    ("spec", lambda e, w: e.spec(w)),  # type: ignore[arg-type]
    ("workload_view", lambda e, w: e.workload_view(w)),  # type: ignore[arg-type]
    ("remove_workload", lambda e, w: e.remove_workload(w)),  # type: ignore[arg-type]
    ("release_eviction", lambda e, w: e.release_eviction(w)),  # type: ignore[arg-type]
    ("evict", lambda e, w: e.evict(w, "Reason", "message")),  # type: ignore[arg-type]
    ("evict_after_cycle", lambda e, w: e.evict_after_cycle(w, "Reason", "message", -1, True)),  # type: ignore[arg-type]
    ("set_pods_ready", lambda e, w: e.set_pods_ready(w, True)),  # type: ignore[arg-type]
    ("hold", lambda e, w: e.hold(w, T0, T0)),  # type: ignore[arg-type]
]
BAD_WIDS: list[tuple[str, object, str]] = [
    ("-1", [-1], "unknown workload id -1"),
    ("one past the last", np.array([0, 3]), "unknown workload id 3"),
    ("floats", [0.5], "wids: expected integers, got dtype float64"),
    ("None", None, "wids: missing"),
    ("2-D", [[0]], "wids: expected a 1-D array, got 2 dimensions"),
    ("uint64 beyond int64", np.array([BIG], dtype=np.uint64), "wids: value above the int64 range"),
]
MANY_ID_CALLS: list[tuple[str, Callable[[Engine, object], object]]] = [
    ("remove_workloads", lambda e, w: e.remove_workloads(w)),  # type: ignore[arg-type]
    ("reasons", lambda e, w: e.reasons(w)),  # type: ignore[arg-type]
    ("messages", lambda e, w: e.messages(w)),  # type: ignore[arg-type]
    ("queues", lambda e, w: e.queues(w)),  # type: ignore[arg-type]
    ("preempted_by", lambda e, w: e.preempted_by(w)),  # type: ignore[arg-type]
    ("eviction_reasons", lambda e, w: e.eviction_reasons(w)),  # type: ignore[arg-type]
    ("admitted_usage", lambda e, w: e.admitted_usage(w)),  # type: ignore[arg-type]
    ("admitted_shapes", lambda e, w: e.admitted_shapes(w)),  # type: ignore[arg-type]
]
OTHER_ENGINE_CALLS: list[tuple[str, Call, str]] = [
    # scalars at and beyond the int64 range, of the wrong type
    ("run_cycle(2**63)", lambda e, s, a: e.run_cycle(BIG), "now_ns: integer out of the int64 range"),
    ("run_cycle(1.5)", lambda e, s, a: e.run_cycle(1.5), "now_ns: expected an integer"),  # type: ignore[arg-type]
    (
        "run_cycles(start 2**63)",
        lambda e, s, a: e.run_cycles(BIG, 1, 2, True),
        "start_ns: integer out of the int64 range",
    ),
    (
        "run_cycles(step None)",
        lambda e, s, a: e.run_cycles(T0, None, 2, True),
        "step_ns: expected an integer",
    ),  # type: ignore[arg-type]
    (
        "run_cycles(max 2**63)",
        lambda e, s, a: e.run_cycles(T0, 1, BIG, True),
        "max_cycles: integer out of the int64 range",
    ),
    (
        "run_cycles(until_stable 1)",
        lambda e, s, a: e.run_cycles(T0, 1, 2, 1),
        "until_stable: expected a bool",
    ),  # type: ignore[arg-type]
    (
        "run_cycles(mask floats)",
        lambda e, s, a: e.run_cycles(T0, 1, 2, True, np.zeros(3)),
        "attempted_mask: expected a uint8 array",
    ),  # type: ignore[arg-type]
    (
        "run_until_stable(2**63)",
        lambda e, s, a: e.run_until_stable(BIG, 3),
        "now_ns: integer out of the int64 range",
    ),
    (
        "run_until_stable(max '3')",
        lambda e, s, a: e.run_until_stable(T0, "3"),
        "max_cycles: expected an integer",
    ),  # type: ignore[arg-type]
    (
        "run_until_settled(2**63)",
        lambda e, s, a: e.run_until_settled(BIG, 3),
        "now_ns: integer out of the int64 range",
    ),
    (
        "run_until_settled(mask list)",
        lambda e, s, a: e.run_until_settled(T0, 3, [1, 1, 1]),
        "unexplained: expected a uint8 array",
    ),  # type: ignore[arg-type]
    ("end_holds(2**63)", lambda e, s, a: e.end_holds(BIG), "now_ns: integer out of the int64 range"),
    ("hold(until 2**63)", lambda e, s, a: e.hold(0, BIG, T0), "until_ns: integer out of the int64 range"),
    ("hold(queue_ts None)", lambda e, s, a: e.hold(0, T0, None), "queue_ts: expected an integer"),  # type: ignore[arg-type]
    ("evict(reason None)", lambda e, s, a: e.evict(0, None, "m"), "reason: expected a str"),  # type: ignore[arg-type]
    ("evict(message 1)", lambda e, s, a: e.evict(0, "r", 1), "message: expected a str"),  # type: ignore[arg-type]
    (
        "evict_after_cycle(ts 2**63)",
        lambda e, s, a: e.evict_after_cycle(0, "r", "m", BIG, True),
        "queue_ts_ns: integer out of the int64 range",
    ),
    (
        "evict_after_cycle(requeue None)",
        lambda e, s, a: e.evict_after_cycle(0, "r", "m", -1, None),
        "requeue: expected a bool",
    ),  # type: ignore[arg-type]
    ("set_pods_ready('yes')", lambda e, s, a: e.set_pods_ready(0, "yes"), "ready: expected a bool"),  # type: ignore[arg-type]
    ("queue_state(-1)", lambda e, s, a: e.queue_state(-1), "unknown cluster_queue -1"),
    ("queue_state(4)", lambda e, s, a: e.queue_state(4), "unknown cluster_queue 4"),
    ("queue_state('0')", lambda e, s, a: e.queue_state("0"), "cluster_queue: expected an integer"),  # type: ignore[arg-type]
    # staging
    (
        "add_staged(0, 1) with none staged",
        lambda e, s, a: e.add_staged(0, 1),
        "add_staged: rows [0, 1) outside the 0 staged workloads",
    ),
    (
        "add_staged(2, 1)",
        lambda e, s, a: (e.stage_workloads(a), e.add_staged(2, 1)),
        "add_staged: rows [2, 1) outside the 3 staged workloads",
    ),
    (
        "add_staged(-1, 1)",
        lambda e, s, a: (e.stage_workloads(a), e.add_staged(-1, 1)),
        "add_staged: rows [-1, 1) outside the 3 staged workloads",
    ),
    ("add_staged(0, 2**63)", lambda e, s, a: e.add_staged(0, BIG), "hi: integer out of the int64 range"),
    ("add_staged('0', 1)", lambda e, s, a: e.add_staged("0", 1), "lo: expected an integer"),  # type: ignore[arg-type]
    # one workload
    (
        "add_workload(None)",
        lambda e, s, a: e.add_workload(None),
        "add_workload: expected a WorkloadSpec, got NoneType",
    ),  # type: ignore[arg-type]
    (
        "add_workload(priority 2**63)",
        lambda e, s, a: e.add_workload(replace(s[0], priority=BIG)),
        "priority: integer out of the int64 range",
    ),
    (
        "add_workload(priority 2**31)",
        lambda e, s, a: e.add_workload(replace(s[0], priority=1 << 31)),
        "priority 2147483648 out of range [-2147483648, 2147483647]",
    ),
    (
        "add_workload(priority 1.5)",
        lambda e, s, a: e.add_workload(replace(s[0], priority=1.5)),
        "priority: expected an integer",
    ),  # type: ignore[arg-type]
    (
        "add_workload(queue_ts 2**63)",
        lambda e, s, a: e.add_workload(replace(s[0], queue_ts=BIG)),
        "queue_ts: integer out of the int64 range",
    ),
    (
        "add_workload(hash 2**64)",
        lambda e, s, a: e.add_workload(replace(s[0], scheduling_hash=1 << 64)),
        "scheduling_hash: integer out of the uint64 range",
    ),
    (
        "add_workload(hash -1)",
        lambda e, s, a: e.add_workload(replace(s[0], scheduling_hash=-1)),
        "scheduling_hash: integer out of the uint64 range",
    ),
    (
        "add_workload(cluster_queue 99)",
        lambda e, s, a: e.add_workload(replace(s[0], cluster_queue=99)),
        "cluster_queue 99 out of range [-1, 3]",
    ),
    (
        "add_workload(namespace None)",
        lambda e, s, a: e.add_workload(replace(s[0], namespace=None)),
        "namespace: expected a str",
    ),  # type: ignore[arg-type]
    (
        "add_workload(NUL in namespace)",
        lambda e, s, a: e.add_workload(replace(s[0], namespace="n\0s")),
        "namespace contains a NUL character",
    ),
    (
        "add_workload(lone surrogate)",
        lambda e, s, a: e.add_workload(replace(s[0], name="\udc80")),
        "name: not encodable as UTF-8",
    ),
    (
        "add_workload(block 3)",
        lambda e, s, a: e.add_workload(replace(s[0], block=3)),
        "block 3 out of range [0, 2]",
    ),
    (
        "add_workload(local_queue 9)",
        lambda e, s, a: e.add_workload(replace(s[0], local_queue=9)),
        "local_queue 9 out of range [-1, 3]",
    ),
    (
        "add_workload(pod_sets None)",
        lambda e, s, a: e.add_workload(replace(s[0], pod_sets=None)),
        "pod_sets: expected a sequence",
    ),  # type: ignore[arg-type]
    (
        "add_workload(count 2**63)",
        lambda e, s, a: e.add_workload(pod_set(s[0], count=BIG)),
        "pod set count: integer out of the int64 range",
    ),
    (
        "add_workload(count -1)",
        lambda e, s, a: e.add_workload(pod_set(s[0], count=-1)),
        "pod set count -1 out of range [0, 2147483647]",
    ),
    (
        "add_workload(min_count -1)",
        lambda e, s, a: e.add_workload(pod_set(s[0], min_count=-1)),
        "pod set min_count must be >= 0",
    ),
    (
        "add_workload(flavor class 7)",
        lambda e, s, a: e.add_workload(pod_set(s[0], flavor_class=7)),
        "flavor class 7 out of range [0, 0]",
    ),
    (
        "add_workload(request amount 2**63)",
        lambda e, s, a: e.add_workload(pod_set(s[0], requests=[(0, BIG)])),
        "request amount: integer out of the int64 range",
    ),
    (
        "add_workload(request resource 9)",
        lambda e, s, a: e.add_workload(pod_set(s[0], requests=[(9, 1)])),
        "resource id 9 out of range [0, 1]",
    ),
    (
        "add_workload(request (0,))",
        lambda e, s, a: e.add_workload(pod_set(s[0], requests=[(0,)])),
        "request: expected (resource, amount)",
    ),
    (
        "add_workload(admission cq 9)",
        lambda e, s, a: e.add_workload(replace(s[0], admission=AdmissionSpec(9, [], T0))),
        "admission cluster_queue 9 out of range [-1, 3]",
    ),
    (
        "add_workload(admission time 2**63)",
        lambda e, s, a: e.add_workload(replace(s[0], admission=AdmissionSpec(0, [], BIG))),
        "admission time: integer out of the int64 range",
    ),
    (
        "add_workload(admitted flavor 9)",
        lambda e, s, a: e.add_workload(replace(s[0], admission=AdmissionSpec(0, [(1, [(0, 9, 1)])], T0))),
        "admitted flavor id 9 out of range [-1, 1]",
    ),
    # many workloads
    ("add_workloads(None)", lambda e, s, a: e.add_workloads(None), "cluster_queue: missing"),  # type: ignore[arg-type]
    ("stage_workloads(None)", lambda e, s, a: e.stage_workloads(None), "cluster_queue: missing"),  # type: ignore[arg-type]
    # admission fair sharing (none configured here)
    (
        "restore_afs_ledger(None)",
        lambda e, s, a: e.restore_afs_ledger(None),
        "restore_afs_ledger: expected a dict, got NoneType",
    ),  # type: ignore[arg-type]
]


def _engine(name: str) -> tuple[Engine, list[WorkloadSpec], WorkloadArrays]:
    comp, specs = specs_for(small_state(), 3)
    engine = make_engine(name, comp.topology, True)
    for spec in specs:
        engine.add_workload(copy.deepcopy(spec))
    return engine, specs, arrays_of(specs)


def _outcome(engine_name: str, call: Call) -> tuple[str, str]:
    engine, specs, arrays = _engine(engine_name)
    before = engine.n_workloads
    try:
        call(engine, specs, arrays)
    except KueueFastError as e:
        assert engine.n_workloads == before, "a refused call adds nothing"
        engine.run_cycle(T0)  # still usable
        return type(e).__name__, str(e)
    return "no error", ""


def _engine_cases() -> list[tuple[str, Call, str]]:
    cases = list(OTHER_ENGINE_CALLS)
    for call_name, one in ONE_ID_CALLS:
        for id_name, wid, message in BAD_IDS:
            cases.append((f"{call_name}({id_name})", lambda e, s, a, one=one, wid=wid: one(e, wid), message))
    for call_name, many in MANY_ID_CALLS:
        for id_name, wids, message in BAD_WIDS:
            cases.append(
                (f"{call_name}({id_name})", lambda e, s, a, many=many, wids=wids: many(e, wids), message)
            )
    for case, change in BAD_ARRAYS.items():

        def bad_arrays(
            e: Engine, s: list[WorkloadSpec], a: WorkloadArrays, change: dict[str, Any] = change
        ) -> object:
            for key, value in change.items():
                setattr(a, key, value(a) if callable(value) else value)
            return e.add_workloads(a)

        cases.append((f"add_workloads({case})", bad_arrays, ""))
    return cases


ENGINE_CASES = _engine_cases()


@pytest.mark.parametrize(("call", "message"), [c[1:] for c in ENGINE_CASES], ids=[c[0] for c in ENGINE_CASES])
def test_engine_calls_with_bad_arguments_raise_the_same_engine_error_on_both_engines(
    call: Call, message: str
) -> None:
    pytest.importorskip("kueue_fast.engine.native", reason="native engine not built")
    native, reference = _outcome("native", call), _outcome("reference", call)
    assert native == reference
    assert native[0] == "EngineError"
    if message:
        assert native[1] == message


def test_the_table_crosses_every_call_of_the_engine_contract() -> None:
    called = {name for name, _ in ONE_ID_CALLS} | {name for name, _ in MANY_ID_CALLS}
    called |= {name.split("(")[0] for name, _, _ in OTHER_ENGINE_CALLS}
    without_arguments = {
        "cycle",
        "n_workloads",
        "evaluations",
        "clear_staged",
        "decisions",
        "afs_ledger_state",
        "usage",
    }
    contract = {n for n in dir(Engine) if not n.startswith("_")} - {"name", "topo"}
    assert contract - without_arguments <= called | {"add_workloads"}, contract - without_arguments - called


# --- Cluster -----------------------------------------------------------------------------------------

OBJECTS: list[dict[str, Any]] = [
    {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": "default"}},
    {
        "apiVersion": B2,
        "kind": "AdmissionCheck",
        "metadata": {"name": "check"},
        "spec": {"controllerName": "example.com/check"},
    },
    {
        "apiVersion": B2,
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "namespaceSelector": {},
            "admissionChecksStrategy": {"admissionChecks": [{"name": "check"}]},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": 4}]}],
                }
            ],
        },
    },
    {
        "apiVersion": B2,
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": {"clusterQueue": "cq"},
    },
    {
        "apiVersion": B2,
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {
            "queueName": "lq",
            "podSets": [
                {
                    "count": 1,
                    "template": {
                        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
                    },
                }
            ],
        },
    },
]
KEY = "ns/w"

ClusterCall = Callable[[Cluster], object]
CLUSTER_CASES: list[tuple[str, ClusterCall, type[Exception], str]] = [
    ("run(-1)", lambda c: c.run(-1), EngineError, "run: cycles must be 0 or more, got -1"),
    ("run('2')", lambda c: c.run("2"), EngineError, "run: cycles: expected an integer"),  # type: ignore[arg-type]
    ("run(2**63)", lambda c: c.run(BIG), EngineError, "run: cycles: integer out of the int64 range"),
    (
        "run_until_stable(-1)",
        lambda c: c.run_until_stable(-1),
        EngineError,
        "run_until_stable: max_cycles must be 0 or more, got -1",
    ),
    (
        "run_until_stable(None)",
        lambda c: c.run_until_stable(None),
        EngineError,
        "run_until_stable: max_cycles: expected an integer",
    ),  # type: ignore[arg-type]
    ("run_cycle(2**63)", lambda c: c.run_cycle(BIG), EngineError, "now_ns: integer out of the int64 range"),
    ("run_cycle(1.5)", lambda c: c.run_cycle(1.5), EngineError, "now_ns: expected an integer"),  # type: ignore[arg-type]
    (
        "add_workload(None)",
        lambda c: c.add_workload(None),
        EngineError,
        "add_workload: expected a Workload, got NoneType",
    ),  # type: ignore[arg-type]
    (
        "add_workload(a dict)",
        lambda c: c.add_workload(OBJECTS[-1]),
        EngineError,
        "add_workload: expected a Workload, got dict",
    ),  # type: ignore[arg-type]
    (
        "add_workload(again)",
        lambda c: c.add_workload(c.state.workloads[KEY]),
        EngineError,
        "Workload/ns/w is already in the cluster",
    ),
    (
        "reconfigure(None)",
        lambda c: c.reconfigure(None),
        EngineError,
        "reconfigure: expected a ClusterState, got NoneType",
    ),  # type: ignore[arg-type]
    ("key_of(-1)", lambda c: c.key_of(-1), EngineError, "unknown workload id -1"),
    ("key_of(1)", lambda c: c.key_of(1), EngineError, "unknown workload id 1"),
    ("key_of('0')", lambda c: c.key_of("0"), EngineError, "workload id: expected an integer"),  # type: ignore[arg-type]
    ("wid_of(unknown)", lambda c: c.wid_of("ns/x"), EngineError, "Workload/ns/x is not in the cluster"),
    ("decision(unknown)", lambda c: c.decision("ns/x"), EngineError, "Workload/ns/x is not in the cluster"),
    ("decision(None)", lambda c: c.decision(None), EngineError, "Workload/None is not in the cluster"),  # type: ignore[arg-type]
    (
        "pending_reasons(unknown)",
        lambda c: c.pending_reasons([KEY, "ns/x"]),
        EngineError,
        "Workload/ns/x is not in the cluster",
    ),
    (
        "pending_reasons(a key)",
        lambda c: c.pending_reasons(KEY),
        EngineError,
        "pending_reasons: keys: expected a sequence",
    ),
    (
        "pending_reasons([None])",
        lambda c: c.pending_reasons([None]),
        EngineError,
        "pending_reasons: keys: expected a str",
    ),  # type: ignore[list-item]
    (
        "pending_reasons([[]])",
        lambda c: c.pending_reasons([[]]),
        EngineError,
        "pending_reasons: keys: expected a str",
    ),  # type: ignore[list-item]
    (
        "remove_workload(unknown)",
        lambda c: c.remove_workload("ns/x"),
        EngineError,
        "Workload/ns/x is not in the cluster",
    ),
    (
        "evict(unknown)",
        lambda c: c.evict("ns/x", "r", "m"),
        EngineError,
        "Workload/ns/x is not in the cluster",
    ),
    ("evict(reason None)", lambda c: c.evict(KEY, None, "m"), EngineError, "reason: expected a str"),  # type: ignore[arg-type]
    (
        "release_eviction(unknown)",
        lambda c: c.release_eviction("ns/x"),
        EngineError,
        "Workload/ns/x is not in the cluster",
    ),
    (
        "check_states(unknown)",
        lambda c: c.check_states("ns/x"),
        EngineError,
        "Workload/ns/x is not in the cluster",
    ),
    (
        "set_pods_ready(unknown)",
        lambda c: c.set_pods_ready("ns/x", True),
        EngineError,
        "Workload/ns/x is not in the cluster",
    ),
    ("set_pods_ready('yes')", lambda c: c.set_pods_ready(KEY, "yes"), EngineError, "ready: expected a bool"),  # type: ignore[arg-type]
    (
        "set_pods_ready(now 2**63)",
        lambda c: c.set_pods_ready(KEY, True, now_ns=BIG),
        EngineError,
        "now_ns: integer out of the int64 range",
    ),
    (
        "set_check_state(unknown)",
        lambda c: c.set_check_state("ns/x", "check", "Ready"),
        EngineError,
        "Workload/ns/x is not in the cluster",
    ),
    (
        "set_check_state('Bogus')",
        lambda c: c.set_check_state(KEY, "check", "Bogus"),
        EngineError,
        'set_check_state: state "Bogus" is not one of Pending, Ready, Retry, Rejected',
    ),
    (
        "set_check_state(check None)",
        lambda c: c.set_check_state(KEY, None, "Ready"),
        EngineError,
        "check: expected a str",
    ),  # type: ignore[arg-type]
    (
        "set_check_state(requeue -1)",
        lambda c: c.set_check_state(KEY, "check", "Retry", requeue_after_s=-1),
        EngineError,
        "set_check_state: requeue_after_s must be 0 or more, got -1",
    ),
    (
        "set_check_state(time 2**63)",
        lambda c: c.set_check_state(KEY, "check", "Ready", transition_ns=BIG),
        EngineError,
        "transition_ns: integer out of the int64 range",
    ),
]


def _need(engine: str) -> None:
    if engine == "native":
        pytest.importorskip("kueue_fast.engine.native", reason="native engine not built")


def _cluster(engine: str) -> Cluster:
    return Cluster.from_objects(copy.deepcopy(OBJECTS), engine)


@pytest.mark.parametrize("engine", ENGINES, ids=ENGINES)
@pytest.mark.parametrize(
    ("call", "error", "message"), [c[1:] for c in CLUSTER_CASES], ids=[c[0] for c in CLUSTER_CASES]
)
def test_cluster_calls_with_bad_arguments_raise_a_typed_error(
    engine: str, call: ClusterCall, error: type[Exception], message: str
) -> None:
    _need(engine)
    cluster = _cluster(engine)
    before = [(d.key, d.state) for d in cluster.decisions()]
    with pytest.raises(error) as e:
        call(cluster)
    assert type(e.value) is error and str(e.value) == message
    assert [(d.key, d.state) for d in cluster.decisions()] == before  # nothing changed
    cluster.run(1)  # still usable


def test_the_cluster_table_crosses_every_public_call() -> None:
    called = {name.split("(")[0] for name, *_ in CLUSTER_CASES}
    no_arguments = {"bulk_decisions", "decisions", "keys", "now_ns", "queue_state_counts", "state_counts"}
    # an unknown key has no history, no fair sharing state and no requeue state (as documented)
    optional = {"history", "local_queue_fair_sharing", "requeue_state"}
    constructors = {"from_files", "from_objects"}  # test_cluster_construction_misused
    # the calls: not the attributes (engine, state, topology, cycles...: properties)
    public = {
        n for n in dir(Cluster) if not n.startswith("_") and not isinstance(getattr(Cluster, n), property)
    }
    assert public - no_arguments - optional - constructors == called


@pytest.mark.parametrize("engine", ENGINES, ids=ENGINES)
def test_cluster_construction_misused(engine: str, tmp_path: Path) -> None:
    _need(engine)
    cases: list[tuple[Callable[[], object], type[Exception], str]] = [
        (lambda: Cluster(None, engine), EngineError, "Cluster: expected a ClusterState, got NoneType"),  # type: ignore[arg-type]
        (
            lambda: Cluster(ClusterState(), "bogus"),
            EngineUnavailableError,
            "unknown engine 'bogus': expected one of native, reference",
        ),
        (
            lambda: Cluster(ClusterState(), engine, start_time_ns=BIG),
            EngineError,
            "start_time_ns: integer out of the int64 range",
        ),
        (
            lambda: Cluster.from_files(None, engine),
            EngineError,
            "from_files: expected file paths, got NoneType",
        ),  # type: ignore[arg-type]
        (
            lambda: Cluster.from_objects(None, engine),
            EngineError,
            "from_objects: expected objects, got NoneType",
        ),  # type: ignore[arg-type]
        (
            lambda: Cluster.from_objects(OBJECTS[0], engine),
            EngineError,
            "from_objects: expected objects, got dict",
        ),  # type: ignore[arg-type]
    ]
    for call, error, message in cases:
        with pytest.raises(error) as e:
            call()
        assert type(e.value) is error and str(e.value) == message


@pytest.mark.parametrize("engine", ENGINES, ids=ENGINES)
def test_a_single_path_is_one_file_and_zero_cycles_are_none(engine: str, tmp_path: Path) -> None:
    # from_files("x.yaml") read "x", ".", "y"... (list("x.yaml")); run(0) raised a zip ValueError
    _need(engine)
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(OBJECTS))
    for given in (str(path), path):
        cluster = Cluster.from_files(given, engine)  # type: ignore[arg-type]
        assert cluster.keys() == [KEY]
        assert cluster.run(0) == []
        assert cluster.cycles == 0
    assert [r.cycle for r in cluster.run(2)] == [1, 2]
