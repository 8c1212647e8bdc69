"""What `kueue-fast schedule` prints beyond the contract's JSON fields.

* ``--output yaml``: every status as Kueue would write it after the last
  cycle (ClusterQueue, LocalQueue, Cohort, Workload with its eviction history);
* inactive ClusterQueues: Kueue's reason and message in the Active condition
  and in kueue-fast's explanation;
* ``explanation`` (``--explain``) and the table's WHY column;
* ``--output usage``, ``--output summary`` and ``--events``.

Both engines must print the same thing: every case runs on both.
"""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml
from hypothesis import given, strategies as st

from kueue_fast.commands import schedule_output as output
from kueue_fast.commands.cli import main

# Two ClusterQueues in cohort "co" (a may reclaim and preempt), a StrictFIFO
# queue alone, namespaces a, b and f.
QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeTaints: [{key: spot, value: "true", effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq-a}
spec:
  cohort: co
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}]
    - name: spot
      resources: [{name: cpu, nominalQuota: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq-b}
spec:
  cohort: co
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4, lendingLimit: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: fifo}
spec:
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: a}
spec: {clusterQueue: cq-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: b}
spec: {clusterQueue: cq-b}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: f}
spec: {clusterQueue: fifo}
"""


def workload(
    ns: str,
    name: str,
    cpu: str,
    *,
    second: int = 1,
    priority: int = 0,
    admitted_to: str | None = None,
    queue: str = "lq",
) -> str:
    doc = f"""
    apiVersion: kueue.x-k8s.io/v1beta1
    kind: Workload
    metadata: {{name: {name}, namespace: {ns}, creationTimestamp: "2026-01-01T00:00:{second:02d}Z"}}
    spec:
      queueName: {queue}
      priority: {priority}
      podSets:
      - name: main
        count: 1
        template:
          spec:
            containers:
            - name: c
              resources: {{requests: {{cpu: "{cpu}"}}}}
    """
    if admitted_to:
        doc += f"""
    status:
      admission:
        clusterQueue: {admitted_to}
        podSetAssignments:
        - {{name: main, count: 1, flavors: {{cpu: default}}, resourceUsage: {{cpu: "{cpu}"}}}}
      conditions:
      - {{type: QuotaReserved, status: "True", reason: QuotaReserved,
         message: "Quota reserved in ClusterQueue {admitted_to}",
         lastTransitionTime: "2026-01-01T00:00:{second:02d}Z"}}
      - {{type: Admitted, status: "True", reason: Admitted, message: The workload is admitted,
         lastTransitionTime: "2026-01-01T00:00:{second:02d}Z"}}
    """
    return textwrap.dedent(doc)


def docs(*parts: str) -> str:
    return "\n---\n".join([QUEUES, *parts])


@pytest.fixture(params=["reference", "native"])
def engine(request: pytest.FixtureRequest) -> str:
    if request.param == "native":
        pytest.importorskip("kueue_fast.engine.native", reason="native engine not built")
    return str(request.param)


def schedule(tmp_path, capsys, text: str, *args: str, engine: str = "reference") -> tuple[str, str]:
    path = tmp_path / "input.yaml"
    path.write_text(text)
    rc = main(["schedule", str(path), "--engine", engine, *args])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out, out.err


def objects(yaml_text: str) -> dict[str, dict]:
    out = {}
    for d in yaml.safe_load_all(yaml_text):
        md = d["metadata"]
        key = (
            f"{d['kind']}/{md['namespace']}/{md['name']}"
            if "namespace" in md
            else f"{d['kind']}/{md['name']}"
        )
        out[key] = d
    return out


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def explained(json_text: str) -> dict[str, dict]:
    return {f"{w['namespace']}/{w['name']}": w for w in json.loads(json_text)["workloads"]}


# A preemption in cycle 1 (b borrows a's quota; a reclaims it), the victim
# pending afterwards; a StrictFIFO head that can never fit.
PREEMPTION = docs(
    workload("b", "borrower", "6", second=1, admitted_to="cq-b"),
    workload("a", "reclaimer", "4", second=2),
    workload("f", "giant", "3", second=3),
    workload("f", "small", "1", second=4),
)


# --- bug: --output yaml passed stale queue statuses through ------------------------------------


STALE_CQ_STATUS = """
status:
  pendingWorkloads: 99
  reservingWorkloads: 7
  admittedWorkloads: 7
  flavorsReservation: [{name: default, resources: [{name: cpu, total: "100", borrowed: "96"}]}]
  conditions:
  - {type: Active, status: "False", reason: FlavorNotFound, message: stale,
     lastTransitionTime: "2025-01-01T00:00:00Z"}
