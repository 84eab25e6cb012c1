"""A test box's image, built from Debian packages and cached by their versions.

``apt-get`` resolves the packages (:data:`PACKAGES` and their dependencies, against an empty
package status, so nothing of this machine's installation leaks in), ``apt-get download`` fetches
them, ``dpkg-deb -x`` unpacks each into a root directory (no maintainer script runs: abstat writes
the few files they would, :mod:`abstat.lab.testbox.guestfiles`), ``mke2fs -d`` makes it an ext4 disk.
The kernel is the package's ``vmlinuz``; the initramfs holds BusyBox and the virtio modules.

The image's directory is named by a hash of every package's version (and :data:`IMAGE_FORMAT`):
a new version of any package is a new image; an image is never changed once built (boxes boot
copy-on-write overlays of it).  Builds take a lock, so two at once build one image.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass

from abstat.lab.testbox import guestfiles, resolved
from abstat.lab.testbox.paths import READY_MARK, TestboxError, images_dir, private_dir

IMAGE_FORMAT = "4"
PACKAGES = (
    "linux-image-cloud-amd64",
    "busybox-static",
    "python3-minimal",
    "libpython3.11-stdlib",
    "openssh-server",
    "kexec-tools",
    "bpftrace",
    "base-files",
    "bash",
    "dash",
    "procps",
    "grep",
    "sed",
    "mawk",
    "findutils",
    "util-linux",
    "hostname",
    "gcc",
    "libc6-dev",
    "make",
)  # a build on the box (seed 002: make -j 2 of a small C project)
REQUIRED_TOOLS = ("apt-get", "dpkg-deb", "mke2fs", "ssh-keygen", "qemu-system-x86_64", "qemu-img")
_INST = re.compile(r"^Inst (\S+) \(([^ )]+)")
_SAFE_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]*")
_SAFE_VERSION = re.compile(r"[A-Za-z0-9.+~:-]+")


@dataclass(frozen=True)
class Image:
    """A built image: its directory and the files a box boots from."""

    path: str

    @property
    def kernel(self) -> str:
        return os.path.join(self.path, "vmlinuz")

    @property
    def initrd(self) -> str:
        return os.path.join(self.path, "initrd.img")

    @property
    def disk(self) -> str:
        return os.path.join(self.path, "root.img")

    @property
    def client_key(self) -> str:
        return os.path.join(self.path, "id_ed25519")

    @property
    def host_key(self) -> str:
        return os.path.join(self.path, "ssh_host_ed25519_key.pub")


def tool(name: str) -> str | None:
    """The program's path: on ``$PATH``, else in /usr/sbin or /sbin (not on a user's ``$PATH`` everywhere)."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def missing_tools() -> list[str]:
    return [name for name in REQUIRED_TOOLS if tool(name) is None]


