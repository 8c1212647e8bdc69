"""A one-line progress bar on standard error."""

from __future__ import annotations

import sys
from typing import TextIO

from .loop import NS, Progress


def _clock(ns: int) -> str:
    s = max(0, ns) // NS
    d, rem = divmod(s, 86400)
    return f"day {d + 1} {rem // 3600:02d}:{rem % 3600 // 60:02d}"


class ProgressBar:
    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None, width: int = 24) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width
        self._shown = False

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        span = max(1, p.end_ns - p.start_ns)
        frac = min(1.0, max(0.0, (p.sim_ns - p.start_ns) / span))
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        line = (
            f"\r[{bar}] {frac * 100:3.0f}%  {_clock(p.sim_ns - p.start_ns)}  "
            f"arrived {p.arrived:,}/{p.total:,}  running {p.running:,}  "
            f"preempted {p.preemptions:,}  {p.wall_s:.1f}s "
        )
        self.stream.write(line)
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False
