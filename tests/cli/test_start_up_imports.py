"""What ``abstat compare A B`` and ``abstat ministat`` import and compile at start-up (issue 42): none of the
modules made lazy for them, none of the heavy ones, and no dataclass method compiled but the ``__init__``
of a class the command makes.  Timing is ``benchmarks/startup.py``'s; this holds the imports, which
regress silently otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from support.cli import environment, imported_modules

from abstat import fastdataclass

# Modules a file comparison never needs: the store and its drivers, peers' and the kernel's readers, and
# standard modules that only other branches use (shutil: argparse's width; statistics, glob, csv, html).
HEAVY: tuple[str, ...] = ("numpy.random", "numpy.ma", "scipy", "sqlite3", "abstat.store", "abstat.readers.peers")
HEAVY += ("abstat.readers.kernel", "shutil", "statistics", "glob", "csv", "html")
# Imported on first use only, on the branch that needs them.
LAZY = (
    "abstat.cli.commands.where",  # --where
    "unicodedata",  # text other than ASCII and abstat's own marks (render.terminal.columns)
    "abstat.report.gate",  # --fail-on
    "abstat.render.ci_formats",  # --format github / gitlab
    "abstat.readers.kernel_formats",  # a peer's file (readers.specs), --input-format's choices (report.inputs)
    "abstat.report.sampleset",  # report/* import SampleSet from readers.sampleset; this is its old name only
    "abstat.report.inputs",  # --where, stored variants (higher_is_better is report.analysis')
    "abstat.report.exact",  # units declared exact (Go's assume=exact; is_exact is report.analysis')
)
NO_CATALOGUES = not os.path.isdir(os.path.join(sys.base_prefix, "share", "locale"))
VALUES = {"a": "100.5\n101.25\n99.75\n100\n102\n", "b": "103\n104.5\n102.25\n103.75\n105\n"}


def _imported(tmp_path, *words: str) -> set[str]:
    for name, text in VALUES.items():
        (tmp_path / name).write_text(text)
    return imported_modules(tmp_path, *words)[0]


def _under(imported: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in imported if any(m == n or m.startswith(n + ".") for n in names))


def test_compare_of_two_files_imports_only_what_it_uses(tmp_path):
    imported = _imported(tmp_path, "compare", "a", "b")
    assert {"numpy", "abstat.cli.commands.compare", "abstat.report.matrix"} <= imported  # the log was read
    # inputs only: the parser's namespace without argparse; the branches of --fail-on, github, peers' files
    assert _under(imported, (*HEAVY, *LAZY, "argparse", "abstat.cli.args", "abstat.cli.commands.compare_extra")) == []


def test_compare_with_an_option_parses_with_argparse(tmp_path):
    imported = _imported(tmp_path, "compare", "a", "b", "--verbose")
    assert {"argparse", "abstat.cli.args.compare_parser"} <= imported
    assert _under(imported, (*HEAVY, *LAZY, "gettext", "locale") if NO_CATALOGUES else (*HEAVY, *LAZY)) == []


@pytest.mark.parametrize(
    "argv",
    [["a", "b"], ["a"], ["old=runs/*.txt", "new=n:10:2.5", "", "with space", "exp:variant", "baseline:x"]],
)
def test_compare_s_namespace_without_the_parser_is_the_parser_s(argv):
    """A command line of inputs only gets the namespace the parser would give, value for value."""
    from abstat.cli.commands import compare

    fast, parsed = vars(compare.parse_args(argv)), vars(compare.build_parser().parse_args(argv))
    assert list(fast) == list(parsed) and fast == parsed
    assert all(type(fast[k]) is type(parsed[k]) for k in fast)
    assert fast["higher_is_better"] is not compare.DEFAULTS["higher_is_better"]  # a list of its own


@pytest.mark.parametrize("argv", [[], ["a", "-"], ["--", "a", "b"], ["a", "b", "--verbose"], ["-c", "99", "a", "b"]])
def test_compare_s_options_go_to_the_parser(argv, monkeypatch):
    from abstat.cli.commands import compare

    parsed = []
    monkeypatch.setattr(compare, "build_parser", lambda: parsed.append(argv) or _Parser())
    compare.parse_args(argv)
    assert parsed == [argv]


class _Parser:
    def parse_args(self, argv: list[str]) -> None:
        return None


@pytest.mark.parametrize("words", [("ministat", "a", "b"), ("ministat", "-A", "a", "b"), ("--help",)])
def test_ministat_and_help_import_no_numpy(tmp_path, words):
    imported = _imported(tmp_path, *words)
    assert "abstat.cli" in imported
    assert _under(imported, ("numpy", "dataclasses", "argparse", *HEAVY, *LAZY)) == []


def test_help_imports_only_the_table_of_commands(tmp_path):
    """``abstat --help``: abstat, abstat.cli, its exit watch and the table of commands; not even ``__future__``
    (whose import a ``from __future__`` statement makes) nor ``gc`` (the collector is tuned for commands)."""
    imported = _imported(tmp_path, "--help")
    assert _under(imported, ("abstat",)) == ["abstat", "abstat.cli", "abstat.cli.exiting", "abstat.cli.registry"]
    assert _under(imported, ("__future__", "gc")) == []


@pytest.mark.skipif(not fastdataclass._DEFER, reason="Python 3.13 compiles a dataclass's methods at once")
def test_compare_compiles_only_the_dataclasses_it_makes(tmp_path):
    """Every dataclass method compiled during ``compare A B`` is an ``__init__`` (frozen classes' methods are
    closures), and the classes it makes (each fewer than ``INTERPRETED_CALLS`` times) or never makes keep
    theirs uncompiled."""
    for name, text in VALUES.items():
        (tmp_path / name).write_text(text)
    code = """if True:
        import sys
        compiled = []
        sys.addaudithook(lambda event, args: compiled.append(args[0]) if event == "compile" else None)
        from abstat.cli import main
        from abstat.fastdataclass import _LazyInit
        status = main(["compare", "a", "b"])
        made = [s for s in compiled if isinstance(s, bytes) and s.startswith(b"def __create_fn__")]
        methods = sorted({s.split(b" def ")[1].split(b"(")[0].decode() for s in made})
        classes = [c for m in list(sys.modules.values()) if m and m.__name__.startswith("abstat.")
                   for c in vars(m).values() if isinstance(c, type) and "__dataclass_fields__" in vars(c)]
        lazy = {c.__qualname__ for c in classes if isinstance(vars(c).get("__init__"), _LazyInit)}
        print(status, len(made), methods, len(set(classes)), len(lazy))
    """
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    status, made, methods, classes, lazy = run.stdout.splitlines()[-1].split(" ", 4)[:5]
    assert status == "0" and methods in ("[]", "['__init__']"), run.stdout
    assert int(made) + int(lazy) <= int(classes) and int(lazy) >= 20, run.stdout


@pytest.mark.skipif(not NO_CATALOGUES, reason="gettext's default folder exists: argparse gets gettext itself")
def test_compare_imports_no_gettext_nor_locale(tmp_path):
    assert _under(_imported(tmp_path, "compare", "a", "b"), ("gettext", "locale")) == []


@pytest.mark.skipif(not NO_CATALOGUES, reason="gettext's default folder exists: argparse gets gettext itself")
def test_argparse_s_translations_are_gettext_s():
    """Without gettext imported the stub returns the message (gettext's answer without a catalogue) and
    ngettext's plural rule; once gettext is imported (catalogues could then be bound) it is gettext's."""
    code = """if True:
        import sys
        from abstat.cli import args as cli
        import argparse
        alone = (argparse._("usage: "), argparse.ngettext("a", "as", 1), argparse.ngettext("a", "as", 2))
        stubbed = argparse._ is cli._gettext, "gettext" in sys.modules
        import gettext
        gettext.gettext = lambda message: "T:" + message
        gettext.ngettext = lambda singular, plural, n: f"T{n}:" + singular
        print(alone, stubbed, argparse._("usage: "), argparse.ngettext("a", "as", 2))
    """
    run = subprocess.run([sys.executable, "-c", code], env=environment(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "('usage: ', 'a', 'as') (True, False) T:usage:  T2:a"


_EXIT = """if True:
    import gc, sys
    sys.argv = ["abstat", *sys.argv[1:]]
    from abstat.cli import main
    status = main()
    print(status, gc.get_freeze_count() > 0)
"""


@pytest.mark.parametrize(
    ("words", "frozen"),
    [(("compare", "a", "b"), "True"), (("ministat", "a", "b"), "True"), (("report", "a", "b"), "False")],
)
def test_the_program_s_exit_skips_the_collector_after_compare_and_ministat(tmp_path, words, frozen):
    """The program's own process, once ``compare`` or ``ministat`` has returned, moves its objects to the
    collector's permanent generation (the interpreter's exit then does not traverse them: ~20 ms of CPU);
    another command's process keeps the collector's exit as it was."""
    for name, text in VALUES.items():
        (tmp_path / name).write_text(text)
    run = subprocess.run(
        [sys.executable, "-c", _EXIT, *words],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == f"0 {frozen}", run.stdout


def test_a_caller_s_collector_is_left_as_it_was(tmp_path, capsys, monkeypatch):
    """``abstat.cli.main(argv)`` called by a program (a test) freezes nothing: the caller's garbage stays
    collectable."""
    import gc

    from abstat.cli import main

    for name, text in VALUES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    frozen: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    assert main(["compare", "a", "b"]) == 0
    assert frozen == [] and capsys.readouterr().out.startswith("b vs a: ")


def test_plan_of_two_files_imports_neither_numpy_ma_nor_the_runner(tmp_path):
    # np.unique and np.quantile import numpy.ma (12 ms), the runner's model only matters for stored variants
    rng = np.random.default_rng(1)
    for name, mean in (("a", 1000.0), ("b", 1005.0)):
        (tmp_path / name).write_text("\n".join(f"{float(v)!r}" for v in rng.normal(mean, 10.0, 40)) + "\n")
    imported, out = imported_modules(tmp_path, "plan", "a", "b")
    assert "samples per variant" in out
    assert {"abstat.stats.permutation_power", "abstat.comparison.grid_sizing"} <= imported
    assert _under(imported, ("numpy.ma", "abstat.box.runner.model")) == []
