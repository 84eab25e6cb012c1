"""What the perf stat readers (:mod:`abstat.readers.perfstat`) collect from a file, as sample sets."""

from __future__ import annotations

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet
from abstat.readers.summary import Summary


class Collect:
    """Values, units and notes per metric name, in the order first seen."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.values: dict[str, list[float]] = {}
        self.units: dict[str, str | None] = {}
        self.notes: dict[str, list[str]] = {}
        self.summaries: dict[str, Summary] = {}
        self.missing: list[str] = []
        self.running: dict[str, list[float | None]] = {}

    def add(self, event: str, value: float, unit: str | None, running: float | None = None) -> None:
        self.values.setdefault(event, []).append(value)
        self.units.setdefault(event, unit or None)
        self.running.setdefault(event, []).append(running)
        if running is not None and running < 100.0:
            note = (
                f"{self.path}: {event}: counted {running:g}% of the time (multiplexed counters): perf scaled the count"
            )
            kept = self.notes.setdefault(event, [])
            if note not in kept:
                kept.append(note)

    def note(self, event: str, text: str) -> None:
        kept = self.notes.setdefault(event, [])
        if text not in kept:
            kept.append(text)

    def note_intervals(self) -> None:
        for name in self.values:
            self.note(name, f"{self.path}: {name}: perf stat -I interval counts: a time series, not independent runs")

    def sets(self, fmt: str) -> list[SampleSet]:
        if not self.values:
            what = f"; not counted: {', '.join(dict.fromkeys(self.missing))}" if self.missing else ""
            raise InputError(f"perf stat {fmt}: no counter values{what}", path=self.path)
        found = []
        for event, values in self.values.items():
            notes = list(self.notes.get(event, []))
            summary = self.summaries.get(event)
            found.append(
                SampleSet(
                    labels={"metric": event},
                    runs=[] if summary else [values],
                    source=self.path,
                    unit=self.units.get(event),
                    notes=notes,
                    summary=summary,
                    extra={"format": f"perf-stat-{fmt}", "pcnt_running": self.running[event]},
                )
            )
        if self.missing:
            found[0].notes.append(f"{self.path}: not counted: {', '.join(dict.fromkeys(self.missing))}")
        return found
