"""What a bisection's search asks for next and what it concluded (library code, no I/O).

:class:`Batch`: runs to do; :class:`Outcome`: the answer (:mod:`abstat.history.bisect.search` produces both).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from abstat.stats.warnings import StatWarning


@dataclass
class Batch:
    """Runs to do, in this order: commit indices (0 = good reference, N = bad reference)."""

    commits: list[int]
    test: int | None            # the commit under test (None for a reference-only batch)


@dataclass
class Outcome:
    status: str                 # found | inconclusive | no-change | untestable
    culprit: int | None
    probability: float
    candidates: list[tuple[int, float]]     # most probable first
    runs: int
    shift: float | None = None  # bad - good (Hodges-Lehmann on the references)
    shift_low: float | None = None
    shift_high: float | None = None
    good_level: float | None = None
    reference_p: float | None = None
    notes: list[StatWarning] = field(default_factory=list)   # codes: ends-not-different, untestable
    intermediate: int | None = None     # status "several": a tested commit measuring unlike both ends
    steps: list[Outcome] = field(default_factory=list)   # status "several": the steps isolated