"""


def test_yaml_rewrites_cluster_queue_status_as_kueue_would(tmp_path, capsys, engine):
    text = PREEMPTION.replace(
        "kind: ClusterQueue\nmetadata: {name: cq-b}\n",
        "kind: ClusterQueue\nmetadata: {name: cq-b}\n" + STALE_CQ_STATUS.lstrip(),
        1,
    )
    out, _ = schedule(tmp_path, capsys, text, "-o", "yaml", "--until-stable", engine=engine)
    got = objects(out)
    cq_b = got["ClusterQueue/cq-b"]["status"]
    # the borrower (6 cpu, 2 above cq-b's nominal 4) was preempted by the reclaimer and waits again
    assert (cq_b["pendingWorkloads"], cq_b["reservingWorkloads"], cq_b["admittedWorkloads"]) == (1, 0, 0)
    assert cq_b["flavorsReservation"] == [
        {"name": "default", "resources": [{"name": "cpu", "total": "0", "borrowed": "0"}]}
    ]
    assert cq_b["flavorsUsage"] == cq_b["flavorsReservation"]
    active = conditions(got["ClusterQueue/cq-b"])["Active"]
    assert (active["status"], active["reason"], active["message"]) == (
        "True",
        "Ready",
        "Can admit new workloads",
    )
    cq_a = got["ClusterQueue/cq-a"]["status"]
    assert (cq_a["pendingWorkloads"], cq_a["reservingWorkloads"], cq_a["admittedWorkloads"]) == (0, 1, 1)
    assert cq_a["flavorsReservation"] == [
        {"name": "default", "resources": [{"name": "cpu", "total": "4", "borrowed": "0"}]},
        {"name": "spot", "resources": [{"name": "cpu", "total": "0", "borrowed": "0"}]},
    ]
    lq = got["LocalQueue/a/lq"]["status"]
    assert (lq["pendingWorkloads"], lq["reservingWorkloads"], lq["admittedWorkloads"]) == (0, 1, 1)
    assert lq["flavorsReservation"][0] == {"name": "default", "resources": [{"name": "cpu", "total": "4"}]}
    lq_active = conditions(got["LocalQueue/a/lq"])["Active"]
    assert (lq_active["reason"], lq_active["message"]) == ("Ready", "Can submit new workloads to localQueue")
    fifo = got["ClusterQueue/fifo"]["status"]
    assert fifo["pendingWorkloads"] == 2  # the StrictFIFO head and the one behind it


def test_yaml_reports_borrowed_quota_of_a_cluster_queue_in_a_cohort(tmp_path, capsys, engine):
    text = docs(workload("b", "borrower", "6", second=1, admitted_to="cq-b"))
    out, _ = schedule(tmp_path, capsys, text, "-o", "yaml", engine=engine)
    cq_b = objects(out)["ClusterQueue/cq-b"]["status"]
    assert cq_b["flavorsReservation"] == [
        {"name": "default", "resources": [{"name": "cpu", "total": "6", "borrowed": "2"}]}
    ]
    assert cq_b["reservingWorkloads"] == 1


def test_yaml_keeps_the_eviction_history_of_a_workload_preempted_in_an_earlier_cycle(
    tmp_path, capsys, engine
):
    out, _ = schedule(tmp_path, capsys, PREEMPTION, "-o", "yaml", "--until-stable", engine=engine)
    victim = objects(out)["Workload/b/borrower"]
    st = victim["status"]
    assert "admission" not in st
    c = conditions(victim)
    preempted_msg = c["Evicted"]["message"]
    assert preempted_msg.startswith("Preempted to accommodate a workload (UID: a/reclaimer")
    assert (c["Evicted"]["status"], c["Evicted"]["reason"]) == ("True", "Preempted")
    assert (c["Preempted"]["status"], c["Preempted"]["reason"], c["Preempted"]["message"]) == (
        "True",
        "InCohortReclamation",
        preempted_msg,
    )
    assert (c["Requeued"]["status"], c["Requeued"]["reason"]) == ("True", "Preempted")
    assert (c["Admitted"]["status"], c["Admitted"]["reason"]) == ("False", "NoReservation")
    # tried again after the requeue: the scheduler's reason, the transition time of the eviction
    assert (c["QuotaReserved"]["status"], c["QuotaReserved"]["reason"]) == ("False", "WaitingForQuota")
    # cycle 1 runs one second after the input's last timestamp
    assert (
        c["QuotaReserved"]["lastTransitionTime"]
        == c["Evicted"]["lastTransitionTime"]
        == "2026-01-01T00:00:05Z"
    )
    assert st["schedulingStats"]["evictions"] == [{"reason": "Preempted", "underlyingCause": "", "count": 1}]
    assert st["accumulatedPastExecutionTimeSeconds"] == 4  # admitted at 00:00:01, evicted at 00:00:05


def test_yaml_readmitted_workload_says_previously(tmp_path, capsys, engine):
    # the victim comes back once the reclaimer is gone: Evicted and Preempted turn False, "Previously: ..."
    text = docs(
        workload("b", "borrower", "6", second=1, admitted_to="cq-b"),
        workload("a", "reclaimer", "4", second=2),
    )
    path = tmp_path / "in.yaml"
    path.write_text(text)
    from kueue_fast import Cluster
    from kueue_fast.commands.schedule_output import to_yaml

    cluster = Cluster.from_files([str(path)], engine)
    cluster.run_cycle()  # the reclaimer preempts the borrower
    cluster.run_cycle()  # and is admitted
    cluster.remove_workload("a/reclaimer")
    cluster.run_until_stable()
    assert cluster.decision("b/borrower").state == "admitted"
    victim = objects(to_yaml(cluster))["Workload/b/borrower"]
    c = conditions(victim)
    assert (c["QuotaReserved"]["status"], c["Admitted"]["status"]) == ("True", "True")
    for ctype in ("Evicted", "Preempted"):
        assert (c[ctype]["status"], c[ctype]["reason"]) == ("False", "QuotaReserved")
        assert c[ctype]["message"].startswith("Previously: Preempted to accommodate a workload")
    assert victim["status"]["admission"]["clusterQueue"] == "cq-b"
    assert victim["status"]["schedulingStats"]["evictions"][0]["count"] == 1


def test_yaml_writes_no_condition_on_a_workload_the_scheduler_never_tried(tmp_path, capsys, engine):
    # one head per ClusterQueue per cycle: "second" was not tried in cycle 1 and Kueue wrote nothing on it
    text = docs(workload("a", "first", "1", second=1), workload("a", "second", "1", second=2))
    out, _ = schedule(tmp_path, capsys, text, "-o", "yaml", engine=engine)
    assert "status" not in objects(out)["Workload/a/second"]


def test_yaml_pending_workload_has_quota_reserved_and_admitted_false(tmp_path, capsys, engine):
    out, _ = schedule(tmp_path, capsys, docs(workload("f", "giant", "3")), "-o", "yaml", engine=engine)
    c = conditions(objects(out)["Workload/f/giant"])
    assert (c["QuotaReserved"]["status"], c["QuotaReserved"]["reason"]) == ("False", "ExceedsMaxQuota")
    assert (c["Admitted"]["status"], c["Admitted"]["reason"], c["Admitted"]["message"]) == (
        "False",
        "NoReservation",
        "The workload has no reservation",
    )


# --- bug: inactive ClusterQueues said only "ClusterQueue X is inactive" ------------------------


INACTIVE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: missing-flavors}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: h100, resources: [{name: cpu, nominalQuota: 1}]}
    - {name: default, resources: [{name: cpu, nominalQuota: 1}]}
    - {name: a100, resources: [{name: cpu, nominalQuota: 1}]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: stopped}
spec:
  namespaceSelector: {}
  stopPolicy: Hold
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: default, resources: [{name: cpu, nominalQuota: 1}]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: stopped-and-missing}
spec:
  namespaceSelector: {}
  stopPolicy: HoldAndDrain
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: gone, resources: [{name: cpu, nominalQuota: 1}]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: with-checks}
spec:
  namespaceSelector: {}
  admissionChecks: [prov-b, prov-a]
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: default, resources: [{name: cpu, nominalQuota: 1}]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: looped}
spec:
  cohort: left
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: default, resources: [{name: cpu, nominalQuota: 1}]}
---
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Cohort
metadata: {name: left}
spec: {parent: right}
---
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Cohort
metadata: {name: right}
spec: {parent: left}
"""

