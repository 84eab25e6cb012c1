"""The HTML summary table's rows written by one format when no cell needs escaping
(``html_table.as_is``, ``row_format``, ``row_fields``) against the row-by-row writer
(``html_table.table_row``: each cell through ``escape.html``, each change cell's class from its verdict),
on reports of random labels (markup, quotes, CI commands, control and wide characters), one to three
columns (verdict classes), and geometric-mean rows."""

from __future__ import annotations

import random

import pytest

from abstat.render import html, html_table
from abstat.render.matrix import grid_headers, grid_rows
from abstat.report import api
from abstat.report.sampleset import SampleSet

PIECES = ["r1", "c9e9c61", "<b>", "&amp", "'", '"', "::warn", "#x", "a:b", "語", "\x1b[1m", "µ", "", "é"]


def _sets(count: int, variants: list[str], seed: int) -> list[SampleSet]:
    rng = random.Random(seed)
    sets = []
    for index in range(count):
        rev = f"{index:03d}" + rng.choice(PIECES) * rng.randint(0, 2)
        for metric in ("wall", rng.choice(["cycles", "a<b>"])):
            for position, variant in enumerate(variants):
                shift = 1.0 + 0.3 * position * rng.choice([-1, 0, 1])
                runs = [[shift * rng.uniform(1, 1.05) for _ in range(rng.randint(3, 12))]]
                sets.append(SampleSet(labels={"rev": rev, "metric": metric, "variant": variant}, runs=runs))
    return sets


def _reference(report) -> list[str]:
    headers, _ = grid_headers(report)
    rows = [html_table.table_row(report, index, line) for index, line in enumerate(grid_rows(report))]
    head = ['<table class="matrix" id="summary">', "<thead><tr>", *[f"<th>{html._e(h)}</th>" for h in headers]]
    return [*head, "</tr></thead><tbody>", "\n".join(rows), "</tbody></table>"]


@pytest.mark.parametrize(("count", "variants"), [(40, ["a"]), (25, ["a", "b"]), (15, ["base", "x<y>", "c"])])
def test_table_is_the_row_by_row_table(count: int, variants: list[str]) -> None:
    report = api.build(_sets(count, variants, seed=count), baseline=variants[0])
    table = html_table.table(report)
    assert "\n".join(table) == "\n".join(_reference(report))
    quick = sum(html_table.as_is(line) for line in grid_rows(report))
    assert 0 < quick < len(report.rows)  # both paths taken
    if len(variants) > 1:
        assert 'class="change faster"' in "\n".join(table) or 'class="change slower"' in "\n".join(table)
