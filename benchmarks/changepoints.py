"""Change-point detectors on series with injected steps: abstat vs Otava vs ruptures PELT.

    python benchmarks/changepoints.py [--series 40] [--length 200] [--seed 1]

Every detector sees the same series.  Shapes (noise SD 1% of the level 100,
or ``--noise`` percent; the other sizes below scale with it):
normal, quantized (integers: the level moves in 1-unit steps like TSC
cycles), outliers (5% of points 20-50% high: one-sided interference),
bimodal (two modes 3 SD apart, 50/50), drift (a slow 3% drift over the
series, plus steps), spikes (stationary, 2% single-point spikes 10-30%
high: none of them is a change) and stationary noise.  Steps: 1-3 per
series, sizes 1-10% of the level (1-10 SD), at least 25 points apart.

A detected change matches a true one within +-5 points (one to one).
Printed per shape and detector: precision, recall, F1, mean detection
delay (|detected - true| of matches, in points), false alarms per 1000
points, for the spikes shape how many spikes were reported as changes, and
for abstat the coverage of its 95% interval of the step's size (how often
the true shift lies inside, over the matched changes).

A reference row, "oracle K", is not a detector: it is told the true number of
changes and places them by exact least squares (ruptures' Dynp; least
absolute deviations on the outliers shape), the maximum-likelihood
segmentation for Gaussian noise.  Its F1 is about the most any detector can
reach on a shape at that noise level: steps of a third of a noise SD cannot
be placed within +-5 points by anyone.

Anchors: Otava's compute_change_points with its defaults (window 50,
max_pvalue 0.001, min_magnitude 0) when apache-otava is installed;
ruptures PELT with an L2 cost and the BIC penalty 2*sigma^2*log(n), and
PELT with an RBF kernel and penalty 10 (ruptures' documentation example).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import numpy as np

TOLERANCE = 5
SHAPES = ("normal", "quantized", "outliers", "bimodal", "drift", "spikes", "stationary")


def make_series(shape: str, length: int, rng: np.random.Generator, noise_sd: float = 1.0
                ) -> tuple[np.ndarray, list[int], list[int], dict[int, float]]:
    """(values, true change indices, spike indices, true shift at each change);
    ``noise_sd`` in percent of the level."""
    level = np.full(length, 100.0)
    changes: list[int] = []
    if shape not in ("spikes", "stationary"):
        count = int(rng.integers(1, 4))
        tries = 0
        while len(changes) < count:
            at = int(rng.integers(25, length - 25))
            if all(abs(at - c) >= 25 for c in changes):
                changes.append(at)
            tries += 1
            if tries % 1000 == 0:  # a short series can leave no room: start again
                changes.clear()
        changes.sort()
        for at in changes:
            size = rng.uniform(0.01, 0.10) * rng.choice((-1.0, 1.0))
            level[at:] *= 1.0 + size
    shifts = {at: float(level[at] - level[at - 1]) for at in changes}
    noise = rng.normal(0.0, 1.0, length)
    spikes: list[int] = []
    if shape == "bimodal":
        noise = rng.normal(0.0, 0.6, length) + np.where(rng.random(length) < 0.5, -0.9, 0.9)
    values = level + noise_sd * noise
    if shape == "quantized":
        values = np.round(values / noise_sd) * noise_sd
    elif shape == "outliers":
        hit = rng.random(length) < 0.05
        values = np.where(hit, values * (1 + rng.uniform(0.2, 0.5, length)), values)
    elif shape == "drift":
        values = values + np.linspace(0.0, 3.0 * noise_sd, length) * rng.choice((-1.0, 1.0))
    elif shape == "spikes":
        hit = np.flatnonzero(rng.random(length) < 0.02)
        spikes = [int(i) for i in hit]
        values[hit] *= 1 + rng.uniform(0.1, 0.3, hit.size)
    return values, changes, spikes, shifts


def _sigma(values: np.ndarray) -> float:
    return float(np.median(np.abs(np.diff(values)))) / (0.6745 * math.sqrt(2)) or float(np.std(values)) or 1.0


INTERVALS: dict[int, tuple[float, float]] = {}  # abstat's last intervals by index (coverage column)


def detect_abstat(values: np.ndarray) -> list[int]:
    from abstat.history.changepoints import detect

    found = detect(values).change_points
    INTERVALS.clear()
    INTERVALS.update({c.index: (c.low, c.high) for c in found})
    return [c.index for c in found]


def detect_otava(values: np.ndarray) -> list[int]:
    from otava.analysis import compute_change_points

    return [int(c.index) for c in compute_change_points([float(v) for v in values])[0]]


def detect_pelt_l2(values: np.ndarray) -> list[int]:
    import ruptures

    pen = 2 * _sigma(values) ** 2 * math.log(len(values))
    return [e for e in ruptures.Pelt(model="l2", min_size=2).fit(values.reshape(-1, 1)).predict(pen=pen)
            if e < len(values)]


def detect_pelt_rbf(values: np.ndarray) -> list[int]:
    import ruptures

    return [e for e in ruptures.Pelt(model="rbf", min_size=2).fit(values.reshape(-1, 1)).predict(pen=10)
            if e < len(values)]


def oracle_segmentation(values: np.ndarray, count: int, shape: str) -> list[int]:
    import ruptures

    if count == 0:
        return []
    model = "l1" if shape == "outliers" else "l2"
    fitted = ruptures.Dynp(model=model, min_size=3, jump=1).fit(values.reshape(-1, 1))
    return [e for e in fitted.predict(n_bkps=count) if e < len(values)]


def match(found: list[int], truth: list[int]) -> list[tuple[int, int]]:
    pairs, used = [], set()
    for t in truth:
        best = min((f for f in found if f not in used and abs(f - t) <= TOLERANCE),
                   key=lambda f: abs(f - t), default=None)
        if best is not None:
            used.add(best)
            pairs.append((t, best))
    return pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=40, help="series per shape")
    parser.add_argument("--length", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--noise", type=float, default=1.0, help="noise SD in percent of the level (default 1)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-oracle", action="store_true", help="leave out the oracle K reference row")
    args = parser.parse_args()
    if args.length < 101:
        parser.error("--length must be at least 101 (three steps 25 points apart, 25 from each end)")
    detectors = {"abstat": detect_abstat, "PELT l2 BIC": detect_pelt_l2, "PELT rbf": detect_pelt_rbf}
    try:
        import otava.analysis  # noqa: F401

        detectors["Otava defaults"] = detect_otava
    except ImportError:
        print("note: apache-otava is not installed: no Otava column", file=sys.stderr)
    warnings.simplefilter("ignore")
    header = ["shape", "detector", "precision", "recall", "F1", "delay", "FA/1000", "spikes reported",
              "CI coverage", "errors", "s"]
    rows = []
    for shape in SHAPES:
        rng = np.random.default_rng([args.seed, SHAPES.index(shape)])
        series = [make_series(shape, args.length, rng, args.noise) for _ in range(args.series)]
        named = dict(detectors)
        if not args.no_oracle and shape not in ("spikes", "stationary"):
            named["oracle K (reference)"] = None
        for name, detector in named.items():
            tp = fp = fn = errors = spikes_hit = covered = 0
            delays: list[int] = []
            started = time.perf_counter()
            for values, truth, spikes, shifts in series:
                try:
                    found = (oracle_segmentation(values, len(truth), shape) if detector is None
                             else detector(values))
                except Exception:
                    errors += 1
                    found = []
                pairs = match(found, truth)
                tp += len(pairs)
                fn += len(truth) - len(pairs)
                fp += len(found) - len(pairs)
                delays += [abs(f - t) for t, f in pairs]
                if detector is detect_abstat:
                    covered += sum(1 for t, f in pairs if INTERVALS[f][0] <= shifts[t] <= INTERVALS[f][1])
                spikes_hit += sum(1 for s in spikes if any(f in (s, s + 1) for f in found))
            elapsed = time.perf_counter() - started
            precision = tp / (tp + fp) if tp + fp else float("nan")
            recall = tp / (tp + fn) if tp + fn else float("nan")
            f1 = 2 * precision * recall / (precision + recall) if tp else (float("nan") if not tp + fn else 0.0)
            rows.append([shape, name, f"{precision:.3f}", f"{recall:.3f}", f"{f1:.3f}",
                         f"{np.mean(delays):.2f}" if delays else "-",
                         f"{1000 * fp / (args.series * args.length):.2f}",
                         str(spikes_hit) if shape == "spikes" else "-",
                         f"{covered / tp:.2f}" if detector is detect_abstat and tp else "-",
                         str(errors), f"{elapsed:.1f}"])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        for row in rows:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    print(f"\n{args.series} series of {args.length} points per shape, noise SD {args.noise:g}%, seed {args.seed}; "
          f"match tolerance +-{TOLERANCE} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
