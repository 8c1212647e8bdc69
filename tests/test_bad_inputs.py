"""A gallery of bad inputs run through the real command.

Each file in ``tests/bad_inputs/`` must make ``kueue-fast schedule FILE`` exit
with status 2 and one line per error on standard error, each naming the file,
the object (``Kind/name``) and the field path, without a traceback.
Expectations are in ``tests/bad_inputs/EXPECTED.json``: ``object`` (empty when
the file cannot be split into objects at all: then the file name is named
instead) and ``field`` (the field path, or for such files the words that say
what is wrong) of the first line, and ``lines`` when there is more than one.
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
def test_bad_input_is_rejected_with_one_line_per_error(name: str) -> None:
    want = EXPECTED[name]
    path = GALLERY / name
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUEUE_FAST_")}
    argv = [KUEUE_FAST, "schedule", str(path)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    err = p.stderr
    assert p.returncode == 2, f"exit {p.returncode}, stderr: {err!r}"
    assert "Traceback" not in err
    lines = err.splitlines()
    assert err.endswith("\n") and len(lines) == want.get("lines", 1), f"lines: {err!r}"
    for line in lines:
        assert line.startswith("error: ")
        assert name in line  # the source file is named
        if want["object"]:
            assert want["object"] in line
    assert want["field"] in lines[0]
    assert p.stdout == ""


def test_every_error_of_every_invalid_object_is_reported_on_its_own_line() -> None:
    path = Path(__file__).parent / "data" / "several-mistakes.yaml"
    p = subprocess.run([KUEUE_FAST, "schedule", str(path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert all(line.startswith(f"error: {path} (document ") for line in lines)  # no warnings on failure
    assert [line.split("): ", 1)[1].split(":")[0] for line in lines] == [
        "ClusterQueue/team-a spec.cohort",
        "ClusterQueue/team-b spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",  # no cohort
        "ClusterQueue/team-b spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",  # above nominal
        "Job/team-a/train spec.template.spec.containers[0].resources.requests[cpu]",
        "Workload/team-a/w spec.podSets",
    ]
    assert 'kueue.x-k8s.io/v1beta2 calls it "cohortName"' in lines[0]


def test_warnings_go_to_standard_error_on_success(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n"
    )
    p = subprocess.run([KUEUE_FAST, "schedule", str(path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    skipped = "ConfigMap/c: Kueue does not read ConfigMap (v1); skipped"
    assert p.stderr == f"warning: {path} (document 1): {skipped}\n"
