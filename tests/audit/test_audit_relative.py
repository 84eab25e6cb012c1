"""attack17 2: the audit's own Welch line never gives a relative change against a baseline mean at or below 0,
or one not clearly away from 0 (it printed ``+19.7%, 95% interval -33.9% .. -7.24%`` for averages -9.12 ->
-10.92, and ``-5.47e+04%`` beside an absolute interval for a baseline average of 0.02): the estimate and its
interval are then both the difference of the means, with the reason, as compare says it.  Against scipy."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy import stats

from abstat.audit.judge import judge
from support.cli import run_abstat


def _welch(nb, ab, sb, nc, ac, sc, confidence=0.95):
    """Welch's interval of the difference of the means (scipy's t quantile and Welch-Satterthwaite df)."""
    vb, vc = sb * sb / nb, sc * sc / nc
    df = (vb + vc) ** 2 / (vb * vb / (nb - 1) + vc * vc / (nc - 1))
    half = stats.t.ppf(0.5 + confidence / 2, df) * math.sqrt(vb + vc)
    return ac - ab - half, ac - ab + half, df


def _fieller_pct(nb, ab, sb, nc, ac, sc, df, confidence=0.95):
    """Fieller's interval of ac / ab - 1 in percent: the roots of (ac - r ab)^2 = q^2 (vc + r^2 vb) (numpy)."""
    q = stats.t.ppf(0.5 + confidence / 2, df)
    vb, vc = sb * sb / nb, sc * sc / nc
    roots = np.roots([ab * ab - q * q * vb, -2 * ab * ac, ac * ac - q * q * vc])
    return sorted(100 * (roots.real - 1))


def _welch_line(result):
    return next(f.message for f in result.findings if f.code == "welch")


def test_a_negative_baseline_mean_gives_the_difference_and_its_interval():
    vitals = (5, -9.12, 0.73959448, 5, -10.92, 0.76941536)  # attack17's r3.txt
    result = judge(*vitals, threshold_pct=5.0)
    low, high, _ = _welch(*vitals)
    assert result.percent is None and result.welch["ci_pct"] is None and result.detectable_change_pct is None
    assert result.welch["ci"] == pytest.approx([low, high], rel=1e-9)
    line = _welch_line(result)
    assert f"the difference of the means is -1.8, 95% interval {low:+.6g} .. {high:+.6g}" in line
    assert "the baseline mean is negative (-9.12), so a relative change is undefined" in line
    assert "%," not in line and not re.search(r"[-+][\d.]+%", line)
    assert result.threshold_verdict is None
    assert [f.code for f in result.findings if f.code.startswith("threshold")] == ["threshold_undefined"]


def test_a_baseline_mean_not_clearly_away_from_0_gives_the_difference():
    vitals = (5, 0.02, 0.77588659, 5, -10.92, 0.76941536)  # attack17's r4.txt
    nb, ab, sb = vitals[:3]
    assert abs(ab) / (sb / math.sqrt(nb)) < stats.t.ppf(0.975, _welch(*vitals)[2])  # 0 in its own interval
    result = judge(*vitals)
    low, high, _ = _welch(*vitals)
    line = _welch_line(result)
    assert result.percent is None and result.welch["ci_pct"] is None
    assert f"the difference of the means is -10.94, 95% interval {low:+.6g} .. {high:+.6g}" in line
    assert "the baseline mean (0.02) is not clearly away from 0" in line and "%," not in line


@pytest.mark.parametrize(
    "vitals",
    [(5, 9.12, 0.74, 5, 10.92, 0.77), (5, 9.12, 0.74, 5, -1.0, 0.77), (30, 1.0, 1.5, 30, 2.0, 1.0)],
)
def test_a_positive_baseline_keeps_a_relative_change_inside_its_interval(vitals):
    nb, ab, sb, nc, ac, sc = vitals
    result = judge(*vitals, threshold_pct=5.0)
    low, high = _fieller_pct(*vitals, _welch(*vitals)[2])
    assert result.percent == pytest.approx(100 * (ac / ab - 1), rel=1e-12)
    assert result.welch["ci_pct"] == pytest.approx([low, high], rel=1e-9)
    assert low < result.percent < high
    assert result.threshold_verdict == ("outside" if low >= 5 or high <= -5 else "undecided")


def test_audit_of_ministats_block_with_a_negative_baseline(tmp_path):
    rng = np.random.default_rng(17)
    for name, centre in (("na", -9.0), ("nb", -11.0)):
        (tmp_path / name).write_text("".join(f"{v:.3f}\n" for v in centre + rng.normal(0, 0.7, 5)))
    report = run_abstat("ministat", "na", "nb", cwd=tmp_path, check=True).stdout
    (tmp_path / "r.txt").write_text(report)
    text = run_abstat("audit", "r.txt", cwd=tmp_path).stdout
    line = next(line for line in text.splitlines() if "Welch's t:" in line)
    assert "the baseline mean is negative" in line and not re.search(r"[-+][\d.]+%", line), line
    document = json.loads(run_abstat("audit", "--format", "json", "r.txt", cwd=tmp_path).stdout)
    assert '"ci_pct": null' in json.dumps(document) and '"percent": null' in json.dumps(document)


# attack17 7: ministat's own output on values whose sums overflow or whose squares underflow is what ministat
# prints for them: the audit names the cause and calls nothing inconsistent that real arithmetic gives.
def _audit_ministat(tmp_path, first, second, *options):
    for name, values in (("a", first), ("b", second)):
        (tmp_path / name).write_text("".join(f"{v!r}\n" for v in values))
    report = run_abstat("ministat", *options, "a", "b", cwd=tmp_path, check=True).stdout
    (tmp_path / "r.txt").write_text(report)
    return report, run_abstat("audit", "r.txt", cwd=tmp_path).stdout


