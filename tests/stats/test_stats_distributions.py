"""abstat.stats.distributions against scipy.special over wide grids."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import special

from abstat.stats import distributions as d


@pytest.mark.parametrize("df", [1, 1.5, 2, 3, 5, 9.7, 30, 100, 1000, 1e5, 1e6])
def test_student_t_cdf_and_quantile(df):
    for t in (-40, -10, -5, -3, -2, -1, -0.3, 0, 0.3, 1, 2, 3, 5, 10):
        assert d.stdtr(df, t) == pytest.approx(special.stdtr(df, t), rel=1e-8, abs=1e-300)
    for p in (1e-10, 1e-4, 0.001, 0.025, 0.1, 0.5, 0.9, 0.975, 0.9995):
        assert d.stdtrit(df, p) == pytest.approx(special.stdtrit(df, p), rel=1e-8)


def test_f_survival():
    for dfn, dfd, f in itertools.product([1, 2, 7], [1, 5, 50, 1e4], [0.01, 0.5, 1, 3, 30, 1e4]):
        assert d.fdtrc(dfn, dfd, f) == pytest.approx(special.fdtrc(dfn, dfd, f), rel=1e-9, abs=1e-300)


def test_normal_cdf_and_quantile():
    for p in np.r_[np.logspace(-300, -1, 200), np.linspace(0.01, 0.99, 99), 1 - np.logspace(-15, -2, 50)]:
        assert d.ndtri(p) == pytest.approx(special.ndtri(p), rel=1e-12)
    for x in (-38, -10, -3, -1, 0, 0.5, 2, 8):
        assert d.ndtr(x) == pytest.approx(special.ndtr(x), rel=1e-13)


def test_binomial_half_cdf():
    for n in (1, 5, 50, 1999, 2001, 10**5, 10**6):
        for k in {0, n // 3, max(0, n // 2 - int(n**0.5)), n // 2, n - 1}:
            assert d.binom_half_cdf(k, n) == pytest.approx(special.bdtr(k, n, 0.5), rel=1e-8, abs=1e-300)
