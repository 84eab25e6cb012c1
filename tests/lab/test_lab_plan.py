"""The lab without ssh: schedules, option checks, and the shipped runner over plain pipes."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from abstat.lab import bundle
from abstat.lab.config import block_slots, boot_order
from support import paths
from support.cli import run_abstat

SRC = paths.SRC


abstat = functools.partial(run_abstat, timeout=60)


def test_boot_order_is_balanced_seeded_and_random():
    variants = ["before", "after", "other"]
    orders = {tuple(boot_order(variants, 8, seed, "milan")) for seed in range(40)}
    for order in orders:
        counts = Counter(order)
        assert counts == Counter({name: 8 for name in variants})
        for start in range(0, 24, 3):  # every round boots each variant once
            assert sorted(order[start : start + 3]) == sorted(variants)
    assert len(orders) > 30  # randomized, not "all before first"
    assert boot_order(variants, 8, 5, "milan") == boot_order(variants, 8, 5, "milan")  # seeded
    assert boot_order(variants, 8, 5, "milan") != boot_order(variants, 8, 5, "naples")  # per host


def test_block_slots_positions_and_warmups():
    slots = block_slots(["a", "b"], 3, 1, "interleaved", "s")
    assert [s[3] for s in slots] == list(range(8))
    assert sum(1 for s in slots if s[2]) == 2 and all(s[2] for s in slots[:2])
    assert Counter(s[0] for s in slots if not s[2]) == {"a": 3, "b": 3}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--boot", "a=reboot", "-v", "a=true"], "need --host"),
        (["--boot-timeout", "5", "-v", "a=true"], "need --host"),
        (["--host", "m", "-v", "a=true", "--boot", "b=reboot"], "no variant 'b'"),
        (["--host", "m", "-v", "a=true", "-v", "b=true", "--boot", "a=reboot"], "give one for every variant"),
        (["--host", "m", "-v", "a=true", "--check", "a=true"], "--check needs --boot"),
        (["--host", "m", "-v", "a=true", "--boot", "a=r", "--boots", "0"], "--boots must be at least 1"),
        (["--host", "m", "-v", "a=true", "--boot-timeout", "-1"], "--boot-timeout must be a positive"),
        (["--host", "m", "--host", "x=m", "--host", "x=n", "-v", "a=true"], "label 'x' given twice"),
        (["--host=-oProxyCommand", "-v", "a=true"], "expected an ssh destination"),
        (["--host=-o=x", "-v", "a=true"], "the label must be"),
        (["--host", "m", "-v", "a=true", "--label", "host=z"], "--label host=...: with --host"),
        (["--resume", "nothing"], "no such store"),
        (["--resume", "nothing", "-n", "3"], "--resume takes the experiment's stored options"),
    ],
)
def test_bad_lab_options_are_one_line(tmp_path, args, message):
    result = abstat("run", "--store", str(tmp_path / "s.db"), *args, cwd=str(tmp_path))
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_resume_needs_a_stored_lab_experiment(tmp_path):
    from abstat.store import open_store

    store = str(tmp_path / "s.db")
    abstat("run", "--store", store, "--resume", "x", cwd=str(tmp_path))
    assert not os.path.exists(store)  # a resume creates no store
    with open_store(store):
        pass
    result = abstat("run", "--store", store, "--resume", "x", cwd=str(tmp_path))
    assert result.returncode == 2 and "--resume 'x': no such experiment" in result.stderr
    local = abstat(
        "run", "--store", store, "--experiment", "x", "-v", "a=true", "-n", "1", "--no-progress", cwd=str(tmp_path)
    )
    assert local.returncode == 0, local.stderr
    result = abstat("run", "--store", store, "--resume", "x", cwd=str(tmp_path))
    assert result.returncode == 2 and "not run with --host, nothing to resume" in result.stderr


def _start_runner(python: str = sys.executable) -> subprocess.Popen:
    process = subprocess.Popen(
        [python, "-I", "-c", bundle.BOOTSTRAP],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
    )
    process.stdin.write(bundle.payload())
    process.stdin.flush()
    return process


def _converse(plan: dict, python: str = sys.executable) -> tuple[dict, list[dict], subprocess.Popen]:
    """Start the shipped runner, send ``plan``: (hello, every later message, the ended process)."""
    process = _start_runner(python)
    try:
        hello = json.loads(process.stdout.readline())["hello"]
        process.stdin.write((json.dumps({"run": plan}) + "\n").encode())
        process.stdin.flush()
        messages = [json.loads(line) for line in process.stdout]
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    return hello, messages, process


def test_shipped_runner_speaks_the_protocol_without_abstat_installed():
    plan = {
        "variants": {"a": "true", "b": 'sh -c \'echo "{\\"n\\": 7}"\''},
        "json_lines": True,
        "slots": [["a", 0, True, 0], ["a", 0, False, 1], ["b", 0, False, 2], ["b", 1, False, 3]],
    }
    hello, messages, process = _converse(plan)  # python -I: no PYTHONPATH, no site-packages, only the zip
    assert hello["machine"]["hostname"] and hello["boot_id"] == hello["machine"]["boot_id"]
    results = [m["result"] for m in messages if "result" in m]
    assert [(r["variant"], r["iteration"], r["position"]) for r in results] == [("a", 0, 1), ("b", 0, 2), ("b", 1, 3)]
    assert all(r["status"] == "ok" and r["wall"] > 0 for r in results)
    assert results[1]["values"]["n"] == [7.0]
    assert messages[-1] == {"done": {"error": None, "interrupted": False, "notes": []}}
    assert process.returncode == 0, process.stderr.read()


def test_shipped_runner_is_standard_library_only(tmp_path):
    archive = tmp_path / "runner.zip"
    archive.write_bytes(bundle.runner_zip())
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import abstat.box.runner.remote\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'abstat', '__main__'}))"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe, str(archive)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_shipped_runner_checks_commands_on_the_box():
    _, messages, _ = _converse({"variants": {"a": "./no-such-benchmark"}, "slots": [["a", 0, False, 0]]})
    assert len(messages) == 1
    assert "command not found or not executable: './no-such-benchmark'" in messages[0]["error"]


def test_shipped_runner_stops_the_run_when_the_controller_goes_away(tmp_path):
    marker = tmp_path / "pid"
    process = _start_runner()
    try:
        process.stdout.readline()
        plan = {"variants": {"a": f"sh -c 'echo $$ > {marker}; exec sleep 60'"}, "slots": [["a", 0, False, 0]]}
        process.stdin.write((json.dumps({"run": plan}) + "\n").encode())
        process.stdin.flush()
        deadline = time.monotonic() + 20
        while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.02)
        started = time.monotonic()
        process.stdin.close()  # the connection dropped
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert time.monotonic() - started < 40  # stopped, not the 60 s sleep waited for (a loaded machine is slow)
    pid = int(marker.read_text())
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def _old_python(version: str) -> str | None:
    import glob
    import shutil

    candidates = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python3")))
    candidates += [p for p in [shutil.which(f"python{version}")] if p and "/shims/" not in p]
    return candidates[0] if candidates else None


@pytest.mark.skipif(_old_python("3.8") is None, reason="no Python 3.8 on this machine")
def test_shipped_runner_works_on_python_3_8():
    plan = {
        "variants": {"a": "true", "b": "sleep 0.01"},
        "timeout": 10,
        "background": ["sleep 60"],
        "slots": [["a", 0, False, 0], ["b", 0, False, 1]],
    }
    hello, messages, process = _converse(plan, _old_python("3.8"))
    assert hello["python"].startswith("3.8.")
    assert [m["result"]["status"] for m in messages if "result" in m] == ["ok", "ok"], process.stderr.read()
    assert messages[-1]["done"]["error"] is None


@pytest.mark.skipif(_old_python("3.7") is None, reason="no Python 3.7 on this machine")
def test_too_old_python_on_the_box_is_one_line():
    result = subprocess.run(
        [_old_python("3.7"), "-I", "-c", bundle.BOOTSTRAP], input=bundle.payload(), capture_output=True, timeout=30
    )
    assert result.returncode == 3
    assert result.stderr.decode().strip().endswith("the runner needs 3.8 or newer")


def test_progress_lines_per_host():
    import io

    from abstat.cli.progress.lab import LabProgress

    stream = io.StringIO()
    progress = LabProgress({"milan": (2, 2), "naples": (2, 2)}, ["before", "after"], stream, enabled=True)
    progress.state("milan", "booting", 0, "after")
    progress.state("milan", "checking", 0, "after")
    progress.boot("milan", 0, "after", 2)
    progress.state("milan", "running", 0)
    progress.run("milan", "after", 0.0015, True)
    progress.failed("naples", "boot 1 of 2 (before): the host did not come back")
    progress.stop()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[milan] booting  boot 1/2 after  ETA -"
    assert lines[1].startswith("[milan] checking  boot 1/2 after")
    assert lines[3].startswith("[milan] running 1/2  boot 1/2 after  ETA ")
    assert lines[3].endswith("median after 1.500 ms")
    assert lines[-1] == "abstat run: host naples failed: boot 1 of 2 (before): the host did not come back"


def test_progress_on_a_terminal_is_a_live_table():
    import io

    from abstat.cli.progress.lab import LabProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = LabProgress({"milan": (1, 3)}, ["a"], stream, enabled=True)
    progress.state("milan", "running", 0)
    progress.boot("milan", 0, "", 3)
    progress.run("milan", "a", 2.5, True)
    progress.finished("milan")
    progress.stop()
    text = stream.getvalue()
    assert "milan" in text and "done" in text and "2.500 s" in text


def test_progress_off_still_reports_failures():
    import io

    from abstat.cli.progress.lab import LabProgress

    stream = io.StringIO()
    progress = LabProgress({"milan": (1, 3)}, ["a"], stream, enabled=False)
    progress.state("milan", "running", 0)
    progress.message("milan", "boot 1 refused by --check")
    progress.failed("milan", "gone")
    assert stream.getvalue().splitlines() == [
        "abstat run: milan: boot 1 refused by --check",
        "abstat run: host milan failed: gone",
    ]


def test_hello_is_found_past_login_script_noise():
    import subprocess

    from abstat.lab.boxsession import BoxSession

    boot = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    text = "Welcome to milan\n{not json\n[1, 2]\n" + json.dumps({"hello": {"boot_id": boot}}) + "\n"

    def session(output: str) -> BoxSession:
        return BoxSession(
            subprocess.Popen(
                ["printf", "%s", output], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )

    box = session(text)
    assert box.hello(10).boot_id == boot
    box.close()
    box = session("motd only\n")
    assert box.hello(10) is None
    box.close()


def test_a_name_that_does_not_resolve_fails_at_once_not_after_the_first_contact_wait():
    import time
    from types import SimpleNamespace

    import pytest

    from abstat.lab.host import HostFailed, HostWorker
    from abstat.lab.ssh import SshError

    calls = []

    def connect(timeout):
        calls.append(timeout)
        raise SshError("ssh: Could not resolve hostname 127.0.0.1:1: Name or service not known")

    worker = SimpleNamespace(ssh=SimpleNamespace(connect=connect), _check_stop=lambda: None)
    started = time.monotonic()
    with pytest.raises(HostFailed, match="cannot reach the host: ssh: Could not resolve hostname"):
        HostWorker._reach(worker, 30.0, "cannot reach the host")
    assert calls == [10] and time.monotonic() - started < 5

    def refused(timeout):
        calls.append(timeout)
        raise SshError("ssh: connect to host 127.0.0.1 port 1: Connection refused")

    worker.ssh.connect = refused
    with pytest.raises(HostFailed, match="within 1 s"):
        HostWorker._reach(worker, 1.0, "cannot reach the host")
    assert len(calls) > 2  # a refused connection is retried until the time is up
