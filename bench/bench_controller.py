"""Benchmark (not a test): the controller admitting queued Jobs against the
in-process API server.

    python bench/bench_controller.py --jobs 10000

The API server (tests/fake_apiserver.py) runs in this process; the
controller runs as `kueue-fast controller` in a child process, talking to it
over HTTP with the official client, so its memory is its own. The Jobs are
created suspended (as Kueue's webhook leaves them) straight into the
server's store, as fast as it takes them; quota fits them all, spread over
``--namespaces`` LocalQueues, each with its ClusterQueue in one cohort.

It runs twice by default, with Kueue's Events on and off (``--events
on|off|both``), each time against a fresh API server.

Reported (one JSON line per run, and a summary side by side):
* time from the first Job created to the last admission written
  (``status.admission``) and to the last Job started (unsuspended);
* admissions per second over that time;
* the controller's API requests per admission, by verb and resource;
  writes per admission apart: decisions (Workloads, Jobs, queue statuses)
  and Events, until the last Job started and once the Events still waiting
  for their rate limit (``--events-qps``) are written;
* Events recorded (occurrences), written, dropped (more waiting than the
  queue's bound);
* the throughput the client QPS budget allows at that many requests per
  admission, and the share of it reached;
* the controller's resident memory: when idle and synced, and at its peak.

``--takeover N`` measures instead the time from becoming leader to the
first admission on a cluster that already holds N Workloads (default 100k:
the drain case of ``kueue-fast bench`` with the long drain's quotas, about
60% admitted by an offline run, statuses as the controller writes them, the
rest pending, some of which fit). A standby syncs its informers behind a
Lease the benchmark holds; the benchmark deletes the Lease, the standby takes
it and rebuilds the engine; the figure is from its Lease write to its first
admission write, as the API server sees them. The standby is killed then and
the next one started. Best of ``--repeat`` (3) for the bulk start (the
loader's bulk path, state.workload_models) and for the per-object start
(``Options.bulk_start=False``), alternating, against one API server.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_apiserver import FakeAPIServer, WriteInfo  # noqa: E402

from kueue_fast import bench as B  # noqa: E402
from kueue_fast.cluster import status_writer as S  # noqa: E402
from kueue_fast.commands import manifests  # noqa: E402
from kueue_fast.kube.client import LEASES, ApiError, KubeClient  # noqa: E402

AGENT = "kueue-fast-controller/"
WRITE_VERBS = ("create", "update", "patch", "delete")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def metric(port: int, name: str) -> float:
    """A metric of the controller's /metrics, summed over its labels."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    pattern = re.compile(rf"^{name}(?:{{[^}}]*}})? (\S+)$", re.M)
    return sum(float(v) for v in pattern.findall(text))


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in KiB."""
    vals = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                k, v = line.split(":")
                vals[k] = int(v.split()[0])
    return vals.get("VmRSS", 0), vals.get("VmHWM", 0)


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def setup(api: FakeAPIServer, namespaces: int, jobs: int) -> list[str]:
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}})
    api.create(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "default"},
            "spec": {"nodeLabels": {"pool": "default"}},
        }
    )
    per = (jobs + namespaces - 1) // namespaces
    names = []
    for i in range(namespaces):
        ns = f"team-{i}"
        names.append(ns)
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        api.create(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": f"cq-{i}"},
                "spec": {
                    "namespaceSelector": {},
                    "cohortName": "all",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory"],
                            "flavors": [
                                {
                                    "name": "default",
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": str(per)},
                                        {"name": "memory", "nominalQuota": f"{per}Gi"},
                                    ],
                                }
                            ],
                        }
                    ],
                },
            }
        )
        api.create(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "lq", "namespace": ns},
                "spec": {"clusterQueue": f"cq-{i}"},
            }
        )
    return names


def job(ns: str, name: str) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.k8s.io/pause:3.9",
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                        }
                    ],
                }
            },
        },
    }


def run_once(args: argparse.Namespace, engine: str, events: bool) -> dict[str, Any]:
    api = FakeAPIServer(crds=manifests.crds(), bookmark_interval=1.0)
    api.start()
    names = setup(api, args.namespaces, args.jobs)
    tmp = tempfile.mkdtemp(prefix="kueue-fast-bench-")
    kubeconfig = api.write_kubeconfig(os.path.join(tmp, "kubeconfig"))
    port = free_port()

    admitted: dict[str, float] = {}
    started: dict[str, float] = {}
    lock = threading.Lock()

    write_times: list[float] = []

    def hook(info: WriteInfo) -> None:
        if not info.user_agent.startswith(AGENT) or info.obj is None:
            return
        write_times.append(time.monotonic())
        if info.resource == "workloads" and info.subresource == "status":
            if (info.obj.get("status") or {}).get("admission"):
                with lock:
                    admitted.setdefault(f"{info.namespace}/{info.name}", time.monotonic())
        elif info.resource == "jobs" and not info.subresource and not info.obj["spec"].get("suspend"):
            with lock:
                started.setdefault(f"{info.namespace}/{info.name}", time.monotonic())

    api.add_write_hook(hook)
    env = dict(os.environ, KUEUE_FAST_ENGINE=engine)
    cmd = [
        sys.executable,
        "-m",
        "kueue_fast.controller",
        "--kubeconfig",
        kubeconfig,
        "--no-leader-elect",
        "--qps",
        str(args.qps),
        "--burst",
        str(args.burst),
        "--workers",
        str(args.workers),
        "--metrics-bind-address",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
        "--engine",
        engine,
        f"--events={'true' if events else 'false'}",
        "--events-qps",
        str(args.events_qps),
        "--events-burst",
        str(args.events_burst),
    ]
    # cwd elsewhere: `python -m` puts the working directory first on sys.path, where
    # a clone's source tree would shadow a non-editable install (kueue_fast.bench.child)
    proc = subprocess.Popen(cmd, env=env, cwd=tempfile.gettempdir())
    drained = True
    try:
        # synced: every informer has opened its watch
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            watches = {res for (verb, res), n in api.counts(AGENT).items() if verb == "watch"}
            if len(watches) >= 8:
                break
            if proc.poll() is not None:
                raise SystemExit(f"controller exited with {proc.returncode}")
            time.sleep(0.1)
        time.sleep(1.0)
        idle_rss, _ = rss_kib(proc.pid)
        base_counts = api.counts(AGENT)

        cpu0_ctl, cpu0_self = cpu_s(proc.pid), sum(os.times()[:2])
        t0 = time.monotonic()
        per = (args.jobs + args.namespaces - 1) // args.namespaces
        n = 0
        for i in range(per):
            for ns in names:
                if n == args.jobs:
                    break
                api.create(job(ns, f"job-{i:05d}"))
                n += 1
        t_created = time.monotonic()
        peak_rss = 0
        deadline = t0 + args.timeout
        while time.monotonic() < deadline:
            with lock:
                done = len(started)
            peak_rss = max(peak_rss, rss_kib(proc.pid)[0])
            if done >= args.jobs or proc.poll() is not None:
                break
            time.sleep(0.25)
        _, hwm = rss_kib(proc.pid)
        counts = api.counts(AGENT)
        cpu_ctl, cpu_self = cpu_s(proc.pid) - cpu0_ctl, sum(os.times()[:2]) - cpu0_self
        # the Events still waiting for their rate limit
        t_drain = time.monotonic()
        while events and proc.poll() is None:
            if metric(port, "kueue_fast_event_queue_depth") == 0:
                break
            if time.monotonic() - t_drain > args.drain_timeout:
                drained = False
                break
            peak_rss = max(peak_rss, rss_kib(proc.pid)[0])
            time.sleep(0.5)
        time.sleep(0.5)
        drain_s = time.monotonic() - t_drain
        final_counts = api.counts(AGENT)
        recorded = metric(port, "kueue_fast_events_total") if events else 0.0
        dropped = metric(port, "kueue_fast_events_dropped_total") if events else 0.0
        _, hwm = rss_kib(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        api.stop()

    with lock:
        n_adm, n_started = len(admitted), len(started)
        t_last_adm = max(admitted.values()) if admitted else float("nan")
        t_last_start = max(started.values()) if started else float("nan")
    delta = {
        f"{verb} {res}": counts[(verb, res)] - base_counts.get((verb, res), 0)
        for (verb, res) in sorted(counts)
        if counts[(verb, res)] - base_counts.get((verb, res), 0)
    }

    def writes_of(c: Any, events_only: bool) -> int:
        return sum(
            n - base_counts.get((verb, res), 0)
            for (verb, res), n in c.items()
            if verb in WRITE_VERBS and (res == "events") == events_only
        )

    by_verb: dict[str, int] = {}
    for k, v in delta.items():
        by_verb[k.split()[0]] = by_verb.get(k.split()[0], 0) + v
    decision_writes = writes_of(counts, False)
    event_writes = writes_of(counts, True)
    event_writes_total = writes_of(final_counts, True)
    requests = sum(v for k, v in by_verb.items() if k != "watch")
    span_adm = t_last_adm - t0
    span_start = t_last_start - t0
    per_adm = requests / max(1, n_started)
    budget = args.qps / per_adm if per_adm else float("nan")
    rate = n_started / span_start if span_start > 0 else float("nan")
    adm = max(1, n_started)
    result = {
        "jobs": args.jobs,
        "engine": engine,
        "events": events,
        "qps": args.qps,
        "burst": args.burst,
        "events_qps": args.events_qps,
        "events_burst": args.events_burst,
        "jobs_created_s": round(t_created - t0, 2),
        "admitted": n_adm,
        "started": n_started,
        "first_job_to_last_admission_s": round(span_adm, 2),
        "first_job_to_last_job_started_s": round(span_start, 2),
        "admissions_per_s": round(n_adm / span_adm, 1) if span_adm > 0 else None,
        "jobs_started_per_s": round(rate, 1),
        "requests_per_admission": round(per_adm, 3),
        "writes_per_admission": round((decision_writes + event_writes) / adm, 3),
        "decision_writes_per_admission": round(decision_writes / adm, 3),
        "event_writes_per_admission": round(event_writes / adm, 3),
        "event_writes_per_admission_drained": round(event_writes_total / adm, 3),
        "events_recorded": int(recorded),
        "events_written": event_writes_total,
        "events_dropped": int(dropped),
        "events_drained": drained,
        "events_drain_s": round(drain_s, 1) if events else 0.0,
        "requests_per_admission_by_verb": {k: round(v / adm, 3) for k, v in by_verb.items()},
        "requests_by_verb_and_resource": delta,
        "qps_budget_admissions_per_s": round(budget, 1),
        "share_of_qps_budget": round(rate / budget, 3) if budget else None,
        "controller_idle_rss_mib": round(idle_rss / 1024, 1),
        "controller_peak_rss_mib": round(max(hwm, peak_rss) / 1024, 1),
        "controller_rss_growth_mib": round((max(hwm, peak_rss) - idle_rss) / 1024, 1),
        "controller_cpu_s": round(cpu_ctl, 1),
        "apiserver_and_bench_cpu_s": round(cpu_self, 1),
    }
    if args.timeline:
        buckets: dict[int, int] = {}
        for t in write_times:
            buckets[int((t - t0) // 5)] = buckets.get(int((t - t0) // 5), 0) + 1
        print(
            f"events {'on' if events else 'off'}: writes per second, by 5 s window:",
            {k * 5: round(v / 5) for k, v in sorted(buckets.items())},
            file=sys.stderr,
        )
    return result


# --- takeover: from becoming leader to the first admission ----------------------------------------

# the per-object start, for the side-by-side figure (main imports Options when it runs)
_PER_OBJECT_CHILD = (
    "import functools, sys\n"
    "from kueue_fast.controller import reconciler\n"
    "reconciler.Options = functools.partial(reconciler.Options, bulk_start=False)\n"
    "from kueue_fast.controller.__main__ import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
LEASE_NS, LEASE_NAME = "kueue-system", "kueue-fast-leader"


def _v1beta2(obj: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["apiVersion"] = "kueue.x-k8s.io/v1beta2"
    if out["kind"] == "ClusterQueue" and "cohort" in out["spec"]:
        out["spec"]["cohortName"] = out["spec"].pop("cohort")
    return out


def takeover_objects(n: int, admitted_share: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(configuration, Workloads): the long drain case, with the cycles of an
    offline run admitting about ``admitted_share`` of the Workloads."""
    from kueue_fast.cluster.cluster import Cluster
    from kueue_fast.loader import build_state

    size = {k: v for k, v in B.drain_size(n).items() if k != "n_workloads"}
    objs = [_v1beta2(o) for o in B.drain_objects(B.long_drain_case(n_workloads=n, **size))]
    cluster = Cluster(build_state(objs))
    while cluster.state_counts().get("admitted", 0) < admitted_share * n:
        if not cluster.run_cycle().changed:
            break
    namespaces = sorted({o["metadata"]["namespace"] for o in objs if o["kind"] == "LocalQueue"})
    config = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in namespaces]
    config += [o for o in objs if o["kind"] != "Workload"]
    wls = []
    for o in objs:
        if o["kind"] != "Workload":
            continue
        d = cluster.decision(f"{o['metadata']['namespace']}/{o['metadata']['name']}")
        if d.state == "admitted":
            o["status"] = S.admitted_status(o, d, d.admission_time_ns or cluster.now_ns)
        wls.append(o)
    return config, wls


