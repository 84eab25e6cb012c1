"""The sample outputs in docs/ are what abstat prints now (issue 35), as datasette checks its CLI reference.

A sample is a fenced block without a language whose lines starting with ``$ abstat `` are commands,
each followed by its output (up to the next ``$ `` line or the end of the block).  Every such command
of a subcommand in :data:`CHECKED` (computed from files: nothing measured, so the output is the same
on every machine) is run and must print exactly the lines shown: from the repository root, or, for
seed 000's files as their author had them (``milan-hcall-pv64-before``...: docs/workflows.md 1.4,
1.5), from a folder of them made by the stand-in with the seeds of tests/workflows/test_workflows_hcall.py.
A ``*`` in a command is expanded there, sorted, as the shell does.  Samples of measured runs
(``abstat run``, ``doctor``) are one real run's output and cannot be compared; they are left out.

``ABSTAT_UPDATE_DOCS=1`` rewrites a sample that differs in place (review the diff).
"""

from __future__ import annotations

import glob
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support import paths
from support.cli import environment

DOCS = paths.ROOT / "docs"
CHECKED = ("compare", "report", "audit", "plan")
UPDATE = bool(os.environ.get("ABSTAT_UPDATE_DOCS"))
CELLS = [("milan", "pv64"), ("milan", "pv32"), ("naples", "pv64"), ("naples", "pv32")]


def samples() -> list[tuple[str, int, str, list[str]]]:
    """(doc, line of the command, command, output lines) of every checked command in docs/*.md."""
    found = []
    for path in sorted(DOCS.glob("*.md")):
        found += _samples_of(path.name, path.read_text(encoding="utf-8").split("\n"))
    return found


def _samples_of(name: str, lines: list[str]) -> list[tuple[str, int, str, list[str]]]:
    found: list[tuple[str, int, str, list[str]]] = []
    fenced = inside = False  # in a fenced block; in one without a language
    current: tuple[str, int, str, list[str]] | None = None
    for number, line in enumerate(lines, 1):
        if line.startswith("```") or line.startswith("$ "):
            if current is not None:
                found.append(current)
            current = None
        if line.startswith("```"):
            fenced = not fenced
            inside = fenced and line.strip() == "```"
        elif inside and line.startswith("$ "):
            words = shlex.split(line[2:])
            if words[:1] == ["abstat"] and len(words) > 1 and words[1] in CHECKED:
                current = (name, number, line[2:], [])
        elif inside and current is not None:
            current[3].append(line)
    return found


@pytest.fixture(scope="module")
def hcall_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("results")
    bench = paths.ROOT / "examples" / "workflows" / "hcall_bench.py"
    for seed, (host, mode) in enumerate(CELLS):
        for offset, variant in enumerate(("before", "after")):
            argv = [
                sys.executable,
                str(bench),
                "--host",
                host,
                "--mode",
                mode,
                "--variant",
                variant,
                "--format",
                "plain",
                "--seed",
                str(10 * seed + offset),
            ]
            with open(folder / f"{host}-hcall-{mode}-{variant}", "w") as handle:
                subprocess.run(argv, stdout=handle, check=True, timeout=60)
    return folder


def printed(command: str, cwd: Path) -> list[str]:
    """What ``command`` prints (standard output, then error), as lines."""
    words: list[str] = []
    for word in shlex.split(command)[1:]:
        words += sorted(glob.glob(word, root_dir=cwd)) if "*" in word and not word.startswith("{") else [word]
    done = subprocess.run(
        [sys.executable, "-m", "abstat", *words],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(extra_env={"COLUMNS": "200", "NO_COLOR": "1"}),
    )
    return (done.stdout + done.stderr).rstrip("\n").split("\n")


SAMPLES = samples()


def test_the_docs_have_checked_samples():
    assert len(SAMPLES) >= 8 and {doc for doc, *_ in SAMPLES} >= {"compare.md", "workflows.md"}


@pytest.mark.parametrize("doc,line,command,shown", SAMPLES, ids=[f"{d}:{n}" for d, n, _, _ in SAMPLES])
def test_a_doc_sample_is_what_abstat_prints(doc, line, command, shown, hcall_files):
    cwd = hcall_files if "-hcall-" in command else paths.ROOT
    now = printed(command, cwd)
    expected = list(shown)
    while expected and expected[-1] == "":
        expected.pop()
    if UPDATE and now != expected:
        _rewrite(DOCS / doc, command, expected, now)
        return
    assert now == expected, f"docs/{doc}:{line}: `{command}` prints otherwise now (ABSTAT_UPDATE_DOCS=1)"


def _rewrite(path: Path, command: str, old: list[str], new: list[str]) -> None:
    """The sample of ``command`` (its first with the output ``old``) given the output ``new``."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for start in range(len(lines)):
        if lines[start] == f"$ {command}" and lines[start + 1 : start + 1 + len(old)] == old:
            lines[start + 1 : start + 1 + len(old)] = new
            path.write_text("\n".join(lines), encoding="utf-8")
            return
    raise AssertionError(f"{path}: the sample of {command!r} not found")
