"""The named defaults of ``simulate``, ``trace``, ``compare``, ``sweep`` and
``bench``: the one place the CLI's options (and their help), ``run()``,
``simulate()`` and the scenario read them from. No imports: the CLI builds
every parser at start (engine/contract.py, for ENGINES, imports nothing heavy).
"""

from __future__ import annotations

# the engines a command can choose (engine/contract.py make_engine builds them)
from ..engine.contract import ENGINES as ENGINES

NS = 1_000_000_000

# Where the reports go.
DEFAULT_REPORT_DIR = "simulation-report"
COMPARE_REPORT_DIR = "compare-report"
SWEEP_REPORT_DIR = "sweep-report"

# A generated trace: workloads, span, offered load per ClusterQueue over the
# quota its workloads can use (capacity.py; for manifests: the built-in
# scenario has its own per-team loads), seed.
DEFAULT_WORKLOADS = 100_000
DEFAULT_DAYS = 7.0
DEFAULT_LOAD = 0.7
DEFAULT_SEED = 0
# Monday 2025-01-06 00:00:00 UTC: the simulated week starts on a Monday.
DEFAULT_START_NS = 1736121600 * NS

# Cycles at one instant before the clock moves on unsettled.
DEFAULT_MAX_CYCLES = 10_000
# The pod-termination delay: Kubernetes' default terminationGracePeriodSeconds.
# A pod that does not exit on SIGTERM is killed after 30 s, and batch pods
# (training loops that checkpoint on SIGTERM) commonly use all of it; Kueue
# releases an evicted workload's quota only once its job has no active pod.
DEFAULT_TERMINATION_DELAY_S = 30.0
# waitForPodsReady: the median pod start-up (image pull, scheduling, init) of a
# log-normal with sigma 1 (half the jobs within the median, 1 in 20 beyond 5x it).
DEFAULT_POD_STARTUP_S = 30.0
# Time bins of the series (a week in half-hour bins).
DEFAULT_BINS = 336

# Output formats of -o/--output.
SIMULATE_FORMATS = ("table", "json")
TRACE_FORMATS = ("csv", "jsonl")
