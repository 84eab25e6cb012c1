"""``abstat.compare`` hands :func:`abstat.comparison.centres.agree` the values its summaries kept, sorted, and
leaves out the default comparison's pseudo-medians (the medians replace them): the result must be the one
``agree`` gives reading the inputs again (its own outlier rule, its own sort), and its centres numpy's medians
of the values compared, on every kind of data (grid, ties, integers, constant, values <= 0, signed zeros,
unequal sizes) and option (``center`` auto, median, mean; ``outliers`` none, tukey, mad)."""

from __future__ import annotations

import numpy as np
import pytest

import abstat
from abstat.comparison import core
from abstat.comparison.centres import agree
from abstat.stats.outliers import classify_runs


def _draw(rng: np.random.Generator, kind: int, nx: int, ny: int) -> tuple[np.ndarray, np.ndarray]:
    if kind == 0:
        return rng.normal(1000, 10, nx), rng.normal(1003, 10, ny)
    if kind == 1:
        return rng.lognormal(0, 1, nx), rng.lognormal(0.1, 1, ny)
    if kind == 2:  # a grid of 20 (TSC cycles)
        return 20.0 * np.round(rng.normal(440, 7, nx) / 20), 20.0 * np.round(rng.normal(444, 7, ny) / 20)
    if kind == 3:  # counts
        return rng.poisson(5, nx).astype(float), rng.poisson(6, ny).astype(float)
    if kind == 4:  # values <= 0, signed zeros
        x = np.round(rng.normal(0, 1, nx))
        x[x == 0] = np.where(rng.random(int((x == 0).sum())) < 0.5, -0.0, 0.0)
        return x, rng.normal(0.3, 1, ny)
    if kind == 5:  # one side constant
        return np.full(nx, 440.0), rng.normal(441, 2, ny)
    return np.round(rng.normal(300, 2, nx)) + (rng.random(nx) < 0.05) * 200, np.round(rng.normal(301, 2, ny))


def _reread(x: np.ndarray, y: np.ndarray, **options: object) -> abstat.Comparison:
    """The comparison with ``agree`` reading ``x`` and ``y`` again (no kept values handed over)."""
    opts = {"confidence": 0.95, "center": "auto", "threshold": None, "higher_is_better": False, "seed": 0}
    opts.update({"outliers": "none", "names": ("baseline", "candidate")}, **options)
    with np.errstate(all="ignore"):
        return agree(core._compare(x, y, **opts), x, y)


@pytest.mark.parametrize("center", ["auto", "median", "mean"])
@pytest.mark.parametrize("outliers", ["none", "tukey", "mad"])
def test_kept_values_give_the_reread_comparison(center: str, outliers: str) -> None:
    rng = np.random.default_rng(["none", "tukey", "mad"].index(outliers) * 3 + ["auto", "median", "mean"].index(center))
    for draw in range(28):
        nx = int(rng.integers(3, 400))
        ny = nx if draw % 3 else int(rng.integers(3, 3000))
        x, y = _draw(rng, draw % 7, nx, ny)
        found = abstat.compare(x, y, center=center, outliers=outliers)
        assert found.to_dict() == _reread(x, y, center=center, outliers=outliers).to_dict(), (draw, nx, ny)
        if found.center_kind == "median":  # numpy's medians of the values compared (integers: the lower middle)
            for value, data in zip(found.centers, (x, y), strict=True):
                kept = np.sort(np.concatenate(classify_runs([data], outliers)[3]))
                integer = bool(np.all(kept == np.round(kept)))
                assert value == (kept[(kept.size - 1) // 2] if integer else np.median(kept)), (draw, nx, ny)


def test_default_centres_are_medians_not_pseudo_medians() -> None:
    """Skewed data, where the pseudo-median and the median differ: the default prints the medians."""
    rng = np.random.default_rng(5)
    x, y = rng.lognormal(0, 1.5, 3000), rng.lognormal(0.05, 1.5, 2000)
    found = abstat.compare(x, y)
    assert found.estimand == "hl_ratio" and found.center_kind == "median"
    assert found.centers == [float(np.median(x)), float(np.median(y))]
