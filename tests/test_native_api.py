"""The native engine's own API: zero-copy read-only views of the quota tree,
bulk ingestion (equal to one-by-one ingestion), bulk decisions, and typed
errors (EngineError, never a crash) for bad arrays and ids."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
import pytest

from kueue_fast.api.errors import EngineError
from kueue_fast.api.model import (
    ClusterQueue,
    ClusterState,
    FlavorQuotas,
    LabelSelector,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from kueue_fast.engine.inputs import WorkloadSpec, compile_topology
from kueue_fast.engine.native import STATE_NAMES, NativeEngine, WorkloadArrays
from kueue_fast.engine.reference.scheduler import ReferenceEngine
from kueue_fast.engine.workloads import WorkloadCompiler

SECOND = 1_000_000_000
T0 = 1_700_000_000 * SECOND
GI = 1 << 30


def small_state(n_cq: int = 4) -> ClusterState:
    state = ClusterState()
    for f in ("on-demand", "spot"):
        state.resource_flavors[f] = ResourceFlavor(f)
    for i in range(n_cq):
        groups = [
            ResourceGroup(
                ["cpu", "memory"],
                [
                    FlavorQuotas("on-demand", [ResourceQuota("cpu", 4000), ResourceQuota("memory", 8 * GI)]),
                    FlavorQuotas("spot", [ResourceQuota("cpu", 2000), ResourceQuota("memory", 4 * GI)]),
                ],
            )
        ]
        state.cluster_queues[f"cq-{i}"] = ClusterQueue(
            f"cq-{i}",
            groups,
            cohort="team" if i % 2 == 0 else None,
            namespace_selector=LabelSelector(),
            preemption=Preemption("LowerPriority", "LowerPriority"),
        )
        state.local_queues[f"ns/lq-{i}"] = LocalQueue("ns", f"lq-{i}", f"cq-{i}")
    return state


def specs_for(state: ClusterState, n: int, seed: int = 0) -> tuple[WorkloadCompiler, list[WorkloadSpec]]:
    topo = compile_topology(state)
    comp = WorkloadCompiler(state, topo)
    rng = np.random.default_rng(seed)
    specs = []
    n_cq = len(state.cluster_queues)
    for i in range(n):
        wl = Workload(
            namespace="ns",
            name=f"wl-{i:05d}",
            queue_name=f"lq-{int(rng.integers(0, n_cq))}",
            pod_sets=[
                PodSet(
                    "main",
                    int(rng.integers(1, 4)),
                    {"cpu": int(rng.integers(1, 4)) * 500, "memory": int(rng.integers(1, 3)) * GI},
                    min_count=1 if rng.integers(0, 4) == 0 else None,
                )
            ],
            creation_ns=T0 - int(rng.integers(1, 1000)) * SECOND,
            priority=int(rng.integers(0, 3)),
            uid=f"uid-{i}",
        )
        specs.append(comp.compile(wl))
    return comp, specs


def arrays_of(specs: list[WorkloadSpec]) -> WorkloadArrays:
    ps = [p for s in specs for p in s.pod_sets]
    reqs = [r for p in ps for r in p.requests]
    return WorkloadArrays(
        cluster_queue=np.array([s.cluster_queue for s in specs], dtype=np.int32),
        priority=np.array([s.priority for s in specs], dtype=np.int64),
        queue_ts=np.array([s.queue_ts for s in specs], dtype=np.int64),
        scheduling_hash=np.array([s.scheduling_hash for s in specs], dtype=np.uint64),
        pod_set_offsets=np.cumsum([0] + [len(s.pod_sets) for s in specs]),
        pod_set_count=np.array([p.count for p in ps], dtype=np.int64),
        pod_set_min_count=np.array([-1 if p.min_count is None else p.min_count for p in ps], dtype=np.int64),
        pod_set_flavor_class=np.array([p.flavor_class for p in ps], dtype=np.int64),
        request_offsets=np.cumsum([0] + [len(p.requests) for p in ps]),
        request_resource=np.array([r for r, _ in reqs], dtype=np.int64),
        request_amount=np.array([v for _, v in reqs], dtype=np.int64),
        namespaces=[s.namespace for s in specs],
        names=[s.name for s in specs],
        uids=[s.uid for s in specs],
    )


def run_until_stable(engine: NativeEngine | ReferenceEngine, limit: int = 200) -> int:
    for n in range(1, limit + 1):
        r = engine.run_cycle(T0 + n * SECOND)
        if not (r.admitted or r.preempted or r.newly_parked):
            return n
    raise AssertionError("not stable")


# --- views ---------------------------------------------------------------------------------------


def test_tree_views_are_zero_copy_and_read_only() -> None:
    state = small_state()
    comp, specs = specs_for(state, 40)
    eng = NativeEngine(comp.topology)
    for s in specs:
        eng.add_workload(s)
    topo = comp.topology
    shape = (topo.n_nodes, len(topo.fr_pairs))
    for name in ("usage", "subtree_quota", "nominal", "borrowing_limit", "lending_limit"):
        v = getattr(eng, name)
        assert v.shape == shape and v.dtype == np.int64, name
        assert not v.flags.writeable, name
        assert not v.flags.owndata, name  # a view of the engine's memory
        with pytest.raises(ValueError):
            v[0, 0] = 1
        assert np.shares_memory(v, getattr(eng, name)), name
    usage = eng.usage
    before = usage.copy()
    assert not before.any()
    eng.run_cycle(T0 + SECOND)
    assert usage.any(), "the view taken before the cycle sees the admissions"
    del eng  # the view keeps the engine alive
    assert usage.sum() > 0
    # Quota tables: nominal of cq-0 on (on-demand, cpu).
    eng = NativeEngine(topo)
    fr = topo.fr_id(topo.flavor_names.index("on-demand"), topo.resource_names.index("cpu"))
    assert eng.nominal[0, fr] == 4000
    assert eng.borrowing_limit[0, fr] == (1 << 63) - 1


# --- bulk ingestion -------------------------------------------------------------------------------


def test_bulk_ingestion_equals_one_by_one() -> None:
    state = small_state()
    comp, specs = specs_for(state, 300, seed=3)
    one = NativeEngine(comp.topology)
    bulk = NativeEngine(comp.topology)
    ref = ReferenceEngine(comp.topology)
    for s in specs:
        one.add_workload(s)
        ref.add_workload(s)
    wids = bulk.add_workloads(arrays_of(specs))
    assert wids == range(0, len(specs))
    n = run_until_stable(one)
    assert run_until_stable(bulk) == n
    assert run_until_stable(ref) == n
    s1, c1, t1 = one.decisions()
    s2, c2, t2 = bulk.decisions()
    assert (s1 == s2).all() and (c1 == c2).all() and (t1 == t2).all()
    assert (one.usage == bulk.usage).all()
    for w in range(len(specs)):
        a, b, r = one.workload_view(w), bulk.workload_view(w), ref.workload_view(w)
        assert a == r
        sa, sb = a.spec, b.spec
        assert replace(a, spec=sb) == b
        # The spec rebuilt from the engine's arrays: what the arrays carry.
        for f in (
            "namespace",
            "name",
            "uid",
            "cluster_queue",
            "priority",
            "queue_ts",
            "scheduling_hash",
            "pod_sets",
        ):
            assert getattr(sa, f) == getattr(sb, f), f
    assert STATE_NAMES[int(s1[0])] == ref.workload_view(0).state


def test_bulk_ingestion_appends_after_existing_workloads() -> None:
    state = small_state()
    comp, specs = specs_for(state, 20)
    eng = NativeEngine(comp.topology)
    for s in specs[:5]:
        eng.add_workload(s)
    wids = eng.add_workloads(arrays_of(specs[5:]))
    assert wids == range(5, 20)
    assert eng.n_workloads == 20
    assert eng.workload_view(7).spec.name == specs[7].name


def test_staged_rows_added_by_ranges_equal_bulk_ingestion() -> None:
    """stage_workloads once, then add_staged by uneven row ranges (empty ones
    included), interleaved with cycles: the same decisions and views as
    add_workloads of the same slices."""
    state = small_state()
    comp, specs = specs_for(state, 200, seed=5)
    arrays = arrays_of(specs)
    staged = NativeEngine(comp.topology)
    bulk = NativeEngine(comp.topology)
    staged.stage_workloads(arrays)
    cuts = [0, 1, 1, 7, 40, 41, 120, 200]
    for k, (lo, hi) in enumerate(zip(cuts, cuts[1:], strict=False)):
        assert staged.add_staged(lo, hi) == range(lo, hi)
        assert bulk.add_workloads(arrays_of(specs[lo:hi])) == range(lo, hi)
        for eng in (staged, bulk):
            eng.run_cycle(T0 + k * SECOND)
    assert run_until_stable(staged) == run_until_stable(bulk)
    for a, b in zip(staged.decisions(), bulk.decisions(), strict=True):
        assert (a == b).all()
    for w in range(len(specs)):
        assert staged.workload_view(w) == bulk.workload_view(w)


@pytest.mark.parametrize("rows", [(-1, 3), (5, 4), (0, 201)])
def test_staged_ranges_outside_the_stage_raise_engine_error(rows: tuple[int, int]) -> None:
    state = small_state()
    comp, specs = specs_for(state, 200)
    eng = NativeEngine(comp.topology)
    eng.stage_workloads(arrays_of(specs))
    with pytest.raises(EngineError, match="outside the 200 staged"):
        eng.add_staged(*rows)
    assert eng.n_workloads == 0
    assert eng.add_staged(0, 200) == range(0, 200)
    eng.clear_staged()
    with pytest.raises(EngineError, match="outside the 0 staged"):
        eng.add_staged(0, 1)
    assert eng.n_workloads == 200


def test_bulk_defaults_uid_and_pod_set_name() -> None:
    state = small_state()
    comp, specs = specs_for(state, 3)
    a = arrays_of(specs)
    a.uids = None
    eng = NativeEngine(comp.topology)
    eng.add_workloads(a)
    spec = eng.workload_view(1).spec
    assert spec.uid == "ns/wl-00001"
    assert spec.pod_sets[0].name == "main"


def test_decisions_arrays() -> None:
    state = small_state()
    comp, specs = specs_for(state, 50)
    eng = NativeEngine(comp.topology)
    eng.add_workloads(arrays_of(specs))
    eng.run_cycle(T0 + SECOND)
    state_codes, cq, time = eng.decisions()
    assert state_codes.dtype == np.int8 and cq.dtype == np.int32 and time.dtype == np.int64
    assert state_codes.shape == cq.shape == time.shape == (50,)
    admitted = np.flatnonzero(state_codes == STATE_NAMES.index("admitted"))
    assert len(admitted) > 0
    assert (time[admitted] == T0 + SECOND).all()
    assert (cq[admitted] >= 0).all()
    assert (cq[state_codes == 0] == -1).all()


# --- errors ---------------------------------------------------------------------------------------

BAD_ARRAYS = {
    "float priorities": dict(priority=np.array([0.0, 1.0, 2.0])),
    "float amounts": dict(request_amount=lambda a: np.asarray(a.request_amount, dtype=np.float64)),
    "string cluster queues": dict(cluster_queue=np.array(["0", "1", "2"])),
    "bool counts": dict(pod_set_count=lambda a: np.ones(len(a.pod_set_count), dtype=bool)),
    "2-D priorities": dict(priority=np.zeros((3, 1), dtype=np.int64)),
    "short queue_ts": dict(queue_ts=np.zeros(2, dtype=np.int64)),
    "cluster queue out of range": dict(cluster_queue=np.array([0, 99, 1])),
    "cluster queue below -1": dict(cluster_queue=np.array([0, -2, 1])),
    "resource out of range": dict(request_resource=lambda a: np.full(len(a.request_resource), 1000)),
    "negative resource": dict(request_resource=lambda a: np.full(len(a.request_resource), -1)),
    "flavor class out of range": dict(pod_set_flavor_class=lambda a: np.full(len(a.pod_set_count), 7)),
    "offsets not starting at 0": dict(pod_set_offsets=np.array([1, 2, 3, 3])),
    "offsets decreasing": dict(pod_set_offsets=np.array([0, 2, 1, 3])),
    "offsets past the end": dict(pod_set_offsets=np.array([0, 1, 2, 9])),
    "request offsets past the end": dict(request_offsets=lambda a: np.asarray(a.request_offsets) + 1),
    "unsorted resources": dict(request_resource=lambda a: np.asarray(a.request_resource)[::-1].copy()),
    "negative count": dict(pod_set_count=lambda a: np.full(len(a.pod_set_count), -1)),
    "min count below -1": dict(pod_set_min_count=lambda a: np.full(len(a.pod_set_count), -5)),
    "priority beyond int32": dict(priority=np.array([0, 1 << 40, 0])),
    "uint64 beyond int64": dict(queue_ts=np.array([0, 1 << 63, 0], dtype=np.uint64)),
    "too few names": dict(names=["a", "b"]),
    "names not strings": dict(names=[1, 2, 3]),
    "NUL in namespace": dict(namespaces=["ns", "n\0s", "ns"]),
    "priority missing": dict(priority=None),
}


@pytest.mark.parametrize("case", sorted(BAD_ARRAYS))
def test_bad_arrays_raise_engine_error(case: str) -> None:
    state = small_state()
    comp, specs = specs_for(state, 3)
    eng = NativeEngine(comp.topology)
    arrays = arrays_of(specs)
    for key, value in BAD_ARRAYS[case].items():
        setattr(arrays, key, value(arrays) if callable(value) else value)
    with pytest.raises(EngineError):
        eng.add_workloads(arrays)
    assert eng.n_workloads == 0, "a rejected batch adds nothing"
    eng.add_workloads(arrays_of(specs))  # the engine is still usable
    assert eng.n_workloads == 3


def test_empty_batch() -> None:
    state = small_state()
    comp, _ = specs_for(state, 0)
    eng = NativeEngine(comp.topology)
    assert eng.add_workloads(arrays_of([])) == range(0, 0)
    assert eng.run_cycle(T0).heads == 0


@pytest.mark.parametrize("wid", [-1, 3, 1 << 40])
def test_unknown_workload_ids_raise_engine_error(wid: int) -> None:
    state = small_state()
    comp, specs = specs_for(state, 3)
    eng = NativeEngine(comp.topology)
    eng.add_workloads(arrays_of(specs))
    for call in (eng.remove_workload, eng.release_eviction, eng.workload_view):
        with pytest.raises(EngineError):
            call(wid)
    with pytest.raises(EngineError):
        eng.evict(wid, "Reason", "message")


def test_bad_single_workloads_raise_engine_error() -> None:
    state = small_state()
    comp, specs = specs_for(state, 1)
    eng = NativeEngine(comp.topology)
    good = specs[0]
    bad = [
        WorkloadSpec(**{**good.__dict__, "cluster_queue": 42}),
        WorkloadSpec(**{**good.__dict__, "priority": 1.5}),
        WorkloadSpec(**{**good.__dict__, "queue_ts": 1 << 70}),
        WorkloadSpec(**{**good.__dict__, "namespace": None}),
    ]
    for spec in bad:
        with pytest.raises(EngineError):
            eng.add_workload(spec)
    assert eng.n_workloads == 0


def test_bad_topology_raises_engine_error() -> None:
    """A malformed Topology is the API's typed error: a field of the wrong
    type where the typed spec is built, a wrong shape in the engine's checks."""
    topo = compile_topology(small_state())
    for change in (
        {"node_parent": topo.node_parent[:-1]},
        {"node_parent": None},
        {"fr_pairs": [(0,)] + topo.fr_pairs[1:]},
        {"quotas": [{0: (1.5, 0, 0)}] + topo.quotas[1:]},
        {"n_cq": "1"},
    ):
        with pytest.raises(EngineError):
            NativeEngine(replace(topo, **change))


