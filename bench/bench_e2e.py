"""`kueue-fast schedule` end to end (process start to exit), parametrized by
input (the drain case; the long drain, 100+ cycles), format and size: the
inputs ``kueue-fast bench e2e`` runs, from the same cache
(``kueue_fast.bench.e2e_input_files``). The split per stage (parse, build,
schedule, output) and the peak RSS go into extra_info.

    pytest bench/bench_e2e.py --benchmark-only
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from kueue_fast.bench import E2E_FORMATS, E2E_INPUTS, e2e_input_files, run_schedule_e2e
from kueue_fast.engine.select import native_available

SIZES = [10_000, 100_000]

pytestmark = pytest.mark.skipif(not native_available(), reason="the native engine is not built")


@pytest.mark.parametrize("fmt", E2E_FORMATS)
@pytest.mark.parametrize("name", list(E2E_INPUTS))
@pytest.mark.parametrize("n", SIZES)
def test_schedule_end_to_end(benchmark: Any, n: int, name: str, fmt: str) -> None:
    path = e2e_input_files(name, n)[fmt]
    runs: list[dict[str, Any]] = []
    benchmark.pedantic(
        lambda: runs.append(run_schedule_e2e(path, "native", repeat=1)), rounds=3, iterations=1
    )
    best = min(runs, key=lambda r: r["wall_s"])
    assert best["workloads"] == n
    benchmark.extra_info.update(best)


@pytest.mark.parametrize("name", list(E2E_INPUTS))
def test_native_and_reference_print_the_same_decisions(name: str) -> None:
    path = e2e_input_files(name, 500)["yaml"]
    outs = [
        subprocess.run(
            [sys.executable, "-m", "kueue_fast", "schedule", path, "--until-stable", "--engine", engine],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for engine in ("native", "reference")
    ]
    assert outs[0] == outs[1]
