"""A centre printed beside a comparison is the comparison's own (wave 20; stat18's review).

``hl_centre.centre`` (behind ``estimands.centre_of``) spread every tie without a limit while the comparison
(:func:`abstat.stats.hodges_lehmann.hodges_lehmann`) limits cells by the finest gap of either variant: for
15 x 900 and 25 x 1,400 against values to 0.1 it said 1,194.12 where the comparison said 1,122.5.  The
reference is the pseudo-median by brute force (the median of all Walsh averages) of the values the
comparison reads: unspread where its levels are further apart than the limit."""

from __future__ import annotations

import math

import numpy as np

from abstat.comparison.estimands import centre_of
from abstat.stats.hl_centre import centre
from abstat.stats.hodges_lehmann import hodges_lehmann


def _walsh_median(values: np.ndarray) -> float:
    i, j = np.triu_indices(values.size)
    return float(np.median((values[i] + values[j]) / 2.0))


FINE = np.round(np.random.default_rng(3).normal(1000.0, 30.0, 40), 1)
TWO_LEVELS = np.array([900.0] * 15 + [1400.0] * 25)


def test_two_far_levels_beside_a_fine_variant_are_their_values() -> None:
    lx, ly = np.log(FINE), np.log(TWO_LEVELS)
    r = hodges_lehmann(lx, ly, 0.95)
    truth = _walsh_median(ly)  # unspread: the levels are hundreds of the fine variant's gaps apart
    assert math.isclose(math.exp(truth), 1122.497, rel_tol=1e-5)
    assert r.centres[1] == centre(ly, [lx])
    assert abs(centre(ly, [lx]) - truth) < 1e-12
    assert r.centres[0] == centre(lx, [ly])


def _by_hand(levels: list[tuple[float, int, float]]) -> np.ndarray:
    """Each (level, count, half cell): its count points at the uniform's quantiles over level +- half."""
    return np.concatenate([v + h * (2.0 * (np.arange(k) + 0.5) / k - 1.0) for v, k, h in levels])


def test_a_sample_alone_is_read_at_its_own_resolution() -> None:
    # 1,000 and 1,001 set its finest gap; the level at 1,400 is hundreds of those away: as its comparison
    # with a copy of itself reads it, it keeps its value (before: spread over 1,001..1,799)
    a, b, c = np.log([1000.0, 1001.0, 1400.0])
    values = np.array([a] * 10 + [b] * 3 + [c] * 8)
    alone = centre(values)
    assert alone == hodges_lehmann(values, values.copy(), 0.95).centres[0]
    half = (b - a) / 2.0
    assert abs(alone - _walsh_median(_by_hand([(a, 10, half), (b, 3, half), (c, 8, 0.0)]))) < 1e-12
    everything = _walsh_median(_by_hand([(a, 10, half), (b, 3, half), (c, 8, (c - b) / 2.0)]))
    assert abs(alone - everything) > 1e-3  # what centre said before


def test_centre_of_speaks_for_the_comparison_it_is_shown_with() -> None:
    value, kind = centre_of([list(TWO_LEVELS)], "auto", [[list(FINE)]])
    assert kind == "pseudo-median"
    r = hodges_lehmann(np.log(FINE), np.log(TWO_LEVELS), 0.95)
    assert value == math.exp(r.centres[1])
    runs = [[v] * 3 for v in TWO_LEVELS]  # several runs: their medians, as the comparison of runs reads them
    fine_runs = [[v, v + 0.1, v - 0.1] for v in FINE]
    value, kind = centre_of(runs, "auto", [fine_runs])
    assert kind == "pseudo-median of run medians" and value == math.exp(r.centres[1])


def test_comparisons_shown_together_are_computed_again_only_when_the_baseline_is_read_two_ways() -> None:
    from abstat.stats.tie_cells import cell_limit, shown_together

    grid = np.log([440.0] * 6 + [460.0] * 8 + [480.0] * 2)  # grid 20
    # a candidate with a 5-cycle gap and one on the grid: different limits, both wide enough for grid's cells
    candidates = [np.log([500.0, 505.0, 505.0, 520.0]), np.log([460.0, 480.0, 480.0, 520.0])]
    assert cell_limit(grid, candidates[0]) != cell_limit(grid, candidates[1])
    calls = []

    def compare(ys: list[np.ndarray]) -> list[float]:
        calls.append(1)
        return [hodges_lehmann(grid, y, 0.95).centres[0] for y in ys]

    first = shown_together(lambda: compare(candidates))
    assert len(calls) == 1 and first[0] == first[1]  # computed once: the baseline's points are the same
    calls.clear()
    alone = [hodges_lehmann(grid, y, 0.95).centres[0] for y in (np.log(FINE), candidates[1])]
    assert alone[0] != alone[1]  # against values to 0.1 the grid's levels are not spread, against the grid they are
    both = shown_together(lambda: compare([np.log(FINE), candidates[1]]))
    assert len(calls) == 2 and both[0] == both[1] == alone[0]  # computed again at the finer limit
