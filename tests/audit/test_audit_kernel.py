"""``abstat audit`` of what kernel developers paste: perf stat -r blocks, the kernel test robot's
%stddev %change tables, mmtests compare-kernels tables, mean (sd) tables, per-run tables.

References: scipy.stats.ttest_ind_from_stats (equal_var=False) on the numbers converted as the text
defines them (perf's ± is the standard error of the mean: sd = ± x sqrt(N)), scipy.stats.ttest_ind on
per-run columns; genuine perf outputs (tests/data/kernel) and a kernel test robot table from a public
archive (tests/data/audit_kernel, source named in its README)."""

from __future__ import annotations

import math
import os
import re
import statistics
import subprocess
import sys

import pytest
from scipy import stats

from abstat.audit import audit_text
from support import paths

HERE = str(paths.TESTS)
KERNEL = os.path.join(HERE, "data", "kernel")
ARCHIVE = os.path.join(HERE, "data", "audit_kernel")
LKP = os.path.join(HERE, "data", "lkp")


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def _kernel_blocks(report, kind):
    return [b for b in report.blocks if b.kind == kind]


def _comparison(block, metric):
    return next(c for c in block.comparisons if c.metric == metric)


def _perf_numbers(text: str, event: str) -> tuple[float, float]:
    for line in text.splitlines():
        if re.search(rf"\s{re.escape(event)}\s", line):
            return float(line.split()[0]), float(line.split("+-")[1].split("%")[0])
    raise AssertionError(event)


def test_perf_stat_r10_pair_recomputes_welch_as_scipy_does():
    before, after = (
        _read(os.path.join(KERNEL, "perf_stat_r10_true.txt")),
        _read(os.path.join(KERNEL, "perf_stat_r10_sleep.txt")),
    )
    report = audit_text("Before:\n" + before + "\nAfter:\n" + after)
    [block] = _kernel_blocks(report, "perf-stat")
    for event in ("task-clock", "page-faults"):
        comparison = _comparison(block, event)
        assert (comparison.baseline, comparison.candidate) == ("Before", "After")
        (m1, p1), (m2, p2) = _perf_numbers(before, event), _perf_numbers(after, event)
        sd1, sd2 = m1 * p1 / 100 * math.sqrt(10), m2 * p2 / 100 * math.sqrt(10)
        reference = stats.ttest_ind_from_stats(m2, sd2, 10, m1, sd1, 10, equal_var=False)
        assert comparison.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)
        assert comparison.judgement.welch["t"] == pytest.approx(reference.statistic, rel=1e-9)
        assert any("standard error of the mean" in f.message for f in comparison.findings)
    # the other ± form: "m +- s seconds time elapsed", s the standard error itself
    elapsed = _comparison(block, "seconds-time-elapsed")
    (m1, s1), (m2, s2) = [
        tuple(float(x) for x in re.search(r"([\d.]+) \+- ([\d.]+) seconds", t).groups()) for t in (before, after)
    ]
    reference = stats.ttest_ind_from_stats(m2, s2 * math.sqrt(10), 10, m1, s1 * math.sqrt(10), 10, equal_var=False)
    assert elapsed.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)


def test_perf_blocks_are_paired_by_their_labels_not_their_order():
    before, after = (
        _read(os.path.join(KERNEL, "perf_stat_r10_true.txt")),
        _read(os.path.join(KERNEL, "perf_stat_r10_sleep.txt")),
    )
    report = audit_text("with the patch:\n" + after + "\nwithout the patch:\n" + before)
    comparison = _comparison(_kernel_blocks(report, "perf-stat")[0], "task-clock")
    assert comparison.baseline == "without the patch" and comparison.recomputed_values["percent"] > 0


def test_a_multi_counter_block_alone_and_an_unreadable_block_are_named():
    one = audit_text(_read(os.path.join(KERNEL, "perf_stat_r5.txt")))
    [block] = _kernel_blocks(one, "perf-stat")
    assert any(f.code == "single_block" for f in block.findings) and block.comparisons == []
    assert len(block.datasets) == 4  # task-clock, context-switches, page-faults, time elapsed
    broken = audit_text(" Performance counter stats for './bench' (10 runs):\n\n   garbled )( +- 3\n\nprose after it\n")
    [block] = _kernel_blocks(broken, "perf-stat")
    assert any(f.code == "unreadable" for f in block.findings) and block.comparisons == []


