"""Type stubs for the Cython module ``kueue_fast.loader._yaml_block`` (loader/_yaml_block.pyx)."""

from collections.abc import Callable
from typing import Any

def load_all(text: str, each: Callable[[Any], object] | None = None) -> list[Any] | None: ...

INTERFACE: int
