"""The survey target of issue 39: real performance sections from public archives (tests/data/audit_survey,
sources in each file's first line) are each audited with a verdict, or the reason for none, or named as
unreadable; none is misread.  Expected outcomes were set by reading each section by hand; the values the
audit reads are checked against an independent split of each row."""

from __future__ import annotations

import os
import re

import pytest
from scipy import stats

from abstat.audit import audit_text
from support import paths

SURVEY = os.path.join(str(paths.TESTS), "data", "audit_survey")
RUNS_UNKNOWN = "not judged -- the number of runs is not given"
ONE_RUN = "not judged -- one run on a side"

# file -> (kind of every block found, what the audit must conclude)
EXPECTED = {
    "01_lkp_brk2_quoted.txt": (["lkp"], RUNS_UNKNOWN),
    "02_lkp_brk2_collapsed.txt": (["lkp"], RUNS_UNKNOWN),
    "03_lkp_brk2_one_line.txt": (["unreadable"], "kernel test robot table (rewrapped)"),
    "04_lkp_unixbench_ncompare.txt": (["lkp"], RUNS_UNKNOWN),
    "05_lkp_tinymembench_ncompare.txt": (["lkp"], RUNS_UNKNOWN),
    "06_lkp_schbench_3x.txt": (["lkp"], RUNS_UNKNOWN),
    "07_lkp_schbench_10x.txt": (["lkp"], RUNS_UNKNOWN),
    "08_lkp_fail_runs.txt": (["unreadable"], "kernel test robot fail:runs table"),
    "09_lkp_lmbench_ncompare.txt": (["lkp"], RUNS_UNKNOWN),
    "10_perf_stat_pair_single_runs.txt": (["perf-stat"], ONE_RUN),
    "11_perf_stat_single.txt": (["perf-stat"], "one perf stat block: nothing to compare it with"),
    "12_perf_stat_markdown_escaped.txt": (["perf-stat"], "a perf stat block whose counter lines cannot be read"),
    "13_lmbench_kaiser_decimal_commas.txt": ([], None),
    "14_mdtest_summary_3_iterations.txt": (["unreadable"], "mdtest SUMMARY table"),
    "15_sysbench_freebsd_avg_stddev.txt": (["unreadable"], "sysbench events (avg/stddev)"),
    "16_sysbench_mysql_per_run.txt": (["per-run"], "verdict: DIFFERENCE at 95%"),
    "17_contextswitch_runs_in_rows.txt": ([], None),
    "18_scylla_per_run_median.txt": ([], None),
    "19_schbench_single_output.txt": (["unreadable"], "schbench output"),
    "20_unixbench_kernel_patch_1_sample.txt": (["unreadable"], "UnixBench results"),
    "21_lkp_schbench_stats_csv.txt": (["unreadable"], "LKP stats.csv values"),
    "22_csum_cycles_min_max.txt": ([], None),
    "23_lkp_fail_runs_perf_profile.txt": (["unreadable"], "kernel test robot fail:runs table"),
    "24_wperf_stat_lookalike.txt": (["perf-stat"], "one perf stat block: nothing to compare it with"),
    "25_perf_stat_interval.txt": (["unreadable"], "perf stat -I interval counts"),
    "26_unixbench_kernel_patch_7_samples.txt": (["unreadable"], "UnixBench results"),
    "27_stress_ng_pipe_space_thousands.txt": (["unreadable"], "stress-ng bogo ops table"),
}
JUDGED = {"16_sysbench_mysql_per_run.txt"}


def _text(name: str) -> str:
    with open(os.path.join(SURVEY, name), encoding="utf-8") as handle:
        first, rest = handle.read().split("\n", 1)
    assert first.startswith("# source: http")  # every section names where it was taken from
    return rest


def _messages(block) -> list[str]:
    return [f.message for f in block.findings] + [f.message for c in block.comparisons for f in c.findings]


