"""What :mod:`abstat.audit.scan` finds in a ministat report: its data sets,
printed comparisons and problems, as plain records."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from abstat.audit.printed import Printed

_CONFIDENCE_OPTION = re.compile(r"(?:^|\s)-c[ \t]*(\d+(?:\.\d+)?)")


@dataclass
class Problem:
    """Something wrong with the text of a block (not with its arithmetic)."""

    line: int
    message: str
    severity: str = "error"  # "error": numbers lost; "warning": numbers intact

    def to_dict(self) -> dict[str, object]:
        return {"line": self.line, "severity": self.severity, "message": self.message}


@dataclass
class DataSet:
    symbol: str
    line: int
    name: str | None
    n: int
    min: Printed
    max: Printed
    median: Printed
    avg: Printed
    stddev: Printed

    def to_dict(self) -> dict[str, object]:
        return {
            "symbol": self.symbol,
            "name": self.name,
            "line": self.line,
            "n": self.n,
            "min": self.min.to_json(),
            "max": self.max.to_json(),
            "median": self.median.to_json(),
            "avg": self.avg.to_json(),
            "stddev": self.stddev.to_json(),
        }


@dataclass
class PrintedComparison:
    """The comparison lines ministat printed after one data set."""

    line: int
    confidence: float
    difference_proven: bool
    difference: Printed | None = None
    half_width: Printed | None = None
    percent: Printed | None = None
    percent_half_width: Printed | None = None
    pooled_s: Printed | None = None
    lines: dict[str, int] = field(default_factory=dict)  # field -> line number
    complete: bool = True

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "line": self.line,
            "confidence": self.confidence,
            "verdict": "difference" if self.difference_proven else "no difference proven",
        }
        if self.difference_proven:
            for key in ("difference", "half_width", "percent", "percent_half_width", "pooled_s"):
                value = getattr(self, key)
                out[key] = None if value is None else value.to_json()
        return out


@dataclass
class Block:
    """One ministat report found in the text."""

    line: int
    end_line: int
    command: str | None = None
    legend: dict[str, str] = field(default_factory=dict)
    has_plot: bool = False
    has_header: bool = False
    datasets: list[DataSet] = field(default_factory=list)
    comparisons: dict[str, PrintedComparison] = field(default_factory=dict)  # by data-set symbol
    damaged_symbols: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)

    @property
    def damaged(self) -> bool:
        return any(p.severity == "error" for p in self.problems)

    @property
    def command_confidence(self) -> float | None:
        if self.command is None:
            return None
        match = _CONFIDENCE_OPTION.search(self.command)
        return float(match.group(1)) if match else None