def test_topology_spec_fields_are_typed_and_required() -> None:
    """The engine's topology crosses the boundary as one typed object: a
    field left out is a TypeError where it is built, not a missing key met
    by the engine, and the engine takes nothing else."""
    from kueue_fast import _core
    from kueue_fast.engine.native import topology_spec

    topo = compile_topology(small_state())
    spec = topology_spec(topo)
    assert isinstance(spec, _core.TopologySpec)
    _core.Engine(spec, True)
    with pytest.raises(TypeError):
        _core.TopologySpec(resource_names=topo.resource_names)
    with pytest.raises(TypeError):
        _core.Engine({"resource_names": topo.resource_names}, True)


# --- threads --------------------------------------------------------------------------------------


def test_cycles_from_several_threads_are_serialised() -> None:
    """run_cycle releases the GIL; the engine's lock keeps concurrent calls safe."""
    state = small_state()
    comp, specs = specs_for(state, 400)
    eng = NativeEngine(comp.topology)
    eng.add_workloads(arrays_of(specs))
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for i in range(30):
                eng.run_cycle(T0 + (k * 100 + i) * SECOND)
                eng.decisions()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert eng.cycle == 120


def test_debug_checks_toggle_and_evaluations() -> None:
    state = small_state()
    comp, specs = specs_for(state, 10)
    eng = NativeEngine(comp.topology)
    assert eng.debug_checks is False
    eng.debug_checks = True
    assert eng.debug_checks is True
    eng.add_workloads(arrays_of(specs))
    eng.run_cycle(T0)
    assert eng.evaluations >= 0
    assert eng.memory_bytes() > 0


