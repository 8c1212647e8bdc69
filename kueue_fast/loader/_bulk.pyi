"""Type stubs for the Cython module ``kueue_fast.loader._bulk`` (loader/_bulk.pyx)."""

from collections.abc import Mapping
from typing import Any

from ..api import model as m

class TemplateResult:
    spec: dict[str, Any]
    requests: dict[str, int]
    over_limits: list[tuple[str, tuple[str, ...]]]
    affinity: tuple[m.NodeSelectorTerm, ...] | None
    tolerations: list[m.Toleration] | None

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

INTERFACE: int