def test_lkp_table_from_the_archive_is_consistent_and_not_judged_without_runs():
    report = audit_text(_read(os.path.join(ARCHIVE, "lkp_will_it_scale_brk2.txt")))
    [block] = _kernel_blocks(report, "lkp")
    assert len(block.comparisons) == 11 and block.consistent is True and report.exit_status == 0
    assert all(c.consistent for c in block.comparisons)
    assert all(c.judgement is None and any("not judged" in f.message for f in c.findings) for c in block.comparisons)
    absolute = _comparison(block, "mpstat.cpu.all.soft%")  # a percentage metric: the change is a difference
    assert absolute.printed_values["change"] == -7.2


def test_lkp_table_with_a_wrong_change_is_inconsistent():
    text = _read(os.path.join(ARCHIVE, "lkp_will_it_scale_brk2.txt")).replace("-18.3%", "-28.3%")
    report = audit_text(text)
    [block] = _kernel_blocks(report, "lkp")
    assert _comparison(block, "vmstat.system.cs").consistent is False
    assert block.consistent is False and report.exit_status == 1


def test_an_lkp_mean_beyond_every_double_is_inconsistent_not_a_crash():
    """Found by the equivalence corpus of issue 37: a digit turned into ``e`` made ``31e9993515``, whose last
    digit's half unit (10 ** 9993515) overflowed a double and the audit ended in an internal error."""
    lines = _read(os.path.join(ARCHIVE, "lkp_will_it_scale_brk2.txt")).splitlines()
    [row] = [i for i, line in enumerate(lines) if line.rstrip().endswith("vmstat.system.cs")]
    lines[row] = re.sub(r"(\s)(\d+)(\s+\S*\s+)(\d)(\d*)", r"\1\2\3\4e999\5", lines[row], count=1)
    report = audit_text("\n".join(lines) + "\n")
    [block] = _kernel_blocks(report, "lkp")
    assert _comparison(block, "vmstat.system.cs").consistent is False
    assert report.exit_status == 1


def test_lkp_rows_with_stddev_and_runs_stated_are_judged_as_scipy_does():
    text = (
        "Each commit was tested 4 runs.\n\n"
        "     %stddev     %change         %stddev\n"
        "         \\          |                \\\n"
        "    129489 ±  3%     +94.7%     252151 ±  2%  will-it-scale.per_process_ops\n"
        "      7732 ± 10%      -4.3%       7400 ±  8%  vmstat.system.cs\n"
    )
    [block] = _kernel_blocks(audit_text(text), "lkp")
    for metric, (m1, p1, m2, p2) in {
        "will-it-scale.per_process_ops": (129489, 3, 252151, 2),
        "vmstat.system.cs": (7732, 10, 7400, 8),
    }.items():
        comparison = _comparison(block, metric)
        # LKP's ± is %d of the population sd in percent of the mean: [p, p + 1), taken as p + 0.5
        sd1, sd2 = (m * (p + 0.5) / 100 * math.sqrt(4 / 3) for m, p in ((m1, p1), (m2, p2)))
        reference = stats.ttest_ind_from_stats(m2, sd2, 4, m1, sd1, 4, equal_var=False)
        assert comparison.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)
    verdicts = [f.message for c in block.comparisons for f in c.findings if f.code == "verdict"]
    assert verdicts[0].startswith("verdict: DIFFERENCE") and verdicts[1].startswith("verdict: no difference")


MMTESTS = """\
Five iterations per kernel.

                                  6.8.0                  6.8.0
                                vanilla                patched
Amean     elapsed-2         1.4150 (   0.00%)      1.3900 *   1.77%*
Amean     elapsed-4         0.8100 (   0.00%)      0.8200 (  -1.23%)
Stddev    elapsed-2         0.0100 (   0.00%)      0.0150 ( -50.00%)
Stddev    elapsed-4         0.0200 (   0.00%)      0.0150 (  25.00%)
Hmean     tput-1        12345.67 (   0.00%)    13000.00 *   5.30%*
CoeffVar  tput-1            2.00 (   0.00%)        1.00 (  50.00%)
"""


