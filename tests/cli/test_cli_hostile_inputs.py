"""Adversarial inputs, second round: each test pins a defect found by attacking the CLI.

The rule (brief): bad input gets one line naming it, exit status 2, no
traceback, no "internal error"; output from data is escaped for where it
goes; no input makes a command hang.  Speed checks here have margins of
100x or more (the old code needed minutes), so a slow machine cannot fail them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from test_cli_bad_inputs import abstat, one_line_error
from test_cli_bad_inputs import good_store as good_store  # noqa: F401 (a fixture, used by name)

# --------------------------------------------------------------------------
# audit: regular expressions that backtracked quadratically on long lines


@pytest.mark.parametrize("line", ["1" * 100_000, "1" * 100_000 + " +/- 1", "1" * 100_000 + "% +/- 1%"])
def test_audit_of_a_long_run_of_digits_is_fast(tmp_path: Path, line: str) -> None:
    """``\\d+\\.?\\d*`` splits a run of n digits in n ways: 78 s for 40,000 digits."""
    path = tmp_path / "mail.txt"
    path.write_text(line + "\n")
    proc = abstat("audit", str(path), cwd=tmp_path, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert b"no ministat report" in proc.stdout


def test_audit_number_pattern_is_unchanged() -> None:
    from abstat.audit import scan_lines

    number = re.compile(rf"^{scan_lines._NUM}$")
    for text in ["1", "12", "12.", "12.5", ".5", "-1.5e-3", "+2E+10", "nan", "-inf", "1.5.", "1..5", "e5", "."]:
        old = re.fullmatch(r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)", text)
        assert bool(number.match(text)) == bool(old), text


def test_audit_of_a_long_line_of_numbers_that_is_no_row_is_fast(tmp_path: Path) -> None:
    """The averages-table row pattern (lazy label, then numbers) took 21 s for 10,000 numbers."""
    path = tmp_path / "mail.txt"
    path.write_text("x" + " 1.5" * 50_000 + " z\n")
    proc = abstat("audit", str(path), cwd=tmp_path, timeout=30)
    assert proc.returncode == 0, proc.stderr


_OLD_ROW = None


def _old_row(text: str) -> tuple[str, list[str], str | None] | None:
    """The regular expression ``_row`` replaces (the reference, fast enough on short lines)."""
    global _OLD_ROW
    from abstat.audit import averages

    if _OLD_ROW is None:
        num, units = averages._NUM, averages._UNITS
        _OLD_ROW = re.compile(
            rf"^(?P<label>[A-Za-z][\w .,'()/+-]*?)\s*:?\s+(?P<nums>{num}(?:\s+{num})*)"
            rf"\s*(?P<unit>{units})?$"
        )
    match = _OLD_ROW.match(text)
    if match is None:
        return None
    return match.group("label").strip().rstrip(":"), match.group("nums").split(), match.group("unit")


def test_audit_row_matcher_agrees_with_the_regular_expression() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from abstat.audit.averages import _row

    pieces = st.sampled_from(list("ab1 2.:-+e\tsm%()/,'") + ["ms", "sec", "5 ", "x: ", "1.5 ", "µs", "ops/s", "E3"])

    @settings(max_examples=3000, deadline=None)
    @given(st.lists(pieces, max_size=12))
    def check(parts: list[str]) -> None:
        text = "".join(parts).strip()
        row = _row(text)
        mine = None if row is None else (row[0].strip().rstrip(":"), row[1].split(), row[2])
        assert mine == _old_row(text), text

    check()
    for text in ["without patch: 12.5 12.7 12.6 s", "with 2 CPUs 1 2 3", "x 5 : 1 2", "base 1.5ms", "a: 5%"]:
        row = _row(text)
        assert row is not None and (row[0].strip().rstrip(":"), row[1].split(), row[2]) == _old_row(text)


# --------------------------------------------------------------------------
# an error message quotes at most a short piece of the bad value


def test_a_huge_number_on_one_line_is_quoted_short(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    (tmp_path / "long.txt").write_text("1" * 1_000_000 + "\n2\n3\n")  # a finite-looking token that overflows
    line = one_line_error(
        abstat("compare", "a.txt", "long.txt", cwd=tmp_path), "compare", "long.txt:1:", "not a finite number"
    )
    assert len(line) < 200, len(line)


def test_a_long_bad_cell_of_a_peer_file_is_quoted_short(tmp_path: Path) -> None:
    import json

    (tmp_path / "h.json").write_text(
        json.dumps({"results": [{"command": "a", "mean": 1, "times": ["x" * 100_000, 1]}]})
    )
    line = one_line_error(abstat("report", "h.json", cwd=tmp_path), "report", "h.json", "not a number")
    assert len(line) < 200, len(line)
    (tmp_path / "h.csv").write_text("rev,value\nr1,1\nr2," + "x" * 100_000 + "\n")
    line = one_line_error(abstat("report", "--csv-value", "value", "h.csv", cwd=tmp_path), "report", "h.csv:3:")
    assert len(line) < 200, len(line)


# --------------------------------------------------------------------------
# names from the store are escaped for the terminal

ESC_NAME = "e\x1b]0;PWNED\x07<b>|x"


@pytest.fixture
def evil_names_store(tmp_path: Path) -> Path:
    from abstat.store import open_store

    path = tmp_path / "s.db"
    with open_store(str(path)) as store:
        inv = store.start_invocation(ESC_NAME, {"hostname": "h\x1b[2J"}, variants=["a"])
        for i in range(3):
            store.add_run(
                inv,
                variant="a",
                command="true",
                iteration=i,
                position=i,
                status="ok",
                exit_code=0,
                started_at=0.0,
                wall=1.0 + i,
                values={"wall": [1.0 + i]},
                units={"wall": "s"},
                notes=[],
            )
    return path


def test_list_escapes_experiment_and_host_names(evil_names_store: Path) -> None:
    proc = abstat("list", "--store", str(evil_names_store), cwd=evil_names_store.parent)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert "\x1b" not in text and "\x07" not in text, text
    assert "e\\x1b]0;PWNED\\x07<b>|x" in text and "h\\x1b[2J" in text
    as_json = abstat("list", "--format", "json", "--store", str(evil_names_store), cwd=evil_names_store.parent)
    assert __import__("json").loads(as_json.stdout)[0]["name"] == ESC_NAME  # JSON keeps the data as it is


# --------------------------------------------------------------------------
# history from CSV files: extreme values, names with control characters


def _history_csv(tmp_path: Path, name: str, rows: list[tuple[str, float]]) -> str:
    (tmp_path / name).write_text("rev,value\n" + "".join(f"{rev},{value!r}\n" for rev, value in rows))
    return name


def test_history_html_of_values_near_the_largest_double(tmp_path: Path) -> None:
    name = _history_csv(tmp_path, "huge.csv", [(f"r{i}", 1e308 if i > 20 else 1.7e308) for i in range(40)])
    # (--no-state: no note that files alone keep no record of change points)
    proc = abstat("history", "--input", name, "--repo", str(tmp_path), "--format", "html", "--no-state", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    # the SVG plot (no matplotlib) is drawn from finite coordinates: no nan or inf anywhere in it
    svg = proc.stdout[proc.stdout.index(b"<svg") : proc.stdout.index(b"</svg>")]
    assert b"<path" in svg or b"<circle" in svg or b"<polyline" in svg, svg[:300]
    assert not re.search(rb"nan|inf", svg, re.I), svg[:300]


def test_history_median_of_two_huge_values_is_finite() -> None:
    from abstat.history.series import Point

    assert Point("r", [1.7e308, 1.6e308]).centre == pytest.approx(1.65e308)
    assert Point("r", [-1.7e308, -1.6e308]).centre == pytest.approx(-1.65e308)
    assert Point("r", [1.0, 2.0]).centre == 1.5


CONTROL_REV = "r{}\x1b[31m<script>|"


@pytest.fixture
def control_history(tmp_path: Path) -> Path:
    _history_csv(tmp_path, "h.csv", [(CONTROL_REV.format(i), 5.0 + (i > 20) + 0.001 * (i % 3)) for i in range(40)])
    return tmp_path


def test_history_text_and_markdown_escape_revisions(control_history: Path) -> None:
    for fmt in ("text", "markdown"):
        proc = abstat(
            "history", "--input", "h.csv", "--repo", str(control_history), "--format", fmt, cwd=control_history
        )
        assert proc.returncode == 0, proc.stderr
        text = proc.stdout.decode()
        assert "\x1b" not in text, text
        assert "revision(s)" in text
        if fmt == "markdown":
            assert "<script" not in text
            lines = text.splitlines()
            last_row = max(i for i, line in enumerate(lines) if line.startswith("| "))
            assert lines[last_row + 1] == "", "a line right after a table is one more row of it"


def test_history_html_plot_of_revisions_with_control_characters(control_history: Path) -> None:
    proc = abstat(
        "history",
        "--input",
        "h.csv",
        "--repo",
        str(control_history),
        "--format",
        "html",
        "--no-state",  # (no note that files alone keep no record of change points)
        cwd=control_history,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b"", proc.stderr.decode()  # matplotlib warned about glyph 27 on stderr
    assert b"\x1b" not in proc.stdout and b"<script" not in proc.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["history", "--input", "h.csv"],
        ["bisect", "--run", "true", "--metric", "wall", "--good", "HEAD~1", "--bad", "HEAD"],
    ],
)
def test_repository_directory_that_does_not_exist(tmp_path: Path, command: list[str]) -> None:
    _history_csv(tmp_path, "h.csv", [("r1", 1.0)])
    proc = abstat(*command, "--repo", str(tmp_path / "nowhere"), "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    line = one_line_error(proc, command[0], str(tmp_path / "nowhere"), "no such directory")
    assert "git is not installed" not in line


# --------------------------------------------------------------------------
# bisect when the benchmark fails


def _script_repo(path: Path, scripts: list[str]) -> None:
    """A repository with one commit per script (bench.sh), oldest first."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    path.mkdir()
    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "test")
    for number, script in enumerate(scripts, start=1):
        (path / "bench.sh").write_text(f"{script}  # {number}\n")
        git("add", "-A")
        git("commit", "-qm", f"commit {number}")


