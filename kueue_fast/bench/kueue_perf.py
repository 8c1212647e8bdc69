"""Kueue's own scheduler performance test, as kueue-fast inputs.

Kueue's test (``test/performance/scheduler`` in kubernetes-sigs/kueue) creates
ClusterQueues in cohorts and, for every ClusterQueue, streams of Workloads of a
few classes at fixed intervals; a runner marks each admitted Workload finished
once its run time has passed, and the run ends when no ClusterQueue holds a
pending or admitted Workload. The shapes below are the facts of its generator
configs (``configs/<name>/generator.yaml``) and its published figures
(``configs/<name>/rangespec.yaml``: the threshold and, in comments, the mean of
the calibration runs); the objects are named as its generator
(``runner/generator/generator.go``) names them:

* ResourceFlavor ``rf``;
* per cohort ``cohort-<c>``, ClusterQueues ``cq-0-<q>-cohort-<c>``: one
  resource group with ``cpu`` in ``rf`` (``nominalQuota``, ``borrowingLimit``),
  ``preemption`` ``reclaimWithinCohort``/``withinClusterQueue``, Kueue's
  defaults otherwise (BestEffortFIFO), a Namespace and a LocalQueue of the
  ClusterQueue's name;
* per ClusterQueue and workload set ``s`` (one goroutine each in Kueue's
  generator, ``generateWlSet``), Workload ``<class>-<s>-<i>-0`` created at
  ``(i + 1) x creationIntervalMs`` (it waits the interval before each
  create), with one pod set ``main`` of one pod requesting ``request`` cpu,
  ``spec.priority``, and the labels of its run time and class.

TAS (``configs/tas``) is not here: ``bench/bench_tas.py`` (``drain``) replays
it with its run times, on the engine alone (``simulate`` takes no topology
requests in its traces).

Used by ``kueue-fast bench kueue-perf`` (the simulator replay) and
``bench/bench_kueue_perf.py`` (the controller against the in-process API
server).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tempfile
from dataclasses import dataclass, replace
from typing import Any

from .child import run_child

KUEUE_API = "kueue.x-k8s.io/v1beta2"
FLAVOR = "rf"  # generator.go: defaultResourceFlavorName
RUNNING_MS_LABEL = "kueue.x-k8s.io/performance-scheduler-running-ms"
CLASS_LABEL = "kueue.x-k8s.io/performance-scheduler-class"
CQ_CLASS = "cq"
COHORT_CLASS = "cohort"


@dataclass(frozen=True)
class WorkloadSet:
    """One ``workloadsSets`` entry of a ClusterQueue: ``count`` Workloads of
    one class, one every ``interval_ms``."""

    cls: str
    count: int
    interval_ms: int
    runtime_ms: int
    priority: int
    cpu: str  # the pod's request, a quantity

    @property
    def cpu_milli(self) -> int:
        from ..api.quantity import parse_quantity

        return int(parse_quantity(self.cpu, "cpu"))


@dataclass(frozen=True)
class KueueFigures:
    """What rangespec.yaml publishes for a config: thresholds, and the mean
    of the calibration runs its comments give."""

    runs: int
    wall_ms: int  # mean of minimalkueue's wall time (process start to exit)
    max_wall_ms: int  # the threshold: cmd.maxWallMs
    usage_pct: float  # mean ClusterQueue usage of the "cq" class
    min_usage_pct: float  # threshold: clusterQueueClassesMinUsage.cq
    admission_ms: dict[str, int]  # mean time to admission per class
    max_admission_ms: dict[str, int]  # thresholds: wlClassesMaxAvgTimeToAdmissionMs
    timeout_s: int  # the runner's --timeout in Kueue's make target


@dataclass(frozen=True)
class PerfShape:
    name: str
    cohorts: int
    queues: int  # ClusterQueues per cohort
    nominal_cpu: str
    borrowing_limit_cpu: str
    reclaim_within_cohort: str
    within_cluster_queue: str
    sets: tuple[WorkloadSet, ...]
    kueue: KueueFigures

    @property
    def n_cluster_queues(self) -> int:
        return self.cohorts * self.queues

    @property
    def n_workloads(self) -> int:
        return self.n_cluster_queues * sum(s.count for s in self.sets)

    def cluster_queue_names(self) -> list[str]:
        # generateQueue: "%s-%d-%d-%s" (class, queue set index, queue index, cohort)
        return [
            f"{CQ_CLASS}-0-{q}-{COHORT_CLASS}-{c}" for c in range(self.cohorts) for q in range(self.queues)
        ]

    def scaled(self, factor: float) -> PerfShape:
        """The same shape with every set's count scaled (at least 1): --quick."""
        sets = tuple(replace(s, count=max(1, round(s.count * factor))) for s in self.sets)
        return replace(self, sets=sets)


