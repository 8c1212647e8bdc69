"""A one-line progress bar on standard error."""

from __future__ import annotations

import sys
from typing import TextIO

from .result import NS, Progress


def _clock(ns: int) -> str:
    s = max(0, ns) // NS
    d, rem = divmod(s, 86400)
    return f"day {d + 1} {rem // 3600:02d}:{rem % 3600 // 60:02d}"


class ProgressBar:
    """Called with a Progress now and then during the run; ``phase(text)``
    says what comes after it (the bar no longer claims the work is done);
    ``close()`` ends the line (also on Ctrl-C)."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None, width: int = 24) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width
        self._shown = False
        self._last = ""

    def _write(self, line: str) -> None:
        pad = max(0, len(self._last) - len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._last = line
        self._shown = True

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        span = max(1, p.end_ns - p.start_ns)
        frac = min(1.0, max(0.0, (p.sim_ns - p.start_ns) / span))
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        line = (
            f"[{bar}] {frac * 100:3.0f}%  {_clock(p.sim_ns - p.start_ns)}  "
            f"arrived {p.arrived:,}/{p.total:,}  running {p.running:,}  "
            f"preempted {p.preemptions:,}  {p.wall_s:.1f}s"
        )
        if p.instant_cycles:
            line += f"  (this instant: {p.instant_cycles:,} cycles)"
        self._write(line)

    def phase(self, text: str) -> None:
        """The simulation is over; say what is being done now."""
        if self.enabled:
            self._write(f"{text}...")

    def clear(self) -> None:
        """Erase the line (before a message is printed on its own line)."""
        if self._shown:
            self.stream.write("\r" + " " * len(self._last) + "\r")
            self.stream.flush()
            self._shown = False
            self._last = ""

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False
            self._last = ""
