"""attack16 D and E: every row names what it computes (the ratio of means of constant or zero-centred
samples printed the medians under a "ratio of means" header), and a change relative to a negative
baseline centre is not given (it read ``-0.52 -> 5.00 +1052% slower``): the difference of the means with
Welch's interval is, checked against scipy."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

from support.cli import run_abstat as abstat


def _write(path, values):
    path.write_text("".join(f"{float(v)!r}\n" for v in values))
    return str(path)


@pytest.mark.parametrize(
    ("baseline", "candidate", "shown"),
    [
        ([5.0] * 30, [0.0] * 30, ("5", "0")),  # both constant: the means are the values
        ([0.0] * 30, [0.0, 1.0] * 19 + [1.0, 1.0], ("0", "0.5250")),  # zero baseline: 21/40 = 0.525
    ],
)
def test_a_ratio_of_means_row_shows_the_means(tmp_path, baseline, candidate, shown):
    out = abstat("compare", _write(tmp_path / "a", baseline), _write(tmp_path / "b", candidate)).stdout
    assert "ratio of means" in out
    row = next(line for line in out.splitlines() if "→" in line)
    label, before, _, after = row.split()[:4]
    assert (label, before, after) == ("mean", *shown)


def test_a_negative_baseline_mean_gives_no_relative_change_but_the_difference(tmp_path):
    rng = np.random.default_rng(16)
    neg, five = -rng.random(30), np.full(30, 5.0)
    out = abstat("compare", _write(tmp_path / "neg", neg), _write(tmp_path / "five", five)).stdout
    row = next(line for line in out.splitlines() if "→" in line)
    assert row.split()[0] == "mean" and "cannot judge" in row and "%" not in row and "slower" not in row
    assert f"the baseline mean is negative ({neg.mean():.6g}), so a relative change is undefined" in out
    found = re.search(r"difference of the means is (\S+) \[(\S+), (\S+)\]", out)
    assert found
    welch = stats.ttest_ind(five, neg, equal_var=False).confidence_interval(0.95)
    expected = (five.mean() - neg.mean(), welch.low, welch.high)
    assert [float(v) for v in found.groups()] == pytest.approx(expected, rel=1e-3)


def test_a_negative_baseline_median_gives_no_relative_change(tmp_path):
    rng = np.random.default_rng(17)
    neg, other = -rng.random(31), rng.random(31)
    out = abstat("compare", "--center", "median", _write(tmp_path / "n", neg), _write(tmp_path / "o", other)).stdout
    assert f"the baseline median is negative ({np.median(neg):.6g})" in out and "%" not in out.splitlines()[1]


def test_a_positive_baseline_keeps_its_relative_change(tmp_path):
    rng = np.random.default_rng(18)
    base, other = 10 + rng.random(30), -rng.random(30)
    out = abstat("compare", _write(tmp_path / "b", base), _write(tmp_path / "o", other)).stdout
    expected = 100 * (other.mean() / base.mean() - 1)
    assert re.search(r"mean\s+\S+ → \S+\s+([-+][\d.]+)%", out).group(1) == f"{expected:+.1f}"
