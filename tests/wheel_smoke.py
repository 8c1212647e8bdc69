"""Smoke test of an installed kueue-fast (a wheel), run outside the source tree
by .ci/run and by cibuildwheel's test-command:

    python tests/wheel_smoke.py [SCENARIO]

1. `kueue-fast schedule` (the installed console script) on a public scenario
   of tests/scenarios, compared with the scenario's expectation;
2. the embedding API (`Cluster.from_files`, native engine) run as
   `python -c` on the same input split into queues.yaml and workloads.yaml,
   compared with the same expectation;
3. the README's embedding example (the Python block under "## Embedding"),
   run in a copy of examples/ml-platform, its output compared with the
   README's text block after it.

Only the standard library and PyYAML (a dependency of the package); not a
pytest module, since the wheel's environment has no test dependencies.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
# Kueue's own decisions (kubernetes-sigs/kueue ff69552e) on 900 contended workloads
SCENARIO = ROOT / "tests" / "scenarios" / "kueue-gen-01-contended.yaml"
# key -> (state, ClusterQueue, pod set -> flavors, and count when given)
Decisions = dict[str, tuple[str, str | None, dict[str, dict[str, Any]]]]


def expected(header: dict[str, Any]) -> Decisions:
    """key -> (state, ClusterQueue, pod set -> flavors and count) from the header's expect."""
    want: Decisions = {}
    for state in ("admitted", "reserved"):
        for key, exp in (header["expect"].get(state) or {}).items():
            want[key] = (state, exp["clusterQueue"], exp["podSets"])
    for state in ("evicted", "pending"):
        for key in header["expect"].get(state) or []:
            want[key] = (state, None, {})
    return want


def compare(want: Decisions, got: Decisions) -> list[str]:
    """Differences between the expectation and what a run gave."""
    diffs = [f"{k}: missing" for k in sorted(set(want) - set(got))]
    for key, (state, cq, pod_sets) in sorted(want.items()):
        if key not in got:
            continue
        g_state, g_cq, g_pod_sets = got[key]
        if g_state != state:
            diffs.append(f"{key}: want {state}, got {g_state}")
        elif cq is not None and g_cq != cq:
            diffs.append(f"{key}: ClusterQueue want {cq}, got {g_cq}")
        for ps, exp in pod_sets.items():
            flavors = {r: f for r, f in exp.items() if r != "count"}
            g = g_pod_sets.get(ps)
            if g is None or g["flavors"] != flavors or ("count" in exp and g["count"] != exp["count"]):
                diffs.append(f"{key}/{ps}: want {exp}, got {g}")
    return diffs


# Kueue's decisions through the embedding API, one line per workload
EMBEDDING = """\
from kueue_fast import Cluster

cluster = Cluster.from_files(["queues.yaml", "workloads.yaml"], engine="native")
cluster.run_until_stable()
for d in cluster.decisions():
    pod_sets = [(p.name, p.count, p.flavors) for p in d.pod_sets]
    print(d.key, d.state, d.cluster_queue, pod_sets)
"""


def readme_embedding() -> tuple[str, str]:
    """The README's embedding example: its Python block under "## Embedding"
    and the text block after it (what the example prints)."""
    section = (ROOT / "README.md").read_text().split("\n## Embedding\n", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    printed = section.split("```text\n", 1)[1].split("```", 1)[0]
    return code, printed


def main(argv: list[str]) -> int:
    import kueue_fast

    # the compiled engine and every Cython module are in the wheel, from this build
    from kueue_fast import _compiled, _core  # noqa: F401
    from kueue_fast.loader import _yaml_block

    for name in _compiled.CYTHON:
        problem = _compiled.check(name)
        if problem is not None:
            print(f"FAIL: {problem}")
            return 1
    if _yaml_block.load_all("a: 1\n---\n- x\n") != [{"a": 1}, ["x"]]:
        print("FAIL: kueue_fast.loader._yaml_block does not read a two-document stream")
        return 1

    where = Path(kueue_fast.__file__).resolve()
    if ROOT in where.parents:
        print(f"FAIL: kueue_fast imported from the source tree ({where}), not the installed wheel")
        return 1
    scenario = Path(argv[0]) if argv else SCENARIO
    docs = [d for d in yaml.safe_load_all(scenario.read_text()) if d is not None]
    header, objects = docs[0], docs[1:]
    want = expected(header)
    cli = shutil.which("kueue-fast")
    if cli is None:
        print("FAIL: no kueue-fast console script on PATH")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "input.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
        (d / "queues.yaml").write_text(yaml.safe_dump_all([o for o in objects if o["kind"] != "Workload"]))
        (d / "workloads.yaml").write_text(yaml.safe_dump_all([o for o in objects if o["kind"] == "Workload"]))
        run = header["run"]
        steps = ["--until-stable"] if run.get("untilStable") else ["--cycles", str(run["cycles"])]
        proc = subprocess.run(
            [cli, "schedule", "input.yaml", *steps, "-o", "json"], cwd=d, capture_output=True, text=True
        )
        if proc.returncode != 0:
            print(f"FAIL: kueue-fast schedule exited {proc.returncode}: {proc.stderr.strip()}")
            return 1
        got: Decisions = {}
        for w in json.loads(proc.stdout)["workloads"]:
            pod_sets = {ps["name"]: ps for ps in w.get("podSets") or []}
            got[f"{w['namespace']}/{w['name']}"] = (w["state"], w.get("clusterQueue"), pod_sets)
        diffs = compare(want, got)
        failures += bool(diffs)
        print(
            f"{'FAIL' if diffs else 'ok'}: kueue-fast schedule {scenario.name}: {len(got)} workloads",
            *diffs[:20],
        )

        proc = subprocess.run([sys.executable, "-c", EMBEDDING], cwd=d, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"FAIL: the embedding API exited {proc.returncode}: {proc.stderr.strip()}")
            return 1
        got = {}
        for line in proc.stdout.splitlines():
            key, state, cq, rest = line.split(" ", 3)
            pod_sets = {name: {"count": count, "flavors": fl} for name, count, fl in ast.literal_eval(rest)}
            got[key] = (state, None if cq == "None" else cq, pod_sets)
        diffs = compare(want, got)
        failures += bool(diffs)
        print(f"{'FAIL' if diffs else 'ok'}: the embedding API: {len(got)} decisions", *diffs[:20])

        code, printed = readme_embedding()
        example = d / "ml-platform"
        shutil.copytree(ROOT / "examples" / "ml-platform", example)
        proc = subprocess.run([sys.executable, "-c", code], cwd=example, capture_output=True, text=True)
        same = proc.returncode == 0 and proc.stdout == printed
        failures += not same
        print(f"{'ok' if same else 'FAIL'}: the README's embedding example")
        if not same:
            print(f"exit {proc.returncode}; printed:\n{proc.stdout}{proc.stderr}want:\n{printed}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
