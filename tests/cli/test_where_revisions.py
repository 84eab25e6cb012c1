"""``--where rev=PREFIX`` (issue 27): any unique prefix of a stored revision selects it, in every command
that takes ``--where``; an ambiguous prefix is a one-line error naming the candidates (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from abstat.cli import main as cli_main
from support import paths

SRC = paths.SRC
# two revisions sharing the prefix a1b2c, one apart (full 40-hex SHAs, as abstat run --rev records them)
REVS = {"a1b2c3d4" + "0" * 32: "1", "a1b2cf00" + "1" * 32: "3", "9e8d7c6b" + "2" * 32: "5"}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("revs")
    path = root / "revs.db"
    for rev, value in REVS.items():
        for variant in ("old", "new"):
            # a deterministic benchmark: prints its value as a metric; run as exp:VARIANT for compare
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "abstat",
                    "run",
                    "-n",
                    "4",
                    "--no-progress",
                    "--store",
                    str(path),
                    "--experiment",
                    "nightly",
                    "--label",
                    f"rev={rev}",
                    "--label",
                    f"side={variant}",
                    "--shell",
                    "--metric",
                    "t=t=([0-9.]+)",
                    "-v",
                    f"{variant}=echo t={value}{'1' if variant == 'new' else '0'}",
                ],
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "PYTHONPATH": SRC},
            )
            assert done.returncode == 0, done.stderr
    return path


def _run(capsys, *argv):
    status = cli_main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


FULL = "a1b2c3d4" + "0" * 32


@pytest.mark.parametrize(
    "command",
    [
        ["show", "nightly", "--metric", "t"],
        ["report", "--metric", "t", "--by", "variant", "--format", "csv"],
        ["compare", "--metric", "t", "nightly:old", "nightly:new", "--format", "json"],
        ["plan", "--metric", "t", "nightly:old", "nightly:new"],
    ],
)
def test_a_unique_prefix_selects_what_the_full_revision_selects(store, capsys, command):
    full = _run(capsys, *command, "--store", str(store), "--where", f"rev={FULL}")
    assert full[0] == 0, full[2]
    for prefix in ("a1b2c3", "A1B2C3D", FULL[:12]):
        assert _run(capsys, *command, "--store", str(store), "--where", f"rev={prefix}") == full
    everything = _run(capsys, *command, "--store", str(store))
    assert everything[1] != full[1]  # the filter does filter


def test_a_prefix_among_several_values(store, capsys):
    one = _run(
        capsys,
        "report",
        "--metric",
        "t",
        "--format",
        "csv",
        "--store",
        str(store),
        "--where",
        f"rev={FULL},{'9e8d7c6b' + '2' * 32}",
    )
    assert one[0] == 0
    assert (
        _run(capsys, "report", "--metric", "t", "--format", "csv", "--store", str(store), "--where", "rev=a1b2c3,9e8d")
        == one
    )


@pytest.mark.parametrize(
    "command",
    [
        ["show", "nightly"],
        ["report"],
        ["compare", "nightly:old", "nightly:new"],
        ["history", "nightly"],
        ["plan", "nightly:old", "nightly:new"],
    ],
)
def test_an_ambiguous_prefix_is_one_line_naming_the_candidates(store, capsys, command):
    status, out, err = _run(capsys, *command, "--metric", "t", "--store", str(store), "--where", "rev=a1b2c")
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "ambiguous" in lines[0]
    assert "a1b2c3d40000" in lines[0] and "a1b2cf001111" in lines[0] and "9e8d" not in lines[0]


def test_history_takes_a_prefix(store, capsys):
    full = _run(
        capsys,
        "history",
        "nightly",
        "--metric",
        "t",
        "--no-state",
        "--format",
        "json",
        "--store",
        str(store),
        "--where",
        f"rev={FULL},{'9e8d7c6b' + '2' * 32}",
    )
    assert full[0] == 0, full[2]
    assert (
        _run(
            capsys,
            "history",
            "nightly",
            "--metric",
            "t",
            "--no-state",
            "--format",
            "json",
            "--store",
            str(store),
            "--where",
            "rev=a1b2c3,9e8d7c",
        )
        == full
    )


def test_no_match_and_other_keys_are_left_as_given(store, capsys):
    from abstat.cli.commands.where import resolve_revisions

    items = ["rev=ffff", "host=a1b2c", "rev=notahex", "side=old"]
    assert resolve_revisions(items, str(store)) == items
    assert resolve_revisions(["rev=a1b2cf"], str(store)) == ["rev=a1b2cf00" + "1" * 32]
    # no store: nothing to resolve against, nothing created
    missing = store.parent / "none.db"
    assert resolve_revisions(["rev=a1b2c"], str(missing)) == ["rev=a1b2c"] and not missing.exists()
