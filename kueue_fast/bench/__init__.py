"""``kueue-fast bench``: the standard benchmarks, native against reference.

Cases:

* ``drain``: 100k pending workloads over 1000 ClusterQueues in 100 cohorts
  (3 resources, 2-3 flavors per ClusterQueue), cycles until stable;
* ``preemption``: one cohort of 100 ClusterQueues holding 10k admitted
  low-priority workloads, then 1k high-priority arrivals that must preempt
  within their ClusterQueue and by reclaiming borrowed quota;
* ``simulate``: the default simulation (report included);
* ``load`` (only when named): 100k Workloads (the drain case's manifests) read
  from one YAML file and from one JSON List (``kubectl get -o json``), to a
  parsed ClusterState and to a Cluster on the engine, with the split per
  stage (read+parse, build_state, Cluster construction);
* ``kueue-perf`` (only when named): Kueue's own scheduler performance test
  shapes (``kueue_perf``) through ``kueue-fast simulate``, beside the figures
  Kueue publishes for them.

Each case runs in a fresh subprocess per engine, so that its peak RSS is its
own. Where the reference engine would take too long it runs a smaller
instance of the same generator; its time is scaled to the full size and the
table says so. The generators are public (``drain_case``,
``preemption_case``, ``drain_objects``) for ``bench/`` to import.

The package, by job: ``inputs`` (the generators and their files), ``cases``
(each case's sizes and how it runs), ``e2e`` (``kueue-fast schedule`` end to
end), ``kueue_perf`` (Kueue's performance test shapes, their simulation and
table), ``child`` (a command in a fresh process), ``command`` (the CLI handler
and the tables); ``python -m kueue_fast.bench _case`` (``__main__``) runs
one case for ``run_in_subprocess``.
"""

from __future__ import annotations

from ..commands.bench import CASE_TITLES, E2E_TITLES, bench, format_e2e_table, format_table, run_bench
from .cases import CASES, EXTRA, FULL, QUICK, REFERENCE, _engine_for, run_case, run_in_subprocess
from .child import ChildRun, run_child
from .e2e import (
    E2E_FORMATS,
    E2E_FULL,
    E2E_INPUTS,
    E2E_PARTS,
    E2E_QUICK,
    E2E_REFERENCE,
    E2E_VERSION,
    bench_e2e,
    e2e_cache_dir,
    e2e_input_files,
    run_schedule_e2e,
)
from .inputs import (
    BASE_NS,
    FLAVORS,
    GI,
    NS,
    PRIORITIES,
    RESOURCES,
    Case,
    drain_case,
    drain_objects,
    drain_size,
    long_drain_case,
    preemption_case,
    write_case_files,
    write_load_files,
)

__all__ = [
    "BASE_NS",
    "CASES",
    "CASE_TITLES",
    "E2E_FORMATS",
    "E2E_FULL",
    "E2E_INPUTS",
    "E2E_PARTS",
    "E2E_QUICK",
    "E2E_REFERENCE",
    "E2E_TITLES",
    "E2E_VERSION",
    "EXTRA",
    "FLAVORS",
    "FULL",
    "GI",
    "NS",
    "PRIORITIES",
    "QUICK",
    "REFERENCE",
    "RESOURCES",
    "Case",
    "ChildRun",
    "_engine_for",
    "bench",
    "bench_e2e",
    "drain_case",
    "drain_objects",
    "drain_size",
    "e2e_cache_dir",
    "e2e_input_files",
    "format_e2e_table",
    "format_table",
    "long_drain_case",
    "preemption_case",
    "run_bench",
    "run_case",
    "run_child",
    "run_in_subprocess",
    "run_schedule_e2e",
    "write_case_files",
    "write_load_files",
]
