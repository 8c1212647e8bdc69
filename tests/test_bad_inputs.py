"""A gallery of bad inputs run through the real command.

Each file in ``tests/bad_inputs/`` must make ``kueue-fast schedule FILE`` exit
with status 2 and a single line on standard error that names the object
(``Kind/name``) and the field path, without a traceback. Expectations are in
``tests/bad_inputs/EXPECTED.json``: ``object`` (empty when the file cannot be
split into objects at all: then the file name is named instead) and ``field``
(the field path, or for such files the words that say what is wrong).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GALLERY = Path(__file__).parent / "bad_inputs"
EXPECTED: dict[str, dict[str, str]] = json.loads((GALLERY / "EXPECTED.json").read_text())
KUEUE_FAST = str(Path(sys.executable).parent / "kueue-fast")


def test_gallery_is_complete() -> None:
    files = {p.name for p in GALLERY.iterdir() if p.name != "EXPECTED.json"}
    assert files == set(EXPECTED)
    assert len(files) >= 50


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_is_rejected_with_one_line(name: str) -> None:
    want = EXPECTED[name]
    path = GALLERY / name
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUEUE_FAST_")}
    argv = [KUEUE_FAST, "schedule", str(path)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    err = p.stderr
    assert p.returncode == 2, f"exit {p.returncode}, stderr: {err!r}"
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    assert err.startswith("error: ")
    assert name in err  # the source file is named
    if want["object"]:
        assert want["object"] in err
    assert want["field"] in err
    assert p.stdout == ""
