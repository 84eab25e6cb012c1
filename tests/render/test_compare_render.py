"""Renderers: footnotes, colour, JSON nulls, CSV."""

from __future__ import annotations

import json

import numpy as np

from abstat.comparison import compare, compare_many
from abstat.render.compare_text import render


def _comparisons():
    rng = np.random.default_rng(0)
    base = np.round(rng.normal(440, 7, 98) / 20) * 20  # tied: a warning about the baseline
    return compare_many(
        {"base": base, "a": np.round(rng.normal(400, 7, 98) / 20) * 20, "b": np.round(rng.normal(440, 7, 98) / 20) * 20}
    )


def test_shared_warning_is_one_footnote_referenced_twice():
    comps = _comparisons()
    text = render(comps, "text")
    assert any(w.variant == "base" and w.code == "ties" for w in comps[0].warnings)
    # one footnote per kind of warning (issue 10), naming the variants it concerns
    head = "heavily tied/quantized data (grid 20): base"
    assert text.count("heavily tied/quantized data") == 1 and text.count(head) == 1
    number = [line for line in text.splitlines() if head in line][0].split("]")[0] + "]"
    table_rows = [line for line in text.splitlines() if line.startswith(("a ", "b ")) and " base " in line]
    assert len(table_rows) == 2 and all(number in row for row in table_rows)


def test_markdown_lists_warnings_as_footnotes():
    md = render(_comparisons(), "markdown")
    assert md.startswith("| variant |")
    assert "1. **warning:**" in md


def test_colour_only_when_asked():
    comps = _comparisons()
    assert "\x1b[" not in render(comps, "text", color=False)
    coloured = render(comps, "text", color=True)
    assert "\x1b[" in coloured and "faster" in coloured


def test_json_has_no_infinities():
    from abstat.readers.summary import Summary

    c = compare(Summary(3, 1.0, 10.0), Summary(3, 5.0, 1.0))  # Fieller: baseline mean not away from 0
    doc = json.loads(render([c], "json"))
    assert doc["comparisons"][0]["ci_pct"] is None and c.ci_pct is None  # cannot judge: no bounds at all
    assert doc["comparisons"][0]["verdict"] == "cannot judge"
    assert "cannot-judge" in [w["code"] for w in doc["comparisons"][0]["warnings"]]


def test_csv_header_and_warning_codes():
    out = render(_comparisons(), "csv").splitlines()
    assert out[0].startswith("baseline,candidate,n_baseline,n_candidate,unit,center,delta_pct")
    assert "ties" in out[1]
