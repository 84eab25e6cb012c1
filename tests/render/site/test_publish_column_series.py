"""publish's history series as arrays (``render.site.series.column_series``): the points
``history.series.build_series`` makes of the same sets (revisions measured again, runs, times on some
sets only, labels, empty runs, sets without a revision), the detector's input to the bit, and
``ColumnPoints.centres`` equal to each ``Point.centre``."""

from __future__ import annotations

import dataclasses
import math
import random
from types import SimpleNamespace

import numpy as np
import pytest

from abstat.history.centres import from_points
from abstat.history.columnar import ColumnPoints
from abstat.history.load import INVOCATION_ORDER
from abstat.history.series import Point, build_series
from abstat.render.site.series import column_series


def _sets(rng: random.Random, count: int) -> list[SimpleNamespace]:
    sets = []
    revs = [f"r{i:03d}" for i in range(rng.randint(1, 30))]
    for _ in range(count):
        labels = {"experiment": "e", "variant": rng.choice("ab"), "metric": rng.choice(["wall", "user"])}
        if rng.random() < 0.9:
            labels["rev"] = rng.choice(revs)
        if rng.random() < 0.6:
            labels["commit_time"] = rng.choice(["", "x", str(rng.randint(0, 50)), "1e3"])
        if rng.random() < 0.3:
            labels["board"] = rng.choice("xy")
        runs = [[rng.choice([rng.gauss(10, 1), 10.0, -0.0, 0.0]) for _ in range(rng.randint(0, 3))] for _ in range(3)]
        invocations = [rng.randint(1, 40) for _ in range(rng.randint(0, 2))]
        unit = {"wall": "s", "user": "s"}[labels["metric"]]
        sets.append(SimpleNamespace(labels=labels, runs=runs[: rng.randint(1, 3)], unit=unit, invocations=invocations))
    return sets


@pytest.mark.parametrize("seed", range(40))
def test_column_series_are_build_series(seed):
    rng = random.Random(seed)
    sets = _sets(rng, rng.randint(1, 120))
    first_seen = INVOCATION_ORDER if seed % 2 else None
    expected, skipped = build_series(sets, first_seen=first_seen)
    made = column_series(sets, first_seen)
    assert made is not None
    series, made_skipped = made
    assert made_skipped == skipped
    assert [(s.labels, s.metric, s.unit) for s in series] == [(s.labels, s.metric, s.unit) for s in expected]
    for got, want in zip(series, expected, strict=True):
        assert isinstance(got.points, ColumnPoints)
        assert [dataclasses.asdict(p) for p in got.points] == [dataclasses.asdict(p) for p in want.points]
        reference, measured = from_points(want.points), got.points.measured()
        assert reference is not None
        for name in ("values", "units", "averaged", "ends"):
            a, b = getattr(reference, name), getattr(measured, name)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
        assert np.array_equal(np.array(got.points.centres()), np.array([p.centre for p in want.points]), equal_nan=True)


def test_what_the_arrays_do_not_hold_goes_to_build_series():
    base = {"experiment": "e", "variant": "a", "metric": "wall", "rev": "r1"}
    one = SimpleNamespace(labels=base, runs=[[1.0]], unit="s", invocations=[1])
    assert column_series([one], None) is not None
    for labels, runs in [
        ({**base, "role": "good"}, [[1.0]]),
        ({**base, "commit_time": "nan"}, [[1.0]]),
        (base, [[math.inf]]),
    ]:
        assert column_series([SimpleNamespace(labels=labels, runs=runs, unit="s", invocations=[1])], None) is None


@pytest.mark.parametrize("seed", range(20))
def test_centres_are_each_points(seed):
    rng = random.Random(seed)
    choices = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 1.7e308, -1.7e308, 5e-324, 2.5, math.nan]
    samples = [
        [rng.choice(choices) if rng.random() < 0.5 else rng.gauss(0, 3) for _ in range(rng.randint(1, 6))]
        for _ in range(50)
    ]
    sizes = np.array([len(s) for s in samples])
    points = ColumnPoints(
        [f"r{i}" for i in range(len(samples))],
        np.full(len(samples), np.nan),
        np.arange(len(samples)),
        np.array([v for s in samples for v in s]),
        np.cumsum(sizes),
        np.arange(1, len(samples) + 1),
    )
    expected = [Point("r", s).centre for s in samples]
    got = points.centres()
    assert [math.copysign(1, c) if c == 0 else c for c in got if c == c] == [
        math.copysign(1, c) if c == 0 else c for c in expected if c == c
    ]
    assert [c != c for c in got] == [c != c for c in expected]
