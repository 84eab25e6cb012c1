"""``heavily tied/quantized data`` fires on quantized data, not on one pair
of equal values among continuous ones (the newcomer's a.txt / tie0.txt /
tie1.txt: tie1 has 98.40 twice, next to the median; tie0 has 98.41 instead)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from abstat.stats.diagnostics import heavily_tied, ties

A = [
    102.58,
    102.90,
    100.13,
    98.47,
    97.82,
    100.06,
    97.96,
    97.13,
    100.40,
    100.27,
    101.09,
    98.17,
    100.01,
    99.87,
    96.99,
    101.08,
    100.64,
    104.78,
    100.41,
    99.71,
]
TIE0 = [
    95.83,
    95.84,
    97.0,
    97.2,
    97.27,
    97.9,
    98.15,
    98.26,
    98.4,
    98.41,
    98.43,
    98.44,
    98.89,
    99.33,
    99.39,
    99.44,
    99.82,
    100.05,
    100.18,
    100.47,
]
TIE1 = TIE0[:9] + [98.4] + TIE0[10:]


def compare(tmp_path, name, values):
    (tmp_path / "a.txt").write_text("\n".join(map(str, A)) + "\n")
    (tmp_path / name).write_text("\n".join(map(str, values)) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "compare", "a.txt", name],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_one_pair_at_the_median_is_not_quantized(tmp_path):
    assert "heavily tied" not in compare(tmp_path, "tie1.txt", TIE1)
    assert "heavily tied" not in compare(tmp_path, "tie0.txt", TIE0)
    assert not heavily_tied(np.array(TIE1)) and not heavily_tied(np.array(TIE0))


def test_tsc_like_cycle_counts_on_a_20_cycle_grid_still_warn(tmp_path):
    rng = np.random.default_rng(7)
    cycles = 440 + 20 * rng.binomial(6, 0.3, size=100)  # a few levels, as rdtsc deltas on a 20-cycle grid
    assert heavily_tied(cycles.astype(float))
    message = ties("before", cycles.astype(float))[0].message
    assert "on a grid of 20" in message
    assert "heavily tied/quantized data" in compare(tmp_path, "cycles.txt", cycles.tolist())


def test_a_median_window_of_few_levels_warns_although_most_values_are_distinct():
    rng = np.random.default_rng(3)
    tails = np.r_[rng.uniform(-100, -10, 40), rng.uniform(10, 100, 40)]  # 80 distinct values
    centre = np.repeat([0.0, 1.0, 2.0, 3.0], 6)  # the median's neighbours: 4 levels, 6 each (6% each)
    values = np.r_[tails, centre]
    assert heavily_tied(values)
    assert not heavily_tied(np.r_[tails, np.linspace(-1, 4, 24)])
    assert not heavily_tied(np.arange(20, dtype=float))


def test_continuous_two_decimal_data_rarely_warn_and_coarse_grids_do():
    """Simulated: Gaussian (sd 2) rounded to 0.01 at n = 20 warned in ~24% of
    samples under the old rule (any pair); TSC-like data whose grid is half a
    standard deviation warn always from n = 20."""
    rng = np.random.default_rng(11)
    fine = np.mean([heavily_tied(np.round(rng.normal(100, 2, 20), 2)) for _ in range(400)])
    coarse = np.mean([heavily_tied(20 * np.round(rng.normal(440, 40, 20) / 20)) for _ in range(400)])
    assert fine < 0.02 and coarse == 1.0


def _heavily_tied_reference(values):
    """The rule of heavily_tied, from np.unique's counts (the reference for its one-sort form)."""
    n = values.size
    counts = np.unique(values, return_counts=True)[1]
    if counts.size < 0.3 * n or counts.max() >= max(3, 0.1 * n):
        return True
    half = int(np.ceil(np.sqrt(n)))
    low, high = max(0, (n - 1) // 2 - half), min(n, n // 2 + half + 1)
    window = np.unique(np.sort(values)[low:high], return_counts=True)[1]
    return bool(window.size <= min(5, (high - low) // 2) or window.max() > (high - low) / 2)


def test_heavily_tied_agrees_with_its_rule_from_unique_counts():
    """One sort serves the counts and the window around the median (issue 42): the same answer as the
    rule computed from np.unique, on continuous, rounded, gridded, mixed and constant data of many sizes."""
    rng = np.random.default_rng(42)
    answers = []
    for n in (3, 7, 20, 101, 1000, 5000):
        for values in (
            rng.normal(100, 5, n),
            np.round(rng.normal(100, 2, n), 1),
            20.0 * np.round(rng.normal(440, 40, n) / 20),
            np.r_[rng.normal(0, 1, n), np.full(n // 4 + 1, 0.5)][rng.permutation(n + n // 4 + 1)],
            np.r_[np.round(rng.normal(0, 3, n)), rng.normal(0, 3, n)],
            np.full(n, 7.0),
        ):
            expected = _heavily_tied_reference(values)
            assert heavily_tied(values) == expected
            answers.append(expected)
    assert any(answers) and not all(answers)  # both answers exercised
