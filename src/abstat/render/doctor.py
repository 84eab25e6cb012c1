"""Text and JSON of ``abstat doctor`` findings and tuning results."""

from __future__ import annotations

import json
from typing import Any

from abstat.render.escape import json_text, terminal as terminal_safe

_MARK = {"ok": "ok", "warn": "WARN", "not-available": "n/a"}


def render_findings(findings: list[Any], fmt: str = "text") -> str:
    if fmt == "json":
        return json_text([finding.to_dict() for finding in findings])
    width = max((len(terminal_safe(finding.name)) for finding in findings), default=0)
    lines = []
    for finding in findings:  # a box's findings too: every text escaped
        lines.append(
            f"{_MARK[finding.status]:<4}  {terminal_safe(finding.name):<{width}}  {terminal_safe(finding.evidence)}"
        )
        if finding.status == "warn" and finding.fix:
            lines.append(f"{'':<4}  {'':<{width}}  fix: {terminal_safe(finding.fix)}")
    counts = {status: sum(f.status == status for f in findings) for status in _MARK}
    lines.append("")
    lines.append(
        f"{counts['ok']} ok, {counts['warn']} to fix, {counts['not-available']} not available here"
        " (not available is not ok: the source of the check is missing)"
    )
    return "\n".join(lines) + "\n"


def render_tuning(result: Any, action: str, fmt: str = "text") -> str:
    if fmt == "json":
        return (
            json.dumps(
                {
                    "action": action,
                    "applied": result.applied,
                    "commands": result.commands,
                    "skipped": result.skipped,
                    "record": result.state_path,
                },
                indent=2,
            )
            + "\n"
        )
    lines = [_applied_line(entry, action) for entry in result.applied]
    if any(not entry.get("isolation") for entry in result.applied):
        lines.append(f"recorded in {result.state_path}" if action == "tune" else f"restored from {result.state_path}")
    lines += _root_commands(result.commands, action)
    for skipped in result.skipped:
        lines.append(f"not changed: {skipped}")
    if not lines:
        lines.append(
            "nothing to tune: no failed check has a reversible fix"
            if action == "tune"
            else f"nothing to reset: no tuning recorded in {result.state_path}"
        )
    return "\n".join(terminal_safe(line) for line in lines) + "\n"


def _applied_line(entry: dict[str, Any], action: str) -> str:
    """One change made (``tune``) or undone (``reset``): an isolation, a file's value, or a command run."""
    if entry.get("isolation"):
        return f"{action}: {entry['isolation']}"
    if entry.get("path"):
        old, new = (entry["new"], entry["old"]) if action == "reset" else (entry["old"], entry["new"])
        return f"{action}: {entry['path']}: {old} -> {new}"
    command = entry["undo"] if action == "reset" else entry["command"]
    return f"{action}: ran {' '.join(command)}"


def _root_commands(commands: list[str], action: str) -> list[str]:
    """The changes this user may not make, as commands to run as root ([] when none)."""
    if not commands:
        return []
    return [
        "no permission to change these; run them as root"
        + (" (abstat doctor --reset cannot undo them):" if action == "tune" else " (the record is kept):"),
        *(f"  {command}" for command in commands),
    ]