def _run(argv: list[str], what: str, cwd: str | None = None, timeout: float = 900) -> str:
    try:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**os.environ, "LC_ALL": "C"}
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise TestboxError(f"{what}: {err}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("W:")]
        raise TestboxError(f"{what} failed: {lines[-1] if lines else f'exit status {done.returncode}'}")
    return done.stdout


def resolve(packages: tuple[str, ...] = PACKAGES) -> list[tuple[str, str]]:
    """Every package the image holds, with its version: ``apt-get -s install`` from nothing (kept while apt's
    state is unchanged: :mod:`abstat.lab.testbox.resolved`)."""
    key = resolved.fingerprint(packages)
    kept = resolved.load(private_dir(images_dir()), key, _SAFE_PACKAGE, _SAFE_VERSION)
    if kept is not None and any(name == "linux-image-cloud-amd64" for name, _ in kept):
        return kept
    with tempfile.TemporaryDirectory(prefix="abstat-testbox-") as scratch:
        status = os.path.join(scratch, "status")
        open(status, "w").close()
        out = _run(
            [
                "apt-get",
                "install",
                "-s",
                "-qq",
                "-o",
                f"Dir::State::Status={status}",
                "-o",
                "APT::Install-Recommends=false",
                *packages,
            ],
            "resolving the image's Debian packages",
        )
    found = []
    for line in out.splitlines():
        match = _INST.match(line)
        if match and _SAFE_PACKAGE.fullmatch(match.group(1)) and _SAFE_VERSION.fullmatch(match.group(2)):
            found.append((match.group(1), match.group(2)))
    if not any(name == "linux-image-cloud-amd64" for name, _ in found):
        raise TestboxError("apt-get did not resolve linux-image-cloud-amd64 (is a Debian amd64 archive configured?)")
    resolved.store(images_dir(), key, sorted(found))
    return sorted(found)


def image_key(packages: list[tuple[str, str]]) -> str:
    with open(guestfiles.__file__, "rb") as source:  # what abstat writes into the image is part of it
        files = hashlib.sha256(source.read()).hexdigest()
    text = f"format={IMAGE_FORMAT}\nfiles={files}\n" + "".join(f"{name}={version}\n" for name, version in packages)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ensure_image(progress=None) -> Image:
    """The image for the packages' current versions, built first when it is not cached."""
    packages = resolve()
    root = private_dir(images_dir())
    image = Image(os.path.join(root, image_key(packages)))
    if os.path.exists(os.path.join(image.path, "complete")):
        return image
    with open(os.path.join(root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(image.path, "complete")):
            if progress:
                progress(f"building the test box image ({len(packages)} Debian packages) in {image.path}")
            _build(image, packages)
    return image


def _build(image: Image, packages: list[tuple[str, str]]) -> None:
    work = tempfile.mkdtemp(prefix=".build-", dir=os.path.dirname(image.path))
    try:
        debs = os.path.join(work, "debs")
        root = os.path.join(work, "root")
        os.makedirs(debs)
        os.makedirs(root)
        _run(
            ["apt-get", "download", "-qq", *[f"{name}={version}" for name, version in packages]],
            "downloading the image's Debian packages",
            cwd=debs,
        )
        for deb in sorted(os.listdir(debs)):
            _run(["dpkg-deb", "-x", os.path.join(debs, deb), root], f"unpacking {deb}")
        shutil.rmtree(debs)
        release = _kernel_release(root)
        _keys(work, root)
        _configure(root, release)
        _write_initrd(os.path.join(work, "initrd.img"), root, release)
        shutil.copyfile(os.path.join(work, "initrd.img"), os.path.join(root, "boot", f"initrd.img-{release}"))
        shutil.copyfile(os.path.join(root, "boot", f"vmlinuz-{release}"), os.path.join(work, "vmlinuz"))
        _compile_python(root)
        _make_disk(root, os.path.join(work, "root.img"))
        shutil.rmtree(root)
        with open(os.path.join(work, "packages.txt"), "w") as out:
            out.write("".join(f"{name}={version}\n" for name, version in packages))
        open(os.path.join(work, READY_MARK), "w").close()  # its boxes say when sshd listens (paths.announced)
        open(os.path.join(work, "complete"), "w").close()
        os.rename(work, image.path)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _kernel_release(root: str) -> str:
    kernels = sorted(
        name[len("vmlinuz-") :] for name in os.listdir(os.path.join(root, "boot")) if name.startswith("vmlinuz-")
    )
    if not kernels:
        raise TestboxError("the kernel package holds no /boot/vmlinuz-*")
    return kernels[-1]


def _keys(work: str, root: str) -> None:
    """A client key (abstat's, kept in the image's directory) and the box's host key."""
    _run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "abstat-testbox", "-f", os.path.join(work, "id_ed25519")],
        "making the test box's ssh key",
    )
    host_key = os.path.join(root, "etc", "ssh", "ssh_host_ed25519_key")
    os.makedirs(os.path.dirname(host_key), exist_ok=True)
    _run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "abstat-testbox-host", "-f", host_key],
        "making the test box's host key",
    )
    shutil.copyfile(host_key + ".pub", os.path.join(work, "ssh_host_ed25519_key.pub"))
    os.makedirs(os.path.join(root, "root", ".ssh"), mode=0o700, exist_ok=True)
    shutil.copyfile(os.path.join(work, "id_ed25519.pub"), os.path.join(root, "root", ".ssh", "authorized_keys"))


def _write(root: str, path: str, text: str, mode: int = 0o644) -> None:
    target = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.lexists(target):
        os.unlink(target)
    with open(target, "w") as out:
        out.write(text)
    os.chmod(target, mode)


def _link(root: str, path: str, target: str) -> None:
    where = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(where), exist_ok=True)
    if os.path.lexists(where):
        os.unlink(where)
    os.symlink(target, where)


def _configure(root: str, release: str) -> None:
    files = {
        "/etc/inittab": guestfiles.INITTAB,
        "/etc/ssh/sshd_config": guestfiles.SSHD_CONFIG,
        "/etc/passwd": guestfiles.PASSWD,
        "/etc/group": guestfiles.GROUP,
        "/etc/hosts": guestfiles.HOSTS,
        "/etc/profile": guestfiles.PROFILE,
    }
    for path, text in files.items():
        _write(root, path, text)
    _write(root, "/etc/shadow", guestfiles.SHADOW, 0o600)
    scripts = {
        "/etc/init.d/rcS": guestfiles.RC_START,
        "/etc/init.d/rcK": guestfiles.RC_STOP,
        "/usr/local/sbin/testbox-next-boot": guestfiles.NEXT_BOOT,
        "/usr/local/sbin/testbox-ready": guestfiles.READY,
        "/usr/local/sbin/testbox-sshd": guestfiles.SSHD_RUN.format(sshd_flags=_sshd_flags(root)),
    }
    for action in ("reboot", "poweroff", "halt"):
        scripts[f"/sbin/{action}"] = guestfiles.ACTION_WRAPPER.format(action=action)
    for path, text in scripts.items():
        _write(root, path, text, 0o755)
    _link(root, "/sbin/init", "/bin/busybox")
    if not os.path.lexists(os.path.join(root, "bin", "sh")):
        _link(root, "/bin/sh", "dash")
    usr_bin = os.path.join(root, "usr", "bin")
    if os.path.lexists(os.path.join(usr_bin, "gcc")) and not os.path.lexists(os.path.join(usr_bin, "cc")):
        _link(root, "/usr/bin/cc", "gcc")  # what update-alternatives would make (make's default $(CC))
    _link(root, "/boot/vmlinuz", f"vmlinuz-{release}")
    _link(root, "/boot/initrd.img", f"initrd.img-{release}")
    for directory in ("proc", "sys", "dev", "run", "tmp", "root"):
        os.makedirs(os.path.join(root, directory), exist_ok=True)
    os.chmod(os.path.join(root, "tmp"), 0o1777)


