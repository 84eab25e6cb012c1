"""The permutation code's results are those of the implementation before the wave-15 speed work, bit for
bit: ``tests/data/stats/permutation_bits.json`` holds, for 60 grid, normal and tied inputs, the outputs of
that implementation (written by ``python tests/stats/test_permutation_bits.py --write`` with the old
``src`` first on ``PYTHONPATH``): the SHA-256 of the Brunner-Munzel statistics of 10,000 drawn
arrangements (the observed samples' and the samples aligned at the estimate), the test's statistic and
p-value, the interval's critical value, the Hodges-Lehmann estimate, ends and p-value, and
``abstat.compare``'s verdict, interval and p-value, each as ``float.hex``.  The 16 untied normal cases
with drawn arrangements were rewritten in session 21 (issue 34) for the one intended change, their draws
weighted to the exact law of the rank sum (``abstat.stats.permutation_strata``): their statistics' digests
are unchanged, their p-values, critical values and ends moved, no verdict changed.  The statistics themselves are
checked against scipy's Brunner-Munzel statistic (an independent reference) on drawn arrangements."""

from __future__ import annotations

import hashlib
import math
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import abstat
from abstat.stats import permutation as perm
from abstat.stats.brunner_munzel import spread_ties
from abstat.stats.hodges_lehmann import _estimate, hodges_lehmann

DATA = Path(__file__).resolve().parents[1] / "data" / "stats" / "permutation_bits.json"
KINDS = ("grid", "normal", "tied")
SIZES = ((40, 40), (20, 20), (8, 6), (10, 25), (50, 50), (30, 12), (5, 40), (45, 50), (16, 16), (3, 9))


def sample(kind: str, n: int, shift: float, rng: np.random.Generator) -> np.ndarray:
    """Cycle counts on a grid of 20 with a few interrupts, untied normals, or small integers (few levels)."""
    if kind == "grid":
        v = 20.0 * np.round((450.0 + shift * 20.0 + rng.normal(0.0, 15.0, n)) / 20.0)
        return v + 2000.0 * (rng.random(n) < 0.05)
    if kind == "normal":
        return 100.0 + shift + rng.normal(0.0, 1.0, n)
    return 10.0 + np.round(rng.normal(shift, 1.0, n))


def cases() -> list[tuple[str, np.ndarray, np.ndarray, int]]:
    rng = np.random.default_rng(20261206)
    out = []
    for i in range(60):
        kind, (n1, n2) = KINDS[i % 3], SIZES[(i // 3) % len(SIZES)]
        shift = (0.0, 0.4, 1.0)[(i // 2) % 3]
        out.append((kind, sample(kind, n1, 0.0, rng), sample(kind, n2, shift, rng), i % 3))
    return out


def _hex(v: float) -> str:
    return float(v).hex()


def _digest(x: np.ndarray, y: np.ndarray) -> str:
    m, total = min(x.size, y.size), x.size + y.size
    t = perm.statistics(perm.pooled_levels(x, y), perm.random_subsets(total, m, 10_000, 3, stream=1))
    return hashlib.sha256(np.ascontiguousarray(t, dtype=np.float64).tobytes()).hexdigest()


def outputs(x: np.ndarray, y: np.ndarray, seed: int) -> dict[str, object]:
    lx, ly = np.log(x), np.log(y)
    est = _estimate(spread_ties(np.sort(lx)), spread_ties(np.sort(ly)))
    test = perm.bm_permutation(lx, ly, 0.05, seed, (1.3, 1.1) if seed == 2 else (1.0, 1.0))
    h = hodges_lehmann(lx, ly, 0.95, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = abstat.compare(x.tolist(), y.tolist(), seed=seed)
    return {
        "observed": _digest(lx, ly),
        "aligned": _digest(lx, ly - est),
        "test": [_hex(test.statistic), _hex(test.p_value), test.exact],
        "critical": _hex(perm.interval_critical(lx, ly - est, 0.05, seed)),
        "hl": [_hex(v) for v in (h.estimate, h.low, h.high, h.p_value)],
        "compare": [bool(r.significant), _hex(r.p_value), _hex(r.delta_pct), *map(_hex, r.ci_pct)],
    }


@pytest.fixture
def _cells_unlimited(monkeypatch):
    """The old implementation spread every tied level over its cell: the machinery is compared with the
    cell limit of wave 19 off (its effect: tests/stats/test_tie_cells.py)."""
    monkeypatch.setattr("abstat.stats.tie_cells.STEPS", math.inf)


def _stored() -> list[dict[str, object]]:
    return json.loads(DATA.read_text())


@pytest.mark.parametrize("index", range(60))
@pytest.mark.usefixtures("_cells_unlimited")
def test_the_results_are_the_old_implementation_s_bit_for_bit(index):
    kind, x, y, seed = cases()[index]
    assert outputs(x, y, seed) == _stored()[index], kind


def test_the_stored_cases_cover_ties_rejections_and_both_references():
    stored = _stored()
    assert len(stored) == 60
    assert sum(bool(s["compare"][0]) for s in stored) >= 10  # significant verdicts
    assert sum(not s["compare"][0] for s in stored) >= 10
    assert any(s["test"][2] for s in stored) and not all(s["test"][2] for s in stored)  # exact and drawn


@pytest.mark.parametrize("kind", KINDS)
def test_the_statistics_are_scipy_s_brunner_munzel(kind):
    rng = np.random.default_rng(5)
    x, y = sample(kind, 12, 0.0, rng), sample(kind, 30, 0.5, rng)
    pooled = perm.pooled_levels(x, y)
    z = np.sort(np.concatenate((x, y)))
    positions = perm.random_subsets(42, 12, 300, 1)
    ours = perm.statistics(pooled, positions)
    rest = np.array([np.delete(z, row) for row in positions])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = stats.brunnermunzel(z[positions], rest, axis=1).statistic
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_drawn_subsets_are_floyd_s():
    # Floyd's algorithm written out row by row from the same uniforms
    total, m, draws = 30, 7, 200
    u = perm.uniforms(9, draws * m, 4).reshape(m, draws)
    expected = []
    for r in range(draws):
        chosen: set[int] = set()
        for col, j in enumerate(range(total - m, total)):
            t = min(int(u[col, r] * (j + 1)), j)
            chosen.add(j if t in chosen else t)
        expected.append(sorted(chosen))
    np.testing.assert_array_equal(perm.random_subsets(total, m, draws, 9, stream=4), np.array(expected))


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    DATA.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.dumps(outputs(x, y, seed)) for _, x, y, seed in cases()]
    DATA.write_text("[\n" + ",\n".join(rows) + "\n]\n")
