"""Checks of the search's model with tests valid for any shape (library code, no I/O).

The search (:mod:`abstat.history.bisect.search`) scores samples with a parametric likelihood, which is fast but can
be far from the data (a bimodal benchmark, two changes in the range).  Before its answers are believed they are
checked with rank methods that need no shape, only that the runs of one commit are exchangeable:

- **The ends differ**: Brunner-Munzel between the good and bad references
  (valid with unequal spreads and any shape; Mann-Whitney's test of equal
  distributions is not a test of a shift when the shapes differ), or the
  permutation test scored by the noise's density (:mod:`abstat.history.bisect.scoretest`:
  exact with no change, and on a two-path benchmark it needs a fraction of the runs).
- **Intermediate levels**: a tested commit whose Hodges-Lehmann interval of
  the shift from the good end and its interval of the shift to the bad end
  both exclude 0 (at ``LEVEL_CONFIDENCE``) measures neither like the good end
  nor like the bad one: more than one change is in the range.
- **Attribution**: a culprit is named only when its own runs and its parents' runs *taken after the
  search proposed it* (the earlier ones steered the search there, so they cannot also confirm it) place
  them: the culprit nearer the bad end than the good one, each parent nearer the good end (Yuen's
  contrast of 20% trimmed means against the ends' midpoint; on noise with humps, the smaller p of it and
  of the density-scored permutation test, doubled: :func:`nearer_best_p`; one-sided ``NEARER_PVALUE``:
  a commit half way between the ends, as between two equal changes, passes at that rate whatever the
  noise's shape, simulated in tests/history/bisect/test_bisect_scoretest.py),
  and each does not differ from its end (Hodges-Lehmann interval at ``SIDE_CONFIDENCE``), with at
  least ``runs_needed`` runs of each and ``ENDS_FACTOR`` times as many of each end.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from abstat.history.bisect import aside

LEVEL_CONFIDENCE = 0.999  # intervals that must both exclude 0 to call a level intermediate
LEVEL_MIN_RUNS = 6  # runs of a commit before its level is judged
SIDE_CONFIDENCE = 0.99  # the interval of culprit to bad, and of parent to good, must hold 0
SIDE_MIN_RUNS = 4  # runs of the culprit and of its parents asked for at least (a change many
# times the noise: boots are dear)
DEAR_MIN_RUNS = 2  # the same when the unit is dear (a boot: ``Search(dear=True)``); with fewer than 4 runs a
# commit is placed by Student's t (:func:`nearer_small_p`)
FEW_SPREAD_BOUND = 0.5  # the ends' spread that sizes a dear unit's runs: sqrt(SS / chi2 quantile), here its median
# (the robust spread of a few runs is often a fraction of the true one; a 0.9 bound cost boots and no wrong answer less)
SIDE_MAX_RUNS = 30  # runs of the culprit and of its parents asked for at most
NEED_CONFIDENCE = 0.6  # interval of the ends' shift whose bound nearer 0 sizes the runs asked for
ENDS_FACTOR = 2  # runs of each end before a culprit is judged, in units of the commits' runs_needed (1 saved
# 48 runs a bisection but named a commit between two changes in 2 of 21: docs/history.md)
DRIFT_MIN_REFERENCES = 12  # reference runs before drift is estimated
DRIFT_PVALUE = 0.01  # Kendall trend test of the references over time
MAX_POINTS = 400  # most recent runs of a reference used by these checks (bounded cost)
TRIM = 0.2  # Yuen's trimming, each side
NEARER_PVALUE = 0.025  # one-sided: a culprit nearer the bad end than the good one, a parent nearer the good
# end (strict because the check is repeated as runs are added)
MIRROR_PVALUE = 0.1  # one-sided: nor beyond its end by the whole change (a second guard beside the 99%
# interval against its end; at 0.025 clean bisections in simulation were right in 29
# of 39, at 0.1 in 35 of 40)


def unit_of(values: Sequence[float | None]) -> float | None:
    """The power of two nearest above the first finite value other than 0 (None: no such value yet): the
    search divides every value by it, exactly, so that squares and variances of values from 1e-300 to 1e300
    stay in range (zeros stay zeros whatever the unit chosen later)."""
    first = next((v for v in values if v is not None and math.isfinite(v) and v != 0.0), None)
    return None if first is None else math.ldexp(1.0, math.frexp(first)[1])


def rescaled(values: Sequence[float | None], unit: float | None) -> list[float | None]:
    """``values`` in ``unit`` (None kept)."""
    return list(values) if unit is None else [None if v is None else v / unit for v in values]


def ends_differ_p(good: Sequence[float], bad: Sequence[float]) -> float:
    """Two-sided Brunner-Munzel p-value between the ends (1.0 when it cannot be computed)."""
    import warnings

    import numpy as np
    from scipy.stats import brunnermunzel

    if len(good) < 2 or len(bad) < 2 or len(set(good) | set(bad)) <= 1:
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = float(brunnermunzel(np.asarray(good), np.asarray(bad), distribution="t").pvalue)
    return p if math.isfinite(p) else (0.0 if np.median(good) != np.median(bad) else 1.0)


def shift(x: Sequence[float], y: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """Hodges-Lehmann shift ``y - x`` with its Mann-Whitney-inverted interval (infinite when too few runs)."""
    import numpy as np

    from abstat.stats.shift import hodges_lehmann

    s = hodges_lehmann(np.asarray(x[-MAX_POINTS:], dtype=float), np.asarray(y[-MAX_POINTS:], dtype=float), confidence)
    return s.estimate, s.low, s.high


def intermediate(values: Sequence[float], good: Sequence[float], bad: Sequence[float]) -> bool:
    """Whether a commit's runs measure unlike both ends (both intervals exclude 0)."""
    if len(values) < LEVEL_MIN_RUNS:
        return False
    _, low, high = shift(good, values, LEVEL_CONFIDENCE)
    if low <= 0 <= high:
        return False
    _, low, high = shift(values, bad, LEVEL_CONFIDENCE)
    return not low <= 0 <= high


