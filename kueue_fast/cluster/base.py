"""The state a Cluster's parts share: the Cluster (cluster/cluster.py) is built of
the mixins in cluster/check_ledger.py, cluster/pods_ready.py and cluster/counts.py,
each one concern's methods over these attributes. Declarations only: the
Cluster sets them (Cluster.__init__, _build) and defines the methods."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..api.model import AdmissionCheckState, ClusterState

if TYPE_CHECKING:
    from ..engine.contract import Engine
    from ..engine.inputs import Topology, WorkloadSpec
    from ..engine.workloads import WorkloadCompiler
    from .decisions import Decision, HeldWorkload, PodsReadyState


class ClusterBase:
    engine_name: str
    release_evictions: bool
    state: ClusterState
    cycles: int
    topology: Topology
    compiler: WorkloadCompiler
    engine: Engine
    _wid: dict[str, int]  # key -> the engine's id
    _keys: list[str]  # by wid, removed workloads included
    _clock_ns: int
    # waitForPodsReady (cluster/pods_ready.py)
    _pods_ready: dict[str, PodsReadyState]
    _requeue_count: dict[str, int]
    _requeue_at: dict[str, tuple[int | None, int]]
    _held: dict[int, HeldWorkload]
    # admission checks (cluster/check_ledger.py)
    _check_cqs: set[str]
    _checks: dict[str, list[AdmissionCheckState]]
    _reserved: set[str]
    _check_failures: set[str]
    _deactivated: set[str]
    _reclaimed: set[str]  # cluster/cluster.py

    if TYPE_CHECKING:
        # defined by the Cluster or by another part

        def _id(self, key: str) -> int: ...

        def decision(self, key: str) -> Decision: ...

        def _decision(self, wid: int) -> Decision: ...

        def _waiting_reason(self, spec: WorkloadSpec) -> tuple[str, str]: ...

        def _queue_waiting_reason(self, cq_id: int) -> tuple[str, str]: ...

        def _hold(self, key: str, evicted_cycle: int) -> None: ...
