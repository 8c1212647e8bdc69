"""``kueue-fast simulate``: what the queues do under load, on a simulated clock.

    >>> from kueue_fast.simulate import run
    >>> out = run(n=500, engine="reference", report_dir=None)
    >>> out.metrics.totals["admitted"] > 0
    True

The package is imported lazily by the CLI: ``args`` has no heavy imports.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SimulationOutput", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ..commands import simulate as command

        return getattr(command, name)
    raise AttributeError(name)