def test_bisect_whose_benchmark_always_fails_is_one_line(tmp_path: Path) -> None:
    """Every reference run failed: numpy's percentile of nothing became an internal error."""
    import sqlite3

    _script_repo(tmp_path / "repo", ["echo ops: 10", "echo ops: 10", "echo ops: 20"])
    proc = abstat(
        "bisect",
        "--repo",
        "repo",
        "--good",
        "HEAD~2",
        "--bad",
        "HEAD",
        "--run",
        "./no-such-benchmark",
        "--metric",
        "ops=ops: ([0-9]+)",
        "--store",
        "s.db",
        "--budget",
        "20",
        "--no-progress",
        cwd=tmp_path,
    )
    one_line_error(proc, "bisect", "every run of the benchmark failed at the good revision", "exit status 127")
    failed = sqlite3.connect(tmp_path / "s.db").execute("SELECT count(*) FROM runs WHERE status != 'ok'").fetchone()
    assert failed[0] >= 5  # the failed runs are recorded
    import subprocess

    worktrees = subprocess.run(["git", "worktree", "list"], cwd=tmp_path / "repo", capture_output=True, text=True)
    assert len(worktrees.stdout.splitlines()) == 1, worktrees.stdout  # its worktrees are removed


def _in_bisection(repo: Path, *args: str, store: Path, timeout: float = 120):
    import subprocess

    subprocess.run(["git", "bisect", "start", "HEAD", "HEAD~4"], cwd=repo, check=True, capture_output=True)
    try:
        return abstat(
            "bisect", "step", *args, "--metric", "ops=ops: ([0-9]+)", "--store", str(store), cwd=repo, timeout=timeout
        )
    finally:
        subprocess.run(["git", "bisect", "reset"], cwd=repo, capture_output=True)


