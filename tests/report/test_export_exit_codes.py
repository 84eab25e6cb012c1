"""Exit codes of stored runs: the store's read API on both back ends, and
``report --format hyperfine`` of a store against a live hyperfine export of
the same failing command (hyperfine -i: failing runs are among the times,
``exit_codes`` one per run, a signal N as 128 + N)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from support.store_pg import backend, store_name  # noqa: F401  (fixtures)

from abstat.report.export import to_hyperfine
from abstat.report.inputs import load_store
from abstat.store import open_store
from support import paths

HYPERFINE = shutil.which("hyperfine")
SRC = paths.SRC
MACHINE = {"hostname": "milan", "boot_id": "boot-1"}

# (variant, status, exit code, wall) in the order they ran
RUNS = [
    ("a", "ok", 0, 0.010),
    ("b", "failed", 3, 0.020),
    ("a", "failed", -9, 0.011),
    ("b", "ok", 0, 0.021),
    ("a", "timeout", None, 5.0),
    ("b", "failed", None, 0.0),
    ("a", "ok", 0, 0.012),
]


def _fill(name: str) -> None:
    with open_store(name) as store:
        for host in ("milan", "rome"):
            inv = store.start_invocation(
                "e", {**MACHINE, "hostname": host}, labels={"mode": "pv64"}, variants=["a", "b"]
            )
            for position, (variant, status, code, wall) in enumerate(RUNS):
                store.add_run(
                    inv,
                    variant=variant,
                    command=f"./{variant}",
                    iteration=position // 2,
                    position=position,
                    status=status,
                    exit_code=code,
                    started_at=1000.0 + position,
                    wall=wall,
                    values={"wall": [wall], "cycles": [wall * 1e9, 1.0]},
                    units={"wall": "s", "cycles": "count"},
                )
            store.finish_invocation(inv, "complete")
        # on a third host, every run of b failed in the first invocation: they still count for that host
        for b_status, b_code, b_wall in (("failed", 1, 0.7), ("ok", 0, 0.6)):
            inv = store.start_invocation(
                "e", {**MACHINE, "hostname": "naples"}, labels={"mode": "pv64"}, variants=["a", "b"]
            )
            store.add_run(
                inv,
                variant="a",
                command="./a",
                iteration=0,
                position=0,
                status="ok",
                exit_code=0,
                started_at=2000.0,
                wall=0.5,
                values={"wall": [0.5]},
                units={"wall": "s"},
            )
            store.add_run(
                inv,
                variant="b",
                command="./b",
                iteration=0,
                position=1,
                status=b_status,
                exit_code=b_code,
                started_at=2001.0,
                wall=b_wall,
                values={"wall": [b_wall]},
                units={"wall": "s"},
            )
            store.finish_invocation(inv, "complete")


def test_run_outcomes_read_every_run_in_order_on_both_back_ends(store_name):
    _fill(store_name)
    with open_store(store_name, create=False) as store:
        outcomes = store.run_outcomes("e")
        assert store.damage == []
    assert [(o["variant"], o["status"], o["exit_code"], o["wall"]) for o in outcomes[:7]] == RUNS
    assert [(o["variant"], o["status"], o["exit_code"], o["wall"]) for o in outcomes[7:14]] == RUNS
    assert [o["position"] for o in outcomes[:7]] == list(range(7))
    assert [o["iteration"] for o in outcomes[:7]] == [1, 1, 2, 2, 3, 3, 4]
    assert len({o["invocation"] for o in outcomes}) == 4 and len(outcomes) == 18
    assert all(isinstance(o["exit_code"], (int, type(None))) and not isinstance(o["exit_code"], bool) for o in outcomes)
    assert all(isinstance(o["wall"], float) for o in outcomes)


def test_stored_sets_carry_hyperfines_exit_codes_on_both_back_ends(store_name):
    _fill(store_name)
    assert all("exit_codes" not in s.extra for s in load_store(store_name))  # read only when asked
    sets = {
        (s.labels["host"], s.labels["variant"], s.labels["metric"]): s for s in load_store(store_name, exit_codes=True)
    }
    a = sets["milan", "a", "wall"]
    # the failed run is there with its wall time, killed by SIGKILL is 128 + 9; the timeout is not
    assert a.extra["exit_codes"] == [0, 137, 0] and a.extra["all_values"] == [0.010, 0.011, 0.012]
    assert a.values == [0.010, 0.012]  # the statistics of abstat's reports stay those of successful runs
    b = sets["rome", "b", "wall"]
    assert b.extra["exit_codes"] == [3, 0] and b.extra["all_values"] == [0.020, 0.021]  # b could not start
    naples = sets["naples", "b", "wall"]
    assert naples.extra["exit_codes"] == [1, 0] and naples.extra["all_values"] == [0.7, 0.6]
    # other metrics were not stored for failed runs: their successful runs only
    assert "exit_codes" not in sets["milan", "a", "cycles"].extra  # two values per run: codes would not line up
    doc = to_hyperfine([s for key, s in sets.items() if key[0] == "milan"])
    [result_a, result_b] = doc["results"]
    assert result_a["command"] == "./a" and result_a["times"] == [0.010, 0.011, 0.012]
    assert result_a["exit_codes"] == [0, 137, 0] and result_a["mean"] == pytest.approx(0.011)
    assert result_b["exit_codes"] == [3, 0] and list(result_b)[-2:] == ["times", "exit_codes"]


def test_a_damaged_exit_code_reads_as_unknown_and_is_named(tmp_path):
    name = str(tmp_path / "s.db")
    _fill(name)
    import sqlite3

    with sqlite3.connect(name) as db:
        db.execute("UPDATE runs SET exit_code = 'x' WHERE id = 2")
    with open_store(name, create=False) as store:
        outcomes = store.run_outcomes("e")
        assert outcomes[1]["exit_code"] is None
        assert store.damage == ["exit code of run 2 is not a number ('x')"]


def _experiment(store) -> str:
    with open_store(str(store), create=False) as opened:
        [name] = opened.experiment_names()
    return name


# Exits 0, 3, then kills itself with SIGTERM, in turn; $0 is its counter file.
FLAKY = """sh -c 'n=$(cat "$0" 2>/dev/null || echo 0); echo $((n+1)) > "$0"; \
case $((n % 3)) in 1) exit 3;; 2) kill -TERM $$;; esac' {counter}"""


@pytest.mark.skipif(HYPERFINE is None, reason="hyperfine is not installed (.ci/run installs it)")
def test_store_export_has_the_exit_codes_hyperfine_writes_for_the_same_command(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC}
    theirs_path = tmp_path / "hf.json"
    subprocess.run(
        [
            HYPERFINE,
            "-N",
            "-i",
            "--runs",
            "6",
            "--style",
            "none",
            "--export-json",
            str(theirs_path),
            FLAKY.format(counter=tmp_path / "hf-counter"),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    [theirs] = json.loads(theirs_path.read_text())["results"]
    store = tmp_path / "s.db"
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "6",
            "--ignore-failure",
            "--no-progress",
            "--store",
            str(store),
            "-v",
            "ok=true",
            "-v",
            "flaky=" + FLAKY.format(counter=tmp_path / "counter"),
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
    ours = {r["command"]: r for r in json.loads(out.stdout)["results"]}
    mine = ours[FLAKY.format(counter=tmp_path / "counter")]
    assert theirs["exit_codes"] == [0, 3, 143, 0, 3, 143]  # the reference: signals as 128 + N
    assert mine["exit_codes"] == theirs["exit_codes"]
    assert list(mine) == list(theirs)
    assert {k: type(v) for k, v in mine.items()} == {k: type(v) for k, v in theirs.items()}
    assert all(type(c) is int for c in mine["exit_codes"]) and len(mine["times"]) == 6
    assert ours["true"]["exit_codes"] == [0] * 6
    # abstat export --format hyperfine is the same exporter
    exported = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "export",
            "--store",
            str(store),
            "--format",
            "hyperfine",
            "--experiment",
            _experiment(store),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout == out.stdout
    # read back, abstat says what hyperfine -i means
    export = tmp_path / "ours.json"
    export.write_text(out.stdout)
    back = subprocess.run(
        [sys.executable, "-m", "abstat", "report", str(export), "--format", "text"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert back.returncode == 0, back.stderr
    assert "4 of 6 runs exited non-zero (hyperfine -i); their times are included" in back.stdout


def test_export_format_hyperfine_takes_one_experiment_or_all(store_name, capsys):
    from abstat.cli import main as cli_main

    _fill(store_name)
    with open_store(store_name) as store:
        inv = store.start_invocation("other", MACHINE, variants=["c"])
        store.add_run(
            inv,
            variant="c",
            command="./c",
            iteration=0,
            position=0,
            status="ok",
            exit_code=0,
            started_at=0.0,
            wall=0.25,
            values={"wall": [0.25]},
            units={"wall": "s"},
        )
        store.finish_invocation(inv, "complete")
    assert cli_main(["export", "--store", store_name, "--format", "hyperfine", "--experiment", "e"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert len(results) == 6 and {r["command"].split(" [")[0] for r in results} == {"./a", "./b"}
    assert [r["exit_codes"] for r in results if r["command"].startswith("./a [") and "host=milan" in r["command"]] == [
        [0, 137, 0]
    ]
    assert cli_main(["export", "--store", store_name, "--format", "hyperfine"]) == 0
    everything = json.loads(capsys.readouterr().out)["results"]
    assert [r["times"] for r in everything if r["command"] == "./c"] == [[0.25]]
    assert cli_main(["export", "--store", store_name, "--format", "hyperfine", "--experiment", "none"]) == 2
    assert "no experiment 'none'" in capsys.readouterr().err