# configs/baseline/{generator,rangespec}.yaml
BASELINE = PerfShape(
    name="baseline",
    cohorts=5,
    queues=6,
    nominal_cpu="20",
    borrowing_limit_cpu="100",
    reclaim_within_cohort="Any",
    within_cluster_queue="LowerPriority",
    sets=(
        WorkloadSet("small", 350, 100, 200, 50, "1"),
        WorkloadSet("medium", 100, 500, 500, 100, "5"),
        WorkloadSet("large", 50, 1200, 1000, 200, "20"),
    ),
    kueue=KueueFigures(
        runs=5,
        wall_ms=351_116,
        max_wall_ms=425_000,
        usage_pct=55.9,
        min_usage_pct=50.0,
        admission_ms={"small": 215_468, "medium": 76_768, "large": 16_501},
        max_admission_ms={"small": 260_000, "medium": 90_000, "large": 23_000},
        timeout_s=600,  # the runner's default --timeout (10m)
    ),
)

# configs/large-scale/{generator,rangespec}.yaml
LARGE_SCALE = PerfShape(
    name="large-scale",
    cohorts=10,
    queues=100,
    nominal_cpu="20",
    borrowing_limit_cpu="100",
    reclaim_within_cohort="Any",
    within_cluster_queue="LowerPriority",
    sets=(
        WorkloadSet("small", 35, 60, 150, 50, "1"),
        WorkloadSet("medium", 11, 300, 350, 100, "5"),
        WorkloadSet("large", 4, 700, 700, 200, "20"),
    ),
    kueue=KueueFigures(
        runs=19,
        wall_ms=1_179_411,
        max_wall_ms=1_416_000,
        usage_pct=38.64,
        min_usage_pct=31.6,
        admission_ms={"small": 700_379, "medium": 256_413, "large": 105_604},
        max_admission_ms={"small": 841_000, "medium": 308_000, "large": 128_000},
        timeout_s=1800,  # --timeout=30m
    ),
)

SHAPES = {s.name: s for s in (BASELINE, LARGE_SCALE)}


@dataclass(frozen=True)
class Arrival:
    """One Workload of the stream: created ``at_ms`` after the start."""

    at_ms: int
    namespace: str
    name: str
    set: WorkloadSet


def arrivals(shape: PerfShape) -> list[Arrival]:
    """Every Workload of the run in creation order (ties: ClusterQueue, set)."""
    out = []
    for ns in shape.cluster_queue_names():
        for s_idx, s in enumerate(shape.sets):
            for i in range(s.count):
                # generateWlSet: "%s-%d-%d-%d" (class, set index, sequence, template index)
                out.append(Arrival((i + 1) * s.interval_ms, ns, f"{s.cls}-{s_idx}-{i}-0", s))
    out.sort(key=lambda a: a.at_ms)  # stable: ClusterQueue then set order among ties
    return out


def config_objects(shape: PerfShape) -> list[dict[str, Any]]:
    """ResourceFlavor, and per ClusterQueue its Namespace and LocalQueue."""
    objs: list[dict[str, Any]] = [
        {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": FLAVOR}, "spec": {}}
    ]
    for name in shape.cluster_queue_names():
        cohort = name.split("-", 3)[3]
        objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        objs.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "ClusterQueue",
                "metadata": {"name": name, "labels": {CLASS_LABEL: CQ_CLASS}},
                "spec": {
                    "cohortName": cohort,
                    "namespaceSelector": {},
                    "queueingStrategy": "BestEffortFIFO",
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [
                                {
                                    "name": FLAVOR,
                                    "resources": [
                                        {
                                            "name": "cpu",
                                            "nominalQuota": shape.nominal_cpu,
                                            "borrowingLimit": shape.borrowing_limit_cpu,
                                        }
                                    ],
                                }
                            ],
                        }
                    ],
                    "preemption": {
                        "reclaimWithinCohort": shape.reclaim_within_cohort,
                        "withinClusterQueue": shape.within_cluster_queue,
                    },
                },
            }
        )
        objs.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "LocalQueue",
                "metadata": {"name": name, "namespace": name},
                "spec": {"clusterQueue": name},
            }
        )
    return objs


def workload_object(a: Arrival) -> dict[str, Any]:
    """The Workload Kueue's generator creates (utiltestingapi.MakeWorkload
    with Queue, Label x2, Priority and Request)."""
    s = a.set
    return {
        "apiVersion": KUEUE_API,
        "kind": "Workload",
        "metadata": {
            "name": a.name,
            "namespace": a.namespace,
            "labels": {RUNNING_MS_LABEL: str(s.runtime_ms), CLASS_LABEL: s.cls},
        },
        "spec": {
            "queueName": a.namespace,
            "priority": s.priority,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": s.cpu}}}],
                        }
                    },
                }
            ],
        },
    }


