"""Issue 36, items 4 and 13: the supervisor's journal replay runs abstat's own code, isolated from the
directory abstat ran in (a planted ``abstat.py`` never runs, and no run is lost); a runner loaded from a
zip on a test box leaves nothing of abstat's in the box's temporary directory, even though it ends
with ``os._exit``."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

from abstat.lab.bundle import runner_zip
from support import paths

SRC = paths.SRC


def _count(path: str) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        db.close()


def test_the_replay_after_a_sigkill_ignores_an_abstat_py_planted_where_abstat_ran(tmp_path):
    """abstat runs (with its batch commit a minute away) in a directory holding a planted abstat.py and
    abstat/ package; SIGKILLed, its supervisor replays the journal: every completed run is stored, the
    planted code never ran."""
    work, temporary = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    temporary.mkdir()
    marker = tmp_path / "planted-ran"
    planted = f"open({str(marker)!r}, 'a').write('ran\\n')\nraise SystemExit(0)\n"
    (work / "abstat.py").write_text(planted)
    (work / "__main__.py").write_text(planted)
    path, counter = str(tmp_path / "s.db"), str(tmp_path / "counter")
    # abstat as its console script starts it: sys.path[0] is not the current directory
    code = (
        f"import sys; sys.path.insert(0, {SRC!r}); import abstat.engine.buffer as b; b.COMMIT_EVERY_S = 60.0\n"
        "from abstat.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    env = dict(os.environ, TMPDIR=str(temporary), PYTHONPATH=str(work))  # even a PYTHONPATH naming it
    proc = subprocess.Popen(
        [
            sys.executable,
            "-I",
            "-c",
            code,
            "run",
            "-n",
            "100000",
            "--shell",
            "--no-progress",
            "--store",
            path,
            "-v",
            f"a=echo x >> {counter}",
        ],
        cwd=str(work),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not os.path.exists(counter) or os.path.getsize(counter) < 100):
        time.sleep(0.05)
    assert _count(path) == 0  # every run waits for its commit, in the journal
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(n.startswith("abstat-journal-") for n in os.listdir(temporary)):
        time.sleep(0.05)
    assert not any(n.startswith("abstat-journal-") for n in os.listdir(temporary)), "the journal was not replayed"
    assert not marker.exists(), "the planted abstat.py ran"
    with open(counter) as handle:
        started = len(handle.readlines())
    assert started - 1 <= _count(path) <= started and started >= 50


def test_a_runner_from_a_deleted_zip_leaves_no_supervisor_directory_behind(tmp_path):
    archive, temporary = tmp_path / "runner.zip", tmp_path / "tmp"
    temporary.mkdir()
    archive.write_bytes(runner_zip())
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(archive)!r})
        from abstat.box.runner.executor import ProcessExecutor, RunContext
        from abstat.box.runner.model import Command
        os.unlink({str(archive)!r})  # as the bootstrap does once the runner is loaded
        for _ in range(3):  # a runner session measures with several executors
            executor = ProcessExecutor()
            try:
                result = executor.measure(Command("true"), RunContext("a"), timeout=None)
                assert result.status == "ok", result
                assert executor.containment._supervisor is not None  # supervised
            finally:
                executor.close()
        sys.stdout.write("supervised\\n")
        sys.stdout.flush()
        os._exit(0)  # as the bootstrap ends: no atexit handler runs
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "TMPDIR": str(temporary)},
    )
    assert done.returncode == 0 and done.stdout.strip() == "supervised", done.stderr
    assert os.listdir(temporary) == []
