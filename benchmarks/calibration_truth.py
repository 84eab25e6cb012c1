"""Populations for benchmarks/calibration.py: samplers and the true value of every estimand.

A population is a mixture of components (normal, log-normal, Student t,
Poisson, interrupt-slowed normal), optionally put on a grid (``step * round(x /
step)``, as TSC counts are).  The true values are computed from the
population, never from simulated samples:

- ``mean_ratio``: the ratio of the means (quadrature);
- ``geomean_ratio``: ``exp(E log Y - E log X)`` (quadrature on the raw,
  possibly discrete, values);
- ``median_ratio``: the ratio of the population medians (root finding; on a
  grid, the grid value where the distribution function crosses 1/2);
- ``hl_ratio``: ``exp(d)`` with ``P(log Y' - log X' > d) = 1/2`` (root
  finding), where ``X'`` is ``X`` with each grid value spread uniformly over
  its cell, as the default comparison reads tied values.

Everything is evaluated on a fine grid of the distribution function
(``POINTS`` cells between the 1e-9 and 1 - 1e-9 quantiles), accurate to about
1e-6 relative, far below the Monte Carlo error of any row.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

POINTS = 40_000


@dataclass(frozen=True)
class Component:
    weight: float
    dist: object  # a frozen scipy.stats continuous distribution
    slowdown: tuple[float, float] | None = None  # x * U(lo, hi) (interrupts)


@dataclass
class Population:
    name: str
    components: list[Component]
    step: float | None = None  # values rounded to this grid
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # --- sampling -----------------------------------------------------------------
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        weights = np.array([c.weight for c in self.components])
        which = rng.choice(len(self.components), size=n, p=weights / weights.sum())
        out = np.empty(n)
        for i, c in enumerate(self.components):
            hit = which == i
            k = int(hit.sum())
            if not k:
                continue
            x = c.dist.rvs(size=k, random_state=rng)
            if c.slowdown is not None:
                x = x * rng.uniform(*c.slowdown, k)
            out[hit] = x
        if self.step:
            out = self.step * np.round(out / self.step)
        return out

    def scaled(self, factor: float, name: str | None = None) -> "Population":
        """The same population times ``factor`` (a grid scales with it)."""
        comps = [Component(c.weight, _scale(c.dist, factor), c.slowdown) for c in self.components]
        return Population(name or f"{self.name} x {factor:g}", comps, self.step * factor if self.step else None)

    # --- the continuous (pre-rounding) distribution ---------------------------------
    def _raw_cdf(self, t: np.ndarray) -> np.ndarray:
        total = sum(c.weight for c in self.components)
        out = np.zeros_like(t, dtype=float)
        for c in self.components:
            if c.slowdown is None:
                out += c.weight * c.dist.cdf(t)
            else:  # P(X U <= t), U uniform on [lo, hi]: average over U
                us = np.linspace(*c.slowdown, 41)
                out += c.weight * np.mean([c.dist.cdf(t / u) for u in us], axis=0)
        return out / total

    def _support(self) -> tuple[float, float]:
        lows, highs = [], []
        for c in self.components:
            lo, hi = c.dist.ppf(1e-10), c.dist.ppf(1 - 1e-10)
            if c.slowdown is not None:
                lo, hi = lo * c.slowdown[0], hi * c.slowdown[1]
            lows.append(lo)
            highs.append(hi)
        lo, hi = min(lows), max(highs)
        if self.step:
            lo, hi = self.step * math.floor(lo / self.step - 1), self.step * math.ceil(hi / self.step + 1)
        return lo, hi

    # --- the distribution of the measured values ------------------------------------
    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        """Grid populations: the levels and their probabilities."""
        lo, hi = self._support()
        levels = np.arange(lo, hi + self.step / 2, self.step)
        edges = np.r_[levels - self.step / 2, levels[-1] + self.step / 2]
        probs = np.diff(self._raw_cdf(edges))
        keep = probs > 1e-15
        return levels[keep], probs[keep] / probs[keep].sum()

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(edges, cdf at the edges) of the distribution the statistics see: the
        continuous one, or on a grid each level spread over its cell."""
        if "cells" in self._cache:
            return self._cache["cells"]
        if self.step:  # each level's mass spread evenly over its cell, in SUB pieces per cell
            levels, probs = self.atoms()
            sub = 200
            frac = np.arange(sub) / sub
            edges = np.r_[
                (levels[:, None] - self.step / 2 + self.step * frac[None, :]).ravel(), levels[-1] + self.step / 2
            ]
            below = np.r_[0.0, np.cumsum(probs)[:-1]]
            cdf = np.r_[(below[:, None] + probs[:, None] * frac[None, :]).ravel(), 1.0]
        else:
            lo, hi = self._support()
            qs = np.linspace(0, 1, 2001)
            edges = np.unique(np.r_[np.linspace(lo, hi, POINTS), self._quantiles(qs)])
            cdf = self._raw_cdf(edges)
        self._cache["cells"] = (edges, cdf)
        return edges, cdf

    def _quantiles(self, qs: np.ndarray) -> np.ndarray:
        lo, hi = self._support()
        grid = np.linspace(lo, hi, POINTS)
        cdf = self._raw_cdf(grid)
        return np.interp(np.clip(qs, 1e-9, 1 - 1e-9), cdf, grid)

    def expect(self, g: Callable[[np.ndarray], np.ndarray]) -> float:
        """E g(X) of the measured values."""
        if self.step:
            levels, probs = self.atoms()
            return float(np.sum(probs * g(levels)))
        edges, cdf = self.cells()
        mid = (edges[1:] + edges[:-1]) / 2
        return float(np.sum(np.diff(cdf) * g(mid)))

    def median(self) -> float:
        if self.step:
            levels, probs = self.atoms()
            c = np.cumsum(probs)
            i = int(np.searchsorted(c, 0.5))
            if abs(c[i] - 0.5) < 1e-12:  # the CDF sits at 1/2 on a level: midway to the next
                return float((levels[i] + levels[i + 1]) / 2)
            return float(levels[i])
        lo, hi = self._support()
        return float(optimize.brentq(lambda t: self._raw_cdf(np.array([t]))[0] - 0.5, lo, hi, xtol=1e-12))

    def spread_cdf(self, t: np.ndarray) -> np.ndarray:
        edges, cdf = self.cells()
        return np.interp(t, edges, cdf, left=0.0, right=1.0)