def trace_csv(shape: PerfShape) -> str:
    """The Workloads as a ``kueue-fast simulate --trace`` CSV (seconds)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["arrival", "namespace", "queue", "name", "priority", "duration", "cpu"])
    for a in arrivals(shape):
        s = a.set
        w.writerow(
            [f"{a.at_ms / 1000:g}", a.namespace, a.namespace, a.name, s.priority, s.runtime_ms / 1000, s.cpu]
        )
    return buf.getvalue()


def write_scenario(shape: PerfShape, directory: str) -> dict[str, str]:
    """``DIR/cluster.yaml`` (the configuration) and ``DIR/trace.csv``."""
    import yaml

    os.makedirs(directory, exist_ok=True)
    paths = {
        "cluster": os.path.join(directory, "cluster.yaml"),
        "trace": os.path.join(directory, "trace.csv"),
    }
    with open(paths["cluster"], "w", encoding="utf-8") as f:
        yaml.safe_dump_all(config_objects(shape), f, sort_keys=False)
    with open(paths["trace"], "w", encoding="utf-8") as f:
        f.write(trace_csv(shape))
    return paths


def class_of(name: str) -> str:
    """A Workload's class from its generated name (``<class>-<s>-<i>-0``)."""
    return name.rsplit("-", 3)[0]


def usage_pct(cpu_milli_ms: float, shape: PerfShape, span_ms: float) -> float:
    """Kueue's checker: CPU used (mCPU x ms, summed over the ClusterQueues)
    over their nominal quota times the time monitored, in percent
    (checker_test.go, TestScalability/ClusterQueueClasses)."""
    from ..api.quantity import parse_quantity

    nominal_milli = int(parse_quantity(shape.nominal_cpu, "cpu")) * shape.n_cluster_queues
    return 100.0 * cpu_milli_ms / (nominal_milli * span_ms) if span_ms > 0 else 0.0


# --- the simulator replay: `kueue-fast bench kueue-perf` -----------------------------------------


def simulate_command(paths: dict[str, str], engine: str, report_dir: str) -> list[str]:
    """``kueue-fast simulate`` on the shape: run until every Workload finished
    (``--drain``); an evicted Workload's quota is free at the end of the cycle
    (``--termination-delay 0``: the shape has no pods, and Kueue's runner
    clears an evicted Workload's reservation as soon as it sees it)."""
    return [
        *(sys.executable, "-m", "kueue_fast", "simulate", paths["cluster"], "--trace", paths["trace"]),
        *("--drain", "--termination-delay", "0", "--no-progress", "-o", "json"),
        *("--report", report_dir, "--engine", engine),
    ]


def simulation_figures(shape: PerfShape, workloads_csv: str) -> dict[str, Any]:
    """Kueue's summary figures from the simulator's workloads.csv: the
    makespan (from the start to the last finish; Kueue's runner ends there),
    per class the mean time to admission (the last admission minus the
    creation, as Kueue's recorder keeps it) and the evictions, and the
    ClusterQueue usage over the makespan (quota held by admitted runs,
    including those a preemption cut short)."""
    cpu = {s.cls: s.cpu_milli for s in shape.sets}
    classes: dict[str, dict[str, float]] = {
        s.cls: {"n": 0, "admit_s": 0.0, "evictions": 0} for s in shape.sets
    }
    makespan_s = held = 0.0
    unfinished = 0
    with open(workloads_csv, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            c = classes[class_of(row["name"])]
            c["n"] += 1
            c["evictions"] += int(row["evictions"])
            if row["state"] != "finished":
                unfinished += 1
                continue
            finished, last = float(row["finished_s"]), float(row["last_admitted_s"])
            c["admit_s"] += last - float(row["arrival_s"])
            held += cpu[class_of(row["name"])] * ((finished - last) + float(row["lost_work_s"])) * 1000
            makespan_s = max(makespan_s, finished)
    return {
        "makespan_s": makespan_s,
        "unfinished": unfinished,
        "usage_pct": usage_pct(held, shape, makespan_s * 1000),
        "classes": {
            k: {
                "workloads": int(v["n"]),
                "mean_admission_s": v["admit_s"] / v["n"] if v["n"] else 0.0,
                "evictions": int(v["evictions"]),
            }
            for k, v in classes.items()
        },
    }


def run_simulation(shape: PerfShape, engine: str, repeat: int = 3) -> dict[str, Any]:
    """The shape through ``kueue-fast simulate`` in a fresh process, best of
    ``repeat`` by the engine's time (the event loop, ``timings.simulate_s``)."""
    best: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="kueue-fast-perf-") as tmp:
        paths = write_scenario(shape, tmp)
        for i in range(repeat):
            report = os.path.join(tmp, f"report-{i}")
            cmd = simulate_command(paths, engine, report)
            child = run_child(cmd)
            if child.returncode != 0:
                raise RuntimeError(
                    f"{' '.join(cmd)} failed ({child.returncode}):\n{child.err.strip()[-2000:]}"
                )
            out = json.loads(child.out)
            res = {
                "engine": out["engine"],
                "simulate_s": out["timings"]["simulate_s"],
                "wall_s": child.wall_s,
                "peak_rss_mb": child.peak_rss_mb,
                "cycles": out["cycles"],
                "admissions": out["totals"]["admissions"],
                "preemptions": out["totals"]["preemptions"],
                **simulation_figures(shape, os.path.join(report, "workloads.csv")),
            }
            if best is None or res["simulate_s"] < best["simulate_s"]:
                best = res
    assert best is not None
    best["runs"] = repeat
    return best


