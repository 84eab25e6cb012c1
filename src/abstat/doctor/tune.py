"""``abstat doctor --tune`` and ``--reset``: reversible fixes, recorded.

Each change writes a value to a /proc or /sys file (the old value is kept
in the state file first) or runs a command with a known inverse
(``systemctl stop irqbalance`` / ``start``).  Tuning twice keeps the first
recorded old value, so ``--reset`` always returns to the state before the
first ``--tune``.  Without permission to write the files nothing is changed
and the commands are returned for the user to run with sudo.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from abstat.doctor.base import WARN, Change, Finding
from abstat.errors import InputError

STATE_ENV = "ABSTAT_DOCTOR_STATE"


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
        return text[text.index("[") + 1:text.index("]")]
    return text


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")


def _load_state(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    except FileNotFoundError:
        return {"changes": []}
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the tuning record: {err}", path=path) from None
    if not isinstance(state, dict) or not isinstance(state.get("changes"), list):
        raise InputError("not an abstat doctor tuning record", path=path)
    return state


def _save_state(path: str, state: dict[str, Any]) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        temporary = path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(state, handle, indent=2)
            handle.write("\n")
        os.replace(temporary, path)
    except OSError as err:
        raise InputError(f"cannot write the tuning record: {err.strerror}", path=path) from None


def planned_changes(findings: list[Finding]) -> list[tuple[str, Change]]:
    return [(finding.name, change) for finding in findings if finding.status == WARN for change in finding.changes]


def tune(findings: list[Finding], *, state_path: str, run_commands: bool = True, dry_run: bool = False) -> TuneResult:
    """Apply the reversible fixes of the failed checks (see the module doc)."""
    result = TuneResult(state_path=state_path)
    changes = planned_changes(findings)
    writable = all(change.path is None or os.access(change.path, os.W_OK) for _, change in changes)
    may_run = run_commands and os.geteuid() == 0
    if dry_run or not writable:
        result.commands = [("sudo " if change.command else "") + change.shell() for _, change in changes]
        return result
    state = _load_state(state_path)
    recorded = {entry.get("path") or " ".join(entry.get("command") or []) for entry in state["changes"]}
    for check, change in changes:
        if change.path is not None:
            old = _current_value(change.path)
            if old == change.value:
                continue
            try:
                _write(change.path, change.value or "")
            except OSError as err:
                result.skipped.append(f"{change.path}: {err.strerror}")
                continue
            entry = {"check": check, "path": change.path, "old": old, "new": change.value}
        else:
            if not may_run:
                result.commands.append("sudo " + change.shell())
                continue
            completed = subprocess.run(change.command or [], capture_output=True, text=True, check=False)
            if completed.returncode != 0:
                result.skipped.append(f"{change.shell()}: exit status {completed.returncode}")
                continue
            entry = {"check": check, "command": change.command, "undo": change.undo_command}
        result.applied.append(entry)
        key = entry.get("path") or " ".join(entry.get("command") or [])
        if key not in recorded:  # keep the value from before the first --tune
            state["changes"].append(dict(entry, at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
            recorded.add(key)
    if result.applied:
        _save_state(state_path, state)
    return result


def reset(*, state_path: str) -> TuneResult:
    """Undo every recorded change, newest first, and remove the record."""
    result = TuneResult(state_path=state_path)
    state = _load_state(state_path)
    if not state["changes"]:
        return result
    remaining = []
    for entry in reversed(state["changes"]):
        try:
            if entry.get("path"):
                if entry.get("old") is None:
                    result.skipped.append(f"{entry['path']}: no old value recorded")
                    continue
                if not os.access(entry["path"], os.W_OK):
                    result.commands.append(Change(entry["path"], entry["old"]).shell())
                    remaining.append(entry)
                    continue
                _write(entry["path"], entry["old"])
            elif entry.get("undo"):
                completed = subprocess.run(entry["undo"], capture_output=True, text=True, check=False)
                if completed.returncode != 0:
                    raise OSError(0, f"exit status {completed.returncode}")
        except OSError as err:
            result.skipped.append(f"{entry.get('path') or ' '.join(entry.get('undo') or [])}: {err.strerror}")
            remaining.append(entry)
            continue
        result.applied.append(entry)
    if remaining:
        _save_state(state_path, {"changes": list(reversed(remaining))})
    else:
        try:
            os.unlink(state_path)
        except OSError:
            pass
    return result
