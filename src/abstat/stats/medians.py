"""Difference (or ratio) of two medians: the Bonett-Price test and interval.

Each variant's median gets its own distribution-free standard error from the
order statistics around it (McKean & Schrader 1984; Price & Bonett 2001):
with ``c = max(1, round(n/2 - sqrt(n)))`` and ``alpha* = 2 P(Bin(n, 1/2) <=
c - 1)`` the exact non-coverage of ``[x_(c), x_(n-c+1)]``,

    se(median) = (x_(n-c+1) - x_(c)) / (2 z_{1 - alpha*/2}).

The two standard errors are combined as in Welch's test (no common spread is
assumed), and the difference of the medians gets the normal interval and
p-value (Bonett & Price 2002, "Statistical inference for a linear function of
medians", *Psychological Methods* 7(3); Price & Bonett 2002, "Distribution-free
confidence intervals for difference and ratio of medians", *J. Statist.
Comput. Simul.* 72(2)).  On logarithms it is a ratio of medians (the median of
the logarithms is the logarithm of the median).  Because interval and p-value
come from the same statistic, the interval excludes 0 exactly when
``p < 1 - confidence``.

On heavily quantized data the order statistics around the median are often
all one grid value: the median then cannot move by less than a grid step and
its order-statistic standard error is 0.  :func:`median_shift` then takes
half the gap to the neighbouring value (half a grid step) instead: such a
median is known to within a step, not exactly, and a change smaller than a
step cannot show in it.
"""

from __future__ import annotations

import math

import numpy as np

from abstat.fastdataclass import dataclass
from abstat.stats.distributions import binom_half_cdf, ndtr, ndtri, stdtr, stdtrit
from abstat.stats.ratio import welch_df


@dataclass(frozen=True)
class MedianShift:
    """``median(y) - median(x)`` on the analysis scale, with interval and p."""

    estimate: float
    low: float
    high: float
    p_value: float
    se: float
    se_x: float
    se_y: float
    pinned: bool = False  # a median's order statistics were all one value (grid step used)
    df: float = math.inf  # of the t quantile (inf: the normal one)


def _depth(n: int) -> int:
    """``c``: the median's interval is ``[x_(c), x_(n-c+1)]``."""
    return max(1, int(round(n / 2.0 - math.sqrt(n))))


def median_se(sorted_values: np.ndarray) -> float:
    """Distribution-free standard error of the sample median (sorted input)."""
    n = int(sorted_values.size)
    if n < 2:
        return math.nan
    c = _depth(n)
    alpha_star = 2.0 * binom_half_cdf(c - 1, n)
    z = ndtri(1.0 - alpha_star / 2.0)
    return float(sorted_values[n - c] - sorted_values[c - 1]) / (2.0 * z)


def median(values: np.ndarray) -> float:
    """The sample median (mean of the two middle values for an even n), by
    partial sort: ``np.median`` gives the same value but imports ``numpy.ma``
    (30 ms of start-up)."""
    n = values.size
    half = n // 2
    if n % 2:
        return float(np.partition(values, half)[half])
    part = np.partition(values, [half - 1, half])
    return _midpoint(float(part[half - 1]), float(part[half]))


def _midpoint(low: float, high: float) -> float:
    """``(low + high) / 2`` that does not overflow near the largest double."""
    middle = (low + high) / 2.0
    return middle if math.isfinite(middle) else low / 2.0 + high / 2.0


def sorted_median(sorted_values: np.ndarray) -> float:
    n = sorted_values.size
    half = n // 2
    if n % 2:
        return float(sorted_values[half])
    return _midpoint(float(sorted_values[half - 1]), float(sorted_values[half]))


def grid_gap(sorted_values: np.ndarray) -> float:
    """The gap from the median to the nearest other value of the sample
    (inf when every value is the same)."""
    m = sorted_median(sorted_values)
    below = sorted_values[sorted_values < m]
    above = sorted_values[sorted_values > m]
    gaps = ([m - float(below[-1])] if below.size else []) + ([float(above[0]) - m] if above.size else [])
    return min(gaps) if gaps else math.inf


