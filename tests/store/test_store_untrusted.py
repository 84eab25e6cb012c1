"""Nothing malformed reaches the store, and rows an older abstat let in do not break its readers (issue 23)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from abstat.errors import InputError
from abstat.store import open_store
from support import paths

SRC = paths.SRC
GOOD = dict(
    variant="a",
    command="true",
    iteration=0,
    position=0,
    status="ok",
    exit_code=0,
    started_at=1.7e9,
    wall=0.01,
    values={"wall": [0.01]},
    units={"wall": "s"},
    notes=[],
)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("wall", "fast", "wall: not a number (str)"),
        ("wall", float("nan"), "wall: nan is not finite"),
        ("iteration", "x", "iteration: not an integer (str)"),
        ("iteration", True, "iteration: not an integer (bool)"),
        ("position", 1.5, "position: not an integer (float)"),
        ("exit_code", "0", "exit_code: not an integer (str)"),
        ("status", "great", "status: 'great' is not one of ok, failed, timeout"),
        ("variant", 5, "variant: not a text (int)"),
        ("values", [1, 2], "values: not a mapping of metric names to lists of numbers"),
        ("values", {"wall": ["x"]}, "values['wall'][0]: not a number (str)"),
        ("values", {"wall": "12"}, "values['wall']: not a list of numbers (str)"),
        ("values", {"wall": [10**400]}, "values['wall'][0]: inf is not finite"),
        ("units", {"wall": 5}, "units: not a mapping of metric names to unit texts"),
        ("notes", "not-a-list", "notes: not a list of texts"),
        ("notes", [1], "notes: not a list of texts"),
        ("started_at", None, "started_at: not a number (NoneType)"),
    ],
)
def test_a_run_with_a_field_of_the_wrong_type_is_refused_and_nothing_is_stored(tmp_path, field, value, message):
    with open_store(str(tmp_path / "s.db")) as store:
        invocation = store.start_invocation("e", {"hostname": "h"}, variants=["a"])
        store.add_run(invocation, **GOOD)
        with pytest.raises(InputError) as raised:
            store.add_run(invocation, **dict(GOOD, **{field: value}))
        assert str(raised.value) == f"refusing to store a run: {message}"
    db = sqlite3.connect(tmp_path / "s.db")
    assert db.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    assert db.execute("SELECT count(*) FROM samples").fetchone() == (1,)


def test_a_machine_record_or_labels_of_the_wrong_type_are_refused(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        with pytest.raises(InputError, match="machine: not a record"):
            store.start_invocation("e", {"hostname": ["x"]})
        with pytest.raises(InputError, match="labels: not a mapping of texts"):
            store.start_invocation("e", {"hostname": "h"}, labels={"host": 5})


def test_rows_an_older_abstat_stored_from_a_box_are_named_not_an_internal_error(tmp_path):
    store = str(tmp_path / "p.db")
    env = dict(os.environ, PYTHONPATH=SRC)

    def abstat(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "abstat", *args, "--store", store],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert abstat("run", "--experiment", "e", "-v", "a=true", "-v", "b=true", "-n", "3").returncode == 0
    db = sqlite3.connect(store)
    db.execute("UPDATE runs SET iteration = 'x' WHERE id = 1")
    db.execute("UPDATE runs SET notes = '\"not-a-list\"' WHERE id = 2")
    db.execute("UPDATE samples SET value = 'fast' WHERE run_id = 3 AND metric = 'wall'")
    db.execute("UPDATE samples SET unit = 5 WHERE run_id = 4 AND metric = 'wall'")
    db.commit()
    db.close()
    exported = abstat("export", "--format", "json")
    assert exported.returncode == 2
    assert exported.stderr.splitlines() == [
        f"abstat export: {store}: damaged store, exported only the readable samples: iteration of run 1 is not a"
        " number ('x'); notes of run 2 is not a JSON list; a 'wall' sample of invocation 1 is not a number ('fast')"
    ]
    for args in (("export", "--format", "hyperfine"), ("noise", "--experiment", "e"), ("show", "e")):
        result = abstat(*args)
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)


def test_no_command_names_the_store_with_its_password(tmp_path):
    """history's and noise's first errors (an unknown experiment, no rev label) and noise's JSON."""
    pytest.importorskip("psycopg")
    from support.store_pg import fresh_database, password_of

    url = fresh_database()
    secret = password_of(url)
    assert secret
    env = dict(os.environ, PYTHONPATH=SRC)

    def abstat(*args: str, store: str | None = url) -> subprocess.CompletedProcess:
        extra = ["--store", store] if store else []
        return subprocess.run(
            [sys.executable, "-m", "abstat", *args, *extra],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )

    assert abstat("run", "--experiment", "e", "-v", "a=true", "-v", "b=true", "-n", "2").returncode == 0
    assert abstat("noise", "-n", "2", "--experiment", "n", "--format", "json", "--", "true").returncode in (0, 2)
    for args in (
        ("history", "nosuch"),
        ("history", "e"),
        ("noise", "--experiment", "nosuch"),
        ("noise", "--experiment", "e"),
        ("noise", "--experiment", "n", "--format", "json"),
    ):
        for store in (url, None):  # --store, and $ABSTAT_STORE (a CI secret)
            env["ABSTAT_STORE"] = url if store is None else ""
            done = abstat(*args, store=store)
            assert secret not in done.stdout + done.stderr, (args, store, done.stderr)
            assert "internal error" not in done.stderr, (args, done.stderr)
    env.pop("ABSTAT_STORE")


def test_json_nested_too_deeply_in_a_stored_field_is_named_as_damage_not_an_internal_error(tmp_path):
    """attack19 F16: 100,000 nested ``[`` in a JSON column gave "internal error: RecursionError"."""
    store = str(tmp_path / "d.db")
    env = dict(os.environ, PYTHONPATH=SRC)

    def abstat(*args: str) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "abstat", *args, "--store", store]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

    assert abstat("run", "--experiment", "e", "-v", "a=true", "-v", "b=true", "-n", "2").returncode == 0
    deep = "[" * 100_000 + "]" * 100_000
    db = sqlite3.connect(store)
    db.execute("UPDATE runs SET notes = ? WHERE id = 1", (deep,))
    db.execute("UPDATE invocations SET settings = ?, machine = ?", (deep, '{"hostname": ' + deep + "}"))
    db.commit()
    db.close()
    exported = abstat("export", "--format", "json")
    assert exported.returncode == 2 and "notes of run 1 is not valid JSON" in exported.stderr, exported.stderr
    assert exported.stderr.startswith(f"abstat export: {store}: damaged store"), exported.stderr
    for args in (("show", "e"), ("history", "e"), ("run", "--resume", "e")):
        result = abstat(*args)
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)
