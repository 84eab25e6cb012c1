"""What a bisection's search asks for next and what it concluded (library code, no I/O).

:class:`Batch`: runs to do; :class:`Outcome`: the answer (:mod:`abstat.history.bisect.search` produces both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from abstat.stats.warnings import StatWarning


@dataclass
class Batch:
    """Runs to do, in this order: commit indices (0 = good reference, N = bad reference)."""

    commits: list[int]
    test: int | None  # the commit under test (None for a reference-only batch)


@dataclass
class Outcome:
    status: str  # found | inconclusive | no-change | untestable
    culprit: int | None
    probability: float
    candidates: list[tuple[int, float]]  # most probable first
    runs: int
    shift: float | None = None  # bad - good (Hodges-Lehmann on the references)
    shift_low: float | None = None
    shift_high: float | None = None
    good_level: float | None = None
    reference_p: float | None = None
    notes: list[StatWarning] = field(default_factory=list)  # codes: ends-not-different, untestable
    intermediate: int | None = None  # status "several": a tested commit measuring unlike both ends
    steps: list[Outcome] = field(default_factory=list)  # status "several": the steps isolated
    # status "several": the parts (good end, bad end) in which a change lies that no step names, with how they ended
    unresolved: list[tuple[int, int, str]] = field(default_factory=list)


def conclude(search: Any, status: str) -> Outcome:
    """The outcome of ``search`` (a :class:`abstat.history.bisect.search.Search`) ending with ``status``."""
    import numpy as np

    from abstat.stats.shift import hodges_lehmann

    good, bad = search._references()
    posterior = search.posterior() if good and bad else np.full(search.n, 1.0 / search.n)
    order = np.argsort(-posterior)
    candidates = [(int(i) + 1, float(posterior[i])) for i in order[:8] if posterior[i] > 0.001]
    result = Outcome(
        status=status, culprit=None, probability=float(posterior[order[0]]), candidates=candidates, runs=search.runs
    )
    if status == "found":
        result.culprit = int(order[0]) + 1
    if status == "several":
        result.intermediate = search.intermediate()
    if len(good) >= 2 and len(bad) >= 2:
        shift, unit = hodges_lehmann(np.asarray(good), np.asarray(bad), search.confidence), search.unit or 1.0
        result.shift, result.shift_low, result.shift_high = shift.estimate * unit, shift.low * unit, shift.high * unit
        result.good_level = float(np.median(good)) * unit  # the samples are in the search's unit
        result.reference_p = search.reference_p()
    if status == "inconclusive" and result.reference_p is not None and not search.gated:
        result.candidates = []
        result.notes.append(
            StatWarning(
                "ends-not-different",
                f"the good and bad revisions do not differ so far ({len(good)} and {len(bad)} "
                f"runs, Brunner-Munzel p={result.reference_p:.2g}): the budget ran out before a search could start",
            )
        )
    if status == "untestable":
        result.notes.append(
            StatWarning("untestable", "the remaining candidates cannot be told apart: their neighbours did not build")
        )
    return result