INACTIVE_CASES = {
    # name: (Active status, reason, message)
    "missing-flavors": (
        "False",
        "FlavorNotFound",
        "Can't admit new workloads: references missing ResourceFlavor(s): h100,a100.",
    ),
    "stopped": ("False", "Stopped", "Can't admit new workloads: is stopped."),
    "stopped-and-missing": (
        "False",
        "Stopped",
        "Can't admit new workloads: is stopped, references missing ResourceFlavor(s): gone.",
    ),
    "with-checks": (
        "False",
        "AdmissionCheckNotFound",
        "Can't admit new workloads: references missing AdmissionCheck(s): prov-a,prov-b.",
    ),
    # kueue keeps a ClusterQueue of a cohort cycle Ready and leaves it out of its snapshot
    "looped": ("True", "Ready", "Can admit new workloads"),
}


def inactive_input() -> str:
    parts = [INACTIVE]
    for i, name in enumerate(INACTIVE_CASES):
        parts.append(
            textwrap.dedent(
                f"""
                apiVersion: kueue.x-k8s.io/v1beta1
                kind: LocalQueue
                metadata: {{name: lq, namespace: ns-{i}}}
                spec: {{clusterQueue: {name}}}
                """
            )
        )
        parts.append(workload(f"ns-{i}", "job", "1", second=1))
    return "\n---\n".join(parts)


def test_inactive_cluster_queue_has_kueues_reason_and_message(tmp_path, capsys, engine):
    out, _ = schedule(tmp_path, capsys, inactive_input(), "-o", "yaml", engine=engine)
    got = objects(out)
    for i, (name, want) in enumerate(INACTIVE_CASES.items()):
        active = conditions(got[f"ClusterQueue/{name}"])["Active"]
        assert (active["status"], active["reason"], active["message"]) == want, name
        lq_active = conditions(got[f"LocalQueue/ns-{i}/lq"])["Active"]
        if want[0] == "False":
            assert (lq_active["status"], lq_active["reason"]) == ("False", "ClusterQueueIsInactive")
        # Kueue's words on the workload stay the scheduler's
        wl_cond = conditions(got[f"Workload/ns-{i}/job"])["QuotaReserved"]
        assert (wl_cond["reason"], wl_cond["message"]) == ("Suspended", f"ClusterQueue {name} is inactive")


def test_explanation_names_why_a_cluster_queue_is_inactive(tmp_path, capsys, engine):
    out, _ = schedule(tmp_path, capsys, inactive_input(), "--explain", engine=engine)
    got = explained(out)
    for i, (name, (_, reason, message)) in enumerate(INACTIVE_CASES.items()):
        w = got[f"ns-{i}/job"]
        assert (w["reason"], w["message"]) == ("Suspended", f"ClusterQueue {name} is inactive")
        e = w["explanation"]
        if name == "looped":
            assert e["kind"] == "CohortCycle"
            assert e["cohortCycle"] == ["left", "right", "left"]
            assert "cycle (left -> right -> left)" in e["summary"]
        else:
            assert e["kind"] == "InactiveClusterQueue"
            assert e["clusterQueueActive"] == {"status": "False", "reason": reason, "message": message}
            assert e["summary"] == f"ClusterQueue {name} is inactive: {reason}: {message}"


