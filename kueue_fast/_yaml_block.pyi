"""Type stubs for the Cython module ``kueue_fast._yaml_block`` (bindings/_yaml_block.pyx)."""

from typing import Any

def load_all(text: str) -> list[Any] | None: ...

INTERFACE: int
