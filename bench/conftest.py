"""Collect the suites here: `pytest bench --benchmark-only` (pytest only
collects test_*.py by default, and the repository's pytest configuration
keeps `pytest` alone to tests/)."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if file_path.suffix == ".py" and file_path.name.startswith("bench_"):
        module: pytest.Module = pytest.Module.from_parent(parent, path=file_path)
        return module
    return None