def _hold_lease(kube: KubeClient) -> None:
    """The Lease held by someone else, renewed now: a controller started now stands by."""
    try:
        kube.delete(LEASES, LEASE_NAME, LEASE_NS)
    except ApiError as e:
        if e.status != 404:
            raise
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": LEASE_NAME, "namespace": LEASE_NS},
        "spec": {
            "holderIdentity": "bench-holder",
            "leaseDurationSeconds": 3600,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": 0,
        },
    }
    kube.create(LEASES, lease, LEASE_NS)


def takeover_once(
    api: FakeAPIServer, kubeconfig: str, engine: str, bulk: bool, timeout: float
) -> dict[str, Any]:
    kube = KubeClient.from_config(kubeconfig, user_agent="bench/1")
    _hold_lease(kube)
    port = free_port()
    times: dict[str, float] = {}
    lock = threading.Lock()

    def hook(info: WriteInfo) -> None:
        if not info.user_agent.startswith(AGENT) or info.obj is None:
            return
        with lock:
            if info.resource == "leases":
                times.setdefault("leader", time.monotonic())
            elif info.resource == "workloads" and info.subresource == "status":
                if (info.obj.get("status") or {}).get("admission") and "leader" in times:
                    times.setdefault("admission", time.monotonic())

    api.add_write_hook(hook)
    args = [
        "--kubeconfig",
        kubeconfig,
        "--identity",
        f"bench-{'bulk' if bulk else 'per-object'}-{port}",
        "--metrics-bind-address",
        f"127.0.0.1:{port}",
        "--log-level",
        "info",
        "--engine",
        engine,
        "--events=false",
    ]
    cmd = [sys.executable, "-m", "kueue_fast.controller", *args]
    if not bulk:
        cmd = [sys.executable, "-c", _PER_OBJECT_CHILD, *args]
    log_path = os.path.join(tempfile.mkdtemp(prefix="kueue-fast-bench-"), "controller.log")
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen(cmd, cwd=tempfile.gettempdir(), stderr=log_file)
    try:
        t_start = time.monotonic()
        while True:  # synced as a standby
            if proc.poll() is not None:
                raise SystemExit(f"controller exited with {proc.returncode}; see {log_path}")
            if time.monotonic() - t_start > timeout:
                raise SystemExit(f"controller not ready after {timeout}s; see {log_path}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.5)
        synced_s = time.monotonic() - t_start
        time.sleep(2.0)  # quiet: the informers' lists are in
        kube.delete(LEASES, LEASE_NAME, LEASE_NS)  # the old leader is gone
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and "admission" not in times and proc.poll() is None:
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
        api.remove_write_hook(hook)
    with open(log_path) as f:
        built = re.findall(
            r"engine \S+ built from (\d+) workloads \((\d+) admitted\) in ([0-9.]+)s", f.read()
        )
    if "admission" not in times:
        raise SystemExit(f"no admission after taking over; see {log_path}")
    return {
        "start": "bulk" if bulk else "per-object",
        "standby_synced_s": round(synced_s, 1),
        "leader_to_first_admission_s": round(times["admission"] - times["leader"], 3),
        "engine_build_s": float(built[-1][2]) if built else None,
        "workloads_in_engine": int(built[-1][0]) if built else None,
        "admitted_in_engine": int(built[-1][1]) if built else None,
    }


def run_takeover(args: argparse.Namespace, engine: str) -> int:
    t0 = time.monotonic()
    config, wls = takeover_objects(args.takeover, args.admitted_share)
    print(f"generated {len(wls)} Workloads in {time.monotonic() - t0:.0f}s", file=sys.stderr)
    api = FakeAPIServer(crds=manifests.crds(), bookmark_interval=1.0)
    api.start()
    try:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LEASE_NS}})
        for obj in config:
            api.create(obj)
        for wl in wls:
            api.put_stored(wl)
        kubeconfig = api.write_kubeconfig(os.path.join(tempfile.mkdtemp(prefix="kueue-fast-bench-"), "kc"))
        runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        for _ in range(args.repeat):
            for bulk in (False, True):
                r = takeover_once(api, kubeconfig, engine, bulk, args.timeout)
                print(json.dumps(r), flush=True)
                runs[bulk].append(r)
    finally:
        api.stop()
    best = {b: min(rs, key=lambda r: r["leader_to_first_admission_s"]) for b, rs in runs.items()}
    admitted = sum(1 for w in wls if "status" in w)
    print(
        "\n".join(
            [
                "",
                f"takeover: {len(wls)} Workloads ({admitted} admitted, {len(wls) - admitted} pending), "
                f"engine {engine}, best of {args.repeat}",
                f"{'':<44}{'per-object':>14}{'bulk':>14}",
                *(
                    f"{label:<44}" + "".join(f"{best[b][key]!s:>14}" for b in (False, True))
                    for label, key in (
                        ("leader -> first admission written (s)", "leader_to_first_admission_s"),
                        ("  of which the engine's rebuild (s)", "engine_build_s"),
                        ("workloads in the engine", "workloads_in_engine"),
                        ("  admitted", "admitted_in_engine"),
                        ("standby synced after (s)", "standby_synced_s"),
                    )
                ),
            ]
        ),
        file=sys.stderr,
    )
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=10000)
    p.add_argument("--namespaces", type=int, default=10)
    p.add_argument("--qps", type=float, default=300)
    p.add_argument("--burst", type=int, default=500)
    p.add_argument("--workers", type=int, default=32)
    p.add_argument(
        "--events", choices=("on", "off", "both"), default="both", help="Kueue's Events (default: both)"
    )
    p.add_argument("--events-qps", type=float, default=100)
    p.add_argument("--events-burst", type=int, default=300)
    p.add_argument(
        "--drain-timeout", type=float, default=300, help="seconds to wait for the Events still queued"
    )
    p.add_argument(
        "--engine", default=None, help="native|reference (default: native if built, else reference)"
    )
    p.add_argument("--timeout", type=float, default=1200)
    p.add_argument("--json", default=None, help="also write the results to this file")
    p.add_argument("--timeline", action="store_true", help="print the controller's writes per 5 s")
    p.add_argument(
        "--takeover",
        type=int,
        default=None,
        metavar="N",
        help="measure leader -> first admission with N existing Workloads instead (e.g. 100000)",
    )
    p.add_argument("--admitted-share", type=float, default=0.6, help="--takeover: share admitted (0.6)")
    p.add_argument("--repeat", type=int, default=3, help="--takeover: runs of each start, best reported")
    args = p.parse_args()
    engine = args.engine
    if engine is None:
        try:
            import kueue_fast.engine.native  # type: ignore[import-not-found]  # noqa: F401

            engine = "native"
        except ImportError:
            engine = "reference"

    if args.takeover:
        return run_takeover(args, engine)
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.events]
    results = []
    for events in modes:
        r = run_once(args, engine, events)
        print(json.dumps(r), flush=True)
        results.append(r)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")

    def row(label: str, key: str, fmt: str = "{}") -> str:
        return f"{label:<44}" + "".join(f"{fmt.format(r[key]):>14}" for r in results)

    print(
        "\n".join(
            [
                "",
                f"{args.jobs} Jobs, engine {engine}, QPS {args.qps:g}/burst {args.burst}, "
                f"Events QPS {args.events_qps:g}/burst {args.events_burst}",
                f"{'':<44}" + "".join(f"{'events ' + ('on' if r['events'] else 'off'):>14}" for r in results),
                row("Jobs started", "started"),
                row("first Job -> last admission (s)", "first_job_to_last_admission_s"),
                row("first Job -> last Job started (s)", "first_job_to_last_job_started_s"),
                row("Jobs started per second", "jobs_started_per_s"),
                row("decision writes per admission", "decision_writes_per_admission"),
                row("Event writes per admission (run)", "event_writes_per_admission"),
                row("Event writes per admission (all written)", "event_writes_per_admission_drained"),
                row("Events recorded", "events_recorded"),
                row("Events written / dropped", "events_written"),
                row("  dropped", "events_dropped"),
                row("seconds to write the Events left", "events_drain_s"),
                row("controller peak RSS (MiB)", "controller_peak_rss_mib"),
                row("controller CPU (s)", "controller_cpu_s"),
            ]
        ),
        file=sys.stderr,
    )
    return 0 if all(r["started"] == args.jobs for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
