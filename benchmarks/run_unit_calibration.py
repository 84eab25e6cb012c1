"""Calibration of comparisons whose runs hold many samples each (issue 34: the replicated unit).

The workflow: a benchmark printing 49 TSC samples per process run, on a
20-cycle grid, 3% interrupts (+200..800 cycles), sd 10 cycles within a run,
with or without a per-process offset (sd 15 cycles: address-space layout,
page placement); 20 vs 20 runs, and 5 new runs against 50 stored.  For each
row ``--reps`` A/A draws and A/B draws (the candidate's true centre times
1 + delta) are judged by:

- ``pooled``: every sample as independent (what ``abstat compare`` of a
  stored one-invocation variant did before: 20 x 49 = 980 samples);
- ``run medians``: runs as the unit, plain run medians (the nested path
  before: on a grid, often all equal, then "cannot judge");
- ``spread medians``: runs as the unit, each run's median with its ties
  read as spread over their grid cell (:mod:`abstat.stats.run_medians`,
  now the default);
- ``run means``: ``--center mean`` (Welch/Fieller on the run means).

References on the same draws: a permutation test (4000 draws) of the
difference of the run means, and of the spread run medians; on the spread
run medians Welch's t and Yuen's 10%-trimmed t on the logarithms and the
Brunner-Munzel test (scipy).  A reference is *valid* only if it holds its
level on the null rows too, whose 5 new runs are 3x as noisy as the 50
stored ones (same centre): the permutation tests of a difference assume
exchangeable variants and called 38-46% of those different (wave 10,
docs/statistics.md).  For each reference the paired power difference
(default minus reference) is printed with its Monte Carlo error.  Reported: the
A/A rate called significant at 5% (FPR), the share "cannot judge", the
coverage of each method's named estimand (the Hodges-Lehmann ratio of the
population's run centres, from 20000 runs per population; the ratio of mean
run means for ``run means``; the pooled estimand for ``pooled``) and power.

    nice -n 10 python benchmarks/run_unit_calibration.py --reps 1000
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from abstat.comparison import estimands
from abstat.comparison.core import compare
from abstat.stats.nested import run_stats
from abstat.stats.run_medians import spread_medians

BASE, GRID, SD, RATE = 440.0, 20.0, 10.0, 0.03
PER_RUN = 49


@dataclass(frozen=True)
class Row:
    name: str
    kx: int
    ky: int
    offset: float
    delta: float  # relative change of the candidate's true centre, for power and coverage
    noisier: float = 1.0  # the candidate's within-run sd and offset sd are this multiple of the baseline's


ROWS = [
    Row("20 vs 20 runs, offsets sd 15", 20, 20, 15.0, 0.02),
    Row("20 vs 20 runs, no offsets", 20, 20, 0.0, 0.0025),
    Row("50 stored vs 5 new, offsets sd 15", 50, 5, 15.0, 0.04),
    Row("50 stored vs 5 new, no offsets", 50, 5, 0.0, 0.005),
    Row("null: 50 stored vs 5 new 3x as noisy, offsets sd 15", 50, 5, 15.0, 0.0, 3.0),
    Row("null: 50 stored vs 5 new 3x as noisy, no offsets", 50, 5, 0.0, 0.0, 3.0),
]


def draw(
    rng: np.random.Generator, k: int, offset: float, scale: float, per_run: int = PER_RUN, noisier: float = 1.0
) -> np.ndarray:
    """k runs x per_run samples (rows: runs); ``noisier`` multiplies the within-run sd and the offsets' sd."""
    centre = BASE * scale + rng.normal(0.0, offset * noisier, (k, 1)) if offset else np.full((k, 1), BASE * scale)
    values = centre + rng.normal(0.0, SD * noisier, (k, per_run))
    values += (rng.random((k, per_run)) < RATE) * rng.uniform(200.0, 800.0, (k, per_run))
    return np.round(values / GRID) * GRID


