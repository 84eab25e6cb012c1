"""The kernel test robot's table with the per-run values the mail quotes: the test is recomputed from the
values (scipy.stats.ttest_ind, Welch), and the table's printed means, ± and changes are checked against
them as LKP's lib/compare.rb prints them (means %d-truncated between 1000 and 1e8, ± the population
standard deviation in whole percent, shown only above 2%).

The table is the public report in tests/data/audit_kernel (source in its README); the per-run values
are made up for the test so that LKP would print exactly that table from them."""

from __future__ import annotations

import math
import os
import statistics

import pytest
from scipy import stats

from abstat.audit import audit_text
from support import paths

TABLE = os.path.join(str(paths.TESTS), "data", "audit_kernel", "lkp_will_it_scale_brk2.txt")
BASE_OPS = [129000, 129500, 129800, 129657]
NEW_OPS = [251000, 252500, 252800, 252305]
BASE_CS = [7700, 7760, 7740, 7730]
NEW_CS = [6300, 6330, 6320, 6323]


def _mail(base_ops=BASE_OPS, base_cs=BASE_CS) -> str:
    with open(TABLE) as handle:
        table = handle.read()

    def array(values):
        return "\n".join(f"    {v}," for v in values[:-1]) + f"\n    {values[-1]}"

    return (
        table + "\n\nThe per-run values, from matrix.json:\n\n"
        f'ec81deb6b769dc1b:\n  "will-it-scale.per_process_ops": [\n{array(base_ops)}\n  ],\n\n'
        f'6e553c6bcb7746abad29ce63e0c:\n  "will-it-scale.per_process_ops": [\n{array(NEW_OPS)}\n  ],\n\n'
        "vmstat.system.cs:\n"
        f"  ec81deb6b7: {' '.join(map(str, base_cs))}\n"
        f"  6e553c6bcb: {' '.join(map(str, NEW_CS))}\n"
    )


def _lkp(report):
    [block] = [b for b in report.blocks if b.kind == "lkp"]
    return block


def _comparison(block, metric):
    return next(c for c in block.comparisons if c.metric == metric)


def test_the_values_are_laid_out_so_that_lkp_would_print_the_table():
    # the reference side of the test: LKP's formats applied to the values by hand
    assert [math.trunc(statistics.fmean(v)) for v in (BASE_OPS, NEW_OPS, BASE_CS, NEW_CS)] == [
        129489,
        252151,
        7732,
        6318,
    ]
    assert all(100 * statistics.pstdev(v) / statistics.fmean(v) <= 2 for v in (BASE_OPS, NEW_OPS, BASE_CS, NEW_CS))
    change = 100 * (statistics.fmean(NEW_OPS) - statistics.fmean(BASE_OPS)) / statistics.fmean(BASE_OPS)
    assert f"{change:+.1f}%" == "+94.7%"


@pytest.mark.parametrize(
    "metric, base, new", [("will-it-scale.per_process_ops", BASE_OPS, NEW_OPS), ("vmstat.system.cs", BASE_CS, NEW_CS)]
)
def test_welch_is_recomputed_from_the_per_run_values_as_scipy_does(metric, base, new):
    report = audit_text(_mail())
    block = _lkp(report)
    comparison = _comparison(block, metric)
    reference = stats.ttest_ind(new, base, equal_var=False)
    assert comparison.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)
    assert comparison.judgement.welch["t"] == pytest.approx(reference.statistic, rel=1e-9)
    assert comparison.consistent is True and block.consistent is True and report.exit_status == 0
    assert any("from the 4 per-run values" in f.message for f in comparison.findings)
    assert not any(f.code == "runs_unknown" for f in block.findings)
    # rows without per-run values stay unjudged (N is not stated anywhere)
    assert _comparison(block, "mpstat.cpu.all.soft%").judgement is None


def test_a_printed_mean_that_is_not_the_runs_mean_is_inconsistent():
    report = audit_text(_mail(base_ops=[129000, 129500, 129800, 129757]))  # mean 129514.25: LKP prints 129514
    block = _lkp(report)
    assert any("129489 is not the mean of the runs" in f.message for f in block.findings)
    assert block.consistent is False and report.exit_status == 1


def test_a_spread_lkp_would_have_printed_is_found_missing():
    spread = [7200, 8260, 7740, 7730]  # mean 7732.5, population sd 4.9% of it: LKP prints "± 4%"
    assert math.floor(100 * statistics.pstdev(spread) / statistics.fmean(spread)) == 4
    report = audit_text(_mail(base_cs=spread))
    block = _lkp(report)
    assert any("printed spread (no ±) does not follow" in f.message for f in block.findings)
    assert report.exit_status == 1