def test_mmtests_table_uses_stddev_rows_runs_from_prose_and_gain_percentages():
    [block] = _kernel_blocks(audit_text(MMTESTS.replace("Five iterations", "5 iterations")), "mmtests")
    assert block.consistent is True
    comparison = _comparison(block, "Amean elapsed-2")
    reference = stats.ttest_ind_from_stats(1.39, 0.015, 5, 1.415, 0.01, 5, equal_var=False)
    assert comparison.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)
    tput = _comparison(block, "Hmean tput-1")  # sd from CoeffVar x mean
    reference = stats.ttest_ind_from_stats(13000, 130, 5, 12345.67, 246.9134, 5, equal_var=False)
    assert tput.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-5)


def test_mmtests_without_runs_is_not_judged_and_a_wrong_percentage_is_found():
    [block] = _kernel_blocks(audit_text(MMTESTS), "mmtests")
    assert any(f.code == "runs_unknown" for f in block.findings)
    assert all(c.judgement is None for c in block.comparisons)
    [bad] = _kernel_blocks(audit_text(MMTESTS.replace("*   1.77%*", "*   7.77%*")), "mmtests")
    assert _comparison(bad, "Amean elapsed-2").consistent is False


def test_mean_sd_table_with_standard_deviation_prose_is_judged_not_called_spreadless():
    text = (
        "stress-ng results, the mean (standard deviation) of 10 runs:\n\n"
        "              base             patched\n"
        "cpu          1351.76 (12.3)    1400.10 (10.9)\n"
        "vm            802.00 ± 5.5      799.30 ± 6.1\n"
    )
    report = audit_text(text)
    [block] = _kernel_blocks(report, "mean-sd")
    assert not [b for b in report.blocks if b.kind == "averages"]  # no "no spread" claim
    cpu = _comparison(block, "cpu")
    reference = stats.ttest_ind_from_stats(1400.10, 10.9, 10, 1351.76, 12.3, 10, equal_var=False)
    assert cpu.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)
    assert _comparison(block, "vm").judgement is not None


def test_kernbench_blocks_are_paired_with_n_from_their_run_lines():
    output = _read(os.path.join(LKP, "kernbench_01"))
    report = audit_text("Before:\n" + output + "\nAfter:\n" + output.replace("28.094", "27.500"))
    [block] = _kernel_blocks(report, "mean-sd")
    elapsed = _comparison(block, "Elapsed Time")
    assert elapsed.judgement is not None
    reference = stats.ttest_ind_from_stats(27.5, 0.182565, 5, 28.094, 0.182565, 5, equal_var=False)
    assert elapsed.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)


PER_RUN = """\
run   base   patched
1     10.2   9.8
2     10.4   9.9
3     10.1   9.7
4     10.3   9.6
avg   10.25  9.75
"""


def test_per_run_table_compares_columns_not_runs():
    report = audit_text(PER_RUN)
    [block] = _kernel_blocks(report, "per-run")
    assert not [b for b in report.blocks if b.kind == "averages"]
    [comparison] = block.comparisons
    reference = stats.ttest_ind([9.8, 9.9, 9.7, 9.6], [10.2, 10.4, 10.1, 10.3], equal_var=False)
    assert comparison.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)
    assert block.consistent is not False
    bad = audit_text(PER_RUN.replace("avg   10.25", "avg   10.45"))
    assert bad.exit_status == 1 and any(f.code == "inconsistent" for f in _kernel_blocks(bad, "per-run")[0].findings)


