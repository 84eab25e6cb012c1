"""Diagnostics attached to results as values (never printed by the library).

A :class:`StatWarning` has a stable machine-readable ``code`` (documented in
``docs/json.md``), a one-line human ``message`` and, where it concerns one
variant, that variant's name.  ``Warning`` is an alias kept for the agreed
interface (``abstat.stats.warnings.Warning``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StatWarning:
    code: str
    message: str
    variant: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"code": self.code, "message": self.message, "variant": self.variant}


Warning = StatWarning  # noqa: A001 - the agreed public name