def test_usage_view_shows_the_active_condition_of_each_cluster_queue(tmp_path, capsys, engine):
    out, _ = schedule(tmp_path, capsys, inactive_input(), "-o", "usage", engine=engine)
    queues = out.split("\n\n")[0]  # the quota tree follows
    lines = {line.split()[0]: line for line in queues.splitlines()}
    assert lines["missing-flavors"].endswith(
        "False (FlavorNotFound): Can't admit new workloads: references missing ResourceFlavor(s): h100,a100."
    )
    assert "True (Ready; left out of scheduling: cohort left is in a cycle)" in lines["looped"]


# --- the explanation ---------------------------------------------------------------------------


def test_explanation_is_added_only_when_asked_and_changes_no_contract_field(tmp_path, capsys, engine):
    plain, _ = schedule(tmp_path, capsys, PREEMPTION, engine=engine)
    rich, _ = schedule(tmp_path, capsys, PREEMPTION, "--explain", engine=engine)
    assert "explanation" not in plain
    stripped = json.loads(rich)
    for w in stripped["workloads"]:
        w.pop("explanation", None)
    assert json.dumps(stripped, indent=2) + "\n" == plain


def test_explanation_of_a_strict_fifo_queue_blocked_by_a_head_that_can_never_fit(tmp_path, capsys, engine):
    out, _ = schedule(tmp_path, capsys, PREEMPTION, "--explain", "--until-stable", engine=engine)
    got = explained(out)
    head = got["f/giant"]["explanation"]
    assert head["kind"] == "NoFit"
    assert head["summary"] == (
        "can never fit in ClusterQueue fifo: needs 3 cpu in flavor default, 2 free now, "
        "at most 2 even if nothing else ran; as the head of a StrictFIFO queue it holds back 1 workload(s)"
    )
    assert head["fit"]["canEverFit"] is False
    assert head["fit"]["podSets"][0]["flavors"][0]["resources"]["cpu"] == {
        "needs": "3",
        "free": "2",
        "nominal": "2",
        "used": "0",
        "borrowable": "0",
        "maxEver": "2",
    }
    behind = got["f/small"]["explanation"]
    assert behind["kind"] == "BlockedByStrictFIFOHead"
    assert behind["queue"] == {"position": 2, "length": 2, "head": "f/giant", "headCanEverFit": False}
    assert behind["summary"].startswith("StrictFIFO: waits behind head f/giant, which can never fit")
    assert behind["fit"]["fitsNow"] is True


def test_explanation_of_a_workload_behind_the_head_and_of_the_evicted_one(tmp_path, capsys, engine):
    text = docs(
        workload("b", "borrower", "6", second=1, admitted_to="cq-b"),
        workload("a", "reclaimer", "4", second=2),
        workload("a", "next", "1", second=3),
    )
    out, _ = schedule(tmp_path, capsys, text, "--explain", "--cycles", "1", engine=engine)
    got = explained(out)
    victim = got["b/borrower"]
    assert (victim["state"], victim["preemptedBy"]) == ("evicted", "a/reclaimer")
    e = victim["explanation"]
    assert e["kind"] == "Preempted"
    assert e["lastEviction"] == {
        "cycle": 1,
        "reason": "Preempted",
        "preemptedBy": "a/reclaimer",
        "preemptionReason": "InCohortReclamation",
    }
    waiting = got["a/reclaimer"]["explanation"]
    assert waiting["kind"] == "WaitingForPreemption"
    behind = got["a/next"]["explanation"]
    assert behind["kind"] == "BehindHead"
    assert behind["queue"] == {"position": 2, "length": 2, "head": "a/reclaimer", "headCanEverFit": True}
    # per flavor: the tainted spot flavor is not eligible, default has room once the victim left
    flavors = behind["fit"]["podSets"][0]["flavors"]
    assert flavors[0]["flavor"] == "default" and flavors[0]["fitsNow"] is True
    assert flavors[1] == {
        "flavor": "spot",
        "notEligible": "untolerated taint {spot true NoSchedule <nil>} in flavor spot",
    }


def test_explanation_of_a_parked_workload_gives_the_numbers_per_flavor(tmp_path, capsys, engine):
    # cq-b holds 6 (its 4, of which it lends at most 2, and 2 borrowed from cq-a); "late" waits
    text = docs(
        workload("b", "running", "6", second=1, admitted_to="cq-b"),
        workload("b", "late", "3", second=2),
    )
    out, _ = schedule(tmp_path, capsys, text, "--explain", "--until-stable", engine=engine)
    e = explained(out)["b/late"]["explanation"]
    assert e["kind"] == "Parked"
    cpu = e["fit"]["podSets"][0]["flavors"][0]["resources"]["cpu"]
    # cq-b: nominal 4 (2 of it lendable), 6 used; the cohort has a's 4 + the 2 b lends,
    # 4 of them used by b beyond its own 2
    assert cpu == {"needs": "3", "free": "2", "nominal": "4", "used": "6", "borrowable": "2", "maxEver": "8"}
    assert e["summary"] == (
        "does not fit in ClusterQueue cq-b now: needs 3 cpu in flavor default, 2 free now (at most 8); "
        "parked as inadmissible (WaitingForQuota) until quota is freed in cohort co"
    )


