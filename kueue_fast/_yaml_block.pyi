"""Type stubs for the Cython module ``kueue_fast._yaml_block`` (bindings/_yaml_block.pyx)."""

from collections.abc import Callable
from typing import Any

def load_all(text: str, each: Callable[[Any], object] | None = None) -> list[Any] | None: ...

INTERFACE: int
