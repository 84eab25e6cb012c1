"""attack17 #4: on runs (``NAME='dir/*.txt'``) a baseline whose run medians average below 0 gets no relative
change, and its row is labelled with, and shows, what the header and the warning name: the means of the run
medians (the row read ``auto -9.983 -> -12.115``, the option value over the pooled means, beside a warning
naming -9.92081).  The centres are checked against numpy's medians of each run file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from support.cli import run_abstat as abstat


def _runs(tmp_path, name, level, rng):
    folder = tmp_path / name
    folder.mkdir()
    runs = [level + rng.normal(0.0, 0.3, 5) + rng.normal(0.0, 0.2) for _ in range(6)]
    for i, values in enumerate(runs):
        (folder / f"{i}.txt").write_text("".join(f"{float(v)!r}\n" for v in values))
    return f"{name}={folder}/*.txt", float(np.mean([np.median(v) for v in runs]))


def test_a_negative_baseline_on_runs_shows_the_means_of_the_run_medians(tmp_path):
    rng = np.random.default_rng(17)
    (a, ma), (b, mb) = _runs(tmp_path, "a", -10.0, rng), _runs(tmp_path, "b", -12.0, rng)
    out = abstat("compare", a, b).stdout
    row = next(line for line in out.splitlines() if "→" in line)
    assert row.startswith("mean of run medians ") and "cannot judge" in row and "%" not in row
    before, _, after = row[len("mean of run medians ") :].split()[:3]
    assert (float(before), float(after)) == pytest.approx((ma, mb), rel=5e-4)
    assert f"the baseline run medians' average is negative ({ma:.6g})" in out
    result = json.loads(abstat("compare", "--format", "json", a, b).stdout)["comparisons"][0]
    assert result["center_kind"] == "mean of run medians"
    assert result["centers"] == pytest.approx([ma, mb], rel=1e-12)
