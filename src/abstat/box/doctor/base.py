"""The check interface of ``abstat doctor`` (one small class per check, as pyperf's).

A check reads files under ``Context.root`` (``""`` for this machine, a
fixture directory in tests) and returns a :class:`Finding`.  A check whose
source is missing returns ``not-available`` with the reason -- never ``ok``.
Standard library only: the lab can run the checks on a bare test box.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

OK = "ok"
WARN = "warn"
NOT_AVAILABLE = "not-available"
STATUSES = (OK, WARN, NOT_AVAILABLE)

# Kinds of metric a check can disturb: "time" (wall, user, system, anything a
# benchmark prints about time or rate), "counters" (perf stat events).
TIME = "time"
COUNTERS = "counters"


@dataclass
class Change:
    """One reversible tuning step: write ``value`` to ``path`` (or run ``command``)."""

    path: str | None = None
    value: str | None = None
    command: list[str] | None = None
    undo_command: list[str] | None = None

    def shell(self) -> str:
        """The change as a shell command line, every word quoted."""
        if self.command is not None:
            return " ".join(shlex.quote(word) for word in self.command)
        return f"echo {shlex.quote(self.value or '')} | sudo tee {shlex.quote(self.path or '')}"


@dataclass
class Finding:
    """One check's verdict: its status, what it saw, and how to fix it (the changes ``--fix`` would make)."""

    name: str
    status: str
    evidence: str
    fix: str = ""
    matters_for: tuple[str, ...] = ()
    changes: list[Change] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "evidence": self.evidence, "fix": self.fix}


def parse_cpu_list(text: str | None) -> list[int] | None:
    """The kernel's cpu list format ("0-3,8,10-11"; "" is empty) as numbers."""
    if text is None:
        return None
    cpus: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        part = part.split(":")[0]  # "0-15:2/4" group syntax: range only
        low, sep, high = part.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            return None
        cpus.extend(range(int(low), int(high) + 1) if sep else [int(low)])
    return cpus


def format_cpu_list(cpus: list[int]) -> str:
    """Numbers back to the kernel's cpu list format ("0-3,8")."""
    ranges: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges) or "none"


class Context:
    """Where and how the checks read: the file-system root, the benchmark's
    CPUs, the sampling interval for rates, and a perf-counter probe."""

    def __init__(
        self,
        root: str = "",
        *,
        cpus: list[int] | None = None,
        interval: float = 0.5,
        probe_counters: Callable[[], tuple[bool, str]] | None = None,
    ) -> None:
        self.root = root.rstrip("/")
        self.interval = interval
        self.probe_counters = probe_counters
        if cpus is None and not root:
            try:
                cpus = sorted(os.sched_getaffinity(0))
            except (AttributeError, OSError):
                cpus = None
        self.cpus = cpus
        self._before: dict[str, str | None] = {}
        self._after: dict[str, str | None] | None = None
        self._started: float | None = None

    def path(self, path: str) -> str:
        return self.root + path

    def read(self, path: str) -> str | None:
        try:
            with open(self.root + path, encoding="utf-8", errors="replace") as handle:
                return handle.read().strip()
        except OSError:
            return None

    def exists(self, path: str) -> bool:
        return os.path.exists(self.root + path)

    def glob(self, pattern: str) -> list[str]:
        """Matching paths, without the root, in natural (cpu2 before cpu10) order."""
        found = [p[len(self.root) :] for p in glob.glob(self.root + pattern)]
        return sorted(found, key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p)])

    def online_cpus(self) -> list[int]:
        return parse_cpu_list(self.read("/sys/devices/system/cpu/online")) or []

    def benchmark_cpus(self) -> list[int]:
        return self.cpus if self.cpus is not None else self.online_cpus()

    # Rates (CPU busy time, swap traffic) come from two snapshots taken
    # ``interval`` seconds apart, shared by every check that needs them.
    SAMPLED = ("/proc/stat", "/proc/vmstat")

    def start_sampling(self) -> None:
        """Take the first snapshot now: :meth:`sampled` then waits only for what is left of
        ``interval`` (``abstat run`` starts it before its other preparations)."""
        if self._started is None:
            self._before = {path: self.read(path) for path in self.SAMPLED}
            self._started = time.monotonic()

    def sampled(self) -> tuple[dict[str, str | None], dict[str, str | None]]:
        if self._after is None:
            self.start_sampling()
            if self.interval > 0 and not self.root:
                assert self._started is not None
                left = self._started + self.interval - time.monotonic()
                if left > 0:
                    time.sleep(left)
                # the span the rates cover, as the evidence says it: at least ``interval``
                self.interval = round(max(time.monotonic() - self._started, self.interval), 3)
            self._after = {path: self.read(path) for path in self.SAMPLED}
        return self._before, self._after


class Check:
    """One noise source.  Subclasses set ``name`` and ``matters_for`` and
    implement :meth:`inspect`."""

    name = ""
    matters_for: tuple[str, ...] = (TIME,)

    def inspect(self, context: Context) -> Finding:
        raise NotImplementedError

    def finding(self, status: str, evidence: str, fix: str = "", changes: list[Change] | None = None) -> Finding:
        return Finding(self.name, status, evidence, fix, self.matters_for, list(changes or []))

    def unavailable(self, why: str) -> Finding:
        return Finding(self.name, NOT_AVAILABLE, why, "", self.matters_for)
