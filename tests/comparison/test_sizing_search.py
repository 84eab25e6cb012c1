"""plan/noise's sample-size search starts near the noncentral-t answer (issue 42): the answer must be the
smallest size with enough power wherever the search starts, as the old search from the smallest size gave."""

from __future__ import annotations

import numpy as np

from abstat.comparison.sizing import MAX_N, _first, sizing


def test_first_finds_the_smallest_enough_size_from_any_start() -> None:
    rng = np.random.default_rng(42)
    for _ in range(2000):
        lo = int(rng.integers(1, 50))
        answer = lo + int(rng.integers(1, 10 ** int(rng.integers(1, 7))))
        start = lo + int(rng.integers(1, 3 * answer))
        calls: list[int] = []

        def enough(n: int, answer: int = answer, calls: list[int] = calls, lo: int = lo) -> bool:
            calls.append(n)
            assert n > lo
            return n >= answer

        assert _first(enough, lo, start) == answer
        assert len(calls) <= 4 * int(np.log2(abs(start - answer) + 2)) + 4  # bracketing, not a scan
    assert _first(lambda n: False, 3, 10) is None
    assert _first(lambda n: n >= MAX_N, 3, 10) == MAX_N


def test_needed_is_the_smallest_size_a_scan_finds() -> None:
    rng = np.random.default_rng(7)
    pilot = rng.normal(100.0, 2.0, 30)
    size = sizing(pilot, pilot + rng.normal(0.0, 0.1, 30))
    for pct in (1.0, 2.0, 5.0):
        got = size.needed(pct, 0.05, 0.8)
        assert got is not None and got > 2
        assert size.power(pct, got, got, 0.05) >= 0.8
        assert all(size.power(pct, n, n, 0.05) < 0.8 for n in range(2, got))
