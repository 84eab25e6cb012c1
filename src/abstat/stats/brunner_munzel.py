"""Brunner & Munzel's (2000) statistic at a shift, on samples whose ties are
spread over their cells (the test that :mod:`abstat.stats.hodges_lehmann`
inverts; split from it, which re-exports these names; the spreading of ties
is described there).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from abstat.fastdataclass import dataclass
from abstat.stats.distributions import stdtr
from abstat.stats.levels import level_starts

POINTS = 2048  # a tied level of more values is integrated with this many weighted points
FEW_TIES = 32  # up to this many values of x tied with one of y - delta, their half counts are set one by one
MERGE_FROM = 20_000  # from this many values in the smaller sample (and at most 8 times as many in the other),
# the placements at a shift with no guess of them come from one merge of the samples (faster than a search)


@dataclass(frozen=True)
class Spread:
    """A sorted sample with its ties spread over their cells."""

    values: np.ndarray  # ascending
    n: int  # the sample's size
    groups: np.ndarray | None = None  # index of each value's tie group (None: no ties)
    counts: np.ndarray | None = None  # the size of each tie group
    weights: np.ndarray | None = None  # how many values each point stands for (None: 1 each)
    spread: bool = False  # some tied level was spread over a cell (else its points are its value)
    increasing: bool = True  # no two points equal (then a tie with one of them is with it alone)
    running: np.ndarray | None = None  # 0, then the weights' running sums (with weights)
    level_weights: np.ndarray | None = None  # each group's weight per point (with weights: ``weights`` gathered)

    def group_variance(self, per_value: np.ndarray) -> float:
        """``variance(group_means(per_value))``, the same numbers with fewer passes: each group's mean, its
        product with the weight and its deviation are taken once per group and gathered (every element the
        same double as before), and the sums still run over every value in order."""
        if self.groups is None or self.n < 2 or (self.weights is not None and self.level_weights is None):
            return self.variance(self.group_means(per_value))
        assert self.counts is not None  # set with groups
        groups = self.groups
        if self.weights is None:
            means = np.bincount(groups, weights=per_value) / self.counts
            centre = np.add.reduce(means.take(groups)) / groups.size  # (np.mean's arithmetic)
            deviations = means - centre
            return float(np.add.reduce((deviations * deviations).take(groups))) / (self.n - 1)
        level = self.level_weights
        means = np.bincount(groups, weights=per_value * self.weights) / self.counts
        mean = float(np.add.reduce((level * means).take(groups))) / self.n
        deviations = means - mean
        return float(np.add.reduce((level * deviations * deviations).take(groups))) / (self.n - 1)

    def group_means(self, per_value: np.ndarray) -> np.ndarray:
        """``per_value`` averaged within each tie group (as it is when there are none)."""
        if self.groups is None:
            return per_value
        assert self.counts is not None  # set with groups
        w = per_value if self.weights is None else per_value * self.weights
        return (np.bincount(self.groups, weights=w) / self.counts)[self.groups]

    def variance(self, per_value: np.ndarray) -> float:
        """The sample variance (divisor n - 1) of ``per_value`` over the ``n`` values."""
        if self.n < 2:
            return 0.0
        if self.weights is None:
            centred = per_value - per_value.mean()
            return float(np.add.reduce(np.multiply(centred, centred, out=centred))) / (self.n - 1)
        mean = float(np.add.reduce(self.weights * per_value)) / self.n  # (np.sum's reduction)
        centred = per_value - mean
        weighted = np.multiply(self.weights, centred)
        return float(np.add.reduce(np.multiply(weighted, centred, out=weighted))) / (self.n - 1)


def spread_ties(sorted_values: np.ndarray, limit: float = math.inf, starts: np.ndarray | None = None) -> Spread:
    """The tied values of each level spread evenly over ``[v - h, v + h]``,
    ``h`` half the gap to the nearest other level (no spread for a constant sample,
    nor for a level whose ``h`` exceeds ``limit``: :mod:`abstat.stats.tie_cells`; ``starts``: where each
    level's values start, if known: :func:`abstat.stats.levels.level_starts`)."""
    s = sorted_values
    n = s.size
    if starts is None:
        starts = level_starts(s)
    if starts.size == n:
        return Spread(s, n)
    # (numpy's functions' arithmetic, as array methods and slices: a dozen wrappers less a sample)
    counts = np.empty_like(starts)  # each level's values
    counts[:-1] = starts[1:] - starts[:-1]
    counts[-1] = n - starts[-1]
    levels = s[starts]
    if starts.size == 1:
        half = np.zeros(1)
    else:
        around = np.full(starts.size + 1, np.inf)  # the gaps below and above each level
        around[1:-1] = levels[1:] - levels[:-1]
        half = np.minimum(around[:-1], around[1:]) / 2.0
        half[half > limit] = 0.0
    points = np.minimum(counts, POINTS)  # points per level
    groups = np.arange(starts.size).repeat(points)
    offsets = points.cumsum() - points
    position = (np.arange(int(points.sum())) - offsets[groups] + 0.5) / points[groups]  # in (0, 1)
    values = levels[groups] + half[groups] * (2.0 * position - 1.0)
    # (None: every level's points are its values, one each)
    per_level = None if counts.max() <= POINTS else counts / points
    weights = None if per_level is None else per_level[groups]
    running = None
    if weights is not None:
        running = np.empty(weights.size + 1)
        running[0] = 0.0
        weights.cumsum(out=running[1:])
    increasing = bool((values[1:] > values[:-1]).all())
    spread = bool((half[counts > 1] > 0.0).any())
    return Spread(values, n, groups, counts, weights, spread, increasing, running, per_level)


@dataclass(frozen=True)
class BMStat:
    """Brunner-Munzel's statistic for ``x`` against ``y - delta``."""

    p_hat: float  # P(X < Y - delta) + P(=) / 2
    se: float  # its standard error
    df: float
    unit_x: float = 0.0  # Var(F_Y(X)): one baseline value's share of se^2 is unit_x / n_x
    unit_y: float = 0.0  # Var(F_X(Y))

    @property
    def t(self) -> float:
        return (self.p_hat - 0.5) / self.se if self.se > 0 else math.copysign(math.inf, self.p_hat - 0.5)


def _below(size: int, positions: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """``sum of weights_i over i with positions_i <= j`` for ``j < size`` (as floats; counts exactly)."""
    running = np.bincount(positions, weights=weights, minlength=size + 1)[:size].cumsum()
    # (integer counts summed as integers, then converted: exact, and 2-3x faster than a cumsum cast to float)
    return running if weights is not None else running.astype(float)


_ONE_TO_N = [np.arange(1.0, 4097.0)]  # 1.0, 2.0, ...: the interpolation's counts (the largest made so far)
CHUNK = 8192  # keys interpolated at a time (np.interp given more keys than points makes an array of slopes)


def padded(t: np.ndarray) -> np.ndarray:
    """``t`` between -inf and inf (what :func:`sorted_search` checks its guesses against)."""
    out = np.empty(t.size + 2)
    out[0], out[-1] = -math.inf, math.inf
    out[1:-1] = t
    return out


def sorted_search(
    t: np.ndarray, keys: np.ndarray, side: Literal["left", "right"] = "right", bounds: np.ndarray | None = None
) -> np.ndarray:
    """``np.searchsorted(t, keys, side=side)`` for ascending ``t`` and ``keys``: guessed by ``np.interp``
    on the counts 1..n (its search starts from the previous key's place: a step or two for keys as dense
    as ``t``, against a binary search per key), each guess checked against its neighbours and the wrong
    ones searched, so the same counts exactly (non-finite ends: searched); ``bounds``: :func:`padded` of
    ``t``, if made."""
    n = t.size
    if (
        n < 2
        or keys.size == 0
        or not (math.isfinite(t[0]) and math.isfinite(t[-1]) and math.isfinite(keys[0]) and math.isfinite(keys[-1]))
    ):
        return np.searchsorted(t, keys, side=side)
    if _ONE_TO_N[0].size < n:
        _ONE_TO_N[0] = np.arange(1.0, n + 1.0)
    ones = _ONE_TO_N[0][:n]
    guess = np.empty(keys.size, dtype=np.intp)  # in 0..n: the values <= each key, about
    for i in range(0, keys.size, CHUNK):
        guess[i : i + CHUNK] = np.interp(keys[i : i + CHUNK], t, ones, left=0.0)
    return _checked(t, keys, guess, side, padded(t) if bounds is None else bounds)


def _checked(
    t: np.ndarray, keys: np.ndarray, guess: np.ndarray, side: Literal["left", "right"], pad: np.ndarray
) -> np.ndarray:
    """``guess`` (counts in 0..n) made ``np.searchsorted(t, keys, side=side)``: the guesses that the
    neighbouring values in ``pad`` (:func:`padded` of ``t``) confirm are kept, the others moved a step
    (a guess that missed a tie: off by one) and checked again, those still wrong searched."""
    bad = _wrong(keys, guess, side, pad).nonzero()[0]  # (np.flatnonzero's, without its wrappers)
    if bad.size:
        moved, wanted = guess[bad], keys[bad]
        if side == "right":
            moved += pad[1:].take(moved) <= wanted  # (counts stay in 0..n: pad's ends are -inf and inf)
            moved -= pad.take(moved) > wanted
        else:
            moved += pad[1:].take(moved) < wanted
            moved -= pad.take(moved) >= wanted
        still = _wrong(wanted, moved, side, pad).nonzero()[0]
        if still.size:
            moved[still] = np.searchsorted(t, wanted[still], side=side)
        guess[bad] = moved
    return guess


def _wrong(keys: np.ndarray, guess: np.ndarray, side: Literal["left", "right"], pad: np.ndarray) -> np.ndarray:
    """Where a count is not ``np.searchsorted``'s: c is right when pad[c] <= key < pad[c + 1] (side "left":
    pad[c] < key <= pad[c + 1])."""
    if side == "right":
        return (pad.take(guess) > keys) | (pad[1:].take(guess) <= keys)
    return (pad.take(guess) >= keys) | (pad[1:].take(guess) < keys)


def _counts_at_most(t: np.ndarray, ys: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """``np.searchsorted(t, ys, side="right")`` (both ascending, finite) from a ``guess`` of it."""
    return _checked(t, ys, np.minimum(np.maximum(guess, 0), t.size), "right", padded(t))  # (np.clip's)


def _merged(ys: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.searchsorted(ys, target, side="left")`` and ``np.searchsorted(target, ys, side="right")`` (both
    ascending) from one stable merge of the two: in it a ``target`` value comes before the equal ``ys``
    values, so each value's place less its own index counts the other sample's values before it."""
    order = np.argsort(np.concatenate((target, ys)), kind="stable")  # (two sorted runs: a merge, O(n))
    is_target = order < target.size
    left = np.flatnonzero(is_target)
    at_most = np.flatnonzero(~is_target)
    left -= np.arange(target.size)
    at_most -= np.arange(ys.size)
    return left, at_most


def _left(ys: np.ndarray, target: np.ndarray, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """``np.searchsorted(ys, target, side="left")`` (``y_j < target_i``), from ``rows``: a guess of how many
    ``x_i`` lie below ``y_j - delta`` (the differences' positions at ``delta``, :meth:`~abstat.stats.pairwise.
    SortedSums.rows_near`): ``y_j < target_i`` exactly when ``target`` has at most ``i`` values ``<= y_j``;
    without ``rows``, from a merge (:func:`_merged`) for large samples of similar sizes.  From ``rows`` or a
    merge, also how many ``target`` values are ``<= y_j`` (what :func:`_below` gives unweighted)."""
    small, large = sorted((ys.size, target.size))
    if rows is None and not (small >= MERGE_FROM and large <= 8 * small):  # a search per value is cheaper
        return sorted_search(ys, target, "left"), None
    ends = (target[0], target[-1], ys[0], ys[-1])  # (both ascending, a NaN last: finite ends, finite values)
    if not all(map(math.isfinite, ends)):
        return np.searchsorted(ys, target, side="left"), None
    if rows is None:
        return _merged(ys, target)
    at_most = _counts_at_most(target, ys, target.size - rows)
    return np.bincount(at_most, minlength=target.size + 1)[: target.size].cumsum(), at_most


def _placements(x: Spread, y: Spread, delta: float, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Each ``x_i``'s placement among ``y - delta`` (how many are below, ties counting half) and each
    ``y_j``'s among ``x + delta``, weighted by the other sample's weights.  The placements are whole and half
    multiples of the weights (1 or ``counts / POINTS``, dyadic: sums of them are exact in any order), so
    ``y``'s are the weights below ``left`` less half the ties' weights, however these are summed."""
    xs, ys = x.values, y.values
    target = xs + delta
    left, at_most = _left(ys, target, rows)  # y_j - delta < x_i
    if x.weights is not None:
        at_most = None  # (then weighted counts)
    equal = ys.take(left, mode="clip") == target
    if not equal.any():  # (a value clipped from beyond the end is no tie)
        placements_x = (left if y.running is None else y.running[left]).astype(float)
        return placements_x, _below(ys.size, left, x.weights) if at_most is None else at_most.astype(float)
    equal &= left < ys.size
    if y.increasing:  # a tie is with one point: y_j <= x_i + delta up to one further
        right = left + equal
    else:
        right = left.copy()
        right[equal] = np.searchsorted(ys, target[equal], side="right")
    cy = y.running
    placements_x = ((left + right) * 0.5) if cy is None else (cy.take(left) + cy.take(right)) * 0.5
    ties = np.count_nonzero(equal)
    if ties > FEW_TIES and not y.increasing:
        return placements_x, (_below(ys.size, right, x.weights) + _below(ys.size, left, x.weights)) * 0.5
    # the weights below ``right`` fall short of those below ``left`` by the ties' only, on [left_i, right_i)
    placements_y = _below(ys.size, left, x.weights) if at_most is None else at_most.astype(float)
    if ties > FEW_TIES:  # (y increasing: each tie's range is left_i alone)
        placements_y -= 0.5 * np.bincount(left[equal], None if x.weights is None else x.weights[equal], ys.size)
        return placements_x, placements_y
    weights = x.weights
    for i in np.flatnonzero(equal).tolist():
        placements_y[left[i] : right[i]] -= 0.5 if weights is None else 0.5 * float(weights[i])
    return placements_x, placements_y


def bm_statistic(
    x: Spread, y: Spread, delta: float, inflate: tuple[float, float] = (1.0, 1.0), rows: np.ndarray | None = None
) -> BMStat:
    """Brunner-Munzel at shift ``delta`` (``inflate``: factors on each
    variance component, for serial correlation; 1 for independent samples;
    ``rows``: the positions of the differences ``y - x`` near ``delta``, if known, to start from)."""
    nx, ny = x.n, y.n
    placements_x, placements_y = _placements(x, y, delta, rows)
    total = placements_y.sum() if y.weights is None else float(np.dot(placements_y, y.weights))
    p_hat = float(total) / (nx * ny)
    vx = x.group_variance(placements_x) * inflate[0]
    vy = y.group_variance(placements_y) * inflate[1]
    a, b = nx * vx, ny * vy
    se = math.sqrt(a + b) / (nx * ny)
    denominator = (a * a / (nx - 1) if nx > 1 else 0.0) + (b * b / (ny - 1) if ny > 1 else 0.0)
    df = (a + b) ** 2 / denominator if denominator > 0 else math.inf
    return BMStat(p_hat, se, df, vx / (ny * ny), vy / (nx * nx))


def bm_p_value(stat: BMStat, nx: int, ny: int) -> float:
    """Two-sided p-value; when neither sample overlaps the other (no variance
    to estimate), the exact permutation probability of so extreme an order,
    ``2 / C(nx + ny, nx)``, rather than 0."""
    if stat.se > 0:
        return min(1.0, 2.0 * stdtr(stat.df, -abs(stat.t)))
    if stat.p_hat == 0.5:
        return 1.0
    return separated_p(nx, ny)


def separated_p(nx: int, ny: int) -> float:
    """``2 / C(nx + ny, nx)``, the permutation probability of a complete
    separation, without overflow (0.0 only below the doubles' range)."""
    log_comb = math.lgamma(nx + ny + 1) - math.lgamma(nx + 1) - math.lgamma(ny + 1)
    return min(1.0, math.exp(math.log(2.0) - log_comb))
