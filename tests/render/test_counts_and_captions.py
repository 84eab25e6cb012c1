"""Counts print as integers, one table prints one value one way, and every caption and footer names
the estimand of what it shows (issue 27)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from abstat.cli import main as cli_main
from abstat.readers.sampleset import SampleSet
from abstat.render.units import common_scale, is_counted
from abstat.report import api


@pytest.mark.parametrize(
    "unit,values,expected",
    [
        ("count", [18.5, 7.0], ["18", "7"]),  # a median between two counts: printed as a count
        ("counts", [99.0, 99.5], ["99", "100"]),
        ("cycles", [1982.5, 2000.25], ["1,982 cycles", "2,000 cycles"]),
        (None, [12.345, 13.0], ["12.35", "13.00"]),  # no unit named: a measured number keeps its digits
        ("ops", [3.5, 4.0], ["3.500 ops", "4.000 ops"]),
    ],
)
def test_counted_units_print_integers(unit, values, expected):
    scale = common_scale(values, unit)
    assert [scale(v) for v in values] == expected
    assert is_counted(unit) == (unit in ("count", "counts", "cycles"))


def _sets(metric, unit, before, after):
    return [
        SampleSet({"metric": metric, "variant": v}, [list(values)], unit=unit)
        for v, values in (("before", before), ("after", after))
    ]


def test_a_report_prints_counts_as_integers():
    # ivcsw as the seed showed it: medians 18.5 and 7 (even n), "18.500 -> 7.000" before
    sets = _sets("ivcsw", "count", [17, 18, 19, 20, 18, 19] * 3, [7, 6, 8, 7, 7, 7] * 3)
    sets += _sets("vcsw", "count", [99, 99, 100, 99] * 4, [98, 99, 99, 99] * 4)
    for fmt in ("text", "markdown"):
        text = api.render(api.build(sets), fmt)
        rows = [line for line in text.splitlines() if re.match(r"\|? ?(ivcsw|vcsw)\b", line)]
        assert len(rows) == 2, text
        for row in rows:
            numbers = [n for n in re.findall(r"(?<![\[+\-\w.])\d[\d,]*(?:\.\d+)?(?![\d%\]])", row)]
            assert numbers and all("." not in n for n in numbers), row


def test_the_baseline_reads_alike_on_every_line(tmp_path, capsys):
    os.chdir(tmp_path)
    Path("a.txt").write_text("\n".join(str(100 + i % 7) for i in range(30)))
    Path("b.txt").write_text("\n".join(str(90 + i % 7) for i in range(30)))
    Path("c.txt").write_text("\n".join(str(110 + i % 7) for i in range(30)))
    assert cli_main(["compare", "base=a.txt", "b=b.txt", "c=c.txt"]) == 0
    out = capsys.readouterr().out
    lefts = [line.split("→")[0].split()[-1] for line in out.splitlines() if "→" in line]
    assert len(lefts) == 2 and lefts[0] == lefts[1], out
    caption = out.splitlines()[0]
    assert "Hodges-Lehmann ratio" in caption  # names the estimand of the change shown


def test_email_footer_names_each_estimand_in_one_short_line():
    sets = _sets("wall", "s", [1.0 + i * 0.01 for i in range(20)], [1.1 + i * 0.01 for i in range(20)])
    sets += _sets("sys", "s", [0.0, 0.0, 0.001] * 5, [0.0, 0.001, 0.001] * 5)
    report = api.build(sets)
    text = api.render(report, "email")
    assert max(len(line) for line in text.splitlines()) <= 72 and "ministat" not in text
    labels = {c.comparison.estimand_label.split(" (")[0] for c in report.comparisons}
    assert len(labels) == 2
    (line,) = [line for line in text.splitlines() if line.startswith("Cells:")]
    for label in labels:
        assert label in " ".join(text.split())
    footnotes = [line for line in text.splitlines() if line.startswith("[")]
    assert len(footnotes) == len(report.footnotes)  # one line per finding


def test_the_variant_table_prints_its_stddev_in_the_tables_unit():
    # sys times as the seed's: means of a few hundred µs, a stddev above 1 ms (once "1.249 ms" beside µs)
    from abstat.comparison import compare_many
    from abstat.render.compare_text import render

    a = [0.0, 0.0, 0.0, 0.0, 0.0029, 0.0017]
    b = [0.0, 0.0, 0.0, 0.0, 0.0019, 0.0001]
    text = render(compare_many({"a": a, "b": b}), fmt="text", unit="s", metric="sys")
    table = text[: text.index("candidate")]
    units = set(re.findall(r"\d (µs|ms|ns|s)\b", table))
    assert units == {"µs"}, table


def test_count_means_print_the_digits_their_change_is_computed_from():
    # Newcomer (wave 8, 17): a count row showed "2 2 -8%" where the change is the ratio of means 2.4 and 2.2
    sets = _sets("ivcsw", "count", [2, 3, 2, 3, 2] * 6, [2, 2, 3, 2, 2] * 6)
    report = api.build(sets, center="mean")
    (cell,) = report.comparisons
    comparison = cell.comparison
    assert comparison.estimand == "mean_ratio" and comparison.centers == pytest.approx([2.4, 2.2])
    for fmt in ("text", "markdown"):
        (row,) = [line for line in api.render(report, fmt).splitlines() if re.search(r"-8%", line)]
        before, after = (float(v) for v in re.findall(r"(?<![\[+\-\w.])\d+\.\d+", row)[:2])
        assert (before, after) == (2.4, 2.2), row  # the printed centres give the change: 2.2 / 2.4 - 1 = -8.3%
    scale = common_scale([18.5, 7.0], "count", means=True)  # means of counts keep their digits
    assert [scale(v) for v in (18.5, 7.0)] == ["18.500", "7.000"]  # one scale: the smallest value decides
