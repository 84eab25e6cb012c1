"""The small-n power model judges each simulated data set as ``abstat compare`` does, serial pre-test included."""

from __future__ import annotations

import numpy as np

import abstat
from abstat.stats.permutation_power import SmallPower


def test_the_simulated_power_calls_what_compare_calls_on_the_same_data_sets() -> None:
    # attack22 A5: compare pre-tests runs for lag-1 serial correlation and, where it fires (by chance on
    # i.i.d. data too), widens its interval; the model ignored it and promised 82% where compare gave 74%.
    rng = np.random.default_rng(11)
    pilot = rng.normal(0.0, 0.01, 400)
    model = SmallPower(pilot, pilot, simulations=150)
    n, shift = 20, 0.009
    share = model.power(shift, n, n, 0.05)
    xs, ys = model._draws(n, n)
    calls = []
    for x, y in zip(xs, ys + shift, strict=True):
        c = abstat.compare(list(np.exp(x)), list(np.exp(y)))
        calls.append(c.significant)
    assert abs(float(np.mean(calls)) - share) <= 0.02
    widened = [
        any(w.code == "autocorrelation" for w in abstat.compare(list(np.exp(x)), list(np.exp(y))).notes)
        for x, y in zip(xs, ys + shift, strict=True)
    ]
    assert any(widened)


def test_the_smoothed_bootstraps_quartiles_are_numpys() -> None:
    from abstat.stats.permutation_power import _quartiles

    rng = np.random.default_rng(3)
    for n in (2, 3, 4, 5, 7, 10, 33, 100, 401):
        for pilot in (rng.normal(0.0, 1.0, n), np.round(rng.lognormal(0.0, 1.0, n), 1)):
            q75, q25 = np.quantile(pilot, [0.75, 0.25])
            assert _quartiles(pilot) == (q75, q25)
