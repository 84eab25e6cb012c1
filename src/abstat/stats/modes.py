"""The ``bimodal`` diagnostic: modes of a kernel density estimate (split from
:mod:`abstat.stats.diagnostics`, which re-exports these names)."""

from __future__ import annotations

import math

import numpy as np

from abstat.stats.warnings import StatWarning

BIMODAL_MIN_MASS = 0.10


def mode_count(values: np.ndarray, ordered: np.ndarray | None = None) -> int:
    """Modes holding >= 10% of the mass in a Gaussian kernel density estimate.

    Silverman's normal-reference bandwidth ``1.06 sd n^(-1/5)`` deliberately
    over-smooths, so that only pronounced modes count; a valley must go below
    70% of the lower of the two peaks to separate them.  ``ordered``: the
    values sorted, if known (the histogram then comes from the edges' places
    among them: the same counts).
    """
    n = values.size
    sd = float(np.std(values))
    if n < 10 or sd == 0.0:
        return 1
    bw = 1.06 * sd * n ** (-0.2)
    lo, hi = float(values.min()) - 3 * bw, float(values.max()) + 3 * bw
    bins = 512
    counts, edges = _histogram(values, bins, lo, hi, ordered)
    width = edges[1] - edges[0]
    half = int(math.ceil(4 * bw / width))
    kx = np.arange(-half, half + 1) * width
    kernel = np.exp(-0.5 * (kx / bw) ** 2)
    dens = np.convolve(counts.astype(float), kernel, mode="same")
    dens /= dens.sum()
    # Split at local minima, then merge shallow neighbours.
    d = np.diff(dens)
    peaks = np.flatnonzero((d[:-1] > 0) & (d[1:] <= 0)) + 1
    if peaks.size < 2:
        return 1
    valleys, bounds = _valleys(dens, peaks)
    # (peak height, mass, the peak's place among the peaks)
    segments = [[float(dens[p]), float(dens[bounds[i] : bounds[i + 1]].sum()), i] for i, p in enumerate(peaks.tolist())]
    merged = [segments[0]]
    for seg in segments[1:]:
        prev = merged[-1]
        valley = min(valleys[int(prev[2]) : int(seg[2])])  # the lowest density between the two peaks
        if valley > 0.7 * min(prev[0], seg[0]) or prev[1] < BIMODAL_MIN_MASS or seg[1] < BIMODAL_MIN_MASS:
            # shallow valley or a small bump: one mode (keep the taller peak)
            if seg[0] > prev[0]:
                prev[0], prev[2] = seg[0], seg[2]
            prev[1] += seg[1]
        else:
            merged.append(seg)
    return sum(1 for seg in merged if seg[1] >= BIMODAL_MIN_MASS)


def _valleys(dens: np.ndarray, peaks: np.ndarray) -> tuple[list[float], list[int]]:
    """The lowest density between each two neighbouring peaks, and the segments' bounds: 0, the first
    lowest point between each two peaks, the number of bins.  (A peak is above the bin before it, so the
    lowest point of ``dens[a : b + 1]`` lies before ``b``: one reduction over ``dens[a:b]`` per pair.)"""
    first, last = int(peaks[0]), int(peaks[-1])
    low = np.minimum.reduceat(dens[:last], peaks[:-1])
    pair = np.repeat(np.arange(peaks.size - 1), np.diff(peaks))  # the pair each bin of dens[first:last] is in
    at = np.flatnonzero(dens[first:last] == low[pair]) + first  # the bins at their pair's lowest density
    lowest = at[np.searchsorted(at, peaks[:-1])]  # the first of them in each pair (np.argmin's)
    return low.tolist(), [0, *lowest.tolist(), dens.size]


def _histogram(
    values: np.ndarray, bins: int, lo: float, hi: float, ordered: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``np.histogram(values, bins, (lo, hi))`` for ``lo`` below and ``hi`` above every value; from
    the sorted values, the counts between its edges (the bins it would find: ``edge_i <= v < edge_i+1``)."""
    if ordered is None or not (math.isfinite(lo) and math.isfinite(hi)) or not lo < ordered[0] <= ordered[-1] < hi:
        return np.histogram(values, bins=bins, range=(lo, hi))
    edges = np.linspace(lo, hi, bins + 1, endpoint=True)  # (np.histogram's edges)
    return np.diff(np.searchsorted(ordered, edges, side="left")), edges


def bimodal(name: str, values: np.ndarray, ordered: np.ndarray | None = None) -> list[StatWarning]:
    """The ``bimodal`` warning when :func:`mode_count` finds two or more modes."""
    modes = mode_count(values, ordered)
    if modes < 2:
        return []
    return [
        StatWarning(
            "bimodal",
            f"{name}: {modes} modes in the distribution (each >= 10% of the samples): "
            "a single centre summarises it poorly; look at the distribution",
            name,
        )
    ]
