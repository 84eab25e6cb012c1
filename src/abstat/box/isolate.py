"""``run --isolate``: the measured CPUs to the measured commands alone, restored however the run ends.

Standard library only (it runs on test boxes too).  Where the kernel mounts the cgroup v1 cpuset hierarchy:

- (``cset shield``'s method) two cpusets are made at its top: ``abstat.isolated-PID`` (the measured CPUs,
  ``cpu_exclusive``) and ``abstat.rest-PID`` (every other CPU but the measured CPUs' SMT siblings, left idle);
- every task of the top cpuset (abstat itself, its background load, the rest of the system) moves to
  the rest; kernel threads bound to a CPU cannot move and are counted;
- every IRQ the kernel lets move (``/proc/irq/N/smp_affinity_list``, the default of new ones) goes to the rest;
- the measured commands are born in the isolated set: the spawning thread joins it for the spawn and the wait
  (:meth:`Isolation.enter`, :meth:`Isolation.leave`), as ``--cpus`` pins it.

Before the first change a record (the old IRQ affinities, the two cpusets) is written to a private file;
:meth:`Isolation.close` restores everything and removes it.  After a run killed outright, the record is left
and ``abstat doctor --reset`` restores from it (:mod:`abstat.box.isolate_record`, which reads it as untrusted
input).  Where no v1 cpuset hierarchy is mounted, the cgroup v2 cpuset controller makes the measured CPUs
(and their SMT siblings) a partition (:mod:`abstat.box.partition`); IRQs, records and restoring as above.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
import threading
from collections.abc import Callable

from abstat.box import partition
from abstat.box.partition import format_cpus, parse_cpus
from abstat.box.partition import read_value as _read
from abstat.box.partition import write_value as _write

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

CPU_SYS = "/sys/devices/system/cpu"
IRQ_DIR = "/proc/irq"
STATE_ENV = "ABSTAT_ISOLATION_STATE"
STATE_SUBDIR = "abstat/isolation"  # under $XDG_STATE_HOME or ~/.local/state
ISOLATED_SET, REST_SET = "abstat.isolated", "abstat.rest"  # the cpusets' names, before "-PID"
#: The name of a cpuset abstat made: isolated or rest, and the PID of the run that made it.
SET_NAME = re.compile(r"abstat\.(isolated|rest)-(\d{1,10})\Z")


class IsolationError(Exception):
    """Why the CPUs cannot be isolated here (one line); ``{FIELD}`` in ``message`` names an option of ``fields``:
    ``str()`` by its usual flag, :meth:`named` as the caller says (a box sends both: the controller names it)."""

    def __init__(self, message: str, *fields: str) -> None:
        self.message, self.fields = message, fields
        super().__init__(self.named(lambda field: "--" + field.replace("_", "-")))

    def named(self, name: Callable[[str], str]) -> str:
        text = self.message
        for field in self.fields:
            text = text.replace("{" + field + "}", name(field))
        return text


def _hex_mask(cpus: set[int]) -> str:
    return format(sum(1 << cpu for cpu in cpus), "x")


def cpuset_mount() -> str | None:
    """Where the cgroup v1 cpuset hierarchy is mounted (None: not mounted)."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 3 and fields[2] == "cgroup" and "cpuset" in fields[3].split(","):
                    return fields[1]
    except OSError:
        return None
    return None


def siblings_of(cpus: set[int]) -> set[int]:
    """The SMT siblings of ``cpus`` (not themselves)."""
    found: set[int] = set()
    for cpu in cpus:
        try:
            found |= parse_cpus(_read(f"{CPU_SYS}/cpu{cpu}/topology/thread_siblings_list"))
        except (OSError, ValueError):
            continue
    return found - cpus


def default_state_dir() -> str:
    if os.environ.get(STATE_ENV):
        return os.environ[STATE_ENV]
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, STATE_SUBDIR)


