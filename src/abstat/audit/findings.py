"""Findings: what the audit has to say, as values (never printed here)."""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """One statement about a block or a comparison.

    ``severity``: ``error`` (the printed text is wrong or unusable: exit
    status 1), ``warning`` (the printed claim is weaker than it looks),
    ``info`` (numbers worth knowing).  ``code`` is stable for scripts.
    """

    code: str
    severity: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "message": self.message}
