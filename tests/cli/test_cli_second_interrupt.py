"""Once a command has been interrupted and has said so, the status is 130 even when a second Ctrl-C or
SIGTERM arrives while the interpreter exits (CI once saw ``abstat bisect: interrupted`` then status -2)."""

import subprocess
import sys
import textwrap


def test_a_second_signal_after_the_interrupt_keeps_the_status_130(tmp_path):
    (tmp_path / "interrupted_command.py").write_text("def main(rest):\n    raise KeyboardInterrupt\n")
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from abstat.cli import _run
        status = _run("bisect", "interrupted_command", [])
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        sys.exit(status)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr == "abstat bisect: interrupted\n"