@pytest.mark.parametrize(
    "first, second",
    [
        ([1e308, 1.1e308, 1.2e308, 1.3e308], [1.4e308, 1.5e308, 1.6e308, 1.7e308]),  # the sum overflows
        ([1e200, 1.1e200, 1.2e200, 1.3e200], [1.4e200, 1.5e200, 1.6e200, 1.7e200]),  # the squares overflow
    ],
)
def test_an_overflowed_stddev_is_blamed_on_the_overflow(tmp_path, first, second):
    with np.errstate(over="ignore"):
        assert np.isinf(np.sum(np.square(np.asarray(first))))  # numpy: ministat's sum of squares is inf
    report, text = _audit_ministat(tmp_path, first, second, "-A")
    assert "nan" in report
    assert "one-pass variance came out negative" not in text
    assert "its sums overflowed double precision" in text, text


def test_subnormal_values_stddev_0_is_rounding_not_constant(tmp_path):
    first, second = [1e-320, 2e-320, 3e-320, 4e-320], [5e-320, 6e-320, 7e-320, 9e-320]
    assert np.square(np.asarray(first)).max() == 0.0 and np.std(first) == 0.0  # numpy too: the squares underflow
    report, text = _audit_ministat(tmp_path, first, second)
    assert "below the smallest possible" not in text and "INCONSISTENT" not in text, text
    assert "values are constant" not in text
    assert "both stddevs print as 0 though Min is below Max: the spread was lost to rounding" in text


def test_overflowing_vitals_are_not_checkable_not_inconsistent(tmp_path):
    (tmp_path / "r.txt").write_text(
        "x ma\n+ mb\n"
        "    N           Min           Max        Median           Avg        Stddev\n"
        "x   4        1e+308        1e+308        1e+308        1e+308 1.7976931e+308\n"
        "+   4 1.7976931e+308 1.7976931e+308 1.7976931e+308 1.7976931e+308 1.7976931e+308\n"
        "Difference at 95.0% confidence\n\tinf +/- inf\n\tinf% +/- inf%\n\t(Student's t, pooled s = inf)\n"
    )
    text = run_abstat("audit", "r.txt", cwd=tmp_path).stdout
    assert "1 not checkable" in text and "would print" not in text and "[nan" not in text, text
    assert "the vitals overflow double precision" in text


# wave 19 (issue 34): the tables of bare averages and the kernel tools' mean (sd) tables say the same


AVERAGES = (
    "I measured the clock offset and took the average of 5 runs:\n\n"
    "           offset  drift  time\n"
    "baseline:  -9.12   0.00   66.51\n"
    "patched:  -10.92   0.35   63.39\n"
)


def _averages(metric):
    from abstat.audit import audit_text

    (block,) = audit_text(AVERAGES).blocks
    assert block.kind == "averages"
    return next(c for c in block.comparisons if c.metric == metric)


@pytest.mark.parametrize(
    "metric, base, cand, why",
    [
        ("offset", -9.12, -10.92, "the baseline average is negative (-9.12), so a relative change is undefined"),
        ("drift", 0.0, 0.35, "the baseline average is 0, so a relative change is undefined"),
    ],
)
def test_bare_averages_against_a_baseline_at_or_below_0_give_the_difference(metric, base, cand, why):
    from statsmodels.stats.power import TTestIndPower

    comparison = _averages(metric)
    assert comparison.recomputed_values == {"difference": pytest.approx(cand - base, rel=1e-12), "percent": None}
    spread, bound = (f.message for f in comparison.findings)
    assert f"the difference of the averages is {cand - base:+.6g} ({why})" in spread
    assert not re.search(r"[-+][\d.]+%", spread + bound)  # (was "+19.7%" for -9.12 -> -10.92: the wrong sign)
    effect = TTestIndPower().solve_power(effect_size=None, nobs1=5, alpha=0.05, power=0.8, ratio=1.0)
    assert bound.endswith(f"only if the run-to-run stddev is below {abs(cand - base) / effect:.2g}")


def test_bare_averages_against_a_positive_baseline_keep_the_percentage():
    comparison = _averages("time")
    assert comparison.recomputed_values["percent"] == pytest.approx((63.39 - 66.51) / 66.51 * 100, rel=1e-12)
    assert comparison.findings[0].message == (
        f"patched vs baseline (time): {(63.39 - 66.51) / 66.51 * 100:+.3g}% -- significance cannot be judged "
        "without a spread"
    )


def test_a_kernel_mean_sd_table_with_a_negative_baseline_shows_the_difference_beside_welchs_line(tmp_path):
    (tmp_path / "k.txt").write_text(
        "clock offset results, the mean (standard deviation) of 10 runs:\n\n"
        "              base             patched\n"
        "offset        -9.12 (0.74)     -10.92 (0.77)\n"
        "cycles      1351.76 (12.3)    1400.10 (10.9)\n"
    )
    out = run_abstat("audit", "k.txt", cwd=tmp_path).stdout
    low, high, _ = _welch(10, -9.12, 0.74, 10, -10.92, 0.77)
    assert "  offset: patched vs base: -9.12 -> -10.92 (-1.8)\n" in out  # (was "(+19.7%)")
    assert f"the difference of the means is -1.8, 95% interval {low:+.6g} .. {high:+.6g}" in out
    assert f"  cycles: patched vs base: 1351.76 -> 1400.1 ({(1400.10 / 1351.76 - 1) * 100:+.3g}%)\n" in out
