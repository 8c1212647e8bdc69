"""Collect the suites here: `pytest bench --benchmark-only` (pytest only
collects test_*.py by default, and the repository's pytest configuration
keeps `pytest` alone to tests/).

The suites measure the installed kueue-fast. `python -m pytest` puts the
working directory first on sys.path: from a clone's root with a
non-editable install (`pip install '.[test]'`), the clone's `kueue_fast`,
which has no compiled modules (they are built into the installed package),
would shadow the installed one and fail to import (`cannot import name
'_kernels'`). So the clone comes off sys.path before anything imports
kueue_fast; an editable install still finds the clone through its own
import hook.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _off_sys_path(root: Path) -> None:
    if "kueue_fast" not in sys.modules:
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != root]


_off_sys_path(ROOT)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if file_path.suffix == ".py" and file_path.name.startswith("bench_"):
        module: pytest.Module = pytest.Module.from_parent(parent, path=file_path)
        return module
    return None
