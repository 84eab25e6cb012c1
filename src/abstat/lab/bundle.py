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
import io
import os
import shlex
import zipfile

MIN_PYTHON = (3, 8)

BOOTSTRAP = f"""\
import os, sys, tempfile
if sys.version_info < {MIN_PYTHON!r}:
    sys.stderr.write("abstat: this box has Python %s; the runner needs {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer\\n"
                     % sys.version.split()[0])
    sys.exit(3)
source = sys.stdin.buffer
size = int(source.readline())
data = source.read(size)
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


@functools.lru_cache(maxsize=1)
def runner_zip() -> bytes:
    """The runner package as zip bytes (built once per process)."""
    import abstat.box.doctor
    import abstat.box.machine
    import abstat.box.runner

    runner_dir = os.path.dirname(abstat.box.runner.__file__)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("abstat/__init__.py", PACKAGE_INIT)
        archive.write(os.path.join(os.path.dirname(runner_dir), "__init__.py"), "abstat/box/__init__.py")
        for name in sorted(os.listdir(runner_dir)):
            if name.endswith(".py"):
                archive.write(os.path.join(runner_dir, name), f"abstat/box/runner/{name}")
        archive.write(abstat.box.machine.__file__, "abstat/box/machine.py")
        archive.write(os.path.join(os.path.dirname(runner_dir), "isolate.py"), "abstat/box/isolate.py")
        doctor_dir = os.path.dirname(abstat.box.doctor.__file__)
        for name in sorted(os.listdir(doctor_dir)):
            if name.endswith(".py") and name not in _CONTROLLER_ONLY:
                archive.write(os.path.join(doctor_dir, name), f"abstat/box/doctor/{name}")
    return buffer.getvalue()


def payload() -> bytes:
    """What the bootstrap reads from standard input before the protocol starts."""
    data = runner_zip()
    return f"{len(data)}\n".encode() + data


def remote_command(python: str = "python3") -> str:
    """The command line the remote shell runs (ssh hands it to the login shell)."""
    return f"{python} -c {shlex.quote(BOOTSTRAP)}"
