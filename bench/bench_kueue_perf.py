"""Benchmark (not a test): Kueue's scheduler performance test replayed through
`kueue-fast controller` against the in-process API server.

    python bench/bench_kueue_perf.py                              # baseline, QPS 50 and 1000
    python bench/bench_kueue_perf.py --shape large-scale --qps 1000

The shapes (ClusterQueues, cohorts, Workload classes, counts, intervals, run
times) and Kueue's published figures are kueue_fast/bench/kueue_perf.py's.
What runs follows Kueue's harness (test/performance/scheduler/runner,
main.go and its generator, controller and recorder packages):

* the API server (tests/fake_apiserver.py) runs in this process and holds
  the ResourceFlavor, ClusterQueues, Namespaces and LocalQueues;
* `kueue-fast controller` starts in a child process (minimalkueue in Kueue's
  harness, whose client runs at 50 QPS, burst 100: `--qps`; its Event
  recorder has a client of its own with the same budget, here
  `--events-qps`), and the Workloads' stream starts at once, as Kueue's
  generator does not wait for the manager: each Workload is created when its
  set's interval says, through the runner's own client at 1000 QPS, burst
  2000 (envtest's rest.Config, or `--qps=1000 --burst=2000` in a cluster);
* the runner marks an admitted Workload `Finished` (one server-side apply of
  the condition, as workload.SetConditionAndUpdate) once its run time has
  passed since it saw the admission; an eviction cancels that (Kueue's
  runner clears the evicted Workload's reservation itself; kueue-fast's
  controller does it for a Workload without a job, one more write of its own);
* the run is over when every Workload was created and the last status of
  every ClusterQueue counts no pending and no reserving Workload
  (recorder.go, expectMoreEvents); the controller is then sent SIGTERM.

Reported per QPS: wall time (the controller's process start to exit: the
figure Kueue's checker compares with maxWallMs), the makespan (the first
create to the end), per class the mean time to admission (the Admitted
condition's lastTransitionTime minus creationTimestamp, both in whole
seconds as Kueue's recorder reads them; and, in milliseconds, from the create
to the admission write as the API server saw them), the ClusterQueue usage as
Kueue's checker computes it (CPU usage of the ClusterQueues' status writes
integrated over time, over nominal quota x the time monitored), evictions,
the controller's requests and writes per admitted Workload, by resource and
by kind of Workload status write (at W writes per admission a budget of QPS
allows QPS / W admissions a second), and the CPU of the controller and of
its busiest thread, the scheduling loop.
"""

from __future__ import annotations

import argparse
import calendar
import heapq
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_apiserver import FakeAPIServer, WriteInfo  # noqa: E402

from kueue_fast.api.quantity import parse_quantity  # noqa: E402
from kueue_fast.bench import kueue_perf as K  # noqa: E402
from kueue_fast.commands import manifests  # noqa: E402
from kueue_fast.kube.client import WORKLOADS, KubeClient  # noqa: E402

