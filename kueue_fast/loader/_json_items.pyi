"""Type stubs for the Cython module ``kueue_fast.loader._json_items`` (loader/_json_items.pyx)."""

from collections.abc import Callable
from typing import Any

def digit_run(text: str, length: int) -> int: ...
def json_suspect(text: str, max_depth: int) -> bool: ...
def json_list_items(
    text: str, loads: Callable[[str], Any], each: Callable[[Any], object] | None, max_depth: int
) -> Any: ...

INTERFACE: int