def median_step(sorted_values: np.ndarray) -> float:
    """The smallest gap between adjacent distinct values in the median's
    order-statistic window ``x_(c-1) .. x_(n-c+2)`` (inf when the window
    holds one value).  On discrete data (counts, clock ticks) the sample
    median moves in such steps: when the population median sits near a step
    of the CDF it takes the values on either side about equally often, so
    its standard error is about half a step however narrow the order
    statistics look; on continuous data the gap is negligible."""
    n = int(sorted_values.size)
    c = _depth(n)
    gaps = np.diff(sorted_values[max(0, c - 2) : min(n, n - c + 2)])  # sorted: no np.unique (imports numpy.ma)
    steps = gaps[gaps > 0]
    return float(steps.min()) if steps.size else math.inf


def median_shift(
    x: np.ndarray,
    y: np.ndarray,
    confidence: float,
    estimate: float | None = None,
    inflate: tuple[float, float] = (1.0, 1.0),
) -> MedianShift:
    """Bonett-Price comparison of the medians of ``y`` (candidate) and ``x``.

    When the order statistics around a median are all one value (quantized
    data), its standard error is taken as half the gap to the nearest other
    value (half a grid step): the median is then known to a grid step, not
    exactly.  A variant whose values are all equal borrows the other's gap;
    if both are constant the standard error is 0 (no noise to judge by).
    ``estimate`` replaces the difference of the sample medians (on
    logarithms: the log of the ratio of the medians of the raw values, which
    differs from the median of the logs for an even n)."""
    sx, sy = np.sort(x), np.sort(y)
    se_x, se_y = median_se(sx), median_se(sy)
    pinned = se_x == 0.0 or se_y == 0.0
    if pinned:
        gap = min(grid_gap(sx), grid_gap(sy))
        if math.isfinite(gap):
            se_x = se_x or gap / 2.0
            se_y = se_y or gap / 2.0
    # Discrete data: a median known only to within a step of the values.
    floor_x, floor_y = median_step(sx) / 2.0, median_step(sy) / 2.0
    if se_x < floor_x < math.inf or se_y < floor_y < math.inf:
        pinned = True
        se_x = max(se_x, floor_x) if math.isfinite(floor_x) else se_x
        se_y = max(se_y, floor_y) if math.isfinite(floor_y) else se_y
    est = sorted_median(sy) - sorted_median(sx) if estimate is None else estimate
    se_x, se_y = se_x * math.sqrt(inflate[0]), se_y * math.sqrt(inflate[1])  # serial correlation
    se = math.hypot(se_x, se_y)
    if not se > 0.0:
        p = 1.0 if est == 0.0 else math.nan
        return MedianShift(est, est, est, p, 0.0 if se == 0.0 else math.nan, se_x, se_y, pinned)
    df = small_sample_df(sx.size, se_x, sy.size, se_y)
    if math.isinf(df):
        z = ndtri(0.5 + confidence / 2.0)
        p = min(1.0, 2.0 * ndtr(-abs(est / se)))
    else:
        z = stdtrit(df, 0.5 + confidence / 2.0)
        p = min(1.0, 2.0 * stdtr(df, -abs(est / se)))
    return MedianShift(est, est - z * se, est + z * se, p, se, se_x, se_y, pinned, df)


SMALL_N = 5  # below this a median's order-statistic standard error is itself too uncertain for z


def small_sample_df(n1: int, se1: float, n2: int, se2: float) -> float:
    """Degrees of freedom for the Bonett-Price statistic: infinite (the
    normal quantile) when both variants have at least :data:`SMALL_N`
    values; otherwise Welch-Satterthwaite's with ``n_i - 1`` per variant, as
    if each standard error came from a sample deviation.  With 3 values the
    standard error rests on the range of the sample: the normal quantile gave
    87-91% coverage at 95% for 3 vs 30 (``benchmarks/edge_calibration.py``)."""
    if min(n1, n2) >= SMALL_N:
        return math.inf
    a1, a2 = se1 * se1, se2 * se2
    return welch_df(n1, a1, n2, a2) if a1 + a2 > 0 else math.inf


# ---------------------------------------------------------------------------
# Medians the normal approximation does not describe: discrete values, a valley


LOW_DENSITY = 0.4  # a median whose density is below 0.4 of the lower quartile density is in a valley
GAP_SHARE = 0.6  # a median whose order-statistic window is mostly one gap straddles two modes
DENSITY_MIN_N = 20  # below this the spacing estimates of the densities are too rough to compare


def _density_at(sorted_values: np.ndarray, quantile: float, half: int) -> float:
    """Spacing estimate of the density at ``quantile``: ``2 half / n`` of the
    sample over the width of the ``2 half`` order statistics around it."""
    n = sorted_values.size
    i = int(round(quantile * (n - 1)))
    lo, hi = max(0, i - half), min(n - 1, i + half)
    width = float(sorted_values[hi] - sorted_values[lo])
    return (hi - lo) / (n * width) if width > 0 else math.inf