def test_table_has_kueues_reason_and_kueue_fasts_why(tmp_path, capsys, engine):
    out, _ = schedule(tmp_path, capsys, PREEMPTION, "-o", "table", "--until-stable", engine=engine)
    header = out.splitlines()[0].split()
    assert header[:6] == ["WORKLOAD", "STATE", "CLUSTERQUEUE", "REASON", "WHY", "MESSAGE"]
    lines = out.split("\n\n")[0].splitlines()
    assert max(len(line) for line in lines) <= 120  # WHY and MESSAGE wrap in their columns
    at = next(i for i, line in enumerate(lines) if line.startswith("f/small"))
    end = next((i for i in range(at + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    why, message = lines[0].index("WHY"), lines[0].index("MESSAGE")
    small = " ".join(line[why:message].strip() for line in lines[at:end])  # the WHY column's lines
    assert "StrictFIFO: waits behind head f/giant" in small
    assert "QUOTA" in out and "cohort co" in out  # the usage view follows
    assert out.rstrip().endswith("1 admitted, 3 pending, 0 evicted")


# --- usage, summary, events ---------------------------------------------------------------------


def test_usage_view_per_cluster_queue_and_cohort(tmp_path, capsys, engine):
    text = docs(workload("b", "borrower", "6", second=1, admitted_to="cq-b"))
    out, _ = schedule(tmp_path, capsys, text, "-o", "usage", engine=engine)
    rows = [line.split() for line in out.splitlines() if line.strip()]
    assert rows[0] == ["CLUSTERQUEUE", "COHORT", "STRATEGY", "PENDING", "RESERVING", "ADMITTED", "ACTIVE"]
    assert rows[2] == ["cq-b", "co", "BestEffortFIFO", "0", "1", "1", "True", "(Ready)"]
    quota = {tuple(r[:3]) if r[0] == "cohort" else (r[0], r[1]): r for r in rows if len(r) >= 10}
    # cohort co: a's 4 + the 2 b lends; b uses 6 = its own 2 + 4 shared
    assert quota[("cohort", "co", "default")][4:] == ["0", "6", "-", "-", "4", "0", "-", "2"]
    # b: nominal 4, lends at most 2, holds 6 (2 borrowed), lendable 2, free 2
    assert quota[("cq-b", "default")][3:] == ["4", "4", "-", "2", "6", "2", "2", "2"]
    assert quota[("cq-a", "default")][3:] == ["4", "4", "-", "-", "0", "0", "4", "2"]


def test_summary_counts_per_cluster_queue(tmp_path, capsys, engine):
    out, _ = schedule(tmp_path, capsys, PREEMPTION, "-o", "summary", "--cycles", "1", engine=engine)
    rows = [line.split() for line in out.splitlines() if line.strip()]
    assert rows[0] == ["CLUSTERQUEUE", "ADMITTED", "RESERVED", "PENDING", "EVICTED"]
    table = {r[0]: r[1:] for r in rows[1:-1]}
    assert table["cq-a"] == ["0", "0", "1", "0"]
    assert table["cq-b"] == ["0", "0", "0", "1"]
    assert table["fifo"] == ["0", "0", "2", "0"]
    assert table["TOTAL"] == ["0", "0", "3", "1"]
    assert rows[-1] == ["1", "cycle(s)"]


def test_events_print_the_timeline_on_standard_error(tmp_path, capsys, engine):
    out, err = schedule(tmp_path, capsys, PREEMPTION, "--events", "--until-stable", engine=engine)
    json.loads(out)  # standard output stays the contract's document
    lines = err.splitlines()
    assert lines[0] == "cycle 1 at 2026-01-01T00:00:05Z: 0 admitted, 1 preempted, 0 evicted, 0 parked"
    assert lines[1] == "  preempted  b/borrower: by a/reclaimer (InCohortReclamation)"
    assert "  admitted   a/reclaimer to cq-a (mainx1: cpu=default)" in lines
    parked = [line for line in lines if line.startswith("  parked ")]
    assert any(
        line.startswith("  parked     b/borrower (WaitingForQuota): couldn't assign flavors")
        for line in parked
    )


def test_events_show_evictions_by_a_stop_policy(tmp_path, capsys, engine):
    policy = "  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}"
    text = docs(workload("a", "running", "1", second=1, admitted_to="cq-a"))
    text = text.replace(policy, policy + "\n  stopPolicy: HoldAndDrain")
    _, err = schedule(tmp_path, capsys, text, "--events", engine=engine)
    assert "  evicted    a/running: ClusterQueueStopped: The ClusterQueue is stopped" in err.splitlines()


# --- both engines print the same ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("-o", "yaml", "--until-stable"),
        ("-o", "table", "--cycles", "2"),
        ("-o", "usage", "--until-stable"),
        ("-o", "summary", "--cycles", "1"),
        ("--explain", "--events", "--cycles", "3"),
    ],
)
def test_both_engines_print_the_same(tmp_path, capsys, args):
    pytest.importorskip("kueue_fast.engine.native", reason="native engine not built")
    text = PREEMPTION + "\n---\n" + inactive_input().split("---", 1)[1]
    ref = schedule(tmp_path, capsys, text, *args, engine="reference")
    nat = schedule(tmp_path, capsys, text, *args, engine="native")
    assert ref == nat


def test_weighted_share_in_statuses_is_the_engines_dominant_resource_share():
    # kueue-gen-08: fair sharing over a cohort tree, 42 cycles
    import math
    from pathlib import Path

    from kueue_fast import Cluster
    from kueue_fast.commands.schedule_output import to_yaml

    path = Path(__file__).parent / "scenarios" / "kueue-gen-08-fair-sharing.yaml"
    objs = [d for d in yaml.safe_load_all(path.read_text()) if d][1:]
    cluster = Cluster.from_objects(objs, "reference")
    cluster.run(42)
    topo, engine = cluster.topology, cluster.engine
    shares = {}
    for d in yaml.safe_load_all(to_yaml(cluster)):
        if d["kind"] in ("ClusterQueue", "Cohort"):
            shares[d["metadata"]["name"]] = d["status"]["fairSharing"]["weightedShare"]
    assert len(shares) == 16 and any(shares.values())
    for node, name in enumerate(topo.node_names):
        if name in shares:
            assert shares[name] == math.ceil(engine.drs(node).weighted_share()), name


def test_explanation_of_the_next_head(tmp_path, capsys, engine):
    text = docs(*(workload("a", f"w{i}", "1", second=i) for i in (1, 2, 3)))
    out, _ = schedule(tmp_path, capsys, text, "--explain", engine=engine)
    got = explained(out)
    assert got["a/w1"]["state"] == "admitted" and "explanation" not in got["a/w1"]
    head = got["a/w2"]["explanation"]
    assert (head["kind"], head["summary"]) == (
        "Head",
        "next in line in ClusterQueue cq-a: fits in ClusterQueue cq-a now",
    )
    assert head["queue"] == {"position": 1, "length": 2}
    assert got["a/w3"]["explanation"]["queue"]["head"] == "a/w2"


# --- the contract's JSON written by orjson: json.dumps(indent=2)'s exact bytes ------------------

_json_text = st.text(st.characters(max_codepoint=0x2FF)) | st.sampled_from(["", "a/b", "\x7f", "é", "\u2028"])
_json_plain = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | _json_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_json_text, inner, max_size=4),
    max_leaves=20,
)


