"""Values read from YAML and JSON compared with their types: the readers must
give exactly the same documents, and 1, 1.0 and True are equal in Python."""

from __future__ import annotations

import math
from typing import Any


def typed(x: Any) -> Any:
    """A value with its types spelled out (1, 1.0 and True differ; NaN == NaN)."""
    if isinstance(x, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in x.items()])
    if isinstance(x, list):
        return ("list", [typed(v) for v in x])
    if isinstance(x, float) and math.isnan(x):
        return ("float", "nan")
    return (type(x).__name__, x)
