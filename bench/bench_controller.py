"""Benchmark (not a test): the controller admitting queued Jobs against the
in-process API server.

    python bench/bench_controller.py --jobs 10000

The API server (tests/fake_apiserver.py) runs in this process; the
controller runs as `kueue-fast controller` in a child process, talking to it
over HTTP with the official client, so its memory is its own. The Jobs are
created suspended (as Kueue's webhook leaves them) straight into the
server's store, as fast as it takes them; quota fits them all, spread over
``--namespaces`` LocalQueues, each with its ClusterQueue in one cohort.

Reported (one JSON line, and a summary):
* time from the first Job created to the last admission written
  (``status.admission``) and to the last Job started (unsuspended);
* admissions per second over that time;
* the controller's API requests per admission, by verb and resource;
* the throughput the client QPS budget allows at that many requests per
  admission, and the share of it reached;
* the controller's resident memory: when idle and synced, and at its peak.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_apiserver import FakeAPIServer, WriteInfo  # noqa: E402

from kueue_fast.controller import manifests  # noqa: E402

AGENT = "kueue-fast-controller/"


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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=10000)
    p.add_argument("--namespaces", type=int, default=10)
    p.add_argument("--qps", type=float, default=300)
    p.add_argument("--burst", type=int, default=500)
    p.add_argument("--workers", type=int, default=32)
    p.add_argument(
        "--engine", default=None, help="native|reference (default: native if built, else reference)"
    )
    p.add_argument("--timeout", type=float, default=1200)
    p.add_argument("--json", default=None, help="also write the result to this file")
    p.add_argument("--timeline", action="store_true", help="print the controller's writes per 5 s")
    args = p.parse_args()
    engine = args.engine
    if engine is None:
        try:
            import kueue_fast._native  # type: ignore[import-not-found]  # noqa: F401

            engine = "native"
        except ImportError:
            engine = "reference"

    api = FakeAPIServer(crds=manifests.crds(), bookmark_interval=1.0)
    api.start()
    names = setup(api, args.namespaces, args.jobs)
    tmp = tempfile.mkdtemp(prefix="kueue-fast-bench-")
    kubeconfig = api.write_kubeconfig(os.path.join(tmp, "kubeconfig"))

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
        "0",
        "--log-level",
        "warning",
        "--engine",
        engine,
    ]
    proc = subprocess.Popen(cmd, env=env, cwd=str(ROOT))
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
    by_verb: dict[str, int] = {}
    for k, v in delta.items():
        by_verb[k.split()[0]] = by_verb.get(k.split()[0], 0) + v
    writes = sum(v for k, v in by_verb.items() if k in ("create", "update", "patch", "delete"))
    requests = sum(v for k, v in by_verb.items() if k != "watch")
    span_adm = t_last_adm - t0
    span_start = t_last_start - t0
    per_adm = requests / max(1, n_started)
    budget = args.qps / per_adm if per_adm else float("nan")
    rate = n_started / span_start if span_start > 0 else float("nan")
    result = {
        "jobs": args.jobs,
        "engine": engine,
        "qps": args.qps,
        "burst": args.burst,
        "jobs_created_s": round(t_created - t0, 2),
        "admitted": n_adm,
        "started": n_started,
        "first_job_to_last_admission_s": round(span_adm, 2),
        "first_job_to_last_job_started_s": round(span_start, 2),
        "admissions_per_s": round(n_adm / span_adm, 1) if span_adm > 0 else None,
        "jobs_started_per_s": round(rate, 1),
        "requests_per_admission": round(per_adm, 3),
        "writes_per_admission": round(writes / max(1, n_started), 3),
        "requests_per_admission_by_verb": {k: round(v / max(1, n_started), 3) for k, v in by_verb.items()},
        "requests_by_verb_and_resource": delta,
        "qps_budget_admissions_per_s": round(budget, 1),
        "share_of_qps_budget": round(rate / budget, 3) if budget else None,
        "controller_idle_rss_mib": round(idle_rss / 1024, 1),
        "controller_peak_rss_mib": round(max(hwm, peak_rss) / 1024, 1),
        "controller_rss_growth_mib": round((max(hwm, peak_rss) - idle_rss) / 1024, 1),
        "controller_cpu_s": round(cpu_ctl, 1),
        "apiserver_and_bench_cpu_s": round(cpu_self, 1),
    }
    print(json.dumps(result))
    if args.timeline:
        buckets: dict[int, int] = {}
        for t in write_times:
            buckets[int((t - t0) // 5)] = buckets.get(int((t - t0) // 5), 0) + 1
        print(
            "writes per second, by 5 s window:",
            {k * 5: round(v / 5) for k, v in sorted(buckets.items())},
            file=sys.stderr,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"\n{n_started}/{args.jobs} Jobs started; first Job -> last admission {span_adm:.1f} s, "
        f"-> last Job started {span_start:.1f} s ({rate:.1f} Jobs/s)\n"
        f"requests per admission {per_adm:.2f} (writes {writes / max(1, n_started):.2f}): "
        + ", ".join(f"{k} {v / max(1, n_started):.2f}" for k, v in sorted(by_verb.items()))
        + f"\nQPS {args.qps:g} allows {budget:.1f} admissions/s at that count: reached {rate / budget:.0%}\n"
        f"controller memory: idle {idle_rss / 1024:.0f} MiB, peak {max(hwm, peak_rss) / 1024:.0f} MiB; "
        f"CPU: controller {cpu_ctl:.0f} s, API server (+ Job creation) {cpu_self:.0f} s",
        file=sys.stderr,
    )
    return 0 if n_started == args.jobs else 1


if __name__ == "__main__":
    sys.exit(main())