def test_the_survey_holds_every_file_and_at_least_21_tool_sections():
    files = sorted(f for f in os.listdir(SURVEY) if f.endswith(".txt"))
    assert files == sorted(EXPECTED)
    assert sum(1 for kinds, _ in EXPECTED.values() if kinds) >= 21


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_section_gets_its_verdict_or_is_named_unreadable(name):
    kinds, outcome = EXPECTED[name]
    report = audit_text(_text(name))
    assert [b.kind for b in report.blocks] == kinds
    if not kinds:
        return
    [block] = report.blocks
    messages = _messages(block)
    if block.kind == "unreadable":
        assert block.command == outcome and not block.comparisons and any(outcome in m for m in messages)
        return
    assert any(outcome in m for m in messages)
    if name in JUDGED:
        return
    # no verdict is claimed from numbers the section does not give
    assert all(c.judgement is None for c in block.comparisons)
    assert block.consistent is not False and report.exit_status == 0


def _lkp_rows(text: str) -> dict[str, tuple[float, float, float]]:
    """metric -> (base, printed change, new), by dropping the ± columns and splitting on blanks."""
    rows = {}
    for line in text.splitlines():
        words = re.sub(r"±\s*\d+%", " ", line.lstrip("> ")).split()
        if len(words) == 4 and words[3][0].isalpha() and "." in words[3]:
            try:
                rows[words[3]] = (float(words[0]), float(words[1].rstrip("%")), float(words[2]))
            except ValueError:
                continue
    return rows


@pytest.mark.parametrize("name", [n for n, (kinds, _) in sorted(EXPECTED.items()) if kinds == ["lkp"]])
def test_every_robot_row_is_read_as_printed_and_found_consistent(name):
    text = _text(name)
    [block] = audit_text(text).blocks
    rows = _lkp_rows(text)
    assert len(block.comparisons) == len(rows) > 0
    for comparison in block.comparisons:
        base, change, new = rows[comparison.metric]
        values = comparison.printed_values
        assert (values["baseline_avg"], values["change"], values["candidate_avg"]) == (base, change, new)
        assert comparison.consistent is True  # every printed change follows from the printed means


def test_perf_stat_single_runs_are_read_as_printed():
    text = _text("10_perf_stat_pair_single_runs.txt")
    [block] = audit_text(text).blocks
    read = {(d["metric"], d["avg"]) for d in block.datasets}
    assert {
        ("task-clock", 200.421583),
        ("task-clock", 81.783821),
        ("context-switches", 42.0),
        ("context-switches", 5.0),
        ("cpu-migrations", 2.0),
        ("cpu-migrations", 3.0),
    } <= read
    assert all(d["n"] == 1 and d["stddev"] is None for d in block.datasets)


def test_sysbench_runs_listed_per_line_are_compared_as_scipy_does():
    text = _text("16_sysbench_mysql_per_run.txt")
    base, new = (
        [float(line.split("(")[1].split()[0]) for line in part.splitlines() if "per sec." in line]
        for part in text.split("With ptr_compare")
    )
    assert len(base) == len(new) == 5
    report = audit_text(text)
    [block] = report.blocks
    [comparison] = block.comparisons
    reference = stats.ttest_ind(new, base, equal_var=False)
    assert comparison.judgement.welch["p"] == pytest.approx(reference.pvalue, rel=1e-6)
    assert comparison.baseline.startswith("MAX_FIELDS=64") and comparison.candidate.startswith("With ptr_compare")
    # the printed AVERAGE= lines are the runs' means truncated to two decimals: accepted, not inconsistent
    assert block.consistent is not False and report.exit_status == 0


def test_a_listed_average_that_is_not_the_runs_mean_is_inconsistent():
    text = _text("16_sysbench_mysql_per_run.txt").replace("AVERAGE= 2988.35", "AVERAGE= 2998.35")
    report = audit_text(text)
    assert any("2998.35 is not the mean of the runs" in f.message for f in report.blocks[0].findings)
    assert report.exit_status == 1
