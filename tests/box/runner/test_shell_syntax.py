"""Commands run without a shell unless ``--shell``: shell syntax in one would reach the program as arguments
(a newcomer's ``--prepare 'rm -f objs && echo cleaned > prep.log'`` removed a file named ``cleaned``).  It is
refused, in one line with exit 2, before anything runs.

The reference is /bin/sh itself: for a command text, the words ``sh`` hands to a program (``printf '%s\\0'
TEXT``, globbing off) differ from the words abstat hands it (``shlex.split``) exactly when the text holds
shell syntax outside quotes.
"""

from __future__ import annotations

import os
import random
import shlex
import subprocess
import sys

from abstat.box.runner.model import shell_syntax
from support import paths

FRAGMENTS = [
    "a",
    "b1",
    "./bench",
    "-x",
    "5",
    "=",
    "/",
    ".",
    ",",
    "+",
    "%",
    ":",
    "@",
    "{",
    "}",
    "*",
    " ",
    " ",
    " ",
    "  ",
    "'",
    '"',
    "\\",
    "|",
    "&",
    ";",
    "<",
    ">",
    "2",
    "(",
    ")",
    "`",
    "#",
    "~",
    "~/",
    "$",
    "$x",
    "${x}",
    "$(",
    "$1",
    "$$",
    "$?",
    "\t",
    "[",
    "]",
    "^",
    "!",
]


def _sh_words(text: str, directory: str) -> list[str] | None:
    """The words /bin/sh passes to printf for ``text`` (None when sh finds it malformed)."""
    done = subprocess.run(
        ["/bin/sh", "-f", "-c", "printf '%s\\0' " + text],
        capture_output=True,
        cwd=directory,
        env={"PATH": os.environ["PATH"], "HOME": "/nonexistent-home", "x": "X"},
        timeout=10,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0 or done.stderr:
        return None
    return done.stdout.decode("utf-8", "replace").split("\0")[:-1]


def test_shell_syntax_is_found_exactly_when_sh_would_act_on_it(tmp_path):
    rng = random.Random(41)
    checked = flagged = 0
    for _ in range(1500):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 7))).strip()
        if not text or "\n" in text:
            continue
        try:
            ours = shlex.split(text)
        except ValueError:
            continue  # unbalanced quotes: refused as "cannot split" before this check
        theirs = _sh_words(text, str(tmp_path))
        if theirs is None:
            continue
        found = shell_syntax(text)
        assert (found is not None) == (theirs != ours), (text, found, ours, theirs)
        checked += 1
        flagged += found is not None
    assert checked > 500 and 0.2 < flagged / checked < 0.9, (checked, flagged)


def test_quoted_or_escaped_it_is_an_argument():
    for text in [
        "find . -exec rm {} \\;",
        "find . -exec rm {} ';'",
        "python3 -c 'import os; print(1)'",
        'sh -c "echo $HOME | wc -c"',
        "./bench a#b x~ cost\\$5",
        "./bench 5 100",
    ]:
        assert shell_syntax(text) is None, text
    assert shell_syntax("rm -f objs && echo cleaned > prep.log") == "&&"
    assert shell_syntax("./bench 2>&1") == "2>&1"


def test_run_refuses_it_before_anything_runs(tmp_path):
    (tmp_path / "cleaned").write_text("keep me\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "1",
            "--store",
            str(tmp_path / "s.db"),
            "--prepare",
            "rm -f objs && echo cleaned > prep.log",
            "-v",
            "a=true",
            "-v",
            "b=true",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(paths.SRC)},
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "--prepare: '&&' is shell syntax" in done.stderr and "--shell" in done.stderr
    assert (tmp_path / "cleaned").read_text() == "keep me\n" and not (tmp_path / "s.db").exists()
    shelled = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "1",
            "--shell",
            "--store",
            str(tmp_path / "s.db"),
            "--prepare",
            "rm -f objs && echo cleaned > prep.log",
            "-v",
            "a=true",
            "-v",
            "b=true",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(paths.SRC)},
    )
    assert shelled.returncode == 0, shelled.stderr
    assert (tmp_path / "prep.log").read_text() == "cleaned\n"
