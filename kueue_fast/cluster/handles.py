"""The three small objects a Cluster (cluster/cluster.py) hands to its ledgers
(cluster/check_ledger.py, cluster/pods_ready.py, cluster/history.py) and to its
decision reader (cluster/reading.py): the engine with what it was built from,
the key <-> wid index, and the clock. The Cluster owns and changes them; the
ledgers read them (and the engine's workloads through them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..api.errors import EngineError
from ..engine.inputs import compile_topology
from ..engine.select import make_engine
from ..engine.workloads import WorkloadCompiler

if TYPE_CHECKING:
    from ..api.model import ClusterState, Workload
    from ..engine.contract import Engine
    from ..engine.inputs import Topology
    from ..engine.workload_scan import WorkloadScan


class EngineHandle:
    """The engine and what it was built from: the ClusterState, its compiled
    topology and the workload compiler. reconfigure() rebuilds them in place,
    so every holder of the handle sees the new engine."""

    state: ClusterState
    topology: Topology
    compiler: WorkloadCompiler
    engine: Engine

    def __init__(self, engine_name: str, release_evictions: bool) -> None:
        self.engine_name = engine_name
        # quota of an evicted workload is released at the end of its cycle (offline)
        self.release_evictions = release_evictions

    def build(self, state: ClusterState, scan: WorkloadScan | None = None) -> None:
        """A new engine for ``state``, with no workload in it."""
        self.state = state
        self.topology = compile_topology(state, scan=scan)
        self.compiler = WorkloadCompiler(state, self.topology)
        self.engine = make_engine(self.engine_name, self.topology, self.release_evictions)

    def knows(self, wl: Workload) -> bool:
        """Does the topology know every resource and flavor the workload names
        (and the compiled TAS topology every pod resource)? Else the engine
        must be rebuilt before the workload can be added."""
        names = set(self.topology.resource_names)
        flavors = set(self.topology.flavor_names)
        missing = any(r not in names for per_pod in self.compiler.charged_requests(wl) for r in per_pod)
        tas = self.topology.tas
        if tas is not None:
            missing |= not tas.knows_resources(r for ps in wl.pod_sets for r in ps.requests)
        if wl.admission is not None:
            for psa in wl.admission.pod_set_assignments:
                missing |= any(r not in names for r in psa.resource_usage)
                missing |= any(f not in flavors for f in psa.flavors.values())
        return not missing


class WorkloadIndex:
    """Workload keys (``namespace/name``) <-> the engine's ids. A removed
    workload's wid is never used again: ``keys`` keeps it."""

    def __init__(self) -> None:
        self.wid: dict[str, int] = {}  # key -> wid, the workloads in the cluster
        self.keys: list[str] = []  # wid -> key, removed workloads included

    def id(self, key: str) -> int:
        """The wid of a workload in the cluster (EngineError otherwise)."""
        try:
            return self.wid[key]
        except KeyError:
            raise EngineError(f"Workload/{key} is not in the cluster") from None

    def add(self, key: str, wid: int) -> None:
        self.wid[key] = wid
        self.keys.append(key)

    def clear(self) -> None:
        """A rebuilt engine starts its wids at 0 again."""
        self.wid.clear()
        self.keys.clear()


class Clock:
    """The cluster's clock (ns since the epoch: the time of the last cycle)
    and the number of cycles run."""

    def __init__(self, now_ns: int) -> None:
        self.now_ns = now_ns
        self.cycles = 0