def hierarchy() -> tuple[str, int] | None:
    """Where --isolate makes its cpusets: (the mount point, cgroup version 1 or 2); None: nowhere."""
    mount = cpuset_mount()
    if mount is not None:
        return mount, 1
    root = partition.v2_root()
    return (root, 2) if root is not None else None


def _online(mount: str, version: int) -> set[int]:
    return parse_cpus(_read(os.path.join(mount, "cpuset.cpus" if version == 1 else "cpuset.cpus.effective")))


def isolation_problem(cpus: Any) -> str | None:
    """Why ``--isolate`` cannot confine the measured commands to ``cpus`` here (one line), or None."""
    if not cpus:
        return "--isolate needs --cpus: the CPUs to give the measured commands alone"
    if os.geteuid() != 0:
        return "--isolate changes cpusets and IRQ affinities: it needs root"
    found = hierarchy()
    if found is None:
        return (
            "--isolate needs a cpuset controller (the cgroup v1 cpuset hierarchy, or cgroup v2's cpuset "
            "controller at the top of the hierarchy), and this system offers neither; --cpus alone pins "
            "without isolating"
        )
    mount, version = found
    try:
        online = _online(mount, version)
    except (OSError, ValueError) as err:
        return f"--isolate: cannot read the top cpuset's CPUs: {err}"
    missing = set(cpus) - online
    if missing:
        return f"--isolate: CPU {format_cpus(missing)} is not in this machine's cpuset ({format_cpus(online)})"
    rest = online - set(cpus) - siblings_of(set(cpus))
    if not rest:
        return (
            f"--isolate: no CPU would be left for the rest of the system (CPUs {format_cpus(online)}; the "
            "measured CPUs' SMT siblings are left idle)"
        )
    stale = [name for name in list_dir(mount) if SET_NAME.match(name) and not _dropped_if_empty(mount, name)]
    if stale:
        return (
            f"--isolate: cpuset {stale[0]} is left from another run (still running, or killed: "
            "`abstat doctor --reset` restores the machine)"
        )
    return None


def _dropped_if_empty(mount: str, name: str) -> bool:
    """Remove a cpuset of ours whose run has ended and which holds no task (it changes nothing): True
    when it is gone."""
    match = SET_NAME.match(name)
    path = os.path.join(mount, name)
    if match is None or process_alive(int(match.group(2))) or os.path.islink(path):
        return False
    tasks = os.path.join(path, "tasks")  # cgroup v2: cgroup.procs
    try:
        with open(tasks if os.path.exists(tasks) else os.path.join(path, "cgroup.procs"), encoding="ascii") as handle:
            if handle.read().strip():
                return False
        os.rmdir(path)
    except OSError:
        return False
    return True


def list_dir(path: str) -> list[str]:
    """The sorted names in ``path`` ([] if it cannot be read)."""
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _move_tasks(source: str, target: str, passes: int = 3) -> tuple[int, int]:
    """Move every task of cpuset ``source`` to ``target``: (moved, could not move)."""
    moved, stuck = 0, set()
    for _ in range(passes):
        try:
            with open(os.path.join(source, "tasks"), encoding="ascii") as handle:
                tasks = [line.strip() for line in handle]
        except OSError:
            break
        left = [task for task in tasks if task and task not in stuck]
        if not left:
            break
        for task in left:
            try:
                _write(os.path.join(target, "tasks"), task)
                moved += 1
            except OSError:
                stuck.add(task)  # a kernel thread bound to a CPU, or a task that ended
    return moved, len(stuck)


