"""Type stubs for the Cython module ``kueue_fast._bulk`` (bindings/_bulk.pyx)."""

from collections.abc import Mapping
from typing import Any, TypeVar

from . import model as m
from .workload_compiler import WorkloadCompiler

class TemplateResult:
    spec: dict[str, Any]
    requests: dict[str, int]
    over_limits: list[tuple[str, tuple[str, ...]]]
    affinity: tuple[m.NodeSelectorTerm, ...] | None
    tolerations: list[m.Toleration] | None

class SlotsMaker:
    cls: type
    direct: bool
    def __init__(self, cls: type) -> None: ...
    def __call__(self, *values: Any) -> Any: ...

class SharedTemplates:
    def __init__(self) -> None: ...
    def __call__(self, doc: object) -> None: ...

class BulkCaches:
    def __init__(self) -> None: ...

def fast_workload(
    obj: object,
    api: object,
    position: int,
    priority_classes: Mapping[str, m.WorkloadPriorityClass],
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass],
    caches: BulkCaches,
) -> m.Workload | None: ...

_Fill = TypeVar("_Fill", bound="PendingFill")

class PendingFill:
    compiler: WorkloadCompiler
    keys: list[str]
    cq: list[int]
    lq: list[int]
    priority: list[int]
    queue_ts: list[int]
    hash: list[int]
    block: list[int]
    block_message: list[int]
    namespaces: list[str]
    wl_names: list[str]
    uids: list[str]
    ps_offsets: list[int]
    ps_count: list[int]
    ps_min: list[int]
    ps_class: list[int]
    ps_name: list[int]
    rq_offsets: list[int]
    rq_resource: list[int]
    rq_amount: list[int]
    def __init__(self, compiler: WorkloadCompiler) -> None: ...
    def emptied(self: _Fill) -> _Fill: ...
    def __len__(self) -> int: ...
    @property
    def pod_set_names(self) -> list[str]: ...
    @property
    def block_messages(self) -> list[str]: ...
    def prepare(self, workloads: dict[str, m.Workload]) -> None: ...
    def add(self, key: str, wl: m.Workload) -> bool: ...

INTERFACE: int
