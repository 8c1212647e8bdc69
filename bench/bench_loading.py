"""Loading Workload objects: one YAML file and one JSON List (`kubectl get
workloads -A -o json`), parametrized by the number of workloads. Timed:
``loader.load`` (read, parse, validate, build the model). The files are made
once per session by the drain generator (``kueue_fast.bench``).

    pytest bench/bench_loading.py --benchmark-only
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueue_fast.bench import drain_case, drain_objects
from kueue_fast.loader import load

SIZES = [1000, 10_000, 100_000]


@pytest.fixture(scope="session")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, str], Path]:
    out = {}
    d = tmp_path_factory.mktemp("loading")
    for n in SIZES:
        objs = drain_objects(drain_case(n_cq=min(1000, n // 10), n_cohorts=min(100, n // 100), n_workloads=n))
        p = d / f"wl{n}.json"
        p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}, indent=4))
        out[(n, "json")] = p
        p = d / f"wl{n}.yaml"
        with p.open("w") as f:
            yaml.dump_all(objs, f, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
        out[(n, "yaml")] = p
    return out


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("n", SIZES)
def test_load(benchmark: Any, files: dict[tuple[int, str], Path], n: int, fmt: str) -> None:
    state = benchmark.pedantic(lambda: load([str(files[(n, fmt)])]), rounds=1, iterations=1)
    assert len(state.workloads) == n


def test_json_and_yaml_load_the_same_workloads(files: dict[tuple[int, str], Path]) -> None:
    a, b = load([str(files[(1000, "json")])]), load([str(files[(1000, "yaml")])])
    assert a.workloads.keys() == b.workloads.keys()
    for k in a.workloads:
        wa, wb = a.workloads[k], b.workloads[k]
        assert (wa.priority, wa.creation_ns, [p.requests for p in wa.pod_sets]) == (
            wb.priority,
            wb.creation_ns,
            [p.requests for p in wb.pod_sets],
        )
