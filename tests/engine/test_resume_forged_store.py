"""Issue 36, item 1: a forged store never runs anything unseen.  ``abstat bisect --resume`` and
``abstat.resume()`` print (or list) the stored commands and run them only once the user says so
(``--yes``, ``approved=``), as ``abstat run --resume`` does."""

from __future__ import annotations

import os

import pytest

from abstat.engine import ExperimentSpec, Host, Lab, Variant
from abstat.store import open_store
from support import forged, paths
from support.cli import run_abstat as _abstat

SRC = paths.SRC
SHA_GOOD, SHA_BAD = "a" * 40, "b" * 40


def _forged_bisection(path: str, marker: str) -> None:
    setup = {
        "label": "box",
        "destination": "box.lab",
        "run": f"touch {marker}.run",
        "metric": "wall",
        "build": f"touch {marker}.build",
        "artifact": "bzImage",
        "install": f"touch {marker}.install",
        "boot": f"touch {marker}.boot",
        "check": f"touch {marker}.check",
        "recover": f"touch {marker} \x1b]0;title\x07",
        "boot_timeout": 5.0,
    }
    config = {
        "repo": os.path.dirname(path),
        "good": SHA_GOOD,
        "bad": SHA_BAD,
        "budget": 20,
        "confidence": 0.95,
        "setup": setup,
    }
    forged.bisect_store(path, config)


def test_bisect_resume_prints_the_stored_commands_and_runs_nothing_without_yes(tmp_path):
    store, marker = str(tmp_path / "s.db"), str(tmp_path / "pwned")
    _forged_bisection(store, marker)
    ssh = tmp_path / "ssh"  # were anything to reach the box, it would leave a mark
    ssh.write_text(f"#!/bin/sh\ntouch {marker}.ssh\nexit 255\n")
    ssh.chmod(0o755)
    result = _abstat(
        "bisect",
        "--resume",
        "bx",
        "--store",
        store,
        cwd=str(tmp_path),
        env=dict(os.environ, ABSTAT_SSH_COMMAND=str(ssh)),
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1] == "abstat bisect: --resume 'bx' runs the stored commands above; check them, then add --yes"
    for shown in (
        f"--build touch {marker}.build",
        f"--recover touch {marker} \\x1b]0;title\\x07",
        "on box (box.lab):",
        f"    --install touch {marker}.install",
        f"    --boot touch {marker}.boot",
        f"    --check touch {marker}.check",
        f"    --run touch {marker}.run",
    ):
        assert any(shown in line for line in lines), (shown, result.stderr)
    assert "\x1b" not in result.stderr and "Traceback" not in result.stderr
    assert not [name for name in os.listdir(tmp_path) if name.startswith("pwned")]


def _lab_store(path: str, command: str) -> None:
    forged.run_store(path, ExperimentSpec((Variant("a", command),), seed=1, lab=Lab((Host("m", "m"),))))


def test_the_api_resume_runs_nothing_unless_the_listed_commands_are_approved(tmp_path):
    import abstat
    from abstat.errors import UsageError

    store, marker = str(tmp_path / "s.db"), tmp_path / "pwned"
    _lab_store(store, f"touch {marker}")
    listed = abstat.stored_commands("x", store=store)
    assert listed == ["on m (m):", f"  -v a=touch {marker}"]
    for approved in (None, [], ["on m (m):", "  -v a=true"]):
        with pytest.raises(UsageError, match=f"runs the stored commands .*-v a=touch {marker}.*approved="):
            abstat.resume("x", store=store, approved=approved)
    assert not marker.exists()
    with open_store(store, create=False) as opened:
        assert len(opened.invocations("x")) == 1  # nothing started
