"""Type stubs for the Cython module ``kueue_fast.commands._contract_json`` (commands/_contract_json.pyx)."""

from collections.abc import Callable
from typing import Any

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
    write: Callable[[str], object] | None = None,
    chunk: int = ...,
) -> str: ...
def workload_owners(workloads: dict[str, Any]) -> dict[str, str]: ...

INTERFACE: int