@given(doc=st.dictionaries(_json_text, _json_plain, max_size=4))
def test_plain_json_is_written_as_json_dumps_writes_it(doc):
    # output._dumps_plain: orjson where it writes the same bytes, json where it would not
    assert output._dumps_plain(doc) == json.dumps(doc, indent=2) + "\n"


@pytest.mark.parametrize("text", ["plain", "", '\x00\x1f\n\t"\\/', "\x7f", "naïve", "\U0001f600", "\ud800"])
def test_plain_json_escapes_as_json_dumps_does(text):
    doc = {"workloads": [{"name": text, "n": 2**64, "items": [], "map": {}}], "cycles": -1}
    assert output._dumps_plain(doc) == json.dumps(doc, indent=2) + "\n"


@given(
    entries=st.lists(
        st.tuples(_json_text, _json_text, st.none() | _json_text, _json_text, _json_text, st.booleans()),
        max_size=5,
    )
)
def test_compiled_json_entries_escape_as_json_dumps_does(entries):
    # _contract_json.json_workload_entries copies plain ASCII between quotes and lets json escape the rest
    from kueue_fast.commands._contract_json import json_workload_entries

    keys = [f"{ns.replace('/', '')}/{i}{name}" for i, (ns, name, *_) in enumerate(entries)]  # unique
    owners = {key: e[2] for key, e in zip(keys, entries, strict=True) if e[2] is not None}
    tail = ',\n      "state": "admitted"\n    }'
    kinds = [1 if e[5] else 2 for e in entries]
    pending = [e for e in entries if not e[5]]
    docs = []
    for key, (_, _, owner, reason, message, admitted) in zip(keys, entries, strict=True):
        ns, name = key.split("/", 1)
        doc = {"namespace": ns, "name": name, **({"owner": owner} if owner is not None else {})}
        doc |= (
            {"state": "admitted"} if admitted else {"state": "Pending", "reason": reason, "message": message}
        )
        docs.append(doc)
    args = (
        keys,
        kinds,
        [0] * len(keys),
        [tail],
        [e[3] for e in pending],
        [e[4] for e in pending],
        owners,
        [],
    )
    got = json_workload_entries(*args, "Pending")
    want = json.dumps({"workloads": docs}, indent=2)
    assert f'{{\n  "workloads": {got}\n}}' == want
    # the document around the array, written with it
    assert json_workload_entries(*args, "Pending", '{\n  "workloads": ', "\n}") == want
    # the Python definition a build without the compiled kernels uses (kueue_fast.commands.contract_json)
    from kueue_fast.commands.contract_json import json_workload_entries_py

    assert json_workload_entries_py(*args, "Pending") == got
    assert json_workload_entries_py(*args, "Pending", '{\n  "workloads": ', "\n}") == want
    # given write, the same text in pieces of at most chunk characters, in order, and "" returned
    for entries_of in (json_workload_entries, json_workload_entries_py):
        pieces: list[str] = []
        assert entries_of(*args, "Pending", '{\n  "workloads": ', "\n}", pieces.append, 64) == ""
        assert "".join(pieces) == want
        assert pieces[-1] and all(len(p) >= 64 for p in pieces[:-1])  # a piece ends once it holds chunk


def test_compiled_json_entries_refuse_texts_that_are_not_ascii() -> None:
    # the compiled kernel fills an ASCII str without decoding: a tail that is not
    # JSON as json.dumps writes it (ensure_ascii) is an error, not a broken str
    from kueue_fast.commands._contract_json import json_workload_entries

    with pytest.raises(ValueError, match="not ASCII"):
        json_workload_entries(["ns/a"], [1], [0], [',\n      "x": "ü"\n    }'], [], [], {}, [], "Pending")
    with pytest.raises(ValueError, match="not ASCII"):
        json_workload_entries([], [], [], [], [], [], {}, [], "Pending", "ü")


