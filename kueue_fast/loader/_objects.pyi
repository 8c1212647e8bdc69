"""Type stubs for the Cython module ``kueue_fast.loader._objects`` (loader/_objects.pyx)."""

from typing import Any

class SlotsMaker:
    cls: type
    direct: bool
    def __init__(self, cls: type) -> None: ...
    def __call__(self, *values: Any) -> Any: ...

class SharedTemplates:
    def __init__(self) -> None: ...
    def __call__(self, doc: object) -> None: ...

INTERFACE: int
