"""Student's t quantile at many degrees of freedom at once, bit for bit :func:`abstat.stats.distributions.stdtrit`'s.

The small-n power model pre-tests each simulated data set for serial correlation as ``compare`` does
(:func:`abstat.stats.dependence.serial_factors`), whose critical value is a t quantile at the data set's
own effective degrees of freedom: hundreds of different quantiles a plan, 0.06 s of ``abstat plan a b``
asked one at a time.  Here the Newton steps from the Cornish-Fisher start
(:func:`abstat.stats.distributions._newton_from_expansion`) are taken for all of them together: the continued
fraction of the incomplete beta function, most of the work, as array operations (the same IEEE operations
in the same order as :func:`abstat.stats.distributions._beta_fraction`, so the same bits), the logarithms,
exponentials and log-gammas value by value with :mod:`math` as there (numpy's own may differ in the last
bit).  Degrees of freedom outside [4, 1e7], levels not above 1/2, and any row whose steps leave the plain
path are asked of :func:`~abstat.stats.distributions.stdtrit` itself.
"""

from __future__ import annotations

import math

import numpy as np

from abstat.stats.distributions import _EPS, _MAX_TERMS, _TINY, ndtri, stdtr, stdtrit


def stdtrit_rows(dfs: list[float], q: float) -> list[float]:
    """``[stdtrit(df, q) for df in dfs]``, the same floats (each distinct ``df`` computed once)."""
    distinct = list(dict.fromkeys(dfs))
    plain = [df for df in distinct if _plain(df, q)]
    # there stdtrit(df, q) is -stdtrit(df, 1 - q): the lower tail's Newton steps from the expansion
    found = dict(zip(plain, _newton_rows(plain, 1.0 - q), strict=True))
    value = {df: _negated_or_asked(found.get(df), df, q) for df in distinct}
    return list(map(value.__getitem__, dfs))


def _plain(df: float, q: float) -> bool:
    """stdtrit takes its Newton steps from the expansion on ``1 - q`` at this ``df``."""
    return 0.5 < q < 1.0 and 1.0 - q < 0.5 and 4.0 <= df <= 1e7


def _negated_or_asked(t: float | None, df: float, q: float) -> float:
    return stdtrit(df, q) if t is None else -t


def _newton_rows(dfs: list[float], p: float) -> list[float | None]:
    """``_newton_from_expansion(df, p)`` for each ``df`` (4 <= df <= 1e7, 0 < p < 1/2): its value, or None
    where it gives None or a step leaves the plain path (then stdtrit decides)."""
    z = ndtri(p)
    ts = [_start(df, z) for df in dfs]
    norms, fronts = list(map(_log_norm, dfs)), list(map(_front, dfs))
    out: list[float | None] = [None] * len(dfs)
    rows = list(range(len(dfs)))
    for _ in range(6):
        steps = _steps(p, *_pick(rows, dfs, ts, norms, fronts))
        rows = [i for i, step in zip(rows, steps, strict=True) if _stepped(i, step, ts, out)]
    return out


def _start(df: float, z: float) -> float:
    """The Cornish-Fisher expansion in 1/df (as ``_newton_from_expansion`` writes it)."""
    z2 = z * z
    return (
        z
        + (z2 + 1) * z / (4 * df)
        + ((5 * z2 + 16) * z2 + 3) * z / (96 * df * df)
        + (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / (384 * df**3)
        + ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / (92160 * df**4)
    )


def _log_norm(df: float) -> float:
    """The logarithm of the t density's constant (``_t_density``'s ``log_norm``)."""
    return math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)


def _front(df: float) -> float:
    """``betainc(df / 2, 0.5, x)``'s log-gamma terms, ``lgamma(a + b) - lgamma(a) - lgamma(b)``."""
    return math.lgamma(df / 2.0 + 0.5) - math.lgamma(df / 2.0) - math.lgamma(0.5)


def _pick(rows: list[int], *columns: list[float]) -> list[list[float]]:
    return [[column[i] for i in rows] for column in columns]


def _stepped(i: int, step: float | None, ts: list[float], out: list[float | None]) -> bool:
    """Row ``i``'s Newton step taken as ``_newton_from_expansion`` takes it: True while it goes on (its
    value in ``out`` once the step is small; None left where the steps stop)."""
    if step is None:
        return False
    ts[i] -= step
    if not ts[i] < 0:
        return False
    if abs(step) <= 1e-13 * max(1.0, abs(ts[i])):
        out[i] = ts[i]
        return False
    return True


