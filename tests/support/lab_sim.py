"""Simulated test boxes for the lab tests: one real sshd per "machine".

Each box is an ``sshd -D`` on its own loopback address and free port,
inside its own UTS, mount and PID namespace (``unshare``), with its own
hostname and a file bind-mounted over ``/proc/sys/kernel/random/boot_id``.
The box's directory is bind-mounted at one common path (``Lab.box``), so a
command run on any box sees its own ``current`` and ``next`` files there.

A "reboot" (``Lab.reboot VARIANT``, as ``grub-reboot VARIANT && reboot``)
writes ``next`` and asks the supervisor thread to reboot the box: it kills
the box's whole PID namespace (sshd, sessions and benchmarks die), writes a
new boot id, moves ``next`` to ``current`` and starts sshd again a moment
later.  A box marked ``stay_down`` does not come back.

Nothing is mocked: abstat talks to these boxes with the real ``ssh``.
"""

from __future__ import annotations

import os
import pwd
import random
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator

from support import reaper

# the boxes' login directory is this user's (sshd takes it from the password database)
HOME_ABSTAT = os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".abstat")
SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)


def missing_requirements() -> str | None:
    """Why the simulated boxes cannot run here, or None."""
    for tool in ("ssh", "ssh-keygen", "unshare", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if SSHD is None:
        return "sshd is not installed (apt-get install openssh-server)"
    if os.geteuid() != 0:
        return "simulated boxes need root (unshare --mount, bind mounts, sshd)"
    probe = subprocess.run(
        ["unshare", "--uts", "--mount", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, timeout=20
    )
    if probe.returncode != 0:
        return f"unshare --uts --mount --pid does not work here: {probe.stderr.decode(errors='replace').strip()}"
    return None


def _free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def _listening(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=0.2):
            return True
    except OSError:
        return False


class Box:
    """One simulated machine."""

    def __init__(self, lab: Lab, name: str, address: str, reboot_delay: float) -> None:
        self.lab = lab
        self.name = name
        self.address = address
        self.port = _free_port(address)
        self.dir = os.path.join(lab.root, "hosts", name)
        os.makedirs(self.dir)
        self.reboot_delay = reboot_delay
        self.stay_down = False
        self.down_after: int | None = None  # stays down once it has booted this many times
        self.boots = 0
        self.process: subprocess.Popen | None = None
        with open(os.path.join(self.dir, "sshd_config"), "w") as handle:
            handle.write(
                f"ListenAddress {address}:{self.port}\nHostKey {lab.host_key}\nPidFile none\nUsePAM no\n"
                "PermitRootLogin prohibit-password\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\n"
                f"AuthorizedKeysFile {lab.user_key}.pub\nStrictModes no\nLogLevel ERROR\nMaxSessions 50\n"
                "MaxStartups 100\n"
                + f"SetEnv ABSTAT_LEASE={lab.box}/lease\n"  # each box its own lease file (they share /tmp)
                + (f"ForceCommand {lab.greeter}\n" if lab.greeting else "")
            )
        self._write("current", "")

    def _write(self, name: str, text: str) -> None:
        with open(os.path.join(self.dir, name), "w") as handle:
            handle.write(text)

    def read(self, name: str) -> str | None:
        try:
            with open(os.path.join(self.dir, name)) as handle:
                return handle.read().strip()
        except OSError:
            return None

    @property
    def boot_id(self) -> str | None:
        return self.read("boot_id")

    def start(self) -> None:
        """Boot: a new boot id, ``next`` becomes ``current``, sshd starts."""
        self._write("boot_id", str(uuid.uuid4()) + "\n")
        following = os.path.join(self.dir, "next")
        if os.path.exists(following):
            os.replace(following, os.path.join(self.dir, "current"))
        script = (
            f"hostname {self.name} && mount --bind {self.dir}/boot_id /proc/sys/kernel/random/boot_id"
            f" && mount --bind {self.dir} {self.lab.box}"
            # each box its own ~/.abstat (artifacts, caches), kept across its reboots as a real box's
            # home is: they share this machine's home, and two tests that made the same commits in the
            # same second overwrote each other's artifacts there (and left them behind)
            f" && mkdir -p {self.dir}/dot-abstat {shlex.quote(HOME_ABSTAT)}"
            f" && mount --bind {self.dir}/dot-abstat {shlex.quote(HOME_ABSTAT)}"
            f" && exec {SSHD} -D -e -f {self.dir}/sshd_config"
        )
        log = open(os.path.join(self.dir, "sshd.log"), "ab")
        try:
            self.process = subprocess.Popen(
                ["unshare", "--uts", "--mount", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", script],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        finally:
            log.close()
        self.boots += 1
        deadline = time.monotonic() + 10
        while not _listening(self.address, self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sshd of box {self.name} did not start: {self.read('sshd.log')}")
            time.sleep(0.02)

    def kill(self) -> None:
        """Power off: the whole PID namespace dies with its init."""
        process, self.process = self.process, None
        if process is None:
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=10)

    def power_on(self) -> None:
        self.stay_down = False
        self.down_after = None
        if self.process is None:
            self.start()


class Lab:
    """Boxes, keys, an ssh_config with their aliases, and the reboot supervisor."""

    def __init__(self, names: list[str], reboot_delay: float = 0.8, greeting: str = "") -> None:
        """``greeting``: what every session prints first on standard output, as a ``.bashrc`` that
        echoes a welcome (through sshd's ForceCommand)."""
        reaper.ensure()  # the boxes (sessions of their own) end with this process, also when it is killed
        self.root = tempfile.mkdtemp(prefix="abstat-lab-test-")
        reaper.remove_on_death(self.root)
        self.greeting = greeting
        self.greeter = os.path.join(self.root, "greeter")
        try:
            self._prepare(names, reboot_delay)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self._stop = threading.Event()
        self._supervisor = threading.Thread(target=self._supervise, daemon=True)

    def _prepare(self, names: list[str], reboot_delay: float) -> None:
        self.box = os.path.join(self.root, "box")  # each box's own directory is mounted here
        os.makedirs(self.box)
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
        self.host_key = os.path.join(self.root, "host_key")
        self.user_key = os.path.join(self.root, "user_key")
        for path in (self.host_key, self.user_key):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path], check=True, capture_output=True, timeout=30
            )
        with open(self.greeter, "w") as handle:
            handle.write(
                f"#!/bin/sh\nprintf '%s\\n' {shlex.quote(self.greeting)}\nexec sh -c \"$SSH_ORIGINAL_COMMAND\"\n"
            )
        os.chmod(self.greeter, 0o755)
        self.reboot = os.path.join(self.root, "reboot")  # usage: $reboot VARIANT
        with open(self.reboot, "w") as handle:
            handle.write(
                '#!/bin/sh\n# grub-reboot "$1" && reboot, simulated\n'
                f'printf "%s\\n" "$1" > {self.box}/next && touch {self.box}/reboot-request\n'
            )
        os.chmod(self.reboot, 0o755)
        self._lock = threading.Lock()
        base = random.Random().randrange(2, 250)
        self.boxes: dict[str, Box] = {}
        for index, name in enumerate(names):
            address = f"127.0.{base}.{index + 2}"
            self.boxes[name] = Box(self, name, address, reboot_delay)
        self.ssh_config = os.path.join(self.root, "ssh_config")
        with open(self.ssh_config, "w") as handle:
            for box in self.boxes.values():
                handle.write(
                    f"Host {box.name}\n  HostName {box.address}\n  Port {box.port}\n  User root\n"
                    f"  IdentityFile {self.user_key}\n  IdentitiesOnly yes\n  BatchMode yes\n"
                    f"  UserKnownHostsFile {self.root}/known_hosts\n  StrictHostKeyChecking accept-new\n"
                    "  LogLevel ERROR\n"
                )

    def start(self) -> None:
        for box in self.boxes.values():
            box.start()
        self._supervisor.start()

    def env(self) -> dict[str, str]:
        """Environment for an abstat process that talks to these boxes."""
        env = dict(os.environ)
        env["ABSTAT_SSH_COMMAND"] = f"ssh -F {self.ssh_config}"
        return env

    def _supervise(self) -> None:
        while not self._stop.is_set():
            for box in self.boxes.values():
                request = os.path.join(box.dir, "reboot-request")
                if os.path.exists(request) and box.process is not None:
                    os.unlink(request)
                    threading.Thread(target=self._reboot, args=(box,), daemon=True).start()
            self._stop.wait(0.03)

    def _reboot(self, box: Box) -> None:
        box.kill()
        time.sleep(box.reboot_delay)
        with self._lock:
            if box.down_after is not None and box.boots >= box.down_after:
                box.stay_down = True
            if not box.stay_down and not self._stop.is_set():
                box.start()

    def close(self) -> None:
        self._stop.set()
        if self._supervisor.is_alive():
            self._supervisor.join(timeout=5)
        with self._lock:
            for box in self.boxes.values():
                box.kill()
        shutil.rmtree(self.root, ignore_errors=True)


def one_box(reboot_delay: float = 0.3) -> Iterator[Lab]:
    """A started lab of one box, ``alpha``, closed afterwards: the body of the ``lab`` fixture of the files
    that need no more (``yield from lab_sim.one_box()``)."""
    boxes = Lab(["alpha"], reboot_delay=reboot_delay)
    try:
        boxes.start()
        yield boxes
    finally:
        boxes.close()


def abstat(lab: Lab, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m abstat ARGS`` with the lab's environment (its ssh configuration), as the lab's tests run it."""
    from support.cli import run_abstat

    return run_abstat(*args, env=lab.env(), timeout=timeout)
