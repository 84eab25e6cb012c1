"""A permutation reference with a small side against a large one stays bounded (attack16, session 13: 50 values
against 10^5 tied integers took 4.8 GB and 40 s CPU, against 10^6 16.3 GB; against 10^6 untied floats 8.9 GB).
The drawn subsets no longer need a ``draws x total`` mask, the statistics of tied data with more levels than
values on the small side are summed per value rather than per level, and the tables are counted only until
they are too many: the same bits as the dense code (compared here), in memory of the small side's size."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import numpy as np
import pytest
from abstat.stats import permutation, permutation_moments
from abstat.stats.permutation_tables import TABLES_MAX, count_tables
from support import paths


def _draw(rng: np.random.Generator, trial: int) -> tuple[np.ndarray, np.ndarray]:
    m, n, levels = int(rng.integers(2, 30)), int(rng.integers(2, 300)), int(rng.integers(2, 80))
    return rng.integers(0, levels, m).astype(float), rng.integers(0, levels, n).astype(float) + (trial % 3) * 0.5


def test_per_value_moments_are_the_per_level_moments_bit_for_bit():
    rng = np.random.default_rng(20261206)
    compared = 0
    for trial in range(400):
        x, y = _draw(rng, trial)
        pooled = permutation.pooled_levels(x, y)
        if pooled.count.size == pooled.total or x.size >= pooled.total:
            continue
        positions = permutation.random_subsets(pooled.total, x.size, 64, trial)
        dense = permutation_moments.dense_moments(pooled, positions.copy())
        sparse = permutation_moments.sparse_moments(pooled, positions)
        for a, b in zip(dense, sparse, strict=True):
            assert a.tobytes() == b.tobytes(), (trial, x.tolist(), y.tolist())
        compared += 1
    assert compared > 300


@pytest.mark.parametrize("total,m,draws", [(60, 50, 300), (1000, 50, 500), (5000, 3, 2000), (200, 1, 50)])
def test_searched_subsets_are_the_masked_ones(monkeypatch, total, m, draws):
    masked = permutation.random_subsets(total, m, draws, 3)
    monkeypatch.setattr(permutation, "MASK_MAX", 0)
    searched = permutation.random_subsets(total, m, draws, 3)
    assert np.array_equal(masked, searched)
    assert (np.diff(searched, axis=1) > 0).all() and searched.min() >= 0 and searched.max() < total


def test_tables_are_counted_only_until_they_are_too_many():
    counts = np.ones(100_000, dtype=np.int64)
    assert count_tables(counts, 50) == TABLES_MAX + 1  # C(10^5, 50): stops after a few hundred levels
    exact = np.array([3, 1, 4, 1, 5], dtype=np.int64)  # brute force: tables with 0 <= a_k <= c_k, sum 6
    grid = np.stack(np.meshgrid(*[np.arange(c + 1) for c in exact], indexing="ij"), -1).reshape(-1, exact.size)
    assert count_tables(exact, 6) == int((grid.sum(axis=1) == 6).sum())


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_fifty_against_two_hundred_thousand_in_bounded_memory(tmp_path, tied):
    rng = np.random.default_rng(7)
    small, large = tmp_path / "small", tmp_path / "large"
    if tied:
        np.savetxt(small, rng.integers(1000, 300_000, 50), fmt="%d")
        np.savetxt(large, rng.integers(1000, 300_000, 200_000), fmt="%d")
    else:
        np.savetxt(small, rng.uniform(1000, 300_000, 50))
        np.savetxt(large, rng.uniform(1000, 300_000, 200_000))
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "compare", str(small), str(large)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": paths.SRC},
        preexec_fn=_limit,  # noqa: PLW1509 -- a memory limit, set before exec (main's code needs 8 GB here)
    )
    assert done.returncode == 0, done.stderr
    assert "Hodges-Lehmann" in done.stdout and "[" in done.stdout.splitlines()[1]
