"""Issue 36, item 6: box leases.  The lease file is the user's own (mode 0600, not 0644 in /tmp): another
user of the box cannot open it to hold the lock, a file another user planted is refused, not used; and
an answer that is a line without end is refused at once, not after the 60 s lease timeout."""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
import time
import types

import pytest

from abstat.lab.host import HostFailed
from abstat.lab.lease import LEASE_TIMEOUT_S, SCRIPT, BoxLease

NOBODY = 65534
root_only = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
    reason="another user (and a Python it may run) is needed",
)


def _lease(path: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, "experiment 'x'", *(args or ("no-wait",))],
        env=dict(os.environ, ABSTAT_LEASE=path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _as_nobody(code: str, cwd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/usr/bin/python3", "-I", "-c", code],
        user=NOBODY,
        group=NOBODY,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def public_tmp():
    """A directory another user may reach (pytest's own are private to root)."""
    import shutil
    import tempfile
    from pathlib import Path

    directory = tempfile.mkdtemp(prefix="abstat-test-lease-", dir="/tmp")
    os.chmod(directory, 0o755)
    yield Path(directory)
    shutil.rmtree(directory, ignore_errors=True)


@root_only
def test_another_user_cannot_open_the_lease_file_to_hold_it(public_tmp):
    reachable = _as_nobody(f"import os; print(os.listdir({str(public_tmp)!r}))", "/")
    assert reachable.returncode == 0, reachable.stderr
    path = str(public_tmp / "box.lease")
    holder = _lease(path)
    try:
        assert '"leased"' in holder.stdout.readline()
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        tried = _as_nobody(f"import os; os.open({path!r}, os.O_RDONLY); print('opened')", "/")
        assert tried.returncode != 0 and "Permission denied" in tried.stderr
    finally:
        holder.stdin.close()
        holder.wait(10)


@root_only
def test_a_lease_file_planted_by_another_user_is_refused_not_used(public_tmp):
    shared = public_tmp / "shared"  # as /tmp: world-writable and sticky
    shared.mkdir()
    shared.chmod(0o1777)
    path = str(shared / "box.lease")
    planted = _as_nobody(f"import os; os.close(os.open({path!r}, os.O_CREAT | os.O_RDWR, 0o666))", "/")
    assert planted.returncode == 0, planted.stderr
    holder = _lease(path)
    out, _ = holder.communicate(timeout=60)
    assert holder.returncode == 2 and "not a lease file of this user's" in out, out


def test_a_lease_in_a_directory_others_may_change_is_refused(tmp_path):
    shared = tmp_path / "open"
    shared.mkdir()
    shared.chmod(0o777)
    holder = _lease(str(shared / "box.lease"))
    out, _ = holder.communicate(timeout=60)
    assert holder.returncode == 2 and "may be changed by others" in out, out


@pytest.mark.parametrize(
    "answer",
    [
        "while true; do printf x; sleep 0.01; done",
        'printf \'{"leased": "/run/abstat.lease\'; sleep 100',
        "yes | tr -d '\\n'",
    ],
)
def test_an_answer_that_does_not_end_is_refused_at_once(answer):
    class Ssh:
        def open(self, command: str) -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                ["sh", "-c", answer],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )

        def close_session(self, session) -> None:
            os.killpg(session.process.pid, 9)
            session.process.wait()

    worker = types.SimpleNamespace(
        ssh=Ssh(),
        experiment="e",
        _check_stop=lambda: None,
        state=lambda text: None,
        emit=lambda *a, **k: None,
    )
    lease = BoxLease()
    started = time.monotonic()
    with pytest.raises(HostFailed, match="cannot take the lease of the box: a line"):
        lease.hold(worker)
    assert time.monotonic() - started < LEASE_TIMEOUT_S / 4  # refused, not timed out (60 s)
    lease.release(worker)


def test_held_names_no_wait_only_when_it_was_given():
    class Ssh:
        def open(self, command: str) -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                ["sh", "-c", 'echo \'{"held": "someone"}\'; sleep 100'],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )

        def close_session(self, session) -> None:
            os.killpg(session.process.pid, 9)
            session.process.wait()

    worker = types.SimpleNamespace(
        ssh=Ssh(),
        experiment="e",
        _check_stop=lambda: None,
        state=lambda text: None,
        emit=lambda *a, **k: None,
    )
    for wait, said in ((False, "the box is leased to someone (--no-wait)"), (True, "the box is leased to someone")):
        lease = BoxLease(wait=wait)
        with pytest.raises(HostFailed) as caught:
            lease.hold(worker)
        assert str(caught.value) == said
        lease.release(worker)


