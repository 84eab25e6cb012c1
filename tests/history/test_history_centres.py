"""Step 1 of the detector for every revision at once (abstat.history.centres) against the same numbers
computed revision by revision (segment's per-revision functions, one numpy call each): equal to the bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from abstat.history import centres, segment


def _per_revision(points):
    """segment.prepare with the per-revision path only."""
    original = centres.revision_centres
    centres.revision_centres = lambda points: None
    try:
        return segment.prepare(points)
    finally:
        centres.revision_centres = original


def _same(a: segment.Prepared, b: segment.Prepared) -> None:
    for name in ("centre", "clipped", "weight", "counts"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name  # bit for bit, signs of zero too
    for name in ("offset", "scale", "tau2", "within2", "exponent"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x == y and math.copysign(1, x) == math.copysign(1, y)) or (x != x and y != y), name


def _draw(rng: np.random.Generator, kind: str, n: int) -> list:
    """n revisions of one of several shapes: numbers, sample lists of many sizes, runs."""
    level = rng.choice([1e-3, 1.0, 250.0, 1e12, -40.0])
    points: list = []
    for i in range(n):
        size = int(rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 17, 40, 129, 300]))
        raw = level * (1 + 0.01 * rng.standard_normal(size)) + (level * 0.05 if i > n // 2 else 0.0)
        if kind == "grid":
            raw = np.round(raw / abs(level) * 20) * abs(level) / 20
        if rng.random() < 0.05:
            raw[0] = raw[0] * 30  # an outlier the winsorizing pulls in
        if kind == "numbers":
            points.append(float(raw[0]))
        elif kind == "runs":
            cut = np.unique(rng.integers(1, size + 1, 3))  # up to 4 runs, some of one sample
            runs = [part.tolist() for part in np.split(raw, cut)]
            points.append([run for run in runs if run] + ([[]] if i % 7 == 0 else []))
        elif kind == "one run":
            points.append([raw.tolist()])
        else:
            points.append(raw.tolist())
    return points


@pytest.mark.parametrize("kind", ["numbers", "samples", "grid", "runs", "one run"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_revision_at_once_equals_revision_by_revision(kind, seed):
    rng = np.random.default_rng(seed)
    points = _draw(rng, kind, 400)
    assert centres.revision_centres(points) is not None  # the vectorized path took them
    _same(segment.prepare(points), _per_revision(points))


def test_arrays_zeros_and_store_shaped_runs():
    rng = np.random.default_rng(4)
    values = rng.normal(100, 1, 300)
    _same(segment.prepare(values), _per_revision(list(values)))
    zeros = [[0.0, -0.0, 0.0], [-0.0], [0.0, 0.0, -0.0, 0.0, 1.0], [[-0.0], [0.0]], -0.0] * 20
    _same(segment.prepare(zeros), _per_revision(zeros))
    runs = [[[v] for v in rng.normal(5, 0.1, 5)] for _ in range(200)]  # a store's: 5 runs of one sample
    _same(segment.prepare(runs), _per_revision(runs))
    ints = np.arange(60) % 7
    _same(segment.prepare(ints), _per_revision(list(ints)))


def test_what_it_does_not_take_goes_revision_by_revision():
    assert centres.revision_centres([[1.0, math.nan], [2.0]] * 10) is None
    assert centres.revision_centres([[1.0], []] * 10) is None
    assert centres.revision_centres([[[1.0, 2.0], [[3.0]]]] * 10) is None
    near_max = [[1.7e308, 1.6e308], [-1.7e308, 1.0]] * 10
    _same(segment.prepare(near_max), _per_revision(near_max))


def test_series_points_read_at_once_as_their_measurements():
    from abstat.history.series import Point

    rng = np.random.default_rng(5)
    points = []
    for i in range(300):
        runs = [rng.normal(10, 1, int(rng.integers(1, 4))).tolist() for _ in range(int(rng.integers(1, 4)))]
        point = Point(f"r{i}", [v for run in runs for v in run], runs=runs if i % 3 else [])
        points.append(point)
    found = centres.from_points(points)
    assert found is not None
    _same(segment.prepare(found), _per_revision([p.measurements for p in points]))
    points[7].runs = [[1.0], []]  # an empty run: read revision by revision
    assert centres.from_points(points) is None
