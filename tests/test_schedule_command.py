"""The `kueue-fast schedule` command against the scheduling contract.

Runs the command in process (kueue_fast.commands.cli.main) on small inputs and checks
what the contract promises beyond the scenario files: stop policies, missing
references that are not errors, the output formats, standard input, kubectl
lists and the --until-stable limit.
"""

from __future__ import annotations

import io
import json
import textwrap

import pytest
import yaml

from kueue_fast.commands.cli import main

FLAVOR_AND_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  stopPolicy: %(stop)s
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: cq, stopPolicy: %(lq_stop)s}
"""


def workload(name: str, cpu: str, admitted: bool = False, queue: str = "lq", ts: int = 1) -> str:
    doc = f"""
    apiVersion: kueue.x-k8s.io/v1beta1
    kind: Workload
    metadata: {{name: {name}, namespace: ns, creationTimestamp: "2026-01-01T00:00:0{ts}Z"}}
    spec:
      queueName: {queue}
      podSets:
      - name: main
        count: 1
        template:
          spec:
            containers:
            - name: c
              resources: {{requests: {{cpu: "{cpu}"}}}}
    """
    if admitted:
        doc += f"""
    status:
      admission:
        clusterQueue: cq
        podSetAssignments:
        - name: main
          count: 1
          flavors: {{cpu: default}}
          resourceUsage: {{cpu: "{cpu}"}}
      conditions:
      - {{type: QuotaReserved, status: "True", reason: QuotaReserved, message: reserved,
         lastTransitionTime: "2026-01-01T00:00:05Z"}}
    """
    return textwrap.dedent(doc)


def manifests(*workloads: str, stop: str = "None", lq_stop: str = "None") -> str:
    return FLAVOR_AND_QUEUE % {"stop": stop, "lq_stop": lq_stop} + "---".join(["", *workloads])


def run(
    tmp_path,
    text: str,
    *args: str,
    capsys,
    monkeypatch=None,
    stdin: str | None = None,
    engine: str = "reference",
) -> tuple[int, str, str]:
    path = tmp_path / "input.yaml"
    path.write_text(text)
    files = ["-"] if stdin is not None else [str(path)]
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    rc = main(["schedule", *files, "--engine", engine, *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def states(stdout: str) -> dict[str, dict]:
    return {f"{w['namespace']}/{w['name']}": w for w in json.loads(stdout)["workloads"]}


@pytest.fixture(params=["reference", "native"])
def engine(request):
    if request.param == "native":
        pytest.importorskip("kueue_fast.engine.native", reason="native engine not built")
    return request.param


def test_hold_and_drain_cluster_queue_evicts_admitted_workloads_in_the_first_cycle(tmp_path, capsys, engine):
    text = manifests(
        workload("running", "2", admitted=True), workload("waiting", "1", ts=2), stop="HoldAndDrain"
    )
    rc, out, _ = run(tmp_path, text, "--cycles", "1", capsys=capsys, engine=engine)
    assert rc == 0
    got = states(out)
    assert got["ns/running"]["state"] == "evicted"
    assert got["ns/running"]["reason"] == "ClusterQueueStopped"
    assert got["ns/waiting"]["state"] == "pending"
    assert "cq" in got["ns/waiting"]["message"]


def test_hold_and_drain_evicted_workloads_are_pending_after_until_stable(tmp_path, capsys, engine):
    text = manifests(workload("running", "2", admitted=True), stop="HoldAndDrain")
    rc, out, _ = run(tmp_path, text, "--until-stable", capsys=capsys, engine=engine)
    assert rc == 0
    assert states(out)["ns/running"]["state"] == "pending"


def test_hold_keeps_admitted_workloads_running_and_admits_nothing(tmp_path, capsys, engine):
    text = manifests(workload("running", "2", admitted=True), workload("waiting", "1", ts=2), stop="Hold")
    rc, out, _ = run(tmp_path, text, "--until-stable", capsys=capsys, engine=engine)
    got = states(out)
    assert rc == 0
    assert got["ns/running"]["state"] == "admitted"
    assert got["ns/waiting"]["state"] == "pending"


def test_hold_and_drain_local_queue_evicts_only_its_own_workloads(tmp_path, capsys, engine):
    other_lq = textwrap.dedent(
        """
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: LocalQueue
        metadata: {name: other, namespace: ns}
        spec: {clusterQueue: cq}
        """
    )
    text = manifests(
        workload("drained", "1", admitted=True),
        workload("kept", "1", admitted=True, queue="other", ts=2),
        other_lq,
        lq_stop="HoldAndDrain",
    )
    rc, out, _ = run(tmp_path, text, "--cycles", "1", capsys=capsys, engine=engine)
    got = states(out)
    assert rc == 0
    assert got["ns/drained"]["state"] == "evicted"
    assert got["ns/drained"]["reason"] == "LocalQueueStopped"
    assert got["ns/kept"]["state"] == "admitted"


def test_local_queue_naming_a_missing_cluster_queue_is_not_an_error(tmp_path, capsys, engine):
    text = manifests(workload("w", "1", queue="orphan")) + textwrap.dedent(
        """
        ---
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: LocalQueue
        metadata: {name: orphan, namespace: ns}
        spec: {clusterQueue: does-not-exist}
        """
    )
    rc, out, _ = run(tmp_path, text, "--until-stable", capsys=capsys, engine=engine)
    assert rc == 0
    w = states(out)["ns/w"]
    assert w["state"] == "pending"
    assert "does-not-exist" in w["message"]


def test_workload_without_local_queue_stays_pending_with_a_reason(tmp_path, capsys, engine):
    rc, out, _ = run(tmp_path, manifests(workload("w", "1", queue="nope")), capsys=capsys, engine=engine)
    assert rc == 0
    w = states(out)["ns/w"]
    assert w["state"] == "pending"
    assert "nope" in w["message"]


def test_pending_workload_carries_kueue_reason_and_message_with_numbers(tmp_path, capsys, engine):
    text = manifests(workload("big", "6"))
    rc, out, _ = run(tmp_path, text, capsys=capsys, engine=engine)
    w = states(out)["ns/big"]
    assert rc == 0
    assert w["state"] == "pending"
    assert w["message"] == (
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, "
        "previously considered podsets requests (0) + current podset request (6) > maximum capacity (4)"
    )


def test_stats_prints_one_json_line_on_stderr(tmp_path, capsys, engine):
    rc, _, err = run(tmp_path, manifests(workload("w", "1")), "--stats", capsys=capsys, engine=engine)
    assert rc == 0
    stats = json.loads(err.strip().splitlines()[-1])
    for key in ("engine", "load_s", "schedule_s", "cycles", "admitted", "evicted", "pending"):
        assert key in stats
    assert stats["engine"] == engine
    assert stats["admitted"] == 1
    # the split `kueue-fast bench e2e` reads: parse + build = load, then the output
    for key in ("parse_s", "build_s", "output_s"):
        assert stats[key] >= 0
    assert abs(stats["parse_s"] + stats["build_s"] - stats["load_s"]) < 1e-5


def test_yaml_output_gives_the_input_back_with_kueue_status(tmp_path, capsys, engine):
    text = manifests(workload("w", "1"), workload("big", "6", ts=2))
    # two cycles: one head per ClusterQueue per cycle, and Kueue writes nothing on a workload it never tried
    rc, out, _ = run(tmp_path, text, "--output", "yaml", "--cycles", "2", capsys=capsys, engine=engine)
    assert rc == 0
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert [d["kind"] for d in docs] == [
        "ResourceFlavor",
        "ClusterQueue",
        "LocalQueue",
        "Workload",
        "Workload",
    ]
    w, big = docs[3], docs[4]
    assert w["status"]["admission"]["clusterQueue"] == "cq"
    assert w["status"]["admission"]["podSetAssignments"][0]["flavors"] == {"cpu": "default"}
    assert {c["type"]: c["status"] for c in w["status"]["conditions"]} == {
        "QuotaReserved": "True",
        "Admitted": "True",
    }
    assert "admission" not in big["status"]
    assert {c["type"]: c["status"] for c in big["status"]["conditions"]} == {
        "QuotaReserved": "False",
        "Admitted": "False",
    }


def test_table_output_summarises(tmp_path, capsys, engine):
    rc, out, _ = run(
        tmp_path, manifests(workload("w", "1")), "--output", "table", capsys=capsys, engine=engine
    )
    assert rc == 0
    assert "ns/w" in out
    assert "1 admitted, 0 pending, 0 evicted" in out


def test_standard_input(tmp_path, capsys, monkeypatch, engine):
    rc, out, _ = run(
        tmp_path,
        "",
        capsys=capsys,
        monkeypatch=monkeypatch,
        stdin=manifests(workload("w", "1")),
        engine=engine,
    )
    assert rc == 0
    assert states(out)["ns/w"]["state"] == "admitted"


def test_kubectl_list_is_unpacked(tmp_path, capsys, engine):
    docs = [d for d in yaml.safe_load_all(manifests(workload("w", "1"))) if d]
    listing = {"apiVersion": "v1", "kind": "List", "items": docs}
    path = tmp_path / "list.json"
    path.write_text(json.dumps(listing))
    rc = main(["schedule", str(path), "--engine", engine])
    out = capsys.readouterr().out
    assert rc == 0
    assert states(out)["ns/w"]["state"] == "admitted"


def test_until_stable_stops_with_an_error_at_max_cycles(tmp_path, capsys, engine):
    # Three workloads in one queue need three cycles (one head per cycle).
    text = manifests(workload("a", "1"), workload("b", "1", ts=2), workload("c", "1", ts=3))
    rc, _, err = run(tmp_path, text, "--until-stable", "--max-cycles", "2", capsys=capsys, engine=engine)
    assert rc == 1
    assert "max-cycles" in err
    assert "Traceback" not in err


def test_cycles_must_be_positive(tmp_path, capsys):
    rc, _, err = run(tmp_path, manifests(workload("w", "1")), "--cycles", "0", capsys=capsys)
    assert rc == 2
    assert "--cycles" in err


def test_every_workload_appears_once_sorted_by_namespace_then_name(tmp_path, capsys, engine):
    text = manifests(workload("b", "1"), workload("a", "1", ts=2))
    rc, out, _ = run(tmp_path, text, capsys=capsys, engine=engine)
    names = [w["name"] for w in json.loads(out)["workloads"]]
    assert rc == 0
    assert names == ["a", "b"]


def test_heads_left_untried_say_that_more_cycles_admit_more(tmp_path, capsys, engine):
    # one head per ClusterQueue per cycle: after the default single cycle 1 of 3 is admitted,
    # Kueue's scheduler would go on to admit all 3
    text = manifests(workload("a", "1", ts=1), workload("b", "1", ts=2), workload("c", "1", ts=3))
    rc, out, err = run(tmp_path, text, capsys=capsys, engine=engine)
    assert rc == 0
    assert [w["state"] for w in json.loads(out)["workloads"]] == ["admitted", "pending", "pending"]
    assert err.splitlines() == [
        "note: 1 admitted after 1 cycle; Kueue's scheduler goes on: until nothing changes "
        "(--until-stable, 4 cycles) 3 would be admitted"
    ]
    rc, out, err = run(tmp_path, text, "--cycles", "3", capsys=capsys, engine=engine)
    assert rc == 0 and err == ""  # nothing left untried: no note
    rc, out, err = run(tmp_path, text, "--until-stable", capsys=capsys, engine=engine)
    assert rc == 0 and err == ""


def test_the_explanation_of_a_misspelt_queue_says_which_one_was_meant(tmp_path, capsys, engine):
    lost = "---\n" + textwrap.dedent(
        """
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: LocalQueue
        metadata: {name: lost, namespace: ns}
        spec: {clusterQueue: cqq}
        """
    )
    text = manifests(workload("a", "1", queue="lqq"), workload("b", "1", queue="lost")) + lost
    rc, out, _ = run(tmp_path, text, "--explain", capsys=capsys, engine=engine)
    assert rc == 0
    got = {k: w["explanation"]["summary"] for k, w in states(out).items()}
    assert got == {
        "ns/a": "LocalQueue lqq doesn't exist (did you mean \"lq\"?): it is in no ClusterQueue's queue",
        "ns/b": "ClusterQueue cqq doesn't exist (did you mean \"cq\"?): it is in no ClusterQueue's queue",
    }
