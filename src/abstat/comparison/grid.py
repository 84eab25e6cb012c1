"""A parameter scan's analysis: does the change depend on the grid point, and how does a metric scale?

The input is a grid: points (each the parameters' values, ``{"size": "10"}``)
and, at each point, every variant's values of one metric.

:func:`interaction` asks, for one candidate against the baseline, whether
its change differs across the points.  At each point the change is the log
ratio of geometric means, ``d = mean(log candidate) - mean(log baseline)``,
with its variance ``v = s_c^2/n_c + s_b^2/n_b`` and Welch-Satterthwaite
degrees of freedom ``f``; the test is Welch's heterogeneity test of the
``d`` (Welch 1951, his one-way analysis of variance with unequal variances,
applied to the points' changes): Cochran's ``Q = sum w (d - dbar)^2`` with
``w = 1/v``, divided by ``k - 1`` and Welch's small-sample correction, against
an F distribution.  The chi-square reference of ``Q`` alone calls too much
with the few runs a grid point has; this one is calibrated by simulation
(``benchmarks/grid_calibration.py``: A/A over a 3 x 2 grid).

:func:`scaling` is the scaling exponent of a variant: the slope of
``log(value)`` on ``log(parameter)`` over every value (least squares, with an
intercept per combination of the other parameters), with a t interval from
the HC3 standard error (White's, as MacKinnon and White 1985 refine it: the
points' variances may differ, as times at different sizes do); it needs the
parameter's values to be positive numbers.

Library code: returns data, notes attached; never prints.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

Point = Mapping[str, str]
#: one metric's grid: (point, variant -> values) per point
Grid = Sequence[tuple[Point, Mapping[str, Sequence[float]]]]


@dataclass
class Interaction:
    """Whether ``candidate``'s change against ``baseline`` depends on the grid point."""

    candidate: str
    baseline: str
    points: list[dict[str, str]]
    ratios: list[float]  # exp(d) per point: the ratio of geometric means
    intervals: list[tuple[float, float]] = field(default_factory=list)  # per point: its Welch t interval
    statistic: float | None = None  # Welch's F
    df: tuple[float, float] | None = None
    p_value: float | None = None
    q: float | None = None  # Cochran's Q (for the record)
    note: str | None = None  # why it was not tested

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate,
            "baseline": self.baseline,
            "points": [
                {"labels": dict(p), "ratio": r, "interval": list(i)}
                for p, r, i in zip(self.points, self.ratios, self.intervals, strict=True)
            ],
            "statistic": self.statistic,
            "df": list(self.df) if self.df else None,
            "p_value": self.p_value,
            "cochran_q": self.q,
            "note": self.note,
            "method": "Welch's heterogeneity test of the log ratio of geometric means across the grid points",
        }


@dataclass
class Scaling:
    """``variant``'s scaling exponent in ``parameter``: the log-log slope and its interval."""

    variant: str
    parameter: str
    exponent: float
    interval: tuple[float, float] | None
    n: int
    confidence: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "parameter": self.parameter,
            "exponent": self.exponent,
            "interval": list(self.interval) if self.interval else None,
            "n": self.n,
            "confidence": self.confidence,
            "notes": list(self.notes),
        }


def _logs(values: Sequence[float]) -> np.ndarray | None:
    array = np.asarray(values, dtype=float)
    if array.size == 0 or not np.all(np.isfinite(array)) or np.any(array <= 0):
        return None
    return np.log(array)


def point_change(baseline: Sequence[float], candidate: Sequence[float]) -> tuple[float, float, float] | None:
    """(d, v, f) of one point: the log ratio of geometric means, its variance and degrees of freedom;
    None when a side has fewer than 2 values or one that is not positive."""
    b, c = _logs(baseline), _logs(candidate)
    if b is None or c is None or b.size < 2 or c.size < 2:
        return None
    vb, vc = float(np.var(b, ddof=1)) / b.size, float(np.var(c, ddof=1)) / c.size
    v = vb + vc
    if v <= 0:
        return float(c.mean() - b.mean()), 0.0, math.inf
    f = v * v / (vb * vb / (b.size - 1) + vc * vc / (c.size - 1))
    return float(c.mean() - b.mean()), v, f


def welch_heterogeneity(
    d: Sequence[float], v: Sequence[float], f: Sequence[float]
) -> tuple[float, tuple[float, float], float, float]:
    """Welch's test that the ``d`` (variances ``v``, degrees of freedom ``f``) are equal:
    (F, (df1, df2), p, Cochran's Q)."""
    k = len(d)
    w = 1.0 / np.asarray(v, dtype=float)
    dd = np.asarray(d, dtype=float)
    total = float(w.sum())
    mean = float((w * dd).sum()) / total
    q = float((w * (dd - mean) ** 2).sum())
    lam = float((((1 - w / total) ** 2) / np.asarray(f, dtype=float)).sum())
    statistic = q / (k - 1) / (1 + 2 * (k - 2) * lam / (k * k - 1))
    df2 = (k * k - 1) / (3 * lam) if lam > 0 else math.inf
    p = float(stats.f.sf(statistic, k - 1, df2)) if math.isfinite(df2) else float(stats.chi2.sf(q, k - 1))
    return statistic, (float(k - 1), df2), p, q


