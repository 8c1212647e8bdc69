"""Type stubs for the Cython module ``kueue_fast.engine._workload_scan`` (engine/_workload_scan.pyx)."""

from typing import Any

def workload_scan(workloads: dict[str, Any]) -> tuple[int, set[str], list[Any], list[str]]: ...

INTERFACE: int
