"""Type stubs for the Cython module ``kueue_fast.loader._nesting`` (loader/_nesting.pyx)."""

from typing import Any

def nesting_exceeds(value: Any, max_depth: int) -> bool: ...

INTERFACE: int
