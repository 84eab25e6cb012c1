"""Rows in the order asked (issue 27): --metric wall,user,sys keeps that order, --rows groups by its
keys in their order, and the footer names each estimand with the cells it concerns."""

from __future__ import annotations

from support.seed_shapes import build_sets, ipi_sets

from abstat.readers.sampleset import SampleSet
from abstat.report import api


def metric_column(text: str, metrics) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if line.split()[:1] and line.split()[0] in metrics]


def test_metrics_follow_the_order_given():
    sets = sorted(build_sets(), key=lambda s: s.labels["metric"])  # the store's alphabetical order
    for asked in (["wall", "user", "sys"], ["sys", "wall", "user"]):
        text = api.render(api.build(sets, metrics=asked), "text")
        assert metric_column(text, asked) == asked
        markdown = api.render(api.build(sets, metrics=asked), "markdown")
        rows = [
            line.split("|")[1].strip()
            for line in markdown.splitlines()
            if line.startswith("|") and line.split("|")[1].strip() in asked
        ]
        assert rows == asked


def test_rows_group_as_asked():
    sets = ipi_sets()
    by_base = api.build(sets, by="patch", rows=["base", "metric"])
    assert [r.labels["base"] for r in by_base.rows] == ["with"] * 5 + ["without"] * 5
    by_metric = api.build(sets, by="patch", rows=["metric", "base"])
    assert [r.labels["metric"] for r in by_metric.rows][:2] == ["dry-run", "dry-run"]
    assert [r.labels["base"] for r in by_metric.rows][:2] == ["with", "without"]


def test_footer_names_each_estimand_with_its_cells():
    sets = [
        SampleSet({"metric": "wall", "variant": v}, [[1.0 + i * 0.01 + d for i in range(20)]], unit="s")
        for v, d in (("before", 0.0), ("after", 0.1))
    ]
    sets += [SampleSet({"metric": "sys", "variant": v}, [[0.0, 0.0, 0.001] * 5], unit="s") for v in ("before", "after")]
    text = api.render(api.build(sets), "text")
    assert "named per cell" not in text
    footer = text[text.index("Cells:") :]
    assert "(wall)" in footer and "(sys)" in footer