# --- admission fair sharing -----------------------------------------------------------------------


def afs_state(n_cq: int = 4) -> ClusterState:
    """small_state with admission fair sharing: usage-based ClusterQueues, three
    LocalQueues each (one of them named alike in two namespaces), some history."""
    from kueue_fast.api.model import AdmissionFairSharingConfig, Configuration

    state = small_state(n_cq)
    state.configuration = Configuration(
        admission_fair_sharing=AdmissionFairSharingConfig(20.0, 2.0, {"memory": 1e-9})
    )
    for i, cq in enumerate(state.cluster_queues.values()):
        cq.usage_based_admission_fair_sharing = True
        for ns, name, cpu in (("ns", f"lq-{i}", 0), ("ns", f"busy-{i}", 3), ("other", f"lq-{i}", 1)):
            q = LocalQueue(ns, name, cq.name)
            q.afs_consumed_nanos = {"cpu": cpu * 10**9}
            state.local_queues[f"{ns}/{name}"] = q
    return state


def afs_specs(state: ClusterState, n: int) -> tuple[WorkloadCompiler, list[WorkloadSpec]]:
    comp, specs = specs_for(state, n, seed=5)
    keys = sorted(state.local_queues)
    for i, s in enumerate(specs):  # spread over every LocalQueue of the workload's ClusterQueue
        mine = [k for k in keys if state.local_queues[k].cluster_queue == f"cq-{s.cluster_queue}"]
        ns, name = mine[i % len(mine)].split("/")
        pod_sets = [PodSet("main", 2, {"cpu": 1500, "memory": GI})]
        wl = Workload(ns, s.name, name, pod_sets, T0 - i, priority=i % 3)
        specs[i] = comp.compile(wl)
    return comp, specs


