"""The controller's shape: its parts are objects given their dependencies
(what several of them share is one LoopState passed to each), not mixins of
one class over shared attributes. (Import cycles: tests/test_import_cycles.py,
for the whole package.)"""

from __future__ import annotations

import ast
from pathlib import Path

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
