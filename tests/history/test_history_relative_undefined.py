"""attack17 1: a change against a level at or below 0, or one not clearly away from 0, has no relative size.
History printed ``-9.98 -> -11.91  -19.3%`` (and ``+19.3%`` on the HTML figure) and ``-0.0053 -> 1.04  +19610%
[+17620, +21600]`` (an interval that ignored the level's own uncertainty).  As compare says of a baseline
centre, every format now gives no percentage, the difference of the levels in the data's unit and the reason;
checked against numpy and scipy on the two halves (single-sample revisions: equal weights; seeds where no spike
is clipped: the levels are the halves' means)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

from support.cli import run_abstat

SIGNED_PERCENT = re.compile(r"[-+]\d[\d.,]*%")  # a relative change (the settings' "0%", "(95%)" are unsigned)


def _csv(values):
    return "rev,wall\n" + "".join(f"r{i:02d},{float(v)!r}\n" for i, v in enumerate(values))


def _history(values, *options, fmt="text"):
    done = run_abstat("history", "--input", "-", "--no-state", "--format", fmt, *options, stdin=_csv(values))
    assert done.returncode == 0, done.stderr
    return done.stdout


def _halves(seed, first, second, noise=0.1, n=30):
    rng = np.random.default_rng(seed)
    return np.r_[first + rng.normal(0, noise, n), second + rng.normal(0, noise, n)]


def _step(values):
    """The least-squares step at the middle beside a level and a common slope: the decision's model when both
    sides have 10 revisions and the residuals are not serially correlated (numpy, not abstat)."""
    index = np.arange(values.size)
    design = np.column_stack([np.ones(values.size), index / (values.size - 1) * 2 - 1, index >= values.size // 2])
    return np.linalg.lstsq(design.astype(float), values, rcond=None)[0][2]


def _numbers(text):
    return [float(v) for v in text]


def test_a_negative_level_gives_the_difference_in_every_format():
    values = _halves(5, -10.0, -12.0)
    before, after = values[:30], values[30:]
    document = json.loads(_history(values, fmt="json"))
    series = document["series"][0]
    change = series["change_points"][0]
    assert (change["rev"], change["relative"], change["relative_low"], change["relative_high"]) == ("r30", *[None] * 3)
    assert change["before"] == pytest.approx(before.mean(), abs=1e-9)
    welch = stats.ttest_ind(after, before, equal_var=False).confidence_interval(0.95)
    # the change's interval holds Welch's (it also allows for the change's location)
    assert change["shift_low"] <= welch.low < welch.high <= change["shift_high"]
    assert change["shift"] == pytest.approx(_step(values), rel=1e-9)
    note = next(n["message"] for n in series["notes"] if n["code"] == "relative-undefined")
    assert note.startswith(
        f"r30: the level before is negative ({before.mean():.6g}), so a relative change is undefined"
    )
    found = re.search(r"the difference of the levels is (\S+) \[(\S+), (\S+)\] \(95%\)$", note)
    assert _numbers(found.groups()) == pytest.approx([change["shift"], change["shift_low"], change["shift_high"]], 1e-3)

    text = _history(values)
    row = next(line for line in text.splitlines() if line.lstrip().startswith("r30"))
    shown = re.search(r"(-\S+) \[(-\S+), (-\S+)\] \(difference\)", row)
    assert _numbers(shown.groups()) == pytest.approx([change["shift"], change["shift_low"], change["shift_high"]], 1e-3)
    assert "note: r30: the level before is negative" in text
    for fmt in ("text", "markdown", "html"):
        shown = text if fmt == "text" else _history(values, fmt=fmt)
        assert not SIGNED_PERCENT.search(shown), (fmt, SIGNED_PERCENT.search(shown))
        assert "so a relative change is undefined" in shown and "(difference)" in shown


def test_a_level_not_clearly_away_from_0_gives_the_difference_and_the_level_interval():
    values = _halves(9, 0.0, 1.0)
    before = values[:30]
    low, high = stats.t.interval(0.95, 29, before.mean(), stats.sem(before))
    assert before.mean() > 0 and low < 0 < high  # the case: a positive level whose interval spans 0
    text = _history(values)
    assert not SIGNED_PERCENT.search(text), text
    found = re.search(
        r"the level before \((\S+)\) is not clearly away from 0 \(its interval (\S+) \.\. (\S+)\), "
        r"so a relative change is undefined; the difference of the levels is (\S+) \[(\S+), (\S+)\]",
        text,
    )
    assert found, text
    level, level_low, level_high, shift, shift_low, shift_high = _numbers(found.groups())
    assert [level, level_low, level_high] == pytest.approx([before.mean(), low, high], rel=1e-3)
    assert shift == pytest.approx(_step(values), rel=1e-3)
    assert shift_low < shift < shift_high
    html = _history(values, fmt="html")
    assert not SIGNED_PERCENT.search(html) and "not clearly away from 0" in html


def test_a_level_clearly_above_0_keeps_its_relative_change():
    values = _halves(5, 0.5, 1.5)
    before = values[:30]
    assert stats.t.interval(0.95, 29, before.mean(), stats.sem(before))[0] > 0
    change = json.loads(_history(values, fmt="json"))["series"][0]["change_points"][0]
    assert change["relative"] == pytest.approx(change["shift"] / before.mean(), rel=1e-9)
    assert change["relative"] == pytest.approx(_step(values) / before.mean(), rel=1e-9)
    assert [change["relative_low"], change["relative_high"]] == pytest.approx(
        [change["shift_low"] / before.mean(), change["shift_high"] / before.mean()], rel=1e-9
    )
    row = next(line for line in _history(values).splitlines() if line.lstrip().startswith("r30"))
    shown = re.search(r"(\+[\d.]+)% \[(\+[\d.]+), (\+[\d.]+)\]", row)
    expected = [100 * change[key] for key in ("relative", "relative_low", "relative_high")]
    assert _numbers(shown.groups()) == pytest.approx(expected, abs=0.51), row


def test_min_change_does_not_call_a_change_against_a_negative_level_small():
    """A percentage of a negative level cannot be below the practical floor: the change is reported, not listed
    as small (it was: -19% against --min-change 50%)."""
    values = _halves(5, -10.0, -12.0)
    series = json.loads(_history(values, "--min-change", "50", fmt="json"))["series"][0]
    assert [c["rev"] for c in series["change_points"]] == ["r30"] and series["small_changes"] == []
    assert any(n["code"] == "relative-undefined" for n in series["notes"])
