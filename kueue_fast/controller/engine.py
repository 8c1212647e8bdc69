"""The controller's handle on the engine (``kueue_fast.cluster.Cluster``).

It adds the few operations the reconciler needs on top of the Cluster API,
in one place, with the workarounds they take today:

* ``evict(key, reason, message)``: an admitted workload is being evicted
  for a reason the scheduler did not issue (an eviction found in progress
  when the engine is rebuilt, a deactivated workload, an admission whose
  write failed for good). The Cluster has no public ``evict``; the engines
  both implement ``Engine.evict(wid, ...)`` (the Cluster uses it for
  HoldAndDrain), so this calls it with the Cluster's id for the key.
* re-adding a key that was removed (a Workload deleted and created again
  with the same name, a pending Workload whose spec changed): the Cluster
  keeps removed keys and refuses them; a ``reconfigure`` forgets them. The
  handle batches that: removed keys are remembered and purged by one
  reconfigure when one of them comes back (or when there are many).
* ``would_rebuild``: ``Cluster.add_workload`` rebuilds the topology when a
  workload names a resource or flavor it has not seen, and a rebuild
  (``reconfigure``) re-adds workloads whose eviction is in progress as
  pending, which would release their quota before their Job stopped. The
  reconciler therefore never triggers a rebuild while an eviction is in
  flight; this tells it whether an add would.
"""

from __future__ import annotations

from ..cluster import Cluster, CycleResult, Decision
from ..model import ClusterState, Workload


class EngineHandle:
    def __init__(self, state: ClusterState, engine: str | None, now_ns: int) -> None:
        self.cluster = Cluster(state, engine, release_evictions=False, start_time_ns=now_ns)
        self.removed: set[str] = set()
        self.live: set[str] = set(state.workloads)

    @property
    def engine_name(self) -> str:
        return self.cluster.engine_name

    def __contains__(self, key: str) -> bool:
        return key in self.live

    def would_rebuild(self, wl: Workload) -> bool:
        if wl.key in self.removed:
            return True
        topo = self.cluster.topology
        names = set(topo.resource_names)
        flavors = set(topo.flavor_names)
        if any(r not in names for ps in wl.pod_sets for r in ps.requests):
            return True
        if wl.admission is not None:
            for psa in wl.admission.pod_set_assignments:
                if any(r not in names for r in psa.resource_usage) or any(
                    f not in flavors for f in psa.flavors.values()
                ):
                    return True
        return False

    def add(self, wl: Workload) -> None:
        if wl.key in self.removed:
            self.purge()
        self.cluster.add_workload(wl)
        self.live.add(wl.key)

    def remove(self, key: str) -> None:
        self.cluster.remove_workload(key)
        self.cluster.state.workloads.pop(key, None)
        self.live.discard(key)
        self.removed.add(key)

    def purge(self) -> None:
        """Forget removed keys (one O(workloads) rebuild)."""
        self.cluster.reconfigure(self.cluster.state)
        self.removed.clear()

    def purge_due(self) -> bool:
        return len(self.removed) > max(1000, len(self.live))

    def reconfigure(self, state: ClusterState) -> None:
        """New configuration; the workloads (and their admissions) are kept."""
        state.workloads = self.cluster.state.workloads
        self.cluster.reconfigure(state)
        self.removed.clear()

    def evict(self, key: str, reason: str, message: str) -> None:
        self.cluster.engine.evict(self.cluster._id(key), reason, message)

    def release(self, key: str) -> None:
        self.cluster.release_eviction(key)

    def decision(self, key: str) -> Decision:
        return self.cluster.decision(key)

    def run_cycle(self, now_ns: int) -> CycleResult:
        return self.cluster.run_cycle(now_ns)

    def workload(self, key: str) -> Workload | None:
        return self.cluster.state.workloads.get(key)
