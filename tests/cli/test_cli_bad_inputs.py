"""Bad input gets one line on stderr, the documented exit status, no traceback.

The brief's rule, checked through the real command line (``python -m
abstat``) for every sub-command: a missing file, a directory, an empty file,
comments only, garbage, NaN/inf, binary data, UTF-16, a huge number, a store
that is not a store or is damaged, bad option values, a command that fails,
hangs or whose hook fails.  The error must be exactly one line that starts
with ``abstat CMD:``, names the file (and line where there is one), is not an
"internal error", and the exit status is 2 (``ministat`` follows the
reference, ``audit`` uses 1 for inconsistent reports).  For ``run``, runs
already completed stay in the store.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from support import forked_cli
import pytest

GOOD_A = "1\n2\n3\n4\n5\n"
GOOD_B = "2\n3\n4\n5\n6\n7\n"


def abstat(*args: str, cwd: Path, stdin: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("ABSTAT_DEBUG", None)
    env.pop("ABSTAT_STORE", None)
    env["NO_COLOR"] = "1"
    # the first call of each sub-command through a real `python -m abstat`, the others in a fork of this
    # process running the same entry point (forked_cli.py: an interpreter's start-up each was most of this
    # file's time); ABSTAT_TEST_NO_FORK=1 runs every call through a real interpreter
    return forked_cli.run(list(args), cwd=cwd, stdin=stdin if stdin is not None else b"", env=env, timeout=timeout)


def one_line_error(proc: subprocess.CompletedProcess, command: str, *names: str, status: int = 2) -> str:
    """The single stderr line of a failed command (asserting the rule)."""
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert proc.returncode == status, (proc.returncode, stderr)
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    line = lines[0]
    assert line.startswith(f"abstat {command}: "), line
    assert "internal error" not in line, line
    for name in names:
        assert name in line, (name, line)
    return line


def run_error(proc: subprocess.CompletedProcess, *names: str) -> str:
    """``abstat run`` reports progress on stderr (its header line and notes);
    the error itself must still be one line, the last, and nothing else."""
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert proc.returncode == 2, (proc.returncode, stderr)
    lines = stderr.splitlines()
    assert lines, "no error message"
    *before, last = lines
    for line in before:
        assert line.startswith(("abstat run: experiment ", "note: ")), f"unexpected stderr line: {line!r}"
    assert last.startswith("abstat run: ") and "internal error" not in last, last
    for name in names:
        assert name in last, (name, last)
    return last


# --------------------------------------------------------------------------
# bad sample files

BINARY = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00" + bytes(range(256))

# name -> (content or None for missing / "DIR" for a directory, line named in the error)
BAD_FILES: dict[str, tuple[bytes | str | None, int | None]] = {
    "missing": (None, None),
    "directory": ("DIR", None),
    "empty": (b"", None),
    "comments": (b"# only\n# comments\n\n", None),
    "garbage": (b"1\n2\nhello world\n4\n", 3),
    "nan": (b"1\n2\nnan\n4\n", 3),
    "minus-nan": (b"1\n2\n4\n-nan\n", 4),
    "inf": (b"1\ninf\n3\n", 2),
    "huge": (b"1\n1e400\n3\n", 2),
    "binary": (BINARY, 1),
    "utf16": ("1\n2\n3\n".encode("utf-16"), 1),
    "utf16le-no-bom": ("1\n2\n3\n".encode("utf-16-le"), 1),
}


def make_file(directory: Path, kind: str) -> str:
    content, _ = BAD_FILES[kind]
    path = directory / f"{kind}.txt"
    if content == "DIR":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    return path.name


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text(GOOD_A)
    (tmp_path / "b.txt").write_text(GOOD_B)
    return tmp_path


def _where(name: str, line: int | None) -> tuple[str, ...]:
    return (f"{name}:{line}:",) if line is not None else (name,)


@pytest.mark.parametrize("kind", list(BAD_FILES))
@pytest.mark.parametrize("command", ["compare", "plan", "report"])
def test_bad_sample_file(work, command, kind):
    name = make_file(work, kind)
    proc = abstat(command, "a.txt", name, cwd=work)
    one_line_error(proc, command, *_where(name, BAD_FILES[kind][1]))


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_bad_sample_file_ministat(work, kind):
    name = make_file(work, kind)
    proc = abstat("ministat", "a.txt", name, cwd=work)
    # The reference: err(1, "Cannot open") for a file that cannot be opened,
    # exit 2 for invalid data and for fewer than 3 values.  UTF-16 without a
    # byte-order mark reads, as C strings, as "1" and two empty lines: too few.
    line = None if kind == "utf16le-no-bom" else BAD_FILES[kind][1]
    one_line_error(proc, "ministat", *_where(name, line), status=1 if kind == "missing" else 2)


@pytest.mark.parametrize("command", ["compare", "plan", "report", "ministat"])
def test_bad_standard_input(work, command):
    proc = abstat(command, "-", "a.txt", cwd=work, stdin=BINARY)
    one_line_error(proc, command, "<stdin>:1:")


@pytest.mark.parametrize("command", ["compare", "plan"])
def test_one_value_is_not_enough(work, command):
    (work / "one.txt").write_text("42\n")
    one_line_error(abstat(command, "a.txt", "one.txt", cwd=work), command, "one.txt")


def test_utf8_bom_is_text(work):
    (work / "bom.txt").write_bytes(b"\xef\xbb\xbf" + GOOD_B.encode())
    for command in ("compare", "plan", "report"):
        proc = abstat(command, "a.txt", "bom.txt", cwd=work)
        assert proc.returncode == 0 and proc.stderr == b"", (command, proc.stderr)
    # ministat's strtod stops at the byte-order mark: invalid data on line 1.
    one_line_error(abstat("ministat", "a.txt", "bom.txt", cwd=work), "ministat", "bom.txt:1:")


# --------------------------------------------------------------------------
# audit


@pytest.mark.parametrize("kind", ["missing", "directory", "empty", "binary", "utf16", "utf16le-no-bom"])
def test_bad_audit_input(work, kind):
    name = make_file(work, kind)
    line = BAD_FILES[kind][1]
    one_line_error(abstat("audit", name, cwd=work), "audit", *_where(name, line))


def test_bad_audit_standard_input(work):
    one_line_error(abstat("audit", "-", cwd=work, stdin="x 1\n".encode("utf-16")), "audit", "<stdin>:1:")


REPORT = """\
x a.txt
+ b.txt
+--------------------------------------------------------------------------+
|x           *           *            *           *           +           +|
|     |______________|___A__________________A|____M_______________|        |
+--------------------------------------------------------------------------+
    N           Min           Max        Median           Avg        Stddev