def runs_needed(good: Sequence[float], bad: Sequence[float], least: int = SIDE_MIN_RUNS) -> int:
    """Runs of a commit such that a level half way between the ends would differ from the end it is
    compared with at ``SIDE_CONFIDENCE`` in 99.5% of bisections (normal approximation with the ends'
    robust spread), between ``least`` (``SIDE_MIN_RUNS``) and ``SIDE_MAX_RUNS``.  The ends' shift is taken at the
    bound of its ``NEED_CONFIDENCE`` Hodges-Lehmann interval nearer 0: the gate opened when the ends' runs looked far
    apart, so with few of them their shift is overestimated (a 2% change in 2% noise read as 3.9% from 12 runs
    each asked for 10 runs where 30 are due)."""
    import numpy as np

    if least < SIDE_MIN_RUNS:  # a dear unit: sized on the scale its Student's t judges on (:func:`_student`)
        good, bad = _logs([good, bad])
    g, b = np.asarray(good, dtype=float), np.asarray(bad, dtype=float)
    residuals = np.concatenate([g - np.median(g), b - np.median(b)])
    spread = 1.4826 * float(np.median(np.abs(residuals)))
    half = abs(float(np.median(b) - np.median(g))) / 2
    if spread > 0 and half > 0 and min(g.size, b.size) >= 2:
        _, low, high = shift(good, bad, NEED_CONFIDENCE)
        half = max(0.0, low if low > 0 else -high if high < 0 else 0.0) / 2
        if half <= 0:
            return SIDE_MAX_RUNS
    if spread <= 0 or half <= 0:
        return least
    # (half / spread) / sqrt(1/n + 1/n_end) >= z_{0.975} + z_{0.995}, with n_end the smaller end
    room = (half / spread / 4.54) ** 2 - 1.0 / max(2, min(len(good), len(bad)))
    need = int(min(SIDE_MAX_RUNS, max(least, SIDE_MAX_RUNS if room <= 0 else math.ceil(1.0 / room))))
    if need < SIDE_MIN_RUNS:  # a dear unit's fewer runs, judged by Student's t (:func:`like`): sized by its quantiles
        need = min(SIDE_MIN_RUNS, max(need, _few_runs_needed(half, good, bad, least)))
    return need


