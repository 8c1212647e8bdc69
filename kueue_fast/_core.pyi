"""Stubs of the native engine module (bindings/register_*.cpp)."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

def version() -> str: ...
def format_quantity(resource: str, value: int) -> str: ...

# Admission fair sharing arithmetic (bindings/register_afs.cpp), for tests.
def afs_mul_by_float(v: int, f: float) -> int: ...
def afs_go_pow_half(y: float) -> float: ...
def afs_alpha_rate(sampling_s: float, half_life_s: float) -> float: ...
def afs_go_seconds(ns: int) -> float: ...
def afs_nanos_to_float(v: int) -> float: ...

class Engine:
    """The native engine over one topology (see kueue_fast._native.NativeEngine)."""

    def __init__(self, topology: dict[str, Any], release_evictions: bool = True) -> None: ...
    def add_flavor_class(self, row: Sequence[str | None]) -> int: ...
    @property
    def n_classes(self) -> int: ...
    def add_workload(
        self,
        namespace: str,
        name: str,
        uid: str,
        cluster_queue: int,
        priority: int,
        queue_ts: int,
        scheduling_hash: int,
        block: int,
        block_message: str,
        pod_sets: Sequence[tuple[str, int, int | None, int, Sequence[tuple[int, int]]]],
        admission: tuple[int, int, Sequence[tuple[int, Sequence[tuple[int, int, int]]]]] | None,
        job_uid: str = "",
        local_queue: int = -1,
        queue_name: str = "",
    ) -> int: ...
    def add_workloads(
        self,
        cluster_queue: npt.ArrayLike,
        priority: npt.ArrayLike,
        queue_ts: npt.ArrayLike,
        scheduling_hash: npt.ArrayLike,
        pod_set_offsets: npt.ArrayLike,
        pod_set_count: npt.ArrayLike,
        pod_set_min_count: npt.ArrayLike,
        pod_set_flavor_class: npt.ArrayLike,
        request_offsets: npt.ArrayLike,
        request_resource: npt.ArrayLike,
        request_amount: npt.ArrayLike,
        namespaces: Sequence[str],
        names: Sequence[str],
        uids: Sequence[str] | None = None,
        pod_set_name: npt.ArrayLike | None = None,
        pod_set_names: Sequence[str] | None = None,
        block: npt.ArrayLike | None = None,
        block_message: npt.ArrayLike | None = None,
        block_messages: Sequence[str] | None = None,
        local_queue: npt.ArrayLike | None = None,
    ) -> int: ...
    def stage_workloads(
        self,
        cluster_queue: npt.ArrayLike,
        priority: npt.ArrayLike,
        queue_ts: npt.ArrayLike,
        scheduling_hash: npt.ArrayLike,
        pod_set_offsets: npt.ArrayLike,
        pod_set_count: npt.ArrayLike,
        pod_set_min_count: npt.ArrayLike,
        pod_set_flavor_class: npt.ArrayLike,
        request_offsets: npt.ArrayLike,
        request_resource: npt.ArrayLike,
        request_amount: npt.ArrayLike,
        namespaces: Sequence[str],
        names: Sequence[str],
        uids: Sequence[str] | None = None,
        pod_set_name: npt.ArrayLike | None = None,
        pod_set_names: Sequence[str] | None = None,
        block: npt.ArrayLike | None = None,
        block_message: npt.ArrayLike | None = None,
        block_messages: Sequence[str] | None = None,
        local_queue: npt.ArrayLike | None = None,
    ) -> None: ...
    def add_staged(self, lo: int, hi: int) -> int: ...
    def clear_staged(self) -> None: ...
    def remove_workload(self, wid: int) -> None: ...
    def remove_workloads(self, wids: npt.ArrayLike) -> None: ...
    def run_until_stable(
        self, now_ns: int, max_cycles: int
    ) -> tuple[
        int,
        bool,
        int,
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
    ]: ...
    def run_cycles(
        self,
        start_ns: int,
        step_ns: int,
        max_cycles: int,
        until_stable: bool,
        attempted_mask: npt.NDArray[np.uint8] | None = None,
    ) -> tuple[
        int,
        bool,
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int64],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
    ]: ...
    def run_until_settled(
        self, now_ns: int, max_cycles: int, unexplained: npt.NDArray[np.uint8] | None = None
    ) -> tuple[
        int,
        bool,
        int,
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
    ]: ...
    def preempted_by(self, wids: npt.ArrayLike) -> npt.NDArray[np.int32]: ...
    def messages(self, wids: npt.ArrayLike) -> list[str]: ...
    def reasons(self, wids: npt.ArrayLike) -> list[str]: ...
    def queues(self, wids: npt.ArrayLike) -> npt.NDArray[np.int32]: ...
    def admitted_shapes(
        self, wids: npt.ArrayLike
    ) -> tuple[npt.NDArray[np.int32], list[tuple[int, list[tuple[str, int, list[tuple[int, int]]]]]]]: ...
    def admitted_usage(self, wids: npt.ArrayLike) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]: ...
    def eviction_reasons(self, wids: npt.ArrayLike) -> npt.NDArray[np.int8]: ...
    def release_eviction(self, wid: int) -> None: ...
    def evict(self, wid: int, reason: str, message: str) -> None: ...
    def set_pods_ready(self, wid: int, ready: bool) -> None: ...
    def hold(self, wid: int, until_ns: int, queue_ts: int) -> None: ...
    def end_holds(self, now_ns: int) -> None: ...
    def evict_after_cycle(
        self, wid: int, reason: str, message: str, queue_ts_ns: int, requeue: bool
    ) -> None: ...
    def run_cycle(
        self, now_ns: int
    ) -> tuple[
        int,
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        int,
        int,
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
    ]: ...
    @property
    def cycle(self) -> int: ...
    @property
    def evaluations(self) -> int: ...
    @property
    def n_workloads(self) -> int: ...
    debug_checks: bool
    def stats(self) -> dict[str, int]: ...
    def memory_bytes(self) -> int: ...
    def workload_view(self, wid: int) -> dict[str, Any]: ...
    def workload_spec(
        self, wid: int
    ) -> tuple[
        str,
        str,
        str,
        int,
        int,
        int,
        int,
        list[tuple[str, int, list[tuple[int, int]], int | None, int]],
        int,
        str,
        int,
    ]: ...
    def afs_ledger_state(
        self,
    ) -> list[tuple[int, list[tuple[int, int]], list[tuple[int, int]], int, float]]: ...
    def restore_afs_ledger(self, entries: Sequence[tuple[int, Sequence[tuple[int, int]], int]]) -> None: ...
    def queue_state(self, cluster_queue: int) -> tuple[list[int], list[int], int, int, int]: ...
    def decisions(self) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int32], npt.NDArray[np.int64]]: ...
    @property
    def usage(self) -> npt.NDArray[np.int64]: ...
    @property
    def subtree_quota(self) -> npt.NDArray[np.int64]: ...
    @property
    def nominal(self) -> npt.NDArray[np.int64]: ...
    @property
    def borrowing_limit(self) -> npt.NDArray[np.int64]: ...
    @property
    def lending_limit(self) -> npt.NDArray[np.int64]: ...
