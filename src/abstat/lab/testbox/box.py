"""Test boxes: start (``up``), stop and remove (``down``), list.

A box is a directory (:func:`abstat.lab.testbox.paths.box_dir`, mode 0700) holding its settings
(``box.json``), its disk (a qcow2 overlay of the image's), its ssh key, ``ssh_config`` and
``known_hosts``, and while it is up the supervisor's pid.  ``up`` of a box that exists and is not
running (stopped, lost) starts it again with its disk as it was.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from abstat.lab.testbox.paths import (
    ANNOUNCE_PATIENCE_S,
    TestboxError,
    announced,
    box_dir,
    boxes_dir,
    private_dir,
    read_record,
    valid_name,
)
from abstat.lab.testbox.qemu import ACCEL, CPU_PATTERN, MEMORY_PATTERN, Settings, free_port

SUPERVISOR_MODULE = "abstat.lab.testbox.supervisor"


@dataclass
class BoxInfo:
    name: str
    state: str  # running, booting, stopped, lost, failed
    port: int
    cpu: str
    smp: int
    memory: str
    accel: str
    boots: int
    cmdline: str


def _quote(path: str) -> str:
    """A path in ssh_config: quoted, ``%`` doubled (ssh expands tokens there)."""
    if '"' in path or "\n" in path:
        raise TestboxError(f"cannot use a path with a double quote or a newline: {path!r}")
    return '"' + path.replace("%", "%%") + '"'


def write_ssh_config(directory: str, settings: Settings) -> None:
    alias = f"abstat-testbox-{settings.name}"
    text = (
        f"Host {settings.name}\n  HostName 127.0.0.1\n  Port {settings.port}\n  User root\n"
        f"  IdentityFile {_quote(os.path.join(directory, 'id_ed25519'))}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {_quote(os.path.join(directory, 'known_hosts'))}\n"
        f"  GlobalKnownHostsFile /dev/null\n  HostKeyAlias {alias}\n  StrictHostKeyChecking yes\n"
        f"  CheckHostIP no\n  LogLevel ERROR\n"
    )
    path = os.path.join(directory, "ssh_config")
    with open(path + ".tmp", "w") as out:
        out.write(text)
    os.replace(path + ".tmp", path)


def _pid_alive(directory: str, name: str, marker: str) -> int | None:
    """The pid in ``directory/name`` when that process runs and its command line holds ``marker``."""
    try:
        with open(os.path.join(directory, name)) as source:
            pid = int(source.read().strip() or 0)
        with open(f"/proc/{pid}/cmdline", "rb") as source:
            command = source.read()
    except (OSError, ValueError):
        return None
    return pid if pid > 0 and marker.encode() + b"\0" in command else None


def supervisor_pid(directory: str) -> int | None:
    return _pid_alive(directory, "supervisor.pid", f"{SUPERVISOR_MODULE}\0{directory}")


def _read_state(directory: str, name: str | None = None) -> dict:
    """The box's state record ({} when there is none yet); one that cannot be read as a record names the file
    (:class:`DamagedBox`) when the box's ``name`` is given, else is taken as none."""
    try:
        state = read_record(os.path.join(directory, "state.json"))
    except OSError:
        return {}
    except ValueError as err:
        if name is None:
            return {}
        raise DamagedBox(f"damaged test box {name!r}: {err}") from None
    return state if isinstance(state, dict) else {}


def _boots(name: str, directory: str, state: dict) -> int:
    """The state's count of boots (0 when not written yet); a count that is not one names the file."""
    boots = state.get("boots", 0) or 0
    if not isinstance(boots, int) or isinstance(boots, bool) or boots < 0:
        path = os.path.join(directory, "state.json")
        raise DamagedBox(f"damaged test box {name!r}: {path}: 'boots' is not a count ({boots!r:.40})")
    return boots


class DamagedBox(TestboxError):
    """A box whose record (``box.json``, ``state.json``) cannot be read as one: the text names the file."""


def _settings(name: str, directory: str) -> Settings:
    try:
        return Settings.load(directory)
    except OSError:
        raise TestboxError(f"no test box {name!r} (abstat testbox up {name})") from None
    except ValueError as err:
        raise DamagedBox(f"damaged test box {name!r}: {err}") from None