def _few_runs_needed(half: float, good: Sequence[float], bad: Sequence[float], least: int) -> int:
    """:func:`runs_needed` for a dear unit: the fewest runs ``n`` from ``least`` with
    ``half / (s sqrt(1/n + 1/n_end)) >= t_{0.995}(n + n_end - 2) + z_{0.975}``, Student's quantile for the check's,
    and ``s`` the ends' pooled spread at ``FEW_SPREAD_BOUND`` of its distribution, less one outlying boot (aside.py;
    with the ends' robust spread two changes of 4 SD were named as one after 2 boots of a commit)."""
    import numpy as np
    from scipy.stats import chi2, norm
    from scipy.stats import t as student

    g, b = np.asarray(good[-MAX_POINTS:], dtype=float), np.asarray(bad[-MAX_POINTS:], dtype=float)
    n_end = max(2, min(g.size, b.size))
    g, b = aside.set_aside(g, b)  # one boot of a slow mode among an end's does not size the rest
    df = g.size + b.size - 2
    pooled = float(np.sum((g - g.mean()) ** 2) + np.sum((b - b.mean()) ** 2)) / max(1, df)
    spread = math.sqrt(pooled * df / float(chi2.ppf(1 - FEW_SPREAD_BOUND, df))) if df > 0 else 0.0
    for n in range(least, SIDE_MAX_RUNS):
        quantile = float(student.ppf(1 - (1 - SIDE_CONFIDENCE) / 2, n + n_end - 2)) + float(norm.ppf(0.975))
        if spread > 0 and half / (spread * math.sqrt(1 / n + 1 / n_end)) >= quantile:
            return n
    return SIDE_MAX_RUNS


def like(values: Sequence[float], end: Sequence[float], need: int) -> bool | None:
    """Whether a commit's runs do not differ from an end's (its interval of the shift at
    ``SIDE_CONFIDENCE`` holds 0); None until it has ``need`` runs.  With so few runs that the rank interval could
    never exclude 0 (fewer than 400 ways to split them: a dear unit's boots), Student's t (:func:`_student`)."""
    if len(values) < need:
        return None
    if math.comb(len(values) + len(end[-MAX_POINTS:]), len(values)) < 400:
        from scipy.stats import t as student

        t, df = _student([values, end], (1.0, -1.0))
        return df == 0 or abs(t) <= float(student.ppf(1 - (1 - SIDE_CONFIDENCE) / 2, df))
    _, low, high = shift(values, end, SIDE_CONFIDENCE)
    return low <= 0 <= high


def _trimmed(values: Sequence[float]) -> tuple[float, float, int]:
    """(20% trimmed mean, squared standard error by the winsorized variance, trimmed count) -- Yuen's pieces."""
    import numpy as np

    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    g = int(TRIM * n)
    h = n - 2 * g
    w = np.clip(x, x[g], x[n - 1 - g])
    return float(np.mean(x[g : n - g])), float(np.var(w, ddof=1)) * (n - 1) / (h * (h - 1)), h