x   5             1             5             3             3     1.5811388
+   6             2             7             5           4.5     1.8708287
No difference proven at 95.0% confidence
"""


@pytest.mark.parametrize("n_base, n_cand", [("5", "6"), ("0", "6"), ("1", "1")])
def test_audit_of_impossible_sample_sizes_is_a_finding_not_a_crash(work, n_base, n_cand):
    text = REPORT.replace("x   5 ", f"x   {n_base} ").replace("+   6 ", f"+   {n_cand} ")
    (work / "mail.txt").write_text(text)
    proc = abstat("audit", "mail.txt", cwd=work)
    assert proc.stderr == b"", proc.stderr
    if n_base == "5":
        assert proc.returncode == 0
    else:  # ministat never prints N < 3: the report is inconsistent (status 1)
        assert proc.returncode == 1
        assert b"N below 2" in proc.stdout


# --------------------------------------------------------------------------
# stores


@pytest.fixture(scope="module")
def good_store(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("store")
    proc = abstat(
        "run",
        "--store",
        "good.db",
        "--experiment",
        "e1",
        "-n",
        "3",
        "--no-progress",
        "-v",
        "a=true",
        "-v",
        "b=true",
        cwd=directory,
    )
    assert proc.returncode == 0, proc.stderr
    path = directory / "good.db"
    assert not Path(f"{path}-wal").exists()
    return path


def _damaged_copy(good: Path, target: Path, kind: str) -> str:
    data = good.read_bytes()
    page = sqlite3.connect(good).execute("PRAGMA page_size").fetchone()[0]
    if kind == "directory":
        target.mkdir()
    elif kind == "garbage":
        target.write_text("this is not a database\n")
    elif kind == "binary":
        target.write_bytes(BINARY)
    elif kind == "samples":
        target.write_text(GOOD_A)
    elif kind == "header-only":
        target.write_bytes(data[:100])
    elif kind == "truncated":
        target.write_bytes(data[: 2 * page])
    elif kind == "corrupt-pages":  # page 1 (the schema) intact, every table page overwritten
        target.write_bytes(data[:page] + bytes([0xAB]) * (len(data) - page))
    elif kind == "foreign-sqlite":
        connection = sqlite3.connect(target)
        connection.execute("CREATE TABLE t (x)")
        connection.commit()
        connection.close()
    else:
        raise AssertionError(kind)
    return target.name


STORE_KINDS = [
    "directory",
    "garbage",
    "binary",
    "samples",
    "header-only",
    "truncated",
    "corrupt-pages",
    "foreign-sqlite",
]
STORE_COMMANDS = {
    "list": [],
    "show": ["e1"],
    "export": [],
    "report": [],
    "compare": ["e1:a", "e1:b"],
    "plan": ["e1:a", "e1:b"],
    "run": ["--no-progress", "-n", "1", "-v", "a=true"],
}


@pytest.mark.parametrize("kind", STORE_KINDS)
@pytest.mark.parametrize("command", list(STORE_COMMANDS))
def test_store_that_is_not_a_store(tmp_path, good_store, command, kind):
    name = _damaged_copy(good_store, tmp_path / f"{kind}.db", kind)
    before = (tmp_path / name).read_bytes() if (tmp_path / name).is_file() else None
    proc = abstat(command, *STORE_COMMANDS[command], "--store", name, cwd=tmp_path)
    one_line_error(proc, command, name)
    if before is not None:
        assert (tmp_path / name).read_bytes() == before  # a damaged store is not "repaired" away


@pytest.mark.parametrize("command", ["list", "show", "export", "report", "compare", "plan"])
def test_missing_store(tmp_path, command):
    proc = abstat(command, *STORE_COMMANDS[command], "--store", "nowhere.db", cwd=tmp_path)
    one_line_error(proc, command, "nowhere.db")
    assert not (tmp_path / "nowhere.db").exists()


@pytest.mark.parametrize("command", ["list", "show", "export", "report", "compare", "plan"])
def test_empty_file_is_not_a_store_to_read(tmp_path, command):
    (tmp_path / "empty.db").write_bytes(b"")
    proc = abstat(command, *STORE_COMMANDS[command], "--store", "empty.db", cwd=tmp_path)
    one_line_error(proc, command, "empty.db")
    assert (tmp_path / "empty.db").read_bytes() == b""  # reading commands write nothing into it


@pytest.mark.parametrize(
    "command, args, words",
    [
        ("show", ["nope"], ["no experiment 'nope'"]),
        ("export", ["--experiment", "nope"], ["no experiment 'nope'"]),
        ("compare", ["e1:a", "e1:zz"], ["e1:zz"]),
        ("compare", ["e1:a", "e1:b", "--metric", "cycles"], ["no metric 'cycles'"]),
        ("report", ["--where", "variant=zz"], ["no matching samples"]),
    ],
)
def test_missing_experiment_or_variant(tmp_path, good_store, command, args, words):
    shutil.copy(good_store, tmp_path / "s.db")
    one_line_error(abstat(command, *args, "--store", "s.db", cwd=tmp_path), command, *words)


@pytest.mark.parametrize("kind", ["directory", "garbage", "corrupt-pages"])
def test_demo_with_a_bad_store_fails_before_it_starts(tmp_path, good_store, kind):
    name = _damaged_copy(good_store, tmp_path / f"{kind}.db", kind)
    one_line_error(abstat("demo", "--store", name, cwd=tmp_path), "demo", name)


# --------------------------------------------------------------------------
# run: failing, missing and hanging commands; nothing recorded is lost


def _ok_runs(store: Path, experiment: str) -> dict[str, int]:
    rows = (
        sqlite3.connect(store)
        .execute(
            "SELECT v.name, r.status, COUNT(*) FROM runs r JOIN variants v ON v.id = r.variant_id"
            " JOIN experiments e ON e.id = v.experiment_id WHERE e.name = ? GROUP BY v.name, r.status",
            (experiment,),
        )
        .fetchall()
    )
    return {f"{variant}:{status}": count for variant, status, count in rows}


@pytest.fixture
def store_with_history(tmp_path, good_store) -> Path:
    shutil.copy(good_store, tmp_path / "s.db")
    return tmp_path / "s.db"


RUN_FAILURES = {
    # second run of the variant fails (the first leaves a marker behind)
    "exits non-zero": (
        ["--shell", "-n", "3", "-v", "a=test -e m && exit 3; touch m"],
        ["run 2 of variant 'a' failed", "exit status 3"],
        {"a:ok": 1, "a:failed": 1},
    ),
    "hangs": (
        ["--order", "sequential", "--timeout", "0.5", "-n", "2", "-v", "a=true", "-v", "b=sleep 30"],
        ["variant 'b' timed out"],
        {"a:ok": 2, "b:timeout": 1},
    ),
    "prepare hook fails": (
        ["--shell", "-n", "3", "--prepare", "test -e m && exit 4; touch m", "-v", "a=true"],
        ["--prepare hook", "exit status 4"],
        {"a:ok": 1},
    ),
    "setup hook fails": (["-n", "3", "--setup", "false", "-v", "a=true"], ["--setup hook 'false' failed"], {}),
    "conclude hook fails": (
        ["-n", "3", "--conclude", "false", "-v", "a=true"],
        ["--conclude hook 'false'"],
        {"a:ok": 1},
    ),
    "background exits at once": (
        ["-n", "3", "--background", "true", "-v", "a=true"],
        ["background command 'true' ended"],
        {},
    ),
    "background fails": (
        ["-n", "3", "--background", "false", "-v", "a=true"],
        ["background command 'false' ended (exit status 1)"],
        {},
    ),
    "background ends midway": (
        ["--shell", "-n", "3", "--background", "sleep 0.4; exit 5", "-v", "a=sleep 0.3"],
        ["background command", "exit status 5", "after"],
        None,
    ),
}


@pytest.mark.parametrize("case", list(RUN_FAILURES))
def test_run_failure_keeps_what_was_recorded(store_with_history, case):
    args, words, expected = RUN_FAILURES[case]
    directory = store_with_history.parent
    before = _ok_runs(store_with_history, "e1")
    proc = abstat("run", "--no-progress", "--store", "s.db", "--experiment", "new", *args, cwd=directory)
    last = run_error(proc, *words)
    assert "s.db" in last and "'new'" in last  # where the runs so far are
    assert _ok_runs(store_with_history, "e1") == before  # older experiments untouched
    if expected is not None:
        assert _ok_runs(store_with_history, "new") == expected
    else:
        assert _ok_runs(store_with_history, "new").get("a:ok", 0) >= 1


@pytest.mark.parametrize(
    "args, words",
    [
        (["-v", "a=/nonexistent/bench"], ["variant 'a'", "/nonexistent/bench"]),
        (["--prepare", "/nonexistent/hook", "-v", "a=true"], ["--prepare", "/nonexistent/hook"]),
        (["--background", "/nonexistent/load", "-v", "a=true"], ["--background", "/nonexistent/load"]),
        (["-n", "-1", "-v", "a=true"], ["-n"]),
        (["-n", "0", "-v", "a=true"], ["-n"]),
        (["-n", "abc", "-v", "a=true"], ["'abc'"]),
        (["-n", "1000000000000", "-v", "a=true"], ["-n"]),
        (["--warmup", "-1", "-v", "a=true"], ["--warmup"]),
        (["--confidence", "150", "-v", "a=true"], ["--confidence"]),
        (["--timeout", "-1", "-v", "a=true"], ["--timeout"]),
        (["--timeout", "nan", "-v", "a=true"], ["--timeout"]),
        (["--timeout", "inf", "-v", "a=true"], ["--timeout"]),
        (["--metric", "x=(", "-v", "a=true"], ["--metric"]),
        (["--label", "nokey", "-v", "a=true"], ["--label"]),
        (["--experiment", "a:b", "-v", "a=true"], ["'a:b'"]),
        (["-v", "novalue"], ["'novalue'"]),
        (["-v", "a=true", "-v", "a=true"], ["'a'"]),
        ([], ["-v NAME=COMMAND"]),
    ],
)
def test_run_bad_options_create_no_store(tmp_path, args, words):
    proc = abstat("run", "--no-progress", "--store", "s.db", *args, cwd=tmp_path)
    one_line_error(proc, "run", *words)
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("args", [["-n", "-1"], ["-n", "0"], ["--warmup", "-2"], ["-n", "x"]])
def test_demo_bad_options(tmp_path, args):
    one_line_error(abstat("demo", "--store", "d.db", *args, cwd=tmp_path), "demo")
    assert not (tmp_path / "d.db").exists()


# --------------------------------------------------------------------------
# bad options of the reading commands


@pytest.mark.parametrize(
    "command, args, words",
    [
        ("compare", ["-c", "150"], ["--confidence"]),
        ("compare", ["-c", "nan"], ["nan"]),
        ("compare", ["--threshold", "abc"], ["'abc'"]),
        ("compare", ["--threshold", "-1"], ["--threshold"]),
        ("compare", ["-C", "0"], ["--column"]),
        ("compare", ["-C", "3"], ["a.txt:1:", "column 3"]),
        ("compare", ["--bogus"], ["--bogus"]),
        ("compare", ["--baseline", "nope"], ["'nope'"]),
        ("plan", ["--power", "abc"], ["--power"]),
        ("plan", ["--power", "150"], ["--power"]),
        ("plan", ["--confidence", "150"], ["--confidence"]),
        ("plan", ["--detect", "abc"], ["--detect"]),
        ("plan", ["--detect", "0"], ["--detect"]),
        ("plan", ["--run-cost", "-1", "--sample-cost", "1"], ["--run-cost"]),
        ("plan", ["--run-cost", "1"], ["--sample-cost"]),
        ("report", ["-c", "150"], ["150"]),
        ("report", ["-c", "nan"], ["nan"]),
        ("report", ["-c", "abc"], ["'abc'"]),
        ("report", ["--width", "-5"], ["--width"]),
        ("report", ["-C", "0"], ["-C"]),
        ("report", ["--by", "nokey"], ["'nokey'"]),
        ("report", ["--rows", "nokey"], ["'nokey'"]),
        ("report", ["--pattern", "{host}-{variant}"], ["a.txt", "--pattern"]),
        ("report", ["--pattern", "{host"], ["--pattern"]),
        ("report", ["--where", "novalue"], ["--where"]),
        ("report", ["--label", "novalue"], ["--label"]),
        ("report", ["--baseline", "nope"], ["'nope'"]),
        ("report", ["-o", "no/such/dir/out.md"], ["no/such/dir/out.md"]),
        ("report", ["--format", "xml"], ["'xml'"]),
        ("ministat", ["--dialect", "bogus"], ["'bogus'"]),
    ],
)
def test_bad_option_values(work, command, args, words):
    argv = args + ["a.txt", "b.txt"] if command == "ministat" else ["a.txt", "b.txt", *args]
    one_line_error(abstat(command, *argv, cwd=work), command, *words)


@pytest.mark.parametrize(
    "command, args, words",
    [
        ("audit", ["--threshold", "abc"], ["--threshold"]),
        ("audit", ["--threshold", "-1"], ["--threshold"]),
        ("audit", ["--format", "xml"], ["'xml'"]),
        ("list", ["--format", "xml"], ["'xml'"]),
        ("list", ["extra"], ["extra"]),
        ("show", [], ["EXPERIMENT"]),
        ("export", ["--format", "xml"], ["'xml'"]),
        ("export", ["-o", "no/such/dir/x.csv"], ["no/such/dir/x.csv"]),
    ],
)
def test_bad_options_of_other_commands(tmp_path, good_store, command, args, words):
    shutil.copy(good_store, tmp_path / "s.db")
    (tmp_path / "mail.txt").write_text(REPORT)
    extra = ["mail.txt"] if command == "audit" else ["--store", "s.db"]
    one_line_error(abstat(command, *extra, *args, cwd=tmp_path), command, *words)


def test_ministat_usage_errors_follow_the_reference(work):
    # Documented exception: ministat prints its own usage text, as the reference does.
    proc = abstat("ministat", "-c", "150", "a.txt", "b.txt", cwd=work)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert proc.stderr.startswith(b"No support for confidence level\nUsage: ministat")


def test_unknown_command(tmp_path):
    proc = abstat("bogus", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.decode().splitlines() == [
        "abstat: unknown command 'bogus' (abstat --help lists the commands)"
    ]


# --------------------------------------------------------------------------
# report: peer formats

PEER_FILES = {
    "truncated.json": ('{"results": [\n  {"command": "a", "times": [1, 2, 3]\n', "auto", ["truncated.json:3:", "JSON"]),
    "strings.json": ('{"results": [{"command": "a", "times": [1, 2, "x"]}]}', "auto", ["strings.json", "'x'"]),
    "nan.json": ('{"results": [{"command": "a", "times": [1, 2, NaN]}]}', "auto", ["nan.json", "finite"]),
    "old.json": ('{"results": [{"command": "a"}]}', "auto", ["old.json", "times"]),
    "empty.json": ('{"results": []}', "auto", ["empty.json"]),
    "unknown.json": ('{"something": 1}', "auto", ["unknown.json", "--input-format"]),
    "deep.json": ('{"results": ' + "[" * 100_000, "auto", ["deep.json", "JSON"]),
    "pyperf-meta.json": (
        '{"benchmarks": [{"metadata": 5, "runs": [{"values": [1, 2]}]}]}',
        "auto",
        ["pyperf-meta.json", "metadata"],
    ),
    "pyperf-values.json": ('{"benchmarks": [{"runs": [{"values": 5}]}]}', "auto", ["pyperf-values.json", "values"]),
    "pyperf-runs.json": ('{"benchmarks": [{"runs": 5}]}', "pyperf", ["pyperf-runs.json", "runs"]),
    "pyperf-common.json": ('{"metadata": [1], "benchmarks": []}', "pyperf", ["pyperf-common.json"]),
    "hyperfine-is-samples.txt": (GOOD_A, "hyperfine", ["hyperfine-is-samples.txt:2:", "JSON"]),
    "noheader.csv": ("1,2\n3,4\n5,6\n", "csv", ["noheader.csv:1:", "header"]),
    "ragged.csv": ("a,b\n1,2\n3\n", "auto", ["ragged.csv:3:"]),
    "nan.csv": ("name,value\nx,1\nx,nan\n", "auto", ["nan.csv:3:", "'value'"]),
    "bigfield.csv": ("a,b\nx," + "1" * 200_000 + "\n", "auto", ["bigfield.csv:2:", "CSV"]),
    "headeronly.csv": ("name,value\n", "csv", ["headeronly.csv", "no rows"]),
    "go.txt": (GOOD_A, "go", ["go.txt"]),
    "gzip.json.gz": (b"\x1f\x8b\x08\x00garbage", "auto", ["gzip.json.gz", "gzip"]),
}


@pytest.mark.parametrize("name", list(PEER_FILES))
def test_malformed_peer_file(work, name):
    content, fmt, words = PEER_FILES[name]
    path = work / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    args = ["--input-format", fmt] if fmt != "auto" else []
    inputs = [name] if fmt != "auto" else ["a.txt", name]
    one_line_error(abstat("report", *args, *inputs, cwd=work), "report", *words)


@pytest.mark.parametrize("fmt", ["hyperfine", "pyperf", "csv", "go"])
def test_peer_format_from_standard_input(work, fmt):
    proc = abstat("report", "--input-format", fmt, "-", cwd=work, stdin=b"1,2\n3,4\n")
    one_line_error(proc, "report", "<stdin>")


def test_peer_format_from_standard_input_is_read(work):
    doc = {
        "results": [
            {"command": "a", "times": [1.0, 1.1, 1.2, 1.05, 1.15]},
            {"command": "b", "times": [2.0, 2.1, 2.2, 2.05, 2.15]},
        ]
    }
    proc = abstat(
        "report",
        "--input-format",
        "hyperfine",
        "--by",
        "command",
        "--format",
        "json",
        "-",
        cwd=work,
        stdin=json.dumps(doc).encode(),
    )
    assert proc.returncode == 0, proc.stderr
    assert b'"b"' in proc.stdout


# --------------------------------------------------------------------------
# numbers at the edges of double precision: answers, not crashes or warnings


@pytest.mark.parametrize(
    "args, expected",
    [
        (["x=3:1e300:1e300"], b"samples per variant"),
        (["x=3:1e300:1e300", "y=3:1.1e300:1e300", "--detect", "1e299"], b"samples per variant (y vs x): "),
        (["x=3:1e-300:1e-300", "y=3:1e-300:2e-300"], b"samples per variant (y vs x): "),
        (["x=3:1:1", "--detect", "1e-300"], b"more than 10,000,000"),
    ],
)
def test_plan_with_extreme_values(tmp_path, args, expected):
    proc = abstat("plan", *args, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert expected in proc.stdout


def test_plan_extreme_values_agree_with_unit_values(tmp_path):
    # The sample size does not depend on the unit: 1e300 x (1, 1) needs what (1, 1) needs.
    big = abstat("plan", "x=3:1e300:1e300", "y=3:1e300:1e300", cwd=tmp_path).stdout.splitlines()[-1]
    unit = abstat("plan", "x=3:1:1", "y=3:1:1", cwd=tmp_path).stdout.splitlines()[-1]
    assert big == unit and big.startswith(b"samples per variant (y vs x): ")


def test_no_numpy_warnings_on_stderr(work):
    (work / "big1.txt").write_text("1e300\n1.5e300\n1.2e300\n1.7e300\n")
    (work / "big2.txt").write_text("1.1e300\n1.6e300\n1.3e300\n1.8e300\n")
    for command in ("compare", "report"):
        proc = abstat(command, "big1.txt", "big2.txt", cwd=work)
        assert proc.returncode == 0 and proc.stderr == b"", (command, proc.stderr)


def test_failed_export_keeps_the_older_output(tmp_path, good_store):
    shutil.copy(good_store, tmp_path / "s.db")
    assert abstat("export", "--store", "s.db", "-o", "out.csv", cwd=tmp_path).returncode == 0
    older = (tmp_path / "out.csv").read_bytes()
    assert older.count(b"\n") > 1
    _damaged_copy(good_store, tmp_path / "bad.db", "corrupt-pages")
    one_line_error(abstat("export", "--store", "bad.db", "-o", "out.csv", cwd=tmp_path), "export", "bad.db")
    assert (tmp_path / "out.csv").read_bytes() == older
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.db", "out.csv", "s.db"]


def test_a_file_name_with_a_newline_still_gives_one_line(work):
    proc = abstat("compare", "a.txt", "bad\nname.txt", cwd=work)
    one_line_error(proc, "compare", "bad\\nname.txt")


def test_plan_nested_pilot_beyond_double_precision(work):
    (work / "runs").mkdir()
    (work / "runs" / "r1.txt").write_text("1\n2\n")
    (work / "runs" / "r2.txt").write_text("1e300\n1e300\n")
    one_line_error(abstat("plan", "x=runs/*.txt", cwd=work), "plan", "x=runs/*.txt")


def test_run_unknown_baseline_of_a_stored_experiment_fails_before_running(store_with_history):
    directory = store_with_history.parent
    before = _ok_runs(store_with_history, "e1")
    proc = abstat(
        "run",
        "--no-progress",
        "--store",
        "s.db",
        "--experiment",
        "e1",
        "--baseline",
        "zz",
        "-n",
        "2",
        "-v",
        "c=true",
        cwd=directory,
    )
    one_line_error(proc, "run", "'zz'", "'e1'")
    assert _ok_runs(store_with_history, "e1") == before


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command, args",
    [
        ("compare", ["a.txt", "b.txt"]),
        ("ministat", ["a.txt", "b.txt"]),
        ("report", ["a.txt", "b.txt"]),
        ("plan", ["a.txt", "b.txt"]),
    ],
)
def test_full_disk_on_standard_output(work, command, args):
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "abstat", command, *args], cwd=work, stdout=full, stderr=subprocess.PIPE, timeout=120
        )
    proc.stdout = b""
    one_line_error(proc, command, "No space left on device")


def test_closed_standard_output_is_not_an_internal_error(work):
    proc = subprocess.run(
        [sys.executable, "-m", "abstat", "compare", "a.txt", "b.txt"],
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "missing.txt", "b.txt"],
        ["ministat", "missing.txt"],
        ["report", "--format", "nope", "b.txt"],
        ["audit", "-"],
        ["compare", "b.txt", "b.txt"],
        ["plan", "-c", "0.95", "b.txt"],
    ],
)
def test_the_forked_runner_answers_as_a_real_interpreter(tmp_path, args):
    """The harness itself (forked_cli): a fork running abstat's entry point gives the status, standard
    output and standard error a real ``python -m abstat`` gives."""
    (tmp_path / "b.txt").write_text(GOOD_B)
    env = {k: v for k, v in os.environ.items() if k not in ("ABSTAT_DEBUG", "ABSTAT_STORE")}
    env["NO_COLOR"] = "1"
    real = subprocess.run(
        [sys.executable, "-m", "abstat", *args], cwd=tmp_path, input=b"x\n", capture_output=True, timeout=120, env=env
    )
    forked_cli._REAL.add(args[0])
    forked = forked_cli.run(args, cwd=tmp_path, stdin=b"x\n", env=env, timeout=120)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
