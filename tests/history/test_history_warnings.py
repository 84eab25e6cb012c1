"""issue 35 item 3: history's warnings and notes are values (``StatWarning``: a code and a message)
that the library returns and the renderers draw, in every format; the library prints nothing."""

from __future__ import annotations

import json

import numpy as np

from abstat.history.analysis import Settings, analyse
from abstat.history.changepoints import detect
from abstat.history.render import render
from abstat.history.series import History, Point, Series, order_revisions
from abstat.stats.warnings import StatWarning


def _series(values: list[float], name: str = "t") -> Series:
    points = [Point(f"r{i:03d}", [v], first_seen=i) for i, v in enumerate(values)]
    return Series({"experiment": "e"}, name, "ms", points)


def test_a_too_short_series_warns_with_a_value_not_a_string():
    detection = detect([1.0, 2.0, 3.0])
    assert [(w.code, type(w)) for w in detection.warnings] == [("too-few-revisions", StatWarning)]
    assert detection.warnings[0].message.startswith("3 revisions: too few to find a change (at least 10")


def test_revisions_without_commit_time_warn_with_a_code():
    series = [_series([1.0, 2.0])]
    series[0].points[1].commit_time = 5.0
    how, warnings, _ = order_revisions(series, None)
    assert how == "commit time, then first seen"
    assert [w.code for w in warnings] == ["no-commit-time"]


def test_every_format_draws_the_values_and_the_library_prints_nothing(capsys):
    rng = np.random.default_rng(35)
    long = list(rng.normal(100.0, 1.0, 60) + np.where(np.arange(60) >= 30, 0.6, 0.0))  # a step near the threshold
    history = History(
        [_series([1.0, 2.0, 3.0], "short"), _series(long, "long")],
        "commit time, then first seen",
        warnings=[StatWarning("input", "x.csv: 1 empty cell(s) left out")],
    )
    previous = {history.series[1].key: [{"rev": "r010"}]}  # a change point reported before, gone now
    report, _ = analyse(history, Settings(), previous)
    assert capsys.readouterr() == ("", "")
    notes = [n for r in report.results for n in r.notes + r.detection.warnings]
    assert all(isinstance(n, StatWarning) for n in notes + report.warnings)
    codes = {n.code for n in notes}
    assert {"too-few-revisions", "change-point-withdrawn"} <= codes
    document = json.loads(render(report, "json"))
    assert document["warnings"] == [{"code": "input", "message": "x.csv: 1 empty cell(s) left out", "variant": None}]
    drawn = [n for s in document["series"] for n in s["notes"]]
    assert [(n["code"], n["message"]) for n in drawn] == [(n.code, n.message) for n in notes]
    text, markdown, html = (render(report, fmt) for fmt in ("text", "markdown", "html"))
    for note in notes:
        assert f"note: {note.message}" in text and f"- {note.message}" in markdown
        assert note.message in html
    assert "warning: x.csv: 1 empty cell(s) left out" in text and "- warning: x.csv" in markdown
    assert "<li>warning: x.csv: 1 empty cell(s) left out</li>" in html
    assert "StatWarning(" not in text + markdown + html
