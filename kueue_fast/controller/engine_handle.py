"""The controller's handle on the engine (``kueue_fast.cluster.cluster.Cluster``),
built with ``release_evictions=False``: an evicted workload keeps its quota
until its Job has stopped and the reconciler calls ``release``."""

from __future__ import annotations

from ..api.model import AdmissionCheckState, CheckState, ClusterState, Workload
from ..cluster.cluster import Cluster, CycleResult, Decision


class EngineHandle:
    def __init__(self, state: ClusterState, engine: str | None, now_ns: int) -> None:
        self.cluster = Cluster(state, engine, release_evictions=False, start_time_ns=now_ns)

    @property
    def engine_name(self) -> str:
        return self.cluster.engine_name

    def __contains__(self, key: str) -> bool:
        return key in self.cluster

    def add(self, wl: Workload) -> None:
        self.cluster.add_workload(wl)

    def remove(self, key: str) -> None:
        self.cluster.remove_workload(key)

    def reconfigure(self, state: ClusterState) -> None:
        """New configuration; the workloads (and their admissions and
        evictions in progress) are kept."""
        state.workloads = self.cluster.state.workloads
        self.cluster.reconfigure(state)

    def evict(self, key: str, reason: str, message: str) -> None:
        self.cluster.evict(key, reason, message)

    def set_pods_ready(self, key: str, ready: bool, reason: str, now_ns: int) -> None:
        self.cluster.set_pods_ready(key, ready, reason, now_ns)

    def requeue_state(self, key: str) -> tuple[int, int | None]:
        return self.cluster.requeue_state(key)

    def release(self, key: str) -> None:
        self.cluster.release_eviction(key)

    def decision(self, key: str) -> Decision:
        return self.cluster.decision(key)

    def pending_reasons(self, keys: list[str]) -> list[tuple[str, str]]:
        return self.cluster.pending_reasons(keys)

    def run_cycle(self, now_ns: int) -> CycleResult:
        return self.cluster.run_cycle(now_ns)

    def workload(self, key: str) -> Workload | None:
        return self.cluster.state.workloads.get(key)

    def check_states(self, key: str) -> list[AdmissionCheckState]:
        return self.cluster.check_states(key)

    def set_check_state(
        self,
        key: str,
        check: str,
        state: CheckState,
        message: str,
        requeue_after_s: int | None = None,
        transition_ns: int | None = None,
    ) -> None:
        self.cluster.set_check_state(key, check, state, message, requeue_after_s, transition_ns)