def info(name: str) -> BoxInfo:
    directory = box_dir(name)
    settings = _settings(name, directory)
    state = _read_state(directory, name)
    running = supervisor_pid(directory) is not None
    status = (
        str(state.get("state", "stopped"))
        if running
        else (str(state.get("state")) if state.get("state") in ("lost", "failed") else "stopped")
    )
    return BoxInfo(
        name,
        status,
        settings.port,
        settings.cpu,
        settings.smp,
        settings.memory,
        settings.accel,
        _boots(name, directory, state),
        str(state.get("cmdline", "")) if running else "",
    )


def list_boxes() -> list[BoxInfo]:
    """Every box; one whose record is damaged is listed with state ``damaged`` and, in place of its
    command line, the error naming the file (the others are listed all the same)."""
    try:
        names = sorted(os.listdir(boxes_dir()))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        if valid_name(name) and os.path.exists(os.path.join(boxes_dir(), name, "box.json")):
            try:
                found.append(info(name))
            except DamagedBox as err:
                found.append(BoxInfo(name, "damaged", 0, "", 0, "", "", 0, str(err)))
            except TestboxError:
                continue
    return found


def _create(directory: str, settings: Settings, image) -> None:
    private_dir(directory)
    try:
        subprocess.run(
            [
                "qemu-img",
                "create",
                "-q",
                "-f",
                "qcow2",
                "-b",
                image.disk,
                "-F",
                "raw",
                os.path.join(directory, "disk.qcow2"),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    except subprocess.CalledProcessError as err:
        shutil.rmtree(directory, ignore_errors=True)
        raise TestboxError(f"qemu-img cannot make the box's disk: {err.stderr.strip()}") from None
    key = os.path.join(directory, "id_ed25519")
    shutil.copyfile(image.client_key, key)
    os.chmod(key, 0o600)
    with open(image.host_key) as source:
        host_key = source.read().split()
    with open(os.path.join(directory, "known_hosts"), "w") as out:
        out.write(f"abstat-testbox-{settings.name} {host_key[0]} {host_key[1]}\n")
    settings.save(directory)
    write_ssh_config(directory, settings)


def up(
    name: str,
    *,
    kernel: str | None = None,
    initrd: str | None = None,
    cpu: str = "max",
    smp: int = 1,
    memory: str = "1024M",
    accel: str = "tcg",
    append: str = "",
    timeout: float = 300,
    progress=None,
) -> BoxInfo:
    """Start the box (made first when it does not exist) and wait until ssh reaches it."""
    from abstat.lab.testbox.image import ensure_image, missing_tools

    directory = box_dir(name)
    if supervisor_pid(directory) is not None:
        raise TestboxError(f"test box {name!r} is already up")
    if not os.path.exists(os.path.join(directory, "box.json")):
        _check_options(cpu, smp, memory, kernel, initrd, accel)
    missing = missing_tools()
    if missing:
        raise TestboxError(
            f"test boxes need {', '.join(missing)} (apt-get install qemu-system-x86 qemu-utils "
            "openssh-client e2fsprogs)"
        )
    if not os.path.exists(os.path.join(directory, "box.json")):
        image = ensure_image(progress)
        settings = Settings(
            name,
            image.path,
            os.path.abspath(kernel) if kernel else image.kernel,
            os.path.abspath(initrd) if initrd else ("" if kernel else image.initrd),
            image.kernel,
            image.initrd,
            cpu,
            smp,
            memory,
            accel,
            append,
            free_port(),
        )
        _create(directory, settings, image)
    elif _settings(name, directory) and (kernel or initrd):  # (a damaged record named here, not in the log)
        raise TestboxError(
            f"test box {name!r} exists: {{kernel}} and {{initrd}} are for a new box (down it first)",
            fields=["kernel", "initrd"],
        )
    _spawn(directory)
    wait_for_ssh(name, timeout)
    return info(name)


def _check_options(cpu: str, smp: int, memory: str, kernel: str | None, initrd: str | None, accel: str) -> None:
    if accel not in ACCEL:
        raise TestboxError(f"invalid {{accel}} {accel!r}: one of {', '.join(ACCEL)}", fields=["accel"])
    if not CPU_PATTERN.fullmatch(cpu):
        raise TestboxError(
            f"invalid {{cpu}} {cpu!r}: a QEMU CPU model such as max, qemu64, EPYC, Skylake-Server", fields=["cpu"]
        )
    if not 1 <= smp <= 64:
        raise TestboxError(f"invalid {{smp}} {smp}: 1 to 64", fields=["smp"])
    if not MEMORY_PATTERN.fullmatch(memory):
        raise TestboxError(
            f"invalid {{memory}} {memory!r}: a size in MiB, or with M or G (1024M, 2G)", fields=["memory"]
        )
    for flag, path in (("kernel", kernel), ("initrd", initrd)):
        if path is not None and not os.path.isfile(path):
            raise TestboxError(f"{{{flag}}} {path}: no such file", fields=[flag])
    if initrd and not kernel:
        raise TestboxError("{initrd} goes with {kernel}", fields=["initrd", "kernel"])


def _spawn(directory: str) -> None:
    open(os.path.join(directory, "control.log"), "w").close()  # no ready line of a boot before this one
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p
        for p in [
            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
            env.get("PYTHONPATH", ""),
        ]
        if p
    )
    with open(os.path.join(directory, "supervisor.log"), "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", SUPERVISOR_MODULE, directory],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env=env,
            cwd="/",
        )
    with open(os.path.join(directory, "supervisor.pid.tmp"), "w") as out:
        out.write(f"{process.pid}\n")
    os.replace(os.path.join(directory, "supervisor.pid.tmp"), os.path.join(directory, "supervisor.pid"))


