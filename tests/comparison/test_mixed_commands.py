"""A stored variant whose runs ran different commands is compared with a
warning naming it and its commands (run, show, compare EXP:a, report
--store, noise --experiment), and without one when the commands agree."""

from __future__ import annotations


import pytest
from support.store_pg import backend, store_name  # noqa: F401  (fixtures: sqlite and postgresql)
from support.cli import run_abstat

WARNING = "ran different commands"


def abstat(*args, cwd):
    done = run_abstat(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def scripts(tmp_path):
    for name, delay in (("bench-old", "0.001"), ("bench-new", "0.002")):
        path = tmp_path / name
        path.write_text(f"#!/bin/sh\nsleep {delay}\n")
        path.chmod(0o755)
    return tmp_path


def run_twice(cwd, swap):
    first = ["-v", "before=./bench-old", "-v", "after=./bench-new"]
    second = ["-v", "before=./bench-new", "-v", "after=./bench-old"] if swap else first
    abstat("run", "-n", "2", "--experiment", "mix", *first, "--store", "s.db", cwd=cwd)
    return abstat("run", "-n", "2", "--experiment", "mix", *second, "--store", "s.db", cwd=cwd)


def test_swapped_commands_are_named_everywhere_runs_are_compared(scripts):
    run = run_twice(scripts, swap=True)
    line = "runs of one variant ran different commands (`./bench-old`, `./bench-new`)"
    assert line in run and "runs of one variant ran different commands (`./bench-new`, `./bench-old`)" in run
    assert "--experiment name" not in run  # run's summary: the finding in one line, the advice below
    shown = abstat("show", "mix", "--store", "s.db", cwd=scripts)
    assert line in shown and "measure under a new --experiment name" in shown  # show gives the advice
    compared = abstat("compare", "mix:before", "mix:after", "--store", "s.db", cwd=scripts)
    assert line + ": wall mix:before\n" in compared and "(`./bench-new`, `./bench-old`): wall mix:after\n" in compared
    report = abstat("report", "--store", "s.db", cwd=scripts)
    assert "mix:before: runs of one variant ran different commands: `./bench-old`, `./bench-new`" in report
    assert "mix:after: runs of one variant ran different commands: `./bench-new`, `./bench-old`" in report
    json_text = abstat("show", "mix", "--store", "s.db", "--format", "json", cwd=scripts)
    assert '"command-differs"' in json_text


def test_one_variant_summary_says_its_medians_pool_two_commands(scripts):
    abstat("run", "-n", "2", "--experiment", "one", "-v", "a=./bench-old", "--store", "s.db", cwd=scripts)
    out = abstat("run", "-n", "2", "--experiment", "one", "-v", "a=./bench-new", "--store", "s.db", cwd=scripts)
    assert (
        "warning: a: runs of one variant ran different commands: `./bench-old`, `./bench-new`; they are pooled" in out
    )
    again = abstat("run", "-n", "2", "--experiment", "two", "-v", "a=./bench-old", "--store", "s.db", cwd=scripts)
    assert WARNING not in again


def test_same_commands_give_no_warning(scripts):
    assert WARNING not in run_twice(scripts, swap=False)
    assert WARNING not in abstat("show", "mix", "--store", "s.db", cwd=scripts)
    assert WARNING not in abstat("compare", "mix:before", "mix:after", "--store", "s.db", cwd=scripts)
    assert WARNING not in abstat("report", "--store", "s.db", cwd=scripts)


@pytest.mark.parametrize("second", ["./bench-new", "./bench-old"])
def test_noise_names_a_changed_command(scripts, second):
    abstat("noise", "-n", "2", "--store", "n.db", "--experiment", "nz", "--", "./bench-old", cwd=scripts)
    out = abstat("noise", "-n", "2", "--store", "n.db", "--experiment", "nz", "--", second, cwd=scripts)
    stored = abstat("noise", "--store", "n.db", "--experiment", "nz", cwd=scripts)
    if second == "./bench-old":
        assert WARNING not in out and WARNING not in stored
    else:
        expected = "warning: a, b: runs of one variant ran different commands: `./bench-old`, `./bench-new`"
        assert expected in out.splitlines()[1] and expected in stored


def test_variant_commands_on_both_back_ends(store_name):
    from abstat.store import open_store

    machine = {"hostname": "milan", "boot_id": "boot-1"}
    with open_store(store_name) as store:
        ids = []
        for commands in ({"before": "./old", "after": "./new"}, {"before": "./new", "after": "./new"}):
            invocation = store.start_invocation("mix", machine, variants=list(commands))
            for position, (variant, command) in enumerate(commands.items()):
                store.add_run(
                    invocation,
                    variant=variant,
                    command=command,
                    iteration=0,
                    position=position,
                    status="ok",
                    exit_code=0,
                    started_at=1000.0 + position,
                    wall=1.0,
                    values={"wall": [1.0]},
                    units={"wall": "s"},
                )
            store.finish_invocation(invocation, "complete")
            ids.append(invocation.id)
    with open_store(store_name, create=False) as store:
        assert store.variant_commands("mix") == {"before": ["./old", "./new"], "after": ["./new"]}
        assert store.variant_commands("mix", [ids[1]]) == {"before": ["./new"], "after": ["./new"]}
