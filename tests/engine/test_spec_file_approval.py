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
