"""Which engine runs: the one asked for, else the native one when this
installation can run it, else the reference one with a note saying why."""

from __future__ import annotations

import functools
import os

from .. import _compiled
from ..api.errors import EngineUnavailableError
from .contract import ENGINES, Engine
from .inputs import Topology


@functools.cache
def native_problem() -> str | None:
    """Why the native engine cannot run in this installation, or None: its
    compiled core missing or from another build (_compiled)."""
    return _compiled.check("_core")


def native_available() -> bool:
    """Can the native engine run here (the compiled core present, and built from these sources)?"""
    return native_problem() is None


def choose_engine(requested: str | None) -> tuple[str, str]:
    """(engine, note): the one asked for (argument, else $KUEUE_FAST_ENGINE),
    else native. When native was not asked for by name and cannot run here,
    the reference (the same decisions, slower) with a note saying why; asked
    for by name, an EngineUnavailableError."""
    explicit = requested or os.environ.get("KUEUE_FAST_ENGINE")
    name = explicit or "native"
    if name not in ENGINES:
        raise EngineUnavailableError(f"unknown engine {name!r}: expected one of {', '.join(ENGINES)}")
    slower = _compiled.slower_paths_note()  # the compiled loading and output paths, engine aside
    problem = native_problem() if name == "native" else None
    if problem is None:
        return name, slower
    if explicit:
        raise EngineUnavailableError(f"the native engine cannot run: {problem}")
    note = f"the native engine cannot run: {problem}; using the reference engine (same decisions, slower)"
    return "reference", "; ".join(filter(None, (note, slower)))


def make_engine(name: str, topology: Topology, release_evictions: bool) -> Engine:
    """The engine called ``name`` ("native" or "reference") over ``topology``;
    :class:`EngineUnavailableError` when the native one cannot run here."""
    if name == "reference":
        from .reference.scheduler import ReferenceEngine

        return ReferenceEngine(topology, release_evictions=release_evictions)
    if (problem := native_problem()) is not None:
        raise EngineUnavailableError(f"the native engine cannot run: {problem}")
    from .native import NativeEngine

    return NativeEngine(topology, release_evictions=release_evictions)