def centres(runs: np.ndarray, kind: str) -> np.ndarray:
    listed = list(runs)
    if kind == "spread":
        return spread_medians(listed)
    stats = run_stats(listed)
    return stats.medians if kind == "plain" else stats.means


def hl_ratio(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, pairs: int = 4_000_000) -> float:
    """The population Hodges-Lehmann ratio: the median of y/x over independent pairs."""
    return float(np.median(y[rng.integers(0, y.size, pairs)] / x[rng.integers(0, x.size, pairs)]))


def truths(row: Row, rng: np.random.Generator) -> dict[str, float]:
    """Each method's estimand under the row's change, in percent, from 20000 runs per population."""
    x = draw(rng, 20000, row.offset, 1.0)
    y = draw(rng, 20000, row.offset, 1.0 + row.delta, noisier=row.noisier)
    found = {kind: 100.0 * (hl_ratio(centres(x, kind), centres(y, kind), rng) - 1.0) for kind in ("plain", "spread")}
    found["mean"] = 100.0 * (y.mean() / x.mean() - 1.0)
    # pooled: the HL ratio of the samples, each read as spread over its grid cell (as the estimator reads ties)
    fx, fy = (v.ravel() + rng.uniform(-GRID / 2, GRID / 2, v.size) for v in (x, y))
    found["pooled"] = 100.0 * (hl_ratio(fx, fy, rng) - 1.0)
    return found


def permutation_p(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, draws: int = 4000) -> float:
    """Two-sided permutation p of the difference of means."""
    both = np.concatenate([x, y])
    observed = abs(y.mean() - x.mean())
    keys = rng.random((draws, both.size)).argsort(axis=1)
    shuffled = both[keys]
    diffs = np.abs(shuffled[:, x.size :].mean(axis=1) - shuffled[:, : x.size].mean(axis=1))
    return (1.0 + float(np.sum(diffs >= observed - 1e-9))) / (draws + 1.0)


def judge_centres(cx: np.ndarray, cy: np.ndarray) -> tuple[bool, bool, tuple[float, float]]:
    """(significant, cannot judge, interval) of the default rule on run centres (as runs.run_centres)."""
    if np.ptp(cx) == 0.0 and np.ptp(cy) == 0.0:
        return False, True, (math.nan, math.nan)
    r = estimands.default_change(cx, cy, 0.95, unit="runs", of="run medians")
    return bool(r.p_value < 0.05), bool(r.cannot), (r.ci[0], r.ci[1])


def one_draw(row: Row, rng: np.random.Generator, scale: float, seed: int) -> dict[str, tuple[bool, bool, tuple]]:
    x = draw(rng, row.kx, row.offset, 1.0)
    y = draw(rng, row.ky, row.offset, scale, noisier=row.noisier)
    out: dict[str, tuple[bool, bool, tuple]] = {}
    pooled = compare(x.ravel().tolist(), y.ravel().tolist(), seed=seed)
    out["pooled"] = (pooled.significant, pooled.verdict == "cannot judge", tuple(pooled.ci_pct or (math.nan,) * 2))
    for kind in ("plain", "spread"):
        out[kind] = judge_centres(centres(x, kind), centres(y, kind))
    mean = compare(x.tolist(), y.tolist(), center="mean", seed=seed)
    out["mean"] = (mean.significant, mean.verdict == "cannot judge", tuple(mean.ci_pct or (math.nan,) * 2))
    mx, my = centres(x, "mean"), centres(y, "mean")
    out["perm means"] = (permutation_p(mx, my, rng) < 0.05, False, (math.nan, math.nan))
    sx, sy = centres(x, "spread"), centres(y, "spread")
    out["perm spread"] = (permutation_p(sx, sy, rng) < 0.05, False, (math.nan, math.nan))
    lx, ly = np.log(sx), np.log(sy)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy on constant samples: NaN, counted as not significant
        for name, p in (
            ("welch logs", stats.ttest_ind(lx, ly, equal_var=False).pvalue),
            ("yuen logs", stats.ttest_ind(lx, ly, equal_var=False, trim=0.1).pvalue),
            ("bm spread", stats.brunnermunzel(sx, sy).pvalue),
        ):
            out[name] = (bool(p < 0.05), False, (math.nan, math.nan))
    return out


