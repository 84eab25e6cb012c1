"""``abstat run``'s progress display: rich on a terminal, plain lines otherwise.

Each variant's running median of wall time, the failures so far and an ETA;
wall times through :func:`abstat.render.units.format_value`, names escaped
for the terminal.
"""

from __future__ import annotations

import bisect
import os
import time
from typing import Any, TextIO

from abstat.render import escape
from abstat.render.units import fits, format_value


REDRAW_S = 0.1


def _format_eta(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    """Progress with ETA and each variant's running median of wall time."""

    def __init__(self, variants: list[str], total_runs: int, stream: TextIO, enabled: bool) -> None:
        self.variants = variants
        self.total = total_runs
        self.stream = stream
        self.enabled = enabled
        self.walls: dict[str, list[float]] = {name: [] for name in variants}  # kept sorted: a median is a look-up
        self._drawn = 0.0  # when the rich display was last drawn
        self._label = "running"  # what runs now, as the next drawing shows it
        self.failed: dict[str, int] = dict.fromkeys(variants, 0)
        self.done = 0
        self.started = time.monotonic()
        self._rich: Any = None
        self._task: Any = None
        if enabled and stream.isatty():
            try:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    TextColumn,
                    TimeRemainingColumn,
                )
                from rich.progress import Progress as RichProgress
            except ImportError:
                self._rich = None
            else:
                # Drawn between runs only, at most every REDRAW_S: rich's own refresh thread would wake
                # and draw while a measured command runs.
                self._rich = RichProgress(
                    TextColumn("[bold]{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("ETA"),
                    TimeRemainingColumn(),
                    TextColumn("{task.fields[medians]}"),
                    console=Console(file=stream, no_color=bool(os.environ.get("NO_COLOR"))),
                    transient=False,
                    auto_refresh=False,
                )
                self._rich.start()
                self._task = self._rich.add_task("running", total=total_runs, medians="")

    def medians_text(self) -> str:
        parts = []
        for name in self.variants:
            values = self.walls[name]
            middle = len(values) // 2
            text = (
                format_value(values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2, "s")
                if values
                else "-"
            )
            if self.failed[name]:
                text += f" ({self.failed[name]} failed)"
            parts.append(f"{escape.terminal(name)} {text}")
        return "median: " + ", ".join(parts)

    def slot(self, slot: Any) -> None:
        """A run is about to start (``slot``: its ``variant`` and whether it is a ``warmup``)."""
        if self._rich is not None:
            self._label = f"warm-up {slot.variant}" if slot.warmup else slot.variant
            self._draw()  # at most every REDRAW_S: a long warm-up still shows

    def result(self, run: Any) -> None:
        """A measured run completed (``run``: an :class:`abstat.engine.events.RunDone`)."""
        self.done += 1
        if run.ok:
            bisect.insort(self.walls[run.variant], run.wall)
        else:
            self.failed[run.variant] += 1
        if not self.enabled:
            return
        if self._rich is not None:
            self._draw(self.done == self.total)
            return
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        outcome = format_value(run.wall, "s") if run.ok else run.status.upper()
        self.stream.write(
            fits(
                self.stream,
                f"[{self.done}/{self.total}] {escape.terminal(run.variant)} run {run.iteration + 1}: {outcome}"
                f"  {self.medians_text()}  ETA {_format_eta(eta)}\n",
            )
        )
        self.stream.flush()

    def _draw(self, now: bool = False) -> None:
        """Draw the rich display if REDRAW_S has passed since it last was (or ``now``)."""
        clock = time.monotonic()
        if now or clock - self._drawn >= REDRAW_S:
            self._rich.update(
                self._task,
                completed=self.done,
                description=escape.terminal(self._label),
                medians=fits(self.stream, self.medians_text()),
            )
            self._rich.refresh()
            self._drawn = clock

    def stop(self) -> None:
        if self._rich is not None:
            self._rich.update(
                self._task,
                completed=self.done,
                description=escape.terminal(self._label),
                medians=fits(self.stream, self.medians_text()),
            )
            self._rich.stop()
            self._rich = None
