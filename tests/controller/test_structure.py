"""The controller's shape: its parts are objects given their dependencies
(what several of them share is one LoopState passed to each), not mixins of
one class over shared attributes; and its modules import one another
without a cycle, imports inside functions counted (TYPE_CHECKING aside)."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_import_cycles import _is_type_checking, cycles  # noqa: E402

CONTROLLER = Path(__file__).resolve().parents[2] / "kueue_fast" / "controller"


def _classes() -> dict[str, tuple[str, list[str]]]:
    """Class name -> (its module, the names of its bases)."""
    out = {}
    for p in sorted(CONTROLLER.glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.ClassDef):
                out[node.name] = (p.stem, [ast.unparse(b).rpartition(".")[2] for b in node.bases])
    return out


def test_no_controller_class_is_assembled_from_the_packages_classes() -> None:
    classes = _classes()
    assert {"Controller", "Loop", "Scheduler", "WorkloadFlow", "QueueStatus", "Intake"} <= set(classes)
    derived = {
        f"{module}.{name}": [b for b in bases if b in classes]
        for name, (module, bases) in classes.items()
        if any(b in classes for b in bases)
    }
    assert derived == {}


def _imports(body: list[ast.stmt]) -> Iterator[ast.ImportFrom]:
    """The relative imports of a module, in functions too, not under TYPE_CHECKING."""
    for node in body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            yield from _imports(node.orelse)
            continue
        for block in ("body", "orelse", "finalbody", "handlers"):
            yield from _imports([n for n in getattr(node, block, None) or [] if isinstance(n, ast.AST)])


def test_controller_modules_import_each_other_without_a_cycle() -> None:
    mods = {p.stem for p in CONTROLLER.glob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m in mods:
        for node in _imports(ast.parse((CONTROLLER / f"{m}.py").read_text()).body):
            names = [node.module] if node.module else [a.name for a in node.names]
            graph[m] |= {n for n in names if n in mods and n != m}
    assert "reconciler" in graph["main"]  # imported inside a function: counted
    assert cycles(graph) == []
