"""abstat.render.units: one scale per column, base units, change decimals, verdict words (issue 10)."""

from __future__ import annotations

import math

import pytest

from abstat.render.units import (
    EXACT,
    ascii_text,
    change_decimals,
    common_scale,
    format_change,
    format_value,
    tidy,
    verdict_word,
)


@pytest.mark.parametrize(
    "unit,base,factor,kind",
    [
        ("ns/op", "s/op", 1e-9, "time"),
        ("sec/op", "s/op", 1.0, "time"),
        ("µs", "s", 1e-6, "time"),
        ("KiB", "B", 1024.0, "bytes"),
        ("MB", "B", 1e6, "bytes"),
        ("B/op", "B/op", 1.0, "bytes"),
        ("MB/s", "B/s", 1e6, "bytes"),
        ("count", "", 1.0, "count"),
        ("cycles", "cycles", 1.0, "count"),
        (None, "", 1.0, "count"),
    ],
)
def test_tidy(unit, base, factor, kind):
    t = tidy(unit)
    assert (t.base, t.factor, t.kind) == (base, factor, kind)


def test_wall_metric_without_unit_is_seconds():
    assert tidy(None, "wall").kind == "time"
    assert format_value(0.0713758, None, "wall") == "71.38 ms"


def test_unit_named_in_the_metric():
    assert format_value(131749201.0, None, "loop_ns") == "131.7 ms"
    assert format_value(2048.0, None, "rss_bytes") == "2.000 KiB"
    assert tidy(None, "ops_s").kind == "count" and tidy(None, "cycles").kind == "count"  # ops_s: a rate?
    assert verdict_word("faster", -93, None, "loop_ns") == "faster"


def test_one_unit_per_column():
    # the example: one column mixed "1.32 s" and "886.5 ms"
    scale = common_scale([1.32, 0.8865], "s")
    assert [scale(1.32), scale(0.8865)] == ["1,320.0 ms", "886.5 ms"]
    assert scale.unit == "ms"


@pytest.mark.parametrize(
    "value,unit,text",
    [
        (5.74039e8, "ns", "574.0 ms"),  # was "5.74039e+08 ns"
        (0.000435, "s", "435.0 µs"),
        (0.01231, "s", "12.31 ms"),
        (999.96, "ms", "1.000 s"),  # rounding never shows "1000 ms"
        (18368, "KiB", "17.94 MiB"),
        (2.15303e9, None, "2,153,030,000"),  # counts: thousands grouped
        (1982.7, "count", "1,983"),  # 4 significant digits
        (441.5, "count", "442"),  # a count prints as a count (issue 27), even a median between two
        (0.0, "s", "0 s"),
        (1e308, None, "1e+308"),  # no 309-digit integer
        (1e-320, "s", "1e-311 ns"),
    ],
)
def test_format_value(value, unit, text):
    assert format_value(value, unit) == text


def test_non_finite_values():
    scale = common_scale([1.0, math.inf, math.nan], "s")
    assert scale.number(math.inf) == "inf" and scale.number(-math.inf) == "-inf"
    assert scale(math.nan) == "nan s" and scale(1.0) == "1.000 s"


def test_exact_scaler_keeps_every_digit():
    assert EXACT(0.1 + 0.2) == "0.30000000000000004"
    assert float(EXACT(1e-320)) == 1e-320


@pytest.mark.parametrize(
    "ci,decimals",
    [((-19.4, -17.8), 1), ((-2.2, 1.1), 1), ((-31.0, 138.0), 0), ((-0.02, 0.05), 3), (None, 1), ((-math.inf, 3.0), 1)],
)
def test_change_decimals_follow_the_interval(ci, decimals):
    assert change_decimals(0.0, ci) == decimals


def test_format_change():
    assert format_change(-18.6, [-19.4, -17.8]) == "-18.6% [-19.4, -17.8]"
    assert format_change(0.012, [-0.02, 0.05]) == "+0.012% [-0.020, +0.050]"
    assert format_change(-0.01, [-0.4, 0.3]) == "-0.01% [-0.40, +0.30]"
    assert format_change(math.nan, [0, 1]) == "n/a"


@pytest.mark.parametrize(
    "verdict,delta,unit,metric,higher,word",
    [
        ("faster", -10, "s", "wall", False, "faster"),
        ("slower", 10, "s", "wall", False, "slower"),
        ("faster", -10, "count", "vcsw", False, "lower (better)"),  # fewer context switches
        ("slower", 10, "KiB", "maxrss", False, "higher (worse)"),
        ("faster", 10, "MB/s", None, True, "higher (better)"),  # a throughput
        ("no difference proven", 1, "count", "vcsw", False, "no difference proven"),
        ("faster", -10, None, None, False, "faster"),  # unknown unit: as computed
        ("faster", -10, None, "cycles", False, "faster"),  # TSC cycles measure time
    ],
)
def test_verdict_words_fit_the_metric(verdict, delta, unit, metric, higher, word):
    assert verdict_word(verdict, delta, unit, metric, higher) == word


def test_ascii_fallback():
    assert ascii_text("12.31 µs → 10.02 µs ┃ x") == "12.31 us -> 10.02 us \\u2503 x"


def test_p_values_below_double_precision_resolution_are_shown_as_a_bound():
    from abstat.render.units import format_p

    assert format_p(1.83e-311) == "<1e-16" and format_p(0.0) == "<1e-16"
    assert format_p(float("nan")) == "-" and format_p(None) == "-"
    assert format_p(0.0445) == "0.044" and format_p(0.0445, 3) == "0.0445"
