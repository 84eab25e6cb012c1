"""Change-point detectors on a fresh battery of series: abstat vs its anchors, on the same series.

    python benchmarks/changepoints.py [--series 60] [--seed N] [--markdown] [--no-oracle] [--losses]

The battery is drawn with a seed the script prints (``--seed`` repeats it): per series
a length of 20-500 revisions (log-uniform), 0-4 steps (as many as fit at least
``GAP`` revisions apart and from both ends) of 1-5% of the level, up or down, and
noise with an SD of 1-3% of the level.  Shapes:

- normal: Gaussian noise;
- quantized: values rounded to a grid of one noise SD (TSC cycles, integer counters);
- bimodal: two modes 3 SD apart, 50/50;
- spikes: 2% single-revision spikes 10-30% high (none of them is a change);
- drift: a linear drift of 1-5% of the level over the series under the steps;
- stationary (no steps, normal noise): false alarms per 1000 revisions;
- drift only (no steps, the drift shape's drift): the share of series alarmed;
- sampled (``--samples K``): the normal shape's steps, each revision measured 1 to K times;
  abstat gets every sample, the anchors (and a row "abstat (means)") the revision means.

A detected change matches a true one within +-``TOLERANCE`` revisions (one to one).
Printed per shape and detector: precision, recall, F1, false alarms per 1000
revisions, spikes reported (detections at a spike that match no true step), series alarmed (for the no-step shapes), CPU seconds, and
for abstat the coverage of its 95% interval of the step's size (the true shift at the true
step it matched).  ``--losses`` adds where abstat's recall is lost: per bucket of the
true step's z, how many steps abstat finds, how many it finds without the drift check,
how many binary segmentation proposes at all, and how many PELT-L2 finds.

Anchors: ruptures PELT with an L2 cost and the BIC penalty ``2 sigma^2 log n`` (sigma
from the MAD of successive differences), apache-otava's ``compute_change_points``
with its defaults, and MongoDB's signal-processing-algorithms E-divisive with its
defaults (``pvalue=0.05, permutations=100``).  Install: ``pip install -e '.[bench]'``
and ``pip install --no-deps signal-processing-algorithms structlog more-itertools``
(its metadata asks for numpy < 2, which Otava's pin excludes; its E-divisive runs on
numpy 2).  A missing anchor is left out with a note.

"oracle K" is a reference, not a detector: it is told the true number of steps and
places them by exact least squares (ruptures' Dynp), the maximum-likelihood
segmentation for Gaussian noise.  Where even it is not 0.05 ahead of the best anchor,
the +0.05 target asks more than the data hold.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

TOLERANCE = 3
GAP = 10
SHAPES = (
    "normal",
    "quantized",
    "bimodal",
    "spikes",
    "drift",
    "stationary",
    "drift only",
    "quadratic drift only",
    "cycles",
    "reverts",
)


def make_series(shape: str, rng: np.random.Generator) -> tuple[np.ndarray, list[int], list[int], dict[int, float]]:
    """(values, true change indices, spike indices, true shift at each change)."""
    length = int(round(math.exp(rng.uniform(math.log(20), math.log(500)))))
    noise_sd = rng.uniform(1.0, 3.0)
    level = np.full(length, 100.0)
    changes: list[int] = []
    if shape not in NO_STEPS:
        room = (length - 2 * GAP) // GAP + 1
        count = min(int(rng.integers(0, 5)), max(room, 0))
        while len(changes) < count:
            at = int(rng.integers(GAP, length - GAP + 1))
            if all(abs(at - c) >= GAP for c in changes):
                changes.append(at)
            elif rng.random() < 0.01:
                changes.clear()
        changes.sort()
        for at in changes:
            level[at:] *= 1.0 + rng.uniform(0.01, 0.05) * rng.choice((-1.0, 1.0))
    shifts = {at: float(level[at] - level[at - 1]) for at in changes}
    noise = rng.normal(0.0, 1.0, length)
    if shape == "bimodal":
        noise = rng.normal(0.0, 0.6, length) + np.where(rng.random(length) < 0.5, -0.9, 0.9)
    values = level + noise_sd * noise
    spikes: list[int] = []
    if shape == "quantized":
        values = np.round(values / noise_sd) * noise_sd
    elif shape in ("drift", "drift only"):
        values = values + np.linspace(0.0, rng.uniform(1.0, 5.0), length) * rng.choice((-1.0, 1.0))
    elif shape == "quadratic drift only":
        values = values + np.linspace(-1.0, 1.0, length) ** 2 * rng.uniform(1.0, 5.0) * rng.choice((-1.0, 1.0))
    elif shape == "spikes":
        hit = np.flatnonzero(rng.random(length) < 0.02)
        spikes = [int(i) for i in hit]
        values[hit] *= 1 + rng.uniform(0.1, 0.3, hit.size)
    return values, changes, spikes, shifts


NO_STEPS = ("stationary", "drift only", "quadratic drift only")
SAMPLED: dict[int, list[np.ndarray]] = {}  # id(revision means) -> each revision's samples ("sampled" shape)
BUMPS: dict[int, set[int]] = {}  # id(values) -> its changes that are a revert's edges ("cycles": the rest are steps)


def make_sampled(rng: np.random.Generator, most: int) -> tuple[np.ndarray, list[int], list[int], dict[int, float]]:
    """The normal shape's steps, each revision measured 1 to ``most`` times (uniform), each sample with
    an SD that gives a revision of the average count the battery's noise.  The values are the
    revision means (what a detector taking one value per revision gets); abstat gets the samples."""
    base, changes, _, shifts = make_series("normal", rng)
    length = len(base)
    level = 100.0 + np.cumsum([shifts.get(i, 0.0) for i in range(length)])
    sd = rng.uniform(1.0, 3.0) * math.sqrt((most + 1) / 2.0)
    samples = [level[i] + sd * rng.normal(0.0, 1.0, int(rng.integers(1, most + 1))) for i in range(length)]
    values = np.asarray([s.mean() for s in samples])
    SAMPLED[id(values)] = samples
    return values, changes, [], shifts


def _events(rng: np.random.Generator, length: int, bump: bool) -> list[tuple[int, int]]:
    """1-3 events (start, end): a step (end = length) or, with ``bump``, a revert 8-30 revisions
    later; GAP revisions apart and from both ends."""
    events: list[tuple[int, int]] = []
    for _ in range(100):
        if len(events) >= int(rng.integers(1, 4)):
            break
        start = int(rng.integers(GAP, length - GAP))
        end = start + int(rng.integers(8, 31)) if bump or rng.random() < 0.5 else length
        if end > length - GAP and end != length:
            continue
        edges = [e for ev in events for e in ev if e < length]
        if all(abs(start - e) >= GAP and (end == length or abs(end - e) >= GAP) for e in edges) and not (
            end == length and any(ev[1] == length for ev in events)
        ):
            events.append((start, end))
    return sorted(events)


def make_cycles(rng: np.random.Generator) -> tuple[np.ndarray, list[int], list[int], dict[int, float]]:
    """Cycle counts (issue 34 item 6): 5 samples per revision on a grid of 20 around 440 (SD 5-12),
    3% of samples x U(1.3, 1.8) (interrupts); 1-3 steps or reverts (8-30 revisions) of 1-2 grid
    steps (4.5-9%).  The anchors get the revision medians, abstat the samples."""
    length = int(round(math.exp(rng.uniform(math.log(60), math.log(400)))))
    level = np.full(length, 440.0)
    events = _events(rng, length, bump=False)
    for start, end in events:
        level[start:end] += 20.0 * rng.choice((-2.0, -1.0, 1.0, 2.0))
    changes = [i for i in range(1, length) if level[i] != level[i - 1]]
    shifts = {i: float(level[i] - level[i - 1]) for i in changes}
    bumps = {e for start, end in events if end < length for e in (start, end)}
    sd = rng.uniform(5.0, 12.0)
    samples = []
    for i in range(length):
        v = np.round((level[i] + rng.normal(0.0, sd, 5)) / 20.0) * 20.0
        hit = rng.random(5) < 0.03
        v[hit] *= rng.uniform(1.3, 1.8, int(hit.sum()))
        samples.append(v)
    values = np.asarray([float(np.median(s)) for s in samples])
    SAMPLED[id(values)] = samples
    BUMPS[id(values)] = {c for c in changes if c in bumps}
    return values, changes, [], shifts


def make_reverts(rng: np.random.Generator) -> tuple[np.ndarray, list[int], list[int], dict[int, float]]:
    """Reverted regressions in long histories (issue 34 item 7): 40-2000 revisions of N(100, 1),
    1-3 bumps of 1.5-4 SD lasting 8-30 revisions."""
    length = int(round(math.exp(rng.uniform(math.log(40), math.log(2000)))))
    level = np.full(length, 100.0)
    for start, end in _events(rng, length, bump=True):
        level[start:end] += rng.uniform(1.5, 4.0) * rng.choice((-1.0, 1.0))
    changes = [i for i in range(1, length) if level[i] != level[i - 1]]
    return level + rng.normal(0.0, 1.0, length), changes, [], {i: float(level[i] - level[i - 1]) for i in changes}


def detect_abstat_means(values: np.ndarray) -> list[int]:
    """abstat given only the revision means (the "sampled" shape: what it loses without the samples)."""
    from abstat.history.changepoints import detect

    return [c.index for c in detect(values).change_points]


def _sigma(values: np.ndarray) -> float:
    return float(np.median(np.abs(np.diff(values)))) / (0.6745 * math.sqrt(2)) or float(np.std(values)) or 1.0


INTERVALS: dict[int, tuple[float, float]] = {}  # abstat's last intervals by index (coverage column)
SETTINGS: dict[str, object] = {}  # --set: abstat's detect() keywords (lower case)


def detect_abstat(values: np.ndarray) -> list[int]:
    from abstat.history.changepoints import detect

    found = detect(SAMPLED.get(id(values), values), **SETTINGS).change_points
    INTERVALS.clear()
    INTERVALS.update({c.index: (c.low, c.high) for c in found})
    return [c.index for c in found]


def detect_pelt_l2(values: np.ndarray) -> list[int]:
    import ruptures

    pen = 2 * _sigma(values) ** 2 * math.log(len(values))
    return [
        e for e in ruptures.Pelt(model="l2", min_size=2).fit(values.reshape(-1, 1)).predict(pen=pen) if e < len(values)
    ]


def detect_otava(values: np.ndarray) -> list[int]:
    from otava.analysis import compute_change_points

    return [int(c.index) for c in compute_change_points([float(v) for v in values])[0]]


def detect_edivisive(values: np.ndarray) -> list[int]:
    from signal_processing_algorithms.energy_statistics import energy_statistics

    return sorted(int(i) for i in energy_statistics.e_divisive(values.astype(float)))


def oracle_segmentation(values: np.ndarray, count: int) -> list[int]:
    import ruptures

    if count == 0:
        return []
    fitted = ruptures.Dynp(model="l2", min_size=2, jump=1).fit(values.reshape(-1, 1))
    return [e for e in fitted.predict(n_bkps=count) if e < len(values)]


def match(found: list[int], truth: list[int]) -> list[tuple[int, int]]:
    pairs, used = [], set()
    for t in truth:
        best = min(
            (f for f in found if f not in used and abs(f - t) <= TOLERANCE), key=lambda f: abs(f - t), default=None
        )
        if best is not None:
            used.add(best)
            pairs.append((t, best))
    return pairs


def _detectors() -> dict[str, object]:
    detectors: dict[str, object] = {"abstat": detect_abstat, "PELT-L2 BIC": detect_pelt_l2}
    for name, module, detector in (
        ("Otava", "otava.analysis", detect_otava),
        ("E-divisive", "signal_processing_algorithms.energy_statistics", detect_edivisive),
    ):
        try:
            __import__(module)
            detectors[name] = detector
        except ImportError:
            print(f"note: {module} is not installed: no {name} column", file=sys.stderr)
    return detectors


def evaluate(shape: str, series: list, name: str, detector) -> dict[str, float]:
    tp = fp = fn = errors = spikes_hit = covered = alarmed = 0
    kinds = [0, 0, 0, 0]  # steps found, steps, revert edges found, revert edges (shapes with BUMPS)
    points = sum(len(s[0]) for s in series)
    started = time.process_time()
    for values, truth, spikes, shifts in series:
        try:
            found = oracle_segmentation(values, len(truth)) if detector is None else detector(values)
        except Exception:
            errors += 1
            found = []
        pairs = match(found, truth)
        if id(values) in BUMPS:
            hit = {t for t, _ in pairs}
            for t in truth:
                j = 2 if t in BUMPS[id(values)] else 0
                kinds[j] += t in hit
                kinds[j + 1] += 1
        tp += len(pairs)
        fn += len(truth) - len(pairs)
        fp += len(found) - len(pairs)
        alarmed += bool(found)
        if detector is detect_abstat:
            covered += sum(1 for t, f in pairs if INTERVALS[f][0] <= shifts[t] <= INTERVALS[f][1])
        matched = {f for _, f in pairs}  # a true step that happens to fall on a spike is no spike reported
        spikes_hit += sum(1 for s in spikes if any(f in (s, s + 1) and f not in matched for f in found))
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    f1 = 2 * precision * recall / (precision + recall) if tp else (float("nan") if not tp + fn else 0.0)
    return {
        "precision": precision,
        "recall": recall,
        "F1": f1,
        "fa": 1000 * fp / points,
        "spikes": spikes_hit,
        "alarmed": alarmed / len(series),
        "coverage": covered / tp if tp else math.nan,
        "matched": tp,
        "errors": errors,
        "cpu": time.process_time() - started,
        "kinds": (kinds[0] / kinds[1] if kinds[1] else math.nan, kinds[2] / kinds[3] if kinds[3] else math.nan),
    }


INCOMPLETE = ("otava:tigerbeetle",)  # its "labels" are every point any of Otava's test runs reports, at p up to 0.2
#                                      and no magnitude floor (73 in 365 points): not a set of true changes
MARGIN = 5  # --real: a detection matches a label within this many points (TCPDBench, REALISE)
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def true_positives(truth: list[int], found: list[int], margin: int = MARGIN) -> set[int]:
    """Detections matching labels one to one, each label taking the closest detection within ``margin``."""
    left, hits = set(found), set()
    for t in sorted(truth):
        close = sorted((abs(t - f), f) for f in left if abs(t - f) <= margin)
        if close:
            hits.add(close[0][1])
            left.discard(close[0][1])
    return hits


def f_measure(annotations: dict[str, list[int]], found: list[int], margin: int = MARGIN) -> tuple[float, float, float]:
    """(F1, precision, recall) by the TCPDBench protocol: the start (0) counts as a change for every
    annotator and every detector; precision against the union of the annotators' matches, recall the
    mean over annotators."""
    predicted = set(found) | {0}
    per = [true_positives(sorted(set(cps) | {0}), sorted(predicted), margin) for cps in annotations.values()]
    precision = len(set().union(*per)) / len(predicted)
    recall = sum(len(hits) / len(set(cps) | {0}) for hits, cps in zip(per, annotations.values(), strict=True)) / len(
        per
    )
    return (2 * precision * recall / (precision + recall) if precision + recall else 0.0), precision, recall


def real_series() -> list[tuple[str, bool, np.ndarray, np.ndarray, dict[str, list[int]]]]:
    """(name, performance-like, values without missing ones, their original indices, annotations):
    TCPD's series with its 5 annotators (benchmarks/data/tcpd.json), then apache/otava's test series
    with the change points its tests expect as the one "annotator" (tests/data/history/otava.json)."""
    import json

    with open(os.path.join(DATA, "tcpd.json"), encoding="utf-8") as handle:
        tcpd = json.load(handle)["series"]
    out = []
    for name, item in tcpd.items():
        raw = item["values"]
        keep = np.asarray([i for i, v in enumerate(raw) if v is not None])
        out.append(
            (name, item["performance_like"], np.asarray([raw[i] for i in keep], dtype=float), keep, item["annotations"])
        )
    with open(os.path.join(DATA, "..", "..", "tests", "data", "history", "otava.json"), encoding="utf-8") as handle:
        otava = json.load(handle)
    for name in ("tigerbeetle", "single_series"):
        values = np.asarray(otava[name]["series"], dtype=float)
        expected = sorted({int(c) for case in otava[name]["cases"] for c in case.get("expected", [])})
        out.append((f"otava:{name}", True, values, np.arange(values.size), {"otava tests": expected}))
    return out


def detect_pelt_mbic(values: np.ndarray) -> list[int]:
    """PELT-L2 with the MBIC-like penalty 3 sigma^2 log n (R changepoint's default is MBIC)."""
    import ruptures

    pen = 3 * _sigma(values) ** 2 * math.log(len(values))
    return [
        e for e in ruptures.Pelt(model="l2", min_size=2).fit(values.reshape(-1, 1)).predict(pen=pen) if e < len(values)
    ]


def score_real(detectors: dict[str, object], markdown: bool) -> None:
    """Mean F1, precision and recall over the real labelled series, per detector: all series, and the
    performance-like ones, and those of them whose labels are complete (not ``INCOMPLETE``); then each
    performance-like series' F1."""
    series = real_series()
    scores: dict[str, dict[str, tuple[float, float, float]]] = {}
    for name, detector in detectors.items():
        for label, _, values, index, labels in series:
            try:
                found = [int(index[i]) for i in detector(values)]  # type: ignore[operator]
            except Exception:
                found = []
            scores.setdefault(name, {})[label] = f_measure(labels, found)
    groups = (
        ("all", [s[0] for s in series]),
        ("performance-like", [s[0] for s in series if s[1]]),
        ("labels complete", [s[0] for s in series if s[1] and s[0] not in INCOMPLETE]),
    )
    print(f"real labelled series (margin {MARGIN}; TCPD with 5 annotators; otava:* labelled by Otava's own tests)")
    sep = " | " if markdown else "  "
    print(sep.join(["detector", *(f"{g} F1 / P / R ({len(names)})" for g, names in groups)]))
    for name, per in scores.items():
        cells = []
        for _, names in groups:
            f, p, r = (float(np.mean([per[n][j] for n in names])) for j in range(3))
            cells.append(f"{f:.3f} / {p:.3f} / {r:.3f}")
        print(sep.join([name, *cells]))
    print("\nper performance-like series, F1 (precision, recall):")
    for label in groups[1][1]:
        print(
            f"{label}: "
            + ", ".join(
                f"{name} {per[label][0]:.2f} ({per[label][1]:.2f}, {per[label][2]:.2f})" for name, per in scores.items()
            )
        )


Z_EDGES = (0.0, 3.0, 4.0, 5.0, 6.0, 8.0, math.inf)


def step_z(values: np.ndarray, truth: list[int], shifts: dict[int, float]) -> dict[int, float]:
    """Each true step's z: |shift| / sigma * sqrt(l r / (l + r)) for the true segments l, r around it
    (what a two-sample test between its true neighbours would see)."""
    bounds, sigma = [0, *truth, len(values)], _sigma(values)
    return {
        t: abs(shifts[t]) / sigma * math.sqrt((t - bounds[i]) * (bounds[i + 2] - t) / (bounds[i + 2] - bounds[i]))
        for i, t in enumerate(truth)
    }


def losses(shape: str, series: list) -> list[str]:
    """Where abstat's recall is lost, per bucket of the step's z: true steps, found by abstat, found
    with --no-drift-check, proposed (also with --max-pvalue 1: binary segmentation at the penalty),
    and found by PELT-L2 BIC."""
    from abstat.history.changepoints import detect

    table: dict[int, list[int]] = {}
    for values, truth, _, shifts in series:
        runs = [
            [c.index for c in detect(values).change_points],
            [c.index for c in detect(values, drift=False).change_points],
            [c.index for c in detect(values, drift=False, max_pvalue=1.0).change_points],
            detect_pelt_l2(values),
        ]
        for t, z in step_z(values, truth, shifts).items():
            row = table.setdefault(int(np.searchsorted(Z_EDGES, z, side="right")) - 1, [0] * 5)
            row[0] += 1
            for j, found in enumerate(runs):
                row[j + 1] += any(abs(f - t) <= TOLERANCE for f in found)
    return [
        f"{shape}: z {Z_EDGES[b]:g}-{Z_EDGES[b + 1]:g}: {row[0]} steps, abstat {row[1]}, no drift check {row[2]}, "
        f"proposed {row[3]}, PELT-L2 {row[4]}"
        for b, row in sorted(table.items())
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=60, help="series per shape (default 60)")
    parser.add_argument("--seed", type=int, help="repeat a battery (default: a fresh one, its seed printed)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-oracle", action="store_true", help="leave out the oracle K reference row")
    parser.add_argument("--only", action="append", help="only these detectors (repeatable)")
    parser.add_argument(
        "--samples",
        type=int,
        default=0,
        metavar="K",
        help="also a shape 'sampled': each revision measured 1..K times, abstat given the samples, "
        "the anchors (and 'abstat (means)') the revision means",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="abstat with a detect() keyword (lower case, e.g. max_pvalue=0.005, drift=False) or a "
        "constant of abstat.history.changepoints or .drift (upper case, e.g. STEP_PARAMS=1) "
        "or of another history module "
        "(e.g. decide.SLOPE_T=2); repeatable",
    )
    parser.add_argument("--shape", action="append", help="only these shapes (repeatable)")
    parser.add_argument(
        "--losses", action="store_true", help="also print where abstat's recall is lost, by the steps' z (see losses())"
    )
    parser.add_argument(
        "--real",
        action="store_true",
        help="score the detectors on real labelled series instead (TCPDBench protocol, margin 5)",
    )
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}", flush=True)
    import ast
    import importlib

    import abstat.history.changepoints as changepoints

    try:
        import abstat.history.drift as drift_check
    except ImportError:  # an older tree (PYTHONPATH=its src), step 5 still in changepoints
        drift_check = changepoints

    for item in args.set:
        name, _, text = item.partition("=")
        value = ast.literal_eval(text)
        module_name, _, name = name.rpartition(".")
        if name.isupper():
            module = (
                importlib.import_module(f"abstat.history.{module_name}")
                if module_name
                else next((m for m in (changepoints, drift_check) if hasattr(m, name)), changepoints)
            )
            if not hasattr(module, name):
                parser.error(f"--set {item}: {module.__name__} has no {name}")
            setattr(module, name, value)
        else:
            SETTINGS[name] = value
    if args.set:
        print(f"abstat with {', '.join(args.set)}", flush=True)
    detectors = _detectors()
    if args.real:
        detectors = {
            "abstat": detect_abstat,
            "PELT-L2 BIC": detect_pelt_l2,
            "PELT-L2 MBIC": detect_pelt_mbic,
            **{k: v for k, v in detectors.items() if k not in ("abstat", "PELT-L2 BIC")},
        }
    if args.only:
        detectors = {k: v for k, v in detectors.items() if k in args.only}
    warnings.simplefilter("ignore")
    if args.real:
        score_real(detectors, args.markdown)
        return 0
    header = [
        "shape",
        "detector",
        "precision",
        "recall",
        "F1",
        "FA/1000",
        "spikes reported",
        "alarmed",
        "CI coverage",
        "errors",
        "CPU s",
    ]
    rows, margins, lost, kind_lines = [], [], [], []
    for shape in SHAPES + (("sampled",) if args.samples > 1 else ()):
        if args.shape and shape not in args.shape:
            continue
        SAMPLED.clear()
        BUMPS.clear()
        rng = np.random.default_rng([seed, (SHAPES + ("sampled",)).index(shape)])
        if shape == "sampled":
            series = [make_sampled(rng, args.samples) for _ in range(args.series)]
        elif shape in ("cycles", "reverts"):
            series = [(make_cycles if shape == "cycles" else make_reverts)(rng) for _ in range(args.series)]
        else:
            series = [make_series(shape, rng) for _ in range(args.series)]
        named = dict(detectors)
        if shape in ("sampled", "cycles") and "abstat" in named:
            named["abstat (one value per revision)"] = detect_abstat_means
        if not args.no_oracle and shape not in NO_STEPS:
            named["oracle K (reference)"] = None
        results = {name: evaluate(shape, series, name, detector) for name, detector in named.items()}
        for name, r in results.items():
            if not math.isnan(r["kinds"][0] + r["kinds"][1]):
                kind_lines.append(
                    f"{shape}: {name}: recall of steps {r['kinds'][0]:.3f}, of reverts' edges {r['kinds'][1]:.3f}"
                )
            steps = shape not in NO_STEPS
            rows.append(
                [
                    shape,
                    name,
                    f"{r['precision']:.3f}" if steps else "-",
                    f"{r['recall']:.3f}" if steps else "-",
                    f"{r['F1']:.3f}" if steps else "-",
                    f"{r['fa']:.2f}",
                    str(r["spikes"]) if shape == "spikes" else "-",
                    f"{100 * r['alarmed']:.0f}%" if not steps else "-",
                    f"{r['coverage']:.3f} of {r['matched']}" if name == "abstat" and steps else "-",
                    str(r["errors"]),
                    f"{r['cpu']:.1f}",
                ]
            )
        anchors = [
            r["F1"]
            for name, r in results.items()
            if name not in ("abstat", "abstat (one value per revision)", "oracle K (reference)")
        ]
        if shape not in NO_STEPS and anchors and "abstat" in results:
            oracle = results.get("oracle K (reference)", {}).get("F1", math.nan)
            margins.append((shape, results["abstat"]["F1"] - max(anchors), oracle - max(anchors)))
        if args.losses and shape in ("normal", "quantized", "bimodal", "drift"):
            lost += losses(shape, series)
        print(f"... {shape} done", file=sys.stderr, flush=True)
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
    print(
        f"\n{args.series} series per shape, 20-500 revisions, 0-4 steps of 1-5%, noise SD 1-3%, seed {seed}; "
        f"a hit is within +-{TOLERANCE} revisions"
    )
    for shape, margin, oracle in margins:
        print(
            f"{shape}: abstat F1 - best anchor = {margin:+.3f}"
            + (f" (oracle K - best anchor = {oracle:+.3f})" if not math.isnan(oracle) else "")
        )
    if kind_lines:
        print("\n" + "\n".join(kind_lines))
    if lost:
        print("\nrecall by the true step's z (|shift| / noise SD x sqrt(l r / (l + r)), its true segments l, r):")
        print("\n".join(lost))
    return 0


if __name__ == "__main__":
    sys.exit(main())
