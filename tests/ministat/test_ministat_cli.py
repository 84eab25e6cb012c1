"""``abstat ministat`` beyond the corpus: options, errors, terminals, big inputs.

Expected texts were recorded from Debian's ministat 20150715 (the classic
reference); when that program is installed the differential tests also
compare against it directly.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abstat.ministat import cli, reading
from test_ministat_conformance import run_in_process  # same directory (pytest prepends it)

REFERENCE = shutil.which("ministat")
needs_reference = pytest.mark.skipif(
    REFERENCE is None or not os.path.exists("/usr/share/doc/ministat"),
    reason="Debian's ministat (package ministat) is not installed",
)

CLASSIC_USAGE = (
    "Usage: ministat [-C column] [-c confidence] [-d delimiter(s)] [-Ans] [-w width] [file [file ...]]\n"
    "\tconfidence = {80%, 90%, 95%, 98%, 99%, 99.5%}\n"
    "\t-A : print statistics only. suppress the graph.\n"
    "\t-C : column number to extract (starts and defaults to 1)\n"
    '\t-d : delimiter(s) string, default to " \\t"\n'
    "\t-n : print summary statistics only, no graph/test\n"
    "\t-s : print avg/median/stddev bars on separate lines\n"
    "\t-w : width of graph/test output (default 74 or terminal width)\n"
)

TWO_SETS = """x a.txt
+ b.txt
    N           Min           Max        Median           Avg        Stddev