def test_workload_owners_compiled_and_python_agree() -> None:
    from types import SimpleNamespace

    from kueue_fast.commands._contract_json import workload_owners
    from kueue_fast.commands.contract_json import workload_owners_py

    workloads = {f"ns/w{i}": SimpleNamespace(owner=f"Job/w{i}" if i % 3 == 0 else None) for i in range(10)}
    want = {f"ns/w{i}": f"Job/w{i}" for i in range(0, 10, 3)}
    assert workload_owners(workloads) == workload_owners_py(workloads) == want
    assert workload_owners({}) == {}


# --- -o json in bulk (Cluster.bulk_decisions) against one Decision per workload -------------------


def _json_per_decision(cluster) -> str:  # type: ignore[no-untyped-def]
    """The contract's document as to_json wrote it before the bulk path."""
    owners = {key: wl.owner for key, wl in cluster.state.workloads.items() if wl.owner is not None}
    workloads = [output.decision_json(d, owners.get(d.key)) for d in cluster.decisions()]
    return json.dumps({"cycles": cluster.cycles, "workloads": workloads}, indent=2) + "\n"


def _every_state_cluster():  # type: ignore[no-untyped-def]
    """Admitted (whole, partial, several pod sets, input admissions), pending
    (tried, never tried, in an inactive or stopped queue, without LocalQueue,
    deactivated), preempted, evicted with the eviction under way."""
    from builders import build_state, cq, fq, wl

    from kueue_fast import Cluster

    state = build_state(
        ["default", "spot"],
        [
            cq("a").cohort("co").flavor("default", cpu="6").preemption(within="LowerPriority"),
            cq("b").cohort("co").resource_group(fq("default", cpu="4"), fq("spot", cpu="4")),
            cq("off").flavor("missing", cpu="4"),  # inactive: its flavor does not exist
            cq("held").flavor("default", cpu="4").stop("Hold"),
        ],
        [
            wl("partial").queue("a").pod_set("main", 9, {"cpu": "1"}, min_count=2),
            wl("multi").queue("b").pod_set("driver", 1, {"cpu": "1"}).pod_set("workers", 3, {"cpu": "2"}),
            wl("in").queue("b").request(cpu="1").reserve("b", "spot"),
            wl("big").queue("b").request(cpu="40"),
            wl("wait").queue("a").request(cpu="1").created(2_000_000_000_000_000_000),
            wl("suspended").queue("off").request(cpu="1"),
            wl("stopped").queue("held").request(cpu="1"),
            wl("lost").queue("nowhere").request(cpu="1"),
            wl("asleep").queue("b").request(cpu="1"),
            *(wl(f"w{i}", f"ns{i % 3}").queue("q").request(cpu="1").created(i) for i in range(12)),
        ],
        local_queues=[(f"ns{i}", "q", "b") for i in range(3)],
    )
    state.workloads["default/asleep"].active = False
    for key, w in state.workloads.items():
        if key.startswith("ns0/"):
            w.owner = f"Job/{w.name}"  # the job a Workload was made from
    cluster = Cluster(state, "native", release_evictions=False)
    cluster.run(2)
    cluster.add_workload(wl("urgent").queue("a").priority(10).request(cpu="6").obj())  # preempts
    cluster.run(1)
    victim = next(k for k in cluster.keys() if cluster.decision(k).state == "admitted" and k.startswith("ns"))
    cluster.evict(victim, "Deactivated", "The workload is deactivated")
    return cluster


def _scenario_clusters():  # type: ignore[no-untyped-def]
    """Every public scenario that loads, run as the scenario says, native."""
    from pathlib import Path

    from kueue_fast import Cluster
    from kueue_fast.api.errors import KueueFastError

    for path in sorted((Path(__file__).parent / "scenarios").glob("*.yaml")):
        docs = [d for d in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader) if d is not None]
        raw = path.with_suffix(".raw")
        try:
            if raw.exists():
                cluster = Cluster.from_files([str(raw)], "native")
            else:
                cluster = Cluster.from_objects(docs[1:], "native")
        except KueueFastError:
            continue  # a bad-input scenario
        run = docs[0]["run"]
        if run.get("untilStable"):
            cluster.run_until_stable()
        else:
            cluster.run(run["cycles"])
        yield path.name, cluster