def ssh_argv(name: str, command: str, connect_timeout: int = 5) -> list[str]:
    config = os.path.join(box_dir(name), "ssh_config")
    return ["ssh", "-F", config, "-o", "BatchMode=yes", "-o", f"ConnectTimeout={connect_timeout}", name, command]


def _gone_for_a_second(directory: str) -> bool:
    """No supervisor a second later either (one just started may read as an empty /proc/PID/cmdline)."""
    time.sleep(1)
    return supervisor_pid(directory) is None


def wait_for_ssh(name: str, timeout: float) -> None:
    directory = box_dir(name)
    deadline = time.monotonic() + timeout
    patience = time.monotonic() + ANNOUNCE_PATIENCE_S
    while time.monotonic() < deadline:
        if supervisor_pid(directory) is None and _gone_for_a_second(directory):
            state = _read_state(directory).get("state", "stopped")
            raise TestboxError(
                f"test box {name!r} stopped while booting ({state}); see {directory}/console.log and supervisor.log"
            )
        up = announced(name, None)
        if up is False and time.monotonic() < patience:
            time.sleep(0.1)  # not booted yet: an ssh attempt would hang until its connect timeout
            continue
        try:  # once its sshd listens, the first handshake of a loaded TCG guest may take more than 5 s
            done = subprocess.run(ssh_argv(name, "true", 30 if up else 5), capture_output=True, timeout=45)
            if done.returncode == 0:
                return
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.5)
    raise TestboxError(f"test box {name!r} did not answer over ssh within {timeout:g} s; see {directory}/console.log")


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (the supervisor runs in a session of its own: no one of
    ours waits for it)."""
    try:
        with open(f"/proc/{pid}/stat") as source:
            return source.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def down(name: str) -> None:
    """Stop the box (its QEMU and supervisor) and remove its directory."""
    directory = box_dir(name)
    if os.path.islink(directory):  # (rmtree refuses it too, but said "write error" and named no path)
        raise TestboxError(f"{directory} is a symbolic link, not a test box's directory: not removed")
    if not os.path.isdir(directory):
        raise TestboxError(f"no test box {name!r}")
    pid = supervisor_pid(directory)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
            while _running(pid):
                time.sleep(0.05)
    for _ in range(200):  # QEMU dies with its supervisor (PR_SET_PDEATHSIG); make sure of it
        qemu = _pid_alive(directory, "qemu.pid", f"abstat-testbox-{name}")
        if qemu is None:
            break
        os.kill(qemu, signal.SIGKILL)
        time.sleep(0.05)
    try:
        shutil.rmtree(directory)
    except OSError as err:
        raise TestboxError(f"cannot remove {err.filename or directory}: {err.strerror or err}") from None
