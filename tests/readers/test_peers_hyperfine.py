"""``--format hyperfine`` against hyperfine's own exports, and hyperfine files read.

References: exports made by the real hyperfine (compact fixtures of 1.15.0
in tests/data/report/peers, and the installed /usr/bin/hyperfine live), and
what hyperfine's analysis scripts (scripts/*.py in sharkdp/hyperfine) read
from an export, restated in ``check_scripts_contract`` below.  The scripts
themselves are run on exports by benchmarks/peer_scripts.py (a dev check:
they need a hyperfine checkout and matplotlib).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from abstat.cli import main as cli_main
from abstat.readers import peers
from abstat.report import api
from abstat.report.export import to_hyperfine
from support import paths

DATA = os.path.join(str(paths.DATA), "report", "peers")
HYPERFINE = shutil.which("hyperfine")
SRC = paths.SRC


def data(name: str) -> str:
    return os.path.join(DATA, name)


def check_scripts_contract(doc: dict) -> None:
    """What hyperfine's scripts read: advanced_statistics.py, plot_histogram.py,
    plot_whisker.py, plot_progression.py (command, times, median),
    welch_ttest.py (two results' times), plot_benchmark_comparison.py (mean),
    plot_parametrized.py (mean, stddev and exactly one numeric parameter, the
    same in every result, when parameters are given)."""
    results = doc["results"]
    assert isinstance(results, list) and results
    for result in results:
        assert isinstance(result["command"], str) and result["command"]
        assert all(isinstance(t, float) for t in result["times"]) and result["times"]
        for key in ("mean", "median", "min", "max"):
            assert isinstance(result[key], float)
        assert result["stddev"] is None or isinstance(result["stddev"], float)
        for key in ("user", "system"):
            assert key not in result or isinstance(result[key], float)
        assert "exit_codes" not in result or all(isinstance(c, int) for c in result["exit_codes"])
    with_parameters = [r for r in results if "parameters" in r]
    if with_parameters:
        assert len(with_parameters) == len(results)
        names = {tuple(r["parameters"]) for r in results}
        assert len(names) == 1 and len(next(iter(names))) == 1
        for result in results:
            [(name, value)] = result["parameters"].items()
            float(value)


def export_of(path: str) -> dict:
    return to_hyperfine(api.load([path]))


def same_layout(mine: dict, theirs: dict) -> None:
    """Key for key, in order, type for type; values kept."""
    assert len(mine["results"]) == len(theirs["results"])
    for a, b in zip(mine["results"], theirs["results"]):
        assert list(a) == list(b)
        assert {k: type(v) for k, v in a.items()} == {k: type(v) for k, v in b.items()}
        assert a["command"] == b["command"] and a["times"] == b["times"]
        assert a.get("parameters") == b.get("parameters")
        for key in ("mean", "median", "min", "max", "stddev", "user", "system"):
            assert a[key] == pytest.approx(b[key], rel=1e-9)


@pytest.mark.parametrize("name", ["hyperfine-params.json", "hyperfine-exitcodes.json"])
def test_export_of_a_hyperfine_export_is_hyperfines_layout(name):
    theirs = json.loads(open(data(name)).read())
    mine = export_of(data(name))
    same_layout(mine, theirs)
    check_scripts_contract(mine)


@pytest.mark.skipif(HYPERFINE is None, reason="hyperfine is not installed (.ci/run installs it)")
@pytest.mark.parametrize(
    "args",
    [
        ["-L", "t", "0.010,0.002", "sleep {t}"],  # parameters; commands "sleep 0.010" kept as they are
        ["sleep 0.010", "sleep 0.002"],  # no parameters: hyperfine writes none
    ],
)
def test_export_matches_a_live_hyperfine_export(args, tmp_path):
    out = tmp_path / "hf.json"
    subprocess.run(
        [HYPERFINE, "--runs", "3", "-N", "--style", "none", *args, "--export-json", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    theirs = json.loads(out.read_text())
    mine = export_of(str(out))
    same_layout(mine, theirs)
    assert [r["command"] for r in mine["results"]] == ["sleep 0.010", "sleep 0.002"]
    check_scripts_contract(mine)


def test_several_hyperfine_commands_are_the_columns_by_default(capsys):
    assert cli_main(["report", "--format", "json", data("hyperfine-exitcodes.json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["columns"] == ["true", "false-ignored"]
    compared = [c for row in doc["rows"] for c in row["cells"].values() if c.get("comparison")]
    assert len(compared) == 1


def test_several_files_keep_the_file_as_column(capsys):
    assert (
        cli_main(["report", "--format", "json", data("hyperfine-params.json"), data("hyperfine-exitcodes.json")]) == 0
    )
    assert json.loads(capsys.readouterr().out)["by"] == "variant"


def test_store_export_picks_wall_time_and_keeps_commands(tmp_path):
    store = tmp_path / "s.db"
    env = {**os.environ, "PYTHONPATH": SRC}
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "3",
            "--no-progress",
            "--store",
            str(store),
            "-v",
            "slow=sleep 0.010",
            "-v",
            "fast=sleep 0.002",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    out = subprocess.run(
        [sys.executable, "-m", "abstat", "report", "--store", str(store), "--format", "hyperfine"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    check_scripts_contract(doc)
    results = doc["results"]
    assert [r["command"] for r in results] == ["sleep 0.010", "sleep 0.002"]
    assert all("parameters" not in r for r in results)  # abstat's labels are not hyperfine parameters
    # the times are the stored wall times; user and system the means of the stored user and sys times
    samples = json.loads(
        subprocess.run(
            [sys.executable, "-m", "abstat", "export", "--store", str(store), "--format", "json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=True,
        ).stdout
    )
    for result, variant in zip(results, ("slow", "fast")):

        def values(metric):
            return [s["value"] for s in samples if s["variant"] == variant and s["metric"] == metric]

        assert result["times"] == values("wall")
        assert result["user"] == pytest.approx(sum(values("user")) / 3)
        assert result["system"] == pytest.approx(sum(values("sys")) / 3)
        assert list(result)[:6] == ["command", "mean", "stddev", "median", "user", "system"]


def test_commands_that_collide_are_told_apart_by_their_labels():
    from abstat.report.sampleset import SampleSet

    sets = [
        SampleSet(labels={"host": h, "metric": "wall"}, runs=[[1.0, 2.0]], unit="s", extra={"command": "make -j8"})
        for h in ("milan", "rome")
    ]
    assert [r["command"] for r in to_hyperfine(sets)["results"]] == ["make -j8 [host=milan]", "make -j8 [host=rome]"]


def test_go_export_picks_the_time_unit():
    doc = to_hyperfine(api.load([data("go-new.txt")]))
    assert len(doc["results"]) == 2
    assert all(r["command"] in ("json", "gob") for r in doc["results"])
    check_scripts_contract(doc)


def test_no_wall_time_among_several_metrics_is_a_usage_error(tmp_path):
    from abstat.cli.flags import namer
    from abstat.errors import UsageError
    from abstat.report.sampleset import SampleSet

    sets = [SampleSet(labels={"metric": m}, runs=[[1.0]], unit="count") for m in ("cycles", "instructions")]
    with pytest.raises(UsageError, match="choose one with metrics") as raised:
        to_hyperfine(sets)
    assert raised.value.named(namer("report")).endswith("choose one with --metric")  # the library names the field


def test_hyperfine_reader_keeps_user_system_and_parameters():
    sets = peers.read_hyperfine(data("hyperfine-params.json"))
    doc = json.loads(open(data("hyperfine-params.json")).read())
    for sample_set, result in zip(sets, doc["results"]):
        assert sample_set.extra["parameters"] == result["parameters"]
        assert sample_set.extra["user"] == result["user"] and sample_set.extra["system"] == result["system"]


def test_compare_takes_named_hyperfine_files(capsys):
    path = data("hyperfine-exitcodes.json")
    assert cli_main(["compare", "--format", "json", f"old={path}", f"new={path}"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["columns"] == ["old", "new"]
    assert {row["labels"]["command"] for row in doc["rows"]} == {"true", "false-ignored"}
