"""The audit's records: one block (a ministat report, a claim from averages, a kernel tool's result)
and one comparison in it; ``to_dict()`` is part of the JSON contract of ``abstat audit --format json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from abstat.audit.findings import Finding
from abstat.audit.judge import Judgement
from abstat.audit.recompute import Recomputation
from abstat.audit.scan import PrintedComparison


@dataclass
class ComparisonAudit:
    baseline: str
    candidate: str
    line: int | None
    printed: PrintedComparison | None
    recomputation: Recomputation | None
    consistent: bool | None
    dialect: str | None
    judgement: Judgement | None
    findings: list[Finding] = field(default_factory=list)
    metric: str | None = None
    printed_values: dict[str, float | None] | None = None  # bare averages: what the text gives
    recomputed_values: dict[str, float | None] | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "line": self.line,
            "consistent": self.consistent,
            "dialect": self.dialect,
            "printed": self.printed.to_dict() if self.printed is not None else self.printed_values,
            "recomputed": self.recomputation.to_dict() if self.recomputation is not None else self.recomputed_values,
            "judgement": None if self.judgement is None else self.judgement.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.metric is not None:
            out["metric"] = self.metric
        return out


@dataclass
class BlockAudit:
    kind: str  # "ministat" or "averages"
    line: int
    end_line: int
    command: str | None = None
    datasets: list[dict[str, object]] = field(default_factory=list)
    comparisons: list[ComparisonAudit] = field(default_factory=list)
    problems: list[dict[str, object]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    dialect: str | None = None
    damaged: bool = False
    mention: str | None = None

    @property
    def consistent(self) -> bool | None:
        if self.kind == "averages":
            return None
        if any(c.consistent is False for c in self.comparisons):
            return False
        if any(f.severity == "error" for f in self.findings):
            return False
        if self.damaged:
            return None
        if self.kind != "ministat":
            return self._kernel_consistent()
        return self._ministat_consistent()

    def _ministat_consistent(self) -> bool | None:
        """True when every printed comparison was checked (none inconsistent by now); None otherwise."""
        checked = [c.consistent for c in self.comparisons if c.printed is not None]
        if not checked or any(c is None for c in checked):
            return None
        return True

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "kind": self.kind,
            "line": self.line,
            "end_line": self.end_line,
            "consistent": self.consistent,
            "damaged": self.damaged,
            "dialect": self.dialect,
            "command": self.command,
            "problems": self.problems,
            "datasets": self.datasets,
            "comparisons": [c.to_dict() for c in self.comparisons],
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.kind == "averages":
            out["mention"] = self.mention
        return out

    def _kernel_consistent(self) -> bool | None:
        """A kernel tool's table: its printed changes checked against its printed means."""
        checked = [c.consistent for c in self.comparisons if c.consistent is not None]
        return True if checked and all(checked) else None
