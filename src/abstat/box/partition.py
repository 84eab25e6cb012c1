"""``run --isolate`` on cgroup v2: the measured CPUs as a cpuset partition (standard library only).

Where the cgroup v1 cpuset hierarchy is not mounted (the default of current distributions), the
cpuset controller of the cgroup v2 hierarchy does the same work with less: a child of the top cgroup,
``abstat.isolated-PID``, takes the measured CPUs and their SMT siblings, and its
``cpuset.cpus.partition`` is set to ``root`` (Linux >= 5.13; the kernel then takes those CPUs away
from every other cgroup, their tasks included, without abstat moving any).  The measured command is
born there: abstat's process moves in for the spawn and the wait, with its thread pinned to the
measured CPUs (the siblings stay idle), and back to its own cgroup after.  Moving a process between
cgroups waits for the kernel (milliseconds on a loaded machine), before the timestamps.

Nothing here trusts what it reads: paths are made from the mount point and abstat's own name,
written without following links.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable

PARTITION_STATE = "root"  # a partition of its own, load-balanced within (``isolated`` would not balance)


def read_value(path: str) -> str:
    with open(path, encoding="ascii") as handle:
        return handle.read().strip()


def write_value(path: str, value: str) -> None:
    """Write an existing kernel file, never through a link, never creating one."""
    descriptor = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        os.write(descriptor, value.encode("ascii") + b"\n")
    finally:
        os.close(descriptor)


def parse_cpus(text: str) -> set[int]:
    """The kernel's CPU list syntax (``0-3,8``)."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def format_cpus(cpus: Iterable[int]) -> str:
    """The kernel's CPU list syntax for ``cpus``: ``0-3,8``."""
    parts: list[str] = []
    for cpu in sorted(set(cpus)):
        low, _, high = parts[-1].partition("-") if parts else ("", "", "")
        if parts and cpu == int(high or low) + 1:
            parts[-1] = f"{low}-{cpu}"
        else:
            parts.append(str(cpu))
    return ",".join(parts)


def v2_root() -> str | None:
    """The mount point of the whole cgroup v2 hierarchy when its cpuset controller is free to use (not
    bound to a v1 hierarchy); None otherwise.  A mount of a sub-tree (a container's view) does not count:
    a partition is made under the top cgroup."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if right.split()[:1] != ["cgroup2"] or len(fields) < 5 or fields[3] != "/":
            continue
        mount = fields[4].replace("\\040", " ")
        try:
            if "cpuset" in read_value(os.path.join(mount, "cgroup.controllers")).split():
                return mount
        except OSError:
            continue
    return None


def online(root: str) -> set[int]:
    """The CPUs of the top cgroup."""
    return parse_cpus(read_value(os.path.join(root, "cpuset.cpus.effective")))


def cpuset_enabled(root: str) -> bool:
    """Whether the top cgroup hands the cpuset controller to its children."""
    return "cpuset" in read_value(os.path.join(root, "cgroup.subtree_control")).split()


def enable_cpuset(root: str) -> None:
    write_value(os.path.join(root, "cgroup.subtree_control"), "+cpuset")


def make(root: str, directory: str, cpus: set[int]) -> str | None:
    """Make ``directory`` a partition of ``cpus``; why the kernel refused it, or None.  The directory is
    left for :func:`remove` whatever happens."""
    try:
        os.mkdir(directory, 0o755)
        write_value(os.path.join(directory, "cpuset.cpus"), format_cpus(cpus))
        write_value(os.path.join(directory, "cpuset.mems"), read_value(os.path.join(root, "cpuset.mems.effective")))
    except OSError as err:
        return f"cannot make cgroup {directory}: {err.strerror}"
    partition = os.path.join(directory, "cpuset.cpus.partition")
    if not os.path.exists(partition):
        return "this kernel has no cpuset partitions (cpuset.cpus.partition: Linux 5.13 or later)"
    try:
        write_value(partition, PARTITION_STATE)
        state = read_value(partition)
    except OSError as err:
        return f"the kernel refused a partition of CPUs {format_cpus(cpus)}: {err.strerror}"
    if state != PARTITION_STATE:  # e.g. "root invalid (Cpu list in cpuset.cpus not exclusive)"
        return f"the kernel refused a partition of CPUs {format_cpus(cpus)}: {state}"
    return None


def own_cgroup(root: str) -> str:
    """The directory of this process's cgroup (the top one when it cannot be read)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as handle:
            path = next((line[3:].rstrip("\n") for line in handle if line.startswith("0::")), "/")
    except OSError:
        path = "/"
    directory = os.path.normpath(os.path.join(root, path.lstrip("/")))
    return directory if directory == root or directory.startswith(root.rstrip("/") + "/") else root


def join(directory: str) -> None:
    """This process (all its threads) into cgroup ``directory``."""
    write_value(os.path.join(directory, "cgroup.procs"), str(os.getpid()))


def members(directory: str) -> list[str]:
    try:
        with open(os.path.join(directory, "cgroup.procs"), encoding="ascii") as handle:
            return [line.strip() for line in handle if line.strip()]
    except OSError:
        return []


def remove(directory: str, root: str, patience: float = 5.0) -> str | None:
    """Give the partition's CPUs back (its processes to the top cgroup) and remove it; why it could not
    be, or None."""
    with contextlib.suppress(OSError):
        write_value(os.path.join(directory, "cpuset.cpus.partition"), "member")

    def give_back() -> None:
        for pid in members(directory):
            with contextlib.suppress(OSError):
                write_value(os.path.join(root, "cgroup.procs"), pid)

    return remove_emptied(directory, give_back, "processes", patience)


def remove_emptied(directory: str, empty: Callable[[], object], what: str, patience: float) -> str | None:
    """``empty()`` the cgroup (its members go elsewhere) and remove it, again until it goes or ``patience``
    seconds pass (a member may fork meanwhile); why it could not be removed, or None."""
    deadline = time.monotonic() + patience
    while True:
        empty()
        try:
            os.rmdir(directory)
            return None
        except FileNotFoundError:
            return None
        except OSError as err:
            if time.monotonic() > deadline:
                return f"{directory}: {err.strerror} (its {what} run on every CPU)"
        time.sleep(0.01)


def disable_cpuset(root: str) -> None:
    """Take back the cpuset controller abstat handed to the top cgroup's children (left when another
    cgroup uses it now)."""
    with contextlib.suppress(OSError):
        write_value(os.path.join(root, "cgroup.subtree_control"), "-cpuset")
