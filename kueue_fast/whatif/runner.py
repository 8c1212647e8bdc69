"""Where the simulations of a what-if run: in this process, on a pool of
local processes (one simulation per process at a time), or on an existing
Dask distributed cluster.

Every configuration runs on the same frozen trace with the same options, so
the runs are independent CPU tasks: the trace goes to each worker once (the
pool's initializer; ``Client.scatter`` on Dask), each task carries its
configuration's ClusterState (a few kB) and returns a :class:`RunSummary`.
The engines are deterministic: serial, pool and Dask give identical results.

Dask rather than Ray: ``dask[distributed]`` is pure-Python wheels (about 40
MiB with its dependencies against Ray's 255 MiB), starts a local cluster in
about a second, and a grid of independent tasks is exactly what its futures
API serves; docs/architecture/decisions.md has the measurements.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import socket
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from ..api.errors import InputError, KueueFastError
from ..api.model import ClusterState
from ..simulate.checks import CheckModel
from ..simulate.defaults import (
    DEFAULT_MAX_CYCLES,
    DEFAULT_POD_STARTUP_S,
    DEFAULT_SEED,
    DEFAULT_TERMINATION_DELAY_S,
)
from ..simulate.progress import ProgressBar
from ..simulate.trace import Trace
from .run_summary import RunSummary

NS = 1_000_000_000
# how often a worker reports a simulation's progress (seconds)
REPORT_EVERY_S = 0.5
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
# how long to keep trying to reach the Dask scheduler
CONNECT_TIMEOUT_S = 20.0
DISTRIBUTED_EXTRA = "pip install 'kueue-fast[distributed]'"


@dataclass(frozen=True)
class SimOptions:
    engine: str
    start_ns: int
    until_ns: int | None = None
    drain: bool = False
    max_cycles: int = DEFAULT_MAX_CYCLES
    termination_delay_ns: int = int(DEFAULT_TERMINATION_DELAY_S * NS)
    dominant: str = ""  # the trace's dominant resource (cluster-wide utilization)
    manifest_duration_ns: int | None = None  # run time of the manifests' Workloads (None: for ever)
    pod_startup_s: float = DEFAULT_POD_STARTUP_S  # waitForPodsReady: median start-up of a job's pods
    admission_checks: dict[str, CheckModel] = field(default_factory=dict)  # --admission-check
    seed: int = DEFAULT_SEED  # the admission checks' draws


@dataclass(frozen=True)
class SimTask:
    index: int
    label: str
    state: ClusterState


@dataclass
class Failed:
    """A task that raised: what, and where (exceptions are not all picklable)."""

    index: int
    where: str
    error: str
    details: str


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def simulate_one(
    task: SimTask,
    trace: Trace,
    options: SimOptions,
    where: str,
    progress: Callable[[float], None] | None = None,
) -> RunSummary:
    """One configuration on the trace: the simulation and its metrics."""
    from ..simulate.event_loop import Progress, simulate
    from ..simulate.metrics import compute
    from .run_summary import cluster_figures

    t0, c0 = time.perf_counter(), time.process_time()
    warnings: list[str] = []
    report: Callable[[Progress], None] | None = None
    if progress is not None:

        def report(p: Progress) -> None:
            assert progress is not None
            progress(min(1.0, max(0.0, (p.sim_ns - p.start_ns) / max(1, p.end_ns - p.start_ns))))

    result = simulate(
        task.state,
        trace,
        options.engine,
        options.start_ns,
        options.until_ns,
        options.drain,
        options.max_cycles,
        report,
        termination_delay_ns=options.termination_delay_ns,
        warn=warnings.append,
        manifest_duration_ns=options.manifest_duration_ns,
        pod_startup_s=options.pod_startup_s,
        admission_checks=options.admission_checks,
        seed=options.seed,
    )
    metrics = compute(result)
    return RunSummary(
        index=task.index,
        label=task.label,
        metrics=metrics,
        overall=cluster_figures(result, metrics, options.dominant),
        engine=result.engine,
        cycles=result.cycles,
        unsettled=result.unsettled,
        wall_s=time.perf_counter() - t0,
        cpu_s=time.process_time() - c0,
        where=where,
        warnings=warnings,
    )


def _guarded(
    task: SimTask, trace: Trace, options: SimOptions, where: str, progress: Any
) -> RunSummary | Failed:
    try:
        return simulate_one(task, trace, options, where, progress)
    except Exception as e:  # reported by the parent with the configuration's name
        return Failed(task.index, where, " ".join(f"{type(e).__name__}: {e}".split()), traceback.format_exc())


# --- progress ------------------------------------------------------------------------------------------


class SweepBar(ProgressBar):
    """One line: configurations done, and the ones running with their progress."""

    def show(self, done: int, total: int, running: dict[str, float], elapsed_s: float, where: str) -> None:
        if not self.enabled:
            return
        filled = int(done / max(1, total) * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        now = ", ".join(f"{label} {frac * 100:.0f}%" for label, frac in list(running.items())[:4])
        more = f" +{len(running) - 4}" if len(running) > 4 else ""
        line = f"[{bar}] {done}/{total} configurations  {elapsed_s:.0f}s  {where}"
        if now:
            line += f"  running: {now}{more}"
        self._write(line)


# --- the three ways to run ------------------------------------------------------------------------------


def run_all(
    tasks: Sequence[SimTask],
    trace: Trace,
    options: SimOptions,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    bar: SweepBar | None = None,
) -> list[RunSummary]:
    """Simulate every task on the trace; the results in task order. With
    ``scheduler`` (a Dask scheduler address) on that cluster; else on
    ``workers`` local processes (default: the usable cores), in this
    process when that is 1."""
    if not tasks:
        return []
    if scheduler:
        out = _run_dask(tasks, trace, options, scheduler, bar)
    else:
        n = min(workers or default_workers(), len(tasks))
        out = _run_serial(tasks, trace, options, bar) if n <= 1 else _run_pool(tasks, trace, options, n, bar)
    return sorted(out, key=lambda r: r.index)


def _host() -> str:
    return socket.gethostname()


def _fail(failed: Failed, tasks: Sequence[SimTask]) -> KueueFastError:
    label = next(t.label for t in tasks if t.index == failed.index)
    return KueueFastError(f"configuration {label} failed on {failed.where}: {failed.error}")


def _run_serial(
    tasks: Sequence[SimTask], trace: Trace, options: SimOptions, bar: SweepBar | None
) -> list[RunSummary]:
    where = f"this process ({_host()} pid {os.getpid()})"
    t0 = time.perf_counter()
    out: list[RunSummary] = []
    last = [0.0]
    for k, task in enumerate(tasks):

        def progress(frac: float, task: SimTask = task, k: int = k) -> None:
            now = time.perf_counter()
            if bar is not None and now - last[0] >= REPORT_EVERY_S / 2:
                last[0] = now
                bar.show(k, len(tasks), {task.label: frac}, now - t0, "1 process")

        got = _guarded(task, trace, options, where, progress)
        if isinstance(got, Failed):
            raise _fail(got, tasks)
        out.append(got)
        if bar is not None:
            bar.show(k + 1, len(tasks), {}, time.perf_counter() - t0, "1 process")
    return out


# the pool's worker process: the trace and options, set once by the initializer
_WORKER: dict[str, Any] = {}


def _init_worker(trace: Trace, options: SimOptions, queue: Any) -> None:
    _WORKER.update(trace=trace, options=options, queue=queue)


def _pool_task(task: SimTask) -> RunSummary | Failed:
    queue = _WORKER["queue"]
    last = [0.0]

    def progress(frac: float) -> None:
        now = time.monotonic()
        if now - last[0] >= REPORT_EVERY_S:
            last[0] = now
            queue.put((task.index, frac))

    where = f"local process ({_host()} pid {os.getpid()})"
    return _guarded(task, _WORKER["trace"], _WORKER["options"], where, progress)


def _run_pool(
    tasks: Sequence[SimTask], trace: Trace, options: SimOptions, n: int, bar: SweepBar | None
) -> list[RunSummary]:
    # spawn: workers start clean (no threads or locks inherited), as on every platform
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    labels = {t.index: t.label for t in tasks}
    running: dict[int, float] = {}
    out: list[RunSummary] = []
    t0 = time.perf_counter()
    pool = ProcessPoolExecutor(
        max_workers=n, mp_context=ctx, initializer=_init_worker, initargs=(trace, options, queue)
    )
    try:
        futures: dict[Future[RunSummary | Failed], SimTask] = {pool.submit(_pool_task, t): t for t in tasks}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            while not queue.empty():
                try:
                    index, frac = queue.get_nowait()
                except Exception:  # emptied meanwhile
                    break
                running[index] = frac
            for f in done:
                got = f.result()
                if isinstance(got, Failed):
                    raise _fail(got, tasks)
                running.pop(got.index, None)
                out.append(got)
            if bar is not None:
                shown = {labels[i]: fr for i, fr in running.items()}
                bar.show(len(out), len(tasks), shown, time.perf_counter() - t0, f"{n} local processes")
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for p in list(getattr(pool, "_processes", {}).values()):  # do not wait for running simulations
            p.terminate()
        raise
    finally:
        pool.shutdown(wait=True)
        queue.close()
    return out


def _dask_worker_info() -> tuple[str, bool]:
    from importlib.metadata import version

    from ..engine.select import native_available

    return version("kueue-fast"), native_available()


def _dask_task(task: SimTask, trace: Trace, options: SimOptions) -> RunSummary | Failed:
    from distributed import get_worker

    w = get_worker()
    name = "" if str(w.name) == w.address else f"{w.name} "
    where = f"dask worker {name}({w.address}, {_host()} pid {os.getpid()})"
    return _guarded(task, trace, options, where, None)


def _connect(address: str) -> Any:
    try:
        import distributed
    except ImportError:
        raise InputError(
            "", "--scheduler", f"running on a Dask cluster needs the distributed extra: {DISTRIBUTED_EXTRA}"
        ) from None
    try:
        return distributed.Client(address, timeout=f"{CONNECT_TIMEOUT_S}s", set_as_default=False)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as e:
        raise InputError("", "--scheduler", f"cannot connect to the Dask scheduler {address}: {e}") from None


def check_workers(client: Any, options: SimOptions) -> int:
    """Every worker must run this version of kueue-fast (and the engine asked
    for): the results would differ otherwise. Returns the number of workers."""
    from importlib.metadata import version

    mine = version("kueue-fast")
    try:
        info = client.run(_dask_worker_info)
    except Exception as e:
        raise KueueFastError(
            f"the Dask workers cannot run kueue-fast ({' '.join(str(e).split())}): install kueue-fast "
            f"{mine} on every worker ({DISTRIBUTED_EXTRA})"
        ) from None
    if not info:
        raise KueueFastError("the Dask cluster has no workers")
    for addr, (theirs, native) in sorted(info.items()):
        if theirs != mine:
            raise KueueFastError(
                f"Dask worker {addr} runs kueue-fast {theirs}, this is {mine}: "
                "install the same version everywhere"
            )
        if options.engine == "native" and not native:
            raise KueueFastError(
                f"Dask worker {addr} has no native engine: use --engine reference or rebuild it"
            )
    return len(info)


def _run_dask(
    tasks: Sequence[SimTask], trace: Trace, options: SimOptions, address: str, bar: SweepBar | None
) -> list[RunSummary]:
    client = _connect(address)
    from distributed import as_completed

    try:
        n = check_workers(client, options)
        t0 = time.perf_counter()
        shared = client.scatter(trace, broadcast=True)
        run = uuid.uuid4().hex[:8]
        futures = [
            client.submit(_dask_task, t, shared, options, key=f"kueue-fast-{run}-{t.index}", pure=False)
            for t in tasks
        ]
        out: list[RunSummary] = []
        where = f"Dask {address} ({n} workers)"
        if bar is not None:
            bar.show(0, len(tasks), {}, 0.0, where)
        try:
            for f in as_completed(futures, loop=client.loop):  # type: ignore[no-untyped-call]
                got = f.result()
                if isinstance(got, Failed):
                    raise _fail(got, tasks)
                out.append(got)
                if bar is not None:
                    bar.show(len(out), len(tasks), {}, time.perf_counter() - t0, where)
        except BaseException:
            client.cancel(futures)
            raise
        return out
    finally:
        client.close()


def scheduler_address(option: str | None) -> tuple[str | None, str]:
    """The Dask scheduler to use, and where it came from ('' when local)."""
    if option:
        return option, "--scheduler"
    env = os.environ.get(SCHEDULER_ENV)
    if env:
        return env, f"${SCHEDULER_ENV}"
    return None, ""