def _scale(dist, factor: float):
    """A frozen scipy distribution scaled by ``factor``."""
    kw = dict(dist.kwds)
    k = dist.dist.numargs
    shapes, rest = list(dist.args[:k]), list(dist.args[k:])
    loc = kw.pop("loc", rest[0] if rest else 0.0)
    scale = kw.pop("scale", rest[1] if len(rest) > 1 else 1.0)
    return dist.dist(*shapes, loc=loc * factor, scale=scale * factor, **kw)


def truth(estimand: str, x: Population, y: Population) -> float:
    """The true change of ``estimand`` (percent) of candidate ``y`` against baseline ``x``."""
    if estimand == "mean_ratio":
        return 100 * (y.expect(lambda v: v) / x.expect(lambda v: v) - 1)
    if estimand == "geomean_ratio":
        return 100 * math.expm1(y.expect(np.log) - x.expect(np.log))
    if estimand == "median_ratio":
        return 100 * (y.median() / x.median() - 1)
    if estimand == "hl_ratio":
        ex, cx = x.cells()
        mass = np.diff(cx)
        mid = (ex[1:] + ex[:-1]) / 2
        keep = mass > 0
        mass, mid = mass[keep], mid[keep]

        def above(d: float) -> float:  # P(log Y' - log X' > d) - 1/2
            return float(np.sum(mass * (1 - y.spread_cdf(mid * math.exp(d))))) - 0.5

        return 100 * math.expm1(optimize.brentq(above, -3, 3, xtol=1e-12))
    raise ValueError(estimand)


# ---------------------------------------------------------------------------- shapes


def normal(mu: float, sd: float, w: float = 1.0) -> Component:
    return Component(w, stats.norm(mu, sd))


def population(name: str, *components: Component, step: float | None = None) -> Population:
    return Population(name, list(components), step)
