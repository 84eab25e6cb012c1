"""Issue 34 item 9: the default comparison's caption says what is computed.  On tied data (a TSC grid,
integer counts) the Hodges-Lehmann ratio is taken after spreading each level's tied values over its
grid cell, which is not the median of the raw candidate/baseline ratios: the label says so there, and
keeps "median of the candidate/baseline ratios" where that is the number printed.  Checked against the
median of every pairwise ratio formed by brute force, and against tests/support/hl_oracle.py's spread."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from abstat.comparison import compare
from support import hl_oracle

PLAIN = "Hodges-Lehmann ratio (median of the candidate/baseline ratios)"
SPREAD = (
    "Hodges-Lehmann ratio (median of the candidate/baseline ratios after spreading tied values over their grid cells)"
)


def _grid(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """TSC-like values on a grid of 20 (201 and 199 of them: an odd number of pairs, so one middle ratio)."""
    rng = np.random.default_rng(seed)
    return 20 * np.round(rng.normal(440, 7, 201) / 20), 20 * np.round(rng.normal(444, 7, 199) / 20)


def _median_ratio_pct(x: np.ndarray, y: np.ndarray) -> float:
    """The literal median of all candidate/baseline ratios, in percent (an odd count: one middle ratio)."""
    ratios = [b / a for a in x for b in y]
    assert len(ratios) % 2 == 1
    return 100 * (float(np.median(ratios)) - 1)


def test_on_tied_data_the_label_names_the_spread_ties_not_the_median_of_the_ratios():
    x, y = _grid(0)
    c = compare(x, y)
    assert _median_ratio_pct(x, y) == 0.0  # every middle pair is two equal grid values
    assert c.verdict == "slower" and c.ci_pct[0] > 0  # yet abstat prints a significant +0.36%
    assert c.delta_pct != pytest.approx(0.0, abs=0.1)
    # what is printed is the median ratio of the tie-spread values, and the label says that
    assert c.delta_pct == pytest.approx(hl_oracle.hl_ratio_pct(x, y), rel=1e-9)
    assert c.estimand == "hl_ratio" and c.estimand_label == SPREAD
    assert c.to_dict()["estimand_label"] == SPREAD


@pytest.mark.parametrize("seed", [1, 2])
def test_on_untied_data_the_estimate_is_the_median_ratio_and_the_label_is_kept(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.lognormal(0, 0.05, 41) * 1000, rng.lognormal(0.01, 0.05, 39) * 1000
    assert np.unique(x).size == x.size and np.unique(y).size == y.size
    c = compare(x, y)
    assert c.delta_pct == pytest.approx(_median_ratio_pct(x, y), rel=1e-9)
    assert c.estimand_label == PLAIN and "spread" not in c.method


def test_a_constant_side_beside_an_untied_one_spreads_nothing_and_keeps_the_label():
    rng = np.random.default_rng(3)
    x, y = np.full(9, 1000.0), rng.normal(1010, 5, 11)
    c = compare(x, y)
    assert c.delta_pct == pytest.approx(_median_ratio_pct(x, y), rel=1e-9)
    assert c.estimand_label == PLAIN and "spread" not in c.method


def test_tied_run_medians_say_so_too():
    rng = np.random.default_rng(4)
    runs = [[list(20 * np.round(rng.normal(m, 7, 15) / 20)) for _ in range(9)] for m in (440, 445)]
    c = compare(runs[0], runs[1])
    assert c.unit == "runs" and c.estimand == "hl_ratio"
    assert c.estimand_label == (
        "Hodges-Lehmann ratio (median of the candidate/baseline ratios of the run medians after spreading tied "
        "values over their grid cells)"
    )


FORMATS = [
    ("compare", "text"),
    ("compare", "markdown"),
    ("compare", "json"),
    ("compare", "github"),
    ("report", "text"),
    ("report", "markdown"),
    ("report", "json"),
    ("report", "html"),
]


@pytest.mark.parametrize("command,fmt", FORMATS)
def test_every_format_prints_the_tied_label_beside_the_spread_estimate(abstat_cli, tmp_path, command, fmt):
    x, y = _grid(0)
    for name, values in (("a.txt", x), ("b.txt", y)):
        (tmp_path / name).write_text("\n".join(f"{v:g}" for v in values) + "\n")
    out = abstat_cli(command, "--format", fmt, "a.txt", "b.txt").stdout
    assert PLAIN not in out.replace("&#x27;", "'")
    assert SPREAD in out.replace("&#x27;", "'")
    if command == "compare" and fmt == "json":
        (comparison,) = json.loads(out)["comparisons"]
        assert comparison["estimand_label"] == SPREAD
        assert math.isclose(comparison["delta_pct"], hl_oracle.hl_ratio_pct(x, y), rel_tol=1e-9)
    if command == "compare" and fmt == "text":
        assert f"{compare(x, y).delta_pct:+.2f}%" in out
