"""``abstat compare A B`` is a one-cell report (issue 35): the same table, the same numbers.

The reference is ``abstat report`` of the same files: every comparison ``compare --format json``
prints must be the one the report's cell carries (``detail``), field for field, whether one candidate
(a family of one: nothing to adjust, so no adjusted p-value claimed) or several (Holm over them), with
and without an outlier rule.  Before compare went through the report's steps, a one-candidate report
claimed a Holm-adjusted p-value that compare did not."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest


def abstat(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "abstat", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(35)
    sides = {
        "a.txt": rng.lognormal(3.0, 0.1, 40),
        "b.txt": rng.lognormal(3.05, 0.1, 40),
        "c.txt": rng.lognormal(3.0, 0.1, 35),
    }
    sides["c.txt"][:3] *= 6  # far outliers for --outliers to drop
    sides["i1.txt"] = np.round(rng.normal(440, 10, 60) / 20) * 20  # TSC cycles on a grid of 20
    sides["i2.txt"] = np.round(rng.normal(430, 10, 60) / 20) * 20
    for name, values in sides.items():
        (tmp_path / name).write_text("".join(f"{v:.6g}\n" for v in values))
    (tmp_path / "one.txt").write_text("1.5\n")
    return tmp_path


@pytest.mark.parametrize("inputs", [("a.txt", "b.txt"), ("a.txt", "b.txt", "c.txt"), ("i1.txt", "i2.txt")])
@pytest.mark.parametrize("outliers", ["none", "tukey"])
def test_compare_is_the_reports_cell(files, inputs, outliers):
    done = abstat("compare", "--format", "json", "--outliers", outliers, *inputs, cwd=files)
    assert done.returncode == 0, done.stderr
    compared = json.loads(done.stdout)["comparisons"]
    done = abstat("report", "--format", "json", "--outliers", outliers, *inputs, cwd=files)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    cells = [cell for row in report["rows"] for cell in row["cells"].values() if "comparison" in cell]
    assert [cell["comparison"]["detail"] for cell in cells] == compared
    for cell, comparison in zip(cells, compared, strict=True):
        # the cell's printed centre and n are the comparison's (the samples kept after the rule)
        assert cell["center"] == comparison["centers"][1]
        assert cell["n"] == comparison["n"][1]
    if len(inputs) == 2:
        assert compared[0]["p_adjusted"] is None and compared[0]["adjustment"] is None
    else:  # Holm over the two candidates, checked against statsmodels
        from statsmodels.stats.multitest import multipletests

        expected = multipletests([c["p_value"] for c in compared], method="holm")[1]
        assert [c["p_adjusted"] for c in compared] == pytest.approx(list(expected), rel=1e-12)


def test_a_pair_that_cannot_be_compared_is_refused(files):
    """A report notes a cell it cannot compare; compare (strict) refuses in one line naming the input."""
    done = abstat("compare", "a.txt", "one.txt", cwd=files)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == ["abstat compare: one.txt: 1 sample; at least 2 are needed"]


def test_one_row_report_in_process(files):
    from abstat.readers.specs import parse_variant_specs
    from abstat.report.matrix import one_row_report

    variants = parse_variant_specs([str(files / "a.txt"), str(files / "b.txt"), str(files / "c.txt")])
    report = one_row_report(variants, outliers="tukey")
    assert len(report.rows) == 1 and report.columns == list(variants)
    assert [c.comparison.candidate for c in report.comparisons] == list(variants)[1:]
    for base, cell in report.pairs():
        assert (base.center, cell.center) == tuple(cell.comparison.centers)


def test_text_footnotes_are_one_line_per_finding(files):
    """Text and e-mail: the finding and whom it concerns; what to do about it only with --verbose (and in
    Markdown, JSON, HTML, docs/output.md)."""
    from abstat.report.notes import KINDS

    advice = [a for _, a in KINDS.values() if a]
    done = abstat("compare", "i1.txt", "i2.txt", cwd=files)
    notes = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert notes and all(a not in done.stdout for a in advice)
    assert notes[0] == "[1] warning: heavily tied/quantized data (grid 20): i1.txt, i2.txt"
    verbose = abstat("compare", "--verbose", "i1.txt", "i2.txt", cwd=files).stdout
    assert notes[0] + "; " + KINDS["ties"][1] in verbose.splitlines()
    text = abstat("report", "--format", "text", "i1.txt", "i2.txt", cwd=files).stdout
    markdown = abstat("report", "--format", "markdown", "i1.txt", "i2.txt", cwd=files).stdout
    assert "heavily tied" in text and all(a not in text for a in advice)
    assert KINDS["ties"][1] in markdown
