"""Running one case: the CLI's main() in a forked child under resource
limits, on both engines, and the oracle that judges the outcomes.

A fork per run costs about a millisecond: the parent has imported and warmed
up everything once, the child inherits it copy-on-write, so a case costs
what the command costs, not an interpreter start. The child has an address
space limit, a CPU-time limit and a wall-clock alarm; its peak memory comes
from wait4's rusage.
"""

from __future__ import annotations

import io
import os
import re
import resource
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass

MEMORY_LIMIT = 1 << 30  # the most a case may use above the parent's own footprint
TIMEOUT = 20  # seconds of wall clock (CPU time: the same)

# Python's own words in an error message: an exception that escaped its
# typed handling and was printed as if it were a user's mistake.
LEAKED = re.compile(
    r"Traceback|object has no attribute|NoneType|unhashable type|not subscriptable|"
    r"invalid literal for int\(\)|not supported between instances|unsupported operand|"
    r"object is not iterable|argument of type|takes \d+ positional|KeyError|IndexError|"
    r"RecursionError|MemoryError|AssertionError|object of type '\w+' has no len"
)


@dataclass
class Run:
    rc: int  # exit status, or -signal
    stdout: bytes
    stderr: bytes
    maxrss: int  # bytes

    @property
    def signal(self) -> int:
        return -self.rc if self.rc < 0 else 0


def _vm_rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def in_child(fn: Callable[[], int], timeout: int = TIMEOUT, memory: int = MEMORY_LIMIT) -> Run:
    """``fn()`` (its return value the exit status) in a forked child with
    limits; stdout and stderr captured. A Python exception out of ``fn`` is
    printed and is exit status 70."""
    sys.stdout.flush()
    sys.stderr.flush()
    base = _vm_rss()
    address_limit = _vm_size() + memory + (256 << 20)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            rc = 70
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                # fresh streams on the descriptors (not a test runner's capture objects)
                sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
                sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
                resource.setrlimit(resource.RLIMIT_AS, (address_limit, address_limit))
                resource.setrlimit(resource.RLIMIT_CPU, (timeout, timeout + 1))
                signal.alarm(timeout)
                try:
                    rc = fn()
                except SystemExit as e:
                    rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                except BaseException:
                    traceback.print_exc()
                    rc = 70
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except Exception:
                        pass
            finally:
                os._exit(rc)
        _, status, usage = os.wait4(pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(rc, out.read(), err.read(), max(0, usage.ru_maxrss * 1024 - base))


def cli(argv: list[str]) -> Callable[[], int]:
    def call() -> int:
        from kueue_fast.commands.cli import main

        return main(argv)

    return call


# --- the oracle --------------------------------------------------------------------------------


LINT_SUMMARY = re.compile(r"\d+ error\(s\), \d+ warning\(s\)")


def judge(run: Run, path: str, memory: int = MEMORY_LIMIT, lint: bool = False) -> str | None:
    """What is wrong with one run, as ``"<class>: <detail>"``; None when it
    is an allowed outcome: exit 0, or exit 2 with only ``error:`` and
    ``warning:`` lines (and ``note:``, schedule's word that more cycles would
    admit more), each naming the file, no Python words, no stdout.
    ``lint`` prints its findings and a count on stdout instead."""
    err = run.stderr.decode("utf-8", "replace")
    if run.signal in (signal.SIGALRM, signal.SIGXCPU):
        return f"timeout: killed by {signal.Signals(run.signal).name}"
    if run.signal == signal.SIGKILL or "MemoryError" in err or run.maxrss > memory:
        return f"memory: peak {run.maxrss >> 20} MiB above the fuzzer's; {_tail(err)}"
    if run.signal:
        return f"signal: {signal.Signals(run.signal).name}; {_tail(err)}"
    if run.rc not in (0, 2):
        return f"crash: exit {run.rc}; {_tail(err)}"
    lines = err.splitlines()
    if lint:
        out = run.stdout.decode("utf-8", "replace").splitlines()
        if not out or not LINT_SUMMARY.fullmatch(out[-1]):
            return f"bad-error: lint's last line is not its count: {out[-1:]!r}"
        lines += out[:-1]
    for line in lines:
        if not line.startswith(("error: ", "warning: ", "note: ")):
            return f"bad-error: a line that is neither error, warning nor note: {line[:300]!r}"
        if LEAKED.search(line):
            return f"bad-error: Python's words in a message: {line[:300]!r}"
    if run.rc == 2:
        errors = [line for line in lines if line.startswith("error: ")]
        if not errors:
            return "bad-error: exit 2 without an error line"
        for line in errors:
            if path not in line:
                return f"bad-error: the file is not named: {line[:300]!r}"
        if run.stdout and not lint:
            return f"bad-error: exit 2 with output on stdout ({len(run.stdout)} bytes)"
    return None


def compare(native: Run, reference: Run) -> str | None:
    """The engines must agree: same status, same output, same messages."""
    if native.rc != reference.rc:
        errs = [_tail(r.stderr.decode("utf-8", "replace")) for r in (native, reference)]
        return f"differ: exit {native.rc} (native) vs {reference.rc} (reference); {errs[0]} | {errs[1]}"
    if native.stdout != reference.stdout:
        return f"differ: stdout ({_first_difference(native.stdout, reference.stdout)})"
    if native.stderr != reference.stderr:
        return f"differ: stderr ({_first_difference(native.stderr, reference.stderr)})"
    return None


def _tail(err: str, n: int = 400) -> str:
    err = err.strip()
    return err if len(err) <= n else "..." + err[-n:]


def _first_difference(a: bytes, b: bytes) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"at byte {i}: {a[max(0, i - 40) : i + 60]!r} vs {b[max(0, i - 40) : i + 60]!r}"