def unreliable(sorted_values: np.ndarray) -> str:
    """Why a median's standard error from the order statistics around it
    (:func:`median_se`) cannot be trusted, or ``""``:

    - ``"discrete"``: the values around it are one value, or steps of
      discrete values as wide as that error (counts, clock ticks): the
      sample median then jumps between grid values; below 10 values, any
      tie (grid 20 against 500 values: 7-9% false calls at 5-8 values);
    - ``"between modes"``: its order-statistic window is mostly (60%) one
      gap, or (from 20 values) the density at the median is below 0.4 of the
      smaller of the densities at the quartiles (a unimodal density never is
      below 1: it is at least the smaller of any two on either side).  On
      normal, exponential, log-normal and t(3) samples of 20 this flags
      0.4-1.6% (8% of exponential samples of 10), on 50/50 mixtures with
      modes 10 sd apart 88-94%, 4 sd apart 6-34% (n 10-100).  Between two modes the sample
      median jumps from one to the other, and a normal interval around it
      calls differences between identical variants (40% of 50/50 draws).
    """
    n = sorted_values.size
    if n < 10:  # too few for the tests below; tied values (a grid) make the median jump: discrete (attack19 F5)
        return "discrete" if n > 1 and bool(np.any(sorted_values[1:] == sorted_values[:-1])) else ""
    se = median_se(sorted_values)
    if se == 0.0 or median_step(sorted_values) / 2.0 > se:
        return "discrete"
    c = _depth(n)
    window = sorted_values[c - 1 : n - c + 1]
    width = float(window[-1] - window[0])
    if width > 0 and float(np.max(np.diff(window))) > GAP_SHARE * width:
        return "between modes"
    if n < DENSITY_MIN_N:
        return ""
    half = max(2, int(math.ceil(math.sqrt(n) / 2.0)))
    centre = _density_at(sorted_values, 0.5, half)
    sides = min(_density_at(sorted_values, 0.25, half), _density_at(sorted_values, 0.75, half))
    if math.isfinite(sides) and centre < LOW_DENSITY * sides:
        return "between modes"
    return ""


@dataclass(frozen=True)
class ExactMedians:
    """Each median's distribution-free interval, at ``levels`` (independent
    samples: both hold with at least their product, ``confidence``)."""

    x: tuple[float, float] | None
    y: tuple[float, float] | None
    p_value: float
    levels: tuple[float, float] = (math.nan, math.nan)


def _deepest(n: int, miss: float) -> int:
    """The largest ``k`` whose ``[x_(k), x_(n-k+1)]`` has exact non-coverage ``2 P(Bin(n, 1/2) <= k - 1)`` at
    most ``miss``; 0 if even ``k = 1`` misses more."""
    if 2.0 * binom_half_cdf(0, n) > miss:
        return 0
    lo, hi = 1, (n + 1) // 2  # the largest k with 2 B(k - 1) <= miss lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if 2.0 * binom_half_cdf(mid - 1, n) <= miss:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _interval(sorted_values: np.ndarray, miss: float) -> tuple[float, float] | None:
    """``[x_(k), x_(n-k+1)]`` with the largest ``k`` whose exact non-coverage
    is at most ``miss`` (None if even ``k = 1`` misses more)."""
    n = sorted_values.size
    k = _deepest(n, miss)
    return (float(sorted_values[k - 1]), float(sorted_values[n - k])) if k else None


def _normal_interval(sorted_values: np.ndarray, miss: float) -> tuple[float, float] | None:
    """The median plus or minus its Bonett-Price error at non-coverage ``miss``
    (Student's t with n - 1 degrees of freedom below :data:`SMALL_N` values)."""
    n = sorted_values.size
    se = median_se(sorted_values)
    if not se > 0:
        return None
    q = ndtri(1.0 - miss / 2.0) if n >= SMALL_N else stdtrit(n - 1, 1.0 - miss / 2.0)
    m = sorted_median(sorted_values)
    return m - q * se, m + q * se


# Each level of a side's order-statistic interval that the split puts at ``confidence`` is met with room: the
# change of k comes at a non-coverage 10% below the nominal one, so a p-value by bisection does not land on it.
ROOM = 0.1


