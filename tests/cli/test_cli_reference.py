"""docs/cli-reference.md is every command's --help as the parsers print it (datasette's habit)."""

from __future__ import annotations

import os
import re
import sys

import pytest
from support import paths

ROOT = str(paths.ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import cli_reference  # noqa: E402

from abstat.cli.registry import COMMANDS  # noqa: E402


def test_every_command_has_a_section():
    with open(cli_reference.PAGE, encoding="utf-8") as handle:
        text = handle.read()
    assert re.findall(r"^## abstat (\S+)$", text, flags=re.M) == list(COMMANDS)


def test_the_reference_is_what_the_parsers_print(monkeypatch):
    with open(cli_reference.PAGE, encoding="utf-8") as handle:
        text = handle.read()
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if cli_reference.recorded_version(text) != version:
        recorded = cli_reference.recorded_version(text)
        pytest.skip(f"written with Python {recorded}; argparse's layout differs in {version}")
    monkeypatch.setenv("COLUMNS", "100")
    assert cli_reference.render() == text, "run python scripts/cli_reference.py"