class Isolation:
    """The measured CPUs made exclusive for one experiment (see the module doc); :meth:`close` restores."""

    def __init__(self, cpus: Any, state_dir: str | None = None) -> None:
        problem = isolation_problem(cpus)
        if problem is not None:
            raise IsolationError(problem)
        self.cpus = set(cpus)
        self.mount, self.version = hierarchy() or ("", 1)
        online = _online(self.mount, self.version)
        self.idle = siblings_of(self.cpus)
        self.rest = online - self.cpus - self.idle
        pid = os.getpid()
        self.isolated_dir = os.path.join(self.mount, f"{ISOLATED_SET}-{pid}")
        self.rest_dir = os.path.join(self.mount, f"{REST_SET}-{pid}")
        self.irqs: dict[str, str] = {}
        self.moved = self.unmoved = self.irqs_unmoved = 0
        self.enabled_cpuset = False  # cgroup v2: abstat handed the cpuset controller to the top's children
        self._home = self.mount  # cgroup v2: where abstat's process goes back to after each spawn and wait
        self._lock = threading.Lock()
        self._closed = False
        self.record = os.path.join(state_dir or default_state_dir(), f"isolation-{pid}.json")
        self._save()  # before the first change: a killed run leaves what --reset needs
        try:
            self._setup()
        except BaseException:
            self.close()
            raise

    def _state(self) -> dict[str, Any]:
        if self.version == 2:
            return {
                "pid": os.getpid(),
                "mount": self.mount,
                "sets": [self.isolated_dir],
                "irqs": self.irqs,
                "cgroup2": {"enabled_cpuset": self.enabled_cpuset},
            }
        return {"pid": os.getpid(), "mount": self.mount, "sets": [self.isolated_dir, self.rest_dir], "irqs": self.irqs}

    def _save(self) -> None:
        _save_record(self.record, self._state())

    def _setup(self) -> None:
        if self.version == 2:
            self._setup_partition()
            return
        mems = _read(os.path.join(self.mount, "cpuset.mems"))
        for directory, cpus in ((self.rest_dir, self.rest), (self.isolated_dir, self.cpus)):
            try:
                os.mkdir(directory, 0o755)
                _write(os.path.join(directory, "cpuset.mems"), mems)
                _write(os.path.join(directory, "cpuset.cpus"), format_cpus(cpus))
            except OSError as err:
                raise IsolationError(
                    f"{{isolate}}: cannot make cpuset {directory}: {err.strerror}", "isolate"
                ) from None
        with contextlib.suppress(OSError):  # another top-level cpuset overlaps: the top one's tasks still move
            _write(os.path.join(self.isolated_dir, "cpuset.cpu_exclusive"), "1")
        self.moved, self.unmoved = _move_tasks(self.mount, self.rest_dir)
        self._move_irqs()

    def _setup_partition(self) -> None:
        """cgroup v2: the measured CPUs and their siblings a partition; the kernel takes them from the rest."""
        if not partition.cpuset_enabled(self.mount):
            self.enabled_cpuset = True
            self._save()  # before the change
            try:
                partition.enable_cpuset(self.mount)
            except OSError as err:
                raise IsolationError(
                    f"{{isolate}}: cannot enable the cpuset controller for {self.mount}'s children: {err.strerror}",
                    "isolate",
                ) from None
        problem = partition.make(self.mount, self.isolated_dir, self.cpus | self.idle)
        if problem is not None:
            raise IsolationError(f"{{isolate}}: {problem}", "isolate")
        self._move_irqs()

    def _move_irqs(self) -> None:
        targets = [
            (os.path.join(IRQ_DIR, name, "smp_affinity_list"), format_cpus(self.rest))
            for name in list_dir(IRQ_DIR)
            if name.isdigit()
        ]
        targets.append((os.path.join(IRQ_DIR, "default_smp_affinity"), _hex_mask(self.rest)))
        for path, _ in targets:  # every old value recorded once, before the first write
            try:
                self.irqs[path] = _read(path)
            except OSError:
                continue
        self._save()
        for path, value in targets:
            if path not in self.irqs:
                continue
            try:
                _write(path, value)
            except OSError:
                self.irqs_unmoved += 1  # a per-CPU interrupt, or one the kernel manages
                del self.irqs[path]
        self._save()

    def enter(self) -> None:
        """The calling thread joins the isolated set (a command spawned now is born there); on cgroup v2
        the whole process joins the partition (the caller pins the thread to the measured CPUs)."""
        if self.version == 2:
            self._home = partition.own_cgroup(self.mount)
            partition.join(self.isolated_dir)
            return
        _write(os.path.join(self.isolated_dir, "tasks"), str(threading.get_native_id()))

    def leave(self) -> None:
        if self.version == 2:
            partition.join(self._home)
            return
        _write(os.path.join(self.rest_dir, "tasks"), str(threading.get_native_id()))

    def summary(self) -> str:
        """One line for the run's notes."""
        idle = f", SMT siblings {format_cpus(self.idle)} left idle" if self.idle else ""
        if self.version == 2:
            return (
                f"--isolate: CPUs {format_cpus(self.cpus)} held for the measured commands{idle} (a cgroup v2 "
                f"cpuset partition: every other cgroup runs on CPUs {format_cpus(self.rest)}), "
                f"{len(self.irqs)} IRQs moved ({self.irqs_unmoved} could not be)"
            )
        return (
            f"--isolate: CPUs {format_cpus(self.cpus)} held for the measured commands{idle}; {self.moved} tasks "
            f"moved to CPUs {format_cpus(self.rest)} ({self.unmoved} bound to a CPU stayed), "
            f"{len(self.irqs)} IRQs moved ({self.irqs_unmoved} could not be)"
        )

    def close(self) -> list[str]:
        """Restore every change (idempotent); what could not be restored, one line each."""
        with self._lock:
            if self._closed:
                return []
            self._closed = True
        return restore(self._state(), self.record)