def test_bulk_ingestion_with_local_queues_equals_one_by_one_and_the_reference() -> None:
    state = afs_state()
    comp, specs = afs_specs(state, 200)
    one, bulk, ref = NativeEngine(comp.topology), NativeEngine(comp.topology), ReferenceEngine(comp.topology)
    for s in specs:
        one.add_workload(s)
        ref.add_workload(s)
    arrays = arrays_of(specs)
    arrays.local_queue = np.array([s.local_queue for s in specs], dtype=np.int64)
    bulk.add_workloads(arrays)
    n = run_until_stable(ref)
    assert run_until_stable(one) == n and run_until_stable(bulk) == n
    for w in range(len(specs)):
        a, b, r = one.workload_view(w), bulk.workload_view(w), ref.workload_view(w)
        assert a == r
        assert b.spec.local_queue == specs[w].local_queue and b.spec.queue_name == specs[w].queue_name
        assert replace(a, spec=b.spec) == b
    assert one.afs_ledger_state() == bulk.afs_ledger_state() == ref.afs_ledger_state()
    assert any(e["usage"] > 0 for e in ref.afs_ledger_state().values())


def test_ledger_state_and_restore_through_the_native_api() -> None:
    state = afs_state(2)
    comp, specs = afs_specs(state, 30)
    eng = NativeEngine(comp.topology)
    for s in specs:
        eng.add_workload(s)
    assert set(eng.afs_ledger_state()) == set(), "nothing sampled before the first cycle"
    eng.run_cycle(T0)
    ledger = eng.afs_ledger_state()
    assert ledger["ns/busy-0"]["consumed"]["cpu"] >= 3 * 10**9 and ledger["ns/busy-0"]["last_update_ns"] == T0
    fresh = NativeEngine(comp.topology)
    big = 3 * 10**30  # beyond int64: the ledger keeps 128-bit nanos
    fresh.restore_afs_ledger(
        {
            **ledger,
            "ns/lq-1": {**ledger["ns/lq-1"], "consumed": {"cpu": big, "gone": 1}},
            "no/such-queue": ledger["ns/lq-0"],
        }
    )
    restored = fresh.afs_ledger_state()
    assert list(restored) == [k for k in ledger]
    assert restored["ns/lq-1"]["consumed"] == {"cpu": big}
    assert restored["ns/busy-0"] == {**ledger["ns/busy-0"], "pending_penalty": {}}
    with pytest.raises(EngineError):
        fresh.restore_afs_ledger({"ns/lq-0": {"consumed": {"cpu": 2**130}, "last_update_ns": T0}})
    with pytest.raises(EngineError):
        fresh._core.restore_afs_ledger([(99, [], T0)])
    with pytest.raises(EngineError):
        fresh._core.restore_afs_ledger([(0, [(1, 5), (0, 5)], T0)])  # resources out of order
    plain = NativeEngine(compile_topology(small_state()))
    assert plain.afs_ledger_state() == {}
    plain.restore_afs_ledger(ledger)  # no admission fair sharing: ignored, as the reference does
    assert plain.afs_ledger_state() == {}


