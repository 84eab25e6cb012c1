"""The numbers under ``abstat history``'s change points: revision centres, weights, tests.

Every revision ``i`` gives a centre ``c_i`` (the 20% trimmed mean of its samples: the median
of 3 or 4, the mean of the middle 3 of 5; with several runs, of the run means) and a variance
``v_i = tau^2 + s^2 / n_i``: ``s^2 / n_i`` is the pooled Yuen variance of the trimmed
mean (from winsorized squares), ``n_i`` its number of samples (or runs), and ``tau^2`` the part of the
revision-to-revision variation that the samples do not explain (a build's own
code layout, say), estimated from successive differences of the centres.  A
revision measured 8 times thus weighs up to 8 times one measured once, never more
than the revision-to-revision noise allows.  Centres more than ``CLIP`` of their
SDs from a running median of 5 revisions are pulled back to that distance (a single
spike cannot make or move a change; a running median keeps steps).

All tests are weighted least squares on these centres: a window's two-sample t
(``Sums.step_test``) and the gain of a split (``Sums.gains``) from cumulative sums in
O(1) per position, and fits of a level, steps and a line on a span (``Sums.fit``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

if TYPE_CHECKING:
    from abstat.history.centres import Measured

CLIP = 2.5  # spikes pulled back to this many SDs from a running median of 5
TRIM = 0.2  # each revision's centre: its trimmed mean, this share cut from each end


def _mad_sd(values: np.ndarray) -> float:
    if values.size == 0:
        return 0.0
    return float(np.median(np.abs(values - np.median(values)))) * 1.482602218505602


def revision_samples(point: object) -> np.ndarray:
    """One revision's samples as a flat array: a number, a list of numbers, or a list of
    runs (lists), whose means are then its samples (samples within a run are not independent)."""
    if isinstance(point, (int, float, np.floating, np.integer)):
        return np.asarray([float(point)])
    items = list(point)  # type: ignore[call-overload]
    if items and all(isinstance(item, (list, tuple, np.ndarray)) for item in items):
        runs = [np.asarray(item, dtype=float) for item in items if len(item)]
        if len(runs) == 1:
            return runs[0]
        return np.asarray([trimmed_centre(run)[0] for run in runs])
    return np.asarray(items, dtype=float)


def _winsorized(samples: np.ndarray) -> np.ndarray:
    """Samples beyond 5 MAD-SDs of their median pulled back to that distance."""
    if samples.size < 4:
        return samples
    centre, spread = float(np.median(samples)), _mad_sd(samples)
    if spread <= 0:
        return samples
    return np.clip(samples, centre - 5 * spread, centre + 5 * spread)


def _trim_count(size: int) -> int:
    """Values cut from each end for a revision's centre: 20%, and at least one of 3 or more (an
    interrupt in 3 to 5 samples moves no centre; on grid data the 5-MAD winsorizing does nothing,
    its MAD being 0)."""
    return max(1, int(TRIM * size)) if size >= 3 else 0


def trimmed_centre(samples: np.ndarray) -> tuple[float, float, int]:
    """(the trimmed mean, the winsorized sum of squares about it scaled to one sample's variance
    times its degrees of freedom (Yuen: the trimmed mean's variance is that / df / n), df)."""
    n = samples.size
    g = _trim_count(n)
    if g == 0:
        mean = float(samples.mean())
        return mean, float(((samples - mean) ** 2).sum()), n - 1
    ordered = np.sort(samples)
    kept = n - 2 * g
    centre = float(ordered[g : n - g].mean())
    winsorized = np.clip(ordered, ordered[g], ordered[n - g - 1])
    squares = float(((winsorized - winsorized.mean()) ** 2).sum())
    # Yuen: var(trimmed mean) = squares / (kept (kept - 1)); as s^2 / n with kept - 1 df
    return centre, squares * n / kept, kept - 1


def _diff_scale(d: np.ndarray) -> float:
    """SD of differences ``d`` from their MAD (from their mean absolute value when most are 0)."""
    if d.size == 0:
        return 0.0
    scale = float(np.median(np.abs(d))) / 0.6744897501960817
    if scale <= 0:  # quantized: most neighbours equal
        scale = float(np.mean(np.abs(d))) * math.sqrt(math.pi / 2.0)
    return scale


@dataclass
class Prepared:
    centre: np.ndarray  # per revision, on the working scale (see ``scale``)
    clipped: np.ndarray  # centres with spikes pulled back
    weight: np.ndarray  # 1 / v_i on the working scale
    counts: np.ndarray  # samples (or runs) per revision
    offset: float  # working value = (value - offset) / scale
    scale: float
    tau2: float  # between-revision variance, working scale
    within2: float  # within-revision variance of one sample, working scale
    exponent: int = 0  # values were first multiplied by 2**-exponent (exact; no overflow)

    def value(self, working: float) -> float:
        """A working-scale level back in the input's units."""
        return math.ldexp(working * self.scale + self.offset, self.exponent)

    def shift(self, working: float) -> float:
        """A working-scale difference back in the input's units."""
        return math.ldexp(working * self.scale, self.exponent)


def _between_variance(d: np.ndarray, within2: float, inv_n: np.ndarray) -> float:
    """tau^2 from the successive differences ``d`` of the centres: scaled by
    sqrt(2 tau^2 + s^2 (1/n_i + 1/n_i+1)) they should have a robust SD of 1."""
    if not d.size:
        return 0.0
    total = _diff_scale(d) ** 2 / 2.0
    if within2 <= 0:
        return max(0.0, total - within2 * float(np.median(inv_n)))
    pair = within2 * (inv_n[1:] + inv_n[:-1])
    if _diff_scale(d / np.sqrt(pair)) <= 1.0:
        return 0.0
    low, high = 0.0, max(total, 1e-300)
    for _ in range(60):
        middle = (low + high) / 2.0
        if _diff_scale(d / np.sqrt(2 * middle + pair)) > 1.0:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def _working_scale(centre: np.ndarray, variance: np.ndarray) -> tuple[float, np.ndarray]:
    """The working scale (the median revision's SD; else the centres' spread, else 1) and the
    variances (constant when the scale is not from them)."""
    scale = math.sqrt(float(np.median(variance))) if variance.size else 1.0
    if not (scale > 0 and math.isfinite(scale)):
        spread = float(np.std(centre)) if centre.size else 0.0
        scale = spread if spread > 0 and math.isfinite(spread) else 1.0
        variance = np.full(centre.size, scale * scale)
    return scale, variance


def _revision_centres(points: Sequence[object] | Measured) -> tuple[np.ndarray, ...]:
    """(centres, Yuen sums of squares, dfs, sample counts, exponent) of every revision at once
    (:mod:`abstat.history.centres`), else one by one: its samples times a power of two that brings the
    largest to [0.5, 1) (exact; values near the largest double or subnormal ones neither overflow nor
    vanish on the way), winsorized, their trimmed mean."""
    from abstat.history.centres import Measured, revision_centres

    found = revision_centres(points)
    if found is not None:
        return found
    assert not isinstance(points, Measured)  # (those are taken)
    raw = [revision_samples(p) for p in points]
    peak = max((float(np.max(np.abs(r))) for r in raw if r.size), default=0.0)
    exponent = math.frexp(peak)[1] if peak > 0 and math.isfinite(peak) else 0
    trimmed = [trimmed_centre(_winsorized(np.ldexp(r, -exponent))) for r in raw]
    return (
        np.asarray([c for c, _, _ in trimmed]),
        np.asarray([q for _, q, _ in trimmed], dtype=float),
        np.asarray([df for _, _, df in trimmed], dtype=np.int64),
        np.asarray([r.size for r in raw], dtype=float),
        np.asarray(exponent),
    )


def prepare(points: Sequence[object] | Measured) -> Prepared:
    centre, squares, df, counts, power = _revision_centres(points)
    exponent = int(power)
    offset = float(np.median(centre)) if centre.size else 0.0
    dfs = int(df[df > 0].sum())
    within2 = sum(squares[df > 0].tolist()) / dfs if dfs else 0.0
    inv_n = 1.0 / counts
    tau2 = _between_variance(np.diff(centre), within2, inv_n)
    scale, variance = _working_scale(centre, tau2 + within2 * inv_n)
    working = (centre - offset) / scale
    weight = (scale * scale) / np.maximum(variance, 1e-300)
    return Prepared(
        working,
        clip_spikes(working, weight),
        weight,
        counts,
        offset,
        scale,
        tau2 / (scale * scale),
        within2 / (scale * scale),
        exponent,
    )


def running_median(x: np.ndarray, half: int = 2) -> np.ndarray:
    n = x.size
    if n <= 2 * half:
        return np.full(n, float(np.median(x))) if n else x.copy()
    padded = np.concatenate([np.full(half, x[0]), x, np.full(half, x[-1])])
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1)
    return np.median(windows, axis=1)


def clip_spikes(x: np.ndarray, weight: np.ndarray, k: float = CLIP) -> np.ndarray:
    if x.size < 5:
        return x.copy()
    level = running_median(x)
    reach = k / np.sqrt(weight)
    return np.clip(x, level - reach, level + reach)


class Sums:
    """Cumulative weighted sums of a series: any window's two-sample fit in O(1)."""

    def __init__(self, x: np.ndarray, weight: np.ndarray, rho_floor: float = 0.0):
        self.x, self.weight = x, weight
        self.rho_floor = rho_floor  # an AR(1) fit's lag-1 correlation is at least this (wander.series_rho)
        columns = [weight, weight * x, weight * x * x]
        self.cum = np.vstack([np.zeros(3), np.cumsum(np.column_stack(columns), axis=0)])

    def window(self, a: int, b: int) -> np.ndarray:
        return self.cum[b] - self.cum[a]

    def step_test(self, a: int, k: int, b: int) -> tuple[float, float, int]:
        """Weighted two-sample t of [a, k) against [k, b): (difference right - left, t, df)."""
        left, right = self.window(a, k), self.window(k, b)
        wl, sl, ql = left[0], left[1], left[2]
        wr, sr, qr = right[0], right[1], right[2]
        diff = sr / wr - sl / wl
        df = b - a - 2
        if df <= 0:
            return diff, 0.0, max(df, 0)
        sse = max(0.0, ql - sl * sl / wl) + max(0.0, qr - sr * sr / wr)
        var = sse / df * (1.0 / wl + 1.0 / wr)
        if var <= 1e-24 * (abs(diff) + 1.0) ** 2:
            return diff, (math.inf if diff else 0.0), df
        return diff, diff / math.sqrt(var), df

    def serial_rho(self, a: int, k: int, b: int, gate: float) -> float:
        """The lag-1 autocorrelation r of the residuals from the two segments' weighted means of
        [a, k) and [k, b) when it exceeds ``gate`` / sqrt(b - a) (serially correlated: a smooth curve or
        a wandering level rather than noise); else 0."""
        x, w = self.x[a:b], self.weight[a:b]
        r = x.copy()
        for lo, hi in ((0, k - a), (k - a, b - a)):
            r[lo:hi] -= np.average(x[lo:hi], weights=w[lo:hi])
        r *= np.sqrt(w)
        top, bottom = (
            float(np.dot(r[1 : k - a], r[: k - a - 1]) + np.dot(r[k - a + 1 :], r[k - a : -1])),
            float(np.dot(r, r)),
        )
        rho = top / bottom if bottom > 0 else 0.0
        return min(rho, 1.0 - 1e-12) if rho > gate / math.sqrt(b - a) else 0.0

    def serial_factor(self, a: int, k: int, b: int, gate: float) -> float:
        """How much the variance of a mean of [a, k) or [k, b) exceeds the independent one when the
        residuals are serially correlated (:meth:`serial_rho`): (1 + r) / (1 - r); else 1."""
        rho = self.serial_rho(a, k, b, gate)
        return (1.0 + rho) / (1.0 - rho)

    def ar1_step_t(self, a: int, k: int, b: int, rho: float, width: int = 1) -> tuple[float, int]:
        """The t of a step at ``k`` on [a, b) (a ramp reaching its size ``width`` revisions on) by generalised
        least squares of a level and the step under AR(1) errors of lag-1 correlation ``rho``
        (:mod:`abstat.history.wander`): (t, df)."""
        from abstat.history.wander import chosen_rho, whiten

        n = b - a
        df = n - 3  # a level, the step, rho
        if df <= 0:
            return 0.0, 0
        root = np.sqrt(self.weight[a:b])
        design = np.column_stack([np.ones(n), np.clip((np.arange(n) - (k - a) + 1) / width, 0, 1)]) * root[:, None]
        y = self.x[a:b] * root
        rho = chosen_rho(design, y, rho)
        design, y = whiten(design, rho), whiten(y, rho)
        try:
            inverse = np.linalg.inv(design.T @ design)
        except np.linalg.LinAlgError:
            return 0.0, df
        coef = inverse @ (design.T @ y)
        residual = y - design @ coef
        var = float(residual @ residual) / df * float(inverse[1, 1])
        if var <= 1e-24 * (abs(float(coef[1])) + 1.0) ** 2:
            return (math.inf if coef[1] else 0.0), df
        return float(coef[1]) / math.sqrt(var), df

    def gains(self, a: int, b: int, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions k in [a+m, b-m] and the weighted least-squares gain of splitting there
        (the squared z of the difference of means, the weights being inverse variances)."""
        ks = np.arange(a + m, b - m + 1)
        if ks.size == 0:
            return ks, np.zeros(0)
        total = self.cum[b] - self.cum[a]
        left = self.cum[ks] - self.cum[a]
        wl, sl = left[:, 0], left[:, 1]
        wr, sr = total[0] - wl, total[1] - sl
        diff = sr / wr - sl / wl
        return ks, diff * diff / (1.0 / wl + 1.0 / wr)

    def fit(self, a: int, b: int, steps: Sequence[int], degree: int) -> tuple[float, list[float], int]:
        """Weighted least squares on [a, b) of a polynomial of ``degree`` (0: a level; 1: a line)
        plus steps at ``steps`` (a < s < b): (residual sum of squares, the t of each step, df)."""
        x, w = self.x[a:b], self.weight[a:b]
        n = b - a
        index = np.arange(n)
        columns = [np.ones(n)]
        if degree:
            t = index / max(n - 1, 1) * 2.0 - 1.0
            columns += [t**d for d in range(1, degree + 1)]
        columns += [(index >= s - a).astype(float) for s in steps]
        df = n - len(columns)
        root = np.sqrt(w)
        design = np.column_stack(columns) * root[:, None]
        y = x * root
        if df <= 0:
            return 0.0, [math.inf] * len(steps), 0
        gram = design.T @ design
        try:
            inverse = np.linalg.inv(gram)
        except np.linalg.LinAlgError:
            return float(np.sum((y - y.mean()) ** 2)), [0.0] * len(steps), df
        coef = inverse @ (design.T @ y)
        sse = max(0.0, float(np.sum((y - design @ coef) ** 2)))
        spread = float(np.sum(w * (x - np.average(x, weights=w)) ** 2))
        first = len(columns) - len(steps)
        ts = []
        for j in range(first, len(columns)):
            var = sse / df * float(inverse[j, j])
            if sse <= 1e-20 * spread or var <= 0:  # an exact fit: rounding is all that is left
                exact = abs(float(coef[j])) * math.sqrt(float(gram[j, j])) > 1e-7 * math.sqrt(spread + 1e-300)
                ts.append(math.inf if exact else 0.0)
            else:
                ts.append(float(coef[j]) / math.sqrt(var))
        return sse, ts, df


def step_size(sums: Sums, a: int, k: int, b: int, slope: bool) -> tuple[float, float, int]:
    """The step at ``k`` on [a, b) by weighted least squares of a level and a step (plus a common
    slope when ``slope``): (the step, its standard error, degrees of freedom)."""
    x, w = sums.x[a:b], sums.weight[a:b]
    n = b - a
    index = np.arange(n, dtype=float)
    columns = [np.ones(n), (index >= k - a).astype(float)]
    if slope:
        columns.insert(1, index / max(n - 1, 1) * 2.0 - 1.0)
    df = n - len(columns)
    root = np.sqrt(w)
    design = np.column_stack(columns) * root[:, None]
    y = x * root
    if df <= 0:
        return float(x[k - a :].mean() - x[: k - a].mean()) if 0 < k - a < n else 0.0, math.inf, max(df, 0)
    try:
        inverse = np.linalg.inv(design.T @ design)
    except np.linalg.LinAlgError:
        return 0.0, math.inf, df
    coef = inverse @ (design.T @ y)
    sse = max(0.0, float(np.sum((y - design @ coef) ** 2)))
    return float(coef[-1]), math.sqrt(sse / df * float(inverse[-1, -1])), df


def plausible_locations(sums: Sums, a: int, k: int, b: int, m: int, level: float) -> list[int]:
    """Split positions of [a, b) other than ``k`` (at least ``m`` from both ends) whose gain is within
    ``level`` of the largest: the locations a likelihood-ratio test at that level keeps."""
    return [i for i, _ in location_deficits(sums, a, k, b, m, level)]


def location_deficits(sums: Sums, a: int, k: int, b: int, m: int, level: float) -> list[tuple[int, float]]:
    """:func:`plausible_locations` with each one's deficit: the largest gain minus its own."""
    ks, gain = sums.gains(a, b, min(m, k - a, b - k))
    if ks.size == 0:
        return []
    deficit = float(np.max(gain)) - gain
    return [(int(i), float(d)) for i, d in zip(ks, deficit, strict=True) if d <= level and i != k]


def binary_segmentation(sums: Sums, n: int, m: int, penalty: float) -> list[int]:
    """Split [0, n) where the weighted gain is largest, while it exceeds ``penalty``."""
    found: list[int] = []
    stack = [(0, n)]
    while stack:
        a, b = stack.pop()
        if b - a < 2 * m:
            continue
        ks, gain = sums.gains(a, b, m)
        if gain.size == 0:
            continue
        best = int(np.argmax(gain))
        if gain[best] <= penalty:
            continue
        k = int(ks[best])
        found.append(k)
        stack.append((a, k))
        stack.append((k, b))
    return sorted(found)