def _levels(n: int, confidence: float, count: int = 4) -> list[float]:
    """The exact coverages ``1 - 2 P(Bin(n, 1/2) <= k - 1)`` of ``[x_(k), x_(n-k+1)]`` for the ``count``
    deepest ``k`` that still cover ``confidence``."""
    k = _deepest(n, 1.0 - confidence)
    return [1.0 - 2.0 * binom_half_cdf(j - 1, n) for j in range(max(1, k - count + 1), k + 1)]


def _width(n: int, level: float, exact: bool) -> float:
    """The expected width, in standard deviations of a normal sample, of a median's interval at ``level``."""
    if not exact:
        return 2.0 * ndtri(0.5 + level / 2.0) * math.sqrt(math.pi / 2.0) / math.sqrt(n)
    k = _deepest(n, 1.0 - level)
    return 2.0 * ndtri((n + 1 - k) / (n + 1.0)) if k else math.inf


def split(sizes: tuple[int, int], confidence: float, exact: tuple[bool, bool]) -> float:
    """``w``: the baseline's interval is taken at ``confidence ** w``, the
    candidate's at ``confidence ** (1 - w)``.  Chosen from the sizes alone
    (never the values, so the coverage holds), for the narrowest expected
    combined interval: a few values against many give most of the miss to
    the few (9 against 500 on a grid: ``[x_(2), x_(8)]`` at 96.1% instead of
    ``[x_(1), x_(9)]`` at 99.6%); equal sizes split evenly.  Only an
    order-statistic interval (``exact``) is given more than half the miss."""
    log_c = math.log(confidence)
    candidates = {0.5}
    for side, n in enumerate(sizes):
        for level in _levels(n, confidence):
            if level < 1.0:
                share = min(1.0, math.log(level) / log_c * (1.0 + ROOM))
                candidates.add(share if side == 0 else 1.0 - share)

    def width(w: float) -> float:
        return _width(sizes[0], confidence**w, exact[0]) + _width(sizes[1], confidence ** (1.0 - w), exact[1])

    # a median the normal approximation describes keeps at least sqrt(confidence): on a grid it is rough at 20
    # values (500 against 20: 7.1% false calls where its Bonett-Price interval took most of the miss)
    allowed = [w for w in sorted(candidates) if (exact[0] or w <= 0.5) and (exact[1] or w >= 0.5)]
    return min(allowed, key=lambda w: (width(w), abs(w - 0.5)))


def exact_medians(
    sx: np.ndarray, sy: np.ndarray, confidence: float, exact: tuple[bool, bool] = (True, True)
) -> ExactMedians:
    """The order-statistic intervals of both medians (Conover 1999, 3.2), valid
    for any distribution, discrete or between modes, at levels whose product
    is ``confidence`` (:func:`split`), and the p-value of "equal medians" from
    the same construction: the smallest non-coverage ``m`` at whose split the
    two intervals are still disjoint (the intervals shrink as ``m`` grows, so
    the interval at ``confidence`` excludes equality exactly when ``p < 1 -
    confidence``).  ``exact``: per variant, False for a median whose
    Bonett-Price interval stands instead (one the normal approximation
    describes, beside another that it does not)."""
    w = split((sx.size, sy.size), confidence, exact)
    kinds = [_interval if e else _normal_interval for e in exact]

    def intervals(miss: float) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
        log_level = math.log1p(-miss)  # (1 - miss, then a power, is 1 for a miss below 1e-16: a tiny p lost)
        return kinds[0](sx, -math.expm1(w * log_level)), kinds[1](sy, -math.expm1((1.0 - w) * log_level))

    ix, iy = intervals(1.0 - confidence)
    levels = (confidence**w, confidence ** (1.0 - w))

    def disjoint(log_miss: float) -> bool:
        a, b = intervals(math.exp(log_miss))
        return a is not None and b is not None and (a[1] < b[0] or b[1] < a[0])

    lo, hi = math.log(1e-300), math.log(0.999999)  # disjoint at hi? then p is about 1
    if not disjoint(hi):
        return ExactMedians(ix, iy, 1.0, levels)
    if disjoint(lo):
        return ExactMedians(ix, iy, 2e-300, levels)
    while hi - lo > 1e-4 * abs(hi):  # the boundary non-coverage, to 4 digits
        mid = (lo + hi) / 2.0
        if disjoint(mid):
            hi = mid
        else:
            lo = mid
    return ExactMedians(ix, iy, min(1.0, math.exp(hi)), levels)
