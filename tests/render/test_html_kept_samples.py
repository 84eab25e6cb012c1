"""The HTML report's per-set summaries under "Distributions" use the samples the table uses (issue 35).

With ``--outliers tukey`` the table's n, centre and change are computed on the values kept; the summary
of each set (N, Min, Max, Median...) was computed on all samples (seed 000's page said N 100, Max 21,674
beside a table of the kept values).  Reference: the values kept, known by construction (three values
100x the rest, beyond any quartile rule's fences), summarised here with the standard library; the
Median column is the table's centre (on integer data one of the values)."""

from __future__ import annotations

import html
import re
import statistics

import numpy as np
import pytest

from abstat.report import api
from abstat.report.sampleset import SampleSet


def _page(outliers: str) -> tuple[str, dict[str, list[float]]]:
    rng = np.random.default_rng(2035)
    kept = {
        "before": [float(v) for v in np.round(rng.normal(1000, 20, 40))],
        "after": [float(v) for v in np.round(rng.normal(960, 20, 37))],
    }
    sets = [
        SampleSet(labels={"variant": name}, runs=[values + [1e5, 1.2e5, 1.4e5]], unit="ns")
        for name, values in kept.items()
    ]
    return api.render(api.build(sets, outliers=outliers), "html"), kept


def _stats_rows(page: str) -> dict[str, list[str]]:
    table = re.search(r'<table class="stats">(.*?)</table>', page, re.S).group(1)
    rows = [[html.unescape(c) for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", r)] for r in table.split("</tr>")]
    rows = [row for row in rows if row]
    header = rows[0]
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows[1:]}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_summaries_use_the_kept_values():
    page, kept = _page("tukey")
    rows = _stats_rows(page)
    table_centres = re.findall(r'<td class="num">([^<]*)</td>', page)
    for name, centre in zip(("before", "after"), table_centres, strict=True):
        row = rows[f"variant={name}"]
        values = kept[name]
        assert int(row["N"]) == len(values)
        assert row["dropped (tukey)"] == "3"
        assert _number(row["Max (ns)"]) == max(values) and _number(row["Min (ns)"]) == min(values)
        assert _number(row["Avg (ns)"]) == pytest.approx(statistics.fmean(values), abs=0.05)
        assert _number(row["Median (ns)"]) == statistics.median_low(values)  # integer data: one of the values
        assert _number(row["Median (ns)"]) == _number(centre.removesuffix(" ns"))  # the table's centre
    assert "values kept after the outlier rule (tukey)" in page


def test_without_a_rule_every_sample_and_no_dropped_column():
    page, kept = _page("none")
    rows = _stats_rows(page)
    for name, values in kept.items():
        row = rows[f"variant={name}"]
        assert int(row["N"]) == len(values) + 3 and "dropped (none)" not in row
        assert _number(row["Max (ns)"]) == 1.4e5
