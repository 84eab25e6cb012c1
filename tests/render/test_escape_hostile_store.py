"""Issue 36, item 7: data never reaches a terminal or a CI log raw.  A hostile store's units, labels,
commands and names carry ESC sequences, newlines and GitHub Actions workflow commands (``::error::``,
the older ``##[command]``); ``report --format email``, ``export --format csv`` and ``list`` show them
escaped, and no line of their output starts a workflow command."""

from __future__ import annotations

import re

import pytest

from abstat.render.escape import csv_cell, terminal
from abstat.store import open_store
from support import paths
from support.cli import run_abstat

SRC = paths.SRC
WORKFLOW_COMMAND = re.compile(r"^\s*(::[A-Za-z-]|##\[)", re.M)
UNIT = "s\x1b[2J\n::error::unit"
METRIC = "t\x1b]0;x\x07"


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("escape") / "s.db")
    with open_store(path) as store:
        invocation = store.start_invocation(
            "##[command]x", {"hostname": "h"}, variants=["a\x1b[31m", "::warning::v"], labels={"k": "v\n::error::label"}
        )
        for i in range(20):
            variant = ("a\x1b[31m", "::warning::v")[i % 2]
            store.add_run(
                invocation,
                variant=variant,
                command="true\n::error::cmd",
                iteration=i // 2,
                position=i,
                status="ok",
                exit_code=0,
                started_at=1.0 + i,
                wall=0.01,
                values={METRIC: [1.0 + (i % 5) / 100]},
                units={METRIC: UNIT},
            )
        store.finish_invocation(invocation, "complete")
    return path


def _abstat(*args: str) -> str:
    done = run_abstat(*args)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("report", "--format", "email"),
        ("export", "--format", "csv"),
        ("list",),
        ("report", "--format", "text"),
        ("compare",),
    ],
)
def test_hostile_data_is_escaped_and_starts_no_workflow_command(hostile_store, args):
    out = _abstat(*args, "--store", hostile_store)
    assert "\x1b" not in out and "\x07" not in out
    assert not WORKFLOW_COMMAND.search(out), [line for line in out.splitlines() if WORKFLOW_COMMAND.match(line)]


def test_email_shows_the_unit_escaped(hostile_store):
    out = _abstat("report", "--format", "email", "--store", hostile_store)
    assert "s\\x1b[2J\\x0a::error::unit" in out


def test_the_escapes():
    assert terminal("::error::x") == "\\x3a:error::x" and terminal("  ##[command]x") == "  \\x23#[command]x"
    assert terminal("::1") == "::1" and terminal("a::error::b") == "a::error::b"  # not a command's start
    assert csv_cell("v\n::error::x") == "v\\x0a::error::x" and csv_cell("=1+1") == "'=1+1"
    assert csv_cell("-1.5") == "-1.5" and csv_cell(3) == 3
