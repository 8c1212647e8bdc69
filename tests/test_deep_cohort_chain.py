"""A Cohort chain 1,000 deep (Kueue has no depth limit; the API server takes
it): both engines decide it, alike, and the outputs that draw the tree
(``-o usage``, ``--explain``) print it. Kueue recurses over the tree; the
reference engine and the output loop (kueue_fast/engine/reference/quota.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KUEUE_FAST = str(Path(sys.executable).parent / "kueue-fast")
ENGINES = ["native", "reference"]


def run(args: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUEUE_FAST_")}
    p = subprocess.run([KUEUE_FAST, *args], capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def cohort_chain(depth: int, fair_sharing: bool) -> str:
    """ClusterQueues at the bottom, the middle and the top of a Cohort chain;
    the bottom one borrows the top one's quota across every level, the top
    one reclaims it (preemption through the whole tree)."""
    out = []
    if fair_sharing:
        out.append(
            "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing: {enable: true}\n"
        )
    out.append("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f}\n")
    for i in range(depth):
        parent = f"\n  parentName: c{i + 1}" if i < depth - 1 else " {}"
        out.append(
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {{name: c{i}}}\nspec:{parent}\n"
        )
    for name, cohort, quota in (("bottom", 0, 1), ("middle", depth // 2, 2), ("top", depth - 1, 8)):
        out.append(
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n"
            f"  cohort: c{cohort}\n  namespaceSelector: {{}}\n"
            "  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}\n"
            "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
            f"      resources:\n      - {{name: cpu, nominalQuota: {quota}}}\n"
        )
        out.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            f"metadata: {{name: q, namespace: {name}}}\nspec: {{clusterQueue: {name}}}\n"
        )

    def wl(ns: str, name: str, cpu: int, t: int, admitted: bool = False) -> str:
        text = (
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {{name: {name}, namespace: {ns}, "
            f"creationTimestamp: '2026-01-01T00:00:{t:02d}Z'}}\nspec:\n  queueName: q\n  podSets:\n"
            f"  - name: main\n    count: 1\n    template:\n      spec:\n        containers:\n"
            f"        - {{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}\n"
        )
        if admitted:
            text += (
                f"status:\n  admission:\n    clusterQueue: {ns}\n    podSetAssignments:\n    - name: main\n"
                f"      flavors: {{cpu: f}}\n      resourceUsage: {{cpu: '{cpu}'}}\n      count: 1\n"
                "  conditions:\n  - {type: QuotaReserved, status: 'True', reason: QuotaReserved, message: m,"
                " lastTransitionTime: '2026-01-01T00:00:00Z'}\n"
                "  - {type: Admitted, status: 'True', reason: Admitted, message: m,"
                " lastTransitionTime: '2026-01-01T00:00:00Z'}\n"
            )
        return text

    out += [wl("bottom", "borrower", 8, 1, admitted=True), wl("top", "reclaimer", 6, 4)]
    if not fair_sharing:  # fair sharing's target search is depth x depth: the two alone
        out += [wl("bottom", "b2", 2, 2), wl("middle", "m1", 3, 3), wl("top", "t2", 1, 5)]
    return "---\n".join(out)


@pytest.mark.parametrize("fair_sharing", [False, True], ids=["classical", "fair-sharing"])
def test_a_cohort_chain_1000_deep_decides_the_same_on_both_engines(
    tmp_path: Path, fair_sharing: bool
) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(cohort_chain(1000, fair_sharing))
    out = {e: run(["schedule", str(path), "--engine", e, "--until-stable", "-o", "json"]) for e in ENGINES}
    assert out["native"] == out["reference"]
    states = {f"{w['namespace']}/{w['name']}": w["state"] for w in json.loads(out["native"])["workloads"]}
    assert states["top/reclaimer"] == "admitted" and states["bottom/borrower"] == "pending"  # reclaimed


def test_the_quota_tree_of_a_cohort_chain_1000_deep_is_printed(tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(cohort_chain(1000, False))
    out = {e: run(["schedule", str(path), "--engine", e, "--explain", "-o", "usage"]) for e in ENGINES}
    assert out["native"] == out["reference"]
    tree = [line for line in out["native"].splitlines() if "cohort c" in line]
    assert len(tree) == 1000 and tree[-1].startswith("  " * 999 + "cohort c0 ")  # 999 levels below c999
