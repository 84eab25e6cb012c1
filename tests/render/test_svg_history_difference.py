"""history's figure labels a change point as the history table does (issue 34, after attack17 1): in percent
of a level before above 0, else as a difference in the data's unit, never a percentage (a percentage of a
negative level flips sign: -9.98 -> -11.91 was labelled +19.3%)."""

from __future__ import annotations

import math
import re

import pytest

from abstat.render.svg_history import history_figure

REVS = [f"r{i:02d}" for i in range(40)]


def _labels(before: float, after: float, change: tuple, unit: str | None = "ms") -> list[str]:
    values = [[(before if i < 20 else after) + 0.01 * (k - 2) for k in range(5)] for i in range(40)]
    figure = history_figure(
        REVS,
        values,
        [sorted(v)[2] for v in values],
        [(0, 20, before), (20, 40, after)],
        [change],
        unit=unit,
        metric=None,
    )
    return re.findall(r'<text [^>]*fill="#d62728"[^>]*>([^<]*)</text>', figure.svg)


def _difference(label: str) -> tuple[float, str]:
    match = re.fullmatch(r"([-+][\d.,]+) (\S+) \(difference\)", label)
    assert match, label
    return float(match[1].replace(",", "")), match[2]


def test_a_negative_level_before_is_labelled_with_the_difference_in_the_datas_unit():
    (label,) = _labels(-9.98, -11.91, (20, -9.98, -11.91, False))
    assert "%" not in label  # (was "+19.3%": the sign of a drop flipped)
    value, unit = _difference(label)
    assert unit == "ms" and value == pytest.approx(-11.91 - (-9.98), abs=5e-4)


def test_the_changes_own_difference_is_used_when_given():
    # a level before not clearly away from 0 (history's relative-undefined): the step estimate it reports
    (label,) = _labels(0.000248, 1.93, (20, 0.000248, 1.93, False, 1.9284), unit="s")
    value, unit = _difference(label)
    assert "%" not in label and (value, unit) == (pytest.approx(1.9284, abs=5e-4), "s")


def test_a_level_before_given_as_nan_gets_no_label_and_a_positive_one_its_percentage():
    assert _labels(-9.98, -11.91, (20, math.nan, -11.91, False)) == []
    (label,) = _labels(100.0, 110.0, (20, 100.0, 110.0, False))
    assert label == f"{(110.0 / 100.0 - 1) * 100:+.1f}%"