def _steps(p: float, dfs: list[float], ts: list[float], norms: list[float], fronts: list[float]) -> list[float | None]:
    """One Newton step ``(stdtr(df, t) - p) / density`` for each row (None where ``_newton_from_expansion``
    stops or the incomplete beta function is not its continued fraction)."""
    densities = list(map(_density, dfs, ts, norms))
    xs = list(map(_x, dfs, ts))
    kept = [j for j, (d, x) in enumerate(zip(densities, xs, strict=True)) if d > 0 and 0.0 < x < 1.0]
    out: list[float | None] = [None] * len(dfs)
    for j, beta in zip(kept, _half_betainc(*_pick(kept, dfs, fronts, xs)), strict=True):
        out[j] = (_cdf(beta, ts[j]) - p) / densities[j]
    return out


def _density(df: float, t: float, norm: float) -> float:
    """``_t_density(df, t)`` from its constant ``norm`` (:func:`_log_norm`)."""
    return math.exp(norm - (df + 1.0) / 2.0 * math.log1p(t * t / df))


def _x(df: float, t: float) -> float:
    """Where stdtr asks the incomplete beta function: ``df / (df + t^2)``."""
    return df / (df + t * t)


def _cdf(beta: float, t: float) -> float:
    """stdtr from ``betainc(df / 2, 0.5, df / (df + t^2))``."""
    tail = 0.5 * beta
    return 1.0 - tail if t > 0 else tail


def stdtr_rows(dfs: list[float], ts: list[float]) -> list[float]:
    """``[stdtr(df, t) for df, t in zip(dfs, ts)]``, the same floats: the continued fractions together."""
    xs = list(map(_x_or_nan, dfs, ts))
    out = [math.nan if 0.0 < x < 1.0 else stdtr(df, t) for df, t, x in zip(dfs, ts, xs, strict=True)]
    kept = [i for i, x in enumerate(xs) if 0.0 < x < 1.0]
    picked, chosen = _pick(kept, dfs, ts)
    for i, t, beta in zip(
        kept, chosen, _half_betainc(picked, list(map(_front, picked)), *_pick(kept, xs)), strict=True
    ):
        out[i] = _cdf(beta, t)
    return out


def _x_or_nan(df: float, t: float) -> float:
    """:func:`_x` where stdtr would ask the incomplete beta function, else NaN."""
    return _x(df, t) if 0.0 < df <= 1e7 and math.isfinite(t) else math.nan


def _half_betainc(dfs: list[float], fronts: list[float], xs: list[float]) -> list[float]:
    """``betainc(df / 2, 0.5, x)`` for each row (``0 < x < 1``; ``fronts``: :func:`_front`)."""
    if not dfs:
        return []
    parts = list(map(_fraction_part, dfs, fronts, xs))
    columns = zip(*(args for args, _ in parts), strict=True)
    fractions = _beta_fractions(*map(np.array, columns)).tolist()
    return list(map(_scaled, parts, fractions))


Part = tuple[tuple[float, float, float], tuple[float, float, bool]]


def _fraction_part(df: float, front: float, x: float) -> Part:
    """``betainc(df / 2, 0.5, x)``'s continued fraction's arguments, and what makes it the value:
    ``exp(log_front)``, the divisor, whether it is the complement's."""
    a, b = df / 2.0, 0.5
    scale = math.exp(front + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return (a, b, x), (scale, a, False)
    return (b, a, 1.0 - x), (scale, b, True)


def _scaled(part: Part, fraction: float) -> float:
    scale, divisor, complement = part[1]
    value = scale * fraction / divisor
    return 1.0 - value if complement else value


def _beta_fractions(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``_beta_fraction(a[i], b[i], x[i])`` for every ``i``: modified Lentz, each row stopping at its own term."""
    out = np.empty_like(x)
    index = np.arange(x.size)
    c = np.ones_like(x)
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / _guarded(d)
    h = d
    both = a + b
    for m in range(1, _MAX_TERMS):
        top = a + 2.0 * m
        odd = m * (b - m) * x / ((top - 1.0) * top)
        even = -(a + m) * (both + m) * x / (top * (top + 1.0))
        d = 1.0 / _guarded(1.0 + odd * d)
        c = _guarded(1.0 + odd / c)
        h = h * (c * d)
        d = 1.0 / _guarded(1.0 + even * d)
        c = _guarded(1.0 + even / c)
        step = c * d
        h = h * step
        done = np.abs(step - 1.0) < _EPS
        if done.any():
            out[index[done]] = h[done]
            going = ~done
            if not going.any():
                return out
            a, b, x, both, c, d, h = (v[going] for v in (a, b, x, both, c, d, h))
            index = index[going]
    out[index] = h
    return out


def _guarded(v: np.ndarray) -> np.ndarray:
    """``v`` where its size is above the tiny bound, else the bound (Lentz's guard against zero)."""
    return np.where(np.abs(v) > _TINY, v, _TINY)
