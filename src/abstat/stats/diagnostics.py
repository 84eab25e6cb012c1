"""Diagnostics: properties of the data that weaken a comparison.

Each check returns zero or more :class:`~abstat.stats.warnings.StatWarning`
values; nothing is printed.  Codes (stable, see ``docs/json.md``):

``too-few-samples``  too few samples (or runs) for the confidence asked; the
                     message says how many would do.
``ties``             quantized data / heavy ties (e.g. TSC counts in steps of
                     20 cycles): medians move in whole steps.
``unequal-spread``   spreads differ by more than 2x (Brown-Forsythe test).
``bimodal``          the density has two or more modes holding >= 10% each.
``drift``            trend or autocorrelation along the sample order: the
                     samples are not independent draws.
``runs-disagree``    the runs of a variant differ more than their own noise
                     explains (one-way ANOVA), i.e. run-to-run variation.
"""

from __future__ import annotations

import math

import numpy as np

from abstat.stats.levels import level_starts
from abstat.stats.warnings import StatWarning
from abstat.stats.medians import median
from abstat.stats.modes import BIMODAL_MIN_MASS, _histogram, bimodal, mode_count  # noqa: F401 (re-exported)

SPREAD_RATIO = 2.0
DRIFT_MIN_N = 10
EXACT_SUMS = 200_000  # up to this many values, sums of squared centred ranks are exact (rank_correlations)


def min_n_rank_test(confidence: float) -> int:
    """Smallest equal sample size at which a two-sample rank test can reject.

    With m per side the most extreme arrangement has probability
    ``2 / C(2m, m)``; it must not exceed ``1 - confidence``.
    """
    alpha = 1.0 - confidence
    m = 1
    while 2.0 / math.comb(2 * m, m) > alpha:
        m += 1
    return m


def quantization_step(
    values: np.ndarray, ordered: np.ndarray | None = None, starts: np.ndarray | None = None
) -> float | None:
    """The grid step of integer-valued data (gcd of the gaps), else None (``ordered``: the values
    sorted, if known: then read from their distinct values, the same gcd over a few levels; ``starts``:
    :func:`level_starts` of ``ordered``, if made)."""
    if ordered is not None and ordered.size:
        values = ordered[level_starts(ordered) if starts is None else starts]
    if not (values == np.round(values)).all() or np.abs(values).max() > 2**52:
        return None
    whole = values.astype(np.int64)  # the gcd of the gaps between the distinct values, without sorting them:
    step = int(np.gcd.reduce(whole - whole.min()))  # that of every value's distance to the least (0: one value)
    return float(step) if step > 1 else None


def tie_counts(values: np.ndarray) -> np.ndarray:
    """Sizes of the groups of equal values (in ascending order of value)."""
    return _sorted_tie_counts(np.sort(values))


def distinct_count(ordered: np.ndarray) -> int:
    """How many groups of equal values the sorted ``ordered`` has (a NaN is a group of its own)."""
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1 if ordered.size else 0


