"""attack18 L1: plan sized 17 samples to detect 5% of a negative mean, a change abstat compare never judges
(it says a relative change is undefined there).  plan now refuses with compare's own reason.  Reference:
compare's note on the same pilot data."""

from __future__ import annotations

import re

import pytest

from support.cli import run_abstat

NEGATIVE = [-100, -101, -99, -100.5, -99.5, -102, -98, -100]


def _files(tmp_path):
    base, cand = tmp_path / "a.txt", tmp_path / "b.txt"
    base.write_text("\n".join(map(str, NEGATIVE)) + "\n")
    cand.write_text("\n".join(str(v - 10) for v in NEGATIVE) + "\n")
    return base, cand


@pytest.mark.parametrize(
    "args",
    [
        ["a=10:-100:5", "b=10:-100:5", "--detect", "5%"],
        ["a=10:-100:5", "b=10:-100:5", "--detect", "5"],
        ["a=10:0:5", "b=10:0:5", "--detect", "5%"],
        ["FILE", "--detect", "5%"],
        ["FILE", "--detect", "5%", "--center", "median"],
        ["FILE", "--detect", "5%", "--center", "mean"],
    ],
)
def test_plan_refuses_a_level_at_or_below_zero_for_compares_reason(tmp_path, args):
    base, cand = _files(tmp_path)
    run = run_abstat("plan", *[str(base) if a == "FILE" else a for a in args])
    assert run.returncode == 2 and "samples per variant" not in run.stdout
    assert re.search(
        r"the baseline (mean|centre) is (negative \(-100\)|0), so a relative change is undefined", run.stderr
    )
    compared = run_abstat("compare", f"a={base}", f"b={cand}", "--center", "mean")
    assert "the baseline mean is negative (-100), so a relative change is undefined" in compared.stdout


def test_a_positive_level_is_still_planned():
    run = run_abstat("plan", "a=10:100:5", "b=10:100:5", "--detect", "5%")
    assert run.returncode == 0 and "samples per variant (b vs a): 17" in run.stdout  # statsmodels: 16.7 -> 17
