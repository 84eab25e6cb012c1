"""Does this machine's KVM boot a guest kernel?  Asked by booting one, never assumed.

``/dev/kvm`` may exist while a nested guest hangs right after the kernel's decompressor (a
development VM's KVM does).  The probe boots the image's kernel with a one-line initramfs
that writes a line to the serial console and powers off, within a time limit; the answer is kept
per image, host kernel and QEMU version (``kvm-probe.json`` in the image's directory).
"""

from __future__ import annotations

import json
import os
import platform
import stat
import subprocess
import tempfile

from abstat.lab.testbox.cpio import CpioWriter

MARKER = "abstat-kvm-probe-booted"
PROBE_INIT = f"#!/bin/busybox sh\necho {MARKER} >/dev/console\n/bin/busybox poweroff -f\n"


def _qemu_version() -> str:
    try:
        return subprocess.run(
            ["qemu-system-x86_64", "--version"], capture_output=True, text=True, timeout=30
        ).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return ""


def kvm_boots(timeout: float = 60.0) -> tuple[bool, str]:
    """(True, "") when KVM booted the image's kernel to user space, else (False, why not)."""
    from abstat.lab.testbox.image import ensure_image

    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "no usable /dev/kvm"
    image = ensure_image()
    key = f"{platform.release()}|{_qemu_version()}"
    cache = os.path.join(image.path, "kvm-probe.json")
    try:
        with open(cache) as source:
            known = json.load(source)
        if known.get("key") == key:
            return bool(known["boots"]), str(known["reason"])
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    boots, reason = _boot(image, timeout)
    try:
        with open(cache + f".{os.getpid()}", "w") as out:
            json.dump({"key": key, "boots": boots, "reason": reason}, out)
        os.replace(cache + f".{os.getpid()}", cache)
    except OSError:
        pass
    return boots, reason


def _boot(image, timeout: float) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="abstat-kvm-probe-") as scratch:
        initrd = os.path.join(scratch, "initrd")
        with open(initrd, "wb") as out:
            archive = CpioWriter(out)
            for directory in ("bin", "dev"):
                archive.directory(directory)
            archive.device("dev/console", stat.S_IFCHR | 0o600, 5, 1)
            archive.file("init", PROBE_INIT.encode(), 0o755)
            archive.file("bin/busybox", _busybox(image), 0o755)
            archive.close()
        console = os.path.join(scratch, "console")
        command = [
            "qemu-system-x86_64",
            "-nodefaults",
            "-no-user-config",
            "-accel",
            "kvm",
            "-cpu",
            "host",
            "-m",
            "512M",
            "-display",
            "none",
            "-monitor",
            "none",
            "-no-reboot",
            "-kernel",
            image.kernel,
            "-initrd",
            initrd,
            "-append",
            "console=ttyS0 panic=-1",
            "-serial",
            f"file:{console}",
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, f"a guest kernel under KVM did not reach user space within {timeout:g} s"
        with open(console, errors="replace") as source:
            if MARKER in source.read():
                return True, ""
        lines = done.stderr.strip().splitlines()
        return False, f"a guest kernel under KVM did not boot ({lines[-1] if lines else f'status {done.returncode}'})"


def _busybox(image) -> bytes:
    """BusyBox from the image's initramfs (the first file named bin/busybox in it)."""
    with open(image.initrd, "rb") as source:
        data = source.read()
    offset = 0
    while data[offset : offset + 6] == b"070701":
        fields = [int(data[offset + 6 + 8 * i : offset + 14 + 8 * i], 16) for i in range(13)]
        size, name_size = fields[6], fields[11]
        name_end = offset + 110 + name_size
        body = name_end + (-name_end % 4)
        name = data[offset + 110 : name_end - 1].decode(errors="replace")
        if name == "bin/busybox":
            return data[body : body + size]
        offset = body + size + (-(body + size) % 4)
    raise OSError("no bin/busybox in the image's initramfs")
