"""Progress of a lab experiment: one line per host.

Each host shows its state (connecting, booting, checking, running k/n,
reconnecting, done, failed), which boot of how many, its ETA and the
running median wall time of each variant.  On a terminal this is a live
table (rich); otherwise one plain line per change.  Refused boots and
failed hosts are always written, even with the display off.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from abstat.render.terminal import is_terminal


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


@dataclass
class HostLine:
    boots: int  # boots this invocation makes (1 without --boot)
    runs_per_boot: int
    state: str = "waiting"
    boot: int | None = None  # index in the host's schedule
    boots_started: int = 0
    variant: str | None = None
    done_in_boot: int = 0
    runs_in_boot: int = 0
    done: int = 0
    failed_runs: int = 0
    walls: dict[str, list[float]] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    finished_at: float | None = None

    def eta(self) -> float | None:
        if self.state in ("done", "failed"):
            return 0.0
        total = self.boots * self.runs_per_boot
        if not self.done:
            return None
        return (time.monotonic() - self.started) / self.done * max(0, total - self.done)

    def medians(self, variants: list[str]) -> str:
        from abstat.render.units import format_value

        parts = [
            f"{name} {format_value(statistics.median(self.walls[name]), 's')}"
            for name in variants
            if self.walls.get(name)
        ]
        return ", ".join(parts)

    def status(self) -> str:
        if self.state == "running":
            return f"running {self.done_in_boot}/{self.runs_in_boot}"
        return self.state


class LabProgress:
    def __init__(self, hosts: dict[str, tuple[int, int]], variants: list[str], stream: TextIO, enabled: bool) -> None:
        self.lines = {label: HostLine(boots, runs) for label, (boots, runs) in hosts.items()}
        self.variants = variants
        self.stream = stream
        self.enabled = enabled
        self._live: Any = None
        if enabled and is_terminal(stream):
            try:
                from rich.console import Console
                from rich.live import Live
            except ImportError:
                self._live = None
            else:
                self._live = Live(self._table(), console=Console(file=stream), refresh_per_second=4, transient=False)
                self._live.start()

    # -- rendering -----------------------------------------------------

    def _boot_text(self, line: HostLine) -> str:
        if line.boot is None:
            return "-"
        text = f"{line.boots_started}/{line.boots}"
        return text + (f" {line.variant}" if line.variant else "")

    def _table(self) -> Any:
        from rich.table import Table
        from rich.text import Text

        table = Table(box=None, pad_edge=False)
        for name in ("host", "state", "boot", "ETA", "median wall"):
            table.add_column(name)
        styles = {"failed": "bold red", "done": "green"}
        for label, line in self.lines.items():
            table.add_row(
                Text(label),
                Text(line.status(), style=styles.get(line.state, "")),
                Text(self._boot_text(line)),
                _eta(line.eta()),
                Text(line.medians(self.variants)),
            )
        return table

    def _line(self, label: str) -> None:
        if not self.enabled:
            return
        if self._live is not None:
            self._live.update(self._table())
            return
        line = self.lines[label]
        parts = [f"[{label}] {line.status()}"]
        if line.boot is not None:
            parts.append(f"boot {self._boot_text(line)}")
        if line.state not in ("done", "failed"):
            parts.append(f"ETA {_eta(line.eta())}")
        medians = line.medians(self.variants)
        if medians:
            parts.append(f"median {medians}")
        self._write("  ".join(parts))

    def _write(self, text: str) -> None:
        from abstat.render import escape

        text = escape.terminal(text)  # what a box or ssh said, too
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    # -- events --------------------------------------------------------

    def state(self, label: str, state: str, boot: int, variant: str | None = None) -> None:
        line = self.lines[label]
        if line.state == state and line.boot == boot:
            return
        if boot != line.boot:
            line.boots_started += 1
            line.boot = boot
            line.done_in_boot = line.runs_in_boot = 0
        line.state = state
        if variant:
            line.variant = variant
        self._line(label)

    def boot(self, label: str, boot: int, variant: str, slots: int) -> None:
        line = self.lines[label]
        line.variant = variant or None
        line.runs_in_boot = slots

    def run(self, label: str, variant: str, wall: float, ok: bool) -> None:
        line = self.lines[label]
        line.done += 1
        line.done_in_boot += 1
        if ok:
            line.walls.setdefault(variant, []).append(wall)
        else:
            line.failed_runs += 1
        self._line(label)

    def message(self, label: str, text: str) -> None:
        self._write(f"abstat run: {label}: {text}")

    def failed(self, label: str, text: str) -> None:
        line = self.lines[label]
        line.state = "failed"
        if self._live is not None:
            self._live.update(self._table())
        self._write(f"abstat run: host {label} failed: {text}")

    def finished(self, label: str, *, interrupted: bool = False) -> None:
        line = self.lines[label]
        line.state = "interrupted" if interrupted else "done"
        line.finished_at = time.monotonic()
        self._line(label)

    def tick(self) -> None:
        if self._live is not None:
            self._live.update(self._table())

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
