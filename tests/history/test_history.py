"""abstat history: change points against scipy, revision order from git, the record of reported changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from abstat.history.changepoints import detect
from abstat.store import open_store
from support import paths
from support.cli import run_abstat as abstat

SRC = paths.SRC


def test_step_found_with_scipy_t_test_and_spike_ignored():
    from scipy.stats import ttest_ind

    from abstat.history.segment import prepare, running_median

    rng = np.random.default_rng(1)
    values = np.r_[rng.normal(100, 1, 70), rng.normal(104, 1, 70)]
    found = detect(values).change_points
    assert [c.index for c in found] == [70]
    change = found[0]
    # the values tested: each pulled back to 2.5 noise SDs from a running median of 5 (numpy's)
    data = prepare(list(values))
    level = np.median(
        np.lib.stride_tricks.sliding_window_view(np.r_[[values[0]] * 2, values, [values[-1]] * 2], 5), axis=1
    )
    sd = data.scale * 2.0**data.exponent  # the noise SD, from successive differences
    x = np.clip(values, level - 2.5 * sd, level + 2.5 * sd)
    assert np.allclose([data.value(v) for v in data.clipped], x, rtol=0, atol=1e-9)
    assert np.allclose(running_median(values), level)
    # the test: a pooled two-sample t over --window (100) revisions each side, as far as the ends
    assert (change.left_n, change.right_n) == (70, 70)
    assert ttest_ind(x[70:], x[:70]).pvalue < 1e-50
    # the decision, size and p-value: one model, a level + common slope + step fit over --window (100)
    # revisions each side, as far as the ends, its t test and t interval (statsmodels' OLS on the same
    # 140 values; residuals here are not serially correlated, so no widening for a wandering level)
    import statsmodels.api as sm

    j = np.arange(140.0)
    design = np.column_stack([np.ones(140), j, (j >= 70).astype(float)])
    fitted = sm.OLS(x, design).fit()
    r = fitted.resid
    assert np.dot(r[1:70], r[:69]) + np.dot(r[71:], r[70:-1]) < 2.0 / np.sqrt(140) * np.dot(r, r)
    assert abs(change.p_value - fitted.pvalues[2]) <= 1e-6 * fitted.pvalues[2]
    assert abs(change.shift - fitted.params[2]) < 1e-9
    # the interval: the projection of the joint 95% likelihood-ratio region of location and size
    # (scipy's F(2, df)): each split whose gain is within 2 F of the best's, its step +- se sqrt(2 F - deficit)
    from scipy.stats import f as f_dist

    bound = 2 * f_dist.ppf(0.95, 2, 137)
    gain = {k: (x[k:140].mean() - x[:k].mean()) ** 2 / (sd * sd * (1 / k + 1 / (140 - k))) for k in range(5, 136)}
    lows, highs = [], []
    for k, g in gain.items():
        if max(gain.values()) - g <= bound:
            at_k = sm.OLS(x, np.column_stack([np.ones(140), j, (j >= k).astype(float)])).fit()
            half = at_k.bse[2] * np.sqrt(bound - (max(gain.values()) - g if k != 70 else 0.0))
            lows.append(at_k.params[2] - half)
            highs.append(at_k.params[2] + half)
    assert abs(change.low - min(lows)) < 1e-9 and abs(change.high - max(highs)) < 1e-9
    assert change.low < 4.0 < change.high and not change.provisional
    values[20] = 140.0  # a single spike: neither a change nor a moved one
    assert [c.index for c in detect(values).change_points] == [70]


def test_stationary_quantized_series_has_no_change_point():
    rng = np.random.default_rng(2)
    for _ in range(5):
        assert detect(np.round(rng.normal(440, 2, 300))).change_points == []


def test_change_near_the_end_is_provisional():
    rng = np.random.default_rng(3)
    values = np.r_[rng.normal(100, 1, 50), rng.normal(110, 1, 6)]
    (change,) = detect(values).change_points
    assert change.index == 50 and change.provisional and change.points_to_settle == 4
    assert change.samples_before == 50 and change.samples_after == 6


def _git(repo: str, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env={**os.environ, **(env or {})}
    ).stdout.strip()


def _repo_with_store(tmp_path, commits: int, step_at: int, stored: int | None = None) -> tuple[str, str, list[str]]:
    repo = str(tmp_path / "repo")
    os.makedirs(repo)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    shas = []
    # every commit has the same time stamp: only git's graph gives the order
    for i in range(commits):
        with open(os.path.join(repo, "f"), "w") as out:
            out.write(str(i))
        _git(repo, "add", "f")
        _git(
            repo,
            "commit",
            "-qm",
            f"c{i}",
            env={"GIT_COMMITTER_DATE": "2024-01-01T00:00:00", "GIT_AUTHOR_DATE": "2024-01-01T00:00:00"},
        )
        shas.append(_git(repo, "rev-parse", "HEAD"))
    store_path = str(tmp_path / "a.db")
    _store_points(store_path, shas, range(stored if stored is not None else commits), step_at)
    return repo, store_path, shas


def _store_points(store_path: str, shas: list[str], which, step_at: int) -> None:
    rng = np.random.default_rng(len(list(which)))
    order = list(which)
    rng.shuffle(order)  # recorded out of order
    with open_store(store_path) as store:
        for i in order:
            invocation = store.start_invocation("h", {"hostname": "box"}, labels={"rev": shas[i]}, variants=["b"])
            for run in range(3):
                store.add_run(
                    invocation,
                    variant="b",
                    command="x",
                    iteration=run,
                    position=run,
                    status="ok",
                    exit_code=0,
                    started_at=0.0,
                    wall=0.1,
                    values={"ns": [100 + (5 if i >= step_at else 0) + rng.normal(0, 1)]},
                )
            store.finish_invocation(invocation, "complete")


def test_history_orders_by_git_and_reports_stability(tmp_path):
    repo, store_path, shas = _repo_with_store(tmp_path, 30, 18)
    done = abstat("history", "h", "--store", store_path, "--format", "json", cwd=repo)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["ordering"] == "git topological order"
    (series,) = document["series"]
    assert [p["rev"] for p in series["points"]] == shas
    (change,) = series["change_points"]
    assert change["rev"] == shas[18] and change["status"] == "new"
    assert change["relative_low"] < 0.05 < change["relative_high"]
    again = json.loads(abstat("history", "h", "--store", store_path, "--format", "json", cwd=repo).stdout)
    assert again["series"][0]["change_points"][0]["status"] == "kept"
    # a record that placed it two commits earlier: the output says it moved
    record_path = store_path + ".changepoints.json"
    record = json.load(open(record_path))
    key = next(iter(record["series"]))
    record["series"][key][0]["rev"] = shas[16]
    json.dump(record, open(record_path, "w"))
    text = abstat("history", "h", "--store", store_path, cwd=repo).stdout
    assert f"change point moved: reported at {shas[16][:12]} before, now at {shas[18][:12]}" in text
    assert f"moved from {shas[16][:12]}" in text


def test_adding_points_keeps_the_change_point_and_says_so(tmp_path):
    repo, store_path, shas = _repo_with_store(tmp_path, 40, 15, stored=24)
    first = json.loads(abstat("history", "h", "--store", store_path, "--format", "json", cwd=repo).stdout)
    (change,) = first["series"][0]["change_points"]
    assert change["rev"] == shas[15] and change["status"] == "new"
    _store_points(store_path, shas, range(24, 40), 15)
    second = json.loads(abstat("history", "h", "--store", store_path, "--format", "json", cwd=repo).stdout)
    (series,) = second["series"]
    assert len(series["points"]) == 40 and series["notes"] == []
    assert [(c["rev"], c["status"]) for c in series["change_points"]] == [(shas[15], "kept")]


def test_history_from_csv_without_git_uses_commit_time(tmp_path):
    rows = ["rev,commit_time,bench,ms"]
    rng = np.random.default_rng(8)
    for i in reversed(range(24)):  # file order is not history order
        for _ in range(2):
            rows.append(f"r{i:02d}x,{1000 + i},<b>|x,{10 + (1 if i >= 12 else 0) + rng.normal(0, 0.1):.4f}")
    (tmp_path / "h.csv").write_text("\n".join(rows) + "\n")
    done = abstat(
        "history", "--input", "h.csv", "--metric", "ms", "--repo", str(tmp_path), "--format", "json", cwd=str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    (series,) = json.loads(done.stdout)["series"]
    assert [p["rev"] for p in series["points"]] == [f"r{i:02d}x" for i in range(24)]
    assert [c["rev"] for c in series["change_points"]] == ["r12x"]
    html = abstat("history", "--input", "h.csv", "--metric", "ms", "--format", "html", cwd=str(tmp_path)).stdout
    assert "<svg" in html and "&lt;b&gt;|x" in html and "<b>|x" not in html
    markdown = abstat("history", "--input", "h.csv", "--metric", "ms", "--format", "markdown", cwd=str(tmp_path)).stdout
    assert "\\<b\\>\\|x" in markdown or "&lt;b&gt;" in markdown or "\\|x" in markdown


def test_run_rev_records_the_revision(tmp_path):
    repo, _, shas = _repo_with_store(tmp_path, 2, 1)
    done = abstat(
        "run", "--rev", "--experiment", "r", "-n", "1", "-v", "t=true", "--store", "r.db", "--no-progress", cwd=repo
    )
    assert done.returncode == 0, done.stderr
    with open_store(os.path.join(repo, "r.db"), create=False) as store:
        labels = store.invocations("r")[0]["labels"]
    assert labels["rev"] == shas[-1] and labels["commit_time"].isdigit()
    outside = abstat("run", "--rev", "-n", "1", "-v", "t=true", "--store", "r.db", cwd=str(tmp_path))
    assert outside.returncode == 2 and "--rev: not a git repository" in outside.stderr


def test_history_unknown_experiment_is_one_line(tmp_path):
    repo, store_path, _ = _repo_with_store(tmp_path, 2, 1)
    done = abstat("history", "nope", "--store", store_path, cwd=repo)
    assert done.returncode == 2 and "no experiment 'nope'" in done.stderr and "Traceback" not in done.stderr


def test_history_from_go_benchmark_output_with_rev_lines(tmp_path):
    rng = np.random.default_rng(9)
    lines = []
    for i in reversed(range(24)):  # newest first in the file; commit_time gives the order
        lines += [f"rev: g{i:02d}", f"commit_time: {2000 + i}"]
        lines += [
            f"BenchmarkParse-8   \t 1000\t {1000 * (1.1 if i >= 12 else 1) + rng.normal(0, 5):.1f} ns/op"
            for _ in range(3)
        ]
    (tmp_path / "go.txt").write_text("\n".join(lines) + "\n")
    done = abstat("history", "--input", "go.txt", "--repo", str(tmp_path), "--format", "json", cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    (series,) = json.loads(done.stdout)["series"]
    assert series["labels"]["benchmark"] == "Parse" and series["unit"] == "ns/op"
    assert [p["rev"] for p in series["points"]] == [f"g{i:02d}" for i in range(24)]
    (change,) = series["change_points"]
    assert change["rev"] == "g12" and change["relative_low"] < 0.10 < change["relative_high"]


def test_slow_drift_is_not_cut_into_steps():
    # a straight drift of 6 noise SDs over 300 revisions, no step: no change point
    # (the detector before the straight-line check cut 9 of these 10 series into steps)
    rng = np.random.default_rng(11)
    cut = sum(bool(detect(100 + np.linspace(0, 6, 300) + rng.normal(0, 1, 300)).change_points) for _ in range(10))
    assert cut <= 1


def test_step_inside_a_drift_is_still_found():
    rng = np.random.default_rng(12)
    values = 100 + np.linspace(0, 4, 200) + rng.normal(0, 1, 200)
    values[120:] += 5
    assert [c.index for c in detect(values).change_points] == [120]


def test_location_not_pulled_by_an_outlier_or_by_ranks():
    # the largest value before a big step sits next to it (ranks alone cannot place the step),
    # and a wild value right after the step (a least-squares split would move onto it)
    rng = np.random.default_rng(14)
    values = np.r_[rng.normal(100, 1, 60), rng.normal(110, 1, 60)]
    values[59] = values[:60].max() + 1.0
    values[61] = 160.0
    (change,) = detect(values).change_points
    assert change.index == 60


@pytest.mark.xfail(
    strict=True,
    reason="the decision model (interval must exclude 0, the slope always in "
    "the model) loses power: fewer than 13 hits (issue 40, docs/history.md)",
)
def test_small_step_located_within_two_points():
    # a step of 1.2 noise SD with 80 revisions on each side (the 3%-noise regime of the benchmark):
    # found within +-2 points in 14 of 20 series (10 of 20 with the median-based split before)
    rng = np.random.default_rng(15)
    hits = 0
    for _ in range(20):
        values = np.r_[rng.normal(100, 1, 80), rng.normal(101.2, 1, 80)]
        hits += any(abs(c.index - 80) <= 2 for c in detect(values).change_points)
    assert hits >= 13


@pytest.mark.xfail(
    strict=True,
    reason="the -1 SD step at 13333 is missed: the slope in the decision "
    "model widens its interval to include 0 (issue 40; docs/history.md)",
)
def test_long_history_finds_both_steps():
    # 20,000 revisions: candidates come from PELT in C (ruptures' KernelCPD, linear kernel),
    # and a 1-SD step is tested on --window points each side (the detector before took a
    # minute here and dropped the second step on a 30-point test)
    rng = np.random.default_rng(1)
    values = rng.normal(100, 1, 20000)
    values[6666:] += 2
    values[13333:] -= 1
    assert [c.index for c in detect(values).change_points] == [6666, 13333]


def test_changepoint_benchmark_runs_and_prints_every_shape():
    script = os.path.join(os.path.dirname(SRC), "benchmarks", "changepoints.py")
    done = subprocess.run(
        [
            sys.executable,
            script,
            "--series",
            "3",
            "--seed",
            "5",
            "--markdown",
            "--only",
            "abstat",
            "--only",
            "PELT-L2 BIC",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    abstat_rows = {row[0].lstrip("| ") for row in rows if row[1] == "abstat"}
    assert abstat_rows == {
        "normal",
        "quantized",
        "bimodal",
        "spikes",
        "drift",
        "stationary",
        "drift only",
        "quadratic drift only",
        "cycles",
        "reverts",
    }
    assert {row[0].lstrip("| ") for row in rows if row[1] == "oracle K (reference)"} == {
        "normal",
        "quantized",
        "bimodal",
        "spikes",
        "drift",
        "cycles",
        "reverts",
    }
    assert "seed 5" in done.stdout
    assert all(row[9] == "0" for row in rows[1:])  # the errors column: no detector raised


def test_changepoint_benchmark_sampled_shape_and_settings():
    script = os.path.join(os.path.dirname(SRC), "benchmarks", "changepoints.py")
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [
            sys.executable,
            script,
            "--series",
            "4",
            "--seed",
            "5",
            "--markdown",
            "--no-oracle",
            "--samples",
            "4",
            "--shape",
            "sampled",
            "--shape",
            "normal",
            "--only",
            "abstat",
            "--set",
            "max_pvalue=0.01",
            "--set",
            "CURVE_LINE=False",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")][1:]
    assert {(row[0].lstrip("| "), row[1]) for row in rows} == {
        ("normal", "abstat"),
        ("sampled", "abstat"),
        ("sampled", "abstat (one value per revision)"),
    }
    assert "abstat with max_pvalue=0.01, CURVE_LINE=False" in done.stdout
    bad = subprocess.run(
        [sys.executable, script, "--series", "1", "--set", "NO_SUCH=1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert bad.returncode == 2 and "NO_SUCH" in bad.stderr.splitlines()[-1]


def test_huge_and_subnormal_values_give_the_same_changes_scaled():
    # a -67% step, as plain numbers, near the largest double and among subnormals: the same
    # position and relative size, and medians that are neither inf nor 0
    rng = np.random.default_rng(2)
    values = np.r_[rng.normal(1.0, 0.01, 60), rng.normal(0.33, 0.0033, 60)]
    (plain,) = detect(values).change_points
    for scale in (1.5e308, 2.0**-1060):
        (change,) = detect(values * scale).change_points
        assert change.index == plain.index == 60
        assert abs(change.relative - plain.relative) < 1e-3
        assert np.isfinite(change.before) and change.after > 0


def test_history_of_a_stored_experiment_without_revisions_is_one_line(tmp_path):
    store_path = str(tmp_path / "s.db")
    done = abstat(
        "run",
        "--store",
        store_path,
        "--experiment",
        "plain",
        "-n",
        "3",
        "-v",
        "a=true",
        "--no-progress",
        cwd=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    done = abstat("history", "plain", "--store", store_path, "--no-state", cwd=str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "'rev' label" in done.stderr


def test_min_magnitude_drops_changes_smaller_than_it():
    rng = np.random.default_rng(17)
    values = np.r_[rng.normal(100, 0.5, 80), rng.normal(103, 0.5, 80)]  # a 3% step
    assert [c.index for c in detect(values, min_magnitude=0.02).change_points] == [80]
    assert detect(values, min_magnitude=0.05).change_points == []


def test_markdown_settings_line_is_its_own_paragraph(tmp_path):
    rows = "rev,ns\n" + "".join(f"r{i:03d},{100 + (i >= 30) * 5 + (i % 3) * 0.1}\n" for i in range(60))
    (tmp_path / "h.csv").write_text(rows)
    text = abstat("history", "--input", "h.csv", "--no-state", "--format", "markdown", cwd=str(tmp_path)).stdout
    lines = text.rstrip("\n").splitlines()
    assert lines[-1].startswith("revisions in ") and lines[-2] == ""