def test_a_lease_started_ahead_is_waited_for_once_and_kept_until_its_session_ends(tmp_path):
    """``start`` (once the box is back, before ``--check``) runs the lease program without waiting for it;
    ``hold`` then waits for its answer instead of starting a second one, and keeps it while its session
    lives; a session that ended (the box rebooted) is started again.  The program answers only once a file
    exists, so ``start`` cannot have read an answer: the lease is not held until ``hold``."""
    go = tmp_path / "go"
    opened: list[subprocess.Popen[bytes]] = []

    class Ssh:
        def open(self, command: str) -> subprocess.Popen[bytes]:
            opened.append(
                subprocess.Popen(
                    ["sh", "-c", f'while [ ! -e {go} ]; do sleep 0.02; done; echo \'{{"leased": "x"}}\'; cat'],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            )
            return opened[-1]

        def close_session(self, session) -> None:
            with contextlib.suppress(ProcessLookupError):  # one the test ended already
                os.killpg(session.process.pid, 9)
            session.process.wait()

    worker = types.SimpleNamespace(
        ssh=Ssh(), experiment="e", _check_stop=lambda: None, state=lambda text: None, emit=lambda *a, **k: None
    )
    lease = BoxLease()
    try:
        lease.start(worker)
        assert len(opened) == 1 and opened[0].poll() is None and not lease._leased  # started, not waited for
        lease.start(worker)  # a second start while the first still runs: the same session
        go.touch()
        lease.hold(worker)
        assert len(opened) == 1 and lease._leased
        lease.hold(worker)  # held: nothing started again
        assert len(opened) == 1
        os.killpg(opened[0].pid, 9)  # the box rebooted: the session ended
        opened[0].wait()
        lease.hold(worker)
        assert len(opened) == 2 and lease._leased
    finally:
        lease.release(worker)
    assert all(process.poll() is not None for process in opened)


@pytest.mark.parametrize(
    "holder", ["experiment 'x' of a@b", 'q"uote\\back\tnl\n\x00\x7f', "é \u2603 \U0001f600 \udcff"]
)
def test_the_lease_program_answers_json_without_importing_it(tmp_path, holder):
    """The lease program writes its answers without ``json`` (its import is most of a TCG guest's start of the
    program): what it holds the lease under, read back from the lease file and its answer, is what ``json``
    decodes its answer to, for quotes, controls and characters beyond the BMP; and it did not import ``json``."""
    path = str(tmp_path / "lease")
    code = SCRIPT.replace("print('{", "import sys as _s; assert 'json' not in _s.modules; print('{", 1)
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", code, "unused", "no-wait"],
        env=dict(os.environ, ABSTAT_LEASE=path, PYTHONIOENCODING="utf-8:surrogateescape"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdin is not None
    answer = json.loads(process.stdout.readline())
    process.stdin.close()
    process.wait(10)
    assert answer == {"leased": path}, process.stderr.read() if process.stderr else ""
    ns: dict = {}
    exec(SCRIPT.split("uid = os.geteuid()")[0], ns)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ns["say"]("held", holder)
    assert json.loads(out.getvalue()) == {"held": holder}
