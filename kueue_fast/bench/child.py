"""Running a command in a fresh process: its output, wall time and peak RSS
(each benchmark case runs in its own process, so that its peak RSS is its own)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass


@dataclass
class ChildRun:
    returncode: int
    out: str
    err: str
    wall_s: float  # process start to exit
    peak_rss_mb: float


def run_child(cmd: list[str], keep_stdout: bool = True) -> ChildRun:
    """Run a command to its end: its output, wall time and peak RSS."""
    # output through files, not pipes: wait4 (for this child's own rusage)
    # must reap the child, and a full pipe would block it first
    with tempfile.TemporaryFile("w+") as fout, tempfile.TemporaryFile("w+") as ferr:
        # cwd elsewhere: `python -m` puts the working directory first on
        # sys.path, where a source checkout would shadow the installed package
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fout, stderr=ferr, text=True, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it
        fout.seek(0)
        ferr.seek(0)
        out = fout.read() if keep_stdout else ""
        err = ferr.read()
    return ChildRun(proc.returncode, out, err, wall, usage.ru_maxrss / 1024.0)  # Linux: KB