def _sshd_flags(root: str) -> str:
    """``-r`` for an sshd that re-executes itself per connection (OpenSSH < 9.8; 9.8 split off sshd-session)."""
    return "" if os.path.lexists(os.path.join(root, "usr", "lib", "openssh", "sshd-session")) else "-r "


def _compile_python(root: str) -> None:
    """The standard library's bytecode, compiled by the image's own Python in the unpacked tree (as Debian's
    postinst would; ``dpkg-deb -x`` runs none): without it every new box compiles what its first Python
    programs import (the lease, the runner: about 10 s of a loaded TCG guest).  Only where ``chroot`` works
    (root); elsewhere the boxes compile it on first use, as before."""
    chroot = tool("chroot")
    libs = sorted(name for name in os.listdir(os.path.join(root, "usr", "lib")) if re.fullmatch(r"python3\.\d+", name))
    if chroot is None or os.geteuid() != 0 or not libs:
        return
    for name in libs:
        with contextlib.suppress(TestboxError):
            _run(
                [
                    chroot,
                    root,
                    f"/usr/bin/{name}",
                    "-I",
                    "-S",
                    "-m",
                    "compileall",
                    "-q",
                    "-x",
                    "/test/",
                    f"/usr/lib/{name}",
                ],
                "compiling the image's Python standard library",
            )


def _find_modules(root: str, release: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for directory, _, files in os.walk(os.path.join(root, "lib", "modules", release, "kernel")):
        for name in files:
            if name.endswith(".ko"):
                found[name[:-3].replace("-", "_")] = os.path.join(directory, name)
    return found


_DEPENDS = re.compile(rb"(?:^|\0)depends=([A-Za-z0-9_,-]*)\0")


def _load_order(modules: dict[str, str], names: tuple[str, ...]) -> list[str]:
    """``names`` and what they depend on (each module's ``depends=`` field), dependencies first."""
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in order or name in path or name not in modules:
            return
        with open(modules[name], "rb") as module:
            match = _DEPENDS.search(module.read())
        for dependency in match.group(1).decode().split(",") if match and match.group(1) else []:
            visit(dependency.replace("-", "_"), (*path, name))
        order.append(name)

    for name in names:
        visit(name, ())
    return order


def _write_initrd(path: str, root: str, release: str) -> None:
    """An uncompressed ``newc`` cpio archive: /init, /bin/busybox, /modules (and /dev/console)."""
    from abstat.lab.testbox.cpio import CpioWriter

    modules = _find_modules(root, release)
    wanted = _load_order(modules, guestfiles.INITRD_MODULES)
    with open(path, "wb") as out:
        archive = CpioWriter(out)
        for directory in ("bin", "dev", "modules", "proc", "sys", "newroot"):
            archive.directory(directory)
        archive.device("dev/console", stat.S_IFCHR | 0o600, 5, 1)
        archive.file("init", guestfiles.INITRD_INIT.encode(), 0o755)
        with open(os.path.join(root, "bin", "busybox"), "rb") as busybox:
            archive.file("bin/busybox", busybox.read(), 0o755)
        for name in wanted:
            with open(modules[name], "rb") as module:
                archive.file(f"modules/{name}.ko", module.read(), 0o644)
        archive.file("modules/order", "".join(f"{name}\n" for name in wanted).encode(), 0o644)
        archive.close()


def _make_disk(root: str, path: str) -> None:
    used = 0
    for directory, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                used += os.lstat(os.path.join(directory, name)).st_size
    size_mb = used // 2**20 + 1024  # a gigabyte free for what users copy there
    _run(
        [
            tool("mke2fs") or "mke2fs",
            "-q",
            "-F",
            "-t",
            "ext4",
            "-L",
            "abstat-root",
            "-E",
            "root_owner=0:0",
            "-d",
            root,
            path,
            f"{size_mb}M",
        ],
        "making the test box's disk",
    )
