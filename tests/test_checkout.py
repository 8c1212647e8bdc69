"""A checkout as a newcomer uses it: the README's commands leave nothing
untracked behind them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kueue_fast.simulate.defaults import COMPARE_REPORT_DIR, DEFAULT_REPORT_DIR, SWEEP_REPORT_DIR

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("folder", [DEFAULT_REPORT_DIR, COMPARE_REPORT_DIR, SWEEP_REPORT_DIR])
@pytest.mark.parametrize("where", ["", "examples/ml-platform/"])
def test_the_default_report_folders_are_ignored_by_git(folder: str, where: str) -> None:
    # simulate, compare and sweep write their report into the working directory by default
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    path = f"{where}{folder}/report.html"
    done = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT, check=False)
    assert done.returncode == 0, f"{path} is not ignored: .gitignore should list {folder}/"


def _extras(name: str, optional: dict[str, list[str]]) -> set[str]:
    """The requirements of an extra, with the project's own extras it names expanded."""
    out: set[str] = set()
    for req in optional[name]:
        if req.startswith("kueue-fast["):
            for inner in req[len("kueue-fast[") : req.index("]")].split(","):
                out |= _extras(inner.strip(), optional)
        else:
            out.add(req)
    return out


def test_the_readmes_one_install_line_serves_the_main_job_and_the_tests() -> None:
    # the first block of the README: one build (a second `pip install` compiles the engine again)
    tomllib = pytest.importorskip("tomllib")
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```")[1]
    installs = [line for line in first_block.splitlines() if "pip install" in line]
    assert len(installs) == 1, installs
    spec = installs[0].split("pip install", 1)[1].split()[0].strip("'\"")
    assert spec.startswith(".[") and spec.endswith("]"), spec
    given: set[str] = set()
    for extra in spec[2:-1].split(","):
        given |= _extras(extra, optional)
    assert _extras("test", optional) | _extras("report", optional) <= given
    assert "pytest" in first_block and "kueue-fast " in first_block
