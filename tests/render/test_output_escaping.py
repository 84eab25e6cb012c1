"""Output that comes from data is escaped for where it goes (issue 15 section 4), and
colour and encodings follow the environment (NO_COLOR, FORCE_COLOR, PYTHONIOENCODING)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from abstat.comparison import compare_many
from abstat.render import escape
from abstat.render.compare_text import render, summary_block
from abstat.report import api
from support import paths

HERE = str(paths.TESTS)
SRC = os.path.join(HERE, "..", "src")
HCALL = os.path.join(HERE, "data", "report", "hcall")
OSC = "\x1b]0;PWNED\x07"
ANSI = "\x1b[31mred\x1b[0m"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[l](javascript:alert(1))"
LIVE_LINK = re.compile(r"(?<!\\)\]\(javascript")  # a "](" whose bracket is not escaped


def abstat(*args: str, env: dict[str, str] | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environment.update(PYTHONPATH=os.path.abspath(SRC), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "abstat", *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=cwd,
        timeout=120,
        errors="backslashreplace",
    )


def _samples(seed: int, centre: float) -> list[float]:
    return list(np.random.default_rng(seed).normal(centre, 1, 40))


# -- the escape functions -------------------------------------------------------------


@pytest.mark.parametrize(
    "text,shown",
    [
        (OSC, "\\x1b]0;PWNED\\x07"),
        ("a\nb", "a\\x0ab"),
        ("a\rb", "a\\x0db"),
        ("\x9b31m", "\\x9b31m"),
        ("a\u2028b", "a\\u2028b"),
        ("\u202eevil", "\\u202eevil"),
        ("\udcff", "\\xff"),  # the byte 0xff of a name that was not UTF-8, as backslashreplace shows it
        ("\udc7f\ud800", "\\udc7f\\ud800"),  # surrogates no byte decodes to
        ("µs → ok", "µs → ok"),
    ],
)
def test_terminal_escape(text, shown):
    assert escape.terminal(text) == shown


def test_terminal_escape_of_every_code_point():
    """Every code point shows as the one regular expression of the control characters, bidi controls and
    lone surrogates says, and every other character Python does not print but the ASCII space (format
    characters, other spaces, unassigned code points: attack19 L1) as its escape too (escape.terminal skips
    the search on printable text), one at a time and among text."""
    unsafe = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

    def visible(match):
        code = ord(match.group())
        code = code - 0xDC00 if 0xDC80 <= code <= 0xDCFF else code  # surrogateescape's bytes as bytes
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    def reference(text):
        out = []
        for c in text:
            code = ord(c)
            code = code - 0xDC00 if 0xDC80 <= code <= 0xDCFF else code  # surrogateescape's bytes as bytes
            if unsafe.fullmatch(c) or not (c.isprintable() or c == " "):
                out.append(
                    f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
                )
            else:
                out.append(c)
        return "".join(out)

    every = [chr(code) for code in range(0x110000)]
    assert [escape.terminal(c) for c in every] == [reference(c) for c in every]
    assert escape.terminal("\u200e") == "\\u200e" and unsafe.sub(visible, "\u200e") == "\u200e"
    text = "".join(every)
    assert escape.terminal(text) == reference(text) and "\\x1b" in escape.terminal(text)


def test_markdown_escape_kills_html_and_links():
    assert escape.markdown(IMG) == "&lt;img src=x onerror=alert(1)&gt;"
    assert escape.markdown(LINK) == "\\[l\\](javascript:alert(1))"
    assert escape.markdown("a|b\nc") == "a\\|b\\\\x0ac"  # shown as a\|b\x0ac


@pytest.mark.parametrize(
    "cell,out",
    [
        ("=1+2", "'=1+2"),
        ("+cmd", "'+cmd"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\\x09x"),
        ("\rx", "'\\x0dx"),
        ("-15.2", "-15.2"),
        ("+1e-05", "+1e-05"),
        ("-inf", "-inf"),
        (3.5, 3.5),
        ("plain", "plain"),
    ],
)
def test_csv_formula_neutralised_numbers_kept(cell, out):
    assert escape.csv_cell(cell) == out


# -- compare ------------------------------------------------------------------------------


def _evil_comparisons():
    return compare_many(
        {f"{IMG}{OSC}": _samples(1, 100), f"{LINK}\nx": _samples(2, 90), "=HYPERLINK(1)": _samples(3, 95)}
    )


def test_compare_text_and_summary_escape_control_characters():
    comps = _evil_comparisons()
    for text in (render(comps, "text"), render(comps, "text", color=True), summary_block([(None, None, comps)])):
        assert "\x1b]" not in text and "\x07" not in text
        assert "\\x1b]0;PWNED\\x07" in text
    plain = render(comps, "text")
    # a newline in a name does not break the table: every row of the variants table is one line
    assert sum(1 for line in plain.splitlines() if line.startswith(("<img", "[l]", "=HYP"))) >= 3


def test_compare_markdown_has_no_live_html_or_link():
    md = render(_evil_comparisons(), "markdown")
    assert "<img" not in md and not LIVE_LINK.search(md)
    assert "&lt;img src=x onerror=alert(1)&gt;" in md
    assert all(line.startswith(("|", "-", "", "1", "2", "3")) for line in md.splitlines())


def test_compare_csv_neutralises_formulas_and_keeps_numbers():
    rows = list(csv.DictReader(io.StringIO(render(_evil_comparisons(), "csv"))))
    formula = [r for r in rows if "HYPERLINK" in r["candidate"]][0]
    assert formula["candidate"] == "'=HYPERLINK(1)"
    assert float(formula["delta_pct"]) < 0 and float(formula["ci_low_pct"]) < 0  # still numbers


def test_compare_cli_file_name_with_osc(tmp_path):
    evil = tmp_path / f"{OSC}b.txt"
    evil.write_text("\n".join(map(str, _samples(5, 90))))
    base = tmp_path / "a.txt"
    base.write_text("\n".join(map(str, _samples(4, 100))))
    result = abstat("compare", "--verbose", str(base), str(evil), env={"FORCE_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    assert "\x1b]" not in result.stdout and "\\x1b]0;PWNED\\x07b.txt" in result.stdout


# -- report -------------------------------------------------------------------------------


def _report(label: str):
    cwd = os.getcwd()
    os.chdir(HCALL)
    try:
        sets = api.load(
            ["milan-hcall-pv64-before", "milan-hcall-pv64-after", "milan-hcall-pv32-before", "milan-hcall-pv32-after"],
            pattern="{host}-hcall-{mode}-{variant}",
        )
    finally:
        os.chdir(cwd)
    for sample_set in sets:
        sample_set.labels["mode"] = sample_set.labels["mode"] + label
    return api.build(sets)


@pytest.mark.parametrize("fmt", ["text", "table", "email"])
def test_report_terminal_formats(fmt):
    text = api.render(_report(f"{ANSI}\n{OSC}"), fmt, color=fmt == "table", width=200)
    assert "\x1b]" not in text and "\x07" not in text and "\x1b[31mred" not in text
    assert "\\x1b[31mred" in text
    if fmt == "text":
        table = text.split("\n\n")[1].splitlines()
        assert len(table) == 2 + 2 + 1  # header, rule, two rows, geomean: no row broken


def test_report_markdown_and_csv():
    report = _report(f"{IMG}{LINK}")
    md = api.render(report, "markdown")
    assert "<img" not in md and not LIVE_LINK.search(md)
    formula = _report("=1+2")
    rows = list(csv.DictReader(io.StringIO(api.render(formula, "csv"))))
    assert {r["mode"] for r in rows if r["kind"] == "cell"} == {"pv64=1+2", "pv32=1+2"}  # not at the start: unchanged
    for sample_set_label in ("=cmd()",):
        report = _report("")
        for row in report.rows:
            row.labels["mode"] = sample_set_label
        rows = list(csv.DictReader(io.StringIO(api.render(report, "csv"))))
        assert {r["mode"] for r in rows if r["kind"] == "cell"} == {"'=cmd()"}
        assert all(float(r["delta_pct"]) for r in rows if r["delta_pct"])


# -- export and show from a store ---------------------------------------------------------


@pytest.fixture
def evil_store(tmp_path):
    from abstat.store import open_store

    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        for variant, centre in (("before", 10.0), ("after", 9.0)):
            inv = store.start_invocation("x", {"hostname": f"h{OSC}"}, labels={"note": f"=1+2{IMG}\n{LINK}"})
            for i, value in enumerate(_samples(7, centre)[:8]):
                store.add_run(
                    inv,
                    variant=variant,
                    command=f"=cmd{ANSI}",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=0.0,
                    wall=value,
                    values={"wall": [value]},
                    units={"wall": "s"},
                    notes=["peak RSS not recorded: at most abstat's own 18368 KiB"],
                )
    return path


def test_export_csv_formulas_and_notes(evil_store):
    result = abstat("export", "--store", evil_store)
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows and all(r["command"].startswith("'=cmd") for r in rows)
    assert all(float(r["value"]) > 0 for r in rows)  # numbers stay numbers
    assert all("peak RSS not recorded" in r["notes"] for r in rows)
    as_json = json.loads(abstat("export", "--format", "json", "--store", evil_store).stdout)
    assert as_json[0]["notes"] == ["peak RSS not recorded: at most abstat's own 18368 KiB"]


def test_show_escapes_and_shows_the_run_notes(evil_store):
    text = abstat("show", "x", "--store", evil_store, env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b]" not in text and "\x1b[31m" not in text
    assert "\\x1b]0;PWNED\\x07" in text
    assert "peak RSS not recorded: at most abstat's own 18368 KiB (16 runs)" in text
    md = abstat("show", "x", "--store", evil_store, "--format", "markdown").stdout
    assert "<img" not in md and not LIVE_LINK.search(md)
    csv_text = abstat("show", "x", "--store", evil_store, "--format", "csv").stdout
    assert "\n=" not in csv_text and not csv_text.startswith("=")


# -- colour and encodings -----------------------------------------------------------------


@pytest.fixture
def two_files(tmp_path):
    for name, centre in (("a.txt", 100), ("b.txt", 90)):
        (tmp_path / name).write_text("\n".join(map(str, _samples(centre, centre))))
    return tmp_path


@pytest.mark.parametrize(
    "env,coloured",
    [
        ({}, False),
        ({"NO_COLOR": "1"}, False),
        ({"FORCE_COLOR": "1"}, True),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_follows_the_environment(two_files, env, coloured):
    for args in (
        ["compare", "a.txt", "b.txt"],
        ["compare", "--verbose", "a.txt", "b.txt"],
        ["report", "--format", "table", "a.txt", "b.txt"],
    ):
        result = abstat(*args, env=env, cwd=str(two_files))
        assert result.returncode == 0, result.stderr
        assert ("\x1b[" in result.stdout) is coloured, (args, env)


def test_ascii_stdout_report_table_and_run(two_files, tmp_path):
    env = {"PYTHONIOENCODING": "ascii"}
    table = abstat("report", "--format", "table", "a.txt", "b.txt", env=env, cwd=str(two_files))
    assert table.returncode == 0, table.stderr
    assert "+--" in table.stdout or "|" in table.stdout
    run = abstat(
        "run", "-n", "3", "--no-progress", "--store", str(tmp_path / "r.db"), "-v", "a=true", "-v", "b=true", env=env
    )
    assert run.returncode == 0, run.stderr
    assert "internal error" not in run.stderr and " -> " in run.stdout
    assert run.stdout.isascii()