QUICK_SCALE = 0.1  # --quick: a tenth of each set's Workloads


def bench_kueue_perf(engines: list[str], quick: bool = False, repeat: int = 3) -> list[dict[str, Any]]:
    """One row per shape: Kueue's published figures and the simulator's, per engine."""
    rows = []
    for shape in SHAPES.values():
        run_shape = shape.scaled(QUICK_SCALE) if quick else shape
        row: dict[str, Any] = {
            "case": "kueue-perf",
            "shape": shape.name,
            "workloads": run_shape.n_workloads,
            "scale": QUICK_SCALE if quick else 1.0,
        }
        for engine in engines:
            row[engine] = run_simulation(run_shape, engine, repeat)
        rows.append(row)
    return rows


def _s(ms: float) -> str:
    return f"{ms / 1000:,.1f} s"


def format_kueue_perf_table(rows: list[dict[str, Any]]) -> str:
    """Per shape, Kueue's published figures beside the simulator's."""
    out: list[str] = []
    for row in rows:
        shape = SHAPES[row["shape"]]
        k = shape.kueue
        engines = [e for e in ("native", "reference") if e in row]
        head = [
            f"{shape.name}: {shape.n_cluster_queues:,} ClusterQueues in {shape.cohorts} cohorts, "
            f"{row['workloads']:,} Workloads",
            f"Kueue (mean of {k.runs} runs; threshold)",
        ]
        head += [f"simulate, {e}" for e in engines]
        lines = [["wall time", f"{_s(k.wall_ms)} ({_s(k.max_wall_ms)})", *("" for _ in engines)]]
        lines.append(["makespan (simulated clock)", "", *(f"{row[e]['makespan_s']:,.1f} s" for e in engines)])
        for s in shape.sets:
            lines.append(
                [
                    f"time to admission, {s.cls} (mean)",
                    f"{_s(k.admission_ms[s.cls])} ({_s(k.max_admission_ms[s.cls])})",
                    *(f"{row[e]['classes'][s.cls]['mean_admission_s']:,.1f} s" for e in engines),
                ]
            )
        lines.append(
            [
                "ClusterQueue usage",
                f"{k.usage_pct:.1f}% ({k.min_usage_pct:g}%)",
                *(f"{row[e]['usage_pct']:.1f}%" for e in engines),
            ]
        )
        lines.append(["evictions", "", *(f"{row[e]['preemptions']:,}" for e in engines)])
        lines.append(["scheduling cycles", "", *(f"{row[e]['cycles']:,}" for e in engines)])
        lines.append(
            ["engine time (the event loop)", "", *(f"{row[e]['simulate_s']:.2f} s" for e in engines)]
        )
        lines.append(
            [
                "process wall / peak RSS",
                "",
                *(f"{row[e]['wall_s']:.2f} s / {row[e]['peak_rss_mb']:.0f} MB" for e in engines),
            ]
        )
        widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
        out.append("  ".join(c.ljust(w) for c, w in zip(head, widths, strict=True)).rstrip())
        out.append("  ".join("-" * w for w in widths))
        out += ["  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip() for x in lines]
        out.append("")
    if any(r["scale"] != 1.0 for r in rows):
        out.append(
            f"note: --quick: {QUICK_SCALE:g} of each set's Workloads; Kueue's figures are the full shape's"
        )
    runs = max((r[e]["runs"] for r in rows for e in ("native", "reference") if e in r), default=0)
    out.append(
        "note: Kueue's figures are rangespec.yaml's (test/performance/scheduler/configs/<shape>): "
        "minimalkueue against envtest in real time, its client at 50 QPS; its wall time is bound by that "
        "budget. The simulator replays the same stream on its own clock with no API server: the makespan "
        f"is what quota alone allows. Best of {runs} by engine time; `kueue-fast simulate` with --drain "
        "--termination-delay 0."
    )
    return "\n".join(out) + "\n"
