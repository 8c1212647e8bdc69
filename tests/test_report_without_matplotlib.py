"""matplotlib is the `report` extra: without it simulate, compare and sweep
still write every other file of their report and say how to get the charts."""

from __future__ import annotations

import html
import sys
from pathlib import Path

import pytest
import yaml
from whatif_manifests import objects, write

from kueue_fast.commands import simulate as command
from kueue_fast.commands.cli import main

HINT = "pip install 'kueue-fast[report]'"
SMALL = ["-n", "300", "--days", "1", "--no-progress"]


@pytest.fixture
def no_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    # a None entry makes `import matplotlib` raise ImportError, as in an install without the extra
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_simulate_writes_the_report_without_charts_and_says_how_to_get_them(
    no_matplotlib: None, tmp_path: Path
) -> None:
    out = command.run(n=300, seed=1, engine="reference", report_dir=tmp_path / "rep")
    assert sorted(p.name for p in out.report_files) == ["metrics.json", "report.html", "workloads.csv"]
    assert any(HINT in n for n in out.notes)
    page = html.unescape((tmp_path / "rep" / "report.html").read_text())
    assert HINT in page and "data:image/png" not in page


def test_simulate_cli_prints_the_hint(
    no_matplotlib: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", *SMALL, "--engine", "reference", "--report", str(tmp_path / "r")]) == 0
    assert HINT in capsys.readouterr().out
    assert not list((tmp_path / "r").glob("*.png"))


def test_compare_writes_its_report_without_charts(
    no_matplotlib: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base.yaml", objects())
    bigger = write(tmp_path / "bigger.yaml", objects(gpu_a="8"))
    assert main(["compare", base, bigger, *SMALL, "--workers", "1", "--report", str(tmp_path / "r")]) == 0
    assert HINT in capsys.readouterr().err
    assert not list((tmp_path / "r").glob("*.png"))
    assert HINT in html.unescape((tmp_path / "r" / "report.html").read_text())
    assert (tmp_path / "r" / "comparison.json").exists()


def test_sweep_writes_its_report_without_the_chart(
    no_matplotlib: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base.yaml", objects())
    gpu = "spec.resourceGroups[*].flavors[a100.large].resources[nvidia.com/gpu]"
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "parameters": [
                    {"name": "gpus", "set": f"clusterqueue/team-a.{gpu}.nominalQuota", "values": [2, 8]}
                ],
                "metrics": ["wait_p95", "preemptions"],
            }
        )
    )
    assert main(["sweep", base, str(spec), *SMALL, "--workers", "1", "--report", str(tmp_path / "r")]) == 0
    assert HINT in capsys.readouterr().err
    assert not list((tmp_path / "r").glob("*.png"))
    assert HINT in html.unescape((tmp_path / "r" / "report.html").read_text())
    assert (tmp_path / "r" / "sweep.csv").exists()
