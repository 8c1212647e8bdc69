"""Loading Workload objects: one YAML file and one JSON List (`kubectl get
workloads -A -o json`), parametrized by the number of workloads. Timed:
``loader.load`` (read, parse, validate, build the model), and the same plus
the Cluster construction on the native engine ("loaded into the engine").
The files are made once per session by the drain generator
(``kueue_fast.bench.write_load_files``). ``kueue-fast bench load`` reports
the split per stage.

    pytest bench/bench_loading.py --benchmark-only
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kueue_fast.bench import write_load_files
from kueue_fast.cluster.cluster import Cluster
from kueue_fast.engine.select import native_available
from kueue_fast.loader import load

SIZES = [1000, 10_000, 100_000]


@pytest.fixture(scope="session")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, str], Path]:
    out = {}
    for n in SIZES:
        paths = write_load_files(str(tmp_path_factory.mktemp(f"loading{n}")), n)
        for fmt, path in paths.items():
            out[(n, fmt)] = Path(path)
    return out


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("n", SIZES)
def test_load(benchmark: Any, files: dict[tuple[int, str], Path], n: int, fmt: str) -> None:
    state = benchmark.pedantic(lambda: load([str(files[(n, fmt)])]), rounds=1, iterations=1)
    assert len(state.workloads) == n


@pytest.mark.skipif(not native_available(), reason="the native engine is not built")
@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("n", SIZES)
def test_load_into_the_engine(benchmark: Any, files: dict[tuple[int, str], Path], n: int, fmt: str) -> None:
    cluster = benchmark.pedantic(
        lambda: Cluster.from_files([str(files[(n, fmt)])], engine="native"), rounds=1, iterations=1
    )
    assert len(cluster.keys()) == n


def test_json_and_yaml_load_the_same_workloads(files: dict[tuple[int, str], Path]) -> None:
    a, b = load([str(files[(1000, "json")])]), load([str(files[(1000, "yaml")])])
    assert a.workloads.keys() == b.workloads.keys()
    assert a.workloads == b.workloads  # every field, the manifests as read (raw) included
