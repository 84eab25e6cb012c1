"""attack19 F13: ``run --spec FILE`` lists what the file would run and the store it writes to, and
runs it only with ``--yes`` (docs/security.md: a specification written by someone else is data),
as ``run --resume`` does for a stored experiment."""

from __future__ import annotations

import dataclasses

from abstat.engine import ExperimentSpec, Hooks, Variant
from abstat.engine.spec import dumps
from support.cli import run_abstat as abstat


def _write(tmp_path, **fields) -> str:
    spec = ExperimentSpec((Variant("a", "true"),), runs=2, shell=True)
    spec = dataclasses.replace(spec, hooks=Hooks(setup="touch ran"), **fields)
    (tmp_path / "job.json").write_text(dumps(spec))
    return "job.json"


def test_a_specification_file_runs_nothing_and_opens_no_store_without_yes(tmp_path):
    _write(tmp_path, store="postgresql://abstat:secret@127.0.0.1:1/x")
    result = abstat("run", "--spec", "job.json", "--no-progress", cwd=str(tmp_path), stdin="")
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "on this machine (in a shell):",
        "  -v a=true",
        "  --setup touch ran",
        "writes to the store postgresql://abstat:***@127.0.0.1:1/x (named by the file; --store chooses another)",
        "abstat run: --spec 'job.json' runs the commands above and writes to its store; check them, then add --yes",
    ]
    assert not (tmp_path / "ran").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["job.json"]


def test_with_yes_the_file_runs_and_print_spec_needs_no_yes(tmp_path):
    _write(tmp_path, store="s.db")
    printed = abstat("run", "--spec", "job.json", "--print-spec", cwd=str(tmp_path), stdin="")
    assert printed.returncode == 0 and '"setup": "touch ran"' in printed.stdout, printed.stderr
    assert not (tmp_path / "ran").exists()
    ran = abstat("run", "--spec", "job.json", "--yes", "--no-progress", cwd=str(tmp_path), stdin="")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "ran").exists() and (tmp_path / "s.db").exists()


def test_print_spec_shows_the_store_the_file_names_with_its_password_hidden(tmp_path):
    """attack20 A12: ``--print-spec`` printed ``"store": null`` for a file naming its store, while the listing
    said it writes there: the printed specification was not the one that would run."""
    import json

    _write(tmp_path, store="postgresql://bob:s3cr3t@127.0.0.1:1/x")
    printed = abstat("run", "--spec", "job.json", "--print-spec", cwd=str(tmp_path), stdin="")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["store"] == "postgresql://bob:***@127.0.0.1:1/x"
    assert "s3cr3t" not in printed.stdout
    chosen = abstat("run", "--spec", "job.json", "--print-spec", "--store", "o.db", cwd=str(tmp_path), stdin="")
    assert json.loads(chosen.stdout)["store"] == "o.db", chosen.stderr
    _write(tmp_path)  # a file naming no store: none printed, as for a command line without --store
    assert json.loads(abstat("run", "--spec", "job.json", "--print-spec", cwd=str(tmp_path)).stdout)["store"] is None


def test_a_file_naming_no_store_is_not_said_to_name_one(tmp_path):
    """attack21 B9: the listing approved with ``--yes`` said "(named by the file ...)" for a file naming no store."""
    _write(tmp_path)
    result = abstat("run", "--spec", "job.json", "--no-progress", cwd=str(tmp_path), stdin="")
    assert result.returncode == 2, result.stderr
    line = [x for x in result.stderr.splitlines() if x.startswith("writes to the store")]
    assert line and "named by the file" not in line[0] and "the file names none" in line[0], result.stderr