def interaction(grid: Grid, baseline: str, candidate: str, confidence: float = 0.95) -> Interaction:
    """Test whether ``candidate``'s change against ``baseline`` differs across the points of ``grid``
    (each point's ratio with its ``confidence`` interval, Welch's t on the logarithms)."""
    result = Interaction(candidate, baseline, [], [])
    changes = []
    for point, samples in grid:
        change = point_change(samples.get(baseline, ()), samples.get(candidate, ()))
        if change is None:
            continue
        d, v, f = change
        half = float(stats.t.ppf(0.5 + confidence / 2, f)) * math.sqrt(v) if v > 0 else 0.0
        changes.append(change)
        result.points.append(dict(point))
        result.ratios.append(math.exp(d))
        result.intervals.append((math.exp(d - half), math.exp(d + half)))
    if len(changes) < 2:
        result.note = "fewer than 2 grid points with 2 or more positive values of both"
    elif any(v == 0 for _, v, _ in changes):
        result.note = "constant values at a grid point: no variance to judge the change by"
    else:
        ds, vs, fs = zip(*changes, strict=True)
        result.statistic, result.df, result.p_value, result.q = welch_heterogeneity(ds, vs, fs)
    return result


def numeric(values: Sequence[str]) -> list[float] | None:
    """The values as positive numbers (None when one is not)."""
    try:
        numbers = [float(value) for value in values]
    except ValueError:
        return None
    return numbers if all(math.isfinite(x) and x > 0 for x in numbers) else None


def scaling(grid: Grid, variant: str, parameter: str, confidence: float = 0.95) -> Scaling | None:
    """The slope of log(value) on log(``parameter``) of ``variant`` (an intercept per combination of the
    other parameters); None when the parameter's values are not positive numbers, or fewer than 2 of
    them have positive values."""
    xs: list[float] = []
    ys: list[float] = []
    groups: list[tuple[str, ...]] = []
    skipped = 0
    for point, samples in grid:
        x = numeric([point.get(parameter, "")])
        logs = _logs(samples.get(variant, ()))
        if x is None:
            return None
        if logs is None:
            skipped += len(samples.get(variant, ()))
            continue
        others = tuple(value for name, value in point.items() if name != parameter)
        xs.extend([math.log(x[0])] * logs.size)
        ys.extend(logs.tolist())
        groups.extend([others] * logs.size)
    if len(set(xs)) < 2:
        return None
    levels = sorted(set(groups))
    design = np.column_stack(
        [np.asarray(xs)] + [np.asarray([g == level for g in groups], dtype=float) for level in levels]
    )
    y = np.asarray(ys)
    coef, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
    result = Scaling(variant, parameter, float(coef[0]), None, len(ys), confidence)
    if skipped:
        result.notes.append(f"{skipped} value(s) not positive left out")
    df = len(ys) - rank
    if rank < design.shape[1] or df < 1:
        result.notes.append("too few values for an interval")
        return result
    residual = y - design @ coef
    bread = np.linalg.inv(design.T @ design)
    leverage = np.einsum("ij,jk,ik->i", design, bread, design)
    if np.any(leverage >= 1 - 1e-9):
        result.notes.append("a grid point with one value: no interval")
        return result
    scaled = design * (residual / (1 - leverage))[:, None]  # HC3: the points' variances may differ
    se = math.sqrt(float((bread @ (scaled.T @ scaled) @ bread)[0, 0]))
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    result.interval = (result.exponent - half, result.exponent + half)
    return result


@dataclass
class GridAnalysis:
    """Every interaction test and scaling exponent of a grid, for each metric."""

    parameters: list[str]
    baseline: str
    interactions: dict[str, list[Interaction]] = field(default_factory=dict)  # metric -> per candidate
    scalings: dict[str, list[Scaling]] = field(default_factory=dict)  # metric -> per variant, parameter
    adjusted: dict[tuple[str, str], float] = field(default_factory=dict)  # (metric, candidate) -> Holm p
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameters": list(self.parameters),
            "baseline": self.baseline,
            "confidence": self.confidence,
            "adjust": "holm",
            "interactions": {
                m: [dict(i.to_dict(), p_adjusted=self.adjusted.get((m, i.candidate))) for i in items]
                for m, items in self.interactions.items()
            },
            "scaling": {m: [s.to_dict() for s in items] for m, items in self.scalings.items()},
        }


def analyse(
    grids: Mapping[str, Grid],
    parameters: Sequence[str],
    variants: Sequence[str],
    baseline: str,
    confidence: float = 0.95,
) -> GridAnalysis:
    """``grids``: metric -> its grid.  Interaction tests of every candidate (Holm-adjusted over all of
    them), and every variant's scaling exponent in each parameter whose values are positive numbers."""
    result = GridAnalysis(list(parameters), baseline, confidence=confidence)
    for metric, grid in grids.items():
        result.interactions[metric] = [interaction(grid, baseline, c, confidence) for c in variants if c != baseline]
        found = [scaling(grid, variant, name, confidence) for name in parameters for variant in variants]
        result.scalings[metric] = [s for s in found if s is not None]
    tested = [(m, i) for m, items in result.interactions.items() for i in items if i.p_value is not None]
    adjusted = holm([i.p_value for _, i in tested if i.p_value is not None])
    result.adjusted = {(m, i.candidate): p for (m, i), p in zip(tested, adjusted, strict=True)}
    return result


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * float(p_values[index])))
        adjusted[index] = running
    return adjusted
