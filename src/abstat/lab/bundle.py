"""What the controller ships to a test box: the runner as a zip, and the
``python3 -c`` bootstrap that loads it from standard input.

The zip holds ``abstat/box/runner/*.py``, ``abstat/box/machine.py`` and the checks of
``abstat/box/doctor/`` (standard library only) under a generated
``abstat/__init__.py``; nothing else of abstat
(numpy, scipy...) goes to the box.  The bootstrap reads the zip's length
and bytes from standard input, imports the runner from it, deletes the file
and serves the rest of standard input (:mod:`abstat.box.runner.remote`).
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import shlex
import zipfile

MIN_PYTHON = (3, 8)

# On the box, the runner is kept between sessions in a cache keyed by the zip's SHA-256 (the
# command line's last argument): ``~/.cache/abstat/runner/DIGEST``, where Python keeps the modules'
# compiled bytecode, so a session after the first neither writes the zip nor compiles the runner
# (about 3 s of a TCG guest's CPU, more under load).  The cache is used only when it, and every
# directory above it, is a directory (no link) of this user's or root's that no one else may change
# (a sticky directory above, such as /tmp, is fine): a cache another user of the box could write is
# never executed.  The bytes are checked against the digest before they are unpacked; a directory is
# added whole (its files synced to disk, then renamed into place) or not at all, and it is used only
# while every file in it still holds the bytes the zip holds: a box whose power went (QEMU killed)
# may keep a renamed directory whose files are empty, and such an entry is removed and unpacked again.
# A runner that still fails to import from the cache is loaded from the zip.  Otherwise the runner
# loads from a temporary zip, as before the cache.  Entries not used for 30 days go when a new one is added.
BOOTSTRAP = f"""\
import os, sys
if sys.version_info < {MIN_PYTHON!r}:
    sys.stderr.write("abstat: this box has Python %s; the runner needs {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer\\n"
                     % sys.version.split()[0])
    sys.exit(3)