METHODS = ["pooled", "plain", "spread", "mean", "perm means", "perm spread", "welch logs", "yuen logs", "bm spread"]
REFERENCES = ["perm means", "perm spread", "welch logs", "yuen logs", "bm spread"]
LABELS = {
    "pooled": "pooled samples (before)",
    "plain": "plain run medians",
    "spread": "spread run medians (now)",
    "mean": "--center mean (run means)",
    "perm means": "permutation, run means",
    "perm spread": "permutation, spread medians",
    "welch logs": "Welch t, logs of spread medians",
    "yuen logs": "Yuen 10% t, logs of spread medians",
    "bm spread": "Brunner-Munzel t, spread medians",
}


def run_row(row: Row, reps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = truths(row, rng)
    aa = {m: [0, 0] for m in METHODS}
    ab = {m: [0, 0, 0] for m in METHODS}
    paired = {m: [0.0, 0.0] for m in REFERENCES}  # sum and sum of squares of (default - reference) calls
    for i in range(reps):
        for m, (sig, cannot, _) in one_draw(row, rng, 1.0, i).items():
            aa[m][0] += sig
            aa[m][1] += cannot
        if not row.delta:
            continue
        drawn = one_draw(row, rng, 1.0 + row.delta, i)
        for m in REFERENCES:
            d = float(drawn["spread"][0]) - float(drawn[m][0])
            paired[m][0] += d
            paired[m][1] += d * d
        for m, (sig, _, ci) in drawn.items():
            ab[m][0] += sig
            if m in truth and math.isfinite(ci[0]):
                ab[m][1] += ci[0] <= truth[m] <= ci[1]
                ab[m][2] += 1
    report(row, reps, truth, aa, ab, paired)


def report(
    row: Row, reps: int, truth: dict[str, float], aa: dict[str, list], ab: dict[str, list], paired: dict[str, list]
) -> None:
    print(f"\n## {row.name}: {reps} A/A and {reps} A/B draws, change {100 * row.delta:+.2f}%")
    print("truths (%): " + ", ".join(f"{k} {v:+.3f}" for k, v in truth.items()))
    print(f"| method | A/A FPR | cannot judge | coverage | power at {100 * row.delta:+.2f}% |")
    print("|---|---|---|---|---|")
    for m in METHODS:
        cov = f"{100 * ab[m][1] / ab[m][2]:.1f}% ({ab[m][2]})" if ab[m][2] else "-"
        print(
            f"| {LABELS[m]} | {100 * aa[m][0] / reps:.1f}% | {100 * aa[m][1] / reps:.1f}% | {cov} | "
            f"{100 * ab[m][0] / reps:.1f}% |"
        )
    if row.delta:
        print(
            "paired power difference, default (spread medians) minus: "
            + "; ".join(f"{LABELS[m]} {gap(paired[m][0], paired[m][1], reps)}" for m in REFERENCES)
        )
    sys.stdout.flush()


def gap(total: float, squares: float, reps: int) -> str:
    """The mean paired difference in points with its Monte Carlo standard error."""
    mean = total / reps
    se = math.sqrt(max(squares / reps - mean * mean, 0.0) / reps)
    return f"{100 * mean:+.1f} ±{100 * se:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261205)
    parser.add_argument("--only", default="", help="rows whose name contains one of these (comma-separated)")
    args = parser.parse_args(argv)
    chosen = [r for r in ROWS if not args.only or any(part in r.name for part in args.only.split(","))]
    for index, row in enumerate(chosen):
        run_row(row, args.reps, args.seed + index)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
