"""Starting from the live cluster: ``kueue-fast snapshot``
and ``--kubeconfig`` on schedule, simulate and compare read Kueue's objects,
Workloads and queued Jobs, read-only, and answer with changes applied. On the
in-process API server and, with KUEUE_FAST_TEST_KUBECONFIG, a real cluster."""

from __future__ import annotations

import copy
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_apiserver import FakeAPIServer
from kf_harness import (
    JOBS,
    WORKLOADS,
    Harness,
    cluster_queue,
    flavor,
    job,
    local_queue,
    priority_class,
)

from kueue_fast.commands import manifests
from kueue_fast.commands.cli import main
from kueue_fast.kube.snapshot import CONFIG_MAPS, QUEUE_LABEL, USER_AGENT
from kueue_fast.loader import build_state

JSON = dict[str, Any]
KUEUE_CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
controller:
  groupKindConcurrency:
    Job.batch: 5
    Workload.kueue.x-k8s.io: 10
clientConnection:
  qps: 300
  burst: 500
integrations:
  frameworks:
  - "batch/job"
  - "kubeflow.org/mpijob"
  - "pod"
  - "deployment"
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
"""


def admitted_workload(ns: str, name: str, lq: str, cq: str, rf: str, cpu: str) -> tuple[JSON, JSON]:
    """A Workload and the status that admits it (written through /status)."""
    wl = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "queueName": lq,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
                            ],
                        }
                    },
                }
            ],
        },
    }
    t = "2026-01-01T00:00:00Z"
    status = {
        "admission": {
            "clusterQueue": cq,
            "podSetAssignments": [
                {"name": "main", "count": 1, "flavors": {"cpu": rf}, "resourceUsage": {"cpu": cpu}}
            ],
        },
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "x",
                "lastTransitionTime": t,
            },
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "x",
                "lastTransitionTime": t,
            },
        ],
    }
    return wl, status


def setup(h: Harness, cpu: str = "4") -> dict[str, str]:
    ns = h.namespace("snap-a")
    rf, cq, wpc = h.name("snap-rf"), h.name("snap-cq"), h.name("snap-high")
    h.create(flavor(rf))
    h.create(cluster_queue(cq, {rf: {"cpu": cpu}}, preemption={"withinClusterQueue": "LowerPriority"}))
    h.create(local_queue(ns, "lq", cq))
    h.create(priority_class(wpc, 1000))
    wl, status = admitted_workload(ns, "running", "lq", cq, rf, "2")
    h.create(wl)
    h.patch(WORKLOADS, "running", {"status": status}, ns, sub="status")
    h.create(job(ns, "queued-1", "lq", cpu="2"))
    h.create(job(ns, "queued-2", "lq", cpu="2"))
    h.create(job(ns, "not-kueues", None, cpu="1"))
    return {"ns": ns, "rf": rf, "cq": cq, "wpc": wpc}


def mine(docs: list[JSON], names: dict[str, str]) -> dict[str, JSON]:
    """Our objects among what a (possibly shared) cluster holds, by Kind/name."""
    out = {}
    for d in docs:
        md = d.get("metadata") or {}
        if md.get("namespace") == names["ns"] or md.get("name") in names.values():
            out[f"{d['kind']}/{md.get('name')}"] = d
    return out


def test_snapshot_reads_what_kueue_decides_from_read_only(cluster: Harness, tmp_path: Path, capsys) -> None:
    h = cluster
    names = setup(h)
    out = tmp_path / "cluster.yaml"
    assert main(["snapshot", "--kubeconfig", h.kubeconfig, "--output-file", str(out)]) == 0
    err = capsys.readouterr().err
    assert "ClusterQueue" in err and f"wrote {out}" in err
    text = out.read_text()
    assert text.startswith("# kueue-fast snapshot of ")
    docs = list(yaml.safe_load_all(text))
    got = mine(docs, names)
    assert {
        f"ResourceFlavor/{names['rf']}",
        f"ClusterQueue/{names['cq']}",
        "LocalQueue/lq",
        f"WorkloadPriorityClass/{names['wpc']}",
        "Workload/running",
        "Job/queued-1",
        "Job/queued-2",
        f"Namespace/{names['ns']}",
    } <= set(got)
    assert "Job/not-kueues" not in got  # Jobs that name no LocalQueue are not Kueue's
    assert all("managedFields" not in d["metadata"] and "resourceVersion" not in d["metadata"] for d in docs)
    assert "status" not in got[f"ClusterQueue/{names['cq']}"]  # Kueue writes it, never reads it
    assert got["Workload/running"]["status"]["admission"]["clusterQueue"] == names["cq"]
    assert got["Job/queued-1"]["metadata"]["uid"]  # the Workload's name derives from it
    if h.fake is not None:
        state = build_state(docs)  # the snapshot is plain manifests the loader reads
        assert state.workloads[f"{names['ns']}/running"].admission is not None
        assert len(state.workloads) == 3  # the admitted Workload and one per queued Job
        verbs = {v for (agent, v, _, _), n in h.fake.request_counts.items() if agent == USER_AGENT and n}
        assert verbs <= {"get", "list"}, verbs


def test_schedule_on_the_live_cluster_with_and_without_a_change(fake_cluster: Harness, capsys) -> None:
    h = fake_cluster
    names = setup(h, cpu="4")
    assert main(["schedule", "--kubeconfig", h.kubeconfig, "--until-stable", "-o", "json"]) == 0
    now = json.loads(capsys.readouterr().out)["workloads"]
    # 2 of 4 CPUs held by the running Workload: one queued Job (2 CPUs) fits, the other waits
    assert sorted(w["state"] for w in now) == ["admitted", "admitted", "pending"]
    assert sum(1 for w in now if w.get("owner", "").startswith("Job/queued-")) == 2
    cpu = f"spec.resourceGroups[0].flavors[{names['rf']}].resources[cpu]"
    quota = f"clusterqueue/{names['cq']}.{cpu}.nominalQuota"
    assert (
        main(
            ["schedule", "--kubeconfig", h.kubeconfig, "--set", f"{quota}=6", "--until-stable", "-o", "json"]
        )
        == 0
    )
    after = json.loads(capsys.readouterr().out)["workloads"]
    assert [w["state"] for w in after] == ["admitted", "admitted", "admitted"]
    # the cluster is untouched: the snapshot's client only read
    assert h.fake is not None
    writes = [
        k for k, n in h.fake.request_counts.items() if k[0] == USER_AGENT and k[1] not in ("get", "list")
    ]
    assert not writes and all(
        j["spec"]["suspend"]
        for j in h.kube.list(JOBS, namespace=names["ns"], label_selector=QUEUE_LABEL)["items"]
    )


def test_simulate_and_compare_start_from_the_live_cluster(
    fake_cluster: Harness, tmp_path: Path, capsys
) -> None:
    h = fake_cluster
    names = setup(h, cpu="4")
    small = ["-n", "100", "--days", "1", "--no-progress", "--no-report"]
    assert main(["simulate", "--kubeconfig", h.kubeconfig, *small, "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["totals"]["workloads"] == 103  # the trace's and the cluster's three
    setting = f"cq/{names['cq']}.spec.resourceGroups[0].flavors[{names['rf']}].resources[cpu].nominalQuota=8"
    assert main(["compare", "--kubeconfig", h.kubeconfig, "--set", setting, *small, "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "What differs from live:" in out
    assert (
        f"ClusterQueue/{names['cq']} spec.resourceGroups[0].flavors[{names['rf']}].resources[cpu]"
        ".nominalQuota: 4 -> 8" in out
    )


def test_kueues_configuration_comes_from_its_config_map(
    fake_cluster: Harness, tmp_path: Path, capsys
) -> None:
    h = fake_cluster
    setup(h)
    out = tmp_path / "c.yaml"
    assert main(["snapshot", "--kubeconfig", h.kubeconfig, "--output-file", str(out)]) == 0
    assert (
        "note: Kueue's Configuration not read (ConfigMap kueue-system/kueue-manager-config: not found)"
        in (capsys.readouterr().err)
    )
    h.kube.create(
        CONFIG_MAPS,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
            "data": {"controller_manager_config.yaml": KUEUE_CONFIG},
        },
        "kueue-system",
    )
    assert main(["snapshot", "--kubeconfig", h.kubeconfig, "-o", "json", "--output-file", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["kind"] == "List"
    config = [d for d in doc["items"] if d["kind"] == "Configuration"]
    assert config and config[0]["fairSharing"]["preemptionStrategies"][0] == "LessThanOrEqualToFinalShare"
    state = build_state(doc["items"])
    assert state.configuration.fair_sharing is not None


def test_the_live_config_map_is_read_as_files_are(fake_cluster: Harness, capsys) -> None:
    # one reader for Kueue's ConfigMap (loader.configuration.config_map_document): the same
    # error for a broken one in the cluster as in a file
    h = fake_cluster
    setup(h)
    h.kube.create(
        CONFIG_MAPS,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
            "data": {"controller_manager_config.yaml": "kind: [\n"},
        },
        "kueue-system",
    )
    assert main(["snapshot", "--kubeconfig", h.kubeconfig]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    where = "ConfigMap/kueue-system/kueue-manager-config data[controller_manager_config.yaml]"
    assert err[0].startswith(f"error: {where}: invalid YAML:")


def test_finished_workloads_and_jobs_are_left_out_with_a_note(
    fake_cluster: Harness, tmp_path: Path, capsys
) -> None:
    h = fake_cluster
    names = setup(h)
    h.fake.finish_job(names["ns"], "queued-2")
    out = tmp_path / "c.yaml"
    assert main(["snapshot", "--kubeconfig", h.kubeconfig, "--output-file", str(out)]) == 0
    assert "note: 1 finished Jobs left out (they hold no quota)" in capsys.readouterr().err
    assert "Job/queued-2" not in mine(list(yaml.safe_load_all(out.read_text())), names)


def test_an_older_kueue_serving_only_v1beta1_is_read_in_v1beta1(tmp_path: Path, capsys) -> None:
    crds = copy.deepcopy(manifests.crds())
    for c in crds:
        for v in c["spec"]["versions"]:
            v["name"] = "v1beta1"
    with FakeAPIServer(crds=crds) as api:
        kc = api.write_kubeconfig(str(tmp_path / "kc"))
        h = Harness(kc, api, tmp_path)
        try:
            rf = flavor("default")
            rf["apiVersion"] = "kueue.x-k8s.io/v1beta1"
            h.kube.create(_res("resourceflavors", "ResourceFlavor"), rf)
            out = tmp_path / "c.yaml"
            assert main(["snapshot", "--kubeconfig", kc, "--output-file", str(out)]) == 0
        finally:
            h.close()
    docs = [d for d in yaml.safe_load_all(out.read_text()) if d["kind"] == "ResourceFlavor"]
    assert [d["apiVersion"] for d in docs] == ["kueue.x-k8s.io/v1beta1"]
    build_state(docs)


def _res(plural: str, kind: str):
    from kueue_fast.kube.client import Resource

    return Resource("kueue.x-k8s.io", "v1beta1", plural, kind, False)


def test_a_cluster_without_kueue_is_one_line(tmp_path: Path, capsys) -> None:
    with FakeAPIServer(crds=[]) as api:
        kc = api.write_kubeconfig(str(tmp_path / "kc"))
        assert main(["snapshot", "--kubeconfig", kc]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: the cluster serves no Kueue API (clusterqueues.kueue.x-k8s.io not found): is Kueue installed?"
    ]


def test_a_missing_kubeconfig_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["schedule", "--kubeconfig", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: kubeconfig {tmp_path / 'nope'}: no such file"
    ]


def test_without_the_controller_extra_is_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # as if not installed
    assert main(["simulate", "--kubeconfig", str(tmp_path / "kc")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --kubeconfig: reading a cluster needs the controller extra: "
        "pip install 'kueue-fast[controller]'"
    ]


def test_objects_stored_in_v1beta1_are_written_as_v1beta1(
    fake_cluster: Harness, tmp_path: Path, capsys
) -> None:
    # a ClusterQueue of an earlier Kueue: stored as v1beta1 (spec.cohort), served unconverted as v1beta2
    h = fake_cluster
    assert h.fake is not None
    h.create(flavor("rf"))
    old = cluster_queue("old-cq", {"rf": {"cpu": "4"}})
    old["spec"]["cohort"] = "co"
    h.fake.put_stored(old)
    out = tmp_path / "c.yaml"
    assert main(["snapshot", "--kubeconfig", h.kubeconfig, "--output-file", str(out)]) == 0
    assert "1 ClusterQueues stored as kueue.x-k8s.io/v1beta1 and served unconverted (old-cq)" in (
        capsys.readouterr().err
    )
    docs = list(yaml.safe_load_all(out.read_text()))
    cq = next(d for d in docs if d["kind"] == "ClusterQueue")
    assert cq["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert build_state(docs).cluster_queues["old-cq"].cohort == "co"  # the loader reads it as what it is


def test_the_summary_spells_the_plural_of_every_kind() -> None:
    from kueue_fast.kube.snapshot import Snapshot

    snap = Snapshot([], "https://k", "2026-01-01T00:00:00Z")
    snap.counts = {"WorkloadPriorityClass": 2, "PriorityClass": 3, "ClusterQueue": 2, "Workload": 1}
    assert snap.summary() == (
        "read 2 WorkloadPriorityClasses, 3 PriorityClasses, 2 ClusterQueues, 1 Workload"
        " from https://k at 2026-01-01T00:00:00Z"
    )


def _refusing_kubeconfig(tmp_path: Path) -> tuple[str, str]:
    """A kubeconfig naming a local port nothing listens on, and its server."""
    with socket.socket() as s:  # a port that was free a moment ago: connections to it are refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = f"https://127.0.0.1:{port}"
    kc = tmp_path / "kubeconfig"
    kc.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
                "users": [{"name": "u", "user": {"token": "t"}}],
            }
        )
    )
    return str(kc), server


@pytest.mark.parametrize("command", [["status"], ["snapshot"], ["schedule"]])
def test_an_api_server_that_does_not_answer_is_one_line_naming_it_and_the_cause(
    command: list[str], tmp_path: Path, capsys
) -> None:
    kc, server = _refusing_kubeconfig(tmp_path)
    assert main([*command, "--kubeconfig", kc]) in (1, 2)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"error: cannot reach the API server {server}: Connection refused"), err[0]
    assert "NewConnectionError" not in err[0] and "HTTPSConnection(" not in err[0], err[0]