def _sorted_tie_counts(ordered: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """:func:`tie_counts` of values already in ascending order (``starts``: :func:`level_starts`, if made)."""
    if starts is None:
        starts = level_starts(ordered)
    counts = np.empty_like(starts)
    counts[:-1] = starts[1:] - starts[:-1]
    counts[-1] = ordered.size - starts[-1]
    return counts


def heavily_tied(values: np.ndarray, ordered: np.ndarray | None = None, starts: np.ndarray | None = None) -> bool:
    """True when the data are quantized: < 30% of the values are distinct, or
    one value holds >= 10% of the sample (and at least 3 values), or the
    order statistics around the median (ranks n/2 +- ceil(sqrt(n)), about its
    confidence interval's span) take at most min(5, half their count)
    distinct values or are mostly one value: the median then moves in whole
    steps.  A single pair of equal values among continuous data is none of
    these (a pair is 10% of 20 values, which alone used to count).  ``ordered``:
    the values sorted, if known (``starts``: their :func:`level_starts`, if made)."""
    if ordered is None:
        ordered = np.sort(values)  # once: the counts and the window around the median both read it
    n = values.size
    distinct = distinct_count(ordered) if starts is None else starts.size
    if distinct < 0.3 * n or (distinct < n and _sorted_tie_counts(ordered, starts).max() >= max(3, 0.1 * n)):
        return True
    half = math.ceil(math.sqrt(n))
    low, high = max(0, (n - 1) // 2 - half), min(n, n // 2 + half + 1)
    window = _sorted_tie_counts(ordered[low:high])
    return bool(window.size <= min(5, (high - low) // 2) or window.max() > (high - low) / 2)


def ties(
    name: str, values: np.ndarray, ordered: np.ndarray | None = None, starts: np.ndarray | None = None
) -> list[StatWarning]:
    """The ``ties`` warning when the values are :func:`heavily_tied` (``ordered``: them sorted, if known;
    ``starts``: their :func:`level_starts`, if made)."""
    if not heavily_tied(values, ordered, starts):
        return []
    # the groups of equal values (np.unique's, which also counts NaNs as one value: then it)
    if np.isnan(values).any() if ordered is None else ordered[-1] != ordered[-1]:  # (NaN sorts last)
        counts = np.unique(values, return_counts=True)[1]
    else:
        counts = tie_counts(values) if ordered is None else _sorted_tie_counts(ordered, starts)
    top, distinct = int(counts.max()), counts.size
    step = quantization_step(values, ordered, starts)
    grid = f", on a grid of {step:g}" if step else ""
    return [
        StatWarning(
            "ties",
            f"{name}: heavily tied/quantized data ({distinct} distinct value{'s' if distinct != 1 else ''} in "
            f"{values.size}{grid}; the most common value holds {top / values.size:.0%}): "
            "medians move in whole steps",
            name,
        )
    ]


def grids_differ(
    name_x: str,
    x: np.ndarray,
    name_y: str,
    y: np.ndarray,
    tied: tuple[bool, bool] | None = None,
    logs: tuple[np.ndarray, np.ndarray] | None = None,
    ordered: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[StatWarning]:
    """Both variants quantized, on different grids (20 against 21 cycles:
    two machines' TSC ratios): their values are not comparable step by step
    (``tied``: whether each is :func:`heavily_tied`, if known; ``logs``: the logarithms the default
    comparison reads, when it is the comparison made: the warning then says whose tied values it spreads;
    ``ordered``: ``x`` and ``y`` sorted, if known)."""
    if not (all(tied) if tied is not None else heavily_tied(x) and heavily_tied(y)):
        return []
    xs, ys = (np.sort(x), np.sort(y)) if ordered is None else ordered
    gx, gy = quantization_step(x, xs), quantization_step(y, ys)  # (from the levels: cheaper)
    if gx is None or gy is None or gx == gy:
        return []
    spread = f"; {_spread_words(name_x, name_y, logs)}" if logs is not None else ""
    return [
        StatWarning(
            "grids-differ",
            f"{name_x} is on a grid of {gx:g}, {name_y} on a grid of {gy:g} (different machines or clock ratios?): "
            f"the values are not comparable step by step{spread}",
        )
    ]


def _spread_words(name_x: str, name_y: str, logs: tuple[np.ndarray, np.ndarray]) -> str:
    """Whose tied values the default comparison reads as spread over the gaps between their levels
    (:func:`abstat.stats.hodges_lehmann.spread_pair`; a level further from its neighbours than the tie-cell
    limit keeps its value), as it computes it."""
    from abstat.stats.hodges_lehmann import spread_pair
    from abstat.stats.tie_cells import spread_levels

    parts, spread = [], False
    for name, sample in zip((name_x, name_y), spread_pair(*logs), strict=True):
        tied, wide = spread_levels(sample)
        spread = spread or wide > 0
        if wide and wide == tied:
            parts.append(f"{name}'s tied values are read as spread over the gaps between its levels")
        elif wide:
            parts.append(f"{wide} of {name}'s {tied} tied levels are read as spread, the others keep their values")
        elif tied:
            parts.append(f"{name}'s tied values keep their values (its levels are too far apart to be spread)")
    if not parts:
        return ""
    return "; ".join(parts) + (", so the change is that of the spread values" if spread else "")


def brown_forsythe(x: np.ndarray, y: np.ndarray) -> float:
    """p-value of the Brown-Forsythe test of equal spreads (Levene's test with
    medians; Brown & Forsythe 1974): one-way ANOVA on |value - median|."""
    from abstat.stats.distributions import fdtrc

    zx = np.abs(x - median(x))
    zy = np.abs(y - median(y))
    n1, n2 = zx.size, zy.size
    m1, m2 = zx.mean(), zy.mean()
    grand = (zx.sum() + zy.sum()) / (n1 + n2)
    between = n1 * (m1 - grand) ** 2 + n2 * (m2 - grand) ** 2
    within = float(np.sum((zx - m1) ** 2) + np.sum((zy - m2) ** 2))
    if within == 0.0:
        return 0.0 if between > 0 else 1.0
    f = between / (within / (n1 + n2 - 2))
    return fdtrc(1, n1 + n2 - 2, float(f))


def unequal_spread(name_x: str, x: np.ndarray, name_y: str, y: np.ndarray) -> list[StatWarning]:
    if x.size < 3 or y.size < 3:
        return []
    sx, sy = float(np.std(x, ddof=1)), float(np.std(y, ddof=1))
    if min(sx, sy) == 0.0 and max(sx, sy) == 0.0:
        return []
    ratio = max(sx, sy) / min(sx, sy) if min(sx, sy) > 0 else math.inf
    if ratio < SPREAD_RATIO:
        return []
    p = brown_forsythe(x, y)
    if not p < 0.01:
        return []
    wider = name_x if sx > sy else name_y
    return [
        StatWarning(
            "unequal-spread",
            f"spreads differ: {wider} is {ratio:.1f}x wider (Brown-Forsythe p={p:.2g}); "
            "the change may be in shape, not only in location",
        )  # about the pair, not one variant: no variant field
    ]


FEW_LEVELS = 8  # up to this many distinct values, :func:`average_ranks` compares with each level


def average_ranks(
    values: np.ndarray,
    distinct: int | None = None,
    ordered: np.ndarray | None = None,
    starts: np.ndarray | None = None,
    less: float = 0.0,
) -> np.ndarray:
    """Ranks 1..n, ties sharing their average rank (as scipy.stats.rankdata),
    from one argsort (``distinct``: :func:`distinct_count` of the values, if known); with at most
    :data:`FEW_LEVELS` distinct values, from a sort and one comparison per level instead (an argsort of
    heavily tied data costs 4-5x as much: TSC-grid data, 10^4-10^5 values; ``ordered``: that sort, if made;
    ``starts``: its :func:`level_starts`, if made).  ``less``: subtracted from every rank (on the levels'
    ranks when few: the same differences)."""
    n = values.size
    few = distinct is not None and 1 < distinct <= FEW_LEVELS
    ordered = (np.sort(values) if ordered is None else ordered) if few else None
    if ordered is not None and ordered[-1] == ordered[-1]:  # (NaN, sorted last, is no level: argsorted below)
        starts = level_starts(ordered) if starts is None else starts
        average = starts + (_sorted_tie_counts(ordered, starts) + 1) / 2.0  # (the same numbers as below)
        if less:
            average -= less
        level = np.zeros(n, dtype=np.intp)
        for bound in ordered[starts[1:]].tolist():  # each value's level: how many levels lie below it
            level += values >= bound
        return average[level]
    order = np.argsort(values)
    if distinct == n:  # no ties: the ranks are 1..n
        ranks = np.empty(n)
        ranks[order] = np.arange(1.0, n + 1.0)
        return ranks - less if less else ranks
    ordered = values[order]
    starts = level_starts(ordered)
    if starts.size == n:  # no ties (continuous data): the ranks are 1..n, as the general case gives them
        average = np.arange(1.0, n + 1.0)
    else:
        counts = _sorted_tie_counts(ordered, starts)
        average = np.repeat(starts + (counts + 1) / 2.0, counts)  # 1-based mean rank of each tie group
    ranks = np.empty(n)
    ranks[order] = average
    return ranks - less if less else ranks


def rank_correlations(
    values: np.ndarray, distinct: int | None = None, ordered: np.ndarray | None = None, starts: np.ndarray | None = None
) -> tuple[float, float] | None:
    """Spearman's correlation of the values with their order (a trend) and
    the lag-1 autocorrelation of their ranks; None for fewer than
    :data:`DRIFT_MIN_N` values or a constant sample (``ordered``: the values sorted, if known;
    ``starts``: its :func:`level_starts`, if made)."""
    n = values.size
    # (constant: the ranks' spread below is 0; from the sort's ends if made: False with a NaN, sorted last)
    if n < DRIFT_MIN_N or (values.min() == values.max() if ordered is None else ordered[0] == ordered[-1]):
        return None
    # Up to EXACT_SUMS values, the sums of squares of 1..n less their mean are exact in doubles, whatever
    # the order of the additions (multiples of 1/4 below 2^51): n (n^2 - 1) / 12, for the index and,
    # without ties, for the ranks (then a permutation of 1..n).  Their mean is (n + 1) / 2 exactly, tied or
    # not (average ranks sum to n (n + 1) / 2, every partial sum a multiple of 1/2: exact).
    closed = n <= EXACT_SUMS
    untied = closed and distinct == n
    if closed:
        centred = average_ranks(values, distinct, ordered, starts, (n + 1) / 2)
    else:
        ranks = average_ranks(values, distinct, ordered, starts)
        centred = ranks - ranks.mean()
    # Plain products and sums: np.dot hands these to BLAS threads, which cost
    # more CPU than the arithmetic itself.
    spread = n * (n * n - 1) / 12 if untied else float(np.add.reduce(centred * centred))  # (np.sum's reduction)
    if spread == 0.0:
        return None
    idx = _centred_index(n) if closed else np.arange(n, dtype=float)
    if not closed:
        idx -= idx.mean()
    squares = n * (n * n - 1) / 12 if closed else float(np.add.reduce(idx * idx))
    rho = float(np.add.reduce(idx * centred)) / math.sqrt(squares * spread)
    return rho, float(np.add.reduce(centred[1:] * centred[:-1])) / spread


_INDEX: list[np.ndarray] = [np.zeros(0)]  # the last sample size's positions less their mean (read only)


def _centred_index(n: int) -> np.ndarray:
    """``0..n-1`` less ``(n - 1) / 2`` (kept for the next sample of that size: the other side of a comparison)."""
    if _INDEX[0].size != n:
        idx = np.arange(n, dtype=float)
        idx -= (n - 1) / 2
        _INDEX[0] = idx
    return _INDEX[0]


def drift(
    name: str, values: np.ndarray, level: float = 0.01, correlations: tuple[float, float] | None = None
) -> list[StatWarning]:
    """Trend (Spearman rank correlation with the sample index) and lag-1
    autocorrelation of the ranks, each tested at ``level`` (1%);
    ``correlations``: :func:`rank_correlations` of ``values``, if known."""
    n = values.size
    found_corr = correlations if correlations is not None else rank_correlations(values)
    if found_corr is None:
        return []
    rho, r1 = found_corr
    from abstat.stats.distributions import ndtri

    z_crit = ndtri(1.0 - level / 2.0)
    found = []
    # Spearman's rho under independence: sd about 1 / sqrt(n - 1).
    if abs(rho) * math.sqrt(n - 1) > z_crit and abs(rho) >= 0.2:
        found.append(f"trend along the sample order (Spearman rho={rho:+.2f})")
    if abs(r1 + 1.0 / n) * math.sqrt(n) > z_crit and abs(r1) >= 0.2:
        found.append(f"lag-1 autocorrelation {r1:+.2f}")
    if not found:
        return []
    return [
        StatWarning(
            "drift",
            f"{name}: {' and '.join(found)}: samples are not independent "
            "(warm-up, throttling, background load?); consider several runs",
            name,
        )
    ]


def runs_disagree(name: str, p_value: float, share: float) -> list[StatWarning]:
    if not p_value < 0.001:
        return []
    return [
        StatWarning(
            "runs-disagree",
            f"{name}: the runs differ more than their own noise explains (ANOVA p={p_value:.2g}); "
            f"{share:.0%} of the variance is between runs, which is why runs, not samples, are compared",
            name,
        )
    ]


def drifting_runs(runs: list[np.ndarray], level: float) -> int:
    """How many of ``runs`` (those of at least :data:`DRIFT_MIN_N` values) :func:`drift` flags at
    ``level``: the rank correlations computed row-wise on the runs of equal size.  Average ranks
    are half-integers summing to n(n + 1) / 2, so every sum below is exact and the result is
    that of :func:`drift` run by run."""
    from abstat.stats.distributions import ndtri

    sizes: dict[int, list[np.ndarray]] = {}
    for run in runs:
        if run.size >= DRIFT_MIN_N:
            sizes.setdefault(run.size, []).append(run)
    z_crit = ndtri(1.0 - level / 2.0)
    found = 0
    for n, group in sizes.items():
        block = np.stack(group)
        finite = np.isfinite(block).all(axis=1)
        found += sum(1 for row in block[~finite] if drift("", row, level))
        block = block[finite]
        k = block.shape[0]
        if k == 0:
            continue
        order = np.argsort(block, axis=1)
        ordered = np.take_along_axis(block, order, axis=1)
        new = np.ones((k, n), dtype=bool)
        new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        starts = np.flatnonzero(new.ravel())
        counts = np.diff(np.r_[starts, k * n])
        average = np.repeat(starts % n + (counts + 1) / 2.0, counts).reshape(k, n)
        ranks = np.empty((k, n))
        np.put_along_axis(ranks, order, average, axis=1)
        centred = ranks - ranks.mean(axis=1, keepdims=True)
        spread = np.sum(centred * centred, axis=1)
        idx = np.arange(n, dtype=float)
        idx -= idx.mean()
        varying = spread != 0.0
        centred, spread = centred[varying], spread[varying]
        rho = np.sum(idx * centred, axis=1) / np.sqrt(float(np.sum(idx * idx)) * spread)
        r1 = np.sum(centred[:, 1:] * centred[:, :-1], axis=1) / spread
        trend = (np.abs(rho) * math.sqrt(n - 1) > z_crit) & (np.abs(rho) >= 0.2)
        serial = (np.abs(r1 + 1.0 / n) * math.sqrt(n) > z_crit) & (np.abs(r1) >= 0.2)
        found += int(np.sum(trend | serial))
    return found
