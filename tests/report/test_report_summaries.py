"""abstat report on summary statistics (``NAME=n:mean:stddev``) instead of files.

The numbers are seed 000's milan pv64 vitals as ministat printed them
(tests/data/seeds/000_*.txt).  References: abstat.compare on the same
Summary objects (the cell must carry exactly its result), scipy's Welch test
from summary statistics (the p-value), ministat's own printed relative
difference of the means, and the delta-method interval of a ratio of means
(which Fieller's interval approaches when the means are this precise).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import statistics

import pytest
from scipy import stats

import abstat
from abstat.cli import main as cli_main
from abstat.readers.summary import Summary
from abstat.readers.text import read_samples
from abstat.render.matrix import format_change
from abstat.report import api
from support import paths

HERE = str(paths.TESTS)
HCALL = os.path.join(HERE, "data", "report", "hcall")
SEED_000 = os.path.join(HERE, "data", "seeds", "000_3651202fe8db083c.txt")
BEFORE = "before=98:438.97959:6.6564899"
AFTER = "after=98:370.81633:12.57337"
SUMMARY_BEFORE = Summary(98, 438.97959, 6.6564899)
SUMMARY_AFTER = Summary(98, 370.81633, 12.57337)


def run_cli(args, capsys):
    status = cli_main(["report", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def reference():
    return abstat.compare(SUMMARY_BEFORE, SUMMARY_AFTER)


def test_the_numbers_are_seed_000s():
    with open(SEED_000, encoding="utf-8") as handle:
        seed = handle.read()
    assert re.search(r"x\s+98\s+420\s+460\s+440\s+438\.97959\s+6\.6564899", seed)
    assert re.search(r"\+\s+98\s+360\s+440\s+380\s+370\.81633\s+12\.57337", seed)


def test_json_cell_is_compare_on_the_summaries(reference, capsys):
    status, out, err = run_cli(["--format", "json", BEFORE, AFTER], capsys)
    assert status == 0, err
    doc = json.loads(out)
    cells = doc["rows"][0]["cells"]
    before, after = cells["before"], cells["after"]
    assert before["center"] == 438.97959 and after["center"] == 370.81633
    assert before["center_kind"] == after["center_kind"] == "mean"
    assert before["summary"] == {"n": 98, "mean": 438.97959, "stddev": 6.6564899}
    assert after["summary"] == {"n": 98, "mean": 370.81633, "stddev": 12.57337}
    assert before["n"] == after["n"] == 98
    cmp = after["comparison"]
    assert cmp["delta_pct"] == reference.delta_pct
    assert cmp["ci_pct"] == list(reference.ci_pct)
    assert cmp["p_value"] == reference.p_value
    assert cmp["method"] == reference.method
    assert "summary statistics" in cmp["method"]
    # independent oracles: scipy's Welch test from the same statistics ...
    welch = stats.ttest_ind_from_stats(438.97959, 6.6564899, 98, 370.81633, 12.57337, 98, equal_var=False)
    assert cmp["p_value"] == pytest.approx(welch.pvalue, rel=1e-9)
    assert cmp["p_adjusted"] == pytest.approx(welch.pvalue, rel=1e-9)  # one comparison: Holm changes nothing
    # ... ministat's printed relative difference of the means (-15.5277%) ...
    assert cmp["delta_pct"] == pytest.approx(-15.5277, abs=5e-5)
    assert cmp["delta_pct"] == pytest.approx((370.81633 / 438.97959 - 1) * 100, rel=1e-12)
    # ... and the delta-method interval of the ratio (Welch-Satterthwaite df)
    v1, v2 = 6.6564899**2 / 98, 12.57337**2 / 98
    ratio = 370.81633 / 438.97959
    se = ratio * math.sqrt(v1 / 438.97959**2 + v2 / 370.81633**2)
    df = (v1 + v2) ** 2 / (v1**2 / 97 + v2**2 / 97)
    half = stats.t.ppf(0.975, df) * se * 100
    assert cmp["ci_pct"][0] == pytest.approx((ratio - 1) * 100 - half, abs=0.02)
    assert cmp["ci_pct"][1] == pytest.approx((ratio - 1) * 100 + half, abs=0.02)
    assert cmp["significant"] is True and cmp["verdict"] == "faster"
    codes = [w["code"] for w in cmp["detail"]["warnings"]]
    assert "summary-only" in codes
    assert any("show the mean" in line for line in doc["footer"])
    assert doc["footer"][0].startswith("Cells: mean of each sample set")


@pytest.mark.parametrize("fmt", ["text", "markdown", "table"])
def test_tables_show_the_mean_and_say_so(fmt, reference, capsys):
    status, out, err = run_cli(["--format", fmt, "--width", "200", BEFORE, AFTER], capsys)
    assert status == 0, err
    # one scale for the column (issue 10): 4 significant digits for the smaller value
    assert "439.0 (mean)" in out and "370.8 (mean)" in out
    assert format_change(reference.delta_pct, reference.ci_pct) == "-15.5% [-16.2, -14.9]"
    assert "-15.5% [-16.2, -14.9] *" in out.replace("\\", "")  # Markdown escapes every cell (issue 15)
    flat = " ".join(out.replace("\\", "").split())
    assert "Cells given as summary statistics (NAME=n:mean:stddev) show the mean" in flat
    # one footnote for the kind, naming both cells (issue 10); the figures are in the JSON
    assert "summary statistics only (n, mean, stddev): before, after" in flat
    assert "compare means (Welch's t" in flat  # the footer says it; the footnote's advice only in Markdown


def test_csv_marks_summary_cells(reference, capsys):
    status, out, err = run_cli(["--format", "csv", BEFORE, AFTER], capsys)
    assert status == 0, err
    rows = {r["column"]: r for r in csv.DictReader(io.StringIO(out))}
    assert rows["before"]["center"] == "438.97959" and rows["after"]["center"] == "370.81633"
    for row in rows.values():
        assert row["center_kind"] == "mean" and row["data"] == "summary"
    after = rows["after"]
    assert float(after["delta_pct"]) == reference.delta_pct
    assert [float(after["ci_low_pct"]), float(after["ci_high_pct"])] == list(reference.ci_pct)
    assert float(after["p_value"]) == reference.p_value
    assert after["method"] == reference.method


def test_email_prints_no_invented_ministat_block(capsys):
    status, out, err = run_cli(["--format", "email", "--ministat", BEFORE, AFTER], capsys)
    assert status == 0, err
    assert all(len(line) <= 72 for line in out.splitlines())
    flat = " ".join(out.split())
    assert (
        "(no ministat -A block for after vs before: before and after are summary statistics "
        "n:mean:stddev only; ministat needs the samples for Min, Max and Median)"
    ) in flat
    # nothing that looks like a ministat block: no header, no data lines, no command
    assert "Min           Max" not in out
    assert "$ ministat" not in out
    assert "Difference at" not in out
    assert "upper of the two middle values" not in out


def test_html_has_no_plot_for_summaries(tmp_path, capsys):
    page = tmp_path / "report.html"
    status, _, err = run_cli(["--format", "html", "-o", str(page), BEFORE, AFTER], capsys)
    assert status == 0, err
    html = page.read_text(encoding="utf-8")
    assert "<svg" not in html
    assert "No distribution plot: before and after are summary statistics" in html
    assert (
        "<td>before</td><td>98</td><td>unknown</td><td>unknown</td><td>unknown</td><td>439.0</td><td>6.656</td>" in html
    )  # 4 significant digits (issue 10)


def test_mixed_summary_and_file(capsys):
    """A summary baseline and a sample file: compared on means, said so everywhere."""
    path = os.path.join(HCALL, "milan-hcall-pv64-after")
    values = read_samples(path)
    expected = abstat.compare(SUMMARY_BEFORE, values)
    welch = stats.ttest_ind_from_stats(
        438.97959, 6.6564899, 98, statistics.fmean(values), statistics.stdev(values), len(values), equal_var=False
    )
    args = ["--pattern", "{host}-hcall-{mode}-{variant}", f"milan-hcall-pv64-{BEFORE}", path]
    status, out, err = run_cli(["--format", "json", *args], capsys)
    assert status == 0, err
    doc = json.loads(out)
    assert doc["common_labels"] == {"host": "milan", "mode": "pv64"}
    cells = doc["rows"][0]["cells"]
    assert cells["before"]["center_kind"] == "mean"
    # beside a summary cell the change compares means, and the sample cell shows its mean: the printed
    # centres agree with the change (issue 35; the footer says so)
    assert cells["after"]["center_kind"] == "mean" and cells["after"]["summary"] is None
    assert cells["after"]["center"] == pytest.approx(statistics.fmean(values), rel=1e-12)
    cmp = cells["after"]["comparison"]
    assert cmp["delta_pct"] == expected.delta_pct and cmp["ci_pct"] == list(expected.ci_pct)
    assert cmp["delta_pct"] == pytest.approx((statistics.fmean(values) / 438.97959 - 1) * 100, rel=1e-9)
    assert cmp["p_value"] == pytest.approx(welch.pvalue, rel=1e-9)
    assert cmp["method"] == "Welch t on means from summary statistics, Fieller interval"

    status, out, err = run_cli(["--format", "email", "--ministat", *args], capsys)
    assert status == 0, err
    flat = " ".join(out.split())
    assert f"(no ministat -A block for {path} vs before: before is summary statistics" in flat
    assert "$ ministat" not in out

    status, out, err = run_cli(["--format", "text", *args], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "abstat report: variant, baseline before (host=milan, mode=pv64)"
    assert "439.0 (mean)" in out
    shown = statistics.fmean(values)  # beside a summary, the sample cell shows the mean the change compares
    assert f"{shown:.1f}  " + format_change(expected.delta_pct, expected.ci_pct) in out
    assert "changes involving them compare means" in " ".join(out.split())


def test_pattern_and_labels_name_summary_cells(capsys):
    """With --pattern the summary's NAME is read as a file name would be."""
    pattern = "{host}-hcall-{mode}-{variant}"
    files = [os.path.join(HCALL, f"milan-hcall-pv32-{v}") for v in ("before", "after")]
    sets = api.load(
        [f"milan-hcall-pv64-{BEFORE}", f"milan-hcall-pv64-{AFTER}", *files], pattern=pattern, labels=["run=1"]
    )
    report = api.build(sets)
    assert report.row_keys == ["mode"] and report.common == {"host": "milan", "run": "1"}
    by_mode = {row.labels["mode"]: row for row in report.rows}
    pv64 = by_mode["pv64"].cells["after"]
    assert pv64.sample_set.summary == SUMMARY_AFTER
    assert pv64.comparison.delta_pct == abstat.compare(SUMMARY_BEFORE, SUMMARY_AFTER).delta_pct
    assert by_mode["pv32"].cells["after"].sample_set.summary is None
    assert by_mode["pv32"].cells["after"].center_kind == "median"
    assert len(report.summaries) == 1  # the geomean still combines both rows