def nearer_p(values: Sequence[float], near: Sequence[float], far: Sequence[float], at: float = 0.5) -> float:
    """One-sided p-value that a commit's runs measure nearer the level of the runs ``near`` than that of
    ``far``: Yuen's test (20% trimmed means, winsorized variances, Welch-Satterthwaite degrees of freedom)
    of the contrast ``commit - (near + far) / 2`` in the direction of ``near``.  With the same noise at
    every level (a shift, whatever the noise's shape: two humps, outliers) the trimmed means differ as the
    levels do, so a level half way between the ends has a contrast of exactly 0: the null.  ``at``: the boundary
    ``far + at (near - far)`` in place of the midpoint (``at = 2``: the mirror of ``far`` about ``near``, beyond
    which the commit must not lie: a change twice the ends' one, half undone later)."""
    import math as _math

    from scipy.stats import t as student

    if min(len(values), len(near), len(far)) < 4:
        return 1.0
    parts = [_trimmed(values[-MAX_POINTS:]), _trimmed(near[-MAX_POINTS:]), _trimmed(far[-MAX_POINTS:])]
    weights = (1.0, at * at, (1 - at) ** 2)  # squared contrast coefficients 1, -at, -(1 - at)
    contrast = parts[0][0] - at * parts[1][0] - (1 - at) * parts[2][0]
    if (parts[1][0] < parts[2][0]) != (at > 1):
        contrast = -contrast
    variance = sum(w * d for w, (_, d, _) in zip(weights, parts, strict=True))
    if not variance > 0:
        return 0.0 if contrast > 0 else 1.0
    # Welch-Satterthwaite's df from each part's share of the variance: its squares neither overflow (values of
    # 1e80) nor vanish (1e-80), as the squared variances did (OverflowError, ZeroDivisionError)
    df = 1.0 / sum((w * d / variance) ** 2 / (h - 1) for w, (_, d, h) in zip(weights, parts, strict=True))
    p = float(student.sf(contrast / _math.sqrt(variance), df))
    return p if _math.isfinite(p) else 1.0


def nearer_score_p(values: Sequence[float], near: Sequence[float], far: Sequence[float], at: float = 0.5) -> float:
    """One-sided p-value that a commit's runs measure nearer the level of ``near`` than that of ``far``:
    the commit's runs less the ends' midpoint against the ends' runs less their own levels (the far end's
    median and the Hodges-Lehmann shift, refined by Newton steps of the density's likelihood:
    :func:`abstat.history.bisect.scoretest.locations`), by the permutation test of
    :mod:`abstat.history.bisect.scoretest` (scores from the density of the pooled residuals: two humps
    for a two-path benchmark).  A commit half way between the ends has residuals like the ends': the
    null, exact but for the estimated levels.  ``at``: as for :func:`nearer_p`."""
    import numpy as np

    from abstat.history.bisect import scoretest

    if min(len(values), len(near), len(far)) < 4:
        return 1.0
    half = scoretest.MAX_POINTS // 2
    n, f = np.asarray(near[-half:], dtype=float), np.asarray(far[-half:], dtype=float)
    level_f, delta = scoretest.locations(f, n)
    residuals = np.concatenate([f - level_f, n - level_f - delta])
    sample = np.asarray(values, dtype=float) - level_f - at * delta
    sign = (1.0 if delta >= 0 else -1.0) * (-1.0 if at > 1 else 1.0)
    return scoretest.shift_p(list(sign * sample), list(sign * residuals))


