"""Every scenario in tests/scenarios through the real `kueue-fast schedule`, with both engines.

A scenario is a YAML file whose first document is a header (name, run, expect)
and whose other documents are the input (see the scheduling contract in the
README). The kueue-gen-* scenarios carry the decisions of Kueue's own
scheduler on those inputs; ours (reason-*) also pin the pending reason and
message (``expect.reasons``), which the public ones leave out. ``expect.reserved``
(admission checks, check-*) has the shape of ``admitted`` and may give each
workload's ``admissionChecks`` (name -> state). A pod set of ``admitted`` may
give its ``topologyAssignment`` as the JSON prints it (tas-*).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SCENARIOS = Path(__file__).parent / "scenarios"
CASES = sorted(SCENARIOS.glob("*.yaml"))
ENGINES = ["native", "reference"]


def _load(path: Path) -> tuple[dict, list[dict]]:
    docs = [d for d in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader) if d is not None]
    return docs[0], docs[1:]


def _run(path: Path, header: dict, engine: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    _, objects = _load(path)
    raw = path.with_suffix(".raw")
    if raw.exists():
        input_file = raw
    else:
        input_file = tmp_path / "input.yaml"
        input_file.write_text(yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=False))
    run = header["run"]
    argv = [
        sys.executable,
        "-m",
        "kueue_fast",
        "schedule",
        str(input_file),
        "--engine",
        engine,
        "--output",
        "json",
    ]
    argv += ["--until-stable"] if run.get("untilStable") else ["--cycles", str(run["cycles"])]
    # cwd: run from a scratch folder so that `-m kueue_fast` imports the
    # installed package (with its compiled modules), never the source tree.
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)


def _differences(header: dict, objects: list[dict], out: dict) -> list[str]:
    expect = header["expect"]
    want: dict[str, str] = {}
    for k in expect.get("admitted") or {}:
        want[k] = "admitted"
    for k in expect.get("reserved") or {}:
        want[k] = "reserved"
    for k in expect.get("evicted") or []:
        want[k] = "evicted"
    for k in expect.get("pending") or []:
        want[k] = "pending"
    got = {f"{w['namespace']}/{w['name']}": w for w in out["workloads"]}
    inputs = {
        f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
        for o in objects
        if o.get("kind") == "Workload"
    }
    diffs = []
    if not inputs <= set(got):  # (jobs add the Workloads Kueue makes for them)
        diffs.append(f"output workloads differ from input: missing {sorted(inputs - set(got))[:5]}")
    for key, state in sorted(want.items()):
        w = got.get(key)
        if w is None:
            continue
        if w["state"] != state:
            diffs.append(f"{key}: want {state}, got {w['state']} ({w.get('message', '')[:120]})")
            continue
        if state not in ("admitted", "reserved"):
            continue
        exp = expect[state][key]
        if "admissionChecks" in exp:
            checks = {c["name"]: c["state"] for c in w.get("admissionChecks", [])}
            if checks != exp["admissionChecks"]:
                diffs.append(f"{key}: admissionChecks want {exp['admissionChecks']}, got {checks}")
        if w["clusterQueue"] != exp["clusterQueue"]:
            diffs.append(f"{key}: clusterQueue want {exp['clusterQueue']}, got {w['clusterQueue']}")
        got_ps = {ps["name"]: ps for ps in w["podSets"]}
        for ps_name, flavors in exp["podSets"].items():
            g = got_ps.get(ps_name)
            if g is None:
                diffs.append(f"{key}: pod set {ps_name} missing")
                continue
            want_flavors = {r: f for r, f in flavors.items() if r not in ("count", "topologyAssignment")}
            if g["flavors"] != want_flavors:
                diffs.append(f"{key}/{ps_name}: flavors want {want_flavors}, got {g['flavors']}")
            if "count" in flavors and g["count"] != flavors["count"]:
                diffs.append(f"{key}/{ps_name}: count want {flavors['count']}, got {g['count']}")
            if (
                "topologyAssignment" in flavors
                and g.get("topologyAssignment") != flavors["topologyAssignment"]
            ):
                diffs.append(
                    f"{key}/{ps_name}: topologyAssignment want {flavors['topologyAssignment']}, "
                    f"got {g.get('topologyAssignment')}"
                )
    # Our own scenarios also pin what Kueue writes on pending workloads.
    for key, fields in sorted((expect.get("reasons") or {}).items()):
        w = got.get(key, {})
        for field, value in fields.items():
            if w.get(field) != value:
                diffs.append(f"{key}: {field} want {value!r}, got {w.get(field)!r}")
    return diffs


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_scenario(path: Path, engine: str, tmp_path: Path) -> None:
    header, objects = _load(path)
    proc = _run(path, header, engine, tmp_path)
    expect = header["expect"]
    if "error" in expect:
        assert proc.returncode == 2, proc.stderr
        assert expect["error"] in proc.stderr
        assert "Traceback" not in proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    diffs = _differences(header, objects, json.loads(proc.stdout))
    assert not diffs, f"{len(diffs)} difference(s):\n" + "\n".join(diffs[:40])