@pytest.mark.parametrize(
    "args, message",
    [
        (["98:438.97959:6.6564899", AFTER], "name the summary statistics: NAME=98:438.97959:6.6564899"),
        (["before=1:438.97959:6.6564899", AFTER], "a summary needs n >= 2"),
        (["before=98:abc:6.6564899", AFTER], "not a summary n:mean:stddev"),
        (["before=98:438.97959:-1", AFTER], "a standard deviation cannot be negative"),
        ([BEFORE, "before=98:370.81633:12.57337"], "summary statistics cannot be pooled"),
        (["--pattern", "{host}-{variant}", BEFORE, AFTER], "summary name 'before' does not match --pattern"),
        (["--format", "hyperfine", BEFORE, AFTER], "summary statistics hold no samples to export"),
    ],
)
def test_bad_summary_inputs_are_one_line_errors(args, message, capsys):
    status, out, err = run_cli(args, capsys)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("abstat report: ") and message in err
    assert "Traceback" not in err


def test_pair_warnings_name_the_pair_even_with_one_letter_names():
    # Variants "a" and "b" occur inside almost any sentence: whether a
    # footnote needs its "b vs a:" prefix is decided by the warning's own
    # variant field, not by looking for the names in the text.
    sets = api.load(["a=5:10:1", "b=5:12:1"])
    report = api.build(sets, by="variant", baseline="a")
    expected = abstat.compare(Summary(5, 10.0, 1.0), Summary(5, 12.0, 1.0), names=("a", "b"))
    pair = [w for w in expected.warnings if w.variant is None]
    assert pair, "the reference comparison should have a warning about the pair"
    # one footnote per kind (issue 10): it names the cell, not the text's guess at names
    from abstat.report.notes import Footnote, kind_of

    for warning in pair:
        head, advice = kind_of(warning)
        assert Footnote(head, advice, [("", "b")]).text() in report.footnotes or any(
            t.startswith(head + ": ") and "b" in t.split(";")[0] for t in report.footnotes
        )
    messages = [m["message"] for c in report.rows[0].cells.values() for m in c.messages]
    for warning in expected.warnings:
        assert warning.message in messages  # in full, in the JSON