source = sys.stdin.buffer
size = int(source.readline())
data = source.read(size)
digest = sys.argv[-1]
def unchangeable(path, leaf):
    uid = os.geteuid()
    while True:
        info = os.lstat(path)
        if info.st_mode & 0o170000 != 0o040000 or info.st_uid not in (0, uid):
            return False
        if info.st_mode & (0o077 if leaf else 0o022) and (leaf or not info.st_mode & 0o1000):
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path, leaf = parent, False
def unpack(base):
    import io, shutil, tempfile, time, zipfile
    new = tempfile.mkdtemp(prefix=".new-", dir=base)
    try:
        zipfile.ZipFile(io.BytesIO(data)).extractall(new)
        for top, _, names in os.walk(new, topdown=False):
            for name in names + ["."]:
                fd = os.open(os.path.join(top, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        os.rename(new, os.path.join(base, digest))
        fd = os.open(base, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        shutil.rmtree(new, ignore_errors=True)
        return
    for name in os.listdir(base):
        other = os.path.join(base, name)
        if name != digest and os.lstat(other).st_mtime < time.time() - 30 * 86400:
            shutil.rmtree(other, ignore_errors=True)
def members():
    # the zip's files (name, bytes) read with struct and zlib: zipfile's import (pathlib, shutil, bz2, lzma...)
    # cost a quarter of a cached session's start.  The zip is the controller's own (abstat.lab.bundle._add):
    # one disk, no ZIP64, stored or deflated
    import struct, zlib
    end = data.rindex(b"PK\x05\x06")
    count, _, at = struct.unpack("<HII", data[end + 10:end + 20])
    for _ in range(count):
        method, size, full, length, extra, comment, local = struct.unpack("<10xH8xIIHHH8xI", data[at:at + 46])
        name = data[at + 46:at + 46 + length].decode()
        at += 46 + length + extra + comment
        start = local + 30 + sum(struct.unpack("<HH", data[local + 26:local + 30]))
        raw = data[start:start + size]
        body = zlib.decompress(raw, -15) if method == 8 else raw if method == 0 else None
        if body is None or len(body) != full:
            raise ValueError(name)
        yield name, body
def intact(path):
    try:
        for name, body in members():
            with open(os.path.join(path, name), "rb") as stored:
                if stored.read(len(body) + 1) != body:
                    return False
    except Exception:  # unreadable, or not the zip this reader expects: unpacked again
        return False
    return True
def sha256(data):
    try:  # the built-in module: hashlib loads OpenSSL's library first
        from _sha256 import sha256 as make
    except ImportError:
        try:
            from _sha2 import sha256 as make
        except ImportError:
            from hashlib import sha256 as make
    return make(data).hexdigest()
def cached():
    if len(digest) != 64 or sha256(data) != digest:
        return None
    try:
        base = os.path.expanduser("~")
        for part in (".cache", "abstat", "runner"):
            base = os.path.join(base, part)
            if not os.path.isdir(base):
                os.mkdir(base, 0o700)
        base = os.path.realpath(base)
        if not unchangeable(base, True):
            return None
        path = os.path.join(base, digest)
        if os.path.lexists(path) and unchangeable(path, True) and not intact(path):
            import shutil
            shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            unpack(base)
        if not unchangeable(path, True) or not intact(path):
            return None
        os.utime(path)
        return path
    except (OSError, ValueError, ImportError):
        return None
path = cached()
remote = None
if path is not None:
    sys.path.insert(0, path)
    try:
        from abstat.box.runner import remote
        remote.main
    except Exception:
        remote = None
        del sys.path[0]
        for name in [name for name in sys.modules if name == "abstat" or name.startswith("abstat.")]:
            del sys.modules[name]
if remote is None:
    import tempfile
    fd, path = tempfile.mkstemp(prefix="abstat-runner-", suffix=".zip")
    try:
        os.write(fd, data)
        os.close(fd)
        sys.path.insert(0, path)
        from abstat.box.runner import remote
    finally:
        os.unlink(path)
status = remote.main()
sys.stdout.flush()
os._exit(status)  # not sys.exit: a thread may still be blocked reading standard input
"""


# The zip's abstat/__init__.py.  The runner is written for the controller's
# Python (3.10+); on an older box, this makes the little it uses of newer
# Pythons available before any runner module is imported.
PACKAGE_INIT = '''"""abstat's runner, shipped by abstat run --host (standard library only)."""
import sys

if "inspect" not in sys.modules:
    # dataclasses imports inspect (with ast, dis, tokenize, linecache: a sixth of the runner's import in a TCG
    # guest) only to write the docstring of a class that has none, and the runner's classes have theirs: a
    # stand-in imports it when one of its names is first asked for (not importlib's LazyLoader, which an
    # ``import`` of the module already sets off)
    import types

    def _inspect(name):
        if sys.modules.get("inspect") is _stand_in:
            del sys.modules["inspect"]
        return getattr(__import__("inspect"), name)

    _stand_in = types.ModuleType("inspect", "the standard library's inspect, imported when first used")
    _stand_in.__getattr__ = _inspect
    sys.modules["inspect"] = _stand_in

if sys.version_info < (3, 9):
    import collections.abc
    import os

    def _waitstatus_to_exitcode(status):
        return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)

    if not hasattr(os, "waitstatus_to_exitcode"):
        os.waitstatus_to_exitcode = _waitstatus_to_exitcode
    for _name in ("Callable", "Iterable", "Iterator", "Mapping", "Sequence", "MutableMapping"):
        _cls = getattr(collections.abc, _name)
        if not hasattr(_cls, "__class_getitem__"):  # Callable[[X], Y] at run time
            _cls.__class_getitem__ = classmethod(lambda cls, item: cls)
'''


# Modules of shipped packages that run only on the controller (tuning needs abstat.errors).
_CONTROLLER_ONLY = frozenset({"tune.py"})


def _add(archive: zipfile.ZipFile, name: str, text: bytes) -> None:
    """One file, with a fixed date and mode: the same sources make the same zip, and so the same cache key."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, text)


def _read(path: str) -> bytes:
    with open(path, "rb") as source:
        return source.read()


@functools.lru_cache(maxsize=1)
def runner_zip() -> bytes:
    """The runner package as zip bytes (built once per process)."""
    import abstat.box.doctor
    import abstat.box.machine
    import abstat.box.runner

    runner_dir = os.path.dirname(abstat.box.runner.__file__)
    box_dir = os.path.dirname(runner_dir)
    doctor_dir = os.path.dirname(abstat.box.doctor.__file__)
    files = [("abstat/box/__init__.py", os.path.join(box_dir, "__init__.py"))]
    files += [
        (f"abstat/box/runner/{name}", os.path.join(runner_dir, name))
        for name in sorted(os.listdir(runner_dir))
        if name.endswith(".py")
    ]
    files += [
        ("abstat/box/machine.py", abstat.box.machine.__file__),
        ("abstat/box/isolate.py", os.path.join(box_dir, "isolate.py")),
        ("abstat/box/partition.py", os.path.join(box_dir, "partition.py")),
    ]
    files += [
        (f"abstat/box/doctor/{name}", os.path.join(doctor_dir, name))
        for name in sorted(os.listdir(doctor_dir))
        if name.endswith(".py") and name not in _CONTROLLER_ONLY
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        _add(archive, "abstat/__init__.py", PACKAGE_INIT.encode())
        for name, path in files:
            _add(archive, name, _read(path))
    return buffer.getvalue()


@functools.lru_cache(maxsize=1)
def digest() -> str:
    """The zip's SHA-256: the key of the runner's cache on the box."""
    return hashlib.sha256(runner_zip()).hexdigest()


def payload() -> bytes:
    """What the bootstrap reads from standard input before the protocol starts."""
    data = runner_zip()
    return f"{len(data)}\n".encode() + data


def remote_command(python: str = "python3") -> str:
    """The command line the remote shell runs (ssh hands it to the login shell): ``-I -S``, because the
    runner is standard library only: no site (site-packages, .pth files, sitecustomize: about a tenth of
    Python's start), no PYTHON* variable, no current directory on the path."""
    return f"{python} -I -S -c {shlex.quote(BOOTSTRAP)} {digest()}"