AGENT = "kueue-fast-controller/"
RUNNER = "kueue-perf-runner/1"
WRITE_VERBS = ("create", "update", "patch", "delete")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busiest_thread_cpu_s(pid: int) -> float:
    """CPU of the process's busiest thread: the controller's scheduling loop
    (its writer, informer and Event threads mostly wait on the network)."""
    best = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        best = max(best, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return best


def peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _condition(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return None


def _epoch_s(rfc3339: str) -> int:
    return calendar.timegm(time.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ"))


class Recorder:
    """What Kueue's recorder keeps, from the writes the API server commits:
    per Workload its creation and admissions, per ClusterQueue its status."""

    def __init__(self, shape: K.PerfShape, t0: float) -> None:
        self.t0 = t0
        self.lock = threading.Lock()
        self.runtime_ms = {s.cls: s.runtime_ms for s in shape.sets}
        self.created: dict[str, float] = {}
        self.admitted: dict[str, int] = {}  # key -> admissions so far
        self.running: dict[str, int] = {}  # key -> the admission it runs under
        self.admit_kueue_s: dict[str, int] = {}  # Admitted LTT - creationTimestamp, whole seconds
        self.admit_ms: dict[str, float] = {}  # create -> admission write, as the server saw them
        self.evictions: dict[str, int] = {}
        self.requeue_next: set[str] = set()  # evicted: the controller's next write requeues it
        self.wl_writes = dict.fromkeys(("admission", "pending reason", "eviction", "other"), 0)
        self.finishing: set[str] = set()  # its Finished write is on its way
        self.finished: set[str] = set()
        self.cq_last: dict[str, tuple[float, int, int, int]] = {}  # t, usage mCPU, pending, reserving
        self.cq_used: dict[str, float] = {}  # mCPU x ms
        self.cq_first = t0
        self.cq_end = t0
        # the usage statuses written at every change would show: a Workload's CPU in its
        # ClusterQueue from its admission write to its Finished or eviction write
        self.holding: dict[str, tuple[str, int]] = {}  # key -> ClusterQueue, mCPU
        self.cur: dict[str, tuple[float, int]] = {}  # ClusterQueue -> since, mCPU
        self.cur_used: dict[str, float] = {}  # mCPU x ms
        self.cq_writes_first_used: dict[str, float] = {}  # its first status write with usage: t
        self.due: list[tuple[float, int, str, int]] = []  # finishes: (due, seq, key, admission)
        self.seq = 0
        self.wake = threading.Event()

    def _hold(self, cq: str, milli: int, now: float) -> None:
        t, u = self.cur.get(cq, (self.t0, 0))
        self.cur_used[cq] = self.cur_used.get(cq, 0.0) + u * (now - t) * 1000
        self.cur[cq] = (now, u + milli)

    def release(self, key: str, now: float) -> None:
        """Its run is over (Finished written, or evicted): its quota is free."""
        held = self.holding.pop(key, None)
        if held is not None:
            self._hold(held[0], -held[1], now)

    def hook(self, info: WriteInfo) -> None:
        if info.obj is None:
            return
        now = time.monotonic()
        key = f"{info.namespace}/{info.name}"
        if info.resource == "workloads":
            if info.verb == "create":
                with self.lock:
                    self.created.setdefault(key, now)
                return
            if info.subresource != "status" or not info.user_agent.startswith(AGENT):
                return
            admitted = (_condition(info.obj, "Admitted") or {}).get("status") == "True"
            evicted = (_condition(info.obj, "Evicted") or {}).get("status") == "True"
            has_admission = (info.obj.get("status") or {}).get("admission") is not None
            with self.lock:
                if key in self.running and key not in self.finishing and (evicted or not admitted):
                    # evicted (its admission is kept until the job stopped) or no longer admitted:
                    # its run is over, unfinished (Kueue's runner finishes no evicted Workload)
                    del self.running[key]
                    self.release(key, now)
                    self.wl_writes["eviction"] += 1
                    if evicted:
                        self.evictions[key] = self.evictions.get(key, 0) + 1
                        self.requeue_next.add(key)
                elif admitted and not evicted:
                    if key in self.running:
                        self.wl_writes["other"] += 1
                        return  # a later write of the same admission
                    self.wl_writes["admission"] += 1
                    n = self.admitted[key] = self.admitted.get(key, 0) + 1
                    self.running[key] = n
                    adm = info.obj["status"]["admission"]
                    milli = sum(
                        int(parse_quantity(ps.get("resourceUsage", {}).get("cpu", "0"), "cpu"))
                        for ps in adm.get("podSetAssignments") or []
                    )
                    self.holding[key] = (adm["clusterQueue"], milli)
                    self._hold(adm["clusterQueue"], milli, now)
                    created = info.obj["metadata"]["creationTimestamp"]
                    admitted_at = _condition(info.obj, "Admitted")["lastTransitionTime"]  # type: ignore[index]
                    self.admit_kueue_s[key] = _epoch_s(admitted_at) - _epoch_s(created)
                    self.admit_ms[key] = (now - self.created.get(key, now)) * 1000
                    cls = info.obj["metadata"]["labels"][K.CLASS_LABEL]
                    self.seq += 1
                    heapq.heappush(self.due, (now + self.runtime_ms[cls] / 1000, self.seq, key, n))
                    self.wake.set()
                elif key in self.requeue_next and not has_admission:
                    self.requeue_next.discard(key)
                    self.wl_writes["eviction"] += 1  # the requeue: the admission removed once stopped
                elif not has_admission:
                    self.wl_writes["pending reason"] += 1  # QuotaReserved=False and its message
                else:
                    self.wl_writes["other"] += 1
        elif info.resource == "clusterqueues" and info.subresource == "status":
            st = info.obj.get("status") or {}
            usage = 0
            for fu in st.get("flavorsUsage") or []:
                for r in fu.get("resources") or []:
                    if r.get("name") == "cpu":
                        usage += int(parse_quantity(r.get("total", "0"), "cpu"))
            with self.lock:
                t_prev, u_prev, _, _ = self.cq_last.get(info.name, (self.t0, 0, 0, 0))
                self.cq_used[info.name] = self.cq_used.get(info.name, 0.0) + u_prev * (now - t_prev) * 1000
                pending, reserving = (
                    int(st.get("pendingWorkloads") or 0),
                    int(st.get("reservingWorkloads") or 0),
                )
                self.cq_last[info.name] = (now, usage, pending, reserving)
                self.cq_end = max(self.cq_end, now)
                if usage:
                    self.cq_writes_first_used.setdefault(info.name, now)

    def quiet(self, n_cqs: int) -> bool:
        """expectMoreEvents is false: every ClusterQueue's last status counts
        nothing pending or reserving."""
        with self.lock:
            return len(self.cq_last) == n_cqs and all(
                p == 0 and r == 0 for _, _, p, r in self.cq_last.values()
            )

    def next_due(self) -> tuple[float, list[tuple[str, int]]]:
        """The finishes due now, and when the next one is."""
        now = time.monotonic()
        out = []
        with self.lock:
            while self.due and self.due[0][0] <= now:
                _, _, key, n = heapq.heappop(self.due)
                if self.running.get(key) == n:
                    self.finishing.add(key)
                    out.append((key, n))
            nxt = self.due[0][0] if self.due else now + 0.05
        return nxt, out


def run_once(args: argparse.Namespace, shape: K.PerfShape, qps: float, burst: int) -> dict[str, Any]:
    api = FakeAPIServer(crds=manifests.crds(), bookmark_interval=1.0)
    api.start()
    for obj in K.config_objects(shape):
        api.create(obj)
    arrivals = K.arrivals(shape)
    n_cqs = shape.n_cluster_queues
    tmp = tempfile.mkdtemp(prefix="kueue-fast-perf-")
    kubeconfig = api.write_kubeconfig(os.path.join(tmp, "kubeconfig"))
    runner = KubeClient.from_config(
        kubeconfig, qps=args.runner_qps, burst=args.runner_burst, user_agent=RUNNER, pool_size=32
    )
    port = free_port()
    events_qps = args.events_qps or qps
    events_burst = args.events_burst or burst
    cmd = [
        *(sys.executable, "-m", "kueue_fast.controller", "--kubeconfig", kubeconfig, "--no-leader-elect"),
        *("--qps", f"{qps:g}", "--burst", str(burst), "--workers", str(args.workers)),
        *("--metrics-bind-address", f"127.0.0.1:{port}", "--log-level", "warning"),
        f"--events={'true' if args.events == 'on' else 'false'}",
        *("--events-qps", f"{events_qps:g}", "--events-burst", str(events_burst)),
    ]
    t0 = time.monotonic()
    rec = Recorder(shape, t0)
    api.add_write_hook(rec.hook)
    stop = threading.Event()
    pool = ThreadPoolExecutor(args.runner_threads)
    errors: list[str] = []
    cpu_self0 = sum(os.times()[:2])
    # cwd elsewhere: `python -m` puts the working directory first on sys.path, where
    # a clone's source tree would shadow a non-editable install (kueue_fast.bench.child)
    proc = subprocess.Popen(cmd, cwd=tempfile.gettempdir())
    t_spawn = time.monotonic()
    created_done = threading.Event()

    def create(a: K.Arrival) -> None:
        try:
            runner.create(WORKLOADS, K.workload_object(a), a.namespace)
        except Exception as e:  # reported, and the run fails
            errors.append(f"create {a.namespace}/{a.name}: {e}")

    def generate() -> None:
        # Kueue's generateWlSet: wait the interval, create; every set of every ClusterQueue at once
        start = time.monotonic()
        futures = []
        for a in arrivals:
            delay = start + a.at_ms / 1000 - time.monotonic()
            if delay > 0 and stop.wait(delay):
                return
            futures.append(pool.submit(create, a))
        for f in futures:
            f.result()
        created_done.set()

    def finish(key: str) -> None:
        ns, name = key.split("/", 1)
        cond = {
            "type": "Finished",
            "status": "True",
            "reason": "ByTest",
            "message": "By test runner",
            "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        obj = {
            "apiVersion": K.KUEUE_API,
            "kind": "Workload",
            "metadata": {"name": name, "namespace": ns},
            "status": {"conditions": [cond]},
        }
        try:
            runner.apply(WORKLOADS, obj, field_manager="kueue-perf-runner-Finished", sub="status")
            with rec.lock:
                rec.finished.add(key)
                rec.release(key, time.monotonic())
        except Exception as e:
            errors.append(f"finish {key}: {e}")

    def finisher() -> None:
        while not stop.is_set():
            nxt, due = rec.next_due()
            for key, _ in due:
                pool.submit(finish, key)
            rec.wake.clear()
            rec.wake.wait(max(0.0, min(0.05, nxt - time.monotonic())))

    threads = [threading.Thread(target=f, daemon=True) for f in (generate, finisher)]
    for t in threads:
        t.start()
    t_done = float("nan")
    peak = 0.0
    cpu_ctl = cpu_loop = 0.0
    try:
        deadline = t0 + args.timeout
        next_note = t0 + args.progress
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"controller exited with {proc.returncode}")
            if errors:
                raise SystemExit("runner: " + "; ".join(errors[:3]))
            if created_done.is_set() and rec.quiet(n_cqs) and len(rec.finished) >= len(arrivals):
                t_done = time.monotonic()
                break
            peak = max(peak, peak_rss_mib(proc.pid))
            cpu_ctl = cpu_s(proc.pid)
            if time.monotonic() >= next_note:
                next_note += args.progress
                with rec.lock:
                    note = (len(rec.created), sum(rec.admitted.values()), len(rec.finished))
                print(
                    f"{time.monotonic() - t0:.0f}s: {note[0]:,} created, {note[1]:,} admissions, "
                    f"{note[2]:,} finished of {len(arrivals):,}",
                    file=sys.stderr,
                    flush=True,
                )
            time.sleep(0.1)
        counts = api.counts(AGENT)
        peak = max(peak, peak_rss_mib(proc.pid))
        cpu_ctl = cpu_s(proc.pid)
        cpu_loop = busiest_thread_cpu_s(proc.pid)
    finally:
        stop.set()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        t_exit = time.monotonic()
        pool.shutdown(wait=False, cancel_futures=True)
        runner.close()
        api.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    cpu_self = sum(os.times()[:2]) - cpu_self0

    with rec.lock:
        n = len(arrivals)
        timed_out = t_done != t_done  # NaN: not done within --timeout
        by_class: dict[str, dict[str, Any]] = {}
        for a in arrivals:
            key = f"{a.namespace}/{a.name}"
            c = by_class.setdefault(
                a.set.cls, {"n": 0, "kueue_s": 0, "ms": 0.0, "evictions": 0, "admitted": 0}
            )
            c["n"] += 1
            c["evictions"] += rec.evictions.get(key, 0)
            if key in rec.admit_kueue_s:
                c["admitted"] += 1
                c["kueue_s"] += rec.admit_kueue_s[key]
                c["ms"] += rec.admit_ms[key]
        for name, (t, u, _, _) in rec.cq_last.items():  # up to the last event of the group
            rec.cq_used[name] = rec.cq_used.get(name, 0.0) + u * (rec.cq_end - t) * 1000
        used = sum(rec.cq_used.values())
        for name, (t, u) in rec.cur.items():
            rec.cur_used[name] = rec.cur_used.get(name, 0.0) + u * (rec.cq_end - t) * 1000
        current = sum(rec.cur_used.values())
        first_used = sorted(t - t0 for t in rec.cq_writes_first_used.values())
        span_ms = (rec.cq_end - rec.cq_first) * 1000
        admissions = sum(rec.admitted.values())
    writes: dict[str, int] = {}
    requests = 0  # through the client's budget: Events have their own
    for (verb, res), k in counts.items():
        if verb != "watch" and res != "events":
            requests += k
        if verb in WRITE_VERBS:
            writes[res] = writes.get(res, 0) + k
    decision_writes = sum(k for res, k in writes.items() if res != "events")
    return {
        "shape": shape.name,
        "workloads": n,
        "qps": qps,
        "burst": burst,
        "events": args.events,
        "events_qps": events_qps,
        "runner_qps": args.runner_qps,
        "done": not timed_out,
        "finished": len(rec.finished),
        "wall_s": round(t_exit - t_spawn, 2),
        "makespan_s": round(t_done - t0, 2) if not timed_out else None,
        "classes": {
            cls: {
                "workloads": c["n"],
                "admitted": c["admitted"],
                "mean_admission_s": round(c["kueue_s"] / max(1, c["admitted"]), 1),
                "mean_admission_ms": round(c["ms"] / max(1, c["admitted"])),
                "evictions": c["evictions"],
            }
            for cls, c in by_class.items()
        },
        "usage_pct": round(K.usage_pct(used, shape, span_ms), 1),
        "usage_current_pct": round(K.usage_pct(current, shape, span_ms), 1),
        "cqs_with_usage_written": len(first_used),
        "median_first_usage_write_s": round(first_used[len(first_used) // 2], 1) if first_used else None,
        "admissions": admissions,
        "admissions_per_s": round(admissions / (t_done - t0), 1) if not timed_out else None,
        "requests_per_admission": round(requests / max(1, admissions), 3),
        "writes_per_admission": round(decision_writes / max(1, admissions), 3),
        "event_writes_per_admission": round(writes.get("events", 0) / max(1, admissions), 3),
        "writes_by_resource": dict(sorted(writes.items())),
        "workload_status_writes": dict(rec.wl_writes),
        "qps_bound_admissions_per_s": round(qps * admissions / max(1, requests), 1),
        "controller_cpu_s": round(cpu_ctl, 1),
        "loop_cpu_s": round(cpu_loop, 1),
        "controller_peak_rss_mib": round(peak, 1),
        "apiserver_and_runner_cpu_s": round(cpu_self, 1),
    }


def table(shape: K.PerfShape, results: list[dict[str, Any]]) -> str:
    k = shape.kueue

    def s(ms: float) -> str:
        return f"{ms / 1000:,.1f} s"

    head = [
        f"{shape.name}: {shape.n_cluster_queues:,} ClusterQueues, {shape.n_workloads:,} Workloads",
        f"Kueue (mean of {k.runs}; threshold)",
        *(f"controller, QPS {r['qps']:g}" for r in results),
    ]
    lines = [
        ["wall time", f"{s(k.wall_ms)} ({s(k.max_wall_ms)})", *(f"{r['wall_s']:,.1f} s" for r in results)],
        ["makespan (first create -> done)", "", *(f"{r['makespan_s'] or 'not done'} s" for r in results)],
    ]
    for ws in shape.sets:
        lines.append(
            [
                f"time to admission, {ws.cls} (mean)",
                f"{s(k.admission_ms[ws.cls])} ({s(k.max_admission_ms[ws.cls])})",
                *(
                    f"{r['classes'][ws.cls]['mean_admission_s']:,.1f} s "
                    f"({r['classes'][ws.cls]['mean_admission_ms'] / 1000:,.2f} s)"
                    for r in results
                ),
            ]
        )
    lines += [
        [
            "ClusterQueue usage",
            f"{k.usage_pct:.1f}% ({k.min_usage_pct:g}%)",
            *(f"{r['usage_pct']}%" for r in results),
        ],
        [
            "  if statuses were current (admission write -> Finished write)",
            "",
            *(f"{r['usage_current_pct']}%" for r in results),
        ],
        [
            "  ClusterQueues whose status showed usage / median first such write",
            "",
            *(f"{r['cqs_with_usage_written']:,} / {r['median_first_usage_write_s']} s" for r in results),
        ],
        ["evictions", "", *(f"{sum(c['evictions'] for c in r['classes'].values()):,}" for r in results)],
        ["admissions per second", "", *(f"{r['admissions_per_s']}" for r in results)],
        [
            "requests per admission (Events apart)",
            "",
            *(f"{r['requests_per_admission']:.2f}" for r in results),
        ],
        [
            "writes per admission (Event writes apart)",
            "",
            *(f"{r['writes_per_admission']:.2f}" for r in results),
        ],
        [
            "  of which Workload status: admission / pending reason / eviction / other",
            "",
            *(
                " / ".join(f"{v / max(1, r['admissions']):.2f}" for v in r["workload_status_writes"].values())
                for r in results
            ),
        ],
        [
            "  of which ClusterQueue / LocalQueue status",
            "",
            *(
                " / ".join(
                    f"{r['writes_by_resource'].get(f'{q}/status', 0) / max(1, r['admissions']):.2f}"
                    for q in ("clusterqueues", "localqueues")
                )
                for r in results
            ),
        ],
        ["Event writes per admission", "", *(f"{r['event_writes_per_admission']:.2f}" for r in results)],
        ["admissions/s the QPS allows", "", *(f"{r['qps_bound_admissions_per_s']}" for r in results)],
        [
            "controller CPU / peak RSS",
            "",
            *(f"{r['controller_cpu_s']} s / {r['controller_peak_rss_mib']:.0f} MiB" for r in results),
        ],
        ["scheduling loop CPU (its busiest thread)", "", *(f"{r['loop_cpu_s']} s" for r in results)],
        ["API server + runner CPU", "", *(f"{r['apiserver_and_runner_cpu_s']} s" for r in results)],
    ]
    widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(head, widths, strict=True)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip() for x in lines]
    out.append(
        "time to admission: Admitted's lastTransitionTime - creationTimestamp in whole seconds, as Kueue's "
        "recorder; in parentheses, create -> admission write in ms. Writes by resource: "
        + "; ".join(
            f"QPS {r['qps']:g}: " + ", ".join(f"{k} {v:,}" for k, v in r["writes_by_resource"].items())
            for r in results
        )
    )
    return "\n".join(out) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", choices=sorted(K.SHAPES), default="baseline")
    p.add_argument(
        "--qps",
        type=float,
        action="append",
        help="the controller's client QPS, repeatable (default: 50 and 1000); burst 2 x QPS unless --burst",
    )
    p.add_argument("--burst", type=int, default=None)
    p.add_argument("--events", choices=("on", "off"), default="on", help="Kueue's Events (default on)")
    p.add_argument("--events-qps", type=float, default=None, help="default: the controller's QPS")
    p.add_argument("--events-burst", type=int, default=None, help="default: the controller's burst")
    p.add_argument("--runner-qps", type=float, default=1000.0, help="the runner's client QPS (1000)")
    p.add_argument("--runner-burst", type=int, default=2000, help="the runner's client burst (2000)")
    p.add_argument("--runner-threads", type=int, default=16, help="the runner's requests in flight at most")
    p.add_argument("--workers", type=int, default=32, help="the controller's --workers (32)")
    p.add_argument("--scale", type=float, default=1.0, help="each set's count times this (a smoke test: 0.1)")
    p.add_argument(
        "--timeout", type=float, default=None, help="seconds (default: twice Kueue's runner --timeout)"
    )
    p.add_argument("--json", default=None, help="also write the results to this file")
    p.add_argument("--progress", type=float, default=30.0, help="seconds between progress lines (30)")
    args = p.parse_args()
    # SIGTERM (or SIGINT, ignored in a background job) stops the run and its controller
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    shape = K.SHAPES[args.shape]
    if args.scale != 1.0:
        shape = shape.scaled(args.scale)
    args.timeout = args.timeout or 2 * shape.kueue.timeout_s
    results = []
    for qps in args.qps or [50.0, 1000.0]:
        r = run_once(args, shape, qps, args.burst or int(2 * qps))
        print(json.dumps(r), flush=True)
        results.append(r)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print("\n" + table(shape, results), file=sys.stderr)
    return 0 if all(r["done"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
