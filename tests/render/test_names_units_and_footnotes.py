"""Defects a newcomer met following the README (/work notes): each pinned here."""

from __future__ import annotations

import csv
import io

import numpy as np

from abstat.comparison import compare_many
from abstat.render.compare_text import render, summary_block
from support import paths
from support.cli import run_abstat as abstat

SRC = paths.SRC


def test_importing_a_store_that_does_not_exist_names_it_and_creates_nothing(tmp_path):
    done = abstat("import", "nosuch.db", "--store", "target.db", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip() == "abstat import: nosuch.db: no such store to import"
    assert not (tmp_path / "target.db").exists()


def test_runs_as_the_unit_are_labelled_as_what_they_are_when_no_metric_names_the_line():
    rng = np.random.default_rng(5)
    comparisons = compare_many(
        {
            "before": [rng.normal(level, 0.01, 20) for level in (1.0, 1.1, 0.9)],
            "after": [rng.normal(level, 0.01, 20) for level in (1.2, 1.3, 1.1)],
        }
    )
    line = summary_block([(None, None, comparisons)]).splitlines()[1]
    assert line.startswith("pseudo-median of run medians  ")  # the Hodges-Lehmann ratio at any size (issue 34)


def test_csv_names_each_kind_of_warning_once():
    comparisons = compare_many({"a": [1.0, 2.0], "b": [1.5, 2.5]})  # too few samples, said more than once
    row = next(csv.DictReader(io.StringIO(render(comparisons, "csv"))))
    codes = row["warnings"].split(";")
    assert "too-few-samples" in codes and len(codes) == len(set(codes))


def test_a_zero_baseline_is_one_footnote_whatever_the_centre():
    from abstat.report.notes import kind_of
    from abstat.stats.warnings import StatWarning

    heads = {
        kind_of(StatWarning("cannot-judge", message))[0]
        for message in (
            "the baseline centre is 0, so a relative change is undefined",
            "the baseline median is 0, so a relative change is undefined",
            "the baseline mean is 0, so a relative change is undefined",
            "the baseline's run medians average 0, so a relative change is undefined",
        )
    }
    assert heads == {"the baseline centre is 0, so a relative change is undefined"}


def test_report_cells_with_several_runs_show_the_centres_the_change_compares():
    from abstat.report.matrix import build_report
    from abstat.report.sampleset import SampleSet

    rng = np.random.default_rng(6)
    before = [list(rng.normal(level, 0.01, 20)) for level in (1.0, 3.0, 1.2)]
    after = [list(rng.normal(level, 0.01, 20)) for level in (1.1, 3.3, 1.3)]
    report = build_report(
        [
            SampleSet({"variant": "before", "metric": "wall"}, before, unit="s"),
            SampleSet({"variant": "after", "metric": "wall"}, after, unit="s"),
        ],
        baseline="before",
    )
    cells = report.rows[0].cells
    # issue 34: the Hodges-Lehmann ratio of the run medians at any number of runs; each cell shows its
    # pseudo-median (median of the Walsh averages of the log run medians), brute force over the pairs
    logs = {name: np.log([np.median(run) for run in runs]) for name, runs in (("before", before), ("after", after))}
    expected = {
        name: float(np.exp(np.median([(v[i] + v[j]) / 2 for i in range(v.size) for j in range(i, v.size)])))
        for name, v in logs.items()
    }
    for name in ("before", "after"):
        assert abs(cells[name].center - expected[name]) < 1e-12 * expected[name]
    assert cells["after"].center_kind == "pseudo-median of run medians"
    # three runs against three: even complete separation has permutation p 0.1, so no interval at 95%
    assert cells["after"].comparison.verdict == "cannot judge"
    assert any("0.1" in w.message for w in cells["after"].comparison.warnings if w.code == "cannot-judge")
    assert "Cells: pseudo-median of run medians of each sample set" in " ".join(report.footer())


def test_stored_variants_name_their_metric_and_unit_in_compare_and_plan(tmp_path):
    done = abstat(
        "run",
        "-n",
        "4",
        "-v",
        "a=true",
        "-v",
        "b=true",
        "--store",
        "s.db",
        "--experiment",
        "e",
        "--no-progress",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    compared = abstat("compare", "e:a", "e:b", "--store", "s.db", cwd=tmp_path)
    line = compared.stdout.splitlines()[1]
    assert compared.returncode == 0 and line.startswith("wall  ") and any(u in line for u in (" µs ", " ms ", " s "))
    planned = abstat("plan", "e:a", "e:b", "--store", "s.db", cwd=tmp_path)
    assert planned.returncode == 0 and planned.stdout.splitlines()[1] == "metric wall, figures in s"