def test_bulk_json_is_the_json_of_every_decision() -> None:
    # to_json writes the workloads the engine's arrays give (admitted to a ClusterQueue,
    # plain pending) without a Decision: the same bytes as the per-decision document
    from kueue_fast.cluster.cluster import BULK_ADMITTED, BULK_OTHER, BULK_PENDING

    kinds: set[int] = set()
    states: set[tuple[str, str]] = set()
    seen = {"partial": False, "pod sets": False, "owner": False}
    for name, cluster in [("every state", _every_state_cluster()), *_scenario_clusters()]:
        bulk = cluster.bulk_decisions()
        assert bulk is not None and bulk.keys == [d.key for d in cluster.decisions()], name
        kinds.update(bulk.kind)
        want = _json_per_decision(cluster)
        assert output.to_json(cluster) == want, name
        pieces: list[str] = []  # what `schedule -o json` writes: the same text, in pieces
        assert output.to_json(cluster, write=pieces.append) == "" and "".join(pieces) == want, name
        for w in json.loads(want)["workloads"]:
            states.add((w["state"], w.get("reason", "")))
            pod_sets = cluster.state.workloads[f"{w['namespace']}/{w['name']}"].pod_sets
            spec = {ps.name: ps.count for ps in pod_sets}
            seen["partial"] |= any(ps["count"] < spec[ps["name"]] for ps in w.get("podSets", ()))
            seen["pod sets"] |= len(w.get("podSets", ())) > 1
            seen["owner"] |= "owner" in w
    assert kinds == {BULK_OTHER, BULK_ADMITTED, BULK_PENDING} and all(seen.values()), seen
    want_states = {("admitted", ""), ("reserved", "UnsatisfiedAdmissionChecks"), ("evicted", "Preempted")}
    want_states |= {("evicted", "Deactivated"), ("pending", "Pending"), ("pending", "Deactivated")}
    want_states |= {("pending", "Suspended"), ("pending", "Misconfigured")}
    assert want_states <= states, want_states - states
    # the reference engine has the same arrays (engine/contract.py): the same bytes in bulk
    from kueue_fast import Cluster

    reference = Cluster(_every_state_cluster().state, "reference")
    assert output.to_json(reference) == _json_per_decision(reference)


def test_bulk_json_after_removals_and_re_adds() -> None:
    # bulk_decisions reads wid i as the i-th key only while the wids follow the
    # sorted keys: a removed workload, one added again and one added later break that
    cluster = _every_state_cluster()
    fresh = type(cluster)(cluster.state, "native")
    assert fresh.keys() == sorted(fresh.keys())  # built by key: the shortcut applies
    assert output.to_json(fresh) == _json_per_decision(fresh)
    keys = fresh.keys()
    again = fresh.state.workloads[keys[1]]
    fresh.remove_workload(keys[1])
    fresh.remove_workload(keys[-1])
    assert output.to_json(fresh) == _json_per_decision(fresh)
    fresh.add_workload(again)
    fresh.run(1)
    assert output.to_json(fresh) == _json_per_decision(fresh)
    assert json.loads(output.to_json(fresh))["workloads"][1]["name"] == again.name


def test_admitted_shapes_group_admissions_as_the_reference_does() -> None:
    # the native admitted_shapes groups in a hash map: the same shapes, in order
    # of first appearance, and the same index per wid as the reference's dict
    import numpy as np

    from kueue_fast import Cluster
    from kueue_fast.bench.inputs import drain_objects, long_drain_case

    objects = drain_objects(long_drain_case(n_cq=20, n_cohorts=4, n_workloads=600))
    got = {}
    for engine in ("native", "reference"):
        cluster = Cluster.from_objects(objects, engine)
        cluster.run_until_stable()
        shape, shapes = cluster.engine.admitted_shapes(np.arange(len(cluster.keys())))
        got[engine] = (shape.tolist(), [(cq, [(n, c, list(f)) for n, c, f in ps]) for cq, ps in shapes])
    shape, shapes = got["native"]
    assert -1 in shape and 20 < len(shapes) < len(shape) - shape.count(-1)  # shared shapes, some pending
    assert got["native"] == got["reference"]


# --- amounts beyond int64 (issue 21 item 10) ----------------------------------------------------------

_QUEUE_WITH = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [{resource}]
    flavors:
    - name: default
      resources: [{{name: {resource}, nominalQuota: {quota}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: default}}
spec: {{clusterQueue: cq}}
"""


def _workload_asking(name: str, count: int, resource: str, request: str) -> str:
    return f"""
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: default}}
spec:
  queueName: lq
  podSets:
  - count: {count}
    template:
      spec:
        containers:
        - {{name: c, resources: {{requests: {{{resource}: {request}}}}}}}
"""


# 2 pods x 4Ei of memory: 2^63 bytes, one beyond int64; two admitted workloads of 9e15 cpu
# each under an unlimited (1e30) quota: 1.8e19 milli-cpu reserved
TWO_TIMES_4EI = _QUEUE_WITH.format(resource="memory", quota="16Gi") + _workload_asking(
    "w", 2, "memory", "4Ei"
)
UNLIMITED_USAGE = (
    _QUEUE_WITH.format(resource="cpu", quota="1e30")
    + _workload_asking("a", 1, "cpu", "9e15")
    + _workload_asking("b", 1, "cpu", "9e15")
)


@pytest.mark.parametrize(
    "args", [("-o", "table"), ("-o", "yaml"), ("-o", "usage"), ("--explain",), ("-o", "summary")]
)
def test_amounts_beyond_int64_print_saturated(tmp_path, capsys, engine, args):
    # format_quantity raised "... is outside the int64 range" (table, yaml, usage, --explain)
    out, _ = schedule(tmp_path, capsys, TWO_TIMES_4EI, "--until-stable", *args, engine=engine)
    if args == ("--explain",):
        assert "needs 9223372036854775807 memory in flavor default, 16Gi free now" in out
    if args == ("-o", "table"):  # the WHY column wraps within 120 columns
        assert "needs 9223372036854775807 memory" in out and "in flavor default, 16Gi free now" in out
    out, _ = schedule(tmp_path, capsys, UNLIMITED_USAGE, "--until-stable", *args, engine=engine)
    if args == ("-o", "yaml"):
        cq = objects(out)["ClusterQueue/cq"]
        reserved = cq["status"]["flavorsReservation"][0]["resources"][0]
        assert reserved == {"name": "cpu", "total": "9223372036854775807m", "borrowed": "0"}
