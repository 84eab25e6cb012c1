"""``abstat doctor --tune`` and ``--reset``: reversible fixes, recorded.

Each change writes a value to a /proc or /sys file (the old value is kept
in the state file first) or runs a command with a known inverse
(``systemctl stop irqbalance`` / ``start``).  Tuning twice keeps the first
recorded old value, so ``--reset`` always returns to the state before the
first ``--tune``.  Without permission to write the files nothing is changed
and the commands are returned for the user to run with sudo.

The record is read back as untrusted input (issue 36): ``--reset`` writes
only under ``/proc/sys`` and ``/sys`` (of ``--root`` when given), never
through a link, runs only the undo commands abstat itself knows
(:data:`KNOWN_COMMANDS`), writes only the files ``--tune`` itself changes
with a value of the kind their check writes (:data:`KNOWN_WRITES`: a
governor's name, 0 or 1, THP's words, never ``kernel.core_pattern``), and
reads only a record owned by this user that no one else may write; it is
written in a private directory through a new file (``O_EXCL``) renamed over
it.  What ``--reset`` will write and run is listed before anything is; a file that no longer holds
what ``--tune`` wrote there is left as it is.  The CLI asks ``--yes`` for a record other than the
default one (:func:`default_state_path`), as its writes are then named by a file someone may have
handed over (docs/noise.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from abstat.box.doctor.base import WARN, Change, Finding
from abstat.errors import InputError

STATE_ENV = "ABSTAT_DOCTOR_STATE"
# the commands --tune runs, and their undo: the only commands a record may name
KNOWN_COMMANDS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("systemctl", "stop", "irqbalance"): ("systemctl", "start", "irqbalance"),
}
_CPU = "/sys/devices/system/cpu"
# the files each check's --tune writes (below the root), the values --tune can have read there (the old value
# --reset writes back) and the value it writes there: the only writes a record may name (attack22 A9: not any
# sysctl, whose value the kernel may run as root; attack23 #8: perf_event_paranoid -1, which --tune never reads,
# as it lowers a value above 1 or 2 only)
KNOWN_WRITES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "cpu-governor": ((_CPU + r"/cpu[0-9]+/cpufreq/scaling_governor", "[a-z][a-z0-9_]{0,15}", "performance"),),
    "turbo": ((_CPU + r"/intel_pstate/no_turbo", "0", "1"), (_CPU + r"/cpufreq/boost", "1", "0")),
    "c-states": ((_CPU + r"/cpu[0-9]+/cpuidle/state[0-9]+/disable", "0", "1"),),
    "transparent-hugepages": (("/sys/kernel/mm/transparent_hugepage/enabled", "always", "madvise"),),
    "nmi-watchdog": (("/proc/sys/kernel/nmi_watchdog", "[1-9]", "0"),),
    "perf-counters": (("/proc/sys/kernel/perf_event_paranoid", "[2-9]|[1-9][0-9]{1,3}", "[12]"),),
}
MAX_RECORD_BYTES = 1 << 20
MAX_VALUE_CHARS = 4096


def default_state_path() -> str:
    if os.environ.get(STATE_ENV):
        return os.environ[STATE_ENV]
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "abstat", "doctor-tune.json")


@dataclass
class TuneResult:
    applied: list[dict[str, Any]] = field(default_factory=list)  # what was changed now
    commands: list[str] = field(default_factory=list)  # what the user must run (no permission)
    skipped: list[str] = field(default_factory=list)
    state_path: str = ""


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _current_value(path: str) -> str | None:
    """The value to restore: the bracketed choice of a "[a] b c" file."""
    text = _read(path)
    if text is not None and "[" in text and "]" in text:
        return text[text.index("[") + 1 : text.index("]")]
    return text


def _write(path: str, value: str) -> None:
    """Write an existing kernel (or saved) file, never through a link, never creating one."""
    descriptor = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    with open(descriptor, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")


def _private(info: os.stat_result) -> bool:
    """Owned by this user (or root) and writable by no one else."""
    return info.st_uid in (os.geteuid(), 0) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _load_state(path: str, root: str) -> dict[str, Any]:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return {"changes": []}
    except OSError as err:
        raise InputError(f"cannot read the tuning record: {err.strerror}", path=path) from None
    with open(descriptor, "rb") as handle:
        _check_owned(os.fstat(handle.fileno()), path)
        data = handle.read(MAX_RECORD_BYTES + 1)
    state = _parsed_record(data, path)
    if not isinstance(state, dict) or not isinstance(state.get("changes"), list):
        raise InputError("not an abstat doctor tuning record", path=path)
    for entry in state["changes"]:
        refused = _checked_entry(entry, root)
        if refused is not None:
            raise InputError(
                f"the tuning record holds a change abstat does not make: {refused}; nothing was changed", path=path
            )
    return state


def _check_owned(info: os.stat_result, path: str) -> None:
    """The record is a regular file of this user's, private, in a directory no one else may write."""
    if (
        not stat.S_ISREG(info.st_mode)
        or info.st_uid != os.geteuid()
        or not _private(os.stat(os.path.dirname(os.path.abspath(path))))
        or not _private(info)
    ):
        raise InputError(
            "not a tuning record of this user's: it must be a file owned by this user, in a "
            "directory no one else may write, and writable by no one else",
            path=path,
        )


