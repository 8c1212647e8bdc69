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
