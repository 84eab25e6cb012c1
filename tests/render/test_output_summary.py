"""The terse summary ``abstat run`` and ``abstat compare`` end with (issue 10)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

from abstat.comparison import compare_many
from abstat.render.compare_text import summary_block
from abstat.render.run_report import merge_notes, note_lines


@pytest.fixture(scope="module")
def sections():
    rng = np.random.default_rng(0)
    wall = compare_many({"before": rng.normal(0.01231, 1e-4, 60), "after": rng.normal(0.01002, 1e-4, 60)})
    vcsw = compare_many({"before": np.round(rng.normal(1000, 30, 60)), "after": np.round(rng.normal(900, 30, 60))})
    rss = compare_many({"before": rng.normal(18000, 50, 60), "after": rng.normal(19000, 50, 60)})
    return [("wall", "s", wall), ("vcsw", "count", vcsw), ("maxrss", "KiB", rss)]


def test_one_line_per_metric(sections):
    text = summary_block(sections)
    lines = text.splitlines()
    assert lines[0] == (
        "after vs before: Hodges-Lehmann ratio (median of the candidate/baseline ratios) for wall, maxrss; "
        "Hodges-Lehmann ratio (median of the candidate/baseline ratios after spreading tied values over their grid "
        "cells) for vcsw; 95% confidence intervals"
    )  # the estimand named: rounded counts have ties, spread before the ratios are taken (issue 34)
    wall = next(line for line in lines if line.startswith("wall"))
    match = re.match(r"wall\s+(\S+) ms → (\S+) ms\s+([+-]\d+\.\d+)% \[([+-]\d+\.\d+), ([+-]\d+\.\d+)\]\s+faster$", wall)
    assert match, wall
    before, after = sections[0][2][0].centers  # each variant's median, as every format prints it (abstat.compare's)
    summaries = sections[0][2][0].summaries
    assert sections[0][2][0].center_kind == "median" and [before, after] == [summaries[0].median, summaries[1].median]
    assert float(match[1]) == pytest.approx(before * 1e3, abs=0.005)
    assert float(match[2]) == pytest.approx(after * 1e3, abs=0.005)
    comparison = sections[0][2][0]
    assert float(match[3]) == pytest.approx(comparison.delta_pct, abs=0.005)
    assert len(match[3].split(".")[1]) == 2  # interval 0.56 points wide: two decimals
    # the change agrees with independent estimates: the ratio of the printed centres, and of the sample medians
    assert float(match[3]) == pytest.approx((after / before - 1) * 100, abs=0.05)
    medians = [
        float(np.median(s)) for s in (sections[0][2][0].summaries[0].median, sections[0][2][0].summaries[1].median)
    ]
    assert float(match[3]) == pytest.approx((medians[1] / medians[0] - 1) * 100, abs=0.5)
    # counts grouped by thousands, KiB scaled to MiB, verdict words with the metric's direction
    # (a count prints as a count, even a pseudo-median between two: issue 27)
    assert re.search(r"^vcsw\s+(1,\d{3}|9\d\d) → \d{3}\s+-\d+\.\d% \S+ \S+\s+lower \(better\)", text, re.M)
    assert re.search(r"^maxrss\s+17\.\d\d MiB → 18\.\d\d MiB\s+\+\d\.\d+% \S+ \S+\s+higher \(worse\)", text, re.M)


def test_the_change_is_the_one_scipy_supports(sections):
    # the Welch test on log values (scipy) and the line agree in sign and significance
    comparison = sections[0][2][0]
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.01231, 1e-4, 60), rng.normal(0.01002, 1e-4, 60)
    assert stats.ttest_ind(np.log(a), np.log(b), equal_var=False).pvalue < 0.05
    assert comparison.verdict == "faster"


def test_estimand_caption(sections):
    wall = sections[0][2]
    saved = wall[0].estimand
    try:
        wall[0].estimand = "median_ratio"
        assert summary_block([sections[0]]).splitlines()[0] == (
            "after vs before: ratio of medians with its 95% confidence interval"
        )
    finally:
        wall[0].estimand = saved


def test_notes_that_differ_in_figures_are_merged():
    notes = [
        {"note": "peak RSS not recorded: at most abstat's own 20228 KiB", "runs": 1},
        {"note": "peak RSS not recorded: at most abstat's own 20244 KiB", "runs": 3},
        {"note": "perf: cycles not supported", "runs": 1},
    ]
    assert merge_notes(notes) == [
        {"note": "peak RSS not recorded: at most abstat's own 20228 to 20244 KiB", "runs": 4},
        {"note": "perf: cycles not supported", "runs": 1},
    ]
    assert note_lines(notes)[1] == "note: peak RSS not recorded: at most abstat's own 20228 to 20244 KiB (4 runs)"


def test_runs_as_the_unit_show_the_centres_the_change_is_the_ratio_of():
    # with several runs per variant the change is the Hodges-Lehmann ratio of the runs' medians
    # (issue 34: also below 10 runs): the line shows each variant's pseudo-median of its run
    # medians, not the pooled medians (whose ratio is another figure); brute force over all pairs
    rng = np.random.default_rng(3)
    before = [rng.normal(level, 0.01, 20) for level in (1.0, 3.0, 1.2, 2.8)]
    after = [rng.normal(level, 0.01, 20) for level in (1.1, 2.9, 1.3, 3.2)]
    (comparison,) = compare_many({"before": before, "after": after})
    assert comparison.estimand == "hl_ratio"
    lines = summary_block([("wall", "s", [comparison])]).splitlines()
    match = re.match(r"wall\s+(\S+) s → (\S+) s\s+([+-]\d+(?:\.\d+)?)%", lines[1])
    assert match, lines[1]
    logs = [np.log([np.median(run) for run in runs]) for runs in (before, after)]
    walsh = [(v[:, None] + v[None, :])[np.triu_indices(v.size)] / 2 for v in logs]
    expected = [float(np.exp(np.median(w))) for w in walsh]
    assert float(match[1]) == pytest.approx(expected[0], rel=2e-3)
    assert float(match[2]) == pytest.approx(expected[1], rel=2e-3)
    ratio = np.median(np.subtract.outer(logs[1], logs[0]).ravel())
    assert comparison.delta_pct == pytest.approx(100 * np.expm1(ratio), rel=1e-6)


def test_caption_names_each_estimand_when_the_lines_differ(sections):

    rng = np.random.default_rng(4)
    nested = compare_many(
        {
            "before": [rng.normal(level, 0.01, 20) for level in (1, 2, 1.5)],
            "after": [rng.normal(level, 0.01, 20) for level in (1.1, 2, 1.6)],
        }
    )
    caption = summary_block([sections[0], ("user", "s", nested)]).splitlines()[0]
    # issue 34: runs keep the Hodges-Lehmann ratio (of the run medians) below 10 runs too
    assert caption == (
        "after vs before: Hodges-Lehmann ratio (median of the candidate/baseline ratios) for wall; "
        "Hodges-Lehmann ratio (median of the candidate/baseline ratios of the run medians) for user; "
        "95% confidence intervals"
    )
