"""Library errors name fields; the command line names the flag that set each one.

The brief: "library code ... its errors name fields, the CLI maps them to flags".  An error about a
field writes ``{field}`` and lists it (:class:`abstat.errors.AbstatError`); ``str(err)`` names the
field, ``abstat COMMAND`` prints it with the flag ``abstat.cli.flags.namer(COMMAND)`` maps it to.
These tests read the library's source with ``ast`` (as tests/test_architecture.py does): no error the
library raises names a flag, and every field it names is a flag of some command, the one the table
says.  Warnings and notes the library returns name fields the same way (StatWarning's ``fields``,
:func:`abstat.errors.named`): the command that shows them names its flag.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import re

import pytest

from abstat.cli.flags import namer
from abstat.cli.registry import COMMANDS
from abstat.errors import UsageError

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src", "abstat")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# A whole command line the user may run (`abstat import J --store S`, abstat run --rev) names that
# command's flags: kept (up to a backquote, or a ; : or parenthesis where the sentence goes on).
COMMAND_LINE = re.compile(r"`[^`]*`|\babstat [a-z]+[^`;:()]*")
# Not the library's: the command line (cli/), ministat(1)'s own getopt-style front end, and the box's
# code (standard library only: its messages travel to the controller as text; an error that names an
# option sends its fields along, tests/lab/test_box_error_fields.py).
NOT_LIBRARY = ("cli", os.path.join("ministat", "cli.py"), "box")


def _sources() -> list[tuple[str, ast.Module]]:
    found = []
    for directory, _, files in os.walk(SRC):
        for file in sorted(files):
            path = os.path.join(directory, file)
            relative = os.path.relpath(path, SRC)
            if file.endswith(".py") and not any(relative == p or relative.startswith(p + os.sep) for p in NOT_LIBRARY):
                with open(path, encoding="utf-8") as handle:
                    found.append((relative, ast.parse(handle.read(), path)))
    return found


SOURCES = _sources()


def _error_classes(sources: list[tuple[str, ast.Module]]) -> set[str]:
    """The names of abstat's error classes: AbstatError and every class deriving from one of them."""
    names = {"AbstatError", "InputError", "UsageError"}
    classes = [node for _, tree in sources for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    grown = True
    while grown:
        grown = False
        for node in classes:
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
            if node.name not in names and bases & names:
                names.add(node.name)
                grown = True
    return names


def _text(node: ast.AST) -> str:
    """The literal text of a message expression: its strings, each formatted value as ``{}``."""
    parts = []
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            parts.append(child.value)
        elif isinstance(child, ast.FormattedValue):
            parts.append("{}")
    return "".join(parts)


def flags_in_errors(sources: list[tuple[str, ast.Module]]) -> list[str]:
    """``path:line: --flag`` for each flag an error the library builds names (outside a whole command line)."""
    classes = _error_classes(sources)
    found = []
    for path, tree in sources:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name not in classes or not node.args:
                continue
            message = COMMAND_LINE.sub("", _text(node.args[0]))
            found += [f"{path}:{node.lineno}: {flag}" for flag in FLAG.findall(message)]
    return found


def test_no_error_of_the_library_names_a_flag():
    found = flags_in_errors(SOURCES)
    assert not found, "name the field ({field}, fields=[...]) instead: " + "; ".join(found)


def test_the_check_finds_a_flag_in_an_error_however_its_message_is_written():
    tree = ast.parse(
        "class LostError(UsageError): pass\n"
        "raise UsageError('--pattern: empty')\n"
        "raise InputError(f'{x!r} does not match ' '--where ' f'{y}', path=p)\n"
        "raise LostError(('many ' 'lines, see --store'))\n"
        "raise InputError('run `abstat import J --store S` to add them')\n"  # a command line: kept
        "raise InputError('(record them with abstat run --rev; --where chooses)')\n"
        "raise UsageError('{pattern}: empty', fields=['pattern'])\n"  # a field: kept
        "raise ValueError('--not-ours')\n"  # not an abstat error
    )
    assert flags_in_errors([("x.py", tree)]) == [
        "x.py:2: --pattern",
        "x.py:3: --where",
        "x.py:4: --store",
        "x.py:6: --where",
    ]


# Warnings and notes are values the library returns: they name fields as its errors do (StatWarning's
# ``fields=[...]``, abstat.errors.named for a note's text), and the command that shows them names its flag.
WARNINGS = {"StatWarning", "Warning"}  # the message is the second argument
NOTE_LISTS = ("notes", "warnings")  # NAME.append(TEXT), .extend, .insert: a note the library returns


def _warning_message(node: ast.Call) -> ast.AST | None:
    """The message of a warning the call builds, or of a note it adds to a list of notes (None: neither)."""
    func = node.func
    if isinstance(func, ast.Name) and func.id in WARNINGS:
        given = [k.value for k in node.keywords if k.arg == "message"]
        return node.args[1] if len(node.args) > 1 else (given[0] if given else None)
    if isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert") and node.args:
        owner = func.value.id if isinstance(func.value, ast.Name) else getattr(func.value, "attr", "")
        if owner.endswith(NOTE_LISTS):
            return node.args[-1]
    return None


def flags_in_warnings(sources: list[tuple[str, ast.Module]]) -> list[str]:
    """``path:line: --flag`` for each flag a warning or a note of the library names (outside a command line)."""
    found = []
    for path, tree in sources:
        for node in ast.walk(tree):
            message = _warning_message(node) if isinstance(node, ast.Call) else None
            if message is not None:
                text = COMMAND_LINE.sub("", _text(message))
                found += [f"{path}:{node.lineno}: {flag}" for flag in FLAG.findall(text)]
    return found


def test_no_warning_or_note_of_the_library_names_a_flag():
    found = flags_in_warnings(SOURCES)
    assert not found, "name the field ({field}, fields=[...] or abstat.errors.named) instead: " + "; ".join(found)


def test_the_check_finds_a_flag_in_a_warning_or_a_note_however_it_is_written():
    tree = ast.parse(
        "w = StatWarning('outliers', f'{n} outliers, kept (--outliers tukey drops them)', name)\n"
        "w = Warning(code='x', message='see --plots')\n"
        "notes.append('costs not given (--run-cost)')\n"
        "self.notes.extend(f'{x}: see ' '--where' for x in xs)\n"
        "result.warnings.insert(0, 'run `abstat import J --store S` to add them')\n"  # a command line: kept
        "notes.append(named('raise {max_pvalue} to report them', 'max_pvalue'))\n"  # a field: kept
        "StatWarning('x', '{center} mean resolves it', fields=['center'])\n"
        "lines.append('--not-a-note')\n"  # not a list of notes
    )
    assert flags_in_warnings([("x.py", tree)]) == [
        "x.py:1: --outliers",
        "x.py:2: --plots",
        "x.py:3: --run-cost",
        "x.py:4: --where",
    ]


def test_the_advice_of_the_report_s_footnotes_names_fields():
    from abstat.report.notes import ADVICE_FIELDS, KINDS, TEMPLATES

    templates = TEMPLATES
    for head, advice in templates.values():
        assert not FLAG.findall(COMMAND_LINE.sub("", head + advice)), (head, advice)
    named = {field for _, advice in templates.values() for field in re.findall(r"\{(\w+)\}", advice)}
    assert named == set(ADVICE_FIELDS)
    assert KINDS["outliers"][1] == "--outliers tukey or mad drops them"  # the flag, as a command shows it


def test_a_warning_names_the_flag_of_the_command_that_shows_it():
    from abstat.errors import named, naming
    from abstat.stats.warnings import StatWarning

    warning = StatWarning("load", "loaded ({metrics} user or {metrics} sys)", fields=["metrics"])
    assert warning.named(str) == "loaded (metrics user or metrics sys)"
    assert warning.message == "loaded (--metric user or --metric sys)"  # outside a command: the usual flag
    with naming(namer("noise")):  # abstat noise chooses the metrics it reports with --report
        assert warning.message == "loaded (--report user or --report sys)"
        assert warning.to_dict()["message"] == "loaded (--report user or --report sys)"
        assert named("costs not given ({run_cost})", "run_cost") == "costs not given (--run-cost)"
    assert warning.message == "loaded (--metric user or --metric sys)"


def _fields_named() -> set[str]:
    """Every field the library lists in an error's or a warning's ``fields=[...]``, or names in a note."""
    fields = set()
    for _, tree in SOURCES:
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "fields" and isinstance(node.value, (ast.List, ast.Tuple)):
                fields.update(e.value for e in node.value.elts if isinstance(e, ast.Constant))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "named":
                fields.update(e.value for e in node.args[1:] if isinstance(e, ast.Constant))
    from abstat.report.notes import ADVICE_FIELDS

    return fields | set(ADVICE_FIELDS)


def _options(command: str) -> set[str]:
    """Every option string of ``abstat COMMAND``'s parser (its sub-commands' too)."""
    module = importlib.import_module(COMMANDS[command][0])
    parsers, options = [module.build_parser()], set()
    while parsers:
        parser = parsers.pop()
        for action in parser._actions:
            options.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                parsers += list(action.choices.values())
    return options


PARSED = [name for name, (module, _) in COMMANDS.items() if hasattr(importlib.import_module(module), "build_parser")]


def test_every_field_the_library_names_is_a_flag_of_some_command():
    # positional arguments and values a command passes itself are fields without a flag of their own
    positional = {"good", "bad", "experiment", "state"}
    flags = {command: _options(command) for command in PARSED}
    missing = sorted(
        field
        for field in _fields_named() - positional
        if not any(namer(command)(field) in flags[command] for command in PARSED)
    )
    assert not missing, f"fields no command has a flag for: {missing}"


# (command, field, flag): what the user typed; the flag must be one of that command's options.
MAPPED = [
    ("report", "pattern", "--pattern"),
    ("report", "input_format", "--input-format"),
    ("report", "fail_on", "--fail-on"),
    ("report", "metrics", "--metric"),
    ("report", "where", "--where"),
    ("report", "by", "--by"),
    ("report", "rows", "--rows"),
    ("report", "columns", "--columns"),
    ("report", "adjust", "--adjust"),
    ("report", "plots", "--plots"),
    ("report", "ministat", "--ministat"),
    ("report", "csv_value", "--csv-value"),
    ("report", "label", "--label"),
    ("report", "format", "--format"),
    ("report", "store", "--store"),
    ("report", "baseline", "--baseline"),
    ("compare", "unit", "--unit"),
    ("compare", "fail_on", "--fail-on"),
    ("show", "baseline", "--baseline"),
    ("show", "where", "--where"),
    ("history", "rev_label", "--rev-label"),
    ("history", "metrics", "--metric"),
    ("run", "rev", "--rev"),
    ("run", "label", "--label"),
    ("run", "runs", "-n"),
    ("run", "variants", "-v"),
    ("run", "resume", "--resume"),
    ("noise", "metrics", "--report"),
    ("publish", "plots", "--plots"),
]


@pytest.mark.parametrize(("command", "field", "flag"), MAPPED)
def test_the_cli_maps_each_field_to_the_command_s_flag(command, field, flag):
    assert namer(command)(field) == flag
    assert flag in _options(command)


def test_the_library_names_the_field_and_the_cli_the_flag():
    from abstat.readers.pattern import compile_pattern
    from abstat.report import api

    with pytest.raises(UsageError) as raised:
        compile_pattern("{host")
    assert str(raised.value) == "pattern '{host': unbalanced brace"
    assert raised.value.named(namer("report")) == "--pattern '{host': unbalanced brace"
    with pytest.raises(UsageError) as raised:
        api.load(["a.txt"], store="s.db")
    assert str(raised.value) == "give either INPUT files or store, not both"
    assert raised.value.named(namer("report")) == "give either INPUT files or --store, not both"
    with pytest.raises(UsageError) as raised:
        api.load(["a.txt"], labels=["host"])
    assert str(raised.value) == "label 'host': expected KEY=VALUE"
    assert raised.value.named(namer("report")) == "--label 'host': expected KEY=VALUE"