x  10             1            10             6           5.5     3.0276504
+  10             3            12             8           7.5     3.0276504
No difference proven at 95.0% confidence
"""


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv("ABSTAT_MINISTAT_DIALECT", raising=False)
    monkeypatch.delenv("POSIXLY_CORRECT", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
    (tmp_path / "b.txt").write_text("".join(f"{i}\n" for i in range(3, 13)))
    return tmp_path


def run(args, cwd, stdin=b""):
    return run_in_process(list(args), stdin, cwd)


# ---------------------------------------------------------------- options


@pytest.mark.parametrize(
    "args, whine",
    [
        (["-z", "a.txt"], "Unknown option"),
        (["a.txt", "-w"], "Unknown option"),
        (["-c", "97", "a.txt"], "No support for confidence level"),
        (["-c", "9x", "a.txt"], "Not a floating point number"),
        (["-C", "0", "a.txt"], "Column number should be positive."),
        (["-C", "1x", "a.txt"], "Invalid column number."),
        (["-w", "x", "a.txt"], "Invalid width, not a number."),
        (["-w", "-1", "a.txt"], "Unable to move beyond left margin."),
        (["-d", "", "a.txt"], "Can't use empty delimiter string"),
        (["a.txt"] * 8, "Too many datasets."),
    ],
)
def test_usage_errors(files, args, whine):
    stdout, stderr, status = run(args, files)
    assert status == 2
    assert stdout == b""
    assert stderr.endswith(whine + "\n" + CLASSIC_USAGE)
    if REFERENCE:
        assert _reference(args, files) == (b"", 2)


def test_getopt_messages(files):
    _, stderr, _ = run(["-z", "a.txt"], files)
    assert stderr.startswith("ministat: invalid option -- 'z'\nUnknown option\n")
    _, stderr, _ = run(["a.txt", "-w"], files)
    assert stderr.startswith("ministat: option requires an argument -- 'w'\n")


def test_freebsd_usage_mentions_q(files):
    _, stderr, status = run(["--dialect", "freebsd", "-z", "a.txt"], files)
    assert status == 2
    assert "[-Anqs]" in stderr and "-q : suppress printing" in stderr
    _, stderr, status = run(["-q", "a.txt"], files)  # classic has no -q
    assert status == 2 and "invalid option -- 'q'" in stderr


def test_grouped_and_attached_options(files):
    separate = run(["-A", "-s", "-w", "60", "a.txt", "b.txt"], files)
    assert run(["-As", "-w60", "a.txt", "b.txt"], files) == separate
    assert run(["-Asw", "60", "a.txt", "b.txt"], files) == separate
    assert separate[0].decode() == TWO_SETS


def test_options_after_files_classic_permutes(files):
    assert run(["a.txt", "b.txt", "-A"], files)[0].decode() == TWO_SETS
    # "--" ends the options: "-A" is then a file name
    stdout, stderr, status = run(["a.txt", "--", "-A"], files)
    assert status == 1 and stdout == b"" and "-A" in stderr


def test_options_after_files_freebsd_do_not_permute(files):
    stdout, stderr, status = run(["--dialect", "freebsd", "a.txt", "-A"], files)
    assert status == 2 and stdout == b"" and "-A" in stderr


def test_confidence_forms_and_last_valid_wins(files):
    base = run(["-n", "-c", "99.5", "a.txt"], files)
    assert base[2] == 0
    assert run(["-n", "-c", "0x5f", "a.txt"], files)[2] == 0  # strtod reads hex
    # a later unsupported level keeps the earlier valid one, as ministat does
    stdout, _, status = run(["-c", "80", "-c", "97", "-A", "a.txt", "b.txt"], files)
    assert status == 0 and b"80.0% confidence" in stdout


def test_width_quirks(files):
    stdout, _, status = run(["-w", "0", "a.txt", "b.txt"], files)
    assert status == 0
    lines = stdout.decode().splitlines()
    assert lines[2] == "++" and lines[3:14] == ["||"] * 11 and lines[14] == "++"
    stdout, stderr, status = run(["-w", "1", "a.txt", "b.txt"], files)
    assert status == 2 and stdout == b"" and "width of 1" in stderr
    assert run(["-w", "1", "-A", "a.txt", "b.txt"], files)[2] == 0
    # strtol then int: 2**32 + 74 is 74
    assert run(["-w", "4294967370", "a.txt", "b.txt"], files) == run(["a.txt", "b.txt"], files)


def test_dialect_selection(files, monkeypatch):
    classic = run(["-n", "a.txt"], files)[0]
    assert b"     6 " in classic  # upper median of 1..10
    freebsd = run(["--dialect", "freebsd", "-n", "a.txt"], files)[0]
    assert b"   5.5 " in freebsd  # true median
    assert run(["--dialect=freebsd", "-n", "a.txt"], files)[0] == freebsd
    monkeypatch.setenv("ABSTAT_MINISTAT_DIALECT", "freebsd")
    assert run(["-n", "a.txt"], files)[0] == freebsd
    assert run(["--dialect", "classic", "-n", "a.txt"], files)[0] == classic
    stdout, stderr, status = run(["--dialect", "openbsd", "a.txt"], files)
    assert status == 2 and "unknown dialect" in stderr


def test_help(files):
    stdout, _, status = run(["--help"], files)
    assert status == 0 and stdout.decode().startswith("Usage: ministat")


# ---------------------------------------------------------------- terminal width


def test_width_not_a_terminal(monkeypatch):
    monkeypatch.setattr(cli.os, "isatty", lambda fd: False)
    monkeypatch.setenv("COLUMNS", "120")
    assert cli.terminal_width(1) == 74


def test_width_from_columns(monkeypatch):
    monkeypatch.setattr(cli.os, "isatty", lambda fd: True)
    monkeypatch.setenv("COLUMNS", "50")
    assert cli.terminal_width(1) == 50
    monkeypatch.setenv("COLUMNS", "  90abc")  # atoi
    assert cli.terminal_width(1) == 90


def test_width_from_terminal_size(monkeypatch):
    monkeypatch.setattr(cli.os, "isatty", lambda fd: True)
    monkeypatch.setenv("COLUMNS", "")  # empty: ignored, as by ministat
    monkeypatch.setattr(cli.os, "get_terminal_size", lambda fd: os.terminal_size((100, 40)))
    assert cli.terminal_width(1) == 98
    monkeypatch.setattr(cli.os, "get_terminal_size", lambda fd: os.terminal_size((0, 0)))
    assert cli.terminal_width(1) == 74


def test_terminal_width_drives_the_plot(files, monkeypatch):
    monkeypatch.setattr(cli, "terminal_width", lambda fd: 30)
    stdout, _, _ = run(["a.txt", "b.txt"], files)
    assert stdout.decode().splitlines()[2] == "+" + "-" * 30 + "+"
    stdout, _, _ = run(["-w", "20", "a.txt", "b.txt"], files)  # -w wins
    assert stdout.decode().splitlines()[2] == "+" + "-" * 20 + "+"


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("token", ["nan", "NaN", "-nan", "nan(0x1)", "inf", "-Infinity", "1e999", "0x1p99999"])
def test_nan_and_infinity_are_one_clear_error(files, token):
    (files / "bad.txt").write_text(f"1\n2\n{token}\n4\n")
    stdout, stderr, status = run(["a.txt", "bad.txt"], files)
    assert status == 2 and stdout == b""
    assert stderr.count("\n") == 1
    assert "bad.txt:3:" in stderr and "not a finite number" in stderr


def test_values_overflowing_the_sums(files):
    (files / "huge.txt").write_text("1e308\n1e308\n1e308\n")
    stdout, stderr, status = run(["huge.txt", "a.txt"], files)
    assert status == 2 and stdout == b"" and "overflow" in stderr
    stdout, _, status = run(["-A", "huge.txt", "a.txt"], files)  # ministat survives -A
    assert status == 0 and b"          inf          -nan" in stdout


@pytest.mark.parametrize(
    "content, message",
    [
        (bytes(range(256)) * 3, "binary data"),
        ("1\n2\n3\n".encode("utf-16"), "UTF-16"),
        (b"", "at least 3 data points"),
        (b"# only\n# comments\n", "at least 3 data points"),
        (b"1\n2\n", "at least 3 data points"),
        (b"1\n2\n3x\n", "bad.txt:3: invalid data '3x'"),
    ],
)
def test_bad_files(files, content, message):
    (files / "bad.txt").write_bytes(content)
    stdout, stderr, status = run(["bad.txt", "a.txt"], files)
    assert status == 2 and stdout == b""
    assert message in stderr and stderr.count("\n") == 1


def test_missing_file_status_per_dialect(files):
    stdout, stderr, status = run(["a.txt", "nope.txt"], files)
    assert (stdout, status) == (b"", 1) and "nope.txt" in stderr
    stdout, stderr, status = run(["--dialect", "freebsd", "a.txt", "nope.txt"], files)
    assert (stdout, status) == (b"", 2)
    # FreeBSD opens every file before reading any: the missing file wins
    (files / "bad.txt").write_text("x\n")
    assert run(["--dialect", "freebsd", "bad.txt", "nope.txt"], files)[2] == 2
    assert "nope.txt" in run(["--dialect", "freebsd", "bad.txt", "nope.txt"], files)[1]


def test_directory_is_an_empty_data_set(files):
    stdout, stderr, status = run([str(files)], files)
    assert status == 2 and "at least 3" in stderr


def test_stdin_dash_and_no_file(files):
    data = (files / "a.txt").read_bytes()
    stdout, _, status = run([], files, stdin=data)
    assert status == 0 and stdout.startswith(b"x <stdin>\n")
    stdout, _, status = run(["-n", "-", "b.txt"], files, stdin=data)
    assert stdout.startswith(b"x <stdin>\n+ b.txt\n")
    stdout, _, _ = run(["--dialect", "freebsd", "-n", "-", "b.txt"], files, stdin=data)
    assert stdout.startswith(b"x -\n+ b.txt\n")  # FreeBSD prints the argument


def test_subprocess_never_shows_a_traceback(tmp_path):
    rng = random.Random(7)
    (tmp_path / "noise.bin").write_bytes(bytes(rng.randrange(256) for _ in range(5000)))
    (tmp_path / "u16.txt").write_bytes("5\n6\n7\n".encode("utf-16-le"))
    (tmp_path / "ok.txt").write_text("1\n2\n3\n")
    for name in ("noise.bin", "u16.txt", "missing.txt"):
        result = subprocess.run(
            [sys.executable, "-m", "abstat", "ministat", name, "ok.txt"], capture_output=True, cwd=tmp_path
        )
        assert result.returncode in (1, 2)
        assert result.stdout == b""
        assert b"Traceback" not in result.stderr
        assert result.stderr.count(b"\n") == 1, result.stderr


def test_non_utf8_file_name_round_trips(tmp_path):
    name = os.fsdecode(b"caf\xe9.txt")
    (tmp_path / name).write_text("1\n2\n3\n")
    stdout, _, status = run(["-n", name], tmp_path)
    assert status == 0 and stdout.startswith(b"x caf\xe9.txt\n")


# ---------------------------------------------------------------- numpy fast path


def _integer_file(path: Path, rng: random.Random, count: int, spread: int, negative: bool = False) -> None:
    low = -spread if negative else 1000
    path.write_text("".join(f"{rng.randint(low, low + 2 * spread)}\n" for _ in range(count)))


@pytest.mark.parametrize(
    "dialect, extra",
    [("classic", []), ("classic", ["-A"]), ("freebsd", ["-s", "-w", "50"]), ("freebsd", ["-n"])],
)
def test_fast_path_equals_exact_path(tmp_path, monkeypatch, dialect, extra):
    pytest.importorskip("numpy")
    rng = random.Random(f"{dialect}{extra}")
    _integer_file(tmp_path / "a.txt", rng, 230_000, 500)
    _integer_file(tmp_path / "b.txt", rng, 80_000, 10**13, negative=True)  # sums are not exact
    args = ["--dialect", dialect, *extra, "a.txt", "b.txt"]
    assert (tmp_path / "a.txt").stat().st_size >= reading.FAST_PATH_BYTES
    fast = run(args, tmp_path)
    import abstat.ministat.fast as fast_module

    calls = []
    original = fast_module.integer_sample_set
    monkeypatch.setattr(fast_module, "integer_sample_set", lambda *a, **k: calls.append(1) or original(*a, **k))
    assert run(args, tmp_path) == fast
    assert calls, "the numpy reader was not used"
    monkeypatch.setattr(reading, "FAST_PATH_BYTES", 1 << 62)
    exact = run(args, tmp_path)
    assert fast == exact
    assert fast[2] == 0


@pytest.mark.parametrize("odd_line", ["12.5", "-0", "", "0x10", "7 # comment", "99999999999999999999"])
def test_fast_path_falls_back_on_anything_unusual(tmp_path, monkeypatch, odd_line):
    pytest.importorskip("numpy")
    rng = random.Random(3)
    lines = [str(rng.randint(0, 10**6)) for _ in range(200_000)]
    lines[1234] = odd_line
    (tmp_path / "a.txt").write_text("\n".join(lines) + "\n")
    fast = run(["--dialect", "freebsd", "a.txt"], tmp_path)
    monkeypatch.setattr(reading, "FAST_PATH_BYTES", 1 << 62)
    assert run(["--dialect", "freebsd", "a.txt"], tmp_path) == fast


def test_fast_path_from_stdin(tmp_path, monkeypatch):
    pytest.importorskip("numpy")
    rng = random.Random(5)
    data = "".join(f"{rng.randint(-50, 10**6)}\n" for _ in range(200_000)).encode()
    fast = run(["-A", "-", "-"], tmp_path, stdin=data)  # second "-" reads nothing: error
    assert fast[2] == 2
    fast = run([], tmp_path, stdin=data)
    monkeypatch.setattr(reading, "FAST_PATH_BYTES", 1 << 62)
    assert run([], tmp_path, stdin=data) == fast


# ---------------------------------------------------------------- against the real program


def _reference(args, cwd, stdin=b""):
    result = subprocess.run([REFERENCE, *args], capture_output=True, cwd=cwd, input=stdin)
    return result.stdout, result.returncode


@needs_reference
def test_differential_against_debian_ministat(tmp_path):
    rng = random.Random(11)
    tokens = ["0x1f", "1e3", ".5", "5.", "+2", "7e-3", "123456789012", "3 # note", "#x", ""]
    for case in range(40):
        names = []
        for index in range(rng.choice([1, 2, 3, 7])):
            lines = []
            for _ in range(rng.choice([3, 5, 20, 120])):
                if rng.random() < 0.15:
                    lines.append(rng.choice(tokens))
                else:
                    lines.append(repr(rng.gauss(100.0 + index, 7.0)))
            name = f"d{case}_{index}.txt"
            (tmp_path / name).write_text("\n".join(lines) + "\n")
            names.append(name)
        options = rng.sample(["-A", "-n", "-s", "-w40", "-c99.5", "-c80"], rng.randint(0, 3))
        expected = _reference([*options, *names], tmp_path)
        if b"[" in expected[0]:
            continue  # ministat wrote out of bounds: heap garbage in its plot
        stdout, _, status = run([*options, *names], tmp_path)
        assert (stdout, status) == expected, (options, names)


@needs_reference
def test_negative_one_pass_variance_is_minus_nan(tmp_path):
    (tmp_path / "v.txt").write_text("0.1\n0.1\n0.1\n")
    stdout, _, _ = run(["-n", "v.txt"], tmp_path)
    assert stdout.decode().splitlines()[-1].endswith("          -nan")
    assert (stdout, 0) == _reference(["-n", "v.txt"], tmp_path)
    (tmp_path / "w.txt").write_text("0.3\n0.3\n0.3\n")
    assert run(["-n", "w.txt"], tmp_path)[0] == _reference(["-n", "w.txt"], tmp_path)[0]


@needs_reference
def test_long_lines_and_nul_bytes_like_fgets(tmp_path):
    (tmp_path / "long.txt").write_text("1" + " " * 8195 + "2\n3\n4\n")  # fgets splits it
    (tmp_path / "nul.txt").write_bytes(b"1\n2\x00garbage\n3\n4\n")
    for name in ("long.txt", "nul.txt"):
        assert run(["-n", name], tmp_path)[0::2] == _reference(["-n", name], tmp_path)


# ---------------------------------------------------------------- public API


def test_render_report_api_equals_the_command(files):
    import abstat

    a = [float(i) for i in range(1, 11)]
    b = [float(i) for i in range(3, 13)]
    text = abstat.ministat_report([a, b], names=["a.txt", "b.txt"], plot=False)
    assert text == TWO_SETS
    for dialect in ("classic", "freebsd"):
        for options, flags in (({}, []), ({"separate_bars": True, "width": 40}, ["-s", "-w", "40"])):
            expected = run(["--dialect", dialect, *flags, "a.txt", "b.txt"], files)[0].decode()
            got = abstat.ministat_report([a, b], names=["a.txt", "b.txt"], dialect=dialect, **options)
            assert got == expected
    quiet = abstat.ministat_report([a, b], names=["a", "b"], dialect="freebsd", quiet=True, stats=False)
    assert quiet == run(["--dialect", "freebsd", "-q", "-n", "a.txt", "b.txt"], files)[0].decode()
    assert quiet.splitlines() == [
        "x  10             1            10           5.5           5.5     3.0276504",
        "+  10             3            12           7.5           7.5     3.0276504",
    ]
    with pytest.raises(ValueError):
        abstat.ministat_report([a] * 8, names=["x"] * 8)
    with pytest.raises(ValueError):
        abstat.ministat_report([a], names=["x"], confidence=97)


def test_small_inputs_do_not_import_heavy_modules(files):
    """The start-up budget (benchmarks/ministat_small.py) needs a lean path."""
    probe = (
        "import sys, io\n"
        "from abstat.cli import main\n"
        "sys.stdout = io.TextIOWrapper(io.BytesIO())\n"
        "status = main(['ministat', 'a.txt', 'b.txt'])\n"
        "heavy = sorted(m for m in ('numpy', 're', 'argparse', 'dataclasses', 'typing', 'inspect', 'enum',"
        " 'collections')"
        " if m in sys.modules)\n"
        "sys.stderr.write(repr((status, heavy)))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, cwd=files, text=True)
    assert result.stderr.strip().splitlines()[-1] == "(0, [])"


@pytest.mark.parametrize("name", ["nosuch\x1b[2J", "bad\rname", "x\u202ey"])
def test_error_messages_show_a_file_name_s_controls_escaped(tmp_path, name):
    # attack18 L4: every other command shows them as \x1b; ministat wrote them raw to the terminal
    out, err, status = run_in_process([str(tmp_path / name)])
    assert status == 1 and out == b""
    assert err.count("\n") == 1 and err.startswith("abstat ministat: ")
    assert err[:-1].isprintable()
    shown = {"\x1b": "\\x1b", "\r": "\\x0d", "\u202e": "\\u202e"}
    assert "cannot open" in err and any(name.replace(c, e) in err for c, e in shown.items() if c in name)