def test_bisect_step_on_a_commit_whose_runs_all_fail_skips_it(tmp_path: Path) -> None:
    """It ran forever: only successful runs counted towards --max-runs."""
    import sqlite3

    _script_repo(tmp_path / "repo", ["echo ops: 10", "echo ops: 10", "exit 1", "echo ops: 20", "echo ops: 20"])
    proc = _in_bisection(tmp_path / "repo", "--run", "sh bench.sh", store=tmp_path / "s.db")
    assert proc.returncode == 125, proc.stderr  # git bisect's skip
    assert b"every run failed, skip" in proc.stderr
    failed = sqlite3.connect(tmp_path / "s.db").execute("SELECT count(*) FROM runs WHERE status != 'ok'").fetchone()
    assert failed[0] == 30  # --max-runs


def test_bisect_step_whose_reference_always_fails_stops_git(tmp_path: Path) -> None:
    _script_repo(tmp_path / "repo", ["echo ops: 10", "echo ops: 10", "echo ops: 15", "echo ops: 20", "echo ops: 20"])
    proc = _in_bisection(tmp_path / "repo", "--run", "exit 3", store=tmp_path / "s.db")
    one_line_error(
        proc, "bisect", "every run of the benchmark failed at the good reference", "exit status 3", status=128
    )


# --------------------------------------------------------------------------
# a store on a read-only file system (root ignores file modes, so a read-only bind mount)


