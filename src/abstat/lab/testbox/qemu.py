"""QEMU's command line for a test box, its boot entries, and what the box asked at shutdown.

A box's settings (``box.json`` in its directory) name the image, the kernel it boots by default
(the image's Debian kernel, or the user's ``--kernel``), the CPU model, the number of CPUs, the
memory, the accelerator and the forwarded port.  The network is QEMU's user-mode network with one
forward, ``127.0.0.1:PORT`` to the box's port 22; ``restrict=on`` keeps the box from reaching
anything else.  QEMU runs with ``-no-reboot``: a reboot in the box ends QEMU, and the supervisor
(:mod:`abstat.lab.testbox.supervisor`) starts it again with the entry the box chose.
"""

from __future__ import annotations

import json
import os
import re
import socket
from dataclasses import asdict, dataclass, field

from abstat.lab.testbox.paths import read_record

# cryptomgr.notests: no self-test of every crypto algorithm at boot (0.8-1.3 s of each boot under TCG)
BASE_CMDLINE = "console=ttyS0 quiet panic=1 cryptomgr.notests"
# tcg: one host thread runs every guest CPU in turn (QEMU's thread=single).  QEMU's default for x86 is a thread
# per guest CPU (mttcg), which on a loaded host spends more CPU time on the same guest work: about a sixth more for
# the guest test file (tests/lab/testbox/test_testbox.py, --smp 2) run side by side with it; boots gain nothing.
# icount: TCG on one host thread whose clock counts instructions (QEMU's -icount, 2^3 ns each), so the guest's TSC
# cycles are its instructions', not the host's time: a shared host's other work no longer slows the guest's cycles
# by 1.5 to 1.9 times at random (docs/lab.md, "Cycles that count instructions"); sleep=on: an idle guest's clock
# follows the host's, so timeouts (ssh's login grace, TCP's) keep their real length (with sleep=off an idle guest
# jumps to its next timer, and sshd dropped the host's connections during the key exchange)
ACCEL = {"tcg": "tcg,thread=single", "mttcg": "tcg,thread=multi", "icount": "tcg,thread=single", "kvm": "kvm"}
ICOUNT = "shift=3,sleep=on"
CPU_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.,=+-]{0,199}")
MEMORY_PATTERN = re.compile(r"[1-9][0-9]{0,6}[MG]?")
_CMDLINE_TEXT = re.compile(r"[\x20-\x7e]{0,1024}")


_KINDS = {"str": (str, "a string"), "int": (int, "a whole number"), "dict": (dict, "a JSON object")}


@dataclass
class Settings:
    name: str
    image: str
    kernel: str
    initrd: str
    debian_kernel: str
    debian_initrd: str
    cpu: str = "max"
    smp: int = 1
    memory: str = "1024M"
    accel: str = "tcg"
    append: str = ""
    port: int = 0
    extra: dict = field(default_factory=dict)

    def save(self, directory: str) -> None:
        path = os.path.join(directory, "box.json")
        with open(path + ".tmp", "w") as out:
            json.dump(asdict(self), out, indent=1)
        os.replace(path + ".tmp", path)

    @classmethod
    def load(cls, directory: str) -> Settings:
        """The box's settings; OSError when ``box.json`` cannot be opened, ValueError naming the file and
        the field when it is not a record of this class (attack17 #5: a ``cpu`` of ``{...}`` or a ``port``
        of ``"22"`` passed through to the listing's formatting)."""
        path = os.path.join(directory, "box.json")
        data = read_record(path)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: not a box record (a JSON object)")
        for key, spec in cls.__dataclass_fields__.items():
            kind, what = _KINDS[str(spec.type)]
            if key in data and (not isinstance(data[key], kind) or isinstance(data[key], bool)):
                raise ValueError(f"{path}: {key!r} is not {what}")
            if key not in data and key in ("name", "image", "kernel", "initrd", "debian_kernel", "debian_initrd"):
                raise ValueError(f"{path}: no {key!r}")
        if data.get("accel", "tcg") not in ACCEL:
            raise ValueError(f"{path}: 'accel' is not one of {', '.join(ACCEL)}")
        return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})


@dataclass(frozen=True)
class Entry:
    """One boot: which kernel (``default`` or ``debian``) and what is added to the command line."""

    kernel: str = "default"
    append: str = ""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cmdline(settings: Settings, entry: Entry) -> str:
    words = [BASE_CMDLINE, f"testbox.name={settings.name}", settings.append, entry.append]
    return " ".join(word for word in words if word)


def argv(settings: Settings, directory: str, entry: Entry) -> list[str]:
    kernel, initrd = (
        (settings.debian_kernel, settings.debian_initrd)
        if entry.kernel == "debian"
        else (settings.kernel, settings.initrd)
    )
    command = [
        "qemu-system-x86_64",
        "-name",
        f"abstat-testbox-{settings.name}",
        "-nodefaults",
        "-no-user-config",
        "-accel",
        ACCEL[settings.accel],
        "-cpu",
        settings.cpu,
        "-smp",
        str(settings.smp),
        "-m",
        settings.memory,
        "-display",
        "none",
        "-monitor",
        "none",
        "-no-reboot",
        "-kernel",
        kernel,
        "-append",
        cmdline(settings, entry),
        "-drive",
        f"file={_option(os.path.join(directory, 'disk.qcow2'))},if=virtio,format=qcow2",
        "-netdev",
        f"user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:{settings.port}-:22",
        "-device",
        "virtio-net-pci,netdev=net0",
        "-device",
        "virtio-rng-pci",
        "-chardev",
        f"file,id=console,path={_option(os.path.join(directory, 'console.log'))}",
        "-serial",
        "chardev:console",
        "-chardev",
        f"file,id=control,path={_option(os.path.join(directory, 'control.log'))}",
        "-device",
        "isa-serial,chardev=control",
        "-pidfile",
        os.path.join(directory, "qemu.pid"),
    ]
    if settings.accel == "icount":
        command[command.index("-cpu") : command.index("-cpu")] = ["-icount", ICOUNT]
    if initrd:
        command[command.index("-append") : command.index("-append")] = ["-initrd", initrd]
    return command


def _option(value: str) -> str:
    """A value inside a QEMU option list: commas doubled."""
    return value.replace(",", ",,")


def parse_control(text: str, kernels: tuple[str, ...] = ("default", "debian")) -> tuple[str, Entry | None]:
    """What the box asked at its last shutdown (``RC_STOP``'s lines): the action
    (reboot, poweroff, halt; "reset" when it said nothing: a panic, ``reboot -f``, a triple fault)
    and the entry it chose for the next boot (None: the default).  Anything else is ignored: a
    kernel name that is not one of ``kernels``, a command line with control characters."""
    action, kernel, append, chosen = "reset", "default", "", False
    for line in text.splitlines()[-50:]:
        key, _, value = line.strip().partition("=")
        if key == "action" and value in ("reboot", "poweroff", "halt"):
            action, kernel, append, chosen = value, "default", "", False
        elif key == "kernel" and value in kernels:
            kernel, chosen = value, True
        elif key == "append" and _CMDLINE_TEXT.fullmatch(value):
            append, chosen = value.strip(), True
    return action, (Entry(kernel, append) if chosen else None)
