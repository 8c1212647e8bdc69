"""The report folder: metrics.json, workloads.csv, the PNG charts of
``plots.PLOTS``, one self-contained HTML page (charts embedded as base64),
and the summary table and churn summary for the terminal.
"""

from __future__ import annotations

import base64
import html
import json
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .metrics import Churn, Metrics, QueueStats, fmt_bin, fmt_duration
from .plots import NO_CHARTS, PLOTS, Plot, charts_available, render_plots
from .result import NEVER, STATE_NAMES, TIMES_KEPT, SimResult

NS = 1_000_000_000


@dataclass(frozen=True)
class Column:
    """A column of the summary table: its title, its cell per ClusterQueue,
    its cell on the total line, and (``shown_when``) the totals that must not
    all be 0 for it to be shown (admission checks, waitForPodsReady)."""

    title: str
    cell: Callable[[QueueStats, float], str]
    total: Callable[[dict[str, Any]], str] = lambda t: ""
    shown_when: tuple[str, ...] = ()


def _count(key: str) -> Column:
    return Column(key, lambda q, _: f"{getattr(q, key):,}", lambda t: f"{t[key]:,}")


def _borrowing_cell(q: QueueStats, simulated_s: float) -> str:
    share = q.borrowing_s / simulated_s if simulated_s > 0 else 0.0
    return f"{fmt_duration(q.borrowing_s)} ({share * 100:.0f}%)"


CHECK_TOTALS = ("rejected", "check_retries", "reserved")
WAIT_TOTALS = ("pods_ready_timeouts", "deactivated")
COLUMNS = (
    Column("ClusterQueue", lambda q, _: q.name + ("" if q.active else " (inactive)"), lambda t: "total"),
    _count("admitted"),
    _count("pending"),
    Column("preempted", lambda q, _: f"{q.preemptions:,}", lambda t: f"{t['preemptions']:,}"),
    # admission checks, waitForPodsReady: two counts in one column each, within 120 columns
    Column(
        "rejected/retry",
        lambda q, _: f"{q.rejected:,}/{q.check_retries:,}",
        lambda t: f"{t['rejected']:,}/{t['check_retries']:,}",
        CHECK_TOTALS,
    ),
    Column(
        "timeouts/deact",
        lambda q, _: f"{q.pods_ready_timeouts:,}/{q.deactivated:,}",
        lambda t: f"{t['pods_ready_timeouts']:,}/{t['deactivated']:,}",
        WAIT_TOTALS,
    ),
    Column("wait p50", lambda q, _: _wait(q.wait_p50_s, q.wait_p50_censored)),
    Column("p95", lambda q, _: _wait(q.wait_p95_s, q.wait_p95_censored)),
    Column("p99", lambda q, _: _wait(q.wait_p99_s, q.wait_p99_censored)),
    Column("util", lambda q, _: f"{q.utilization * 100:.0f}%" + ("*" if q.utilization_of == "reach" else "")),
    Column("borrowing", _borrowing_cell),
)

TABLE_LEGEND = (
    "admitted: workloads admitted at least once (quota reserved and every admission check Ready); "
    "pending: still waiting at the end; preempted: evictions of its workloads by preemption; "
    "rejected: deactivated by a Rejected admission check (they held quota, never ran); retries: "
    "evictions by an admission check in Retry; timeouts: evictions by waitForPodsReady's timeout; "
    "deact: deactivated past its backoffLimitCount; wait: per workload, time in its queue until "
    "admission (after an eviction, again from its return to the queue), percentiles by nearest rank; "
    "'>': at least this long, the percentile falls on a workload still waiting at the end (censored: "
    "counted as waiting until the end); util: time-mean use of its dominant resource over its capacity "
    "(nominal quota, plus an equal share of cohort-owned quota: what the offered load is measured "
    "against; over 100% when borrowing beyond it), or, marked '*' for a ClusterQueue without any, over "
    "the most its cohorts could lend it; borrowing: time spent above its nominal quota."
)


REACH_NOTE = (
    "*: no quota of its own nor cohort-owned quota above it: util is over the most its cohorts could lend "
    "it (nominal quota of the tree within its borrowing limit)"
)


