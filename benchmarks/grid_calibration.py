"""Calibration of a parameter scan's analysis (``abstat run -L``): the interaction test and the scaling exponent.

    nice -n 10 python benchmarks/grid_calibration.py [--grids 2000] [--seed 1]

Every simulated grid goes through :func:`abstat.comparison.grid.analyse`, the
code ``abstat run``'s end report and ``abstat report`` call.  A/A over a
3 x 2 grid (3 values of the parameter, 2 identical variants) on the users'
workflows (lognormal noise, unequal variances across the points, heavy
tails, outlier mixtures, quantized times with interrupts, 3 runs per cell,
unequal counts after failed runs, drift shared by the variants of a block):
the share of grids where the change is called dependent on the parameter
(target <= 6% at alpha 5%), next to Cochran's Q against chi-square and the
two-way ANOVA's interaction F test on the same draws.  Then power with a
real interaction, against the ANOVA F test (the best valid test when the
noise is normal with equal variances), and the coverage of the scaling
exponent's 95% interval.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from abstat.comparison.grid import analyse  # noqa: E402

SIZES = (1.0, 4.0, 16.0)


def noise(rng: np.random.Generator, kind: str, n: int, point: int) -> np.ndarray:
    """Multiplicative noise factors of one cell."""
    if kind == "lognormal":
        return np.exp(rng.normal(0, 0.05, n))
    if kind == "unequal-variance":
        return np.exp(rng.normal(0, (0.01, 0.05, 0.25)[point], n))
    if kind == "heavy-tails":
        return np.exp(0.03 * rng.standard_t(3, n))
    if kind == "outliers":
        return np.exp(rng.normal(0, 0.03, n)) * np.where(rng.random(n) < 0.1, 1.5, 1.0)
    if kind == "quantized":  # 1 ms clock ticks on ~12 ms runs, 5% hit by a 4 ms interrupt
        values = 12.0 * np.exp(rng.normal(0, 0.04, n)) + np.where(rng.random(n) < 0.05, 4.0, 0.0)
        return np.maximum(np.round(values), 1.0) / 12.0
    raise ValueError(kind)


def cell_counts(kind: str, runs: int) -> tuple[int, int]:
    return {"3-runs": (3, 3), "unequal-n": (5, 30)}.get(kind, (runs, runs))


def simulate(
    rng: np.random.Generator, kind: str, runs: int, effects: tuple[float, ...] = (1.0, 1.0, 1.0), exponent: float = 1.0
) -> dict[str, list]:
    grid = []
    base_kind = kind if kind not in ("3-runs", "unequal-n", "drift") else "lognormal"
    for index, size in enumerate(SIZES):
        na, nb = cell_counts(kind, runs)
        a = size**exponent * noise(rng, base_kind, na, index)
        b = size**exponent * effects[index] * noise(rng, base_kind, nb, index)
        if kind == "drift":  # a slow drift both variants of a block share (interleaved runs)
            walk = np.exp(np.cumsum(rng.normal(0, 0.02, runs)))
            a, b = a * walk, b * walk
        grid.append(({"size": f"{size:g}"}, {"before": a.tolist(), "after": b.tolist()}))
    return {"wall": grid}


def reference_tests(grid: list) -> tuple[float, float]:
    """(Cochran's Q against chi-square, the two-way ANOVA's interaction F test) p-values on the logs."""
    d, w, cells = [], [], []
    for _, samples in grid:
        a, b = np.log(samples["before"]), np.log(samples["after"])
        d.append(b.mean() - a.mean())
        w.append(1 / (a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))
        cells.append((a, b))
    d_arr, w_arr = np.asarray(d), np.asarray(w)
    q = float((w_arr * (d_arr - (w_arr * d_arr).sum() / w_arr.sum()) ** 2).sum())
    p_q = float(stats.chi2.sf(q, len(d) - 1))
    # two-way ANOVA with interaction, cell means model: SS of interaction by comparing with the additive fit
    ys, point, variant = [], [], []
    for i, (a, b) in enumerate(cells):
        for v, values in enumerate((a, b)):
            ys.extend(values)
            point.extend([i] * values.size)
            variant.extend([v] * values.size)
    y, pi, vi = np.asarray(ys), np.asarray(point), np.asarray(variant)
    full = np.column_stack([(pi == i) & (vi == v) for i in range(len(cells)) for v in (0, 1)]).astype(float)
    additive = np.column_stack(
        [np.ones_like(y)] + [(pi == i).astype(float) for i in range(1, len(cells))] + [(vi == 1).astype(float)]
    )
    rss = [float(((y - m @ np.linalg.lstsq(m, y, rcond=None)[0]) ** 2).sum()) for m in (full, additive)]
    df1, df2 = len(cells) - 1, y.size - full.shape[1]
    p_f = float(stats.f.sf((rss[1] - rss[0]) / df1 / (rss[0] / df2), df1, df2)) if rss[0] > 0 else 1.0
    return p_q, p_f


def rates(
    rng: np.random.Generator, kind: str, grids: int, runs: int, effects: tuple[float, ...]
) -> tuple[float, float, float, int]:
    calls = q_calls = f_calls = untested = 0
    for _ in range(grids):
        metric_grids = simulate(rng, kind, runs, effects)
        result = analyse(metric_grids, ["size"], ["before", "after"], "before")
        test = result.interactions["wall"][0]
        if test.p_value is None:
            untested += 1
            continue
        calls += test.p_value < 0.05
        p_q, p_f = reference_tests(metric_grids["wall"])
        q_calls += p_q < 0.05
        f_calls += p_f < 0.05
    return calls / grids, q_calls / grids, f_calls / grids, untested


def coverage(rng: np.random.Generator, kind: str, grids: int, runs: int, exponent: float = 0.7) -> float:
    covered = 0
    for _ in range(grids):
        result = analyse(simulate(rng, kind, runs, exponent=exponent), ["size"], ["before", "after"], "before")
        s = next(s for s in result.scalings["wall"] if s.variant == "before")
        covered += s.interval is not None and s.interval[0] <= exponent <= s.interval[1]
    return covered / grids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grids", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=10, help="runs per variant and point")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    kinds = ("lognormal", "unequal-variance", "heavy-tails", "outliers", "quantized", "3-runs", "unequal-n", "drift")
    print(
        f"A/A over a 3 x 2 grid, {args.grids} grids each, {args.runs} runs per cell, alpha 5%: share called "
        "dependent on the parameter"
    )
    print(f"{'workflow':18} {'abstat (Welch)':>15} {'Q vs chi2':>10} {'ANOVA F':>8} {'untested':>9}")
    worst = 0.0
    for kind in kinds:
        ours, q, f, untested = rates(rng, kind, args.grids, args.runs, (1.0, 1.0, 1.0))
        worst = max(worst, ours)
        print(f"{kind:18} {ours:15.3f} {q:10.3f} {f:8.3f} {untested:9d}")
    print(f"worst false-call rate: {worst:.3f} (target <= 0.06)")
    print("\npower, true ratios 1.00 / 1.03 / 1.06 across the points:")
    for kind in ("lognormal", "heavy-tails", "unequal-variance"):
        ours, q, f, _ = rates(rng, kind, args.grids, args.runs, (1.0, 1.03, 1.06))
        print(f"{kind:18} {ours:15.3f} {q:10.3f} {f:8.3f}")
    print("\ncoverage of the scaling exponent's 95% interval (true exponent 0.7):")
    for kind in ("lognormal", "unequal-variance", "heavy-tails", "outliers"):
        print(f"{kind:18} {coverage(rng, kind, max(200, args.grids // 2), args.runs):.3f}")
    return 0 if worst <= 0.06 else 1


if __name__ == "__main__":
    sys.exit(main())