def _read_only_mounts_work() -> bool:
    import os
    import shutil
    import subprocess

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", "--mount", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not _read_only_mounts_work(), reason="needs root and unshare --mount for a read-only bind mount")
def test_store_on_a_read_only_file_system(tmp_path: Path, good_store: Path) -> None:
    """A read-only store was 'not an abstat store (unable to open database file)'."""
    import os
    import shlex
    import shutil
    import subprocess

    disk = tmp_path / "ro"
    disk.mkdir()
    shutil.copy(good_store, disk / "s.db")
    commands = [
        ["run", "--store", "s.db", "-n", "1", "--no-progress", "-v", "a=true"],
        ["run", "--store", "new.db", "-n", "1", "--no-progress", "-v", "a=true"],
        ["import", "--store", "s.db", str(good_store)],
        ["list", "--store", "s.db"],
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("ABSTAT_DEBUG", "ABSTAT_STORE")}
    script = [
        f"mount --bind {shlex.quote(str(disk))} {shlex.quote(str(disk))}",
        f"mount -o remount,ro,bind {shlex.quote(str(disk))}",
        f"cd {shlex.quote(str(disk))}",
    ]
    for index, args in enumerate(commands):
        command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "abstat", *args])
        script.append(f"{command} >{tmp_path}/out{index} 2>{tmp_path}/err{index}; echo $? >{tmp_path}/rc{index}")
    subprocess.run(["unshare", "--mount", "sh", "-c", "\n".join(script)], check=True, timeout=300, env=env)
    for index, args in enumerate(commands[:3]):
        proc = subprocess.CompletedProcess(
            args,
            int((tmp_path / f"rc{index}").read_text()),
            (tmp_path / f"out{index}").read_bytes(),
            (tmp_path / f"err{index}").read_bytes(),
        )
        line = one_line_error(proc, args[0], args[2], "read-only")
        assert "not an abstat store" not in line, line
    assert (tmp_path / "rc3").read_text().strip() == "0"  # reading still works
    assert b"e1" in (tmp_path / "out3").read_bytes()


@pytest.mark.parametrize(
    "content,args",
    [
        ("x,value\n1,2\n3,4\n", []),  # no revision column
        ("rev,value\n,1\n,2\n", []),  # only empty revisions
        ("rev,value\nr1,1\nr2,2\n", ["--metric", "zz"]),  # no such metric
    ],
)
def test_history_of_files_without_anything_to_analyse_is_an_error(
    tmp_path: Path, content: str, args: list[str]
) -> None:
    """It printed 'no series with a revision label found' and exited 0: a script saw success."""
    (tmp_path / "h.csv").write_text(content)
    proc = abstat("history", "--input", "h.csv", "--repo", str(tmp_path), *args, cwd=tmp_path)
    one_line_error(proc, "history", "h.csv", "'rev'")


@pytest.mark.parametrize("command", [["history", "nope", "--no-state"], ["show", "nope"]])
def test_error_listing_names_from_the_store_is_escaped(evil_names_store: Path, command: list[str]) -> None:
    """'no experiment ... (recent: NAMES)' wrote the store's names to the terminal as they are."""
    proc = abstat(*command, "--store", str(evil_names_store), cwd=evil_names_store.parent)
    line = one_line_error(proc, command[0], "nope")
    assert "\x1b" not in line and "\x07" not in line, line
    assert "e\\x1b]0;PWNED\\x07<b>|x" in line


# --------------------------------------------------------------------------
# stored variants of experiments whose names abstat run accepts


@pytest.mark.parametrize("experiment", ["bench[v2]", "my bench", "k*"])
def test_stored_variant_of_an_experiment_with_any_accepted_name(tmp_path: Path, experiment: str) -> None:
    """run accepts any name without ':'; compare and plan found only [A-Za-z0-9_.+-] names (and
    globbed names with brackets or stars as file patterns)."""
    proc = abstat(
        "run",
        "--store",
        "s.db",
        "--experiment",
        experiment,
        "-n",
        "3",
        "--no-progress",
        "-v",
        "a=true",
        "-v",
        "b=true",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    for command in ("compare", "plan"):
        proc = abstat(command, "--store", "s.db", f"{experiment}:a", f"{experiment}:b", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert f"{experiment}:a".encode() in proc.stdout
    one_line_error(
        abstat("compare", "--store", "s.db", f"{experiment}:zz", f"{experiment}:a", cwd=tmp_path),
        "compare",
        f"{experiment}:zz",
    )


# --------------------------------------------------------------------------
# -o onto the store itself


@pytest.mark.parametrize("command", [["export"], ["report"], ["history", "e1", "--no-state"]])
def test_output_onto_the_store_keeps_the_store(tmp_path: Path, good_store: Path, command: list[str]) -> None:
    """`abstat export --store s.db -o s.db` replaced the store by its CSV: every run was lost."""
    import shutil

    shutil.copy(good_store, tmp_path / "s.db")
    (tmp_path / "link.db").symlink_to("s.db")
    for target in ("s.db", "link.db"):
        proc = abstat(*command, "--store", "s.db", "-o", target, cwd=tmp_path)
        one_line_error(proc, command[0], target, "SQLite database")
    listed = abstat("list", "--store", "s.db", cwd=tmp_path)
    assert listed.returncode == 0 and b"e1" in listed.stdout, listed.stderr
    proc = abstat("export", "--store", "s.db", "-o", "out.csv", cwd=tmp_path)  # other files are still written
    assert proc.returncode == 0 and (tmp_path / "out.csv").read_text().startswith("experiment,"), proc.stderr
