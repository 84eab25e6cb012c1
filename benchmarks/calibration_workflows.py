"""Calibration of the default ``abstat compare`` on the users' own workflows (issue 34).

Rows: few new runs against a big stored baseline (5 vs 500, 500 vs 5) with
interrupts and skew; n = 3, 4, 5, 7 against 30 and 500; grids that differ
(20 against 21 cycles); an interrupt-rate and a mixture-weight change;
sorted files; AR(1) at n = 10-15.  For each row ``reps`` A/A draws (the
baseline population on both sides, the row's sizes) and A/B draws:

- FPR: A/A draws called significant (target <= 6%);
- coverage: A/B intervals holding the true change of the named estimand
  (``calibration_truth.truth``, from the populations; target >= 94%);
- power beside Welch's t, Yuen's 10%-trimmed t on logarithms, scipy's
  Brunner-Munzel (t reference), Mann-Whitney and a permutation test of the
  difference of means (200 draws), on the same draws; a reference is valid
  in a row when its A/A rate is at most 6% within two Monte Carlo errors,
  and in the normal rows of n against 500 also its rate on the row "null:
  small side 3x as wide" of those sizes (same median, the small side's
  spread 3x the big side's: a test that is exact only for one shape is not
  a valid replacement there); target: at most 5 points below the best valid.
  With ``--validity-draws V`` (default 2000) both rates are measured on V
  further draws (vectorised; the permutation test of means on V / 4), not on
  the row's own few hundred: at 150 draws a reference whose true A/A rate is
  7.8% passes the 6% check half of the time.  The wider null then applies to
  every row of unequal sizes (either side the small one), not only the
  normal rows against 500.  A second gap is size-adjusted: each reference
  at the p-value threshold where its rate on those A/A draws is 5% (at most
  ``ALPHA``), valid when its wider-null rate at that threshold holds, so that
  a reference calling 7% of A/A draws gains no power from it.

Then family-wise error of ``report``'s Holm adjustment on all-null tables of
8 hosts x 4 metrics at n = 10, 20, 50 per cell (``--tables`` each), using
``abstat.report.adjust.adjust_p_values``.

    python benchmarks/calibration_workflows.py --reps 1000 --tables 400 --markdown
    python benchmarks/calibration_workflows.py --reps 400 --no-fwer --only "3 vs,4 vs"   # in processes:
    python benchmarks/calibration_workflows.py --reps 400 --fwer-only --fwer-n 10        # rows or sizes split
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from typing import Any

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

from calibration_truth import Component, Population, normal, population, truth  # noqa: E402

import abstat  # noqa: E402
from abstat.report.adjust import adjust_p_values  # noqa: E402

ALPHA = 0.05
N = population("N(1000, 10)", normal(1000, 10))
OUT = population("3% interrupts", normal(1000, 10, 0.97), Component(0.03, stats.norm(1000, 10), (1.3, 1.8)))
SKEW = population("1000+30 LogN(0,1)", Component(1.0, stats.lognorm(1.0, loc=1000, scale=30)))
G20 = population("grid 20", normal(440, 7), step=20)
G21 = population("grid 21", normal(440, 7), step=21)
RATE2 = population("2% interrupts", normal(1000, 10, 0.98), Component(0.02, stats.norm(1000, 10), (1.3, 1.8)))
RATE8 = population("8% interrupts", normal(1000, 10, 0.92), Component(0.08, stats.norm(1000, 10), (1.3, 1.8)))
MIXA = population("mixture 80/20", normal(1000, 10, 0.8), normal(1100, 10, 0.2))
MIXB = population("mixture 70/30", normal(1000, 10, 0.7), normal(1100, 10, 0.3))
WIDE = population("N(1000, 30)", normal(1000, 30))  # the same median, 3x the spread


class Sorted:
    """A population whose samples are written sorted (a sorted file)."""

    def __init__(self, pop: Population) -> None:
        self.pop, self.name = pop, pop.name + ", sorted"

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.sort(self.pop.sample(rng, n))


class AR1:
    def __init__(self, phi: float, factor: float = 1.0) -> None:
        self.phi, self.factor, self.name = phi, factor, f"AR(1) {phi}"

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        e = rng.normal(0.0, 10 * math.sqrt(1 - self.phi**2), n + 100)
        x = np.empty(n + 100)
        x[0] = rng.normal(0.0, 10)
        for t in range(1, n + 100):
            x[t] = self.phi * x[t - 1] + e[t]
        return self.factor * (1000 + x[100:])


def rows() -> list[tuple[str, object, object, int, int, float | None]]:
    """(name, baseline, candidate, n baseline, n candidate, true change or None: from the populations)."""
    out: list[tuple[str, object, object, int, int, float | None]] = []
    for nx, ny in ((500, 5), (5, 500)):
        out.append((f"3% interrupts x U(1.3,1.8), +1%, {nx} vs {ny}", OUT, OUT.scaled(1.01), nx, ny, 1.0))
        out.append((f"skewed 1000+30 LogN(0,1), +1%, {nx} vs {ny}", SKEW, SKEW.scaled(1.01), nx, ny, 1.0))
    for small in (3, 4, 5, 7):
        for big in (30, 500):
            out.append((f"normal, +1%, {small} vs {big}", N, N.scaled(1.01), big, small, 1.0))
            out.append((f"null: small side 3x as wide, {small} vs {big}", N, WIDE, big, small, 0.0))
    out.append(("grid 20 against grid 21 (same latent N(440, 7)), n 50", G20, G21, 50, 50, None))
    out.append(("interrupt rate 2% -> 8%, n 50", RATE2, RATE8, 50, 50, None))
    out.append(("mixture weight 80/20 -> 70/30, n 50", MIXA, MIXB, 50, 50, None))
    out.append(("sorted files, normal, +0.5%, n 50", Sorted(N), Sorted(N.scaled(1.005)), 50, 50, 0.5))
    out.append(("AR(1) phi 0.6, +1%, n 15", AR1(0.6), AR1(0.6, 1.01), 15, 15, 1.0))
    for phi, n in ((0.2, 15), (0.3, 15), (0.6, 10), (0.6, 12)):  # after it: its draws stay as they were
        out.append((f"AR(1) phi {phi}, +1%, n {n}", AR1(phi), AR1(phi, 1.01), n, n, 1.0))
    return out


def permutation_means(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, draws: int = 200) -> float:
    z = np.concatenate((x, y))
    observed = abs(y.mean() - x.mean())
    keys = rng.random((draws, z.size))
    idx = np.argsort(keys, axis=1)
    perm = z[idx]
    diff = np.abs(perm[:, x.size :].mean(axis=1) - perm[:, : x.size].mean(axis=1))
    return (1.0 + np.count_nonzero(diff >= observed * (1 - 1e-12))) / (draws + 1.0)


REFS = ("Welch", "Yuen 10% logs", "BM (t)", "Mann-Whitney", "permutation")


def references(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> list[float]:
    """The references' p-values (1 where undefined)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ps = [
            stats.ttest_ind(x, y, equal_var=False).pvalue,
            stats.ttest_ind(np.log(x), np.log(y), equal_var=False, trim=0.1).pvalue,
            stats.brunnermunzel(x, y).pvalue,
            stats.mannwhitneyu(x, y).pvalue,
            permutation_means(x, y, rng),
        ]
    return [float(p) if p == p else 1.0 for p in ps]