def nearer_best_p(values: Sequence[float], near: Sequence[float], far: Sequence[float], at: float = 0.5) -> float:
    """Yuen's :func:`nearer_p`; when the ends' noise has humps (:func:`abstat.history.bisect.scoretest.multimodal`,
    decided from the ends' runs alone, so either way the test is one valid test) the smaller of it and
    :func:`nearer_score_p`, doubled (Bonferroni: the scored test for a small shift within each hump, Yuen's
    for a large one)."""
    from abstat.history.bisect import scoretest

    yuen = nearer_p(values, near, far, at)
    if not scoretest.multimodal(far[-scoretest.MAX_POINTS // 2 :], near[-scoretest.MAX_POINTS // 2 :]):
        return yuen
    return min(1.0, 2 * min(yuen, nearer_score_p(values, near, far, at)))


def _student(groups: Sequence[Sequence[float]], weights: Sequence[float]) -> tuple[float, int]:
    """(t, degrees of freedom) of the contrast ``sum(weights * means)``, its spread pooled over the groups (each about
    its own mean; on a grid at least Sheppard's step^2 / 12, so that equal runs are no certainty); t is 0 without a
    degree of freedom."""
    import numpy as np

    arrays = [np.asarray(x[-MAX_POINTS:], dtype=float) for x in _logs(groups)]
    df = sum(x.size for x in arrays) - len(arrays)
    if df < 1 or min(x.size for x in arrays) < 1:
        return 0.0, 0
    means = [float(x.mean()) for x in arrays]
    pooled = sum(float(np.sum((x - m) ** 2)) for x, m in zip(arrays, means, strict=True)) / df
    steps = np.diff(np.unique(np.concatenate(arrays)))
    pooled = max(pooled, float(steps.min()) ** 2 / 12 if steps.size else 0.0)
    error = math.sqrt(pooled * sum(w * w / x.size for w, x in zip(weights, arrays, strict=True)))
    contrast = sum(w * m for w, m in zip(weights, means, strict=True))
    return (contrast / error if error > 0 else 0.0), df


def _logs(groups: Sequence[Sequence[float]]) -> list[Sequence[float]]:
    """The groups' logarithms when every value is positive (boots' cycles: a level 20 times higher spreads 20 times
    wider, so on the raw scale the higher end's spread, pooled, hid a change of 30 of its spreads), else as given."""
    import numpy as np

    if all(len(x) and float(np.min(x)) > 0 for x in groups):
        return [np.log(np.asarray(x, dtype=float)) for x in groups]
    return list(groups)


def nearer_small_p(values: Sequence[float], near: Sequence[float], far: Sequence[float], at: float = 0.5) -> float:
    """:func:`nearer_p`'s one-sided p-value for few runs (a commit booted twice): the contrast
    ``commit - at near - (1 - at) far`` by Student's t (:func:`_student`), in the direction of ``near``; exact
    for normal noise of one spread at every level (1.0 with no degree of freedom)."""
    from scipy.stats import t as student

    sign = -1.0 if (sum(near) / max(1, len(near)) < sum(far) / max(1, len(far))) != (at > 1) else 1.0
    t, df = _student([values, near, far], (sign, -sign * at, -sign * (1 - at)))
    return float(student.sf(t, df)) if df else 1.0


def ends_apart_p(good: Sequence[float], bad: Sequence[float]) -> float:
    """Two-sided p-value of Student's t between the ends (:func:`_student`; 1.0 with fewer than 2 of either): the
    gate's test on a dear unit's first boots, which, unlike a rank test, can pass on 2 a side when the ends are
    many spreads apart."""
    from scipy.stats import t as student

    if min(len(good), len(bad)) < 2:
        return 1.0
    t, df = _student([good, bad], (1.0, -1.0))
    return float(2 * student.sf(abs(t), df))


CHECKS = frozenset({"nearer", "mirror"})  # the placement's checks (:func:`placed_checks`)


def placed_checks(
    values: Sequence[float], good: Sequence[float], bad: Sequence[float], side: str, done: Collection[str] = ()
) -> set[str]:
    """Which of the placement's checks not in ``done`` a commit's runs pass now.  "nearer": they measure
    nearer the ``side`` end ("good" or "bad") than the other, :func:`nearer_best_p` at ``NEARER_PVALUE`` (a
    level half way between the ends, two equal changes and the commit between them, passes with probability
    at most ``NEARER_PVALUE`` whatever the noise's shape).  "mirror": nearer it than the mirror image of the
    other end about it (a change of twice the ends' shift, half undone later, puts the commit after it
    there), Yuen's :func:`nearer_p` at 2 at ``MIRROR_PVALUE``; passed as such on noise with humps
    (:func:`abstat.history.bisect.scoretest.multimodal`), where the scored test's boundary, twice the
    estimated shift, moves with its error (it passed 12.5% of 200 draws of a commit on it) and Yuen's placed a
    commit at the bad level in 12.5% of 1,000 draws (one path: 77%)."""
    from abstat.history.bisect import scoretest

    end, other = (bad, good) if side == "bad" else (good, bad)
    if min(len(values), len(end), len(other)) < 4:  # a dear unit's few runs (boots): Student's t, pooled spread
        checks = (("nearer", 0.5, NEARER_PVALUE), ("mirror", 2.0, MIRROR_PVALUE))
        return {
            name for name, at, level in checks if name not in done and nearer_small_p(values, end, other, at) <= level
        }
    passed = set()
    if "nearer" not in done and nearer_best_p(values, end, other) <= NEARER_PVALUE:
        passed.add("nearer")
    if "mirror" not in done:
        half = scoretest.MAX_POINTS // 2
        if nearer_p(values, end, other, 2.0) <= MIRROR_PVALUE or scoretest.multimodal(other[-half:], end[-half:]):
            passed.add("mirror")
    return passed


def placed(values: Sequence[float], good: Sequence[float], bad: Sequence[float], side: str) -> bool:
    """Whether a commit's runs pass both checks of :func:`placed_checks` at once."""
    return placed_checks(values, good, bad, side) == CHECKS


def ends_target(good: Sequence[float], bad: Sequence[float], least: int = SIDE_MIN_RUNS) -> int:
    """Runs of each end before a culprit is judged: ``ENDS_FACTOR`` times a commit's (:func:`runs_needed`); as many
    as a commit's when those are ``least`` below ``SIDE_MIN_RUNS`` (a dear unit, the ends so many spreads apart that
    a commit needs the fewest runs: a chance deviation of the ends' levels is then a small part of the change, and
    every check's Student's t counts the ends' runs; one more each cost 2 boots a bisection, issue 38; as many also
    at 3 named one commit for two changes of 4 SD: test_bisect_dear.py)."""
    need = runs_needed(good, bad, least)
    return need if need == least < SIDE_MIN_RUNS else ENDS_FACTOR * need


def ends_ready(good: Sequence[float], bad: Sequence[float], least: int = SIDE_MIN_RUNS) -> bool:
    """Whether the ends have their runs (:func:`ends_target`): their levels also steered the search, and with
    more runs a chance deviation of theirs fades."""
    return min(len(good), len(bad)) >= ends_target(good, bad, least)


def placing(
    sides: Sequence[tuple[int, Sequence[float], Sequence[float]]],
    good: Sequence[float],
    bad: Sequence[float],
    strikes: dict[int, int],
    passed: dict[int, set[str]],
    least: int = SIDE_MIN_RUNS,
) -> set[int]:
    """The commits of ``sides`` (commit, its runs, the end it should measure like: the culprit with the bad end,
    its parents with the good end) that have passed every check of :func:`placed_checks`, each check at the
    first look it passed (``passed``: commit -> those checks, updated; a commit's checks are only looked at
    while it does not differ from its end, with enough runs that a level half way between the ends would have
    differed in 99.5% of bisections, up to ``SIDE_MAX_RUNS``).  None until the ends are ready
    (:func:`ends_ready`).  A commit that once differed (``strikes``, updated) needs that many runs again for
    each time it did, so that looking again and again is no way through."""
    if not ends_ready(good, bad, least):
        return set()
    need = runs_needed(good, bad, least)
    for commit, values, end in sides:
        checks = passed.setdefault(commit, set())
        if checks == CHECKS:
            continue
        same = like(values, end, need * (1 + strikes.get(commit, 0)))
        if same is False:
            strikes[commit] = strikes.get(commit, 0) + 1
        if same:
            checks |= placed_checks(values, good, bad, "bad" if end is bad else "good", checks)
    return {commit for commit, _, _ in sides if passed[commit] == CHECKS}


def drift(points: Sequence[tuple[int, float]], batches: int) -> dict[int, float]:
    """Batch number -> drift offset from the references' (batch, deviation from the model): a Theil-Sen line
    through them over batch numbers, used only when Kendall's test finds a trend (p < ``DRIFT_PVALUE``), so
    that the correction adds no noise on a steady machine."""
    from scipy.stats import kendalltau, theilslopes

    if len(points) < DRIFT_MIN_REFERENCES or len({p[0] for p in points}) < 4:
        return {}
    numbers = [p[0] for p in points]
    residuals = [p[1] for p in points]
    if float(kendalltau(numbers, residuals).pvalue) >= DRIFT_PVALUE:
        return {}
    slope, intercept, _, _ = theilslopes(residuals, numbers)
    return {batch: intercept + slope * batch for batch in range(batches)}
