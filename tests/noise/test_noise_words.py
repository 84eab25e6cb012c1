"""``abstat noise``'s words agree with its figures (a newcomer's report): a test's p-value printed below 5%
beside a "stable" verdict is named as borderline, with the level that decides (5% shared by four tests);
the Kruskal-Wallis p-value that judges the A/A blocks is printed; an A/A pair compare cannot judge says
so, with compare's reason, instead of "n/a (no difference)"; percentages have one format at every size;
the JSON is strict (no NaN)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

from abstat.noise import RunValue, analyse_metric
from abstat.render.noise import render
from abstat.render.units import format_p, format_size_pct


def _runs(series) -> list[RunValue]:
    return [RunValue("ab"[i % 2], 1, "boot1", float(v)) for i, v in enumerate(series)]


def _strict(text: str):
    def refuse(constant: str):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", [0.000123, 0.052, 0.5, 3.6, 9.94, 9.96, 12.4, 99.5, 104.0, 2205.3, 1835923.0])
def test_a_size_in_percent_has_one_format_at_every_magnitude(value):
    text = format_size_pct(value)
    assert "e+" not in text and text.endswith("%")
    number = float(text[:-1].replace(",", ""))
    if abs(value) < 9.95:
        assert number == float(f"{value:.2g}")  # two significant digits
    else:
        assert number == round(value) and re.fullmatch(r"\d{1,3}(,\d{3})*%", text)


def test_p_values_below_five_percent_beside_a_stable_verdict_are_called_borderline():
    """A series whose trend p lies in [0.0125, 0.05) (scipy's Spearman, the reference) and whose other
    tests are far from their levels: the verdict is stable, and says the trend's p is borderline."""
    for seed in range(500):
        rng = np.random.default_rng(seed)
        series = rng.normal(100, 2, 40) + np.linspace(0, 1.6, 40)
        p = stats.spearmanr(np.arange(40), series).pvalue
        result = analyse_metric("wall", "s", _runs(series), variants=("a", "b"))
        s = result.stability
        others = [s.autocorrelation.p_value, s.step.p_value, result.blocks.p_value]
        if 0.0125 <= p < 0.05 and min(others) >= 0.05:
            break
    else:
        pytest.fail("no seed gave a borderline trend")
    verdict = result.verdict()
    assert result.stable and verdict.startswith("stable: ")
    assert f"Borderline: the trend's p {format_p(p)} is below 5% on its own, not below 0.0125" in verdict
    text = render({"experiment": "e", "command": "x"}, [result])
    assert "along the run order (each test flags below p 0.0125): trend" in text
    assert f"Kruskal-Wallis across the blocks p {format_p(result.blocks.p_value)}" in text


def test_a_stable_series_far_from_every_level_is_not_called_borderline():
    for seed in range(200):
        series = np.random.default_rng(seed).normal(100, 2, 40)
        result = analyse_metric("wall", "s", _runs(series), variants=("a", "b"))
        s = result.stability
        if min(s.trend.p_value, s.autocorrelation.p_value, s.step.p_value, result.blocks.p_value) >= 0.05:
            break
    assert result.stable and "Borderline" not in result.verdict()


def test_an_a_a_pair_compare_cannot_judge_says_so_and_the_json_is_strict():
    """Tick-granular system time: most runs 0 s, a few 4 ms; compare cannot bound the ratio of means."""
    series = [0.004 if i % 9 == 4 else 0.0 for i in range(40)]
    result = analyse_metric("sys", "s", _runs(series), variants=("a", "b"))
    assert result.aa_cannot and result.aa_delta_pct is None
    text = render({"experiment": "e", "command": "x"}, [result])
    assert f"A/A: a vs b cannot judge ({result.aa_cannot})" in text and "n/a (no difference)" not in text
    document = _strict(render({"experiment": "e", "command": "x"}, [result], "json"))
    assert document["metrics"][0]["aa_compare"]["cannot_judge"] == result.aa_cannot