def inactive_lines(queues: Sequence[QueueStats]) -> list[str]:
    """Why each inactive ClusterQueue admits nothing: Kueue's reason and message."""
    return [
        f"inactive: {q.name} admits nothing ({q.inactive_reason}: {q.inactive_message}); "
        f"{q.pending:,} of its workloads are still pending"
        for q in queues
        if not q.active
    ]


def _wait(s: float, censored: bool) -> str:
    return (">" if censored else "") + fmt_duration(s)


def table_columns(totals: dict[str, Any]) -> list[Column]:
    """The columns of a run's table: the optional ones when their totals are not all 0."""
    return [c for c in COLUMNS if not c.shown_when or any(totals.get(k) for k in c.shown_when)]


def table_rows(queues: Sequence[QueueStats], totals: dict[str, Any]) -> list[list[str]]:
    simulated_s = totals["simulated_s"]
    return [[c.cell(q, simulated_s) for c in table_columns(totals)] for q in queues]


def summary_table(metrics: Metrics) -> str:
    t = metrics.totals
    columns = table_columns(t)
    header = [c.title for c in columns]
    rows = [*table_rows(metrics.queues, t), [c.total(t) for c in columns]]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(columns))]

    def line(r: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows[:-1]]
    out += ["  ".join("-" * w for w in widths), line(rows[-1])]
    # util above 100% looks like a bug unless the table says what it divides by
    notes = [
        "util: mean use of the dominant resource over capacity (nominal quota plus an equal share of any "
        "cohort-owned quota above it; above 100% when borrowing beyond it); borrowing: time spent above "
        "nominal quota (share of the run)"
    ]
    if any(q.utilization_of == "reach" for q in metrics.queues):
        notes.append(REACH_NOTE)
    notes += inactive_lines(metrics.queues)
    if t.get("censored_waits"):
        notes.append(
            f"'>': a lower bound ({t['censored_waits']:,} workloads still waiting at the end count as "
            "waiting until the end)"
        )
    for note in notes:  # within the table's 120 columns
        out += textwrap.wrap(note, 120, subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(out) + "\n"


def manifest_line(result: SimResult) -> str:
    """How many of the manifests' workloads hold quota from the start and
    until when, and how long pending ones run once admitted (for ever without
    --existing-runtime); "" when none."""
    parts = []
    held = result.manifest_held_until_ns
    if held:
        n = len(held)
        what = f"{n:,} Workload{'s' if n != 1 else ''} of the manifests hold{'s' if n == 1 else ''} quota"
        ends = [t for t in held if t != NEVER]
        if not ends:
            parts.append(f"{what} from the start to the end of the run")
        else:
            first, last = (fmt_duration((t - result.start_ns) / NS) for t in (min(ends), max(ends)))
            until = f"until {first}" if first == last else f"until {first} to {last}"
            never = f"; {len(held) - len(ends):,} never finish" if len(ends) < len(held) else ""
            had_run = "(--existing-runtime, less what each had run)"
            parts.append(f"{what} from the start {until} into the run {had_run}{never}")
    pending = result.manifest_pending_never_finish
    if pending:
        one = pending == 1
        parts.append(
            f"{pending:,} pending Workload{'' if one else 's'} of the manifests "
            f"never finish{'es' if one else ''} once admitted: {'it holds' if one else 'they hold'} quota "
            "from admission to the end of the run"
        )
    runs = result.manifest_pending_run_ns
    if runs:
        one = len(runs) == 1
        shortest, longest = (fmt_duration(t / NS) for t in (min(runs), max(runs)))
        run_for = shortest if shortest == longest else f"{shortest} to {longest}"
        parts.append(
            f"{len(runs):,} pending Workload{'' if one else 's'} of the manifests "
            f"run{'s' if one else ''} {run_for} once admitted (--existing-runtime)"
        )
    if not parts:
        return ""
    forever = NEVER in held or pending > 0
    return "; ".join(parts) + (" (--existing-runtime SECONDS gives them a run time)" if forever else "")


def churn_lines(c: Churn) -> list[str]:
    """The churn summary as lines of text (terminal, HTML)."""
    if not c:
        return []
    out = []
    if c.churning:
        out.append(
            f"Repeated preemption: {c.churning:,} workloads were evicted {c.threshold} times or more, in "
            f"ClusterQueues {', '.join(c.cluster_queues)}"
            + (f" (cohorts {', '.join(c.cohorts)})" if c.cohorts else "")
            + "."
        )
        out.append(
            "  Evicted most: "
            + ", ".join(
                f"{w['workload']} ({w['cluster_queue']}) {w['evictions']:,} times" for w in c.workloads[:5]
            )
        )
        if c.preemptors:
            out.append(
                "  Caused most evictions: "
                + ", ".join(f"{w['workload']} {w['evictions_caused']:,} evictions" for w in c.preemptors[:5])
            )
        out.append("  Who preempts whom, and the policy that allows it:")
        for p in c.pairs[:8]:
            out.append(
                f"    {p['preemptor_cluster_queue']} -> {p['victim_cluster_queue']} {p['reason']}: "
                f"{p['evictions']:,} evictions; {p['policy']}"
            )
        out.append(
            "  An evicted workload goes back to its queue as soon as its job has stopped, with no backoff "
            "(as in Kueue), is admitted again when quota frees and can be evicted again; policies that let "
            "two queues take quota from each other keep going round (docs/simulator.md, Preemption churn)."
        )
    if c.unsettled:
        out.append(
            f"{c.unsettled:,} instants did not settle (scheduling cycles kept admitting and evicting until "
            "the limit per instant)."
        )
        for u in c.unsettled_instants[:3]:
            pairs = "; ".join(
                f"{p['preemptor_cluster_queue']} -> {p['victim_cluster_queue']} {p['reason']} "
                f"{p['evictions']:,}x ({p['policy']})"
                for p in u["pairs"][:4]
            )
            victims = ", ".join(f"{v['workload']} {v['evictions']:,}x" for v in u["victims"][:5])
            out.append(
                f"  at {fmt_duration(u['time_s'])}: {u['cycles']:,} cycles, {u['admissions']:,} admissions, "
                f"{u['preemptions']:,} evictions; {pairs}; evicted most: {victims}"
            )
    return out


# --- files -------------------------------------------------------------------------------------------


def _by_resource(d: dict[str, dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    return {r: {k: v.round(4).tolist() for k, v in m.items()} for r, m in d.items()}


def metrics_json(result: SimResult, metrics: Metrics, extra: dict[str, Any]) -> dict[str, Any]:
    s = metrics.series
    return {
        "engine": result.engine,
        "run": {
            "workloads": result.n_workloads,
            "manifest_workloads": result.n_manifest,
            # those holding quota from the start, and when the last releases it (None: never)
            "manifest_holding_quota": len(result.manifest_held_until_ns),
            "manifest_pending_never_finish": result.manifest_pending_never_finish,
            "manifest_pending_with_runtime": len(result.manifest_pending_run_ns),
            "manifest_held_until_s": (max(result.manifest_held_until_ns) - result.start_ns) / NS
            if result.manifest_held_until_ns and NEVER not in result.manifest_held_until_ns
            else None,
            "start": result.start_ns // NS,
            "end": result.end_ns // NS,
            "termination_delay_s": result.termination_delay_ns / NS,
            "max_cycles_per_instant": result.max_cycles,
            "cycles": result.cycles,
            # those the engine ran: a cycle in which every cohort tree with a head
            # would only replay its last attempts is counted, not run
            "cycles_run": result.cycles_run,
            "instants": result.instants,
            "unsettled_instants": result.unsettled,
            "candidate_evaluations": result.candidate_evaluations,
            "simulation_wall_s": round(result.wall_s, 4),
            "schedule_s": round(result.schedule_s, 4),
            **extra,
        },
        "totals": metrics.totals,
        "cluster_queues": [q.to_json() for q in metrics.queues],
        "churn": metrics.churn.to_json(),
        "series": {
            "bin_s": s.bin_s,
            "edges_s": s.edges_s.round(3).tolist(),
            "utilization": {
                r: {f: v.round(5).tolist() for f, v in d.items()} for r, d in s.utilization.items()
            },
            "utilization_stopping": {
                r: {f: v.round(5).tolist() for f, v in d.items()} for r, d in s.utilization_stopping.items()
            },
            "pending": {k: v.round(3).tolist() for k, v in s.pending.items()},
            "borrowed": _by_resource(s.borrowed),
            "lent": _by_resource(s.lent),
            "cohort_borrowed": _by_resource(s.cohort_borrowed),
            "cohort_lent": _by_resource(s.cohort_lent),
            "over_quota": {r: v.round(4).tolist() for r, v in s.over_quota.items()},
            "preemptions": {k: v.astype(int).tolist() for k, v in s.preemptions.items()},
        },
    }


WORKLOAD_COLUMNS = (
    "namespace",
    "name",
    "local_queue",
    "cluster_queue",
    "priority",
    "arrival_s",
    "state",
    "admissions",
    "admitted_at_s",
    "evictions",
    "evicted_at_s",
    "last_admitted_s",
    "last_evicted_s",
    "finished_s",
    "wait_s",
    "wait_censored",
    "flavors",
    "preempted_by",
    "lost_work_s",
    "pods_ready_timeouts",
    "explanation",
    "check_retries",
    "check_wait_s",
)


def _csv_field(text: str) -> str:
    """A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_workloads_csv(path: Path, result: SimResult, chunk: int = 20_000) -> None:
    """One row per workload (see WORKLOAD_COLUMNS and docs/commands/simulate.md): times in
    seconds since the start; ``admitted_at_s``/``evicted_at_s`` list the
    first TIMES_KEPT times separated by spaces (``admissions``/``evictions``
    count them all, ``last_*`` give the last). Written ``chunk`` rows at a
    time (the text of every row at once would take hundreds of MB)."""
    rows = _WorkloadRows(result)
    with path.open("w", newline="") as f:
        f.write(",".join(WORKLOAD_COLUMNS) + "\n")
        for lo in range(0, result.n_workloads, chunk):
            columns = rows.columns(lo, min(result.n_workloads, lo + chunk))
            # names, numbers and times never need quoting; free text is quoted (_csv_field)
            f.write("\n".join(map(",".join, zip(*columns, strict=True))))
            f.write("\n")


def _flavor_patterns(result: SimResult) -> tuple[list[str], np.ndarray[Any, Any]]:
    """The flavors of each workload's last admission (resource=flavor, per
    flavor-resource it used) as CSV fields: the distinct texts, and per
    workload the index of its text."""
    wl = result.workloads
    labels = [f"{result.resource_names[r]}={result.flavor_names[f]}" for f, r in result.fr_pairs]
    order = sorted(range(len(labels)), key=lambda k: labels[k])
    used = wl.usage[:, order] > 0
    if used.shape[1] <= 62:  # each row's pattern as one number: a cheap unique
        codes = used.astype(np.int64) @ (np.int64(1) << np.arange(used.shape[1], dtype=np.int64))
        _, first, which = np.unique(codes, return_index=True, return_inverse=True)
        patterns = used[first]
    else:
        patterns, which = np.unique(used, axis=0, return_inverse=True)
    pattern_text = [_csv_field(",".join(labels[order[k]] for k in np.flatnonzero(row))) for row in patterns]
    return pattern_text, which.ravel()


class _WorkloadRows:
    """workloads.csv's columns for a range of workload ids, with the lookups
    shared by every range made once."""

    def __init__(self, result: SimResult) -> None:
        self.result = result
        self.cq_names = [*result.topology_cq_names, ""]  # index -1: none
        self.state_names = np.array([*STATE_NAMES, "unqueued", "not-arrived"])
        self.pattern_text, self.pattern_of = _flavor_patterns(result)
        self.messages = [*(_csv_field(x) for x in result.messages), ""]  # index -1: none
        wl = result.workloads
        zeros = np.zeros(result.n_workloads, dtype=np.int64)
        self.timeouts = wl.pods_ready_timeouts if wl.pods_ready_timeouts.size else zeros
        self.retries = wl.check_retries if wl.check_retries is not None else zeros
        self.check_wait = wl.check_wait_ns if wl.check_wait_ns is not None else zeros

    def secs(self, a: np.ndarray[Any, Any]) -> list[str]:
        """Seconds since the start with 3 decimals; '' where a < 0 (never)."""
        t0 = self.result.start_ns
        rel = np.where(a >= 0, (a - t0) / NS, -1.0).tolist()
        return [f"{x:.3f}" if x >= 0 else "" for x in rel]

    def times(self, kept: np.ndarray[Any, Any]) -> list[str]:
        """The kept times of each workload, separated by spaces."""
        t0 = self.result.start_ns
        out = self.secs(kept[:, 0])
        for i in np.flatnonzero(kept[:, 1] >= 0).tolist():  # more than one: few
            out[i] = " ".join(f"{(x - t0) / NS:.3f}" for x in kept[i].tolist() if x >= 0)
        return out

    def key(self, w: int) -> str:
        """namespace/name of workload id w."""
        result, m = self.result, self.result.n_manifest
        if w < m:
            return f"{result.manifest[w][0]}/{result.manifest[w][1]}"
        tr = result.trace
        return f"{tr.namespaces[int(tr.namespace[w - m])]}/{tr.name_of(w - m)}"

    def columns(self, lo: int, hi: int) -> list[list[str]]:
        """The text of WORKLOAD_COLUMNS for workloads lo..hi-1, one list per column."""
        result, wl, tr, m = self.result, self.result.workloads, self.result.trace, self.result.n_manifest
        # names, LocalQueues and priorities: the manifest's workloads, then the trace's rows
        manifest = result.manifest[lo : min(hi, m)]
        k0, k1 = max(lo, m) - m, max(hi, m) - m
        namespaces = [x[0] for x in manifest] + [tr.namespaces[k] for k in tr.namespace[k0:k1].tolist()]
        names = [x[1] for x in manifest] + [tr.name_of(k) for k in range(k0, k1)]
        local_queues = [x[2] for x in manifest] + [tr.queues[k] for k in tr.queue[k0:k1].tolist()]
        priorities = [x[3] for x in manifest] + tr.priority[k0:k1].tolist()
        queued = (wl.queue_cq[lo:hi] >= 0) | (wl.admissions[lo:hi] > 0)
        state = np.where(queued, wl.state[lo:hi], len(STATE_NAMES))
        state[wl.arrival_ns[lo:hi] > result.end_ns] = len(STATE_NAMES) + 1  # after --until
        return [
            namespaces,
            names,
            local_queues,
            [self.cq_names[c] for c in wl.queue_cq[lo:hi].tolist()],
            list(map(str, priorities)),
            self.secs(wl.arrival_ns[lo:hi]),
            self.state_names[state].tolist(),
            list(map(str, wl.admissions[lo:hi].tolist())),
            self.times(wl.admitted_at[lo:hi]),
            list(map(str, wl.evictions[lo:hi].tolist())),
            self.times(wl.evicted_at[lo:hi]),
            self.secs(wl.last_admitted_ns[lo:hi]),
            self.secs(wl.last_evicted_ns[lo:hi]),
            self.secs(wl.finished_ns[lo:hi]),
            [f"{x:.3f}" for x in (wl.wait_ns[lo:hi] / NS).tolist()],
            np.where(wl.censored[lo:hi], "true", "false").tolist(),
            [self.pattern_text[k] for k in self.pattern_of[lo:hi].tolist()],
            [self.key(p) if p >= 0 else "" for p in wl.preempted_by[lo:hi].tolist()],
            [f"{x:.3f}" for x in (wl.lost_ns[lo:hi] / NS).tolist()],
            list(map(str, self.timeouts[lo:hi].tolist())),
            [self.messages[k] for k in wl.explanation[lo:hi].tolist()],
            list(map(str, self.retries[lo:hi].tolist())),
            [f"{x:.3f}" for x in (self.check_wait[lo:hi] / NS).tolist()],
        ]


PAGE_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { margin: 2em 0; } img { max-width: 100%; } figcaption { color: #555; font-size: 0.9em; }
pre { white-space: pre-wrap; font-size: 0.85em; }
.facts { color: #444; }
"""


def page(title: str, body: str) -> str:
    """A self-contained HTML page (the report's style)."""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>\n'
        f"<style>{PAGE_CSS}</style></head><body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n"
    )


def html_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    th = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def figures_html(plots: Sequence[Plot[Any]], pngs: dict[str, bytes], note: str = "") -> str:
    """The charts of ``plots`` that were drawn, embedded, with their headings and captions."""
    if not charts_available():
        return f'<p class="facts">{html.escape(NO_CHARTS)}</p>'
    figs = []
    for plot in plots:
        if plot.file not in pngs:
            continue
        b64 = base64.b64encode(pngs[plot.file]).decode()
        figs.append(
            f'<figure><h2>{html.escape(plot.heading)}</h2><img alt="{html.escape(plot.heading)}" '
            f'src="data:image/png;base64,{b64}"><figcaption>{html.escape(plot.caption)}'
            f"{html.escape(note)}</figcaption></figure>"
        )
    return "".join(figs)


def html_page(
    result: SimResult,
    metrics: Metrics,
    pngs: dict[str, bytes],
    title: str,
    run_label: str,
    notes: Sequence[str],
) -> str:
    t = metrics.totals
    rows = table_rows(metrics.queues, t)
    facts = [
        html.escape(run_label),
        f"engine {html.escape(result.engine)}",
        f"{fmt_duration(t['simulated_s'])} simulated",
        f"pod termination {result.termination_delay_ns / NS:g} s",
        f"{t['admissions']:,} admissions",
        f"{t['preemptions']:,} preemptions",
        f"{result.cycles:,} scheduling cycles",
        f"simulated in {result.wall_s:.1f} s",
    ]
    held = manifest_line(result)
    if held:
        facts.append(html.escape(held))
    note_html = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    churn = churn_lines(metrics.churn)
    churn_html = "<h2>Preemption churn</h2><pre>" + html.escape("\n".join(churn)) + "</pre>" if churn else ""
    figs = figures_html(PLOTS, pngs, f" Bins of {fmt_bin(metrics.series.bin_s)}.")
    return page(
        title,
        f"""<p class="facts">{" · ".join(facts)}</p>
<ul>{note_html}</ul>
<h2>Per ClusterQueue</h2>
{"".join(f'<p class="facts">{html.escape(x)}</p>' for x in inactive_lines(metrics.queues))}
{html_table([c.title for c in table_columns(t)], rows)}
<p class="facts">{html.escape(TABLE_LEGEND)} The numbers are in metrics.json; every workload is in
workloads.csv.</p>
{churn_html}
{figs}""",
    )


def write_report(
    folder: Path,
    result: SimResult,
    metrics: Metrics,
    title: str,
    run_label: str,
    notes: Sequence[str],
    extra: dict[str, Any],
) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    pngs = render_plots(metrics, result.topology_cq_names, run_label) if charts_available() else {}
    written = []
    for name, data in pngs.items():
        p = folder / name
        p.write_bytes(data)
        written.append(p)
    doc = metrics_json(result, metrics, extra)
    doc["notes"] = list(notes)
    p = folder / "metrics.json"
    p.write_text(json.dumps(doc, indent=1) + "\n")
    written.append(p)
    p = folder / "workloads.csv"
    write_workloads_csv(p, result)
    written.append(p)
    p = folder / "report.html"
    p.write_text(html_page(result, metrics, pngs, title, run_label, notes))
    written.append(p)
    return written


__all__ = [
    "TABLE_LEGEND",
    "TIMES_KEPT",
    "WORKLOAD_COLUMNS",
    "churn_lines",
    "figures_html",
    "fmt_duration",
    "html_page",
    "html_table",
    "metrics_json",
    "page",
    "summary_table",
    "write_report",
    "write_workloads_csv",
]
