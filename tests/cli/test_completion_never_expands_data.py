"""The shells' completion treats stored experiment names as data (attack22 A4): bash's ``compgen -W``
expanded ``$(...)``, backticks and ``${...}`` in the names it was given, so a store's experiment name ran
a command when Tab was pressed.  Checked in the real bash, zsh and fish, with an ``abstat`` on PATH
running this tree over a store whose names hold command substitutions, a newline and an escape
sequence: no command runs, bash offers the names shell-quoted, and ``list --names`` prints no control
character."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from support import paths
from support.zsh_driver import ZSH_DRIVER

SRC = paths.SRC


def _clear(marks: Path) -> None:
    for mark in marks.iterdir():
        mark.unlink()


def _need(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        pytest.skip(f"{program} is not installed (.ci/run installs it)")
    return path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """./abstat.db whose experiments are named to run commands (each would create a file under marks/),
    hold a newline or an escape sequence, and one plain name; an abstat on PATH; the three scripts."""
    root = tmp_path_factory.mktemp("hostile-completion")
    marks = root / "marks"
    marks.mkdir()
    names = [
        f"$(touch {marks}/dollar)",
        f"`touch {marks}/backtick`",
        "${HOME}-home",
        "$((6*7))-arith",
        f"nl\n$(touch {marks}/newline)",
        "esc\x1b]0;TITLE\x07x",
        "plain name",
    ]
    env = {**os.environ, "PYTHONPATH": SRC}
    for i in range(len(names)):
        subprocess.run(
            [sys.executable, "-m", "abstat", "run", "-n", "1", "--no-progress", "--store", str(root / "abstat.db")]
            + ["--experiment", f"e{i}", "--", "true"],
            capture_output=True,
            check=True,
            timeout=120,
            env=env,
        )
    with sqlite3.connect(root / "abstat.db") as db:
        for i, name in enumerate(names):
            db.execute("UPDATE experiments SET name = ? WHERE name = ?", (name, f"e{i}"))
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "abstat").write_text(f'#!/bin/sh\nPYTHONPATH={SRC} exec {sys.executable} -m abstat "$@"\n')
    (bin_dir / "abstat").chmod(0o755)
    for shell, file in (("bash", "abstat.bash"), ("zsh", "_abstat"), ("fish", "abstat.fish")):
        out = subprocess.run(
            [sys.executable, "-m", "abstat", "completion", shell], capture_output=True, text=True, env=env, check=True
        ).stdout
        (root / file).write_text(out)
    shell_env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "ABSTAT_STORE": "", "HOME": str(root)}
    return root, marks, names, shell_env


def test_list_names_prints_no_control_character(hostile):
    root, _, names, env = hostile
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "list", "--names", "--store", str(root / "abstat.db")],
        capture_output=True,
        timeout=60,
        env={**env, "PYTHONPATH": SRC},
    )
    assert done.returncode == 0 and done.stderr == b""
    assert not re.search(rb"[\x00-\x09\x0b-\x1f\x7f]", done.stdout)
    # the printable names, one a line; those holding a newline or an escape cannot be completed and are left out
    assert sorted(done.stdout.decode().splitlines()) == sorted(n for n in names if n.isprintable())


def _bash(root: Path, env, *words: str) -> list[str]:
    """COMPREPLY for the line ``words`` (the last one being completed), as bash's programmable completion
    calls the function."""
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    code = (
        f'source abstat.bash; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMP_LINE="${{COMP_WORDS[*]}}"; '
        'COMP_POINT=${#COMP_LINE}; _shtab_abstat abstat "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; '
        "printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    done = subprocess.run([_need("bash"), "-c", code], capture_output=True, text=True, timeout=60, cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.split("\n") if line]


def _unquote(word: str) -> str:
    """What bash reads back from printf %q's backslash quoting of a printable name."""
    return re.sub(r"\\(.)", r"\1", word)


def test_bash_completion_runs_no_command_and_quotes_the_names(hostile):
    root, marks, names, env = hostile
    _clear(marks)
    offered = _bash(root, env, "abstat", "show", "")
    assert os.listdir(marks) == []
    assert sorted(_unquote(w) for w in offered) == sorted(n for n in names if n.isprintable())
    assert "\\$\\(\\(6\\*7\\)\\)-arith" in offered and "plain\\ name" in offered  # no 42: nothing is expanded
    for word in offered:  # every special character quoted: inserted on the line, the word is the name
        assert not re.search(r"(?<!\\)[$`()\s{}*]", word), word
    # a prefix, typed raw or quoted, selects by the name
    assert _bash(root, env, "abstat", "show", "$(") == [w for w in offered if _unquote(w).startswith("$(")]
    assert _bash(root, env, "abstat", "run", "--resume", "\\$\\{") == ["\\$\\{HOME\\}-home"]
    assert _bash(root, env, "abstat", "show", "pl") == ["plain\\ name"]
    assert os.listdir(marks) == []


def test_fish_completion_runs_no_command(hostile):
    root, marks, names, env = hostile
    _clear(marks)
    code = 'source abstat.fish; complete -C "abstat show "'
    done = subprocess.run([_need("fish"), "-c", code], capture_output=True, text=True, timeout=60, cwd=root, env=env)
    assert os.listdir(marks) == []
    shown = {line.split("\t")[0] for line in done.stdout.split("\n") if line}
    assert {n for n in names if n.isprintable()} <= shown, done.stdout


def test_zsh_completion_runs_no_command(hostile):
    root, marks, _, env = hostile
    _clear(marks)
    (root / "driver.zsh").write_text(ZSH_DRIVER)
    done = subprocess.run(
        [_need("zsh"), "-f", "driver.zsh", "abstat show ", "name"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env=env,
    )
    assert "plain" in done.stdout.split("abstat show ", 1)[-1], done.stdout[-500:]
    assert os.listdir(marks) == []
