"""Where test boxes live, and how ``ssh`` reaches one (the lab's only hook into this package).

The cache root is ``$ABSTAT_TESTBOX_DIR``, else ``$XDG_CACHE_HOME/abstat/testbox``, else
``~/.cache/abstat/testbox``: images under ``images/`` (one directory per set of package versions),
boxes under ``boxes/NAME`` (each private, mode 0700: its disk, its ssh configuration and keys, its
console log).  ``$ABSTAT_TESTBOX_BOXES`` puts the boxes elsewhere (the test suite does, sharing the
images' cache).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat

from abstat.errors import AbstatError

MAX_RECORD_BYTES = 1 << 20  # a box's records are a few hundred bytes


def read_record(path: str) -> object:
    """A box record's JSON, read as untrusted: a regular file (no link, FIFO or device followed), at most
    ``MAX_RECORD_BYTES``; OSError when it cannot be opened, ValueError naming it otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if err.errno != errno.ELOOP:
            raise
        raise ValueError(f"{path}: a symbolic link, not followed") from None
    with open(fd, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            raise ValueError(f"{path}: not a regular file")
        raw = source.read(MAX_RECORD_BYTES + 1)
    if len(raw) > MAX_RECORD_BYTES:
        raise ValueError(f"{path}: larger than {MAX_RECORD_BYTES} bytes")
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        raise ValueError(f"{path}: not a box record ({err})") from None


NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
READY_MARK = "announces-ready"  # in an image's directory: its boxes write READY lines on their control port
ANNOUNCE_PATIENCE_S = 120.0  # then ssh is tried anyway (a kernel of the user's without a second serial port)
READY_TAIL = 4096  # bytes of the control port's log read for its last line
_READY_LINE = re.compile(r"ready=([0-9a-f-]{36}) [0-9.]+")
ROOT_ENV = "ABSTAT_TESTBOX_DIR"
BOXES_ENV = "ABSTAT_TESTBOX_BOXES"


class TestboxError(AbstatError):
    """A test box cannot be built, started, reached or stopped: the text says which and why."""


def cache_root() -> str:
    root = os.environ.get(ROOT_ENV, "").strip()
    if root:
        return os.path.abspath(root)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), "abstat", "testbox")


def images_dir() -> str:
    return os.path.join(cache_root(), "images")


def boxes_dir() -> str:
    boxes = os.environ.get(BOXES_ENV, "").strip()
    return os.path.abspath(boxes) if boxes else os.path.join(cache_root(), "boxes")


def valid_name(name: str) -> bool:
    return NAME_PATTERN.fullmatch(name) is not None


def box_dir(name: str) -> str:
    if not valid_name(name):
        raise TestboxError(f"invalid test box name {name!r}: a letter, then up to 31 letters, digits, '-' or '_'")
    return os.path.join(boxes_dir(), name)


def private_dir(path: str) -> str:
    """Create ``path`` (and its parents) and make sure it is a directory of ours, mode 0700."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path) or info.st_uid != os.getuid():
        raise TestboxError(f"{path} is not a directory of this user")
    os.chmod(path, 0o700)
    return path


def ssh_options(destination: str) -> list[str]:
    """``-F CONFIG`` when ``destination`` names a test box that is up (its ssh configuration
    exists in its private directory), else nothing: the destination goes to ssh as given."""
    if not valid_name(destination):
        return []
    config = os.path.join(boxes_dir(), destination, "ssh_config")
    try:
        info = os.lstat(config)
    except OSError:
        return []
    if not os.path.isfile(config) or os.path.islink(config) or info.st_uid != os.getuid():
        return []
    return ["-F", config]


def clock_of(destination: str) -> str | None:
    """``"instructions"`` when ``destination`` is a test box that is up and whose clock counts instructions
    (``testbox up --accel icount``: its cycles are a path's instructions, not time), else None."""
    if not ssh_options(destination):
        return None
    try:
        record = read_record(os.path.join(boxes_dir(), destination, "box.json"))
    except (OSError, ValueError):
        return None
    return "instructions" if isinstance(record, dict) and record.get("accel") == "icount" else None


def gone(destination: str) -> str | None:
    """Why ``destination``, a test box, will not answer again by itself (its QEMU was killed, or the box
    powered off, and its supervisor has ended), else None: a box between two boots, a real host.
    The lab asks while it waits for a box to come back, and says so at once instead of after
    ``--boot-timeout``."""
    if not ssh_options(destination):
        return None
    directory = os.path.join(boxes_dir(), destination)
    if os.path.lexists(os.path.join(directory, "supervisor.pid")):  # removed by the supervisor as it ends
        return None
    try:
        state = read_record(os.path.join(directory, "state.json"))
    except (OSError, ValueError):
        return None
    what = {"lost": "its QEMU was killed", "stopped": "it powered off", "failed": "its QEMU could not run"}
    named = state.get("state") if isinstance(state, dict) else None
    reason = what.get(named) if isinstance(named, str) else None
    return f"the test box {destination} is down ({reason}; abstat testbox up {destination})" if reason else None


def announced_boot(destination: str) -> str | None:
    """The boot id in the last line a local test box wrote on its control port when its sshd began to
    listen (guestfiles.READY); None for any other destination, a box of an older image, or no such line yet."""
    boots = _ready_boots(destination)
    return None if boots is None else boots[-1] if boots else ""


def _ready_boots(destination: str) -> list[str] | None:
    """The boot ids of the ready lines on a local test box's control port since its QEMU started (kexec boots
    append theirs; a new QEMU starts the log again), oldest first; None as :func:`announced_boot`."""
    if not ssh_options(destination):
        return None
    directory = os.path.join(boxes_dir(), destination)
    try:
        image = read_record(os.path.join(directory, "box.json")).get("image")  # type: ignore[attr-defined]
        if not isinstance(image, str) or not os.path.exists(os.path.join(image, READY_MARK)):
            return None
        with open(os.path.join(directory, "control.log"), "rb") as control:
            control.seek(max(0, os.fstat(control.fileno()).st_size - READY_TAIL))
            text = control.read(READY_TAIL).decode("ascii", errors="replace")
    except (OSError, ValueError, AttributeError):
        return None
    return _READY_LINE.findall(text)


def fell_back(destination: str) -> str | None:
    """The command line of the entry a local test box was asked to boot, when that boot ended in a reset before
    its sshd listened (a panic: the kernel did not come up) and the box is in the default entry it fell back to,
    as GRUB's fallback (the supervisor's ``state.json``), in the first boot of that QEMU (no kexec since); else
    None: any other host, or a box that booted what it was asked.  Booting that entry again gives the same."""
    boots = _ready_boots(destination)
    if boots is None or len(boots) > 1:
        return None
    try:
        state = read_record(os.path.join(boxes_dir(), destination, "state.json"))
    except (OSError, ValueError):
        return None
    failed = state.get("fell_back") if isinstance(state, dict) else None
    return failed if isinstance(failed, str) and failed else None


def announced(destination: str, unlike: str | None) -> bool | None:
    """For a local test box whose image says when its sshd listens (guestfiles.READY, a line on its control
    port): whether its last such line names a boot other than ``unlike`` (its guest is up: ssh will answer);
    None for any other destination, or a box of an older image (then only ssh can tell).  The lab asks this
    before each ssh attempt while a box boots: an attempt into a booting box hangs until its connect timeout."""
    boot = announced_boot(destination)
    return None if boot is None else bool(boot) and boot != unlike
