"""``python -m abstat ARGS`` as a user runs it, from this checkout's src/: the ``abstat_cli`` fixture.

``run_abstat(*args, cwd=..., env=..., stdin=..., timeout=...)`` returns the finished
``subprocess.CompletedProcess`` (standard output and error as text unless ``text=False``), whatever
the exit status (``check=True`` raises on a non-zero one).  The child gets this checkout's src/ first
on ``PYTHONPATH`` (whatever abstat is installed), standard input from ``stdin`` (bytes or text) or
/dev/null, and the test's environment without the user's ``ABSTAT_STORE`` and ``ABSTAT_DEBUG`` (a
store or a traceback of the user's own would change what the tests check) unless ``env`` is given:
then exactly ``env`` (with src/ on its path).  ``extra_env`` adds variables to either.

The ``abstat_cli`` fixture is ``run_abstat`` run in the test's ``tmp_path`` unless ``cwd=`` says
otherwise; modules whose helpers call it at import time or from module fixtures import
``run_abstat`` itself."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from support.paths import SRC

USER_SETTINGS = ("ABSTAT_STORE", "ABSTAT_DEBUG")


def environment(env: Mapping[str, str] | None = None, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment (see the module's docstring)."""
    made = {k: v for k, v in os.environ.items() if k not in USER_SETTINGS} if env is None else dict(env)
    made.update(extra_env or {})
    rest = [p for p in made.get("PYTHONPATH", "").split(os.pathsep) if p and p != SRC]
    made["PYTHONPATH"] = os.pathsep.join([SRC, *rest])
    return made


def run_abstat(
    *args: str | os.PathLike,
    cwd: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    stdin: bytes | str | None = None,
    timeout: float = 120,
    text: bool = True,
    check: bool = False,
) -> subprocess.CompletedProcess:
    if isinstance(stdin, str) and not text:
        stdin = stdin.encode()
    elif isinstance(stdin, bytes) and text:
        stdin = stdin.decode()
    return subprocess.run(
        [sys.executable, "-m", "abstat", *map(str, args)],
        cwd=cwd,
        env=environment(env, extra_env),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=text,
        timeout=timeout,
        check=check,
    )


def imported_modules(cwd: str | os.PathLike, *words: str) -> tuple[set[str], str]:
    """The modules ``python -X importtime -m abstat WORDS`` imports (run in ``cwd``; it must succeed), and its
    standard output."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "abstat", *words],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    return {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}, run.stdout


@pytest.fixture
def abstat_cli(tmp_path: Path):
    """``abstat_cli("compare", "a.txt", "b.txt")``: ``run_abstat`` in ``tmp_path`` (by default)."""
    return functools.partial(run_abstat, cwd=tmp_path)
