"""What the controller ships to a test box: the runner as a zip, and the
``python3 -c`` bootstrap that loads it from standard input.

The zip holds ``abstat/runner/*.py``, ``abstat/machine.py`` and the checks of
``abstat/doctor/`` (standard library only) under a generated
``abstat/__init__.py``; nothing else of abstat
(numpy, scipy...) goes to the box.  The bootstrap reads the zip's length
and bytes from standard input, imports the runner from it, deletes the file
and serves the rest of standard input (:mod:`abstat.runner.remote`).
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
    from abstat.runner import remote
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
    import abstat.doctor
    import abstat.machine
    import abstat.runner

    runner_dir = os.path.dirname(abstat.runner.__file__)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("abstat/__init__.py", PACKAGE_INIT)
        for name in sorted(os.listdir(runner_dir)):
            if name.endswith(".py"):
                archive.write(os.path.join(runner_dir, name), f"abstat/runner/{name}")
        archive.write(abstat.machine.__file__, "abstat/machine.py")
        doctor_dir = os.path.dirname(abstat.doctor.__file__)
        for name in sorted(os.listdir(doctor_dir)):
            if name.endswith(".py") and name not in _CONTROLLER_ONLY:
                archive.write(os.path.join(doctor_dir, name), f"abstat/doctor/{name}")
    return buffer.getvalue()


def payload() -> bytes:
    """What the bootstrap reads from standard input before the protocol starts."""
    data = runner_zip()
    return f"{len(data)}\n".encode() + data


def remote_command(python: str = "python3") -> str:
    """The command line the remote shell runs (ssh hands it to the login shell)."""
    return f"{python} -c {shlex.quote(BOOTSTRAP)}"
