"""``hodges_lehmann._small``'s interval search gives the results of the implementation before the wave-15
speed work, bit for bit: ``tests/data/stats/hl_small_bits.json`` holds, for 60 grid, normal and tied inputs
of 3 to 50 values a side, that implementation's outputs (written by ``python tests/stats/test_hl_small_bits.py
--write`` with the old ``src`` first on ``PYTHONPATH``): ``_small``'s estimate and ends under Student's t
(``fixed`` None), three fixed critical values (one that accepts every shift) and three variance inflations
(about 100x, as serial correlation's factors at 15 values a side, makes the search walk nearly every gap),
and ``hodges_lehmann``'s estimate, ends and p-value, each as ``float.hex`` (``hodges_lehmann``'s of the 13
untied normal cases with drawn arrangements rewritten in session 21 for their draws' weighting to the
exact law of the rank sum, ``abstat.stats.permutation_strata``, and the 15 v 15 ones' interval for its
reference, the sizes' law; ``_small``'s unchanged).  The batched statistics the walk uses are checked
against ``bm_statistic``'s (equal dataclasses: bit for bit), and the intervals against a
brute-force inversion written out here: Brunner-Munzel's test at one shift inside every gap between the sorted
pairwise differences, and the run of accepted gaps about the estimate."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from abstat.stats import hodges_lehmann as hl
from abstat.stats.brunner_munzel import bm_statistic, spread_ties
from abstat.stats.distributions import t_quantile

DATA = Path(__file__).resolve().parents[1] / "data" / "stats" / "hl_small_bits.json"
KINDS = ("grid", "normal", "tied")
SIZES = ((15, 15), (20, 20), (8, 6), (10, 25), (50, 50), (30, 12), (5, 40), (3, 3), (16, 16), (3, 9))
SETTINGS = (  # (fixed critical |T| or None for Student's t, inflate)
    (None, (1.0, 1.0)),
    (None, (4.0, 4.0)),
    (2.1, (105.8, 105.8)),  # (as serial correlation's factors at 15 a side: the search walks nearly every gap)
    (2.1, (1.0, 1.0)),
    (2.6, (1.3, 1.1)),
    (math.inf, (1.0, 1.0)),
)


def sample(kind: str, n: int, shift: float, rng: np.random.Generator) -> np.ndarray:
    """Log cycle counts on a grid of 20 with a few interrupts, untied normals, or small integers (few levels)."""
    if kind == "grid":
        v = 20.0 * np.round((450.0 + shift * 20.0 + rng.normal(0.0, 15.0, n)) / 20.0)
        return np.log(v + 2000.0 * (rng.random(n) < 0.05))
    if kind == "normal":
        return 100.0 + shift + rng.normal(0.0, 1.0, n)
    return 10.0 + np.round(rng.normal(shift, 1.0, n))


def cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(20261207)
    out = []
    for i in range(60):
        kind, (n1, n2) = KINDS[i % 3], SIZES[(i // 3) % len(SIZES)]
        shift = (0.0, 0.4, 1.5)[(i // 2) % 3]
        out.append((kind, sample(kind, n1, 0.0, rng), sample(kind, n2, shift, rng)))
    return out


def _hex(values) -> list[str]:
    return [float(v).hex() for v in values]


def outputs(x: np.ndarray, y: np.ndarray) -> dict[str, list[list[str]]]:
    sx, sy = spread_ties(np.sort(x)), spread_ties(np.sort(y))
    small = [_hex(hl._small(sx, sy, 0.95, inflate, fixed)) for fixed, inflate in SETTINGS]
    small.append(_hex(hl._small(sx, sy, 0.8, (1.0, 1.0), None)))
    h = hl.hodges_lehmann(x, y, 0.95, seed=1)
    return {"small": small, "hl": [_hex((h.estimate, h.low, h.high, h.p_value))]}


@pytest.fixture(autouse=True)
def _cells_unlimited(monkeypatch):
    """The old implementation spread every tied level over its cell: the machinery is compared with the
    cell limit of wave 19 off (its effect: tests/stats/test_tie_cells.py)."""
    monkeypatch.setattr("abstat.stats.tie_cells.STEPS", math.inf)


def _stored() -> list[dict[str, list[list[str]]]]:
    return json.loads(DATA.read_text())


@pytest.mark.parametrize("index", range(60))
def test_the_results_are_the_old_implementation_s_bit_for_bit(index):
    kind, x, y = cases()[index]
    assert outputs(x, y) == _stored()[index], kind


def test_the_stored_cases_cover_open_ends_narrow_and_wide_intervals():
    ends = [[float.fromhex(v) for v in row] for case in _stored() for row in case["small"]]
    assert len(ends) == 420
    assert sum(math.isinf(e[1]) or math.isinf(e[2]) for e in ends) >= 60  # every shift accepted
    assert sum(e[1] < e[0] < e[2] for e in ends) >= 200  # finite intervals about the estimate
    assert sum(e[1] > 0 or e[2] < 0 for e in ends) >= 30  # intervals that exclude 0


def brute_force(x: np.ndarray, y: np.ndarray, fixed: float | None, inflate) -> tuple[float, float, float]:
    """Every gap between distinct pairwise differences tested at its midpoint (beyond the ends: one
    difference's width further out); the interval is the run of accepted gaps holding the estimate."""
    sx, sy = spread_ties(np.sort(x)), spread_ties(np.sort(y))
    d = np.sort(np.subtract.outer(sy.values, sx.values).ravel())
    estimate = float(np.median(d))
    u = np.unique(d)
    ends = [u[0] - 1.0 - abs(u[0])], [u[-1] + 1.0 + abs(u[-1])]
    points = np.concatenate((ends[0], (u[:-1] + u[1:]) / 2.0, ends[1]))
    accepted = []
    for point in points:
        s = bm_statistic(sx, sy, float(point), inflate)
        q = t_quantile(s.df, 0.975) if fixed is None else fixed
        accepted.append(abs(s.p_hat - 0.5) <= q * s.se)
    centre = int(np.searchsorted(u, estimate, side="right"))  # the estimate's gap (points[centre])
    lo = hi = centre
    while lo > 0 and accepted[lo - 1]:
        lo -= 1
    while hi < len(points) - 1 and accepted[hi + 1]:
        hi += 1
    low = -math.inf if lo == 0 else float(u[lo - 1])
    high = math.inf if hi == len(points) - 1 else float(u[hi])
    return estimate, min(low, estimate), max(high, estimate)


@pytest.mark.parametrize(
    ("kind", "n1", "n2", "fixed", "inflate"),
    [
        ("normal", 12, 15, None, (1.0, 1.0)),
        ("normal", 15, 15, None, (4.0, 4.0)),
        ("grid", 20, 20, 2.1, (1.0, 1.0)),
        ("tied", 9, 14, None, (1.0, 1.0)),
        ("tied", 30, 25, 2.6, (1.3, 1.1)),
        ("grid", 6, 40, None, (2.0, 1.0)),
    ],
)
def test_the_interval_is_the_brute_force_inversion(kind, n1, n2, fixed, inflate):
    rng = np.random.default_rng(n1 * 100 + n2)
    x, y = sample(kind, n1, 0.0, rng), sample(kind, n2, 0.7, rng)
    got = hl._small(spread_ties(np.sort(x)), spread_ties(np.sort(y)), 0.95, inflate, fixed)
    assert got == brute_force(x, y, fixed, inflate)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("n1", "n2"), [(1, 4), (2, 2), (7, 30), (50, 48)])
def test_the_batched_statistics_are_bm_statistic_s_bit_for_bit(kind, n1, n2):
    from abstat.stats.hl_gaps import statistics  # (not in the old tree, which writes the stored outputs)

    rng = np.random.default_rng(n1 + 7 * n2)
    sx, sy = (spread_ties(np.sort(sample(kind, n, 0.3, rng))) for n in (n1, n2))
    d = np.subtract.outer(sy.values, sx.values).ravel()
    shifts = np.concatenate((d[:20], rng.normal(np.median(d), 2 * d.std() + 1e-3, 20), [d.min() - 1, d.max() + 1]))
    for inflate in ((1.0, 1.0), (3.7, 105.8)):
        batched = statistics(sx, sy, shifts, inflate)
        assert batched == [bm_statistic(sx, sy, float(v), inflate) for v in shifts]
    assert len({s.p_hat for s in batched}) >= 3  # (the shifts fall in different gaps)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    DATA.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.dumps(outputs(x, y), separators=(",", ":")) for _, x, y in cases()]
    DATA.write_text("[\n" + ",\n".join(rows) + "\n]\n")
