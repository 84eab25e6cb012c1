"""An interval end open at 0 (abstat.stats.hodges_lehmann.OPEN: the test rejects 0 itself, the accepted
changes come as close to 0 as one likes) is written ``(0, +2.3]``, never ``[+0.0, +2.3]``, which would
read as an interval holding 0 beside a significant verdict.  The data: two samples of 50 on a 20-cycle
grid (numpy default_rng(5), draw 76 of N(440, 8) against N(444.4, 8), rounded to the grid)."""

import math

import pytest

from abstat.render.compare_formats import _change, _ci
from abstat.render.units import format_change
from support import paths

DATA = paths.DATA / "report" / "open_end"


@pytest.mark.parametrize(
    ("delta", "ci", "text"),
    [
        (1.049, (1e-298, 2.278), "+1.0% (0, +2.3]"),
        (-1.049, (-2.278, -1e-298), "-1.0% [-2.3, 0)"),
        (1.049, (0.0, 2.278), "+1.0% [0.0, +2.3]"),  # a closed end at 0 stays closed
        (1.049, (0.04, 2.278), "+1.0% [+0.04, +2.3]"),  # an end that rounds to 0: its first digit
        (1.049, (-0.04, 2.278), "+1.0% [-0.04, +2.3]"),  # (never "-0.0": newcomer22's item 11)
    ],
)
def test_an_end_open_at_zero_is_written_open(delta, ci, text):
    assert format_change(delta, ci) == text


def test_the_change_and_ci_columns_split_an_open_interval():
    class Comp:
        delta_pct, ci_pct = 1.049, (1e-298, 2.278)

    assert _change(Comp) == "+1.0%" and _ci(Comp) == "(0, +2.3]"


def test_compare_writes_the_open_end_its_test_decided(abstat_cli):
    import abstat
    import numpy as np

    before, after = (np.loadtxt(DATA / f"{name}.txt") for name in ("before", "after"))
    result = abstat.compare(before, after)
    low, high = result.ci_pct
    assert result.significant and 0.0 < low < 1e-200 < high and math.isfinite(high)
    done = abstat_cli("compare", str(DATA / "before.txt"), str(DATA / "after.txt"))
    assert done.returncode == 0 and "+1.0% (0, +2.3]  slower" in done.stdout, done.stdout
