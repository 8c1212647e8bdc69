"""The simulator's fixed-memory time series against a brute-force integral:
step functions fed in chunks, bins that widen when the clock runs past them,
counts whose events come in any order."""

from __future__ import annotations

import numpy as np
import pytest

from kueue_fast.simulate import series
from kueue_fast.simulate.series import Bins, CountSeries, StepSeries, nice_width_ns

NS = 1_000_000_000
T0 = 1_000 * NS


def brute_bin_means(
    events: list[tuple[int, int, np.ndarray]], n_keys: int, cols: int, edges: np.ndarray, end: int
):  # type: ignore[no-untyped-def]
    """Mean level per key and bin, integrated piece by piece from the exact event times."""
    out = np.zeros((n_keys, edges.size - 1, cols))
    for k in range(n_keys):
        mine = sorted(((t, d) for t, key, d in events if key == k), key=lambda e: e[0])
        times = [T0] + [t for t, _ in mine] + [end]
        levels = [np.zeros(cols)]
        for _, d in mine:
            levels.append(levels[-1] + d)
        for (a, b), lv in zip(zip(times[:-1], times[1:], strict=True), levels, strict=True):
            for j in range(edges.size - 1):
                lo, hi = T0 + edges[j], T0 + edges[j + 1]
                overlap = max(0.0, min(b, hi) - max(a, lo))
                out[k, j] += lv * overlap
    return out / np.diff(edges)[None, :, None]


@pytest.mark.parametrize("chunk", [3, 1 << 16])
def test_step_series_matches_the_exact_integral_across_folds_and_wider_bins(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(series, "CHUNK_ROWS", chunk)
    rng = np.random.default_rng(7)
    bins = Bins(T0, 10 * NS, 4)  # 40 s of bins: the events run to ~300 s, so the width doubles 3 times
    s = StepSeries(bins, n_keys=3, cols=2)
    events = []
    t = T0
    for _ in range(60):
        t += int(rng.integers(0, 10 * NS))
        keys = rng.integers(-1, 3, size=int(rng.integers(1, 4)))
        deltas = rng.integers(-3, 4, size=(keys.size, 2))
        s.add(t, keys, deltas)
        events += [(t, int(k), d.astype(float)) for k, d in zip(keys, deltas, strict=True) if k >= 0]
    end = t + 5 * NS
    s.finish(end)
    assert bins.width_ns == 80 * NS
    edges = bins.edges(end)
    got = s.integral[:, : edges.size - 1] / np.diff(edges)[None, :, None]
    np.testing.assert_allclose(got, brute_bin_means(events, 3, 2, edges, end), rtol=1e-9, atol=1e-9)


def test_count_series_takes_events_in_any_order() -> None:
    rng = np.random.default_rng(3)
    bins = Bins(T0, 30 * NS, 6)
    c = CountSeries(bins, n_keys=2)
    times = T0 + rng.integers(0, 400 * NS, size=50)
    keys = rng.integers(0, 2, size=50)
    deltas = rng.choice([-1, 1], size=50)
    for d in (-1, 1):  # two calls, each out of time order
        sel = deltas == d
        c.add(times[sel], keys[sel], d)
    end = T0 + 400 * NS
    bins.cover(end - 1)
    edges = bins.edges(end)
    events = [(int(t), int(k), np.array([float(d)])) for t, k, d in zip(times, keys, deltas, strict=True)]
    np.testing.assert_allclose(c.means(edges), brute_bin_means(events, 2, 1, edges, end)[:, :, 0], atol=1e-9)


def test_bins_are_nice_and_cover_the_span() -> None:
    assert nice_width_ns(7 * 86400 * NS, 336) == 1800 * NS  # a week: 30-minute bins
    assert nice_width_ns(180 * NS, 10) == 30 * NS
    assert nice_width_ns(400 * 86400 * NS, 336) == 2 * 86400 * NS
    b = Bins(0, 30 * NS, 4)
    assert b.edges(100 * NS).tolist() == [0, 30 * NS, 60 * NS, 90 * NS, 100 * NS]
    assert b.edges(0).tolist() == [0, 30 * NS], "an instant: one bin"
