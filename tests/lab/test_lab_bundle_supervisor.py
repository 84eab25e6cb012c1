"""The runner shipped to a test box (a zip, deleted once loaded) still has its
supervisor: the watchdog that ends a run's processes when abstat dies."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from abstat.lab.bundle import runner_zip


def test_a_runner_loaded_from_a_deleted_zip_supervises_its_run(tmp_path):
    archive = tmp_path / "runner.zip"
    archive.write_bytes(runner_zip())
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(archive)!r})
        from abstat.box.runner.executor import ProcessExecutor
        from abstat.box.runner import containment, reaper
        from abstat.box.runner.model import Command
        from abstat.box.runner.executor import RunContext
        os.unlink({str(archive)!r})  # as the bootstrap does once the runner is loaded
        assert containment._SOURCES is not None  # read from the zip while it could be
        executor = ProcessExecutor()
        try:
            result = executor.measure(Command("true"), RunContext("a"), timeout=None)
            assert result.status == "ok", result
            assert executor.containment.token in reaper.live_runs()  # its supervisor runs
        finally:
            executor.close()
        print("supervised")
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0 and done.stdout.strip() == "supervised", done.stderr