def reference_pvalues(px, py, nx: int, ny: int, draws: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Each reference's p-values on ``draws`` draws of ``px`` (``nx`` values)
    against ``py`` (``ny``), vectorised (the permutation test of means on a
    quarter of them)."""
    xs = np.stack([px.sample(rng, nx) for _ in range(draws)])  # per draw: sorted and AR(1) samples are not iid
    ys = np.stack([py.sample(rng, ny) for _ in range(draws)])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        out = [
            stats.ttest_ind(xs, ys, axis=1, equal_var=False).pvalue,
            stats.ttest_ind(np.log(xs), np.log(ys), axis=1, equal_var=False, trim=0.1).pvalue,
            stats.brunnermunzel(xs, ys, axis=1).pvalue,
            stats.mannwhitneyu(xs, ys, axis=1).pvalue,
            np.array([permutation_means(xs[i], ys[i], rng) for i in range(max(1, draws // 4))]),
        ]
    return [np.where(np.isnan(p), 1.0, p) for p in out]


class Validity:
    """References' p-values on A/A and wider-small-side null draws of a row's
    sizes, drawn once per (population, sizes), ``draws`` of each."""

    def __init__(self, draws: int, seed: int) -> None:
        self.draws, self.rng = draws, np.random.default_rng(seed + 1)
        self.cache: dict[tuple, list[np.ndarray]] = {}

    def pvalues(self, key: tuple, px, py, nx: int, ny: int) -> list[np.ndarray]:
        if key not in self.cache:
            self.cache[key] = reference_pvalues(px, py, nx, ny, self.draws, self.rng)
        return self.cache[key]

    def of_row(self, px, nx: int, ny: int) -> tuple[list[np.ndarray], list[np.ndarray] | None]:
        """(A/A p-values, wider-null p-values or None for equal sizes); the small side is the wide one."""
        aa = self.pvalues((px.name, nx, ny), px, px, nx, ny)
        if nx == ny:
            return aa, None
        return aa, self.pvalues(("wide", nx, ny), *((N, WIDE) if nx > ny else (WIDE, N)), nx, ny)


def size_levels(aa: list[np.ndarray]) -> np.ndarray:
    """Per reference the p-value threshold at which its A/A rejection rate is
    at most ``ALPHA`` (``ALPHA`` itself when it already holds): its level for
    size-adjusted power, so that a reference gains nothing from calling 7% of
    A/A draws at a nominal 5% (conservative ones are not raised)."""
    return np.array([min(ALPHA, float(np.sort(p)[int(ALPHA * p.size)])) for p in aa])


def rate(hits: float, reps: int) -> tuple[float, float]:
    p = hits / reps
    return p, math.sqrt(max(p * (1 - p), 1.0 / reps) / reps)


def fmt(p: float, se: float) -> str:
    return f"{100 * p:.1f}% ±{100 * se:.1f}"


def true_change(x, y, given: float | None) -> float:
    if given is not None:
        return given
    return truth("hl_ratio", x, y)


def validity(aa: np.ndarray, wide: np.ndarray | None, reps: int | list[int]) -> list[bool]:
    """Per reference: its A/A rate, and its rate on the wider-small-side null
    of the row's sizes if given, at most 6% within two Monte Carlo errors
    (``reps``: the draws behind each rate, one count or one per reference)."""
    counts = reps if isinstance(reps, list) else [reps] * len(REFS)

    def holds(p: float, k: int) -> bool:
        return p - 2 * math.sqrt(max(p * (1 - p), 1.0 / k) / k) <= 0.06

    return [
        holds(float(aa[k]), counts[k]) and (wide is None or holds(float(wide[k]), counts[k])) for k in range(len(REFS))
    ]


def power_gap(ours: np.ndarray, ref_ab: np.ndarray, valid: list[bool]) -> tuple[str, bool]:
    """The default's power minus the best valid reference's (paired, with its
    Monte Carlo error), and whether it is more than 5 points short beyond two errors."""
    best = max((k for k in range(len(REFS)) if valid[k]), key=lambda k: ref_ab[:, k].mean(), default=None)
    if best is None:
        return "no valid reference", False
    diff = ours - ref_ab[:, best]
    se = diff.std(ddof=1) / math.sqrt(diff.size)
    return f"{100 * diff.mean():+.1f} ±{100 * se:.1f} vs {REFS[best]}", diff.mean() + 2 * se < -0.05


def simulate(px, py, nx: int, ny: int, true: float, reps: int, rng: np.random.Generator) -> dict[str, Any]:
    """``reps`` A/A and A/B draws of a row: compare's calls and coverage, the references' p-values."""
    out: dict[str, Any] = {
        "fp": 0,
        "cover": 0,
        "power": 0,
        "cannot": 0,
        "ours": np.zeros(reps),
        "aa": np.ones((reps, len(REFS))),
        "ab": np.ones((reps, len(REFS))),
    }
    for i in range(reps):
        a, a2, b = px.sample(rng, nx), px.sample(rng, ny), py.sample(rng, ny)
        aa, ab = abstat.compare(a, a2, seed=i), abstat.compare(a, b, seed=i)
        out["fp"] += aa.significant
        out["power"] += ab.significant
        out["ours"][i] = ab.significant
        if ab.ci_pct is None:
            out["cannot"] += 1
        else:
            out["cover"] += ab.ci_pct[0] - 1e-9 <= true <= ab.ci_pct[1] + 1e-9
        out["aa"][i] = references(a, a2, rng)
        out["ab"][i] = references(a, b, rng)
    return out


def checked(
    checks: Validity, px, nx: int, ny: int, ours: np.ndarray, ref_ab: np.ndarray
) -> tuple[list[bool], list[str], str]:
    """Validity from the separate draws, the notes for the references' cells, the size-adjusted gap."""
    check_aa, check_wide = checks.of_row(px, nx, ny)
    counts = [checks.draws] * (len(REFS) - 1) + [max(1, checks.draws // 4)]
    aa_rates = np.array([np.mean(p < ALPHA) for p in check_aa])
    wide_rates = None if check_wide is None else np.array([np.mean(p < ALPHA) for p in check_wide])
    valid = validity(aa_rates, wide_rates, counts)
    notes = [
        f"; {checks.draws} draws: A/A {100 * aa_rates[k]:.1f}%"
        + ("" if wide_rates is None else f", wider null {100 * wide_rates[k]:.1f}%")
        + ("" if valid[k] else ", invalid")
        for k in range(len(REFS))
    ]
    levels = size_levels(check_aa)
    wide_adjusted = (
        None
        if check_wide is None
        else np.array([np.mean(p < level) for p, level in zip(check_wide, levels, strict=True)])
    )
    valid_adjusted = validity(np.full(len(REFS), ALPHA), wide_adjusted, counts)
    return valid, notes, power_gap(ours, (ref_ab < levels).astype(float), valid_adjusted)[0]


def missed(
    name: str, null: bool, cov: tuple[float, float], fpr: tuple[float, float], pw: tuple[float, float]
) -> list[str]:
    """The row's missed false-positive and coverage targets (beyond two Monte Carlo errors)."""
    failures = []
    if fpr[0] - 2 * fpr[1] > 0.06:
        failures.append(f"false positives {name}: {fmt(*fpr)}")
    if null and pw[0] - 2 * pw[1] > 0.06:
        failures.append(f"false positives {name} (the candidate's draws): {fmt(*pw)}")
    if cov[0] + 2 * cov[1] < 0.94:
        failures.append(f"coverage {name}: {fmt(*cov)}")
    return failures


def run_row(
    row,
    reps: int,
    rng: np.random.Generator,
    wide: dict[tuple[int, int], np.ndarray] | None = None,
    checks: Validity | None = None,
) -> tuple[list[str], list[str]]:
    """One row's cells.  ``wide``: per size pair, the references' rates on the
    row "null: small side 3x as wide" of those sizes, if it was run (a
    reference must hold its level there too to count as valid).  ``checks``:
    validity measured on separate draws instead (:class:`Validity`)."""
    name, px, py, nx, ny, given = row
    true = true_change(px, py, given)
    null = name.startswith("null")
    got = simulate(px, py, nx, ny, true, reps, rng)
    ref_aa, ref_ab, ours = got["aa"], got["ab"], got["ours"]
    called = (ref_ab < ALPHA).astype(float)
    if null and wide is not None:
        wide[(nx, ny)] = called.mean(axis=0)
    adjusted = ""
    if checks is not None and not null:
        valid, notes, adjusted = checked(checks, px, nx, ny, ours, ref_ab)
    else:
        valid = validity(ref_aa.mean(axis=0), None if null or wide is None else wide.get((nx, ny)), reps)
        notes = [""] * len(REFS)
    gap, short = ("(null row: power is a false-positive rate)", False) if null else power_gap(ours, called, valid)
    refs = [
        f"{fmt(*rate(called[:, k].sum(), reps))} (A/A {100 * np.mean(ref_aa[:, k] < ALPHA):.1f}%{notes[k]})"
        for k in range(len(REFS))
    ]
    cov, fpr, pw = rate(got["cover"], reps), rate(got["fp"], reps), rate(got["power"], reps)
    line = [
        name,
        f"{nx}/{ny}",
        f"{true:+.3g}%",
        fmt(*cov),
        fmt(*fpr),
        fmt(*pw),
        *refs,
        gap,
        adjusted,
        f"{100 * got['cannot'] / reps:.1f}%",
    ]
    return line, ([f"power {name}: {gap}"] if short else []) + missed(name, null, cov, fpr, pw)


def fwer(n: int, tables: int, rng: np.random.Generator, shape: Population = N) -> tuple[float, float, float]:
    """Share of all-null 8 x 4 tables with a Holm-adjusted p below 0.05, and the unadjusted
    per-cell rate of p < 0.05/32."""
    families = tail = 0
    for t in range(tables):
        ps = [abstat.compare(shape.sample(rng, n), shape.sample(rng, n), seed=t * 32 + c).p_value for c in range(32)]
        ps = [1.0 if p != p else p for p in ps]
        families += min(adjust_p_values(ps, "holm")) < ALPHA
        tail += sum(p < ALPHA / 32 for p in ps)
    p, se = rate(families, tables)
    return p, se, tail / (32 * tables)


HEADER = [
    "row",
    "n base/cand",
    "true change",
    "coverage",
    "FPR (A/A)",
    "power",
    *REFS,
    "gap to best valid",
    "gap, size-adjusted",
    "cannot judge",
]


def table(header: list[str], lines: list[list[str]], markdown: bool) -> str:
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return "\n".join(out + ["| " + " | ".join(r) + " |" for r in lines])
    return "\n".join("  ".join(r) for r in [header, *lines])


def selected(args: argparse.Namespace) -> list:
    """The rows to run, the wider-small-side nulls first (they decide which
    references are valid in the rows of their sizes)."""
    if args.fwer_only:
        return []
    ordered = rows()[::-1] if args.reverse else rows()
    ordered = [r for r in ordered if r[0].startswith("null")] + [r for r in ordered if not r[0].startswith("null")]
    if args.only:
        ordered = [r for r in ordered if any(part in r[0] for part in args.only.split(","))]
    return ordered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--tables", type=int, default=400)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--only", default="", help="rows whose name contains one of these (comma-separated) texts")
    parser.add_argument("--fwer-n", default="10,20,50", help="cell sizes of the Holm tables")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-fwer", action="store_true")
    parser.add_argument("--fwer-only", action="store_true")
    parser.add_argument("--reverse", action="store_true", help="rows in reverse order (a second process)")
    parser.add_argument(
        "--validity-draws",
        type=int,
        default=2000,
        help="draws on which the references' validity is measured (0: the row's own draws)",
    )
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.process_time()
    lines, failures = [], []
    wide: dict[tuple[int, int], np.ndarray] = {}
    checks = Validity(args.validity_draws, args.seed) if args.validity_draws > 0 else None
    for row in selected(args):
        line, missed = run_row(row, args.reps, rng, wide, checks)
        lines.append(line)
        failures += missed
        print("  ".join(line), file=sys.stderr, flush=True)
    print(f"{args.reps} draws per row, alpha {ALPHA}, seed {args.seed}; rates ± one Monte Carlo standard error\n")
    if lines:
        print(table(HEADER, lines, args.markdown))
    if not args.no_fwer and not args.only:
        fw = []
        for n in (int(v) for v in args.fwer_n.split(",")):
            p, se, tail = fwer(n, args.tables, rng)
            fw.append([str(n), str(args.tables), fmt(p, se), f"{tail:.5f} (nominal {ALPHA / 32:.5f})"])
            if p - 2 * se > 0.06:
                failures.append(f"Holm family-wise error at n {n}: {fmt(p, se)}")
        print()
        print(
            table(
                ["n per cell", "all-null 8 x 4 tables", "family-wise error (Holm)", "P(p < 0.05/32) per cell"],
                fw,
                args.markdown,
            )
        )
    print(f"\n{time.process_time() - started:.0f} s of CPU")
    for failure in failures:
        print(f"MISSED TARGET (beyond 2 Monte Carlo errors): {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
