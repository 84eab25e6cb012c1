"""The process that keeps one test box's QEMU running across the box's reboots.

``python -m abstat.lab.testbox.supervisor DIR`` (started by ``abstat testbox up``, in a session of its
own) runs QEMU, and when QEMU ends:

- the box rebooted (``reboot``, a panic, ``reboot -f``): QEMU starts again, with the entry the box
  chose in ``/boot/next-boot`` (once), else the default one, as GRUB does after ``grub-reboot``; when
  a chosen entry ended in a reset (a panic, with ``panic=1``) the box falls back to the default entry, and
  ``state.json`` says so (``fell_back``: the chosen entry's command line) for that QEMU's boot;
- the box powered off: the supervisor ends, the box is ``stopped`` (``abstat testbox up`` starts it);
- QEMU was killed (by anyone but the supervisor): the box is ``lost``, as a machine that lost its
  power; the supervisor ends, the disk stays, ``abstat testbox up`` starts it again;
- SIGTERM (``abstat testbox down``): QEMU is ended, then the supervisor.

QEMU dies with the supervisor (``PR_SET_PDEATHSIG``).  ``state.json`` says what the box is doing
(state, boots made, the running command line); ``supervisor.log`` what went wrong.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

from abstat.lab.testbox.qemu import Entry, Settings, argv, cmdline, free_port, parse_control

_stopping = False


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def write_state(directory: str, **state) -> None:
    path = os.path.join(directory, "state.json")
    with open(path + ".tmp", "w") as out:
        json.dump({**state, "supervisor": os.getpid(), "time": time.time()}, out)
    os.replace(path + ".tmp", path)


def _log(directory: str, text: str) -> None:
    with open(os.path.join(directory, "supervisor.log"), "a") as log:
        log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {text}\n")


def _start(settings: Settings, directory: str, entry: Entry) -> subprocess.Popen:
    """QEMU, with a new port when the box's is taken (then ``ssh_config`` follows)."""
    from abstat.lab.testbox.box import write_ssh_config

    for _ in range(5):
        control = os.path.join(directory, "control.log")
        open(control, "w").close()
        with open(os.path.join(directory, "qemu.log"), "wb") as log:
            qemu = subprocess.Popen(
                argv(settings, directory, entry),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 -- no threads here
            )
        try:
            qemu.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return qemu
        with open(os.path.join(directory, "qemu.log"), errors="replace") as log:
            error = log.read()[-2000:]
        if "hostfwd" not in error and "forwarding" not in error:
            raise RuntimeError(f"qemu exited with status {qemu.returncode}: {error.strip()}")
        settings.port = free_port()
        settings.save(directory)
        write_ssh_config(directory, settings)
    raise RuntimeError("qemu could not forward a port of 127.0.0.1 to the box")


def _fell_back(settings: Settings, entry: Entry, control: str) -> str | None:
    """The command line of a chosen entry (not the default) whose boot ended in a reset before its sshd
    listened (no ``ready=`` line on the control port: a panic, a triple fault), after which the default
    entry boots, as GRUB's fallback; else None."""
    action, chosen = parse_control(control)
    failed = action == "reset" and chosen is None and entry != Entry() and "ready=" not in control
    return cmdline(settings, entry) if failed else None


def supervise(directory: str) -> int:
    settings = Settings.load(directory)
    entry = Entry()
    boots = 0
    fell_back: str | None = None  # the chosen entry whose boot ended in a reset, while the default runs after it

    def stop(signum, frame):
        global _stopping  # noqa: PLW0603 -- the signal handler's flag, read by the boot loop
        _stopping = True
        qemu_process = current[0]
        if qemu_process is not None and qemu_process.poll() is None:
            qemu_process.terminate()

    current: list[subprocess.Popen | None] = [None]
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    state = "stopped"
    try:
        while not _stopping:
            now = {"cmdline": cmdline(settings, entry), "kernel": entry.kernel, "fell_back": fell_back}
            write_state(directory, state="booting", boots=boots, **now)
            current[0] = qemu = _start(settings, directory, entry)
            boots += 1
            write_state(directory, state="running", boots=boots, qemu=qemu.pid, **now)
            code = qemu.wait()
            if _stopping:
                break
            if code < 0:
                state = "lost"
                _log(directory, f"qemu was killed by signal {-code}: the box is lost")
                break
            with open(os.path.join(directory, "control.log"), "rb") as control:  # its end: kexec boots append
                control.seek(max(0, os.fstat(control.fileno()).st_size - 65536))
                text = control.read(65536).decode(errors="replace")
            action, chosen = parse_control(text)
            if action in ("poweroff", "halt"):
                _log(directory, f"the box ran {action}")
                break
            fell_back = _fell_back(settings, entry, text)
            entry = chosen or Entry()
            _log(directory, f"the box rebooted ({action}); next: kernel {entry.kernel}, append {entry.append!r}")
    except (OSError, RuntimeError) as err:
        state = "failed"
        _log(directory, f"cannot run the box: {err}")
    finally:
        qemu_process = current[0]
        if qemu_process is not None and qemu_process.poll() is None:
            qemu_process.terminate()
            try:
                qemu_process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                qemu_process.kill()
                qemu_process.wait()
        write_state(directory, state=state, boots=boots)
        for name in ("qemu.pid", "supervisor.pid"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, name))
    return 0


if __name__ == "__main__":
    sys.exit(supervise(sys.argv[1]))
