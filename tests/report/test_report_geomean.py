"""The report's geometric-mean row says what it computes (issue 35).

Its cells are judged after Holm; the geomean row is no comparison of that family: the footer says its
interval is not adjusted and that it has no mark, at the table's level.  Its numbers are checked against
an independent computation: cells given as summary statistics (means, Welch t, Fieller interval) with
precise means, whose log ratios have the delta-method standard error sqrt(s1^2/(n1 m1^2) + s2^2/(n2 m2^2));
the geometric mean of independent cells then has the interval exp(mean log +- z sqrt(sum se^2) / k).
Rows that cannot judge (a baseline centre of 0) have no ratio: the row is computed over the others and
says how many (it printed "n/a" for seed 003, averaging undefined ratios)."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats

from abstat.readers.summary import Summary
from abstat.report import api
from abstat.report.sampleset import SampleSet

# (host, n, baseline mean, sd, candidate mean, sd): precise means, so Fieller ~ the delta method
HOSTS = [
    ("milan", 200, 1000.0, 8.0, 950.0, 9.0),
    ("naples", 150, 500.0, 5.0, 490.0, 4.0),
    ("rome", 300, 2000.0, 30.0, 1900.0, 25.0),
    ("genoa", 250, 800.0, 6.0, 812.0, 7.0),
]


def _sets(hosts=HOSTS):
    sets = []
    for host, n, m1, s1, m2, s2 in hosts:
        sets.append(SampleSet(labels={"host": host, "variant": "before"}, runs=[], summary=Summary(n, m1, s1)))
        sets.append(SampleSet(labels={"host": host, "variant": "after"}, runs=[], summary=Summary(n, m2, s2)))
    return sets


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_geomean_against_the_delta_method(confidence):
    report = api.build(_sets(), confidence=confidence)
    (summary,) = report.summaries
    logs = [math.log(m2 / m1) for _, _, m1, _, m2, _ in HOSTS]
    ses = [math.sqrt(s1**2 / (n * m1**2) + s2**2 / (n * m2**2)) for _, n, m1, s1, m2, s2 in HOSTS]
    z = stats.norm.ppf(0.5 + confidence / 2)
    mean, se = sum(logs) / len(logs), math.sqrt(sum(s * s for s in ses)) / len(ses)
    assert summary.ratio == pytest.approx(math.exp(mean), rel=1e-9)
    assert summary.ci[0] == pytest.approx(math.exp(mean - z * se), rel=2e-5)
    assert summary.ci[1] == pytest.approx(math.exp(mean + z * se), rel=2e-5)
    assert (summary.cells, summary.rows, summary.confidence) == (4, 4, confidence)


def test_the_label_says_unadjusted_and_unmarked():
    report = api.build(_sets())
    doc = json.loads(api.render(report, "json"))
    (entry,) = doc["geomean"]
    assert entry["adjustment"] is None and entry["confidence"] == 0.95 and entry["cells"] == entry["rows"] == 4
    line = [f for f in doc["footer"] if f.startswith("geomean")][0]
    assert "95% interval" in line and "not adjusted" in line and "no mark" in line and "4 comparisons" in line
    text = api.render(report, "text")
    geomean_row = [row for row in text.splitlines() if row.startswith("geomean ")][0]
    assert "*" not in geomean_row  # Holm judged the cells, not this row
    email = api.render(report, "email")
    assert "its 95% interval is not adjusted, and it has no mark." in " ".join(email.split())


def test_rows_that_cannot_judge_are_left_out_and_counted():
    zero = [("dry", 100, 0.0, 0.0, 0.0, 0.0)]  # a baseline centre of 0: no relative change
    report = api.build(_sets(HOSTS + zero))
    (summary,) = report.summaries
    logs = [math.log(m2 / m1) for _, _, m1, _, m2, _ in HOSTS]
    assert summary.ratio == pytest.approx(math.exp(sum(logs) / len(logs)), rel=1e-9)
    assert (summary.cells, summary.rows) == (4, 5)
    assert "rows that cannot judge have no ratio: after 4 of 5" in " ".join(report.footer())