def test_bad_admission_fair_sharing_input_raises_engine_error() -> None:
    state = afs_state(2)
    comp, specs = afs_specs(state, 3)
    eng = NativeEngine(comp.topology)
    with pytest.raises(EngineError):
        eng.add_workload(WorkloadSpec(**{**specs[0].__dict__, "local_queue": 99}))
    arrays = arrays_of(specs)
    arrays.local_queue = np.array([0, 99, 0], dtype=np.int64)
    with pytest.raises(EngineError):
        eng.add_workloads(arrays)
    arrays.local_queue = np.array([0.0, 1.0, 0.0])
    with pytest.raises(EngineError):
        eng.add_workloads(arrays)
    assert eng.n_workloads == 0
    topo = comp.topology
    lq0, afs = topo.local_queues[0], topo.admission_fair_sharing
    assert afs is not None
    for change in (
        {"local_queues": [replace(lq0, name="ns/x", cluster_queue=42)] + topo.local_queues[1:]},
        {"local_queues": [replace(lq0, consumed=[(1, 5), (0, 5)])] + topo.local_queues[1:]},
        {"admission_fair_sharing": replace(afs, resource_weights=[1.0])},
        {"admission_fair_sharing": replace(afs, usage_sampling_interval_s=0.0)},
        {"local_queues": [replace(lq0, consumed=[(0, 1.5)])] + topo.local_queues[1:]},
    ):
        with pytest.raises(EngineError):
            NativeEngine(replace(topo, **change))
