"""The notes the runs of a stored experiment left, as ``abstat run``/``show`` print them: each once
with its count, notes that differ only in their figures merged into ranges, the CSV ``notes`` cell."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from abstat.render import escape


def run_notes(
    store: Any, experiment: str, invocations: Sequence[int] | None = None, variants: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The notes the runs left (``{"note", "runs"}``), each once with its count;
    only those of ``variants`` when given."""
    getter = getattr(store, "run_notes", None)
    if getter is None:
        return []
    return getter(experiment, invocations) if variants is None else getter(experiment, invocations, variants)


def notes_cell(store: Any, experiment: str, invocations: Sequence[int] | None, variants: Sequence[str]) -> str:
    """The CSV ``notes`` cell of a row about ``variants``: the notes their
    successful runs left, joined by ``; `` as ``abstat export`` joins a run's
    notes, each once (figures merged into ranges, as the text shows them)
    with the variants that left it and the run count:
    ``killed processes ... (b: 3 runs); peak RSS not recorded: at most ... 25320 to 25328 KiB ... (a, b: 6 runs)``."""
    variants = list(dict.fromkeys(variants))
    entries: list[dict[str, Any]] = []
    left_by: dict[str, list[str]] = {}  # a note with its figures masked -> the variants that left it
    for name in variants:
        for entry in run_notes(store, experiment, invocations, [name]):
            entries.append(entry)
            who = left_by.setdefault(_NUMBER.sub("#", str(entry["note"])), [])
            if name not in who:
                who.append(name)
    parts = []
    for entry, who in zip(merge_notes(entries), left_by.values(), strict=True):  # both in first-seen order
        count = int(entry.get("runs") or 0)
        parts.append(f"{entry['note']} ({', '.join(who)}: {count} run{'s' if count != 1 else ''})")
    return "; ".join(parts)


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def merge_notes(notes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Notes that differ only in their figures, as one with ranges:
    ``at most abstat's own 20228 to 20244 KiB`` (run counts added up)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in notes:
        groups.setdefault(_NUMBER.sub("#", str(entry["note"])), []).append(entry)
    merged = []
    for key, entries in groups.items():
        figures = [_NUMBER.findall(str(e["note"])) for e in entries]
        texts = iter(key.split("#"))
        parts = [next(texts)]
        for position, rest in enumerate(texts):
            column = [float(f[position]) for f in figures]
            low, high = min(column), max(column)
            # a figure that does not vary stays as written (127.0.0.1 is no range)
            parts.append(figures[0][position] if low == high else f"{low:g} to {high:g}")
            parts.append(rest)
        merged.append({"note": "".join(parts), "runs": sum(int(e.get("runs") or 0) for e in entries)})
    return merged


def note_lines(notes: Sequence[dict[str, Any]], *, markdown: bool = False) -> list[str]:
    lines = [""] if notes else []
    for entry in merge_notes(notes):
        count = entry.get("runs") or 0
        where = f" ({count} run{'s' if count != 1 else ''})" if count > 1 else ""
        text = f"note: {entry['note']}{where}"
        lines.append(f"- {escape.markdown(text)}" if markdown else escape.terminal(text))
    return lines
