"""Time series of a run in fixed memory: equal time bins, filled as the run goes.

A quantity that changes at events (a ClusterQueue's usage per
flavor-resource, its pending workloads) is a step function per key. The
loop hands its changes over in time order, a block per step
(:meth:`StepSeries.add`); every so many rows they are folded into per-bin
integrals and exact totals, and dropped. However many events a run has, the
memory is the bins (keys x bins x columns) plus one chunk of events.

The bins have one width. When the clock runs past the last bin (``--drain``
goes on for as long as it takes) the width doubles and pairs of bins merge:
there are never more than ``n`` bins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
NS = 1_000_000_000

# Bin widths a person reads at a glance (seconds); past a day, whole days.
NICE_WIDTHS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
# Rows of changes held before they are folded into the bins.
CHUNK_ROWS = 1 << 16


def nice_width_ns(span_ns: int, n: int) -> int:
    """The smallest nice width that covers ``span_ns`` in at most ``n`` bins."""
    need_s = span_ns / max(1, n) / NS
    for w in NICE_WIDTHS_S:
        if w >= need_s:
            return w * NS
    return int(np.ceil(need_s / 86400.0)) * 86400 * NS


class Bins:
    """``n`` bins of ``width_ns`` from ``t0``; arrays registered with
    :meth:`register` (bins on axis 1) merge when the width doubles."""

    def __init__(self, t0: int, width_ns: int, n: int) -> None:
        if n < 2 or n % 2:
            raise ValueError("the number of bins must be even and at least 2")
        self.t0 = t0
        self.width_ns = width_ns
        self.n = n
        self._arrays: list[F64] = []

    @property
    def limit(self) -> int:
        """The first time past the last bin."""
        return self.t0 + self.n * self.width_ns

    def register(self, shape_before: tuple[int, ...], shape_after: tuple[int, ...] = ()) -> F64:
        a = np.zeros((*shape_before, self.n, *shape_after), dtype=np.float64)
        self._arrays.append(a)
        return a

    def cover(self, t: int) -> None:
        """Double the width until time ``t`` falls in a bin."""
        while t >= self.limit:
            self.width_ns *= 2
            for a in self._arrays:
                lead = a.shape[:1]
                tail = a.shape[2:]
                merged = a.reshape(*lead, self.n // 2, 2, *tail).sum(axis=2)
                a[:, : self.n // 2] = merged
                a[:, self.n // 2 :] = 0.0

    def index(self, t: int) -> int:
        return (t - self.t0) // self.width_ns

    def edges(self, end: int) -> F64:
        """Bin edges in ns from t0 over [t0, end]: the bins in use, the last
        one cut at ``end`` (at least one bin)."""
        span = max(0, end - self.t0)
        used = max(1, -(-span // self.width_ns))
        e = np.arange(used + 1, dtype=np.float64) * self.width_ns
        if span:
            e[-1] = float(span)
        return e


class StepSeries:
    """Step functions ``level[key](t)`` (vectors of ``cols``), fed with their
    changes in time order, kept as integrals per bin (``integral[key, bin,
    col]``, in level x ns) and as exact totals of ``measure(levels)`` over
    time (``totals[key, m]``, in value x ns)."""

    def __init__(
        self,
        bins: Bins,
        n_keys: int,
        cols: int,
        measure: Callable[[int, I64], F64] | None = None,
        n_measures: int = 0,
        cap: I64 | None = None,
        binned: bool = True,
        key_map: I64 | None = None,
    ) -> None:
        """``cap`` (keys, cols): keep ``peak_over``, the most each level went
        above it at the end of an instant (changes at one time are one
        instant); ``binned``: keep the integrals per bin (else only the
        measure's totals and the peaks); ``key_map``: the keys given to add
        are mapped through it (several keys summed into one)."""
        self.bins = bins
        self.n_keys = n_keys
        self.cols = cols
        self.level = np.zeros((n_keys, cols), dtype=np.int64)
        self.last_t = np.full(n_keys, bins.t0, dtype=np.int64)
        self.binned = binned
        self.integral = bins.register((n_keys,), (cols,)) if binned else np.zeros((n_keys, 0, cols))
        self.measure = measure
        self.totals = np.zeros((n_keys, n_measures), dtype=np.float64)
        self.cap = cap
        self.key_map = key_map
        self.peak_over = np.zeros((n_keys, cols), dtype=np.int64)
        # the level after a key's last change was not checked against cap: its instant may go on
        self._open = np.zeros(n_keys, dtype=np.bool_)
        # changes not folded yet, a block per add()
        self._bt: list[int] = []
        self._bn: list[int] = []
        self._bsign: list[int] = []
        self._bkeys: list[npt.NDArray[np.integer[Any]]] = []
        self._bdeltas: list[I64] = []
        self._rows = 0

    def add(self, t: int, keys: npt.NDArray[np.integer[Any]], deltas: I64, sign: int = 1) -> None:
        """Changes at time t (not before any change added so far): ``sign *
        deltas[i]`` (a row of ``cols``) to the level of ``keys[i]``; keys < 0
        are ignored."""
        self._bt.append(t)
        self._bn.append(keys.shape[0])
        self._bsign.append(sign)
        self._bkeys.append(keys)
        self._bdeltas.append(deltas)
        self._rows += keys.shape[0]
        if self._rows >= CHUNK_ROWS:
            self.fold()

    def add_blocks(self, ts: I64, ns: I64, signs: I64, keys: I64, deltas: I64) -> None:
        """add() for many blocks at once, folded where add() would fold: block
        i is ``ns[i]`` rows of keys and deltas at time ``ts[i]``, times ``signs[i]``."""
        cum = np.cumsum(ns)
        b = r = 0  # blocks and rows taken so far
        while b < ns.size:
            # the first block after which add() would fold, else the last one
            stop = int(np.searchsorted(cum, CHUNK_ROWS - self._rows + (cum[b - 1] if b else 0), side="left"))
            e = min(stop + 1, ns.size)
            r1 = int(cum[e - 1])
            self._bt.extend(ts[b:e].tolist())
            self._bn.extend(ns[b:e].tolist())
            self._bsign.extend(signs[b:e].tolist())
            self._bkeys.append(keys[r:r1])
            self._bdeltas.append(deltas[r:r1])
            self._rows += r1 - r
            b, r = e, r1
            if self._rows >= CHUNK_ROWS:
                self.fold()

    def fold(self) -> None:
        """Integrate the changes held so far into the bins, and drop them."""
        if not self._rows:
            return
        t = np.repeat(np.array(self._bt, dtype=np.int64), self._bn)
        keys = np.concatenate(self._bkeys).astype(np.int64, copy=False)
        deltas = np.concatenate(self._bdeltas).reshape(-1, self.cols).astype(np.int64, copy=False)
        deltas *= np.repeat(np.array(self._bsign, dtype=np.int64), self._bn)[:, None]
        for held in (self._bt, self._bn, self._bsign, self._bkeys, self._bdeltas):
            held.clear()
        self._rows = 0
        valid = keys >= 0
        if not valid.all():
            t, keys, deltas = t[valid], keys[valid], deltas[valid]
        if t.size == 0:
            return
        if self.key_map is not None:
            keys = self.key_map[keys]
        self.bins.cover(int(t.max()))
        order = np.argsort(keys, kind="stable")  # time order kept within a key
        t, keys, deltas = t[order], keys[order], deltas[order]
        bounds = np.flatnonzero(np.diff(keys)) + 1
        for lo, hi in zip(np.r_[0, bounds].tolist(), np.r_[bounds, keys.size].tolist(), strict=True):
            k = int(keys[lo])
            ts = t[lo:hi]
            after = self.level[k] + np.cumsum(deltas[lo:hi], axis=0)
            starts = np.concatenate([[self.last_t[k]], ts[:-1]])
            levels = np.concatenate([self.level[k][None, :], after[:-1]])
            if self.binned or self.measure is not None:
                self._integrate(k, starts, ts, levels)
            if self.cap is not None:
                self._peaks(k, ts, after)
            self.level[k] = after[-1]
            self.last_t[k] = ts[-1]

    def _peaks(self, k: int, ts: I64, after: I64) -> None:
        """peak_over of key k from its changes at times ts (levels after them):
        only the level after an instant's last change counts."""
        assert self.cap is not None
        if self._open[k] and ts[0] > self.last_t[k]:  # the instant of the previous fold had ended
            np.maximum(self.peak_over[k], self.level[k] - self.cap[k], out=self.peak_over[k])
        ends = np.flatnonzero(ts[1:] != ts[:-1])
        if ends.size:
            np.maximum(self.peak_over[k], (after[ends] - self.cap[k]).max(axis=0), out=self.peak_over[k])
        self._open[k] = True

    def finish(self, end: int) -> None:
        """Fold what is held and integrate every level up to ``end``."""
        self.fold()
        if self.cap is not None:
            for k in np.flatnonzero(self._open).tolist():
                np.maximum(self.peak_over[k], self.level[k] - self.cap[k], out=self.peak_over[k])
            self._open[:] = False
        self.bins.cover(max(end - 1, self.bins.t0))
        for k in range(self.n_keys if self.binned or self.measure is not None else 0):
            if end > self.last_t[k]:
                self._integrate(
                    k,
                    np.array([self.last_t[k]], dtype=np.int64),
                    np.array([end], dtype=np.int64),
                    self.level[k][None, :],
                )
                self.last_t[k] = end

    def _integrate(self, k: int, starts: I64, ends: I64, levels: I64) -> None:
        """Add level i over [starts[i], ends[i]) (contiguous, in order) to key k."""
        dt = (ends - starts).astype(np.float64)
        if self.measure is not None:
            self.totals[k] += self.measure(k, levels).T @ dt
        lv = levels.astype(np.float64)
        if not self.binned or not lv.any():
            return
        b = self.bins
        # ∫ from starts[0] to x of the step function, at the bin edges it spans
        j0, j1 = b.index(int(starts[0])), b.index(max(int(ends[-1]) - 1, int(starts[0])))
        x = b.t0 + np.arange(j0, j1 + 2, dtype=np.int64) * b.width_ns
        x = np.clip(x, starts[0], ends[-1])
        cum = np.zeros((starts.size + 1, self.cols))
        cum[1:] = np.cumsum(lv * dt[:, None], axis=0)
        seg = np.clip(np.searchsorted(starts, x, side="right") - 1, 0, starts.size - 1)
        f = cum[seg] + lv[seg] * (x - starts[seg]).astype(np.float64)[:, None]
        self.integral[k, j0 : j1 + 1] += np.diff(f, axis=0)


class CountSeries:
    """Counts per key that move by whole steps at events (pending workloads),
    as means per bin. Per bin it keeps the sum of the steps in it and of
    step x time; a level's integral over a bin follows (the steps before it
    count for the whole bin, those in it from their time on). Events may
    come in any order."""

    def __init__(self, bins: Bins, n_keys: int) -> None:
        self.bins = bins
        self.steps = bins.register((n_keys,))
        self.moments = bins.register((n_keys,))  # sum of step x (t - t0), in ns

    def add(self, t: I64 | int, keys: I64, delta: int) -> None:
        """``delta`` to the count of each of ``keys`` at time(s) ``t``; keys < 0 are ignored."""
        times = np.broadcast_to(np.asarray(t, dtype=np.int64), keys.shape)
        valid = keys >= 0
        if not valid.all():
            times, keys = times[valid], keys[valid]
        if not keys.size:
            return
        self.bins.cover(int(times.max()))
        rel = times - self.bins.t0
        j = rel // self.bins.width_ns
        np.add.at(self.steps, (keys, j), delta)
        np.add.at(self.moments, (keys, j), delta * rel.astype(np.float64))

    def add_many(self, ts: I64, keys: I64, deltas: I64) -> None:
        """add(ts[i], keys[i:i+1], deltas[i]) for each i, in order; the bins
        cover every time already (the caller checked: no widening between the
        calls), so one pass does what the calls do, to the last bit."""
        if not keys.size:
            return
        rel = ts - self.bins.t0
        j = rel // self.bins.width_ns
        np.add.at(self.steps, (keys, j), deltas)
        np.add.at(self.moments, (keys, j), deltas * rel.astype(np.float64))

    def means(self, edges_ns: F64) -> F64:
        """(keys, bins): the mean count over each bin of ``edges_ns`` (Bins.edges)."""
        nb = edges_ns.size - 1
        d, m = self.steps[:, :nb], self.moments[:, :nb]
        before = np.cumsum(d, axis=1) - d
        width = np.diff(edges_ns)
        integral = edges_ns[1:] * d - m + width * before
        out: F64 = integral / width
        return out


class EventCounts:
    """Counts per (key, bin) of instantaneous events (preemptions by reason)."""

    def __init__(self, bins: Bins, n_keys: int) -> None:
        self.bins = bins
        self.counts = bins.register((n_keys,))

    def add(self, t: int, per_key: I64) -> None:
        self.bins.cover(t)
        self.counts[:, self.bins.index(t)] += per_key

    def add_each(self, ts: I64, keys: I64) -> None:
        """One event of key ``keys[i]`` at ``ts[i]`` each, the bins covering
        every time already (counts are whole numbers: the order is free)."""
        np.add.at(self.counts, (keys, (ts - self.bins.t0) // self.bins.width_ns), 1.0)
