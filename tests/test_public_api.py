"""The embedding API is documented: every public class, function, method and
property of the modules the API reference (docs/api.md) shows has a
docstring of its own, and the reference shows every one of those modules."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

# module -> the names it exports to users (None: every public class and function defined there)
PUBLIC: dict[str, list[str] | None] = {
    "kueue_fast": None,
    "kueue_fast.cluster.decisions": [
        "Decision",
        "PodSetDecision",
        "CycleResult",
        "WorkloadHistory",
        "EvictionRecord",
    ],
    "kueue_fast.api.errors": None,
    "kueue_fast.api.model": None,
    "kueue_fast.loader": ["build_state", "load", "read_documents", "parse_workload", "Document"],
    "kueue_fast.commands.lint": ["lint"],
    "kueue_fast.integrations.job": ["workloads_for"],
    "kueue_fast.engine.contract": None,
}


def _own_doc(obj: Any) -> str | None:
    doc = obj.__doc__
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and doc and doc.startswith(f"{obj.__name__}("):
        return None  # the signature dataclasses write, not a description
    return doc


def _public(module: str) -> list[tuple[str, Any]]:
    mod = importlib.import_module(module)
    names = PUBLIC[module] or getattr(mod, "__all__", None)
    if names is None:
        names = [
            n
            for n, v in vars(mod).items()
            if not n.startswith("_")
            and (inspect.isclass(v) or inspect.isfunction(v))
            and v.__module__ == module
        ]
    out: list[tuple[str, Any]] = []
    for name in names:
        obj = getattr(mod, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        out.append((f"{module}.{name}", obj))
        if inspect.isclass(obj):
            for klass in obj.__mro__:  # a base class's methods are the class's too
                if not klass.__module__.startswith("kueue_fast"):
                    continue
                for attr, value in vars(klass).items():
                    if attr.startswith("_"):
                        continue
                    fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                    if inspect.isfunction(fn):
                        out.append((f"{module}.{name}.{attr}", fn))
    return out


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_public_name_has_a_docstring(module: str) -> None:
    missing = sorted({name for name, obj in _public(module) if not _own_doc(obj)})
    assert missing == []


def test_the_api_reference_shows_every_public_module() -> None:
    page = (ROOT / "docs" / "api.md").read_text()
    for module in PUBLIC:
        if module != "kueue_fast.cluster.decisions":  # its records are shown as kueue_fast's
            assert module in page, module