def restore(state: dict[str, Any], record: str) -> list[str]:
    """Put back the IRQ affinities and remove the cpusets ``state`` records; the record file goes when
    nothing failed.  What could not be restored, one line each."""
    problems = []
    for path, old in state["irqs"].items():
        try:
            _write(path, old)
        except FileNotFoundError:
            continue  # the IRQ went away with its device
        except OSError as err:
            problems.append(f"{path}: {err.strerror}")
    version2 = state.get("cgroup2")
    for directory in state["sets"]:  # the isolated set first: then the rest may take every CPU again
        if os.path.isdir(directory):
            remover = partition.remove if version2 is not None else remove_set
            problem = remover(directory, state["mount"])
            if problem:
                problems.append(problem)
    if version2 is not None and version2.get("enabled_cpuset") is True:
        partition.disable_cpuset(state["mount"])
    if not problems:
        with contextlib.suppress(OSError):
            os.unlink(record)
    return problems


def remove_set(directory: str, mount: str, patience: float = 5.0) -> str | None:
    """Give ``directory``'s tasks back to the top cpuset and remove it; why it could not be, or None.

    Every process forked meanwhile by a task still in the set is born in it (the whole system was
    moved there), so the set first gets every CPU back, and the moves go on until it is empty."""
    with contextlib.suppress(OSError):
        _write(os.path.join(directory, "cpuset.cpus"), _read(os.path.join(mount, "cpuset.cpus")))
    return partition.remove_emptied(directory, lambda: _move_tasks(directory, mount, passes=3), "tasks", patience)


def is_private(info: os.stat_result) -> bool:
    """Owned by this user or root and writable by no one else."""
    return info.st_uid in (os.geteuid(), 0) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _save_record(path: str, state: dict[str, Any]) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    if not is_private(os.stat(directory)):
        raise IsolationError(f"{{isolate}}: {directory} may be written by others: no record is kept there", "isolate")
    descriptor, temporary = tempfile.mkstemp(prefix=".isolation-", suffix=".tmp", dir=directory)
    try:
        with open(descriptor, "w", encoding="utf-8") as handle:
            json.dump(state, handle)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (signal 0)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
