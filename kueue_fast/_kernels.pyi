"""Type stubs for the Cython module ``kueue_fast._kernels`` (bindings/_kernels.pyx)."""

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

FORMAT_DECIMAL_SI: int
FORMAT_BINARY_SI: int
FORMAT_DECIMAL_EXPONENT: int

def parse_parts(s: str) -> tuple[int, int, int, int, int]: ...
def nanos(s: str) -> int: ...
def value_from_nanos(n: int, milli: bool) -> int: ...
def parse_quantity(s: str, resource: str) -> int: ...
def parse_quantities(strings: list[str], resource: str) -> npt.NDArray[np.int64]: ...
def yaml_1_1_risk(text: str) -> int: ...
def digit_run(text: str, length: int) -> int: ...
def json_list_items(text: str, loads: Callable[[str], Any], each: Callable[[Any], object] | None) -> Any: ...
def json_workload_entries(
    keys: list[str],
    kinds: list[int],
    shapes: list[int],
    admitted_tails: list[str],
    reasons: list[str],
    messages: list[str],
    owners: dict[str, str],
    other_texts: list[str],
    pending_state: str,
    prefix: str = "",
    suffix: str = "",
) -> str: ...
def workload_owners(workloads: dict[str, Any]) -> dict[str, str]: ...
def workload_scan(workloads: dict[str, Any]) -> tuple[int, set[str], list[Any], list[str]]: ...

INTERFACE: int
