"""--outliers tukey on quantized data: the note says when the fences drop ordinary grid values."""

from __future__ import annotations

import numpy as np

from abstat.comparison import compare
from abstat.stats.outliers import quantized_fences

# TSC cycles on a 20-cycle grid: quartiles one step apart (420, 440), so
# Tukey's inner fences lie 1.5 steps out (390, 470) and 380 and 480 -- two
# steps from the quartiles, values the data hold several of -- are dropped.
BEFORE = [420] * 10 + [440] * 10 + [380, 480, 380, 480]
AFTER = [380] * 10 + [400] * 10 + [340, 440, 340]
# The same shapes, spread out so that nothing is on a coarse grid.
SMOOTH_BEFORE = [420.3 + 0.7 * i for i in range(20)] + [380.1, 480.9, 600.2]
SMOOTH_AFTER = [380.2 + 0.7 * i for i in range(20)] + [340.1, 620.3]


def dropped_by_tukey(values: list[float]) -> int:
    """Independent reference: numpy's quartiles and the 1.5 IQR fences."""
    a = np.asarray(values, dtype=float)
    q1, q3 = np.percentile(a, [25, 75])
    iqr = q3 - q1
    return int(np.sum((a < q1 - 1.5 * iqr) | (a > q3 + 1.5 * iqr)))


def note(comparison) -> str:
    [found] = [w.message for w in comparison.notes if w.code == "outliers-dropped"]
    return found


def test_fences_in_grid_steps():
    fences = quantized_fences(np.asarray(BEFORE, dtype=float))
    assert fences is not None
    q1, q3 = np.percentile(BEFORE, [25, 75])
    assert fences.step == 20.0
    assert fences.fence_steps == 1.5 * (q3 - q1) / 20.0 == 1.5
    assert fences.nearest_steps == (480 - q3) / 20.0 == 2.0
    assert quantized_fences(np.asarray(SMOOTH_BEFORE)) is None  # not on a grid
    assert quantized_fences(np.asarray([420.0] * 10 + [440.0] * 10)) is None  # nothing dropped


def test_note_says_the_fences_lie_few_grid_steps_out():
    c = compare(BEFORE, AFTER, outliers="tukey")
    assert c.summaries[0].dropped == dropped_by_tukey(BEFORE) == 4
    assert c.summaries[1].dropped == dropped_by_tukey(AFTER) == 3
    assert note(c) == (
        "outliers dropped (tukey rule): baseline 4, candidate 3; the data are quantized (grid 20) and the "
        "fences lie 1.5 steps outside the quartiles: values 2 steps beyond them were dropped"
    )


def test_note_names_the_variant_when_only_one_is_quantized():
    c = compare(SMOOTH_BEFORE, AFTER, outliers="tukey")
    assert note(c).endswith(
        "; candidate: the data are quantized (grid 20) and the fences lie 1.5 steps "
        "outside the quartiles: values 2 steps beyond them were dropped"
    )


def test_note_is_unchanged_on_continuous_data_and_far_outliers():
    c = compare(SMOOTH_BEFORE, SMOOTH_AFTER, outliers="tukey")
    assert note(c) == (
        f"outliers dropped (tukey rule): baseline {dropped_by_tukey(SMOOTH_BEFORE)}, "
        f"candidate {dropped_by_tukey(SMOOTH_AFTER)}"
    )
    # On a grid, but the dropped value is far (many steps) from the quartiles: a real outlier.
    wide = [400 + 20 * (i % 6) for i in range(30)] + [2000]
    assert note(compare(wide, wide, outliers="tukey")) == "outliers dropped (tukey rule): baseline 1, candidate 1"
    # The rule itself is unchanged: the same values are dropped with or without the remark.
    assert compare(BEFORE, AFTER, outliers="none").summaries[0].dropped == 0


def test_per_run_fences_on_nested_data():
    c = compare([BEFORE, BEFORE], [AFTER, AFTER], outliers="tukey")
    assert c.summaries[0].dropped == 8 and "fences lie 1.5 steps outside the quartiles" in note(c)
