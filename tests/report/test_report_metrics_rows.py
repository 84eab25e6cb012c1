"""--rows without 'metric' but several metrics: the metric becomes the last row key."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from abstat.errors import UsageError
from abstat.report import api

PATTERN = "{patch}-{base}-{metric}.txt"
METRICS = ("cycles", "instructions", "wall")


@pytest.fixture()
def files(tmp_path):
    """2 patches x 2 bases x 3 metrics, 12 samples each; 'fix' is 10% lower everywhere."""
    rng = np.random.default_rng(7)
    paths = []
    for patch, scale in (("orig", 1.0), ("fix", 0.9)):
        for base, level in (("v6.8", 1000.0), ("v6.9", 1200.0)):
            for k, metric in enumerate(METRICS):
                values = level * (k + 1) * scale * (1 + 0.01 * rng.standard_normal(12))
                path = tmp_path / f"{patch}-{base}-{metric}.txt"
                path.write_text("\n".join(f"{v:.3f}" for v in values) + "\n")
                paths.append(str(path))
    return paths


def test_metric_is_added_to_the_rows(files):
    sets = api.load(files, pattern=PATTERN)
    report = api.build(sets, by="patch", baseline="orig", rows=["base"], metrics=list(METRICS))
    assert report.row_keys == ["base", "metric"]
    assert [tuple(r.labels.values()) for r in report.rows] == [
        (base, metric) for base in ("v6.8", "v6.9") for metric in METRICS
    ]
    # Each cell is the comparison of its own files (scipy as the reference for the direction).
    for row in report.rows:
        cell = row.cells["fix"]
        assert cell.sample_set.labels["metric"] == row.labels["metric"] == row.metric
        base = np.loadtxt(next(f for f in files if f.endswith(f"orig-{row.labels['base']}-{row.metric}.txt")))
        cand = np.loadtxt(next(f for f in files if f.endswith(f"fix-{row.labels['base']}-{row.metric}.txt")))
        assert stats.mannwhitneyu(cand, base).pvalue < 0.01
        assert -12 < cell.comparison.delta_pct < -8
    # Same report as naming the metric in --rows oneself.
    explicit = api.build(sets, by="patch", baseline="orig", rows=["base", "metric"], metrics=list(METRICS))
    assert [r.labels for r in explicit.rows] == [r.labels for r in report.rows]
    # Where the user puts it is kept.
    first = api.build(sets, by="patch", baseline="orig", rows=["metric", "base"], metrics=list(METRICS))
    assert first.row_keys == ["metric", "base"]


def test_one_metric_adds_nothing_and_other_labels_still_must_be_chosen(files):
    sets = api.load(files, pattern=PATTERN)
    single = api.build(sets, by="patch", rows=["base"], metrics=["wall"])
    assert single.row_keys == ["base"] and len(single.rows) == 2
    with pytest.raises(UsageError, match="label 'base' takes several values"):
        api.build(sets, by="patch", rows=["metric"], metrics=list(METRICS))
    by_metric = api.build(sets, by="metric", rows=["base"], where={"patch": {"orig"}})
    assert by_metric.row_keys == ["base"] and by_metric.columns[0] in METRICS


def test_cli_comma_separated_metrics(files):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "report",
            "--pattern",
            PATTERN,
            "--by",
            "patch",
            "--baseline",
            "orig",
            "--rows",
            "base",
            "--metric",
            "cycles,instructions,wall",
            "--format",
            "json",
            *files,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["row_keys"] == ["base", "metric"] and len(report["rows"]) == 6
    assert {r["labels"]["metric"] for r in report["rows"]} == set(METRICS)
    assert done.stderr == ""