def _parsed_record(data: bytes, path: str) -> Any:
    """The JSON of a tuning record of at most MAX_RECORD_BYTES (read one byte further to tell)."""
    try:
        if len(data) > MAX_RECORD_BYTES:
            raise ValueError(f"larger than {MAX_RECORD_BYTES} bytes")
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        raise InputError(f"cannot read the tuning record: {err}", path=path) from None


def _save_state(path: str, state: dict[str, Any]) -> None:
    """Write the record through a new private file renamed over it, in a directory only this user writes."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not _private(os.stat(directory)):
            raise InputError(
                "the tuning record's directory may be written by others; give {state} a file in a private directory",
                path=directory,
                fields=["state"],
            )
        descriptor, temporary = tempfile.mkstemp(prefix=".doctor-tune-", suffix=".tmp", dir=directory)
        try:
            with open(descriptor, "w", encoding="utf-8") as handle:
                json.dump(state, handle, indent=2)
                handle.write("\n")
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as err:
        raise InputError(f"cannot write the tuning record: {err.strerror}", path=path) from None


def _checked_entry(entry: Any, root: str) -> str | None:
    """Why a recorded change may not be undone (None: it may): only /proc/sys and /sys files (under
    ``root``), no link or ``..`` on the way out of them, a one-line old value, a known undo command."""
    if not isinstance(entry, dict):
        return "a change is not an object"
    path, old, undo = entry.get("path"), entry.get("old"), entry.get("undo")
    if path is not None:
        return _checked_write(path, old, root) or _known_write(entry.get("check"), path, old, entry.get("new"), root)
    if undo is None:
        return None
    if not isinstance(undo, list) or tuple(undo) not in KNOWN_COMMANDS.values():
        return (
            f"undo command {undo!r} is not one abstat runs (known: "
            + ", ".join(" ".join(c) for c in KNOWN_COMMANDS.values())
            + ")"
        )
    return None


def _checked_write(path: Any, old: Any, root: str) -> str | None:
    """Why a recorded file write may not be undone: a file outside /proc/sys and /sys, or an old value that
    is not one line of text (None: it may)."""
    if not isinstance(path, str) or not _kernel_path(path, root):
        return f"path {path!r} is not a file under {root}/proc/sys or {root}/sys"
    if old is not None and not (isinstance(old, str) and len(old) <= MAX_VALUE_CHARS and old.isprintable()):
        return f"the old value of {path!r} is not one line of text"
    return None


def _known_write(check: Any, path: str, old: Any, new: Any, root: str) -> str | None:
    """Why a recorded write is not one ``--tune`` makes: its check writes no such file, or no such value, or the
    file never held such a value when --tune wrote it."""
    below = path[len(os.path.realpath(root)) :] if root else path
    known = KNOWN_WRITES.get(check, ()) if isinstance(check, str) else ()
    found = next((entry for entry in known if re.fullmatch(entry[0], below)), None)
    if found is None:
        return f"path {path!r} is not a file abstat doctor --tune writes for check {check!r}"
    if old is not None and not re.fullmatch(found[1], old):
        return f"the old value {old!r} of {path!r} is not one check {check!r} reads before it writes"
    if not (isinstance(new, str) and re.fullmatch(found[2], new)):
        return f"the value {new!r} recorded as written to {path!r} is not one check {check!r} writes"
    return None


def _kernel_path(path: str, root: str) -> bool:
    top = os.path.realpath(root) if root else ""
    if not os.path.isabs(path) or os.path.normpath(path) != path or "\x00" in path:
        return False
    allowed = (top + "/proc/sys/", top + "/sys/")
    return path.startswith(allowed) and os.path.realpath(path).startswith(allowed)


def planned_changes(findings: list[Finding]) -> list[tuple[str, Change]]:
    return [(finding.name, change) for finding in findings if finding.status == WARN for change in finding.changes]


def _apply(check: str, change: Change, may_run: bool, result: TuneResult) -> dict[str, Any] | None:
    """Make one change: what to record, or None (nothing to do, not permitted, or it failed: said in ``result``)."""
    if change.path is not None:
        old = _current_value(change.path)
        if old == change.value:
            return None
        try:
            _write(change.path, change.value or "")
        except OSError as err:
            result.skipped.append(f"{change.path}: {err.strerror}")
            return None
        return {"check": check, "path": os.path.abspath(change.path), "old": old, "new": change.value}
    if not may_run:
        result.commands.append("sudo " + change.shell())
        return None
    completed = subprocess.run(change.command or [], capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        result.skipped.append(f"{change.shell()}: exit status {completed.returncode}")
        return None
    return {"check": check, "command": change.command, "undo": change.undo_command}


def _key(entry: dict[str, Any]) -> str:
    return entry.get("path") or " ".join(entry.get("command") or [])


def tune(
    findings: list[Finding], *, state_path: str, run_commands: bool = True, dry_run: bool = False, root: str = ""
) -> TuneResult:
    """Apply the reversible fixes of the failed checks (see the module doc; ``root``: the saved tree
    the checks read, whose files are changed)."""
    result = TuneResult(state_path=state_path)
    changes = planned_changes(findings)
    writable = all(change.path is None or os.access(change.path, os.W_OK) for _, change in changes)
    may_run = run_commands and os.geteuid() == 0
    if dry_run or not writable:
        result.commands = [("sudo " if change.command else "") + change.shell() for _, change in changes]
        return result
    state = _load_state(state_path, root)
    recorded = {_key(entry) for entry in state["changes"]}
    for check, change in changes:
        entry = _apply(check, change, may_run, result)
        if entry is None:
            continue
        result.applied.append(entry)
        key = _key(entry)
        if key not in recorded:  # keep the value from before the first --tune
            state["changes"].append(dict(entry, at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
            recorded.add(key)
    if result.applied:
        _save_state(state_path, state)
    return result


def reset(*, state_path: str, root: str = "", announce: Callable[[list[str]], None] | None = None) -> TuneResult:
    """Undo every recorded change, newest first, and remove the record (``root``: the saved tree the
    changes were made in, as ``--tune --root``).  A record holding a change abstat would not make is
    refused whole, nothing undone: :class:`InputError` naming it.  A file that no longer holds what --tune
    wrote is left as it is (said in ``skipped``; attack23 #8).  ``announce`` is given what will be written and
    run, one line each, before anything is."""
    result = TuneResult(state_path=state_path)
    state = _load_state(state_path, root)
    planned = _plan(state)
    if announce is not None and planned:
        announce(planned)
    if not root:
        _release_isolations(result)
    if state["changes"]:
        _keep(state_path, [entry for entry in reversed(state["changes"]) if _undo(entry, result)])
    return result


def _plan(state: dict[str, Any]) -> list[str]:
    """What undoing a record's changes, newest first, will write and run."""
    return [line for line in map(_planned, reversed(state["changes"])) if line]


def _keep(state_path: str, remaining: list[dict[str, Any]]) -> None:
    """The record of the changes not undone (newest first), or none."""
    if remaining:
        _save_state(state_path, {"changes": list(reversed(remaining))})
    else:
        with contextlib.suppress(OSError):
            os.unlink(state_path)


def unapproved_writes(state_path: str, root: str = "") -> list[str]:
    """What ``reset`` would write and run, one line each, when the record is not the default one --tune writes
    (a file someone may have handed over: its writes need the user's approval); [] for the default record.
    A forged record: :class:`InputError`.  Nothing is done."""
    if os.path.realpath(state_path) == os.path.realpath(default_state_path()):
        return []
    return _plan(_load_state(state_path, root))


def _undo(entry: dict[str, Any], result: TuneResult) -> bool:
    """Undo one recorded change (said in ``result``); whether it stays in the record, to be undone later."""
    try:
        if entry.get("path"):
            return _undo_write(entry, result)
        if entry.get("undo"):
            completed = subprocess.run(list(entry["undo"]), capture_output=True, text=True, check=False)
            if completed.returncode != 0:
                raise OSError(0, f"exit status {completed.returncode}")
    except OSError as err:
        result.skipped.append(f"{entry.get('path') or ' '.join(entry.get('undo') or [])}: {err.strerror}")
        return True
    result.applied.append(entry)
    return False


def _undo_write(entry: dict[str, Any], result: TuneResult) -> bool:
    """Write a file's recorded old value back if it still holds what --tune wrote; whether the entry stays."""
    path, old = entry["path"], entry.get("old")
    if old is None:
        result.skipped.append(f"{path}: no old value recorded")
        return False
    current = _current_value(path)
    if current != entry.get("new"):
        result.skipped.append(_changed_since(entry, current))
        return current is None  # unreadable now: kept, to be tried again
    if not os.access(path, os.W_OK):
        result.commands.append(Change(path, old).shell())
        return True
    _write(path, old)
    result.applied.append(dict(entry, new=current))  # the value the file held, read just now
    return False


def _changed_since(entry: dict[str, Any], current: str | None) -> str:
    """Why a file --tune wrote is left as it is: it cannot be read, or holds another value now."""
    if current is None:
        return f"{entry['path']}: cannot be read, so not known to hold {entry.get('new')} as --tune wrote: left alone"
    return (
        f"{entry['path']}: holds {current}, not {entry.get('new')} as --tune wrote (changed since): "
        "left as it is, and dropped from the record"
    )


def _planned(entry: dict[str, Any]) -> str:
    """What undoing one recorded change will do ("" nothing): write a file that still holds what --tune wrote
    (its value now shown), or run a command."""
    if entry.get("path") and entry.get("old") is not None:
        current = _current_value(entry["path"])
        return f"write {entry['old']} to {entry['path']} (it holds {current})" if current == entry.get("new") else ""
    return "run " + " ".join(entry["undo"]) if entry.get("undo") else ""


def _release_isolations(result: TuneResult) -> None:
    """Undo what ``run --isolate`` left after a kill (:mod:`abstat.box.isolate`); a record naming anything
    it does not change is refused before anything is undone."""
    from abstat.box import isolate_record as isolate

    records, refused = isolate.stale_records()
    if refused:
        path, _, why = refused[0].partition(": ")
        raise InputError(f"{why}; nothing was changed", path=path)
    for path, state in records:
        done, problems = isolate.restore_record(path, state)
        result.applied.append({"isolation": done})
        result.skipped.extend(problems)
    for path in isolate.orphan_sets():  # left without a record (lost): the tasks go back, the set goes
        problems = isolate.release_orphan_set(path)
        result.applied.append({"isolation": f"cpuset {path} of an ended run removed, its tasks back at the top"})
        result.skipped.extend(problems)
