"""Type stubs for the Cython module ``kueue_fast._bulk`` (bindings/_bulk.pyx)."""

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from .api import model as m
from .engine.inputs import PodSetSpec
from .engine.workloads import WorkloadCompiler

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
def fast_status(
    status: dict[str, Any], pod_sets: list[m.PodSet], creation: int, caches: BulkCaches
) -> (
    tuple[m.Admission | None, int | None, bool, int | None, list[m.AdmissionCheckState], bool, bool] | None
): ...

class PendingFill:
    compiler: WorkloadCompiler
    def __init__(self, compiler: WorkloadCompiler) -> None: ...
    def __len__(self) -> int: ...
    @property
    def pod_set_names(self) -> list[str]: ...
    @property
    def block_messages(self) -> list[str]: ...
    def prepare(self, workloads: dict[str, m.Workload]) -> None: ...
    def rows(self, keys: list[str]) -> npt.NDArray[np.int64]: ...
    def columns(self, rows: npt.NDArray[np.int64]) -> dict[str, Any]: ...
    def shape(self, wl: m.Workload) -> tuple[list[PodSetSpec], int, str] | None: ...

INTERFACE: int
