"""What ``abstat doctor --reset`` undoes of ``run --isolate`` after a run killed outright.

A record is read as untrusted input (issue 36): only a private file of this user's, naming only the
IRQ affinity files and the cpusets :class:`abstat.box.isolate.Isolation` changes, never through a link;
anything else refuses the record whole.  Cpusets of ended runs whose record is lost are found by name.
"""

from __future__ import annotations

import json
import os
import re
import stat

from abstat.box import partition
from abstat.box.isolate import (
    SET_NAME,
    default_state_dir,
    hierarchy,
    is_private,
    list_dir,
    process_alive,
    remove_set,
    restore,
)

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

_IRQ_PATH = re.compile(r"/proc/irq/(\d{1,6}/smp_affinity_list|default_smp_affinity)\Z")
_CPU_LIST = re.compile(r"[0-9,-]{1,4096}\Z")
_HEX_MASK = re.compile(r"[0-9a-fA-F,]{1,4096}\Z")
MAX_RECORD_BYTES = 1 << 20


def orphan_sets() -> list[str]:
    """Cpusets of ours left by runs that ended, whatever records say (a record may be lost)."""
    found = hierarchy()
    if found is None:
        return []
    mount = found[0]
    return [
        os.path.join(mount, name)
        for name in list_dir(mount)
        if (m := SET_NAME.match(name)) and not process_alive(int(m.group(2)))
    ]


def release_orphan_set(path: str) -> list[str]:
    """Move an orphan cpuset's tasks back to the top one and remove it; what failed, one line each."""
    found = hierarchy()
    if found is None or os.path.dirname(path) != found[0] or not SET_NAME.match(os.path.basename(path)):
        return [f"{path}: not a cpuset abstat makes"]
    mount, version = found
    problem = (remove_set if version == 1 else partition.remove)(path, mount)
    return [problem] if problem else []


def _checked(state: Any, mount: str | None) -> str | None:
    """Why a record may not be restored from (None: it may)."""
    if not isinstance(state, dict) or not isinstance(state.get("pid"), int) or state.get("mount") != mount:
        return "not an isolation record of this machine's cpuset hierarchy"
    sets, irqs = state.get("sets"), state.get("irqs")
    if not isinstance(sets, list) or not isinstance(irqs, dict):
        return "not an isolation record"
    version2 = state.get("cgroup2", {})
    if (
        not isinstance(version2, dict)
        or set(version2) - {"enabled_cpuset"}
        or not isinstance(version2.get("enabled_cpuset", False), bool)
    ):
        return "not an isolation record"
    return _foreign_set(sets, mount) or _foreign_irq(irqs)


def _foreign_set(sets: list[Any], mount: str | None) -> str | None:
    """Why a cpuset of the record is not one abstat makes at the top of *mount* (None: all are)."""
    for directory in sets:
        if (
            not isinstance(directory, str)
            or os.path.dirname(directory) != mount
            or not SET_NAME.match(os.path.basename(directory))
            or os.path.islink(directory)
        ):
            return f"cpuset {directory!r} is not one abstat makes"
    return None


def _foreign_irq(irqs: dict[Any, Any]) -> str | None:
    """Why an IRQ affinity of the record is not one abstat changes (None: all are)."""
    for path, old in irqs.items():
        pattern = _HEX_MASK if path.endswith("default_smp_affinity") else _CPU_LIST
        if not _IRQ_PATH.match(path) or not isinstance(old, str) or not pattern.match(old):
            return f"{path!r} = {old!r} is not an IRQ affinity abstat changes"
    return None


def stale_records(state_dir: str | None = None) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The records of runs that ended without restoring, and the ones refused (one line each, naming the
    file): a record that is not this user's and private, or that names anything :class:`Isolation` does
    not change.  Records of runs still running are left to them."""
    directory = state_dir or default_state_dir()
    records: list[tuple[str, dict[str, Any]]] = []
    refused: list[str] = []
    mount = (hierarchy() or (None, 0))[0]
    for name in list_dir(directory):
        if not re.match(r"isolation-\d{1,10}\.json\Z", name):
            continue
        path = os.path.join(directory, name)
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with open(descriptor, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or not is_private(info) or not is_private(os.stat(directory)):
                    refused.append(f"{path}: not a private isolation record of this user's")
                    continue
                state = json.loads(handle.read(MAX_RECORD_BYTES + 1).decode("utf-8"))
        except (OSError, ValueError, RecursionError) as err:
            refused.append(f"{path}: cannot read the isolation record: {err}")
            continue
        problem = _checked(state, mount)
        if problem is not None:
            refused.append(f"{path}: {problem}")
        elif not process_alive(state["pid"]):
            records.append((path, state))
    return records, refused


def restore_record(path: str, state: dict[str, Any]) -> tuple[str, list[str]]:
    """Undo a checked record (:func:`stale_records`): what was done, and what could not be, one line each."""
    problems = restore(state, path)
    return (
        f"isolation of run {state['pid']} undone ({len(state['irqs'])} IRQ affinities, {len(state['sets'])} cpusets)"
    ), [f"{path}: {line}" for line in problems]