def test_cli_text_and_json_name_every_kernel_block(tmp_path):
    path = tmp_path / "mail.txt"
    path.write_text(_read(os.path.join(ARCHIVE, "lkp_will_it_scale_brk2.txt")) + "\n\n" + PER_RUN)
    out = subprocess.run(
        [sys.executable, "-m", "abstat", "audit", str(path)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "kernel test robot table" in out.stdout and "per-run table" in out.stdout and "verdict" in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "abstat", "audit", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and '"kind": "lkp"' in out.stdout and '"kind": "per-run"' in out.stdout


def test_the_archive_table_with_collapsed_spaces_reads_the_same():
    wide = _kernel_blocks(audit_text(_read(os.path.join(ARCHIVE, "lkp_will_it_scale_brk2.txt"))), "lkp")[0]
    narrow = _kernel_blocks(audit_text(_read(os.path.join(ARCHIVE, "lkp_will_it_scale_brk2_collapsed.txt"))), "lkp")[0]
    assert [(c.metric, c.printed_values) for c in narrow.comparisons] == [
        (c.metric, c.printed_values) for c in wide.comparisons
    ]
    assert narrow.consistent is True


def _verbose_runs(text: str, event: str) -> list[float]:
    """The per-run counts ``perf stat -v -r N`` prints before its summary (``page-faults: 48 712281 712281``)."""
    return [float(line.split()[1]) for line in text.splitlines() if line.startswith(event + ":")]


def test_perf_plus_minus_is_the_standard_error_checked_against_perfs_own_per_run_counts():
    """perf -v prints every run's count in the same invocation: the sd the audit derives from the printed
    ± (x/100 * mean * sqrt(N)) is the runs' sample standard deviation, up to the printing's rounding."""
    before = _read(os.path.join(KERNEL, "perf_stat_v_r10_sh_true.txt"))
    after = _read(os.path.join(KERNEL, "perf_stat_v_r10_sh_ls.txt"))
    report = audit_text(before + "\n" + after)
    [block] = _kernel_blocks(report, "perf-stat")
    for side, text in ((0, before), (1, after)):
        for event in ("page-faults",):  # -v's context-switches are read before perf's final count: not comparable
            runs = _verbose_runs(text, event)
            assert len(runs) == 10
            dataset = next(
                d for d in block.datasets if d["metric"] == event and str(d["name"]).startswith(f"block {side + 1}")
            )
            assert dataset["n"] == 10
            assert abs(dataset["avg"] - statistics.fmean(runs)) <= 1.0  # perf prints the mean as a whole count
            assert dataset["stddev"] == pytest.approx(statistics.stdev(runs), rel=0.05)
    comparison = _comparison(block, "page-faults")
    reference = stats.ttest_ind(
        _verbose_runs(after, "page-faults"), _verbose_runs(before, "page-faults"), equal_var=False
    )
    assert comparison.judgement.welch["t"] == pytest.approx(reference.statistic, rel=0.05)


@pytest.mark.parametrize(
    "text",
    [
        "cpu " + "1234567 (12345) " * 3000 + "x",
        "cpu " + "1234567 ± 12345 " * 3000 + "x",
        "%stddev %change %stddev\n" + "1 ± 2% " * 3000,
    ],
)
def test_long_hostile_rows_are_read_in_linear_time_not_backtracked(text):
    """Such a row once sent the mean (sd) regular expression into exponential backtracking (12 cells:
    minutes); read cell by cell it is refused at once (no time is measured here: it just ends)."""
    report = audit_text(text)
    assert all(not b.comparisons for b in report.blocks)
    wide = audit_text("Amean x " + "1234567 (  1.00%) " * 3000 + "x")  # a valid row of 3000 columns
    [block] = _kernel_blocks(wide, "mmtests")
    assert len(block.comparisons) == 2999 and all(c.judgement is None for c in block.comparisons)


def test_runs_listed_one_per_line_are_compared_by_their_headings():
    before, after = [0.512, 0.498, 0.505, 0.521, 0.509], [0.471, 0.466, 0.480, 0.475, 0.469]
    text = (
        "with the patch:\n"
        + "".join(f"Time: {v:.3f}\n" for v in after)
        + "\nwithout the patch:\n"
        + "".join(f"Time: {v:.3f}\n" for v in before)
    )
    [block] = _kernel_blocks(audit_text(text), "per-run")
    [comparison] = block.comparisons
    assert (comparison.baseline, comparison.candidate) == ("without the patch", "with the patch")
    reference = stats.ttest_ind(after, before, equal_var=False)
    assert comparison.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)
    # one block alone, or blocks whose lines vary in more than one number, are not compared
    assert not _kernel_blocks(audit_text("".join(f"Time: {v:.3f}\n" for v in before)), "per-run")
    two = "a:\n" + "".join(f"{v} {v * 2}\n" for v in before) + "\nb:\n" + "".join(f"{v} {v * 2}\n" for v in after)
    assert not _kernel_blocks(audit_text(two), "per-run")
